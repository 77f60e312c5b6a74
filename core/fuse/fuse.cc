// SPDX-License-Identifier: Apache-2.0
#include "core/fuse/fuse.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/batch.h"
#include "core/packed_fields.h"
#include "core/sizing.h"
#include "core/static_build.h"

namespace sstfilter {
namespace {

// A cell's entry count, kept in the top 6 bits of its byte; the low 2 bits hold the xor of the
// indexes (0 .. arity - 1) at which its keys reach it, so a cell of one key knows which of that
// key's cells it is. 64 keys in one cell overflow it: the attempt fails and the next seed runs.
constexpr uint8_t kOneEntry = 4;
constexpr uint32_t kPeeledOut = std::numeric_limits<uint32_t>::max();
// How far ahead, in queue entries, the peel prefetches the cells of the key it will peel, and the
// assignment the hash of the cell it will assign. From about 4M keys the 13 bytes per cell
// outgrow the caches, and each peel and assignment would wait for memory. Queue entries come in
// cell order, but a key's cells lie segments apart, so no hardware prefetcher guesses them.
constexpr uint64_t kPeelPrefetchDistance = 8;
constexpr uint64_t kAssignPrefetchDistance = 16;

// The memory of one build attempt, reused by the next: per cell, the count byte, the xor of the
// keys' remixed hashes, and the peeling queue (13 bytes per cell, and one spare queue slot;
// BuildStatic adds 8 per key when the input had repeats or the first seed did not peel).
struct FuseScratch {
  std::vector<uint8_t> count;
  std::vector<uint64_t> xor_hash;
  std::vector<uint32_t> queue;
  uint64_t Bytes() const {
    return count.capacity() + 8 * xor_hash.capacity() + 4 * queue.capacity();
  }
};

// Scratch's arrays for one attempt. Passed by value, as is the hashing: the count bytes are
// stored through uint8_t, which may alias anything in memory, so pointers and parameters that the
// compiler can see are copies stay in registers instead of being reloaded after every store.
struct Cells {
  uint8_t* count;
  uint64_t* xor_hash;
  uint32_t* queue;
};

void Insert(Cells t, const uint64_t* cells, int arity, uint64_t h, bool* overflow) {
  for (int i = 0; i < arity; ++i) {
    uint8_t& c = t.count[cells[i]];
    c = static_cast<uint8_t>((c + kOneEntry) ^ i);
    *overflow |= c < kOneEntry;  // the count wrapped to 0
    t.xor_hash[cells[i]] ^= h;
  }
}

void Remove(Cells t, const uint64_t* cells, int arity, uint64_t h) {
  for (int i = 0; i < arity; ++i) {
    uint8_t& c = t.count[cells[i]];
    c = static_cast<uint8_t>((c ^ i) - kOneEntry);
    t.xor_hash[cells[i]] ^= h;
  }
}

// Counts every key into its cells. A key whose cells already hold exactly one other key with the
// same hash is a repeat (the two cancel to a zero xor): it is taken out again. The order does not
// matter (counts and xors commute), so a batch's cells are all prefetched before the first is
// updated: each key touches 2 * arity random lines of a table larger than the caches from about
// 100,000 keys (13 bytes per cell). False if a cell's count overflowed; *keys counts the keys in.
template <typename ForEachChunk>
bool CountKeys(const FuseHashing hashing, ForEachChunk& for_each_chunk, Cells t, uint64_t* keys) {
  const int arity = hashing.arity();
  bool overflow = false;
  uint64_t remixed[kPrefetchBatch];
  uint64_t batch_cells[kPrefetchBatch][4];
  for_each_chunk([&](const uint64_t* hashes, size_t n) {
    for (size_t start = 0; start < n; start += kPrefetchBatch) {
      const size_t b = std::min(kPrefetchBatch, n - start);
      for (size_t k = 0; k < b; ++k) {
        remixed[k] = hashing.Remix(hashes[start + k]);
        hashing.Cells(remixed[k], batch_cells[k]);
        for (int i = 0; i < arity; ++i) {
          __builtin_prefetch(&t.count[batch_cells[k][i]], 1);
          __builtin_prefetch(&t.xor_hash[batch_cells[k][i]], 1);
        }
      }
      for (size_t k = 0; k < b; ++k) {
        const uint64_t h = remixed[k];
        const uint64_t* cells = batch_cells[k];
        Insert(t, cells, arity, h, &overflow);
        ++*keys;
        for (int i = 0; i < arity; ++i) {
          if (t.xor_hash[cells[i]] == 0 && t.count[cells[i]] == 2 * kOneEntry) {
            Remove(t, cells, arity, h);
            --*keys;
            break;
          }
        }
      }
    }
  });
  return !overflow;
}

// Peels: a cell of one key fixes that key last; taking the key out may leave other cells with
// one key. The queue holds each cell at most once (counts only fall), and its peeled entries, in
// order, are the reverse of the order in which the cells are assigned. Returns the keys peeled
// and sets *queue_end to the queue's length.
uint64_t Peel(const FuseHashing hashing, uint64_t num_cells, Cells t, uint64_t* queue_end) {
  const int arity = hashing.arity();
  uint64_t cells[4];
  uint64_t head = 0, tail = 0;
  for (uint64_t c = 0; c < num_cells; ++c) {
    if ((t.count[c] >> 2) == 1) t.queue[tail++] = static_cast<uint32_t>(c);
  }
  uint64_t peeled = 0;
  while (head < tail) {
    if (head + kPeelPrefetchDistance < tail) {
      // The cell's hash may still change (then its count falls to 0 and it is skipped), so
      // these are only guesses, and any hash gives cells inside the table.
      uint64_t ahead[4];
      hashing.Cells(t.xor_hash[t.queue[head + kPeelPrefetchDistance]], ahead);
      for (int i = 0; i < arity; ++i) {
        __builtin_prefetch(&t.count[ahead[i]], 1);
        __builtin_prefetch(&t.xor_hash[ahead[i]], 1);
      }
    }
    const uint64_t c = t.queue[head];
    if ((t.count[c] >> 2) != 1) {  // emptied since it was queued
      t.queue[head++] = kPeeledOut;
      continue;
    }
    ++head;
    ++peeled;
    const uint64_t h = t.xor_hash[c];  // the only key left in c
    hashing.Cells(h, cells);
    // Without branches (their outcomes are random): c itself falls to count 0 and xor 0 with
    // the others, so it is not queued again; a cell is queued where the write is kept, and the
    // slot past the tail exists (the queue has one spare).
    for (int i = 0; i < arity; ++i) {
      uint8_t& cell_count = t.count[cells[i]];
      cell_count = static_cast<uint8_t>((cell_count ^ i) - kOneEntry);
      t.xor_hash[cells[i]] ^= h;
      t.queue[tail] = static_cast<uint32_t>(cells[i]);
      tail += (cell_count >> 2) == 1;
    }
    t.xor_hash[c] = h;  // kept for the assignment
  }
  *queue_end = tail;
  return peeled;
}

// Assigns in reverse peeling order: each key's own cell makes the xor of its cells its
// fingerprint; the cells it shares were assigned (or stay 0) before, and stay as they are.
void Assign(const FuseHashing hashing, int w, Cells t, uint64_t queue_end, uint8_t* table) {
  const int arity = hashing.arity();
  uint64_t cells[4];
  for (uint64_t q = queue_end; q-- > 0;) {
    if (q >= kAssignPrefetchDistance && t.queue[q - kAssignPrefetchDistance] != kPeeledOut) {
      __builtin_prefetch(&t.xor_hash[t.queue[q - kAssignPrefetchDistance]]);
    }
    const uint64_t c = t.queue[q];
    if (c == kPeeledOut) continue;
    const uint64_t h = t.xor_hash[c];
    hashing.Cells(h, cells);
    uint32_t value = hashing.Fingerprint(h);
    // c's own field is still 0 (a cell is peeled once), so xoring it in changes nothing.
    for (int i = 0; i < arity; ++i) {
      value ^= static_cast<uint32_t>(LoadBitsFrom(table, cells[i] * w));
    }
    StoreField(table, c * w, w, value);
  }
}

}  // namespace

// The fuse kind's solver for BuildStatic (core/static_build.h): one attempt is one seed's count,
// peel and assignment.
struct FuseSolver {
  using Table = FuseShape;
  using Scratch = FuseScratch;
  // One seed over the input as it is: a build whose first seed does not peel is rare, and the
  // retries run over the distinct copy.
  static constexpr int kFirstPassSeeds = 1;

