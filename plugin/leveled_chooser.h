// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled's choice of one file's filters (LeveledChooser, the FilterChooser its builders
// ask at Finish and for the estimates before it), over the allocations the policy computes once and
// shares with its builders (LeveledAllocations), and the search that both cache-aware cuts make
// (CheapestLeaner: the tree's budget in LeveledPolicy::CacheBitsPerKey, one file's filter in
// LeveledChooser's FitCache). The policy (plugin/policies.h, leveled_policy.cc) decides what a
// chooser is told: the model's place, the listener's accounts, the cache, the heat.
#pragma once

#include <rocksdb/env.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/level_allocation.h"
#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"

namespace sstfilter {

// The search both cache-aware cuts make (the tree's budget, CacheBitsPerKey; one file's filter,
// FitCache). A leaner budget costs a higher rate, so it can cost kMinLeanerGain less only where
// the re-reads are more than kMinLeanerGain / (1 - kMinLeanerGain) of the rate: below that, no
// search. Otherwise budgets from `richest` down to `floor` in steps of `step` bits per key
// (rounded to 1/16 bit: the allocations are cached by budget), at most kMaxLeanerSteps of them,
// each priced by `cost(bits, &cost)` (false: no answer there, and the search stops); a leaner
// one is taken when it costs at least kMinLeanerGain less than the best so far (`best_cost`,
// of the richest, to start), not for the rounding of its size. The budget taken, or `richest`.
inline constexpr double kMinLeanerGain = 0.01;
inline constexpr int kMaxLeanerSteps = 32;
inline bool LeanerMayPay(double rate, double rereads) {
  return rereads > rate * kMinLeanerGain / (1 - kMinLeanerGain);
}
template <typename Cost>
double CheapestLeaner(double richest, double floor, double step, double best_cost, Cost cost) {
  double best = richest;
  for (int i = 1; i <= kMaxLeanerSteps; ++i) {
    const double bits = std::max(std::round(16 * (richest - i * step)) / 16, floor);
    double bits_cost = 0;
    if (!cost(bits, &bits_cost)) break;
    if (bits_cost < (1 - kMinLeanerGain) * best_cost) {
      best = bits;
      best_cost = bits_cost;
    }
    if (bits <= floor) break;
  }
  return best;
}

// Allocations by level count and key count, computed on first use (costly enough to keep; the
// partitions of a partitioned filter mostly share one key count) and then shared by the builders.
// Priced at each exact count: a fuse table's cells per key do not fall steadily as sets grow (its
// segments double in length at some counts), so one count's choice may not fit a neighbour's.
struct LeveledAllocations {
  static constexpr size_t kMaxCached = 4096;  // then the cache starts over: memory stays bounded

  // AllocateLevels, for filters of `keys` keys.
  Result<std::vector<LevelFilter>> Get(int num_levels, double size_ratio, double bits_per_key,
                                       uint64_t keys) {
    return Cached(/*single=*/false, num_levels, size_ratio, bits_per_key, keys);
  }
  // The best single filter within bits_per_key (UniformAllocation, one level), never a mix: for a
  // filter that must keep within its bits whichever keys it holds.
  Result<LevelFilter> Single(double size_ratio, double bits_per_key, uint64_t keys) {
    const Result<std::vector<LevelFilter>> a =
        Cached(/*single=*/true, 1, size_ratio, bits_per_key, keys);
    if (!a.ok()) return Err(a.error());
    return a.value()[0];
  }

 private:
  Result<std::vector<LevelFilter>> Cached(bool single, int num_levels, double size_ratio,
                                          double bits_per_key, uint64_t keys);

