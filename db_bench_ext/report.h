// SPDX-License-Identifier: Apache-2.0
// The output: db_bench-style lines as benchmarks end and the closing table on stdout
// (report_text.cc), every figure as JSON for --json (report_json.cc), and the --plot drawing
// (report_plot.cc).
#pragma once

#include <string>
#include <vector>

#include "db_bench_ext/benchmarks.h"
#include "db_bench_ext/flags.h"
#include "db_bench_ext/measure.h"

namespace db_bench_ext {

// The first line: keys, values, lookups, threads, compression.
void PrintConfig(const Config& config);
// The sizing calculator: bits per key of each filter at --fp_rate, and the total for --num keys.
void PrintSizing(const Config& config);
void PrintPolicyHeader(const std::string& uri);
void PrintSkipped(const Benchmark& benchmark, const char* why);
// One benchmark's line; for reads, a second line with the filter figures and, if `none` (the
// policy without a filter) ran it, the speed-up against it.
void PrintBench(const PolicyResult& pr, const BenchResult& b, const PolicyResult* none);
// The policy's SST files and filter size, overall and per level.
void PrintPolicyFiles(const PolicyResult& pr);
// pr.EstimateAllocation for the filters of this run: with --partition_filters, partitions of
// about --metadata_block_size bytes at the policy's bits per key.
PolicyResult::AllocationEstimate EstimateAllocationOf(const PolicyResult& pr);
void PrintStatistics(const std::string& text);
void PrintRoundHeader(int round);
void PrintRoundResult(const Benchmark& benchmark, double ops_per_sec, const std::string& uri);
// The closing table, a row per policy.
void PrintTable(const std::vector<PolicyResult>& results);

// Writes every figure to --json; fails if the file cannot be written.
void WriteJson(const Config& config, const std::vector<PolicyResult>& results);

// Draws false-positive rate and lookup cost against bits per key to --plot with gnuplot.
void WritePlot(const std::vector<PolicyResult>& results);

}  // namespace db_bench_ext
