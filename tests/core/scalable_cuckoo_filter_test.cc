// SPDX-License-Identifier: Apache-2.0
// ScalableCuckooFilter (include/sstfilter/scalable_cuckoo_filter.h): options and their errors, the
// union bound measured after growing 100x, deletion across filters (never losing another key),
// add-if-absent, and the non-scaling mode.
#include "sstfilter/scalable_cuckoo_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tests/test_util.h"

namespace sstfilter {
namespace {

ScalableCuckooFilter Make(uint64_t capacity, double rate, ScalingOptions options = {}) {
  auto made = ScalableCuckooFilter::Create(capacity, rate, options);
  EXPECT_TRUE(made.ok()) << made.error();
  return std::move(made).value();
}

TEST(ScalableCuckooFilter, BadArgumentsAreErrorsWithMessages) {
  EXPECT_FALSE(ScalableCuckooFilter::Create(0, 0.01).ok());
  EXPECT_FALSE(ScalableCuckooFilter::Create(1000, 0).ok());
  EXPECT_FALSE(ScalableCuckooFilter::Create(1000, std::nan("")).ok());
  EXPECT_FALSE(ScalableCuckooFilter::Create(1000, 0.01, ScalingOptions{0.5}).ok());
  EXPECT_FALSE(ScalableCuckooFilter::Create(1000, 0.01, ScalingOptions{2, 1}).ok());
  const auto too_tight = ScalableCuckooFilter::Create(1000, 1e-12);  // needs 34-bit fingerprints
  ASSERT_FALSE(too_tight.ok());
  EXPECT_NE(too_tight.error().find("32 bits"), std::string::npos) << too_tight.error();
}

// Grown 100x, every key is found and the measured rate is within 5 binomial sigmas below the
// union bound of the filters made, which is below the rate asked for.
TEST(ScalableCuckooFilter, GrownHundredfoldKeepsItsKeysAndItsBound) {
  constexpr uint64_t kInitial = 10'000, kKeys = 100 * kInitial;
  constexpr double kRate = 0.01;
  const std::vector<uint64_t> keys = testing::KeyHashes(60, kKeys);
  const std::vector<uint64_t> absent = testing::KeyHashes(61, 2'000'000);
  for (const double tightening : {0.5, 0.8}) {
    ScalableCuckooFilter filter = Make(kInitial, kRate, ScalingOptions{2, tightening});
    for (const uint64_t h : keys) ASSERT_EQ(filter.AddHash(h), AddOutcome::kAdded);
    EXPECT_EQ(filter.size(), kKeys);
    EXPECT_GE(filter.capacity(), kKeys);
    for (const uint64_t h : keys) ASSERT_TRUE(filter.MayContainHash(h));
    const double bound = filter.FpRateBound();
    EXPECT_LT(bound, kRate);
    uint64_t false_positives = 0;
    for (const uint64_t h : absent) false_positives += filter.MayContainHash(h);
    EXPECT_LE(static_cast<double>(false_positives),
              bound * absent.size() + testing::BinomialTolerance(absent.size(), bound));
    std::printf(
        "[ figures  ] growth 2, tightening %.1f: %llu keys (100x the first capacity) in %zu "
        "filters, %.2f bits/key, measured rate %.4f%% (union bound %.4f%%, asked %.2f%%)\n",
        tightening, static_cast<unsigned long long>(kKeys), filter.num_filters(),
        8.0 * filter.memory_bytes() / kKeys, 100.0 * false_positives / absent.size(), 100 * bound,
        100 * kRate);
  }
}

// Erasing added keys in any order never loses another key: a fingerprint found in two filters is
// left alone (kAmbiguous), so what stays is only ever an extra false positive.
TEST(ScalableCuckooFilter, EraseNeverLosesAnotherKey) {
  ScalableCuckooFilter filter = Make(2'000, 0.05, ScalingOptions{2, 0.5});
  std::vector<uint64_t> keys = testing::KeyHashes(62, 100'000);
  for (const uint64_t h : keys) ASSERT_EQ(filter.AddHash(h), AddOutcome::kAdded);
  ASSERT_GT(filter.num_filters(), 4u);
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(3));
  const size_t half = keys.size() / 2;
  uint64_t erased = 0, ambiguous = 0;
  for (size_t i = 0; i < half; ++i) {
    const EraseOutcome outcome = filter.EraseHash(keys[i]);
    ASSERT_NE(outcome, EraseOutcome::kAbsent) << i;  // every key erased was added
    erased += outcome == EraseOutcome::kErased;
    ambiguous += outcome == EraseOutcome::kAmbiguous;
  }
  for (size_t i = half; i < keys.size(); ++i) ASSERT_TRUE(filter.MayContainHash(keys[i])) << i;
  EXPECT_EQ(filter.size(), keys.size() - erased);
  // Ambiguity needs a false positive in a second filter: at most the bound, here 5%, of erases.
  EXPECT_LT(ambiguous, 0.05 * half);
  EXPECT_GT(erased, 0.9 * half);
  std::printf("[ figures  ] %zu erases over %zu filters: %llu erased, %llu ambiguous (kept)\n",
              half, filter.num_filters(), static_cast<unsigned long long>(erased),
              static_cast<unsigned long long>(ambiguous));
}

TEST(ScalableCuckooFilter, CopiesAddIfAbsentAndCount) {
  ScalableCuckooFilter filter = Make(100, 0.01);
  EXPECT_EQ(filter.AddIfAbsent("a"), AddOutcome::kAdded);
  EXPECT_EQ(filter.AddIfAbsent("a"), AddOutcome::kMayBePresent);
  EXPECT_EQ(filter.Add("a"), AddOutcome::kAdded);  // a second copy
  EXPECT_EQ(filter.Count("a"), 2u);
  EXPECT_EQ(filter.Erase("a"), EraseOutcome::kErased);
  EXPECT_TRUE(filter.MayContain("a"));
  EXPECT_EQ(filter.Erase("a"), EraseOutcome::kErased);
  EXPECT_FALSE(filter.MayContain("a"));
  EXPECT_EQ(filter.Erase("a"), EraseOutcome::kAbsent);
}

TEST(ScalableCuckooFilter, NonScalingReportsFullAtCapacity) {
  ScalableCuckooFilter filter = Make(1000, 0.01, ScalingOptions{2, 0.5, false});
  const std::vector<uint64_t> keys = testing::KeyHashes(63, 2000);
  size_t added = 0;
  for (; added < keys.size(); ++added) {
    if (filter.AddHash(keys[added]) == AddOutcome::kFull) break;
  }
  EXPECT_EQ(added, 1000u);
  EXPECT_EQ(filter.num_filters(), 1u);
  for (size_t i = 0; i < added; ++i) ASSERT_TRUE(filter.MayContainHash(keys[i]));
  EXPECT_EQ(filter.AddHash(keys[1500]), AddOutcome::kFull);
}

}  // namespace
// A key added again and again fills its 8 slots; the filter then refuses it (kFull) instead of
// growing a new, larger filter for every 8 copies.
TEST(ScalableCuckooFilter, RepeatedAddsOfOneKeyDoNotGrowWithoutEnd) {
  ScalableCuckooFilter filter = Make(1000, 0.01);
  size_t added = 0;
  for (int i = 0; i < 200; ++i) added += filter.Add("again") == AddOutcome::kAdded;
  EXPECT_LE(filter.num_filters(), 2u);
  EXPECT_LE(added, 16u);
  EXPECT_GE(added, 8u);
  EXPECT_EQ(filter.Count("again"), added);
}

TEST(ScalableCuckooFilter, AMovedFromFilterTakesNothingAndMatchesEverything) {
  ScalableCuckooFilter filter = Make(100, 0.01);
  ASSERT_EQ(filter.Add("a"), AddOutcome::kAdded);
  ScalableCuckooFilter moved = std::move(filter);
  EXPECT_TRUE(moved.MayContain("a"));
  EXPECT_EQ(filter.Add("b"), AddOutcome::kFull);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(filter.MayContain("anything"));
  EXPECT_EQ(filter.num_filters(), 0u);
}

}  // namespace sstfilter
