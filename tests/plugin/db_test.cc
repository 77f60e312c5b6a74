// SPDX-License-Identifier: Apache-2.0
// sstfilter policies in real RocksDB databases on disk: load, flush, compact across levels,
// reopen from the OPTIONS file, and check through RocksDB's own statistics and table properties
// that the filters RocksDB built and consulted are sstfilter's, lose no key, and reject absent keys
// at the rate the math predicts.
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
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

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
std::string Key(uint64_t i) { return testing::NumberedKey(i, /*digits=*/10); }

// Present keys are the even numbers, absent keys the odd ones: absent keys fall inside every
// file's key range, so each lookup really consults the filters.
std::string PresentKey(uint64_t i) { return Key(2 * i); }
std::string AbsentKey(uint64_t i) { return Key(2 * i + 1); }
std::string ValueOf(const std::string& key) { return key + std::string(80, 'v'); }

// The name of the running test, fit for a file name (parameterised names contain '/').
std::string TestFileName() {
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

  // The listener's accounts of the default column family once they hold `keys` keys (bounded:
  // false after 10 s). DB::Flush returns once the flush is installed, and may return before the
  // listener's OnFlushCompleted has published the tree with it (a test once read 149,937 of
  // 150,000 keys under load).
  bool AccountsHolding(uint64_t keys, TreeAccounts* accounts) {
    const TreeId tree = testing::TreeOfDb(db_.get());
    for (int wait = 0; wait < 500; ++wait) {
      uint64_t total = 0;
      if (Ledger::Global().Get(tree, accounts)) {
        for (const LevelAccount& a : accounts->levels) total += a.keys + a.pending_keys;
      }
      if (total == keys) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
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

  int PopulatedLevels() {
    int levels = 0;
    for (int level = 0; level < db_->NumberLevels(); ++level) {
      std::string files;
      db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &files);
      levels += std::stoi(files) > 0;
    }
    return levels;
  }

  // Declared before db_, so that the database closes before its directory is removed.
  const testing::TempDir temp_dir_{"db_test_" + TestFileName()};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<DB> db_;
  std::shared_ptr<Statistics> stats_;
};

class DbPolicyTest : public DbTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(DbPolicyTest, LoadCompactReopenAndFilter) {
  constexpr uint64_t kKeys = 100'000;
  constexpr uint64_t kAbsent = 100'000;
  Open(MakeOptions(GetParam()));
  for (uint64_t part = 0; part < 4; ++part) Load(part * kKeys / 4, kKeys / 4);
  CompactAll();
  // Updates of every 10th key: a newer file over the whole key range, so that absent-key lookups
  // consult filters on more than one level. And a file of new keys beyond the range.
  {
    WriteOptions w;
    for (uint64_t i = 0; i < kKeys; i += 10) {
      ASSERT_TRUE(db_->Put(w, PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(db_->Flush({}).ok());
  }
  Load(kKeys, 5000);
  EXPECT_GE(PopulatedLevels(), 2);

  const Options reopened = ReopenFromOptionsFile();
  const auto* table = TableOptionsOf(reopened);
  ASSERT_NE(table->filter_policy, nullptr) << "the OPTIONS file lost the filter policy";
  const auto expected_policy = PolicyFrom(GetParam());
  EXPECT_STREQ(table->filter_policy->Name(), expected_policy->Name());
  const FilterSpec spec = SpecOf(*expected_policy);
  EXPECT_EQ(SpecOf(*table->filter_policy).ToString(), spec.ToString());

  ExpectAllPresent(0, kKeys + 5000);

  // Every file's filter is sstfilter's, of exactly the size its builder computes.
  std::map<std::string, uint64_t> keys_of_file;  // file name ("000012.sst") -> filter entries
  for (const auto& [path, props] : Tables()) {
    EXPECT_EQ(props->filter_policy_name, expected_policy->Name()) << path;
    const uint64_t n = props->num_filter_entries;
    ASSERT_GT(n, 0u) << path;
    const uint64_t nominal = FilterBytes(spec, n).value();
    if (spec.kind() == Cuckoo::kId) {
      EXPECT_GE(props->filter_size, nominal) << path;  // a retry may add buckets
      EXPECT_LE(props->filter_size, nominal * 1.1) << path;
    } else {
      EXPECT_EQ(props->filter_size, nominal) << path;
    }
    keys_of_file[fs::path(path).filename().string()] = n;
  }

  // Absent keys: every "may match" is a false positive. A lookup consults the filter of each file
  // whose key range holds the key, so the false positives to expect are the sum over files of
  // (absent keys in the file's range) x (the file's estimated rate). Bound: 5 binomial sigmas.
  double expected_positives = 0;
  uint64_t expected_checks = 0;
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  for (const auto& f : files) {
    const uint64_t n = keys_of_file.at(fs::path(f.name).filename().string());
    // Absent key i is Key(2i + 1): count the i with smallest <= Key(2i + 1) <= largest.
    const uint64_t lo = std::stoull(f.smallestkey.substr(3)),
                   hi = std::stoull(f.largestkey.substr(3));
    const uint64_t first = lo / 2, last = std::min<uint64_t>(kAbsent, (hi + 1) / 2);
    const uint64_t in_range = last > first ? last - first : 0;
    expected_checks += in_range;
    expected_positives += in_range * EstimatedFpRate(spec, n).value();
  }
  const FilterCounts counts = LookUpAbsent(kAbsent);
  EXPECT_EQ(counts.true_positives, 0u);
  EXPECT_EQ(counts.checks(), expected_checks);
  EXPECT_GT(counts.checks(), kAbsent * 3 / 2);  // most lookups consult two levels or more
  const double expected_rate = expected_positives / expected_checks;
  const double measured = static_cast<double>(counts.positives) / counts.checks();
  EXPECT_NEAR(static_cast<double>(counts.positives), expected_positives,
              testing::BinomialTolerance(counts.checks(), expected_rate))
      << GetParam() << ": measured " << measured << " over " << counts.checks()
      << " filter checks, estimate " << expected_rate;
  printf(
      "[ figures  ] %s: %llu filter checks, false-positive rate %.4f%% (estimate %.4f%%), "
      "%.2f filter bits/key\n",
      GetParam(), static_cast<unsigned long long>(counts.checks()), 100 * measured,
      100 * expected_rate, [&] {
        uint64_t bytes = 0, n = 0;
        for (const auto& [file, props] : Tables()) {
          bytes += props->filter_size;
          n += props->num_filter_entries;
        }
        return 8.0 * bytes / n;
      }());
}

TEST_P(DbPolicyTest, OptionsFileNamesThePolicyWithItsOptions) {
  Open(MakeOptions(GetParam()));
  Load(0, 1000);
  db_.reset();
  std::string newest;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("OPTIONS-", 0) == 0 && name > newest) newest = name;
  }
  ASSERT_FALSE(newest.empty());
  const std::string text = testing::ReadFile(dir_ + "/" + newest);
  const std::string expected_id =
      std::string("filter_policy={id=") + PolicyFrom(GetParam())->Name() + ";";
  EXPECT_NE(text.find(expected_id), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Policies, DbPolicyTest,
                         // One filter spec for every file: sstfilter.Leveled's filters per level
                         // have tests of their own.
                         ::testing::ValuesIn(testing::EveryPolicyExcept(
                             kLeveledPolicyName,
                             {"sstfilter.Cuckoo:12", "sstfilter.Fuse:10",
                              "{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.Ribbon:10",
                              "{id=sstfilter.Ribbon;fp_rate=0.001}"})));

TEST_F(DbTest, ChangingThePolicyKeepsOldFiltersWorking) {
  // Every sstfilter policy in turn, each writing one file of its own: the files written under the
  // earlier ones keep filtering, whichever policy is configured now. All rates are at most 1%.
  std::vector<std::pair<std::string, std::string>> policies;
  for (const char* uri : testing::EveryPolicy()) {
    policies.emplace_back(uri, PolicyFrom(uri)->Name());
  }
  constexpr uint64_t kKeysPerFile = 10'000;
  std::set<std::string> written_by;
  for (size_t i = 0; i < policies.size(); ++i) {
    SCOPED_TRACE(policies[i].first);
    Open(MakeOptions(policies[i].first));
    const uint64_t old_keys = i * kKeysPerFile;
    if (old_keys > 0) {
      const FilterCounts old_files = LookUpAbsent(old_keys);
      EXPECT_GT(old_files.negatives, old_keys * 0.95);
    }
    Load(old_keys, kKeysPerFile);  // a new file, with this policy's filter
    written_by.insert(policies[i].second);
    std::set<std::string> names;
    for (const auto& [file, props] : Tables()) names.insert(props->filter_policy_name);
    EXPECT_EQ(names, written_by);
    ExpectAllPresent(0, old_keys + kKeysPerFile);
  }
  // Each absent key lies in at most one file's key range (at most two per file fall between or
  // after the files): one check each, by the filter of whichever policy wrote that file.
  const uint64_t all_keys = policies.size() * kKeysPerFile;
  const FilterCounts every_file = LookUpAbsent(all_keys);
  EXPECT_LE(every_file.checks(), all_keys);
  EXPECT_GE(every_file.checks(), all_keys - 2 * policies.size());
  EXPECT_GT(every_file.negatives, all_keys * 0.98);
  CompactAll();
  ExpectAllPresent(0, all_keys);
}

TEST_F(DbTest, OpeningWithoutAFilterPolicyReadsEveryKey) {
  Open(MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}"));
  Load(0, 30'000);
  CompactAll();
  Open(MakeOptions(""));  // no filter policy at all
  ExpectAllPresent(0, 30'000);
  const FilterCounts counts = LookUpAbsent(10'000);
  EXPECT_EQ(counts.checks(), 0u);
  // And RocksDB's own Bloom filter family cannot read sstfilter's filters: not used, no harm.
  Open(MakeOptions("bloomfilter:10"));
  ExpectAllPresent(0, 30'000);
  EXPECT_EQ(LookUpAbsent(10'000).checks(), 0u);
}

TEST_F(DbTest, PrefixFiltering) {
  // Prefix: the first 10 bytes of Key(i) ("key" and 7 digits), so a prefix holds 1000 numbers.
  // Even groups of 1000 hold keys, odd groups none, so absent prefixes lie inside the file's range.
  BlockBasedTableOptions table;
  table.whole_key_filtering = false;
  Options options = MakeOptions("sstfilter.Bloom:10", table);
  options.prefix_extractor.reset(ROCKSDB_NAMESPACE::NewFixedPrefixTransform(10));
  Open(options);
  auto in_group = [](uint64_t group, uint64_t j) { return Key(group * 1000 + j); };
  WriteOptions w;
  for (uint64_t group = 0; group < 100; group += 2) {
    for (uint64_t j = 0; j < 1000; ++j) ASSERT_TRUE(db_->Put(w, in_group(group, j), "v").ok());
  }
  ASSERT_TRUE(db_->Flush({}).ok());
  PinnableSlice value;
  for (uint64_t group = 0; group < 100; group += 2) {
    for (uint64_t j = 0; j < 1000; j += 7) {
      ASSERT_TRUE(
          db_->Get(ReadOptions(), db_->DefaultColumnFamily(), in_group(group, j), &value).ok());
    }
  }
  const FilterCounts before = Counts();
  int lookups = 0;
  for (uint64_t group = 1; group < 100; group += 2) {
    for (uint64_t j = 0; j < 1000; j += 25, ++lookups) {
      EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), in_group(group, j), &value)
                      .IsNotFound());
    }
  }
  const FilterCounts during = Counts() - before;
  const uint64_t useful = during.prefix_negatives + during.negatives;
  // 50 absent prefixes among 50 present ones at 10 bits per prefix: at most a few get through.
  EXPECT_GT(useful, lookups * 0.9) << useful << " of " << lookups;
  // Prefix iteration finds every key of a prefix.
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(ro));
  int found = 0;
  for (it->Seek(in_group(12, 0)); it->Valid(); it->Next()) ++found;
  EXPECT_EQ(found, 1000);
}

// A prefix extractor with whole-key filtering: each file's filter holds its keys and their
// prefixes (RocksDB 9.6 and later add both in one AddKeyAndAlt call, earlier versions call AddKey
// twice), and answers both kinds of query.
TEST_F(DbTest, PrefixAndWholeKeyFiltering) {
  for (const char* uri : testing::EveryPolicy()) {
    SCOPED_TRACE(uri);
    // Prefix: "key" and 7 digits, so a prefix spans 1000 numbers. Even groups hold their even
    // numbers; odd groups hold nothing.
    BlockBasedTableOptions table;
    table.whole_key_filtering = true;
    Options options = MakeOptions(uri, table);
    options.prefix_extractor.reset(ROCKSDB_NAMESPACE::NewFixedPrefixTransform(10));
    Open(options);
    auto number = [](uint64_t group, uint64_t j) { return Key(group * 1000 + j); };
    for (uint64_t group = 0; group < 100; group += 2) {
      for (uint64_t j = 0; j < 1000; j += 2) {
        ASSERT_TRUE(db_->Put(WriteOptions(), number(group, j), "v").ok());
      }
    }
    ASSERT_TRUE(db_->Flush({}).ok());
    const auto tables = Tables();
    ASSERT_EQ(tables.size(), 1u);
    EXPECT_EQ(tables.begin()->second->num_filter_entries, 50u * 500 + 50);  // keys + prefixes

    PinnableSlice value;
    for (uint64_t group = 0; group < 100; group += 2) {
      for (uint64_t j = 0; j < 1000; j += 2) {
        ASSERT_TRUE(
            db_->Get(ReadOptions(), db_->DefaultColumnFamily(), number(group, j), &value).ok());
      }
    }
    // Absent keys under present prefixes: only the whole-key entries can reject them.
    FilterCounts before = Counts();
    int lookups = 0;
    for (uint64_t group = 0; group < 100; group += 2) {
      for (uint64_t j = 1; j < 1000; j += 20, ++lookups) {
        EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), number(group, j), &value)
                        .IsNotFound());
      }
    }
    const FilterCounts keys = Counts() - before;
    EXPECT_GT(keys.negatives, lookups * 0.9) << keys.negatives << " of " << lookups;
    // Seeks into absent prefixes: the prefix entries reject them.
    before = Counts();
    ReadOptions same_prefix;
    same_prefix.prefix_same_as_start = true;
    int seeks = 0;
    for (uint64_t group = 1; group < 100; group += 2, ++seeks) {
      std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(same_prefix));
      it->Seek(number(group, 0));
      EXPECT_FALSE(it->Valid());
      EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    }
    const FilterCounts prefixes = Counts() - before;
    EXPECT_GT(prefixes.seek_negatives, seeks * 0.9) << prefixes.seek_negatives << " of " << seeks;
    db_.reset();
    fs::remove_all(dir_);
  }
}

TEST_F(DbTest, PartitionedFilters) {
  for (const char* uri : testing::EveryPolicy()) {
    SCOPED_TRACE(uri);
    BlockBasedTableOptions table;
    table.partition_filters = true;
    table.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 1024;
    Options options = MakeOptions(uri, table);
    options.write_buffer_size = 16 << 20;  // one file of 50k keys, many partitions
    Open(options);
    Load(0, 50'000);
    const FilterSpec spec = SpecOf(*TableOptionsOf(options)->filter_policy);
    for (const auto& [file, props] : Tables()) {
      // Many partitions, each a whole filter with its own trailer, plus their index: larger
      // than one filter of all the keys.
      EXPECT_GT(props->filter_size, FilterBytes(spec, props->num_filter_entries).value() + 1024)
          << file;
    }
    ExpectAllPresent(0, 50'000);
    const FilterCounts counts = LookUpAbsent(50'000);
    EXPECT_GT(counts.negatives, 50'000u * 0.97);
    db_.reset();
    fs::remove_all(dir_);
  }
}

TEST_F(DbTest, IngestedFilesCarryTheFilter) {
  const Options options = MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.001}");
  fs::create_directories(dir_);
  const std::string sst = dir_ + "/../sstfilter_ingest_" + std::to_string(::getpid()) + ".sst";
  {
    ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(), options);
    ASSERT_TRUE(writer.Open(sst).ok());
    for (uint64_t i = 0; i < 20'000; ++i) {
      ASSERT_TRUE(writer.Put(PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  Open(options);
  ROCKSDB_NAMESPACE::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  ASSERT_TRUE(db_->IngestExternalFile({sst}, ingest).ok());
  for (const auto& [file, props] : Tables()) {
    EXPECT_EQ(props->filter_policy_name, "sstfilter.Cuckoo");
  }
  ExpectAllPresent(0, 20'000);
  EXPECT_GT(LookUpAbsent(20'000).negatives, 19'900u);
  fs::remove(sst);
}

TEST_F(DbTest, LeveledPolicyGivesEachLevelItsBudget) {
  Options options = MakeOptions("{id=sstfilter.Leveled;bits_per_key=10;num_levels=4}");
  ShapeSmallTree(/*level1_bytes=*/1 << 20, /*file_bytes=*/256 << 10, &options);
  Open(options);
  // Shuffled keys (sequential batches would only ever be moved down, never rewritten; see the
  // README's pitfalls), then a full compaction that rewrites the last level as bottommost files.
  std::vector<uint64_t> order(200'000);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(3));
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), PresentKey(order[i]), ValueOf(PresentKey(order[i]))).ok());
  }
  ASSERT_TRUE(db_->Flush({}).ok());
  ROCKSDB_NAMESPACE::CompactRangeOptions force;
  force.bottommost_level_compaction = ROCKSDB_NAMESPACE::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db_->CompactRange(force, nullptr, nullptr).ok());
  // Updates over the whole key range: a flush that is not bottommost, so it gets level 0's filter.
  {
    WriteOptions w;
    for (uint64_t i = 0; i < 200'000; i += 20) {
      ASSERT_TRUE(db_->Put(w, PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(db_->Flush({}).ok());
  }
  Load(200'000, 5'000);
  const Options reopened = ReopenFromOptionsFile();
  EXPECT_STREQ(TableOptionsOf(reopened)->filter_policy->Name(), "sstfilter.Leveled");
  ExpectAllPresent(0, 205'000);
  // Every file's filter is the allocation of a level no deeper than the file's (files only move
  // down, and a trivial move keeps the filter), or of the last level (files RocksDB writes as
  // bottommost), or the budget's (the tree's first flush, which has nothing to overlap, counts as
  // an append). Per-level averages can therefore mix, but no file is off the allocation.
  const auto& policy = dynamic_cast<const LeveledPolicy&>(*TableOptionsOf(reopened)->filter_policy);
  std::set<int> allocations_used;
  int ribbon_files = 0;
  for (const FileFilter& f : FilesAgainst(policy, 4)) {
    EXPECT_TRUE(f.budgets || (!f.allocations.empty() && (f.Shallowest() <= f.level || f.Has(3))))
        << f.name << " at level " << f.level << ": " << f.filter_bytes << " filter bytes for "
        << f.filter_entries << " keys";
    allocations_used.insert(f.Shallowest());
    // Files of thousands of keys get Ribbon filters, standard or bumped, the smallest kinds at
    // that size.
    if (f.filter_entries >= 1000 && !f.allocations.empty()) {
      const LevelFilter level =
          policy.Allocation(4, f.filter_entries).value()[static_cast<size_t>(f.Shallowest())];
      EXPECT_TRUE(level.base.spec.kind() == Ribbon::kId ||
                  level.base.spec.kind() == BumpedRibbon::kId)
          << level.base.spec.ToString();
      ++ribbon_files;
    }
  }
  EXPECT_GE(allocations_used.size(), 2u);  // the levels really get different filters
  EXPECT_GT(ribbon_files, 0);
  EXPECT_EQ(LookUpAbsent(20'000).true_positives, 0u);
}

// Sequential keys never overlap, so RocksDB moves every file down unchanged (from 8.4, flushed
// files straight into the last level) and each keeps the filter it was flushed with. Those
// flushes append, so each gets the budget's filter (plugin/tree_history.h): the tree keeps its
// budget with no partitioner, whatever RocksDB's defaults (dynamic level bytes from 8.4), and an
// absent-key lookup, which consults about one filter, wastes the budget's rate.
TEST_F(DbTest, LeveledKeepsAnOrderedTreeWithinItsBudget) {
  constexpr double kBudget = 10;
  constexpr uint64_t kKeys = 150'000;
  Options options = MakeOptions("sstfilter.Leveled:10");
  options.num_levels = 4;
  options.max_bytes_for_level_base = 512 << 10;
  options.target_file_size_base = 128 << 10;
  options.write_buffer_size = 128 << 10;
  options.level0_file_num_compaction_trigger = 2;
  Open(options);
  Load(0, kKeys);
  testing::WaitForCompactions(db_.get());
  const Options reopened = ReopenFromOptionsFile();
  EXPECT_GE(PopulatedLevels(), 2);
  ExpectAllPresent(0, kKeys);

  const auto& policy = dynamic_cast<const LeveledPolicy&>(*TableOptionsOf(reopened)->filter_policy);
  uint64_t bytes = 0, entries = 0, below_level0 = 0;
  double expected_rate = 0;  // over the files, weighted by keys
  for (const FileFilter& f : FilesAgainst(policy, 4)) {
    bytes += f.filter_bytes;
    entries += f.filter_entries;
    below_level0 += f.level > 0;
    EXPECT_TRUE(f.budgets) << f.name << " at level " << f.level << ": " << f.filter_bytes
                           << " filter bytes for " << f.filter_entries << " keys";
    expected_rate += static_cast<double>(f.filter_entries) *
                     policy.Allocation(1, f.filter_entries).value()[0].ExpectedFpRate();
  }
  EXPECT_GT(below_level0, 0u);  // files were moved down: the case in question
  const double bits_per_key = 8.0 * static_cast<double>(bytes) / static_cast<double>(entries);
  expected_rate /= static_cast<double>(entries);
  // Absent keys fall between present ones, so each lookup consults the one file whose range
  // holds it: false positives per check are the budget filter's rate, within 5 sigma.
  const FilterCounts counts = LookUpAbsent(40'000);
  EXPECT_EQ(counts.true_positives, 0u);
  const double checks = static_cast<double>(counts.checks());
  EXPECT_GE(checks, 0.99 * 40'000);
  EXPECT_LE(counts.checks(), 41'000u);  // about one filter per lookup
  const double fp_rate = static_cast<double>(counts.positives) / checks;
  printf(
      "[ figures  ] sstfilter.Leveled:10, sequential fill: %.2f bits/key, FP rate %.4f%% "
      "(allocation %.4f%%), %.3f checks per lookup\n",
      bits_per_key, 100 * fp_rate, 100 * expected_rate, checks / 40'000);
  EXPECT_LE(bits_per_key, 1.02 * kBudget);
  EXPECT_LE(fp_rate, expected_rate + 5 * std::sqrt(expected_rate / checks));
}

// Universal and FIFO compaction have no levels to allocate over: every file gets the budget's
// filter (the allocation of a tree of one level), with or without the listener, on random and
// sequential keys, and absent keys are answered at about the budget filter's rate per check.
TEST_F(DbTest, LeveledKeepsUniversalAndFifoTreesWithinTheBudget) {
  constexpr double kBudget = 10;
  constexpr uint64_t kKeys = 100'000;
  for (const auto style :
       {ROCKSDB_NAMESPACE::kCompactionStyleUniversal, ROCKSDB_NAMESPACE::kCompactionStyleFIFO}) {
    for (const bool ordered : {false, true}) {
      const bool universal = style == ROCKSDB_NAMESPACE::kCompactionStyleUniversal;
      SCOPED_TRACE(std::string(universal ? "universal" : "FIFO") +
                   (ordered ? ", sequential keys" : ", random keys"));
      Options options = MakeOptions("sstfilter.Leveled:10");
      options.compaction_style = style;
      options.write_buffer_size = 256 << 10;
      options.level0_file_num_compaction_trigger = 4;
      options.compaction_options_fifo.max_table_files_size = uint64_t{1} << 30;  // keeps all
      options.listeners.push_back(NewLeveledBudgetListener());
      Open(options);
      Write(Indexes(0, kKeys, ordered ? std::nullopt : std::optional<uint64_t>(3)));
      // Universal compaction may report a compaction pending that its picker then finds nothing
      // to do for ("Compaction nothing to do" in the LOG): settled once nothing has run for 10
      // polls in a row, or nothing is pending (testing::WaitForCompactions would wait forever).
      bool settled = false;
      for (int wait = 0, quiet = 0; wait < 1000 && !settled; ++wait) {
        uint64_t pending = 0, running = 0;
        ASSERT_TRUE(db_->GetIntProperty("rocksdb.compaction-pending", &pending));
        ASSERT_TRUE(db_->GetIntProperty("rocksdb.num-running-compactions", &running));
        quiet = running == 0 ? quiet + 1 : 0;
        settled = running == 0 && (pending == 0 || quiet >= 10);
        if (!settled) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ASSERT_TRUE(settled) << "compactions still running after 20 s";
      ExpectAllPresent(0, kKeys);
      uint64_t bytes = 0, entries = 0, files = 0;
      for (const auto& [file, props] : Tables()) {
        EXPECT_GT(props->filter_size, 0u) << file;
        bytes += props->filter_size;
        entries += props->num_filter_entries;
        ++files;
      }
      ASSERT_GT(entries, 0u);
      const double bits_per_key = 8.0 * static_cast<double>(bytes) / static_cast<double>(entries);
      const FilterCounts counts = LookUpAbsent(20'000);
      EXPECT_EQ(counts.true_positives, 0u);
      const double checks = static_cast<double>(counts.checks());
      const double fp_rate = static_cast<double>(counts.positives) / checks;
      const auto& policy =
          dynamic_cast<const LeveledPolicy&>(*TableOptionsOf(options)->filter_policy);
      // The leaner of the budget's two filters (a level that mixes two: each file draws one, and
      // a few large files decide).
      const double expected = policy.Allocation(1, entries / files).value()[0].base.fp_rate;
      printf("[ figures  ] %s, %s keys: %" PRIu64
             " files, %.2f bits/key, FP rate %.4f%% "
             "(the budget's leaner filter %.4f%%), %.2f checks per lookup\n",
             universal ? "universal" : "FIFO", ordered ? "sequential" : "random", files,
             bits_per_key, 100 * fp_rate, 100 * expected, checks / 20'000);
      EXPECT_LE(bits_per_key, 1.02 * kBudget);
      EXPECT_GE(bits_per_key, 0.95 * kBudget);
      EXPECT_LE(fp_rate, expected + 5 * std::sqrt(expected / checks));
      db_.reset();
      fs::remove_all(dir_);
    }
  }
}

// Keys that arrive in order, with a key at the start of the range updated all along (a counter,
// a time series' metadata): each flush overlaps the ones before it, so it gets level 0's filter
// and RocksDB compacts it; the compaction's output files, but one, overlap nothing below, and
// RocksDB later moves them down unchanged with their upper level's filter. sstfilter.NoTrivialMove
// makes RocksDB rewrite those files, so that each gets its level's filter. Whether RocksDB moves
// such a file depends on the timing of its compactions: in this small tree, 6 runs each on 7.8.3
// and 8.9.1 left no file richer than its level without the partitioner (which the test prints),
// and earlier versions of the allocation saw up to 14.48 bits/key.
TEST_F(DbTest, NoTrivialMoveKeepsLeveledWithinItsBudget) {
  constexpr double kBudget = 10;
  constexpr uint64_t kKeys = 150'000, kUpdateEvery = 500;
  double average_bits[2] = {0, 0};
  int richer_than_their_level[2] = {0, 0};
  for (const bool rewrite : {false, true}) {
    SCOPED_TRACE(rewrite ? "with sstfilter.NoTrivialMove" : "without a partitioner");
    Options options = MakeOptions("sstfilter.Leveled:10");
    if (rewrite) {
      // By name, as an OPTIONS file or a user's option string gives it.
      ASSERT_TRUE(ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
                      StrictConfigOptions(), options,
                      "sst_partitioner_factory=sstfilter.NoTrivialMove", &options)
                      .ok());
      ASSERT_STREQ(options.sst_partitioner_factory->Name(), "sstfilter.NoTrivialMove");
    }
    ShapeSmallTree(/*level1_bytes=*/512 << 10, /*file_bytes=*/128 << 10, &options);
    Open(options);
    WriteOptions w;
    w.disableWAL = true;
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(db_->Put(w, PresentKey(i), ValueOf(PresentKey(i))).ok());
      if (i % kUpdateEvery == 0) {
        ASSERT_TRUE(db_->Put(w, PresentKey(0), ValueOf(PresentKey(0))).ok());
      }
    }
    ASSERT_TRUE(db_->Flush({}).ok());
    testing::WaitForCompactions(db_.get());
    const Options reopened = ReopenFromOptionsFile();
    ASSERT_EQ(reopened.sst_partitioner_factory != nullptr, rewrite);
    std::string level2_files;
    ASSERT_TRUE(db_->GetProperty("rocksdb.num-files-at-level2", &level2_files));
    EXPECT_GT(std::stoi(level2_files), 0);  // files reached level 2, through levels 0 and 1
    ExpectAllPresent(0, kKeys);
    EXPECT_EQ(LookUpAbsent(10'000).true_positives, 0u);

    // A file's filter is its level's in the model of the tree when it was written: of as many
    // levels as compactions had reached then, at most as many as they reach now. Its filter is
    // therefore no larger than the richest its level has in any of those models (10% for the
    // filters' rounding); a trivial move breaks that, carrying a shallower level's richer filter
    // down.
    const auto& policy =
        dynamic_cast<const LeveledPolicy&>(*TableOptionsOf(reopened)->filter_policy);
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    int levels_reached = 1;
    for (const auto& f : files) levels_reached = std::max(levels_reached, f.level + 1);
    std::map<std::string, std::shared_ptr<const ROCKSDB_NAMESPACE::TableProperties>> props;
    for (const auto& [path, p] : Tables()) props[fs::path(path).filename().string()] = p;
    uint64_t bytes = 0, entries = 0;
    for (const auto& f : files) {
      const auto& p = props.at(fs::path(f.name).filename().string());
      bytes += p->filter_size;
      entries += p->num_filter_entries;
      double richest_bytes = 0;
      for (int levels = f.level + 1; levels <= levels_reached; ++levels) {
        const LevelFilter level =
            policy.Allocation(levels, p->num_filter_entries).value()[static_cast<size_t>(f.level)];
        richest_bytes = std::max(
            richest_bytes,
            static_cast<double>(FilterBytes(level.Largest().spec, p->num_filter_entries).value()));
      }
      if (p->filter_size > 1.1 * richest_bytes) {
        ++richer_than_their_level[rewrite];
        EXPECT_FALSE(rewrite) << f.name << " at level " << f.level << " of " << levels_reached
                              << ": " << p->filter_size << " filter bytes for "
                              << p->num_filter_entries << " keys, its level's richest "
                              << richest_bytes;
      }
    }
    average_bits[rewrite] = 8.0 * bytes / entries;
    db_.reset();
    fs::remove_all(dir_);
  }
  // The average is the budget in expectation only: which levels hold how many keys, and which
  // filter each file of a mixed level draws, depend on the timing of RocksDB's compactions. Seen
  // on 8.9.1: 9.45 to 9.90 bits/key rewritten, and 10.26 once under CI's load; without the
  // partitioner 9.76 to 10.09.
  printf(
      "[ figures  ] sstfilter.Leveled:10: %.2f bits/key, %d files richer than their level's "
      "filter, with trivial moves; %.2f rewritten\n",
      average_bits[0], richer_than_their_level[0], average_bits[1]);
  EXPECT_LE(average_bits[1], 1.1 * kBudget);
}

// Files that no compaction rewrites can hold richer filters than the allocation's: here an
// ingested file of 20% of the keys built with 20 bits per key, whose range later writes never
// overlap. Alone, sstfilter.Leveled cannot know of it and the tree spends 12 bits per key. With
// the sstfilter.LeveledBudget listener (named in the DBOptions string, as an OPTIONS file or a
// user gives it) the policy sees every level's filters and steers the files it writes after, so
// that the tree comes back to its budget.
TEST_F(DbTest, LeveledBudgetListenerSteersTheTreeToItsBudget) {
  constexpr double kBudget = 10;
  constexpr uint64_t kIngested = 30'000, kWritten = 120'000;
  fs::create_directories(dir_);
  const std::string sst = dir_ + "/../sstfilter_rich_" + std::to_string(::getpid()) + ".sst";
  {
    ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(),
                                            MakeOptions("sstfilter.Bloom:20"));
    ASSERT_TRUE(writer.Open(sst).ok());
    for (uint64_t i = 0; i < kIngested; ++i) {
      ASSERT_TRUE(writer.Put(PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  const std::vector<uint64_t> order = Indexes(kIngested, kWritten, /*shuffle_seed=*/11);
  double average_bits[2] = {0, 0}, bits_with_level0_full = 0;
  uint64_t level0_peak_keys = 0;
  for (const bool listen : {false, true}) {
    SCOPED_TRACE(listen ? "with sstfilter.LeveledBudget" : "without a listener");
    Options options = MakeOptions("sstfilter.Leveled:10");
    ShapeSmallTree(/*level1_bytes=*/512 << 10, /*file_bytes=*/128 << 10, &options);
    if (listen) {
      ASSERT_TRUE(ROCKSDB_NAMESPACE::GetDBOptionsFromString(
                      StrictConfigOptions(), options, "listeners=sstfilter.LeveledBudget", &options)
                      .ok());
      ASSERT_EQ(options.listeners.size(), 1u);
      ASSERT_STREQ(options.listeners[0]->Name(), "sstfilter.LeveledBudget");
    }
    Open(options);
    ROCKSDB_NAMESPACE::IngestExternalFileOptions ingest;  // a copy: the file serves both runs
    ASSERT_TRUE(db_->IngestExternalFile({sst}, ingest).ok());
    Write(order);
    testing::WaitForCompactions(db_.get());
    ExpectAllPresent(0, kIngested + kWritten);
    EXPECT_EQ(LookUpAbsent(10'000).true_positives, 0u);
    uint64_t bytes = 0, entries = 0;
    for (const auto& [file, props] : Tables()) {
      bytes += props->filter_size;
      entries += props->num_filter_entries;
    }
    average_bits[listen] = 8.0 * bytes / entries;
    if (listen) {
      TreeAccounts accounts;
      ASSERT_TRUE(AccountsHolding(kIngested + kWritten, &accounts));
      level0_peak_keys = accounts.level0_peak.keys;
      bits_with_level0_full = BitsPerKeyWithLevel0AtItsFullest(accounts, kBudget);
    }
    if (listen) {  // RocksDB writes the listener to the OPTIONS file, and creates it from there
      const Options reopened = ReopenFromOptionsFile();
      ASSERT_EQ(reopened.listeners.size(), 1u);
      EXPECT_STREQ(reopened.listeners[0]->Name(), "sstfilter.LeveledBudget");
    }
    db_.reset();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  fs::remove(sst);
  printf(
      "[ figures  ] sstfilter.Leveled:10 after a 20-bit ingestion: %.2f bits/key alone, %.2f "
      "with sstfilter.LeveledBudget, %.2f with level 0 at its fullest lately (%" PRIu64 " keys)\n",
      average_bits[0], average_bits[1], bits_with_level0_full, level0_peak_keys);
  EXPECT_GT(average_bits[0], 1.1 * kBudget);
  EXPECT_LE(average_bits[1], 1.02 * kBudget);
  // The allocation counts level 0 at its fullest lately, so the tree spends its budget when level
  // 0 is full and less when it is empty, as here once compactions are done. How full level 0 got
  // depends on how far compactions lagged the writes: 8,702 to 20,319 keys, and the tree without
  // them spent 8.88 to 9.48 bits/key (which failed a bound on that figure in CI). The steering
  // also lags: it answers the excess once per flush or compaction, and the files written while
  // the ingested file dominated got less. With level 0 at its fullest: 9.59 to 9.85 in 8 runs on
  // 7.8.3, 6 of them two at a time beside a busy loop, and 9.65 to 9.74 in 3 on 9.10.0
  // (2026-11-25).
  EXPECT_LE(bits_with_level0_full, 1.02 * kBudget);
  EXPECT_GE(bits_with_level0_full, 0.93 * kBudget);
}

// AccountTreeForAdvice (the advisor's view of a tree it rebuilds): the tree's levels as they are,
// each level's filters what sstfilter.Leveled steers to, so that the steering has nothing to
// correct; under the logger given, not the database's. Other policies and empty trees are errors.
TEST_F(DbTest, AccountTreeForAdviceGivesTheTreeAsItIsWithNothingToSteer) {
  constexpr uint64_t kKeys = 60'000;
  Options options = MakeOptions("bloomfilter:10");
  ShapeSmallTree(/*level1_bytes=*/256 << 10, /*file_bytes=*/64 << 10, &options);
  Open(options);
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> leveled, bloom;
  ASSERT_TRUE(NewFilterPolicy("sstfilter.Leveled:10", &leveled).ok());
  ASSERT_TRUE(NewFilterPolicy("sstfilter.Bloom:10", &bloom).ok());
  struct NullLogger : ROCKSDB_NAMESPACE::Logger {
    using ROCKSDB_NAMESPACE::Logger::Logv;
    void Logv(const char*, va_list) override {}
  };
  const std::shared_ptr<ROCKSDB_NAMESPACE::Logger> logger = std::make_shared<NullLogger>();
  const ROCKSDB_NAMESPACE::Status empty =
      AccountTreeForAdvice(db_.get(), "default", *leveled, logger);
  EXPECT_TRUE(empty.IsInvalidArgument()) << empty.ToString();
  Write(Indexes(0, kKeys, /*shuffle_seed=*/5));
  testing::WaitForCompactions(db_.get());
  ASSERT_GE(PopulatedLevels(), 2);
  const ROCKSDB_NAMESPACE::Status other =
      AccountTreeForAdvice(db_.get(), "default", *bloom, logger);
  EXPECT_TRUE(other.IsInvalidArgument()) << other.ToString();
  EXPECT_NE(other.ToString().find("not sstfilter.Leveled"), std::string::npos);
  ASSERT_TRUE(AccountTreeForAdvice(db_.get(), "default", *leveled, logger).ok());

  TreeAccounts accounts;
  ASSERT_TRUE(Ledger::Global().Get(LoggerTree(logger.get(), "default"), &accounts));
  uint64_t keys = 0;
  for (const LevelAccount& a : accounts.levels) keys += a.keys;
  EXPECT_EQ(keys, kKeys);
  const std::vector<double> bits = SteadyBitsPerKey(accounts, 10).value();
  double spent = 0;
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    EXPECT_NEAR(8.0 * a.filter_bytes, a.keys * bits[i], 8) << "level " << i;
    spent += 8.0 * a.filter_bytes;
  }
  // Level 0 as it is, which is also its fullest: the tree spends the budget.
  EXPECT_NEAR(spent / kKeys, 10, 0.05);
}

// Large memtables make level 0 a large part of a tree: here each flush is about 8% of the final
// tree, and level 0 holds up to four. The listener counts a running compaction's inputs where
// their keys are going, and level 0 at its fullest lately, so the allocation for the levels below
// leaves room for level 0 to fill again: the tree stays within its budget at every point of the
// fill, not only at the end. (Before, the first compaction's outputs were allocated as if their
// own inputs stayed beside them, and the steering overshot: 11.91 bits/key here; 11.6 in a
// 3.9M-key tree of stock db_bench with 64 MiB memtables.)
TEST_F(DbTest, LeveledBudgetListenerHoldsTheBudgetWhileLevel0Fills) {
  constexpr double kBudget = 10;
  constexpr uint64_t kKeys = 300'000, kBatches = 12;
  Options options = MakeOptions("sstfilter.Leveled:10");
  options.write_buffer_size = 3 << 20;
  options.level0_file_num_compaction_trigger = 4;
  options.target_file_size_base = 1 << 20;
  options.max_bytes_for_level_base = 8 << 20;
  options.level_compaction_dynamic_level_bytes = true;
  options.listeners.push_back(NewLeveledBudgetListener());
  Open(options);
  const std::vector<uint64_t> order = Indexes(0, kKeys, /*shuffle_seed=*/17);
  double highest = 0, last = 0;
  for (uint64_t batch = 0; batch < kBatches; ++batch) {
    const auto begin = order.begin() + static_cast<ptrdiff_t>(batch * kKeys / kBatches);
    const auto end = order.begin() + static_cast<ptrdiff_t>((batch + 1) * kKeys / kBatches);
    Write(std::vector<uint64_t>(begin, end));
    testing::WaitForCompactions(db_.get());
    uint64_t bytes = 0, entries = 0;
    for (const auto& [file, props] : Tables()) {
      // Every file has its filter, the first flush of the new database included.
      EXPECT_GT(props->filter_size, 0u) << file << " after batch " << batch;
      bytes += props->filter_size;
      entries += props->num_filter_entries;
    }
    last = 8.0 * bytes / entries;
    highest = std::max(highest, last);
  }
  ExpectAllPresent(0, kKeys);
  EXPECT_EQ(LookUpAbsent(10'000).true_positives, 0u);
  printf(
      "[ figures  ] sstfilter.Leveled:10, level 0 up to 4 flushes of ~8%% of the tree: %.2f "
      "bits/key at most during the fill, %.2f at its end\n",
      highest, last);
  EXPECT_LE(highest, 1.02 * kBudget);
  // It spends the budget when level 0 is full, less when it is not (8.6 bits/key with level 0
  // empty, here).
  EXPECT_GE(last, 0.85 * kBudget);
}

// The listener estimates the filter probes each level receives from the files' key ranges. In an
// ordered tree each level holds its own range, so a lookup (absent keys fall between present
// ones, across the range) probes a level in proportion to its keys; in a random tree every level
// spans the key space and every lookup probes it. Both against the truth for 20,000 absent keys
// spread over the range: how many of each level's files' ranges hold each key.
TEST_F(DbTest, LeveledBudgetListenerSeesWhichLevelsLookupsProbe) {
  constexpr uint64_t kKeys = 150'000, kLookups = 20'000;
  for (const bool ordered : {true, false}) {
    SCOPED_TRACE(ordered ? "sequential keys" : "random keys");
    Options options = MakeOptions("sstfilter.Leveled:10");
    ShapeSmallTree(/*level1_bytes=*/512 << 10, /*file_bytes=*/128 << 10, &options);
    options.listeners.push_back(NewLeveledBudgetListener());
    Open(options);
    Write(Indexes(0, kKeys, ordered ? std::nullopt : std::optional<uint64_t>(5)));
    testing::WaitForCompactions(db_.get());
    TreeAccounts accounts;
    ASSERT_TRUE(AccountsHolding(kKeys, &accounts));
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    std::map<int, double> probed;  // per level, the files whose range holds a key, per key
    for (uint64_t i = 0; i < kLookups; ++i) {
      const std::string key = AbsentKey((i * 7919) % kKeys);  // spread over the range
      for (const auto& f : files) {
        probed[f.level] += f.smallestkey <= key && key <= f.largestkey ? 1.0 / kLookups : 0;
      }
    }
    const std::vector<LevelAccount>& levels = accounts.levels;
    uint64_t total = 0;
    for (const LevelAccount& a : levels) {
      total += a.keys;
      EXPECT_EQ(a.pending_keys, 0u) << "no compaction runs";
    }
    ASSERT_EQ(total, kKeys);
    int levels_seen = 0;
    for (size_t level = 0; level < levels.size(); ++level) {
      if (levels[level].keys == 0) continue;
      ++levels_seen;
      const double share = static_cast<double>(levels[level].keys) / kKeys;
      const double truth = probed[static_cast<int>(level)];
      printf(
          "[ figures  ] %s, level %zu: %.3f of the keys, %.3f probes per lookup estimated, "
          "%.3f true\n",
          ordered ? "sequential" : "random", level, share, levels[level].probes, truth);
      // A file's keys count whole where its range meets the level's: the estimate may exceed the
      // truth by the keys of the other levels' files that meet the level's ranges but reach
      // outside them (1.000 against 0.892 true for the last level of a random tree whose level-1
      // files spanned the key space, holding keys past the last level's files; 0.954 against
      // 0.782 once). Level 0's files are counted one by one.
      double straddling = 0;
      for (const auto& g : files) {
        if (g.level == static_cast<int>(level)) continue;
        bool meets = false, inside = false;
        for (const auto& f : files) {
          if (f.level != static_cast<int>(level)) continue;
          meets |= !(g.largestkey < f.smallestkey || f.largestkey < g.smallestkey);
          inside |= f.smallestkey <= g.smallestkey && g.largestkey <= f.largestkey;
        }
        if (meets && !inside) straddling += static_cast<double>(g.num_entries) / kKeys;
      }
      EXPECT_GE(levels[level].probes, truth - 0.02) << level;
      EXPECT_LE(levels[level].probes, truth + 0.02 + (level == 0 ? 0.5 : straddling)) << level;
      if (ordered) {
        EXPECT_NEAR(levels[level].probes, share, 0.02) << level;
      }
    }
    EXPECT_GE(levels_seen, 2);
    db_.reset();
    fs::remove_all(dir_);
  }
}

// sstfilter's readers count the probes each file's filter receives (plugin/probe_counts.h), and
// the listener moves each level's probes toward what they counted. Lookups of the newest keys
// only (a time series read near its end) in an ordered tree probe the levels that hold them, where
// the key-range estimate spreads them like the keys: the counts, per level, are those of the
// lookups within sampling error, and a new file for the level they probe gets a richer filter than
// before the lookups.
TEST_F(DbTest, LeveledBudgetListenerCountsTheProbesReadersSee) {
  constexpr uint64_t kKeys = 150'000, kRecent = 7'500, kLookups = 100'000;
  Options options = MakeOptions("sstfilter.Leveled:10");
  ShapeSmallTree(/*level1_bytes=*/512 << 10, /*file_bytes=*/128 << 10, &options);
  options.listeners.push_back(NewLeveledBudgetListener());
  Open(options);
  Write(Indexes(0, kKeys));
  testing::WaitForCompactions(db_.get());
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);

  // Bits per key of a filter of 5,000 keys that the policy builds now for a file of `level`.
  auto bits_of_a_new_file = [&](int level) {
    FilterBuildingContext context(*TableOptionsOf(options));
    context.compaction_style = options.compaction_style;
    context.num_levels = options.num_levels;
    context.level_at_creation = level;
    context.info_log = db_->GetDBOptions().info_log.get();
    context.column_family_name = "default";
    const testing::BuildingTableOf building(db_.get());
    std::unique_ptr<FilterBitsBuilder> builder(
        TableOptionsOf(options)->filter_policy->GetBuilderWithContext(context));
    for (uint64_t i = 0; i < 5000; ++i) builder->AddKey(Key(3 * kKeys + i));
    std::unique_ptr<const char[]> buf;
    return 8.0 * builder->Finish(&buf).size() / 5000;
  };

  // Distinct absent keys among the newest present ones (a suffix sorts them between two present
  // keys), and the truth: per level, the files whose range holds each.
  std::map<int, double> truth;
  double truth_total = 0;
  std::vector<std::string> lookups;
  for (uint64_t j = 0; j < kLookups; ++j) {
    lookups.push_back(PresentKey(kKeys - kRecent + j % kRecent) + "/" + std::to_string(j));
    for (const auto& f : files) {
      const bool inside = f.smallestkey <= lookups.back() && lookups.back() <= f.largestkey;
      truth[f.level] += inside ? 1 : 0;
      truth_total += inside ? 1 : 0;
    }
  }
  int hot = 0;  // the level most of them probe
  for (const auto& [level, n] : truth) hot = n > truth[hot] ? level : hot;

  TreeAccounts before;
  ASSERT_TRUE(AccountsHolding(kKeys, &before));
  EXPECT_EQ(before.counted_weight, 0) << "no lookup yet";
  const double bits_before = bits_of_a_new_file(hot);
  PinnableSlice value;
  for (const std::string& k : lookups) {
    ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), k, &value).IsNotFound());
  }
  Write(Indexes(kKeys, 100));  // a flush: the listener accounts for the tree
  testing::WaitForCompactions(db_.get());
  TreeAccounts after;
  ASSERT_TRUE(AccountsHolding(kKeys + 100, &after));
  const double bits_after = bits_of_a_new_file(hot);

  double counted_total = 0;
  for (const LevelAccount& a : after.levels) counted_total += a.counted_probes;
  // About kLookups x probes per lookup / kProbeSampleRate samples, decayed by the flush and
  // compactions since: a binomial fraction's sigma is below 0.01.
  ASSERT_GT(counted_total, 500);
  EXPECT_GT(after.counted_weight, 0.6);
  uint64_t keys = 0;
  for (const LevelAccount& a : after.levels) keys += a.keys;
  for (size_t level = 0; level < after.levels.size(); ++level) {
    const LevelAccount& a = after.levels[level];
    const double counted = a.counted_probes / counted_total;
    const double expected = truth[static_cast<int>(level)] / truth_total;
    printf(
        "[ figures  ] level %zu: %.3f of the keys; of the probes, %.3f counted, %.3f true; %.3f "
        "probes per lookup (%.3f before the lookups)\n",
        level, static_cast<double>(a.keys) / keys, counted, expected, a.probes,
        level < before.levels.size() ? before.levels[level].probes : 0.0);
    EXPECT_NEAR(counted, expected, 0.05) << level;
  }
  printf(
      "[ figures  ] counts weigh %.2f; a new file for level %d (%.3f of the lookups' probes): "
      "%.2f bits/key before the lookups, %.2f after\n",
      after.counted_weight, hot, truth[hot] / truth_total, bits_before, bits_after);
  ASSERT_LT(static_cast<size_t>(hot), after.levels.size());
  EXPECT_GT(after.levels[hot].probes, before.levels[hot].probes + 0.3);
  EXPECT_GT(bits_after, bits_before + 1.5);
}

TEST_F(DbTest, OptimizeFiltersForHits) {
  Options options = MakeOptions("sstfilter.Bloom:10");
  options.optimize_filters_for_hits = true;
  options.num_levels = 3;  // so that compaction reaches the last level, which gets no filters
  Open(options);
  for (uint64_t part = 0; part < 4; ++part) Load(part * 25'000, 25'000);
  CompactAll();
  Load(100'000, 5'000);
  // RocksDB skips building or consulting filters where it deems a level bottommost; whichever
  // files have them, every key is found and absent keys are still answered "not found".
  ExpectAllPresent(0, 105'000);
  const FilterCounts counts = LookUpAbsent(20'000);
  EXPECT_EQ(counts.true_positives, 0u);
}

// Good filters pass the check that detect_filter_construct_corruption asks for: flushes and
// compactions succeed and every key is found. That the check runs at all is the next test's.
TEST_F(DbTest, DetectFilterConstructCorruptionPassesGoodFilters) {
  BlockBasedTableOptions table;
  table.detect_filter_construct_corruption = true;
  Open(MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}", table));
  Load(0, 30'000);  // MaybePostVerify checks every filter; a failure would fail the flush
  CompactAll();
  ExpectAllPresent(0, 30'000);
}

// sstfilter's builder, except that the filter RocksDB receives from Finish has its body zeroed:
// every key the builder was given is missing from it, as if memory had been corrupted between
// the build and the write. MaybePostVerify goes to sstfilter's builder unchanged.
class ZeroingBuilder : public FilterBitsBuilder {
 public:
  explicit ZeroingBuilder(std::unique_ptr<FilterBitsBuilder> inner) : inner_(std::move(inner)) {}
  void AddKey(const Slice& key) override { inner_->AddKey(key); }
#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override { inner_->AddKeyAndAlt(key, alt); }
#endif
  size_t EstimateEntriesAdded() override { return inner_->EstimateEntriesAdded(); }
  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    Status ignored;
    return Finish(buf, &ignored);
  }
  Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) override {
    const Slice built = inner_->Finish(buf, status);
    if (built.size() <= kTrailerBytes) return built;
    char* zeroed = new char[built.size()];
    std::memcpy(zeroed, built.data(), built.size());
    std::memset(zeroed, 0, built.size() - kTrailerBytes);
    buf->reset(zeroed);
    return Slice(zeroed, built.size());
  }
  Status MaybePostVerify(const Slice& filter) override { return inner_->MaybePostVerify(filter); }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->ApproximateNumEntries(bytes);
  }
#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
  size_t CalculateSpace(size_t num_entries) override { return inner_->CalculateSpace(num_entries); }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->EstimatedFpRate(num_entries, bytes);
  }
#endif

 private:
  std::unique_ptr<FilterBitsBuilder> inner_;
};

class ZeroingPolicy : public ROCKSDB_NAMESPACE::FilterPolicy {
 public:
  explicit ZeroingPolicy(std::shared_ptr<const FilterPolicy> inner) : inner_(std::move(inner)) {}
  const char* Name() const override { return "sstfilter.test.Zeroing"; }
  const char* CompatibilityName() const override { return inner_->CompatibilityName(); }
  FilterBitsBuilder* GetBuilderWithContext(const FilterBuildingContext& context) const override {
    FilterBitsBuilder* inner = inner_->GetBuilderWithContext(context);
    return inner == nullptr ? nullptr
                            : new ZeroingBuilder(std::unique_ptr<FilterBitsBuilder>(inner));
  }
  ROCKSDB_NAMESPACE::FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    return inner_->GetFilterBitsReader(contents);
  }

 private:
  std::shared_ptr<const FilterPolicy> inner_;
};

// With detect_filter_construct_corruption, RocksDB hands each filter back to sstfilter's builder
// (MaybePostVerify), which checks every key against it: a filter that lost its keys fails the
// flush with Corruption. Without the option the same filters are not checked and the flush
// succeeds, so the failure is the check's.
TEST_F(DbTest, DetectFilterConstructCorruptionCatchesAFilterThatLostItsKeys) {
  for (const bool detect : {true, false}) {
    BlockBasedTableOptions table;
    table.detect_filter_construct_corruption = detect;
    Options options = MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}", table);
    table.filter_policy =
        std::make_shared<ZeroingPolicy>(PolicyFrom("{id=sstfilter.Cuckoo;fp_rate=0.01}"));
    options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
    ASSERT_TRUE(ROCKSDB_NAMESPACE::DestroyDB(dir_, options).ok());
    Open(options);
    for (uint64_t i = 0; i < 1000; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), PresentKey(i), "v").ok());
    }
    const Status s = db_->Flush({});
    if (detect) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    } else {
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    db_.reset();
  }
}

}  // namespace
}  // namespace sstfilter
