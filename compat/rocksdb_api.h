// SPDX-License-Identifier: Apache-2.0
// The parts of RocksDB's public API that sstfilter uses and that moved between 7.8 and 11.8, in
// one place, so that no other file needs a version #if.
//
// - Opening a database: up to 10.x, DB::Open and DB::OpenForReadOnly return a DB** (10.x also
//   has std::unique_ptr<DB>* forms); 11.x has only the std::unique_ptr<DB>* forms.
// - Seeks that a prefix filter turned away: counted in BLOOM_FILTER_PREFIX_USEFUL up to 8.2, in
//   LAST_LEVEL_SEEK_FILTERED and NON_LAST_LEVEL_SEEK_FILTERED from 8.3.
// - From 10.7, RocksDB's headers need C++20 (defaulted comparison operators): the top-level
//   CMakeLists.txt raises the language standard for those versions, not this file.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>

#include <memory>
#include <string>
#include <vector>

#include "compat/rocksdb_version.h"

namespace sstfilter {
namespace compat {

// DB::Open(options, path, ...) into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDb(const ROCKSDB_NAMESPACE::Options& options,
                                        const std::string& path,
                                        std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::Open(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::Open(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::OpenForReadOnly(options, path, ...) into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDbForReadOnly(const ROCKSDB_NAMESPACE::Options& options,
                                                   const std::string& path,
                                                   std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::Open with column families into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDb(
    const ROCKSDB_NAMESPACE::DBOptions& options, const std::string& path,
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& column_families,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::Open(options, path, column_families, handles, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::DB::Open(options, path, column_families, handles, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::OpenForReadOnly with column families into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDbForReadOnly(
    const ROCKSDB_NAMESPACE::DBOptions& options, const std::string& path,
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& column_families,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, column_families, handles, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, column_families, handles, &raw);
  db->reset(raw);
  return s;
#endif
}

// Iterator seeks that a prefix filter turned away, from RocksDB's statistics.
inline uint64_t SeeksFilteredByPrefix(const ROCKSDB_NAMESPACE::Statistics& stats) {
#if SSTFILTER_ROCKSDB_VERSION >= 803
  return stats.getTickerCount(ROCKSDB_NAMESPACE::LAST_LEVEL_SEEK_FILTERED) +
         stats.getTickerCount(ROCKSDB_NAMESPACE::NON_LAST_LEVEL_SEEK_FILTERED);
#else
  return stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_PREFIX_USEFUL);
#endif
}

}  // namespace compat
}  // namespace sstfilter
