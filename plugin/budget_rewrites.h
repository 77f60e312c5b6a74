// SPDX-License-Identifier: Apache-2.0
// Rewriting the files whose filters spend beyond a memory_budget (plugin/memory_budget.h).
//
// A filter is fixed for its file's life. As a tree under a memory budget grows, the bits per key
// the budget buys fall, and the files written earlier keep their richer filters until a
// compaction rewrites them: the last level's, most of the keys, only when the level above
// overflows into their key range, and the moved files of ordered keys never. The steering answers
// with leaner filters for the files being written, down to half what the budget buys, and no
// further. So the sstfilter.LeveledBudget listener, as a compaction of a tree whose files below
// level 0 spend beyond kRewriteAbove times their levels' shares completes, rewrites in place
// (DB::CompactFiles to the same level, one subcompaction) the files whose filters spend the most
// beyond their level's share (PlanRewrites), at most RewriteBytesPerEvent of them (at least
// one file): each then gets its level's filter unsteered (RewritingForBudget), the leaner where
// the level mixes two (LeveledChooser::ForABudgetRewrite: the richer, drawn by the same keys,
// would come back; the leaner may be no filter), and the plan counts it at that (LevelShare);
// but a file another policy wrote (a database switched to the budget), which the mix's richer
// filter would shrink too, keeps the mix (KeepsItsLevelsMix, below). A universal tree's files take
// one mix wherever they are, each filter one of its two by the tree's error diffusion
// (LeveledChooser::UnderUniversalCompaction), so its plan's shares are that mix on every level
// (OneFilterAllocation); a tree the policy's num_levels model allocates
// takes the model's filters (ModelAllocation). The LOG line of each rewrite says what it wrote. A
// file may still come out no smaller: where the readers' counted probes (heat) give it more, or a
// small file's fixed bytes. Such a file is not chosen again until its level's share falls below
// 1/kRewriteAbove of what it was then (UnshrunkFiles). The steering answers the excess of the files
// not rewritten (BudgetTargets::Target::residual_excess), so that files being written do not also
// pay for what the rewrites take back.
//
// A database switched to a budget from richer filters holds more than the budget in files below
// level 0 no compaction is rewriting (BudgetedTrees::SettledBeyond): no file written now can
// bring it within, only the rewrites, 64 MiB per compaction (256 MiB in a universal tree). While
// that holds, the plan counts rewritten every file it would choose but for RewriteBytesPerEvent
// (the events that follow choose them), and one is made as a compaction begins where none stands
// since the accounts changed (PlanAsACompactionBegins): the first compaction after the switch, and
// those after a plan stopped while writes waited. The compactions' outputs then get about their
// levels' shares, where the steering would give them its floor, half what the budget buys, to pay
// for files the rewrites then take back anyway, and the tree would settle well below its budget.
// Trees filled under the budget are planned as before: where a fill's rewrites counted so, its
// trees wrote more and its late-data trees settled lower (docs/benchmarks.md). And an old file
// keeps its level's mix where even the richer filter saves kRewriteAbove: its keys drew from no
// mix, and each is rewritten once; given the leaner, a level whose old files were all rewritten so
// would settle at the leaner, below its share. Not the files the policy wrote: where those kept the
// mixes, fills from empty wrote more (docs/benchmarks.md).
//
// A tree whose flushes append (ordered keys: TreeHistory::FlushesAppend) is rewritten only once
// the trees under its budget also hold more than kRewriteAbove times its bytes
// (AppendsWithinItsBudget). Its level 0 counts at its fullest (SumAccounts): when its files move
// down whole, the levels below spend beyond their shares while the tree holds less than its
// budget. Rewriting then frees bytes no flush has asked for yet: a tree that stops growing keeps
// them unspent, and one that grows rewrites the same files again as its bits per key fall. With
// no plan, the steering answers that excess itself (no residual_excess is published): the
// flushes meanwhile are written leaner than their level's share, within what the budget has
// left. Past the budget's bytes, the rewrites chosen by the shares still make that room. A
// random tree's files are rewritten by the shares alone: gated so, the files not rewritten kept
// their excess, the steering took it back from the flushes, and lookups found more false
// positives while the tree was written (docs/benchmarks.md).
//
// The cost is writes: a rewrite reads and writes its file. Files are rewritten only while their
// tree spends beyond its shares, and only those spending at least kRewriteRatio times their
// level's share (a rewrite saves at least a fifth of the filter), or, while the tree spends beyond
// kBudgetLimit times its shares, kRewriteAbove times. Level 0's files are left to the compactions
// that soon take them. A rewrite runs on the compaction thread that completed, which waits (RocksDB
// advises against long work in a listener's callback): so none starts while writes are delayed or
// stopped (waiting for compactions), one runs at a time in the process, and the
// database cannot close until it returns (a rewrite once shutdown began is refused). The default
// column family only: a listener has no handle on the others, which the steering alone keeps; a
// compaction completed in any column family of the database gives the default's tree its turn.
#pragma once

