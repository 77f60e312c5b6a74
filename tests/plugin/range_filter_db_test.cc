// SPDX-License-Identifier: Apache-2.0
// sstfilter.RangeFilter in real databases: chosen by string and kept in OPTIONS files; bounded
// iterators skip the files that hold nothing in their bounds and answer exactly as iterators that
// read every file; and a model-based test (an expected state, as RocksDB's db_stress keeps) that
// compares every bounded scan with and without SkipEmptyFiles, and with the model, over random
// puts, deletes, single deletes, merges, range deletions, flushes, compactions, snapshots, two
// column families and reopens.
#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/options_util.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compat/rocksdb_api.h"
#include "plugin/range_filter_collector.h"
#include "plugin/skip_empty_files.h"
#include "sstfilter/range_filter.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::ColumnFamilyOptions;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::TableProperties;
using ROCKSDB_NAMESPACE::WriteOptions;
using testing::CountFiles;
using testing::FileCounts;
using testing::MustOpen;
using testing::OpenDb;
using testing::TempDir;
using testing::WaitForCompactions;

// Appends merge operands with commas.
class AppendOperator : public ROCKSDB_NAMESPACE::AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* new_value,
             ROCKSDB_NAMESPACE::Logger*) const override {
    *new_value =
        existing == nullptr ? value.ToString() : existing->ToString() + "," + value.ToString();
    return true;
  }
  const char* Name() const override { return "sstfilter.test.Append"; }
};

std::string Id(uint32_t id, char space = 'k') {
  std::string k(1, space);
  for (int shift = 24; shift >= 0; shift -= 8) k.push_back(static_cast<char>((id >> shift) & 0xff));
  return k;
}
// Keys of ids that are multiples of 7 are longer than the filter's 16-byte window.
std::string KeyOf(uint32_t id, char space = 'k') {
  return id % 7 == 0 ? Id(id, space) + "/a suffix past the window " + std::to_string(id)
                     : Id(id, space);
}

using Entries = std::vector<std::pair<std::string, std::string>>;

// Where two scans first differ, for a failure's message.
std::string FirstDifference(const Entries& a, const Entries& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto show = [i](const Entries& e) {
    return i < e.size() ? "'" + e[i].first + "' = '" + e[i].second + "'" : std::string("end");
  };
  return "entry " + std::to_string(i) + ": " + show(a) + " against " + show(b);
}

