// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/benchmarks.h"

namespace db_bench_ext {
namespace {

// clang-format off
constexpr Benchmark kBenchmarks[] = {
    // name              kind                         sequential absent_keys multi_get mixed_keys
    {"fillrandom",       BenchmarkKind::kFill,        false,     false,      false,    false},
    {"fillseq",          BenchmarkKind::kFill,        true,      false,      false,    false},
    {"filltimeseries",   BenchmarkKind::kFill,        true,      true,       false,    false},
    {"readmissingwriterandom", BenchmarkKind::kFill,  false,     true,       false,    false},
    {"readrandom",       BenchmarkKind::kRead,        false,     false,      false,    false},
    {"readmissing",      BenchmarkKind::kRead,        false,     true,       false,    false},
    {"readmixed",        BenchmarkKind::kRead,        false,     false,      false,    true},
    {"multireadrandom",  BenchmarkKind::kRead,        false,     false,      true,     false},
    {"multireadmissing", BenchmarkKind::kRead,        false,     true,       true,     false},
    {"multireadmixed",   BenchmarkKind::kRead,        false,     false,      true,     true},
    {"seekrandom",       BenchmarkKind::kSeek,        false,     false,      false,    false},
    {"seekempty",        BenchmarkKind::kSeek,        false,     true,       false,    false},
    {"filterbuild",      BenchmarkKind::kFilterBuild, false,     false,      false,    false},
    {"filterquery",      BenchmarkKind::kFilterQuery, false,     false,      false,    false},
    {"sizing",           BenchmarkKind::kSizing,      false,     false,      false,    false},
};
// clang-format on

}  // namespace

const char* BenchmarksHelp() {
  static const std::string help = [] {
    std::string names;
    for (const Benchmark& b : kBenchmarks) names += std::string(names.empty() ? "" : ", ") + b.name;
    return "Comma-separated benchmarks, run in order for each policy: " + names +
           "; or advise alone (what each policy would do on the existing database at --db, "
           "which it never writes)";
  }();
  return help.c_str();
}

const Benchmark* FindBenchmark(const std::string& name) {
  for (const Benchmark& b : kBenchmarks) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

}  // namespace db_bench_ext
