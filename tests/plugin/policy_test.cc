// SPDX-License-Identifier: Apache-2.0
// The policies through RocksDB's own configuration machinery: the forms a policy is named by,
// options strings and OPTIONS files, clear errors, registration.
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "plugin/block_cache_fit.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::ObjectLibrary;
using ROCKSDB_NAMESPACE::Status;
using testing::PolicyFrom;
using testing::SpecOf;

template <typename... Policies>
std::vector<std::string> NamesOf(PolicyList<Policies...>) {
  return {Policies::kClassName()...};
}

// The registered policies and the configurations that tests, tools and scripts run over name the
// same policies, in the same order: a new policy cannot be registered and left out of them, or
// listed and left unregistered. Every configuration creates its policy.
TEST(Policy, TheListsNameTheRegisteredPolicies) {
  EXPECT_EQ(PolicyNames(), NamesOf(AllPolicies{}));
  for (const PolicyConfig& c : kPolicyConfigs) {
    const std::shared_ptr<const FilterPolicy> policy = PolicyFrom(c.uri);
    ASSERT_NE(policy, nullptr) << c.uri;
    EXPECT_EQ(policy->Name(), PolicyNameOf(c.uri)) << c.uri;
  }
  // Every name, and nothing else, is registered.
  for (const std::string& name : PolicyNames()) {
    EXPECT_NE(ObjectLibrary::Default()->FindFactory<const FilterPolicy>(name), nullptr) << name;
  }
  EXPECT_EQ(ObjectLibrary::Default()->FindFactory<const FilterPolicy>("sstfilter.Nothing"),
            nullptr);
}

TEST(Policy, AcceptedForms) {
  struct Case {
    const char* uri;
    const char* name;
    FilterKind kind;
    double bits_per_key;  // of the resulting spec, 0 to skip
    int param;            // probes or fingerprint bits
  } cases[] = {
      {"sstfilter.Bloom:10", "sstfilter.Bloom", BlockedBloom::kId, 10, 7},
      {"sstfilter.Bloom:16.5", "sstfilter.Bloom", BlockedBloom::kId, 16.5, 10},
      {"{id=sstfilter.Bloom;bits_per_key=10;layout=standard}", "sstfilter.Bloom",
       StandardBloom::kId, 10, 7},
      {"{id=sstfilter.Bloom;fp_rate=0.01}", "sstfilter.Bloom", BlockedBloom::kId, 9.9, 6},
      // A budget of b bits/key buys slots of floor(0.95 b) bits, semi-sorted fingerprints of one
      // bit more.
      {"sstfilter.Cuckoo:12", "sstfilter.Cuckoo", Cuckoo::kId, 0, 12},
      {"{id=sstfilter.Cuckoo;fp_rate=0.001}", "sstfilter.Cuckoo", Cuckoo::kId, 0, 13},
      {"{id=sstfilter.Cuckoo;bits_per_key=20}", "sstfilter.Cuckoo", Cuckoo::kId, 0, 20},
      {"sstfilter.Fuse:10", "sstfilter.Fuse", Fuse::kId, 10, 9},
      {"{id=sstfilter.Fuse;fp_rate=0.01}", "sstfilter.Fuse", Fuse::kId, 0, 7},
      {"{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.Fuse", Fuse::kId, 0, 10},
      // sstfilter.BumpedRibbon: the bumped Ribbon kind, 1.001 slots per key for large sets.
      {"sstfilter.BumpedRibbon:10", "sstfilter.BumpedRibbon", BumpedRibbon::kId, 10, 9},
      {"{id=sstfilter.BumpedRibbon;fp_rate=0.01}", "sstfilter.BumpedRibbon", BumpedRibbon::kId, 0,
       7},
      {"{id=sstfilter.BumpedRibbon;fp_rate=0.001}", "sstfilter.BumpedRibbon", BumpedRibbon::kId, 0,
       10},
      // Its former name builds the same policy, which then names itself by its name.
      {"sstfilter.Ribbon:10", "sstfilter.BumpedRibbon", BumpedRibbon::kId, 10, 9},
      {"{id=sstfilter.Ribbon;fp_rate=0.001}", "sstfilter.BumpedRibbon", BumpedRibbon::kId, 0, 10},
  };
  for (const Case& c : cases) {
    const auto policy = PolicyFrom(c.uri);
    ASSERT_NE(policy, nullptr) << c.uri;
    EXPECT_STREQ(policy->Name(), c.name) << c.uri;
    EXPECT_STREQ(policy->CompatibilityName(), "rocksdb.BuiltinBloomFilter") << c.uri;
    const FilterSpec spec = SpecOf(*policy);
    EXPECT_EQ(spec.kind(), c.kind) << c.uri;
    if (c.kind == Fuse::kId) {
      EXPECT_EQ(spec.get_if<FuseParams>()->fingerprint_bits, c.param) << c.uri;
      EXPECT_EQ(spec.get_if<FuseParams>()->bits_per_key, c.bits_per_key) << c.uri;
    } else if (c.kind == BumpedRibbon::kId) {
      EXPECT_EQ(spec.get_if<BumpedRibbonParams>()->fingerprint_bits, c.param) << c.uri;
      EXPECT_EQ(spec.get_if<BumpedRibbonParams>()->bits_per_key, c.bits_per_key) << c.uri;
    } else if (c.kind == Cuckoo::kId) {
      EXPECT_EQ(spec.get_if<CuckooParams>()->fingerprint_bits, c.param) << c.uri;
    } else {
      // Both Bloom kinds' parameters have these two fields.
      Visit(spec.params(), [&](const auto& bloom) {
        if constexpr (std::is_base_of_v<BloomParams, std::decay_t<decltype(bloom)>>) {
          EXPECT_NEAR(bloom.bits_per_key, c.bits_per_key, 1e-9) << c.uri;
          EXPECT_EQ(bloom.num_probes, c.param) << c.uri;
        }
      });
    }
  }
}