// The entries a bounded scan sees: from Seek(target) forward, or from SeekForPrev(target)
// backward, to the end of the bounds.
Entries Scan(Iterator* it, const std::string& target, bool forward, Status* status) {
  Entries out;
  if (forward) {
    for (it->Seek(target); it->Valid(); it->Next()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
  } else {
    for (it->SeekForPrev(target); it->Valid(); it->Prev()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
  }
  *status = it->status();
  return out;
}

Entries ModelScan(const std::map<std::string, std::string>& model, const std::string& lower,
                  const std::string& upper, const std::string& target, bool forward) {
  Entries out;
  if (forward) {
    for (auto it = model.lower_bound(std::max(lower, target));
         it != model.end() && it->first < upper; ++it) {
      out.emplace_back(it->first, it->second);
    }
  } else {
    // SeekForPrev(target) clamped below upper: the last key <= target and < upper.
    auto it = model.upper_bound(target);
    while (it != model.begin()) {
      --it;
      if (it->first >= upper) continue;
      if (it->first < lower) break;
      out.emplace_back(it->first, it->second);
    }
  }
  return out;
}

Options RangeOptions(bool with_collector) {
  Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.write_buffer_size = 128 << 10;
  options.target_file_size_base = 64 << 10;
  options.max_bytes_for_level_base = 256 << 10;
  options.level0_file_num_compaction_trigger = 4;
  options.merge_operator = std::make_shared<AppendOperator>();
  if (with_collector) {
    std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> factory;
    EXPECT_TRUE(NewRangeFilterCollectorFactory(16, &factory).ok());
    options.table_properties_collector_factories.push_back(factory);
  }
  return options;
}

TEST(RangeFilterDb, ChosenByStringAndKeptInTheOptionsFile) {
  const auto config = StrictConfigOptions();
  ColumnFamilyOptions cf;
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
                  config, ColumnFamilyOptions(),
                  "table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=12}", &cf)
                  .ok());
  ASSERT_EQ(cf.table_properties_collector_factories.size(), 1u);
  EXPECT_STREQ(cf.table_properties_collector_factories[0]->Name(), kRangeFilterName);
  const auto parsed_factories = cf.table_properties_collector_factories;
  for (const char* text :
       {"table_properties_collectors=sstfilter.RangeFilter",
        "table_properties_collectors={{id=sstfilter.RangeFilter;bits_per_key=20}:"
        "{id=sstfilter.RangeFilter}}"}) {
    ColumnFamilyOptions parsed;
    ASSERT_TRUE(ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(config, ColumnFamilyOptions(),
                                                                    text, &parsed)
                    .ok())
        << text;
    ASSERT_GE(parsed.table_properties_collector_factories.size(), 1u);
  }
  // Bad values are errors that say what was wrong.
  for (const char* text :
       {"table_properties_collectors=sstfilter.RangeFilter:12",
        "table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=abc}",
        "table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=2}",
        "table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=99}",
        "table_properties_collectors={id=sstfilter.RangeFilter;size=1}"}) {
    ColumnFamilyOptions parsed;
    const Status s = ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
        config, ColumnFamilyOptions(), text, &parsed);
    EXPECT_FALSE(s.ok()) << text;
  }
  const Status s = ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
      config, ColumnFamilyOptions(),
      "table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=2}", &cf);
  EXPECT_NE(s.ToString().find("between 4 and 48"), std::string::npos) << s.ToString();
  std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> factory;
  EXPECT_FALSE(NewRangeFilterCollectorFactory(100, &factory).ok());

  // The OPTIONS file keeps the collector and its bits_per_key; loaded strictly, it comes back.
  TempDir dir("range_options");
  {
    Options options = RangeOptions(false);
    options.merge_operator.reset();  // the test's own: not registered, so not loadable
    options.table_properties_collector_factories = parsed_factories;
    Status open;
    auto db = OpenDb(options, dir.path(), &open);
    ASSERT_TRUE(open.ok()) << open.ToString();
  }
  ROCKSDB_NAMESPACE::DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> cfs;
  auto load_config = StrictConfigOptions();
  const Status loaded =
      ROCKSDB_NAMESPACE::LoadLatestOptions(load_config, dir.path(), &db_options, &cfs);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  ASSERT_EQ(cfs[0].options.table_properties_collector_factories.size(), 1u);
  const auto* reloaded = static_cast<const RangeFilterCollectorFactory*>(
      cfs[0].options.table_properties_collector_factories[0].get());
  EXPECT_STREQ(reloaded->Name(), kRangeFilterName);
  EXPECT_EQ(reloaded->bits_per_key(), 12.0);
}

// A database with the collector, of one file that holds the keys of ids 100 to 199 (null on an
// error, which the caller's ASSERT_NE reports).
std::unique_ptr<DB> OneFileOfIds100To199(const TempDir& dir) {
  auto db = MustOpen(RangeOptions(true), dir.path());
  if (db == nullptr) return nullptr;
  for (uint32_t id = 100; id < 200; ++id) {
    if (!db->Put(WriteOptions(), Id(id), "v").ok()) return nullptr;
  }
  if (!db->Flush({}).ok()) return nullptr;
  return db;
}

// How many keys an iterator with these options finds from `from` on.
size_t CountFrom(DB* db, const ReadOptions& ro, const std::string& from) {
  std::unique_ptr<Iterator> it(db->NewIterator(ro));
  size_t n = 0;
  for (it->Seek(from); it->Valid(); it->Next()) ++n;
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return n;
}

