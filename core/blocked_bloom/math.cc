// SPDX-License-Identifier: Apache-2.0
#include "core/blocked_bloom/math.h"

#include <algorithm>
#include <cmath>

#include "core/bloom_common.h"
#include "core/sizing.h"
#include "core/standard_bloom/math.h"

namespace sstfilter {

Result<double> BlockedBloomFpRate(double bits_per_key, int num_probes, uint64_t num_keys) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (num_probes < 1 || num_probes > kMaxNumProbes) return Err(NumProbesError(num_probes));
  const double keys_per_block = kBloomBlockBits / bits_per_key;
  const double sd = std::sqrt(keys_per_block);
  const double crowded =
      StandardBloomRateAtLoad((keys_per_block + sd) / kBloomBlockBits, num_probes);
  const double sparse =
      StandardBloomRateAtLoad(std::max(0.0, keys_per_block - sd) / kBloomBlockBits, num_probes);
  return IndependentSum((crowded + sparse) / 2, HashCollisionRate(num_keys));
}

Result<double> BlockedBloomFpRateExact(double bits_per_key, int num_probes, uint64_t num_keys) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (num_probes < 1 || num_probes > kMaxNumProbes) return Err(NumProbesError(num_probes));
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
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
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
  if (!ValidFpRate(fp_rate)) return Err(FpRateError(fp_rate));
  auto best_rate = [](double b) {
    return BlockedBloomFpRateExact(b, BlockedBloomProbes(b).value(), 0).value();
  };
  if (best_rate(kMaxBitsPerKey) > fp_rate) {
    return Err(RateNeedsTooManyBitsError(fp_rate, " in a blocked Bloom filter"));
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

Result<uint64_t> BlockedBloomBlocks(uint64_t num_keys, double bits_per_key) {
  return UnitsForBudget(num_keys, bits_per_key, kBloomBlockBits);
}

}  // namespace sstfilter
