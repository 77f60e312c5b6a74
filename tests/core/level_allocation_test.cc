// SPDX-License-Identifier: Apache-2.0
#include "core/level_allocation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "core/filter_spec.h"
#include "core/format.h"
#include "core/sizing.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

double SumOfRates(const std::vector<LevelFilter>& levels) {
  double sum = 0;
  for (const LevelFilter& l : levels) sum += l.ExpectedFpRate();
  return sum;
}

double AverageBits(const std::vector<LevelFilter>& levels) {
  double bits = 0;
  for (const LevelFilter& l : levels) bits += l.share * l.ExpectedBitsPerKey();
  return bits;
}

TEST(LevelAllocation, SharesGrowBySizeRatio) {
  const std::vector<double> shares = LevelShares(4, 10).value();
  // Level 0 (flushes) as large as level 1, then x10: 1, 1, 10, 100 out of 112.
  EXPECT_NEAR(shares[0], 1.0 / 112, 1e-12);
  EXPECT_NEAR(shares[1], 1.0 / 112, 1e-12);
  EXPECT_NEAR(shares[3], 100.0 / 112, 1e-12);
  EXPECT_NEAR(std::accumulate(shares.begin(), shares.end(), 0.0), 1.0, 1e-12);
}

int MixedLevels(const std::vector<LevelFilter>& levels) {
  int mixed = 0;
  for (const LevelFilter& l : levels) {
    EXPECT_GE(l.upper_fraction, 0);
    EXPECT_LT(l.upper_fraction, 1);
    if (l.upper_fraction > 0) {
      ++mixed;
      EXPECT_TRUE(l.upper.has_filter);
      EXPECT_GT(l.upper.bits_per_key, l.base.bits_per_key);
      EXPECT_LT(l.upper.fp_rate, l.base.fp_rate);
    }
  }
  return mixed;
}

// The budget is spent exactly (the mixed level takes what whole filters leave), unless every level
// already has the best filter there is; at most one level mixes two filters.
TEST(LevelAllocation, SpendsTheBudgetExactlyWithAtMostOneMixedLevel) {
  for (const FilterCostModel model : {FilterCostModel::kSstfilter, FilterCostModel::kIdealBloom}) {
    for (int levels = 1; levels <= 8; ++levels) {
      for (double ratio : {2.0, 4.0, 10.0, 20.0}) {
        for (double budget : {0.5, 2.0, 5.0, 8.0, 10.0, 14.0, 20.0, 40.0}) {
          SCOPED_TRACE(std::to_string(levels) + " levels, ratio " + std::to_string(ratio) + ", " +
                       std::to_string(budget) + " bits/key");
          const auto a = AllocateLevels(levels, ratio, budget, model).value();
          ASSERT_EQ(a.size(), static_cast<size_t>(levels));
          EXPECT_LE(MixedLevels(a), 1);
          EXPECT_LE(AverageBits(a), budget * (1 + 1e-9));
          if (AverageBits(a) < budget * (1 - 1e-9)) {
            // Only when more budget would buy nothing.
            EXPECT_EQ(SumOfRates(AllocateLevels(levels, ratio, 2 * budget, model).value()),
                      SumOfRates(a));
          }
          // And it never does worse than the uniform allocation of the same budget.
          EXPECT_LE(SumOfRates(a),
                    SumOfRates(UniformAllocation(levels, ratio, budget, model).value()) + 1e-12);
        }
      }
    }
  }
}

// One level: the uniform allocation's filter, or a mixture of two around the budget that beats it.
TEST(LevelAllocation, OneLevelMixesTheFiltersAroundItsBudget) {
  for (const FilterCostModel model : {FilterCostModel::kSstfilter, FilterCostModel::kIdealBloom}) {
    for (double budget : {3.0, 7.5, 10.0, 13.68, 16.0, 25.0}) {
      SCOPED_TRACE(std::to_string(budget) + " bits/key");
      const LevelFilter a = AllocateLevels(1, 10, budget, model).value()[0];
      const LevelFilter u = UniformAllocation(1, 10, budget, model).value()[0];
      EXPECT_EQ(u.upper_fraction, 0);
      EXPECT_LE(a.ExpectedFpRate(), u.base.fp_rate);
      EXPECT_NEAR(a.ExpectedBitsPerKey(), budget, 1e-9);
      EXPECT_LE(a.base.bits_per_key, budget);
      if (a.upper_fraction > 0) {
        EXPECT_GT(a.upper.bits_per_key, budget);
      }
    }
  }
}

