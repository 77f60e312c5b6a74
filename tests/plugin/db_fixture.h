// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tests that run sstfilter inside RocksDB (tests/plugin/, tests/tools/):
// policies created from their strings, Options for a policy, a fresh temporary directory, opening
// a database, waiting for its compactions, and what RocksDB's statistics say the filters did.
// Helpers that need no RocksDB, the key format among them, are in tests/test_util.h.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/options_util.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "compat/rocksdb_api.h"
#include "core/filter_spec.h"
#include "core/hash.h"
#include "core/level_allocation.h"
#include "db_bench_ext/settle.h"
#include "plugin/listener_channel.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace sstfilter::testing {

// The policy `uri` names, created as an application creates it. A string that names none fails the
// test, and the result is then null.
inline std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> PolicyFrom(const std::string& uri) {
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;
  const ROCKSDB_NAMESPACE::Status s = NewFilterPolicy(uri, &policy);
  EXPECT_TRUE(s.ok()) << uri << ": " << s.ToString();
  return policy;
}

// The uri of every configuration in kPolicyConfigs (tests/policy_list.h) but those of the policy
// named `except` (none if empty), then `more`.
inline std::vector<const char*> EveryPolicyExcept(const std::string& except,
                                                  std::initializer_list<const char*> more = {}) {
  std::vector<const char*> uris;
  for (const PolicyConfig& c : kPolicyConfigs) {
    if (PolicyNameOf(c.uri) != except) uris.push_back(c.uri);
  }
  uris.insert(uris.end(), more.begin(), more.end());
  return uris;
}

// Every configuration, then `more`: what a test that covers every policy runs over.
inline std::vector<const char*> EveryPolicy(std::initializer_list<const char*> more = {}) {
  return EveryPolicyExcept("", more);
}

// Whether a configuration reads and writes under the name of sstfilter 0.1's family
// (compatibility=sstfilter), which reads neither RocksDB's filters nor the default family's.
inline bool InSstFilterFamily(const char* uri) {
  return std::strstr(uri, "compatibility=sstfilter") != nullptr;
}

// The configurations of the default family (compatibility=rocksdb): each reads the filters of the
// others, and RocksDB's.
inline std::vector<const char*> EveryPolicyOfTheDefaultFamily() {
  std::vector<const char*> uris;
  for (const char* uri : EveryPolicy()) {
    if (!InSstFilterFamily(uri)) uris.push_back(uri);
  }
  return uris;
}

// The key range [smallest, largest], as TreeHistory records a file's.
inline KeyRange RangeOf(const char* smallest, const char* largest) {
  KeyRange keys;
  keys.Add(smallest);
  keys.Add(largest);
  return keys;
}

// The filter an sstfilter policy builds (sstfilter.Leveled: its uniform filter, for files of
// unknown level, at nominal costs).
inline FilterSpec SpecOf(const ROCKSDB_NAMESPACE::FilterPolicy& policy) {
  return dynamic_cast<const SstFilterPolicy&>(policy).Spec().value();
}

// The smallest of the keys' hashes: what a mixed level's choice is drawn from (ChoiceForKeys).
inline uint64_t SmallestKeyHash(const std::vector<std::string>& keys) {
  uint64_t smallest = UINT64_MAX;
  for (const std::string& k : keys) smallest = std::min(smallest, KeyHash(k.data(), k.size()));
  return smallest;
}

// The filter sstfilter.Leveled builds for `keys` in a file of `level` in a tree of num_levels
// levels (1: a file of unknown level): the level's choice for that many keys, and on a mixed level
// the one these keys draw.
inline FilterChoice LeveledChoice(const LeveledPolicy& policy, int num_levels, int level,
                                  const std::vector<std::string>& keys) {
  const LevelFilter l = policy.Allocation(num_levels, keys.size()).value()[level];
  return ChoiceForKeys(l, SmallestKeyHash(keys));
}

// The filter an sstfilter policy builds for `keys` in a file of unknown level: the same for every
// policy but sstfilter.Leveled, whose choice of kind depends on the key count (and the keys).
inline FilterSpec SpecOf(const ROCKSDB_NAMESPACE::FilterPolicy& policy,
                         const std::vector<std::string>& keys) {
  if (const auto* leveled = dynamic_cast<const LeveledPolicy*>(&policy)) {
    return LeveledChoice(*leveled, /*num_levels=*/1, /*level=*/0, keys).spec;
  }
  return SpecOf(policy);
}

