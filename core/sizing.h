// Sizing math for every sstfilter filter: from a key count and a target false-positive rate (or a
// bits-per-key budget) to bits, probes and fingerprint widths, and back to the rate to expect.
//
// This is the one place where these formulas live; builders, the RocksDB plugin, the benchmarks
// and the tests all call these functions. Every function validates its input and returns an
// error message for n = 0 where that is meaningless, rates outside (0, 1), NaN, infinities,
// budgets outside [kMinBitsPerKey, kMaxBitsPerKey], and sizes that would overflow 64 bits.
//
// Units: rates are probabilities (0.01 means 1%), sizes are bits unless a name says bytes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/result.h"

namespace sstfilter {

// The smallest space budget accepted anywhere. Below it every filter matches nearly every key,
// and the blocked-Bloom estimate's Poisson mean (512 / bits_per_key keys per block) stops fitting
// the arithmetic that evaluates it (found by the options fuzzer at 1e-55 bits/key).
inline constexpr double kMinBitsPerKey = 0.01;
// The largest space budget accepted anywhere. 100 bits/key already buys a rate near 1e-21, far
// below the 64-bit hash collision floor (n / 2^64); larger values are a mistake, not a wish.
inline constexpr double kMaxBitsPerKey = 100.0;
// The most probes any Bloom filter uses or accepts (the format stores it in one byte).
inline constexpr int kMaxNumProbes = 128;
// Bits in one block of the blocked ("cache-local") Bloom layout: one 64-byte cache line.
inline constexpr int kBloomBlockBits = 512;

// ---------------------------------------------------------------------------------------------
// Standard Bloom filter (Bloom 1970): k independent probes over the whole m-bit array.
// ---------------------------------------------------------------------------------------------

// Optimal bits for n keys at rate p: m = -n ln p / (ln 2)^2, truncated as Guava's
// BloomFilter.optimalNumOfBits does (1000 keys at 1e-16 -> 76680 bits).
Result<uint64_t> StandardBloomBits(uint64_t num_keys, double fp_rate);

// Probes for m bits holding n keys: k = round(m / n * ln 2), at least 1, at most kMaxNumProbes.
Result<int> StandardBloomProbes(uint64_t num_keys, uint64_t num_bits);

// Probes for a budget of b bits per key: round(b ln 2), at least 1, at most kMaxNumProbes.
Result<int> StandardBloomProbesForBitsPerKey(double bits_per_key);

// Expected false-positive rate of n keys in m bits with k probes: (1 - e^{-kn/m})^k.
Result<double> StandardBloomFpRate(uint64_t num_keys, uint64_t num_bits, int num_probes);

// Bits per key to reach rate p with the optimal probe count: -ln p / (ln 2)^2.
Result<double> StandardBloomBitsPerKey(double fp_rate);

// The inverse: the rate reached by a budget of b bits per key with k = round(b ln 2) probes.
Result<double> StandardBloomFpRateForBitsPerKey(double bits_per_key);

// ---------------------------------------------------------------------------------------------
// Blocked ("cache-local") Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and
// Space-Efficient Bloom Filters", 2007): every probe of a key lands in one 512-bit block chosen by
// the key's hash, so a query touches one cache line. Blocks receive a Poisson-distributed number of
// keys (mean 512 / bits_per_key), and crowded blocks cost more than sparse ones save, so the rate
// is worse than the standard layout's at the same budget and the best probe count is lower than
// b ln 2 above about 10 bits/key.
// ---------------------------------------------------------------------------------------------

// The rate estimate used by RocksDB's BloomMath::CacheLocalFpRate: the standard rate of one block
// averaged at occupancy mean + sd and mean - sd (sd = sqrt(mean), Poisson), combined with the
// chance that an absent key's 64-bit hash equals a present key's (num_keys / 2^64).
Result<double> BlockedBloomFpRate(double bits_per_key, int num_probes, uint64_t num_keys);

// The same rate without the +/- one standard deviation shortcut: the exact expectation over the
// Poisson occupancy of a block, sum_x P(x) (1 - (1 - 1/512)^{k x})^k, plus the collision term.
// The shortcut is within 1% of it up to 11 bits/key and 5% up to 16, but underestimates above
// (by 11% at 20 bits/key, 24% at 24), because the rate is far from linear in the occupancy there.
// This one chooses probes and is what the tests measure filters against: it leaves no model error
// for a statistical bound to absorb.
Result<double> BlockedBloomFpRateExact(double bits_per_key, int num_probes, uint64_t num_keys);

// The probe count that minimises BlockedBloomFpRateExact for this budget.
Result<int> BlockedBloomProbes(double bits_per_key);

// The smallest budget (to 0.01 bits/key) whose best blocked rate is at most p.
Result<double> BlockedBloomBitsPerKey(double fp_rate);

// Blocks for n keys at b bits per key: ceil(n b / 512), at least 1.
Result<uint64_t> BlockedBloomBlocks(uint64_t num_keys, double bits_per_key);

// 64-bit words for the standard layout: ceil(n b / 64), at least 1.
Result<uint64_t> StandardBloomWords(uint64_t num_keys, double bits_per_key);

// ---------------------------------------------------------------------------------------------
// Cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo Filter: Practically Better Than
// Bloom", CoNEXT 2014), with b = 4 slots per bucket. A query compares its f-bit fingerprint with
// the up to 2b occupied slots of its two buckets; at load a that is 2ba comparisons, each a match
// with chance 1/(2^f - 1) (sstfilter reserves the fingerprint 0 for "empty"). The rate is the
// paper's first-order p = 2ba / (2^f - 1) (section 5.1). It is exact, not just an upper bound, for
// sstfilter's static builds: they never store a fingerprint twice in one key's bucket pair, so the
// 2ba compared fingerprints are distinct (measured: 11.38% at f = 6 against 11.36% from this
// formula and 10.8% from the independent-slots form 1 - (1 - 1/(2^f - 1))^{2ba}).
// ---------------------------------------------------------------------------------------------

inline constexpr int kCuckooSlotsPerBucket = 4;
inline constexpr int kCuckooMinFingerprintBits = 4;
inline constexpr int kCuckooMaxFingerprintBits = 32;
// The load static builds aim for. The paper measures 95.5% as the reachable load of 4-slot
// buckets (section 5.2); 95% leaves a margin so that placement rarely needs a retry.
inline constexpr double kCuckooTargetLoad = 0.95;

// Fingerprint bits for rate p: the paper's f >= log2(2b / p) (section 5.1), which reaches p at
// any load up to 1 - 2^-f; at least kCuckooMinFingerprintBits, error if it needs more than 32.
Result<int> CuckooFingerprintBits(double fp_rate);

// Fingerprint bits that fit a budget of b bits per key at load `load`: floor(b * load). Error if
// that is below kCuckooMinFingerprintBits; clamped to 32.
Result<int> CuckooFingerprintBitsForBitsPerKey(double bits_per_key, double load);

// Expected rate at fingerprint width f and load a in (0, 1]: min(1, 2ba / (2^f - 1)).
Result<double> CuckooFpRate(int fingerprint_bits, double load);

// Bits per key at width f and load a: f / a.
Result<double> CuckooBitsPerKey(int fingerprint_bits, double load);

// Buckets for n keys at load a: ceil(n / (b a)), rounded up to even (the alternate-bucket function
// needs an even count), at least 2.
Result<uint64_t> CuckooBuckets(uint64_t num_keys, double load);

// The largest n with bytes_for(n) <= bytes, for a size function bytes_for(n) -> Result<uint64_t>
// that is non-decreasing in n (an error counts as "does not fit"): the exact inverse that
// RocksDB's ApproximateNumEntries asks for. `guess` is a floating-point estimate of the answer; a
// bracket around it, then bisection, finds the boundary in at most about 130 evaluations.
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

// Information-theoretic minimum bits per key for rate p: log2(1/p) (6.64 at 1%).
Result<double> InformationLimitBitsPerKey(double fp_rate);

}  // namespace sstfilter
