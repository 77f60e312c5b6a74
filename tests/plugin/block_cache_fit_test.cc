// SPDX-License-Identifier: Apache-2.0
// Whether a whole filter block fits its block cache's shards, and the builders' warning when not.
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "plugin/block_cache_fit.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using testing::PolicyFrom;

// Not padded ("key7"): as the builders' tests name them.
std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

// The shards of the block cache that holds filters whole, as RocksDB's caches print them: an LRU
// cache of 32 MiB has 64 shards of 512 KiB; one told its shard count has that many; filters held
// by the table reader, or partitioned, are not held whole by any.
TEST(BlockCacheFit, ShardsOfTheCacheThatHoldsWholeFilters) {
  BlockBasedTableOptions table;
  table.cache_index_and_filter_blocks = true;
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
  CacheShards shards = ShardsHoldingWholeFilters(table);
  EXPECT_EQ(shards.shards, 64u);
  EXPECT_EQ(shards.ShardBytes(), 512u << 10);
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20, /*num_shard_bits=*/2);
  EXPECT_EQ(ShardsHoldingWholeFilters(table).ShardBytes(), 8u << 20);
  table.partition_filters = true;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.partition_filters = false;
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kAll;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kFallback;
  table.cache_index_and_filter_blocks = false;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);

  // At most 1/8 of a shard fits; more is warned about, with the cache's figures and the remedy.
  EXPECT_EQ(FilterBlockWarning(64 << 10, shards), "");
  const std::string warning = FilterBlockWarning((64 << 10) + 1, shards);
  EXPECT_NE(warning.find("a filter block of 64 KiB"), std::string::npos) << warning;
  EXPECT_NE(warning.find("512 KiB: 32 MiB in 64 shards"), std::string::npos) << warning;
  EXPECT_NE(warning.find("partition_filters=true"), std::string::npos) << warning;
  EXPECT_NE(warning.find("unpartitioned_pinning=kAll"), std::string::npos) << warning;
  EXPECT_EQ(FilterBlockWarning(1 << 30, CacheShards{}), "");  // a cache that does not say
}

