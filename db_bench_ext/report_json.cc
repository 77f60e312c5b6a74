// SPDX-License-Identifier: Apache-2.0
// --json: every figure of the run, a record per policy with its levels and benchmarks. Fields keep
// the order they are written in (ordered_json), so the file reads like the text output.
#include <nlohmann/json.hpp>

#include <fstream>

#include "db_bench_ext/report.h"

namespace db_bench_ext {
namespace {

using Json = nlohmann::ordered_json;

Json ConfigJson(const Config& c) {
  return {
      {"num", c.num},
      {"reads", c.reads},
      {"key_size", FLAGS_key_size},
      {"value_size", FLAGS_value_size},
      {"threads", FLAGS_threads},
      {"batch_size", FLAGS_batch_size},
      {"cache_size", FLAGS_cache_size},
      {"seed", FLAGS_seed},
      {"key_dist", FLAGS_key_dist},
      {"zipf_theta", c.zipf_theta},
      {"read_hit_ratio", FLAGS_read_hit_ratio},
      {"duration", FLAGS_duration},
      {"options_file", FLAGS_options_file},
      {"cache_index_and_filter_blocks", FLAGS_cache_index_and_filter_blocks},
      {"pin_l0_filter_and_index_blocks_in_cache", FLAGS_pin_l0_filter_and_index_blocks_in_cache},
      {"partition_filters", FLAGS_partition_filters},
      {"decouple_partitioned_filters", FLAGS_decouple_partitioned_filters},
      {"format_version", FLAGS_format_version},
      {"use_direct_reads", FLAGS_use_direct_reads},
      {"compression_type", FLAGS_compression_type}};
}

Json BenchJson(const PolicyResult& pr, const BenchResult& b) {
  Json j = {{"micros_per_op", b.micros_per_op()},
            {"ops_per_sec", b.ops_per_sec()},
            {"seconds", b.seconds},
            {"ops", b.ops},
            {"lookups", b.lookups},  // a fill's absent-key lookups between the writes
            {"found", b.found},
            {"filter_checks", b.filter_checks()},
            {"filter_negatives", b.filter_negatives},
            {"filter_positives", b.filter_positives},
            {"filter_true_positives", b.filter_true_positives},
            // filterquery's own rate, else the rate from RocksDB's statistics (-1: no checks).
            {"fp_rate", b.filter_fp_rate >= 0 ? b.filter_fp_rate : b.fp_rate()},
            {"false_positives_per_lookup", b.fp_per_lookup()},
            {"data_blocks_per_op", b.data_blocks_per_op()},
            // Read benchmarks: filter blocks the block cache missed, blocks and bytes read from
            // SST files, per lookup (or per key of a MultiGet).
            {"filter_block_misses_per_op", b.per_op(b.filter_block_misses)},
            {"file_blocks_read_per_op", b.per_op(b.file_block_reads)},
            {"file_bytes_read_per_op", b.per_op(b.file_bytes_read)},
            // Scans: the files the iterators met in their bounds, and those range filters skipped.
            {"files_met_per_op", b.per_op(b.files_asked)},
            {"files_skipped_per_op", b.per_op(b.files_skipped)},
            // Of a Get, or of a MultiGet call (-1: not measured).
            {"latency_us", {{"p50", b.p50_us}, {"p99", b.p99_us}, {"p99.9", b.p999_us}}},
            {"build_ns_per_key", b.build_ns_per_key},
            {"hit_ns", b.hit_ns},
            {"miss_ns", b.miss_ns},
            {"filter_bits_per_key", b.filter_bits}};
  const auto rounds = pr.round_ops_per_sec.find(b.benchmark->name);
  if (rounds != pr.round_ops_per_sec.end()) {
    j["rounds_ops_per_sec"] = rounds->second;
    j["median_ops_per_sec"] = pr.OpsPerSec(b.benchmark->name);
  }
  return j;
}

Json PolicyJson(const PolicyResult& pr) {
  Json levels = Json::array();
  for (const auto& [level, l] : pr.levels) {
    const LevelCounts counts = pr.AbsentKeyLevelCounts(level);
    levels.push_back({{"level", level},
                      {"files", l.files},
                      {"keys", l.keys},
                      {"filter_bytes", l.filter_bytes},
                      {"filter_entries", l.filter_entries},
                      {"missing_filter_checks", counts.checks()},
                      {"missing_false_positives", counts.false_positives()}});
  }
  Json benchmarks = Json::object();
  // A benchmark given twice keeps its last result (one key per benchmark name).
  for (const BenchResult& b : pr.benches) benchmarks[b.benchmark->name] = BenchJson(pr, b);
  const PolicyResult::AllocationEstimate estimate = EstimateAllocationOf(pr);
  Json allocation = nullptr;  // no filters, absent-key lookups or probes
  if (estimate.one_filter > 0) {
    allocation = {{"one_filter_fp_per_lookup", estimate.one_filter},
                  {"over_the_levels_fp_per_lookup", estimate.over_the_levels}};
  }
  return {{"filter_uri", pr.uri},
          {"range_filter", pr.range_filter},
          {"range_filter_bytes", pr.range_filter_bytes},
          {"range_filter_entries", pr.range_filter_entries},
          {"sst_files", pr.files},
          {"filter_bytes", pr.filter_bytes},
          {"filter_entries", pr.filter_entries},
          {"bits_per_key", pr.bits_per_key()},
          {"levels", std::move(levels)},
          {"allocation_estimate", std::move(allocation)},
          {"benchmarks", std::move(benchmarks)}};
}

}  // namespace

void WriteJson(const Config& config, const std::vector<PolicyResult>& results) {
  Json policies = Json::array();
  for (const PolicyResult& pr : results) policies.push_back(PolicyJson(pr));
  const Json doc = {{"config", ConfigJson(config)}, {"policies", std::move(policies)}};
  std::ofstream out(FLAGS_json);
  // A URI that is not valid UTF-8 is written with replacement characters rather than failing the
  // run at its very end.
  out << doc.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) << "\n";
  if (!out.good()) Fail("cannot write --json file '" + FLAGS_json + "'");
}

}  // namespace db_bench_ext
