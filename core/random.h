// SPDX-License-Identifier: Apache-2.0
// SplitMix64 (Steele, Lea, Flood, "Fast Splittable Pseudorandom Number Generators", 2014): the one
// pseudorandom generator of sstfilter, for the cuckoo build's eviction walks and for benchmark
// and test workloads (but db_bench_ext's fillrandom order, std::shuffle's: key_dist.cc).
// Deterministic for a given seed, so builds and benchmarks repeat exactly. Not for anything that
// must be unpredictable.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hash.h"

namespace sstfilter {

// Advances *state and returns the next 64-bit value of the sequence it seeds.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += kGoldenMul64);  // the golden-ratio increment: a full-period Weyl step
  z = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebull;
  return z ^ (z >> 31);
}

// A double in [0, 1) from the top 53 bits of `bits`: uniform where the bits are, every value a
// multiple of 2^-53.
inline double UnitInterval(uint64_t bits) {
  return std::ldexp(static_cast<double>(bits >> 11), -53);
}

}  // namespace sstfilter
