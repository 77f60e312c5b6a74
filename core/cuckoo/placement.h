// SPDX-License-Identifier: Apache-2.0
// Placing a fingerprint in a cuckoo table by bounded random eviction walks: shared by the static
// build (cuckoo.cc) and the dynamic CuckooFilter (cuckoo_filter.cc). Private to core/cuckoo/.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cuckoo/cuckoo.h"
#include "core/cuckoo/cuckoo_table.h"
#include "core/cuckoo/semi_sorted_table.h"
#include "core/random.h"

namespace sstfilter {
namespace cuckoo_internal {

// Longest eviction walk before an insertion gives up (and is undone). The paper uses 500
// (section 5.2); longer walks buy little load and cost build time near the load threshold.
inline constexpr int kMaxKicks = 500;

enum class Placement { kStored, kRepresented, kFailed };

struct Kick {
  uint64_t bucket;
  int slot;
  uint32_t evicted;  // the fingerprint the kick took out of the slot
  uint32_t placed;   // the one it put there
};

// Undoing a kick: the plain table's slots stay where they are; a semi-sorted bucket holds a
// multiset, whose slots move as it changes, so the fingerprint placed is swapped back by value.
inline void Undo(CuckooTable* table, const Kick& k) { table->SetSlot(k.bucket, k.slot, k.evicted); }
inline void Undo(SemiSortedTable* table, const Kick& k) {
  table->ReplaceOne(k.bucket, k.placed, k.evicted);
}

// Places fp, whose buckets are i1 and Alt(i1, fp). With `skip_represented` (static builds), a
// fingerprint already in one of those buckets is not stored again: the key is already answered
// "may match". A failed walk is undone in reverse order, so the table is exactly as before (byte
// for byte: a semi-sorted bucket's bytes are those of its multiset). Table: CuckooTable or
// SemiSortedTable.
template <typename Table>
Placement Place(Table* table, const CuckooHashing& hashing, uint64_t i1, uint32_t fp,
                bool skip_represented, uint64_t* rng, std::vector<Kick>* path) {
  const uint64_t i2 = hashing.Alt(i1, fp);
  if (skip_represented && (table->Contains(i1, fp) || table->Contains(i2, fp))) {
    return Placement::kRepresented;
  }
  if (table->TryPut(i1, fp) || table->TryPut(i2, fp)) return Placement::kStored;
  path->clear();
  // Room for the whole walk before the first kick: the push_backs below then cannot throw
  // (std::bad_alloc) with a fingerprint evicted and not yet placed.
  path->reserve(kMaxKicks);
  uint64_t r = SplitMix64(rng);
  uint64_t bucket = (r & 1) ? i1 : i2;
  uint32_t carried = fp;
  for (int kick = 0; kick < kMaxKicks; ++kick) {
    if (kick % 16 == 0) r = SplitMix64(rng);  // 4 random bits per kick, 64 per draw
    const int slot = static_cast<int>((r >> (4 * (kick % 16) + 1)) & 3);
    const uint32_t evicted = table->Slot(bucket, slot);
    table->SetSlot(bucket, slot, carried);
    path->push_back({bucket, slot, evicted, carried});
    carried = evicted;
    bucket = hashing.Alt(bucket, carried);
    if (table->TryPut(bucket, carried)) return Placement::kStored;
  }
  for (auto it = path->rbegin(); it != path->rend(); ++it) Undo(table, *it);
  return Placement::kFailed;
}

}  // namespace cuckoo_internal
}  // namespace sstfilter