// A scan from `from` with these options finds `keys` keys, the filters skipping `skipped` files.
void ExpectScan(DB* db, ReadOptions ro, const std::string& from, size_t keys, uint64_t skipped) {
  FileCounts files;
  CountFiles(&ro, &files);
  EXPECT_EQ(CountFrom(db, ro, from), keys);
  EXPECT_EQ(files.skipped, skipped);
}

// The table properties of every file of the database's default column family.
ROCKSDB_NAMESPACE::TablePropertiesCollection PropertiesOf(DB* db) {
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  EXPECT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  return props;
}

// ReadOptions bounded by *lower and *upper, with SkipEmptyFiles (the filter reads those Slices).
ReadOptions SkippingWithin(const Slice* lower, const Slice* upper) {
  ReadOptions ro;
  ro.iterate_lower_bound = lower;
  ro.iterate_upper_bound = upper;
  EXPECT_TRUE(SkipEmptyFiles(&ro).ok());
  return ro;
}

// SkipEmptyFiles called again with new bounds: the new bounds replace the old (a filter for the
// old ones would skip the files that hold the new ones' keys); a table_filter of the caller's own,
// set before, still applies.
TEST(RangeFilterDb, SkipEmptyFilesCalledAgainTakesTheNewBounds) {
  TempDir dir("range_again");
  auto db = OneFileOfIds100To199(dir);
  ASSERT_NE(db, nullptr);
  auto scan = [&](const ReadOptions& ro, const std::string& from) {
    return CountFrom(db.get(), ro, from);
  };
  std::string lower = Id(0), upper = Id(50);  // empty
  Slice l(lower), u(upper);
  ReadOptions ro = SkippingWithin(&l, &u);
  ExpectScan(db.get(), ro, lower, /*keys=*/0, /*skipped=*/1);
  lower = Id(150);  // the Slices point at the strings: the bounds change in place
  upper = Id(160);
  l = Slice(lower);
  u = Slice(upper);
  ASSERT_TRUE(SkipEmptyFiles(&ro).ok());
  EXPECT_EQ(scan(ro, lower), 10u);
  // The caller's own filter, set first, still decides: this one reads no file.
  ReadOptions own;
  own.iterate_lower_bound = &l;
  own.iterate_upper_bound = &u;
  own.table_filter = [](const TableProperties&) { return false; };
  ASSERT_TRUE(SkipEmptyFiles(&own).ok());
  ASSERT_TRUE(SkipEmptyFiles(&own).ok());
  EXPECT_EQ(scan(own, lower), 0u);
}

// Bounds changed in place after SkipEmptyFiles, without calling it again: the filter reads them
// where RocksDB does, so it skips nothing that holds a key in the new bounds (a copy of the old
// bounds skipped the file: a lost read).
TEST(RangeFilterDb, SkipEmptyFilesFollowsBoundsChangedInPlace) {
  TempDir dir("range_in_place");
  auto db = OneFileOfIds100To199(dir);
  ASSERT_NE(db, nullptr);
  std::string lower = Id(0), upper = Id(50);  // empty
  Slice l(lower), u(upper);
  ReadOptions ro = SkippingWithin(&l, &u);
  ExpectScan(db.get(), ro, lower, /*keys=*/0, /*skipped=*/1);  // the empty range's file
  // The bytes the Slices point to, changed in place (same length).
  lower.replace(0, lower.size(), Id(150));
  upper.replace(0, upper.size(), Id(160));
  EXPECT_EQ(CountFrom(db.get(), ro, Id(150)), 10u);
  // The Slices themselves, pointed at other bytes.
  const std::string lower2 = Id(120), upper2 = Id(125);
  l = Slice(lower2);
  u = Slice(upper2);
  ExpectScan(db.get(), ro, lower2, /*keys=*/5, /*skipped=*/0);
}

