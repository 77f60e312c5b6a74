// SPDX-License-Identifier: Apache-2.0
// The benchmarks db_bench_ext knows, as a table of named entries: what each one runs, on which
// keys and through which call. Code asks an entry's fields, never its name; names are for
// --benchmarks, the printed lines and the JSON.
#pragma once

#include <string>

namespace db_bench_ext {

enum class BenchmarkKind {
  kSizing,       // the sizing calculator: once, before the policies, no database
  kFill,         // writes the --num keys into a fresh database
  kRead,         // lookups in the filled database
  kSeek,         // bounded scans in the filled database (iterators, --scan_length)
  kFilterBuild,  // one filter of --num keys through the policy's own builder
  kFilterQuery,  // lookups in that filter through the policy's own reader
};

struct Benchmark {
  const char* name;
  BenchmarkKind kind;
  bool sequential;   // kFill: keys in ascending order, not shuffled
  bool absent_keys;  // kRead: looks up keys that were never written; kSeek: scans empty ranges;
                     // kFill: also looks them up,
                     // --reads_per_write after each write (sequential: a time series, lookups
                     // over the range written so far; random: over the whole key space)
  bool multi_get;    // kRead: MultiGet in batches of --batch_size, not one Get per key
  bool mixed_keys;   // kRead: present keys with probability --read_hit_ratio, else absent ones
};

// --benchmarks' help: every name this file's list has, and advise.
const char* BenchmarksHelp();

// The entry named `name`; null if there is none. Entries live for the whole run, so a pointer
// to one identifies the benchmark.
const Benchmark* FindBenchmark(const std::string& name);

}  // namespace db_bench_ext
