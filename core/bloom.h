// Bloom filters over 64-bit key hashes, in two layouts:
//
//  - blocked (FilterKind::kBlockedBloom, the default): the key hash picks one 64-byte block with
//    FastRange64 (its high bits), and all num_probes bits of the key lie in that block, so a query
//    costs one cache miss. Probe positions are successive 9-bit windows, from the top, of
//    x = h * kGoldenMul64 (7 windows per product; for more probes x is multiplied again). The
//    product is a bijection of h, so for uniform h its windows are uniform and independent of one
//    another; they are nearly independent of the block, which depends only on h's high bits.
//  - standard (FilterKind::kStandardBloom): probes over the whole array by enhanced double hashing
//    (Dillinger and Manolios 2004): x = h, delta = rotl(h, 32) * kGoldenMul64 | 1, probe i is
//    FastRange64(x, num_bits), then x += delta, delta += i. The best rate per bit, one cache
//    miss per probe: for small filters and comparison.
//
// Body layout (see core/format.h for the trailer):
//  - blocked: num_units blocks of 64 bytes; bit j of a block is bit (j & 7) of its byte j >> 3.
//  - standard: num_units * 8 bytes = num_units * 64 bits; bit j is bit (j & 7) of byte j >> 3.
// Trailer: num_keys, num_units, seed 0, param = num_probes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/format.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/result.h"

namespace sstfilter {

enum class BloomLayout { kBlocked, kStandard };

struct BloomParams {
  BloomLayout layout = BloomLayout::kBlocked;
  double bits_per_key = 10;
  int num_probes = 6;
};

// Parameters for a space budget: the probe count that minimises the layout's rate.
Result<BloomParams> BloomParamsForBitsPerKey(BloomLayout layout, double bits_per_key);
// Parameters for a target rate: the smallest budget whose estimated rate is at most fp_rate.
Result<BloomParams> BloomParamsForFpRate(BloomLayout layout, double fp_rate);

// The estimated false-positive rate of a filter with these parameters holding num_keys keys.
Result<double> BloomEstimatedFpRate(const BloomParams& params, uint64_t num_keys);

// Size in bytes (body and trailer) of the filter for num_keys distinct keys. 32 for zero keys.
Result<uint64_t> BloomFilterBytes(const BloomParams& params, uint64_t num_keys);

// The most keys whose filter fits in `bytes`: the exact inverse of BloomFilterBytes
// (BloomFilterBytes(MaxKeys(b)) <= b < BloomFilterBytes(MaxKeys(b) + 1)).
uint64_t BloomMaxKeysForBytes(const BloomParams& params, uint64_t bytes);

// Writes the filter for hashes[0, num_keys) into dst, which must hold exactly
// BloomFilterBytes(params, num_keys) bytes. Duplicates are harmless but count as keys; callers
// skip consecutive duplicates as they arrive.
void WriteBloomFilter(const BloomParams& params, const uint64_t* hashes, uint64_t num_keys,
                      uint8_t* dst);

// Convenience for tests and tools: skips consecutive duplicate hashes, sizes, writes.
Result<std::string> BuildBloomFilter(const BloomParams& params, const uint64_t* hashes,
                                     size_t count);
// The same from the chunked hash list of a builder (already free of consecutive repeats).
Result<std::string> BuildBloomFilter(const BloomParams& params, const HashList& hashes);

// Probe positions, shared by builders and readers so that the two cannot disagree. `visit(bit)`
// returns false to stop early; the functions return false iff a visit did.

// Blocked layout: bit positions 0..511 inside the key's block.
template <typename Visit>
inline bool ForEachBlockedProbe(uint64_t hash, int num_probes, Visit&& visit) {
  constexpr int kProbesPerProduct = 7;  // 7 windows of 9 bits in 64
  uint64_t x = hash;
  while (num_probes > 0) {
    x *= kGoldenMul64;
    uint64_t windows = x;
    const int here = num_probes < kProbesPerProduct ? num_probes : kProbesPerProduct;
    for (int i = 0; i < here; ++i) {
      if (!visit(static_cast<uint32_t>(windows >> 55))) return false;  // top 9 bits
      windows <<= 9;
    }
    num_probes -= here;
  }
  return true;
}

// Standard layout: bit positions 0..num_bits-1 of the whole array.
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

inline bool TestBit(const uint8_t* bits, uint64_t bit) { return (bits[bit >> 3] >> (bit & 7)) & 1; }

// A view over a parsed blocked-Bloom body. Cheap to copy; does not own the bytes.
class BlockedBloomReader {
 public:
  static constexpr size_t kBlockBytes = 64;

  BlockedBloomReader() = default;
  BlockedBloomReader(const uint8_t* blocks, uint64_t num_blocks, int num_probes)
      : blocks_(blocks), num_blocks_(num_blocks), num_probes_(num_probes) {}

  const uint8_t* BlockFor(uint64_t hash) const {
    return blocks_ + FastRange64(hash, num_blocks_) * kBlockBytes;
  }

  bool MatchInBlock(const uint8_t* block, uint64_t hash) const {
    return ForEachBlockedProbe(hash, num_probes_,
                               [block](uint32_t bit) { return TestBit(block, bit); });
  }

  bool MayContain(uint64_t hash) const { return MatchInBlock(BlockFor(hash), hash); }

  // Prefetches every key's block first, then tests them: the cache misses overlap.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

 private:
  const uint8_t* blocks_ = nullptr;
  uint64_t num_blocks_ = 0;
  int num_probes_ = 0;
};

// A view over a parsed standard-Bloom body.
class StandardBloomReader {
 public:
  StandardBloomReader() = default;
  StandardBloomReader(const uint8_t* bits, uint64_t num_words, int num_probes)
      : bits_(bits), num_bits_(num_words * 64), num_probes_(num_probes) {}

  bool MayContain(uint64_t hash) const {
    return ForEachStandardProbe(hash, num_probes_, num_bits_,
                                [this](uint64_t bit) { return TestBit(bits_, bit); });
  }

  // Prefetches each key's first probe, then tests them.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

 private:
  const uint8_t* bits_ = nullptr;
  uint64_t num_bits_ = 0;
  int num_probes_ = 0;
};

}  // namespace sstfilter
