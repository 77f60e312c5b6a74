// SPDX-License-Identifier: Apache-2.0
// The FilterBitsBuilder and FilterBitsReader that RocksDB calls for every sstfilter policy: thin
// adapters from RocksDB's interface to core/. Nothing here throws across the RocksDB boundary,
// prints, or fails a flush: a builder that cannot build its filter logs why and writes a filter
// that matches every key (allocated when the library loads, so that running out of memory needs
// no more). There is one reader adapter per reader type of core (core/filter_reader.h), so the
// per-key work is the kind's own query with no dispatch (bits_readers.cc; the Ribbon kinds' is
// also compiled with popcnt, chosen when the block is opened on a CPU that has it).
#pragma once

#include <rocksdb/env.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_spec.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/level_allocation.h"
#include "plugin/block_cache_fit.h"
#include "plugin/construction_charge.h"
#include "plugin/size_class_rounding.h"
#include "plugin/tree_history.h"

namespace sstfilter {

// A key's hash, as every builder and reader of sstfilter's filter blocks computes it.
inline uint64_t KeyHashOf(const ROCKSDB_NAMESPACE::Slice& key) {
  return KeyHash(key.data(), key.size());
}

// How a builder whose filter depends on its keys chooses it (sstfilter.Leveled: which kind is
// cheapest depends on the key count, and a flushed file's filter on whether the flush appends).
// No filter (has_filter false) writes a filter that matches every key.
class FilterChooser {
 public:
  virtual ~FilterChooser() = default;
  // Whether the builder tracks the key range of its file (two comparisons per key) for ForKeys.
  virtual bool WantsKeyRange() const = 0;
  // The filters for num_keys keys, in a file whose keys so far span file_keys (empty unless
  // WantsKeyRange). `finishing`: Finish builds with the answer; otherwise it is for an estimate
  // of sizes. May throw std::bad_alloc.
  virtual Result<LevelFilter> ForKeys(uint64_t num_keys, const KeyRange& file_keys,
                                      bool finishing) = 0;
  // Told of each filter Finish handed RocksDB: its keys, the file's key range so far (as for
  // ForKeys) and its bytes. May throw std::bad_alloc.
  virtual void Finished(uint64_t /*num_keys*/, const KeyRange& /*file_keys*/,
                        uint64_t /*filter_bytes*/) {}
};

// At most one LOG line per interval (for one policy), so that a build failing on every file
// (or every partition) does not flood the LOG: a line left out is counted, and the next line that
// is written says how many were.
class RateLimitedWarning {
 public:
  explicit RateLimitedWarning(int64_t interval_ns) : interval_ns_(interval_ns) {}
  // Logs "[sstfilter] <message>" at WARN to `log` at `now_ns` (a steady clock's nanoseconds),
  // unless a line was written less than the interval before, or `log` is null; whether it did.
  // The count of lines left out covers every database the policy serves.
  bool Log(ROCKSDB_NAMESPACE::Logger* log, const std::string& message, int64_t now_ns);

 private:
  const int64_t interval_ns_;
  std::atomic<int64_t> next_ns_{INT64_MIN};
  std::atomic<uint64_t> left_out_{0};
};

// How often a policy may say that a filter was written other than chosen.
inline constexpr int64_t kFallbackWarningIntervalNs = int64_t{10} * 1000 * 1000 * 1000;

class SstFilterBitsBuilder : public ROCKSDB_NAMESPACE::FilterBitsBuilder {
 public:
  // `verify`: check each built filter against its keys in MaybePostVerify (RocksDB's
  // detect_filter_construct_corruption). `log` may be null.
  SstFilterBitsBuilder(const FilterSpec& spec, bool verify, ROCKSDB_NAMESPACE::Logger* log);
  // Each filter as `chooser` chooses (at Finish, or in the estimates).
  SstFilterBitsBuilder(std::unique_ptr<FilterChooser> chooser, bool verify,
                       ROCKSDB_NAMESPACE::Logger* log);

  // The block cache that will hold each filter whole (block_cache_fit.h): a filter too large for
  // its shards is reported to `oversized` (the policy's count, which logs), once per builder (one
  // file).
  void SetCacheShards(const CacheShards& shards, std::shared_ptr<OversizedFilterBlocks> oversized) {
    cache_shards_ = shards;
    oversized_ = std::move(oversized);
  }

