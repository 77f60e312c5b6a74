// SPDX-License-Identifier: Apache-2.0
#include "core/sizing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sstfilter {

std::string FormatNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string FpRateError(double p) { return "fp_rate must be in (0, 1), got " + FormatNumber(p); }

std::string BitsPerKeyError(double b) {
  return "bits_per_key must be in [" + FormatNumber(kMinBitsPerKey) + ", " +
         FormatNumber(kMaxBitsPerKey) + "], got " + FormatNumber(b);
}

std::string LoadError(double a) { return "load factor must be in (0, 1], got " + FormatNumber(a); }

std::string RateNeedsTooManyBitsError(double p, const char* suffix) {
  return "fp_rate " + FormatNumber(p) + " needs more than " + FormatNumber(kMaxBitsPerKey) +
         " bits per key" + suffix;
}

std::string OverflowError(const char* what, uint64_t num_keys) {
  return std::string(what) + " for " + std::to_string(num_keys) + " keys overflows";
}

Result<uint64_t> UnitsForBudget(uint64_t num_keys, double bits_per_key, int unit_bits) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  const double bits = static_cast<double>(num_keys) * bits_per_key;
  if (bits >= kMaxFilterBits) return Err(OverflowError("filter", num_keys));
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / unit_bits)));
}

std::string FingerprintBitsError(int w, int lo, int hi) {
  return "fingerprint_bits must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], got " + std::to_string(w);
}

Result<int> FingerprintBitsForFpRate(double fp_rate, int max_bits) {
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  const double w = std::ceil(-std::log2(fp_rate) - 1e-9);  // 2^-w <= p, exact at powers of two
  if (w > max_bits) {
    return Err("fp_rate " + FormatNumber(fp_rate) + " needs fingerprints wider than " +
               std::to_string(max_bits) + " bits");
  }
  return std::max(1, static_cast<int>(w));
}

Result<double> InformationLimitBitsPerKey(double fp_rate) {
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  return -std::log2(fp_rate);
}

}  // namespace sstfilter
