// SPDX-License-Identifier: Apache-2.0
#include "plugin/block_cache_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compat/rocksdb_api.h"  // Cache's definition
#include "plugin/bits_adapters.h"
#include "plugin/printf.h"

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
// Che's characteristic time is sought within e^-kMaxLogTime to e^kMaxLogTime probes of the mean
// block (rates of classes are within a few orders of magnitude of 1), to kLogTimeTolerance.
// A Newton step is taken only where it is under half the step before last, a bisection halves
// the bracket: kMaxCheSteps is twice the 40 halvings from 2 kMaxLogTime down to the tolerance,
// and more.
constexpr double kMaxLogTime = 40, kLogTimeTolerance = 1e-10;
constexpr int kMaxCheSteps = 96;
// With heat, the binomial terms within this many standard deviations of the mean count of other
// blocks in a shard, at least kHeatMinSpan counts (the terms beyond add under about 1e-11
// re-reads per probe), at most kHeatTerms of them.
constexpr double kHeatSigmas = 8.5, kHeatMinSpan = 24, kHeatTerms = 64;

// Che's approximation for one shard of `shard` bytes: the block of `block_bytes` probed `rate`
// times as often as the mean block, and `others` blocks of `mean` bytes in heat's classes. The
// characteristic time T solves cached_bytes(T) = shard, where the cached bytes grow with T from 0
// to every block's (more than the shard's): Newton's method on u = log T from the answer for
// blocks probed alike, safeguarded (Numerical Recipes' rtsafe): a bisection of the bracket that
// the signs so far give wherever Newton's step would leave it or would not be under half the step
// before last, so that the steps cannot bounce between the bracket's ends. The probability that a
// probe of the block misses, exp(-rate x T).
double CheMiss(double shard, double block_bytes, double rate, double others, double mean,
               const std::vector<BlockHeatClass>& heat) {
  if (!(rate > 0)) return 1;  // never probed: never cached (and weighs nothing)
  // The cached bytes beyond the shard at u = log T, and their derivative in u.
  auto excess = [&](double u, double* slope) {
    const double t = std::exp(u);
    double bytes = -block_bytes * std::expm1(-rate * t);
    *slope = block_bytes * rate * t * std::exp(-rate * t);
    for (const BlockHeatClass& c : heat) {
      const double class_bytes = others * c.share * mean;
      bytes -= class_bytes * std::expm1(-c.rate * t);
      *slope += class_bytes * c.rate * t * std::exp(-c.rate * t);
    }
    return bytes - shard;
  };
  double lo = -kMaxLogTime, hi = kMaxLogTime, slope = 0;
  if (excess(hi, &slope) <= 0) return 0;  // only blocks never probed overflow the shard
  // Blocks probed alike: exp(-T) = 1 - shard / (their bytes).
  double u = std::log(-std::log1p(-shard / (block_bytes + others * mean)));
  if (!(u > lo && u < hi)) u = 0;
  double step = hi - lo, step_before = hi - lo;
  bool converged = false;
  for (int i = 0; i < kMaxCheSteps && !converged; ++i) {
    const double f = excess(u, &slope);
    // Converged: no excess, or a Newton step below the tolerance (which may be below the spacing
    // of doubles at u, where a step would not move u and the bracket's test would refuse it).
    if (f == 0 || (slope > 0 && std::abs(f / slope) < kLogTimeTolerance)) {
      if (f != 0) u -= f / slope;
      converged = true;
      break;
    }
    (f < 0 ? lo : hi) = u;
    const double newton = slope > 0 ? u - f / slope : lo;  // no slope: out of the bracket
    const double next = newton > lo && newton < hi && std::abs(newton - u) < step_before / 2
                            ? newton
                            : (lo + hi) / 2;
    step_before = step;
    step = std::abs(next - u);
    u = next;
    converged = step < kLogTimeTolerance || hi - lo < kLogTimeTolerance;
  }
  // Out of steps (a guard: the halvings above leave none wanting): the bracket's middle.
  if (!converged) u = (lo + hi) / 2;
  return std::exp(-rate * std::exp(u));
}
}  // namespace

double ExpectedRereadsPerProbe(double block_bytes, const ShardLoad& load, double block_rate) {
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
  const bool alike = load.heat.empty();
  if (!alike && !(block_rate > 0 && std::isfinite(block_rate))) return block_rate > 0 ? 0 : 1;
  // The probability that a probe of the block misses in a shard that holds it and k others.
  auto miss = [&](double k) {
    return alike ? 1 - shard / (block_bytes + k * mean)
                 : CheMiss(shard, block_bytes, block_rate, k, mean, load.heat);
  };
  const double p = 1 / static_cast<double>(load.shards.shards);
  if (p >= 1) return miss(n);  // one shard holds every block
  const double first = std::floor((shard - block_bytes) / mean) + 1;
  const double log_p = std::log(p), log_q = std::log1p(-p), log_n = LogFactorial(n);
  auto pmf = [&](double k) {
    return std::exp(log_n - LogFactorial(k) - LogFactorial(n - k) + k * log_p + (n - k) * log_q);
  };
  const double sigma = std::sqrt(n * p * (1 - p));
  double expected = 0;
  if (alike) {
    // The first count of other blocks that overflows the shard, and the binomial terms from there
    // (counts more than 40 standard deviations below the mean weigh nothing, under e^-800), in
    // logarithms, until past the mean they no longer add to the sum.
    const double below = std::floor(n * p - 40 * sigma);
    for (double k = std::max(first, below); k <= n; ++k) {
      const double term = pmf(k) * miss(k);
      expected += term;
      if (k > n * p && term <= 1e-12 * expected) break;
    }
    return std::min(expected, 1.0);
  }
  // With heat, each term solves for T: the counts within kHeatSigmas standard deviations of the
  // mean (at least kHeatMinSpan), at most kHeatTerms of them, each standing for its stride.
  const double span = std::max(kHeatSigmas * sigma, kHeatMinSpan);
  const double from = std::max({first, std::floor(n * p - span), 0.0});
  const double to = std::min(n, std::ceil(n * p + span));
  const double stride = std::max(1.0, std::ceil((to - from + 1) / kHeatTerms));
  for (double k = from; k <= to; k += stride) expected += stride * pmf(k) * miss(k);
  return std::min(expected, 1.0);
}

double TreeRereadsPerProbe(double block_bytes, const ShardLoad& load) {
  if (load.heat.empty()) return ExpectedRereadsPerProbe(block_bytes, load);
  double rereads = 0, probes = 0;
  for (const BlockHeatClass& c : load.heat) {
    rereads += c.share * c.rate * ExpectedRereadsPerProbe(block_bytes, load, c.rate);
    probes += c.share * c.rate;
  }
  return probes > 0 ? rereads / probes : 0;
}

std::string FilterBlockWarning(size_t block_bytes, const CacheShards& shards) {
  if (shards.Fits(block_bytes)) return "";
  const size_t shard = shards.ShardBytes();
  return Printf(
      "a filter block of %zu KiB, more than 1/%zu of a block-cache shard (%zu KiB: %zu MiB "
      "in %zu shards): blocks that share a shard can evict each other and be read again from "
      "storage. Pin them (metadata_cache_options={unpartitioned_pinning=kAll}), "
      "set partition_filters=true (with index_type=kTwoLevelIndexSearch), or give the cache "
      "shards of at least %zu KiB (docs/filters.md: Filters in the block cache)",
      block_bytes >> 10, kShardFraction, shard >> 10, shards.capacity_bytes >> 20, shards.shards,
      (block_bytes * kShardFraction + 1023) >> 10);
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