  std::mutex mu;
  std::map<std::tuple<bool, int, uint64_t, double, double>, std::vector<LevelFilter>> cache;
};

// One file's filters: its level's in the allocation priced at each filter's key count (a smaller
// partition: at its file's fullest partition's, ForKeys). A flush (level 0) of a leveled tree
// first asks whether it appends, once its first filter finishes (the estimates before then guess
// from the keys so far), and records its keys for later flushes.
// With the tree's accounts (the sstfilter.LeveledBudget listener), the allocation is over the
// levels' real shares, the file's own level counting its keys, for the steered budget.
class LeveledChooser : public FilterChooser {
 public:
  LeveledChooser(std::shared_ptr<LeveledAllocations> allocations, double size_ratio,
                 double bits_per_key, int num_levels, int modelled)
      : allocations_(std::move(allocations)),
        size_ratio_(size_ratio),
        bits_per_key_(bits_per_key),
        num_levels_(num_levels),
        modelled_(modelled) {}

  // For a file written to level 0 (`flushed`: by a flush, not a compaction): the history it
  // consults and joins, as `file` of `tree`.
  void FollowFlushes(std::shared_ptr<TreeHistory> history, TreeId tree, bool flushed) {
    file_ = history->NewFile();
    flushed_ = flushed;
    history_ = std::move(history);
    tree_ = std::move(tree);
  }

  // The tree as it is (TreeShape; empty: the model's), the file's level in it (-1: one level
  // holding every key), and the budget to allocate.
  void UseAccounts(TreeShape tree, int level, double bits_per_key) {
    tree_shape_ = std::move(tree);
    level_ = level;
    bits_per_key_ = bits_per_key;
  }

  // The block cache that holds the tree's filters whole (block_cache_fit.h), the tree's other
  // filter blocks in it and their mean size: a filter whose block would be re-read more often
  // than its bits save false positives gets fewer (FitCache). `log` (may be null) is told of each
  // cut.
  void UseCache(const ShardLoad& load, ROCKSDB_NAMESPACE::Logger* log) {
    cache_ = load;
    log_ = log;
  }

  // Under a model the user fixed (num_levels): the budget the cache leaves the tree
  // (CacheBitsPerKey). Without the listener: the record of the tree's files that this file's
  // filter joins (TreeHistory::RecordBuilt), as a file of `level` written by a compaction or a
  // flush.
  void UseBudget(double bits_per_key) { bits_per_key_ = bits_per_key; }
  void RecordBuiltInto(std::shared_ptr<TreeHistory> history, TreeId tree, int level,
                       bool by_compaction) {
    built_into_ = std::move(history);
    built_tree_ = std::move(tree);
    built_level_ = level;
    built_by_compaction_ = by_compaction;
  }
  void Finished(uint64_t num_keys, const KeyRange& file_keys, uint64_t filter_bytes) override;

  // The lookup heat of the tree's files (HeatOf), and the weight of the counts it comes from.
  void UseHeat(std::shared_ptr<const std::vector<FileRange>> heat, double weight) {
    heat_ = std::move(heat);
    heat_weight_ = weight;
  }

  // A tree under universal compaction, of `num_levels` levels, `tree` in `history`. Each filter
  // takes one of its mix's two, by the tree's error diffusion (TreeHistory::DrawsTheRicher): a
  // universal tree is a few large sorted runs, over which a draw per file would not average out.
  // And where it has levels below level 0, every flush lives only
  // until a compaction merges it, whatever its keys (SpendAtMost): universal compaction merges
  // sorted runs by their sizes, not by overlap, so appended keys do not keep their flush's filter
  // for life as in a leveled tree (unless the user allows it trivial moves, which the policy cannot
  // see). A tree of level 0 alone keeps its flushes' floor: its accounts cannot tell the runs
  // compactions wrote from the flushes, so they cannot see older runs hold it beyond the budget
  // (BudgetedTrees::SettledBeyond), and its flushes would then get no filter, each costing every
  // lookup a read until a compaction merges it.
  void UnderUniversalCompaction(int num_levels, std::shared_ptr<TreeHistory> history, TreeId tree) {
    flushes_merged_ = num_levels > 1;
    draws_ = std::move(history);
    draws_tree_ = std::move(tree);
  }