TEST(Policy, WorksInTableOptionStrings) {
  const ConfigOptions strict = StrictConfigOptions();
  BlockBasedTableOptions base, out;
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
                  strict, base, "filter_policy={id=sstfilter.Cuckoo;fp_rate=0.001}", &out)
                  .ok());
  ASSERT_NE(out.filter_policy, nullptr);
  EXPECT_STREQ(out.filter_policy->Name(), "sstfilter.Cuckoo");
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
                  strict, base, "filter_policy=sstfilter.Bloom:12;block_size=8192", &out)
                  .ok());
  EXPECT_STREQ(out.filter_policy->Name(), "sstfilter.Bloom");
}

TEST(Policy, BadStringsAreClearErrors) {
  // sstfilter's own checks answer InvalidArgument. A name no factory knows (NotSupported) and an
  // option no policy has (NotFound) are RocksDB's to refuse, with the same codes on every version
  // tested (7.8.3, 9.10, 9.11).
  struct Case {
    const char* uri;
    std::vector<std::string> message_parts;
    Status::Code code = Status::kInvalidArgument;
  } cases[] = {
      {"{id=sstfilter.Bloom;bits_per_key=10;fp_rate=0.01}", {"exactly one", "bits_per_key"}},
      {"sstfilter.Bloom", {"needs bits_per_key", "fp_rate"}},
      {"{id=sstfilter.Cuckoo}", {"sstfilter.Cuckoo", "needs bits_per_key"}},
      {"sstfilter.Bloom:0", {"bits_per_key must be in [0.01, 100]"}},
      {"sstfilter.Bloom:101", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;bits_per_key=1e-55}", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;bits_per_key=-3}", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;fp_rate=0}", {"fp_rate must be in (0, 1)"}},
      {"{id=sstfilter.Bloom;fp_rate=1.5}", {"fp_rate must be in (0, 1)"}},
      {"{id=sstfilter.Cuckoo;fp_rate=1e-12}", {"fingerprints wider than 32"}},
      {"sstfilter.Cuckoo:4", {"below the cuckoo minimum"}},
      {"sstfilter.BumpedRibbon:1",
       {"sstfilter.BumpedRibbon", "below the bumped_ribbon minimum of 1.001"}},
      {"{id=sstfilter.BumpedRibbon;fp_rate=1e-12}",
       {"sstfilter.BumpedRibbon", "fingerprints wider than 32"}},
      {"{id=sstfilter.BumpedRibbon}", {"sstfilter.BumpedRibbon", "needs bits_per_key"}},
      {"{id=sstfilter.Bloom;bits_per_key=ten}", {"bits_per_key must be a finite number", "ten"}},
      {"{id=sstfilter.Bloom;bits_per_key=nan}", {"bits_per_key must be a finite number"}},
      {"{id=sstfilter.Bloom;bits_per_key=inf}", {"bits_per_key must be a finite number"}},
      {"{id=sstfilter.Bloom;bits_per_key=10;layout=sideways}",
       {"layout must be blocked or standard", "sideways"}},
      {"{id=sstfilter.Bloom;bits_per_key=10;colour=blue}", {"colour"}, Status::kNotFound},
      {"{id=sstfilter.BumpedRibbon;bits_per_key=10;compatibility=RocksDB}",
       {"compatibility must be rocksdb", "or sstfilter", "'RocksDB'"}},
      {"{id=sstfilter.Fuse;bits_per_key=10;compatibility=sstfilter.Fuse}",
       {"compatibility must be", "'sstfilter.Fuse'"}},
      {"sstfilter.Blom:10", {"sstfilter.Blom"}, Status::kNotSupported},
      {"sstfilter.Bloom:ten", {"sstfilter.Bloom: bits_per_key must be a finite number", "'ten'"}},
      {"{id=sstfilter.Leveled;fp_rate=0.01}", {"sstfilter.Leveled", "not fp_rate"}},
      {"sstfilter.Leveled", {"needs bits_per_key", "memory_budget"}},
      {"{id=sstfilter.Leveled;bits_per_key=10;size_ratio=1}", {"size_ratio must be in (1, 1000]"}},
      {"{id=sstfilter.Leveled;bits_per_key=10;size_ratio=}",
       {"size_ratio must be a finite number, got ''"}},
      {"{id=sstfilter.Leveled;bits_per_key=10;num_levels=-2}", {"num_levels must be in [0, 64]"}},
  };
  for (const Case& c : cases) {
    std::shared_ptr<const FilterPolicy> policy;
    const Status s = NewFilterPolicy(c.uri, &policy);
    EXPECT_FALSE(s.ok()) << c.uri;
    EXPECT_EQ(s.code(), c.code) << c.uri << ": " << s.ToString();
    for (const std::string& part : c.message_parts) {
      EXPECT_NE(s.ToString().find(part), std::string::npos)
          << c.uri << ": '" << s.ToString() << "' lacks '" << part << "'";
    }
  }
}