  static Result<Table> TableFor(uint64_t num_keys) { return FuseShapeFor(num_keys); }
  // The queue indexes cells with 32 bits: a larger table (over 4e9 keys) takes the fallback.
  static bool Solvable(const Table& shape) { return shape.num_cells <= kPeeledOut; }
  static uint64_t Units(const Table& shape) { return shape.num_cells; }
  static uint8_t Version(const Table&) { return kFormatVersion; }
  static TrailerLayout TrailerLayoutFor(const Table&) { return TrailerLayout::kLayout2; }
  static uint64_t TableBytes(const Table& shape, int w) {
    return FuseTableBytes(shape.num_cells, w);
  }

  template <typename ForEachChunk>
  static bool TrySeed(const Table& shape, int w, int seed, ForEachChunk& for_each_chunk, Scratch* s,
                      uint8_t* table, uint64_t* stored, uint32_t* trailer_seed) {
    FuseLayout layout;
    layout.seed_index = static_cast<uint32_t>(seed);
    layout.arity = shape.arity;
    layout.segment_length_log2 = shape.segment_length_log2;
    // Every fourth try halves the segments (same cells): sizes just past a doubling of the
    // segment length peel poorly at their own (measured by the reference's authors).
    if (seed % 4 == 3 && layout.segment_length_log2 > 1) --layout.segment_length_log2;
    const uint64_t num_cells = shape.num_cells;
    const uint64_t segment_count = (num_cells >> layout.segment_length_log2) - (layout.arity - 1);
    const FuseHashing hashing(layout, segment_count, w);
    s->count.assign(num_cells, 0);  // allocates on the first attempt, zeroes on every one
    s->xor_hash.assign(num_cells, 0);
    s->queue.resize(num_cells + 1);
    const Cells cells{s->count.data(), s->xor_hash.data(), s->queue.data()};
    uint64_t keys = 0;
    if (!CountKeys(hashing, for_each_chunk, cells, &keys)) return false;
    uint64_t queue_end = 0;
    if (Peel(hashing, num_cells, cells, &queue_end) != keys) return false;
    Assign(hashing, w, cells, queue_end, table);
    *stored = keys;
    *trailer_seed = layout.Encode();
    return true;
  }
};

template struct StaticKind<Fuse, FuseParams>;

void FuseReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                 BatchPrefetch prefetch) const {
  uint64_t remixed[kPrefetchBatch];
  uint64_t cells[kPrefetchBatch][4];
  const int arity = hashing_.arity();
  for (size_t start = 0; start < count; start += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      remixed[i] = hashing_.Remix(hashes[start + i]);
      hashing_.Cells(remixed[i], cells[i]);
      if (prefetch == BatchPrefetch::kInBatch) {
        for (int j = 0; j < arity; ++j) PrefetchCell(cells[i][j]);
      }
    }
    for (size_t i = 0; i < n; ++i) may_match[start + i] = Matches(remixed[i], cells[i]);
  }
}