// The larger filter an sstfilter policy may build for num_keys keys in a file of unknown level:
// what the builder's size estimates use.
inline FilterSpec LargestSpecOf(const ROCKSDB_NAMESPACE::FilterPolicy& policy, uint64_t num_keys) {
  if (const auto* leveled = dynamic_cast<const LeveledPolicy*>(&policy)) {
    return leveled->Allocation(/*num_levels=*/1, num_keys).value()[0].Largest().spec;
  }
  return SpecOf(policy);
}

// Options for a database that is created if missing, counts into statistics of its own, and builds
// block-based tables with `table` and, unless `filter_uri` is empty, the policy it names.
inline ROCKSDB_NAMESPACE::Options OptionsFor(const std::string& filter_uri,
                                             ROCKSDB_NAMESPACE::BlockBasedTableOptions table = {}) {
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
  if (!filter_uri.empty()) table.filter_policy = PolicyFrom(filter_uri);
  options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
  if (NeedsLeveledBudgetListener(filter_uri.c_str())) {
    options.listeners.push_back(NewLeveledBudgetListener());
  }
  return options;
}

// A builder of `table`'s policy for a file of `level` in a leveled tree of 7 levels, `logger`'s
// `column_family`, written for `reason`, as if the sstfilter.LeveledBudget listener had published
// `accounts` for it (kept while `alive` lives, as a database's logger keeps them).
inline std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> BuilderWithAccounts(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table, const TreeAccounts& accounts,
    ROCKSDB_NAMESPACE::Logger* logger, const std::shared_ptr<const void>& alive,
    const std::string& column_family, int level,
    ROCKSDB_NAMESPACE::TableFileCreationReason reason =
        ROCKSDB_NAMESPACE::TableFileCreationReason::kMisc) {
  Ledger::Global().Publish(LoggerTree(logger, column_family), alive, accounts);
  ROCKSDB_NAMESPACE::FilterBuildingContext context(table);
  context.num_levels = 7;
  context.level_at_creation = level;
  context.reason = reason;
  context.info_log = logger;
  context.column_family_name = column_family;
  return std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder>(
      table.filter_policy->GetBuilderWithContext(context));
}

// The tree of a database's column family, as the sstfilter.LeveledBudget listener names it.
inline TreeId TreeOfDb(ROCKSDB_NAMESPACE::DB* db, const std::string& column_family = "default") {
  std::string session;
  EXPECT_TRUE(db->GetDbSessionId(session).ok());
  return DatabaseTree(db->GetName(), session, column_family);
}

// While it lives, this thread builds a table of `db`'s column family, as the listener tells the
// policy from OnTableFileCreationStarted: for a test that makes a builder itself.
class BuildingTableOf {
 public:
  explicit BuildingTableOf(ROCKSDB_NAMESPACE::DB* db,
                           const std::string& column_family = "default") {
    SetTableInCreation({TreeOfDb(db, column_family), db->GetDBOptions().info_log.get()});
  }
  ~BuildingTableOf() { ClearTableInCreation(); }
  BuildingTableOf(const BuildingTableOf&) = delete;
  BuildingTableOf& operator=(const BuildingTableOf&) = delete;
};

inline const ROCKSDB_NAMESPACE::BlockBasedTableOptions* TableOptionsOf(
    const ROCKSDB_NAMESPACE::Options& options) {
  return options.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
}

// A builder of `table.filter_policy`'s filters, as RocksDB asks for one where the level is unknown.
inline std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> NewBuilder(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table) {
  const ROCKSDB_NAMESPACE::FilterBuildingContext context(table);
  return std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder>(
      table.filter_policy->GetBuilderWithContext(context));
}

// Counts the files a table_filter was asked about and those it skipped: wraps the table_filter
// read_options has (which must be set) in one that counts into *counts, which must outlive the
// iterators made with *read_options.
struct FileCounts {
  uint64_t asked = 0, skipped = 0;
};
inline void CountFiles(ROCKSDB_NAMESPACE::ReadOptions* read_options, FileCounts* counts) {
  auto inner = read_options->table_filter;
  read_options->table_filter = [inner, counts](const ROCKSDB_NAMESPACE::TableProperties& p) {
    ++counts->asked;
    const bool read = inner(p);
    if (!read) ++counts->skipped;
    return read;
  };
}

// The path of a directory of this test process's own under the system's temporary directory,
// sstfilter_<name>_<pid>. Nothing is there at first (DB::Open creates the directory), and
// whatever is there is removed when the object goes, also when an assertion ends the test early;
// so a database in it must be closed first, by being declared after it.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("sstfilter_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The database in `dir`, or null with the reason in *status.
inline std::unique_ptr<ROCKSDB_NAMESPACE::DB> OpenDb(const ROCKSDB_NAMESPACE::Options& options,
                                                     const std::string& dir,
                                                     ROCKSDB_NAMESPACE::Status* status) {
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
  *status = sstfilter::compat::OpenDb(options, dir, &db);
  return db;
}

