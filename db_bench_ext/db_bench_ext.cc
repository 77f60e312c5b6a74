// db_bench_ext: RocksDB's db_bench, extended to compare filter policies side by side.
//
// Every benchmark runs for each policy of --filter_uri, on the same keys, in the same process; the
// output ends with one table, a row per policy. Flags keep db_bench's names and meanings where
// they overlap. Keys: key i of the --num present keys is the integer 2i, absent keys are the odd
// integers, both written big-endian into the first 8 bytes and padded to --key_size, so absent
// keys fall inside every file's key range and lookups really consult the filters.
#include <gflags/gflags.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/sst_partitioner.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/random.h"
#include "core/sizing.h"
#include "sstfilter/inspect.h"
#include "sstfilter/sstfilter.h"

DEFINE_string(benchmarks, "fillrandom,readrandom,readmissing,multireadrandom,multireadmissing",
              "Comma-separated benchmarks, run in order for each policy: fillrandom, fillseq, "
              "readrandom, readmissing, multireadrandom, multireadmissing, filterbuild, "
              "filterquery, sizing");
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
DEFINE_bool(settled_fill, false,
            "Fill benchmarks flush every --write_buffer_size bytes of keys and values and wait "
            "for the compactions of each flush before writing on, so that every policy's tree goes "
            "through the same flushes and compactions and the trees compare level for level "
            "(slower than db_bench's fill, whose tree shape depends on timing)");
DEFINE_bool(use_direct_reads, false,
            "Read SST files with O_DIRECT, so that a data block missing from the block cache "
            "costs a device read, not a page-cache copy (what a false positive costs a database "
            "larger than memory)");
DEFINE_int32(rounds, 0,
             "Extra rounds of the read benchmarks, run after every policy's first pass (then a "
             "warm-up) and interleaved across the policies, so that the machine's drift hits "
             "all alike; the summary gives each read benchmark's median ops/sec over the rounds");
DEFINE_int32(batch_size, 32, "Keys per MultiGet in the multiread benchmarks");
DEFINE_double(fp_rate, 0.01, "Target false-positive rate for the sizing calculator");
DEFINE_string(json, "", "Write every figure to this file as JSON");
DEFINE_string(inspect_db, "",
              "Report the filter policy of every SST file of the database at this path, and "
              "which files have no sstfilter filter; then exit (no benchmarks)");
DEFINE_string(plot, "",
              "Draw false-positive rate against bits per key, and lookup cost, to "
              "this PNG file (needs gnuplot)");

namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Configuration, validated before any work starts.
// ---------------------------------------------------------------------------------------------

struct PolicyUnderTest {
  std::string uri;                             // as given
  std::shared_ptr<const FilterPolicy> policy;  // null for "none"
};

// What a benchmark runs. Code asks an entry's fields, never its name.
enum class BenchmarkKind {
  kSizing,       // the sizing calculator: once, before the policies, no database
  kFill,         // writes the --num keys into a fresh database
  kRead,         // lookups in the filled database
  kFilterBuild,  // one filter of --num keys through the policy's own builder
  kFilterQuery,  // lookups in that filter through the policy's own reader
};

struct Benchmark {
  const char* name;
  BenchmarkKind kind;
  bool sequential;   // kFill: keys in ascending order, not shuffled
  bool absent_keys;  // kRead: looks up keys that were never written
  bool multi_get;    // kRead: MultiGet in batches of --batch_size, not one Get per key
};

// clang-format off
constexpr Benchmark kBenchmarks[] = {
    // name             kind                        sequential absent_keys multi_get
    {"fillrandom",       BenchmarkKind::kFill,        false,     false,      false},
    {"fillseq",          BenchmarkKind::kFill,        true,      false,      false},
    {"readrandom",       BenchmarkKind::kRead,        false,     false,      false},
    {"readmissing",      BenchmarkKind::kRead,        false,     true,       false},
    {"multireadrandom",  BenchmarkKind::kRead,        false,     false,      true},
    {"multireadmissing", BenchmarkKind::kRead,        false,     true,       true},
    {"filterbuild",      BenchmarkKind::kFilterBuild, false,     false,      false},
    {"filterquery",      BenchmarkKind::kFilterQuery, false,     false,      false},
    {"sizing",           BenchmarkKind::kSizing,      false,     false,      false},
};
// clang-format on

