// SPDX-License-Identifier: Apache-2.0
#include "plugin/budget_rewrites.h"

#include <rocksdb/listener.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "plugin/bits_adapters.h"
#include "plugin/live_tables.h"
#include "plugin/memory_budget.h"
#include "plugin/printf.h"
#include "plugin/tree_model.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

bool AppendsWithinItsBudget(const TreeId& tree, const BudgetTargets::Target& target) {
  const std::shared_ptr<TreeHistory> history = target.history.lock();
  if (history == nullptr || target.budget_bytes == 0 || !history->FlushesAppend(tree)) return false;
  const BudgetedTrees trees = SumAccounts(history->TreesWith(tree), history.get());
  return static_cast<double>(trees.filter_bytes) <=
         kRewriteAbove * static_cast<double>(target.budget_bytes);
}

uint64_t RewriteBytesPerEvent(bool universal, uint64_t filter_bytes, uint64_t budget_bytes) {
  return universal && static_cast<double>(filter_bytes) >
                          kBudgetLimit * static_cast<double>(budget_bytes)
             ? kMaxCatchUpBytesPerEvent
             : kMaxRewriteBytesPerEvent;
}

RewritePlan PlanRewrites(const std::vector<FileSpend>& files, const std::vector<LevelShare>& levels,
                         uint64_t max_bytes, bool later_plans_take_the_rest) {
  double spent = 0, share = 0, keys = 0;
  std::vector<double> excess(files.size(), 0), saved(files.size(), 0), ratio(files.size(), 0);
  std::vector<bool> covered(files.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    const FileSpend& f = files[i];
    if (f.being_compacted || f.level < 1 || static_cast<size_t>(f.level) >= levels.size()) {
      continue;
    }
    const double bits = 8 * static_cast<double>(f.filter_bytes);
    const double entries = static_cast<double>(f.filter_entries);
    const LevelShare& level = levels[f.level];
    const double level_share = level.bits * entries;
    covered[i] = true;
    spent += bits;
    share += level_share;
    keys += entries;
    excess[i] = bits - level_share;
    saved[i] = bits - (KeepsItsLevelsMix(f, level) ? level.bits : level.rewritten) * entries;
    // A level given no filter at all is left as it is (ratio 0, never chosen): the allocation
    // gives a level none only under budgets of about 1 bit per key or less, and there only for a
    // while; rewriting its files to no filter then left random trees further below their budget
    // once they settled (docs/benchmarks.md).
    ratio[i] = level_share > 0 ? bits / level_share : 0;
  }
  RewritePlan plan;
  if (spent > kRewriteAbove * share) {
    const double least = spent > kBudgetLimit * share ? kRewriteAbove : kRewriteRatio;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < files.size(); ++i) {
      if (covered[i] && files[i].rewritable && files[i].filter_entries > 0 && ratio[i] >= least &&
          saved[i] > 0) {
        candidates.push_back(i);
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [&](size_t a, size_t b) { return excess[a] > excess[b]; });
    double taken = 0;
    uint64_t bytes = 0;
    bool full = false;  // the plan's files end at the first beyond max_bytes
    for (const size_t i : candidates) {
      if (spent - taken <= kRewriteAbove * share) break;
      full = full || (!plan.files.empty() && bytes + files[i].file_bytes > max_bytes);
      if (full && !later_plans_take_the_rest) break;
      if (!full) {
        plan.files.push_back(i);
        bytes += files[i].file_bytes;
      }
      taken += saved[i];
    }
    spent -= taken;
  }
  plan.residual_excess =
      keys > 0 ? (spent - share) / keys : std::numeric_limits<double>::quiet_NaN();
  return plan;
}

