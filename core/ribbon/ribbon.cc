// SPDX-License-Identifier: Apache-2.0
#include "core/ribbon/ribbon.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/batch.h"
#include "core/sizing.h"
#include "core/static_build.h"

namespace sstfilter {
namespace {

// One attempt with one seed in a wrapped table: the hashes remixed with the seed, then
// RibbonSolveWrappedSet.
template <typename ForEachChunk>
bool TryBuildWrapped(uint64_t num_slots, uint32_t seed_index, int r, ForEachChunk& for_each_chunk,
                     RibbonScratch* s, uint8_t* table, uint64_t* stored) {
  RibbonRemixAll(for_each_chunk, seed_index, &s->remixed);
  return RibbonSolveWrappedSet(num_slots, r, s, table, stored);
}

// One attempt with one seed. On success `table` (zeroed, RibbonTableBytes long) holds the
// solution and *stored the equations.
template <typename ForEachChunk>
bool TryBuild(uint64_t num_slots, uint32_t seed_index, int r, ForEachChunk& for_each_chunk,
              RibbonScratch* s, uint8_t* table, uint64_t* stored) {
  const RibbonHashing hashing(seed_index, num_slots, r);
  s->coeff.assign(num_slots, 0);  // allocates on the first attempt, zeroes on every one
  s->rhs.assign(num_slots, 0);
  uint64_t equations = 0;
  bool solvable = true;
  // The order of the equations does not change the solution, so a batch's first slots are all
  // prefetched before the first equation goes in (they are random lines of a table that
  // outgrows the caches from about 100,000 keys).
  uint64_t remixed[kPrefetchBatch];
  uint64_t starts[kPrefetchBatch];
  for_each_chunk([&](const uint64_t* hashes, size_t n) {
    for (size_t first = 0; first < n && solvable; first += kPrefetchBatch) {
      const size_t b = std::min(kPrefetchBatch, n - first);
      for (size_t k = 0; k < b; ++k) {
        remixed[k] = hashing.Remix(hashes[first + k]);
        starts[k] = hashing.Start(remixed[k]);
        __builtin_prefetch(&s->coeff[starts[k]], 1);
        __builtin_prefetch(&s->rhs[starts[k]], 1);
      }
      for (size_t k = 0; k < b && solvable; ++k) {
        uint64_t pivot = 0;
        const RibbonAdd added = RibbonAddEquation(s->coeff.data(), s->rhs.data(), starts[k],
                                                  RibbonHashing::Coefficients(remixed[k]),
                                                  hashing.Fingerprint(remixed[k]), &pivot);
        equations += added == RibbonAdd::kStored;
        solvable = added != RibbonAdd::kInconsistent;
      }
    }
  });
  if (!solvable) return false;

  RibbonBackSubstitute(s->coeff.data(), s->rhs.data(), num_slots, r, table);
  *stored = equations;
  return true;
}

}  // namespace

void RibbonBackSubstitute(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots, int r,
                          uint8_t* table) {
  // window[k] holds bit k of the rows i .. i + 63 (row i + j in bit j); a row with an equation
  // gets the value that satisfies it, a free row 0. A block's words are complete when i reaches
  // its first row.
  uint64_t window[kRibbonMaxFingerprintBits] = {};
  for (uint64_t i = num_slots; i-- > 0;) {
    const uint64_t c = coeff[i];
    uint32_t value = rhs[i];
    for (int k = 0; k < r; ++k) {
      window[k] <<= 1;
      // c's bit 0 meets the window's bit 0, still 0: only the rows after i count.
      value ^= static_cast<uint32_t>(__builtin_parityll(c & window[k])) << k;
    }
    if (c != 0) {
      for (int k = 0; k < r; ++k) window[k] |= (value >> k) & 1;
    }
    if (i % kRibbonCoeffBits == 0) {
      uint8_t* block = table + (i / kRibbonCoeffBits) * 8 * static_cast<uint64_t>(r);
      for (int k = 0; k < r; ++k) StoreLE64(block + 8 * k, window[k]);
    }
  }
}

bool RibbonSolveWrappedSet(uint64_t num_slots, int r, RibbonScratch* s, uint8_t* table,
                           uint64_t* stored) {
  // Seed 0: the hashes are remixed already.
  const RibbonHashing hashing(0, num_slots, r, /*wrapped=*/true);
  std::sort(s->remixed.begin(), s->remixed.end());
  s->coeff.assign(num_slots, 0);
  s->rhs.assign(num_slots, 0);
  uint64_t equations = 0;
  for (const uint64_t h : s->remixed) {
    uint64_t pivot = 0;
    const RibbonAdd added =
        RibbonAddWrappedEquation(s->coeff.data(), s->rhs.data(), num_slots, hashing.Start(h),
                                 RibbonHashing::Coefficients(h), hashing.Fingerprint(h), &pivot);
    if (added == RibbonAdd::kInconsistent) return false;
    equations += added == RibbonAdd::kStored;
  }
  uint64_t implied = 0;
  if (!RibbonSolveWrapped(s->coeff.data(), s->rhs.data(), num_slots, r, &s->depends, &s->values,
                          table, &implied)) {
    return false;
  }
  *stored = equations - implied;
  return true;
}

// The Ribbon kind's solver for BuildStatic (core/static_build.h): one attempt is one seed's
// elimination and back substitution.
struct RibbonSolver {
  using Table = RibbonTable;
  using Scratch = RibbonScratch;
  // Every seed over the input as it is: the build makes the distinct copy only when the input
  // had repeats or a seed stored fewer equations than keys.
  static constexpr int kFirstPassSeeds = std::numeric_limits<int>::max();

