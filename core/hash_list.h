// SPDX-License-Identifier: Apache-2.0
// HashList: the key hashes of one filter under construction, 8 bytes per key.
//
// A std::vector grows by doubling, so it holds up to 16 bytes per key, and 24 while it
// reallocates. A builder of an SST file's filter may hold millions of keys, so HashList stores
// them in fixed chunks instead: 8 bytes per key plus at most one partly filled chunk, and nothing
// is ever copied. It skips a hash equal to the previous one (keys arrive sorted, so repeats of a
// key are consecutive).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sstfilter {

class HashList {
 public:
  static constexpr size_t kChunkHashes = 4096;  // 32 KiB per chunk

  // Appends h unless it equals the last hash. Only throws std::bad_alloc.
  void Add(uint64_t h) {
    if (size_ > 0 && last_ == h) return;
    const size_t slot = size_ % kChunkHashes;
    if (slot == 0 && size_ / kChunkHashes == chunks_.size()) {
      chunks_.emplace_back(new uint64_t[kChunkHashes]);
    }
    chunks_[size_ / kChunkHashes][slot] = h;
    last_ = h;
    ++size_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Forgets the hashes; keeps the first chunk for the next filter (RocksDB reuses a builder for
  // every partition of a partitioned filter).
  void Clear() {
    if (chunks_.size() > 1) chunks_.resize(1);
    size_ = 0;
  }

  void Swap(HashList& other) {
    chunks_.swap(other.chunks_);
    std::swap(size_, other.size_);
    std::swap(last_, other.last_);
  }

  // Calls f(const uint64_t* hashes, size_t count) for each chunk, in order.
  template <typename F>
  void ForEachChunk(F&& f) const {
    for (size_t start = 0; start < size_; start += kChunkHashes) {
      const size_t n = size_ - start < kChunkHashes ? size_ - start : kChunkHashes;
      f(chunks_[start / kChunkHashes].get(), n);
    }
  }

 private:
  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  size_t size_ = 0;
  uint64_t last_ = 0;
};

// Calls f(unique, n) with the hashes of [hashes, hashes + count) less consecutive repeats, and
// returns what f returns. Builders that get an array instead of a HashList use it: the array
// itself is passed when it has no repeats (the usual case), else a copy without them.
template <typename F>
auto WithoutConsecutiveRepeats(const uint64_t* hashes, size_t count, F&& f) {
  for (size_t i = 1; i < count; ++i) {
    if (hashes[i] != hashes[i - 1]) continue;
    std::vector<uint64_t> unique;
    unique.reserve(count);
    unique.push_back(hashes[0]);
    for (size_t j = 1; j < count; ++j) {
      if (hashes[j] != unique.back()) unique.push_back(hashes[j]);
    }
    return f(unique.data(), unique.size());
  }
  return f(hashes, count);
}

// The hashes that for_each_chunk(f) delivers as f(hashes, n), `count` in all, sorted and without
// repeats (8 bytes per hash, capacity `count`): the input of a static build's second try (fuse,
// Ribbon) when the first met repeats or failed, so that its bytes depend only on the set.
template <typename ForEachChunk>
std::vector<uint64_t> SortedDistinctHashes(uint64_t count, ForEachChunk&& for_each_chunk) {
  std::vector<uint64_t> unique;
  unique.reserve(count);
  for_each_chunk(
      [&](const uint64_t* hashes, size_t n) { unique.insert(unique.end(), hashes, hashes + n); });
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  return unique;
}

}  // namespace sstfilter
