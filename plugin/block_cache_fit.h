// SPDX-License-Identifier: Apache-2.0
// Whether a filter block fits the block cache it will live in.
//
// With cache_index_and_filter_blocks=true and full (unpartitioned) filters, each SST file's filter
// is one block of the block cache. RocksDB's caches are split into shards, each with its own
// capacity and eviction order (an LRU cache gets shards of at least 512 KiB, at most 64 of them:
// 64 shards of 512 KiB for 32 MiB), and a block goes to the shard its cache key hashes to, a key
// that changes with every build of the file. A lookup of an absent key needs the filter (and the
// index) of one file per level, so all of them are hot. When the hot blocks that hash to one
// shard, pinned ones included, hold more than the shard, they evict each other and are re-read
// from storage, the more often the further they overflow it, whichever filter built them. Which
// builds are hit is luck, for RocksDB's filters as for sstfilter's (measured in
// docs/benchmarks.md, "Filters in the block cache").
//
// sstfilter.Leveled prices that risk: a probe of a filter costs its false-positive rate plus its
// block's expected re-reads (ExpectedRereadsPerProbe; where the readers have counted which blocks
// lookups probe, the hot ones stay cached: Zipfian lookups cost fewer re-reads than uniform ones
// over the same blocks). A tree whose blocks crowd their shards
// gets the budget at which that cost is least (LeveledPolicy::CacheBitsPerKey), and a file whose
// rich block (Monkey's allocation gives the levels every lookup probes richer filters) would
// cost more than its bits save gets a leaner filter (leveled_policy.cc, FitCache).
//
// Blocks of at most 1/kShardFraction of a shard keep that unlikely: with hot metadata filling a
// quarter of the cache, a shard overflows only when it draws four times its mean share of blocks,
// and with 8 or more blocks per shard's worth, that is rare (Poisson: 2.4e-4 per shard at a mean
// of 2 blocks). Partitioned filters (partition_filters=true, blocks of metadata_block_size) are
// always within it. Pinned filters (metadata_cache_options={unpartitioned_pinning=kAll}) are never
// evicted: in the same runs no build re-read them.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/table.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sstfilter {

inline constexpr size_t kShardFraction = 8;

// The block cache's shards, as far as the cache says (Cache::GetPrintableOptions names the shard
// count of RocksDB's sharded caches; 0 shards: it does not).
struct CacheShards {
  size_t capacity_bytes = 0;
  size_t shards = 0;
  size_t ShardBytes() const { return shards > 0 ? capacity_bytes / shards : 0; }
  // Whether a filter block of `block_bytes` fits: at most 1/kShardFraction of a shard, or a cache
  // that does not say its shards.
  bool Fits(size_t block_bytes) const {
    const size_t shard = ShardBytes();
    return shard == 0 || block_bytes <= shard / kShardFraction;
  }
};

// How often lookups probe the tree's filter blocks, one class of them: `share` of the blocks are
// probed `rate` times as often as the tree's mean block (over a tree's classes, the shares and
// share x rate each sum to 1). Made from the readers' counts (tree_model.h, BlockHeatOf).
struct BlockHeatClass {
  double rate = 1;
  double share = 1;
};

// The hot filter blocks that share a cache holding them whole (CacheShards), for the cost of a
// block's size: a block lands in a shard at random, beside about `other_blocks` / `shards` of the
// tree's other filter blocks, each of about `mean_block_bytes`, and probed as `heat` says (empty:
// alike).
struct ShardLoad {
  CacheShards shards;
  double other_blocks = 0;
  double mean_block_bytes = 0;
  std::vector<BlockHeatClass> heat;
};
inline constexpr double kMaxOtherBlocks = 1e7;  // more are counted as this many

// The expected storage reads of a filter block of `block_bytes` per lookup that probes it, from
// its shard's overflow: over the number k of the other blocks that land in its shard (binomial,
// 1 / shards each), the share 1 - shard_bytes / (block_bytes + k x mean_block_bytes) of the
// shard's hot bytes that cannot stay cached, which is the miss ratio of an LRU list of blocks
// probed alike (the independent reference model); 1 for a block larger than its shard, which
// the next insert evicts. 0 where the cache says no shards. An estimate, and neither bound:
// - it counts the tree's filter blocks only. Index and data blocks, and other trees' blocks in a
//   shared cache, add load: RocksDB inserts filter and index blocks at high priority
//   (cache_index_and_filter_blocks_with_high_priority), but the high-priority pool is a share of
//   each shard (half, by default), and what overflows it competes with data blocks;
// - without `heat`, it prices every block as probed alike. In a leveled tree a file of an upper
//   level receives more probes than one of the last level, and LRU keeps the most probed blocks
//   longer, so the re-reads of the upper levels' blocks, the ones sstfilter.Leveled cuts, are
//   overpriced. (Left so: the margin covers the index and data blocks it does not count.);
// - a re-read counts as one read, as a false positive's data block does, though it reads the
//   whole filter block.
//
// With `load.heat` (the readers' counts: which blocks of each level lookups probe), the block
// probed `block_rate` times as often as the mean block, Che's approximation of an LRU list under
// independent probes: a block stays cached while it is probed within the shard's characteristic
// time T, the time at which the shard's blocks' expected cached bytes, sum of bytes x (1 -
// exp(-rate x T)), are the shard's; a probe of the block misses with probability
// exp(-block_rate x T). Its other blocks count at their classes' mean (a mean field over which of
// the tree's blocks land in the shard). Where blocks are probed alike, exp(-T) is the miss ratio
// above, 1 - shard / load; where a few blocks take most probes (Zipfian lookups), they stay cached
// in a shard the others overflow, and their probes are seldom re-reads.
double ExpectedRereadsPerProbe(double block_bytes, const ShardLoad& load, double block_rate = 1);

// The mean re-reads per probe over the tree's filter blocks were each of `block_bytes`, with
// the others of `load` the same size: each heat class's ExpectedRereadsPerProbe at its rate,
// weighted by its share of the probes (share x rate). Without heat, ExpectedRereadsPerProbe.
double TreeRereadsPerProbe(double block_bytes, const ShardLoad& load);

// The shards of the cache that holds a table's filter blocks whole and may evict them: the block
// cache with cache_index_and_filter_blocks, without partition_filters, and without
// metadata_cache_options.unpartitioned_pinning = kAll. Otherwise (filters held by the table
// reader, cut into partitions, or pinned), or a cache that does not say its shards: 0 shards.
CacheShards ShardsHoldingWholeFilters(const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table);

// The warning for a filter block of `block_bytes` in such a cache, or "" if it fits.
std::string FilterBlockWarning(size_t block_bytes, const CacheShards& shards);

// The filter blocks of a policy that do not fit their cache's shards, counted; the warning goes
// to the database's log for the first and then every kLogEvery-th, so that a database of many
// such files does not fill its log. Thread-safe.
class OversizedFilterBlocks {
 public:
  static constexpr uint64_t kLogEvery = 64;
  // Counts and maybe logs (WARN level) a filter block of `block_bytes`; whether it is too large.
  bool Report(ROCKSDB_NAMESPACE::Logger* log, size_t block_bytes, const CacheShards& shards);

 private:
  std::atomic<uint64_t> count_{0};
};

}  // namespace sstfilter
