#include "core/sizing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace sstfilter {
namespace {

constexpr double kLn2 = 0.69314718055994530942;
// 2^64 as a double: every bit count must stay below it (and a byte count below 2^61).
constexpr double kTwoPow64 = 18446744073709551616.0;
// Bit counts are capped at 2^63 so that the byte count, and the sum of body and trailer, fit in
// 64 bits with room to spare.
constexpr double kMaxBits = kTwoPow64 / 2;

std::string Num(double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

bool RateOk(double p) { return p > 0.0 && p < 1.0; }  // false for NaN
bool BudgetOk(double b) { return b >= kMinBitsPerKey && b <= kMaxBitsPerKey; }
bool LoadOk(double a) { return a > 0.0 && a <= 1.0; }

std::string RateError(double p) { return "fp_rate must be in (0, 1), got " + Num(p); }
std::string BudgetError(double b) {
  return "bits_per_key must be in [" + Num(kMinBitsPerKey) + ", " + Num(kMaxBitsPerKey) +
         "], got " + Num(b);
}
std::string LoadError(double a) { return "load factor must be in (0, 1], got " + Num(a); }
const char* kNoKeys = "num_keys must be > 0";

// The chance that an absent key's 64-bit hash equals one of n present keys' hashes.
double HashCollisionRate(uint64_t num_keys) { return static_cast<double>(num_keys) / kTwoPow64; }

// P(A or B) for independent events: a filter false positive or a hash collision.
double IndependentSum(double a, double b) { return a + b - a * b; }

// Standard Bloom rate with k probes when `keys_per_bit` = n / m.
double StandardRate(double keys_per_bit, int k) {
  return std::pow(1.0 - std::exp(-k * keys_per_bit), k);
}

}  // namespace

Result<uint64_t> StandardBloomBits(uint64_t num_keys, double fp_rate) {
  if (num_keys == 0) return Err(kNoKeys);
  if (!RateOk(fp_rate)) return Err(RateError(fp_rate));
  const double bits = -static_cast<double>(num_keys) * std::log(fp_rate) / (kLn2 * kLn2);
  if (bits / static_cast<double>(num_keys) > kMaxBitsPerKey) {
    return Err("fp_rate " + Num(fp_rate) + " needs more than " + Num(kMaxBitsPerKey) +
               " bits per key");
  }
  if (bits >= kMaxBits) return Err("filter for " + std::to_string(num_keys) + " keys overflows");
  // Truncation, not rounding up: Guava's optimalNumOfBits casts to long, and its published
  // sizes are the reference the tests check.
  return std::max<uint64_t>(1, static_cast<uint64_t>(bits));
}

Result<int> StandardBloomProbes(uint64_t num_keys, uint64_t num_bits) {
  if (num_keys == 0) return Err(kNoKeys);
  if (num_bits == 0) return Err("num_bits must be > 0");
  const double k = std::round(static_cast<double>(num_bits) / num_keys * kLn2);
  if (k < 1) return 1;
  if (k > kMaxNumProbes) return kMaxNumProbes;
  return static_cast<int>(k);
}

Result<int> StandardBloomProbesForBitsPerKey(double bits_per_key) {
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  const long k = std::lround(bits_per_key * kLn2);
  return static_cast<int>(std::clamp<long>(k, 1, kMaxNumProbes));
}

Result<double> StandardBloomFpRate(uint64_t num_keys, uint64_t num_bits, int num_probes) {
  if (num_keys == 0) return Err(kNoKeys);
  if (num_bits == 0) return Err("num_bits must be > 0");
  if (num_probes < 1 || num_probes > kMaxNumProbes) {
    return Err("num_probes must be in [1, " + std::to_string(kMaxNumProbes) + "], got " +
               std::to_string(num_probes));
  }
  return StandardRate(static_cast<double>(num_keys) / static_cast<double>(num_bits), num_probes);
}

Result<double> StandardBloomBitsPerKey(double fp_rate) {
  if (!RateOk(fp_rate)) return Err(RateError(fp_rate));
  const double b = -std::log(fp_rate) / (kLn2 * kLn2);
  if (b > kMaxBitsPerKey) {
    return Err("fp_rate " + Num(fp_rate) + " needs more than " + Num(kMaxBitsPerKey) +
               " bits per key");
  }
  return b;
}

Result<double> StandardBloomFpRateForBitsPerKey(double bits_per_key) {
  auto k = StandardBloomProbesForBitsPerKey(bits_per_key);
  if (!k.ok()) return Err(k.error());
  return StandardRate(1.0 / bits_per_key, k.value());
}

Result<double> BlockedBloomFpRate(double bits_per_key, int num_probes, uint64_t num_keys) {
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  if (num_probes < 1 || num_probes > kMaxNumProbes) {
    return Err("num_probes must be in [1, " + std::to_string(kMaxNumProbes) + "]");
  }
  const double keys_per_block = kBloomBlockBits / bits_per_key;
  const double sd = std::sqrt(keys_per_block);
  const double crowded = StandardRate((keys_per_block + sd) / kBloomBlockBits, num_probes);
  const double sparse =
      StandardRate(std::max(0.0, keys_per_block - sd) / kBloomBlockBits, num_probes);
  return IndependentSum((crowded + sparse) / 2, HashCollisionRate(num_keys));
}

Result<double> BlockedBloomFpRateExact(double bits_per_key, int num_probes, uint64_t num_keys) {
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  if (num_probes < 1 || num_probes > kMaxNumProbes) {
    return Err("num_probes must be in [1, " + std::to_string(kMaxNumProbes) + "]");
  }
  // E over x ~ Poisson(lambda) of the chance that k probes all hit set bits in a block holding x
  // keys; each key sets k (not necessarily distinct) of the 512 bits, so a given bit stays clear
  // with probability (1 - 1/512)^{k x}. Terms beyond lambda + 12 sd (at least 40 terms) are below
  // 1e-30 of the total.
  const double lambda = kBloomBlockBits / bits_per_key;
  const double miss_one = std::log1p(-1.0 / kBloomBlockBits);  // ln(1 - 1/512)
  const int last = static_cast<int>(lambda + 12 * std::sqrt(lambda) + 40);
  double log_p = -lambda;  // ln P(x = 0)
  double rate = 0;
  for (int x = 0; x <= last; ++x) {
    if (x > 0) log_p += std::log(lambda) - std::log(static_cast<double>(x));
    const double bit_set = -std::expm1(num_probes * x * miss_one);
    rate += std::exp(log_p) * std::pow(bit_set, num_probes);
  }
  return IndependentSum(rate, HashCollisionRate(num_keys));
}

Result<int> BlockedBloomProbes(double bits_per_key) {
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  // The rate is unimodal in k; scan from 1 and stop at the first increase.
  int best_k = 1;
  double best = BlockedBloomFpRateExact(bits_per_key, 1, 0).value();
  for (int k = 2; k <= kMaxNumProbes; ++k) {
    const double r = BlockedBloomFpRateExact(bits_per_key, k, 0).value();
    if (r >= best) break;
    best = r;
    best_k = k;
  }
  return best_k;
}

Result<double> BlockedBloomBitsPerKey(double fp_rate) {
  if (!RateOk(fp_rate)) return Err(RateError(fp_rate));
  auto best_rate = [](double b) {
    return BlockedBloomFpRateExact(b, BlockedBloomProbes(b).value(), 0).value();
  };
  if (best_rate(kMaxBitsPerKey) > fp_rate) {
    return Err("fp_rate " + Num(fp_rate) + " needs more than " + Num(kMaxBitsPerKey) +
               " bits per key in a blocked Bloom filter");
  }
  // The best rate falls monotonically with the budget: bisect on hundredths of a bit.
  int lo = 1, hi = static_cast<int>(kMaxBitsPerKey * 100);  // in 0.01 bits/key
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (best_rate(mid / 100.0) <= fp_rate) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo / 100.0;
}

namespace {
Result<uint64_t> UnitsFor(uint64_t num_keys, double bits_per_key, int unit_bits) {
  if (num_keys == 0) return Err(kNoKeys);
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  const double bits = static_cast<double>(num_keys) * bits_per_key;
  if (bits >= kMaxBits) return Err("filter for " + std::to_string(num_keys) + " keys overflows");
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / unit_bits)));
}
}  // namespace

