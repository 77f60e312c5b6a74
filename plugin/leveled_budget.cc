// SPDX-License-Identifier: Apache-2.0
#include "sstfilter/leveled_budget.h"

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <deque>
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
#include "plugin/level_probes.h"
#include "plugin/leveled_budget.h"
#include "plugin/probe_counts.h"
#include "plugin/tree_history.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::TableProperties;

// What the ledger needs of a file: its filter's keys and bytes, and the probes its readers count
// (plugin/probe_counts.h; no cells: a file whose probes are not counted).
struct FileFilter {
  uint64_t filter_entries = 0;
  uint64_t filter_bytes = 0;
  // Whether the two above are the file's (its table properties were seen): a file of a column
  // family other than the default that predates the listener is not measured until a compaction
  // reads it (LevelAccount::unmeasured_keys).
  bool measured = true;
  std::vector<std::shared_ptr<ProbeCell>> cells;
  uint64_t sampled = 0;  // the cells' sampled probes at the last account
  // From its second live account on (its first counts the part of an interval since it was
  // written): its sampled probes, and those of the tree's counted files, decayed alike
  // (FileRange::sampled_probes and exposure).
  double exposed_probes = 0, exposure = 0;
  // A file reported created is not live until its flush or compaction installs it, which may be
  // after other jobs' accounts: it is kept until an account sees it live, or, should its job
  // fail, for kMaxAccountsUnseen accounts.
  bool seen_live = false;
  uint32_t accounts_unseen = 0;

  uint64_t SampledNow() const {
    uint64_t sum = 0;
    for (const auto& c : cells) sum += c->Sampled();
    return sum;
  }
};

