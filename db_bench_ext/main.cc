// SPDX-License-Identifier: Apache-2.0
// db_bench_ext: RocksDB's db_bench, extended to compare filter policies side by side.
//
// Every benchmark runs for each policy of --filter_uri, on the same keys, in the same process; the
// output ends with one table, a row per policy. Flags keep db_bench's names and meanings where
// they overlap. flags.cc has the flags, benchmarks.cc the benchmarks, workloads.h the keys.
#include <gflags/gflags.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "db_bench_ext/advise.h"
#include "db_bench_ext/flags.h"
#include "db_bench_ext/report.h"
#include "db_bench_ext/schedule.h"
#include "sstfilter/inspect.h"

namespace db_bench_ext {
namespace {

int Main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "compares RocksDB filter policies side by side on real workloads.\n"
      "  db_bench_ext [--num=N] [--filter_uri=a,b,...] [--benchmarks=...] [--json=F] "
      "[--plot=F.png]");
  CheckDecimalFlags(argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (argc > 1) Fail(std::string("unexpected argument '") + argv[1] + "'");
  if (!FLAGS_inspect_db.empty()) {
    std::vector<sstfilter::SstFilterInfo> files;
    const ROCKSDB_NAMESPACE::Status s = sstfilter::DescribeFilters(FLAGS_inspect_db, &files);
    if (!s.ok()) Fail("--inspect_db: " + s.ToString());
    fputs(sstfilter::FormatFilterReport(files).c_str(), stdout);
    std::vector<sstfilter::FilterBudgetInfo> budgets;
    const ROCKSDB_NAMESPACE::Status b =
        sstfilter::DescribeFilterBudgets(FLAGS_inspect_db, &budgets);
    if (!b.ok()) Fail("--inspect_db: " + b.ToString());
    fputs(sstfilter::FormatBudgetReport(budgets).c_str(), stdout);
    return 0;
  }
  if (FLAGS_benchmarks == "advise") {
    ValidateAdvisorFlags();
    RunAdvisor();
    return 0;
  }
  if (("," + FLAGS_benchmarks + ",").find(",advise,") != std::string::npos) {
    Fail(
        "--benchmarks=advise runs alone: it reads an existing database, the others make their own");
  }
  const Config config = ValidateFlags();
  PrintConfig(config);
  const std::vector<PolicyResult> results = RunBenchmarks(config);
  if (results.empty()) return 0;  // the sizing calculator alone (without --json): no policy ran
  PrintTable(results);
  if (!FLAGS_json.empty()) WriteJson(config, results);
  if (!FLAGS_plot.empty()) WritePlot(results);
  return 0;
}

}  // namespace
}  // namespace db_bench_ext

// Every error is meant to be a Fail() of one line; an exception that escapes anyway (the standard
// library's, on some input not foreseen) is one line and exit 1 too, not an abort.
int main(int argc, char** argv) {
  try {
    return db_bench_ext::Main(argc, argv);
  } catch (const std::exception& e) {
    fprintf(stderr, "db_bench_ext: %s\n", e.what());
  } catch (...) {
    fprintf(stderr, "db_bench_ext: an unknown exception\n");
  }
  return 1;
}
