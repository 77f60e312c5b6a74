// SPDX-License-Identifier: Apache-2.0
// The tree sstfilter.Leveled allocates over when the sstfilter.LeveledBudget listener watches it:
// its levels' shares of the keys and probes (TreeShape), the lookup heat of a key range, the
// excess the steering corrects, and the allocation a tree settles at. leveled_chooser.cc chooses
// one file's filters with them, from what leveled_policy.cc tells it; the allocation itself is
// core/level_allocation.h.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/level_allocation.h"
#include "core/result.h"
#include "plugin/block_cache_fit.h"
#include "plugin/tree_history.h"

namespace sstfilter {

// A level never loses its filter to a file's size: where every filter of a small set costs more
// than the level's bits (each kind has a fixed minimum: a 64-byte block, two buckets, a few
// segments, and the trailer), the file gets the level's filter for large sets (`nominal`,
// the allocation at nominal costs). A few bytes beyond the budget, rather than a read for every
// lookup. (Where the level's base choice at this count is no filter, even if some of its files
// would draw one. The nominal level may itself mix, which can give tiny files a second mixed
// level.)
std::vector<LevelFilter> KeepSmallFilesFilters(std::vector<LevelFilter> priced,
                                               const std::vector<LevelFilter>& nominal);

// Under a memory_budget, no level's filters get more than BudgetCeiling bits per key: the
// budget's bits per key times (1 + kBudgetSwing / level 0's share of the keys at its fullest). So
// level 0 at its fullest holds at most kBudgetSwing of the budget beyond what its keys would cost
// at the budget's bits per key. Why: between two of its compactions level 0 fills from empty to
// its fullest, and the budget must hold the tree with it full; what the allocation gives its keys
// beyond the tree's bits per key is unspent once it empties (where compactions merge level 0's
// files SumAccounts counts it at the midpoint, so about half of that is the peak's overshoot,
// half the settled tree's shortfall; where flushes append, at its fullest).
// Monkey's allocation gives level 0 (each of its files a probe) and the small levels just below
// it several times the last level's bits per key, most under small budgets, where random trees
// then settled far below their budget (docs/benchmarks.md, "Designs measured against it"). The same
// ceiling on every level, so that a compaction of level 0 into a small base level does not raise
// its keys' bits: capped on level 0 alone, that compaction took a tree beyond its budget
// (docs/history.md). The levels under it get Monkey's allocation of what the capped levels leave
// (AllocateWithinCeiling). Where level 0 is small against the tree, the ceiling is far above
// what any level gets, and changes nothing.
inline constexpr double kBudgetSwing = 0.05;
// The cap under a budget, kBudgetSwing past it. A flush of overlapping keys may take the live
// filters up to it, one that appends keeps its floor and may go past it
// (LeveledPolicy::FlushLimit). Beyond it the listener rewrites more (plugin/budget_rewrites.h):
// the files spending kRewriteAbove times their level's share where a tree spends beyond it times
// its shares (PlanRewrites), a universal tree's at kMaxCatchUpBytesPerEvent
// (RewriteBytesPerEvent), and a plan as each compaction begins where the files below level 0
// alone hold more than it times the budget (BudgetedTrees::SettledBeyond).
inline constexpr double kBudgetLimit = 1 + kBudgetSwing;
double BudgetCeiling(double bits_per_key, double level0_share);
// AllocateShares(shares, bits_per_key, kSstfilter, keys_per_filter, probes), then the levels
// above `ceiling` bits per key held at the filter of a tree of one level at it, and the others
// allocated again with what those leave, until none is above it. AllocateShares' allocation where
// none was above, or where the others would be left nothing.
Result<std::vector<LevelFilter>> AllocateWithinCeiling(const std::vector<double>& shares,
                                                       double bits_per_key,
                                                       uint64_t keys_per_filter,
                                                       const std::vector<double>& probes,
                                                       double ceiling);

// A tree as the sstfilter.LeveledBudget listener last saw it (plugin/tree_history.h), for the
// allocation: each level's keys (in live files, and pending from running compactions) and the
// filter probes it receives per lookup.
struct TreeShape {
  std::vector<double> keys, probes;  // by level; empty: no accounts
  std::vector<bool> pending;         // a compaction is writing to the level
  LevelAccount level0_peak;
  double counted_weight = 0;         // of the readers' counts in `probes`
  bool under_memory_budget = false;  // then Allocate keeps each level within BudgetCeiling