// The entry named `name`; null if there is none.
const Benchmark* FindBenchmark(const std::string& name) {
  for (const Benchmark& b : kBenchmarks) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

[[noreturn]] void Fail(const std::string& message) {
  fprintf(stderr, "db_bench_ext: %s\n", message.c_str());
  std::exit(1);
}

// Splits on commas outside braces: "{id=a;x=1},b" -> "{id=a;x=1}", "b".
std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

struct Config {
  std::vector<const Benchmark*> benchmarks;
  std::vector<PolicyUnderTest> policies;
  uint64_t num = 0, reads = 0;
  ROCKSDB_NAMESPACE::CompressionType compression = ROCKSDB_NAMESPACE::kSnappyCompression;
  std::shared_ptr<ROCKSDB_NAMESPACE::SstPartitionerFactory> partitioner;  // null: none
};

Config Validate() {
  Config c;
  for (const std::string& name : SplitList(FLAGS_benchmarks)) {
    const Benchmark* b = FindBenchmark(name);
    if (b == nullptr) Fail("unknown benchmark '" + name + "' in --benchmarks");
    c.benchmarks.push_back(b);
  }
  if (c.benchmarks.empty()) Fail("--benchmarks is empty");
  if (FLAGS_num <= 0) Fail("--num must be > 0, got " + std::to_string(FLAGS_num));
  if (FLAGS_num > (int64_t{1} << 40)) Fail("--num must be at most 2^40");
  c.num = static_cast<uint64_t>(FLAGS_num);
  if (FLAGS_reads == 0 || FLAGS_reads < -1) {
    Fail("--reads must be > 0, or -1 for --num, got " + std::to_string(FLAGS_reads));
  }
  c.reads = FLAGS_reads == -1 ? c.num : static_cast<uint64_t>(FLAGS_reads);
  if (FLAGS_key_size < 8 || FLAGS_key_size > 1024) {
    Fail("--key_size must be in [8, 1024], got " + std::to_string(FLAGS_key_size));
  }
  if (FLAGS_value_size < 0 || FLAGS_value_size > (64 << 20)) {
    Fail("--value_size must be in [0, 64 MiB], got " + std::to_string(FLAGS_value_size));
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 256) {
    Fail("--threads must be in [1, 256], got " + std::to_string(FLAGS_threads));
  }
  if (FLAGS_cache_size < 0) Fail("--cache_size must be >= 0");
  if (FLAGS_write_buffer_size < 64 << 10) Fail("--write_buffer_size must be at least 65536");
  if (FLAGS_batch_size < 1 || FLAGS_batch_size > 4096) Fail("--batch_size must be in [1, 4096]");
  if (FLAGS_rounds < 0 || FLAGS_rounds > 1000) Fail("--rounds must be in [0, 1000]");
  if (FLAGS_num_levels < 1 || FLAGS_num_levels > 64) Fail("--num_levels must be in [1, 64]");
  if (FLAGS_max_bytes_for_level_base < 65536) Fail("--max_bytes_for_level_base must be >= 65536");
  if (!(FLAGS_max_bytes_for_level_multiplier > 1 && FLAGS_max_bytes_for_level_multiplier <= 1000)) {
    Fail("--max_bytes_for_level_multiplier must be in (1, 1000]");
  }
  if (FLAGS_target_file_size_base < 65536) Fail("--target_file_size_base must be >= 65536");
  if (FLAGS_level0_file_num_compaction_trigger < 1) {
    Fail("--level0_file_num_compaction_trigger must be >= 1");
  }
  if (!(FLAGS_fp_rate > 0 && FLAGS_fp_rate < 1)) Fail("--fp_rate must be in (0, 1)");
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
  c.compression = comp->second;
  if (!FLAGS_sst_partitioner_factory.empty()) {
    const Status s = ROCKSDB_NAMESPACE::SstPartitionerFactory::CreateFromString(
        sstfilter::StrictConfigOptions(), FLAGS_sst_partitioner_factory, &c.partitioner);
    if (!s.ok() || c.partitioner == nullptr) {
      Fail("bad --sst_partitioner_factory '" + FLAGS_sst_partitioner_factory +
           "': " + (s.ok() ? "no partitioner" : s.ToString()));
    }
  }

  std::string uris = FLAGS_filter_uri;
  if (gflags::GetCommandLineFlagInfoOrDie("filter_uri").is_default && FLAGS_bloom_bits >= 0) {
    uris = "none,bloomfilter:" + std::to_string(FLAGS_bloom_bits);
  }
  for (const std::string& uri : SplitList(uris)) {
    PolicyUnderTest p;
    p.uri = uri;
    if (uri != "none") {
      const Status s = sstfilter::NewFilterPolicy(uri, &p.policy);
      if (!s.ok() || p.policy == nullptr) {
        Fail("bad --filter_uri entry '" + uri + "': " + (s.ok() ? "no policy" : s.ToString()));
      }
    }
    c.policies.push_back(p);
  }
  if (c.policies.empty()) Fail("--filter_uri is empty");

  std::error_code ec;
  std::filesystem::create_directories(FLAGS_db, ec);
  const std::string probe = FLAGS_db + "/.db_bench_ext_probe";
  if (ec || !std::ofstream(probe).good()) {
    Fail("cannot create or write --db directory '" + FLAGS_db + "'" +
         (ec ? ": " + ec.message() : std::string()));
  }
  std::filesystem::remove(probe, ec);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Keys and values.
// ---------------------------------------------------------------------------------------------

std::string MakeKey(uint64_t k) {
  std::string key(static_cast<size_t>(FLAGS_key_size), 'x');
  for (int b = 0; b < 8; ++b) key[b] = static_cast<char>(k >> (56 - 8 * b));
  return key;
}
std::string PresentKey(uint64_t i) { return MakeKey(2 * i); }
std::string AbsentKey(uint64_t i) { return MakeKey(2 * i + 1); }

// ---------------------------------------------------------------------------------------------
// Results.
// ---------------------------------------------------------------------------------------------

struct BenchResult {
  const Benchmark* benchmark = nullptr;
  double seconds = 0;
  uint64_t ops = 0;
  uint64_t found = 0;
  // From RocksDB's statistics, deltas over the benchmark.
  uint64_t filter_negatives = 0;  // rocksdb.bloom.filter.useful
  uint64_t filter_positives = 0;  // rocksdb.bloom.filter.full.positive
  uint64_t filter_true_positives = 0;
  uint64_t data_block_reads = 0;  // rocksdb.block.cache.data.miss
  // Per level, from RocksDB's per-level perf context: filter "no" answers, "may match" answers,
  // and "may match" answers for keys the level really held.
  struct LevelCounts {
    uint64_t negatives = 0, positives = 0, true_positives = 0;
  };
  std::map<int, LevelCounts> levels;
  // filterbuild / filterquery
  double build_ns_per_key = 0, hit_ns = 0, miss_ns = 0, filter_fp_rate = -1, filter_bits = 0;

  double micros_per_op() const { return ops == 0 ? 0 : seconds * 1e6 / ops; }
  double ops_per_sec() const { return seconds <= 0 ? 0 : ops / seconds; }
  uint64_t filter_checks() const { return filter_negatives + filter_positives; }
  // For lookups of absent keys every positive is false; in general, positives minus true ones
  // over the checks of keys that were absent from the file.
  double fp_rate() const {
    const uint64_t negatives_checked = filter_checks() - filter_true_positives;
    return negatives_checked == 0
               ? -1
               : static_cast<double>(filter_positives - filter_true_positives) / negatives_checked;
  }
};

struct PolicyResult {
  std::string uri;
  std::vector<BenchResult> benches;
  uint64_t filter_bytes = 0, filter_entries = 0, files = 0;
  struct Level {
    uint64_t files = 0, keys = 0, filter_bytes = 0, filter_entries = 0;
  };
  std::map<int, Level> levels;  // from the live files' metadata and table properties
  double bits_per_key() const {
    return filter_entries == 0 ? 0 : 8.0 * filter_bytes / filter_entries;
  }
  const BenchResult* Find(const std::string& name) const {
    for (const BenchResult& b : benches) {
      if (name == b.benchmark->name) return &b;
    }
    return nullptr;
  }
  // The benchmark whose lookups were all of absent keys, so whose filter positives are all
  // false: readmissing, else multireadmissing; null if neither ran.
  const BenchResult* AbsentKeyBench() const {
    const BenchResult* b = Find("readmissing");
    return b != nullptr ? b : Find("multireadmissing");
  }
  // ops/sec of each --rounds round, per read benchmark.
  std::map<std::string, std::vector<double>> round_ops_per_sec;
  // The median over the rounds if there were any, else the first pass's figure; -1 if the
  // benchmark did not run.
  double OpsPerSec(const std::string& name) const {
    const auto it = round_ops_per_sec.find(name);
    if (it != round_ops_per_sec.end() && !it->second.empty()) {
      std::vector<double> v = it->second;
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    const BenchResult* b = Find(name);
    return b != nullptr ? b->ops_per_sec() : -1;
  }
};

// "... finished N ops" on stderr, at most once a second, as db_bench does.
class Progress {
 public:
  explicit Progress(uint64_t total) : total_(total), last_(Clock::now()) {}
  void Add(uint64_t n) {
    done_ += n;
    const auto now = Clock::now();
    if (now - last_ >= std::chrono::seconds(1)) {
      last_ = now;
      fprintf(stderr, "... finished %" PRIu64 " of %" PRIu64 " ops%30s\r", done_.load(), total_,
              "");
      fflush(stderr);
      printed_ = true;
    }
  }
  ~Progress() {
    if (printed_) fprintf(stderr, "%80s\r", "");
  }

 private:
  const uint64_t total_;
  std::atomic<uint64_t> done_{0};
  Clock::time_point last_;
  bool printed_ = false;
};

// ---------------------------------------------------------------------------------------------
// Database benchmarks.
// ---------------------------------------------------------------------------------------------

class DbRunner {
 public:
  DbRunner(const Config& config, const PolicyUnderTest& p, size_t index)
      : config_(config), policy_(p), path_(FLAGS_db + "/policy" + std::to_string(index)) {}

  Status Open(bool fresh) {
    db_.reset();  // close first: one process, one open instance per directory
    if (fresh) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
    Options options;
    options.create_if_missing = true;
    options.write_buffer_size = static_cast<size_t>(FLAGS_write_buffer_size);
    // A settled fill flushes by itself (Fill); RocksDB's own flushes, which come at a moment that
    // depends on memtable overhead and timing, must not come first.
    if (FLAGS_settled_fill) options.write_buffer_size *= 4;
    options.compression = config_.compression;
    options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
    options.IncreaseParallelism(2);
    options.num_levels = FLAGS_num_levels;
    options.max_bytes_for_level_base = static_cast<uint64_t>(FLAGS_max_bytes_for_level_base);
    options.max_bytes_for_level_multiplier = FLAGS_max_bytes_for_level_multiplier;
    options.target_file_size_base = static_cast<uint64_t>(FLAGS_target_file_size_base);
    options.level0_file_num_compaction_trigger = FLAGS_level0_file_num_compaction_trigger;
    options.level_compaction_dynamic_level_bytes = FLAGS_level_compaction_dynamic_level_bytes;
    options.sst_partitioner_factory = config_.partitioner;
    options.use_direct_reads = FLAGS_use_direct_reads;
    ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
    table.filter_policy = policy_.policy;
    table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(static_cast<size_t>(FLAGS_cache_size));
    options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
    stats_ = options.statistics;
    DB* db = nullptr;
    const Status s = DB::Open(options, path_, &db);
    db_.reset(db);
    return s;
  }

  BenchResult Run(const Benchmark& benchmark) {
    BenchResult r;
    r.benchmark = &benchmark;
    const Snapshot before = Take();
    const auto start = Clock::now();
    if (benchmark.kind == BenchmarkKind::kFill) {
      Fill(benchmark.sequential, &r);
    } else {
      Read(benchmark, &r);
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const Snapshot after = Take();
    r.filter_negatives = after.negatives - before.negatives;
    r.filter_positives = after.positives - before.positives;
    r.filter_true_positives = after.true_positives - before.true_positives;
    r.data_block_reads = after.data_misses - before.data_misses;
    return r;
  }

  void CollectTableProperties(PolicyResult* out) {
    std::vector<sstfilter::SstFilterInfo> files;
    if (!sstfilter::DescribeFilters(db_.get(), &files).ok()) return;
    for (const sstfilter::SstFilterInfo& f : files) {
      out->filter_bytes += f.filter_bytes;
      out->filter_entries += f.filter_entries;
      ++out->files;
      PolicyResult::Level& level = out->levels[f.level];
      ++level.files;
      level.keys += f.num_entries;
      level.filter_bytes += f.filter_bytes;
      level.filter_entries += f.filter_entries;
    }
  }

  std::string StatisticsText() const { return stats_->ToString(); }

 private:
  struct Snapshot {
    uint64_t negatives, positives, true_positives, data_misses;
  };
  Snapshot Take() const {
    return {stats_->getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_USEFUL),
            stats_->getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_FULL_POSITIVE),
            stats_->getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_FULL_TRUE_POSITIVE),
            stats_->getTickerCount(ROCKSDB_NAMESPACE::BLOCK_CACHE_DATA_MISS)};
  }

  void Fill(bool sequential, BenchResult* r) {
    std::vector<uint64_t> order(config_.num);
    for (uint64_t i = 0; i < config_.num; ++i) order[i] = i;
    if (!sequential) std::shuffle(order.begin(), order.end(), std::mt19937_64(FLAGS_seed));
    const std::string value(static_cast<size_t>(FLAGS_value_size), 'v');
    ROCKSDB_NAMESPACE::WriteOptions w;
    w.disableWAL = true;
    // Keys per flush in a settled fill: a memtable's worth of keys and values.
    const uint64_t keys_per_flush = std::max<uint64_t>(
        1, static_cast<uint64_t>(FLAGS_write_buffer_size) / (FLAGS_key_size + FLAGS_value_size));
    uint64_t unflushed = 0;
    Progress progress(config_.num);
    for (uint64_t i : order) {
      const Status s = db_->Put(w, PresentKey(i), value);
      if (!s.ok()) Fail("put failed: " + s.ToString());
      progress.Add(1);
      if (FLAGS_settled_fill && ++unflushed == keys_per_flush) {
        FlushAndSettle(std::chrono::microseconds(200));
        unflushed = 0;
      }
    }
    r->ops = config_.num;
    // Flush and let compactions settle, so that the reads that follow see SST files only.
    FlushAndSettle(std::chrono::milliseconds(50));
  }

  // Flushes the memtable and waits, polling every `poll`, until no compaction is pending or
  // running.
  void FlushAndSettle(std::chrono::microseconds poll) {
    const Status s = db_->Flush(ROCKSDB_NAMESPACE::FlushOptions());
    if (!s.ok()) Fail("flush failed: " + s.ToString());
    for (;;) {
      uint64_t pending = 0, running = 0;
      db_->GetIntProperty("rocksdb.compaction-pending", &pending);
      db_->GetIntProperty("rocksdb.num-running-compactions", &running);
      if (pending == 0 && running == 0) break;
      std::this_thread::sleep_for(poll);
    }
  }

  void Read(const Benchmark& benchmark, BenchResult* r) {
    const bool missing = benchmark.absent_keys;
    const bool multi = benchmark.multi_get;
    const uint64_t per_thread = (config_.reads + FLAGS_threads - 1) / FLAGS_threads;
    std::atomic<uint64_t> found{0}, ops{0};
    Progress progress(per_thread * FLAGS_threads);
    std::mutex levels_mu;
    auto worker = [&](int thread) {
      // Per-level filter counts (perf context counters are per thread; counting costs every
      // policy the same few increments).
      ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kEnableCount);
      ROCKSDB_NAMESPACE::PerfContext* perf = ROCKSDB_NAMESPACE::get_perf_context();
      perf->Reset();
      perf->ClearPerLevelPerfContext();
      perf->EnablePerLevelPerfContext();
      uint64_t rng = static_cast<uint64_t>(FLAGS_seed) * 1000003 + thread + (missing ? 7 : 0);
      PinnableSlice value;
      const size_t batch = multi ? static_cast<size_t>(FLAGS_batch_size) : 1;
      std::vector<std::string> keys(batch);
      std::vector<Slice> slices(batch);
      std::vector<PinnableSlice> values(batch);
      std::vector<Status> statuses(batch);
      uint64_t my_found = 0;
      for (uint64_t done = 0; done < per_thread; done += batch) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(batch, per_thread - done));
        for (size_t j = 0; j < n; ++j) {
          const uint64_t i = sstfilter::SplitMix64(&rng) % config_.num;
          keys[j] = missing ? AbsentKey(i) : PresentKey(i);
          slices[j] = keys[j];
        }
        if (multi) {
          db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), n, slices.data(), values.data(),
                        statuses.data());
          for (size_t j = 0; j < n; ++j) my_found += statuses[j].ok();
        } else {
          my_found += db_->Get(ReadOptions(), db_->DefaultColumnFamily(), slices[0], &value).ok();
        }
        progress.Add(n);
      }
      found += my_found;
      ops += per_thread;
      {
        std::lock_guard<std::mutex> lock(levels_mu);
        if (perf->level_to_perf_context != nullptr) {
          for (const auto& [level, c] : *perf->level_to_perf_context) {
            BenchResult::LevelCounts& mine = r->levels[static_cast<int>(level)];
            mine.negatives += c.bloom_filter_useful;
            mine.positives += c.bloom_filter_full_positive;
            mine.true_positives += c.bloom_filter_full_true_positive;
          }
        }
      }
      perf->DisablePerLevelPerfContext();
      ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kDisable);
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < FLAGS_threads; ++t) threads.emplace_back(worker, t);
    worker(0);
    for (std::thread& t : threads) t.join();
    r->ops = ops;
    r->found = found;
  }

  const Config& config_;
  const PolicyUnderTest& policy_;
  const std::string path_;
  std::unique_ptr<DB> db_;
  std::shared_ptr<ROCKSDB_NAMESPACE::Statistics> stats_;
};

