// SPDX-License-Identifier: Apache-2.0
// The checks of the flags (flags.cc defines them): ValidateFlags, ValidateAdvisorFlags and the
// policies of --filter_uri. Bad input Fail()s with one line on stderr.
#include <rocksdb/convenience.h>
#include <rocksdb/status.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "compat/rocksdb_api.h"
#include "core/decimal.h"
#include "db_bench_ext/flags.h"
#include "sstfilter/sstfilter.h"

namespace db_bench_ext {
namespace {

using ROCKSDB_NAMESPACE::Status;

// Splits on commas (or `separator`) outside braces: "{id=a;x=1},b" -> "{id=a;x=1}", "b".
std::vector<std::string> SplitList(const std::string& list, char separator = ',') {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == separator && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// --plot: a path gnuplot can quote, and gnuplot on the machine.
void CheckPlotPath() {
  if (!FLAGS_plot.empty() && std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    Fail("--plot needs gnuplot (apt-get install gnuplot-nox)");
  }
  if (FLAGS_plot.find_first_of("'\n") != std::string::npos) {
    Fail("--plot: the path may not contain a single quote or a newline (gnuplot quotes it)");
  }
}

std::vector<const Benchmark*> BenchmarksFromFlags() {
  std::vector<const Benchmark*> benchmarks;
  for (const std::string& name : SplitList(FLAGS_benchmarks)) {
    const Benchmark* b = FindBenchmark(name);
    if (b == nullptr) Fail("unknown benchmark '" + name + "' in --benchmarks");
    benchmarks.push_back(b);
  }
  if (benchmarks.empty()) Fail("--benchmarks is empty");
  return benchmarks;
}

// The workload: keys, reads, sizes, threads, batches, rounds.
void CheckWorkloadFlags(Config* c) {
  if (FLAGS_num <= 0) Fail("--num must be > 0, got " + std::to_string(FLAGS_num));
  if (FLAGS_num > (int64_t{1} << 40)) Fail("--num must be at most 2^40");
  c->num = static_cast<uint64_t>(FLAGS_num);
  if (FLAGS_reads == 0 || FLAGS_reads < -1) {
    Fail("--reads must be > 0, or -1 for --num, got " + std::to_string(FLAGS_reads));
  }
  c->reads = FLAGS_reads == -1 ? c->num : static_cast<uint64_t>(FLAGS_reads);
  if (FLAGS_key_size < 8 || FLAGS_key_size > 1024) {
    Fail("--key_size must be in [8, 1024], got " + std::to_string(FLAGS_key_size));
  }
  if (FLAGS_value_size < 0 || FLAGS_value_size > (64 << 20)) {
    Fail("--value_size must be in [0, 64 MiB], got " + std::to_string(FLAGS_value_size));
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 256) {
    Fail("--threads must be in [1, 256], got " + std::to_string(FLAGS_threads));
  }
  if (FLAGS_batch_size < 1 || FLAGS_batch_size > 4096) Fail("--batch_size must be in [1, 4096]");
  if (FLAGS_rounds < 0 || FLAGS_rounds > 1000) Fail("--rounds must be in [0, 1000]");
  if (!(FLAGS_fp_rate > 0 && FLAGS_fp_rate < 1)) Fail("--fp_rate must be in (0, 1)");
  if (!(FLAGS_reads_per_write >= 0 && FLAGS_reads_per_write <= 1000)) {
    Fail("--reads_per_write must be in [0, 1000], got " + std::to_string(FLAGS_reads_per_write));
  }
  if (!(FLAGS_late_fraction >= 0 && FLAGS_late_fraction <= 1)) {
    Fail("--late_fraction must be in [0, 1], got " + std::to_string(FLAGS_late_fraction));
  }
  if (FLAGS_late_keys < 1 || FLAGS_late_keys > (int64_t{1} << 40)) {
    Fail("--late_keys must be in [1, 2^40], got " + std::to_string(FLAGS_late_keys));
  }
  if (FLAGS_scan_length < 1 || FLAGS_scan_length > 1000000) {
    Fail("--scan_length must be in [1, 1000000], got " + std::to_string(FLAGS_scan_length));
  }
  if (FLAGS_key_spacing < 1 || FLAGS_key_spacing > (int64_t{1} << 20)) {
    Fail("--key_spacing must be in [1, 2^20], got " + std::to_string(FLAGS_key_spacing));
  }
  const bool seek_empty = std::any_of(
      c->benchmarks.begin(), c->benchmarks.end(),
      [](const Benchmark* b) { return b->kind == BenchmarkKind::kSeek && b->absent_keys; });
  if (seek_empty && 2 * FLAGS_key_spacing <= FLAGS_scan_length) {
    Fail("seekempty scans --scan_length=" + std::to_string(FLAGS_scan_length) +
         " integers after a present key: --key_spacing must be more than half of it, got " +
         std::to_string(FLAGS_key_spacing));
  }
  const std::string& dist = FLAGS_key_dist;
  // zipfian and zipf:THETA put the hot keys at the end of the key space; scrambled and
  // scrambled:THETA spread them over it.
  const size_t colon = dist.find(':');
  const std::string law = dist.substr(0, colon);
  c->zipf_scrambled = law == "scrambled";
  if (dist == "uniform") {
    c->zipf_theta = 0;
  } else if (dist == "zipfian" || dist == "scrambled") {
    if (!(FLAGS_zipf_theta > 0 && FLAGS_zipf_theta < 1)) {
      Fail("--zipf_theta must be in (0, 1), got " + std::to_string(FLAGS_zipf_theta));
    }
    c->zipf_theta = FLAGS_zipf_theta;
  } else if (colon != std::string::npos && (law == "zipf" || law == "scrambled")) {
    const std::string theta = dist.substr(colon + 1);
    double value = 0;
    if (!sstfilter::ParseFiniteDecimal(theta, &value) || !(value > 0 && value < 1)) {
      Fail("--key_dist=" + law + ":THETA needs THETA in (0, 1), got '" + theta + "'");
    }
    c->zipf_theta = value;
  } else {
    Fail("--key_dist must be uniform, zipfian, zipf:THETA, scrambled or scrambled:THETA, got '" +
         dist + "'");
  }
  if (!(FLAGS_read_hit_ratio >= 0 && FLAGS_read_hit_ratio <= 1)) {
    Fail("--read_hit_ratio must be in [0, 1], got " + std::to_string(FLAGS_read_hit_ratio));
  }
  if (FLAGS_duration < 0 || FLAGS_duration > 86400) {
    Fail("--duration must be in [0, 86400] seconds, got " + std::to_string(FLAGS_duration));
  }
}

// --options_file: the DBOptions and the default column family's options, loaded as strictly as
// sstfilter's tools load them (an option RocksDB does not know, or a plugin it cannot load, is an
// error, not silently dropped).
void LoadOptionsFile(Config* c) {
  ROCKSDB_NAMESPACE::DBOptions db_options;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> families;
  const Status s = ROCKSDB_NAMESPACE::LoadOptionsFromFile(
      sstfilter::StrictConfigOptions(), FLAGS_options_file, &db_options, &families);
  if (!s.ok()) Fail("cannot load --options_file '" + FLAGS_options_file + "': " + s.ToString());
  const auto family = std::find_if(families.begin(), families.end(),
                                   [](const ROCKSDB_NAMESPACE::ColumnFamilyDescriptor& f) {
                                     return f.name == ROCKSDB_NAMESPACE::kDefaultColumnFamilyName;
                                   });
  if (family == families.end()) {
    Fail("--options_file '" + FLAGS_options_file + "' has no default column family");
  }
  const auto& factory = family->options.table_factory;
  if (factory == nullptr ||
      factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>() == nullptr) {
    Fail("--options_file '" + FLAGS_options_file +
         "': the default column family's table factory is " + (factory ? factory->Name() : "none") +
         ", not BlockBasedTable (filter policies belong to block-based tables)");
  }
  c->options_file = std::make_shared<ROCKSDB_NAMESPACE::Options>(db_options, family->options);
}

// The database's options: cache, memtable, the tree's shape, compression, the partitioner.
void CheckDatabaseFlags(Config* c) {
  if (FLAGS_cache_size < 0) Fail("--cache_size must be >= 0");
  if (FLAGS_write_buffer_size < 64 << 10) Fail("--write_buffer_size must be at least 65536");
  if (FLAGS_num_levels < 1 || FLAGS_num_levels > 64) Fail("--num_levels must be in [1, 64]");
  if (FLAGS_max_bytes_for_level_base < 65536) Fail("--max_bytes_for_level_base must be >= 65536");
  if (!(FLAGS_max_bytes_for_level_multiplier > 1 && FLAGS_max_bytes_for_level_multiplier <= 1000)) {
    Fail("--max_bytes_for_level_multiplier must be in (1, 1000]");
  }
  if (FLAGS_target_file_size_base < 65536) Fail("--target_file_size_base must be >= 65536");
  if (FLAGS_level0_file_num_compaction_trigger < 1) {
    Fail("--level0_file_num_compaction_trigger must be >= 1");
  }
  const std::map<std::string, ROCKSDB_NAMESPACE::CompressionType> compressions = {
      {"none", ROCKSDB_NAMESPACE::kNoCompression},
      {"snappy", ROCKSDB_NAMESPACE::kSnappyCompression},
      {"zlib", ROCKSDB_NAMESPACE::kZlibCompression},
      {"lz4", ROCKSDB_NAMESPACE::kLZ4Compression},
      {"zstd", ROCKSDB_NAMESPACE::kZSTD}};
  const auto comp = compressions.find(FLAGS_compression_type);
  if (comp == compressions.end()) {
    Fail("unknown --compression_type '" + FLAGS_compression_type +
         "' (none, snappy, zlib, lz4, zstd)");
  }
  c->compression = comp->second;
  const std::map<std::string, ROCKSDB_NAMESPACE::CompactionStyle> styles = {
      {"level", ROCKSDB_NAMESPACE::kCompactionStyleLevel},
      {"universal", ROCKSDB_NAMESPACE::kCompactionStyleUniversal}};
  const auto style = styles.find(FLAGS_compaction_style);
  if (style == styles.end()) {
    Fail("unknown --compaction_style '" + FLAGS_compaction_style + "' (level, universal)");
  }
  c->compaction_style = style->second;
  if (!FLAGS_sst_partitioner_factory.empty()) {
    const Status s = ROCKSDB_NAMESPACE::SstPartitionerFactory::CreateFromString(
        sstfilter::StrictConfigOptions(), FLAGS_sst_partitioner_factory, &c->partitioner);
    if (!s.ok() || c->partitioner == nullptr) {
      Fail("bad --sst_partitioner_factory '" + FLAGS_sst_partitioner_factory +
           "': " + (s.ok() ? "no partitioner" : s.ToString()));
    }
  }
  if (FLAGS_format_version < -1 || FLAGS_format_version > 1000) {
    Fail("--format_version must be -1 or a format RocksDB knows, got " +
         std::to_string(FLAGS_format_version));
  }
  constexpr bool kRocksDbCanDecouple =
      sstfilter::compat::kHasDecouplePartitionedFilters<ROCKSDB_NAMESPACE::BlockBasedTableOptions>;
  if (FLAGS_decouple_partitioned_filters && !kRocksDbCanDecouple) {
    Fail("--decouple_partitioned_filters needs RocksDB 9.6 or later, not " +
         ROCKSDB_NAMESPACE::GetRocksVersionAsString());
  }
  if (FLAGS_metadata_block_size < 64 || FLAGS_metadata_block_size > (int64_t{1} << 30)) {
    Fail("--metadata_block_size must be in [64, 2^30], got " +
         std::to_string(FLAGS_metadata_block_size));
  }
  // One name at a time: RocksDB's "listeners" option skips a name it does not know, so a list
  // of several loses a misspelt one without a word.
  for (const std::string& name : SplitList(FLAGS_listeners, ':')) {
    ROCKSDB_NAMESPACE::DBOptions db_options;
    const Status s = ROCKSDB_NAMESPACE::GetDBOptionsFromString(sstfilter::StrictConfigOptions(),
                                                               ROCKSDB_NAMESPACE::DBOptions(),
                                                               "listeners=" + name, &db_options);
    if (!s.ok() || db_options.listeners.size() != 1) {
      Fail("bad --listeners entry '" + name +
           "': " + (s.ok() ? "names no listener RocksDB knows" : s.ToString()));
    }
    c->listeners.push_back(db_options.listeners.front());
  }
  if (!FLAGS_listeners.empty() && c->listeners.empty()) {
    Fail("bad --listeners '" + FLAGS_listeners + "': names no listener");
  }
  if (!FLAGS_options_file.empty()) LoadOptionsFile(c);
}

}  // namespace

void CheckDecimalFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg(argv[i]);
    if (arg == "--") return;  // gflags reads no flag after it
    if (arg.size() < 2 || arg[0] != '-') continue;
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t equals = arg.find('=');
    const std::string name(arg.substr(0, equals));
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info) || info.type == "bool") continue;
    std::string_view value;
    if (equals != std::string_view::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];  // the flag's value, whatever it looks like (--db -x takes "-x")
    } else {
      continue;  // gflags says the value is missing
    }
    if (info.type != "double") continue;
    double parsed = 0;
    if (!sstfilter::ParseFiniteDecimal(value, &parsed)) {
      Fail("--" + name + " takes a decimal number, got '" + std::string(value) + "'");
    }
  }
}

