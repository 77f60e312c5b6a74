// SPDX-License-Identifier: Apache-2.0
#include "core/standard_bloom/math.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/bloom_common.h"
#include "core/sizing.h"

namespace sstfilter {
namespace {

constexpr int kWordBits = 64;

}  // namespace

double StandardBloomRateAtLoad(double keys_per_bit, int num_probes) {
  return std::pow(1.0 - std::exp(-num_probes * keys_per_bit), num_probes);
}

Result<uint64_t> StandardBloomBits(uint64_t num_keys, double fp_rate) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  const double bits = -static_cast<double>(num_keys) * std::log(fp_rate) / (kLn2 * kLn2);
  if (bits / static_cast<double>(num_keys) > kMaxBitsPerKey) {
    return Err(RateNeedsTooManyBitsError(fp_rate));
  }
  if (bits >= kMaxFilterBits) return Err(OverflowError("filter", num_keys));
  // Truncation, not rounding up: Guava's optimalNumOfBits casts to long, and its published
  // sizes are the reference the tests check.
  return std::max<uint64_t>(1, static_cast<uint64_t>(bits));
}

Result<int> StandardBloomProbes(uint64_t num_keys, uint64_t num_bits) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (num_bits == 0) return Err("num_bits must be > 0");
  const double k = std::round(static_cast<double>(num_bits) / num_keys * kLn2);
  if (k < 1) return 1;
  if (k > kMaxNumProbes) return kMaxNumProbes;
  return static_cast<int>(k);
}

Result<int> StandardBloomProbesForBitsPerKey(double bits_per_key) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  const long k = std::lround(bits_per_key * kLn2);
  return static_cast<int>(std::clamp<long>(k, 1, kMaxNumProbes));
}

Result<double> StandardBloomFpRate(uint64_t num_keys, uint64_t num_bits, int num_probes) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (num_bits == 0) return Err("num_bits must be > 0");
  if (num_probes < 1 || num_probes > kMaxNumProbes) return Err(NumProbesError(num_probes));
  return StandardBloomRateAtLoad(static_cast<double>(num_keys) / static_cast<double>(num_bits),
                                 num_probes);
}

Result<double> StandardBloomBitsPerKey(double fp_rate) {
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  const double b = -std::log(fp_rate) / (kLn2 * kLn2);
  if (b > kMaxBitsPerKey) return Err(RateNeedsTooManyBitsError(fp_rate));
  return b;
}

Result<double> StandardBloomFpRateForBitsPerKey(double bits_per_key) {
  auto k = StandardBloomProbesForBitsPerKey(bits_per_key);
  if (!k.ok()) return Err(k.error());
  return StandardBloomRateAtLoad(1.0 / bits_per_key, k.value());
}

Result<uint64_t> StandardBloomWords(uint64_t num_keys, double bits_per_key) {
  return UnitsForBudget(num_keys, bits_per_key, kWordBits);
}

}  // namespace sstfilter
