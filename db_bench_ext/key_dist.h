// SPDX-License-Identifier: Apache-2.0
// The order a fill writes its keys in, and which keys the read benchmarks look up (--key_dist):
// uniform over the keys, or Zipfian, the skew of real lookups (a few keys take most of them:
// neighbours at the end of the key space, or, scrambled, keys all over it).
#pragma once

#include <cstdint>
#include <vector>

namespace db_bench_ext {

// The keys 0 .. num - 1 in an order drawn from the seed (fillrandom, readmissingwriterandom).
std::vector<uint64_t> RandomOrder(uint64_t num, uint64_t seed);

// The keys 0 .. num - 1 in ascending order (fillseq, filltimeseries), but for late data: with
// chance late_fraction a key is due d places after its own (d from 1 to late_keys, drawn
// uniformly from the seed), as late events reach a time series; keys due at the same place keep
// their own order, so such a key is written after at most d - 1 higher keys. Every key is written
// once either way.
std::vector<uint64_t> SequentialOrder(uint64_t num, double late_fraction, uint64_t late_keys,
                                      uint64_t seed);

class KeyDist {
 public:
  // Uniform over [0, n): theta 0. Zipfian with exponent theta in (0, 1): index n - 1 - r has
  // probability proportional to 1 / (r + 1)^theta, so the hottest keys are the last written of an
  // ordered fill, and neighbours share their heat (lookups of a skewed key range). Scrambled, the
  // same law with the indexes permuted (Scramble), so that the hottest keys lie all over the key
  // space, as YCSB's zipfian draws them (hot keys that are not neighbours).
  KeyDist(uint64_t n, double theta, bool scrambled = false);

  // An index in [0, n), from *rng (SplitMix64's state).
  uint64_t Next(uint64_t* rng) const;

  // Where a scrambled draw puts index i: (a i + c) mod n, a bijection of [0, n) (a is coprime
  // to n) that spreads consecutive indexes about a / n of the key space apart (a / n near the
  // golden ratio's fraction); i itself when not scrambled.
  uint64_t Scramble(uint64_t i) const;

 private:
  uint64_t n_;
  double theta_;
  bool scrambled_;
  uint64_t multiplier_ = 1, offset_ = 0;
  // Gray, Sundaresan, Englert, Baclawski, Weinberger, "Quickly Generating Billion-Record
  // Synthetic Databases", SIGMOD 1994 (YCSB's generator): zeta(n, theta) and the constants of its
  // inversion.
  double zeta_n_ = 0, alpha_ = 0, eta_ = 0, half_pow_theta_ = 0;
};

}  // namespace db_bench_ext
