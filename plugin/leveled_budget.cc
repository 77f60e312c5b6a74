// SPDX-License-Identifier: Apache-2.0
#include "sstfilter/leveled_budget.h"

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table_properties.h>

#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "plugin/leveled_budget.h"
#include "plugin/tree_history.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::TableProperties;

// What the ledger needs of a file.
struct FileFilter {
  uint64_t filter_entries = 0;
  uint64_t filter_bytes = 0;
};

FileFilter FilterOf(const TableProperties& p) { return {p.num_filter_entries, p.filter_size}; }

class LeveledBudget : public ROCKSDB_NAMESPACE::EventListener {
 public:
  const char* Name() const override { return kLeveledBudgetName; }

  // Every table RocksDB writes (flushes, compaction outputs): its filter, before the job's event.
  void OnTableFileCreated(const ROCKSDB_NAMESPACE::TableFileCreationInfo& info) override {
    Guard([&] {
      if (!info.status.ok()) return;
      std::lock_guard<std::mutex> lock(mu_);
      files_[info.db_name][info.file_path] = FilterOf(info.table_properties);
    });
  }
  void OnFlushCompleted(DB* db, const ROCKSDB_NAMESPACE::FlushJobInfo& info) override {
    Guard([&] {
      Remember(db, info.file_path, FilterOf(info.table_properties));
      Account(db, info.cf_name);
    });
  }
  // Also called for trivial moves, whose outputs are the inputs at another level.
  void OnCompactionCompleted(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard([&] {
      for (const auto& [path, props] : info.table_properties) {
        if (props != nullptr) Remember(db, path, FilterOf(*props));
      }
      Account(db, info.cf_name);
    });
  }
  void OnExternalFileIngested(DB* db,
                              const ROCKSDB_NAMESPACE::ExternalFileIngestionInfo& info) override {
    Guard([&] {
      Remember(db, info.internal_file_path, FilterOf(info.table_properties));
      Account(db, info.cf_name);
    });
  }

 private:
  // Nothing may throw into RocksDB: an event that cannot be accounted (out of memory) leaves the
  // tree's accounts as they were.
  template <typename F>
  static void Guard(F&& f) {
    try {
      f();
    } catch (const std::exception&) {
    }
  }

  void Remember(DB* db, const std::string& path, const FileFilter& f) {
    std::lock_guard<std::mutex> lock(mu_);
    files_[db->GetName()][path] = f;
  }

  // The live files of the column family, by level, published for the policies; files no longer
  // live are forgotten.
  void Account(DB* db, const std::string& cf_name) {
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
    db->GetLiveFilesMetaData(&live);
    TreeAccounts accounts;
    std::map<std::string, FileFilter> still_live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::map<std::string, FileFilter>& known = files_[db->GetName()];
      for (const auto& f : live) {
        const std::string path = f.directory + "/" + f.relative_filename;
        auto it = known.find(path);
        FileFilter filter;
        if (it != known.end()) {
          filter = it->second;
        } else if (!ReadFilter(path, &filter)) {
          filter = FileFilter{};  // unreadable: counted as a file without a filter
        }
        still_live[path] = filter;
        if (f.column_family_name != cf_name || f.level < 0) continue;
        if (accounts.size() <= static_cast<size_t>(f.level)) accounts.resize(f.level + 1);
        LevelAccount& level = accounts[f.level];
        level.keys += filter.filter_entries > 0 ? filter.filter_entries : f.num_entries;
        level.filter_bytes += filter.filter_bytes;
      }
      known.swap(still_live);
    }
    Ledger::Global().Publish({db->GetDBOptions().info_log.get(), cf_name}, std::move(accounts));
  }

  // A file this listener did not see created (it predates the listener): its table properties.
  static bool ReadFilter(const std::string& path, FileFilter* out) {
    ROCKSDB_NAMESPACE::SstFileReader reader{ROCKSDB_NAMESPACE::Options()};
    if (!reader.Open(path).ok()) return false;
    const std::shared_ptr<const TableProperties> props = reader.GetTableProperties();
    if (props == nullptr) return false;
    *out = FilterOf(*props);
    return true;
  }

  std::mutex mu_;
  // Per database (its name: its directory), each live file's filter by path.
  std::map<std::string, std::map<std::string, FileFilter>> files_;
};

}  // namespace

ROCKSDB_NAMESPACE::EventListener* NewLeveledBudget() { return new (std::nothrow) LeveledBudget(); }

std::shared_ptr<ROCKSDB_NAMESPACE::EventListener> NewLeveledBudgetListener() {
  return std::make_shared<LeveledBudget>();
}

}  // namespace sstfilter