// A column family whose comparator is not bytewise gets no range filter (none of its files can be
// skipped), and the LOG says why once, in the first file's creation event.
TEST(RangeFilterDb, ReverseComparatorColumnFamilyGetsNoFilter) {
  TempDir dir("range_reverse");
  Options options = RangeOptions(true);
  options.comparator = ROCKSDB_NAMESPACE::ReverseBytewiseComparator();
  options.disable_auto_compactions = true;
  auto db = MustOpen(options, dir.path());
  ASSERT_NE(db, nullptr);
  for (int file = 0; file < 3; ++file) {
    for (uint32_t id = 0; id < 100; ++id) {
      ASSERT_TRUE(db->Put(WriteOptions(), Id(file * 1000 + id), "v").ok());
    }
    ASSERT_TRUE(db->Flush({}).ok());
  }
  const auto props = PropertiesOf(db.get());
  ASSERT_EQ(props.size(), 3u);
  for (const auto& [path, p] : props) {
    EXPECT_EQ(p->user_collected_properties.count(kRangeFilterPropertyName), 0u) << path;
  }
  db.reset();
  std::ifstream log(dir.path() + "/LOG");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  size_t told = 0;
  for (size_t at = text.find("not in bytewise order"); at != std::string::npos;
       at = text.find("not in bytewise order", at + 1)) {
    ++told;
  }
  EXPECT_EQ(told, 1u);
  // The same keys in a bytewise column family do get filters (what the test above tells apart).
  TempDir bytewise_dir("range_bytewise");
  auto bytewise = OneFileOfIds100To199(bytewise_dir);
  ASSERT_NE(bytewise, nullptr);
  const auto bytewise_props = PropertiesOf(bytewise.get());
  ASSERT_EQ(bytewise_props.size(), 1u);
  EXPECT_EQ(
      bytewise_props.begin()->second->user_collected_properties.count(kRangeFilterPropertyName),
      1u);
}

TEST(RangeFilterDb, SkipEmptyFilesNeedsABound) {
  ReadOptions none;
  EXPECT_TRUE(SkipEmptyFiles(&none).IsInvalidArgument());
  EXPECT_FALSE(none.table_filter);
  EXPECT_TRUE(SkipEmptyFiles(nullptr).IsInvalidArgument());
}

// After RocksDB 11.8, ReadOptions::table_filter is a pointer to a filter the caller owns
// (compat/rocksdb_api.h). No release has that form yet, so SkipEmptyFiles' installation is
// instantiated here with a stand-in ReadOptions of that shape, against a real file's properties:
// without a holder it is NotSupported; with one, the options point into the holder, a second call
// replaces the bounds (not wrapping the first filter, which would skip the new bounds' file), and
// a filter of the caller's own still applies and is left as it was.
struct PointerFormReadOptions {
  const Slice* iterate_lower_bound = nullptr;
  const Slice* iterate_upper_bound = nullptr;
  const compat::TableFilter* table_filter = nullptr;
};
static_assert(compat::kTableFilterIsPointer<PointerFormReadOptions>);

