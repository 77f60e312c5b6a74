// SPDX-License-Identifier: Apache-2.0
// The binary fuse filter kind (FilterKind 4): a static filter for the key set of one SST file or
// filter partition, at 1.075 to 1.4 times the information limit of log2(1/p) bits per key
// (math.h), with w-bit fingerprints for any w from 1 to 32, bit-packed.
//
// From a key hash h and the filter's seed index s:
//   h'   = h                              if s = 0
//          Mix64(h + s * kGoldenMul64)    otherwise (a retry's fresh, independent hashing)
//   fp   = (h' xor (h' >> 32)) & (2^w - 1)
//   p0   = FastRange64(h', segment_count * L)          (high bits of h')
//   p_i  = (p0 + i L) xor ((h' >> 18 (i - 1)) & (L - 1))   for i = 1 .. arity - 1
// L = segment length, a power of two, so the xor keeps p_i in the segment after p_{i-1}'s: the
// arity cells of a key are distinct and lie in arity consecutive segments. A key is in the
// filter iff fp = cell[p_0] xor ... xor cell[p_{arity-1}]: an absent key matches with chance 2^-w.
//
// Body: num_cells cells of w bits, packed (cell i is bits [i w, (i + 1) w) of the little-endian
// bit string of the body), then kFusePadBytes zero bytes.
// Trailer (core/format.h): num_keys = distinct key hashes, num_units = cells, param = w,
// seed = s | segment_length_log2 << 16 | arity << 24 (FuseLayout). Every byte: docs/format.md.
//
// The build (Fuse::BuildWithInfo) never fails and never drops a key: repeated hashes are removed,
// a failed peel is retried with the next seed (every fourth try with segments half as long), and
// after kFuseMaxAttempts tries it writes a blocked Bloom filter of the same size instead. The
// same keys, in any order, give the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/format.h"
#include "core/fuse/math.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/packed_fields.h"
#include "core/result.h"
#include "core/static_kind.h"

namespace sstfilter {

// A fuse filter's fingerprint width or budget (small sets need more cells per key: math.h).
struct FuseTag;
using FuseParams = StaticParams<FuseTag>;

// The trailer's seed field of a fuse filter: which hashing and which table geometry.
struct FuseLayout {
  uint32_t seed_index = 0;  // s: 0 means the key hash itself
  int segment_length_log2 = 1;
  int arity = 4;

  uint32_t Encode() const {
    return seed_index | static_cast<uint32_t>(segment_length_log2) << 16 |
           static_cast<uint32_t>(arity) << 24;
  }
  // False for a field no build writes.
  static bool Decode(uint32_t field, FuseLayout* out) {
    FuseLayout l;
    l.seed_index = field & 0xffff;
    l.segment_length_log2 = static_cast<int>((field >> 16) & 0xff);
    l.arity = static_cast<int>(field >> 24);
    if (l.segment_length_log2 < 1 || l.segment_length_log2 > kFuseMaxSegmentLengthLog2) {
      return false;
    }
    if (l.arity != 3 && l.arity != 4) return false;
    *out = l;
    return true;
  }
};

// Where a key lives in a table of a given shape. Cheap to copy.
class FuseHashing {
 public:
  FuseHashing() = default;
  FuseHashing(const FuseLayout& layout, uint64_t segment_count, int fingerprint_bits)
      : seed_index_(layout.seed_index),
        arity_(layout.arity),
        segment_length_(uint64_t{1} << layout.segment_length_log2),
        segment_mask_(segment_length_ - 1),
        first_cells_(segment_count << layout.segment_length_log2),
        fp_mask_(LowBitsMask(fingerprint_bits)) {}

  uint64_t Remix(uint64_t hash) const { return RemixHash(hash, seed_index_); }
  uint32_t Fingerprint(uint64_t remixed) const { return XorFoldFingerprint(remixed, fp_mask_); }
  // The arity cells of a key, into cells[0, arity).
  void Cells(uint64_t remixed, uint64_t* cells) const {
    const uint64_t p0 = FastRange64(remixed, first_cells_);
    cells[0] = p0;
    for (int i = 1; i < arity_; ++i) {
      cells[i] = (p0 + i * segment_length_) ^
                 ((remixed >> (kFuseOffsetFieldBits * (i - 1))) & segment_mask_);
    }
  }
  int arity() const { return arity_; }
  uint32_t fingerprint_mask() const { return fp_mask_; }