  // The level of the file the builder writes (FilterBuildingContext::level_at_creation; -1 if
  // unknown), and the policy's rate limit of the WARN lines that say a filter was written other
  // than chosen (null: every such line is written).
  void SetFileLevel(int level, std::shared_ptr<RateLimitedWarning> warnings) {
    level_ = level;
    warnings_ = std::move(warnings);
  }

  // Size each filter whose kind can take it to its allocation's size class
  // (optimize_filters_for_memory: plugin/size_class_rounding.h); null: as chosen.
  void SetSizeClassRounding(std::shared_ptr<SizeClassRounding> rounding) {
    rounding_ = std::move(rounding);
  }

  // Charge the builder's memory to the block cache (plugin/construction_charge.h); null: none.
  void SetConstructionCharge(std::unique_ptr<ConstructionCharge> charge) {
    charge_ = std::move(charge);
  }

  // Count the probes each filter this builder finishes receives (plugin/probe_counts.h): for
  // sstfilter.Leveled, in a tree the sstfilter.LeveledBudget listener watches.
  void CountProbes() { count_probes_ = true; }

  // Hashes the key once and keeps the 8-byte hash, skipping a repeat of the previous key (or of
  // the previous entry).
  void AddKey(const ROCKSDB_NAMESPACE::Slice& key) override;
#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  // Adds the key and its alternate (prefix), skipping the repeats RocksDB's contract names
  // (compat/filter_bits_interface.h). A skipped entry is always one whose hash is already in the
  // filter, so skipping never loses a key.
  void AddKeyAndAlt(const ROCKSDB_NAMESPACE::Slice& key,
                    const ROCKSDB_NAMESPACE::Slice& alt) override;
#endif
  // 0 if and only if nothing was added since the last Finish (RocksDB skips the filter, or the
  // partition, of a builder that says 0): a key that could not be recorded still counts.
  size_t EstimateEntriesAdded() override { return failed_ && hashes_.empty() ? 1 : hashes_.size(); }
  ROCKSDB_NAMESPACE::Slice Finish(std::unique_ptr<const char[]>* buf) override;
  // Builds the filter of the keys added since the last Finish and empties the builder (RocksDB
  // reuses it for the next partition). A failure is answered with a match-all filter, because a
  // non-OK status would fail the whole flush; it, and a fuse or Ribbon build that fell back to a
  // blocked Bloom filter (no seed solved it, or the block cache refused its charge), are logged
  // as WARN (SetFileLevel). *status is OK but in one case: with
  // verification on (detect_filter_construct_corruption), Corruption if the hashes held no longer
  // sum to those added (memory corrupted between AddKey and Finish: the filter would miss keys).
  ROCKSDB_NAMESPACE::Slice Finish(std::unique_ptr<const char[]>* buf,
                                  ROCKSDB_NAMESPACE::Status* status) override;
  // With verification on: Corruption if the filter does not parse or misses one of its keys.
  ROCKSDB_NAMESPACE::Status MaybePostVerify(const ROCKSDB_NAMESPACE::Slice& filter) override;
  // The inverse of the filter size (core's MaxKeysForBytes; exact unless a budget makes the size
  // non-monotone, then never too large); for a level that mixes two filters (sstfilter.Leveled),
  // that of the larger.
  size_t ApproximateNumEntries(size_t bytes) override;
#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
  // The bytes Finish writes for `num_entries` distinct entries (core's FilterBytes; a cuckoo
  // build that needs more buckets can be a few percent larger). For a choice that depends on the
  // key count (sstfilter.Leveled), an estimate: the choice for the power of two below it (where
  // its level mixes two filters, the expected size over them).
  size_t CalculateSpace(size_t num_entries) override;
  // core's EstimatedFpRate for this builder's filter of `num_entries` entries in `bytes` bytes.
  double EstimatedFpRate(size_t num_entries, size_t bytes) override;
#endif