// --filter_uri's policies (--bloom_bits, db_bench's flag, when --filter_uri is not given).
std::vector<PolicyUnderTest> PoliciesFromFlags() {
  std::string uris = FLAGS_filter_uri;
  if (gflags::GetCommandLineFlagInfoOrDie("filter_uri").is_default && FLAGS_bloom_bits >= 0) {
    uris = std::string(kNoFilterUri) + ",bloomfilter:" + std::to_string(FLAGS_bloom_bits);
  }
  // --range_filter: each entry's collector factory (null for none), or one "" entry without it.
  std::vector<
      std::pair<std::string, std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory>>>
      ranges;
  for (const std::string& entry : SplitList(FLAGS_range_filter)) {
    std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> factory;
    if (entry != kNoFilterUri) {
      const Status s = ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory::CreateFromString(
          sstfilter::StrictConfigOptions(), entry, &factory);
      if (!s.ok() || factory == nullptr) {
        Fail("bad --range_filter entry '" + entry +
             "': " + (s.ok() ? "no collector" : s.ToString()));
      }
    }
    ranges.emplace_back(entry, factory);
  }
  if (ranges.empty()) ranges.emplace_back("", nullptr);
  std::vector<PolicyUnderTest> policies;
  for (const std::string& uri : SplitList(uris)) {
    PolicyUnderTest p;
    p.uri = uri;
    if (uri != kNoFilterUri) {
      const Status s = sstfilter::NewFilterPolicy(uri, &p.policy);
      if (!s.ok() || p.policy == nullptr) {
        Fail("bad --filter_uri entry '" + uri + "': " + (s.ok() ? "no policy" : s.ToString()));
      }
    }
    for (const auto& [name, factory] : ranges) {
      p.range_filter = name;
      p.range_collector = factory;
      policies.push_back(p);
    }
  }
  if (policies.empty()) Fail("--filter_uri is empty");
  return policies;
}

