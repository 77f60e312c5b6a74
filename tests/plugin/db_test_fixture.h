// SPDX-License-Identifier: Apache-2.0
// The fixture of the tests that run sstfilter's policies in real databases on disk (db_test.cc,
// leveled_db_test.cc, leveled_budget_db_test.cc): a small leveled tree, writing and reading its
// keys, the files' filters, and the listener's accounts. More general helpers: db_fixture.h.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/options_util.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/filter_spec.h"
#include "core/format.h"
#include "core/level_allocation.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter::db_tests {

namespace fs = std::filesystem;
using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Statistics;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using testing::FilterCounts;
using testing::PolicyFrom;
using testing::SpecOf;
using testing::TableOptionsOf;

// 10 digits: PrefixFiltering's prefixes are the first 10 bytes, "key" and the top 7 digits.
inline std::string Key(uint64_t i) { return testing::NumberedKey(i, /*digits=*/10); }

// Present keys are the even numbers, absent keys the odd ones: absent keys fall inside every
// file's key range, so each lookup really consults the filters.
inline std::string PresentKey(uint64_t i) { return Key(2 * i); }
inline std::string AbsentKey(uint64_t i) { return Key(2 * i + 1); }
inline std::string ValueOf(const std::string& key) { return key + std::string(80, 'v'); }

