// SPDX-License-Identifier: Apache-2.0
// The child of the crash test: writes keys START, START+1, ... into the database with synced
// writes, forever, and after each write returns prints its number on stdout. The parent kills it
// with SIGKILL at a random moment; every number printed was acknowledged by RocksDB.
//
//   crash_writer DB_DIR START
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compat/rocksdb_api.h"
#include "sstfilter/sstfilter.h"
#include "tests/test_util.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: crash_writer DB_DIR START\n");
    return 2;
  }
  const unsigned long long start = std::strtoull(argv[2], nullptr, 10);
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  rocksdb::Status s = sstfilter::NewFilterPolicy("sstfilter.Bloom:10", &policy);
  if (!s.ok()) {
    fprintf(stderr, "crash_writer: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;  // flush (and build filters) often
  options.level0_file_num_compaction_trigger = 2;
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
  for (unsigned long long i = start;; ++i) {
    const std::string key =
        sstfilter::testing::NumberedKey(i, sstfilter::testing::kCrashWriterKeyDigits);
    s = db->Put(synced, key, value);
    if (!s.ok()) {
      fprintf(stderr, "crash_writer: %s\n", s.ToString().c_str());
      return 1;
    }
    char line[32];
    const int n = snprintf(line, sizeof(line), "%llu\n", i);
    if (write(STDOUT_FILENO, line, n) != n) return 1;  // unbuffered: printed means acknowledged
  }
}
