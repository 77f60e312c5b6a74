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

Result<double> InformationLimitBitsPerKey(double fp_rate) {
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  return -std::log2(fp_rate);
}

}  // namespace sstfilter
