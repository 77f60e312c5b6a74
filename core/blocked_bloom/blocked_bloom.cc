// SPDX-License-Identifier: Apache-2.0
#include "core/blocked_bloom/blocked_bloom.h"

#include <algorithm>

#include "core/batch.h"
#include "core/blocked_bloom/simd.h"
#include "core/sizing.h"

namespace sstfilter {

Result<double> BlockedBloom::EstimatedFpRate(const Params& params, uint64_t num_keys) {
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  // The real budget after rounding up to whole blocks, which can exceed the nominal one.
  const double num_bits = static_cast<double>(units.value() * kBloomBlockBits);
  const double bits_per_key = std::min(kMaxBitsPerKey, num_bits / static_cast<double>(num_keys));
  return BlockedBloomFpRateExact(bits_per_key, params.num_probes, num_keys);
}

double BlockedBloom::NominalFpRate(const Params& params) {
  return BlockedBloomFpRateExact(params.bits_per_key, params.num_probes, 0).value();
}

std::vector<BlockedBloomParams> BlockedBloom::LevelOffers() {
  constexpr double kStep = 0.05;
  constexpr double kMaxOfferedBits = 60;
  std::vector<Params> offers;
  const int steps = static_cast<int>(kMaxOfferedBits / kStep);
  for (int i = 1; i <= steps; ++i) offers.push_back(ForBitsPerKey(i * kStep).value());
  return offers;
}

void BlockedBloom::SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes,
                           uint64_t n, uint8_t* body) {
  BlockedBloomSetBitsSimd(params.num_probes, num_units, hashes, n, body);
}

void BlockedBloom::SetBitsScalar(int num_probes, uint64_t num_blocks, const uint64_t* hashes,
                                 uint64_t n, uint8_t* body) {
  ForEachKeyBlock(body, num_blocks, hashes, n, BlockPrefetch::kToWrite,
                  [num_probes, hashes](uint8_t* block, uint64_t i) {
                    ForEachBlockedProbe(hashes[i], num_probes, [block](uint32_t bit) {
                      SetBit(block, bit);
                      return true;
                    });
                  });
}

void BlockedBloomReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                         BatchPrefetch prefetch) const {
  BlockedBloomMayContainBatchSimd(blocks_, num_blocks_, num_probes_, hashes, count, may_match,
                                  prefetch);
}

void BlockedBloomReader::MayContainBatchScalar(const uint64_t* hashes, size_t count,
                                               bool* may_match, BatchPrefetch prefetch) const {
  ForEachKeyBlock(blocks_, num_blocks_, hashes, count, QueryBlockPrefetch(prefetch),
                  [this, hashes, may_match](const uint8_t* block, uint64_t i) {
                    may_match[i] = MatchInBlock(block, hashes[i]);
                  });
}

}  // namespace sstfilter