  // A file rewritten in place for a memory_budget (plugin/budget_rewrites.h). Its keys are counted
  // already: the file it rewrites is live in the accounts (RocksDB 7.8 to 9.11 report no begin of
  // a DB::CompactFiles), or pending on its level, so they join no level a second time. And it
  // takes the leaner filter of its level's mix, unless `keeps_the_mix` (another policy wrote the
  // file: KeepsItsLevelsMix, budget_rewrites.h): the listener rewrites the files that spend beyond
  // their level's share, and a file that drew the richer filter would draw it again from the same
  // keys, written again for nothing.
  void ForABudgetRewrite(bool keeps_the_mix) {
    budget_rewrite_ = true;
    rewrite_keeps_the_mix_ = keeps_the_mix;
  }

  // A flush under a memory_budget: its filters together spend at most `bytes_left` (what the
  // budget has left beyond the live files' filters), each at least `floor_bits_per_key`. A flush
  // adds keys, so the bits per key the budget buys fall, and the files written before it give back
  // what they spend beyond that only when a compaction lets the listener rewrite them; a tree whose
  // writes stop after a flush would otherwise keep the overspend for good. The floor (the
  // steering's, TreeHistory::kSteerLowest of what the budget buys) keeps a flush's filter useful
  // to the lookups of its keys (level 0: every lookup probes it) until the next compaction
  // rewrites the files that spend the most. A flush whose keys overlap the tree's recent flushes
  // (random keys; known once its first filter finishes), and any flush of a tree
  // UnderUniversalCompaction with levels below level 0, lives only until the next compaction merges
  // it, so its floor gives way where the filters would hold more than `overshoot_bytes` beyond the
  // budget: a budget is a ceiling first (infinite where no flush could keep the tree within it:
  // LeveledPolicy::FlushLimit). A flush that appends to a leveled tree keeps its floor: it moves
  // down whole and keeps its filter for life, and a leaner one would cost its key range's lookups
  // until a rewrite. The limit holds for each file, not in expectation: a filter that may spend
  // more than it gets the best single filter within it, not a mix of two, since one file may draw
  // the richer of a mix. `log` (may be null) is told of each filter so limited.
  void SpendAtMost(double bytes_left, double floor_bits_per_key, double overshoot_bytes,
                   ROCKSDB_NAMESPACE::Logger* log);

  bool WantsKeyRange() const override {
    return history_ != nullptr || heat_ != nullptr || built_into_ != nullptr;
  }

  Result<LevelFilter> ForKeys(uint64_t num_keys, const KeyRange& file_keys,
                              bool finishing) override;

 private:
  // The file's level's filter: the budget's for an appended flush, else the allocation's (the
  // model's, or over the tree's accounts), for the file's heat and its cache.
  Result<LevelFilter> LevelsFilter(uint64_t num_keys, const KeyRange& file_keys, bool finishing);

  // The level's filter for this file: for its key range's heat once it is finished (ForHeat), and
  // for the cache its block will live in (FitCache, at the block's rate).
  Result<LevelFilter> ForFile(const Result<LevelFilter>& level, uint64_t num_keys,
                              const KeyRange& file_keys, bool finishing);

  // A file asks for at most one allocation per doubling of its keys in the estimates, and one
  // per partition size at Finish.
  static constexpr size_t kMaxCached = 64;

  // The level's filter, made richer or leaner for the lookup heat of the file's keys (HeatOf):
  // the rate over the heat, in bits at the filter's own bits per halving of the rate, times the
  // counts' weight (few counts, little change); a file of level 0 keeps its level's.
  Result<LevelFilter> ForHeat(const Result<LevelFilter>& level, uint64_t num_keys,
                              const KeyRange& file_keys);

