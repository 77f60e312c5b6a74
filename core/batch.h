// The batch size of every batched loop in core/ (queries and builds).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sstfilter {

// Keys whose cache lines are all prefetched before the first is used. A batch waits about one
// DRAM latency (~100 ns) for its first line and finds the rest arrived, so the cost per key falls
// as the batch grows; 32 is RocksDB's MultiGet batch, so that a MultiGet's keys are one batch, as
// in RocksDB's own filters (16 split it in two).
inline constexpr size_t kPrefetchBatch = 32;

// Starts loading every cache line of [first, first + bytes) (bytes >= 1), to read, or to write
// (PrefetchBytesForWrite). Every prefetch of a filter body that a caller placed goes through
// these, because the body sits wherever RocksDB's block cache (or malloc) put it, not on a
// 64-byte boundary: a 64-byte Bloom block then spans two cache lines, and so do 7 in 64 of the
// 8-byte loads of a packed field.
// Prefetching only the first line left the second to a demand miss inside the query loop, which
// serialised the batch: that was why our batched misses lost to RocksDB's beyond the caches.
// core_bench, 20M keys, batched miss, this change against the one before in alternating runs
// (bloomfilter:10 took 20.6-21.0 ns in all four): blocked Bloom 18.3 and 22.9 -> 12.0 and 12.0 ns;
// semi-sorted cuckoo at 0.1% 22.9 and 26.6 -> 18.0 and 17.9; fuse at 1% 17.7 and 20.1 -> 16.4
// and 16.8. In the caches (1M keys) the extra prefetches cost fuse about 1.4 ns (12.4 -> 13.8).
template <int kForWrite>
inline void PrefetchLines(const void* first, size_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(first);
  const uint8_t* const last = p + bytes - 1;
  for (; p < last; p += 64) __builtin_prefetch(p, kForWrite);
  __builtin_prefetch(last, kForWrite);
  // GCC (12) does not count a prefetch as an effect: a function that only prefetches, not
  // inlined early, is found "pure" and every call to it deleted (it removed all of
  // CuckooReader::Prefetch and the cuckoo batch's prefetches when they went through a loop
  // here). An empty volatile asm is an effect, and emits nothing.
  asm volatile("");
}
inline void PrefetchBytes(const void* first, size_t bytes) { PrefetchLines<0>(first, bytes); }
inline void PrefetchBytesForWrite(const void* first, size_t bytes) {
  PrefetchLines<1>(first, bytes);
}

}  // namespace sstfilter
