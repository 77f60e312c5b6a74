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
#include <string>
#include <utility>
#include <vector>

#include "plugin/leveled_budget.h"
#include "plugin/policies.h"
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
  double heat = 0;       // sampled probes, decayed like the levels' (FileHeat)
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

// The probes the readers counted, blended with the key-range estimate (ProbesPerLevel) into
// the probes each level receives. Counted probes are the readers' sampled counts per level
// (decayed by kCountDecay per completed flush or compaction, so that they follow a workload that
// changes), scaled to the estimate's total probes per lookup; they weigh n / (n + kPriorSamples)
// for n counted samples (about 256 x 32 probes weigh a half), and nothing while files holding
// more than a tenth of the tree's keys are not counted (after a restart: files written before it,
// until compaction rewrites them).
constexpr double kCountDecay = 0.75, kPriorSamples = 256, kMinCountedKeys = 0.9;
std::vector<double> BlendProbes(const std::vector<double>& estimated,
                                const std::vector<double>& counted, double counted_key_fraction,
                                double* weight) {
  double n = 0, total = 0;
  for (const double c : counted) n += c;
  for (const double e : estimated) total += e;
  *weight = counted_key_fraction >= kMinCountedKeys && n > 0 ? n / (n + kPriorSamples) : 0;
  std::vector<double> probes = estimated;
  if (*weight == 0) return probes;
  for (size_t i = 0; i < probes.size(); ++i) {
    const double c = i < counted.size() ? counted[i] : 0;
    probes[i] = (1 - *weight) * estimated[i] + *weight * total * c / n;
  }
  return probes;
}

// A live file of the tree: its level, keys, and bytewise key range.
struct FileRange {
  int level = 0;
  double keys = 0;
  std::string smallest, largest;
};

