// The batch size of every batched loop in core/ (queries and builds).
#pragma once

#include <cstddef>

namespace sstfilter {

// Keys processed between prefetching their cache lines and using them: enough to overlap a DRAM
// miss (~100 ns) with the work of the other keys, small enough for the addresses to stay in
// registers and L1.
inline constexpr size_t kPrefetchBatch = 16;

}  // namespace sstfilter