// Every sstfilter policy's builder reports a filter it writes that will be a block too large for
// its cache's shards, once per file; the policy logs a warning for the first such file and every
// 64th; never when the filter is partitioned.
TEST(BlockCacheFit, BuildersWarnOfFilterBlocksTooLargeForTheirShards) {
  std::vector<std::string> keys;
  for (int i = 0; i < 100'000; ++i) keys.push_back(Key(i));  // about 120 KiB of filter
  for (const char* uri :
       {"sstfilter.BumpedRibbon:10", "sstfilter.Bloom:10", "sstfilter.Leveled:10"}) {
    for (const bool partitioned : {false, true}) {
      SCOPED_TRACE(std::string(uri) + (partitioned ? ", partitioned" : ", whole"));
      BlockBasedTableOptions table;
      table.filter_policy = PolicyFrom(uri);
      table.cache_index_and_filter_blocks = true;
      table.partition_filters = partitioned;
      table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
      testing::RecordingLogger logger;
      ROCKSDB_NAMESPACE::FilterBuildingContext context(table);
      context.info_log = &logger;
      context.level_at_creation = 1;
      constexpr int kFiles = 66;
      for (int file = 0; file < kFiles; ++file) {
        std::unique_ptr<FilterBitsBuilder> builder(
            table.filter_policy->GetBuilderWithContext(context));
        ASSERT_NE(builder, nullptr);
        for (int round = 0; round < (file == 0 ? 2 : 1); ++round) {  // a second filter: no repeat
          for (const std::string& k : keys) builder->AddKey(k);
          std::unique_ptr<const char[]> buf;
          ASSERT_GT(builder->Finish(&buf).size(), 64u << 10);
        }
      }
      std::vector<std::string> warnings;
      for (const auto& [level, line] : logger.lines) {
        if (line.find("a filter block of") == std::string::npos) continue;
        warnings.push_back(line);
        EXPECT_EQ(level, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL);
      }
      if (partitioned) {
        EXPECT_TRUE(warnings.empty());
      } else {
        ASSERT_EQ(warnings.size(), 2u);  // files 1 and 65
        EXPECT_NE(warnings[0].find("1 such file(s) so far, logged every 64"), std::string::npos)
            << warnings[0];
        EXPECT_NE(warnings[1].find("65 such file(s) so far"), std::string::npos) << warnings[1];
      }
    }
  }
}

// The expected re-reads of a filter block per probe against a simulation of its shard: 49 other
// blocks of 80 KiB each land in one of 16 shards of 512 KiB (an 8 MiB LRU cache) at random, and a
// trial's block is missed in the share of its shard's hot bytes beyond the shard. Within 5 sigma
// of the simulation's mean (its standard error from the trials' spread). Also: nothing is re-read
// where every block fits one shard, a block larger than its shard is re-read on every probe, and
// a larger block is re-read no less.
TEST(BlockCacheFit, ExpectedRereadsFollowTheShardsOverflow) {
  ShardLoad load;
  load.shards = CacheShards{8u << 20, 16};
  load.other_blocks = 49;
  load.mean_block_bytes = 80 << 10;
  const double shard = 512 << 10;
  std::mt19937_64 rng(42);
  std::bernoulli_distribution in_shard(1.0 / 16);
  double last = 0;
  for (const double kib : {40.0, 87.0, 134.0, 190.0, 400.0}) {
    const double block = kib * 1024;
    constexpr int kTrials = 200'000;
    double sum = 0, sum_squares = 0;
    for (int t = 0; t < kTrials; ++t) {
      int others = 0;
      for (int b = 0; b < 49; ++b) others += in_shard(rng) ? 1 : 0;
      const double miss = std::max(0.0, 1 - shard / (block + others * load.mean_block_bytes));
      sum += miss;
      sum_squares += miss * miss;
    }
    const double mean = sum / kTrials;
    const double error = std::sqrt((sum_squares / kTrials - mean * mean) / kTrials);
    const double expected = ExpectedRereadsPerProbe(block, load);
    printf("[ figures  ] a block of %3.0f KiB: %.5f re-reads per probe (simulated %.5f +- %.5f)\n",
           kib, expected, mean, error);
    EXPECT_NEAR(expected, mean, 5 * error + 1e-9);
    EXPECT_GE(expected, last);
    last = expected;
  }
  EXPECT_GT(last, 0.1);
  EXPECT_EQ(ExpectedRereadsPerProbe(shard, load), 1);
  EXPECT_EQ(ExpectedRereadsPerProbe(shard - 80 * 1024 * 5, ShardLoad{load.shards, 5, 80 << 10, {}}),
            0)
      << "all five others and the block fit one shard";
  EXPECT_EQ(ExpectedRereadsPerProbe(100 << 10, ShardLoad{CacheShards{}, 49, 80 << 10, {}}), 0)
      << "a cache that does not say its shards";
  EXPECT_NEAR(ExpectedRereadsPerProbe(100 << 10, ShardLoad{load.shards, 1.0 / 0.0, 80 << 10, {}}),
              1, 1e-4)
      << "more blocks than counted: as many as kMaxOtherBlocks, which overflow every shard";
  EXPECT_EQ(ExpectedRereadsPerProbe(100 << 10, ShardLoad{load.shards, 49, 0.0 / 0.0, {}}), 0);

  // 100,000 small blocks in 64 shards, a shard's mean load just under its size: against the sum
  // over every count, each binomial term from the one before (no lgamma, no cut-off).
  const ShardLoad many{CacheShards{64 * 480 << 10, 64}, 100'000, 300, {}};
  const double n = many.other_blocks, p = 1.0 / 64, c = 480 << 10, block = 1000;
  long double log_pmf = n * std::log1p(-p), sum = 0;
  for (double k = 0; k <= n; ++k) {
    sum += std::exp(log_pmf) * std::max(0.0, 1 - c / (block + k * many.mean_block_bytes));
    log_pmf += std::log((n - k) / (k + 1)) + std::log(p / (1 - p));
  }
  printf(
      "[ figures  ] 100,000 blocks of 300 bytes in 64 shards: %.6g re-reads (a full sum: %.6g)\n",
      ExpectedRereadsPerProbe(block, many), static_cast<double>(sum));
  EXPECT_GT(sum, 1e-5);
  EXPECT_NEAR(ExpectedRereadsPerProbe(block, many), static_cast<double>(sum), 1e-9 * sum);
}

// The miss ratio the model takes for a shard that overflows, 1 - shard / load, is an LRU list's
// under independent probes of blocks probed alike: 10 blocks of one size probed at random, room
// for 7. Each probe misses with probability 3/10 whatever the list holds, so the count of misses
// in 1,000,000 probes is binomial: within 5 sigma of 0.3.
TEST(BlockCacheFit, AnLruListOfBlocksProbedAlikeMissesTheShareBeyondItsSize) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> block(0, 9);
  std::vector<int> lru;  // most recent first
  constexpr int kProbes = 1'000'000;
  int misses = 0;
  for (int i = 0; i < kProbes; ++i) {
    const int b = block(rng);
    const auto at = std::find(lru.begin(), lru.end(), b);
    if (at == lru.end()) {
      ++misses;
      if (lru.size() == 7) lru.pop_back();
    } else {
      lru.erase(at);
    }
    lru.insert(lru.begin(), b);
  }
  const double ratio = static_cast<double>(misses) / kProbes;
  EXPECT_NEAR(ratio, 0.3, 5 * std::sqrt(0.3 * 0.7 / kProbes));
  EXPECT_NEAR(ExpectedRereadsPerProbe(1, ShardLoad{CacheShards{7, 1}, 9, 1, {}}), 1 - 7.0 / 10,
              1e-12);
}

// Che's approximation with heat (ExpectedRereadsPerProbe with `heat`) against a simulation of
// LRU shards. 160 blocks of 64 KiB land at random in 16 shards of 512 KiB (8 blocks each, 10
// land in a shard on average); each trial draws a placement, then 20,000 probes, each of a block
// drawn by its rate, into its shard's LRU list (2,000 more first, to fill the lists). 10% of the
// blocks are probed 41 times as often as the others (rates 8.2 and 0.2: 82% of the probes). The
// model is an approximation (Che's, and a mean field over which blocks share a shard): within 5%
// of the simulated miss ratio, alike or skewed. Blocks probed
// alike through heat's classes cost what the exact binomial sum says; a hot block is re-read less
// than a cold one; and the skew costs fewer than half the re-reads of blocks probed alike.
double SimulatedRereads(const std::vector<double>& rates, size_t shards, size_t slots,
                        uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> shard_of(0, shards - 1);
  std::discrete_distribution<size_t> block_of(rates.begin(), rates.end());
  constexpr int kTrials = 200, kWarmup = 2000, kProbes = 20'000;
  uint64_t misses = 0, probes = 0;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<size_t> shard(rates.size());
    for (size_t& s : shard) s = shard_of(rng);
    std::vector<std::vector<size_t>> lru(shards);  // most recent first
    for (int i = 0; i < kWarmup + kProbes; ++i) {
      const size_t b = block_of(rng);
      std::vector<size_t>& list = lru[shard[b]];
      const auto at = std::find(list.begin(), list.end(), b);
      const bool miss = at == list.end();
      if (miss) {
        if (list.size() == slots) list.pop_back();
      } else {
        list.erase(at);
      }
      list.insert(list.begin(), b);
      if (i >= kWarmup) {
        misses += miss ? 1 : 0;
        ++probes;
      }
    }
  }
  return static_cast<double>(misses) / static_cast<double>(probes);
}

