// SPDX-License-Identifier: Apache-2.0
#include "sstfilter/inspect.h"

#include <rocksdb/convenience.h>
#include <rocksdb/metadata.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <cinttypes>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "compat/rocksdb_api.h"
#include "plugin/block_cache_fit.h"
#include "plugin/filter_formats.h"
#include "plugin/live_tables.h"
#include "plugin/policies.h"
#include "plugin/printf.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::Status;

bool SstFilterInfo::has_sstfilter_filter() const {
  return filter_bytes > 0 && policy_name.rfind("sstfilter.", 0) == 0;
}

Status DescribeFilters(ROCKSDB_NAMESPACE::DB* db,
                       const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>& handles,
                       std::vector<SstFilterInfo>* files) {
  files->clear();
  for (ROCKSDB_NAMESPACE::ColumnFamilyHandle* handle : handles) {
    std::vector<LiveTable> tables;
    const Status s = LiveTablesOf(db, handle, &tables);
    if (!s.ok()) return s;
    for (const LiveTable& t : tables) {
      SstFilterInfo info;
      info.column_family = t.meta.column_family_name;
      info.file = FileNameOf(t.meta.name);
      info.level = t.meta.level;
      info.policy_name = t.properties->filter_policy_name;
      info.filter_bytes = t.properties->filter_size;
      info.filter_entries = t.properties->num_filter_entries;
      info.num_entries = t.properties->num_entries;
      files->push_back(std::move(info));
    }
  }
  auto order = [](const SstFilterInfo& f) {
    return std::make_tuple(f.column_family != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName,
                           std::cref(f.column_family), f.level, std::cref(f.file));
  };
  std::sort(files->begin(), files->end(),
            [&](const SstFilterInfo& a, const SstFilterInfo& b) { return order(a) < order(b); });
  return Status::OK();
}

Status DescribeFilters(ROCKSDB_NAMESPACE::DB* db, std::vector<SstFilterInfo>* files) {
  return DescribeFilters(db, {db->DefaultColumnFamily()}, files);
}

namespace {

// Opens the database at db_path read-only with its own OPTIONS file, strictly (a policy that
// cannot be loaded is an error), and calls inspect(db, column families, their handles).
template <typename Inspect>
Status InspectOnDisk(const std::string& db_path, Inspect&& inspect) {
  const ROCKSDB_NAMESPACE::ConfigOptions strict = StrictConfigOptions();
  ROCKSDB_NAMESPACE::DBOptions db_options;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> cfs;
  // The directory first: RocksDB's file system reports one it may not list (EACCES) as NotFound
  // with no message, and LoadLatestOptions then as "no options files found".
  try {
    std::error_code ec;
    const std::filesystem::directory_iterator listed(db_path, ec);
    if (ec) {
      return Status::InvalidArgument("sstfilter: cannot read the directory " + db_path + ": " +
                                     ec.message());
    }
  } catch (const std::exception& e) {
    return Status::InvalidArgument("sstfilter: cannot read the directory " + db_path, e.what());
  }
  Status s = ROCKSDB_NAMESPACE::LoadLatestOptions(strict, db_path, &db_options, &cfs);
  if (s.IsNotFound()) {
    return Status::InvalidArgument(
        "sstfilter: " + db_path + " has no OPTIONS file (is it a RocksDB database?)", s.ToString());
  }
  if (!s.ok()) {
    return Status::InvalidArgument("sstfilter: cannot load the OPTIONS file of " + db_path +
                                       " (is a filter policy library missing?)",
                                   s.ToString());
  }
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*> handles;
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
  s = compat::OpenDbForReadOnly(db_options, db_path, cfs, &handles, &db);
  if (!s.ok()) return s;
  s = inspect(db.get(), cfs, handles);
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  return s;
}

}  // namespace

