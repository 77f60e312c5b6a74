// SPDX-License-Identifier: Apache-2.0
// optimize_filters_for_memory (BlockBasedTableOptions; RocksDB's default from 9.2): filter sizes
// that fill the allocations their blocks live in.
//
// RocksDB holds a filter block in the block cache in one allocation of its bytes plus its 5-byte
// block trailer, and charges the cache the allocator's usable size of it (malloc_usable_size).
// An allocator rounds each request up to one of its size classes: glibc's malloc to 16 bytes
// (below its mmap threshold, then to 4 KiB pages), jemalloc to four classes per doubling (a
// request of 81 KiB takes 96). The bytes between the filter and its class are charged and unused.
//
// Like RocksDB's own Bloom filters under this option, a filter whose kind can take any whole
// number of units (blocked Bloom: 64-byte blocks; standard Bloom: 8-byte words) is sized to its
// class: the largest filter whose block fits the class its chosen size falls in (lower false
// positives for bytes already charged), or, while the filters rounded up so far have bought more
// than they spent, a smaller one (12/16 to 15/16 of the chosen size) whose rate the surplus
// covers. The balance is the sum, over the filters rounded, of their rate minus the chosen
// filter's rate; a smaller filter is taken only if the balance stays at most 0, so the filters'
// mean rate never exceeds the chosen one's. Other kinds (their sizes follow from their key count
// and fingerprint width) are built as chosen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/filter_spec.h"

namespace sstfilter {

// What RocksDB adds to a block it holds in the cache (BlockBasedTable::kBlockTrailerSize).
inline constexpr uint64_t kBlockTrailerBytes = 5;

class SizeClassRounding {
 public:
  // The usable bytes of an allocation of `bytes`: this process's malloc_usable_size (where the
  // C library has it; else `bytes`, and nothing is rounded).
  static uint64_t MallocUsableBytes(uint64_t bytes);

  // `usable` gives the usable bytes of an allocation of its argument (tests give an allocator's
  // classes).
  explicit SizeClassRounding(std::function<uint64_t(uint64_t)> usable = MallocUsableBytes)
      : usable_(std::move(usable)) {}

  // The filter to build for num_keys keys instead of `chosen`: the same kind, sized to its class
  // as above; `chosen` for the other kinds, for no keys, or where no other size is valid.
  // Thread-safe (one per policy, shared by its builders). May throw std::bad_alloc.
  FilterSpec Round(const FilterSpec& chosen, uint64_t num_keys);

  // The sum over the filters rounded of (their estimated rate - the chosen one's), times 2^32.
  int64_t Balance() const {
    std::lock_guard<std::mutex> lock(mu_);
    return balance_;
  }

 private:
  const std::function<uint64_t(uint64_t)> usable_;
  mutable std::mutex mu_;  // one decision at a time: two builders never spend one surplus
  int64_t balance_ = 0;
};

}  // namespace sstfilter