TEST(BlockCacheFit, RereadsOfBlocksProbedUnlikeFollowAnLruSimulation) {
  constexpr size_t kBlocks = 160, kShards = 16, kHot = 16;
  const double block = 64 << 10;
  const CacheShards cache{kShards * (512 << 10), kShards};
  std::vector<double> alike(kBlocks, 1), skewed(kBlocks, 0.2);
  for (size_t i = 0; i < kHot; ++i) skewed[i] = 8.2;
  const ShardLoad uniform{cache, kBlocks - 1, block, {}};
  const ShardLoad hot{cache, kBlocks - 1, block, {{8.2, 0.1}, {0.2, 0.9}}};
  const double model_alike = TreeRereadsPerProbe(block, uniform);
  const double model_skewed = TreeRereadsPerProbe(block, hot);
  const double sim_alike = SimulatedRereads(alike, kShards, 8, 1);
  const double sim_skewed = SimulatedRereads(skewed, kShards, 8, 2);
  printf(
      "[ figures  ] re-reads per probe: alike %.4f (simulated %.4f), skewed %.4f (simulated "
      "%.4f)\n",
      model_alike, sim_alike, model_skewed, sim_skewed);
  EXPECT_NEAR(model_alike, sim_alike, 0.05 * sim_alike);
  EXPECT_NEAR(model_skewed, sim_skewed, 0.05 * sim_skewed);
  EXPECT_LT(model_skewed, 0.5 * model_alike);
  EXPECT_LT(ExpectedRereadsPerProbe(block, hot, 8.2), ExpectedRereadsPerProbe(block, hot, 0.2));
  // One shard holds every block (40 of them, 32 fit): Che's miss ratio, without a binomial.
  const std::vector<double> forty(skewed.begin() + kHot - 4, skewed.begin() + kHot + 36);
  const ShardLoad one_shard{CacheShards{32 * 64 << 10, 1}, 39, block, {{8.2, 0.1}, {0.2, 0.9}}};
  const double sim_one_shard = SimulatedRereads(forty, 1, 32, 3);
  printf("[ figures  ] one shard: %.4f (simulated %.4f)\n", TreeRereadsPerProbe(block, one_shard),
         sim_one_shard);
  EXPECT_NEAR(TreeRereadsPerProbe(block, one_shard), sim_one_shard, 0.05 * sim_one_shard);
  // One shard of 8 MiB (128 blocks) and 160 blocks, half of them never probed: the 80 probed ones
  // fit, and nothing is re-read; probed alike, the 160 would not.
  const ShardLoad half_probed{CacheShards{8 << 20, 1}, kBlocks - 1, block, {{2, 0.5}, {0, 0.5}}};
  EXPECT_EQ(ExpectedRereadsPerProbe(block, half_probed, 2), 0);
  EXPECT_GT(
      ExpectedRereadsPerProbe(block, ShardLoad{CacheShards{8 << 20, 1}, kBlocks - 1, block, {}}),
      0.1);
  // Blocks probed alike, through heat's classes (one class; two of the same rate): the exact sum.
  for (const double kib : {40.0, 64.0, 134.0, 400.0}) {
    const ShardLoad load{cache, 49, 80 << 10, {}};
    const ShardLoad one{cache, 49, 80 << 10, {{1, 1}}};
    const ShardLoad two{cache, 49, 80 << 10, {{1, 0.3}, {1, 0.7}}};
    const double exact = ExpectedRereadsPerProbe(kib * 1024, load);
    EXPECT_NEAR(ExpectedRereadsPerProbe(kib * 1024, one), exact, 1e-9 + 1e-6 * exact) << kib;
    EXPECT_NEAR(TreeRereadsPerProbe(kib * 1024, two), exact, 1e-9 + 1e-6 * exact) << kib;
  }
  // 100,000 blocks in 64 shards (the strided sum over counts): as the exact sum, within 1%.
  const ShardLoad many{CacheShards{64 * 480 << 10, 64}, 100'000, 300, {}};
  const ShardLoad many_one{CacheShards{64 * 480 << 10, 64}, 100'000, 300, {{1, 1}}};
  const double exact_many = ExpectedRereadsPerProbe(1000, many);
  EXPECT_NEAR(ExpectedRereadsPerProbe(1000, many_one), exact_many, 0.01 * exact_many);
  // Bad rates: never probed (weighs nothing, never cached); infinitely hot (always cached).
  EXPECT_EQ(ExpectedRereadsPerProbe(block, hot, 0), 1);
  EXPECT_EQ(ExpectedRereadsPerProbe(block, hot, 1.0 / 0.0), 0);
  EXPECT_EQ(ExpectedRereadsPerProbe(block, hot, 0.0 / 0.0), 1);
}

// Che's characteristic time where Newton's method alone bounces between the ends of its bracket
// (rates spread 8,000-fold, a block of nearly the shard), against a plain bisection of the same
// equation: cached bytes(T) = the shard, the miss exp(-rate T).
TEST(BlockCacheFit, ChesTimeConvergesWhereNewtonsStepsBounce) {
  const std::vector<BlockHeatClass> heat = {{0.1881, 0.02715},  {0.01510, 0.2061},
                                            {3.790, 0.2457},    {1.356, 0.04387},
                                            {0.000472, 0.1721}, {0.003001, 0.3050}};
  const double shard = 1369058, others = 159, mean = 10000, rate = 0.040252;
  for (const double block : {1296256.0, 1296706.0, 1298706.0, 600000.0}) {
    auto cached = [&](double u) {
      const double t = std::exp(u);
      double bytes = -block * std::expm1(-rate * t);
      for (const BlockHeatClass& c : heat) {
        bytes -= others * c.share * mean * std::expm1(-c.rate * t);
      }
      return bytes;
    };
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; ++i) (cached((lo + hi) / 2) < shard ? lo : hi) = (lo + hi) / 2;
    const double expected = std::exp(-rate * std::exp((lo + hi) / 2));
    const ShardLoad load{CacheShards{static_cast<size_t>(shard), 1}, others, mean, heat};
    EXPECT_NEAR(ExpectedRereadsPerProbe(block, load, rate), expected, 1e-6) << block;
  }
}

// A filter of `num_keys` keys written to level 4 by sstfilter.Leveled:10 with the listener's
// accounts of a random tree of 1M keys (every lookup probes every level; 200 filter blocks of
// 5,000 keys at 10 bits/key), its filters whole in a block cache of 8 shards of `cache_bytes` / 8
// (none: held by the table readers), partitioned or not; the readers' counts `heat`, of that
// weight, if any. Whatever it chose, the filter holds its keys and rejects most others. Its bits
// per key; the LOG's lines about the cache in `log_lines`, its line about the file (the steered
// budget) in `*file_line`, if given.
double LevelFourBitsPerKey(const std::string& column_family, size_t cache_bytes, bool partitioned,
                           std::vector<std::string>* log_lines, size_t num_keys,
                           const std::vector<FileRange>& heat = {}, double counted_weight = 0,
                           std::string* file_line = nullptr) {
  static const std::vector<uint64_t> kLevelKeys = {0, 0, 0, 0, 10'000, 90'000, 900'000};
  static const auto alive = std::make_shared<int>();
  BlockBasedTableOptions table;
  table.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  if (cache_bytes > 0) {
    table.cache_index_and_filter_blocks = true;
    table.partition_filters = partitioned;
    table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(cache_bytes, /*num_shard_bits=*/3);
  }
  testing::RecordingLogger logger;
  TreeAccounts accounts;
  accounts.levels.resize(kLevelKeys.size());
  for (size_t i = 0; i < kLevelKeys.size(); ++i) {
    accounts.levels[i].keys = kLevelKeys[i];
    accounts.levels[i].filter_bytes = kLevelKeys[i] * 10 / 8;
    accounts.levels[i].filter_files = kLevelKeys[i] / 5000;
    accounts.levels[i].filter_keys = kLevelKeys[i];
    accounts.levels[i].probes = kLevelKeys[i] > 0 ? 1 : 0;
  }
  if (!heat.empty()) {
    accounts.heat = std::make_shared<const std::vector<FileRange>>(heat);
    accounts.counted_weight = counted_weight;
  }
  const std::unique_ptr<FilterBitsBuilder> builder =
      testing::BuilderWithAccounts(table, accounts, &logger, alive, column_family, 4);
  for (size_t i = 0; i < num_keys; ++i) builder->AddKey(Key(static_cast<int>(i)));
  std::unique_ptr<const char[]> buf;
  const ROCKSDB_NAMESPACE::Slice filter = builder->Finish(&buf);
  const double bits = 8.0 * filter.size() / static_cast<double>(num_keys);
  for (const auto& [level, line] : logger.lines) {
    if (line.find("re-reads") != std::string::npos ||
        line.find("cannot build") != std::string::npos) {
      log_lines->push_back(line);
    }
    if (file_line != nullptr && line.find("a file for level 4") != std::string::npos) {
      *file_line = line;
    }
  }
  EXPECT_TRUE(
      FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size()).valid());
  std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
      table.filter_policy->GetFilterBitsReader(filter));
  for (size_t i = 0; i < num_keys; ++i) EXPECT_TRUE(reader->MayMatch(Key(static_cast<int>(i))));
  int absent_found = 0;
  for (int i = 0; i < 1000; ++i) absent_found += reader->MayMatch("absent" + Key(i)) ? 1 : 0;
  EXPECT_LT(absent_found, 100);
  return bits;
}

