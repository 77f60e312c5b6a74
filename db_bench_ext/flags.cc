// SPDX-License-Identifier: Apache-2.0
// The flags, defined here and declared in flags.h, and their checks.
#include "db_bench_ext/flags.h"

#include <rocksdb/convenience.h>
#include <rocksdb/status.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "compat/rocksdb_api.h"
#include "sstfilter/sstfilter.h"

DEFINE_string(benchmarks, "fillrandom,readrandom,readmissing,multireadrandom,multireadmissing",
              db_bench_ext::BenchmarksHelp());
DEFINE_string(filter_uri,
              "none,bloomfilter:10,ribbonfilter:10,sstfilter.Bloom:10,"
              "{id=sstfilter.Cuckoo;fp_rate=0.01}",
              "Comma-separated filter policies, compared side by side: sstfilter's "
              "(sstfilter.Bloom:10, {id=sstfilter.Cuckoo;fp_rate=0.001}), RocksDB's own "
              "(bloomfilter:10, ribbonfilter:10) and none. Commas inside {...} belong to the "
              "policy.");
DEFINE_int64(num, 2000000, "Number of keys in the database (and in filterbuild's filter)");
DEFINE_int64(reads, 1000000,
             "Lookups per read benchmark; -1 means --num (db_bench's default). The default "
             "keeps the default run under 5 minutes on 2 cores");
DEFINE_int32(key_size, 16, "Key size in bytes (at least 8)");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_string(db, "/tmp/sstfilter_db_bench_ext", "Directory of the databases (one per policy)");
DEFINE_bool(use_existing_db, false, "Reuse the databases of an earlier run; skip fill benchmarks");
DEFINE_int32(threads, 1, "Threads for the read benchmarks");
DEFINE_int64(cache_size, 8 << 20, "Block cache size in bytes");
DEFINE_int32(bloom_bits, -1,
             "If >= 0 and --filter_uri is not given, compare none with bloomfilter:<bloom_bits>");
DEFINE_bool(statistics, false, "Print RocksDB's statistics after each policy's benchmarks");
DEFINE_int64(seed, 42, "Seed of the key order and the lookups");
DEFINE_string(key_dist, "uniform",
              "Which keys the read benchmarks look up: uniform, or zipfian (--zipf_theta), or "
              "zipf:THETA (the same with its exponent: zipf:0.99); the hottest keys are the last "
              "of the key space, the newest of an ordered fill; in filltimeseries, the newest "
              "written so far");
DEFINE_double(read_hit_ratio, 0.5,
              "readmixed and multireadmixed: the share of lookups that are of present keys (the "
              "others are of absent keys), in [0, 1]");
DEFINE_int32(duration, 0,
             "If > 0, each read benchmark runs for this many seconds (per pass and per round) "
             "instead of --reads lookups");
DEFINE_string(options_file, "",
              "A RocksDB OPTIONS file (of a database of yours, or written by hand): every "
              "database takes its DBOptions and its default column family's options, with the "
              "filter policy replaced by each --filter_uri entry; option flags given on the "
              "command line override the file, the others do not apply. Paths in it (wal_dir, "
              "db_paths, cf_paths, db_log_dir) are ignored: everything is written under --db. "
              "The block cache is --cache_size (OPTIONS files do not record one)");
DEFINE_bool(cache_index_and_filter_blocks, false,
            "Keep index and filter blocks in the block cache (competing with data blocks), not "
            "in the table readers' own memory");
DEFINE_bool(pin_l0_filter_and_index_blocks_in_cache, false,
            "With --cache_index_and_filter_blocks: pin level 0's filter and index blocks");
DEFINE_bool(partition_filters, false,
            "Partitioned filters (and the two-level index they need): filter partitions of "
            "--metadata_block_size bytes, loaded into the block cache as lookups need them");
DEFINE_int64(metadata_block_size, 4096, "Size of index and filter partitions in bytes");
DEFINE_bool(decouple_partitioned_filters, false,
            "With --partition_filters: RocksDB's decouple_partitioned_filters (from 9.6), which "
            "cuts each filter partition at --metadata_block_size by its own size; off (RocksDB's "
            "default), 9.x cuts one at each index partition's cut too, leaving a small one after "
            "each full one. An error before 9.6");
DEFINE_int32(format_version, -1,
             "The block-based table's format_version; -1: RocksDB's default (which RocksDB "
             "checks at open)");
DEFINE_double(reads_per_write, 1,
              "filltimeseries and readmissingwriterandom: absent-key lookups after each write, by "
              "--key_dist (filltimeseries: over the keys written so far), in [0, 1000]; fractions "
              "spread them (0.1: one every 10 writes)");
