// SPDX-License-Identifier: Apache-2.0
// The keys, and db_bench's workloads against one policy's database: fills and reads.
//
// Keys: key i of the --num present keys is the integer 2i, absent keys are the odd integers (both
// times --key_spacing), written big-endian into the first 8 bytes and padded to --key_size, so
// absent keys fall inside every file's key range and lookups really consult the filters.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/status.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "db_bench_ext/benchmarks.h"
#include "db_bench_ext/flags.h"
#include "db_bench_ext/measure.h"

namespace db_bench_ext {

// Writes present key i (or, if `absent`, the absent key just after it) into *key, reusing its
// buffer: no allocation once *key has held a key.
void WriteKey(uint64_t i, bool absent, std::string* key);
// Writes the integer k as a key: big-endian in the first 8 bytes, padded to --key_size.
void WriteIntegerKey(uint64_t k, std::string* key);
std::string PresentKey(uint64_t i);
std::string AbsentKey(uint64_t i);

// One policy's database, under --db; kFill and kRead benchmarks run against it.
class DbRunner {
 public:
  DbRunner(const Config& config, const PolicyUnderTest& p, size_t index);

  // (Re)opens the database, first deleting it if `fresh`.
  ROCKSDB_NAMESPACE::Status Open(bool fresh);
  // Runs a kFill or kRead benchmark; the filter figures are RocksDB's statistics over the run.
  BenchResult Run(const Benchmark& benchmark);
  // Adds the live SST files' filter sizes, overall and per level, to *out.
  void CollectTableProperties(PolicyResult* out);
  std::string StatisticsText() const { return stats_->ToString(); }

 private:
  void Fill(const Benchmark& benchmark, BenchResult* r);
  void FlushAndSettle(std::chrono::microseconds poll);
  void Settle(std::chrono::microseconds poll);
  void Read(const Benchmark& benchmark, BenchResult* r);
  void Seek(const Benchmark& benchmark, BenchResult* r);

  const Config& config_;
  const PolicyUnderTest& policy_;
  const std::string path_;
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db_;
  std::shared_ptr<ROCKSDB_NAMESPACE::Statistics> stats_;
};

}  // namespace db_bench_ext