// The file of level 4 gets Monkey's rich filter. Where the block cache that holds the tree's
// filters whole has shards the tree's filter blocks crowd (8 shards of 160 KiB, the tree's 1.25 MB
// of filters 0.95x the cache), the tree's budget is cut to where a probe costs least, with a line
// in the LOG, and the file gets far fewer bits; in a cache of ample shards, with partitioned
// filters, or with the filters outside the cache, the rich filter.
TEST(BlockCacheFit, LeveledSpendsLessWhereItsFilterBlocksWouldOverflowTheirShards) {
  std::vector<std::string> outside_lines, ample_lines, partitioned_lines, tight_lines;
  const double outside = LevelFourBitsPerKey("outside", 0, false, &outside_lines, 5000);
  const double ample = LevelFourBitsPerKey("ample", 64 << 20, false, &ample_lines, 5000);
  const double partitioned =
      LevelFourBitsPerKey("partitioned", 1280 << 10, true, &partitioned_lines, 5000);
  const double tight = LevelFourBitsPerKey("tight", 1280 << 10, false, &tight_lines, 5000);
  printf(
      "[ figures  ] level 4 of a random tree: %.2f bits/key, %.2f in a cache of 8 MiB shards, "
      "%.2f partitioned, %.2f in 8 shards of 160 KiB\n",
      outside, ample, partitioned, tight);
  EXPECT_GT(outside, 15);
  EXPECT_EQ(ample, outside);
  EXPECT_EQ(partitioned, outside);
  EXPECT_LT(tight, outside - 3);
  EXPECT_TRUE(ample_lines.empty() && partitioned_lines.empty());
  // The tree's budget: 200 blocks of 10 bits/key in 8 shards of 160 KiB are re-read 0.055 times
  // per probe, 43 times their rate; at 7.5 bits/key, 0.0017 times, for a rate of 0.0069. The
  // tree's line comes first; then the level-4 file's own cut (FitCache: its block, at Monkey's
  // share of the cut budget, is larger than the tree's others).
  for (const std::string& line : tight_lines) printf("[ figures  ] %s\n", line.c_str());
  ASSERT_EQ(tight_lines.size(), 2u);
  EXPECT_NE(tight_lines[1].find("re-reads per probe expected"), std::string::npos)
      << tight_lines[1];
  EXPECT_NE(tight_lines[0].find("200 filter blocks of about 5000 keys in a block cache of 8 shards "
                                "of 160 KiB"),
            std::string::npos)
      << tight_lines[0];
  EXPECT_NE(tight_lines[0].find("the tree gets 7.50 bits/key"), std::string::npos)
      << tight_lines[0];
  // A file of 3 keys, whose filter costs hundreds of bits per key in fixed costs, in the same
  // tight cache: a filter (not the match-all one of a failed build), whatever the cut.
  std::vector<std::string> tiny_lines;
  const double tiny = LevelFourBitsPerKey("tiny", 1280 << 10, false, &tiny_lines, 3);
  EXPECT_GT(tiny, kMaxBitsPerKey);
  for (const std::string& line : tiny_lines) {
    EXPECT_EQ(line.find("cannot build"), std::string::npos) << line;
  }
}

