// SPDX-License-Identifier: Apache-2.0
// Writes and checks the databases of the upgrade test (tests/versions/upgrade_test.sh), which runs
// this program as built against each RocksDB in turn: a database written with sstfilter on one
// RocksDB must keep every key and keep its filters working on another.
//
//   upgrade_tool write DIR                 one database per policy under DIR
//   upgrade_tool verify DIR [--read-write]
//
// verify opens each database (read-only unless --read-write, so that an older RocksDB can open it
// again afterwards) with its policy and checks that every key is found, that absent keys are
// turned away by the filters (RocksDB's statistics: the filters' "no" and "may match"), and that
// every SST file has an sstfilter filter. With --read-write it first writes more keys and compacts
// everything, so that every file is rewritten by this RocksDB, and then checks. It prints a line
// per database and exits non-zero on the first failed check.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compat/rocksdb_api.h"
#include "db_bench_ext/settle.h"
#include "sstfilter/inspect.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace {

// One database per configuration of every policy, named by its label.
using Database = sstfilter::PolicyConfig;
constexpr const auto& kDatabases = sstfilter::kPolicyConfigs;
constexpr uint64_t kKeys = 30000;        // present: even numbers 0, 2, ..., 2 * (kKeys - 1)
constexpr uint64_t kAbsent = 20000;      // looked up: odd numbers
constexpr uint64_t kMoreKeys = 10000;    // --read-write adds numbers from kMoreBase on
constexpr uint64_t kMoreBase = 1000000;  // even too, beyond the first keys

std::string Key(uint64_t i) { return sstfilter::testing::NumberedKey(i, 10); }
std::string Value(uint64_t i) { return "value" + std::to_string(i); }

[[noreturn]] void Fail(const std::string& what) {
  fprintf(stderr, "upgrade_tool: %s\n", what.c_str());
  exit(1);
}

rocksdb::Options OptionsFor(const char* policy_uri) {
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  const rocksdb::Status s = sstfilter::NewFilterPolicy(policy_uri, &policy);
  if (!s.ok()) Fail(std::string(policy_uri) + ": " + s.ToString());
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  rocksdb::Options options;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.statistics = rocksdb::CreateDBStatistics();
  options.write_buffer_size = 256 << 10;  // many files over several levels
  options.target_file_size_base = 256 << 10;
  options.max_bytes_for_level_base = 1 << 20;
  options.level0_file_num_compaction_trigger = 2;
  options.level_compaction_dynamic_level_bytes = false;  // the default from 8.4 differs
  if (sstfilter::NeedsLeveledBudgetListener(policy_uri)) {
    options.listeners.push_back(sstfilter::NewLeveledBudgetListener());
  }
  return options;
}

void WaitForCompactions(rocksdb::DB* db) {
  const std::string why_not =
      db_bench_ext::WaitUntilSettled(db, std::chrono::milliseconds(10), std::chrono::minutes(10));
  if (!why_not.empty()) Fail(why_not);
}

void Put(rocksdb::DB* db, uint64_t i) {
  rocksdb::WriteOptions w;
  w.disableWAL = true;  // flushed below
  const rocksdb::Status s = db->Put(w, Key(i), Value(i));
  if (!s.ok()) Fail("put: " + s.ToString());
}

void Write(const std::string& dir) {
  for (const Database& d : kDatabases) {
    rocksdb::Options options = OptionsFor(d.uri);
    options.create_if_missing = true;
    options.error_if_exists = true;
    std::unique_ptr<rocksdb::DB> db;
    const rocksdb::Status s = sstfilter::compat::OpenDb(options, dir + "/" + d.label, &db);
    if (!s.ok()) Fail(std::string(d.label) + ": " + s.ToString());
    for (uint64_t i = 0; i < kKeys; ++i) Put(db.get(), 2 * i);
    if (!db->Flush(rocksdb::FlushOptions()).ok()) Fail("flush failed");
    WaitForCompactions(db.get());
    printf("RocksDB %s: wrote %s (%s)\n", rocksdb::GetRocksVersionAsString().c_str(), d.label,
           d.uri);
  }
}

