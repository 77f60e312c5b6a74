// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled and its listener where deployments differ from one database in its own
// process: databases that share one Logger, policy and listener; databases closed and reopened
// with the same objects, with a compaction abandoned at close; a database on a file system other
// than the local one (RocksDB's in-memory one), whose files only RocksDB can read; a column family
// of more levels than the allocation models; an OPTIONS file that names a policy with a bad value.
#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugin/tree_history.h"
#include "sstfilter/leveled_budget.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::FileOptions;
using ROCKSDB_NAMESPACE::FileSystem;
using ROCKSDB_NAMESPACE::FSRandomAccessFile;
using ROCKSDB_NAMESPACE::IODebugContext;
using ROCKSDB_NAMESPACE::IOStatus;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using testing::MustOpen;
using testing::TempDir;
using testing::TreeOfDb;
using testing::WaitForCompactions;

// Writes the keys of ids first, first + step, ... (count of them) and flushes them into one file.
void WriteFile(DB* db, uint64_t first, uint64_t count, uint64_t step) {
  for (uint64_t i = 0; i < count; ++i) {
    const std::string key = testing::NumberedKey(first + i * step, /*digits=*/10);
    ASSERT_TRUE(db->Put(WriteOptions(), key, "v").ok());
  }
  ASSERT_TRUE(db->Flush({}).ok());
}

// The filter bits per key of each live file of the default column family, oldest first.
std::vector<double> FileBitsPerKey(DB* db) {
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  EXPECT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  std::vector<double> bits;  // the collection is keyed by path: file numbers in order
  for (const auto& [path, p] : props) {
    bits.push_back(8.0 * static_cast<double>(p->filter_size) /
                   static_cast<double>(p->num_filter_entries));
  }
  return bits;
}

// The listener's accounts of a database's default column family once they hold its live files'
// keys (false: not within 10 s; testing::AccountsHolding).
bool AccountsOf(DB* db, TreeAccounts* accounts) {
  return testing::AccountsHolding(db, testing::LiveKeys(db), accounts);
}

uint64_t KeysIn(const TreeAccounts& a, uint64_t TreeAccountsKeys(const LevelAccount&)) {
  uint64_t n = 0;
  for (const LevelAccount& l : a.levels) n += TreeAccountsKeys(l);
  return n;
}