namespace {

// The default column family's live files below level 0 with their filters, in `files`; false if
// RocksDB could not give their table properties (then no file is known: not that none is live).
bool FilesOf(ROCKSDB_NAMESPACE::DB* db, std::vector<FileSpend>* files) {
  std::vector<LiveTable> tables;
  if (!LiveTablesOf(db, db->DefaultColumnFamily(), &tables).ok()) return false;
  files->clear();
  for (const LiveTable& t : tables) {
    if (t.meta.level < 1) continue;
    files->push_back({t.meta.name, t.meta.level, t.properties->filter_size,
                      t.properties->num_filter_entries, t.meta.size, /*rewritable=*/true,
                      t.meta.being_compacted,
                      /*other_policy=*/t.properties->filter_policy_name != kLeveledPolicyName});
  }
  return true;
}

// Whether writes wait for compactions (delayed or stopped): then a rewrite must not hold up the
// compactions that would release them.
bool WritesWait(ROCKSDB_NAMESPACE::DB* db) {
  uint64_t stopped = 0, delayed = 0;
  return !db->GetIntProperty("rocksdb.is-write-stopped", &stopped) || stopped > 0 ||
         !db->GetIntProperty("rocksdb.actual-delayed-write-rate", &delayed) || delayed > 0;
}

// Whether the tree's levels below 0 may spend beyond kRewriteAbove times their shares under
// `allocation`, from the listener's accounts (then the files are read).
bool MaySpendBeyond(const TreeAccounts& accounts, const std::vector<LevelFilter>& allocation) {
  const SpendBelowLevel0 spend = SpendOf(accounts, allocation);
  return spend.spent_bits > kRewriteAbove * spend.share_bits;
}

// The filter bits per key of a rewrite's output files, from its CompactionJobInfo (NaN: no
// filter entries in them, no output or no filter).
double OutputBitsPerKey(const ROCKSDB_NAMESPACE::CompactionJobInfo& info) {
  double bytes = 0, entries = 0;
  for (const std::string& path : info.output_files) {
    const auto it = info.table_properties.find(path);
    if (it == info.table_properties.end() || it->second == nullptr) continue;
    bytes += static_cast<double>(it->second->filter_size);
    entries += static_cast<double>(it->second->num_filter_entries);
  }
  return entries > 0 ? 8 * bytes / entries : std::numeric_limits<double>::quiet_NaN();
}

// Rewrites file `f` of `tree` in place, for its level's share `level` (the tree's: tree_bits
// bits per key), and logs it; remembers its outputs if they came out no smaller.
ROCKSDB_NAMESPACE::Status RewriteOne(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree,
                                     const FileSpend& f, const LevelShare& level,
                                     double tree_bits) {
  ROCKSDB_NAMESPACE::CompactionOptions options;
  // The column family's compression for the level, not CompactionOptions' own default; and
  // one subcompaction, on this thread, which RewritingForBudget marks.
  options.compression = ROCKSDB_NAMESPACE::kDisableCompressionOption;
  options.max_subcompactions = 1;
  const double bits =
      8.0 * static_cast<double>(f.filter_bytes) / static_cast<double>(f.filter_entries);
  const double level_share = level.bits;
  const bool keeps_the_mix = KeepsItsLevelsMix(f, level);
  ROCKSDB_NAMESPACE::Status s;
  ROCKSDB_NAMESPACE::CompactionJobInfo info;
  {
    const RewritingForBudgetScope scope(keeps_the_mix);
    s = db->CompactFiles(options, db->DefaultColumnFamily(), {f.name}, f.level,
                         /*output_path_id=*/-1, /*output_file_names=*/nullptr, &info);
  }
  std::string outcome = s.ToString();
  if (s.ok()) {
    const double written = OutputBitsPerKey(info);
    outcome += ", written as";
    for (const std::string& path : info.output_files) outcome += " /" + FileNameOf(path);
    outcome += Printf(" at %.2f bits/key", written);
    if (written * kRewriteAbove > bits) {  // NaN (no keys) is false
      UnshrunkFiles::Global().Add(tree, info.output_files, level_share);
      outcome += ": no smaller, not rewritten again while the level's share stays above " +
                 Printf("%.2f", level_share / kRewriteAbove);
    }
  }
  LogAt(db->GetDBOptions().info_log.get(), ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL,
        Printf("memory_budget: rewriting %s (level %d, filter %.2f bits/key, the level's share "
               "%.2f at %.4g bits/key for the tree%s): %s",
               f.name.c_str(), f.level, bits, level_share, tree_bits,
               keeps_the_mix ? "; another policy's file: its level's mix kept" : "",
               outcome.c_str()));
  return s;
}

// A turn of a process-wide flag: taken if no one held it; given back when the turn ends.
class Turn {
 public:
  explicit Turn(std::atomic<bool>& flag) : flag_(flag), taken_(!flag.exchange(true)) {}
  ~Turn() {
    if (taken_) flag_.store(false);
  }
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;
  bool taken() const { return taken_; }