// ---------------------------------------------------------------------------------------------
// Filter-only benchmarks: one filter of --num keys through the policy's own builder and reader.
// ---------------------------------------------------------------------------------------------

class FilterRunner {
 public:
  FilterRunner(const Config& config, const PolicyUnderTest& p) : config_(config), policy_(p) {}

  BenchResult Build(const Benchmark& benchmark) {
    BenchResult r;
    r.benchmark = &benchmark;
    if (!EnsureBuilt(&r.build_ns_per_key)) return r;
    r.ops = config_.num;
    r.seconds = r.build_ns_per_key * config_.num / 1e9;
    r.filter_bits = 8.0 * filter_.size() / config_.num;
    return r;
  }

  BenchResult Query(const Benchmark& benchmark) {
    BenchResult r;
    r.benchmark = &benchmark;
    double unused = 0;
    if (!EnsureBuilt(&unused)) return r;
    r.filter_bits = 8.0 * filter_.size() / config_.num;
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
        policy_.policy->GetFilterBitsReader(filter_));
    const uint64_t n = std::min<uint64_t>(config_.reads, config_.num);
    std::vector<std::string> hits, misses;
    uint64_t rng = static_cast<uint64_t>(FLAGS_seed);
    for (uint64_t i = 0; i < n; ++i) {
      hits.push_back(PresentKey(sstfilter::SplitMix64(&rng) % config_.num));
      misses.push_back(AbsentKey(sstfilter::SplitMix64(&rng) % config_.num));
    }
    uint64_t matched = 0;
    auto start = Clock::now();
    for (const std::string& k : hits) matched += reader->MayMatch(k);
    r.hit_ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
    if (matched != n) Fail(policy_.uri + ": the filter lost a key");
    uint64_t false_positives = 0;
    start = Clock::now();
    for (const std::string& k : misses) false_positives += reader->MayMatch(k);
    const double miss_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r.miss_ns = miss_seconds * 1e9 / n;
    r.ops = 2 * n;
    r.seconds = r.hit_ns * n / 1e9 + miss_seconds;
    r.filter_fp_rate = static_cast<double>(false_positives) / n;
    return r;
  }

 private:
  // Builds the filter once; later calls reuse it.
  bool EnsureBuilt(double* ns_per_key) {
    if (policy_.policy == nullptr) return false;
    if (buf_ != nullptr) {
      *ns_per_key = build_ns_per_key_;
      return true;
    }
    ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
    table.filter_policy = policy_.policy;
    const ROCKSDB_NAMESPACE::FilterBuildingContext context(table);
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder(
        policy_.policy->GetBuilderWithContext(context));
    if (builder == nullptr) Fail(policy_.uri + ": the policy gave no filter builder");
    std::vector<std::string> keys;
    keys.reserve(config_.num);
    for (uint64_t i = 0; i < config_.num; ++i) keys.push_back(PresentKey(i));
    const auto start = Clock::now();
    for (const std::string& k : keys) builder->AddKey(k);
    Status status;
    const Slice bytes = builder->Finish(&buf_, &status);
    *ns_per_key =
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() / config_.num;
    if (!status.ok()) Fail(policy_.uri + ": building the filter failed: " + status.ToString());
    filter_ = bytes;
    build_ns_per_key_ = *ns_per_key;
    return true;
  }

  const Config& config_;
  const PolicyUnderTest& policy_;
  std::unique_ptr<const char[]> buf_;
  Slice filter_;
  double build_ns_per_key_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Output.