TEST(RangeFilterDb, SkipEmptyFilesWhereReadOptionsPointToTheFilter) {
  TempDir dir("range_pointer_form");
  auto db = OneFileOfIds100To199(dir);
  ASSERT_NE(db, nullptr);
  const auto tables = PropertiesOf(db.get());
  ASSERT_EQ(tables.size(), 1u);
  const TableProperties& file = *tables.begin()->second;

  std::string lower = Id(0), upper = Id(50);  // the file holds nothing here
  Slice l(lower), u(upper);
  PointerFormReadOptions ro;
  ro.iterate_lower_bound = &l;
  ro.iterate_upper_bound = &u;
  EXPECT_TRUE(skip_detail::InstallSkipFilter(&ro, nullptr).IsNotSupported());
  EXPECT_EQ(ro.table_filter, nullptr);
  compat::TableFilter holder;
  ASSERT_TRUE(skip_detail::InstallSkipFilter(&ro, &holder).ok());
  ASSERT_EQ(ro.table_filter, &holder);
  EXPECT_FALSE((*ro.table_filter)(file));
  lower = Id(150);  // the file holds these
  upper = Id(160);
  l = Slice(lower);
  u = Slice(upper);
  ASSERT_TRUE(skip_detail::InstallSkipFilter(&ro, &holder).ok());
  ASSERT_EQ(ro.table_filter, &holder);
  EXPECT_TRUE((*ro.table_filter)(file));

  const compat::TableFilter own = [](const TableProperties&) { return false; };
  PointerFormReadOptions with_own = ro;
  with_own.table_filter = &own;
  compat::TableFilter holder2;
  ASSERT_TRUE(skip_detail::InstallSkipFilter(&with_own, &holder2).ok());
  ASSERT_TRUE(skip_detail::InstallSkipFilter(&with_own, &holder2).ok());
  ASSERT_EQ(with_own.table_filter, &holder2);
  EXPECT_FALSE((*with_own.table_filter)(file));

  // The public form with a holder, on this RocksDB: a bounded scan of the file's keys reads it,
  // and one of an empty range skips it.
  ReadOptions real;
  real.iterate_lower_bound = &l;
  real.iterate_upper_bound = &u;
  TableFilterHolder real_holder;
  ASSERT_TRUE(SkipEmptyFiles(&real, &real_holder).ok());
  EXPECT_TRUE(SkipEmptyFiles(&real, nullptr).IsInvalidArgument());
  EXPECT_EQ(CountFrom(db.get(), real, lower), 10u);
  const std::string empty_lower = Id(0), empty_upper = Id(50);
  const Slice el(empty_lower), eu(empty_upper);
  ReadOptions empty;
  empty.iterate_lower_bound = &el;
  empty.iterate_upper_bound = &eu;
  TableFilterHolder empty_holder;
  ASSERT_TRUE(SkipEmptyFiles(&empty, &empty_holder).ok());
  ExpectScan(db.get(), empty, empty_lower, /*keys=*/0, /*skipped=*/1);
}

// Ordered keys in files of disjoint ranges at several levels, with a gap: scans of the gap skip
// every file, and scans that find keys return what iterators without the filter return.
TEST(RangeFilterDb, BoundedScansSkipFilesThatHoldNothingInTheBounds) {
  TempDir dir("range_skip");
  Options options = RangeOptions(true);
  auto db = MustOpen(options, dir.path());
  ASSERT_NE(db, nullptr);
  for (uint32_t id = 0; id < 60000; ++id) {
    if (id % 1000 < 500) continue;  // gaps: ids 0-499, 1000-1499, ... hold nothing
    ASSERT_TRUE(db->Put(WriteOptions(), KeyOf(id), "v" + std::to_string(id)).ok());
    if (id % 5000 == 4999) {
      ASSERT_TRUE(db->Flush({}).ok());
    }
  }
  ASSERT_TRUE(db->Flush({}).ok());
  WaitForCompactions(db.get());
  for (int round = 0; round < 2; ++round) {
    FileCounts empty_counts, found_counts;
    for (uint32_t start = 0; start < 60000; start += 1000) {
      for (const auto& [lo, hi, counts] : {std::tuple{start + 100, start + 400, &empty_counts},
                                           std::tuple{start + 400, start + 600, &found_counts}}) {
        const std::string lower = Id(lo), upper = Id(hi);
        const Slice lower_slice(lower), upper_slice(upper);
        ReadOptions plain;
        plain.iterate_lower_bound = &lower_slice;
        plain.iterate_upper_bound = &upper_slice;
        ReadOptions skipping = plain;
        ASSERT_TRUE(SkipEmptyFiles(&skipping).ok());
        CountFiles(&skipping, counts);
        for (bool forward : {true, false}) {
          std::unique_ptr<Iterator> a(db->NewIterator(plain));
          std::unique_ptr<Iterator> b(db->NewIterator(skipping));
          Status sa, sb;
          const std::string target = forward ? lower : upper;
          const Entries expected = Scan(a.get(), target, forward, &sa);
          EXPECT_EQ(Scan(b.get(), target, forward, &sb), expected) << lo << " " << forward;
          ASSERT_TRUE(sa.ok() && sb.ok());
          EXPECT_EQ(expected.empty(), hi <= start + 500) << lo;
        }
      }
    }
    // Every file an empty scan met was skipped; scans that find keys read at least the files
    // that hold them.
    EXPECT_GT(empty_counts.asked, 0u);
    EXPECT_EQ(empty_counts.skipped, empty_counts.asked);
    EXPECT_LT(found_counts.skipped, found_counts.asked);
    // The same after a reopen (the filters come back with the files' properties).
    db.reset();
    db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
  }
}