 private:
  std::atomic<bool>& flag_;
  const bool taken_;
};

}  // namespace

UnshrunkFiles& UnshrunkFiles::Global() {
  static UnshrunkFiles* const files = new UnshrunkFiles;  // never destroyed: used at exit
  return *files;
}

void UnshrunkFiles::Mark(const TreeId& tree, const std::vector<LevelShare>& levels,
                         std::vector<FileSpend>* files, bool forget) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end()) return;
  std::map<std::string, double> kept;
  for (FileSpend& f : *files) {
    const auto was = it->second.find(FileNameOf(f.name));
    if (was == it->second.end() || f.level < 0 || static_cast<size_t>(f.level) >= levels.size() ||
        kRewriteAbove * levels[f.level].bits < was->second) {
      continue;
    }
    f.rewritable = false;
    if (forget) kept.insert(*was);
  }
  if (forget) it->second.swap(kept);
}

void UnshrunkFiles::Add(const TreeId& tree, const std::vector<std::string>& paths,
                        double level_share) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, double>& names = TreeEntry(trees_, tree, TreeHistory::kMaxTrees);
  for (const std::string& path : paths) names[FileNameOf(path)] = level_share;
}

namespace {

std::atomic<bool> rewriting{false};  // the turn of rewrites: one at a time in the process

// A plan of the rewrites of a tree, the default column family of its database (PlanRewrites),
// over its live files below level 0 (`files`) at their levels' shares (`levels`) under `target`.
struct Planned {
  BudgetTargets::Target target;
  bool beyond = false;  // older files hold the trees under the budget beyond it
  uint64_t max_bytes = kMaxRewriteBytesPerEvent;  // of files rewritten (RewriteBytesPerEvent)
  uint64_t ticket = 0;                            // ForgetResidualExcess's, for SetResidualExcess
  std::vector<LevelShare> levels;
  std::vector<FileSpend> files;
  RewritePlan plan;
};

// The first half of a plan of `tree`'s rewrites, from the listener's accounts: its target, its
// levels' shares, and whether older files hold the trees under its budget beyond it
// (BudgetedTrees::SettledBeyond). False where no plan is made: not the default column family of
// its database, no budget target or accounts, an allocation refused, the levels below 0 within
// kRewriteAbove times their shares, an ordered tree within its budget's bytes; or, `only_beyond`,
// the trees not beyond their budget. Forgets the residual excess (NaN) once past the target and
// the accounts, unless `only_beyond` finds them not beyond: the steering answers its own excess
// until the plan's rewrites are done.
bool PrepareAPlan(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree, bool only_beyond, Planned* out) {
  TreeAccounts accounts;
  if (tree.column_family != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName ||
      !BudgetTargets::Global().Get(tree, &out->target) || !Ledger::Global().Get(tree, &accounts)) {
    return false;
  }
  const BudgetTargets::Target& target = out->target;
  const std::shared_ptr<TreeHistory> history = target.history.lock();
  uint64_t trees_filter_bytes = 0;  // every live file's of the trees under the budget
  if (history != nullptr && target.budget_bytes > 0) {
    const BudgetedTrees trees = SumAccounts(history->TreesWith(tree), history.get());
    out->beyond = trees.SettledBeyond(static_cast<double>(target.budget_bytes));
    trees_filter_bytes = trees.filter_bytes;
  }
  if (only_beyond && !out->beyond) return false;
  out->ticket = BudgetTargets::Global().ForgetResidualExcess(tree);
  // The shares of what the policy gives the files: a universal tree's take one mix wherever they
  // are (LeveledChooser::UnderUniversalCompaction), a modelled tree's the model's, not their
  // level's.
  const bool universal = db->GetOptions(db->DefaultColumnFamily()).compaction_style ==
                         ROCKSDB_NAMESPACE::kCompactionStyleUniversal;
  const Result<std::vector<LevelFilter>> allocation =
      universal ? OneFilterAllocation(accounts, target.bits_per_key)
      : target.model_levels > 0
          ? ModelAllocation(accounts, target.model_levels, target.size_ratio, target.bits_per_key)
          : SteadyAllocation(accounts, target.bits_per_key, /*under_memory_budget=*/true);
  if (!allocation.ok()) return false;
  out->max_bytes = RewriteBytesPerEvent(universal, trees_filter_bytes, target.budget_bytes);
  out->levels.clear();
  for (const LevelFilter& level : allocation.value()) {
    out->levels.push_back(
        {level.ExpectedBitsPerKey(), level.base.bits_per_key, level.Largest().bits_per_key});
  }
  return MaySpendBeyond(accounts, allocation.value()) && !AppendsWithinItsBudget(tree, target);
}

// The second half: the live files, the plan over them. While the trees are beyond their budget
// it counts rewritten the files past RewriteBytesPerEvent: the events that follow choose them,
// while the trees stay so. `forget_unshrunk`: UnshrunkFiles::Mark forgets the names no longer
// live, which only the holder of the turn of rewrites may do (a rewrite adds names as it ends).
// False if RocksDB could not list the files.
bool MakeThePlan(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree, bool forget_unshrunk,
                 Planned* out) {
  if (!FilesOf(db, &out->files)) return false;  // Mark would forget every unshrunk file
  UnshrunkFiles::Global().Mark(tree, out->levels, &out->files, forget_unshrunk);
  out->plan = PlanRewrites(out->files, out->levels, out->max_bytes,
                           /*later_plans_take_the_rest=*/out->beyond);
  return true;
}

}  // namespace