// ---------------------------------------------------------------------------------------------

std::string Human(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[u]);
  return buf;
}

void PrintSizing(const Config& c) {
  const double p = FLAGS_fp_rate;
  printf("sizing       : %" PRIu64 " keys at a %.4g%% false-positive rate\n", c.num, 100 * p);
  struct Row {
    const char* name;
    sstfilter::Result<double> bits_per_key;
  };
  const sstfilter::Result<int> f = sstfilter::CuckooFingerprintBits(p);
  const Row rows[] = {
      {"blocked Bloom (sstfilter.Bloom, ~bloomfilter)", sstfilter::BlockedBloomBitsPerKey(p)},
      {"standard Bloom (layout=standard)", sstfilter::StandardBloomBitsPerKey(p)},
      {"cuckoo (sstfilter.Cuckoo)",
       f.ok() ? sstfilter::CuckooBitsPerKey(f.value(), sstfilter::kCuckooTargetLoad)
              : sstfilter::Result<double>::Error(f.error())},
      {"information-theoretic limit", sstfilter::InformationLimitBitsPerKey(p)},
  };
  for (const Row& row : rows) {
    if (row.bits_per_key.ok()) {
      printf("  %-46s %7.2f bits/key %12s\n", row.name, row.bits_per_key.value(),
             Human(row.bits_per_key.value() * c.num / 8).c_str());
    } else {
      printf("  %-46s %s\n", row.name, row.bits_per_key.error().c_str());
    }
  }
}

