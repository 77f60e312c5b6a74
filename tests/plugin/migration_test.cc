// SPDX-License-Identifier: Apache-2.0
// Moving a live database between RocksDB's filters and sstfilter's (docs/filters.md, "Moving an
// existing database"): sstfilter's policies read RocksDB's filters, RocksDB's read sstfilter's as
// "may match", and databases sstfilter 0.1 wrote keep their filters under compatibility=sstfilter.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/filter_spec.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/parse.h"
#include "sstfilter/inspect.h"
#include "tests/plugin/db_fixture.h"

namespace sstfilter::testing {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

constexpr int kDigits = 8;

// Written keys are even, absent ones odd: within every file's key range, so that only a filter
// keeps a lookup from the file's data.
std::string Key(uint64_t i) { return NumberedKey(2 * i, kDigits); }
std::string AbsentKey(uint64_t i) { return NumberedKey(2 * i + 1, kDigits); }
std::string ValueOf(uint64_t i) { return "v" + std::to_string(i * 7); }

// Every filter sstfilter writes, read by RocksDB's own readers (a built-in policy's public
// GetFilterBitsReader, as RocksDB reads a file after a rollback): "may match" for every key,
// whatever the kind and however many keys it holds.
TEST(Migration, RocksDbsReadersTakeEveryFilterSstFilterWritesAsMayMatch) {
  std::vector<std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>> builtin = {
      PolicyFrom("bloomfilter:10"), PolicyFrom("ribbonfilter:10")};
  std::vector<FilterSpec> specs = OneSpecOfEachKind();
  int compact = 0;
  for (uint64_t count : {0u, 1u, 7u, 1000u, 20000u}) {
    const std::vector<uint64_t> hashes = KeyHashes(count, count);
    std::vector<std::string> filters = {MatchAllFilter(count)};
    for (const FilterSpec& spec : specs)
      filters.push_back(BuildFilter(spec, hashes.data(), hashes.size()).value());
    for (const std::string& filter : filters) {
      const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
      ParsedFilter parsed;
      ASSERT_TRUE(ParseFilter(data, filter.size(), &parsed));
      // Layout 2 ends in the marker RocksDB reserves; the compact layout 3 (a small Ribbon filter)
      // in a byte -5 of 0, RocksDB's "zero probes".
      const TrailerLayout layout = TrailerLayoutOf(data, filter.size());
      if (layout == TrailerLayout::kLayout2) {
        EXPECT_EQ(filter.substr(filter.size() - kMarkerBytes),
                  std::string(reinterpret_cast<const char*>(kRocksDbUnknownMarker), kMarkerBytes));
      } else {
        ASSERT_EQ(layout, TrailerLayout::kCompact);
        EXPECT_EQ(filter[filter.size() - kMarkerBytes], '\0');
        ++compact;
      }
      for (const auto& policy : builtin) {
        std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
            policy->GetFilterBitsReader(Slice(filter)));
        ASSERT_NE(reader, nullptr);
        uint64_t no = 0;
        for (uint64_t i = 0; i < 2000; ++i) {
          const std::string key = (i % 2 ? Key(i) : AbsentKey(i));
          no += reader->MayMatch(Slice(key)) ? 0 : 1;
        }
        EXPECT_EQ(no, 0u) << policy->Name() << " on " << count << " keys, kind "
                          << FilterKindName(parsed.trailer.kind);
      }
    }
  }
  EXPECT_GT(compact, 0) << "no filter here has the compact trailer";
}

// A built-in configuration a database may have been written with.
struct BuiltinCase {
  const char* label;
  const char* uri;
  const char* format;  // the format its files' filters have (ReadFilterFormats)
  int format_version;  // below 5: RocksDB's legacy Bloom format
  bool partitioned;
  bool prefix;  // a prefix extractor: the filters hold prefixes as well as whole keys
};

constexpr BuiltinCase kBuiltinCases[] = {
    {"bloom_full", "bloomfilter:10", "rocksdb:fast_local_bloom", 5, false, false},
    {"bloom_partitioned", "bloomfilter:10", "rocksdb:fast_local_bloom", 5, true, false},
    {"ribbon_full", "ribbonfilter:10:-1", "rocksdb:ribbon", 5, false, false},
    {"ribbon_partitioned_prefix", "ribbonfilter:10:-1", "rocksdb:ribbon", 5, true, true},
    {"legacy_bloom_full", "bloomfilter:10", "rocksdb:legacy_bloom", 4, false, false},
    {"bloom_full_prefix", "bloomfilter:10", "rocksdb:fast_local_bloom", 5, false, true},
};