size_t RewriteFilesOverBudget(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree) {
  Planned planned;
  if (!PrepareAPlan(db, tree, /*only_beyond=*/false, &planned) || WritesWait(db)) return 0;
  const Turn turn(rewriting);
  if (!turn.taken() || !MakeThePlan(db, tree, /*forget_unshrunk=*/true, &planned)) return 0;
  size_t rewritten = 0;
  for (const size_t i : planned.plan.files) {
    const FileSpend& f = planned.files[i];
    if (WritesWait(db) ||
        !RewriteOne(db, tree, f, planned.levels[f.level], planned.target.bits_per_key).ok()) {
      break;
    }
    ++rewritten;
  }
  if (rewritten == planned.plan.files.size()) {
    BudgetTargets::Global().SetResidualExcess(tree, planned.plan.residual_excess, planned.ticket);
  }
  return rewritten;
}

void PlanAsACompactionBegins(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree) {
  BudgetTargets::Target target;
  // A rewrite under way publishes its own plan's residual once its rewrites are done.
  if (!BudgetTargets::Global().Get(tree, &target) || !std::isnan(target.residual_excess) ||
      rewriting.load()) {
    return;
  }
  Planned planned;
  if (!PrepareAPlan(db, tree, /*only_beyond=*/true, &planned) || WritesWait(db) ||
      !MakeThePlan(db, tree, /*forget_unshrunk=*/false, &planned)) {
    return;
  }
  BudgetTargets::Global().SetResidualExcess(tree, planned.plan.residual_excess, planned.ticket);
  LogAt(db->GetDBOptions().info_log.get(), ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL,
        Printf("memory_budget: a compaction begins while older files hold the tree beyond its "
               "budget: the rewrites planned, run as compactions complete, leave %.2f bits/key "
               "beyond the levels' shares",
               planned.plan.residual_excess));
}

}  // namespace sstfilter
