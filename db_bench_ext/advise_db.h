// SPDX-License-Identifier: Apache-2.0
// The database the advisor (advise.h) reads: opened read-only with its options, its live files and
// their keys, the absent keys its lookups replay, and which files' filters each lookup consults.
// Bad input Fail()s with one line on stderr.
#pragma once

#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db_bench_ext/flags.h"

namespace db_bench_ext {

// The database's logger while it is advised on: RocksDB would otherwise write a LOG file (and
// rename the last one) in the database's directory.
class NullLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  using ROCKSDB_NAMESPACE::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// The database, opened read-only: its default column family's options and table options.
struct Database {
  std::string path;
  std::shared_ptr<ROCKSDB_NAMESPACE::Logger> logger = std::make_shared<NullLogger>();
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*> handles;
  ROCKSDB_NAMESPACE::Options options;
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;

  ~Database() {
    for (ROCKSDB_NAMESPACE::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
  }
};

// Opens the database at `path` read-only (its latest OPTIONS file, loaded strictly), with its
// default column family's options.
void OpenReadOnly(const std::string& path, Database* d);

// A live SST file of the default column family.
struct File {
  std::string path;
  int level = 0;
  std::string smallest, largest;
  uint64_t entries = 0;  // the table property num_entries: tombstones included
};

// The default column family's live files.
std::vector<File> LiveFiles(ROCKSDB_NAMESPACE::DB* db);

// Calls f(key) for every key of the file a read sees (SstFileReader: tombstones are not shown).
template <typename F>
void ForEachKey(const File& file, const ROCKSDB_NAMESPACE::Options& options, F&& f) {
  ROCKSDB_NAMESPACE::SstFileReader reader(options);
  ROCKSDB_NAMESPACE::Status s = reader.Open(file.path);
  if (!s.ok()) Fail("cannot read " + file.path + ": " + s.ToString());
  ROCKSDB_NAMESPACE::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(reader.NewIterator(read));
  for (it->SeekToFirst(); it->Valid(); it->Next()) f(it->key());
  if (!it->status().ok()) Fail("cannot read " + file.path + ": " + it->status().ToString());
}

// Whether the database lacks `key` (Fail()s if the lookup fails).
bool IsAbsent(ROCKSDB_NAMESPACE::DB* db, const std::string& key);

// --absent_keys=FILE: a key per line, as its bytes (--absent_keys_hex: in hexadecimal); each must
// be absent from the database.
std::vector<std::string> ReadAbsentKeys(ROCKSDB_NAMESPACE::DB* db, const std::string& path);

// `count` absent keys made from a sample of the database's keys (reservoir sampling over every
// file): each sampled key with its last byte changed, or, after 8 tries, its last two, kept if the
// database does not hold it. `entries`: the files' entries in all, for the progress line.
// *total_keys: the keys the files hold.
std::vector<std::string> MakeAbsentKeys(const Database& d, const std::vector<File>& files,
                                        uint64_t entries, uint64_t count, uint64_t seed,
                                        uint64_t* total_keys);

// The files whose filters each absent key's lookup consults, as RocksDB's read path does: every
// level-0 file whose range holds the key, then on each level below the one file whose range holds
// it. By file, the keys (their indexes).
std::vector<std::vector<uint32_t>> KeysConsultingEachFile(const std::vector<File>& files,
                                                          const std::vector<std::string>& keys,
                                                          const ROCKSDB_NAMESPACE::Comparator* cmp);

}  // namespace db_bench_ext