namespace {

// The plot draws absent-key lookups of filters: the run must make some.
void CheckPlotHasData(const Config& c) {
  if (FLAGS_plot.empty()) return;
  const bool absent_reads = std::any_of(
      c.benchmarks.begin(), c.benchmarks.end(),
      [](const Benchmark* b) { return b->kind == BenchmarkKind::kRead && b->absent_keys; });
  const bool filters = std::any_of(c.policies.begin(), c.policies.end(),
                                   [](const PolicyUnderTest& p) { return p.uri != kNoFilterUri; });
  if (!absent_reads || !filters) {
    Fail(
        "--plot draws the absent-key lookups of filter policies: it needs readmissing or "
        "multireadmissing in --benchmarks and a filter in --filter_uri (--plot= for none)");
  }
}

// --use_existing_db: every database the run reads is there already (RocksDB, which would
// otherwise make an empty one, is told not to: DatabaseOptions).
void CheckExistingDatabases(const Config& c) {
  if (!FLAGS_use_existing_db) return;
  const bool reads = std::any_of(c.benchmarks.begin(), c.benchmarks.end(), [](const Benchmark* b) {
    return b->kind == BenchmarkKind::kRead || b->kind == BenchmarkKind::kSeek;
  });
  if (!reads) return;
  for (size_t i = 0; i < c.policies.size(); ++i) {
    const std::string path = DatabasePath(i);
    std::error_code ec;
    const bool has_current = std::filesystem::exists(path + "/CURRENT", ec);
    if (ec) Fail("--use_existing_db: cannot read '" + path + "': " + ec.message());
    if (!has_current) {
      Fail("--use_existing_db: no database at '" + path + "' (for " + c.policies[i].Label() +
           "); run without it to fill one");
    }
  }
}

void CheckDbDirectoryIsWritable() {
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_db, ec);
  const std::string probe = FLAGS_db + "/.db_bench_ext_probe";
  if (ec || !std::ofstream(probe).good()) {
    Fail("cannot create or write --db directory '" + FLAGS_db + "'" +
         (ec ? ": " + ec.message() : std::string()));
  }
  std::filesystem::remove(probe, ec);
}