// Monkey's closed form for ideal Bloom filters: p_i = c * w_i with
// c = exp(-B ln^2 2 - sum_i w_i ln w_i), as long as every p_i < 1.
TEST(LevelAllocation, MatchesMonkeysClosedFormForBloomOnlyTrees) {
  const double ln2sq = std::log(2.0) * std::log(2.0);
  for (int levels : {3, 4, 5, 6}) {
    for (double budget : {8.0, 10.0, 16.0}) {
      const std::vector<double> w = LevelShares(levels, 10).value();
      double entropy = 0;
      for (double x : w) entropy -= x * std::log(x);
      const double c = std::exp(-budget * ln2sq + entropy);
      const auto a = AllocateLevels(levels, 10, budget, FilterCostModel::kIdealBloom).value();
      for (int i = 0; i < levels; ++i) {
        ASSERT_LT(c * w[i], 1.0);
        // The model's offers come in 0.01 bits/key steps, rates in steps of 0.5%, so the discrete
        // optimum differs slightly from the continuous one. Levels holding under 0.5% of the keys
        // absorb the left-over budget without changing the sum, which is checked below; the
        // levels that matter follow the closed form.
        if (w[i] < 0.005) continue;
        EXPECT_NEAR(a[i].ExpectedFpRate() / (c * w[i]), 1.0, 0.05)
            << levels << " levels, " << budget << " bits/key, level " << i;
      }
      // The sum of rates shrinks by e^{H(w)} / L against the uniform allocation.
      const double uniform = levels * std::exp(-budget * ln2sq);
      EXPECT_NEAR(SumOfRates(a) / uniform, std::exp(entropy) / levels, 0.03);
    }
  }
}

TEST(LevelAllocation, RealFiltersSpendLessOnDeeperLevelsAndBeatUniform) {
  for (const uint64_t keys : {uint64_t{0}, uint64_t{2000}, uint64_t{1000000}}) {
    const auto a = AllocateLevels(5, 10, 10, FilterCostModel::kSstfilter, keys).value();
    for (int i = 2; i < 5; ++i) {
      EXPECT_LE(a[i].ExpectedBitsPerKey(), a[i - 1].ExpectedBitsPerKey()) << i;
    }
    const auto u = UniformAllocation(5, 10, 10, FilterCostModel::kSstfilter, keys).value();
    EXPECT_LT(SumOfRates(a), 0.6 * SumOfRates(u)) << keys << " keys per filter";
  }
}

// Bits per key of the filter of a spec for num_keys keys, as the allocation prices them: the
// bytes FilterBytes gives, trailer included.
double TableBitsPerKey(const FilterSpec& spec, uint64_t num_keys) {
  return static_cast<double>(FilterBytes(spec, num_keys).value()) * 8 /
         static_cast<double>(num_keys);
}

