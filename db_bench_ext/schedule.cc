// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/schedule.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "db_bench_ext/filter_runner.h"
#include "db_bench_ext/report.h"
#include "db_bench_ext/workloads.h"

namespace db_bench_ext {
namespace {

using ROCKSDB_NAMESPACE::Status;

void Open(DbRunner& db, bool fresh, const char* what, const PolicyUnderTest& p) {
  const Status s = db.Open(fresh);
  if (!s.ok()) Fail(std::string(what) + " the database of " + p.uri + ": " + s.ToString());
}

// Runs `benchmarks` for one policy. Returns its database, still open, if it was opened.
std::unique_ptr<DbRunner> RunPolicy(const Config& config, size_t index,
                                    const std::vector<const Benchmark*>& benchmarks,
                                    const std::vector<PolicyResult>& earlier, PolicyResult* pr) {
  const PolicyUnderTest& p = config.policies[index];
  PrintPolicyHeader(p.Label());
  pr->uri = p.uri;
  pr->range_filter = p.range_filter;
  // Lookups compare with the policy without a filter, scans with this one without a range filter.
  const PolicyResult* none = NoFilterResult(earlier);
  const PolicyResult* no_range = NoRangeFilterResult(earlier, p.uri);
  auto db = std::make_unique<DbRunner>(config, p, index);
  FilterRunner filter(config, p);
  bool opened = false;
  for (const Benchmark* b : benchmarks) {
    BenchResult r;
    if (b->kind == BenchmarkKind::kFilterBuild) {
      r = filter.Build(*b);
    } else if (b->kind == BenchmarkKind::kFilterQuery) {
      r = filter.Query(*b);
    } else {
      const bool fill = b->kind == BenchmarkKind::kFill;
      if (fill && FLAGS_use_existing_db) {
        PrintSkipped(*b, "--use_existing_db");
        continue;
      }
      if (!opened || fill) {
        Open(*db, /*fresh=*/fill && !FLAGS_use_existing_db, "cannot open", p);
        opened = true;
      }
      r = db->Run(*b);
      // Reopen, so that reads start from a cold table cache and every table reader opens at its
      // file's current level (RocksDB counts per-level statistics at the level a reader was
      // opened at, which compactions' trivial moves leave behind).
      if (fill) Open(*db, /*fresh=*/false, "cannot reopen", p);
    }
    pr->benches.push_back(r);
    PrintBench(*pr, pr->benches.back(), b->kind == BenchmarkKind::kSeek ? no_range : none);
    fflush(stdout);  // a line per benchmark as it ends, also when stdout is a file
  }
  if (!opened) return nullptr;
  db->CollectTableProperties(pr);
  PrintPolicyFiles(*pr);
  if (FLAGS_statistics) PrintStatistics(db->StatisticsText());
  return db;
}

}  // namespace

std::vector<PolicyResult> RunBenchmarks(const Config& config) {
  // The calculator needs no database and no policy: once, before the policies' runs.
  std::vector<const Benchmark*> benchmarks, read_benchmarks;
  for (const Benchmark* b : config.benchmarks) {
    if (b->kind == BenchmarkKind::kSizing) {
      PrintSizing(config);
    } else {
      benchmarks.push_back(b);
    }
    if ((b->kind == BenchmarkKind::kRead || b->kind == BenchmarkKind::kSeek) &&
        std::find(read_benchmarks.begin(), read_benchmarks.end(), b) == read_benchmarks.end()) {
      read_benchmarks.push_back(b);
    }
  }
  std::vector<PolicyResult> results;
  if (benchmarks.empty()) return results;
  // With --rounds, every policy's database stays open for the interleaved rounds.
  std::vector<std::unique_ptr<DbRunner>> open_dbs(config.policies.size());
  for (size_t i = 0; i < config.policies.size(); ++i) {
    PolicyResult pr;
    std::unique_ptr<DbRunner> db = RunPolicy(config, i, benchmarks, results, &pr);
    if (FLAGS_rounds > 0) open_dbs[i] = std::move(db);
    results.push_back(std::move(pr));
  }
  for (int round = 1; round <= FLAGS_rounds && !read_benchmarks.empty(); ++round) {
    PrintRoundHeader(round);
    for (size_t i = 0; i < open_dbs.size(); ++i) {
      if (open_dbs[i] == nullptr) continue;
      for (const Benchmark* b : read_benchmarks) {
        const double ops_per_sec = open_dbs[i]->Run(*b).ops_per_sec();
        results[i].round_ops_per_sec[b->name].push_back(ops_per_sec);
        PrintRoundResult(*b, ops_per_sec, results[i].Label());
        fflush(stdout);
      }
    }
  }
  return results;
}

}  // namespace db_bench_ext
