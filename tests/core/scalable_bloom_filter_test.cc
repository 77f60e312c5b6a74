// SPDX-License-Identifier: Apache-2.0
// ScalableBloomFilter (include/sstfilter/scalable_bloom_filter.h): options and their errors, the
// rate bound measured after growing 100x, the non-scaling mode, and the end of growth.
#include "sstfilter/scalable_bloom_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/test_util.h"

namespace sstfilter {
namespace {

TEST(ScalableBloomFilter, BadOptionsAreErrorsWithMessages) {
  for (const ScalingOptions& bad :
       {ScalingOptions{0.5, 0.5, true}, ScalingOptions{2, 0, true}, ScalingOptions{2, 1, true},
        ScalingOptions{std::nan(""), 0.5, true}, ScalingOptions{2, std::nan(""), true},
        ScalingOptions{40000, 0.5, true}}) {
    const auto r = ScalableBloomFilter::Create(1000, 0.01, bad);
    EXPECT_FALSE(r.ok()) << bad.growth << " " << bad.tightening;
    EXPECT_FALSE(r.error().empty());
  }
  EXPECT_FALSE(ScalableBloomFilter::Create(0, 0.01).ok());
  EXPECT_FALSE(ScalableBloomFilter::Create(1000, 0).ok());
  EXPECT_FALSE(ScalableBloomFilter::Create(1000, 1).ok());
  EXPECT_FALSE(ScalableBloomFilter::Create(1000, std::nan("")).ok());
}

// Grown 100x past its first capacity, the filter keeps every key and its rate stays under the
// bound: measured on absent keys within 5 binomial sigmas of the rate its bits give, and that
// rate at most the rate asked for, give or take the 3% by which the blocked layout's sizing model
// can read low (see scalable_bloom_filter.h; measured 0.9939% at the defaults).
TEST(ScalableBloomFilter, GrownHundredfoldKeepsItsKeysAndItsBound) {
  constexpr uint64_t kInitial = 10'000, kKeys = 100 * kInitial;
  const std::vector<uint64_t> keys = testing::KeyHashes(50, kKeys);
  const std::vector<uint64_t> absent = testing::KeyHashes(51, 2'000'000);
  for (const double tightening : {0.5, 0.8}) {
    constexpr double kRate = 0.01;
    auto created = ScalableBloomFilter::Create(kInitial, kRate, ScalingOptions{2, tightening});
    ASSERT_TRUE(created.ok()) << created.error();
    ScalableBloomFilter filter = std::move(created).value();
    uint64_t added = 0, reported = 0;
    for (const uint64_t h : keys) {
      const AddOutcome outcome = filter.AddHash(h);
      ASSERT_NE(outcome, AddOutcome::kFull);
      added += outcome == AddOutcome::kAdded;
      reported += outcome == AddOutcome::kMayBePresent;
    }
    EXPECT_EQ(filter.size(), added);
    EXPECT_EQ(added + reported, kKeys);
    EXPECT_LT(reported, kKeys * kRate);  // each was a false positive, at a rate below the bound
    // 10k, 20k, ... 640k: 1.27M keys of capacity in 7 filters.
    EXPECT_EQ(filter.num_filters(), 7u);
    EXPECT_EQ(filter.capacity(), 1'270'000u);
    for (const uint64_t h : keys) ASSERT_TRUE(filter.MayContainHash(h));

    const double expected = filter.ExpectedFpRate();
    EXPECT_LE(expected, 1.03 * kRate);
    uint64_t false_positives = 0;
    for (const uint64_t h : absent) false_positives += filter.MayContainHash(h);
    EXPECT_NEAR(static_cast<double>(false_positives), expected * absent.size(),
                testing::BinomialTolerance(absent.size(), expected));
    std::printf(
        "[ figures  ] growth 2, tightening %.1f: %llu keys (100x the first capacity) in %zu "
        "filters, %.2f bits/key, measured rate %.4f%% (bits give %.4f%%, bound %.2f%%)\n",
        tightening, static_cast<unsigned long long>(kKeys), filter.num_filters(),
        8.0 * filter.memory_bytes() / kKeys, 100.0 * false_positives / absent.size(),
        100 * expected, 100 * kRate);
  }
}

TEST(ScalableBloomFilter, NonScalingReportsFullAtCapacity) {
  auto created = ScalableBloomFilter::Create(1000, 0.01, ScalingOptions{2, 0.5, false});
  ASSERT_TRUE(created.ok()) << created.error();
  ScalableBloomFilter filter = std::move(created).value();
  const std::vector<uint64_t> keys = testing::KeyHashes(52, 2000);
  std::vector<uint64_t> in;
  size_t i = 0;
  for (; i < keys.size(); ++i) {
    const AddOutcome outcome = filter.AddHash(keys[i]);
    if (outcome == AddOutcome::kFull) break;
    if (outcome == AddOutcome::kAdded) in.push_back(keys[i]);
  }
  ASSERT_LT(i, keys.size());
  EXPECT_EQ(filter.size(), 1000u);
  EXPECT_EQ(in.size(), 1000u);
  EXPECT_EQ(filter.num_filters(), 1u);
  for (const uint64_t h : in) ASSERT_TRUE(filter.MayContainHash(h));
  // Full stays full (the key that found it full is still not in), and a key already in still
  // answers kMayBePresent.
  EXPECT_FALSE(filter.MayContainHash(keys[i]));
  EXPECT_EQ(filter.AddHash(keys[i]), AddOutcome::kFull);
  EXPECT_EQ(filter.AddHash(in[0]), AddOutcome::kMayBePresent);
}

// A grow that cannot happen leaves the filter as it was. Here the second filter's rate, 1e-11, is
// beyond what a blocked Bloom filter can be sized for: once the first holds its 10 keys, every
// add answers kFull and the filter keeps its one filter, its capacity and its keys.
TEST(ScalableBloomFilter, AFailedGrowChangesNothing) {
  auto created = ScalableBloomFilter::Create(10, 0.01, ScalingOptions{1, 1e-9});
  ASSERT_TRUE(created.ok()) << created.error();
  ScalableBloomFilter filter = std::move(created).value();
  const std::vector<uint64_t> keys = testing::KeyHashes(54, 40);
  std::vector<uint64_t> in;
  size_t full = 0;
  for (const uint64_t h : keys) {
    const AddOutcome outcome = filter.AddHash(h);
    if (outcome == AddOutcome::kAdded) in.push_back(h);
    full += outcome == AddOutcome::kFull;
  }
  EXPECT_GE(full, 25u);  // 30 keys after the first 10, less any false positive
  EXPECT_EQ(in.size(), 10u);
  EXPECT_EQ(filter.num_filters(), 1u);
  EXPECT_EQ(filter.capacity(), 10u);
  EXPECT_EQ(filter.size(), 10u);
  for (const uint64_t h : in) ASSERT_TRUE(filter.MayContainHash(h));
  EXPECT_FALSE(ScalableBloomFilter::Create(uint64_t{1} << 63, 0.01).ok());  // too large
}

TEST(ScalableBloomFilter, AMovedFromFilterTakesNothingAndMatchesEverything) {
  auto created = ScalableBloomFilter::Create(100, 0.01);
  ASSERT_TRUE(created.ok());
  ScalableBloomFilter filter = std::move(created).value();
  ASSERT_EQ(filter.Add("a"), AddOutcome::kAdded);
  ScalableBloomFilter moved = std::move(filter);
  EXPECT_TRUE(moved.MayContain("a"));
  EXPECT_EQ(moved.size(), 1u);
  EXPECT_EQ(filter.Add("b"), AddOutcome::kFull);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(filter.MayContain("anything"));
  EXPECT_EQ(filter.size(), 0u);
  EXPECT_EQ(filter.num_filters(), 0u);
}

// Rates that shrink a thousandfold per filter soon fall below what sstfilter can size: the filter
// then answers kFull, and keeps what it has.
TEST(ScalableBloomFilter, GrowthEndsInFullNotInACrash) {
  auto created = ScalableBloomFilter::Create(10, 0.01, ScalingOptions{2, 0.001});
  ASSERT_TRUE(created.ok()) << created.error();
  ScalableBloomFilter filter = std::move(created).value();
  const std::vector<uint64_t> keys = testing::KeyHashes(53, 10'000);
  std::vector<uint64_t> in;
  size_t full = 0;
  for (const uint64_t h : keys) {
    const AddOutcome outcome = filter.AddHash(h);
    full += outcome == AddOutcome::kFull;
    if (outcome == AddOutcome::kAdded) in.push_back(h);
    if (full > 0) {
      ASSERT_NE(outcome, AddOutcome::kAdded);  // full stays full
    }
  }
  EXPECT_GT(full, 0u);
  EXPECT_LT(filter.num_filters(), 10u);
  EXPECT_EQ(filter.size(), in.size());
  for (const uint64_t h : in) ASSERT_TRUE(filter.MayContainHash(h));
}

}  // namespace
}  // namespace sstfilter
