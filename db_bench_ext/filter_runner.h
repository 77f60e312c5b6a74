// SPDX-License-Identifier: Apache-2.0
// The filter-only benchmarks: one filter of --num keys through the policy's own builder and
// reader, no database. The build cost includes hashing; queries go one key at a time.
#pragma once

#include <rocksdb/slice.h>

#include <memory>

#include "db_bench_ext/benchmarks.h"
#include "db_bench_ext/flags.h"
#include "db_bench_ext/measure.h"

namespace db_bench_ext {

class FilterRunner {
 public:
  FilterRunner(const Config& config, const PolicyUnderTest& p) : config_(config), policy_(p) {}

  // kFilterBuild and kFilterQuery; both give ops = 0 for a policy without a filter.
  BenchResult Build(const Benchmark& benchmark);
  BenchResult Query(const Benchmark& benchmark);

 private:
  // Builds the filter once; later calls reuse it. False for a policy without a filter.
  bool EnsureBuilt(double* ns_per_key);

  const Config& config_;
  const PolicyUnderTest& policy_;
  std::unique_ptr<const char[]> buf_;
  ROCKSDB_NAMESPACE::Slice filter_;
  double build_ns_per_key_ = 0;
};

}  // namespace db_bench_ext
