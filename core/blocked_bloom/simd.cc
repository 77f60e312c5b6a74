// SPDX-License-Identifier: Apache-2.0
// The blocked Bloom filter's SIMD kernels (contract: core/blocked_bloom/simd.h), written once with
// Google Highway and compiled for each of its targets: Highway's foreach_target.h includes this
// file again per target, each time in a namespace of its own (HWY_NAMESPACE) with that target's
// instructions enabled, and HWY_DYNAMIC_DISPATCH calls the best one the CPU supports.
//
// Why Highway and not intrinsics: one source gives AVX-512, AVX2 and SSE4 on x86 and NEON and SVE
// on ARM servers, with the run-time choice done for us; Debian ships it (libhwy-dev).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/blocked_bloom/simd.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <atomic>

#include "core/batch.h"
#include "core/blocked_bloom/blocked_bloom.h"
#include "core/blocked_bloom/simd.h"
#include "core/format.h"

HWY_BEFORE_NAMESPACE();
namespace sstfilter {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One key's probes, a lane each: at most 8 lanes of 64 bits (a block has 8 words).
using D = hn::CappedTag<uint64_t, 8>;

// The shift that brings window i of a product to the top: probe i is bits [55, 64) of
// x << 9i (ForEachBlockedProbe). Lane 7 is padding, never counted; 8 entries let every target
// load its lanes from any multiple of its lane count below 7.
alignas(64) constexpr uint64_t kWindowShifts[8] = {0, 9, 18, 27, 36, 45, 54, 0};
static_assert(kBlockedProbesPerProduct == 7 && kBlockedProbeWindowBits == 9,
              "kWindowShifts lists the windows of ForEachBlockedProbe");

// What the kernels need of the vector shape, computed once per call: the lanes (a power of two,
// at most 8; a run-time value on scalable targets) and its log2.
struct Shape {
  size_t lanes;
  int lanes_log2;
  explicit Shape(D d) : lanes(hn::Lanes(d)), lanes_log2(static_cast<int>(hwy::FloorLog2(lanes))) {}
};

// The block's word word_index[l] in each lane l: a table lookup within each of the block's
// 8 / lanes vectors, and a select of the vector each index falls in.
HWY_INLINE hn::Vec<D> WordsAt(D d, const Shape& shape, const uint64_t* words,
                              hn::Vec<D> word_index) {
  const hn::RebindToSigned<D> di;
  const auto lane = hn::IndicesFromVec(
      d, hn::BitCast(di, hn::And(word_index, hn::Set(d, uint64_t{shape.lanes - 1}))));
  auto found = hn::TableLookupLanes(hn::LoadU(d, words), lane);
  if (shape.lanes < 8) {
    const auto vector_index = hn::ShiftRightSame(word_index, shape.lanes_log2);
    for (size_t v = 1; v * shape.lanes < 8; ++v) {
      const auto in_v = hn::Eq(vector_index, hn::Set(d, uint64_t{v}));
      found = hn::IfThenElse(
          in_v, hn::TableLookupLanes(hn::LoadU(d, words + v * shape.lanes), lane), found);
    }
  }
  return found;
}

// Calls f(positions, valid) for the key's probes, `shape.lanes` at a time: lane l of positions is
// a probe's bit (0..511) in the block, for the first `valid` lanes.
template <typename F>
HWY_INLINE void ForEachProbeVector(D d, const Shape& shape, uint64_t hash, int num_probes, F&& f) {
  uint64_t x = hash;
  for (int left = num_probes; left > 0; left -= kBlockedProbesPerProduct) {
    x *= kGoldenMul64;
    const auto product = hn::Set(d, x);
    const size_t here = static_cast<size_t>(std::min(left, kBlockedProbesPerProduct));
    for (size_t first = 0; first < here; first += shape.lanes) {
      const auto positions = hn::ShiftRight<64 - kBlockedProbeWindowBits>(
          product << hn::Load(d, kWindowShifts + first));
      f(positions, std::min(shape.lanes, here - first));
    }
  }
}

// BlockedBloomReader::MatchInBlock, in lanes.
HWY_INLINE bool Match(D d, const Shape& shape, const uint8_t* block, uint64_t hash,
                      int num_probes) {
  // Read only through LoadU: a filter block may sit at any address.
  const uint64_t* words = reinterpret_cast<const uint64_t*>(block);
  const auto k63 = hn::Set(d, uint64_t{63});
  const auto k1 = hn::Set(d, uint64_t{1});
  auto missing = hn::Zero(d);  // bit 0 of a lane is set once its probed bit is clear
  ForEachProbeVector(d, shape, hash, num_probes, [&](hn::Vec<D> positions, size_t valid) {
    const auto word = WordsAt(d, shape, words, hn::ShiftRight<6>(positions));
    const auto clear = hn::AndNot(word >> hn::And(positions, k63), k1);
    missing = hn::Or(missing, hn::IfThenElseZero(hn::FirstN(d, valid), clear));
  });
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

// Flattened, as every kernel that runs its lanes inside ForEachKeyBlock or ForEachBlockedProbe:
// those loops are templates defined outside HWY_BEFORE_NAMESPACE, so they are instantiated for
// the baseline target, and GCC does not inline a callee with wider instructions (the kernel's
// lambdas) into them unless told to, and as calls the vector build is slower than the scalar
// one. (HWY_FLATTEN is empty on MSVC.)
HWY_FLATTEN void MayContainBatchKernel(const uint8_t* blocks, uint64_t num_blocks, int num_probes,
                                       const uint64_t* hashes, size_t count, bool* may_match,
                                       BatchPrefetch prefetch) {
  const D d;
  const Shape shape(d);
  ForEachKeyBlock(blocks, num_blocks, hashes, count, QueryBlockPrefetch(prefetch),
                  [&](const uint8_t* block, uint64_t i) {
                    may_match[i] = Match(d, shape, block, hashes[i], num_probes);
                  });
}

// The build, BlockedBloom::SetBitsScalar's twin, in lanes on AVX-512 only. Each probe at bit p
// of the block becomes a one-hot vector of the block's 8 words, 1 << (p - 64 w) in lane w, and
// the key's probes ORed together update the block with one load, OR and store. The counts of the
// lanes p is not in are 64 or more (for w > p / 64, p - 64 w wraps to at least 2^64 - 448), and
// x86's variable shift (vpsllvq) gives zero for those: Highway leaves such counts to the target
// (NEON's would not give zero), so this path is x86's only.
//
// In core_bench the vector build is faster than the scalar one in the caches, and level with it
// beyond them, where the block's cache miss dominates. The other targets build with the scalar
// code: on AVX2 a block spans two vectors and on SSE4 four, and SetBits measured no faster there
// than the scalar loop (figures, and the AVX-512 designs measured slower: docs/history.md).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kVectorBuild = true;

// Flattened: see MayContainBatchKernel.
HWY_FLATTEN void SetBitsKernel(int num_probes, uint64_t num_blocks, const uint64_t* hashes,
                               uint64_t n, uint8_t* body) {
  const D d;
  static_assert(hn::MaxLanes(D()) == 8, "one vector holds the block's 8 words");
  const auto k1 = hn::Set(d, uint64_t{1});
  const auto word_first_bit = hn::ShiftLeft<6>(hn::Iota(d, 0));  // 64 w in lane w
  ForEachKeyBlock(
      body, num_blocks, hashes, n, BlockPrefetch::kToWrite, [&](uint8_t* block, uint64_t i) {
        auto bits = hn::Zero(d);
        ForEachBlockedProbe(hashes[i], num_probes, [&](uint32_t bit) {
          bits = hn::Or(bits, hn::Shl(k1, hn::Sub(hn::Set(d, uint64_t{bit}), word_first_bit)));
          return true;
        });
        uint64_t* words = reinterpret_cast<uint64_t*>(block);  // any address: LoadU and StoreU
        hn::StoreU(hn::Or(hn::LoadU(d, words), bits), d, words);
      });
}
#else
constexpr bool kVectorBuild = false;

void SetBitsKernel(int num_probes, uint64_t num_blocks, const uint64_t* hashes, uint64_t n,
                   uint8_t* body) {
  BlockedBloom::SetBitsScalar(num_probes, num_blocks, hashes, n, body);
}
#endif
bool VectorBuildKernel() { return kVectorBuild; }

// One key, for single queries: a pointer to it is taken once per reader (MatchKernelOf).
bool MatchOneKernel(const uint8_t* block, uint64_t hash, int num_probes) {
  const D d;
  return Match(d, Shape(d), block, hash, num_probes);
}
BlockedBloomMatchFn MatchKernelOf() { return &MatchOneKernel; }

const char* TargetKernel() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace sstfilter
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sstfilter {

HWY_EXPORT(MayContainBatchKernel);
HWY_EXPORT(MatchKernelOf);
HWY_EXPORT(TargetKernel);
HWY_EXPORT(SetBitsKernel);
HWY_EXPORT(VectorBuildKernel);

namespace {
// The lanes hold little-endian words of the block (bit j is bit j & 63 of word j >> 6, as in
// BlockWord); a big-endian machine takes the scalar twins.
std::atomic<bool> simd_enabled{byte_order::kHostIsLittleEndian};
bool UseSimd() { return simd_enabled.load(std::memory_order_relaxed); }
}  // namespace

void SetBlockedBloomSimdEnabled(bool enabled) {
  simd_enabled.store(enabled && byte_order::kHostIsLittleEndian, std::memory_order_relaxed);
}

void BlockedBloomMayContainBatchSimd(const uint8_t* blocks, uint64_t num_blocks, int num_probes,
                                     const uint64_t* hashes, size_t count, bool* may_match,
                                     BatchPrefetch prefetch) {
  if (!UseSimd()) {
    BlockedBloomReader(blocks, num_blocks, num_probes)
        .MayContainBatchScalar(hashes, count, may_match, prefetch);
    return;
  }
  HWY_DYNAMIC_DISPATCH(MayContainBatchKernel)
  (blocks, num_blocks, num_probes, hashes, count, may_match, prefetch);
}

BlockedBloomMatchFn BlockedBloomMatchKernel() {
  return UseSimd() ? HWY_DYNAMIC_DISPATCH(MatchKernelOf)() : nullptr;
}

void BlockedBloomSetBitsSimd(int num_probes, uint64_t num_blocks, const uint64_t* hashes,
                             uint64_t n, uint8_t* body) {
  if (!UseSimd()) {
    BlockedBloom::SetBitsScalar(num_probes, num_blocks, hashes, n, body);
    return;
  }
  HWY_DYNAMIC_DISPATCH(SetBitsKernel)(num_probes, num_blocks, hashes, n, body);
}

bool BlockedBloomVectorBuild() { return UseSimd() && HWY_DYNAMIC_DISPATCH(VectorBuildKernel)(); }

const char* BlockedBloomSimdTarget() {
  return UseSimd() ? HWY_DYNAMIC_DISPATCH(TargetKernel)() : "scalar";
}

}  // namespace sstfilter
#endif  // HWY_ONCE
