// --json: every figure of the run, a record per policy with its levels and benchmarks.
#include <fstream>

#include "db_bench_ext/report.h"

namespace db_bench_ext {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void WriteJson(const Config& c, const std::vector<PolicyResult>& results) {
  std::ofstream out(FLAGS_json);
  out << "{\n  \"config\": {\"num\": " << c.num << ", \"reads\": " << c.reads
      << ", \"key_size\": " << FLAGS_key_size << ", \"value_size\": " << FLAGS_value_size
      << ", \"threads\": " << FLAGS_threads << ", \"batch_size\": " << FLAGS_batch_size
      << ", \"cache_size\": " << FLAGS_cache_size << ", \"seed\": " << FLAGS_seed
      << ", \"compression_type\": " << JsonString(FLAGS_compression_type) << "},\n"
      << "  \"policies\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const PolicyResult& pr = results[i];
    out << "    {\"filter_uri\": " << JsonString(pr.uri) << ", \"sst_files\": " << pr.files
        << ", \"filter_bytes\": " << pr.filter_bytes
        << ", \"filter_entries\": " << pr.filter_entries
        << ", \"bits_per_key\": " << pr.bits_per_key() << ",\n     \"levels\": [";
    size_t li = 0;
    for (const auto& [level, l] : pr.levels) {
      const LevelCounts counts = pr.AbsentKeyLevelCounts(level);
      out << (li++ ? ", " : "") << "{\"level\": " << level << ", \"files\": " << l.files
          << ", \"keys\": " << l.keys << ", \"filter_bytes\": " << l.filter_bytes
          << ", \"filter_entries\": " << l.filter_entries
          << ", \"missing_filter_checks\": " << counts.checks()
          << ", \"missing_false_positives\": " << counts.false_positives() << "}";
    }
    out << "],\n     \"benchmarks\": {";
    for (size_t j = 0; j < pr.benches.size(); ++j) {
      const BenchResult& b = pr.benches[j];
      out << (j ? ",\n       " : "\n       ") << JsonString(b.benchmark->name) << ": {"
          << "\"micros_per_op\": " << b.micros_per_op() << ", \"ops_per_sec\": " << b.ops_per_sec()
          << ", \"seconds\": " << b.seconds << ", \"ops\": " << b.ops << ", \"found\": " << b.found
          << ", \"filter_checks\": " << b.filter_checks()
          << ", \"filter_negatives\": " << b.filter_negatives
          << ", \"filter_positives\": " << b.filter_positives
          << ", \"filter_true_positives\": " << b.filter_true_positives
          << ", \"fp_rate\": " << (b.filter_fp_rate >= 0 ? b.filter_fp_rate : b.fp_rate())
          << ", \"data_blocks_per_op\": " << b.data_blocks_per_op()
          << ", \"build_ns_per_key\": " << b.build_ns_per_key << ", \"hit_ns\": " << b.hit_ns
          << ", \"miss_ns\": " << b.miss_ns << ", \"filter_bits_per_key\": " << b.filter_bits;
      const auto rounds = pr.round_ops_per_sec.find(b.benchmark->name);
      if (rounds != pr.round_ops_per_sec.end()) {
        out << ", \"rounds_ops_per_sec\": [";
        for (size_t k = 0; k < rounds->second.size(); ++k) {
          out << (k ? ", " : "") << rounds->second[k];
        }
        out << "], \"median_ops_per_sec\": " << pr.OpsPerSec(b.benchmark->name);
      }
      out << "}";
    }
    out << "}}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out.good()) Fail("cannot write --json file '" + FLAGS_json + "'");
}

}  // namespace db_bench_ext