 private:
  // The filters for num_keys keys: spec_, or the chooser's (an error, or no filter, when it says
  // so).
  Result<LevelFilter> FilterFor(uint64_t num_keys, bool finishing) const;
  void AddToKeyRange(const ROCKSDB_NAMESPACE::Slice& key);
  // A WARN line, within the policy's rate limit; WarnNoThrow drops the line when even it cannot
  // be had (out of memory), for the handlers of what a build survives.
  void Warn(const std::string& message) const;
  void WarnNoThrow(const char* message) const noexcept;
  // hashes_.Add(h), and with verification on, h into added_sum_ if the list took it.
  void Record(uint64_t h);
  // `chosen`, unless the block cache refuses the charge of its build (scratch and output): then a
  // blocked Bloom filter of about its size, logged as WARN. `where`: the file, for the LOG line.
  FilterSpec SpecWithinCharge(const FilterSpec& chosen, const std::string& where);
  // With verification on, whether the hashes held no longer sum to those added (a hash corrupted
  // in memory): the filter would miss keys.
  bool HashesCorrupted() const;
  // What follows a filter handed to RocksDB: the chooser's record of the file, the finished
  // filter's charge to the block cache, its probe cell (`counted`), the oversized-block warning.
  // May throw std::bad_alloc.
  void NoteFinished(const ROCKSDB_NAMESPACE::Slice& filter, bool counted);
  // Clears the keys and the build's charges for the builder's next filter (a partitioned filter
  // finishes once per partition); verification keeps the last hashes for MaybePostVerify.
  void StartNextFilter();

  friend struct BuilderTestAccess;  // tests/plugin/builder_test.cc: corrupts a held hash

  const FilterSpec spec_;
  const std::unique_ptr<FilterChooser> chooser_;  // null: spec_ for every filter
  const bool track_key_range_;
  KeyRange file_keys_;  // every key of the file so far (of all its partitions), if tracked
  const bool verify_;
  ROCKSDB_NAMESPACE::Logger* const log_;
  int level_ = -1;
  std::shared_ptr<RateLimitedWarning> warnings_;
  CacheShards cache_shards_;
  std::shared_ptr<OversizedFilterBlocks> oversized_;
  bool reported_oversized_ = false;
  bool count_probes_ = false;
  std::unique_ptr<ConstructionCharge> charge_;   // null: nothing charged
  std::shared_ptr<SizeClassRounding> rounding_;  // null: each filter as chosen
  bool build_refused_ = false;  // this Finish built a Bloom filter because the charge was refused
  HashList hashes_;             // 8 bytes per distinct key (core/hash_list.h)
  // With verification on: the sum (mod 2^64) of the hashes hashes_ took since the last Finish.
  uint64_t added_sum_ = 0;
  HashList last_hashes_;         // the keys of the last Finish, kept only for verification
  bool failed_ = false;          // a key could not be recorded (out of memory)
  bool key_range_lost_ = false;  // the file's key range could not be tracked (said at Finish)
  // The hash of the last key added, if any (consecutive repeats are skipped)...
  bool have_last_key_ = false;
  uint64_t last_key_ = 0;
#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  // ... and, for AddKeyAndAlt, of the last alternate.
  bool have_last_alt_ = false;
  uint64_t last_alt_ = 0;
#endif
};

// Logs "[sstfilter] <message>" at `level` (LogError: ERROR level) to a table's logger, which may
// be null.
void LogAt(ROCKSDB_NAMESPACE::Logger* log, ROCKSDB_NAMESPACE::InfoLogLevel level,
           const std::string& message);
void LogError(ROCKSDB_NAMESPACE::Logger* log, const std::string& message);

// The reader for any bytes sstfilter wrote. Never fails: bytes it does not understand give a
// reader that matches every key.
ROCKSDB_NAMESPACE::FilterBitsReader* NewSstFilterBitsReader(
    const ROCKSDB_NAMESPACE::Slice& contents);

// RocksDB's own reader of a filter its built-in policies wrote (legacy Bloom, FastLocalBloom,
// Standard128Ribbon): a built-in policy's public GetFilterBitsReader, which takes metadata it does
// not know as "may match" for every key. Null, which RocksDB takes as "may match", if RocksDB
// cannot make one.
ROCKSDB_NAMESPACE::FilterBitsReader* NewBuiltinFilterBitsReader(
    const ROCKSDB_NAMESPACE::Slice& contents);

}  // namespace sstfilter
