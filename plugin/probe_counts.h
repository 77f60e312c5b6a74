// SPDX-License-Identifier: Apache-2.0
// Filter probes counted by sstfilter's own readers, so that the sstfilter.LeveledBudget listener
// learns how many probes each level of a tree really receives (plugin/leveled_budget.cc), where
// its key-range estimate assumes lookups drawn like the keys.
//
// Who counts. A filter that sstfilter.Leveled builds for a tree the listener watches gets a
// ProbeCell in the process-wide ProbeRegistry, under the id of its bytes (FilterBlockId: a hash of
// the block's first bytes and its trailer, which a reader computes from the bytes alone, so the
// byte format carries nothing new). A reader made for bytes that have a cell counts into it the
// probes it answers, sampled by the key's hash (SampledProbe: 1 in kProbeSampleRate). Readers of
// any other block (other policies, files written before the process started) have no cell and
// count nothing.
//
// Which file a cell belongs to. RocksDB tells listeners of a new table file (OnTableFileCreated)
// on the thread that finished its table builder, right after it (flush: BuildTable; compaction:
// FinishCompactionOutputFile; the same in 7.8 and 11.8). So each thread keeps the cells of the
// filters it finished since its last table file (NoteBuiltFilter), and the listener takes them
// there (TakeBuiltFilters), checking their bytes against the file's filter size.
//
// Cost per probe: with a cell, a test of bits the query's hash has anyway, and for 1 probe in
// kProbeSampleRate a load and a store to the cell (not a locked add: a count lost in a race
// between threads costs an estimate nothing, where a locked add on a line every reading thread
// shares would cost each of them). Measured in core_bench (sstfilter.blocked-counted:10 beside
// sstfilter.blocked:10; docs/benchmarks.md). Sampling by hash counts a key every time or never:
// unbiased over keys, noisier when a few keys take most lookups.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sstfilter {

// 1 in kProbeSampleRate probes counts: those whose hash's top kProbeSampleBits bits are 0.
inline constexpr int kProbeSampleBits = 5;
inline constexpr uint64_t kProbeSampleRate = uint64_t{1} << kProbeSampleBits;
inline bool SampledProbe(uint64_t key_hash) { return (key_hash >> (64 - kProbeSampleBits)) == 0; }

// The sampled probes of one filter block, shared by its readers. On a cache line of its own:
// readers of different blocks on different threads do not share a line.
class alignas(64) ProbeCell {
 public:
  void Add(uint64_t sampled) {
    count_.store(count_.load(std::memory_order_relaxed) + sampled, std::memory_order_relaxed);
  }
  uint64_t Sampled() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> count_{0};
};

// The id of a filter block: a hash of its first kIdBodyBytes bytes and its last 32 (the trailer,
// or a compact trailer and the body's end), or of all of it when shorter. Two blocks built from
// different keys share an id with probability 2^-64, but two built from the same keys with the same
// filter are the same bytes and share it (and their cell: a compaction that rewrites a file
// unchanged).
uint64_t FilterBlockId(const void* data, size_t size);

class ProbeRegistry {
 public:
  static ProbeRegistry& Global();
  // The cell for a block just built: the one of a live block with the same id, or a new one. The
  // registry holds cells weakly: a cell lives while a reader, the listener or the building
  // thread's list holds it. May throw std::bad_alloc.
  std::shared_ptr<ProbeCell> Register(uint64_t id);
  // The cell of a block, if one was registered and lives (for a new reader); null otherwise, at
  // once when nothing was ever registered. May throw std::bad_alloc.
  std::shared_ptr<ProbeCell> Find(uint64_t id);

 private:
  void PruneLocked();

  std::mutex mu_;
  std::atomic<bool> any_{false};
  std::unordered_map<uint64_t, std::weak_ptr<ProbeCell>> cells_;
  size_t prune_at_ = 1024;  // entries at which dead ones are dropped (then twice the live ones)
};

// A filter finished on this thread since its last table file was reported.
struct BuiltFilter {
  std::shared_ptr<ProbeCell> cell;
  uint64_t bytes = 0;
};
// Notes a filter this thread has finished. The list keeps at most kMaxBuiltPerThread (a
// partitioned filter of a very large file, or builds no table file followed): then it starts over,
// and that file's probes are not counted. May throw std::bad_alloc.
inline constexpr size_t kMaxBuiltPerThread = 1 << 16;
void NoteBuiltFilter(BuiltFilter filter);
// The filters this thread has finished since the last call (in the order built), for the table
// file RocksDB reports on it.
std::vector<BuiltFilter> TakeBuiltFilters();

}  // namespace sstfilter