// Priced at a key count, the allocation's costs and rates are those of the filters it names at
// that count, so its budget holds for the bytes really written.
TEST(LevelAllocation, PricedAtAKeyCountItsFiltersKeepTheBudget) {
  for (const uint64_t keys : {uint64_t{100}, uint64_t{2000}, uint64_t{19483}, uint64_t{20000},
                              uint64_t{200000}, uint64_t{1000000}, uint64_t{10000000}}) {
    for (double budget : {2.0, 5.0, 8.0, 9.88, 10.0, 14.0, 20.0}) {
      for (int levels : {1, 3, 5, 7}) {
        SCOPED_TRACE(std::to_string(keys) + " keys, " + std::to_string(budget) + " bits/key, " +
                     std::to_string(levels) + " levels");
        const auto a =
            AllocateLevels(levels, 10, budget, FilterCostModel::kSstfilter, keys).value();
        double bits = 0;
        for (const LevelFilter& l : a) {
          for (const FilterChoice* c : {&l.base, &l.upper}) {
            const double weight = c == &l.base ? 1 - l.upper_fraction : l.upper_fraction;
            if (!c->has_filter || weight == 0) continue;
            const double real_bits = TableBitsPerKey(c->spec, keys);
            EXPECT_NEAR(c->bits_per_key, real_bits, 1e-9) << c->spec.ToString();
            bits += weight * l.share * real_bits;
            // The nominal rate; the estimate at the key count adds the hash collisions, or gains
            // from rounding up to whole blocks or buckets.
            EXPECT_LE(EstimatedFpRate(c->spec, keys).value(),
                      c->fp_rate + HashCollisionRate(keys) + 1e-15)
                << c->spec.ToString();
          }
        }
        EXPECT_LE(bits, budget * (1 + 1e-9));
        EXPECT_LE(
            SumOfRates(a),
            SumOfRates(
                UniformAllocation(levels, 10, budget, FilterCostModel::kSstfilter, keys).value()) +
                1e-12);
      }
    }
  }
}

// The cheapest kind for a rate depends on the set's size: a fuse table needs about 1.08 cells per
// key at a million keys but 1.3 at 2,000, a Ribbon table 1.12 at a million and 1.02 at 2,000. So
// every level takes Ribbon filters when files are small and fuse filters when they are large; at
// nominal costs (unlimited keys) every level takes fuse.
TEST(LevelAllocation, TheCheapestKindDependsOnTheKeyCount) {
  const auto small = AllocateLevels(5, 10, 10, FilterCostModel::kSstfilter, 2000).value();
  const auto large = AllocateLevels(5, 10, 10, FilterCostModel::kSstfilter, 1000000).value();
  const auto nominal = AllocateLevels(5, 10, 10, FilterCostModel::kSstfilter).value();
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE("level " + std::to_string(i));
    EXPECT_EQ(large[i].base.spec.kind(), BumpedRibbon::kId) << large[i].base.spec.ToString();
    EXPECT_EQ(nominal[i].base.spec.kind(), BumpedRibbon::kId) << nominal[i].base.spec.ToString();
    EXPECT_EQ(small[i].base.spec.kind(), Ribbon::kId) << small[i].base.spec.ToString();
  }
  // Why: at 2,000 keys a Ribbon filter of 0.1% (10-bit fingerprints) costs less than the fuse
  // filter and the semi-sorted cuckoo filter of 0.1%, and the same as a bumped one (whose small
  // sets are the same wrapped table); at a million keys, more than the fuse one, which costs more
  // than the bumped one.
  const FilterSpec ribbon(Ribbon::ForFpRate(0.001).value());
  const FilterSpec bumped(BumpedRibbon::ForFpRate(0.001).value());
  const FilterSpec fuse(Fuse::ForFpRate(0.001).value());
  const FilterSpec cuckoo(Cuckoo::ForFpRate(0.001).value());
  EXPECT_LT(TableBitsPerKey(ribbon, 2000), TableBitsPerKey(fuse, 2000));
  EXPECT_LT(TableBitsPerKey(ribbon, 2000), TableBitsPerKey(cuckoo, 2000));
  EXPECT_EQ(TableBitsPerKey(ribbon, 2000), TableBitsPerKey(bumped, 2000));
  EXPECT_GT(TableBitsPerKey(ribbon, 1000000), TableBitsPerKey(fuse, 1000000));
  EXPECT_GT(TableBitsPerKey(fuse, 1000000), TableBitsPerKey(bumped, 1000000));
}