#include <rocksdb/db.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/listener_channel.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"

namespace sstfilter {

// The margin of every rule here: a tree is rewritten beyond kRewriteAbove times its shares, and
// until within them (PlanRewrites); an ordered one only beyond that times its budget's bytes
// (AppendsWithinItsBudget); a rewrite saving less than that factor came out no smaller, and is
// not repeated until its level's share falls by it (UnshrunkFiles).
inline constexpr double kRewriteAbove = 1.02;
inline constexpr double kRewriteRatio = 1.25;  // times the level's share, for a file
// Beyond kBudgetLimit (tree_model.h) times its shares, a tree also rewrites the files spending
// kRewriteAbove times their level's share: the limit holds once compactions settle, whatever the
// files that kRewriteRatio leaves (the early files of a tree that stopped growing soon after its
// budget bound).
inline constexpr uint64_t kMaxRewriteBytesPerEvent = 64 << 20;  // of files read and written again
inline constexpr uint64_t kMaxCatchUpBytesPerEvent = 4 * kMaxRewriteBytesPerEvent;

// The bytes of files one event's rewrites may read and write again, for a tree (`universal`: under
// universal compaction) under a budget of `budget_bytes` whose trees' live files' filters hold
// `filter_bytes`: kMaxRewriteBytesPerEvent, or, for a universal tree, kMaxCatchUpBytesPerEvent
// while those filters hold more than kBudgetLimit times the budget, the most a user should see.
// A universal tree's full compaction writes its last sorted run, most of its keys, at what the
// budget buys then; as the tree grows, that run spends beyond its share until it is rewritten or
// merged again, which a growing universal tree does rarely, so at the usual pace its rewrites
// may not catch up before the tree stops growing. The other way to hold the cap, each
// compaction's outputs limited to what it leaves, starves the runs written after the full
// compaction, and every lookup probes every run. A leveled tree beyond the cap is so for a while
// after flushes that append (they keep their floor), not for good: there the faster pace wrote
// more, to no lower peak (docs/benchmarks.md, "Designs measured against it").
uint64_t RewriteBytesPerEvent(bool universal, uint64_t filter_bytes, uint64_t budget_bytes);

// A live file below level 0, as the plan of rewrites sees it.
struct FileSpend {
  std::string name;  // as DB::CompactFiles takes it
  int level = 1;
  uint64_t filter_bytes = 0, filter_entries = 0;
  uint64_t file_bytes = 0;
  // False for a file an earlier rewrite left no smaller, while its level's share has not fallen
  // below 1 / kRewriteAbove of what it was then (UnshrunkFiles::Mark): never chosen.
  bool rewritable = true;
  // A file a running compaction is rewriting: never chosen, nor counted in the plan (its keys are
  // going elsewhere), but still live.
  bool being_compacted = false;
  // Written under another filter policy than sstfilter.Leveled (TableProperties'
  // filter_policy_name): its keys drew from no mix (KeepsItsLevelsMix).
  bool other_policy = false;
};

// A level's share of the budget, and what a file rewritten there gets, in bits per key.
struct LevelShare {
  // The level's filters' mean: ExpectedBitsPerKey of the plan's allocation (SteadyAllocation's,
  // OneFilterAllocation's or ModelAllocation's).
  double bits = 0;
  double rewritten = 0;  // the leaner filter of the level's mix, or its one filter
  double richer = 0;     // the richer filter of the level's mix, or its one filter
};

// Whether a rewrite of `f` keeps the mix of `level` (its keys draw one of the two filters, as a
// compaction's outputs' do, and the plan counts it at the level's mean, `bits`) rather than take
// the leaner: where another policy wrote it (`other_policy`) and even the richer, at nominal size,
// saves kRewriteAbove. A file sstfilter.Leveled wrote may have drawn the richer, and its keys would
// draw it again. The plan decides, and the rewrite does as it decided (RewritingForBudgetScope):
// the richer at the file's own key count may differ from nominal by a few percent, and a rewrite
// that came out no smaller is not repeated (UnshrunkFiles).
inline bool KeepsItsLevelsMix(const FileSpend& f, const LevelShare& level) {
  return f.other_policy && f.filter_entries > 0 &&
         kRewriteAbove * level.richer * static_cast<double>(f.filter_entries) <=
             8 * static_cast<double>(f.filter_bytes);
}

struct RewritePlan {
  std::vector<size_t> files;  // indexes into the files planned over, the greatest excess first
  // What the files spend beyond their shares, the chosen at what a rewrite gives them, per key
  // of all the files (NaN: no files); and those max_bytes leaves, where later plans take them.
  double residual_excess = 0;
};

// Which of `files` to rewrite, given each level's share (by level), those being compacted left
// out: none unless the files spend beyond kRewriteAbove times their levels' shares; then those
// rewritable spending at least kRewriteRatio times their level's share (kRewriteAbove times, where
// the files spend beyond kBudgetLimit times the shares) and more than a rewrite gives them, the
// greatest excess first, until the files, the chosen counted at what a rewrite gives them, spend
// within kRewriteAbove times the shares, or the chosen hold max_bytes (the first is chosen whatever
// its size). And the excess over their shares that the files keep, the chosen at what a rewrite
// gives them, and, `later_plans_take_the_rest`, so the files that would be chosen but for
// max_bytes. What a rewrite gives a file: the level's mean where it keeps the mix
// (KeepsItsLevelsMix), else `rewritten`.
RewritePlan PlanRewrites(const std::vector<FileSpend>& files, const std::vector<LevelShare>& levels,
                         uint64_t max_bytes, bool later_plans_take_the_rest);

// The files, by tree, whose rewrite came out no smaller (by less than kRewriteAbove), with their
// level's share then (above). Names no longer live are forgotten as the files are marked; a file
// a compaction is rewriting is still live (should the compaction fail, it stays).
class UnshrunkFiles {
 public:
  static UnshrunkFiles& Global();
  // Marks those of the tree's live `files` not rewritable whose level's share (`levels`, by
  // level) has not fallen below 1/kRewriteAbove of what it was at their rewrite; `forget`, forgets
  // the others (not while another thread may be rewriting: its outputs are not in `files`).
  void Mark(const TreeId& tree, const std::vector<LevelShare>& levels,
            std::vector<FileSpend>* files, bool forget = true);
  // The output files of a rewrite that came out no smaller (paths or names), at `level_share`.
  // May throw std::bad_alloc.
  void Add(const TreeId& tree, const std::vector<std::string>& paths, double level_share);

