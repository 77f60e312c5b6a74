// SPDX-License-Identifier: Apache-2.0
// Sizing math of the standard Bloom filter (Bloom 1970): k independent probes over the whole m-bit
// array. Shared validation and limits: core/sizing.h.
#pragma once

#include <cstdint>

#include "core/result.h"

namespace sstfilter {

// Optimal bits for n keys at rate p: m = -n ln p / (ln 2)^2, truncated as Guava's
// BloomFilter.optimalNumOfBits does (1000 keys at 1e-16 -> 76680 bits).
Result<uint64_t> StandardBloomBits(uint64_t num_keys, double fp_rate);

// Probes for m bits holding n keys: k = round(m / n * ln 2), at least 1, at most kMaxNumProbes.
Result<int> StandardBloomProbes(uint64_t num_keys, uint64_t num_bits);

// Probes for a budget of b bits per key: round(b ln 2), at least 1, at most kMaxNumProbes.
Result<int> StandardBloomProbesForBitsPerKey(double bits_per_key);

// Expected false-positive rate of n keys in m bits with k probes: (1 - e^{-kn/m})^k.
Result<double> StandardBloomFpRate(uint64_t num_keys, uint64_t num_bits, int num_probes);

// The same formula from the load n / m, unvalidated: for other formulas built on it (the blocked
// layout's per-block estimate).
double StandardBloomRateAtLoad(double keys_per_bit, int num_probes);

// Bits per key to reach rate p with the optimal probe count: -ln p / (ln 2)^2.
Result<double> StandardBloomBitsPerKey(double fp_rate);

// The inverse: the rate reached by a budget of b bits per key with k = round(b ln 2) probes.
Result<double> StandardBloomFpRateForBitsPerKey(double bits_per_key);

// 64-bit words of the standard layout for n keys at b bits per key: ceil(n b / 64), at least 1.
Result<uint64_t> StandardBloomWords(uint64_t num_keys, double bits_per_key);

}  // namespace sstfilter