// A mixed level's draw is uniform over key sets: the share of random smallest hashes that take
// the upper filter is the fraction, within a 5-sigma binomial bound; a level that does not mix
// always takes its base.
TEST(LevelAllocation, ChoiceForKeysDrawsTheUpperFilterAtItsFraction) {
  LevelFilter level;
  level.base.fp_rate = 0.01;
  level.upper.has_filter = true;
  level.upper.fp_rate = 0.005;
  std::mt19937_64 rng(91);
  constexpr int kDraws = 100000;
  for (double fraction : {0.0, 0.1, 0.5, 0.93}) {
    level.upper_fraction = fraction;
    int upper = 0;
    for (int i = 0; i < kDraws; ++i) upper += &ChoiceForKeys(level, rng()) == &level.upper;
    if (fraction == 0) {
      EXPECT_EQ(upper, 0);
      continue;
    }
    EXPECT_NEAR(upper, fraction * kDraws, testing::BinomialTolerance(kDraws, fraction)) << fraction;
  }
}

// Against the uniform allocation of the same budget, and the figures behind docs/filters.md's
// level table: the sum of rates with the mixed level, and with its base filter alone (the same
// allocation of whole filters, the mixed level's extra bits unspent).
TEST(LevelAllocation, HalvesTheUniformSumOfRates) {
  for (const uint64_t keys : {uint64_t{2000}, uint64_t{1000000}}) {
    const auto a = AllocateLevels(5, 10, 10, FilterCostModel::kSstfilter, keys).value();
    const auto u = UniformAllocation(5, 10, 10, FilterCostModel::kSstfilter, keys).value();
    double whole = 0;
    for (const LevelFilter& l : a) whole += l.base.fp_rate;
    printf(
        "[ figures  ] 5 levels, 10 bits/key, %llu keys per filter: sum of rates %.4f%% "
        "(without the mixed level's upper filter %.4f%%; uniform %.4f%%)\n",
        static_cast<unsigned long long>(keys), 100 * SumOfRates(a), 100 * whole,
        100 * SumOfRates(u));
    for (size_t i = 0; i < a.size(); ++i) {
      printf("[ figures  ]   level %zu: %s, %.2f bits/key, rate %.3g", i,
             a[i].base.spec.ToString().c_str(), a[i].base.bits_per_key, a[i].base.fp_rate);
      if (a[i].upper_fraction > 0) {
        printf("; %.1f%% of filters %s, %.2f bits/key, rate %.3g; expected %.2f bits/key, %.3g",
               100 * a[i].upper_fraction, a[i].upper.spec.ToString().c_str(),
               a[i].upper.bits_per_key, a[i].upper.fp_rate, a[i].ExpectedBitsPerKey(),
               a[i].ExpectedFpRate());
      }
      printf("\n");
    }
    EXPECT_NEAR(AverageBits(a), 10, 1e-9);
    EXPECT_LT(SumOfRates(a), 0.5 * SumOfRates(u));
  }
}

TEST(LevelAllocation, RejectsBadArguments) {
  EXPECT_FALSE(AllocateLevels(0, 10, 10).ok());
  EXPECT_FALSE(AllocateLevels(65, 10, 10).ok());
  EXPECT_FALSE(AllocateLevels(4, 1, 10).ok());
  EXPECT_FALSE(AllocateLevels(4, std::nan(""), 10).ok());
  EXPECT_FALSE(AllocateLevels(4, 10, 0).ok());
  EXPECT_FALSE(AllocateLevels(4, 10, 1000).ok());
  EXPECT_FALSE(UniformAllocation(4, 10, -1).ok());
  EXPECT_FALSE(LevelShares(0, 10).ok());
  EXPECT_FALSE(AllocateShares({}, 10).ok());
  EXPECT_FALSE(AllocateShares({0, 0}, 10).ok());
  EXPECT_FALSE(AllocateShares({0.5, -0.1}, 10).ok());
  EXPECT_FALSE(AllocateShares({0.5, 0.5}, 10, FilterCostModel::kSstfilter, 0, {1}).ok());
  EXPECT_FALSE(AllocateShares({0.5, 0.5}, 10, FilterCostModel::kSstfilter, 0, {1, -1}).ok());
  EXPECT_FALSE(
      AllocateShares({0.5, 0.5}, 10, FilterCostModel::kSstfilter, 0, {1, std::nan("")}).ok());
}

