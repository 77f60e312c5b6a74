// SPDX-License-Identifier: Apache-2.0
#include "core/bumped_ribbon/math.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"
#include "core/sizing.h"

namespace sstfilter {
namespace {

uint64_t RoundUpTo64(uint64_t x) { return (x + 63) / 64 * 64; }

// Integer arithmetic throughout: the format fixes this function (math.h).
constexpr uint64_t kLoadNumerator = 15, kLoadDenominator = 16;  // slots per expected key
constexpr uint64_t kMinOverloadedSlots = 128;
constexpr uint64_t kLastLayerMaxKeys = 256;  // expected keys left when the last layer comes
// The slots of one standard Ribbon table for n keys, in integers: n, a margin for ln n, and the 63
// slots past the last start, in whole blocks. The margin, n (0.01144 bit_width(n) - 0.105) and at
// least 0, is core/ribbon/math.h's 0.0165 ln n - 0.105 at the top of n's power of two: never less.
uint64_t StandardSlotsFor(uint64_t n) {
  // A last layer for no keys left (the estimate can reach 0) is one block: n = 0 has width 0.
  const uint64_t bit_width = n == 0 ? 0 : 64 - static_cast<uint64_t>(__builtin_clzll(n));
  const uint64_t per_100k = 1144 * bit_width > 10500 ? 1144 * bit_width - 10500 : 0;
  return RoundUpTo64(n + n / 100000 * per_100k + n % 100000 * per_100k / 100000 + 63);
}

// Slots an overloaded layer of m slots is expected to leave empty: its band's tail and its
// crowded buckets. 16 + m / 2048 is about the least that keeps the first seed solving: with it,
// 264 builds from 4,000 to 400,000 keys each solved with the first seed, and 18 of 1M to 10M keys
// at 1 and 16 bits too; with m / 4096 and a last layer of 1/32 to spare, 1.12 seeds on average.
uint64_t ExpectedLoss(uint64_t slots) { return 16 + slots / 2048; }

}  // namespace

uint64_t BumpedRibbonShape::TotalSlots() const {
  uint64_t total = 0;
  for (int i = 0; i < layers; ++i) total += slots[i];
  return total;
}

uint64_t BumpedRibbonShape::ThresholdBuckets() const {
  uint64_t buckets = 0;
  for (int i = 0; i + 1 < layers; ++i) buckets += slots[i] / kBumpedRibbonBucketStarts;
  return buckets;
}

Result<BumpedRibbonShape> BumpedRibbonShapeFor(uint64_t num_keys) {
  if (num_keys == 0) return Err(kNoKeysError);
  // The format fixes this function: integers only, so that every reader computes the same layers.
  if (num_keys > kRibbonMaxSlots / 2) return Err(OverflowError("bumped ribbon filter", num_keys));
  // One standard Ribbon table: the shape of small sets.
  BumpedRibbonShape one;
  one.sized_for = num_keys;
  one.layers = 1;
  one.slots[0] = StandardSlotsFor(num_keys);

  BumpedRibbonShape bumped;
  bumped.sized_for = num_keys;
  uint64_t left = num_keys;  // keys expected to reach the next layer
  while (left > kLastLayerMaxKeys && bumped.layers < kBumpedRibbonMaxLayers - 1) {
    const uint64_t slots =
        std::max(kMinOverloadedSlots,
                 RoundUpTo64(left / kLoadDenominator * kLoadNumerator +
                             left % kLoadDenominator * kLoadNumerator / kLoadDenominator));
    bumped.slots[bumped.layers++] = slots;
    const uint64_t loss = ExpectedLoss(slots);
    const uint64_t stored = slots > loss ? slots - loss : 0;
    left = left > stored ? left - stored : 0;
  }
  // The last layer: a standard Ribbon table for the keys left and a sixteenth more.
  bumped.slots[bumped.layers++] = StandardSlotsFor(left + left / 16);
  // The thresholds cost 1/32 of a bit per slot of the overloaded layers: compared at 1-bit
  // fingerprints, where they weigh most (8 * 32 thresholds per 64-bit word).
  const uint64_t bumped_cost = 32 * bumped.TotalSlots() + bumped.ThresholdBuckets() * 2;
  return bumped_cost < 32 * one.TotalSlots() ? bumped : one;
}

uint64_t BumpedRibbonTableBytes(const BumpedRibbonShape& shape, int fingerprint_bits) {
  const uint64_t threshold_words =
      (shape.ThresholdBuckets() * kBumpedRibbonThresholdBits + 63) / 64;
  return RibbonTableBytes(shape.TotalSlots(), fingerprint_bits) + 8 * threshold_words;
}

Result<BumpedRibbonTable> BumpedRibbonTableFor(uint64_t num_keys) {
  const Result<BumpedRibbonShape> shape = BumpedRibbonShapeFor(num_keys);
  if (!shape.ok()) return Err(shape.error());
  BumpedRibbonTable table;
  table.shape = shape.value();
  // Compared at 8-bit fingerprints, trailers included (the layers' is 32 bytes, a wrapped table's
  // 10): the middle of the widths budgets of 4 to 16 bits per key give.
  constexpr int kComparedBits = 8;
  const Result<RibbonTable> one = RibbonTableFor(num_keys);
  if (one.ok() && one.value().wrapped &&
      RibbonWrappedTableBytes(one.value().slots, kComparedBits) + kCompactTrailerBytes <=
          BumpedRibbonTableBytes(table.shape, kComparedBits) + kTrailerBytes) {
    table.wrapped = true;
    table.wrapped_slots = one.value().slots;
  }
  return table;
}

uint64_t BumpedRibbonTableBytes(const BumpedRibbonTable& table, int fingerprint_bits) {
  return table.wrapped ? RibbonWrappedTableBytes(table.wrapped_slots, fingerprint_bits)
                       : BumpedRibbonTableBytes(table.shape, fingerprint_bits);
}

Result<int> BumpedRibbonFingerprintBitsForBudget(double bits_per_key, uint64_t num_keys) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (num_keys == 0) return kRibbonMinFingerprintBits;
  const Result<BumpedRibbonTable> table = BumpedRibbonTableFor(num_keys);
  if (!table.ok()) return Err(table.error());
  // The same wrapped table as the standard Ribbon kind's for these keys.
  if (table.value().wrapped) return RibbonFingerprintBitsForBudget(bits_per_key, num_keys);
  const BumpedRibbonShape* shape = &table.value().shape;
  const double threshold_bits =
      static_cast<double>((shape->ThresholdBuckets() * kBumpedRibbonThresholdBits + 63) / 64 * 64);
  const double r = std::floor((bits_per_key * static_cast<double>(num_keys) - threshold_bits) /
                              static_cast<double>(shape->TotalSlots()));
  return static_cast<int>(
      std::clamp(r, double{kRibbonMinFingerprintBits}, double{kRibbonMaxFingerprintBits}));
}

}  // namespace sstfilter