// Two databases with one Logger, one policy object and one listener object keep a tree each: the
// second database's first flush overlaps nothing of its own, so it is an append and gets the
// filter the first database's first flush got for the same keys, although those keys overlap the
// first database's flushes (a tree named by the logger took it for an update of them, and gave
// it the model's level-0 filter). And each database's accounts hold its own keys.
TEST(Deployment, DatabasesSharingALoggerKeepTheirOwnTrees) {
  const TempDir dir_a("shared_logger_a"), dir_b("shared_logger_b");
  Options options = testing::OptionsFor("sstfilter.Leveled:10");
  options.info_log = std::make_shared<testing::SilentLogger>();  // one for both
  options.listeners.push_back(NewLeveledBudgetListener());
  options.disable_auto_compactions = true;
  auto a = MustOpen(options, dir_a.path());
  auto b = MustOpen(options, dir_b.path());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  WriteFile(a.get(), 0, 20'000, 2);  // even ids
  WriteFile(a.get(), 1, 20'000, 2);  // odd ids: overlaps the first flush
  WriteFile(b.get(), 0, 20'000, 2);  // the first flush's keys, in the second database
  const std::vector<double> bits_a = FileBitsPerKey(a.get()), bits_b = FileBitsPerKey(b.get());
  ASSERT_EQ(bits_a.size(), 2u);
  ASSERT_EQ(bits_b.size(), 1u);
  printf(
      "[ figures  ] bits/key: first database's flushes %.2f (append), %.2f (overlapping); "
      "second database's first flush %.2f\n",
      bits_a[0], bits_a[1], bits_b[0]);
  EXPECT_EQ(bits_b[0], bits_a[0]);

  TreeAccounts accounts_a, accounts_b;
  ASSERT_TRUE(AccountsOf(a.get(), &accounts_a));
  ASSERT_TRUE(AccountsOf(b.get(), &accounts_b));
  auto keys = [](const LevelAccount& l) { return l.keys + l.pending_keys; };
  EXPECT_EQ(KeysIn(accounts_a, keys), 40'000u);
  EXPECT_EQ(KeysIn(accounts_b, keys), 20'000u);
}

// Holds the first compaction it sees until the test lets it go, then a little longer, so that
// the database is closing when the compaction runs: RocksDB then abandons it, or completes it
// without telling the listeners (it skips OnCompactionCompleted while shutting down).
class HoldFirstCompaction : public ROCKSDB_NAMESPACE::EventListener {
 public:
  void OnCompactionBegin(DB*, const ROCKSDB_NAMESPACE::CompactionJobInfo&) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (held_) return;
    held_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return released_; });
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // Waits until a compaction is held (false after 10 s).
  bool WaitHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, released_ = false;
};

// A database closed while a compaction runs, reopened with the same policy and listener objects,
// over and over: each session's accounts count every live key once, and no key as being written
// once compactions are done (the abandoned compaction's inputs counted as pending keys of its
// output level, in every session after it, when the listener's records outlived the session).
TEST(Deployment, ReopeningWithTheSameListenerKeepsTheAccountsExact) {
  const TempDir dir("reopen_loop");
  Options options = testing::OptionsFor("sstfilter.Leveled:10");
  options.listeners.push_back(NewLeveledBudgetListener());
  options.level0_file_num_compaction_trigger = 2;
  uint64_t written = 0;
  for (int session = 0; session < 4; ++session) {
    auto hold = std::make_shared<HoldFirstCompaction>();
    Options opened = options;
    opened.listeners.push_back(hold);  // after the budget listener: it has recorded the job
    auto db = MustOpen(opened, dir.path());
    ASSERT_NE(db, nullptr);
    for (int file = 0; file < 2; ++file) {
      WriteFile(db.get(), written, 3'000, 1);
      written += 3'000;
    }
    ASSERT_TRUE(hold->WaitHeld()) << "no compaction began";
    hold->Release();
    db.reset();  // closes while the held compaction is still to run

    Options still = options;
    still.disable_auto_compactions = true;
    db = MustOpen(still, dir.path());
    ASSERT_NE(db, nullptr);
    WriteFile(db.get(), written, 1'000, 1);  // a flush: the listener accounts for the tree
    written += 1'000;
    TreeAccounts accounts;
    ASSERT_TRUE(AccountsOf(db.get(), &accounts));
    const uint64_t live_keys = testing::LiveKeys(db.get());
    auto pending = [](const LevelAccount& l) { return l.pending_keys; };
    auto keys = [](const LevelAccount& l) { return l.keys; };
    EXPECT_EQ(KeysIn(accounts, pending), 0u) << "session " << session;
    EXPECT_EQ(KeysIn(accounts, keys), live_keys) << "session " << session;
    EXPECT_EQ(live_keys, written) << "session " << session;
  }
}

// A FileSystem that counts the table files it opens for reading.
class CountingFileSystem : public ROCKSDB_NAMESPACE::FileSystemWrapper {
 public:
  explicit CountingFileSystem(const std::shared_ptr<FileSystem>& target)
      : FileSystemWrapper(target) {}
  const char* Name() const override { return "sstfilter.test.CountingFileSystem"; }
  IOStatus NewRandomAccessFile(const std::string& name, const FileOptions& options,
                               std::unique_ptr<FSRandomAccessFile>* file,
                               IODebugContext* dbg) override {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0) ++table_opens;
    return FileSystemWrapper::NewRandomAccessFile(name, options, file, dbg);
  }
  std::atomic<uint64_t> table_opens{0};
};

// A database on RocksDB's in-memory file system, reopened with the listener: the listener learns
// the filters of the files written before it from RocksDB's table properties, opening no table
// file (RocksDB opens every table as the database opens, max_open_files being -1); a listener
// that read the files itself, through the local file system, found none of them and counted
// their filters as empty.
TEST(Deployment, ListenerOpensNoTableFileAndMeasuresFilesOnAnyFileSystem) {
  std::unique_ptr<Env> memory(ROCKSDB_NAMESPACE::NewMemEnv(Env::Default()));
  auto counting = std::make_shared<CountingFileSystem>(memory->GetFileSystem());
  std::unique_ptr<Env> env = ROCKSDB_NAMESPACE::NewCompositeEnv(counting);
  const std::string dir = "/sstfilter_in_memory_db";
  Options options = testing::OptionsFor("sstfilter.Leveled:10");
  options.env = env.get();
  options.disable_auto_compactions = true;
  {
    auto db = MustOpen(options, dir);
    ASSERT_NE(db, nullptr);
    for (uint64_t file = 0; file < 20; ++file) WriteFile(db.get(), file * 500, 500, 1);
  }
  options.listeners.push_back(NewLeveledBudgetListener());
  auto db = MustOpen(options, dir);
  ASSERT_NE(db, nullptr);
  const uint64_t opens_at_open = counting->table_opens.load();
  const auto start = std::chrono::steady_clock::now();
  WriteFile(db.get(), 20 * 500, 500, 1);
  const double flush_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  ASSERT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  uint64_t filter_bytes = 0;
  for (const auto& [path, p] : props) filter_bytes += p->filter_size;
  TreeAccounts accounts;
  ASSERT_TRUE(AccountsOf(db.get(), &accounts));  // the flush's events have run
  // RocksDB opens the new file once it is written; nothing else is opened.
  EXPECT_LE(counting->table_opens.load() - opens_at_open, 1u);
  auto bytes = [](const LevelAccount& l) { return l.filter_bytes; };
  auto unmeasured = [](const LevelAccount& l) { return l.unmeasured_keys; };
  EXPECT_EQ(KeysIn(accounts, bytes), filter_bytes);
  EXPECT_EQ(KeysIn(accounts, unmeasured), 0u);
  printf("[ figures  ] first flush after reopening %zu files: %.1f ms, %llu table files opened\n",
         props.size() - 1, flush_ms,
         static_cast<unsigned long long>(counting->table_opens.load() - opens_at_open));
}

// A column family of more levels than the allocation models (64) still gets sstfilter's filters
// on its flushes (it got none until its first compaction).
TEST(Deployment, MoreLevelsThanTheModelStillGetFilters) {
  const TempDir dir("many_levels");
  Options options = testing::OptionsFor("sstfilter.Leveled:10");
  options.num_levels = 100;
  options.listeners.push_back(NewLeveledBudgetListener());
  auto db = MustOpen(options, dir.path());
  ASSERT_NE(db, nullptr);
  WriteFile(db.get(), 0, 2'000, 1);
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  ASSERT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  ASSERT_EQ(props.size(), 1u);
  EXPECT_EQ(props.begin()->second->filter_policy_name, kLeveledPolicyName);
  EXPECT_GT(props.begin()->second->filter_size, 0u);
}

// An OPTIONS file that names an sstfilter policy with a value the policy refuses, loaded as
// RocksDB loads it (LoadLatestOptions, ldb --try_load_options: ConfigOptions' defaults, strings
// escaped). RocksDB drops the error while it parses the table options
// (BlockBasedTableFactory::ParseOption) and keeps the policy as far as it was configured, or none
// (a bad "<name>:<number>"): the database would open with another filter than the one named, or
// with none. It must not open, and say why: an InvalidArgument (ldb --try_load_options takes a
// NotFound from loading for "no OPTIONS file", and opens with defaults). Parsed with the policy
// prepared (RocksDB's default: the table factory's PrepareOptions reports the error) and without
// (the error reaches the open: the policy's ValidateOptions). The same with good values opens.
TEST(Deployment, AnOptionsFileNamingABadPolicyValueDoesNotOpen) {
  ROCKSDB_NAMESPACE::ConfigOptions loading;
  ASSERT_TRUE(loading.input_strings_escaped);
  int opens_refused = 0;
  const struct {
    const char *bad, *good, *message;
  } cases[] = {
      {"{id=sstfilter.Bloom;bits_per_key=10;layout=Standard}",
       "{id=sstfilter.Bloom;bits_per_key=10;layout=standard}",
       "sstfilter.Bloom: layout must be blocked or standard, got 'Standard'"},
      {"{id=sstfilter.Leveled;bits_per_key=10;memory_budget=5Q}",
       "{id=sstfilter.Leveled;bits_per_key=10;memory_budget=5M}", "memory_budget must be"},
      {"{id=sstfilter.Leveled;bits_per_key=10;num_levels=abc}",
       "{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}", "num_levels"},
      {"sstfilter.Bloom:abc", "sstfilter.Bloom:10",
       "sstfilter.Bloom: bits_per_key must be a finite number, got 'abc'"},
      {"{id=sstfilter.Fuse;bits_per_key=abc}", "{id=sstfilter.Fuse;bits_per_key=10}",
       "bits_per_key must be a finite number, got 'abc'"},
      {"{id=sstfilter.Cuckoo;bits_per_key=10;colour=blue}", "{id=sstfilter.Cuckoo;bits_per_key=10}",
       "colour"},
      {"sstfilter.BumpedRibbon:200", "sstfilter.BumpedRibbon:8",
       "bits_per_key must be in [0.01, 100]"},
      {"sstfilter.Leveled", "sstfilter.Leveled:10", "memory_budget"},
  };
  for (const bool prepare : {true, false}) {
    loading.invoke_prepare_options = prepare;
    for (const auto& c : cases) {
      for (const char* policy : {c.bad, c.good}) {
        ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
        const Status parsed = ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
            loading, ROCKSDB_NAMESPACE::BlockBasedTableOptions(),
            std::string("filter_policy=") + policy, &table);
        if (policy == c.good) {
          ASSERT_TRUE(parsed.ok()) << policy << ": " << parsed.ToString();
        }
        if (!parsed.ok()) {  // a RocksDB that reports the error is as good
          EXPECT_TRUE(parsed.IsInvalidArgument()) << policy << ": " << parsed.ToString();
          EXPECT_NE(parsed.ToString().find(c.message), std::string::npos) << parsed.ToString();
          continue;
        }
        Options options;
        options.create_if_missing = true;
        options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
        options.listeners.push_back(NewLeveledBudgetListener());  // a memory_budget needs it
        TempDir dir("bad_policy_value");
        Status open;
        const std::unique_ptr<DB> db = testing::OpenDb(options, dir.path(), &open);
        if (policy == c.good) {
          EXPECT_NE(db, nullptr) << policy << ": " << open.ToString();
          continue;
        }
        EXPECT_EQ(db, nullptr) << policy << " opened with "
                               << (table.filter_policy ? table.filter_policy->Name() : "no filter");
        EXPECT_TRUE(open.IsInvalidArgument()) << policy << ": " << open.ToString();
        EXPECT_NE(open.ToString().find(c.message), std::string::npos)
            << policy << ": " << open.ToString();
        ++opens_refused;
      }
    }
  }
  // RocksDB 7.8 to 9.11 drop the errors while parsing unprepared: the opens were tried.
  EXPECT_GT(opens_refused, 0);
}

}  // namespace
}  // namespace sstfilter