Options OptionsUnder(const BuiltinCase& c, const std::string& uri) {
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
  table.format_version = c.format_version;
  if (c.partitioned) {
    table.partition_filters = true;
    table.index_type = ROCKSDB_NAMESPACE::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 1024;
  }
  Options options = OptionsFor(uri, table);
  options.write_buffer_size = 256 << 10;
  options.target_file_size_base = 256 << 10;
  if (c.prefix) options.prefix_extractor.reset(ROCKSDB_NAMESPACE::NewFixedPrefixTransform(6));
  return options;
}

void Write(DB* db, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; ++i) {
    ASSERT_TRUE(db->Put(ROCKSDB_NAMESPACE::WriteOptions(), Key(i), ValueOf(i)).ok());
  }
  ASSERT_TRUE(db->Flush(ROCKSDB_NAMESPACE::FlushOptions()).ok());
}

// Every key of [0, keys) read back with its value, and the absent keys of [absent_from, absent_to)
// not found; what the filters said to the absent lookups.
FilterCounts ReadBack(DB* db, const Options& options, uint64_t keys, uint64_t absent_from,
                      uint64_t absent_to) {
  for (uint64_t i = 0; i < keys; ++i) {
    std::string value;
    const Status s = db->Get(ReadOptions(), Key(i), &value);
    EXPECT_TRUE(s.ok()) << Key(i) << ": " << s.ToString();
    EXPECT_EQ(value, ValueOf(i));
    if (!s.ok()) break;
  }
  const FilterCounts before = FilterCountsOf(*options.statistics);
  for (uint64_t i = absent_from; i < absent_to; ++i) {
    std::string value;
    const Status s = db->Get(ReadOptions(), AbsentKey(i), &value);
    EXPECT_TRUE(s.IsNotFound()) << AbsentKey(i) << ": " << s.ToString();
  }
  return FilterCountsOf(*options.statistics) - before;
}

// Each live file's filter, "<family> <format>", as the operator's report reads it, with the
// number of files that have it.
std::map<std::string, int> FiltersOf(DB* db) {
  std::vector<SstFilterInfo> files;
  EXPECT_TRUE(DescribeFilters(db, &files).ok());
  EXPECT_TRUE(ReadFilterFormats(db, &files).ok());
  std::map<std::string, int> out;
  for (const SstFilterInfo& f : files) ++out[f.filter_family + " " + f.filter_format];
  return out;
}

class SwitchFromRocksDb : public ::testing::TestWithParam<BuiltinCase> {};