// The path of the newest OPTIONS file RocksDB wrote in the database directory `dir`; empty (and
// the test failed) if there is none.
inline std::string NewestOptionsFile(const std::string& dir) {
  std::string name;
  const ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::GetLatestOptionsFileName(dir, ROCKSDB_NAMESPACE::Env::Default(), &name);
  EXPECT_TRUE(s.ok()) << dir << ": " << s.ToString();
  return s.ok() ? dir + "/" + name : std::string();
}

// The database in `dir`; null (and the test failed) if it does not open.
inline std::unique_ptr<ROCKSDB_NAMESPACE::DB> MustOpen(const ROCKSDB_NAMESPACE::Options& options,
                                                       const std::string& dir) {
  ROCKSDB_NAMESPACE::Status s;
  auto db = OpenDb(options, dir, &s);
  EXPECT_TRUE(s.ok()) << dir << ": " << s.ToString();
  return db;
}

// A logger that writes nothing: a database's (or the advisor's) identity in the listener's
// accounts, or one Logger that several databases share.
class SilentLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  using ROCKSDB_NAMESPACE::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// A logger that keeps what it is given, with its level; thread-safe. Read `lines` once nothing
// logs to it any more (its database closed).
class RecordingLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  RecordingLogger() : ROCKSDB_NAMESPACE::Logger(ROCKSDB_NAMESPACE::InfoLogLevel::DEBUG_LEVEL) {}
  void Logv(const char* format, va_list ap) override {
    Logv(ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const ROCKSDB_NAMESPACE::InfoLogLevel level, const char* format, va_list ap) override {
    char line[2048];
    vsnprintf(line, sizeof(line), format, ap);
    std::lock_guard<std::mutex> lock(mu_);
    lines.emplace_back(level, line);
  }
  // The lines that contain `text`.
  std::vector<std::string> LinesWith(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> found;
    for (const auto& [level, line] : lines) {
      if (line.find(text) != std::string::npos) found.push_back(line);
    }
    return found;
  }
  std::vector<std::pair<ROCKSDB_NAMESPACE::InfoLogLevel, std::string>> lines;

 private:
  std::mutex mu_;
};

// Waits until no flush or compaction of `db` is pending or running (the listener's rewrites run
// on their threads), by db_bench_ext/settle.h's rule, which also settles a universal tree whose
// picker reports a compaction it finds nothing to do for. RocksDB 7.8, the version sstfilter
// builds against, has no call that waits for them, so this polls; for at most 3 minutes, well
// within a test's time limit of 10 (tests/CMakeLists.txt), so that a tree that never settles
// fails its test saying so (a test that goes on to wait again may still reach the limit).
inline void WaitForCompactions(ROCKSDB_NAMESPACE::DB* db) {
  const std::string why_not =
      db_bench_ext::WaitUntilSettled(db, std::chrono::milliseconds(2), std::chrono::minutes(3));
  ASSERT_TRUE(why_not.empty()) << why_not;
}

// The listener's accounts of `db`'s column family once they hold `keys` keys, those of its levels
// and those its running compactions carry (bounded: false after 10 s). DB::Flush returns once the
// flush is installed, which may be before the listeners' OnFlushCompleted ran (RocksDB calls them
// after installing, with its mutex released): the accounts may not hold the flush yet (a test
// once read 149,937 of 150,000 keys under load; another 20 of 21 files' filter bytes).
inline bool AccountsHolding(ROCKSDB_NAMESPACE::DB* db, uint64_t keys, TreeAccounts* accounts,
                            const std::string& column_family = "default") {
  const TreeId tree = TreeOfDb(db, column_family);
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

// The keys of `db`'s live table files of `column_family`, as their metadata counts them.
inline uint64_t LiveKeys(ROCKSDB_NAMESPACE::DB* db, const std::string& column_family = "default") {
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  uint64_t keys = 0;
  for (const auto& f : live) {
    if (f.column_family_name == column_family) keys += f.num_entries;
  }
  return keys;
}

// RocksDB's filter statistics (compat/rocksdb_api.h), by the name the tests use.
using FilterCounts = sstfilter::compat::FilterTickers;
inline FilterCounts FilterCountsOf(const ROCKSDB_NAMESPACE::Statistics& stats) {
  return sstfilter::compat::FilterTickersOf(stats);
}

}  // namespace sstfilter::testing
