// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/workloads.h"

#include <rocksdb/cache.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "compat/rocksdb_api.h"
#include "core/random.h"
#include "db_bench_ext/db_options.h"
#include "db_bench_ext/key_dist.h"
#include "db_bench_ext/settle.h"
#include "sstfilter/inspect.h"
#include "sstfilter/range_filter.h"

namespace db_bench_ext {
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

void WriteKey(uint64_t i, bool absent, std::string* key) {
  WriteIntegerKey((2 * i + (absent ? 1 : 0)) * static_cast<uint64_t>(FLAGS_key_spacing), key);
}

void WriteIntegerKey(uint64_t k, std::string* key) {
  key->assign(static_cast<size_t>(FLAGS_key_size), 'x');
  for (int b = 0; b < 8; ++b) (*key)[b] = static_cast<char>(k >> (56 - 8 * b));
}

std::string PresentKey(uint64_t i) {
  std::string key;
  WriteKey(i, /*absent=*/false, &key);
  return key;
}

std::string AbsentKey(uint64_t i) {
  std::string key;
  WriteKey(i, /*absent=*/true, &key);
  return key;
}

namespace {

// Runs worker(0) on this thread and worker(1) .. worker(--threads - 1) on threads of their own,
// and waits for all of them: the read and scan benchmarks' workers.
void RunOnThreads(const std::function<void(int)>& worker) {
  std::vector<std::thread> threads;
  for (int t = 1; t < FLAGS_threads; ++t) threads.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : threads) t.join();
}

void SetLatencyQuantiles(const LatencyHistogram& latencies, BenchResult* r) {
  r->p50_us = latencies.QuantileMicros(0.5);
  r->p99_us = latencies.QuantileMicros(0.99);
  r->p999_us = latencies.QuantileMicros(0.999);
}

}  // namespace

DbRunner::DbRunner(const Config& config, const PolicyUnderTest& p, size_t index)
    : config_(config), policy_(p), path_(DatabasePath(index)) {}

Status DbRunner::Open(bool fresh) {
  db_.reset();  // close first: one process, one open instance per directory
  if (fresh) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const ROCKSDB_NAMESPACE::Options options = DatabaseOptions(config_, policy_);
  stats_ = options.statistics;
  const Status s = sstfilter::compat::OpenDb(options, path_, &db_);
  // A reopened database may start background work (a compaction its recovered tree asks for):
  // reads and the per-level figures wait for it, so that they see the tree the fill left.
  if (s.ok() && !fresh) Settle(std::chrono::milliseconds(1));
  return s;
}

BenchResult DbRunner::Run(const Benchmark& benchmark) {
  BenchResult r;
  r.benchmark = &benchmark;
  const sstfilter::compat::FilterTickers before = sstfilter::compat::FilterTickersOf(*stats_);
  const auto start = Clock::now();
  if (benchmark.kind == BenchmarkKind::kFill) {
    Fill(benchmark, &r);
  } else if (benchmark.kind == BenchmarkKind::kSeek) {
    Seek(benchmark, &r);
  } else {
    Read(benchmark, &r);
  }
  r.seconds = SecondsSince(start);
  const sstfilter::compat::FilterTickers d = sstfilter::compat::FilterTickersOf(*stats_) - before;
  r.filter_negatives = d.negatives;
  r.filter_positives = d.positives;
  r.filter_true_positives = d.true_positives;
  r.data_block_reads = d.data_misses;
  r.filter_block_misses = d.filter_misses;
  return r;
}