DEFINE_double(zipf_theta, 0.99, "Exponent of --key_dist=zipfian, in (0, 1)");
DEFINE_int64(write_buffer_size, 16 << 20, "Memtable size in bytes");
DEFINE_string(compression_type, "snappy", "none, snappy, zlib, lz4, zstd");
DEFINE_int32(num_levels, 7, "Levels of the LSM tree");
DEFINE_int64(max_bytes_for_level_base, 256 << 20, "Size of level 1 in bytes");
DEFINE_double(max_bytes_for_level_multiplier, 10, "Size ratio between adjacent levels");
DEFINE_int64(target_file_size_base, 64 << 20, "Target SST file size in bytes at level 1");
DEFINE_int32(level0_file_num_compaction_trigger, 4, "L0 files that trigger a compaction");
DEFINE_bool(level_compaction_dynamic_level_bytes, false,
            "Size levels from the last one up, each max_bytes_for_level_multiplier times the "
            "next (the shape sstfilter.Leveled assumes)");
DEFINE_string(sst_partitioner_factory, "",
              "SstPartitionerFactory of every database, by name (e.g. sstfilter.NoTrivialMove); "
              "empty for none");
DEFINE_string(listeners, "",
              "EventListeners of every database, by name, as RocksDB's DBOptions string takes "
              "them (e.g. sstfilter.LeveledBudget, which keeps sstfilter.Leveled within its "
              "budget whatever RocksDB does with files); empty for none");
DEFINE_bool(settled_fill, false,
            "Fill benchmarks flush every --write_buffer_size bytes of keys and values and wait "
            "for the compactions of each flush before writing on, so that every policy's tree goes "
            "through the same flushes and compactions and the trees compare level for level "
            "(slower than db_bench's fill, whose tree shape depends on timing)");
DEFINE_bool(use_direct_reads, false,
            "Read SST files with O_DIRECT, so that a data block missing from the block cache "
            "costs a device read, not a page-cache copy (what a false positive costs a database "
            "larger than memory)");
DEFINE_bool(optimize_filters_for_hits, false,
            "RocksDB's optimize_filters_for_hits: no filters on the last level (less memory; every "
            "lookup of an absent key in the last level's range reads a block there)");
DEFINE_int32(rounds, 0,
             "Extra rounds of the read benchmarks, run after every policy's first pass (then a "
             "warm-up) and interleaved across the policies, so that the machine's drift hits "
             "all alike; the summary gives each read benchmark's median ops/sec over the rounds");
DEFINE_int32(batch_size, 32, "Keys per MultiGet in the multiread benchmarks");
DEFINE_double(fp_rate, 0.01, "Target false-positive rate for the sizing calculator");
DEFINE_string(json, "", "Write every figure to this file as JSON");
DEFINE_string(absent_keys, "",
              "--benchmarks=advise: the absent keys to look up, a key per line (its bytes as they "
              "are, or in hexadecimal with --absent_keys_hex); empty: --reads keys made from the "
              "database's own");
DEFINE_bool(absent_keys_hex, false,
            "--absent_keys: each line is a key in hexadecimal, two digits per byte (for keys "
            "that hold newlines or other binary bytes)");
DEFINE_string(inspect_db, "",
              "Report the filter policy of every SST file of the database at this path, and "
              "which files have no sstfilter filter; then exit (no benchmarks)");
DEFINE_string(range_filter, "",
              "Range filters to compare, a comma-separated list: each entry a "
              "table_properties_collectors value (sstfilter.RangeFilter, or "
              "{id=sstfilter.RangeFilter;bits_per_key=12}) or none. Every --filter_uri policy "
              "runs once with each, in its own database. Empty: no range filters");
DEFINE_int32(scan_length, 16,
             "seekrandom: the keys a scan reads; seekempty: the integers an empty scan spans, "
             "from just after a present key (2 * --key_spacing must exceed it)");
DEFINE_int64(key_spacing, 1,
             "Present key i is the integer 2 i key_spacing, absent key i (2 i + 1) key_spacing: "
             "room between the keys for seekempty's empty ranges");
DEFINE_string(plot, "",
              "Draw false positives per absent-key lookup and lookup cost against bits per "
              "key to this PNG file (needs gnuplot and readmissing or multireadmissing)");

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

}  // namespace

void Fail(const std::string& message) {
  fprintf(stderr, "db_bench_ext: %s\n", message.c_str());
  std::exit(1);
}

namespace {

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
  if (FLAGS_key_dist == "uniform") {
    c->zipf_theta = 0;
  } else if (FLAGS_key_dist == "zipfian") {
    if (!(FLAGS_zipf_theta > 0 && FLAGS_zipf_theta < 1)) {
      Fail("--zipf_theta must be in (0, 1), got " + std::to_string(FLAGS_zipf_theta));
    }
    c->zipf_theta = FLAGS_zipf_theta;
  } else if (FLAGS_key_dist.rfind("zipf:", 0) == 0) {
    const std::string theta = FLAGS_key_dist.substr(5);
    char* end = nullptr;
    const double value = std::strtod(theta.c_str(), &end);
    if (theta.empty() || end != theta.c_str() + theta.size() || !(value > 0 && value < 1)) {
      Fail("--key_dist=zipf:THETA needs THETA in (0, 1), got '" + theta + "'");
    }
    c->zipf_theta = value;
  } else {
    Fail("--key_dist must be uniform, zipfian or zipf:THETA, got '" + FLAGS_key_dist + "'");
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
