// SPDX-License-Identifier: Apache-2.0
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

#include "core/batch.h"
#include "core/blocked_bloom/math.h"
#include "core/blocked_bloom/simd.h"
#include "core/bloom_common.h"
#include "core/format.h"
#include "core/hash.h"

namespace sstfilter {

struct BlockedBloomParams : BloomParams {};

// Probe positions come in windows of 9 bits (log2 of kBloomBlockBits), 7 per 64-bit product.
inline constexpr int kBlockedProbeWindowBits = 9;
inline constexpr int kBlockedProbesPerProduct = 64 / kBlockedProbeWindowBits;
static_assert(1 << kBlockedProbeWindowBits == kBloomBlockBits,
              "a window addresses one bit of a block");

// A block: 64 bytes, one cache line's worth (bodies are not aligned, so most span two lines).
inline constexpr size_t kBlockedBloomBlockBytes = kBloomBlockBits / 8;

// The block of a key hash: FastRange64 of its high bits.
inline uint64_t BlockedBloomBlock(uint64_t hash, uint64_t num_blocks) {
  return FastRange64(hash, num_blocks);
}

// Probe positions 0..511 inside the key's block, shared by the builder and the reader so that the
// two cannot disagree (the SIMD kernels, core/blocked_bloom/simd.cc, compute the same windows in
// lanes, and the tests compare them with this). `visit(bit)` returns false to stop early; returns
// false iff a visit did.
template <typename Visit>
inline bool ForEachBlockedProbe(uint64_t hash, int num_probes, Visit&& visit) {
  uint64_t x = hash;
  while (num_probes > 0) {
    x *= kGoldenMul64;
    uint64_t windows = x;
    const int here = num_probes < kBlockedProbesPerProduct ? num_probes : kBlockedProbesPerProduct;
    for (int i = 0; i < here; ++i) {
      if (!visit(static_cast<uint32_t>(windows >> (64 - kBlockedProbeWindowBits)))) return false;
      windows <<= kBlockedProbeWindowBits;
    }
    num_probes -= here;
  }
  return true;
}

// What a batched loop over key blocks (ForEachKeyBlock) prefetches.
enum class BlockPrefetch {
  kNone,     // the caller already did (BatchPrefetch::kByCaller)
  kToRead,   // queries
  kToWrite,  // builds
};
inline BlockPrefetch QueryBlockPrefetch(BatchPrefetch prefetch) {
  return prefetch == BatchPrefetch::kInBatch ? BlockPrefetch::kToRead : BlockPrefetch::kNone;
}

// Calls visit(block, i) for each i in [0, n), where block is the block of hashes[i] in a body of
// num_blocks blocks (Byte: uint8_t for builds, const uint8_t for queries), kPrefetchBatch keys at
// a time: their blocks are all prefetched before the first is visited, so that their cache misses
// overlap. The loop of the builds and of the batched queries, scalar and vector
// (core/blocked_bloom/simd.cc).
template <typename Byte, typename Visit>
inline void ForEachKeyBlock(Byte* body, uint64_t num_blocks, const uint64_t* hashes, uint64_t n,
                            BlockPrefetch prefetch, Visit&& visit) {
  Byte* blocks[kPrefetchBatch];
  for (uint64_t start = 0; start < n; start += kPrefetchBatch) {
    const size_t m = static_cast<size_t>(n - start < kPrefetchBatch ? n - start : kPrefetchBatch);
    for (size_t i = 0; i < m; ++i) {
      blocks[i] = body + BlockedBloomBlock(hashes[start + i], num_blocks) * kBlockedBloomBlockBytes;
      switch (prefetch) {
        case BlockPrefetch::kNone:
          break;
        case BlockPrefetch::kToRead:
          PrefetchBytes(blocks[i], kBlockedBloomBlockBytes);
          break;
        case BlockPrefetch::kToWrite:
          PrefetchBytesForWrite(blocks[i], kBlockedBloomBlockBytes);
          break;
      }
    }
    for (size_t i = 0; i < m; ++i) visit(blocks[i], start + i);
  }
}

// Word w (0..7) of a block as a 64-bit integer: bit j of the block is bit (j & 63) of word j >> 6,
// the same bit as TestBit's byte addressing, because the words are read little-endian.
inline uint64_t BlockWord(const uint8_t* block, uint32_t w) { return LoadLE64(block + 8 * w); }

// A view over a parsed blocked-Bloom body. Cheap to copy; does not own the bytes.
class BlockedBloomReader {
 public:
  static constexpr size_t kBlockBytes = kBlockedBloomBlockBytes;

