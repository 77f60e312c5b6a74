// The batch size of every batched loop in core/ (queries and builds).
#pragma once

#include <cstddef>

namespace sstfilter {

// Keys whose cache lines are all prefetched before the first is used. A batch waits about one
// DRAM latency (~100 ns) for its first line and finds the rest arrived, so the cost per key falls
// as the batch grows; 32 is RocksDB's MultiGet batch, so that a MultiGet's keys are one batch, as
// in RocksDB's own filters (16 split it in two).
inline constexpr size_t kPrefetchBatch = 32;

}  // namespace sstfilter