Result<int> Fuse::FingerprintBitsFor(const Params& params, uint64_t num_keys) {
  if (params.bits_per_key <= 0) {
    if (!ValidFuseFingerprintBits(params.fingerprint_bits)) {
      return Err(FuseFingerprintBitsError(params.fingerprint_bits));
    }
    return params.fingerprint_bits;
  }
  if (!ValidBitsPerKey(params.bits_per_key)) return Err(BitsPerKeyError(params.bits_per_key));
  if (num_keys == 0) return kFuseMinFingerprintBits;
  const Result<FuseShape> shape = FuseShapeFor(num_keys);
  if (!shape.ok()) return Err(shape.error());
  const double w = std::floor(params.bits_per_key * static_cast<double>(num_keys) /
                              static_cast<double>(shape.value().num_cells));
  return static_cast<int>(
      std::clamp(w, double{kFuseMinFingerprintBits}, double{kFuseMaxFingerprintBits}));
}

bool Fuse::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  FuseLayout layout;
  if (!ValidFuseFingerprintBits(t.param) || !FuseLayout::Decode(t.seed, &layout)) return false;
  // The table is whole segments, at least `arity` of them, and holds at most one key per cell.
  const uint64_t segments = t.num_units >> layout.segment_length_log2;
  if ((segments << layout.segment_length_log2) != t.num_units) return false;
  if (segments < static_cast<uint64_t>(layout.arity)) return false;
  if (t.num_keys > t.num_units) return false;
  *body_bytes = FuseTableBytes(t.num_units, t.param);
  return true;
}

FuseReader Fuse::OpenReader(const Trailer& t, const uint8_t* body) {
  FuseLayout layout;
  FuseLayout::Decode(t.seed, &layout);  // BodyBytes accepted it
  const uint64_t segment_count = (t.num_units >> layout.segment_length_log2) - (layout.arity - 1);
  return FuseReader(body, FuseHashing(layout, segment_count, t.param), t.param);
}

}  // namespace sstfilter
