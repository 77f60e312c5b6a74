// SPDX-License-Identifier: Apache-2.0
#include "sstfilter/leveled_budget.h"

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugin/bits_adapters.h"
#include "plugin/budget_rewrites.h"
#include "plugin/leveled_budget.h"
#include "plugin/listener_channel.h"
#include "plugin/probe_counts.h"
#include "plugin/tree_accountant.h"
#include "plugin/tree_history.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::TableProperties;

// The cells of the filters this thread finished for the table file it reports: all of them, if
// their bytes fit in the file's filter (a partitioned filter's partitions, with its index, make up
// filter_size; a whole filter is all of it); none if not (filters of a table that was never
// reported, built on this thread before this one).
std::vector<std::shared_ptr<ProbeCell>> CellsOfNewFile(const TableProperties& p) {
  const std::vector<BuiltFilter> built = TakeBuiltFilters();
  uint64_t bytes = 0;
  for (const BuiltFilter& b : built) bytes += b.bytes;
  std::vector<std::shared_ptr<ProbeCell>> cells;
  if (built.empty() || bytes > p.filter_size || 2 * bytes < p.filter_size) return cells;
  for (const BuiltFilter& b : built) cells.push_back(b.cell);
  return cells;
}

class LeveledBudget : public ROCKSDB_NAMESPACE::EventListener {
 public:
  const char* Name() const override { return kLeveledBudgetName; }

