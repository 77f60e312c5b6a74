// SPDX-License-Identifier: Apache-2.0
// Where the application filters (BloomFilter, CuckooFilter, and the scalable filters made of them)
// take their bit arrays and tables from: the C++ heap by default, or the functions a program that
// embeds them sets. The Redis module sets Redis's own allocator, so that `INFO memory` and
// `maxmemory` count the filters.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sstfilter/export.h"

namespace sstfilter {

struct FilterAllocator {
  // `bytes` bytes, aligned for any scalar type, or nullptr when they cannot be had. Never throws.
  void* (*allocate)(size_t bytes) = nullptr;
  void (*release)(void* memory) = nullptr;
};

// The allocator of every filter made from now on; {} restores the C++ heap. A filter frees its
// memory through the allocator it was made with, so filters made before the change stay valid.
// One process-wide setting, safe to change while other threads make filters. A process may set
// up to 64 different allocators (setting one again reuses its record); false, changing nothing,
// beyond.
SSTFILTER_EXPORT bool SetFilterAllocator(const FilterAllocator& allocator);

// An owning array of zeroed filter bytes, 64-byte aligned (a cache line), from the allocator set
// when it was allocated. Moves; does not copy.
class SSTFILTER_EXPORT FilterBuffer {
 public:
  FilterBuffer() = default;
  // Replaces the array with `bytes` zeroed bytes; false, holding nothing, when they cannot be had.
  bool Allocate(size_t bytes);
  // As Allocate, with the bytes left as the allocator gives them: for a caller that writes every
  // one (a filter read from its serialised bytes), so that the memory is written once.
  bool AllocateForOverwrite(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  void Clear();

  FilterBuffer(FilterBuffer&& other) noexcept { *this = static_cast<FilterBuffer&&>(other); }
  FilterBuffer& operator=(FilterBuffer&& other) noexcept;
  FilterBuffer(const FilterBuffer&) = delete;
  FilterBuffer& operator=(const FilterBuffer&) = delete;
  ~FilterBuffer() { Clear(); }

 private:
  uint8_t* data_ = nullptr;  // 64-byte aligned, inside block_
  void* block_ = nullptr;    // what the allocator gave
  size_t size_ = 0;
  void (*release_)(void*) = nullptr;  // of the allocator that gave block_
};

}  // namespace sstfilter