Status ReadFilterFormats(ROCKSDB_NAMESPACE::DB* db, std::vector<SstFilterInfo>* files,
                         const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>& handles) {
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  std::map<std::string, const ROCKSDB_NAMESPACE::LiveFileMetaData*> by_name;
  for (const auto& meta : live) by_name[FileNameOf(meta.name)] = &meta;
  // Each column family's options (its comparator), where its handle was given.
  std::map<std::string, ROCKSDB_NAMESPACE::Options> options;
  for (ROCKSDB_NAMESPACE::ColumnFamilyHandle* h : handles)
    options[h->GetName()] = db->GetOptions(h);
  const ROCKSDB_NAMESPACE::Options default_options = db->GetOptions();
  Status first_error;
  for (SstFilterInfo& f : *files) {
    const auto it = by_name.find(f.file);
    if (it == by_name.end() || f.filter_bytes == 0) continue;  // gone, or no filter to read
    const std::string path = it->second->db_path + "/" + f.file;
    const auto own = options.find(it->second->column_family_name);
    FileFilterFormat format;
    const Status s =
        ReadFileFilterFormat(path, own != options.end() ? own->second : default_options, &format);
    if (!s.ok()) {
      if (first_error.ok()) {
        first_error = Status::IOError("sstfilter: reading the filter of " + path, s.ToString());
      }
      continue;
    }
    f.filter_family = format.family;
    f.filter_format = format.format;
  }
  return first_error;
}

Status DescribeFilters(const std::string& db_path, std::vector<SstFilterInfo>* files) {
  return InspectOnDisk(db_path, [&](ROCKSDB_NAMESPACE::DB* db, const auto&, const auto& handles) {
    const Status s = DescribeFilters(db, handles, files);
    if (!s.ok()) return s;
    // A file whose filter cannot be read keeps an empty format: "(not read)" in the report.
    ReadFilterFormats(db, files, handles).PermitUncheckedError();
    return Status::OK();
  });
}

MemoryBudgetOption FilterMemoryBudget(const ROCKSDB_NAMESPACE::FilterPolicy& policy) {
  // By name (Customizable::CheckedCast): RocksDB builds without RTTI host sstfilter built in.
  const auto* leveled = policy.CheckedCast<LeveledPolicy>();
  if (leveled == nullptr) return {};
  return {leveled->GetMemoryBudget().bytes, leveled->GetMemoryBudget().cache_share};
}

Status DescribeFilterBudgets(const std::string& db_path, std::vector<FilterBudgetInfo>* budgets) {
  budgets->clear();
  return InspectOnDisk(
      db_path, [&](ROCKSDB_NAMESPACE::DB* db,
                   const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& cfs,
                   const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>& handles) {
        for (size_t i = 0; i < cfs.size() && i < handles.size(); ++i) {
          FilterBudgetInfo info;
          info.column_family = cfs[i].name;
          const auto* table = cfs[i].options.table_factory == nullptr
                                  ? nullptr
                                  : cfs[i]
                                        .options.table_factory
                                        ->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
          if (table != nullptr && table->filter_policy != nullptr) {
            info.policy = table->filter_policy->Name();
            info.budget = FilterMemoryBudget(*table->filter_policy);
          }
          ROCKSDB_NAMESPACE::TablePropertiesCollection props;
          const Status s = db->GetPropertiesOfAllTables(handles[i], &props);
          if (!s.ok()) return s;
          for (const auto& [path, p] : props) info.filter_bytes += p ? p->filter_size : 0;
          budgets->push_back(std::move(info));
        }
        return Status::OK();
      });
}

std::string FormatBudgetReport(const std::vector<FilterBudgetInfo>& budgets) {
  std::string out;
  std::string line;
  for (const FilterBudgetInfo& b : budgets) {
    if (b.budget.bytes > 0) {
      line = Printf("memory_budget of column family %s (%s): %" PRIu64
                    " bytes; its filters %" PRIu64 " bytes, %.3fx the budget\n",
                    b.column_family.c_str(), b.policy.c_str(), b.budget.bytes, b.filter_bytes,
                    static_cast<double>(b.filter_bytes) / static_cast<double>(b.budget.bytes));
    } else if (b.budget.cache_share > 0) {
      line = Printf(
          "memory_budget of column family %s (%s): %.15g%% of the block cache, whose capacity "
          "the OPTIONS file does not keep; its filters %" PRIu64 " bytes\n",
          b.column_family.c_str(), b.policy.c_str(), 100 * b.budget.cache_share, b.filter_bytes);
    } else {
      continue;
    }
    out += line;
  }
  return out;
}

