// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/measure.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

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

Progress::~Progress() {
  if (printed_) fprintf(stderr, "%80s\r", "");
}

void Progress::Print() {
  fprintf(stderr, "... finished %" PRIu64 " of %" PRIu64 " ops%30s\r", done_.load(), total_, "");
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

}  // namespace db_bench_ext
