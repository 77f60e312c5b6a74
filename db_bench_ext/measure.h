// SPDX-License-Identifier: Apache-2.0
// What a run measures: a benchmark's figures, a policy's figures, the medians of --rounds, and the
// clock and progress line they are taken with.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db_bench_ext/benchmarks.h"

namespace db_bench_ext {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// 8 * bytes / keys, 0 for no keys.
inline double BitsPerKey(uint64_t bytes, uint64_t keys) {
  return keys == 0 ? 0 : 8.0 * bytes / keys;
}

// The median; the mean of the middle two for an even count. `values` must not be empty.
double Median(std::vector<double> values);

// A level's filter answers, from RocksDB's per-level perf context: "no" answers, "may match"
// answers, and "may match" answers for keys the level really held.
struct LevelCounts {
  uint64_t negatives = 0, positives = 0, true_positives = 0;
  uint64_t checks() const { return negatives + positives; }
  uint64_t false_positives() const { return positives - true_positives; }
};

// Per-level filter counts of this thread's lookups, from RocksDB's per-level perf context (perf
// context counters are per thread; counting costs every policy the same few increments). Counts
// from construction until AddTo.
class LevelPerfCounts {
 public:
  LevelPerfCounts();
  ~LevelPerfCounts();
  LevelPerfCounts(const LevelPerfCounts&) = delete;
  LevelPerfCounts& operator=(const LevelPerfCounts&) = delete;
  void AddTo(std::map<int, LevelCounts>* levels) const;
  // The blocks this thread read from SST files (the block cache missed them) and their bytes.
  void AddBlockReadsTo(uint64_t* blocks, uint64_t* bytes) const;
};

// Latencies in nanoseconds, counted in buckets a sixteenth of a power of two wide, so that a
// quantile is within 1/32 of the truth: recording is a bit scan and an increment, and one
// histogram per thread merges into the benchmark's.
class LatencyHistogram {
 public:
  void Add(uint64_t ns) {
    ++counts_[Bucket(ns)];
    ++total_;
  }
  void Merge(const LatencyHistogram& other);
  // The q-quantile (q in (0, 1]) in microseconds, the middle of its bucket; -1 if empty.
  double QuantileMicros(double q) const;

 private:
  static constexpr int kSubBucketBits = 4;  // 16 buckets per power of two
  static size_t Bucket(uint64_t ns) {
    if (ns < (1u << kSubBucketBits)) return static_cast<size_t>(ns);
    const int log2 = 63 - __builtin_clzll(ns);
    const int shift = log2 - kSubBucketBits;
    return (static_cast<size_t>(shift + 1) << kSubBucketBits) +
           static_cast<size_t>((ns >> shift) & ((1u << kSubBucketBits) - 1));
  }
  static constexpr size_t kBuckets = (64 - kSubBucketBits + 1) << kSubBucketBits;
  uint64_t counts_[kBuckets] = {};
  uint64_t total_ = 0;
};

struct BenchResult {
  const Benchmark* benchmark = nullptr;
  double seconds = 0;
  uint64_t ops = 0;
  uint64_t lookups = 0;  // a fill's absent-key lookups (ops counts the writes)
  uint64_t found = 0;
  // From RocksDB's statistics, deltas over the benchmark.
  uint64_t filter_negatives = 0;  // rocksdb.bloom.filter.useful
  uint64_t filter_positives = 0;  // rocksdb.bloom.filter.full.positive
  uint64_t filter_true_positives = 0;
  uint64_t data_block_reads = 0;     // rocksdb.block.cache.data.miss
  uint64_t filter_block_misses = 0;  // rocksdb.block.cache.filter.miss
  // kSeek: the files the iterators' table_filter was asked about, and those it skipped.
  uint64_t files_asked = 0, files_skipped = 0;
  // kRead, kSeek, from the perf context: blocks read from SST files (of any kind), their bytes.
  uint64_t file_block_reads = 0, file_bytes_read = 0;
  // kRead: latency of a Get, or of a MultiGet call of --batch_size keys, in microseconds (-1:
  // not measured).
  double p50_us = -1, p99_us = -1, p999_us = -1;
  std::map<int, LevelCounts> levels;
  // filterbuild / filterquery
  double build_ns_per_key = 0, hit_ns = 0, miss_ns = 0, filter_fp_rate = -1, filter_bits = 0;

