// SPDX-License-Identifier: Apache-2.0
// What every filter kind's sizing math shares: the accepted ranges of budgets and rates, their
// validation and error messages, the exact inverse of a size function, and the information limit.
// The formulas of each kind live in its own folder (core/<kind>/math.h); builders, the RocksDB
// plugin, the benchmarks and the tests all call those functions, never a copy of a formula.
//
// Every function validates its input and returns an error message for n = 0 where that is
// meaningless, rates outside (0, 1), NaN, infinities, budgets outside [kMinBitsPerKey,
// kMaxBitsPerKey], and sizes that would overflow 64 bits.
//
// Units: rates are probabilities (0.01 means 1%), sizes are bits unless a name says bytes.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace sstfilter {

// The smallest space budget accepted anywhere. Below it every filter matches nearly every key,
// and the blocked-Bloom estimate's Poisson mean (512 / bits_per_key keys per block) stops fitting
// the arithmetic that evaluates it (found by the options fuzzer at 1e-55 bits/key).
inline constexpr double kMinBitsPerKey = 0.01;
// The largest space budget accepted anywhere. 100 bits/key already buys a rate near 1e-21, far
// below the 64-bit hash collision floor (n / 2^64); larger values are a mistake, not a wish.
inline constexpr double kMaxBitsPerKey = 100.0;

inline constexpr double kLn2 = 0.69314718055994530942;
// 2^64 as a double.
inline constexpr double kTwoPow64 = 18446744073709551616.0;
// The most bits any filter may have: 2^63, so that its byte count, and the sum of body and
// trailer, fit in 64 bits with room to spare.
inline constexpr double kMaxFilterBits = kTwoPow64 / 2;

// Validation shared by the kinds; each returns false for NaN.
inline bool ValidFpRate(double p) { return p > 0.0 && p < 1.0; }
inline bool ValidBitsPerKey(double b) { return b >= kMinBitsPerKey && b <= kMaxBitsPerKey; }
inline bool ValidLoad(double a) { return a > 0.0 && a <= 1.0; }

// The error messages that go with them, and with an empty key set.
std::string FpRateError(double p);
std::string BitsPerKeyError(double b);
std::string LoadError(double a);
inline constexpr const char* kNoKeysError = "num_keys must be > 0";
// "fp_rate P needs more than 100 bits per key" (+ suffix), for a rate no budget reaches.
std::string RateNeedsTooManyBitsError(double p, const char* suffix = "");
// "filter for N keys overflows".
std::string OverflowError(const char* what, uint64_t num_keys);
// "fingerprint_bits must be in [LO, HI], got W".
std::string FingerprintBitsError(int w, int lo, int hi);
// A number as a short string ("%g"), for messages.
std::string FormatNumber(double v);

// The chance that an absent key's 64-bit hash equals one of n present keys' hashes: n / 2^64.
inline double HashCollisionRate(uint64_t num_keys) {
  return static_cast<double>(num_keys) / kTwoPow64;
}

// P(A or B) for independent events: a filter false positive or a hash collision.
inline double IndependentSum(double a, double b) { return a + b - a * b; }

// ceil(n * bits_per_key / unit_bits), at least 1: the units (blocks, words) of a filter that
// spends bits_per_key on each of n keys. Errors for n = 0, a budget out of range, or overflow.
Result<uint64_t> UnitsForBudget(uint64_t num_keys, double bits_per_key, int unit_bits);

// The largest n with bytes_for(n) <= bytes, for a size function bytes_for(n) -> Result<uint64_t>
// that is non-decreasing in n (an error counts as "does not fit"): the exact inverse that
// RocksDB's ApproximateNumEntries asks for. A size that is not monotone (a fuse or Ribbon budget,
// whose fingerprint narrows when the table's rounding grows: at 10 bits/key, 1,016 Ribbon keys
// take 1,184 bytes and 1,015 take 1,256) still gives an n that fits and whose n + 1 does not,
// though a larger n may fit too: a partition a little smaller than it could be, never larger.
// `guess` is a floating-point estimate of the answer; a bracket around it, then bisection, finds
// the boundary in at most about 130 evaluations.
template <typename BytesFor>
uint64_t MaxKeysFitting(uint64_t bytes, double guess, BytesFor&& bytes_for) {
  auto fits = [&](uint64_t n) {
    const auto b = bytes_for(n);
    return b.ok() && b.value() <= bytes;
  };
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  uint64_t lo = 0, hi = 0;  // invariant after bracketing: fits(lo) (or lo = 0), !fits(hi)
  const uint64_t start = guess < 1 ? 1 : guess >= 4.0e18 ? kLimit : static_cast<uint64_t>(guess);
  if (fits(start)) {
    lo = start;
    hi = start;
    do {
      lo = hi;
      hi = hi >= kLimit / 2 ? kLimit : hi * 2;
    } while (hi < kLimit && fits(hi));
    if (fits(hi)) return hi;
  } else {
    hi = start;
    lo = start / 2;
    while (lo > 0 && !fits(lo)) {
      hi = lo;
      lo /= 2;
    }
    if (lo == 0 && !fits(0)) return 0;
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The fingerprint bits of an xor-family filter (a w-bit check that an absent key passes with
// chance 2^-w) for rate p: ceil(log2(1/p)), at least 1; an error above max_bits.
Result<int> FingerprintBitsForFpRate(double fp_rate, int max_bits);

// Information-theoretic minimum bits per key for rate p: log2(1/p) (6.64 at 1%).
Result<double> InformationLimitBitsPerKey(double fp_rate);

}  // namespace sstfilter
