// SPDX-License-Identifier: Apache-2.0
#include "core/cuckoo/math.h"

#include <algorithm>
#include <cmath>

#include "core/sizing.h"

namespace sstfilter {

std::string CuckooFingerprintBitsError(int f) {
  return FingerprintBitsError(f, kCuckooMinFingerprintBits, kCuckooMaxFingerprintBits);
}

Result<int> CuckooFingerprintBits(double fp_rate) {
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  const double f = std::ceil(std::log2(2.0 * kCuckooSlotsPerBucket / fp_rate));
  if (f > kCuckooMaxFingerprintBits) {
    return Err("fp_rate " + FormatNumber(fp_rate) + " needs fingerprints wider than " +
               std::to_string(kCuckooMaxFingerprintBits) + " bits");
  }
  return std::max(kCuckooSemiSortMinFingerprintBits, static_cast<int>(f));
}

Result<int> CuckooFingerprintBitsForBitsPerKey(double bits_per_key, double load) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (!ValidLoad(load)) return Err(LoadError(load));
  const double slot_bits = std::floor(bits_per_key * load);
  constexpr int kMinSlotBits = kCuckooSemiSortMinFingerprintBits - 1;
  if (slot_bits < kMinSlotBits) {
    return Err("bits_per_key " + FormatNumber(bits_per_key) + " is below the cuckoo minimum of " +
               FormatNumber(kMinSlotBits / load) + " (" + std::to_string(kMinSlotBits) +
               "-bit slots at load " + FormatNumber(load) + ")");
  }
  return std::min(kCuckooMaxFingerprintBits, static_cast<int>(slot_bits) + 1);
}

Result<double> CuckooFpRate(int fingerprint_bits, double load) {
  if (!ValidCuckooFingerprintBits(fingerprint_bits)) {
    return Err(CuckooFingerprintBitsError(fingerprint_bits));
  }
  if (!ValidLoad(load)) return Err(LoadError(load));
  const double nonzero_values = std::ldexp(1.0, fingerprint_bits) - 1;
  return std::min(1.0, 2.0 * kCuckooSlotsPerBucket * load / nonzero_values);
}

Result<double> CuckooBitsPerKey(int fingerprint_bits, double load) {
  if (!ValidCuckooFingerprintBits(fingerprint_bits)) {
    return Err(CuckooFingerprintBitsError(fingerprint_bits));
  }
  if (!ValidLoad(load)) return Err(LoadError(load));
  return CuckooStaticSlotBits(fingerprint_bits) / load;
}

Result<uint64_t> CuckooBuckets(uint64_t num_keys, double load) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (!ValidLoad(load)) return Err(LoadError(load));
  const double buckets = std::ceil(static_cast<double>(num_keys) / (kCuckooSlotsPerBucket * load));
  // 32 bits per slot at most: keep buckets * 128 bits below 2^63.
  constexpr double kMaxBucketBits = kCuckooSlotsPerBucket * kCuckooMaxFingerprintBits;
  if (buckets >= kMaxFilterBits / kMaxBucketBits) {
    return Err(OverflowError("cuckoo filter", num_keys));
  }
  const uint64_t n = static_cast<uint64_t>(buckets);
  return std::max<uint64_t>(2, n + (n & 1));
}

}  // namespace sstfilter
