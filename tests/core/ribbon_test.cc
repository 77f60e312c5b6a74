// SPDX-License-Identifier: Apache-2.0
// What only the Ribbon kind has; the properties it shares with the binary fuse kind are tested
// over both in static_kinds_test.cc.
#include "core/ribbon/ribbon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/fuse/fuse.h"
#include "core/ribbon/math.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::KeyHashes;
using testing::ReaderOf;

// The query recomputed from the documented layout (docs/format.md, section 9) with every bit of the
// result, no early exit: the reader's answer must be the same for stored and absent keys at
// every width, including the ones whose last group of 4 bits is partial or whose bits run to 32,
// in wrapped tables (64 keys: 68 slots, one block and 4 rows past it; 60 and 1,018 keys: 64 and
// 1,024 slots, whole blocks and no rows past them; 1,000 and 5,000 keys) and in tables of whole
// blocks (20,000 keys). It also counts the starts at the edges of each layout (the last start and a
// block's last slot; the starts whose rows run past the last row, and those past the whole blocks),
// and the wrapped tables of whole blocks, so that those are known to have been tested.
TEST(Ribbon, ReaderAgreesWithTheLayoutEvaluatedBitByBit) {
  uint64_t last_starts = 0, block_ends = 0, wrapping = 0, past_blocks = 0, whole_wrapped = 0;
  for (int r : {1, 3, 4, 5, 17, 31, 32}) {
    for (uint64_t set = 0; set < 40; ++set) {
      const uint64_t n = set < 14   ? 64
                         : set < 20 ? 60
                         : set < 30 ? 1'000
                         : set < 34 ? 5'000
                         : set < 36 ? 20'000
                                    : 1'018;
      const std::vector<uint64_t> keys = KeyHashes(20'000 + r * 100 + set, n);
      std::string bytes;
      const Result<StaticBuildInfo> built =
          Ribbon::BuildWithInfo(RibbonParams{r}, keys.data(), keys.size(), &bytes);
      ASSERT_TRUE(built.ok()) << built.error();
      ASSERT_FALSE(built.value().fell_back);
      const FilterReader reader = ReaderOf(bytes);
      const Trailer& t = reader.trailer();
      const uint64_t m = t.num_units;
      const bool wrapped = t.version == 2;
      ASSERT_EQ(wrapped, n <= kRibbonWrappedMaxKeys);
      const uint64_t full = m / 64 * 64;
      whole_wrapped += wrapped && m == full;
      const RibbonHashing hashing(t.seed, m, r, wrapped);
      const uint8_t* body = reinterpret_cast<const uint8_t*>(bytes.data());
      auto row_bit = [&](uint64_t row, int k) {
        if (row >= full) {  // the planes of the rows past the whole blocks
          const uint64_t bit = k * (m - full) + (row - full);
          return (body[full / 64 * 8 * r + bit / 8] >> (bit % 8)) & 1;
        }
        const uint8_t* word = body + 8 * ((row / 64) * r + k);
        return (word[(row % 64) / 8] >> (row % 8)) & 1;
      };
      auto reference = [&](uint64_t hash) {
        const uint64_t h = hashing.Remix(hash);
        const uint64_t start = hashing.Start(h);
        const uint64_t coeff = RibbonHashing::Coefficients(h);
        uint32_t result = 0;
        for (int k = 0; k < r; ++k) {
          int parity = 0;
          for (int j = 0; j < 64; ++j) parity ^= ((coeff >> j) & 1) & row_bit((start + j) % m, k);
          result |= static_cast<uint32_t>(parity) << k;
        }
        return result == hashing.Fingerprint(h);
      };
      for (size_t i = 0; i < keys.size(); ++i) {
        const uint64_t start = hashing.Start(hashing.Remix(keys[i]));
        last_starts += !wrapped && start == m - 64;
        block_ends += start % 64 == 63;
        wrapping += wrapped && start + 63 >= m;
        past_blocks += wrapped && start >= full;
        if (i < 2'000) {
          ASSERT_TRUE(reference(keys[i])) << "r=" << r;  // the layout holds the key
        }
        ASSERT_TRUE(reader.MayContain(keys[i])) << "r=" << r;
      }
      const std::vector<uint64_t> absent = KeyHashes(30'000 + r * 100 + set, 2'000);
      for (uint64_t h : absent) ASSERT_EQ(reader.MayContain(h), reference(h)) << "r=" << r;
    }
  }
  EXPECT_GT(last_starts, 3u);
  EXPECT_GT(block_ends, 10u);
  EXPECT_GT(wrapping, 1000u);
  EXPECT_GT(past_blocks, 100u);
  EXPECT_EQ(whole_wrapped, 7u * 10);  // every width's 6 tables of 60 keys and 4 of 1,018
}

// Slots per key, the efficiency of a Ribbon filter (its bits per key over log2(1/2^-r) = r),
// as math.h's table states; and the reason the kind exists: below about 233,000 keys its table
// is smaller than a fuse table of the same rate.
TEST(Ribbon, SlotsPerKeyAndTheSizesWhereItBeatsTheFuseTable) {
  const struct {
    uint64_t keys;
    double slots_per_key;
  } expected[] = {
      {1'000, 1.088}, {2'000, 1.056}, {10'000, 1.056}, {100'000, 1.086}, {1'000'000, 1.123}};
  for (const auto& e : expected) {
    const uint64_t slots = RibbonSlotsFor(e.keys).value();
    EXPECT_EQ(slots % kRibbonCoeffBits, 0u);
    EXPECT_NEAR(static_cast<double>(slots) / e.keys, e.slots_per_key, 0.0005) << e.keys;
  }
  // The crossover math.h states: Ribbon smaller below about 233,000 keys, fuse above 264,000.
  for (int r : {7, 10, 13}) {
    for (uint64_t n : {1'000u, 2'000u, 10'000u, 100'000u, 232'000u}) {
      EXPECT_LT(Ribbon::FilterBytes(RibbonParams{r}, n).value(),
                Fuse::FilterBytes(FuseParams{r}, n).value())
          << n << " keys, r=" << r;
    }
    for (uint64_t n : {265'000u, 1'000'000u}) {
      EXPECT_GT(Ribbon::FilterBytes(RibbonParams{r}, n).value(),
                Fuse::FilterBytes(FuseParams{r}, n).value())
          << n << " keys, r=" << r;
    }
  }
}

// Wrapped tables (version 2, math.h) for at most kRibbonWrappedMaxKeys keys: no slots past the
// last start and no rounding to whole blocks, RibbonWrappedSpareSlots beyond the keys instead, and
// the 10-byte compact trailer. The saving, and what it does to the size against the information
// limit (r bits per key at 2^-r), every byte of the filter counted: at most 1.03 times it from
// 1,000 to 4,000 keys at 4- to 10-bit fingerprints (6.3% to 0.1%).
TEST(Ribbon, WrappedTablesSaveTheSlotsPastTheLastStart) {
  for (uint64_t n : {10u, 56u, 57u, 64u, 100u, 1'000u, 2'000u, 3'300u, 4'000u, 16'384u}) {
    const RibbonTable wrapped = RibbonTableFor(n).value();
    EXPECT_TRUE(wrapped.wrapped) << n;
    EXPECT_GE(wrapped.slots, std::max<uint64_t>(n + 4, 64)) << n;
    EXPECT_LE(wrapped.slots + 55, RibbonSlotsFor(n).value()) << n;
    if (n >= 1'000 && n <= 4'000) {
      EXPECT_LE(wrapped.slots * 1000, n * 1021) << n;  // at most 2.1% past the keys
    }
  }
  EXPECT_EQ(RibbonWrappedSpareSlots(1'000), 6u);
  EXPECT_EQ(RibbonWrappedSpareSlots(4'000), 84u);
  // From about 8,800 keys the whole-block table's margin plus 8 is the smaller: 912 slots at
  // 16,384 keys, where 5.2 (n / 1000)^2 would be 1,396.
  EXPECT_EQ(RibbonWrappedSpareSlots(16'384), 912u);
  const RibbonTable large = RibbonTableFor(kRibbonWrappedMaxKeys + 1).value();
  EXPECT_FALSE(large.wrapped);
  EXPECT_EQ(large.slots, RibbonSlotsFor(kRibbonWrappedMaxKeys + 1).value());
  for (int r : {4, 7, 10}) {
    for (uint64_t n : {1'000u, 2'000u, 3'300u, 4'000u, 10'000u}) {
      const double limit_bits = static_cast<double>(r * n);
      const double bits =
          8.0 * static_cast<double>(Ribbon::FilterBytes(RibbonParams{r}, n).value());
      EXPECT_LE(bits / limit_bits, n <= 4'000 ? 1.03 : 1.055) << n << " keys, r=" << r;
      printf("[ figures  ] %llu keys, %d-bit fingerprints: %.4f times the limit\n",
             static_cast<unsigned long long>(n), r, bits / limit_bits);
    }
  }
}

// A seed solves a wrapped table's system at least 2 times in 3 (math.h's
// RibbonWrappedSpareSlots): the share of 200 key sets per size whose first seed solved, within a
// 5-sigma binomial bound of 2/3.
TEST(Ribbon, AWrappedTableSolvesWithItsFirstSeedMostOfTheTime) {
  constexpr int kSets = 200;
  for (uint64_t n : {10u, 100u, 500u, 1'000u, 2'000u, 3'300u, 4'000u, 6'000u, 8'000u, 16'384u}) {
    int first = 0;
    for (int set = 0; set < kSets; ++set) {
      const std::vector<uint64_t> keys = KeyHashes(40'000 + n * 1'000 + set, n);
      std::string bytes;
      const Result<StaticBuildInfo> built =
          Ribbon::BuildWithInfo(RibbonParams{8}, keys.data(), keys.size(), &bytes);
      ASSERT_TRUE(built.ok()) << built.error();
      ASSERT_FALSE(built.value().fell_back) << n;
      first += built.value().attempts == 1;
      const FilterReader reader = ReaderOf(bytes);
      ASSERT_EQ(reader.trailer().version, 2);
      for (uint64_t h : keys) ASSERT_TRUE(reader.MayContain(h)) << n;
    }
    printf("[ figures  ] %llu keys: the first seed solved %d of %d key sets\n",
           static_cast<unsigned long long>(n), first, kSets);
    EXPECT_GE(first, kSets * 2.0 / 3 - testing::BinomialTolerance(kSets, 2.0 / 3)) << n;
  }
}

}  // namespace
}  // namespace sstfilter
