// SPDX-License-Identifier: Apache-2.0
// The sstfilter.LeveledBudget listener (include/sstfilter/leveled_budget.h), for the factory that
// RocksDB calls by name.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/listener.h>

#include <memory>
#include <string>

namespace sstfilter {

// A new listener, owned by the caller; null when out of memory.
ROCKSDB_NAMESPACE::EventListener* NewLeveledBudgetOrNull();

// The accounts of column family cf_name of `db`, as a listener that saw no event makes them,
// published under publish_as's logger tree (LoggerTree) instead of the database's: for a database
// no event reaches (a read-only one). May throw std::bad_alloc.
void PublishAccountsAs(ROCKSDB_NAMESPACE::DB* db, const std::string& cf_name,
                       const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& publish_as);

}  // namespace sstfilter
