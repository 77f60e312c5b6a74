// SPDX-License-Identifier: Apache-2.0
// ChunkedList: the values of one filter under construction (HashList: key hashes, 8 bytes per
// key; the range filter's builder: 16-byte windows).
//
// A std::vector grows by doubling, so it holds up to twice its values' bytes, and three times
// while it reallocates (and copies every value again each time). A builder of an SST file's filter
// may hold millions of keys, so a ChunkedList stores them in fixed chunks of 32 KiB instead: its
// values' bytes plus at most one partly filled chunk, and nothing is ever copied. It skips a value
// equal to the previous one (keys arrive sorted, so repeats of a key are consecutive).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sstfilter {

template <typename T>
class ChunkedList {
 public:
  static constexpr size_t kChunkItems = 32768 / sizeof(T);  // 32 KiB per chunk
  static_assert((kChunkItems & (kChunkItems - 1)) == 0, "a power of two: no division per Add");

  // Appends v unless it equals the last value. Only throws std::bad_alloc.
  void Add(const T& v) {
    if (size_ > 0 && last_ == v) return;
    const size_t slot = size_ % kChunkItems;
    if (slot == 0 && size_ / kChunkItems == chunks_.size()) {
      chunks_.emplace_back(new T[kChunkItems]);
    }
    chunks_[size_ / kChunkItems][slot] = v;
    last_ = v;
    ++size_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The last value added; not empty().
  const T& back() const { return last_; }

  // Forgets the values; keeps the first chunk for the next filter (RocksDB reuses a builder for
  // every partition of a partitioned filter).
  void Clear() {
    if (chunks_.size() > 1) chunks_.resize(1);
    size_ = 0;
  }
  // Forgets the values and frees every chunk.
  void Release() {
    std::vector<std::unique_ptr<T[]>>().swap(chunks_);
    size_ = 0;
  }

  void Swap(ChunkedList& other) {
    chunks_.swap(other.chunks_);
    std::swap(size_, other.size_);
    std::swap(last_, other.last_);
  }

  // Calls f(const T* values, size_t count) for each chunk, in order.
  template <typename F>
  void ForEachChunk(F&& f) const {
    for (size_t start = 0; start < size_; start += kChunkItems) {
      const size_t n = size_ - start < kChunkItems ? size_ - start : kChunkItems;
      f(static_cast<const T*>(chunks_[start / kChunkItems].get()), n);
    }
  }
  // The chunks, each of kChunkItems values (filled or not), whose memory a caller may reuse once
  // it no longer needs the values.
  size_t num_chunks() const { return chunks_.size(); }
  T* chunk(size_t c) { return chunks_[c].get(); }

  // Replaces each value v by f(v), in place. Values that become equal are not merged.
  template <typename F>
  void Transform(F&& f) {
    for (size_t i = 0; i < size_; ++i) {
      T& v = chunks_[i / kChunkItems][i % kChunkItems];
      v = f(v);
    }
    if (size_ > 0) last_ = chunks_[(size_ - 1) / kChunkItems][(size_ - 1) % kChunkItems];
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
  T last_{};
};

using HashList = ChunkedList<uint64_t>;

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
