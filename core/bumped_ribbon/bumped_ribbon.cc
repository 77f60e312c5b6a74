// SPDX-License-Identifier: Apache-2.0
#include "core/bumped_ribbon/bumped_ribbon.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/batch.h"
#include "core/sizing.h"
#include "core/static_build.h"

namespace sstfilter {
namespace {

// A key in a layer: its start there, and its first-layer hash (which every layer's hash derives
// from, and which orders keys of the same start).
struct LayerKey {
  uint64_t start;
  uint64_t h0;
};

// A key of the bucket being filled that the layer holds, in the order it went in: where its
// equation is stored (kNone: the others imply it, nothing stored), its start's offset in the
// bucket, and whether it repeats a key before it (the same hash, so the same equation).
struct BucketEquation {
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  uint64_t pivot;
  int offset;
  bool repeat;
};

// The memory of one build attempt, reused by the next: the layer's keys in order (16 bytes per
// key), the first-layer hashes of the keys bumped from it and of those reaching it (8 bytes per
// bumped key each), the counts of the sort (4 bytes per slot), and the layer's echelon form (12
// bytes per slot: core/ribbon/ribbon.h). About 33 bytes per key at the first layer; BuildStatic
// adds 8 per key when the input had repeats or no seed solved. A wrapped table's build holds the
// standard Ribbon kind's scratch instead.
struct BumpedRibbonScratch {
  RibbonScratch wrapped;
  std::vector<LayerKey> keys;
  std::vector<uint64_t> reaching, bumped;
  std::vector<uint32_t> bucket_begin;
  std::vector<uint64_t> coeff;
  std::vector<uint32_t> rhs;
  std::vector<BucketEquation> bucket;
  uint64_t Bytes() const {
    return 16 * keys.capacity() + 8 * (reaching.capacity() + bumped.capacity()) +
           4 * bucket_begin.capacity() + 8 * coeff.capacity() + 4 * rhs.capacity() +
           sizeof(BucketEquation) * bucket.capacity() + wrapped.Bytes();
  }
};

// The least threshold code whose threshold exceeds `offset`.
int ThresholdCodeAbove(int offset) {
  int code = 0;
  while (kBumpedRibbonThresholds[code] <= offset) ++code;  // the last threshold is 64
  return code;
}

// Sorts the layer's keys (for_each_h0 calls f(h0) for each) into s->keys: by bucket, and within
// a bucket by descending start, by counting (no comparisons): the position of start x in that
// order is x with its offset bits inverted. Keys of one start keep their input order: which of
// them goes in first does not change the layer (BuildLayer), so the bytes still depend only on
// the set. s->bucket_begin[x] ends as the end of the keys at position x or before.
template <typename ForEachH0>
void SortLayerKeys(const RibbonHashing& hashing, uint64_t num_slots, ForEachH0&& for_each_h0,
                   int layer, BumpedRibbonScratch* s) {
  // Positions run to num_slots: the last bucket's inverted offsets reach past the last start.
  s->bucket_begin.assign(num_slots + 1, 0);
  uint64_t count = 0;
  for_each_h0([&](uint64_t h0) {
    ++s->bucket_begin[(hashing.Start(BumpedRibbonLayerHash(h0, layer)) ^ 63) + 1];
    ++count;
  });
  for (uint64_t x = 0; x < num_slots; ++x) s->bucket_begin[x + 1] += s->bucket_begin[x];
  s->keys.resize(count);
  // bucket_begin[x] advances over position x's keys as they are placed, and ends at its end.
  for_each_h0([&](uint64_t h0) {
    const uint64_t start = hashing.Start(BumpedRibbonLayerHash(h0, layer));
    s->keys[s->bucket_begin[start ^ 63]++] = LayerKey{start, h0};
  });
}

// Builds one layer of num_slots slots from its sorted keys into `table` (its RibbonTableBytes)
// and, unless it is the last, its threshold codes into `thresholds` from bucket first_bucket on;
// the keys it bumps go to s->bumped, and the distinct keys it holds are added to *held. False if
// the last layer has no solution.
bool BuildLayer(uint64_t num_slots, int layer, bool last, int r, BumpedRibbonScratch* s,
                uint8_t* table, uint8_t* thresholds, uint64_t first_bucket, uint64_t* held) {
  const RibbonHashing hashing(0, num_slots, r);
  s->coeff.assign(num_slots, 0);
  s->rhs.assign(num_slots, 0);
  s->bumped.clear();
  const uint64_t buckets = num_slots / kBumpedRibbonBucketStarts;
  uint64_t begin = 0;
  for (uint64_t b = 0; b < buckets; ++b) {
    const uint64_t end = s->bucket_begin[b * kBumpedRibbonBucketStarts + 63];
    s->bucket.clear();
    int code = 0;
    for (uint64_t k = begin; k < end; ++k) {
      const uint64_t h = BumpedRibbonLayerHash(s->keys[k].h0, layer);
      const uint64_t start = s->keys[k].start;
      const int offset = static_cast<int>(start % kBumpedRibbonBucketStarts);
      uint64_t pivot = BucketEquation::kNone;
      const RibbonAdd added =
          RibbonAddEquation(s->coeff.data(), s->rhs.data(), start, RibbonHashing::Coefficients(h),
                            hashing.Fingerprint(h), &pivot);
      if (added != RibbonAdd::kInconsistent) {
        // An implied equation is a repeated key, or a distinct key the layer holds at no cost.
        // A repeat has the hash of a key of the same start, placed before it.
        bool repeat = false;
        for (uint64_t j = k; added == RibbonAdd::kImplied && j-- > begin && !repeat;) {
          if (s->keys[j].start != start) break;
          repeat = s->keys[j].h0 == s->keys[k].h0;
        }
        s->bucket.push_back({pivot, offset, repeat});
        continue;
      }
      if (last) return false;
      // Bump every key of the bucket below the least threshold above this one's offset: those
      // not yet added, and the last ones added (they have the smallest offsets), newest first.
      code = ThresholdCodeAbove(offset);
      while (!s->bucket.empty() && s->bucket.back().offset < kBumpedRibbonThresholds[code]) {
        const uint64_t p = s->bucket.back().pivot;
        if (p != BucketEquation::kNone) {
          s->coeff[p] = 0;
          s->rhs[p] = 0;
        }
        s->bucket.pop_back();
      }
      break;
    }
    for (const BucketEquation& e : s->bucket) *held += !e.repeat;
    if (code != 0) {
      SetBumpedRibbonThresholdCode(thresholds, first_bucket + b, code);
      for (uint64_t k = begin; k < end; ++k) {
        if (static_cast<int>(s->keys[k].start % kBumpedRibbonBucketStarts) <
            kBumpedRibbonThresholds[code]) {
          s->bumped.push_back(s->keys[k].h0);
        }
      }
    }
    begin = end;
  }
  RibbonBackSubstitute(s->coeff.data(), s->rhs.data(), num_slots, r, table);
  return true;
}

}  // namespace

// The bumped Ribbon kind's solver for BuildStatic (core/static_build.h): one attempt is one
// seed's layers, first to last, or its one wrapped table.
struct BumpedRibbonSolver {
  using Table = BumpedRibbonTable;
  using Scratch = BumpedRibbonScratch;
  // Every seed over the input as it is, as the standard Ribbon kind does.
  static constexpr int kFirstPassSeeds = std::numeric_limits<int>::max();

