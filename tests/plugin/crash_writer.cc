// SPDX-License-Identifier: Apache-2.0
// The child of the crash test: writes keys START, START+1, ... into the database with synced
// writes of kKeysPerWrite keys each, forever, under the filter policy URI (sstfilter.Bloom:10 if
// none), and after each write returns prints the numbers of its keys on stdout. The parent kills
// it with SIGKILL at a random moment; every number printed was acknowledged by RocksDB. Small
// files and levels, so that a few seconds of writes flush, compact and, under a memory_budget,
// rewrite files for it (the sstfilter.LeveledBudget listener, on the compaction threads).
//
//   crash_writer DB_DIR START [URI]
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compat/rocksdb_api.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace {
// Keys per synced write: fewer syncs, so that each round writes enough to flush and compact.
constexpr unsigned long long kKeysPerWrite = 32;
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: crash_writer DB_DIR START [URI]\n");
    return 2;
  }
  const unsigned long long start = std::strtoull(argv[2], nullptr, 10);
  const char* uri = argc == 4 ? argv[3] : "sstfilter.Bloom:10";
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  rocksdb::Status s = sstfilter::NewFilterPolicy(uri, &policy);
  if (!s.ok()) {
    fprintf(stderr, "crash_writer: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;  // flush (and build filters) often
  options.target_file_size_base = 64 << 10;
  options.max_bytes_for_level_base = 256 << 10;
  options.level0_file_num_compaction_trigger = 2;
  if (sstfilter::NeedsLeveledBudgetListener(uri)) {
    options.listeners.push_back(sstfilter::NewLeveledBudgetListener());
  }
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::unique_ptr<rocksdb::DB> db;
  s = sstfilter::compat::OpenDb(options, argv[1], &db);
  if (!s.ok()) {
    fprintf(stderr, "crash_writer: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb::WriteOptions synced;
  synced.sync = true;
  const std::string value(200, 'v');
  for (unsigned long long first = start;; first += kKeysPerWrite) {
    rocksdb::WriteBatch batch;
    for (unsigned long long i = first; i < first + kKeysPerWrite; ++i) {
      s = batch.Put(sstfilter::testing::NumberedKey(i, sstfilter::testing::kCrashWriterKeyDigits),
                    value);
      if (!s.ok()) break;
    }
    if (s.ok()) s = db->Write(synced, &batch);
    if (!s.ok()) {
      fprintf(stderr, "crash_writer: %s\n", s.ToString().c_str());
      return 1;
    }
    std::string lines;
    for (unsigned long long i = first; i < first + kKeysPerWrite; ++i) {
      lines += std::to_string(i) + "\n";
    }
    // Unbuffered: printed means acknowledged.
    if (write(STDOUT_FILENO, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) {
      return 1;
    }
  }
}