void DbRunner::CollectTableProperties(PolicyResult* out) {
  if (policy_.range_collector != nullptr) {
    ROCKSDB_NAMESPACE::TablePropertiesCollection tables;
    if (db_->GetPropertiesOfAllTables(&tables).ok()) {
      for (const auto& [file, props] : tables) {
        const auto it = props->user_collected_properties.find(sstfilter::kRangeFilterPropertyName);
        if (it == props->user_collected_properties.end()) continue;
        out->range_filter_bytes += it->second.size();
        out->range_filter_entries += props->num_entries;
      }
    }
  }
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

void DbRunner::Fill(const Benchmark& benchmark, BenchResult* r) {
  const std::vector<uint64_t> order =
      benchmark.sequential ? SequentialOrder(config_.num, FLAGS_late_fraction,
                                             static_cast<uint64_t>(FLAGS_late_keys), FLAGS_seed)
                           : RandomOrder(config_.num, FLAGS_seed);
  // filltimeseries, readmissingwriterandom: absent keys looked up between the writes.
  const bool lookups = benchmark.absent_keys;
  const KeyDist key_dist(config_.num, config_.zipf_theta, config_.zipf_scrambled);
  uint64_t rng = static_cast<uint64_t>(FLAGS_seed) * 1000003 + 11;
  double lookups_due = 0;
  uint64_t found = 0;
  std::string absent;
  PinnableSlice got;
  std::unique_ptr<LevelPerfCounts> level_counts;
  if (lookups) level_counts = std::make_unique<LevelPerfCounts>();
  const std::string value(static_cast<size_t>(FLAGS_value_size), 'v');
  ROCKSDB_NAMESPACE::WriteOptions w;
  w.disableWAL = true;
  // Keys per flush in a settled fill: a memtable's worth of keys and values.
  const uint64_t keys_per_flush = std::max<uint64_t>(
      1, static_cast<uint64_t>(FLAGS_write_buffer_size) / (FLAGS_key_size + FLAGS_value_size));
  uint64_t unflushed = 0;
  std::string key;
  Progress progress(config_.num);
  uint64_t newest = 0;  // the highest key written so far
  for (uint64_t i : order) {
    newest = std::max(newest, i);
    WriteKey(i, /*absent=*/false, &key);
    const Status s = db_->Put(w, key, value);
    if (!s.ok()) Fail("put failed: " + s.ToString());
    progress.Add(1);
    for (lookups_due += lookups ? FLAGS_reads_per_write : 0; lookups_due >= 1; lookups_due -= 1) {
      // filltimeseries: rank r below the highest key written so far, newest first (r % (newest
      // + 1) folds the ranks beyond them back over them); readmissingwriterandom: any key.
      const uint64_t drawn = key_dist.Next(&rng);
      const uint64_t rank = config_.num - 1 - drawn;
      WriteKey(benchmark.sequential ? newest - rank % (newest + 1) : drawn, /*absent=*/true,
               &absent);
      found += db_->Get(ReadOptions(), db_->DefaultColumnFamily(), absent, &got).ok();
      ++r->lookups;
    }
    if (FLAGS_settled_fill && ++unflushed == keys_per_flush) {
      FlushAndSettle(std::chrono::microseconds(200));
      unflushed = 0;
    }
  }
  r->ops = config_.num;
  r->found = found;
  if (level_counts != nullptr) level_counts->AddTo(&r->levels);
  // Flush and let compactions settle, so that the reads that follow see SST files only.
  FlushAndSettle(std::chrono::milliseconds(50));
}

// Flushes the memtable, then settles (below).
void DbRunner::FlushAndSettle(std::chrono::microseconds poll) {
  const Status s = db_->Flush(ROCKSDB_NAMESPACE::FlushOptions());
  if (!s.ok()) Fail("flush failed: " + s.ToString());
  Settle(poll);
}

// Waits, polling every `poll`, until no flush or compaction is pending or running. The quiet state
// must be seen on two polls in a row: one reading could fall between two background jobs that
// RocksDB hands over without holding its mutex throughout.
void DbRunner::Settle(std::chrono::microseconds poll) {
  // Far beyond the backlog of the largest fill the presets run (10M keys settle within minutes on
  // 2 cores): a database that has not settled by then never will, and the run says so.
  constexpr std::chrono::hours kSettleWithin{1};
  const std::string why_not = WaitUntilSettled(db_.get(), poll, kSettleWithin);
  if (!why_not.empty()) Fail(why_not);
}

// Lookups by --threads threads, --reads in all or for --duration seconds: keys by --key_dist,
// present or absent as the benchmark says (mixed: present with probability --read_hit_ratio, the
// same draws for every policy), each Get or MultiGet call timed.
void DbRunner::Read(const Benchmark& benchmark, BenchResult* r) {
  const bool multi = benchmark.multi_get;
  const uint64_t per_thread = (config_.reads + FLAGS_threads - 1) / FLAGS_threads;
  const bool timed = FLAGS_duration > 0;
  const auto deadline = Clock::now() + std::chrono::seconds(FLAGS_duration);
  // A present key with probability hit_ratio: a draw below hit_ratio * 2^64.
  const double hit_ratio = benchmark.mixed_keys    ? FLAGS_read_hit_ratio
                           : benchmark.absent_keys ? 0.0
                                                   : 1.0;
  auto present = [hit_ratio](uint64_t* coin) {
    return hit_ratio >= 1 ||
           static_cast<double>(sstfilter::SplitMix64(coin)) < hit_ratio * 18446744073709551616.0;
  };
  std::atomic<uint64_t> found{0}, ops{0};
  Progress progress(timed ? 0 : per_thread * FLAGS_threads);
  std::mutex mu;  // guards *r's levels, block reads and the merged latencies
  LatencyHistogram latencies;
  const KeyDist key_dist(config_.num, config_.zipf_theta, config_.zipf_scrambled);
  auto worker = [&](int thread) {
    const LevelPerfCounts level_counts;
    LatencyHistogram my_latencies;
    uint64_t rng = static_cast<uint64_t>(FLAGS_seed) * 1000003 + thread +
                   (benchmark.absent_keys  ? 7
                    : benchmark.mixed_keys ? 13
                                           : 0);
    uint64_t coin = static_cast<uint64_t>(FLAGS_seed) * 7919 + thread;
    PinnableSlice value;
    const size_t batch = multi ? static_cast<size_t>(FLAGS_batch_size) : 1;
    std::vector<std::string> keys(batch);
    std::vector<Slice> slices(batch);
    std::vector<PinnableSlice> values(batch);
    std::vector<Status> statuses(batch);
    uint64_t my_found = 0, done = 0;
    for (auto now = Clock::now(); timed ? now < deadline : done < per_thread;) {
      const size_t n =
          timed ? batch : static_cast<size_t>(std::min<uint64_t>(batch, per_thread - done));
      for (size_t j = 0; j < n; ++j) {
        WriteKey(key_dist.Next(&rng), /*absent=*/!present(&coin), &keys[j]);
        slices[j] = keys[j];
      }
      if (multi) {
        db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), n, slices.data(), values.data(),
                      statuses.data());
        for (size_t j = 0; j < n; ++j) my_found += statuses[j].ok();
      } else {
        my_found += db_->Get(ReadOptions(), db_->DefaultColumnFamily(), slices[0], &value).ok();
      }
      const auto end = Clock::now();
      my_latencies.Add(static_cast<uint64_t>((end - now) / std::chrono::nanoseconds(1)));
      now = end;
      done += n;
      progress.Add(n);
    }
    found += my_found;
    ops += done;
    std::lock_guard<std::mutex> lock(mu);
    level_counts.AddTo(&r->levels);
    level_counts.AddBlockReadsTo(&r->file_block_reads, &r->file_bytes_read);
    latencies.Merge(my_latencies);
  };
  RunOnThreads(worker);
  r->ops = ops;
  r->found = found;
  SetLatencyQuantiles(latencies, r);
}

