// SPDX-License-Identifier: Apache-2.0
// What only the bumped Ribbon kind has; the properties it shares with the other static kinds are
// tested over them all in static_kinds_test.cc.
#include "core/bumped_ribbon/bumped_ribbon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/fuse/fuse.h"
#include "core/ribbon/ribbon.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::KeyHashes;
using testing::ReaderOf;

std::string Build(int r, const std::vector<uint64_t>& keys, StaticBuildInfo* info = nullptr) {
  std::string bytes;
  const Result<StaticBuildInfo> built =
      BumpedRibbon::BuildWithInfo(BumpedRibbonParams{r}, keys.data(), keys.size(), &bytes);
  EXPECT_TRUE(built.ok()) << built.error();
  EXPECT_FALSE(built.value().fell_back);
  if (info != nullptr) *info = built.value();
  return bytes;
}

// The query recomputed from the documented layout (docs/format.md, section 10), bit by bit: each
// layer's start, the bucket's threshold code, and the one layer's equation. The reader must agree
// for stored and absent keys, and every key must be stored where the layout says, at widths whose
// threshold codes and words run to their ends. Also counts the keys answered past the first
// layer, so that bumping is known to have been tested.
TEST(BumpedRibbon, ReaderAgreesWithTheLayoutEvaluatedBitByBit) {
  uint64_t bumped_keys = 0, deepest = 0;
  for (int r : {1, 4, 7, 32}) {
    for (uint64_t n : {8'000u, 40'000u}) {
      const std::vector<uint64_t> keys = KeyHashes(40'000 + r * 100 + n, n);
      const std::string bytes = Build(r, keys);
      const FilterReader reader = ReaderOf(bytes);
      ASSERT_TRUE(reader.Holds<BumpedRibbonReader>());
      const Trailer& t = reader.trailer();
      const BumpedRibbonShape shape = BumpedRibbonShapeFor(t.num_units).value();
      ASSERT_GT(shape.layers, 1) << n;
      const uint8_t* body = reinterpret_cast<const uint8_t*>(bytes.data());
      uint64_t layer_byte[kBumpedRibbonMaxLayers] = {}, first_bucket[kBumpedRibbonMaxLayers] = {};
      for (int i = 1; i < shape.layers; ++i) {
        layer_byte[i] = layer_byte[i - 1] + shape.slots[i - 1] / 8 * r;
        first_bucket[i] = first_bucket[i - 1] + shape.slots[i - 1] / 64;
      }
      const uint8_t* codes =
          body + layer_byte[shape.layers - 1] + shape.slots[shape.layers - 1] / 8 * r;
      auto bit = [](const uint8_t* p, uint64_t i) { return (p[i / 8] >> (i % 8)) & 1; };
      // The layer a key lives in, and whether its equation holds there.
      auto reference = [&](uint64_t hash, int* layer) {
        const uint64_t h0 = t.seed == 0 ? hash : Mix64(hash + t.seed * kGoldenMul64);
        for (int i = 0;; ++i) {
          const uint64_t h = i == 0 ? h0 : Mix64(h0 + i * kGoldenMul64);
          const uint64_t start = FastRange64(h, shape.slots[i] - 63);
          if (i + 1 < shape.layers) {
            const uint64_t bucket = first_bucket[i] + start / 64;
            const int code = bit(codes, 2 * bucket) | bit(codes, 2 * bucket + 1) << 1;
            if (static_cast<int>(start % 64) < kBumpedRibbonThresholds[code]) continue;
          }
          *layer = i;
          const uint64_t coeff = Mix64(h) | 1;
          uint32_t result = 0;
          for (int k = 0; k < r; ++k) {
            int parity = 0;
            for (int j = 0; j < 64; ++j) {
              const uint64_t row = start + j;
              const uint8_t* word = body + layer_byte[i] + 8 * ((row / 64) * r + k);
              parity ^= ((coeff >> j) & 1) & bit(word, row % 64);
            }
            result |= static_cast<uint32_t>(parity) << k;
          }
          const uint32_t mask = r == 32 ? ~0u : (1u << r) - 1;
          return result == (static_cast<uint32_t>(h ^ (h >> 32)) & mask);
        }
      };
      for (uint64_t h : keys) {
        int layer = 0;
        ASSERT_TRUE(reference(h, &layer)) << "r=" << r;
        ASSERT_TRUE(reader.MayContain(h));
        bumped_keys += layer > 0;
        deepest = std::max<uint64_t>(deepest, layer);
      }
      for (uint64_t h : KeyHashes(50'000 + r * 100 + n, 2'000)) {
        int layer = 0;
        ASSERT_EQ(reader.MayContain(h), reference(h, &layer)) << "r=" << r;
      }
    }
  }
  EXPECT_GT(bumped_keys, 1000u);
  EXPECT_GE(deepest, 2u);
}

// Slots per key as math.h's table states, layers from 3,000 keys (smaller than one standard Ribbon
// table), and the efficiency it buys: bits per key over log2(1/2^-r) = r, thresholds and trailer
// included, at most 1.03 from 10,000 keys at every width from 4 bits (1 to 3 bits: the thresholds'
// 1/32 bit per slot weighs more).
TEST(BumpedRibbon, SlotsPerKeyAndEfficiency) {
  const struct {
    uint64_t keys;
    double slots_per_key;
  } expected[] = {{5'000, 1.0240},
                  {10'000, 1.0112},
                  {100'000, 1.0016},
                  {1'000'000, 1.0006},
                  {10'000'000, 1.0005}};
  for (const auto& e : expected) {
    const BumpedRibbonShape shape = BumpedRibbonShapeFor(e.keys).value();
    EXPECT_NEAR(static_cast<double>(shape.TotalSlots()) / e.keys, e.slots_per_key, 0.0005)
        << e.keys;
  }
  for (uint64_t n = 1; n < 20'000'000; n += n / 7 + 1) {
    const BumpedRibbonShape shape = BumpedRibbonShapeFor(n).value();
    // Small sets: one standard Ribbon table (the shape a version 1 filter reads with; writers now
    // write a wrapped table there), its margin rounded up to n's power of two.
    EXPECT_LE(static_cast<double>(shape.TotalSlots()), 1.13 * n + 127) << n;
    if (n >= 3'000) {
      EXPECT_GT(shape.layers, 1) << n;
      EXPECT_LT(shape.TotalSlots(), RibbonSlotsFor(n).value()) << n;
    }
    for (int i = 0; i < shape.layers; ++i) EXPECT_EQ(shape.slots[i] % 64, 0u) << n;
  }
  for (int r : {4, 7, 10, 16, 32}) {
    for (uint64_t n : {10'000u, 100'000u, 1'000'000u, 10'000'000u}) {
      const double bits = 8.0 * BumpedRibbon::FilterBytes(BumpedRibbonParams{r}, n).value() / n;
      EXPECT_LE(bits / r, 1.03) << n << " keys, r=" << r;
      EXPECT_LT(BumpedRibbon::FilterBytes(BumpedRibbonParams{r}, n).value(),
                Ribbon::FilterBytes(RibbonParams{r}, n).value());
      EXPECT_LT(BumpedRibbon::FilterBytes(BumpedRibbonParams{r}, n).value(),
                Fuse::FilterBytes(FuseParams{r}, n).value());
    }
  }
}

// Small sets are one wrapped standard Ribbon table (version 2): the standard Ribbon kind's body,
// byte for byte, under this kind's compact trailer, at its size; so at 1,000 to 4,000 keys within
// 1.03x the limit, as the standard kind's (ribbon_test.cc). Up to 5,277 keys always, never from
// 6,371; and at every size up to 20,000 keys the filter is within 1.01x of the smaller of the two
// kinds' at 4- to 16-bit fingerprints.
TEST(BumpedRibbon, SmallSetsAreOneWrappedStandardRibbonTable) {
  for (int r : {1, 7, 10}) {
    for (uint64_t n : {1u, 10u, 100u, 1'000u, 2'000u, 3'300u, 4'000u, 5'277u}) {
      const std::vector<uint64_t> keys = KeyHashes(70'000 + 100 * r + n, n);
      const std::string bumped = Build(r, keys);
      std::string ribbon;
      ASSERT_TRUE(Ribbon::BuildWithInfo(RibbonParams{r}, keys.data(), keys.size(), &ribbon).ok());
      const FilterReader reader = ReaderOf(bumped);
      ASSERT_TRUE(reader.Holds<BumpedRibbonReader>()) << n;
      EXPECT_EQ(reader.trailer().version, 2) << n;
      ASSERT_EQ(bumped.size(), ribbon.size()) << n;
      EXPECT_EQ(bumped.size(), BumpedRibbon::FilterBytes(BumpedRibbonParams{r}, n).value());
      EXPECT_EQ(bumped.substr(0, bumped.size() - kCompactTrailerBytes),
                ribbon.substr(0, ribbon.size() - kCompactTrailerBytes))
          << n;
      EXPECT_EQ(testing::CountMissing(reader, keys), 0u) << n;
      if (n >= 1'000 && r >= 7) {
        EXPECT_LE(8.0 * bumped.size() / n / r, 1.03) << n;
      }
    }
  }
  for (uint64_t n = 1; n <= 20'000; n += n < 4'000 ? 97 : 1) {
    const BumpedRibbonTable t = BumpedRibbonTableFor(n).value();
    if (n <= kBumpedRibbonAlwaysWrappedKeys) {
      EXPECT_TRUE(t.wrapped) << n;
    } else if (n > kBumpedRibbonWrappedMaxKeys) {
      EXPECT_FALSE(t.wrapped) << n;
    }
    for (int r : {4, 8, 16}) {
      const double bumped = BumpedRibbon::FilterBytes(BumpedRibbonParams{r}, n).value();
      const double layers = BumpedRibbonTableBytes(t.shape, r) + kTrailerBytes;
      const double ribbon = Ribbon::FilterBytes(RibbonParams{r}, n).value();
      EXPECT_LE(bumped, 1.01 * std::min(layers, ribbon)) << n << " keys, r=" << r;
    }
  }
}

// A wrapped table's trailer counts the distinct keys, as the layers do: the same keys three times
// over, shuffled, give the bytes of the keys once (a table for 1,000 keys, not 3,000). And a key
// set whose first seed fails takes the next, as the standard kind does (the same bytes), and
// loses no key.
TEST(BumpedRibbon, AWrappedTableCountsDistinctKeysAndRetriesSeeds) {
  const std::vector<uint64_t> keys = KeyHashes(75'000, 1'000);
  std::vector<uint64_t> thrice;
  for (int copy = 0; copy < 3; ++copy) thrice.insert(thrice.end(), keys.begin(), keys.end());
  std::mt19937_64 rng(75);
  std::shuffle(thrice.begin(), thrice.end(), rng);
  const std::string once = Build(7, keys);
  EXPECT_EQ(Build(7, thrice), once);
  EXPECT_EQ(ReaderOf(once).trailer().num_keys, 1'000u);
  EXPECT_EQ(ReaderOf(once).trailer().version, 2);

  bool retried = false;
  for (uint64_t set = 0; set < 100 && !retried; ++set) {
    const std::vector<uint64_t> more = KeyHashes(76'000 + set, 4'000);
    StaticBuildInfo info;
    const std::string bumped = Build(7, more, &info);
    if (info.attempts == 1) continue;
    retried = true;
    EXPECT_GT(ReaderOf(bumped).trailer().seed, 0u);
    EXPECT_EQ(testing::CountMissing(ReaderOf(bumped), more), 0u);
    std::string ribbon;
    ASSERT_TRUE(Ribbon::BuildWithInfo(RibbonParams{7}, more.data(), more.size(), &ribbon).ok());
    EXPECT_EQ(bumped.substr(0, bumped.size() - kCompactTrailerBytes),
              ribbon.substr(0, ribbon.size() - kCompactTrailerBytes));
  }
  EXPECT_TRUE(retried) << "no set of 4,000 keys needed a second seed";
}

// A filter of one standard table of whole blocks (version 1), as releases before the wrapped
// tables wrote small sets (and a reader must still read): 100 keys, 4-bit fingerprints, 192
// slots (3 blocks of 4 words), then the 32-byte trailer. Every key found; absent keys match at
// 2^-4, within 5 sigma over 100,000 of them.
TEST(BumpedRibbon, AVersion1FilterOfOneStandardTableStillReads) {
  const std::string hex =
      "fc2b701e08f98c05a2035c1c02d9a1af4a03400008a93401940b6d000af8219d"
      "451e424c0859f4c01d3262ec9a91102614453bcc9a79b26615341dfe00e161d4"
      "0300000000000000000000000000000003000000000000000000000000000000"
      "640000000000000064000000000000000000000004060125400753ff53e05446";
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  const FilterReader reader = ReaderOf(bytes);
  ASSERT_TRUE(reader.Holds<BumpedRibbonReader>());
  EXPECT_EQ(reader.trailer().version, 1);
  EXPECT_EQ(BumpedRibbonShapeFor(reader.trailer().num_units).value().layers, 1);
  EXPECT_EQ(testing::CountMissing(reader, KeyHashes(36, 100)), 0u);
  const uint64_t absent = 100'000;
  uint64_t matched = 0;
  for (uint64_t h : KeyHashes(37, absent)) matched += reader.MayContain(h);
  const double p = 1.0 / 16, sigma = std::sqrt(absent * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(matched), absent * p, 5 * sigma);
}

// The layers really hold their keys: at 1M keys the build stores every key with its first seed,
// in 4 or more layers.
TEST(BumpedRibbon, LargeSetsSolveWithTheFirstSeed) {
  const std::vector<uint64_t> keys = KeyHashes(60'000, 1'000'000);
  StaticBuildInfo info;
  const std::string bytes = Build(8, keys, &info);
  EXPECT_EQ(info.attempts, 1);
  EXPECT_EQ(info.stored, keys.size());
  EXPECT_GE(BumpedRibbonShapeFor(keys.size()).value().layers, 4);
  EXPECT_EQ(testing::CountMissing(ReaderOf(bytes), keys), 0u);
}

}  // namespace
}  // namespace sstfilter