  static Result<Table> TableFor(uint64_t num_keys) { return RibbonTableFor(num_keys); }
  static bool Solvable(const Table&) { return true; }
  static uint64_t Units(const Table& t) { return t.slots; }
  static uint8_t Version(const Table& t) { return t.wrapped ? 2 : 1; }
  // A wrapped table has at most 65,535 slots (static_assert in math.h), seeds below 256
  // (kRibbonMaxAttempts) and at most 32-bit fingerprints: its fields fit the compact layout.
  static TrailerLayout TrailerLayoutFor(const Table& t) {
    return t.wrapped ? TrailerLayout::kCompact : TrailerLayout::kLayout2;
  }
  static uint64_t TableBytes(const Table& t, int r) { return RibbonTableBytes(t, r); }

  template <typename ForEachChunk>
  static bool TrySeed(const Table& t, int r, int seed, ForEachChunk& for_each_chunk, Scratch* s,
                      uint8_t* table, uint64_t* stored, uint32_t* trailer_seed) {
    *trailer_seed = static_cast<uint32_t>(seed);
    const uint32_t seed_index = static_cast<uint32_t>(seed);
    return t.wrapped ? TryBuildWrapped(t.slots, seed_index, r, for_each_chunk, s, table, stored)
                     : TryBuild(t.slots, seed_index, r, for_each_chunk, s, table, stored);
  }
};

template struct StaticKind<Ribbon, RibbonParams>;

void RibbonReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                   BatchPrefetch prefetch) const {
  PopcntDispatch::Batch(*this, hashes, count, may_match, prefetch);
}

void RibbonReader::BatchWithOwnPrefetch(const uint64_t* hashes, size_t count,
                                        bool* may_match) const {
  uint64_t remixed[kPrefetchBatch];
  uint64_t starts[kPrefetchBatch];
  QueryInBatches(
      count, may_match,
      [&](size_t i, size_t k) {
        remixed[k] = hashing_.Remix(hashes[i]);
        starts[k] = hashing_.Start(remixed[k]);
        PrefetchSpan(starts[k]);
      },
      [&](size_t k) { return Matches(remixed[k], starts[k]); });
}

Result<int> Ribbon::FingerprintBitsFor(const Params& params, uint64_t num_keys) {
  if (params.bits_per_key > 0) return RibbonFingerprintBitsForBudget(params.bits_per_key, num_keys);
  if (!ValidRibbonFingerprintBits(params.fingerprint_bits)) {
    return Err(FingerprintBitsError(params.fingerprint_bits, kRibbonMinFingerprintBits,
                                    kRibbonMaxFingerprintBits));
  }
  return params.fingerprint_bits;
}

uint64_t RibbonWrappedBuildScratchBytes(uint64_t num_keys) {
  const uint64_t keys = std::min(std::max<uint64_t>(num_keys, 1), kRibbonWrappedMaxKeys);
  return 32 * RibbonTableFor(keys).value().slots + 16 * keys;
}

uint64_t Ribbon::BuildScratchBytes(const Params& params, uint64_t num_keys) {
  const uint64_t wrapped = RibbonWrappedBuildScratchBytes(num_keys);
  if (num_keys <= kRibbonWrappedMaxKeys) return wrapped + kStaticBuildSpareBytes;
  return StaticKind::BuildScratchBytes(params, num_keys) + wrapped;
}

bool RibbonWrappedBodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (!ValidRibbonFingerprintBits(t.param)) return false;
  if (t.num_keys > t.num_units || t.num_units > kRibbonMaxSlots) return false;
  // At least 64 slots, any number of them.
  if (t.num_units < kRibbonWrappedMinSlots) return false;
  *body_bytes = RibbonWrappedTableBytes(t.num_units, t.param);
  return true;
}

bool Ribbon::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (t.version == 2) return RibbonWrappedBodyBytes(t, body_bytes);
  if (!ValidRibbonFingerprintBits(t.param)) return false;
  if (t.num_keys > t.num_units || t.num_units > kRibbonMaxSlots) return false;
  // Whole blocks, at least one.
  if (t.num_units == 0 || t.num_units % kRibbonCoeffBits != 0) return false;
  *body_bytes = RibbonTableBytes(t.num_units, t.param);
  return true;
}

RibbonReader Ribbon::OpenReader(const Trailer& t, const uint8_t* body) {
  if (t.version == 2) {
    return RibbonReader(body, RibbonHashing(t.seed, t.num_units, t.param, /*wrapped=*/true),
                        t.param, t.num_units);
  }
  return RibbonReader(body, RibbonHashing(t.seed, t.num_units, t.param), t.param);
}

}  // namespace sstfilter
