// Helpers shared by the test suites: deterministic key sets and the statistical bound that
// measured false-positive rates are checked against.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hash.h"

namespace sstfilter::testing {

// The i-th key of a key set: 16 bytes, `set` in the first 8 and `i` in the last 8, so sets with
// different `set` values are disjoint. Hashed with the real KeyHash, as the plugin does.
inline uint64_t KeyHashOf(uint64_t set, uint64_t i) {
  unsigned char key[16];
  for (int b = 0; b < 8; ++b) {
    key[b] = static_cast<unsigned char>(set >> (8 * b));
    key[8 + b] = static_cast<unsigned char>(i >> (8 * b));
  }
  return KeyHash(key, sizeof(key));
}

inline std::vector<uint64_t> KeyHashes(uint64_t set, uint64_t count) {
  std::vector<uint64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = KeyHashOf(set, i);
  return out;
}

// Largest deviation of a Binomial(trials, p) count from its mean that a correct filter may show at
// `sigmas` standard deviations. The tests run at fixed seeds, so they are deterministic; 5 sigma
// means a correct implementation would fail for fewer than 1 in 1.7 million seeds.
inline double BinomialTolerance(double trials, double p, double sigmas = 5.0) {
  return sigmas * std::sqrt(trials * p * (1.0 - p));
}

}  // namespace sstfilter::testing
