// SPDX-License-Identifier: Apache-2.0
#include "plugin/live_tables.h"

#include <map>

namespace sstfilter {

std::string FileNameOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

ROCKSDB_NAMESPACE::Status LiveTablesOf(ROCKSDB_NAMESPACE::DB* db,
                                       ROCKSDB_NAMESPACE::ColumnFamilyHandle* handle,
                                       std::vector<LiveTable>* tables) {
  tables->clear();
  // The properties first: a file compacted away between the two calls is not listed, and one
  // written between them is left out (no properties), never listed as a file with no filter.
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  const ROCKSDB_NAMESPACE::Status s = db->GetPropertiesOfAllTables(handle, &props);
  if (!s.ok()) return s;
  std::map<std::string, std::shared_ptr<const ROCKSDB_NAMESPACE::TableProperties>> by_name;
  for (auto& [path, p] : props) {
    if (p != nullptr) by_name[FileNameOf(path)] = std::move(p);
  }
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  const std::string name = handle->GetName();
  for (auto& f : live) {
    if (f.column_family_name != name) continue;
    const auto it = by_name.find(FileNameOf(f.name));
    if (it != by_name.end()) tables->push_back({std::move(f), it->second});
  }
  return ROCKSDB_NAMESPACE::Status::OK();
}

}  // namespace sstfilter