Result<uint64_t> BlockedBloomBlocks(uint64_t num_keys, double bits_per_key) {
  return UnitsFor(num_keys, bits_per_key, kBloomBlockBits);
}

Result<uint64_t> StandardBloomWords(uint64_t num_keys, double bits_per_key) {
  return UnitsFor(num_keys, bits_per_key, 64);
}

Result<int> CuckooFingerprintBits(double fp_rate) {
  if (!RateOk(fp_rate)) return Err(RateError(fp_rate));
  const double f = std::ceil(std::log2(2.0 * kCuckooSlotsPerBucket / fp_rate));
  if (f > kCuckooMaxFingerprintBits) {
    return Err("fp_rate " + Num(fp_rate) + " needs fingerprints wider than " +
               std::to_string(kCuckooMaxFingerprintBits) + " bits");
  }
  return std::max(kCuckooMinFingerprintBits, static_cast<int>(f));
}

Result<int> CuckooFingerprintBitsForBitsPerKey(double bits_per_key, double load) {
  if (!BudgetOk(bits_per_key)) return Err(BudgetError(bits_per_key));
  if (!LoadOk(load)) return Err(LoadError(load));
  const double f = std::floor(bits_per_key * load);
  if (f < kCuckooMinFingerprintBits) {
    return Err("bits_per_key " + Num(bits_per_key) + " is below the cuckoo minimum of " +
               Num(kCuckooMinFingerprintBits / load) + " (" +
               std::to_string(kCuckooMinFingerprintBits) + "-bit fingerprints at load " +
               Num(load) + ")");
  }
  return std::min(kCuckooMaxFingerprintBits, static_cast<int>(f));
}