// Over a real tree's shares, with no probes given, the allocation is Monkey's: the same as
// AllocateLevels over the model's shares.
TEST(LevelAllocation, SharesWithoutProbesAreMonkeys) {
  for (const uint64_t keys : {uint64_t{0}, uint64_t{2000}, uint64_t{1000000}}) {
    const std::vector<double> shares = LevelShares(7, 10).value();
    const auto a = AllocateShares(shares, 10, FilterCostModel::kSstfilter, keys).value();
    const auto b = AllocateLevels(7, 10, 10, FilterCostModel::kSstfilter, keys).value();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].base.spec.ToString(), b[i].base.spec.ToString()) << i;
      EXPECT_EQ(a[i].upper_fraction, b[i].upper_fraction) << i;
    }
    // Shares are normalised: ten times the keys on every level is the same tree.
    std::vector<double> scaled = shares;
    for (double& x : scaled) x *= 10;
    EXPECT_EQ(AllocateShares(scaled, 10, FilterCostModel::kSstfilter, keys)
                  .value()[6]
                  .base.spec.ToString(),
              a[6].base.spec.ToString());
  }
}

// Probes in proportion to the levels' keys (an ordered tree, whose levels hold disjoint key
// ranges, so that a lookup probes about one filter) make every level's filter the same, within
// one step of the frontier (a level may mix two): the budget's filter everywhere. Probes of 1 per
// level (random keys) give Monkey's rich upper levels. A level no lookup probes gets no filter.
TEST(LevelAllocation, ProbesMoveTheAllocation) {
  const std::vector<double> shares = {0.001, 0, 0, 0.001, 0.008, 0.09, 0.9};
  for (const uint64_t keys : {uint64_t{2000}, uint64_t{1000000}}) {
    SCOPED_TRACE(keys);
    const auto ordered =
        AllocateShares(shares, 10, FilterCostModel::kSstfilter, keys, shares).value();
    const auto random = AllocateShares(shares, 10, FilterCostModel::kSstfilter, keys,
                                       std::vector<double>(shares.size(), 1))
                            .value();
    double bits = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
      if (shares[i] == 0) continue;
      bits += shares[i] * ordered[i].ExpectedBitsPerKey();
      // Every level within one step of the last level's filter.
      EXPECT_LE(ordered[i].base.fp_rate, 2 * ordered[6].base.fp_rate + 1e-12) << i;
      EXPECT_GE(ordered[i].Largest().fp_rate, 0.5 * ordered[6].Largest().fp_rate - 1e-12) << i;
    }
    EXPECT_NEAR(bits, 10, 1e-6);
    EXPECT_GT(random[4].ExpectedBitsPerKey(), ordered[4].ExpectedBitsPerKey() + 4);
    EXPECT_LT(random[6].ExpectedBitsPerKey(), ordered[6].ExpectedBitsPerKey());
    // The expected wasted reads each allocation is built for are lower under its own probes.
    auto wasted = [&](const std::vector<LevelFilter>& a, const std::vector<double>& probes) {
      double sum = 0;
      for (size_t i = 0; i < a.size(); ++i) sum += probes[i] * a[i].ExpectedFpRate();
      return sum;
    };
    EXPECT_LE(wasted(ordered, shares), wasted(random, shares));
    EXPECT_LE(wasted(random, std::vector<double>(7, 1)),
              wasted(ordered, std::vector<double>(7, 1)));
    const auto unprobed =
        AllocateShares(shares, 10, FilterCostModel::kSstfilter, keys, {1, 0, 0, 1, 0, 1, 1})
            .value();
    EXPECT_FALSE(unprobed[4].base.has_filter);
    EXPECT_EQ(unprobed[4].upper_fraction, 0);
  }
}

}  // namespace
}  // namespace sstfilter