// The filter probes each level receives per lookup of a key drawn like the tree's keys: a lookup
// consults a level's filter when its key falls in the range of one of the level's files (level 0:
// of each of its files). A key of file G is taken to fall in level L's ranges when G's range
// meets one of them: exact where ranges nest or are disjoint (random keys, where every level spans
// the key space: 1 probe per level; ordered keys, where levels hold disjoint ranges: each level's
// share of the keys), an overestimate at the edges of partial overlaps. Ranges are bytewise: a
// comparator that is not (little-endian integers) makes them overlap, which counts every level
// probed, Monkey's assumption. O(files x log(files)) per level.
std::vector<double> ProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels) {
  std::vector<double> probes(num_levels, 0);
  double total = 0;
  for (const FileRange& f : files) total += f.keys;
  if (total <= 0) return probes;
  auto meets = [](const FileRange& a, const std::string& lo, const std::string& hi) {
    return !(a.largest < lo || hi < a.smallest);
  };
  for (size_t level = 0; level < num_levels; ++level) {
    // The level's ranges, merged and sorted (level 0's files are counted one by one).
    std::vector<std::pair<std::string, std::string>> ranges;
    for (const FileRange& f : files) {
      if (static_cast<size_t>(f.level) == level) ranges.emplace_back(f.smallest, f.largest);
    }
    if (ranges.empty()) continue;
    if (level == 0) {
      for (const auto& [lo, hi] : ranges) {
        for (const FileRange& g : files) probes[0] += meets(g, lo, hi) ? g.keys : 0;
      }
    } else {
      std::sort(ranges.begin(), ranges.end());
      std::vector<std::pair<std::string, std::string>> merged;
      for (auto& r : ranges) {
        if (!merged.empty() && !(merged.back().second < r.first)) {
          if (merged.back().second < r.second) merged.back().second = std::move(r.second);
        } else {
          merged.push_back(std::move(r));
        }
      }
      for (const FileRange& g : files) {
        // The first merged range that does not end before g begins.
        const auto it = std::lower_bound(merged.begin(), merged.end(), g.smallest,
                                         [](const std::pair<std::string, std::string>& r,
                                            const std::string& key) { return r.second < key; });
        if (it != merged.end() && meets(g, it->first, it->second)) probes[level] += g.keys;
      }
    }
    probes[level] /= total;
  }
  return probes;
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
    std::vector<double> counted;        // per level, sampled probes, decayed (BlendProbes)
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
    Guard([&] {
      ClearTableInCreation();
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
    Guard([&] {
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
    Guard([&] { Account(db, info.cf_name, /*changed=*/false); });
  }
  void OnFlushCompleted(DB* db, const ROCKSDB_NAMESPACE::FlushJobInfo& info) override {
    Guard([&] {
      Remember(db, info.file_path, FilterOf(info.table_properties));
      Account(db, info.cf_name, /*changed=*/true);
    });
  }
  // A compaction's inputs count where their keys are going until it completes (LevelAccount);
  // their table properties, which RocksDB gives here, measure files the listener did not see
  // written.
  void OnCompactionBegin(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard([&] {
      const std::string session = SessionIdOf(db);
      {
        std::lock_guard<std::mutex> lock(mu_);
        Session& s = SessionLocked(db->GetName(), session, nullptr);
        for (const auto& [path, props] : info.table_properties) {
          if (props != nullptr) RememberLocked(s, path, FilterOf(*props));
        }
        // Job ids are unique within a session (a new session has a new Session).
        Compaction& c = TreeOf(s, info.cf_name).running[info.job_id];
        c = Compaction{};
        c.output_level = info.output_level;
        for (const auto& f : info.input_file_infos) c.inputs.push_back(f.file_number);
      }
      Account(db, info.cf_name, /*changed=*/false);
    });
  }
  // Also called for trivial moves, whose outputs are the inputs at another level. Not called for
  // a compaction that RocksDB abandons as it closes: its record goes with its session's.
  void OnCompactionCompleted(DB* db, const ROCKSDB_NAMESPACE::CompactionJobInfo& info) override {
    Guard([&] {
      const std::string session = SessionIdOf(db);
      {
        std::lock_guard<std::mutex> lock(mu_);
        Session& s = SessionLocked(db->GetName(), session, nullptr);
        for (const auto& [path, props] : info.table_properties) {
          if (props != nullptr) RememberLocked(s, path, FilterOf(*props));
        }
        TreeOf(s, info.cf_name).running.erase(info.job_id);
      }
      Account(db, info.cf_name, /*changed=*/true);
    });
  }
  void OnExternalFileIngested(DB* db,
                              const ROCKSDB_NAMESPACE::ExternalFileIngestionInfo& info) override {
    Guard([&] {
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
  // tree's accounts as they were.
  template <typename F>
  static void Guard(F&& f) {
    try {
      f();
    } catch (const std::exception&) {
    }
  }

  void Remember(DB* db, const std::string& path, const FileFilter& f) {
    const std::string session = SessionIdOf(db);
    std::lock_guard<std::mutex> lock(mu_);
    RememberLocked(SessionLocked(db->GetName(), session, nullptr), path, f);
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
    const std::map<uint64_t, FileFilter> learned =
        LearnFilters(db, cf_name, live, UnknownFiles(db_name, session, cf_name, live));
    TreeAccounts accounts;
    std::vector<LevelAccount>& levels = accounts.levels;
    std::vector<FileRange> ranges;
    std::map<std::string, FileFilter> still_live;
    std::lock_guard<std::mutex> lock(mu_);
    Session& s = SessionLocked(db_name, session, db_logger.get());
    Tree& tree = TreeOf(s, cf_name);
    tree.changes += changed ? 1 : 0;
    accounts.changes = tree.changes;
    std::map<uint64_t, int> rewritten;  // input file number -> the level its keys are going to
    for (const auto& [job, c] : tree.running) {
      for (const uint64_t number : c.inputs) rewritten[number] = c.output_level;
    }
    std::map<std::string, FileFilter>& known = s.files;
    std::vector<double> sampled;  // per level, the probes counted since the last account
    double keys_counted = 0, keys_all = 0;
    auto heat = std::make_shared<std::vector<FileHeat>>();
    for (const auto& f : live) {
      const std::string path = PathOf(f);
      auto it = known.find(path);
      FileFilter filter;
      if (it != known.end()) {
        filter = it->second;
      } else if (f.column_family_name != cf_name) {
        continue;  // another column family's: measured when its own account needs it
      } else {
        const auto l = learned.find(f.file_number);
        if (l != learned.end()) {
          filter = l->second;
        } else {
          filter.measured = false;  // kept as such: not asked for again
        }
      }
      if (f.column_family_name != cf_name || f.level < 0) {
        filter.seen_live = true;
        still_live[path] = std::move(filter);
        continue;
      }
      const uint64_t file_keys =
          filter.measured && filter.filter_entries > 0 ? filter.filter_entries : f.num_entries;
      // Bytewise, whichever way the comparator orders the two ends (a reverse comparator).
      const bool ordered = !(f.largestkey < f.smallestkey);
      const std::string& smallest = ordered ? f.smallestkey : f.largestkey;
      const std::string& largest = ordered ? f.largestkey : f.smallestkey;
      keys_all += static_cast<double>(file_keys);
      if (!filter.cells.empty()) {
        // Probes land on the level the file is on, whatever a compaction is making of it.
        const uint64_t now = filter.SampledNow();
        if (sampled.size() <= static_cast<size_t>(f.level)) sampled.resize(f.level + 1);
        const double delta = static_cast<double>(now >= filter.sampled ? now - filter.sampled : 0);
        sampled[f.level] += delta;
        filter.sampled = now;
        filter.heat = filter.heat * (changed ? kCountDecay : 1) + delta;
        keys_counted += static_cast<double>(file_keys);
        heat->push_back({f.level, static_cast<double>(file_keys), filter.heat, smallest, largest});
      }
      const uint64_t filter_bytes = filter.filter_bytes;
      const bool measured = filter.measured;
      filter.seen_live = true;
      still_live[path] = std::move(filter);
      const auto input = rewritten.find(f.file_number);
      const int level = input == rewritten.end() ? f.level : input->second;
      if (level < 0) continue;
      if (levels.size() <= static_cast<size_t>(level)) levels.resize(level + 1);
      if (input != rewritten.end()) {
        levels[level].pending_keys += file_keys;
      } else {
        levels[level].keys += file_keys;
        if (measured) {
          levels[level].filter_bytes += filter_bytes;
        } else {
          levels[level].unmeasured_keys += file_keys;
        }
      }
      ranges.push_back({level, static_cast<double>(file_keys), smallest, largest});
    }
    // Files reported created that are not live yet.
    for (auto& [path, filter] : known) {
      if (!filter.seen_live && ++filter.accounts_unseen <= kMaxAccountsUnseen &&
          still_live.count(path) == 0) {
        still_live.emplace(path, std::move(filter));
      }
    }
    known.swap(still_live);
    std::vector<double>& counted = tree.counted;
    counted.resize(std::max(counted.size(), std::max(sampled.size(), levels.size())), 0);
    for (size_t i = 0; i < counted.size(); ++i) {
      counted[i] = counted[i] * (changed ? kCountDecay : 1) + (i < sampled.size() ? sampled[i] : 0);
    }
    if (levels.size() < counted.size()) levels.resize(counted.size());
    const std::vector<double> probes =
        BlendProbes(ProbesPerLevel(ranges, levels.size()), counted,
                    keys_all > 0 ? keys_counted / keys_all : 0, &accounts.counted_weight);
    for (size_t i = 0; i < levels.size(); ++i) {
      levels[i].probes = probes[i];
      levels[i].counted_probes = counted[i];
    }
    if (!heat->empty()) accounts.heat = std::move(heat);
    // Level 0 at its fullest among the last kLevel0Window accounts.
    tree.level0.push_back(levels.empty() ? LevelAccount{} : levels[0]);
    if (tree.level0.size() > TreeAccounts::kLevel0Window) tree.level0.pop_front();
    for (const LevelAccount& a : tree.level0) {
      if (a.keys + a.pending_keys >=
          accounts.level0_peak.keys + accounts.level0_peak.pending_keys) {
        accounts.level0_peak = a;
      }
    }
    if (publish_as != nullptr) {
      Ledger::Global().Publish(LoggerTree(publish_as.get(), cf_name), publish_as,
                               std::move(accounts));
    } else {
      Ledger::Global().Publish(DatabaseTree(db_name, session, cf_name), db_logger,
                               std::move(accounts));
    }
  }

  static std::string PathOf(const ROCKSDB_NAMESPACE::LiveFileMetaData& f) {
    return f.directory + "/" + f.relative_filename;
  }

  // The numbers of the column family's live files whose filters the listener does not know.
  std::vector<uint64_t> UnknownFiles(const std::string& db_name, const std::string& session,
                                     const std::string& cf_name,
                                     const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live) {
    std::vector<uint64_t> unknown;
    std::lock_guard<std::mutex> lock(mu_);
    const Session& s = SessionLocked(db_name, session, nullptr);
    for (const auto& f : live) {
      if (f.column_family_name == cf_name && s.files.count(PathOf(f)) == 0) {
        unknown.push_back(f.file_number);
      }
    }
    std::sort(unknown.begin(), unknown.end());
    return unknown;
  }

  // The filters of `unknown` files, by number, from the table properties RocksDB holds for the
  // column family (with max_open_files = -1, RocksDB's default, every table reader is open and
  // this reads nothing; otherwise RocksDB reads what its table cache lacks, through the database's
  // own file system). Only the default column family's: a listener has no handle on the others,
  // whose files are measured as compactions read them (OnCompactionBegin).
  static std::map<uint64_t, FileFilter> LearnFilters(
      DB* db, const std::string& cf_name,
      const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live,
      const std::vector<uint64_t>& unknown) {
    std::map<uint64_t, FileFilter> learned;
    if (unknown.empty() || cf_name != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName) return learned;
    ROCKSDB_NAMESPACE::TablePropertiesCollection props;
    if (!db->GetPropertiesOfAllTables(db->DefaultColumnFamily(), &props).ok()) return learned;
    std::map<std::string, uint64_t> number_of;  // path -> file number
    for (const auto& f : live) number_of[PathOf(f)] = f.file_number;
    for (const auto& [path, p] : props) {
      const auto n = number_of.find(path);
      if (p != nullptr && n != number_of.end() &&
          std::binary_search(unknown.begin(), unknown.end(), n->second)) {
        learned[n->second] = FilterOf(*p);
      }
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

ROCKSDB_NAMESPACE::Status AccountTreeForAdvice(
    DB* db, const std::string& cf_name, const ROCKSDB_NAMESPACE::FilterPolicy& policy,
    const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& info_log) {
  using ROCKSDB_NAMESPACE::Status;
  // By name (Customizable::CheckedCast): RocksDB builds without RTTI host sstfilter built in.
  const auto* leveled = policy.CheckedCast<LeveledPolicy>();
  if (leveled == nullptr) {
    return Status::InvalidArgument(std::string("AccountTreeForAdvice: ") + policy.Name() +
                                   " is not sstfilter.Leveled");
  }
  if (db == nullptr || info_log == nullptr) {
    return Status::InvalidArgument("AccountTreeForAdvice: needs a database and a logger");
  }
  try {
    LeveledBudget listener;
    listener.AccountAs(db, cf_name, info_log);
    const TreeId tree = LoggerTree(info_log.get(), cf_name);
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
    db->GetLiveFilesMetaData(&live);
    KeyRange below_level0;
    for (const auto& f : live) {
      if (f.column_family_name != cf_name || f.level < 1) continue;
      below_level0.Add(f.smallestkey);
      below_level0.Add(f.largestkey);
    }
    if (!below_level0.empty()) leveled->RecordEarlierFlush(tree, below_level0);
    TreeAccounts accounts;
    if (!Ledger::Global().Get(tree, &accounts)) {
      return Status::Aborted("AccountTreeForAdvice: the accounts were not kept");
    }
    const Result<std::vector<double>> bits =
        SteadyBitsPerKey(accounts, leveled->BudgetBitsPerKey());
    if (!bits.ok()) return Status::InvalidArgument("AccountTreeForAdvice: " + bits.error());
    // Each level's filters as the policy would have made them: nothing to steer.
    for (size_t i = 0; i < accounts.levels.size() && i < bits.value().size(); ++i) {
      LevelAccount& a = accounts.levels[i];
      a.filter_bytes = static_cast<uint64_t>(static_cast<double>(a.keys) * bits.value()[i] / 8);
    }
    Ledger::Global().Publish(tree, info_log, std::move(accounts));
  } catch (const std::exception& e) {
    return Status::Aborted(std::string("AccountTreeForAdvice: ") + e.what());
  }
  return Status::OK();
}

}  // namespace sstfilter
