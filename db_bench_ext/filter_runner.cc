// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/filter_runner.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/random.h"
#include "db_bench_ext/workloads.h"

namespace db_bench_ext {

BenchResult FilterRunner::Build(const Benchmark& benchmark) {
  BenchResult r;
  r.benchmark = &benchmark;
  if (!EnsureBuilt(&r.build_ns_per_key)) return r;
  r.ops = config_.num;
  r.seconds = r.build_ns_per_key * config_.num / 1e9;
  r.filter_bits = BitsPerKey(filter_.size(), config_.num);
  return r;
}

BenchResult FilterRunner::Query(const Benchmark& benchmark) {
  BenchResult r;
  r.benchmark = &benchmark;
  double unused = 0;
  if (!EnsureBuilt(&unused)) return r;
  r.filter_bits = BitsPerKey(filter_.size(), config_.num);
  std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
      policy_.policy->GetFilterBitsReader(filter_));
  const uint64_t n = std::min<uint64_t>(config_.reads, config_.num);
  std::vector<std::string> hits, misses;
  uint64_t rng = static_cast<uint64_t>(FLAGS_seed);
  for (uint64_t i = 0; i < n; ++i) {
    hits.push_back(PresentKey(sstfilter::SplitMix64(&rng) % config_.num));
    misses.push_back(AbsentKey(sstfilter::SplitMix64(&rng) % config_.num));
  }
  uint64_t matched = 0;
  auto start = Clock::now();
  for (const std::string& k : hits) matched += reader->MayMatch(k);
  r.hit_ns = SecondsSince(start) * 1e9 / n;
  if (matched != n) Fail(policy_.uri + ": the filter lost a key");
  uint64_t false_positives = 0;
  start = Clock::now();
  for (const std::string& k : misses) false_positives += reader->MayMatch(k);
  const double miss_seconds = SecondsSince(start);
  r.miss_ns = miss_seconds * 1e9 / n;
  r.ops = 2 * n;
  r.seconds = r.hit_ns * n / 1e9 + miss_seconds;
  r.filter_fp_rate = static_cast<double>(false_positives) / n;
  return r;
}

bool FilterRunner::EnsureBuilt(double* ns_per_key) {
  if (policy_.policy == nullptr) return false;
  if (buf_ != nullptr) {
    *ns_per_key = build_ns_per_key_;
    return true;
  }
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
  table.filter_policy = policy_.policy;
  const ROCKSDB_NAMESPACE::FilterBuildingContext context(table);
  std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder(
      policy_.policy->GetBuilderWithContext(context));
  if (builder == nullptr) Fail(policy_.uri + ": the policy gave no filter builder");
  std::vector<std::string> keys;
  keys.reserve(config_.num);
  for (uint64_t i = 0; i < config_.num; ++i) keys.push_back(PresentKey(i));
  const auto start = Clock::now();
  for (const std::string& k : keys) builder->AddKey(k);
  ROCKSDB_NAMESPACE::Status status;
  const ROCKSDB_NAMESPACE::Slice bytes = builder->Finish(&buf_, &status);
  *ns_per_key = SecondsSince(start) * 1e9 / config_.num;
  if (!status.ok()) Fail(policy_.uri + ": building the filter failed: " + status.ToString());
  filter_ = bytes;
  build_ns_per_key_ = *ns_per_key;
  return true;
}

}  // namespace db_bench_ext