  // Every table RocksDB writes (flushes, compaction outputs), on the thread that then builds it:
  // which tree the table belongs to, for the policy (TableInCreation).
  void OnTableFileCreationStarted(
      const ROCKSDB_NAMESPACE::TableFileCreationBriefInfo& info) override {
    Guard(nullptr, "OnTableFileCreationStarted", [&] {
      ClearTableInCreation();
      // A table written as the database opens (its WAL replayed) comes before any event that
      // names the new session: its tree is the logger's.
      if (info.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kRecovery) return;
      TableInCreation table;
      if (accountant_.TableInCreationOf(info.db_name, info.cf_name, &table)) {
        SetTableInCreation(std::move(table));
      }
    });
  }
  // Its filter, before the job's event. On the thread that built it: the probe cells of its
  // filters (plugin/probe_counts.h).
  void OnTableFileCreated(const ROCKSDB_NAMESPACE::TableFileCreationInfo& info) override {
    ClearTableInCreation();
    Guard(nullptr, "OnTableFileCreated", [&] {
      std::vector<std::shared_ptr<ProbeCell>> cells = CellsOfNewFile(info.table_properties);
      if (!info.status.ok()) return;
      FileFilter filter = FilterOf(info.table_properties);
      filter.cells = std::move(cells);
      accountant_.FileCreated(info.db_name, info.file_path, std::move(filter));
    });
  }
  // Before a flush builds its filter: the accounts of this database, should it be the first event
  // since the database opened.
  void OnFlushBegin(DB* db, const ROCKSDB_NAMESPACE::FlushJobInfo& info) override {
    Guard(db, "OnFlushBegin", [&] { Account(db, info.cf_name, /*changed=*/false); });
  }
  // No rewrites here, though a flush can be a database's last event after its budget fell: a
  // rewrite would hold the flush's slot (one by default), and in 7.8 DB::CompactFiles waits for
  // running ingestions, which may be waiting for a flush of their own: a deadlock.
  void OnFlushCompleted(DB* db, const ROCKSDB_NAMESPACE::FlushJobInfo& info) override {
    Guard(db, "OnFlushCompleted", [&] {
      accountant_.Remember(db->GetName(), SessionIdOf(db), info.file_path,
                           FilterOf(info.table_properties));
      Account(db, info.cf_name, /*changed=*/true);
    });
  }
  // A compaction's inputs count where their keys are going until it completes (LevelAccount);
  // their table properties, which RocksDB gives here, measure files the listener did not see
  // written. Then the plan of rewrites its outputs count on, where older files hold a budgeted
  // tree beyond its budget and no plan stands (plugin/budget_rewrites.h).
  void OnCompactionBegin(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard(db, "OnCompactionBegin", [&] {
      std::vector<uint64_t> inputs;
      for (const auto& f : info.input_file_infos) inputs.push_back(f.file_number);
      accountant_.CompactionBegan(db->GetName(), SessionIdOf(db), info.cf_name, info.job_id,
                                  info.output_level, inputs, info.table_properties);
      Account(db, info.cf_name, /*changed=*/false);
    });
    Guard(
        db, "OnCompactionBegin",
        [&] {
          PlanAsACompactionBegins(db, DatabaseTree(db->GetName(), SessionIdOf(db), info.cf_name));
        },
        "the plan of rewrites");
  }
  // Also called for trivial moves, whose outputs are the inputs at another level. Not called for
  // a compaction that RocksDB abandons as it closes: its record goes with its session's.
  // Then, if the default column family's tree is under a memory_budget and spends beyond it, the
  // rewrites of its files that spend the most (plugin/budget_rewrites.h), on this thread; not for
  // a rewrite's own compaction, should RocksDB report one (7.8 to 9.11 report no event for
  // DB::CompactFiles). A compaction of any column family gives it the turn: the trees that share
  // a budget share its fall as any of them grows, and a compaction of another may be the last
  // event after the default's own compactions settled, or the first after writes stopped waiting.
  void OnCompactionCompleted(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard(db, "OnCompactionCompleted", [&] {
      accountant_.CompactionCompleted(db->GetName(), SessionIdOf(db), info.cf_name, info.job_id,
                                      info.table_properties);
      Account(db, info.cf_name, /*changed=*/true);
      if (RewritingForBudget() || !info.status.ok()) return;
      const std::string& rewritable = ROCKSDB_NAMESPACE::kDefaultColumnFamilyName;
      const size_t rewritten =
          RewriteFilesOverBudget(db, DatabaseTree(db->GetName(), SessionIdOf(db), rewritable));
      if (rewritten > 0) Account(db, rewritable, /*changed=*/true);
    });
  }
  void OnExternalFileIngested(DB* db,
                              const ROCKSDB_NAMESPACE::ExternalFileIngestionInfo& info) override {
    Guard(db, "OnExternalFileIngested", [&] {
      accountant_.Remember(db->GetName(), SessionIdOf(db), info.internal_file_path,
                           FilterOf(info.table_properties));
      Account(db, info.cf_name, /*changed=*/true);
    });
  }

  // The accounts of a database that no event reaches (a read-only one), published under
  // `publish_as` instead of the database's logger.
  void AccountAs(DB* db, const std::string& cf_name,
                 const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& publish_as) {
    Account(db, cf_name, /*changed=*/false, publish_as);
  }

 private:
  // Nothing may throw into RocksDB: an event that cannot be accounted (out of memory) leaves the
  // tree's accounts as they were, and says so once in the database's LOG where the event names
  // the database (`db`, else null: nothing is logged); `skipped` names what was left undone.
  template <typename F>
  static void Guard(DB* db, const char* event, F&& f,
                    const char* skipped = "the accounts of this event") {
    try {
      f();
    } catch (const std::exception& e) {
      LogSkipped(db, event, e.what(), skipped);  // inside the handler: what() lives as long as `e`
    } catch (...) {
      LogSkipped(db, event, "an exception of unknown type", skipped);
    }
  }

  static void LogSkipped(DB* db, const char* event, const char* what,
                         const char* skipped) noexcept {
    if (db == nullptr) return;
    try {
      LogError(db->GetDBOptions().info_log.get(), std::string(kLeveledBudgetName) + ": " + event +
                                                      ": " + what + "; skipped: " + skipped);
    } catch (...) {  // out of memory for the line: nothing more to do
    }
  }