  static Result<Table> TableFor(uint64_t num_keys) { return BumpedRibbonTableFor(num_keys); }
  static bool Solvable(const Table&) { return true; }
  // The trailer's num_units: the wrapped table's slots, or the key count the layers are for.
  static uint64_t Units(const Table& t) { return t.wrapped ? t.wrapped_slots : t.shape.sized_for; }
  static uint8_t Version(const Table& t) { return t.wrapped ? 2 : 1; }
  // As the standard Ribbon kind's wrapped tables (core/ribbon/ribbon.cc): their fields fit.
  static TrailerLayout TrailerLayoutFor(const Table& t) {
    return t.wrapped ? TrailerLayout::kCompact : TrailerLayout::kLayout2;
  }
  static uint64_t TableBytes(const Table& t, int r) { return BumpedRibbonTableBytes(t, r); }

  template <typename ForEachChunk>
  static bool TrySeed(const Table& t, int r, int seed, ForEachChunk& for_each_chunk, Scratch* s,
                      uint8_t* table, uint64_t* stored, uint32_t* trailer_seed) {
    *trailer_seed = static_cast<uint32_t>(seed);
    if (t.wrapped) {
      // The layer hash of layer 0 is the remixed hash, as in a standard Ribbon table's seed.
      RibbonRemixAll(for_each_chunk, static_cast<uint32_t>(seed), &s->wrapped.remixed);
      uint64_t equations = 0;
      if (!RibbonSolveWrappedSet(t.wrapped_slots, r, &s->wrapped, table, &equations)) return false;
      // The distinct keys held, as the layers count them: each one's equation holds, stored or
      // implied. Remixing is one-to-one, so repeats are equal neighbours in the sorted hashes.
      const std::vector<uint64_t>& sorted = s->wrapped.remixed;
      *stored = sorted.empty() ? 0 : 1;
      for (size_t k = 1; k < sorted.size(); ++k) *stored += sorted[k] != sorted[k - 1];
      return true;
    }
    return TryLayers(t.shape, r, seed, for_each_chunk, s, table, stored);
  }