  explicit TreeShape(const TreeAccounts& accounts = {}, int level = -1)
      : level0_peak(accounts.level0_peak), counted_weight(accounts.counted_weight) {
    const size_t n = std::max<size_t>(accounts.levels.size(), level + 1);
    keys.assign(n, 0);
    probes.assign(n, 0);
    pending.assign(n, false);
    for (size_t i = 0; i < accounts.levels.size(); ++i) {
      const LevelAccount& a = accounts.levels[i];
      keys[i] = static_cast<double>(a.keys + a.pending_keys);
      probes[i] = a.probes;
      pending[i] = a.pending_keys > 0;
    }
  }

  // No keys anywhere (a new database's first flush): nothing to allocate over.
  bool Empty() const {
    for (const double k : keys) {
      if (k > 0) return false;
    }
    return level0_peak.keys == 0;
  }

  // The shares and probes to allocate over for a file of num_keys written to `level` (-1: no
  // file). The file's keys join its level, unless a compaction writing there counted them
  // already (its inputs' keys). Level 0 counts as at its fullest lately, if that was fuller. A
  // level receives at least the lookups of its own keys (its share), as far as the estimate knows:
  // the readers' counts lower that floor by their weight, to kMinShareOfProbes of the share, so
  // that a level no lookup probes now keeps a filter for the lookups of later (a filter is fixed
  // for its file's life). A flush receives at least one probe per lookup: one that does not
  // append has keys across the range, as far as anyone knows.
  static constexpr double kMinShareOfProbes = 0.25;
  void WithFile(int level, double num_keys, std::vector<double>* shares,
                std::vector<double>* level_probes) const {
    *shares = keys;
    *level_probes = probes;
    if (level >= 0 && !pending[level]) (*shares)[level] += num_keys;
    if (static_cast<double>(level0_peak.keys) > (*shares)[0]) {
      (*shares)[0] = static_cast<double>(level0_peak.keys);
      (*level_probes)[0] = std::max((*level_probes)[0], level0_peak.probes);
    }
    double total = 0;
    for (const double k : *shares) total += k;
    const double floor = std::max(1 - counted_weight, kMinShareOfProbes);
    for (size_t i = 0; i < shares->size(); ++i) {
      (*level_probes)[i] =
          std::max((*level_probes)[i], total > 0 ? floor * (*shares)[i] / total : 0);
    }
    if (level == 0) (*level_probes)[0] = std::max((*level_probes)[0], 1.0);
  }

