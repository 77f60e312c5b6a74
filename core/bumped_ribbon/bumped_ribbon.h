// SPDX-License-Identifier: Apache-2.0
// The bumped Ribbon filter kind (FilterKind 6): standard Ribbon tables in layers, each but the
// last overloaded, a key that a layer cannot hold bumped to the next (math.h has the why and the
// sizing). 1.0005 to 1.0112 slots per key from 10,000 to 10M keys, where one standard Ribbon
// table needs 1.056 to 1.161. Small sets, to about 5,300 keys, are one wrapped standard Ribbon
// table instead (version 2, BumpedRibbonTableFor), the standard Ribbon kind's version 2 body and
// hashing with this kind's trailer: so at every size the kind is within 1.01x of the smallest
// static kind at 4- to 16-bit fingerprints.
//
// From a key hash h and the filter's seed index s:
//   h_0 = h                                 if s = 0
//         Mix64(h + s * kGoldenMul64)       otherwise (a retry's fresh, independent hashing)
//   h_i = Mix64(h_0 + i * kGoldenMul64)     for layer i >= 1
// In layer i of m_i slots, the key's equation is a standard Ribbon one over h_i (ribbon.h):
//   start = FastRange64(h_i, m_i - 63), coeff = Mix64(h_i) | 1,
//   fp = (h_i xor (h_i >> 32)) & (2^r - 1)
// and its bucket is start / 64. In every layer but the last, a key whose start % 64 is below its
// bucket's threshold is bumped: it lives in the next layer. A query follows the same path, and
// answers from the one layer the key lives in: a stored key always matches, an absent key with
// chance 2^-r.
//
// Body: each layer's table in order, as a standard Ribbon body of m_i slots (m_i / 64 blocks of
// r little-endian 64-bit words); then the threshold codes of every layer but the last, bucket by
// bucket in layer order, 2 bits each, 32 to a little-endian 64-bit word (bucket j in bits 2j %
// 64 and up of word j / 32), the last word's unused bits 0. A code c names the threshold
// kBumpedRibbonThresholds[c] (0, 16, 40, 64).
// Trailer (core/format.h): num_keys = the distinct key hashes (those whose equations the others
// implied included), num_units = the key count the shape is for
// (BumpedRibbonShapeFor(num_units) gives the layers: the format fixes that function),
// param = r, seed = s, version 1. Version 2, one wrapped table: the body, num_units (slots) and
// the compact trailer as the standard Ribbon kind's version 2 (core/ribbon/ribbon.h), its start
// FastRange64(h_0, num_slots); num_keys as in version 1. Every byte: docs/format.md.
//
// The build (BumpedRibbon::BuildWithInfo, core/static_build.h) never fails and never drops a key:
// a seed whose last layer has no solution is retried with the next, and after
// kBumpedRibbonMaxAttempts seeds it writes a blocked Bloom filter of the same size instead. The
// bytes depend only on the set of hashes: each layer takes its keys by bucket and, within a
// bucket, by descending start (keys of one start in any order: whether a set of equations has a
// solution does not depend on their order), and its free rows are 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/batch.h"
#include "core/bumped_ribbon/math.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/ribbon/ribbon.h"
#include "core/static_kind.h"

namespace sstfilter {

struct BumpedRibbonTag;
using BumpedRibbonParams = StaticParams<BumpedRibbonTag>;

// A layer's hash of a key (h_i above).
inline uint64_t BumpedRibbonLayerHash(uint64_t h0, int layer) {
  return layer == 0 ? h0 : Mix64(h0 + static_cast<uint64_t>(layer) * kGoldenMul64);
}

// The threshold codes: bucket j's 2-bit code in bits 2 (j % 32) and up of the little-endian
// 64-bit word j / 32. The build sets each once, in words that start at 0.
inline int BumpedRibbonThresholdCode(const uint8_t* codes, uint64_t bucket) {
  return static_cast<int>((LoadLE64(codes + 8 * (bucket / 32)) >> (2 * (bucket % 32))) & 3);
}
inline void SetBumpedRibbonThresholdCode(uint8_t* codes, uint64_t bucket, int code) {
  uint8_t* word = codes + 8 * (bucket / 32);
  StoreLE64(word, LoadLE64(word) | static_cast<uint64_t>(code) << (2 * (bucket % 32)));
}

// A view over a parsed bumped Ribbon body. Does not own the bytes.
class BumpedRibbonReader {
 public:
  BumpedRibbonReader() = default;
  BumpedRibbonReader(const BumpedRibbonShape& shape, const uint8_t* body, uint32_t seed_index,
                     int fingerprint_bits);
  // A version 2 filter: one wrapped table of num_slots slots (RibbonWrappedTableBytes).
  static BumpedRibbonReader Wrapped(uint64_t num_slots, const uint8_t* body, uint32_t seed_index,
                                    int fingerprint_bits);

