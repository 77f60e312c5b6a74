// SPDX-License-Identifier: Apache-2.0
// What sstfilter.Leveled has seen of each tree it builds filters for, to tell where a new file's
// keys will live: whether a flush appends, and which levels the tree really has.
//
// Flushes that append. A filter is fixed when its file is written. Monkey's allocation gives
// level 0 the richest filters (it holds few keys), which is right for a flush whose keys
// interleave with the tree's: RocksDB soon compacts it, and rewrites its keys with deeper levels'
// filters. A flush of keys beyond every key flushed lately (time series, logs, queues,
// auto-increment ids) overlaps nothing: RocksDB moves it down unchanged, from 8.4 straight into
// the last level, and its level-0 filter then stays for the file's life. A tree built by appends
// is made of such files only (so a level-0 filter sized for level 0 spends several times the
// budget there), and its absent-key lookups consult about one filter each, since its levels hold
// disjoint key ranges: the allocation that serves it is the budget on every file, with the best
// filter for it.
//
// The guess: a flush appends if its keys overlap none of the last kFlushesPerTree flushes of its
// tree (a column family of one database). A flush of keys across the range overlaps the flush
// before it; an append overlaps none. Ranges are bytewise, whatever the column family's
// comparator: keys that are not ordered bytewise (little-endian integers) look like updates
// across the range, which keeps Monkey's level-0 filter, as before the guess.
//
// The levels a tree has. Monkey's shares assume a tree that fills all num_levels levels, each
// size_ratio times the one above. A real tree fills a few: with dynamic level bytes (RocksDB's
// default from 8.4) its base level and those below it, otherwise level 1 down to the deepest
// level reached yet. A model of more levels than the tree has gives its upper levels filters for
// levels far smaller than they are, and overspends: in
// DbTest.NoTrivialMoveKeepsLeveledWithinItsBudget (num_levels 4, levels 1 and 2 filled), level 1
// held many times the share of the keys the 4-level model gives it, and the tree spent beyond its
// budget. So the policy models the levels that compaction outputs have gone to: from the
// shallowest to the deepest, level 0 as large as the shallowest.
//
// The history lives in memory, per tree (TreeId: with the listener, each open of a database is a
// tree of its own). After a restart, or in a new column family, the first flush has
// nothing to overlap and counts as an append (one file with the budget's filter rather than level
// 0's, until it is compacted), and the levels are num_levels' until the first compaction. A
// wrong guess costs memory or false positives, never a key.
#pragma once

#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "plugin/level_probes.h"

namespace sstfilter {

// map[key], in a map of at most max_keys keys: one that holds max_keys others starts over first.
// For records that may be lost (histories, caches), so that memory stays bounded whatever the
// process opens.
template <typename Map>
typename Map::mapped_type& BoundedEntry(Map& map, const typename Map::key_type& key,
                                        size_t max_keys) {
  if (map.size() >= max_keys && map.count(key) == 0) map.clear();
  return map[key];
}

// The bytewise smallest and largest of a set of keys.
class KeyRange {
 public:
  bool empty() const { return empty_; }
  // Widens the range to take `key`. May throw std::bad_alloc (then call SetUnbounded).
  void Add(std::string_view key);
  // Every key: what a range that could not be recorded stands for.
  void SetUnbounded() {
    empty_ = false;
    unbounded_ = true;
  }
  bool Overlaps(const KeyRange& other) const;
  // Whether the range meets [smallest, largest] (bytewise).
  bool Meets(const std::string& smallest, const std::string& largest) const;
  // The range as bounds (FileRange's): an unbounded range's are the empty key and 64 bytes of
  // 0xff, after every key but the few that begin with them; an empty range's, two empty keys.
  // May throw std::bad_alloc.
  void Bounds(std::string* smallest, std::string* largest) const;

 private:
  bool empty_ = true;
  bool unbounded_ = false;  // covers every key; smallest_ and largest_ unused
  std::string smallest_, largest_;
};

// A tree: a column family of one database. RocksDB tells a filter policy the column family's name
// and the database's info_log, not which database it builds for, and applications often give
// every database one Logger; so a tree is named by its database where the sstfilter.LeveledBudget
// listener is installed (it tells the policy, on the thread that builds each table, which database
// and session the table belongs to: TableInCreation), and by its logger's address where not. A
// database is its name (its directory) and session (DB::GetDbSessionId, new at each open): a
// database reopened, or another opened at the same path or with a logger at a freed address,
// starts a tree of its own and inherits nothing (the tables it writes as it opens, replaying its
// WAL, come before any event names the new session: they are the logger's tree). Without the
// listener, databases that share a
// Logger share a history: a wrong guess that costs memory or false positives, never a key.
struct TreeId {
  std::string database;  // "db:<name>" or "logger:<address>"
  std::string session;   // the database's session id; empty for a logger
  std::string column_family;