// RocksDB 7.8's ribbonfilter factory parses its level argument with std::stoi, which throws on a
// value beyond int: NewFilterPolicy answers with a Status, never an exception (the options
// fuzzer's finding; the input is in tests/fuzz/corpus/options/). Other versions may accept it.
// The "<name>:<number>" form of every policy is parsed and validated as its bits_per_key option
// is, whatever the text: RocksDB's own number pattern would refuse "1e308" or "nan" before any
// factory runs, with a bare "Could not load FilterPolicy".
TEST(Policy, TheNumberAfterTheNameIsParsedAsTheOptionIs) {
  for (const std::string& name : PolicyNames()) {
    for (const std::string number : {"nan", "-inf", "", "10x", "0x", " ", " 10", "+10", "0x10"}) {
      std::shared_ptr<const FilterPolicy> policy;
      const Status s = NewFilterPolicy(name + ":" + number, &policy);
      EXPECT_TRUE(s.IsInvalidArgument()) << name << ":" << number << ": " << s.ToString();
      EXPECT_NE(
          s.ToString().find(name + ": bits_per_key must be a finite number, got '" + number + "'"),
          std::string::npos)
          << s.ToString();
    }
    for (const std::string number : {"1e308", "-5", "0", "1e-300"}) {
      std::shared_ptr<const FilterPolicy> policy;
      const Status s = NewFilterPolicy(name + ":" + number, &policy);
      EXPECT_TRUE(s.IsInvalidArgument()) << name << ":" << number << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(name), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find("bits_per_key must be in [0.01, 100]"), std::string::npos)
          << s.ToString();
    }
    std::shared_ptr<const FilterPolicy> policy;
    EXPECT_TRUE(NewFilterPolicy(name + ":1e1", &policy).ok()) << name;  // 10, as RocksDB reads it
  }
}

