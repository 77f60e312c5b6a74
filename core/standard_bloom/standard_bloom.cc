// SPDX-License-Identifier: Apache-2.0
#include "core/standard_bloom/standard_bloom.h"

#include <algorithm>

#include "core/batch.h"
#include "core/sizing.h"

namespace sstfilter {

Result<double> StandardBloom::EstimatedFpRate(const Params& params, uint64_t num_keys) {
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  // The real budget after rounding up to whole words.
  return StandardBloomFpRate(num_keys, units.value() * kUnitBytes * 8, params.num_probes);
}

double StandardBloom::NominalFpRate(const Params& params) {
  return StandardBloomRateAtLoad(1.0 / params.bits_per_key, params.num_probes);
}

void StandardBloom::SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes,
                            uint64_t n, uint8_t* body) {
  const uint64_t num_bits = num_units * 64;
  for (uint64_t i = 0; i < n; ++i) {
    ForEachStandardProbe(hashes[i], params.num_probes, num_bits, [body](uint64_t bit) {
      SetBit(body, bit);
      return true;
    });
  }
}

void StandardBloomReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                          BatchPrefetch prefetch) const {
  for (size_t start = 0; start < count; start += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - start);
    if (prefetch == BatchPrefetch::kInBatch) {
      for (size_t i = 0; i < n; ++i) Prefetch(hashes[start + i]);
    }
    for (size_t i = 0; i < n; ++i) may_match[start + i] = MayContain(hashes[start + i]);
  }
}

}  // namespace sstfilter
