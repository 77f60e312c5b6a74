// SPDX-License-Identifier: Apache-2.0
#include "core/blocked_bloom/blocked_bloom.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/sizing.h"
#include "core/standard_bloom/standard_bloom.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::BinomialTolerance;
using testing::KeyHashes;
using testing::ReaderOf;

// The two Bloom kinds, by the way their filters are chosen.
struct LayoutCase {
  Result<FilterSpec> (*for_bits)(double bits_per_key);
  Result<FilterSpec> (*for_rate)(double fp_rate);
  const char* name;
};
const LayoutCase kLayouts[] = {
    {SpecForBitsPerKey<BlockedBloom>, SpecForFpRate<BlockedBloom>, "blocked"},
    {SpecForBitsPerKey<StandardBloom>, SpecForFpRate<StandardBloom>, "standard"}};

std::string Build(const FilterSpec& params, const std::vector<uint64_t>& hashes) {
  Result<std::string> r = BuildFilter(params, hashes.data(), hashes.size());
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? r.value() : std::string();
}

TEST(Bloom, NoFalseNegativesAtAnySize) {
  for (const LayoutCase& lc : kLayouts) {
    for (double bits_per_key : {1.0, 4.5, 10.0, 16.0, 23.0}) {
      const FilterSpec params = lc.for_bits(bits_per_key).value();
      for (uint64_t n : {1u, 2u, 3u, 7u, 64u, 100u, 1000u, 10'000u, 100'000u}) {
        for (uint64_t set = 1; set <= (n <= 1000 ? 20u : 3u); ++set) {
          const std::vector<uint64_t> keys = KeyHashes(set * 1000 + n, n);
          const std::string bytes = Build(params, keys);
          const FilterReader reader = ReaderOf(bytes);
          ASSERT_TRUE(reader.valid()) << lc.name;
          std::unique_ptr<bool[]> batch(new bool[n]);
          reader.MayContainBatch(keys.data(), n, batch.get());
          for (uint64_t i = 0; i < n; ++i) {
            ASSERT_TRUE(reader.MayContain(keys[i]))
                << lc.name << " b=" << bits_per_key << " n=" << n << " key " << i;
            ASSERT_TRUE(batch[i]) << lc.name << " batched, n=" << n << " key " << i;
          }
        }
      }
    }
  }
}

TEST(Bloom, NoFalseNegativesAtOneMillionKeys) {
  for (const LayoutCase& lc : kLayouts) {
    for (double bits_per_key : {6.0, 10.0, 16.0}) {
      const FilterSpec params = lc.for_bits(bits_per_key).value();
      const std::vector<uint64_t> keys = KeyHashes(77, 1'000'000);
      const std::string bytes = Build(params, keys);
      const FilterReader reader = ReaderOf(bytes);
      std::vector<uint8_t> batch(keys.size());
      reader.MayContainBatch(keys.data(), keys.size(), reinterpret_cast<bool*>(batch.data()));
      uint64_t missed = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        missed += !reader.MayContain(keys[i]) + !batch[i];
      }
      EXPECT_EQ(missed, 0u) << lc.name << " " << bits_per_key;
    }
  }
}

// The measured false-positive rate of absent keys must match the estimate that sizing gives for
// this exact filter (the exact Poisson expectation for blocked, the standard formula for standard)
// within a 5-sigma binomial bound.
TEST(Bloom, MeasuredFalsePositiveRateMatchesTheEstimate) {
  constexpr uint64_t kKeys = 1'000'000;
  constexpr uint64_t kQueries = 2'000'000;
  const std::vector<uint64_t> keys = KeyHashes(5, kKeys);
  const std::vector<uint64_t> absent = KeyHashes(6, kQueries);
  for (const LayoutCase& lc : kLayouts) {
    for (double bits_per_key : {6.0, 10.0, 16.0, 20.0}) {
      const FilterSpec params = lc.for_bits(bits_per_key).value();
      const std::string bytes = Build(params, keys);
      const FilterReader reader = ReaderOf(bytes);
      uint64_t hits = 0;
      for (uint64_t h : absent) hits += reader.MayContain(h);
      const double expected_rate = EstimatedFpRate(params, kKeys).value();
      const double expected = expected_rate * kQueries;
      EXPECT_NEAR(static_cast<double>(hits), expected, BinomialTolerance(kQueries, expected_rate))
          << lc.name << " at " << bits_per_key << " bits/key: measured "
          << static_cast<double>(hits) / kQueries << ", estimate " << expected_rate;
    }
  }
}

TEST(Bloom, BlockedLayoutMeetsTheOnePercentTargetAtTenBitsPerKey) {
  const FilterSpec params = SpecForBitsPerKey<BlockedBloom>(10).value();
  const std::vector<uint64_t> keys = KeyHashes(11, 1'000'000);
  const std::vector<uint64_t> absent = KeyHashes(12, 1'000'000);
  const std::string bytes = Build(params, keys);
  const FilterReader reader = ReaderOf(bytes);
  uint64_t hits = 0;
  for (uint64_t h : absent) hits += reader.MayContain(h);
  EXPECT_LT(static_cast<double>(hits) / absent.size(), 0.0100);
}

TEST(Bloom, ParamsForARateReachIt) {
  const std::vector<uint64_t> keys = KeyHashes(21, 200'000);
  const std::vector<uint64_t> absent = KeyHashes(22, 2'000'000);
  for (const LayoutCase& lc : kLayouts) {
    for (double target : {0.05, 0.01, 0.001}) {
      const FilterSpec params = lc.for_rate(target).value();
      const std::string bytes = Build(params, keys);
      const FilterReader reader = ReaderOf(bytes);
      uint64_t hits = 0;
      for (uint64_t h : absent) hits += reader.MayContain(h);
      EXPECT_LE(static_cast<double>(hits),
                target * absent.size() + BinomialTolerance(absent.size(), target))
          << lc.name << " target " << target;
    }
  }
}

TEST(Bloom, ConsecutiveDuplicatesAreSkipped) {
  const std::vector<uint64_t> keys = KeyHashes(8, 100);
  std::vector<uint64_t> repeated;
  for (uint64_t h : keys) repeated.insert(repeated.end(), 3, h);
  for (const LayoutCase& lc : kLayouts) {
    const FilterSpec params = lc.for_bits(10).value();
    const std::string once = Build(params, keys);
    EXPECT_EQ(Build(params, repeated), once);
    EXPECT_EQ(ReaderOf(once).trailer().num_keys, 100u);
  }
}

TEST(Bloom, RejectsBadParameters) {
  EXPECT_FALSE(BlockedBloom::ForBitsPerKey(0).ok());
  EXPECT_FALSE(StandardBloom::ForBitsPerKey(-3).ok());
  EXPECT_FALSE(BlockedBloom::ForFpRate(1.0).ok());
  EXPECT_FALSE(StandardBloom::ForFpRate(0).ok());
  BlockedBloomParams absurd = BlockedBloom::ForBitsPerKey(10).value();
  absurd.bits_per_key = 1e9;
  EXPECT_FALSE(BlockedBloom::FilterBytes(absurd, 10).ok());
}

}  // namespace
}  // namespace sstfilter
