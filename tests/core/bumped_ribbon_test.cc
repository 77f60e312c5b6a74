// SPDX-License-Identifier: Apache-2.0
// What only the bumped Ribbon kind has; the properties it shares with the other static kinds are
// tested over them all in static_kinds_test.cc.
#include "core/bumped_ribbon/bumped_ribbon.h"

#include <gtest/gtest.h>

#include <cmath>
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
    for (uint64_t n : {5'000u, 40'000u}) {
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
    // Small sets: one standard Ribbon table, its margin rounded up to n's power of two.
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
