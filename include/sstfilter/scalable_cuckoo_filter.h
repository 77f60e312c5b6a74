// SPDX-License-Identifier: Apache-2.0
// ScalableCuckooFilter: a cuckoo filter that grows with its set and can forget keys, as
// RedisBloom's CF.RESERVE with EXPANSION (CF.ADD, CF.ADDNX, CF.DEL, CF.COUNT).
//
// It is a list of CuckooFilters (include/sstfilter/cuckoo_filter.h). Keys go into the newest; when
// that one holds its capacity, or cannot place a key, a new one is added with `growth` times the
// capacity and `tightening` times the rate (include/sstfilter/scaling.h). Filter i has the rate
// p_i = p (1 - r) r^i (r = tightening) and fingerprints of f_i = ceil(log2(8 / p_i + 1)) bits. An
// absent key matches one of the 8 slots of its two buckets with probability at most 1 / (2^f - 1)
// each (fingerprints are 1 .. 2^f - 1), so filter i passes it with probability at most
// 8 / (2^f_i - 1) <= p_i, and the whole with probability below sum_i p_i < p: a bound from the
// union of the slots, which holds at every size without a model. Fingerprints are at most 32 bits,
// so rates below 8 / (2^32 - 1), about 1.9e-9, end the growth: Add then answers kFull.
//
// Deletion: Erase removes one copy of the key's fingerprint. Only erase keys that were added: as
// in one CuckooFilter, erasing a key never added can remove another key's fingerprint, which is
// then lost. With several filters there is one more case: the key's fingerprint may also match
// another key's in a second filter (as likely as a false positive there). Erase cannot tell which
// copy is the key's, so it then erases nothing and answers kAmbiguous: the key stays a false
// positive, and no other key is lost.
//
// Threads: const methods may run at the same time from many threads; Add and Erase need one writer
// at a time, with no query running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/cuckoo_filter.h"
#include "sstfilter/export.h"
#include "sstfilter/hash_key.h"
#include "sstfilter/result.h"
#include "sstfilter/scaling.h"

namespace sstfilter {

enum class EraseOutcome {
  kErased,     // one copy of the key's fingerprint removed
  kAbsent,     // no filter holds it
  kAmbiguous,  // more than one filter holds it: nothing removed (see above)
};

class SSTFILTER_EXPORT ScalableCuckooFilter {
 public:
  // Fails, with a message, for a capacity of 0, a rate outside (0, 1), options out of range, or a
  // first filter that needs more than 32-bit fingerprints.
  static Result<ScalableCuckooFilter> Create(uint64_t initial_capacity, double fp_rate,
                                             ScalingOptions options = {});

  // Adds a copy of the key (a key added twice is stored twice): kAdded or kFull (also for a key
  // whose 8 slots in the newest filter all hold its copies already).
  AddOutcome Add(std::string_view key) { return AddHash(HashKey(key)); }
  AddOutcome AddHash(uint64_t hash);
  // Adds the key only if the filter does not report it already: kMayBePresent, kAdded or kFull.
  AddOutcome AddIfAbsent(std::string_view key) { return AddIfAbsentHash(HashKey(key)); }
  AddOutcome AddIfAbsentHash(uint64_t hash);

  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }
  bool MayContainHash(uint64_t hash) const { return chain_.MayContainHash(hash); }
  // may_match[i] = MayContainHash(hashes[i]): each filter answers the whole batch with its memory
  // loads overlapped (CuckooFilter::MayContainBatch). Allocates a flag per hash.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
    chain_.MayContainBatch(hashes, count, may_match);
  }
  // The filters, oldest first.
  const std::vector<CuckooFilter>& filters() const { return chain_.filters(); }
  // The copies of the key's fingerprint over all filters (CuckooFilter::Count of each).
  uint64_t Count(std::string_view key) const { return CountHash(HashKey(key)); }
  uint64_t CountHash(uint64_t hash) const;

  EraseOutcome Erase(std::string_view key) { return EraseHash(HashKey(key)); }
  EraseOutcome EraseHash(uint64_t hash);

  // Fingerprints stored.
  uint64_t size() const;
  // The keys the filters are sized for (each at 95% load).
  uint64_t capacity() const { return chain_.capacity(); }
  size_t num_filters() const { return chain_.filters().size(); }
  // The bound: the rate asked of Create.
  double fp_rate() const { return chain_.fp_rate(); }
  // The bound of the filters made so far: sum_i 8 / (2^f_i - 1).
  double FpRateBound() const;
  uint64_t memory_bytes() const { return chain_.memory_bytes(); }

  // The filter as bytes (core/app_filters/chain_format.h: a header, then each CuckooFilter's
  // Serialize), and back: Deserialize fails, with a message, for bytes that are not a scalable
  // cuckoo filter this one could have become (truncated, corrupt, of another kind, or with filters
  // that its options would not have made), and then builds nothing.
  std::string Serialize() const;
  // Serialize()'s length and a part of it, as ScalableBloomFilter's.
  uint64_t SerializedBytes() const;
  size_t SerializeRange(uint64_t offset, size_t length, void* out) const;
  static Result<ScalableCuckooFilter> Deserialize(const void* data, size_t size);
  // Deserialize's last step, as ScalableBloomFilter's.
  static Result<ScalableCuckooFilter> FromFilters(const void* header,
                                                  std::vector<CuckooFilter> filters);
  const ScalingOptions& options() const { return options_; }
  uint64_t initial_capacity() const { return initial_capacity_; }

  // A moved-from filter takes no keys (kFull) and answers "may match" to every query.
  ScalableCuckooFilter(ScalableCuckooFilter&&) noexcept = default;
  ScalableCuckooFilter& operator=(ScalableCuckooFilter&&) noexcept = default;

 private:
  friend class Result<ScalableCuckooFilter>;  // its failed state holds a default-made filter
  ScalableCuckooFilter() = default;

  FilterChain<CuckooFilter> chain_;
  ScalingOptions options_;  // as given to Create
  uint64_t initial_capacity_ = 0;
};

}  // namespace sstfilter