// The tree's files were written at 10 bits/key, before its cache cut the budget to 7.5: the tree
// spends 2.5 bits/key beyond the cut's allocation until compactions rewrite them. The steering
// does not take that from the file being written (level 4's, 1% of the keys): it gets the cut's
// allocation, where the steering below the cut gave it the allocation at 5 bits/key.
TEST(BlockCacheFit, UnderACutTheFilesBeingWrittenGetTheCutsAllocation) {
  std::vector<std::string> cut_lines, ample_lines;
  std::string cut_file, ample_file;
  const double cut =
      LevelFourBitsPerKey("steered cut", 1280 << 10, false, &cut_lines, 5000, {}, 0, &cut_file);
  const double ample =
      LevelFourBitsPerKey("steered ample", 64 << 20, false, &ample_lines, 5000, {}, 0, &ample_file);
  ASSERT_EQ(cut_lines.size(), 2u);  // the tree's cut, then the file's own
  ASSERT_NE(cut_lines[0].find("the tree gets 7.50 bits/key"), std::string::npos) << cut_lines[0];
  // The LOG: an excess of about 2.5 bits/key (the files at 10 against the cut's 7.5), and the
  // budget the cut's, not less.
  EXPECT_NE(cut_file.find("excess below level 0 +2."), std::string::npos) << cut_file;
  EXPECT_NE(cut_file.find("budget steered to 7.50;"), std::string::npos) << cut_file;
  EXPECT_NE(ample_file.find("budget steered to 10.00;"), std::string::npos) << ample_file;
  // Level 4 is probed as often as the others for a hundredth of the keys: Monkey gives it far more
  // than the tree's budget, in the cut tree too (its level's filter, in the line of the file's own
  // cut, FitCache, which its block larger than the tree's others then makes).
  double level_bits = 0;
  for (const std::string& line : cut_lines) {
    const size_t at = line.find("a filter of ");
    if (at != std::string::npos) {
      sscanf(line.c_str() + at, "a filter of %*d KiB (%lf bits/key", &level_bits);
    }
  }
  EXPECT_GT(level_bits, 7.5 + 3);
  EXPECT_LT(cut, ample);
}