// The policies' numbers are written as the shortest text that reads back as the same double, in
// the C locale's form whatever the process's (std::to_chars; printf's "%.17g" wrote 10.6 as
// 10.599999999999999, and "%g" follows LC_NUMERIC).
TEST(Policy, OptionNumbersAreWrittenShortest) {
  const ConfigOptions config;
  for (const auto& [uri, text] : std::vector<std::pair<std::string, std::string>>{
           {"sstfilter.Leveled:10.6", "bits_per_key=10.6;"},
           {"{id=sstfilter.Bloom;fp_rate=0.001}", "fp_rate=0.001;"},
           {"{id=sstfilter.Leveled;bits_per_key=8;size_ratio=4.1}", "size_ratio=4.1;"}}) {
    const auto policy = PolicyFrom(uri);
    ASSERT_NE(policy, nullptr) << uri;
    std::string options;
    ASSERT_TRUE(policy->GetOptionString(config, &options).ok()) << uri;
    EXPECT_NE(options.find(text), std::string::npos) << uri << " -> " << options;
  }
}

TEST(Policy, RocksDbFactoriesThatThrowGiveAStatus) {
  // The same answers on every version tested (7.8.3, 9.10, 9.11): the factory's exception as an
  // InvalidArgument naming the string; a level beyond int that RocksDB clamps; a number no factory
  // pattern takes, RocksDB's own NotSupported.
  const struct {
    const char* uri;
    Status::Code code;
  } cases[] = {{"ribbonfilter:8:0000009999999999", Status::kInvalidArgument},
               {"ribbonfilter:99999999999999", Status::kOk},
               {"bloomfilter:1e999", Status::kNotSupported}};
  for (const auto& c : cases) {
    std::shared_ptr<const FilterPolicy> policy;
    Status s;
    EXPECT_NO_THROW(s = NewFilterPolicy(c.uri, &policy)) << c.uri;
    EXPECT_EQ(s.code(), c.code) << c.uri << ": " << s.ToString();
    if (s.ok()) {
      ASSERT_NE(policy, nullptr) << c.uri;
      EXPECT_STREQ(policy->Name(), "ribbonfilter") << c.uri;
    } else {
      EXPECT_NE(s.ToString().find(c.uri), std::string::npos) << s.ToString();
      EXPECT_EQ(policy, nullptr) << c.uri;
    }
  }
}

TEST(Policy, SerialisedOptionsRecreateAnEqualPolicy) {
  for (const char* uri :
       {"sstfilter.Bloom:10", "{id=sstfilter.Bloom;fp_rate=0.001;layout=standard}",
        "{id=sstfilter.Cuckoo;fp_rate=0.001}", "sstfilter.Cuckoo:12.5",
        "{id=sstfilter.Leveled;bits_per_key=8;size_ratio=4;num_levels=5}", "sstfilter.Fuse:8",
        "{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.BumpedRibbon:8",
        "{id=sstfilter.BumpedRibbon;fp_rate=0.001}",
        "{id=sstfilter.Cuckoo;bits_per_key=12;compatibility=sstfilter}",
        "{id=sstfilter.Leveled;memory_budget=1M;compatibility=sstfilter}"}) {
    BlockBasedTableOptions options;
    options.filter_policy = PolicyFrom(uri);
    ConfigOptions config;
    std::string serialised;
    std::unique_ptr<ROCKSDB_NAMESPACE::TableFactory> factory(
        ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(options));
    ASSERT_TRUE(factory->GetOptionString(config, &serialised).ok());
    const size_t at = serialised.find("filter_policy=");
    ASSERT_NE(at, std::string::npos) << serialised;
    // filter_policy={id=...;...}: the policy's own string, braces included.
    const size_t open = at + std::string("filter_policy=").size();
    ASSERT_EQ(serialised[open], '{') << serialised;
    const std::string text = serialised.substr(open, serialised.find('}', open) - open + 1);
    EXPECT_EQ(text.find("nan"), std::string::npos) << text;  // an unset option is left out
    const auto again = PolicyFrom(text);
    ASSERT_NE(again, nullptr) << text;
    EXPECT_STREQ(again->Name(), options.filter_policy->Name());
    EXPECT_EQ(SpecOf(*again).ToString(), SpecOf(*options.filter_policy).ToString())
        << uri << " -> " << text;
    EXPECT_STREQ(again->CompatibilityName(), options.filter_policy->CompatibilityName()) << text;
    // The default family is left out, so that sstfilter 0.1 still loads the OPTIONS file.
    EXPECT_EQ(text.find("compatibility=sstfilter") != std::string::npos,
              std::strstr(uri, "compatibility=sstfilter") != nullptr)
        << text;
    EXPECT_EQ(text.find("compatibility=rocksdb"), std::string::npos) << text;
    std::string mismatch;
    EXPECT_TRUE(again->AreEquivalent(config, options.filter_policy.get(), &mismatch)) << mismatch;
  }
}