  bool operator<(const TreeId& other) const {
    return std::tie(database, column_family, session) <
           std::tie(other.database, other.column_family, other.session);
  }
  bool operator==(const TreeId& other) const {
    return database == other.database && session == other.session &&
           column_family == other.column_family;
  }
};

// The tree of a database's column family (what the listener publishes under), and of a logger's
// (what a policy without the listener uses, and the advisor's accounts). May throw std::bad_alloc.
TreeId DatabaseTree(const std::string& db_name, const std::string& session,
                    const std::string& column_family);
TreeId LoggerTree(const void* logger, const std::string& column_family);

// map[tree] in a map bounded like BoundedEntry, where a tree of another session of the same
// database and column family is forgotten first: that session is closed (RocksDB locks a database
// for one writer), and its records can only mislead.
template <typename Map>
typename Map::mapped_type& TreeEntry(Map& map, const TreeId& tree, size_t max_trees) {
  if (!tree.session.empty() && map.count(tree) == 0) {
    for (auto it = map.lower_bound(TreeId{tree.database, "", tree.column_family});
         it != map.end() && it->first.database == tree.database &&
         it->first.column_family == tree.column_family;) {
      it = it->first.session != tree.session ? map.erase(it) : std::next(it);
    }
  }
  return BoundedEntry(map, tree, max_trees);
}

// One level of a tree as it is: its files' keys (filter entries; a file without a filter counts
// its entries) and filter bytes, and the filter probes it receives per lookup of a key drawn like
// the tree's keys (LeveledBudget's estimate from the files' key ranges: about 1 for a level that
// spans the key space, its share of the keys for a level whose range no other level's keys enter;
// level 0 counts a probe for each of its files that a key's range meets).
//
// A running compaction's input files are counted where their keys are going: `pending_keys` of
// its output level (their filters are being rewritten: their bytes count in the allocation
// nowhere, in a memory budget's bytes as `pending_filter_bytes`), and their key ranges among that
// level's for the probes. Without this, a compaction's outputs were allocated as if its inputs
// stayed beside them: they got far less than their share, the steering then overcorrected, and
// the tree ended beyond its budget.
//
// `probes` blends that estimate with one from the probes sstfilter's readers count (plugin/
// probe_counts.h), samples of 1 probe in kProbeSampleRate, decayed as the tree changes: they say
// which key ranges lookups go to (some more than others: Zipfian lookups, the newest keys of a
// time series), which the estimate cannot know; the files' ranges now say which levels a lookup
// there probes. The counts weigh `TreeAccounts::counted_weight` (0 until readers have counted,
// before any file's second account, and while files not counted hold more than a tenth of the
// keys; level_probes.h's BlendProbes says how). `counted_probes` is what the readers counted on
// the level's files.
struct LevelAccount {
  uint64_t keys = 0;          // in live files no compaction is rewriting
  uint64_t filter_bytes = 0;  // their filters
  // Of those filters, the ones with bytes (a full filter is one cache block: files written with
  // no filter, as optimize_filters_for_hits writes the last level's, have none), and their keys.
  uint64_t filter_files = 0, filter_keys = 0;
  uint64_t pending_keys = 0;  // that running compactions are writing to this level
  // Their filters, measured ones: live until the compaction completes, so a memory budget counts
  // them (SumAccounts); the allocation does not, as its outputs will replace them.
  uint64_t pending_filter_bytes = 0;
  // Of `keys`, those of files whose filters the listener has not measured (a column family other
  // than the default, reopened: until compactions read its files); not in filter_bytes, and
  // neither under nor over the budget in the steering's excess.
  uint64_t unmeasured_keys = 0;
  double probes = 0;          // per lookup
  double counted_probes = 0;  // sampled by the readers, decayed
};

struct TreeAccounts {
  std::vector<LevelAccount> levels;  // by level
  // Level 0 at its fullest lately: the largest of the last kLevel0Window accounts' level 0, the
  // current one included, each counted as its files are, a running compaction's inputs among
  // its keys (unlike `levels[0]`, which counts them where they are going). Level 0 fills between
  // compactions; a file written for a level below it stays while level 0 fills again, so the
  // allocation counts level 0 at its fullest: the tree then spends its budget when level 0 is
  // full, and less when it is not (with large memtables and a small tree, level 0 at its fullest
  // holds a large share of the keys).
  // (The bits per key a memory budget buys count level 0 at less where compactions merge its
  // files: SumAccounts, plugin/memory_budget.h.)
  // Flushes that land while level 0's compaction runs add to its inputs, so under a burst of
  // writes the peak can exceed the compaction trigger, as the filter blocks then live do.
  static constexpr size_t kLevel0Window = 32;
  LevelAccount level0_peak;
  // The flushes, compactions and ingestions completed since the listener first saw the tree (the
  // steering integrates once per change; accounts are also published as flushes and compactions
  // begin).
  uint64_t changes = 0;
  // The weight of the readers' counts in the levels' probes, in [0, 1) (0: the estimate alone).
  double counted_weight = 0;
  // The live files (FileRange), for the lookup heat of key ranges (tree_model.h, HeatOf); null
  // until some file whose probes are counted has had its second account (it is then exposed).
  // Shared: accounts are copied per new file.
  std::shared_ptr<const std::vector<FileRange>> heat;
};

// The recent flushes and the compaction levels of every tree a policy builds filters for (shared
// by the policy's builders; thread-safe). Memory stays bounded: kFlushesPerTree ranges per tree,
// and past kMaxTrees trees the history starts over.
class TreeHistory {
 public:
  static constexpr size_t kFlushesPerTree = 16;
  static constexpr size_t kMaxTrees = 1024;

