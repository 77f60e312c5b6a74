// The batch size of every batched loop in core/ (queries and builds).
#pragma once

#include <cstddef>

namespace sstfilter {

// Keys whose cache lines are all prefetched before the first is used. A batch waits about one
// DRAM latency (~100 ns) for its first line and finds the rest arrived, so the cost per key falls
// as the batch grows; 32 is RocksDB's MultiGet batch, so a MultiGet's keys are one batch. With 16,
// a batch of 32 waited twice (core_bench, 20M keys, blocked Bloom 10 bits/key: 29.7 ns per
// batched miss against RocksDB's 23.5 ns, which prefetches all 32).
inline constexpr size_t kPrefetchBatch = 32;

}  // namespace sstfilter
