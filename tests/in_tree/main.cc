// SPDX-License-Identifier: Apache-2.0
// A program linked statically against a librocksdb built with sstfilter inside it
// (scripts/build-into-rocksdb.sh). It uses RocksDB's public API only and nothing is preloaded: the
// filter policy (sstfilter.Leveled:10) and the range filter's table properties collector
// (sstfilter.RangeFilter) come from an options string, loaded strictly, as an application's
// configuration would give them. It proves that both are known to a static librocksdb with nothing
// else linked or loaded, and that both are used: the table properties name the policy and hold
// the range filter, and RocksDB's statistics count the reads the filter skipped.
//
//   in_tree_check DB_DIR
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <memory>
#include <string>

#include "../open_db.h"  // OpenDb

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: in_tree_check DB_DIR\n");
    return 2;
  }
  rocksdb::ConfigOptions strict;  // an unknown policy is an error, not "no filter"
  strict.ignore_unknown_options = false;
  strict.ignore_unsupported_options = false;
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::Status s = rocksdb::GetColumnFamilyOptionsFromString(
      strict, rocksdb::ColumnFamilyOptions(),
      "table_properties_collectors=sstfilter.RangeFilter;"
      "block_based_table_factory={filter_policy=sstfilter.Leveled:10}",
      &cf);
  if (!s.ok()) {
    fprintf(stderr, "in_tree_check: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb::Options options(rocksdb::DBOptions(), cf);
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.statistics = rocksdb::CreateDBStatistics();
  std::unique_ptr<rocksdb::DB> db;
  s = OpenDb(options, argv[1], &db);
  if (!s.ok()) {
    fprintf(stderr, "in_tree_check: %s\n", s.ToString().c_str());
    return 1;
  }
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; ++i) {
    s = db->Put(rocksdb::WriteOptions(), "key" + std::to_string(2 * i), "value");
    if (!s.ok()) break;
  }
  if (s.ok()) s = db->Flush(rocksdb::FlushOptions());
  rocksdb::TablePropertiesCollection tables;
  if (s.ok()) s = db->GetPropertiesOfAllTables(&tables);
  if (!s.ok()) {
    fprintf(stderr, "in_tree_check: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string names;
  bool all_sstfilter = !tables.empty();
  size_t range_filters = 0;
  for (const auto& [file, props] : tables) {
    names += props->filter_policy_name + " ";
    all_sstfilter = all_sstfilter && props->filter_policy_name == "sstfilter.Leveled";
    range_filters += props->user_collected_properties.count("sstfilter.range");
  }
  int found = 0, absent_found = 0;
  std::string value;
  for (int i = 0; i < kKeys; i += 10)
    found += db->Get(rocksdb::ReadOptions(), "key" + std::to_string(2 * i), &value).ok();
  const uint64_t skipped_before = options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  constexpr int kAbsent = 10000;
  for (int i = 0; i < kAbsent; ++i) {
    absent_found += db->Get(rocksdb::ReadOptions(), "key" + std::to_string(2 * i + 1), &value).ok();
  }
  const uint64_t skipped =
      options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL) - skipped_before;
  printf(
      "RocksDB %s with sstfilter built in: %zu SST file(s), filter policy %s, %zu with a range "
      "filter; %d of %d keys found; %d of %d absent keys found, %llu reads skipped by the "
      "filter\n",
      rocksdb::GetRocksVersionAsString().c_str(), tables.size(), names.c_str(), range_filters,
      found, kKeys / 10, absent_found, kAbsent, static_cast<unsigned long long>(skipped));
  const bool ok = all_sstfilter && range_filters == tables.size() && found == kKeys / 10 &&
                  absent_found == 0 && skipped >= static_cast<uint64_t>(kAbsent * 0.95);
  if (!ok) fprintf(stderr, "in_tree_check: the filter is not in use as it should be\n");
  return ok ? 0 : 1;
}