// --json: a file that can be written, found out before the run rather than after it. Opened for
// appending, which leaves a file already there as it is; one the check made is removed again (a
// symbolic link counts as there: the link is kept).
void CheckJsonPath() {
  if (FLAGS_json.empty()) return;
  std::error_code ec;
  const bool existed = std::filesystem::exists(std::filesystem::symlink_status(FLAGS_json, ec));
  if (!std::ofstream(FLAGS_json, std::ios::app).good()) {
    Fail("cannot write --json file '" + FLAGS_json + "'");
  }
  if (!existed) std::filesystem::remove(FLAGS_json, ec);
}

}  // namespace

std::string DatabasePath(size_t index) { return FLAGS_db + "/policy" + std::to_string(index); }

Config ValidateFlags() {
  CheckPlotPath();
  Config c;
  c.benchmarks = BenchmarksFromFlags();
  CheckWorkloadFlags(&c);
  CheckDatabaseFlags(&c);
  c.policies = PoliciesFromFlags();
  CheckPlotHasData(c);
  const bool sizing_only =
      std::all_of(c.benchmarks.begin(), c.benchmarks.end(),
                  [](const Benchmark* b) { return b->kind == BenchmarkKind::kSizing; });
  if (sizing_only && !FLAGS_json.empty()) {
    Fail(
        "--json has nothing to write: the sizing calculator only prints its figures (--json= for "
        "none)");
  }
  CheckExistingDatabases(c);
  CheckDbDirectoryIsWritable();
  // After --db is made: a --json file may be under it.
  CheckJsonPath();
  return c;
}

void ValidateAdvisorFlags() {
  // The flags the advisor uses (in PoliciesFromFlags and RunAdvisor; not --range_filter, whose
  // collectors it does not model). It ignores every other flag of this file (the database's own
  // OPTIONS file gives its options, and it runs no benchmark), so one given is refused rather
  // than silently dropped.
  const std::set<std::string> used = {"benchmarks", "db",   "filter_uri",  "bloom_bits",
                                      "reads",      "seed", "absent_keys", "absent_keys_hex",
                                      "json"};
  // This file's flags: those gflags records under the same file name as --db.
  const std::string this_file = gflags::GetCommandLineFlagInfoOrDie("db").filename;
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& f : flags) {
    if (f.filename == this_file && !f.is_default && used.count(f.name) == 0) {
      Fail("--" + f.name + " does not apply to --benchmarks=advise");
    }
  }
  if (FLAGS_absent_keys_hex && FLAGS_absent_keys.empty()) {
    Fail("--absent_keys_hex needs --absent_keys=FILE");
  }
  CheckJsonPath();
}

}  // namespace db_bench_ext
