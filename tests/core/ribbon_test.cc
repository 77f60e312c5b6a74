// SPDX-License-Identifier: Apache-2.0
// What only the Ribbon kind has; the properties it shares with the binary fuse kind are tested
// over both in static_kinds_test.cc.
#include "core/ribbon/ribbon.h"

#include <gtest/gtest.h>

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
// every width, including the ones whose last group of 4 bits is partial or whose bits run to 32.
// It also counts the starts at the edges of the layout (the last start, a block's last slot), so
// that those are known to have been tested.
TEST(Ribbon, ReaderAgreesWithTheLayoutEvaluatedBitByBit) {
  uint64_t last_starts = 0, block_ends = 0;
  for (int r : {1, 3, 4, 5, 17, 31, 32}) {
    for (uint64_t set = 0; set < 40; ++set) {
      const uint64_t n = set < 30 ? 64 : 5'000;  // 64 keys: 128 slots, 65 starts
      const std::vector<uint64_t> keys = KeyHashes(20'000 + r * 100 + set, n);
      std::string bytes;
      const Result<StaticBuildInfo> built =
          Ribbon::BuildWithInfo(RibbonParams{r}, keys.data(), keys.size(), &bytes);
      ASSERT_TRUE(built.ok()) << built.error();
      ASSERT_FALSE(built.value().fell_back);
      const FilterReader reader = ReaderOf(bytes);
      const Trailer& t = reader.trailer();
      const RibbonHashing hashing(t.seed, t.num_units, r);
      const uint8_t* body = reinterpret_cast<const uint8_t*>(bytes.data());
      auto row_bit = [&](uint64_t row, int k) {
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
          for (int j = 0; j < 64; ++j) parity ^= ((coeff >> j) & 1) & row_bit(start + j, k);
          result |= static_cast<uint32_t>(parity) << k;
        }
        return result == hashing.Fingerprint(h);
      };
      for (uint64_t h : keys) {
        const uint64_t start = hashing.Start(hashing.Remix(h));
        last_starts += start == t.num_units - 64;
        block_ends += start % 64 == 63;
        ASSERT_TRUE(reference(h)) << "r=" << r;  // the layout holds the key
        ASSERT_TRUE(reader.MayContain(h)) << "r=" << r;
      }
      const std::vector<uint64_t> absent = KeyHashes(30'000 + r * 100 + set, 2'000);
      for (uint64_t h : absent) ASSERT_EQ(reader.MayContain(h), reference(h)) << "r=" << r;
    }
  }
  EXPECT_GT(last_starts, 10u);
  EXPECT_GT(block_ends, 10u);
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

}  // namespace
}  // namespace sstfilter