  // The cache-aware choice for one file. A probe of the file's filter costs, in storage reads,
  // its false-positive rate plus the expected re-reads of its block (ExpectedRereadsPerProbe:
  // the block's shard overflows). The file gets the level's filter or the best filter at fewer
  // bits per key, down to its budget, whichever costs least: bits spent on a rate are worth
  // nothing while the block is evicted, and Monkey's allocation gives its richest filters (the
  // largest blocks) to the levels every lookup probes, the blocks whose eviction costs the most.
  // The budget itself (bits_per_key_, steered) is the tree's for its cache (CacheBitsPerKey),
  // which is where every block gets smaller; here only this block does, against the others as
  // they are. The steering sees the bits a cut leaves unspent as the tree spending less than its
  // allocation, and raises the budget of later files, within its bounds. The candidates are at
  // least kCutStepBitsPerKey apart, at most kMaxLeanerSteps of them (a tiny file's fixed costs
  // make hundreds of bits per key): CheapestLeaner.
  // With the readers' counts, a block probed more than its level's mean block stays cached
  // longer (`block_rate`, BlockRate): a hot file keeps more of its filter.
  static constexpr double kCutStepBitsPerKey = 0.25;
  Result<LevelFilter> FitCache(const Result<LevelFilter>& level, uint64_t num_keys, bool finishing,
                               double block_rate);

  // The rate at which lookups will probe the file's block against the mean block's (BlockRateOf),
  // where the readers' counts say blocks are not probed alike: the file's range when it is
  // finished; 1 for the estimates, and on level 0 (whose files take their level's filter).
  double BlockRate(uint64_t num_keys, const KeyRange& file_keys, bool finishing) const;

  // `filter` (chosen for more keys) priced at num_keys: the same filters, their bits per key
  // what they take for these keys; their rates, as in every allocation, the nominal ones.
  static Result<LevelFilter> AtKeys(LevelFilter filter, uint64_t num_keys);

  static Result<LevelFilter> OneOf(const Result<std::vector<LevelFilter>>& a, int level);

  // A universal tree's filter, `chosen` for its `num_keys` keys: where that is a mix, as the filter
  // finishes, the one of the two the tree's error diffusion gives it (UnderUniversalCompaction),
  // counting the filter's own keys (not its file's fullest partition's); the mix for the
  // estimates (its expected size). A budget rewrite's leaner and a flush's limited filter are one
  // filter already, and draw nothing: the carry pays only for filters it chose.
  Result<LevelFilter> OneFilter(const Result<LevelFilter>& chosen, uint64_t num_keys,
                                bool finishing);

  bool Appends(const KeyRange& file_keys, bool finishing);

  const std::shared_ptr<LeveledAllocations> allocations_;
  const double size_ratio_;
  double bits_per_key_;
  const int num_levels_, modelled_;
  std::shared_ptr<TreeHistory> history_;     // null: not a flush of a leveled tree
  std::shared_ptr<TreeHistory> built_into_;  // null: the file's filter is recorded nowhere
  TreeId built_tree_;
  int built_level_ = 0;
  bool built_by_compaction_ = false;
  TreeId tree_;
  uint64_t file_ = 0;
  bool flushed_ = true;
  bool decided_ = false, appends_ = false;
  uint64_t fullest_partition_keys_ = 0;  // of the file's filters finished so far
  TreeShape tree_shape_;                 // no levels: no accounts, the modelled tree
  int level_ = 0;
  std::map<uint64_t, Result<LevelFilter>> by_keys_;
  std::shared_ptr<const std::vector<FileRange>> heat_;  // null: no file exposed, or no weight
  double heat_weight_ = 0;
  std::shared_ptr<TreeHistory>
      draws_;  // a universal tree's error diffusion (UnderUniversalCompaction); null: none
  TreeId draws_tree_;
  bool flushes_merged_ = false;  // whatever their keys
  bool budget_rewrite_ = false;
  bool rewrite_keeps_the_mix_ = false;
  ShardLoad cache_;  // no shards: filters not held whole by an evicting cache, or no accounts
  // SpendAtMost's: infinite, no limit. bytes_left_ is negative beyond the budget, and falls by
  // what each finished filter may spend.
  double bytes_left_ = std::numeric_limits<double>::infinity(), floor_bits_per_key_ = 0;
  double overshoot_bytes_ = 0;
  std::map<uint64_t, LevelFilter> fitted_;  // FitCache's answers to the estimates, by key count
  ROCKSDB_NAMESPACE::Logger* log_ = nullptr;
};

}  // namespace sstfilter
