// SPDX-License-Identifier: Apache-2.0
// The test programs built apart from the project's CMake (tests/in_tree, tests/install/app) open
// their database with OpenDb, which works on every RocksDB version: 11.x opens into a
// std::unique_ptr only, earlier versions into a DB*. Header only; RocksDB's public API only.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/version.h>

#include <memory>
#include <string>

inline rocksdb::Status OpenDb(const rocksdb::Options& options, const std::string& path,
                              std::unique_ptr<rocksdb::DB>* db) {
#if ROCKSDB_MAJOR >= 11
  return rocksdb::DB::Open(options, path, db);
#else
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}
