// SPDX-License-Identifier: Apache-2.0
// libFuzzer: option strings through RocksDB's configuration machinery and sstfilter's policies.
// Whatever the string, creating the policy either fails with a Status or yields a policy whose
// filters hold their keys.
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "sstfilter/sstfilter.h"
#include "tests/policy_list.h"

// The keys every validated policy's filter must hold, made once: under ASan, formatting them anew
// for each policy string of every input took much of the time of an execution.
static const std::vector<std::string>& Keys() {
  static const std::vector<std::string>* const keys = [] {
    auto* out = new std::vector<std::string>;
    for (int i = 0; i < 100; ++i) out->push_back(std::to_string(i));
    return out;
  }();
  return *keys;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;
  const std::vector<std::string>& keys = Keys();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> uris = {text};
  for (const std::string& name : sstfilter::PolicyNames()) {
    uris.push_back(name + ":" + text);
    uris.push_back("{id=" + name + ";" + text + "}");
  }
  for (const std::string& uri : uris) {
    std::shared_ptr<const rocksdb::FilterPolicy> policy;
    if (!sstfilter::NewFilterPolicy(uri, &policy).ok() || policy == nullptr) continue;
    if (std::string(policy->Name()).rfind("sstfilter.", 0) != 0) continue;
    rocksdb::BlockBasedTableOptions table;
    table.filter_policy = policy;
    const rocksdb::FilterBuildingContext context(table);
    std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy->GetBuilderWithContext(context));
    if (builder == nullptr) __builtin_trap();  // a policy that validated must build
    (void)builder->ApproximateNumEntries(size * 1000);
    for (const std::string& key : keys) builder->AddKey(key);
    std::unique_ptr<const char[]> buf;
    rocksdb::Status status;
    const rocksdb::Slice filter = builder->Finish(&buf, &status);
    std::unique_ptr<rocksdb::FilterBitsReader> reader(policy->GetFilterBitsReader(filter));
    for (const std::string& key : keys) {
      if (!reader->MayMatch(key)) __builtin_trap();
    }
  }
  rocksdb::ConfigOptions strict;
  strict.ignore_unsupported_options = false;
  rocksdb::BlockBasedTableOptions base, out;
  (void)rocksdb::GetBlockBasedTableOptionsFromString(strict, base, "filter_policy=" + text, &out);
  return 0;
}
