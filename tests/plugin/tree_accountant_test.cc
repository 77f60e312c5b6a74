// SPDX-License-Identifier: Apache-2.0
// The listener's bookkeeping without a database (plugin/tree_accountant.h): live files into each
// level's keys and filter bytes, a running compaction's inputs counted where their keys are going,
// files it does not know counted unmeasured until learned, files no longer live forgotten, a
// reopened database's session starting over, and the table in creation named only once an event
// has named the session.
#include "plugin/tree_accountant.h"

#include <gtest/gtest.h>
#include <rocksdb/metadata.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sstfilter {
namespace {

const char* const kDb = "/db";
const char* const kCf = "default";

ROCKSDB_NAMESPACE::LiveFileMetaData Live(uint64_t number, int level, uint64_t entries,
                                         const char* smallest, const char* largest) {
  ROCKSDB_NAMESPACE::LiveFileMetaData f;
  f.column_family_name = kCf;
  f.level = level;
  f.file_number = number;
  f.directory = kDb;
  f.relative_filename = std::to_string(number) + ".sst";
  f.smallestkey = smallest;
  f.largestkey = largest;
  f.num_entries = entries;
  return f;
}

std::string PathOf(uint64_t number) {
  return std::string(kDb) + "/" + std::to_string(number) + ".sst";
}

FileFilter Filter(uint64_t entries, uint64_t bytes) {
  FileFilter f;
  f.filter_entries = entries;
  f.filter_bytes = bytes;
  return f;
}

TEST(TreeAccountant, CountsLiveFilesByLevelAndForgetsTheRest) {
  TreeAccountant accountant;
  accountant.Remember(kDb, "s1", PathOf(1), Filter(100, 125));
  accountant.Remember(kDb, "s1", PathOf(2), Filter(1000, 1000));
  accountant.Remember(kDb, "s1", PathOf(3), Filter(50, 60));  // never live: forgotten
  const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live = {
      Live(1, 0, 100, "a", "z"), Live(2, 1, 1000, "a", "z"), Live(4, 1, 500, "m", "n")};
  // File 4 is unknown: listed, and counted unmeasured while nothing is learned of it.
  const std::set<std::string> unknown = accountant.UnknownFiles(kDb, "s1", kCf, live);
  ASSERT_EQ(unknown, std::set<std::string>{PathOf(4)});
  TreeAccounts a = accountant.Account(kDb, "s1", nullptr, kCf, live, {}, /*changed=*/true);
  ASSERT_EQ(a.levels.size(), 2u);
  EXPECT_EQ(a.levels[0].keys, 100u);
  EXPECT_EQ(a.levels[0].filter_bytes, 125u);
  EXPECT_EQ(a.levels[0].filter_files, 1u);
  EXPECT_EQ(a.levels[1].keys, 1500u);
  EXPECT_EQ(a.levels[1].unmeasured_keys, 500u);
  EXPECT_EQ(a.levels[1].filter_bytes, 1000u);
  EXPECT_EQ(a.changes, 1u);
  EXPECT_EQ(a.level0_peak.keys, 100u);
  // Random ranges: every level probed once per lookup, level 0 once per file.
  EXPECT_NEAR(a.levels[0].probes, 1.0, 1e-9);
  EXPECT_NEAR(a.levels[1].probes, 1.0, 1e-9);
  // Counted unmeasured, file 4 is not asked for again; a compaction's table properties measure
  // it (Remember).
  EXPECT_TRUE(accountant.UnknownFiles(kDb, "s1", kCf, live).empty());
  accountant.Remember(kDb, "s1", PathOf(4), Filter(500, 400));
  a = accountant.Account(kDb, "s1", nullptr, kCf, live, {}, /*changed=*/false);
  EXPECT_EQ(a.levels[1].unmeasured_keys, 0u);
  EXPECT_EQ(a.levels[1].filter_bytes, 1400u);
  EXPECT_EQ(a.changes, 1u);
  // File 3, reported but never live, is kept for its job to install it; file 1, once live and
  // now gone, is forgotten: unknown should it appear again.
  a = accountant.Account(kDb, "s1", nullptr, kCf, {live[1], live[2]}, {}, /*changed=*/true);
  EXPECT_EQ(a.levels[0].keys, 0u);
  EXPECT_EQ(a.level0_peak.keys, 100u);  // level 0 at its fullest lately
  EXPECT_TRUE(accountant.UnknownFiles(kDb, "s1", kCf, {Live(3, 1, 50, "a", "b")}).empty());
  EXPECT_EQ(accountant.UnknownFiles(kDb, "s1", kCf, {live[0]}), std::set<std::string>{PathOf(1)});
}

TEST(TreeAccountant, ARunningCompactionsInputsCountWhereTheirKeysAreGoing) {
  TreeAccountant accountant;
  accountant.Remember(kDb, "s1", PathOf(1), Filter(100, 125));
  accountant.Remember(kDb, "s1", PathOf(2), Filter(1000, 1000));
  const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live = {Live(1, 0, 100, "a", "z"),
                                                                 Live(2, 1, 1000, "a", "z")};
  accountant.CompactionBegan(kDb, "s1", kCf, /*job_id=*/7, /*output_level=*/1, {1}, {});
  TreeAccounts a = accountant.Account(kDb, "s1", nullptr, kCf, live, {}, false);
  EXPECT_EQ(a.levels[0].keys, 0u);
  EXPECT_EQ(a.levels[1].pending_keys, 100u);
  EXPECT_EQ(a.levels[1].keys, 1000u);
  // Its filter is live until the compaction completes: a memory budget counts it, apart.
  EXPECT_EQ(a.levels[1].pending_filter_bytes, 125u);
  EXPECT_EQ(a.levels[1].filter_bytes, 1000u);
  // Level 0 as its files are: the input still counts there at its fullest.
  EXPECT_EQ(a.level0_peak.keys, 100u);
  accountant.CompactionCompleted(kDb, "s1", kCf, 7, {});
  a = accountant.Account(kDb, "s1", nullptr, kCf, {Live(2, 1, 1000, "a", "z")}, {}, true);
  EXPECT_EQ(a.levels[1].pending_keys, 0u);
  EXPECT_EQ(a.levels[1].pending_filter_bytes, 0u);
  EXPECT_EQ(a.levels[1].keys, 1000u);
}

TEST(TreeAccountant, ANewSessionStartsOverAndNamesTheTableInCreation) {
  TreeAccountant accountant;
  int logger = 0;
  TableInCreation table;
  // No event has named the session: no tree for a table in creation.
  EXPECT_FALSE(accountant.TableInCreationOf(kDb, kCf, &table));
  const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live = {Live(1, 0, 100, "a", "z")};
  TreeAccounts a = accountant.Account(kDb, "s1", &logger, kCf, {}, {}, true);
  // A table created once it is named (OnTableFileCreated) is known when it goes live.
  accountant.FileCreated(kDb, PathOf(1), Filter(100, 125));
  a = accountant.Account(kDb, "s1", &logger, kCf, live, {}, true);
  EXPECT_EQ(a.levels[0].filter_bytes, 125u);
  ASSERT_TRUE(accountant.TableInCreationOf(kDb, kCf, &table));
  EXPECT_EQ(table.tree, DatabaseTree(kDb, "s1", kCf));
  EXPECT_EQ(table.logger, &logger);
  // Reopened: a new session knows none of the old one's files, nor its changes.
  EXPECT_EQ(accountant.UnknownFiles(kDb, "s2", kCf, live), std::set<std::string>{PathOf(1)});
  a = accountant.Account(kDb, "s2", &logger, kCf, live, {}, false);
  EXPECT_EQ(a.levels[0].unmeasured_keys, 100u);
  EXPECT_EQ(a.changes, 0u);
  ASSERT_TRUE(accountant.TableInCreationOf(kDb, kCf, &table));
  EXPECT_EQ(table.tree, DatabaseTree(kDb, "s2", kCf));
}

}  // namespace
}  // namespace sstfilter