void PrintBench(const PolicyResult& pr, const BenchResult& b, const PolicyResult* none) {
  const char* name = b.benchmark->name;
  const BenchmarkKind kind = b.benchmark->kind;
  if (kind == BenchmarkKind::kFilterBuild || kind == BenchmarkKind::kFilterQuery) {
    if (b.ops == 0) {
      printf("%-12s : skipped (no filter)\n", name);
    } else if (kind == BenchmarkKind::kFilterBuild) {
      printf("%-12s : %10.1f ns/key build, %.2f bits/key\n", name, b.build_ns_per_key,
             b.filter_bits);
    } else {
      printf("%-12s : %10.1f ns/hit %.1f ns/miss, false-positive rate %.4f%%\n", name, b.hit_ns,
             b.miss_ns, 100 * b.filter_fp_rate);
    }
    return;
  }
  printf("%-12s : %11.3f micros/op %.0f ops/sec %.3f seconds %" PRIu64 " operations;", name,
         b.micros_per_op(), b.ops_per_sec(), b.seconds, b.ops);
  if (kind == BenchmarkKind::kRead) printf(" (%" PRIu64 " of %" PRIu64 " found)", b.found, b.ops);
  printf("\n");
  if (kind != BenchmarkKind::kRead) return;
  printf("  [%s] data blocks read/op %.3f", pr.uri.c_str(),
         b.ops ? static_cast<double>(b.data_block_reads) / b.ops : 0.0);
  if (b.filter_checks() > 0) {
    printf(", filter checks %" PRIu64 ", false positives %.4f%%", b.filter_checks(),
           100 * b.fp_rate());
  }
  const BenchResult* base = none ? none->Find(name) : nullptr;
  if (base != nullptr && base != &b && b.micros_per_op() > 0) {
    printf(", speed-up vs none %.2fx", base->micros_per_op() / b.micros_per_op());
  }
  printf("\n");
}

