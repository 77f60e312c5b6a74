// SPDX-License-Identifier: Apache-2.0
#include "plugin/block_cache_fit.h"

#include <cstdio>
#include <cstdlib>

#include "compat/rocksdb_api.h"  // Cache's definition
#include "plugin/bits_adapters.h"

namespace sstfilter {

CacheShards ShardsHoldingWholeFilters(const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table) {
  CacheShards shards;
  if (!table.cache_index_and_filter_blocks || table.partition_filters || table.no_block_cache ||
      table.block_cache == nullptr ||
      table.metadata_cache_options.unpartitioned_pinning == ROCKSDB_NAMESPACE::PinningTier::kAll) {
    return shards;  // held by the table reader, cut into partitions, or pinned in the cache
  }
  // RocksDB's sharded caches (LRU, HyperClock; 7.8 to 11.x) print "    num_shard_bits : N".
  const std::string printed = table.block_cache->GetPrintableOptions();
  static const char kKey[] = "num_shard_bits : ";
  const size_t at = printed.find(kKey);
  if (at == std::string::npos) return shards;
  const long bits = std::strtol(printed.c_str() + at + sizeof(kKey) - 1, nullptr, 10);
  if (bits < 0 || bits > 20) return shards;
  shards.capacity_bytes = table.block_cache->GetCapacity();
  shards.shards = size_t{1} << bits;
  return shards;
}

std::string FilterBlockWarning(size_t block_bytes, const CacheShards& shards) {
  if (shards.Fits(block_bytes)) return "";
  const size_t shard = shards.ShardBytes();
  char text[512];
  snprintf(text, sizeof(text),
           "a filter block of %zu KiB, more than 1/%zu of a block-cache shard (%zu KiB: %zu MiB "
           "in %zu shards): blocks that share a shard can evict each other, and be read again on "
           "nearly every lookup. Pin them (metadata_cache_options={unpartitioned_pinning=kAll}), "
           "set partition_filters=true (with index_type=kTwoLevelIndexSearch), or give the cache "
           "shards of at least %zu KiB (README: Filters in the block cache)",
           block_bytes >> 10, kShardFraction, shard >> 10, shards.capacity_bytes >> 20,
           shards.shards, (block_bytes * kShardFraction + 1023) >> 10);
  return text;
}

bool OversizedFilterBlocks::Report(ROCKSDB_NAMESPACE::Logger* log, size_t block_bytes,
                                   const CacheShards& shards) {
  if (shards.Fits(block_bytes)) return false;
  const uint64_t n = count_.fetch_add(1, std::memory_order_relaxed);
  if (n % kLogEvery == 0) {
    LogAt(log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
          FilterBlockWarning(block_bytes, shards) + "; " + std::to_string(n + 1) +
              " such file(s) so far, logged every " + std::to_string(kLogEvery));
  }
  return true;
}

}  // namespace sstfilter
