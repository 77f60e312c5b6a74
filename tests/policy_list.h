// SPDX-License-Identifier: Apache-2.0
// The one list of sstfilter's filter policies, as configurations: one of every policy, and of
// every layout or budget form a policy has. Test data: the plugin tests, the options fuzzer, the
// upgrade tool (tests/plugin/) and scripts/stress.sh run over it; registration (plugin/plugin.cc)
// runs over AllPolicies (plugin/policies.h), which a test holds to the same names. A new policy is
// its class and its entry in AllPolicies, its name (include/sstfilter/sstfilter.h), one line here,
// and its own tests. No dependencies: the fuzzer and the upgrade tool, which link only
// libsstfilter.so, include it too.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace sstfilter {

struct PolicyConfig {
  const char* label;  // a file-name-safe word, for databases and logs
  const char* uri;    // "<name>:<bits_per_key>" or "{id=<name>;...}"
};

// scripts/stress.sh reads the uri of each line between the BEGIN and END lines: keep one entry per
// line, in this form.
inline constexpr PolicyConfig kPolicyConfigs[] = {
    // BEGIN kPolicyConfigs
    {"bloom", "sstfilter.Bloom:10"},
    {"standard_bloom", "{id=sstfilter.Bloom;bits_per_key=10;layout=standard}"},
    {"cuckoo", "{id=sstfilter.Cuckoo;fp_rate=0.001}"},
    {"fuse", "{id=sstfilter.Fuse;fp_rate=0.01}"},
    {"ribbon", "{id=sstfilter.BumpedRibbon;fp_rate=0.01}"},
    {"leveled", "sstfilter.Leveled:10"},
    {"leveled_memory", "{id=sstfilter.Leveled;memory_budget=1M}"},
    {"ribbon_family", "{id=sstfilter.BumpedRibbon;bits_per_key=10;compatibility=sstfilter}"},
    // END kPolicyConfigs
};

// Whether a configuration's database needs the sstfilter.LeveledBudget listener: under a
// memory_budget, DB::Open refuses it without one (scripts/stress.sh, whose db_stress drops the
// listeners, leaves such configurations out).
inline bool NeedsLeveledBudgetListener(const char* uri) {
  return std::strstr(uri, "memory_budget") != nullptr;
}

// The policy name of a configuration's uri: "sstfilter.Bloom" for "sstfilter.Bloom:10" and for
// "{id=sstfilter.Bloom;...}".
inline std::string PolicyNameOf(const char* uri) {
  std::string s(uri);
  if (s.rfind("{id=", 0) == 0) s = s.substr(4);
  return s.substr(0, s.find_first_of(":;}"));
}

// The distinct policy names of kPolicyConfigs, in order ("sstfilter.Bloom", ...).
inline std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const PolicyConfig& c : kPolicyConfigs) {
    const std::string name = PolicyNameOf(c.uri);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

}  // namespace sstfilter
