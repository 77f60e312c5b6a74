// SPDX-License-Identifier: Apache-2.0
// Sizing math of the blocked ("cache-local") Bloom filter (Putze, Sanders, Singler, "Cache-, Hash-
// and Space-Efficient Bloom Filters", 2007): every probe of a key lands in one 512-bit block
// chosen by the key's hash, so a query touches one cache line. Blocks receive a Poisson-distributed
// number of keys (mean 512 / bits_per_key), and crowded blocks cost more than sparse ones save, so
// the rate is worse than the standard layout's at the same budget, and the best probe count is
// below the standard layout's round(b ln 2) for every budget above 12.26 bits/key (computed in
// 0.01 steps from 1 to 40; below that only where b ln 2 just rounds up, as at 5.05). Shared
// validation and limits: core/sizing.h.
#pragma once

#include <cstdint>

#include "core/result.h"

namespace sstfilter {

// Bits in one block: one 64-byte cache line.
inline constexpr int kBloomBlockBits = 512;

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

}  // namespace sstfilter
