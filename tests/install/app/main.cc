// SPDX-License-Identifier: Apache-2.0
// A complete application using sstfilter only through RocksDB's API: it opens a database whose
// SST files get a cuckoo filter for a 0.1% false-positive rate, writes, flushes and reads. It never
// calls into libsstfilter.so: linking the library is what registers the policy.
//
//   example_app DB_DIR
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <cstdio>
#include <memory>
#include <string>

#include "../../open_db.h"  // OpenDb

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: example_app DB_DIR\n");
    return 2;
  }
  // Strict: an unknown policy name is an error here, not a database without filters.
  rocksdb::ConfigOptions config;
  config.ignore_unsupported_options = false;
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  rocksdb::Status s = rocksdb::FilterPolicy::CreateFromString(
      config, "{id=sstfilter.Cuckoo;fp_rate=0.001}", &policy);
  if (!s.ok()) {
    fprintf(stderr, "example_app: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  rocksdb::Options options;
  options.create_if_missing = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.statistics = rocksdb::CreateDBStatistics();

  std::unique_ptr<rocksdb::DB> db;
  s = OpenDb(options, argv[1], &db);
  if (!s.ok()) {
    fprintf(stderr, "example_app: %s\n", s.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < 10000; ++i) {
    db->Put(rocksdb::WriteOptions(), "user:" + std::to_string(2 * i), "profile");
  }
  db->Flush(rocksdb::FlushOptions());  // the SST file, with its filter

  std::string value;
  const bool found = db->Get(rocksdb::ReadOptions(), "user:42", &value).ok();
  int absent_found = 0;
  for (int i = 0; i < 1000; ++i) {
    absent_found +=
        db->Get(rocksdb::ReadOptions(), "user:" + std::to_string(2 * i + 1), &value).ok();
  }
  const uint64_t skipped = options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  printf("user:42 %s; %d of 1000 absent keys found; %llu reads skipped by the filter\n",
         found ? "found" : "MISSING", absent_found, static_cast<unsigned long long>(skipped));
  return found && absent_found == 0 && skipped > 990 ? 0 : 1;
}
