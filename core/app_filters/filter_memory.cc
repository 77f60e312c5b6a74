// SPDX-License-Identifier: Apache-2.0
// The application filters' memory (include/sstfilter/filter_memory.h).
#include "sstfilter/filter_memory.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

namespace sstfilter {
namespace {

void* HeapAllocate(size_t bytes) { return ::operator new(bytes, std::nothrow); }
void HeapRelease(void* memory) { ::operator delete(memory); }

constexpr size_t kAlignment = 64;

// The pair is read as one: a filter made while another thread sets the allocator gets the old
// pair or the new one, never half of each. Each setting is a record in static storage, written
// before it is published and never changed after (a filter may still be releasing through an
// older one); setting a pair that has a record already reuses it.
struct AllocatorPair {
  void* (*allocate)(size_t);
  void (*release)(void*);
};
constexpr int kMaxAllocatorPairs = 64;
AllocatorPair pairs[kMaxAllocatorPairs];
int pairs_used = 0;  // under pairs_mutex
std::mutex pairs_mutex;
std::atomic<const AllocatorPair*> current{nullptr};

AllocatorPair Current() {
  const AllocatorPair* set = current.load(std::memory_order_acquire);
  return set != nullptr ? *set : AllocatorPair{HeapAllocate, HeapRelease};
}

}  // namespace

bool SetFilterAllocator(const FilterAllocator& allocator) {
  if (allocator.allocate == nullptr || allocator.release == nullptr) {
    current.store(nullptr, std::memory_order_release);
    return true;
  }
  const std::lock_guard<std::mutex> lock(pairs_mutex);
  for (int i = 0; i < pairs_used; ++i) {
    if (pairs[i].allocate == allocator.allocate && pairs[i].release == allocator.release) {
      current.store(&pairs[i], std::memory_order_release);
      return true;
    }
  }
  if (pairs_used == kMaxAllocatorPairs) return false;
  pairs[pairs_used] = AllocatorPair{allocator.allocate, allocator.release};
  current.store(&pairs[pairs_used++], std::memory_order_release);
  return true;
}

bool FilterBuffer::Allocate(size_t bytes) {
  if (!AllocateForOverwrite(bytes)) return false;
  std::memset(data_, 0, bytes);
  return true;
}

bool FilterBuffer::AllocateForOverwrite(size_t bytes) {
  Clear();
  if (bytes > SIZE_MAX - kAlignment) return false;
  const AllocatorPair allocator = Current();
  void* block = allocator.allocate(bytes + kAlignment - 1);
  if (block == nullptr) return false;
  const uintptr_t at = (reinterpret_cast<uintptr_t>(block) + kAlignment - 1) & ~(kAlignment - 1);
  data_ = reinterpret_cast<uint8_t*>(at);
  block_ = block;
  size_ = bytes;
  release_ = allocator.release;
  return true;
}

void FilterBuffer::Clear() {
  if (block_ != nullptr) release_(block_);
  data_ = nullptr;
  block_ = nullptr;
  size_ = 0;
  release_ = nullptr;
}

FilterBuffer& FilterBuffer::operator=(FilterBuffer&& other) noexcept {
  if (this != &other) {
    Clear();
    data_ = other.data_;
    block_ = other.block_;
    size_ = other.size_;
    release_ = other.release_;
    other.data_ = nullptr;
    other.block_ = nullptr;
    other.size_ = 0;
    other.release_ = nullptr;
  }
  return *this;
}

}  // namespace sstfilter