  // A new level-0 file's token (what Record and Appends tell its own record by).
  uint64_t NewFile();
  // Whether the keys of `file` overlap none of the tree's recent level-0 files but its own (a
  // compaction's output into level 0 among them, as a flush of the keys it covers). May throw
  // std::bad_alloc.
  bool Appends(const TreeId& tree, uint64_t file, const KeyRange& keys) const;
  // Whether the tree's flushes append (ordered keys: a time series, ids): its newest recorded
  // flush overlaps none of the other flushes recorded. True while fewer than two are recorded.
  // (Compactions' outputs into level 0 cover their inputs' keys: not counted.)
  bool FlushesAppend(const TreeId& tree) const;
  // Records (or widens) the key range of `file`, a file written to level 0: by a flush
  // (`flushed`), or a compaction's output there. May throw std::bad_alloc.
  void Record(const TreeId& tree, uint64_t file, const KeyRange& keys, bool flushed);

  // The levels compaction outputs of a tree have gone to, shallowest and deepest (both 0: none
  // yet).
  struct LevelSpan {
    int shallowest = 0, deepest = 0;
  };
  // Records a compaction output's level (at least 1) and returns the span with it. May throw
  // std::bad_alloc.
  LevelSpan RecordCompaction(const TreeId& tree, int level);
  LevelSpan Compactions(const TreeId& tree) const;

  // The budget for the tree's next filters, given the accounts' count of changes and the tree's
  // excess in them: the bits per key its levels below 0 spend beyond what the allocation for the
  // tree as it is gives them (ExcessBelowLevel0, from LeveledPolicy::SteerByAccounts). `budget`,
  // less kSteerProportion of the excess, plus a correction that integrates the excess (kSteerGain
  // of it once per change the accounts count), within kSteerLowest and kSteerHighest times the
  // budget. The proportional part spreads a correction over the whole tree, as if all of it were
  // written again: a correction loaded on the files being written alone (the budget that makes
  // the tree exact at once) starved the few upper-level files of each compaction while the last
  // level stayed over its share, and raised the false positives. The
  // integral takes the tree to its budget where some files are never rewritten (an ingested
  // file, the moved files of an ordered tree), which the proportional part alone leaves it off by
  // as much as they weigh. It also winds down while a growing tree's earlier files spend beyond
  // their shares, and comes back only as the excess turns: a tree that stops growing stays below
  // its shares until it is back (docs/benchmarks.md, a memory budget at 30M keys).
  // `lowest_budget` (bits per key) raises the lower bound, as a cut for the cache does
  // (LeveledPolicy::SteerByAccounts); the integral does not wind up against it either. May throw
  // std::bad_alloc.
  static constexpr double kSteerGain = 0.1, kSteerProportion = 1;
  static constexpr double kSteerLowest = 0.5, kSteerHighest = 1.25;
  double Steer(const TreeId& tree, uint64_t accounts_changes, double excess_bits_per_key,
               double budget, double lowest_budget = 0);
  // The budget Steer last returned for the tree (`budget` before any): what the files being
  // written now are getting.
  double Steered(const TreeId& tree, double budget) const;