// The operator's sequence: a database written under RocksDB's filter, switched to sstfilter (every
// policy in turn), written to, and rolled back. Right after the switch, the absent lookups get the
// very answers RocksDB's filters gave them (the same filters, read by RocksDB's reader); after the
// rollback every key is found and no absent one, with sstfilter's file unfiltered.
TEST_P(SwitchFromRocksDb, KeepsEveryFileFilteredAndRollsBackWithoutAWrongAnswer) {
  const BuiltinCase& c = GetParam();
  constexpr uint64_t kKeys = 20000, kMore = 4000, kAbsent = 4000;
  TempDir dir(std::string("migration_") + c.label);
  FilterCounts under_rocksdb;
  {
    const Options options = OptionsUnder(c, c.uri);
    auto db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    Write(db.get(), 0, kKeys);
    ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
    under_rocksdb = ReadBack(db.get(), options, kKeys, 0, kAbsent);
    const std::map<std::string, int> filters = FiltersOf(db.get());
    ASSERT_EQ(filters.size(), 1u) << c.label;
    EXPECT_EQ(filters.begin()->first, std::string(kRocksDbCompatibilityName) + " " + c.format);
  }
  // RocksDB's filters answered: most absent lookups stopped at a filter.
  ASSERT_GT(under_rocksdb.negatives, under_rocksdb.checks() * 9 / 10) << c.label;

  for (const char* uri : EveryPolicy()) {
    Options options = OptionsUnder(c, uri);
    options.disable_auto_compactions = true;  // the files as RocksDB's filter wrote them
    auto db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    const FilterCounts switched = ReadBack(db.get(), options, kKeys, 0, kAbsent);
    if (InSstFilterFamily(uri)) {  // sstfilter 0.1's name: RocksDB's filters are not found
      EXPECT_EQ(switched.checks(), 0u) << c.label << " under " << uri;
      continue;
    }
    EXPECT_EQ(switched.negatives, under_rocksdb.negatives) << c.label << " under " << uri;
    EXPECT_EQ(switched.positives, under_rocksdb.positives) << c.label << " under " << uri;
  }

  // Written to under sstfilter: its new file, beside RocksDB's, filters too (the absent keys of
  // its key range).
  const char* sstfilter_uri = "sstfilter.Leveled:10";
  {
    const Options options = OptionsUnder(c, sstfilter_uri);
    auto db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    Write(db.get(), kKeys, kKeys + kMore);
    const FilterCounts mixed = ReadBack(db.get(), options, kKeys + kMore, kKeys, kKeys + kMore);
    EXPECT_GT(mixed.negatives, mixed.checks() * 9 / 10) << c.label;
    int sstfilter_files = 0;
    for (const auto& [filter, files] : FiltersOf(db.get())) {
      EXPECT_EQ(filter.rfind(std::string(kRocksDbCompatibilityName) + " ", 0), 0u) << filter;
      if (filter.find(" sstfilter:") != std::string::npos) sstfilter_files += files;
    }
    EXPECT_EQ(sstfilter_files, 1) << c.label;  // the one flush
    // Per level, the operator's report names both families' formats.
    std::vector<SstFilterInfo> files;
    ASSERT_TRUE(DescribeFilters(db.get(), &files).ok());
    ASSERT_TRUE(ReadFilterFormats(db.get(), &files).ok());
    const std::string by_level = FormatFiltersByLevel(files);
    EXPECT_NE(by_level.find(std::string(c.format) + " "), std::string::npos) << by_level;
    EXPECT_NE(by_level.find("sstfilter:"), std::string::npos) << by_level;
    EXPECT_EQ(by_level.find("[sstfilter]"), std::string::npos) << by_level;
  }

  // Rolled back: every key, and no absent one; sstfilter's file answers "may match".
  {
    Options options = OptionsUnder(c, c.uri);
    options.disable_auto_compactions = true;
    auto db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(ReadBack(db.get(), options, kKeys + kMore, 0, kAbsent).positives,
              under_rocksdb.positives)
        << c.label;  // RocksDB's own files, as before
    // Each absent lookup in the range of sstfilter's file (all but the one past its last key)
    // reaches it, and it says "may match".
    const FilterCounts rolled_back =
        ReadBack(db.get(), options, kKeys + kMore, kKeys, kKeys + kMore);
    EXPECT_EQ(rolled_back.positives, rolled_back.checks()) << c.label;
    EXPECT_GE(rolled_back.positives, kMore - 1) << c.label;
    // Compacted under RocksDB's filter again, every file is RocksDB's. kForce: a file that
    // overlaps no other would otherwise move down the levels with the filter it has.
    ROCKSDB_NAMESPACE::CompactRangeOptions rewrite;
    rewrite.bottommost_level_compaction = ROCKSDB_NAMESPACE::BottommostLevelCompaction::kForce;
    ASSERT_TRUE(db->CompactRange(rewrite, nullptr, nullptr).ok());
    const FilterCounts recompacted = ReadBack(db.get(), options, kKeys + kMore, 0, kKeys + kMore);
    EXPECT_GT(recompacted.negatives, recompacted.checks() * 9 / 10) << c.label;
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, SwitchFromRocksDb, ::testing::ValuesIn(kBuiltinCases),
                         [](const auto& info) { return std::string(info.param.label); });

// A database sstfilter 0.1 wrote (tests/data/v0.1-layout1: its files' filter blocks are named
// "sstfilter", in trailer layout 1), copied and opened with its own OPTIONS file.
struct Release01Db {
  const char* dir;
  const char* uri;  // the policy its OPTIONS file names
};

constexpr Release01Db kRelease01Dbs[] = {
    {"leveled_full", "{id=sstfilter.Leveled;bits_per_key=10"},
    {"bloom_partitioned", "{id=sstfilter.Bloom;bits_per_key=10"},
    {"ribbon_full", "{id=sstfilter.Ribbon;bits_per_key=10"},  // BumpedRibbon's former name
    {"cuckoo_partitioned", "{id=sstfilter.Cuckoo;bits_per_key=12"},
    {"fuse_full", "{id=sstfilter.Fuse;fp_rate=0.01"},
};

// The database's keys, in order, read by an iterator (no filter involved).
std::vector<std::string> KeysOf(DB* db) {
  std::vector<std::string> keys;
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
  EXPECT_TRUE(it->status().ok());
  return keys;
}

// A lookup of an absent key just after each of `keys` (its key and a byte 1: inside the files' key
// ranges); what the filters said.
FilterCounts LookUpAbsent(DB* db, const Options& options, const std::vector<std::string>& keys) {
  const FilterCounts before = FilterCountsOf(*options.statistics);
  for (const std::string& k : keys) {
    std::string value;
    const Status s = db->Get(ReadOptions(), k + '\x01', &value);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  }
  return FilterCountsOf(*options.statistics) - before;
}

// Its options, from its OPTIONS file loaded strictly, with the policy `uri` names.
Options LoadedOptions(const std::string& path, const std::string& uri) {
  ROCKSDB_NAMESPACE::DBOptions db_options;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> cfs;
  const Status s =
      ROCKSDB_NAMESPACE::LoadLatestOptions(StrictConfigOptions(), path, &db_options, &cfs);
  EXPECT_TRUE(s.ok()) << path << ": " << s.ToString();
  Options options(db_options,
                  cfs.empty() ? ROCKSDB_NAMESPACE::ColumnFamilyOptions() : cfs[0].options);
  options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
  if (!uri.empty()) {
    auto table = *TableOptionsOf(options);
    table.filter_policy = PolicyFrom(uri);
    options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
  }
  return options;
}

class Release01 : public ::testing::TestWithParam<Release01Db> {};

// With the OPTIONS file it has, every key of such a database is found, its files unfiltered (their
// filters carry the other family's name). With compatibility=sstfilter they filter again, and a
// database written on under it keeps every key.
TEST_P(Release01, KeepsItsFiltersUnderCompatibilitySstFilter) {
  const Release01Db& d = GetParam();
  TempDir dir(std::string("release01_") + d.dir);
  std::filesystem::copy(std::string(SSTFILTER_SOURCE_DIR) + "/tests/data/v0.1-layout1/" + d.dir,
                        dir.path());
  {  // --inspect_db's report says which name the files' filters carry, and who reads them.
    std::vector<SstFilterInfo> files;
    ASSERT_TRUE(DescribeFilters(dir.path(), &files).ok());
    const std::string report = FormatFilterReport(files);
    EXPECT_NE(report.find(" [sstfilter]"), std::string::npos) << report;
    EXPECT_NE(report.find("only a policy with compatibility=sstfilter reads them"),
              std::string::npos)
        << report;
  }
  std::vector<std::string> keys;
  {
    const Options options = LoadedOptions(dir.path(), "");
    auto db = MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    keys = KeysOf(db.get());
    ASSERT_GT(keys.size(), 1000u) << d.dir;
    // The report says which family's name the files' filters carry.
    for (const auto& [filter, files] : FiltersOf(db.get())) {
      EXPECT_EQ(filter.rfind(std::string(kSstFilterCompatibilityName) + " sstfilter:", 0), 0u)
          << d.dir << ": " << filter;
    }
    for (const std::string& k : keys) {
      std::string value;
      EXPECT_TRUE(db->Get(ReadOptions(), k, &value).ok()) << d.dir << " " << k;
    }
    EXPECT_EQ(LookUpAbsent(db.get(), options, keys).checks(), 0u) << d.dir;
  }
  const Options options =
      LoadedOptions(dir.path(), std::string(d.uri) + ";compatibility=sstfilter}");
  auto db = MustOpen(options, dir.path());
  ASSERT_NE(db, nullptr);
  for (const std::string& k : keys) {
    std::string value;
    EXPECT_TRUE(db->Get(ReadOptions(), k, &value).ok()) << d.dir << " " << k;
  }
  const FilterCounts filtered = LookUpAbsent(db.get(), options, keys);
  EXPECT_GT(filtered.checks(), 0u) << d.dir;
  EXPECT_GT(filtered.negatives, filtered.checks() * 9 / 10) << d.dir;
  // Written on and compacted under it: every key still there.
  for (uint64_t i = 0; i < 3000; ++i) {  // "key..." keys: db_bench's keys are 8 binary bytes first
    ASSERT_TRUE(db->Put(ROCKSDB_NAMESPACE::WriteOptions(), Key(i), ValueOf(i)).ok());
  }
  ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
  for (const std::string& k : keys) {
    std::string value;
    EXPECT_TRUE(db->Get(ReadOptions(), k, &value).ok()) << d.dir << " " << k;
  }
  const std::vector<std::string> after = KeysOf(db.get());
  EXPECT_EQ(after.size(), keys.size() + 3000) << d.dir;
}

INSTANTIATE_TEST_SUITE_P(Data, Release01, ::testing::ValuesIn(kRelease01Dbs),
                         [](const auto& info) { return std::string(info.param.dir); });

}  // namespace
}  // namespace sstfilter::testing