// One file's cut (FitCache). In 8 shards of 256 KiB the tree's 200 blocks of 6 KiB fit at its
// budget (about 25 per shard, 156 KiB), so the tree keeps 10 bits/key and a file of 5,000 keys at
// level 4 its rich filter of about 9 KiB. A file of 100,000 keys there would get a rich block of
// about 160 KiB, which overflows its shard whenever more than 15 of the others share it (expected
// 25): it gets a leaner filter, at least the budget, with a line in the LOG that says so.
TEST(BlockCacheFit, LeveledGivesALeanerFilterToAFileWhoseRichBlockWouldOverflowItsShard) {
  std::vector<std::string> small_lines, large_lines, outside_lines;
  const double small = LevelFourBitsPerKey("small", 2048 << 10, false, &small_lines, 5000);
  const double outside = LevelFourBitsPerKey("large outside", 0, false, &outside_lines, 100'000);
  const double large = LevelFourBitsPerKey("large", 2048 << 10, false, &large_lines, 100'000);
  printf(
      "[ figures  ] level 4 in 8 shards of 256 KiB: 5,000 keys %.2f bits/key; 100,000 keys "
      "%.2f (%.2f outside the cache)\n",
      small, large, outside);
  EXPECT_GT(small, 15) << "the rich filter: " << (small_lines.empty() ? "" : small_lines[0]);
  EXPECT_TRUE(small_lines.empty());
  EXPECT_GT(outside, 12.5);
  EXPECT_LT(large, outside - 2);
  EXPECT_GE(large, 10 - 0.1) << "the budget";
  ASSERT_EQ(large_lines.size(), 1u);
  printf("[ figures  ] %s\n", large_lines[0].c_str());
  EXPECT_EQ(large_lines[0].find("the tree gets"), std::string::npos) << large_lines[0];
  EXPECT_NE(large_lines[0].find("re-reads per probe expected"), std::string::npos)
      << large_lines[0];
  EXPECT_NE(large_lines[0].find("a block-cache shard of 256 KiB"), std::string::npos)
      << large_lines[0];
}

// The readers' counts of a tree whose lookups go to a few key ranges (Zipfian): of each level's
// files (the accounts of LevelFourBitsPerKey: 2, 18 and 180 files on levels 4 to 6), one in 20
// holds most of the level's sampled probes (1,900 against 5, all equally exposed), none in the key
// range of the files written at level 4 ("key0" to "key99999"), unless `holder` (0 or 1) names the
// file of level 4 that holds it: the hot one (0) or the cold one (1), with `holder_keys` keys.
std::vector<FileRange> SkewedHeat(int holder = -1, double holder_keys = 5000) {
  std::vector<FileRange> heat;
  for (const auto& [level, files] : {std::pair<int, int>{4, 2}, {5, 18}, {6, 180}}) {
    for (int i = 0; i < files; ++i) {
      const std::string name = "file" + std::to_string(level) + "_" + std::to_string(1000 + i);
      const bool hot = i % 20 == 0;
      FileRange& f = heat.emplace_back();
      f.level = f.level_now = level;
      f.keys = 5000;
      f.smallest = name + "a";
      f.largest = name + "z";
      f.counted = true;
      f.sampled_probes = hot ? 1900.0 : 5.0;
      f.exposure = 1;
    }
  }
  if (holder >= 0) {
    heat[holder].smallest = "key0";
    heat[holder].largest = "key99999";
    heat[holder].keys = holder_keys;
  }
  return heat;
}

// Where lookups go to a few key ranges, their blocks stay cached in shards the others overflow, so
// a probe is re-read less often than where every block is probed alike. The tight cache of
// LeveledSpendsLess... (8 shards of 160 KiB): with the readers' counts of such lookups, the tree
// keeps more of its budget, and the LOG says the blocks are priced as the readers counted. With
// counts of lookups that go everywhere alike, the cut is the same as without counts.
TEST(BlockCacheFit, LeveledCutsLessWhereLookupsGoToAFewBlocks) {
  std::vector<std::string> alike_lines, skewed_lines, even_lines;
  const double alike = LevelFourBitsPerKey("cut alike", 1280 << 10, false, &alike_lines, 5000);
  const double skewed =
      LevelFourBitsPerKey("cut skewed", 1280 << 10, false, &skewed_lines, 5000, SkewedHeat(), 0.9);
  std::vector<FileRange> even = SkewedHeat();
  for (FileRange& f : even) f.sampled_probes = 100;
  const double evenly =
      LevelFourBitsPerKey("cut evenly", 1280 << 10, false, &even_lines, 5000, even, 0.9);
  printf(
      "[ figures  ] level 4 in 8 shards of 160 KiB: %.2f bits/key, %.2f under skewed lookups, "
      "%.2f under counted uniform ones\n",
      alike, skewed, evenly);
  for (const std::string& line : skewed_lines) printf("[ figures  ] %s\n", line.c_str());
  EXPECT_GT(skewed, alike + 2);
  EXPECT_EQ(evenly, alike);
  ASSERT_EQ(alike_lines.size(), 2u);  // the tree's cut, then the file's own
  for (const std::string& line : alike_lines) {
    EXPECT_NE(line.find("probed alike"), std::string::npos) << line;
  }
  bool priced_as_counted = false;
  for (const std::string& line : skewed_lines) {
    priced_as_counted |= line.find("the tree gets") != std::string::npos &&
                         line.find("probed as the readers counted") != std::string::npos;
  }
  EXPECT_TRUE(priced_as_counted) << "the tree is cut less, not uncut, and the LOG says how";
}

// One file's cut with the readers' counts: the file of 100,000 keys at level 4 whose rich block
// overflows its shard (LeveledGivesALeanerFilter...) keeps more of its rich filter when its key
// range is the one its level's lookups go to than when it is its level's cold one. Its rate is
// against its level's mean file (BlockRateOf), and this level has two, the hot one and the cold
// one, each of as many keys as the new file: the hot range's file is probed 1.9x as often as the
// mean block, the cold one's 0.12x (the prior samples keep few counts near alike), so the hot
// file's block is cut less, not kept whole. (The hot range's heat also makes its filter richer
// than its level's: ForHeat.)
TEST(BlockCacheFit, LeveledKeepsMoreOfTheFilterOfAFileLookupsProbeMore) {
  std::vector<std::string> cold_lines, hot_lines, outside_lines;
  const double cold = LevelFourBitsPerKey("one cold", 2048 << 10, false, &cold_lines, 100'000,
                                          SkewedHeat(1, 100'000), 0.9);
  const double hot = LevelFourBitsPerKey("one hot", 2048 << 10, false, &hot_lines, 100'000,
                                         SkewedHeat(0, 100'000), 0.9);
  const double outside = LevelFourBitsPerKey("one hot outside", 0, false, &outside_lines, 100'000,
                                             SkewedHeat(0, 100'000), 0.9);
  printf(
      "[ figures  ] 100,000 keys at level 4 in 8 shards of 256 KiB: cold %.2f bits/key, hot "
      "%.2f (%.2f outside the cache)\n",
      cold, hot, outside);
  for (const std::string& line : cold_lines) printf("[ figures  ] %s\n", line.c_str());
  for (const std::string& line : hot_lines) printf("[ figures  ] %s\n", line.c_str());
  EXPECT_TRUE(outside_lines.empty());
  EXPECT_LT(cold, hot - 0.5);
  EXPECT_LT(hot, outside - 0.5);
  ASSERT_EQ(hot_lines.size(), 1u);
  ASSERT_EQ(cold_lines.size(), 1u);
  EXPECT_NE(hot_lines[0].find("probed 1.9x as often as the mean block"), std::string::npos)
      << hot_lines[0];
  EXPECT_NE(cold_lines[0].find("re-reads per probe expected"), std::string::npos) << cold_lines[0];
}
}  // namespace
}  // namespace sstfilter
