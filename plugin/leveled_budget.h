// SPDX-License-Identifier: Apache-2.0
// The sstfilter.LeveledBudget listener (include/sstfilter/leveled_budget.h), for the factory that
// RocksDB calls by name.
#pragma once

#include <rocksdb/listener.h>

namespace sstfilter {

// A new listener, owned by the caller; null when out of memory.
ROCKSDB_NAMESPACE::EventListener* NewLeveledBudget();

}  // namespace sstfilter