  // The database's session id (DB::GetDbSessionId; empty if it has none).
  static std::string SessionIdOf(DB* db) {
    std::string id;
    if (!db->GetDbSessionId(id).ok()) id.clear();
    return id;
  }

  // The live files of the column family, by level, published for the policies (under the
  // database's tree, or the logger publish_as's); files no longer live are forgotten, and the
  // database's other column families without a live file are published empty. Opens no
  // file: the filters of files the listener did not see written (a database reopened) come from
  // the table properties RocksDB holds (DB::GetPropertiesOfAllTables, read outside the accountant's
  // lock).
  void Account(DB* db, const std::string& cf_name, bool changed,
               std::shared_ptr<ROCKSDB_NAMESPACE::Logger> publish_as = nullptr) {
    // One account at a time, from reading the live files to publishing: two events' accounts
    // could otherwise publish out of order, the later event's newer tree first, and the tree's
    // accounts would stay stale until the next event
    // (DbTest.LeveledBudgetListenerCountsTheProbesReadersSee). RocksDB calls listeners without
    // its mutex held.
    std::lock_guard<std::mutex> serial(account_mu_);
    const std::string db_name = db->GetName();
    const std::string session = SessionIdOf(db);
    const std::shared_ptr<ROCKSDB_NAMESPACE::Logger> db_logger = db->GetDBOptions().info_log;
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
    db->GetLiveFilesMetaData(&live);
    const std::map<std::string, FileFilter> learned =
        LearnFilters(db, cf_name, accountant_.UnknownFiles(db_name, session, cf_name, live));
    TreeAccounts accounts =
        accountant_.Account(db_name, session, db_logger.get(), cf_name, live, learned, changed);
    if (publish_as != nullptr) {
      Ledger::Global().Publish(LoggerTree(publish_as.get(), cf_name), publish_as,
                               std::move(accounts));
    } else {
      Ledger::Global().Publish(DatabaseTree(db_name, session, cf_name), db_logger,
                               std::move(accounts));
      for (const std::string& gone :
           accountant_.ForgetTreesWithoutFiles(db_name, session, cf_name, live)) {
        Ledger::Global().Publish(DatabaseTree(db_name, session, gone), db_logger, TreeAccounts{});
      }
    }
  }

  // The filters of `unknown` files, by path, from the table properties RocksDB holds for the
  // column family (with max_open_files = -1, RocksDB's default, every table reader is open and
  // this reads nothing; otherwise RocksDB reads what its table cache lacks, through the database's
  // own file system). Only the default column family's: a listener has no handle on the others,
  // whose files are measured as compactions read them (OnCompactionBegin).
  static std::map<std::string, FileFilter> LearnFilters(DB* db, const std::string& cf_name,
                                                        const std::set<std::string>& unknown) {
    std::map<std::string, FileFilter> learned;
    if (unknown.empty() || cf_name != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName) return learned;
    ROCKSDB_NAMESPACE::TablePropertiesCollection props;
    if (!db->GetPropertiesOfAllTables(db->DefaultColumnFamily(), &props).ok()) return learned;
    for (const auto& [path, p] : props) {
      if (p != nullptr && unknown.count(path) != 0) learned[path] = FilterOf(*p);
    }
    return learned;
  }

  std::mutex account_mu_;  // one account at a time (Account)
  TreeAccountant accountant_;
};

}  // namespace

ROCKSDB_NAMESPACE::EventListener* NewLeveledBudgetOrNull() {
  return new (std::nothrow) LeveledBudget();
}

std::shared_ptr<ROCKSDB_NAMESPACE::EventListener> NewLeveledBudgetListener() {
  return std::make_shared<LeveledBudget>();
}

void PublishAccountsAs(DB* db, const std::string& cf_name,
                       const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& publish_as) {
  LeveledBudget listener;
  listener.AccountAs(db, cf_name, publish_as);
}

}  // namespace sstfilter