namespace {

// What reads a file's filter, for the report: its format, and where the blocks carry the name
// "sstfilter", that name.
std::string FilterColumn(const SstFilterInfo& f) {
  if (f.filter_format.empty()) return f.filter_bytes > 0 ? "(not read)" : "(none)";
  if (f.filter_family == kSstFilterCompatibilityName) return f.filter_format + " [sstfilter]";
  return f.filter_format;
}

}  // namespace

std::string FormatFiltersByLevel(const std::vector<SstFilterInfo>& files) {
  struct Count {
    uint64_t files = 0, keys = 0;
  };
  // By column family (the default's first), then level.
  std::map<std::tuple<bool, std::string, int>, std::map<std::string, Count>> levels;
  Count old_name;
  for (const SstFilterInfo& f : files) {
    const bool other = f.column_family != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName;
    Count& c = levels[{other, other ? f.column_family : "", f.level}][FilterColumn(f)];
    ++c.files;
    c.keys += f.num_entries;
    if (f.filter_family == kSstFilterCompatibilityName) {
      ++old_name.files;
      old_name.keys += f.num_entries;
    }
  }
  std::string out;
  for (const auto& [where, by_filter] : levels) {
    const auto& [other, column_family, level] = where;
    out += (other ? "column family " + column_family + ", level " : std::string("level ")) +
           std::to_string(level) + ":";
    const char* sep = " ";
    for (const auto& [filter, c] : by_filter) {
      out += sep + filter + " " + std::to_string(c.files) +
             (c.files == 1 ? " file, " : " files, ") + std::to_string(c.keys) + " keys";
      sep = "; ";
    }
    out += "\n";
  }
  if (old_name.files > 0) {
    out += std::to_string(old_name.files) + " files (" + std::to_string(old_name.keys) +
           " keys) carry their filters under the name \"sstfilter\" [sstfilter]: only a policy "
           "with compatibility=sstfilter reads them; under compatibility=rocksdb (the default) "
           "they are unfiltered until compactions rewrite them\n";
  }
  return out;
}

namespace {

// A file as the report names it: "000012.sst", and "<column family>/000012.sst" outside the
// default column family.
std::string FileLabel(const SstFilterInfo& f) {
  return f.column_family == ROCKSDB_NAMESPACE::kDefaultColumnFamilyName
             ? f.file
             : f.column_family + "/" + f.file;
}

}  // namespace

std::string FormatFilterReport(const std::vector<SstFilterInfo>& files) {
  std::string out;
  std::string line;
  line = Printf("%-14s %5s %-22s %12s %12s %9s %s\n", "file", "level", "filter policy", "keys",
                "filter bytes", "bits/key", "filter");
  out += line;
  size_t without = 0;
  std::string missing;
  const SstFilterInfo* largest = nullptr;  // the largest filter block
  for (const SstFilterInfo& f : files) {
    if (largest == nullptr || f.filter_bytes > largest->filter_bytes) largest = &f;
    const double bits = f.filter_entries ? 8.0 * f.filter_bytes / f.filter_entries : 0;
    line = Printf("%-14s %5d %-22s %12" PRIu64 " %12" PRIu64 " %9.2f ", FileLabel(f).c_str(),
                  f.level, f.policy_name.empty() ? "(none)" : f.policy_name.c_str(), f.num_entries,
                  f.filter_bytes, bits);
    out += line + FilterColumn(f) + "\n";
    if (!f.has_sstfilter_filter()) {
      ++without;
      missing += (missing.empty() ? "" : ", ") + FileLabel(f);
    }
  }
  out += FormatFiltersByLevel(files);
  line = Printf("%zu SST files, %zu without an sstfilter filter", files.size(), without);
  out += line;
  out += without ? ": " + missing + "\n" : std::string("\n");
  if (largest != nullptr && largest->filter_bytes > 0) {
    // Whole filters in the block cache should stay within 1/kShardFraction of a cache shard
    // (plugin/block_cache_fit.h); the largest says whether any might not.
    line = Printf("largest filter: %" PRIu64
                  " KiB (%s, level %d); cached whole, a filter should be at most 1/%zu of a "
                  "block-cache shard\n",
                  (largest->filter_bytes + 1023) >> 10, FileLabel(*largest).c_str(), largest->level,
                  kShardFraction);
    out += line;
  }
  return out;
}

}  // namespace sstfilter
