// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/measure.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

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

}  // namespace db_bench_ext
