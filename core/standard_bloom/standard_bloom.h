// SPDX-License-Identifier: Apache-2.0
// The standard Bloom filter kind (FilterKind 2): probes over the whole bit array by enhanced
// double hashing (Dillinger and Manolios 2004): x = h, delta = rotl(h, 32) * kGoldenMul64 | 1,
// probe i is FastRange64(x, num_bits), then x += delta, delta += i. The best rate per bit of the
// Bloom kinds, but one cache miss per probe: for small filters and comparison.
//
// Body: num_units * 8 bytes = num_units * 64 bits; bit j is bit (j & 7) of byte j >> 3.
// Trailer (core/format.h): num_keys, num_units = 64-bit words, seed 0, param = num_probes.
// Sizing math: core/standard_bloom/math.h. Every byte: docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/batch.h"
#include "core/bloom_common.h"
#include "core/hash.h"
#include "core/standard_bloom/math.h"

namespace sstfilter {

struct StandardBloomParams : BloomParams {};

// Probe positions 0..num_bits-1 of the whole array, shared by the builder and the reader.
// `visit(bit)` returns false to stop early; returns false iff a visit did.
template <typename Visit>
inline bool ForEachStandardProbe(uint64_t hash, int num_probes, uint64_t num_bits, Visit&& visit) {
  uint64_t x = hash;
  uint64_t delta = (((hash << 32) | (hash >> 32)) * kGoldenMul64) | 1;
  for (int i = 0; i < num_probes; ++i) {
    if (!visit(FastRange64(x, num_bits))) return false;
    x += delta;
    delta += static_cast<uint64_t>(i);
  }
  return true;
}

// A view over a parsed standard-Bloom body. Cheap to copy; does not own the bytes.
class StandardBloomReader {
 public:
  StandardBloomReader() = default;
  StandardBloomReader(const uint8_t* bits, uint64_t num_words, int num_probes)
      : bits_(bits), num_bits_(num_words * 64), num_probes_(num_probes) {}

  bool MayContain(uint64_t hash) const {
    return ForEachStandardProbe(hash, num_probes_, num_bits_,
                                [this](uint64_t bit) { return TestBit(bits_, bit); });
  }

  // Starts loading the key's first probe (the others are independent lines: a miss usually ends at
  // the first or second).
  void Prefetch(uint64_t hash) const {
    PrefetchBytes(bits_ + (FastRange64(hash, num_bits_) >> 3), 1);
  }

  // Prefetches each key's first probe (unless the caller did: BatchPrefetch), then tests them.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;

 private:
  const uint8_t* bits_ = nullptr;
  uint64_t num_bits_ = 0;
  int num_probes_ = 0;
};

// The kind's descriptor (the operations every kind provides: core/kinds.h).
struct StandardBloom : BloomKindOps<StandardBloom, StandardBloomParams> {
  using Params = StandardBloomParams;
  using Reader = StandardBloomReader;
  static constexpr FilterKind kId = FilterKind{2};
  static constexpr const char* kName = "standard_bloom";
  static constexpr uint8_t kMaxVersion = 1;
  static constexpr const char* kLayoutName = "standard";
  static constexpr uint64_t kUnitBytes = 8;  // one 64-bit word

  // Its math (core/standard_bloom/math.h), for ForBitsPerKey and ForFpRate (core/bloom_common.h).
  static Result<int> ProbesForBitsPerKey(double b) { return StandardBloomProbesForBitsPerKey(b); }
  static Result<double> BitsPerKeyForFpRate(double p) { return StandardBloomBitsPerKey(p); }

  // 64-bit words for num_keys keys.
  static Result<uint64_t> Units(const Params& params, uint64_t num_keys) {
    return StandardBloomWords(num_keys, params.bits_per_key);
  }
  static Result<double> EstimatedFpRate(const Params& params, uint64_t num_keys);
  static double NominalFpRate(const Params& params);
  // None. A query costs a cache miss per probe (7 at 10 bits/key, against the blocked layout's
  // one), and the allocation weighs only memory and false positives, not query time; so
  // sstfilter.Leveled keeps to kinds whose queries cost one or two cache misses.
  static std::vector<Params> LevelOffers() { return {}; }

  static void SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes, uint64_t n,
                      uint8_t* body);

  static Reader OpenReader(const Trailer& t, const uint8_t* body) {
    return Reader(body, t.num_units, t.param);
  }
};

}  // namespace sstfilter
