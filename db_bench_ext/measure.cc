// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/measure.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include <unistd.h>

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include "core/level_allocation.h"
#include "db_bench_ext/flags.h"

namespace db_bench_ext {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

const BenchResult* PolicyResult::Find(const std::string& name) const {
  for (const BenchResult& b : benches) {
    if (name == b.benchmark->name) return &b;
  }
  return nullptr;
}

const BenchResult* PolicyResult::AbsentKeyBench() const {
  for (const char* name :
       {"readmissing", "multireadmissing", "filltimeseries", "readmissingwriterandom"}) {
    const BenchResult* b = Find(name);
    if (b != nullptr) return b;
  }
  return nullptr;
}

LevelCounts PolicyResult::AbsentKeyLevelCounts(int level) const {
  const BenchResult* b = AbsentKeyBench();
  if (b == nullptr) return {};
  const auto it = b->levels.find(level);
  return it != b->levels.end() ? it->second : LevelCounts();
}

PolicyResult::AllocationEstimate PolicyResult::EstimateAllocation(uint64_t keys_per_filter) const {
  const BenchResult* absent = AbsentKeyBench();
  const uint64_t lookups = absent == nullptr     ? 0
                           : absent->lookups > 0 ? absent->lookups
                                                 : absent->ops;
  const double bits = bits_per_key();
  if (lookups == 0 || !(bits > 0) || levels.empty() || files == 0) return {};
  std::vector<double> shares, probes;
  double all_probes = 0;
  uint64_t keys = 0;
  for (const auto& [level, l] : levels) {
    shares.push_back(static_cast<double>(l.keys));
    probes.push_back(static_cast<double>(AbsentKeyLevelCounts(level).checks()) /
                     static_cast<double>(lookups));
    all_probes += probes.back();
    keys += l.keys;
  }
  if (!(all_probes > 0) || keys == 0) return {};
  if (keys_per_filter == 0) keys_per_filter = std::max<uint64_t>(keys / files, 1);
  // One rate for every level at the same memory: the allocation of a tree of one level.
  const auto one = sstfilter::AllocateShares({1.0}, bits, sstfilter::FilterCostModel::kSstfilter,
                                             keys_per_filter);
  const auto allocated = sstfilter::AllocateShares(
      shares, bits, sstfilter::FilterCostModel::kSstfilter, keys_per_filter, probes);
  if (!one.ok() || !allocated.ok()) return {};
  AllocationEstimate e;
  e.one_filter = one.value()[0].ExpectedFpRate() * all_probes;
  e.over_the_levels = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    e.over_the_levels += probes[i] * allocated.value()[i].ExpectedFpRate();
  }
  return e;
}

double PolicyResult::OpsPerSec(const std::string& name) const {
  const auto it = round_ops_per_sec.find(name);
  if (it != round_ops_per_sec.end() && !it->second.empty()) return Median(it->second);
  const BenchResult* b = Find(name);
  return b != nullptr ? b->ops_per_sec() : -1;
}

const PolicyResult* NoFilterResult(const std::vector<PolicyResult>& results) {
  const PolicyResult* none = nullptr;
  for (const PolicyResult& pr : results) {
    if (pr.uri == kNoFilterUri) none = &pr;
  }
  return none;
}

const PolicyResult* NoRangeFilterResult(const std::vector<PolicyResult>& results,
                                        const std::string& uri) {
  for (const PolicyResult& pr : results) {
    if (pr.uri == uri && pr.range_filter == kNoFilterUri) return &pr;
  }
  return nullptr;
}

Progress::Progress(uint64_t total)
    : total_(total),
      to_terminal_(isatty(STDERR_FILENO) == 1),
      last_print_ns_(Clock::now().time_since_epoch() / std::chrono::nanoseconds(1)) {}

Progress::~Progress() {
  if (printed_) fprintf(stderr, "%80s\r", "");
}

void Progress::Print() {
  if (total_ == 0) {  // a run for a --duration
    fprintf(stderr, "... finished %" PRIu64 " ops%30s\r", done_.load(), "");
  } else {
    fprintf(stderr, "... finished %" PRIu64 " of %" PRIu64 " ops%30s\r", done_.load(), total_, "");
  }
  fflush(stderr);
  printed_ = true;
}

LevelPerfCounts::LevelPerfCounts() {
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kEnableCount);
  ROCKSDB_NAMESPACE::PerfContext* perf = ROCKSDB_NAMESPACE::get_perf_context();
  perf->Reset();
  perf->ClearPerLevelPerfContext();
  perf->EnablePerLevelPerfContext();
}

LevelPerfCounts::~LevelPerfCounts() {
  ROCKSDB_NAMESPACE::get_perf_context()->DisablePerLevelPerfContext();
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kDisable);
}

void LevelPerfCounts::AddTo(std::map<int, LevelCounts>* levels) const {
  const ROCKSDB_NAMESPACE::PerfContext* perf = ROCKSDB_NAMESPACE::get_perf_context();
  if (perf->level_to_perf_context == nullptr) return;
  for (const auto& [level, c] : *perf->level_to_perf_context) {
    LevelCounts& mine = (*levels)[static_cast<int>(level)];
    mine.negatives += c.bloom_filter_useful;
    mine.positives += c.bloom_filter_full_positive;
    mine.true_positives += c.bloom_filter_full_true_positive;
  }
}

void LevelPerfCounts::AddBlockReadsTo(uint64_t* blocks, uint64_t* bytes) const {
  const ROCKSDB_NAMESPACE::PerfContext* perf = ROCKSDB_NAMESPACE::get_perf_context();
  *blocks += perf->block_read_count;
  *bytes += perf->block_read_byte;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
}

double LatencyHistogram::QuantileMicros(double q) const {
  if (total_ == 0) return -1;
  const double rank = std::max(1.0, std::ceil(q * static_cast<double>(total_)));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (static_cast<double>(seen) < rank) continue;
    if (b < (1u << kSubBucketBits)) return static_cast<double>(b) / 1000;
    const int shift = static_cast<int>(b >> kSubBucketBits) - 1;
    const double low =
        static_cast<double>(((1u << kSubBucketBits) + (b & ((1u << kSubBucketBits) - 1))) << shift);
    return (low + static_cast<double>(uint64_t{1} << shift) / 2) / 1000;
  }
  return -1;  // not reached: the counts sum to total_
}

}  // namespace db_bench_ext
