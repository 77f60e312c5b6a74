// SPDX-License-Identifier: Apache-2.0
// Waiting until a database's background work has ended: no flush or compaction pending or
// running, in two polls in a row (a flush that ends may leave a compaction to schedule, and a
// compaction that ends may leave another pending for a moment). db_bench_ext settles its fills so;
// the tests and the upgrade tool, which read what compactions left, wait the same way.
#pragma once

#include <rocksdb/db.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <string>
#include <thread>

namespace db_bench_ext {

// Universal compaction may report a compaction pending that its picker then finds nothing to do
// for ("Compaction nothing to do" in its LOG: RocksDB 7.8 with as many sorted runs as its trigger),
// and keep reporting it until the next flush. A database whose default column family compacts so
// has settled once that is all it reports for kStuckFor (summed over the column families, as
// below: db_bench_ext's databases have one).
inline constexpr std::chrono::milliseconds kStuckFor{200};

// Polls `db` every `poll` until it has settled, every column family, and returns "" then; or why
// it could not tell: a property the database does not answer (at once), or background work still
// pending or running after `give_up_after` (a caller reports it instead of waiting for ever).
// Summed over the column families: the pending ones are each column family's own, and a column
// family other than the default may have a compaction to schedule while the default has none.
inline std::string WaitUntilSettled(ROCKSDB_NAMESPACE::DB* db, std::chrono::microseconds poll,
                                    std::chrono::seconds give_up_after) {
  static constexpr const char* kBusy[] = {
      "rocksdb.compaction-pending", "rocksdb.num-running-compactions",
      "rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes"};
  const bool universal =
      db->GetOptions().compaction_style == ROCKSDB_NAMESPACE::kCompactionStyleUniversal;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + give_up_after;
  Clock::time_point stuck_since{};  // a compaction pending and nothing else since (universal)
  for (int quiet_polls = 0; quiet_polls < 2;) {
    uint64_t busy[std::size(kBusy)] = {};
    for (size_t i = 0; i < std::size(kBusy); ++i) {
      if (!db->GetAggregatedIntProperty(kBusy[i], &busy[i])) {
        return std::string("the database does not answer ") + kBusy[i];
      }
    }
    const bool only_pending = busy[0] > 0 && busy[1] + busy[2] + busy[3] == 0;
    if (!universal || !only_pending) {
      stuck_since = {};
    } else if (stuck_since == Clock::time_point{}) {
      stuck_since = Clock::now();
    } else if (Clock::now() - stuck_since >= kStuckFor) {
      return "";
    }
    const bool quiet = busy[0] + busy[1] + busy[2] + busy[3] == 0;
    if (!quiet && Clock::now() >= deadline) {
      std::string why = "not settled after " + std::to_string(give_up_after.count()) + " s:";
      for (size_t i = 0; i < std::size(kBusy); ++i) {
        why += std::string(" ") + kBusy[i] + "=" + std::to_string(busy[i]);
      }
      return why;
    }
    quiet_polls = quiet ? quiet_polls + 1 : 0;
    std::this_thread::sleep_for(poll);
  }
  return "";
}

}  // namespace db_bench_ext