  double micros_per_op() const { return ops == 0 ? 0 : seconds * 1e6 / ops; }
  double ops_per_sec() const { return seconds <= 0 ? 0 : ops / seconds; }
  double data_blocks_per_op() const { return per_op(data_block_reads); }
  double per_op(uint64_t count) const {
    return ops == 0 ? 0 : static_cast<double>(count) / static_cast<double>(ops);
  }
  uint64_t filter_checks() const { return filter_negatives + filter_positives; }
  uint64_t filter_false_positives() const { return filter_positives - filter_true_positives; }
  // For lookups of absent keys every positive is false; in general, positives minus true ones
  // over the checks of keys that were absent from the file.
  double fp_rate() const {
    const uint64_t negatives_checked = filter_checks() - filter_true_positives;
    return negatives_checked == 0
               ? -1
               : static_cast<double>(filter_false_positives()) / negatives_checked;
  }
  // False positives per lookup: the reads a lookup wastes, summed over the filters (levels, L0
  // files) it consults; -1 without lookups or filter checks.
  double fp_per_lookup() const {
    const uint64_t n = lookups > 0 ? lookups : ops;
    return n == 0 || filter_checks() == 0
               ? -1
               : static_cast<double>(filter_false_positives()) / static_cast<double>(n);
  }
};

struct PolicyResult {
  std::string uri;
  std::string range_filter;  // the --range_filter entry ("" without the flag)
  // The range filters of the live files (their table properties), and those files' entries.
  uint64_t range_filter_bytes = 0, range_filter_entries = 0;
  std::string Label() const { return range_filter.empty() ? uri : uri + " | " + range_filter; }
  std::vector<BenchResult> benches;
  uint64_t filter_bytes = 0, filter_entries = 0, files = 0;
  struct Level {
    uint64_t files = 0, keys = 0, filter_bytes = 0, filter_entries = 0;
  };
  std::map<int, Level> levels;  // from the live files' metadata and table properties
  // ops/sec of each --rounds round, per read benchmark.
  std::map<std::string, std::vector<double>> round_ops_per_sec;

  double bits_per_key() const { return BitsPerKey(filter_bytes, filter_entries); }
  // The first result of the benchmark named `name`; null if it did not run.
  const BenchResult* Find(const std::string& name) const;
  // The benchmark whose lookups were all of absent keys, so whose filter positives are all
  // false: readmissing, else multireadmissing, else filltimeseries, else readmissingwriterandom;
  // null if none ran.
  const BenchResult* AbsentKeyBench() const;
  // AbsentKeyBench's filter answers at `level`; zeros if it has none there.
  LevelCounts AbsentKeyLevelCounts(int level) const;
  // The median over the rounds if there were any, else the first pass's figure; -1 if the
  // benchmark did not run.
  double OpsPerSec(const std::string& name) const;
  // What sstfilter's allocation over the levels (core's AllocateShares, sstfilter's kinds) gives
  // this tree at this policy's bits per key: its levels' keys as they are, and the filter probes
  // each level received per absent-key lookup as AbsentKeyBench counted them. False positives per
  // absent lookup expected with one rate on every level (one level's allocation of these bits:
  // the best filter within them, mixed with the next richer one so as to spend them), and with
  // the filters allocated over the levels; both -1 without filters, absent-key lookups or
  // probes. With uniform lookups their ratio is about the most an allocation of these bits over
  // these levels can gain (per-key heat, as Zipfian lookups have, can gain more): sstfilter.Leveled
  // expects about `over_the_levels`, a policy of one filter kind whose filters are as small as
  // sstfilter's about `one_filter`.
  // Each filter of keys_per_filter keys (0: the files' average; a partitioned filter's
  // partitions hold fewer, and each pays a filter's fixed costs).
  struct AllocationEstimate {
    double one_filter = -1, over_the_levels = -1;
  };
  AllocationEstimate EstimateAllocation(uint64_t keys_per_filter = 0) const;
};

// The last result of the policy without a filter, the baseline of "speed-up vs none"; null if
// none of `results` is one.
const PolicyResult* NoFilterResult(const std::vector<PolicyResult>& results);
// The result of policy `uri` without a range filter (--range_filter's none), the baseline of the
// scans' "vs none"; null if there is none.
const PolicyResult* NoRangeFilterResult(const std::vector<PolicyResult>& results,
                                        const std::string& uri);

// "... finished N of TOTAL ops" on stderr, at most once a second, as db_bench does (TOTAL 0: not
// known, a run for a --duration); only where stderr is a terminal: each line ends in a carriage
// return to be overwritten, which a log captured from stderr (scripts/bench_budget.sh's) would
// keep.
class Progress {
 public:
  explicit Progress(uint64_t total);
  ~Progress();
  // Inline: called for every operation of a timed loop.
  // Safe from several threads: the thread that advances last_print_ns_ prints.
  void Add(uint64_t n) {
    if (!to_terminal_) return;
    done_ += n;
    const int64_t now = Clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
    int64_t last = last_print_ns_.load(std::memory_order_relaxed);
    if (now - last >= kPrintEveryNs &&
        last_print_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
      Print();
    }
  }

 private:
  static constexpr int64_t kPrintEveryNs = 1'000'000'000;

  void Print();

  const uint64_t total_;
  const bool to_terminal_;
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> last_print_ns_;
  std::atomic<bool> printed_{false};
};

}  // namespace db_bench_ext
