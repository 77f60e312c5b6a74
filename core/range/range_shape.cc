// SPDX-License-Identifier: Apache-2.0
// The arithmetic of a range filter's shape (core/range/range_api.h): the bits per key it may
// take, the shape a budget buys, and the false-positive rate that shape gives.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/range/elias_fano.h"
#include "core/range/range_api.h"
#include "core/sizing.h"

namespace sstfilter {
namespace {

// The most keys' share of the universe a block spans (see RangeShapeFor).
constexpr uint64_t kKeysPerBlock = 16;

// The Elias-Fano samples' cost in bits per key: 32 bits per kBucketsPerSample buckets, and a
// filter has at most about 2 buckets per key.
constexpr double kSampleBitsPerKey = 2.0 * 32.0 / static_cast<double>(kBucketsPerSample);

}  // namespace

Result<double> CheckRangeBitsPerKey(double bits_per_key) {
  if (!(bits_per_key >= kMinRangeBitsPerKey && bits_per_key <= kMaxRangeBitsPerKey)) {
    return Err("range filter bits_per_key must be between " +
               std::to_string(static_cast<int>(kMinRangeBitsPerKey)) + " and " +
               std::to_string(static_cast<int>(kMaxRangeBitsPerKey)) + ", got " +
               FormatNumber(bits_per_key));
  }
  return bits_per_key;
}

RangeFilterShape RangeShapeFor(uint64_t num_keys, double bits_per_key) {
  // n keys in a universe U cost n (l + 1) + U / 2^l bits in Elias-Fano: for a budget of B bits per
  // key, U = n 2^l (B - l - 1), largest at l = B - 3 (rounded either way; equal for whole B).
  const double body_bits = bits_per_key - kSampleBitsPerKey;
  const int first = std::max(0, static_cast<int>(std::floor(body_bits - 3.0)));
  RangeFilterShape shape;
  double best_per_key = 0;
  for (int l = first; l <= first + 1 && l <= static_cast<int>(kMaxEliasFanoLowBits); ++l) {
    const double per_key = std::ldexp(body_bits - l - 1.0, l);
    if (per_key > best_per_key) {
      best_per_key = per_key;
      shape.low_bits = static_cast<uint32_t>(l);
    }
  }
  const double universe =
      std::min(std::ldexp(1.0, 62), std::max(2.0, std::floor(best_per_key * num_keys)));
  const uint64_t u = static_cast<uint64_t>(universe);
  // Blocks (a power of two) of at most kKeysPerBlock keys' share of the universe and at most
  // 1/1024 of it (r loses at most that). A file's rate rests on how its blocks' hashes fall, and
  // few blocks make it a lottery: a million decimal ids under 10^10 in 1,192 blocks (1/1024 of
  // the universe alone) gave 0.0938% to 0.1061% at 16 bits and L = 16 over three seeds of q,
  // where 0.0992% is predicted; in 76,000 blocks (16 keys' share), 0.0999% to 0.1005% (10M
  // queries each; one standard deviation 0.001%). Smaller blocks hash more of them in a build of
  // keys denser than the hash range, and cost a query more than two lookups only for ranges
  // longer than a block, at least 8 keys' share, whose rate is above 99.9% anyway.
  const uint64_t block_limit =
      std::min(u / 1024, std::min(u / num_keys, uint64_t{1} << 58) * kKeysPerBlock);
  uint32_t block_bits = 0;
  while (block_bits < 62 && (uint64_t{1} << (block_bits + 1)) <= block_limit) ++block_bits;
  shape.block_bits = block_bits;
  shape.hash_range = u - (uint64_t{1} << block_bits);
  return shape;
}

double RangeFpRate(const RangeFilterShape& shape, uint64_t num_keys, double range_windows) {
  const double p = range_windows / static_cast<double>(shape.hash_range);
  if (p >= 1.0) return 1.0;
  return -std::expm1(static_cast<double>(num_keys) * std::log1p(-p));
}

}  // namespace sstfilter