// Per level: files, keys and filter bits per key from the table properties, and the filters'
// false-positive rate over absent-key lookups (readmissing, else multireadmissing) from the
// per-level perf context.
void PrintLevels(const PolicyResult& pr) {
  const BenchResult* b = pr.AbsentKeyBench();
  printf("  %5s %6s %12s %9s %12s %10s\n", "level", "files", "keys", "bits/key", "checks", "FP %");
  for (const auto& [level, l] : pr.levels) {
    printf("  %5d %6" PRIu64 " %12" PRIu64 " %9.2f", level, l.files, l.keys,
           l.filter_entries ? 8.0 * l.filter_bytes / l.filter_entries : 0.0);
    BenchResult::LevelCounts c;
    if (b != nullptr && b->levels.count(level)) c = b->levels.at(level);
    const uint64_t checks = c.negatives + c.positives;
    if (checks > 0) {
      printf(" %12" PRIu64 " %10.4f\n", checks, 100.0 * (c.positives - c.true_positives) / checks);
    } else {
      printf(" %12s %10s\n", "-", "-");
    }
  }
}

void PrintTable(const std::vector<PolicyResult>& results, const PolicyResult* none) {
  // FP % is per filter check; FP/lookup sums the checks of every level an absent key consults.
  printf("\n%-38s %9s %10s %8s %12s %12s %12s %9s\n", "filter policy", "bits/key", "FP %",
         "FP/look", "readmissing", "multimissing", "readrandom", "vs none");
  printf("%-38s %9s %10s %8s %12s %12s %12s %9s\n", "", "(SSTs)", "(missing)", "(missing)",
         "ops/sec", "ops/sec", "ops/sec", "(missing)");
  for (const PolicyResult& pr : results) {
    const BenchResult* rate_source = pr.AbsentKeyBench();
    double fp = rate_source ? rate_source->fp_rate() : -1;
    if (fp < 0 && pr.Find("filterquery")) fp = pr.Find("filterquery")->filter_fp_rate;
    printf("%-38s %9.2f ", pr.uri.c_str(), pr.bits_per_key());
    fp < 0 ? printf("%10s ", "-") : printf("%10.4f ", 100 * fp);
    // False positives per absent-key lookup: what a lookup pays in wasted reads, summed over
    // the levels it consults.
    if (rate_source != nullptr && rate_source->ops > 0 && rate_source->filter_checks() > 0) {
      printf("%8.4f ", static_cast<double>(rate_source->filter_positives -
                                           rate_source->filter_true_positives) /
                           rate_source->ops);
    } else {
      printf("%8s ", "-");
    }
    for (const char* name : {"readmissing", "multireadmissing", "readrandom"}) {
      const double ops = pr.OpsPerSec(name);
      ops > 0 ? printf("%12.0f ", ops) : printf("%12s ", "-");
    }
    const double base = none ? none->OpsPerSec("readmissing") : -1;
    if (pr.OpsPerSec("readmissing") > 0 && base > 0) {
      printf("%8.2fx", pr.OpsPerSec("readmissing") / base);
    }
    printf("\n");
  }
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

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
    const BenchResult* missing = pr.AbsentKeyBench();
    for (const auto& [level, l] : pr.levels) {
      BenchResult::LevelCounts counts;
      if (missing != nullptr && missing->levels.count(level)) counts = missing->levels.at(level);
      out << (li++ ? ", " : "") << "{\"level\": " << level << ", \"files\": " << l.files
          << ", \"keys\": " << l.keys << ", \"filter_bytes\": " << l.filter_bytes
          << ", \"filter_entries\": " << l.filter_entries
          << ", \"missing_filter_checks\": " << counts.negatives + counts.positives
          << ", \"missing_false_positives\": " << counts.positives - counts.true_positives << "}";
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
          << ", \"data_blocks_per_op\": "
          << (b.ops ? static_cast<double>(b.data_block_reads) / b.ops : 0.0)
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

void WritePlot(const std::vector<PolicyResult>& results) {
  // One data block (and one legend entry) per policy with a filter and a measured rate.
  const std::string data = FLAGS_plot + ".dat";
  std::vector<std::string> titles;
  {
    std::ofstream out(data);
    for (const PolicyResult& pr : results) {
      const BenchResult* b = pr.AbsentKeyBench();
      if (b == nullptr || b->fp_rate() <= 0 || pr.bits_per_key() <= 0) continue;
      const double ops = pr.OpsPerSec(b->benchmark->name);  // the median over --rounds, if any
      out << pr.bits_per_key() << " " << 100 * b->fp_rate() << " " << (ops > 0 ? 1e6 / ops : 0)
          << "\n\n\n";
      std::string title = pr.uri;
      std::replace(title.begin(), title.end(), '\'', '"');
      titles.push_back(title);
    }
  }
  if (titles.empty()) Fail("--plot: no policy has a measured false-positive rate to draw");
  auto plot = [&](int column, const char* point_type) {
    std::string cmd = "plot ";
    for (size_t i = 0; i < titles.size(); ++i) {
      cmd += (i ? ", '" : "'") + data + "' index " + std::to_string(i) +
             " using 1:" + std::to_string(column) + " with points pt " + point_type +
             " ps 2 title '" + titles[i] + "'";
    }
    return cmd + "\n";
  };
  const std::string script = FLAGS_plot + ".gp";
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1100,560 font ',10' noenhanced\n"
       << "set output '" << FLAGS_plot << "'\n"
       << "set multiplot layout 1,2\n"
       << "set offsets graph 0.15, graph 0.15, graph 0.15, graph 0.15\n"
       << "set xlabel 'filter bits per key (table properties)'\n"
       << "set grid\nset key below\n"
       << "set ylabel 'false-positive rate, % (readmissing)'\nset logscale y\n"
       << "set title 'Space against false positives'\n"
       << plot(2, "7") << "unset logscale y\nset yrange [0:*]\n"
       << "set offsets graph 0.15, graph 0.15, graph 0.15, 0\n"
       << "set ylabel 'microseconds per absent-key lookup (readmissing)'\n"
       << "set title 'Lookup cost of absent keys'\n"
       << plot(3, "5") << "unset multiplot\n";
  }
  const std::string cmd = "gnuplot '" + script + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    Fail("gnuplot failed to draw --plot '" + FLAGS_plot + "'");
  }
  std::remove(data.c_str());
  std::remove(script.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "compares RocksDB filter policies side by side on real workloads.\n"
      "  db_bench_ext [--num=N] [--filter_uri=a,b,...] [--benchmarks=...] [--json=F] "
      "[--plot=F.png]");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (argc > 1) Fail(std::string("unexpected argument '") + argv[1] + "'");
  if (!FLAGS_inspect_db.empty()) {
    std::vector<sstfilter::SstFilterInfo> files;
    const Status s = sstfilter::DescribeFilters(FLAGS_inspect_db, &files);
    if (!s.ok()) Fail("--inspect_db: " + s.ToString());
    fputs(sstfilter::FormatFilterReport(files).c_str(), stdout);
    return 0;
  }
  if (!FLAGS_plot.empty() && std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    Fail("--plot needs gnuplot (apt-get install gnuplot-nox)");
  }
  const Config config = Validate();

  printf("db_bench_ext: %" PRIu64 " keys of %d bytes, values of %d bytes, %" PRIu64
         " lookups per read benchmark, %d thread(s), compression %s\n",
         config.num, FLAGS_key_size, FLAGS_value_size, config.reads, FLAGS_threads,
         FLAGS_compression_type.c_str());
  // The calculator needs no database and no policy: once, before the policies' runs.
  std::vector<const Benchmark*> benchmarks;
  for (const Benchmark* b : config.benchmarks) {
    if (b->kind == BenchmarkKind::kSizing) {
      PrintSizing(config);
    } else {
      benchmarks.push_back(b);
    }
  }
  if (benchmarks.empty()) return 0;
  std::vector<PolicyResult> results;
  results.reserve(config.policies.size());  // `none` points into it
  const PolicyResult* none = nullptr;
  // With --rounds, every policy's database stays open for the interleaved rounds.
  std::vector<std::unique_ptr<DbRunner>> open_dbs(config.policies.size());
  for (size_t i = 0; i < config.policies.size(); ++i) {
    const PolicyUnderTest& p = config.policies[i];
    printf("\n== filter policy: %s\n", p.uri.c_str());
    PolicyResult pr;
    pr.uri = p.uri;
    auto db_owner = std::make_unique<DbRunner>(config, p, i);
    DbRunner& db = *db_owner;
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
          printf("%-12s : skipped (--use_existing_db)\n", b->name);
          continue;
        }
        if (!opened || fill) {
          const Status s = db.Open(/*fresh=*/fill && !FLAGS_use_existing_db);
          if (!s.ok()) Fail("cannot open the database of " + p.uri + ": " + s.ToString());
          opened = true;
        }
        r = db.Run(*b);
        if (fill) {
          // Reopen, so that reads start from a cold table cache and every table reader opens at
          // its file's current level (RocksDB counts per-level statistics at the level a
          // reader was opened at, which compactions' trivial moves leave behind).
          const Status s = db.Open(/*fresh=*/false);
          if (!s.ok()) Fail("cannot reopen the database of " + p.uri + ": " + s.ToString());
        }
      }
      pr.benches.push_back(r);
      PrintBench(pr, pr.benches.back(), none);
      fflush(stdout);  // a line per benchmark as it ends, also when stdout is a file
    }
    if (opened) {
      db.CollectTableProperties(&pr);
      printf("  [%s] %" PRIu64 " SST files, filter %.2f bits/key (%s)\n", p.uri.c_str(), pr.files,
             pr.bits_per_key(), Human(static_cast<double>(pr.filter_bytes)).c_str());
      PrintLevels(pr);
      if (FLAGS_statistics) printf("STATISTICS:\n%s\n", db.StatisticsText().c_str());
    }
    if (opened && FLAGS_rounds > 0) open_dbs[i] = std::move(db_owner);
    results.push_back(pr);
    if (p.uri == "none") none = &results.back();
  }
  std::vector<const Benchmark*> read_benchmarks;
  for (const Benchmark* b : benchmarks) {
    if (b->kind == BenchmarkKind::kRead &&
        std::find(read_benchmarks.begin(), read_benchmarks.end(), b) == read_benchmarks.end()) {
      read_benchmarks.push_back(b);
    }
  }
  for (int round = 1; round <= FLAGS_rounds && !read_benchmarks.empty(); ++round) {
    printf("\n== round %d of %d\n", round, FLAGS_rounds);
    for (size_t i = 0; i < open_dbs.size(); ++i) {
      if (open_dbs[i] == nullptr) continue;
      for (const Benchmark* b : read_benchmarks) {
        const BenchResult r = open_dbs[i]->Run(*b);
        results[i].round_ops_per_sec[b->name].push_back(r.ops_per_sec());
        printf("%-16s : %11.0f ops/sec  %s\n", b->name, r.ops_per_sec(), results[i].uri.c_str());
        fflush(stdout);
      }
    }
  }
  PrintTable(results, none);
  if (!FLAGS_json.empty()) WriteJson(config, results);
  if (!FLAGS_plot.empty()) WritePlot(results);
  return 0;
}