FileFilter FilterOf(const TableProperties& p) {
  FileFilter f;
  f.filter_entries = p.num_filter_entries;
  f.filter_bytes = p.filter_size;
  return f;
}

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
 private:
  // A running compaction: the file numbers of its inputs, and its output level.
  struct Compaction {
    std::vector<uint64_t> inputs;
    int output_level = 0;
  };
  // What the listener keeps of a column family between events.
  struct Tree {
    std::map<int, Compaction> running;  // by job id
    std::deque<LevelAccount> level0;    // its last kLevel0Window accounts, newest last
    uint64_t changes = 0;               // TreeAccounts::changes
    std::vector<double> counted;        // per level, sampled probes, decayed (TreeSamples)
  };
  // One open of a database (DB::GetDbSessionId): what the listener knows of it. A database
  // reopened is a new session, and its records start over: its job ids start again at 1, and
  // the compactions RocksDB abandoned as it closed never completed.
  struct Session {
    std::string id;                           // empty: no event has named it yet
    const void* logger = nullptr;             // its info_log (TableInCreation)
    std::map<std::string, FileFilter> files;  // each live file's filter, by path
    std::map<std::string, Tree> trees;        // by column family
  };

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
      std::lock_guard<std::mutex> lock(mu_);
      const auto it = databases_.find(info.db_name);
      if (it == databases_.end() || it->second.id.empty()) return;  // no event has named it yet
      SetTableInCreation(
          {DatabaseTree(info.db_name, it->second.id, info.cf_name), it->second.logger});
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
      std::lock_guard<std::mutex> lock(mu_);
      BoundedEntry(databases_, info.db_name, kMaxDatabases).files[info.file_path] =
          std::move(filter);
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
      Remember(db, info.file_path, FilterOf(info.table_properties));
      Account(db, info.cf_name, /*changed=*/true);
    });
  }
  // A compaction's inputs count where their keys are going until it completes (LevelAccount);
  // their table properties, which RocksDB gives here, measure files the listener did not see
  // written.
  void OnCompactionBegin(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard(db, "OnCompactionBegin", [&] {
      RememberCompaction(db, info, [&](Tree& tree) {
        // Job ids are unique within a session (a new session has a new Session).
        Compaction& c = tree.running[info.job_id];
        c = Compaction{};
        c.output_level = info.output_level;
        for (const auto& f : info.input_file_infos) c.inputs.push_back(f.file_number);
      });
      Account(db, info.cf_name, /*changed=*/false);
    });
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
      RememberCompaction(db, info, [&](Tree& tree) { tree.running.erase(info.job_id); });
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
      Remember(db, info.internal_file_path, FilterOf(info.table_properties));
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
  // the database (`db`, else null: nothing is logged).
  template <typename F>
  static void Guard(DB* db, const char* event, F&& f) {
    const char* what = nullptr;
    try {
      f();
      return;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception of unknown type";
    }
    if (db == nullptr) return;
    try {
      LogError(db->GetDBOptions().info_log.get(), std::string(kLeveledBudgetName) + ": " + event +
                                                      ": " + what +
                                                      "; the accounts of this event are skipped");
    } catch (...) {  // out of memory for the line: nothing more to do
    }
  }

  void Remember(DB* db, const std::string& path, const FileFilter& f) {
    const std::string session = SessionIdOf(db);
    std::lock_guard<std::mutex> lock(mu_);
    RememberLocked(SessionLocked(db->GetName(), session, nullptr), path, f);
  }
  // The filters of the files whose table properties a compaction's info gives (its inputs' as it
  // begins, its outputs' too as it completes), remembered; then `then` on the column family's
  // record; under mu_.
  template <typename F>
  void RememberCompaction(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info, F&& then) {
    const std::string session = SessionIdOf(db);
    std::lock_guard<std::mutex> lock(mu_);
    Session& s = SessionLocked(db->GetName(), session, nullptr);
    for (const auto& [path, props] : info.table_properties) {
      if (props != nullptr) RememberLocked(s, path, FilterOf(*props));
    }
    then(TreeOf(s, info.cf_name));
  }
  // A file's filter from its properties, keeping the probe cells its creation brought.
  static void RememberLocked(Session& s, const std::string& path, const FileFilter& f) {
    FileFilter& known = s.files[path];
    known.filter_entries = f.filter_entries;
    known.filter_bytes = f.filter_bytes;
    known.measured = true;
  }

  // The database's session id (DB::GetDbSessionId; empty if it has none).
  static std::string SessionIdOf(DB* db) {
    std::string id;
    if (!db->GetDbSessionId(id).ok()) id.clear();
    return id;
  }

  // The live files of the column family, by level, published for the policies (under the
  // database's tree, or the logger publish_as's); files no longer live are forgotten. Opens no
  // file: the filters of files the listener did not see written (a database reopened) come from
  // the table properties RocksDB holds (DB::GetPropertiesOfAllTables, read outside mu_).
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
        LearnFilters(db, cf_name, UnknownFiles(db_name, session, cf_name, live));
    std::lock_guard<std::mutex> lock(mu_);
    Session& s = SessionLocked(db_name, session, db_logger.get());
    Tree& tree = TreeOf(s, cf_name);
    tree.changes += changed ? 1 : 0;
    TreeAccounts accounts;
    accounts.changes = tree.changes;
    LiveCounts counts = CountLiveFiles(s, tree, cf_name, live, learned, changed, &accounts);
    BlendCountedProbes(counts, changed, &tree, &accounts);
    PeakLevel0(Level0InPlace(std::move(counts), tree, accounts), &tree, &accounts);
    if (publish_as != nullptr) {
      Ledger::Global().Publish(LoggerTree(publish_as.get(), cf_name), publish_as,
                               std::move(accounts));
    } else {
      Ledger::Global().Publish(DatabaseTree(db_name, session, cf_name), db_logger,
                               std::move(accounts));
    }
  }

  // What CountLiveFiles learns beyond the levels' keys and filter bytes: the files' key ranges
  // at the levels their keys are going to, with their counted probes, and the probes the readers
  // counted per level since the last account.
  struct LiveCounts {
    std::vector<FileRange> ranges;
    std::vector<double> sampled;
    // Level 0 as its files are, those that compactions are rewriting included (lookups probe them
    // until the compaction installs its outputs); its probes are Level0InPlace's. Whether any
    // file of level 0 is a compaction's input.
    LevelAccount level0_in_place;
    bool level0_rewritten = false;
  };

  // Counts the column family's live files into accounts->levels (keys, filter bytes, pending
  // and unmeasured keys) and accounts->heat; updates the session's files: those live, those
  // reported created and not live yet (kMaxAccountsUnseen), the rest forgotten. With mu_ held.
  LiveCounts CountLiveFiles(Session& s, const Tree& tree, const std::string& cf_name,
                            const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live,
                            const std::map<std::string, FileFilter>& learned, bool changed,
                            TreeAccounts* accounts) {
    LiveCounts counts;
    std::vector<LevelAccount>& levels = accounts->levels;
    std::map<uint64_t, int> rewritten;  // input file number -> the level its keys are going to
    for (const auto& [job, c] : tree.running) {
      for (const uint64_t number : c.inputs) rewritten[number] = c.output_level;
    }
    std::map<std::string, FileFilter>& known = s.files;
    std::map<std::string, FileFilter> still_live;
    std::vector<std::pair<FileFilter*, size_t>> counted;  // and their ranges, to expose
    for (const auto& f : live) {
      const std::string path = PathOf(f);
      auto it = known.find(path);
      FileFilter filter;
      if (it != known.end()) {
        filter = it->second;
      } else if (f.column_family_name != cf_name) {
        continue;  // another column family's: measured when its own account needs it
      } else {
        const auto l = learned.find(path);
        if (l != learned.end()) {
          filter = l->second;
        } else {
          filter.measured = false;  // kept as such: not asked for again
        }
      }
      const bool first_account = !filter.seen_live;
      filter.seen_live = true;
      if (f.column_family_name != cf_name || f.level < 0) {
        still_live[path] = std::move(filter);
        continue;
      }
      const uint64_t file_keys =
          filter.measured && filter.filter_entries > 0 ? filter.filter_entries : f.num_entries;
      // Bytewise, whichever way the comparator orders the two ends (a reverse comparator).
      const bool ordered = !(f.largestkey < f.smallestkey);
      const std::string& smallest = ordered ? f.smallestkey : f.largestkey;
      const std::string& largest = ordered ? f.largestkey : f.smallestkey;
      if (!filter.cells.empty()) {
        // Probes land on the level the file is on, whatever a compaction is making of it.
        const uint64_t now = filter.SampledNow();
        if (counts.sampled.size() <= static_cast<size_t>(f.level)) {
          counts.sampled.resize(f.level + 1);
        }
        const double delta = static_cast<double>(now >= filter.sampled ? now - filter.sampled : 0);
        counts.sampled[f.level] += delta;
        filter.sampled = now;
        if (!first_account) {
          filter.exposed_probes = filter.exposed_probes * (changed ? kCountDecay : 1) + delta;
        }
      }
      const auto input = rewritten.find(f.file_number);
      const int level = std::max(0, input == rewritten.end() ? f.level : input->second);
      if (levels.size() <= static_cast<size_t>(level)) levels.resize(level + 1);
      if (input != rewritten.end()) {
        levels[level].pending_keys += file_keys;
      } else {
        AddFile(filter, file_keys, &levels[level]);
      }
      if (f.level == 0) {
        AddFile(filter, file_keys, &counts.level0_in_place);
        counts.level0_rewritten |= input != rewritten.end();
      }
      counts.ranges.push_back({level, f.level, static_cast<double>(file_keys), smallest, largest,
                               !filter.cells.empty(), filter.exposed_probes});
      FileFilter& kept = still_live[path] = std::move(filter);
      if (!kept.cells.empty() && !first_account) {
        counted.emplace_back(&kept, counts.ranges.size() - 1);
      }
    }
    // Each counted file's exposure: the probes sampled on the tree's counted files since the last
    // account, for those live at both.
    double sampled = 0;
    for (const double n : counts.sampled) sampled += n;
    for (const auto& [file, range] : counted) {
      file->exposure = file->exposure * (changed ? kCountDecay : 1) + sampled;
      counts.ranges[range].exposure = file->exposure;
    }
    // Files reported created that are not live yet.
    for (auto& [path, filter] : known) {
      if (!filter.seen_live && ++filter.accounts_unseen <= kMaxAccountsUnseen &&
          still_live.count(path) == 0) {
        still_live.emplace(path, std::move(filter));
      }
    }
    known.swap(still_live);
    if (!counted.empty()) {
      accounts->heat = std::make_shared<const std::vector<FileRange>>(counts.ranges);
    }
    return counts;
  }

  // A live file into the account of the level it is counted on: its keys, and its filter's bytes
  // if measured (unmeasured_keys if not).
  static void AddFile(const FileFilter& filter, uint64_t file_keys, LevelAccount* level) {
    level->keys += file_keys;
    if (!filter.measured) {
      level->unmeasured_keys += file_keys;
      return;
    }
    level->filter_bytes += filter.filter_bytes;
    if (filter.filter_bytes > 0) {
      ++level->filter_files;
      level->filter_keys += file_keys;
    }
  }

  // Each level's probes: the key-range estimate blended with the readers' counts (BlendProbes);
  // each level's counted probes, which the tree keeps decayed, for the accounts.
  static void BlendCountedProbes(const LiveCounts& counts, bool changed, Tree* tree,
                                 TreeAccounts* accounts) {
    std::vector<LevelAccount>& levels = accounts->levels;
    std::vector<double>& counted = tree->counted;
    counted.resize(std::max(counted.size(), std::max(counts.sampled.size(), levels.size())), 0);
    for (size_t i = 0; i < counted.size(); ++i) {
      counted[i] = counted[i] * (changed ? kCountDecay : 1) +
                   (i < counts.sampled.size() ? counts.sampled[i] : 0);
    }
    if (levels.size() < counted.size()) levels.resize(counted.size());
    const std::vector<double> probes =
        BlendProbes(counts.ranges, levels.size(), TreeSamples(*tree), &accounts->counted_weight);
    for (size_t i = 0; i < levels.size(); ++i) {
      levels[i].probes = probes[i];
      levels[i].counted_probes = counted[i];
    }
  }

  // The probes the readers have counted on the tree, decayed (the counts' weight: BlendProbes).
  static double TreeSamples(const Tree& tree) {
    double samples = 0;
    for (const double n : tree.counted) samples += n;
    return samples;
  }

  // Level 0 as its files are, with the probes it receives: the account's level 0, unless a
  // compaction is rewriting some of its files, whose keys the account counts where they are
  // going. With tree.counted as BlendCountedProbes left it; takes the counts' ranges.
  static LevelAccount Level0InPlace(LiveCounts&& counts, const Tree& tree,
                                    const TreeAccounts& accounts) {
    if (!counts.level0_rewritten) {
      return accounts.levels.empty() ? LevelAccount{} : accounts.levels[0];
    }
    std::vector<FileRange> ranges = std::move(counts.ranges);
    for (FileRange& r : ranges) r.level = r.level_now;
    double weight = 0;
    const std::vector<double> probes = BlendProbes(
        ranges, std::max<size_t>(accounts.levels.size(), 1), TreeSamples(tree), &weight);
    LevelAccount level0 = counts.level0_in_place;
    level0.probes = probes.empty() ? 0 : probes[0];
    level0.counted_probes = tree.counted.empty() ? 0 : tree.counted[0];
    return level0;
  }

  // Level 0 at its fullest among the last kLevel0Window accounts, this one's included, each
  // counted as its files are (Level0InPlace): a flush's account and that of the compaction the
  // flush triggers, which RocksDB may report in either order, then record the same level 0.
  static void PeakLevel0(const LevelAccount& level0, Tree* tree, TreeAccounts* accounts) {
    tree->level0.push_back(level0);
    if (tree->level0.size() > TreeAccounts::kLevel0Window) tree->level0.pop_front();
    for (const LevelAccount& a : tree->level0) {
      if (a.keys + a.pending_keys >=
          accounts->level0_peak.keys + accounts->level0_peak.pending_keys) {
        accounts->level0_peak = a;
      }
    }
  }

  static std::string PathOf(const ROCKSDB_NAMESPACE::LiveFileMetaData& f) {
    return f.directory + "/" + f.relative_filename;
  }

  // The paths of the column family's live files whose filters the listener does not know.
  std::set<std::string> UnknownFiles(const std::string& db_name, const std::string& session,
                                     const std::string& cf_name,
                                     const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live) {
    std::set<std::string> unknown;
    std::lock_guard<std::mutex> lock(mu_);
    const Session& s = SessionLocked(db_name, session, nullptr);
    for (const auto& f : live) {
      if (f.column_family_name != cf_name) continue;
      std::string path = PathOf(f);
      if (s.files.count(path) == 0) unknown.insert(std::move(path));
    }
    return unknown;
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

  // The database's record, started over when `id` names a session other than the one recorded
  // (an empty id, from an event that does not name the session, matches any); with mu_ held.
  // Bounded: past kMaxDatabases databases the record starts over (files no longer known are
  // measured again).
  Session& SessionLocked(const std::string& db_name, const std::string& id, const void* logger) {
    Session& s = BoundedEntry(databases_, db_name, kMaxDatabases);
    if (!id.empty() && s.id != id) {
      s = Session{};
      s.id = id;
    }
    if (logger != nullptr) s.logger = logger;
    return s;
  }
  static Tree& TreeOf(Session& s, const std::string& cf_name) {
    return BoundedEntry(s.trees, cf_name, kMaxDatabases);
  }

  static constexpr size_t kMaxDatabases = 1024;
  static constexpr uint32_t kMaxAccountsUnseen = 4096;
  std::mutex account_mu_;  // taken before mu_, never after it
  std::mutex mu_;
  std::map<std::string, Session> databases_;  // by name (its directory)
};

}  // namespace

ROCKSDB_NAMESPACE::EventListener* NewLeveledBudget() { return new (std::nothrow) LeveledBudget(); }

std::shared_ptr<ROCKSDB_NAMESPACE::EventListener> NewLeveledBudgetListener() {
  return std::make_shared<LeveledBudget>();
}

void PublishAccountsAs(DB* db, const std::string& cf_name,
                       const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& publish_as) {
  LeveledBudget listener;
  listener.AccountAs(db, cf_name, publish_as);
}

}  // namespace sstfilter