Result<double> CuckooFpRate(int fingerprint_bits, double load) {
  if (fingerprint_bits < kCuckooMinFingerprintBits ||
      fingerprint_bits > kCuckooMaxFingerprintBits) {
    return Err("fingerprint_bits must be in [4, 32], got " + std::to_string(fingerprint_bits));
  }
  if (!LoadOk(load)) return Err(LoadError(load));
  const double nonzero_values = std::ldexp(1.0, fingerprint_bits) - 1;
  return std::min(1.0, 2.0 * kCuckooSlotsPerBucket * load / nonzero_values);
}

Result<double> CuckooBitsPerKey(int fingerprint_bits, double load) {
  if (fingerprint_bits < kCuckooMinFingerprintBits ||
      fingerprint_bits > kCuckooMaxFingerprintBits) {
    return Err("fingerprint_bits must be in [4, 32], got " + std::to_string(fingerprint_bits));
  }
  if (!LoadOk(load)) return Err(LoadError(load));
  return fingerprint_bits / load;
}

Result<uint64_t> CuckooBuckets(uint64_t num_keys, double load) {
  if (num_keys == 0) return Err(kNoKeys);
  if (!LoadOk(load)) return Err(LoadError(load));
  const double buckets = std::ceil(static_cast<double>(num_keys) / (kCuckooSlotsPerBucket * load));
  // 32 bits per slot at most: keep buckets * 128 bits below 2^63.
  if (buckets >= kMaxBits / 128) {
    return Err("cuckoo filter for " + std::to_string(num_keys) + " keys overflows");
  }
  const uint64_t n = static_cast<uint64_t>(buckets);
  return std::max<uint64_t>(2, n + (n & 1));
}

Result<double> InformationLimitBitsPerKey(double fp_rate) {
  if (!RateOk(fp_rate)) return Err(RateError(fp_rate));
  return -std::log2(fp_rate);
}

}  // namespace sstfilter
