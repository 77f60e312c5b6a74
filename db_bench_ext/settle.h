// SPDX-License-Identifier: Apache-2.0
// Waiting until a database's background work has ended: no flush or compaction pending or
// running, in two polls in a row (a flush that ends may leave a compaction to schedule, and a
// compaction that ends may leave another pending for a moment). db_bench_ext settles its fills so;
// the tests and the upgrade tool, which read what compactions left, wait the same way.
#pragma once

#include <rocksdb/db.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace db_bench_ext {

// Polls `db` every `poll` until it has settled, every column family; nullptr then. Should the
// database not answer one of the properties polled, the property's name, at once. Summed over
// the column families: the pending ones are each column family's own, and a column family
// other than the default may have a compaction to schedule while the default has none.
inline const char* WaitUntilSettled(ROCKSDB_NAMESPACE::DB* db, std::chrono::microseconds poll) {
  static constexpr const char* kBusy[] = {
      "rocksdb.compaction-pending", "rocksdb.num-running-compactions",
      "rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes"};
  for (int quiet_polls = 0; quiet_polls < 2;) {
    uint64_t busy = 0;
    for (const char* property : kBusy) {
      uint64_t value = 0;
      if (!db->GetAggregatedIntProperty(property, &value)) return property;
      busy += value;
    }
    quiet_polls = busy == 0 ? quiet_polls + 1 : 0;
    std::this_thread::sleep_for(poll);
  }
  return nullptr;
}

}  // namespace db_bench_ext