void Verify(const std::string& dir, bool read_write) {
  for (const Database& d : kDatabases) {
    const std::string path = dir + "/" + d.label;
    rocksdb::Options options = OptionsFor(d.uri);
    std::unique_ptr<rocksdb::DB> db;
    const rocksdb::Status s = read_write ? sstfilter::compat::OpenDb(options, path, &db)
                                         : sstfilter::compat::OpenDbForReadOnly(options, path, &db);
    if (!s.ok()) Fail(std::string(d.label) + ": cannot open: " + s.ToString());
    bool more = read_write;
    std::string value;
    if (!more && db->Get(rocksdb::ReadOptions(), Key(2 * kMoreBase), &value).ok()) more = true;
    if (read_write) {
      for (uint64_t i = 0; i < kMoreKeys; ++i) Put(db.get(), 2 * (kMoreBase + i));
      if (!db->Flush(rocksdb::FlushOptions()).ok()) Fail("flush failed");
      rocksdb::CompactRangeOptions everything;
      everything.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
      const rocksdb::Status c = db->CompactRange(everything, nullptr, nullptr);
      if (!c.ok()) Fail(std::string(d.label) + ": compaction: " + c.ToString());
      WaitForCompactions(db.get());
    }
    uint64_t found = 0, wanted = 0;
    auto check = [&](uint64_t i) {
      ++wanted;
      found += db->Get(rocksdb::ReadOptions(), Key(i), &value).ok() && value == Value(i);
    };
    for (uint64_t i = 0; i < kKeys; ++i) check(2 * i);
    if (more) {
      for (uint64_t i = 0; i < kMoreKeys; ++i) check(2 * (kMoreBase + i));
    }
    rocksdb::Statistics& stats = *options.statistics;
    const sstfilter::compat::FilterTickers before = sstfilter::compat::FilterTickersOf(stats);
    uint64_t absent_found = 0;
    for (uint64_t i = 0; i < kAbsent; ++i) {
      absent_found += db->Get(rocksdb::ReadOptions(), Key(2 * i + 1), &value).ok();
    }
    const sstfilter::compat::FilterTickers lookups =
        sstfilter::compat::FilterTickersOf(stats) - before;
    const uint64_t negatives = lookups.negatives, positives = lookups.positives;
    std::vector<sstfilter::SstFilterInfo> files;
    const rocksdb::Status described = sstfilter::DescribeFilters(db.get(), &files);
    if (!described.ok()) Fail(std::string(d.label) + ": " + described.ToString());
    size_t without = 0;
    for (const sstfilter::SstFilterInfo& f : files) without += !f.has_sstfilter_filter();
    printf(
        "RocksDB %s: %s%s: %llu of %llu keys found; %llu of %llu absent keys found, filters "
        "said no %llu times and maybe %llu times; %zu SST files, %zu "
        "without an sstfilter "
        "filter\n",
        rocksdb::GetRocksVersionAsString().c_str(), d.label, read_write ? " (rewritten)" : "",
        static_cast<unsigned long long>(found), static_cast<unsigned long long>(wanted),
        static_cast<unsigned long long>(absent_found), static_cast<unsigned long long>(kAbsent),
        static_cast<unsigned long long>(negatives), static_cast<unsigned long long>(positives),
        files.size(), without);
    // Nearly every absent lookup meets a file whose filter says no (90%: every policy here is
    // at 1% or better), and few filters say "may match" (5%: far above those rates). Without
    // filters both counts are 0.
    if (negatives < kAbsent * 9 / 10 || positives > kAbsent / 20) {
      Fail(std::string(d.label) + ": the filters are not in use");
    }
    if (files.empty() || without != 0) Fail(std::string(d.label) + ": files without a filter");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "write") == 0 && argc == 3) {
    Write(argv[2]);
  } else if (argc >= 3 && std::strcmp(argv[1], "verify") == 0 &&
             (argc == 3 || (argc == 4 && std::strcmp(argv[3], "--read-write") == 0))) {
    Verify(argv[2], argc == 4);
  } else {
    fprintf(stderr, "usage: upgrade_tool write DIR | upgrade_tool verify DIR [--read-write]\n");
    return 2;
  }
  return 0;
}