// Files written without the collector have no filter: never skipped, until compactions rewrite
// them; and a file whose keys are all deleted by a range deletion is not skipped in its reach.
TEST(RangeFilterDb, FilesWithoutTheFilterAndRangeDeletions) {
  TempDir dir("range_old_files");
  {
    auto db = MustOpen(RangeOptions(false), dir.path());
    ASSERT_NE(db, nullptr);
    for (uint32_t id = 0; id < 100; ++id) ASSERT_TRUE(db->Put(WriteOptions(), Id(id), "old").ok());
    ASSERT_TRUE(db->Flush({}).ok());
  }
  Options options = RangeOptions(true);
  options.disable_auto_compactions = true;
  auto db = MustOpen(options, dir.path());
  ASSERT_NE(db, nullptr);
  for (uint32_t id = 1000; id < 1100; ++id)
    ASSERT_TRUE(db->Put(WriteOptions(), Id(id), "new").ok());
  ASSERT_TRUE(db->Flush({}).ok());
  // Deletes ids 500..2000 in a file of its own: it reaches the newer file's keys.
  ASSERT_TRUE(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), Id(500), Id(2000)).ok());
  ASSERT_TRUE(db->Flush({}).ok());
  auto count = [&](uint32_t lo, uint32_t hi, FileCounts* counts) {
    const std::string lower = Id(lo), upper = Id(hi);
    const Slice l(lower), u(upper);
    ReadOptions ro;
    ro.iterate_lower_bound = &l;
    ro.iterate_upper_bound = &u;
    EXPECT_TRUE(SkipEmptyFiles(&ro).ok());
    CountFiles(&ro, counts);
    std::unique_ptr<Iterator> it(db->NewIterator(ro));
    size_t n = 0;
    for (it->Seek(lower); it->Valid(); it->Next()) ++n;
    EXPECT_TRUE(it->status().ok());
    return n;
  };
  FileCounts old_range, deleted_range, empty_range;
  EXPECT_EQ(count(10, 20, &old_range), 10u);  // the old file holds them: read
  EXPECT_EQ(old_range.asked, 3u);
  EXPECT_EQ(old_range.skipped, 2u);  // the new file and the range deletion's
  EXPECT_EQ(count(1010, 1020, &deleted_range), 0u);
  // Nothing is skipped: the old file has no filter, the new one holds ids 1010..1019 (deleted),
  // and the range deletion's file reaches them.
  EXPECT_EQ(deleted_range.skipped, 0u);
  EXPECT_EQ(count(300, 400, &empty_range), 0u);
  EXPECT_EQ(empty_range.skipped, 2u);  // only the old file, which has no filter, is read
  ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
  FileCounts after;
  EXPECT_EQ(count(300, 400, &after), 0u);
  EXPECT_EQ(after.skipped, after.asked);  // rewritten: every file has a filter now
}

// The model-based test: SSTFILTER_MODEL_OPS operations (default 1,000,000; 100,000 in sanitizer
// builds), every tenth a bounded scan compared three ways.
TEST(RangeFilterDb, ModelBasedScansAgreeWithAndWithoutTheFilter) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  uint64_t ops = 100000;
#else
  uint64_t ops = 1000000;