  template <typename ForEachChunk>
  static bool TryLayers(const BumpedRibbonShape& shape, int r, int seed,
                        ForEachChunk& for_each_chunk, Scratch* s, uint8_t* table,
                        uint64_t* stored) {
    // The sort counts keys in 32 bits: a filter of 2^32 keys or more (far beyond any SST file or
    // partition) takes the fallback, as a seed that fails would.
    if (shape.sized_for >= (uint64_t{1} << 32)) return false;
    const uint32_t seed_index = static_cast<uint32_t>(seed);
    // The trailer's num_keys: the distinct keys held (a bumped Ribbon filter counts the keys whose
    // equations were implied too, so that an input without repeats needs no check for them).
    uint64_t layer_offset = 0, first_bucket = 0, held = 0;
    uint8_t* thresholds = table + RibbonTableBytes(shape.TotalSlots(), r);
    for (int i = 0; i < shape.layers; ++i) {
      const uint64_t slots = shape.slots[i];
      const RibbonHashing hashing(0, slots, r);
      if (i == 0) {
        SortLayerKeys(
            hashing, slots,
            [&](auto&& f) {
              for_each_chunk([&](const uint64_t* hashes, size_t n) {
                for (size_t k = 0; k < n; ++k) f(RemixHash(hashes[k], seed_index));
              });
            },
            0, s);
      } else {
        s->reaching.swap(s->bumped);
        SortLayerKeys(
            hashing, slots,
            [&](auto&& f) {
              for (const uint64_t h0 : s->reaching) f(h0);
            },
            i, s);
      }
      const bool last = i + 1 == shape.layers;
      if (!BuildLayer(slots, i, last, r, s, table + layer_offset, thresholds, first_bucket,
                      &held)) {
        return false;
      }
      layer_offset += RibbonTableBytes(slots, r);
      first_bucket += slots / kBumpedRibbonBucketStarts;
    }
    *stored = held;
    return true;
  }
};

template struct StaticKind<BumpedRibbon, BumpedRibbonParams>;

BumpedRibbonReader::BumpedRibbonReader(const BumpedRibbonShape& shape, const uint8_t* body,
                                       uint32_t seed_index, int fingerprint_bits)
    : num_layers_(shape.layers), seed_index_(seed_index) {
  uint64_t offset = 0, bucket = 0;
  for (int i = 0; i < shape.layers; ++i) {
    layers_[i] = RibbonReader(body + offset, RibbonHashing(0, shape.slots[i], fingerprint_bits),
                              fingerprint_bits);
    first_bucket_[i] = bucket;
    offset += RibbonTableBytes(shape.slots[i], fingerprint_bits);
    bucket += shape.slots[i] / kBumpedRibbonBucketStarts;
  }
  thresholds_ = body + offset;
}

void BumpedRibbonReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                         BatchPrefetch prefetch) const {
  PopcntDispatch::Batch(*this, hashes, count, may_match, prefetch);
}

