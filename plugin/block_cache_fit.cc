// SPDX-License-Identifier: Apache-2.0
#include "plugin/block_cache_fit.h"

#include <algorithm>
#include <cmath>
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

namespace {
// ln(k!) without std::lgamma, which writes the global signgam (a data race between compactions).
double LogFactorial(double k) {
  int sign = 0;
  return lgamma_r(k + 1, &sign);
}
}  // namespace

double ExpectedRereadsPerProbe(double block_bytes, const ShardLoad& load) {
  const double shard = static_cast<double>(load.shards.ShardBytes());
  if (shard <= 0 || !(block_bytes > 0) || !std::isfinite(block_bytes)) return 0;
  if (block_bytes >= shard) return 1;
  const double mean = load.mean_block_bytes;
  // Whole blocks; at most kMaxOtherBlocks (the loop below is over counts of blocks).
  const double n = std::isfinite(load.other_blocks)
                       ? std::min(std::round(std::max(load.other_blocks, 0.0)), kMaxOtherBlocks)
                       : kMaxOtherBlocks;
  if (!(mean > 0) || !std::isfinite(mean) || n < 1 || block_bytes + n * mean <= shard) {
    return 0;  // never overflows
  }
  const double p = 1 / static_cast<double>(load.shards.shards);
  if (p >= 1) return 1 - shard / (block_bytes + n * mean);  // one shard holds every block
  // The first count of other blocks that overflows the shard, and the binomial terms from there
  // (counts more than 40 standard deviations below the mean weigh nothing, under e^-800), in
  // logarithms, until past the mean they no longer add to the sum.
  const double first = std::floor((shard - block_bytes) / mean) + 1;
  const double below = std::floor(n * p - 40 * std::sqrt(n * p * (1 - p)));
  const double log_p = std::log(p), log_q = std::log1p(-p), log_n = LogFactorial(n);
  double expected = 0;
  for (double k = std::max(first, below); k <= n; ++k) {
    const double log_pmf =
        log_n - LogFactorial(k) - LogFactorial(n - k) + k * log_p + (n - k) * log_q;
    const double term = std::exp(log_pmf) * (1 - shard / (block_bytes + k * mean));
    expected += term;
    if (k > n * p && term <= 1e-12 * expected) break;
  }
  return std::min(expected, 1.0);
}

std::string FilterBlockWarning(size_t block_bytes, const CacheShards& shards) {
  if (shards.Fits(block_bytes)) return "";
  const size_t shard = shards.ShardBytes();
  char text[512];
  snprintf(text, sizeof(text),
           "a filter block of %zu KiB, more than 1/%zu of a block-cache shard (%zu KiB: %zu MiB "
           "in %zu shards): blocks that share a shard can evict each other and be read again from "
           "storage. Pin them (metadata_cache_options={unpartitioned_pinning=kAll}), "
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