// Bounded scans by --threads threads, --reads in all or for --duration seconds, from a present
// key drawn by --key_dist: seekrandom reads the --scan_length keys from there (its bounds: that
// key and the one --scan_length keys on); seekempty scans the --scan_length integers just after
// it, where no key is. An iterator per scan, as a service makes one per request, with
// SkipEmptyFiles when the database has a range filter; its table_filter counts the files it was
// asked about and those it skipped.
void DbRunner::Seek(const Benchmark& benchmark, BenchResult* r) {
  const uint64_t per_thread = (config_.reads + FLAGS_threads - 1) / FLAGS_threads;
  const bool timed = FLAGS_duration > 0;
  const auto deadline = Clock::now() + std::chrono::seconds(FLAGS_duration);
  const uint64_t length = static_cast<uint64_t>(FLAGS_scan_length);
  const uint64_t spacing = static_cast<uint64_t>(FLAGS_key_spacing);
  const bool filtered = policy_.range_collector != nullptr;
  std::atomic<uint64_t> found{0}, ops{0}, files_asked{0}, files_skipped{0};
  Progress progress(timed ? 0 : per_thread * FLAGS_threads);
  std::mutex mu;
  LatencyHistogram latencies;
  const KeyDist key_dist(config_.num, config_.zipf_theta, config_.zipf_scrambled);
  auto worker = [&](int thread) {
    const LevelPerfCounts level_counts;
    LatencyHistogram my_latencies;
    uint64_t rng = static_cast<uint64_t>(FLAGS_seed) * 1000003 + thread + 17;
    std::string lower, upper;
    uint64_t my_found = 0, done = 0, asked = 0, skipped = 0;
    for (auto now = Clock::now(); timed ? now < deadline : done < per_thread;) {
      const uint64_t i = key_dist.Next(&rng);
      if (benchmark.absent_keys) {
        WriteIntegerKey(2 * i * spacing + 1, &lower);
        WriteIntegerKey(2 * i * spacing + 1 + length, &upper);
      } else {
        WriteKey(i, /*absent=*/false, &lower);
        WriteKey(i + length, /*absent=*/false, &upper);
      }
      const Slice lower_slice(lower), upper_slice(upper);
      ReadOptions options;
      options.iterate_lower_bound = &lower_slice;
      options.iterate_upper_bound = &upper_slice;
      if (filtered) {
        const Status s = sstfilter::SkipEmptyFiles(&options);
        if (!s.ok()) Fail("SkipEmptyFiles: " + s.ToString());
      }
      auto inner = options.table_filter;
      options.table_filter = [&asked, &skipped,
                              &inner](const ROCKSDB_NAMESPACE::TableProperties& p) {
        ++asked;
        const bool read = !inner || inner(p);
        skipped += !read;
        return read;
      };
      std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(options));
      for (it->Seek(lower_slice); it->Valid(); it->Next()) ++my_found;
      if (!it->status().ok()) Fail("scan failed: " + it->status().ToString());
      it.reset();
      const auto end = Clock::now();
      my_latencies.Add(static_cast<uint64_t>((end - now) / std::chrono::nanoseconds(1)));
      now = end;
      ++done;
      progress.Add(1);
    }
    found += my_found;
    ops += done;
    files_asked += asked;
    files_skipped += skipped;
    std::lock_guard<std::mutex> lock(mu);
    level_counts.AddBlockReadsTo(&r->file_block_reads, &r->file_bytes_read);
    latencies.Merge(my_latencies);
  };
  RunOnThreads(worker);
  r->ops = ops;
  r->found = found;
  r->files_asked = files_asked;
  r->files_skipped = files_skipped;
  SetLatencyQuantiles(latencies, r);
}

}  // namespace db_bench_ext