 private:
  uint32_t seed_index_ = 0;
  int arity_ = 4;
  uint64_t segment_length_ = 2;
  uint64_t segment_mask_ = 1;
  uint64_t first_cells_ = 0;  // segment_count * L: where a key's first cell may be
  uint32_t fp_mask_ = 0;
};

// A view over a parsed fuse body. Cheap to copy; does not own the bytes.
class FuseReader {
 public:
  FuseReader() = default;
  FuseReader(const uint8_t* cells, const FuseHashing& hashing, int fingerprint_bits)
      : cells_(cells), hashing_(hashing), bits_(fingerprint_bits) {}

  bool MayContain(uint64_t hash) const {
    const uint64_t h = hashing_.Remix(hash);
    uint64_t cells[4];
    hashing_.Cells(h, cells);
    return Matches(h, cells);
  }

  // Starts loading the key's cells.
  void Prefetch(uint64_t hash) const {
    uint64_t cells[4];
    hashing_.Cells(hashing_.Remix(hash), cells);
    for (int j = 0; j < hashing_.arity(); ++j) PrefetchCell(cells[j]);
  }

  // Computes every key's cells and prefetches them first (unless the caller did:
  // BatchPrefetch), then tests them.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;

 private:
  uint32_t Cell(uint64_t i) const {
    return static_cast<uint32_t>(LoadBitsFrom(cells_, i * static_cast<uint64_t>(bits_)));
  }
  // Starts loading the bytes Cell(i) reads: one LoadBitsFrom window from the cell's first byte.
  void PrefetchCell(uint64_t i) const {
    PrefetchBytes(cells_ + ((i * static_cast<uint64_t>(bits_)) >> 3), kLoadBitsBytes);
  }
  bool Matches(uint64_t remixed, const uint64_t* cells) const {
    // Cell() leaves the neighbours' bits above the low w: the mask drops them after the xor.
    uint32_t x = hashing_.Fingerprint(remixed) ^ Cell(cells[0]) ^ Cell(cells[1]) ^ Cell(cells[2]);
    if (hashing_.arity() == 4) x ^= Cell(cells[3]);
    return (x & hashing_.fingerprint_mask()) == 0;
  }

  const uint8_t* cells_ = nullptr;
  FuseHashing hashing_;
  int bits_ = 0;
};

// Tries before the build falls back to a blocked Bloom filter.
inline constexpr int kFuseMaxAttempts = 32;

struct FuseSolver;  // fuse.cc

// The kind's descriptor (the operations every kind provides: core/kinds.h; those it shares with
// the Ribbon kind: core/static_kind.h).
struct Fuse : StaticKind<Fuse, FuseParams> {
  // What StaticKind reads.
  // Scratch: 13 bytes per cell (fuse.cc's FuseScratch), at most 1.4 cells per key, and the
  // distinct copy's 8 bytes per key.
  static constexpr StaticKindFacts kFacts = {"binary fuse",           kFuseMinFingerprintBits,
                                             kFuseMaxFingerprintBits, kFuse4LargeSizeFactor,
                                             kFuseMaxAttempts,        13 * 1.4 + 8};
  using Reader = FuseReader;
  static constexpr FilterKind kId = FilterKind{4};
  static constexpr const char* kName = "fuse";
  static constexpr uint8_t kMaxVersion = 1;

  // The fingerprint width of the filter of num_keys distinct keys: the budget's widest that fits,
  // at least 1 (a set too small for its budget gets 1-bit cells), or the fixed width.
  static Result<int> FingerprintBitsFor(const Params& params, uint64_t num_keys);
  using Solver = FuseSolver;  // its table and one attempt (core/static_build.h), in fuse.cc

  static bool BodyBytes(const Trailer& t, uint64_t* body_bytes);
  static Reader OpenReader(const Trailer& t, const uint8_t* body);
};

// Instantiated in fuse.cc, beside the Solver.
extern template struct StaticKind<Fuse, FuseParams>;

}  // namespace sstfilter