  bool MayContain(uint64_t hash) const {
    const uint64_t h0 = RemixHash(hash, seed_index_);
    return MatchesFrom(h0, layers_[0].StartOf(h0));
  }

  // Starts loading the first layer's words for the key, and its threshold code: most keys live
  // there (a key is bumped from a layer with chance about 1/16).
  void Prefetch(uint64_t hash) const {
    PrefetchFirst(layers_[0].StartOf(RemixHash(hash, seed_index_)));
  }

  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;
  // Its queries have a copy compiled with popcnt (core/batch.h).
  static constexpr bool kHasPopcntCopy = true;

 private:
  // MayContainBatch's pass that prefetches every key before the tests, run in the copy
  // PopcntDispatch chooses (core/batch.h).
  friend struct PopcntDispatch;
  void BatchWithOwnPrefetch(const uint64_t* hashes, size_t count, bool* may_match) const;
  // Whether the key of first-layer hash h0, starting at `start` in the first layer, matches.
  bool MatchesFrom(uint64_t h0, uint64_t start) const {
    const int layer = LayerOf(h0, &start);
    return layers_[layer].MatchesAt(BumpedRibbonLayerHash(h0, layer), start);
  }
  // The layer the key of first-layer hash h0 lives in; *start, its start in the first layer,
  // becomes its start there.
  int LayerOf(uint64_t h0, uint64_t* start) const {
    int i = 0;
    while (i + 1 < num_layers_ && Bumped(i, *start)) {
      ++i;
      *start = layers_[i].StartOf(BumpedRibbonLayerHash(h0, i));
    }
    return i;
  }
  bool Bumped(int layer, uint64_t start) const {
    const int code = BumpedRibbonThresholdCode(
        thresholds_, first_bucket_[layer] + start / kBumpedRibbonBucketStarts);
    return static_cast<int>(start % kBumpedRibbonBucketStarts) < kBumpedRibbonThresholds[code];
  }
  void PrefetchFirst(uint64_t start) const {
    layers_[0].PrefetchAt(start);
    if (num_layers_ > 1) {
      PrefetchBytes(thresholds_ + 8 * (start / kBumpedRibbonBucketStarts / 32), 8);
    }
  }

  int num_layers_ = 0;
  uint32_t seed_index_ = 0;
  const uint8_t* thresholds_ = nullptr;
  uint64_t first_bucket_[kBumpedRibbonMaxLayers] = {};  // each layer's first threshold bucket
  RibbonReader layers_[kBumpedRibbonMaxLayers];
};

// Seeds tried before the build falls back to a blocked Bloom filter. Every first seed solved in
// the measurements (math.h); 32 failures in a row would take a last layer that fails more often
// than not.
inline constexpr int kBumpedRibbonMaxAttempts = 32;

struct BumpedRibbonSolver;  // bumped_ribbon.cc

// The kind's descriptor (core/kinds.h; the operations it shares with the other static kinds:
// core/static_kind.h).
struct BumpedRibbon : StaticKind<BumpedRibbon, BumpedRibbonParams> {
  // Scratch of the layers' build: at most 36 bytes per key (bumped_ribbon.cc's
  // BumpedRibbonScratch), and the distinct copy's 8 bytes per key; a wrapped table's build more
  // (BuildScratchBytes below).
  static constexpr StaticKindFacts kFacts = {
      "bumped Ribbon",           kRibbonMinFingerprintBits,
      kRibbonMaxFingerprintBits, kBumpedRibbonNominalSlotsPerKey,
      kBumpedRibbonMaxAttempts,  36 + 8};
  using Reader = BumpedRibbonReader;
  static constexpr FilterKind kId = FilterKind{6};
  static constexpr const char* kName = "bumped_ribbon";
  static constexpr uint8_t kMaxVersion = 2;  // 2: one wrapped table

  static Result<int> FingerprintBitsFor(const Params& params, uint64_t num_keys);
  using Solver = BumpedRibbonSolver;

  static bool BodyBytes(const Trailer& t, uint64_t* body_bytes);
  static Reader OpenReader(const Trailer& t, const uint8_t* body);

  // StaticKind's, plus the largest wrapped table's build (core/ribbon/ribbon.h's Ribbon has why).
  static uint64_t BuildScratchBytes(const Params& params, uint64_t num_keys);
};

extern template struct StaticKind<BumpedRibbon, BumpedRibbonParams>;

}  // namespace sstfilter