  // Whether a filter of `keys` keys takes the richer of a mix, in a tree whose files each take one
  // of the two (LeveledChooser::UnderUniversalCompaction), `richer_fraction` of the keys the
  // richer's: error diffusion. The tree's carry adds that fraction of each filter's keys, and a
  // filter takes the richer while the carry holds at least half its keys, which it then pays. Over
  // the tree's filters the keys given the richer stay within one filter's keys of the mix's
  // share, where one draw per file would stray by the square root of the files, and always taking
  // one of the two would miss the budget by the step between them (under 1 bit per key the
  // leaner is no filter). One carry for the tree's flushes and compactions' outputs alike: the
  // tree's filters spend the mix, not each run's. May throw std::bad_alloc.
  bool DrawsTheRicher(const TreeId& tree, double keys, double richer_fraction);

  // The trees the policy has built filters for, `tree` among them from now on (what a
  // memory_budget spans: plugin/memory_budget.h). May throw std::bad_alloc.
  std::vector<TreeId> TreesWith(const TreeId& tree);

  // The files with whole filters that the policy's builders wrote for a leveled tree, as far as
  // the builds tell: what a policy without the sstfilter.LeveledBudget listener knows of the tree
  // (LeveledPolicy::NewBuilder). A flush adds a file to level 0; a compaction's output at level L
  // replaces the files whose key ranges it meets at L and at L - 1, or at every level above L
  // where L is the shallowest level compactions have reached (RecordCompaction: level 1, or with
  // dynamic level bytes the base level, into which level 0 compacts). A file moved down unchanged
  // stays counted at its old level; a compaction that later meets it there takes it for an input,
  // though it may still live below. The count misses the files of an earlier process and those
  // deleted otherwise (DeleteFilesInRange, a TTL), and drops a file of the level above that an
  // output meets but its compaction did not take. At most kBuiltFilesPerTree files per tree (past
  // that the tree's count starts over).
  // (16,384 files: a terabyte of 64 MiB files; a record holds the file's two boundary keys.)
  static constexpr size_t kBuiltFilesPerTree = size_t{1} << 14;
  // Records a file written at `level` (by a compaction, or a flush) holding `num_keys` keys in
  // `keys` with a filter of `filter_bytes`. O(files x log(files)) for the probes. May throw
  // std::bad_alloc.
  void RecordBuilt(const TreeId& tree, int level, bool by_compaction, const KeyRange& keys,
                   uint64_t num_keys, uint64_t filter_bytes);
  // The tree as its recorded files make it, for the allocation and the cache's cut as the
  // listener's accounts serve them: each level's keys, filter bytes and filters, the probes per
  // lookup their key ranges give (ProbesPerLevel), level 0 at its fullest over the last
  // TreeAccounts::kLevel0Window records (as the listener counts it: it fills between compactions,
  // and a file written for a level below it stays while it fills again), and for `changes` the
  // flushes recorded (the steering integrates once per change; a flush and the compactions it
  // brings are about two of the listener's). No pending keys, counted probes or heat. May throw
  // std::bad_alloc.
  TreeAccounts Built(const TreeId& tree) const;

 private:
  struct Flush {
    uint64_t file = 0;
    KeyRange keys;
    bool flushed = true;
  };
  struct BuiltFile {
    int level = 0;
    KeyRange keys;
    uint64_t num_keys = 0, filter_bytes = 0;
  };
  struct Tree {
    std::deque<Flush> flushes;  // newest last
    std::vector<BuiltFile> built;
    TreeAccounts built_accounts;            // of `built`, as Built returns them
    std::deque<LevelAccount> built_level0;  // level 0 after each of the last records, newest last
    LevelSpan compactions;
    uint64_t steered_changes = 0;  // the accounts' changes last integrated
    double correction = 0;         // bits per key added to the budget
    double steered = 0;            // the last budget returned (0: none)
    double richer_carry = 0;       // keys owed the richer filter (DrawsTheRicher)
  };
  Tree& TreeLocked(const TreeId& tree);

  mutable std::mutex mu_;
  uint64_t next_file_ = 0;
  std::map<TreeId, Tree> trees_;
};

}  // namespace sstfilter