  BlockedBloomReader() = default;
  // Takes this CPU's SIMD kernel for single queries (core/blocked_bloom/simd.h), if it has one.
  BlockedBloomReader(const uint8_t* blocks, uint64_t num_blocks, int num_probes)
      : blocks_(blocks),
        num_blocks_(num_blocks),
        num_probes_(num_probes),
        match_kernel_(BlockedBloomMatchKernel()) {}

  const uint8_t* BlockFor(uint64_t hash) const {
    return blocks_ + BlockedBloomBlock(hash, num_blocks_) * kBlockBytes;
  }

  // Every probe is tested, with no branch on the bits: an absent key fails at an unpredictable
  // probe, and leaving the loop there costs a mispredicted branch, more than the probes it saves.
  bool MatchInBlock(const uint8_t* block, uint64_t hash) const {
    uint64_t missing = 0;  // bit 0 is set once a probed bit is clear
    ForEachBlockedProbe(hash, num_probes_, [block, &missing](uint32_t bit) {
      missing |= ~BlockWord(block, bit >> 6) >> (bit & 63);
      return true;
    });
    return (missing & 1) == 0;
  }

  bool MayContain(uint64_t hash) const {
    const uint8_t* block = BlockFor(hash);
    return match_kernel_ != nullptr ? match_kernel_(block, hash, num_probes_)
                                    : MatchInBlock(block, hash);
  }

  // Starts loading the key's block, for a query that follows soon (a batch hashes its keys and
  // prefetches each as it goes, so the loads overlap the hashing of the next keys).
  void Prefetch(uint64_t hash) const { PrefetchBytes(BlockFor(hash), kBlockBytes); }

  // Prefetches the blocks of kPrefetchBatch keys (unless the caller did: BatchPrefetch), then
  // tests them: the cache misses overlap. Runs the SIMD kernel of this CPU
  // (core/blocked_bloom/simd.h).
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;
  // Its scalar twin: the same answers, without SIMD (the tests compare the two).
  void MayContainBatchScalar(const uint64_t* hashes, size_t count, bool* may_match,
                             BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;

 private:
  const uint8_t* blocks_ = nullptr;
  uint64_t num_blocks_ = 0;
  int num_probes_ = 0;
  BlockedBloomMatchFn match_kernel_ = nullptr;  // nullptr: MatchInBlock
};

// The kind's descriptor (the operations every kind provides: core/kinds.h).
struct BlockedBloom : BloomKindOps<BlockedBloom, BlockedBloomParams> {
  using Params = BlockedBloomParams;
  using Reader = BlockedBloomReader;
  static constexpr FilterKind kId = FilterKind{1};
  static constexpr const char* kName = "blocked_bloom";
  static constexpr uint8_t kMaxVersion = 1;
  static constexpr const char* kLayoutName = "blocked";
  static constexpr uint64_t kUnitBytes = kBlockedBloomBlockBytes;

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

  // Sets the probes of hashes[0, n) in a body of num_units blocks: the vector build of this CPU
  // where it has one (core/blocked_bloom/simd.h), else SetBitsScalar. Both give the same bytes.
  static void SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes, uint64_t n,
                      uint8_t* body);
  // Its scalar twin: each probe's bit set in its byte (the tests compare the two builds' bytes).
  static void SetBitsScalar(int num_probes, uint64_t num_blocks, const uint64_t* hashes, uint64_t n,
                            uint8_t* body);

  static Reader OpenReader(const Trailer& t, const uint8_t* body) {
    return Reader(body, t.num_units, t.param);
  }
};

}  // namespace sstfilter