// compatibility names the family whose filters a policy reads and writes (sstfilter.h): RocksDB's
// by default, sstfilter 0.1's on request; two policies of different families are not equivalent.
TEST(Policy, CompatibilityNamesTheFilterFamily) {
  for (const PolicyConfig& c : kPolicyConfigs) {
    const std::string uri = c.uri;
    if (uri.find("compatibility=") != std::string::npos) continue;  // its own family
    const std::string id = PolicyNameOf(c.uri);
    std::string options = uri.rfind("{id=", 0) == 0
                              ? uri.substr(1, uri.size() - 2)
                              : "id=" + id + ";bits_per_key=" + uri.substr(uri.find(':') + 1);
    const auto default_family = PolicyFrom(uri);
    const auto rocksdb = PolicyFrom("{" + options + ";compatibility=rocksdb}");
    const auto sstfilter = PolicyFrom("{" + options + ";compatibility=sstfilter}");
    ASSERT_NE(default_family, nullptr);
    ASSERT_NE(rocksdb, nullptr);
    ASSERT_NE(sstfilter, nullptr);
    EXPECT_STREQ(default_family->CompatibilityName(), kRocksDbCompatibilityName) << uri;
    EXPECT_STREQ(rocksdb->CompatibilityName(), kRocksDbCompatibilityName) << uri;
    EXPECT_STREQ(sstfilter->CompatibilityName(), kSstFilterCompatibilityName) << uri;
    std::string mismatch;
    EXPECT_FALSE(rocksdb->AreEquivalent(ConfigOptions(), sstfilter.get(), &mismatch)) << uri;
    EXPECT_EQ(mismatch, "compatibility") << uri;
  }
}

// The librocksdb that the tests run against is the version whose headers they were built with
// (a library found first on another path would test the wrong interface layout), and one that
// compat/filter_bits_interface.h declares.
TEST(RocksDb, TheLoadedLibraryIsTheVersionOfTheHeaders) {
  const std::string headers = std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) +
                              "." + std::to_string(ROCKSDB_PATCH);
  EXPECT_EQ(ROCKSDB_NAMESPACE::GetRocksVersionAsString(/*with_patch=*/true), headers);
  printf("[ figures  ] RocksDB %s, FilterBitsBuilder with AddKeyAndAlt: %s, CalculateSpace: %s\n",
         headers.c_str(), SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT ? "yes" : "no",
         SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE ? "yes" : "no");
}

TEST(Policy, RegistrationIsIdempotent) {
  EXPECT_EQ(sstfilter_register(*ROCKSDB_NAMESPACE::ObjectLibrary::Default(), ""), 0);
  auto library = std::make_shared<ROCKSDB_NAMESPACE::ObjectLibrary>("test");
  EXPECT_EQ(sstfilter_register(*library, ""), 8);  // five policies, the partitioner, the listener,
                                                   // the range filter collector
  EXPECT_EQ(sstfilter_register(*library, ""), 0);
}

}  // namespace
}  // namespace sstfilter
