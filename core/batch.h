// SPDX-License-Identifier: Apache-2.0
// Batched loops in core/ (queries and builds): their size, who prefetches, and what.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sstfilter {

// Keys whose cache lines are all prefetched before the first is used. A batch waits about one
// DRAM latency (~100 ns) for its first line and finds the rest arrived, so the cost per key falls
// as the batch grows; 32 is RocksDB's MultiGet batch, so that a MultiGet's keys are one batch, as
// in RocksDB's own filters (16 split it in two).
inline constexpr size_t kPrefetchBatch = 32;

// Who starts the loads of a batched query (Reader::MayContainBatch): the batch itself, in a pass
// over its keys before it tests them, or its caller, who called Reader::Prefetch for each key as
// soon as it was hashed (plugin/bits_readers.cc), so that the loads overlap the hashing. A
// second pass would repeat the prefetches and their address arithmetic for nothing. Prefetching
// while hashing is the faster of the two: the loads overlap the hashing instead of waiting
// after it (core_bench's sstfilter.blocked-late-prefetch:10 is the batch's own pass alone;
// measured in docs/history.md).
enum class BatchPrefetch { kInBatch, kByCaller };

// The two passes of a batched query, kPrefetchBatch keys at a time: prepare(i, k) for key i of
// the batch, which is slot k of the caller's per-batch arrays (where the key lives, and the
// start of its loads), then may_match[i] = test(k) for each.
template <typename Prepare, typename Test>
inline void QueryInBatches(size_t count, bool* may_match, Prepare&& prepare, Test&& test) {
  for (size_t first = 0; first < count; first += kPrefetchBatch) {
    const size_t n = count - first < kPrefetchBatch ? count - first : kPrefetchBatch;
    for (size_t k = 0; k < n; ++k) prepare(first + k, k);
    for (size_t k = 0; k < n; ++k) may_match[first + k] = test(k);
  }
}

// A Ribbon query computes the parity of a word per fingerprint bit: about 10 instructions on
// baseline x86-64 (fold to a byte, read the parity flag), 2 with popcnt. So on x86-64 built for
// the baseline (SSTFILTER_POPCNT_DISPATCH) the Ribbon kinds' queries have a second copy, run only
// where CpuHasPopcnt(): a function marked SSTFILTER_TARGET_POPCNT is compiled with popcnt and has
// every call it can see inlined into it (flatten), so the parities land in that copy. Two places
// choose: the batches here (PopcntDispatch), the plugin's readers when a block is opened
// (plugin/bits_readers.cc). Elsewhere (other ISAs, or a build for a CPU with popcnt) there is one
// copy.
#if defined(__x86_64__) && !defined(__POPCNT__)
#define SSTFILTER_POPCNT_DISPATCH 1
#define SSTFILTER_TARGET_POPCNT __attribute__((target("popcnt"), flatten))
inline bool CpuHasPopcnt() { return __builtin_cpu_supports("popcnt"); }
#else
#define SSTFILTER_POPCNT_DISPATCH 0
#define SSTFILTER_TARGET_POPCNT
#endif

// Whether a reader's queries have a popcnt copy: a reader whose MayContainBatch goes through
// PopcntDispatch declares `static constexpr bool kHasPopcntCopy = true;` (Batch asserts it), and
// the plugin gives the single queries of exactly those readers their copy too.
template <typename Reader, typename = void>
inline constexpr bool kHasPopcntCopy = false;
template <typename Reader>
inline constexpr bool kHasPopcntCopy<Reader, std::void_t<decltype(Reader::kHasPopcntCopy)>> =
    Reader::kHasPopcntCopy;

// A Ribbon kind's MayContainBatch, in its popcnt copy where the CPU has popcnt, chosen per batch.
// Where the caller prefetched, each key is tested as MayContain tests it: nothing to carry from a
// pass over the batch to the tests. Otherwise reader.BatchWithOwnPrefetch(hashes, count,
// may_match) makes that pass first. The reader makes this a friend and defines
// BatchWithOwnPrefetch in the file that calls Batch, so that the popcnt copy can inline it.
struct PopcntDispatch {
  template <typename Reader>
  static void Batch(const Reader& reader, const uint64_t* hashes, size_t count, bool* may_match,
                    BatchPrefetch prefetch) {
    static_assert(kHasPopcntCopy<Reader>, "a reader batched here declares kHasPopcntCopy");
#if SSTFILTER_POPCNT_DISPATCH
    if (CpuHasPopcnt()) return WithPopcnt(reader, hashes, count, may_match, prefetch);
#endif
    Run(reader, hashes, count, may_match, prefetch);
  }

  // The copy Batch runs where the CPU lacks popcnt, in a build for baseline x86-64: public so
  // that tests run it on CPUs that have popcnt, where Batch never does.
  template <typename Reader>
  static void WithoutPopcnt(const Reader& reader, const uint64_t* hashes, size_t count,
                            bool* may_match, BatchPrefetch prefetch) {
    Run(reader, hashes, count, may_match, prefetch);
  }

 private:
  template <typename Reader>
  static void Run(const Reader& reader, const uint64_t* hashes, size_t count, bool* may_match,
                  BatchPrefetch prefetch) {
    if (prefetch == BatchPrefetch::kByCaller) {
      for (size_t i = 0; i < count; ++i) may_match[i] = reader.MayContain(hashes[i]);
      return;
    }
    reader.BatchWithOwnPrefetch(hashes, count, may_match);
  }
#if SSTFILTER_POPCNT_DISPATCH
  template <typename Reader>
  SSTFILTER_TARGET_POPCNT static void WithPopcnt(const Reader& reader, const uint64_t* hashes,
                                                 size_t count, bool* may_match,
                                                 BatchPrefetch prefetch) {
    Run(reader, hashes, count, may_match, prefetch);
  }
#endif
};

// Starts loading every cache line of [first, first + bytes) (bytes >= 1), to read, or to write
// (PrefetchBytesForWrite). Every prefetch of a filter body that a caller placed goes through
// these, because the body sits wherever RocksDB's block cache (or malloc) put it, not on a
// 64-byte boundary: a 64-byte Bloom block then spans two cache lines, and so do 7 in 64 of the
// 8-byte loads of a packed field.
// Prefetching only the first line leaves the second to a demand miss inside the query loop, which
// serialises the batch (docs/history.md).
template <int kForWrite>
inline void PrefetchLines(const void* first, size_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(first);
  for (size_t offset = 0; offset + 1 < bytes; offset += 64)
    __builtin_prefetch(p + offset, kForWrite);
  __builtin_prefetch(p + bytes - 1, kForWrite);
  // Seen with GCC 12.2 at -O2 and -O3: a helper that only prefetched, not inlined early, was
  // found "looping pure" by the local-pure-const pass (-fdump-tree-all), and the calls to it
  // were deleted: CuckooReader::Prefetch and the cuckoo batch lost every prefetch. An empty
  // volatile asm has an effect, so they stay; it emits nothing.
  asm volatile("");
}
inline void PrefetchBytes(const void* first, size_t bytes) { PrefetchLines<0>(first, bytes); }
inline void PrefetchBytesForWrite(const void* first, size_t bytes) {
  PrefetchLines<1>(first, bytes);
}

}  // namespace sstfilter