#endif
  if (const char* env = std::getenv("SSTFILTER_MODEL_OPS")) ops = std::strtoull(env, nullptr, 10);
  TempDir dir("range_model");
  std::mt19937_64 rng(20261126);
  constexpr uint32_t kIds = 1 << 17;
  std::vector<std::map<std::string, std::string>> model(2);
  struct KeyState {
    int puts = 0;
  };
  std::vector<std::map<std::string, KeyState>> single_delete_ok(2);
  std::vector<std::string> names = {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName, "second"};
  std::unique_ptr<DB> db;
  std::vector<ColumnFamilyHandle*> handles;
  auto close = [&] {
    for (auto* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    handles.clear();
    db.reset();
  };
  const ROCKSDB_NAMESPACE::Snapshot* snapshot = nullptr;
  auto reopen = [&](bool with_collector) {
    if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
    snapshot = nullptr;
    if (db) close();
    Options options = RangeOptions(with_collector);
    std::vector<ColumnFamilyDescriptor> cfs;
    for (const auto& name : names) cfs.emplace_back(name, ColumnFamilyOptions(options));
    const Status s = sstfilter::compat::OpenDb(ROCKSDB_NAMESPACE::DBOptions(options), dir.path(),
                                               cfs, &handles, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  struct CloseAtEnd {
    std::function<void()> close;
    ~CloseAtEnd() { close(); }
  } close_at_end{[&] {
    if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
    snapshot = nullptr;
    if (db) close();
  }};
  reopen(false);  // the first files have no filter
  uint64_t scans = 0, skipped = 0, asked = 0, found_entries = 0;
  uint64_t snapshot_scans = 0;
  uint32_t center = 0;
  for (uint64_t op = 0; op < ops; ++op) {
    if (op % 200 == 0) center = static_cast<uint32_t>(rng() % kIds);  // writes come in bursts
    if (op == ops / 20 || (op > 0 && op % 100000 == 0)) reopen(true);
    const int c = static_cast<int>(rng() % 2);
    auto& m = model[c];
    auto& sd = single_delete_ok[c];
    const uint32_t id = (center + static_cast<uint32_t>(rng() % 2000)) % kIds;
    // Keys of space 's' only ever see Put (when absent) and SingleDelete (after one Put), the use
    // RocksDB defines for SingleDelete; space 'k' sees puts, deletes, merges and range deletions.
    const char space = rng() % 8 == 0 ? 's' : 'k';
    const std::string key = KeyOf(id, space);
    const uint64_t dice = rng() % 10000;
    if (op % 10 == 9) {
      // A bounded scan, compared three ways.
      const uint32_t lo = static_cast<uint32_t>(rng() % kIds);
      const uint32_t length = 1 + static_cast<uint32_t>(rng() % (rng() % 2 ? 16 : 400));
      const std::string lower = (rng() % 3 == 0) ? KeyOf(lo, space) : Id(lo, space);
      const std::string upper = Id(std::min(kIds, lo + length), space);
      const Slice l(lower), u(upper);
      ReadOptions plain;
      plain.iterate_lower_bound = &l;
      plain.iterate_upper_bound = &u;
      plain.snapshot = (snapshot != nullptr && rng() % 2) ? snapshot : nullptr;
      ReadOptions skipping = plain;
      ASSERT_TRUE(SkipEmptyFiles(&skipping).ok());
      FileCounts counts;
      CountFiles(&skipping, &counts);
      const bool forward = rng() % 2;
      // A target inside the bounds, or outside them (clamped by RocksDB).
      const uint32_t t = lo + static_cast<uint32_t>(rng() % (length + 2));
      const std::string target =
          rng() % 4 == 0 ? (forward ? lower : upper) : Id(t > 0 ? t - 1 : 0, space);
      std::unique_ptr<Iterator> a(db->NewIterator(plain, handles[c]));
      std::unique_ptr<Iterator> b(db->NewIterator(skipping, handles[c]));
      Status sa, sb;
      const Entries with_filter = Scan(b.get(), target, forward, &sb);
      const Entries without = Scan(a.get(), target, forward, &sa);
      ASSERT_TRUE(sa.ok()) << sa.ToString();
      ASSERT_TRUE(sb.ok()) << sb.ToString();
      ASSERT_TRUE(with_filter == without)
          << "op " << op << " lower id " << lo << " length " << length << ", with the filter "
          << FirstDifference(with_filter, without);
      if (plain.snapshot == nullptr) {
        const Entries expected = ModelScan(m, lower, upper, target, forward);
        ASSERT_TRUE(without == expected)
            << "op " << op << ", RocksDB " << FirstDifference(without, expected);
      } else {
        ++snapshot_scans;
      }
      ++scans;
      found_entries += without.size();
      asked += counts.asked;
      skipped += counts.skipped;
    } else if (space == 's') {
      // Put when absent, SingleDelete after that one Put.
      auto it = sd.find(key);
      if (it == sd.end()) {
        const std::string value = std::to_string(op);
        ASSERT_TRUE(db->Put(WriteOptions(), handles[c], key, value).ok());
        m[key] = value;
        sd[key].puts = 1;
      } else {
        ASSERT_TRUE(db->SingleDelete(WriteOptions(), handles[c], key).ok());
        m.erase(key);
        sd.erase(it);
      }
    } else if (dice < 5500) {
      const std::string value = std::to_string(op);
      ASSERT_TRUE(db->Put(WriteOptions(), handles[c], key, value).ok());
      m[key] = value;
    } else if (dice < 7000) {
      ASSERT_TRUE(db->Delete(WriteOptions(), handles[c], key).ok());
      m.erase(key);
    } else if (dice < 8500) {
      const std::string operand = "m" + std::to_string(op % 1000);
      ASSERT_TRUE(db->Merge(WriteOptions(), handles[c], key, operand).ok());
      auto it = m.find(key);
      if (it == m.end()) {
        m[key] = operand;
      } else {
        it->second += "," + operand;
      }
    } else if (dice < 8510) {
      const uint32_t end = std::min(kIds, id + 1 + static_cast<uint32_t>(rng() % 300));
      const std::string begin_key = Id(id), end_key = Id(end);
      ASSERT_TRUE(db->DeleteRange(WriteOptions(), handles[c], begin_key, end_key).ok());
      for (auto it = m.lower_bound(begin_key); it != m.end() && it->first < end_key;) {
        it = m.erase(it);
      }
    } else if (dice < 8530) {
      ASSERT_TRUE(db->Flush({}, handles[c]).ok());
    } else if (dice < 8533) {
      const uint32_t a = static_cast<uint32_t>(rng() % kIds);
      const std::string from = Id(a), to = Id(std::min(kIds, a + kIds / 8));
      const Slice f(from), t(to);
      ASSERT_TRUE(db->CompactRange({}, handles[c], &f, &t).ok());
    } else if (dice < 8536) {
      if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
      snapshot = rng() % 2 ? db->GetSnapshot() : nullptr;
    }
  }
  close_at_end.close();
  std::printf(
      "model-based test: %llu operations, %llu bounded scans (%llu at a snapshot), %llu "
      "entries found, %llu of %llu files skipped\n",
      static_cast<unsigned long long>(ops), static_cast<unsigned long long>(scans),
      static_cast<unsigned long long>(snapshot_scans),
      static_cast<unsigned long long>(found_entries), static_cast<unsigned long long>(skipped),
      static_cast<unsigned long long>(asked));
  // The test skips files, and finds entries: it could have failed.
  EXPECT_GT(skipped, asked / 10);
  if (ops >= 100000) {
    EXPECT_GT(found_entries, scans);
  }
}

}  // namespace
}  // namespace sstfilter