void BumpedRibbonReader::BatchWithOwnPrefetch(const uint64_t* hashes, size_t count,
                                              bool* may_match) const {
  // Every key's first-layer words and threshold code are loading before the first test. The
  // deeper layer, for the 1 key in 16 bumped from the first, is not prefetched: a pass that did so
  // cost more than the misses it saved (docs/history.md).
  uint64_t h0[kPrefetchBatch];
  uint64_t starts[kPrefetchBatch];
  QueryInBatches(
      count, may_match,
      [&](size_t i, size_t k) {
        h0[k] = RemixHash(hashes[i], seed_index_);
        starts[k] = layers_[0].StartOf(h0[k]);
        PrefetchFirst(starts[k]);
      },
      [&](size_t k) { return MatchesFrom(h0[k], starts[k]); });
}

BumpedRibbonReader BumpedRibbonReader::Wrapped(uint64_t num_slots, const uint8_t* body,
                                               uint32_t seed_index, int fingerprint_bits) {
  BumpedRibbonReader reader;
  reader.num_layers_ = 1;
  reader.seed_index_ = seed_index;
  reader.layers_[0] =
      RibbonReader(body, RibbonHashing(0, num_slots, fingerprint_bits, /*wrapped=*/true),
                   fingerprint_bits, num_slots);
  return reader;
}

Result<int> BumpedRibbon::FingerprintBitsFor(const Params& params, uint64_t num_keys) {
  if (params.bits_per_key > 0) {
    return BumpedRibbonFingerprintBitsForBudget(params.bits_per_key, num_keys);
  }
  if (!ValidRibbonFingerprintBits(params.fingerprint_bits)) {
    return Err(FingerprintBitsError(params.fingerprint_bits, kRibbonMinFingerprintBits,
                                    kRibbonMaxFingerprintBits));
  }
  return params.fingerprint_bits;
}

uint64_t BumpedRibbon::BuildScratchBytes(const Params& params, uint64_t num_keys) {
  const uint64_t wrapped =
      RibbonWrappedBuildScratchBytes(std::min(num_keys, kBumpedRibbonWrappedMaxKeys));
  // Hashes that take a wrapped table, and so do their distinct keys (fewer): that build alone.
  if (num_keys <= kBumpedRibbonAlwaysWrappedKeys) return wrapped + kStaticBuildSpareBytes;
  // More: the layers' build, or a wrapped one for their distinct keys.
  return StaticKind::BuildScratchBytes(params, num_keys) + wrapped;
}

bool BumpedRibbon::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (t.version == 2) return RibbonWrappedBodyBytes(t, body_bytes);  // one wrapped table
  if (!ValidRibbonFingerprintBits(t.param) || t.num_units == 0) return false;
  const Result<BumpedRibbonShape> shape = BumpedRibbonShapeFor(t.num_units);
  if (!shape.ok() || t.num_keys > t.num_units) return false;
  *body_bytes = BumpedRibbonTableBytes(shape.value(), t.param);
  return true;
}

BumpedRibbonReader BumpedRibbon::OpenReader(const Trailer& t, const uint8_t* body) {
  if (t.version == 2) return BumpedRibbonReader::Wrapped(t.num_units, body, t.seed, t.param);
  // BodyBytes accepted the trailer: its shape exists.
  return BumpedRibbonReader(BumpedRibbonShapeFor(t.num_units).value(), body, t.seed, t.param);
}

}  // namespace sstfilter
