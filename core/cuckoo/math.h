// SPDX-License-Identifier: Apache-2.0
// Sizing math of the cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo Filter:
// Practically Better Than Bloom", CoNEXT 2014), with b = 4 slots per bucket. A query compares its
// f-bit fingerprint with the up to 2b occupied slots of its two buckets; at load a that is 2ba
// comparisons, each a match with chance 1/(2^f - 1) (sstfilter reserves the fingerprint 0 for
// "empty"). The rate is the paper's first-order p = 2ba / (2^f - 1) (section 5.1). It is exact, not
// just an upper bound, for sstfilter's static builds: they never store a fingerprint twice in one
// key's bucket pair, so the 2ba compared fingerprints are distinct (measured: 11.38% at f = 6
// against 11.36% from this formula and 10.8% from the independent-slots form
// 1 - (1 - 1/(2^f - 1))^{2ba}). Shared validation and limits: core/sizing.h.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace sstfilter {

inline constexpr int kCuckooSlotsPerBucket = 4;
// Fingerprint widths: at 3 bits the rate 2ba / (2^f - 1) exceeds 1 at the target load (4 bits:
// 51%); above 32 a slot no longer fits the 32-bit fingerprint arithmetic (and 32 bits already
// reach 1.8e-9 at 95% load).
inline constexpr int kCuckooMinFingerprintBits = 4;
inline constexpr int kCuckooMaxFingerprintBits = 32;
// The load static builds aim for. The paper measures 95.5% as the reachable load of 4-slot
// buckets (section 5.2); 95% leaves a margin so that placement rarely needs a retry.
inline constexpr double kCuckooTargetLoad = 0.95;

// Static builds semi-sort their buckets (core/cuckoo/semi_sorted_table.h) from 5-bit fingerprints
// on: each slot then costs f - 1 bits. A 4-bit fingerprint has no low part to keep, so it stays
// plain, and costs what a semi-sorted 5-bit one does at a higher rate: sizing never picks it.
inline constexpr int kCuckooSemiSortMinFingerprintBits = 5;

// Bits a slot of a static filter costs: f - 1 semi-sorted, f plain.
inline constexpr int CuckooStaticSlotBits(int f) {
  return f >= kCuckooSemiSortMinFingerprintBits ? f - 1 : f;
}

inline bool ValidCuckooFingerprintBits(int f) {
  return f >= kCuckooMinFingerprintBits && f <= kCuckooMaxFingerprintBits;
}
// "fingerprint_bits must be in [4, 32], got F".
std::string CuckooFingerprintBitsError(int f);

// Fingerprint bits for rate p: the paper's f >= log2(2b / p) (section 5.1), which reaches p at
// any load up to 1 - 2^-f; at least kCuckooSemiSortMinFingerprintBits, error if it needs more than
// 32.
Result<int> CuckooFingerprintBits(double fp_rate);

// Fingerprint bits of a static filter that fit a budget of b bits per key at load `load`: slots of
// floor(b * load) bits, so floor(b * load) + 1 semi-sorted bits. Error if the slot is below 4 bits;
// clamped to 32.
Result<int> CuckooFingerprintBitsForBitsPerKey(double bits_per_key, double load);

// Expected rate at fingerprint width f and load a in (0, 1]: min(1, 2ba / (2^f - 1)).
Result<double> CuckooFpRate(int fingerprint_bits, double load);

// Bits per key of a static filter at width f and load a: CuckooStaticSlotBits(f) / a.
Result<double> CuckooBitsPerKey(int fingerprint_bits, double load);

// Buckets for n keys at load a: ceil(n / (b a)), rounded up to even (the alternate-bucket function
// needs an even count), at least 2.
Result<uint64_t> CuckooBuckets(uint64_t num_keys, double load);

}  // namespace sstfilter