 private:
  std::mutex mu_;
  std::map<TreeId, std::map<std::string, double>> trees_;  // by file name
};

// Whether `tree`'s flushes append (TreeHistory::FlushesAppend) and the trees under the budget of
// its target hold at most kRewriteAbove times its bytes (SumAccounts over the Ledger): then none
// of its files is rewritten (above). False once the policy is gone. May throw std::bad_alloc.
bool AppendsWithinItsBudget(const TreeId& tree, const BudgetTargets::Target& target);

// The rewrites of the default column family of `db` (whose tree is `tree`), if the tree has a
// budget target and spends beyond it; returns how many files were rewritten. RocksDB's errors (a
// file compacted meanwhile, a database closing) end the rewrites, each in the LOG. May throw
// std::bad_alloc: its caller, the listener, catches at the RocksDB boundary and logs it (the turn
// is given back as the stack unwinds).
size_t RewriteFilesOverBudget(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree);

// Where `tree`'s residual excess is unknown (NaN), older files hold it beyond its budget (above),
// no rewrite runs in the process and writes do not wait: the plan of its rewrites, made as
// RewriteFilesOverBudget makes it, and its residual published, nothing rewritten (the compactions
// that complete run the rewrites, planning again). May throw std::bad_alloc.
void PlanAsACompactionBegins(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree);

}  // namespace sstfilter