// The name of the running test, fit for a file name (parameterised names contain '/').
inline std::string TestFileName() {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

class DbTest : public ::testing::Test {
 protected:
  // Options for a small leveled database that spreads 100k keys over several levels, its tables
  // built with `table` and the policy `filter_uri` names.
  Options MakeOptions(const std::string& filter_uri, const BlockBasedTableOptions& table = {}) {
    Options options = testing::OptionsFor(filter_uri, table);
    options.write_buffer_size = 1 << 20;
    options.target_file_size_base = 1 << 20;
    options.max_bytes_for_level_base = 2 << 20;
    options.level0_file_num_compaction_trigger = 8;  // L0 files stay until CompactAll
    return options;
  }

  void Open(const Options& options) {
    db_.reset();
    Status s;
    db_ = testing::OpenDb(options, dir_, &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    stats_ = options.statistics;
  }

  // Reopens from the newest OPTIONS file, strictly: a policy that cannot be loaded is an error
  // here, never a silent "no filter".
  Options ReopenFromOptionsFile() {
    db_.reset();
    DBOptions db_options;
    std::vector<ColumnFamilyDescriptor> cfs;
    const Status s =
        ROCKSDB_NAMESPACE::LoadLatestOptions(StrictConfigOptions(), dir_, &db_options, &cfs);
    EXPECT_TRUE(s.ok()) << s.ToString();
    Options options(db_options, cfs.at(0).options);
    options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
    Open(options);
    return options;
  }

  // Writes PresentKey(i) for each i of `order`, in that order and without the WAL, and flushes.
  void Write(const std::vector<uint64_t>& order) {
    WriteOptions w;
    w.disableWAL = true;
    for (const uint64_t i : order) {
      const std::string k = PresentKey(i);
      ASSERT_TRUE(db_->Put(w, k, ValueOf(k)).ok());
    }
    ASSERT_TRUE(db_->Flush({}).ok());
  }

  // The keys' indexes first, ..., first + count - 1, in order or shuffled by `shuffle_seed`.
  static std::vector<uint64_t> Indexes(uint64_t first, uint64_t count,
                                       std::optional<uint64_t> shuffle_seed = std::nullopt) {
    std::vector<uint64_t> order(count);
    std::iota(order.begin(), order.end(), first);
    if (shuffle_seed) std::shuffle(order.begin(), order.end(), std::mt19937_64(*shuffle_seed));
    return order;
  }

  void Load(uint64_t first, uint64_t count) { Write(Indexes(first, count)); }

  void CompactAll() { ASSERT_TRUE(db_->CompactRange({}, nullptr, nullptr).ok()); }

  // Every present key in [first, first + count) is found, by Get and by MultiGet.
  void ExpectAllPresent(uint64_t first, uint64_t count) {
    PinnableSlice value;
    for (uint64_t i = first; i < first + count; ++i) {
      const std::string k = PresentKey(i);
      const Status s = db_->Get(ReadOptions(), db_->DefaultColumnFamily(), k, &value);
      ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
      ASSERT_EQ(value.ToString(), ValueOf(k));
    }
    ForEachMultiGet(first, first + count, PresentKey,
                    [](const std::string& key, const Status& s, const PinnableSlice& value) {
                      ASSERT_TRUE(s.ok()) << key << " (MultiGet): " << s.ToString();
                      ASSERT_EQ(value.ToString(), ValueOf(key));
                    });
  }

  // MultiGet of key_of(i) for i in [begin, end), in batches of 32 as applications issue them;
  // check(key, status, value) for each.
  template <typename KeyOf, typename Check>
  void ForEachMultiGet(uint64_t begin, uint64_t end, KeyOf key_of, Check check) {
    constexpr size_t kBatch = 32;
    for (uint64_t start = begin; start < end; start += kBatch) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, end - start));
      std::vector<std::string> keys;
      for (size_t j = 0; j < n; ++j) keys.push_back(key_of(start + j));
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<PinnableSlice> values(n);
      std::vector<Status> statuses(n);
      db_->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), n, slices.data(), values.data(),
                    statuses.data());
      for (size_t j = 0; j < n; ++j) check(keys[j], statuses[j], values[j]);
    }
  }

  // Looks up `count` absent keys (half with Get, half with MultiGet) and returns what the
  // filters said, from RocksDB's statistics.
  FilterCounts LookUpAbsent(uint64_t count) {
    const FilterCounts before = Counts();
    PinnableSlice value;
    for (uint64_t i = 0; i < count / 2; ++i) {
      const Status s = db_->Get(ReadOptions(), db_->DefaultColumnFamily(), AbsentKey(i), &value);
      EXPECT_TRUE(s.IsNotFound()) << AbsentKey(i);
    }
    ForEachMultiGet(count / 2, count, AbsentKey,
                    [](const std::string& key, const Status& s, const PinnableSlice&) {
                      EXPECT_TRUE(s.IsNotFound()) << key;
                    });
    return Counts() - before;
  }

  FilterCounts Counts() const { return testing::FilterCountsOf(*stats_); }

  ROCKSDB_NAMESPACE::TablePropertiesCollection Tables() {
    ROCKSDB_NAMESPACE::TablePropertiesCollection props;
    EXPECT_TRUE(db_->GetPropertiesOfAllTables(&props).ok());
    return props;
  }

  // Each live file's level, filter and which levels' filter it is: the levels whose allocated
  // filter has the nominal size closest to the file's, within 10% (none: no level's). Several
  // levels can share one filter (levels 0 and 1 hold as many keys, so they get the same one).
  struct FileFilter {
    std::string name;
    int level = 0;
    uint64_t filter_bytes = 0, filter_entries = 0;
    std::vector<int> allocations;  // ascending
    bool budgets = false;          // the budget's filter (a tree of one level), within 10%

    bool Has(int l) const {
      return std::find(allocations.begin(), allocations.end(), l) != allocations.end();
    }
    int Shallowest() const { return allocations.empty() ? -1 : allocations.front(); }
  };
  // Each file against the allocation for its own key count (Leveled's choice of kind depends on
  // it), in a tree of num_levels levels.
  std::vector<FileFilter> FilesAgainst(const LeveledPolicy& policy, int num_levels) {
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    std::map<std::string, std::shared_ptr<const ROCKSDB_NAMESPACE::TableProperties>> props;
    for (const auto& [path, p] : Tables()) props[fs::path(path).filename().string()] = p;
    std::vector<FileFilter> out;
    for (const auto& f : files) {
      const auto& p = props.at(fs::path(f.name).filename().string());
      EXPECT_EQ(p->filter_policy_name, "sstfilter.Leveled");
      FileFilter ff;
      ff.name = f.name;
      ff.level = f.level;
      ff.filter_bytes = p->filter_size;
      ff.filter_entries = p->num_filter_entries;
      auto off_from = [&](const FilterChoice& c) {
        const double nominal = FilterBytes(c.spec, p->num_filter_entries).value();
        return (p->filter_size - nominal) / nominal;
      };
      const LevelFilter budgets = policy.Allocation(1, p->num_filter_entries).value()[0];
      for (const FilterChoice* c : {&budgets.base, &budgets.upper}) {
        if (c == &budgets.upper && budgets.upper_fraction == 0) continue;
        if (off_from(*c) >= 0 && off_from(*c) <= 0.1) ff.budgets = true;
      }
      const std::vector<LevelFilter> allocation =
          policy.Allocation(num_levels, p->num_filter_entries).value();
      double best = 0.1;
      for (size_t j = 0; j < allocation.size(); ++j) {
        // Either filter of a mixed level.
        for (const FilterChoice* c : {&allocation[j].base, &allocation[j].upper}) {
          if (c == &allocation[j].upper && allocation[j].upper_fraction == 0) continue;
          const double off = off_from(*c);
          if (off < 0 || off > best) continue;
          if (off < best) ff.allocations.clear();
          best = off;
          if (ff.allocations.empty() || ff.allocations.back() != static_cast<int>(j)) {
            ff.allocations.push_back(static_cast<int>(j));
          }
        }
      }
      out.push_back(ff);
    }
    return out;
  }

  // A 4-level tree of small files (memtables and SST files of file_bytes), which a few hundred
  // thousand keys spread over several levels.
  static void ShapeSmallTree(uint64_t level1_bytes, uint64_t file_bytes, Options* options) {
    options->num_levels = 4;
    options->max_bytes_for_level_base = level1_bytes;
    options->target_file_size_base = file_bytes;
    options->write_buffer_size = static_cast<size_t>(file_bytes);
    options->level0_file_num_compaction_trigger = 2;
    // Levels sized from level 1 down, as these tests count on (RocksDB's default from 8.4 sizes
    // them from the last level up, and flushed files then go straight to the deepest levels).
    options->level_compaction_dynamic_level_bytes = false;
  }

  // The listener's accounts of the default column family once they hold `keys` keys
  // (testing::AccountsHolding).
  bool AccountsHolding(uint64_t keys, TreeAccounts* accounts) {
    return testing::AccountsHolding(db_.get(), keys, accounts);
  }

  // The tree's filter bits per key with level 0 at its fullest lately, as sstfilter.Leveled
  // counts it: its files below level 0 as they are, and level 0's peak with the filter the
  // allocation at bits_per_key gives it (SteadyBitsPerKey, what the steering aims at).
  static double BitsPerKeyWithLevel0AtItsFullest(const TreeAccounts& accounts,
                                                 double bits_per_key) {
    const Result<std::vector<double>> steady = SteadyBitsPerKey(accounts, bits_per_key);
    EXPECT_TRUE(steady.ok()) << steady.error();
    if (!steady.ok() || accounts.levels.empty()) return 0;
    const double level0_keys =
        static_cast<double>(std::max(accounts.levels[0].keys, accounts.level0_peak.keys));
    double bits = level0_keys * steady.value()[0], keys = level0_keys;
    for (size_t i = 1; i < accounts.levels.size(); ++i) {
      bits += 8.0 * static_cast<double>(accounts.levels[i].filter_bytes);
      keys += static_cast<double>(accounts.levels[i].keys);
    }
    return bits / keys;
  }

  // Looks up key_of(group, j), which must be absent, for every second group from first_group
  // below 100 and every j_step-th j from first_j below 1000; returns how many.
  template <typename KeyOf>
  int LookUpAbsentKeys(uint64_t first_group, uint64_t first_j, uint64_t j_step, KeyOf&& key_of) {
    PinnableSlice value;
    int lookups = 0;
    for (uint64_t group = first_group; group < 100; group += 2) {
      for (uint64_t j = first_j; j < 1000; j += j_step, ++lookups) {
        EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), key_of(group, j), &value)
                        .IsNotFound());
      }
    }
    return lookups;
  }

  // The live files of the default column family on `level`.
  int FilesAtLevel(int level) {
    std::string files;
    db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &files);
    return std::stoi(files);
  }

  int PopulatedLevels() {
    int levels = 0;
    for (int level = 0; level < db_->NumberLevels(); ++level) levels += FilesAtLevel(level) > 0;
    return levels;
  }

  std::set<std::string> LiveFileNames() {
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    std::set<std::string> names;
    for (const auto& f : files) names.insert(f.name);
    return names;
  }

  // Declared before db_, so that the database closes before its directory is removed.
  const testing::TempDir temp_dir_{"db_test_" + TestFileName()};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<DB> db_;
  std::shared_ptr<Statistics> stats_;
};

class DbPolicyTest : public DbTest, public ::testing::WithParamInterface<const char*> {};

}  // namespace sstfilter::db_tests
