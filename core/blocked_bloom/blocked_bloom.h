// The blocked Bloom filter kind (FilterKind 1, the default): a Bloom filter over 64-bit key hashes
// whose probes for a key all lie in one 64-byte block, so a query costs one cache miss.
//
// The key hash picks the block with FastRange64 (its high bits). Probe positions are successive
// 9-bit windows, from the top, of x = h * kGoldenMul64 (7 windows per product; for more probes x
// is multiplied again). The product is a bijection of h, so for uniform h its windows are uniform
// and independent of one another; they are nearly independent of the block, which depends only on
// h's high bits.
//
// Body: num_units blocks of 64 bytes; bit j of a block is bit (j & 7) of its byte j >> 3.
// Trailer (core/format.h): num_keys, num_units = blocks, seed 0, param = num_probes.
// Sizing math: core/blocked_bloom/math.h. Every byte: docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/blocked_bloom/math.h"
#include "core/bloom_common.h"
#include "core/hash.h"

namespace sstfilter {

struct BlockedBloomParams : BloomParams {};

// Probe positions 0..511 inside the key's block, shared by the builder and the reader so that the
// two cannot disagree. `visit(bit)` returns false to stop early; returns false iff a visit did.
template <typename Visit>
inline bool ForEachBlockedProbe(uint64_t hash, int num_probes, Visit&& visit) {
  constexpr int kWindowBits = 9;                       // log2(kBloomBlockBits)
  constexpr int kProbesPerProduct = 64 / kWindowBits;  // 7 windows of 9 bits in 64
  static_assert(1 << kWindowBits == kBloomBlockBits, "a window addresses one bit of a block");
  uint64_t x = hash;
  while (num_probes > 0) {
    x *= kGoldenMul64;
    uint64_t windows = x;
    const int here = num_probes < kProbesPerProduct ? num_probes : kProbesPerProduct;
    for (int i = 0; i < here; ++i) {
      if (!visit(static_cast<uint32_t>(windows >> (64 - kWindowBits)))) return false;
      windows <<= kWindowBits;
    }
    num_probes -= here;
  }
  return true;
}

// A view over a parsed blocked-Bloom body. Cheap to copy; does not own the bytes.
class BlockedBloomReader {
 public:
  static constexpr size_t kBlockBytes = kBloomBlockBits / 8;

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

// The kind's descriptor (the operations every kind provides: core/kinds.h).
struct BlockedBloom : BloomKindOps<BlockedBloom, BlockedBloomParams> {
  using Params = BlockedBloomParams;
  using Reader = BlockedBloomReader;
  static constexpr FilterKind kId = FilterKind{1};
  static constexpr const char* kName = "blocked_bloom";
  static constexpr const char* kLayoutName = "blocked";
  static constexpr uint64_t kUnitBytes = BlockedBloomReader::kBlockBytes;

  // Its math (core/blocked_bloom/math.h), for ForBitsPerKey and ForFpRate (core/bloom_common.h).
  static Result<int> ProbesForBitsPerKey(double b) { return BlockedBloomProbes(b); }
  static Result<double> BitsPerKeyForFpRate(double p) { return BlockedBloomBitsPerKey(p); }

  // Blocks for num_keys keys.
  static Result<uint64_t> Units(const Params& params, uint64_t num_keys) {
    return BlockedBloomBlocks(num_keys, params.bits_per_key);
  }
  // The rate of the filter of num_keys keys, at its real budget after rounding up to blocks.
  static Result<double> EstimatedFpRate(const Params& params, uint64_t num_keys);
  // The rate with unlimited keys and no rounding: what the budget buys, for level allocation.
  static double NominalFpRate(const Params& params);
  // The filters offered to sstfilter.Leveled's allocation: every budget in 0.05 bits/key steps
  // up to 60 bits/key (about 1e-10, beyond any useful per-level rate).
  static std::vector<Params> LevelOffers();

  static void SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes, uint64_t n,
                      uint8_t* body);

  static Reader OpenReader(const Trailer& t, const uint8_t* body) {
    return Reader(body, t.num_units, t.param);
  }
};

}  // namespace sstfilter
