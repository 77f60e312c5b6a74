// SPDX-License-Identifier: Apache-2.0
// What the sstfilter.LeveledBudget listener keeps of each database between RocksDB's events, and
// how it turns a column family's live files into the accounts it publishes (TreeAccounts, for the
// Ledger of listener_channel.h): the files' filters, the running compactions, the probes the
// readers count, level 0 at its fullest lately. It takes RocksDB's live-file metadata and table
// properties and needs no DB*: the listener (leveled_budget.cc) is the adapter that reads them
// from the database as events arrive. Thread-safe: one mutex, taken alone.
#pragma once

#include <rocksdb/metadata.h>
#include <rocksdb/table_properties.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plugin/listener_channel.h"
#include "plugin/probe_counts.h"
#include "plugin/tree_history.h"

namespace sstfilter {

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

// A file's filter as its table properties give it.
FileFilter FilterOf(const ROCKSDB_NAMESPACE::TableProperties& p);

class TreeAccountant {
 public:
  // A table just written (OnTableFileCreated): its filter, with the probe cells of its builds.
  void FileCreated(const std::string& db_name, const std::string& path, FileFilter filter);
  // A file's filter from its table properties (a flush or an ingestion completed), keeping the
  // probe cells its creation brought.
  void Remember(const std::string& db_name, const std::string& session, const std::string& path,
                const FileFilter& filter);
  // A compaction begun: the filters its inputs' table properties give (files written before the
  // listener saw them are measured so), and its inputs, counted where their keys are going until
  // it completes (LevelAccount::pending_keys). Job ids are unique within a session.
  void CompactionBegan(const std::string& db_name, const std::string& session,
                       const std::string& cf_name, int job_id, int output_level,
                       const std::vector<uint64_t>& input_file_numbers,
                       const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties);
  // A compaction completed (or a trivial move): the filters of its files' properties; it no
  // longer runs.
  void CompactionCompleted(const std::string& db_name, const std::string& session,
                           const std::string& cf_name, int job_id,
                           const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties);
  // The table being created for column family cf_name of database db_name, if an event has named
  // the database's session: its tree and the database's logger (SetTableInCreation).
  bool TableInCreationOf(const std::string& db_name, const std::string& cf_name,
                         TableInCreation* table);
  // The paths of the column family's live files whose filters are not known.
  std::set<std::string> UnknownFiles(const std::string& db_name, const std::string& session,
                                     const std::string& cf_name,
                                     const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live);
  // The accounts of the column family cf_name of the database's session (its logger: `logger`)
  // with `live` its live files, `learned` the filters of files not known before (by path), and
  // `changed` whether a flush, compaction or ingestion completed since the last account. Files no
  // longer live are forgotten, but those reported created and not yet live
  // (kMaxAccountsUnseen accounts at most). May throw std::bad_alloc.
  TreeAccounts Account(const std::string& db_name, const std::string& session, const void* logger,
                       const std::string& cf_name,
                       const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live,
                       const std::map<std::string, FileFilter>& learned, bool changed);

  // The column families of the database's session, but `accounted`, that have records, no live
  // file and no running compaction (dropped, or emptied): their records are forgotten and their
  // names returned, so that the listener publishes them empty. A dropped column family sends no
  // more events, and its last accounts would otherwise count its keys under a budget it shared
  // for as long as the database stays open. May throw std::bad_alloc.
  std::vector<std::string> ForgetTreesWithoutFiles(
      const std::string& db_name, const std::string& session, const std::string& accounted,
      const std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData>& live);

  static constexpr size_t kMaxDatabases = 1024;
  static constexpr uint32_t kMaxAccountsUnseen = 4096;

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
                            TreeAccounts* accounts);
  // The filter of live file `path`: the one known, else (a file of the column family accounted)
  // the one learned, else an unmeasured one, kept as such. False: a file of another column
  // family, measured when its own account needs it.
  static bool KnownOrLearned(const std::map<std::string, FileFilter>& known,
                             const std::map<std::string, FileFilter>& learned,
                             const std::string& path, bool in_column_family, FileFilter* filter);
  // The probes the readers counted on a live file's filter since the last account, on `level`,
  // the level the file is on whatever a compaction is making of it; from its second account on,
  // into its exposed probes too (decayed when the tree changed).
  static void SampleProbes(int level, bool first_account, bool changed, FileFilter* filter,
                           LiveCounts* counts);
  // A live file into the account of the level it is counted on: its keys, and its filter's bytes
  // if measured (unmeasured_keys if not).
  static void AddFile(const FileFilter& filter, uint64_t file_keys, LevelAccount* level);
  // Each level's probes: the key-range estimate blended with the readers' counts (BlendProbes);
  // each level's counted probes, which the tree keeps decayed, for the accounts.
  static void BlendCountedProbes(const LiveCounts& counts, bool changed, Tree* tree,
                                 TreeAccounts* accounts);
  // The probes the readers have counted on the tree, decayed (the counts' weight: BlendProbes).
  static double TreeSamples(const Tree& tree);
  // Level 0 as its files are, with the probes it receives: the account's level 0, unless a
  // compaction is rewriting some of its files, whose keys the account counts where they are
  // going. With tree.counted as BlendCountedProbes left it; takes the counts' ranges.
  static LevelAccount Level0InPlace(LiveCounts&& counts, const Tree& tree,
                                    const TreeAccounts& accounts);
  // Level 0 at its fullest among the last kLevel0Window accounts, this one's included, each
  // counted as its files are (Level0InPlace): a flush's account and that of the compaction the
  // flush triggers, which RocksDB may report in either order, then record the same level 0.
  static void PeakLevel0(const LevelAccount& level0, Tree* tree, TreeAccounts* accounts);
  // A file's filter from its properties, keeping the probe cells its creation brought.
  static void RememberLocked(Session& s, const std::string& path, const FileFilter& f);
  static void RememberAllLocked(Session& s,
                                const ROCKSDB_NAMESPACE::TablePropertiesCollection& properties);
  // The database's record, started over when `id` names a session other than the one recorded
  // (an empty id, from an event that does not name the session, matches any); with mu_ held.
  // Bounded: past kMaxDatabases databases the record starts over (files no longer known are
  // measured again).
  Session& SessionLocked(const std::string& db_name, const std::string& id, const void* logger);
  static Tree& TreeOf(Session& s, const std::string& cf_name);

  std::mutex mu_;
  std::map<std::string, Session> databases_;  // by name (its directory)
};

}  // namespace sstfilter