  // The allocation at bits_per_key over WithFile's `shares` and `probes`, for filters of
  // keys_per_filter keys (0: at nominal sizes): AllocateShares', each level within BudgetCeiling
  // of level 0's share in `shares` where the tree is under_memory_budget.
  Result<std::vector<LevelFilter>> Allocate(const std::vector<double>& shares,
                                            const std::vector<double>& probes, double bits_per_key,
                                            uint64_t keys_per_filter) const;
};

// Lookup heat: how much hotter than its level the key range of a file written to `level` is. The
// shares of the lookups per key (FileRange: sampled probes over exposure) of the counted and
// exposed files now on the level (level_now) that the range meets, over those of all of them, each
// such factor within [kMinHeat, kMaxHeat]; divided by the level's key-weighted geometric mean of
// its files' factors, so that a level whose files are written again with their own heat keeps its
// bits on average. 1 where the level's probes are not known.
// Files are the unit: a range that meets a hot file is as hot as it, though it may share only
// part of its keys (ElasticBF and Mnemosyne work per file, too).
// Each file's factor is its samples against those it would have at the level's shares per key,
// shrunk toward 1 by the level's prior (HeatPriorSamples): (samples + prior) / (expected +
// prior). A fixed prior (kBlockHeatPriorSamples on each side) lost the skew's gain in a tree of
// small files, each of few samples (docs/filters.md); none made heat of counting noise where
// lookups are uniform. The prior follows from how far the level's files' samples scatter beyond
// that noise.
//
// Why a skewed workload needs it: with Zipfian lookups, a few key ranges take most probes, and
// the files that hold them are a small share of each level's keys. Bits moved from the cold
// files to the hot ones lower the false positives the lookups meet: a level's expected false
// positives, sum over files of probes x rate, is least at rates proportional to keys / probes
// (Monkey's argument, per file), which is a hot file's rate over its level's divided by its heat.
inline constexpr double kMinHeat = 0.25, kMaxHeat = 64;
double HeatOf(const std::vector<FileRange>& files, int level, const KeyRange& keys);

// The prior, in samples, with which HeatOf shrinks the heat of `level`'s counted files toward 1:
// empirical Bayes. A file's heat is taken as drawn from a gamma distribution of mean 1 and
// variance v, and its samples as Poisson about v's draw times the samples it would have were it as
// hot as its level; then (samples + 1/v) / (expected + 1/v) is its heat's posterior mean. v is
// DerSimonian and Laird's moment estimate: Pearson's statistic of the samples against their
// expectations (the level's samples in proportion to keys x exposure), less the files' number less
// 1 (its mean where every file is as hot as its level), over the sum of the expectations less the
// sum of their squares over their sum; the prior is 1 / v, infinite where v is not above 0 (the
// samples scatter no more than counting does: every heat 1), where the level has fewer than two
// such files or no samples, or where the expectations' squares overflow. Decayed counts scatter
// less than Poisson ones of the same mean, so v is if anything underestimated: the prior errs
// strong.
double HeatPriorSamples(const std::vector<FileRange>& files, int level);

// How often lookups probe the tree's filter blocks, for the re-reads of those a block cache holds
// whole (block_cache_fit.h: BlockHeatClass, ExpectedRereadsPerProbe), from the readers' counts.
// A counted file's block is probed at its level's mean block's rate times its sampled probes over
// those of a file of the level as exposed (the level's mean share times the file's exposure),
// each with kBlockHeatPriorSamples added (a level of few samples is mostly noise, and stays near
// alike), blended with 1 by the counts' `weight`. Each level is its own mean: how much more an
// upper level's blocks are probed than the last level's is left out, as without counts. Classes by
// the logarithm of the rate, at most kMaxHeatClasses; none (alike) where no level has counts, or
// where the rates are within kAlikeHeat of each other. Shares, not samples, compare files: a file
// written lately has had fewer lookups than an old one and would look colder. Limits: a file of a
// wider key range receives more of its level's lookups (it looks hotter, though its block is larger
// too), and a file exposed lately has few samples (its prior weighs more): under uniform lookups,
// rates that differ by more than kAlikeHeat make classes.
inline constexpr double kBlockHeatPriorSamples = 16, kAlikeHeat = 1.1;
inline constexpr size_t kMaxHeatClasses = 8;
std::vector<BlockHeatClass> BlockHeatOf(const std::vector<FileRange>& files, double weight);

// The rate at which a file of `num_keys` keys in the key range `keys`, written to `level`, would be
// probed, as BlockHeatOf rates its level's files: the shares per key of the counted files its
// range meets, times num_keys, over the level's mean file's exposure, against the level's mean
// file's. 1 where the level has no counts.
// So a file of more keys than its level's mean file is rated higher at the same heat: it spans as
// wide a key range as its inputs held those keys in, and lookups of absent keys go by key range.
double BlockRateOf(const std::vector<FileRange>& files, int level, const KeyRange& keys,
                   double num_keys, double weight);

// One line for the database's LOG (INFO level) when a file of a tree with accounts is begun: what
// the allocation sees. For users asking why a file got its filter, and for the tests.
std::string Describe(const char* policy, const TreeAccounts& accounts, int level, double excess,
                     double budget);

// What the measured files of the levels below 0 of `accounts` spend in filter bits, and their
// shares under `allocation` (by level, at each level's expected bits per key; levels beyond it
// none): the two sides of both the steering's excess (ExcessBelowLevel0) and the rewrites'
// trigger (plugin/budget_rewrites.h).
struct SpendBelowLevel0 {
  double spent_bits = 0, share_bits = 0;
};
SpendBelowLevel0 SpendOf(const TreeAccounts& accounts, const std::vector<LevelFilter>& allocation);

// The tree's excess for the steering (TreeHistory::Steer): the bits its levels below 0 spend
// beyond what the allocation at `budget` for the tree as it is (level 0 at its fullest) gives
// them, per key of those levels once running compactions have written theirs: at what the
// allocation for `writing_budget` (the budget last steered to) gives them. A compaction may run
// for as long as the tree takes to fill (level 1's, in a tree of two levels): its keys must count.
// Level 0's files are compacted within minutes: their spend is no excess to correct in the files
// that stay.
Result<double> ExcessBelowLevel0(const TreeShape& shape, const TreeAccounts& accounts,
                                 double budget, double writing_budget);

// The bits per key sstfilter.Leveled at a budget of bits_per_key gives each level of the tree of
// `accounts` (by level) once every file of it is its own: the allocation for the tree as it is,
// level 0 at its fullest lately, with no excess to steer. What the sstfilter.LeveledBudget listener
// steers a tree toward.
// Under a memory budget, within BudgetCeiling.
Result<std::vector<double>> SteadyBitsPerKey(const TreeAccounts& accounts, double bits_per_key,
                                             bool under_memory_budget = false);
// The allocation whose expected bits per key SteadyBitsPerKey gives: each level's filter, or its
// mix of two (at nominal sizes).
Result<std::vector<LevelFilter>> SteadyAllocation(const TreeAccounts& accounts, double bits_per_key,
                                                  bool under_memory_budget = false);

// What each level of the tree of `accounts` gets under universal compaction, at nominal sizes: the
// mix of a tree of one level everywhere (the budget's two nearest filters), wherever a file is
// written, rewritten or moved, each filter taking one of the two by the tree's error diffusion
// (TreeHistory::DrawsTheRicher), so that a level spends the mix's mean. What the listener's
// rewrites plan with there (plugin/budget_rewrites.h), in place of SteadyAllocation's shares,
// which the policy does not give a universal tree's files.
Result<std::vector<LevelFilter>> OneFilterAllocation(const TreeAccounts& accounts,
                                                     double bits_per_key);
// Which of a model's `model_levels` levels a file written to `level` of a leveled tree belongs to,
// the model's first level below level 0 being the tree's `shallowest`: level 0 to level 0, the
// tree's bottommost level (its largest; the tree may not yet reach the model's levels) to the
// model's last, the others by their depth below `shallowest`, the deepest ones together in the
// model's last.
inline int ModelLevelOf(int level, bool bottommost, int shallowest, int model_levels) {
  if (bottommost) return model_levels - 1;
  if (level == 0) return 0;
  return std::min(std::max(level - shallowest + 1, 1), model_levels - 1);
}
// What each level of the tree of `accounts` gets from a policy's num_levels model of
// `model_levels` levels, at nominal sizes: AllocateLevels' filters at the model's level each
// takes (ModelLevelOf; the deepest level holding keys the bottommost), as the policy gives them
// (LeveledPolicy::PlaceInModel). What the listener's rewrites plan with there, in place of
// SteadyAllocation's shares, which the policy does not give a modelled tree's files: planned at
// those, a file of a middle level that the model gives more came out no smaller, and was chosen
// again as the share fell (MemoryBudgetDb.AModelledTreeIsRewrittenToTheFiltersItsModelGives).
Result<std::vector<LevelFilter>> ModelAllocation(const TreeAccounts& accounts, int model_levels,
                                                 double size_ratio, double bits_per_key);

}  // namespace sstfilter
