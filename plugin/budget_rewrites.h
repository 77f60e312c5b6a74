// SPDX-License-Identifier: Apache-2.0
// Rewriting the files whose filters spend beyond a memory_budget (plugin/memory_budget.h).
//
// A filter is fixed for its file's life. As a tree under a memory budget grows, the bits per key
// the budget buys fall, and the files written earlier keep their richer filters until a
// compaction rewrites them: the last level's, most of the keys, only when the level above
// overflows into their key range, and the moved files of ordered keys never. The steering answers
// with leaner filters for the files being written, down to half what the budget buys, and no
// further. So the sstfilter.LeveledBudget listener, as a compaction of a tree whose budget is
// spent beyond kRewriteAbove completes, rewrites in place (DB::CompactFiles, same level) the files
// whose filters spend the most beyond their level's share of the budget, at most
// kMaxRewritesPerEvent of them: each then gets its level's filter at the budget's bits per key.
//
// The cost is writes: a rewrite reads and writes its file. Only files spending at least
// kRewriteRatio times their level's share are rewritten (each rewrite saves at least a fifth of
// its filter), only while the tree spends beyond the budget. Level 0's files are left to the
// compactions that soon take them. RocksDB's documentation advises against long work in a
// listener's callback; a rewrite runs on the compaction thread that completed, which waits, and
// the database cannot close until it returns (a rewrite after shutdown began is refused). The
// default column family only: a listener has no handle on the others, which the steering alone
// keeps (docs/filters.md gives the bound).
#pragma once

#include <rocksdb/db.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/tree_history.h"

namespace sstfilter {

inline constexpr double kRewriteAbove = 1.02;  // times the budget's share, for the tree
inline constexpr double kRewriteRatio = 1.25;  // times the level's share, for a file
// Beyond kBudgetLimit times its share, a tree also rewrites the files spending kRewriteAbove
// times their level's share: the limit holds once compactions settle, whatever the files that
// kRewriteRatio leaves (the early files of a tree that stopped growing soon after its budget
// bound: 1.066x at 1M ordered keys without this).
inline constexpr double kBudgetLimit = 1.05;
inline constexpr size_t kMaxRewritesPerEvent = 4;

// What the policy and the listener tell each other of each tree under a memory budget: one per
// process, thread-safe, bounded like the Ledger.
// - bits_per_key: what the budget buys now, as its policy last computed it
//   (LeveledPolicy::TreeBitsPerKey), for the listener's rewrites;
// - residual_excess: what the tree's files below level 0 spend beyond their levels' shares and
//   no rewrite will take back (files under kRewriteRatio times their share), in bits per key of
//   those levels, as the listener last found it (NaN: not yet), for the policy's steering: the
//   steering answers that excess only, so that files being written do not also pay for what the
//   rewrites take back (which left a growing tree at 0.62x its budget).
class BudgetTargets {
 public:
  struct Target {
    double bits_per_key = 0;
    double residual_excess = std::numeric_limits<double>::quiet_NaN();
  };
  static BudgetTargets& Global();
  void SetBitsPerKey(const TreeId& tree, double bits_per_key);
  void SetResidualExcess(const TreeId& tree, double bits_per_key);
  bool Get(const TreeId& tree, Target* target) const;

 private:
  mutable std::mutex mu_;
  std::map<TreeId, Target> trees_;
};

// Whether the calling thread is rewriting a file for a memory budget (RewriteFilesOverBudget, whose
// DB::CompactFiles builds the new file on this thread): its filters are the level's share of the
// budget, unsteered, since the rewrite is itself the correction.
bool RewritingForBudget();

// A live file below level 0, as the choice of rewrites sees it.
struct FileSpend {
  std::string name;  // as DB::CompactFiles takes it
  int level = 1;
  uint64_t filter_bytes = 0, filter_entries = 0;
};

// Which of `files` to rewrite (indexes, the greatest excess first), given each level's share of
// the budget in bits per key (level_bits, by level: SteadyBitsPerKey): none unless the files
// spend beyond kRewriteAbove times their levels' shares; then the files spending at least
// kRewriteRatio times their level's share (kRewriteAbove times, where the files spend beyond
// kBudgetLimit times the shares), the greatest excess first, until their excess covers the
// tree's or max_files are chosen.
std::vector<size_t> ChooseRewrites(const std::vector<FileSpend>& files,
                                   const std::vector<double>& level_bits, size_t max_files);

// The excess of `files` beyond their levels' shares that rewrites will not take back (that of the
// files under kRewriteRatio times their share), per key of the files below level 0 (0: none).
double ResidualExcess(const std::vector<FileSpend>& files, const std::vector<double>& level_bits);

// The rewrites of the default column family of `db`, if its tree has a budget target and spends
// beyond it; returns how many files were rewritten. Never throws; errors (a file compacted
// meanwhile, a database closing) end the rewrites quietly.
size_t RewriteFilesOverBudget(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree);

}  // namespace sstfilter
