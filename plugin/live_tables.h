// SPDX-License-Identifier: Apache-2.0
// The live SST files of a column family joined with their table properties, by file name: what
// both the memory budget's rewrites (plugin/budget_rewrites.h) and the inspection of a database's
// filters (include/sstfilter/inspect.h) read. LiveFileMetaData names a file "/000012.sst" (with
// its directory apart); table properties are keyed by the full path.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/status.h>
#include <rocksdb/table_properties.h>

#include <memory>
#include <string>
#include <vector>

namespace sstfilter {

// A file's name without its directory ("000012.sst").
std::string FileNameOf(const std::string& path);

struct LiveTable {
  ROCKSDB_NAMESPACE::LiveFileMetaData meta;
  std::shared_ptr<const ROCKSDB_NAMESPACE::TableProperties> properties;  // never null
};

// The live files of the column family of `handle` (DB::GetLiveFilesMetaData) with their table
// properties (DB::GetPropertiesOfAllTables), in `tables`; a file whose properties RocksDB did not
// give is left out. RocksDB's error if it could not give the properties at all (then `tables`
// is empty: not that no file is live). May throw std::bad_alloc.
ROCKSDB_NAMESPACE::Status LiveTablesOf(ROCKSDB_NAMESPACE::DB* db,
                                       ROCKSDB_NAMESPACE::ColumnFamilyHandle* handle,
                                       std::vector<LiveTable>* tables);

}  // namespace sstfilter
