// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled (plugin/policies.h, LeveledPolicy): its options, where a new file sits in the
// model or in the listener's accounts, the tree's budget and its cut for the block cache, and the
// builder for a new file, with the chooser (plugin/leveled_chooser.h) told all of that.
#include <rocksdb/env.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
#include "plugin/leveled_chooser.h"
#include "plugin/listener_channel.h"
#include "plugin/policies.h"
#include "plugin/policy_options.h"
#include "plugin/printf.h"
#include "plugin/tree_model.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

namespace {
// Why `memory` cannot be kept without the sstfilter.LeveledBudget listener: refused at DB::Open
// (ValidateOptions), logged where a table is built without it (TreeBitsPerKey).
std::string NeedsTheListener(const MemoryBudget& memory) {
  return "memory_budget=" + memory.ToString() + " needs the " + kLeveledBudgetName +
         " listener (listeners=" + kLeveledBudgetName + "), which counts the keys";
}

}  // namespace

LeveledPolicy::LeveledPolicy()
    : allocations_(std::make_shared<LeveledAllocations>()),
      history_(std::make_shared<TreeHistory>()) {
  RegisterOptions("leveled", &shape_, &LeveledTypeInfo());
}

const char* LeveledPolicy::kClassName() { return kLeveledPolicyName; }

double LeveledPolicy::BudgetBitsPerKey() const {
  return std::isnan(budget_.bits_per_key) && shape_.memory_budget.Given()
             ? kBitsPerKeyUnderMemoryBudget
             : budget_.bits_per_key;
}

Result<FilterSpec> LeveledPolicy::Spec() const {
  if (!std::isnan(budget_.fp_rate)) {
    return Err(
        "takes bits_per_key (a memory budget averaged over all keys of the tree) or "
        "memory_budget (bytes for all its trees), not fp_rate: the rate of each level follows "
        "from the budget");
  }
  if (!shape_.memory_budget.Given() && std::isnan(budget_.bits_per_key)) {
    return Err("needs bits_per_key (bits averaged over all keys of the tree, in [" +
               FormatNumber(kMinBitsPerKey) + ", " + FormatNumber(kMaxBitsPerKey) +
               "]) or memory_budget (bytes for all its trees, or a share of the block cache), for "
               "example sstfilter.Leveled:10 or {id=sstfilter.Leveled;memory_budget=1G}");
  }
  if (shape_.num_levels < 0 || shape_.num_levels > kMaxLevels) {
    return Err("num_levels must be in [0, " + std::to_string(kMaxLevels) +
               "] (0: the levels compaction outputs have reached), got " +
               std::to_string(shape_.num_levels));
  }
  const Result<std::vector<LevelFilter>> uniform =
      UniformAllocation(1, shape_.size_ratio, BudgetBitsPerKey());
  if (!uniform.ok()) return Err(uniform.error());
  const FilterChoice& only = uniform.value()[0].base;
  if (!only.has_filter) return Err("bits_per_key is too small for any filter");
  return only.spec;
}

ROCKSDB_NAMESPACE::Status LeveledPolicy::ValidateOptions(
    const ROCKSDB_NAMESPACE::DBOptions& db_options,
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const {
  const ROCKSDB_NAMESPACE::Status checked =
      SstFilterPolicy::ValidateOptions(db_options, cf_options);
  if (!checked.ok()) return checked;
  const bool listening =
      std::any_of(db_options.listeners.begin(), db_options.listeners.end(),
                  [](const std::shared_ptr<ROCKSDB_NAMESPACE::EventListener>& l) {
                    return l != nullptr && std::strcmp(l->Name(), kLeveledBudgetName) == 0;
                  });
  if (!shape_.memory_budget.Given()) {
    if (!listening) warned_->opened_without_listener.store(true, std::memory_order_relaxed);
    return checked;
  }
  try {  // the messages allocate: nothing may throw into DB::Open
    if (!listening) {
      return ROCKSDB_NAMESPACE::Status::InvalidArgument(std::string(Name()) + ": " +
                                                        NeedsTheListener(shape_.memory_budget) +
                                                        "; the database's listeners have none");
    }
    const auto* table =
        cf_options.table_factory == nullptr
            ? nullptr
            : cf_options.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
    if (table != nullptr) {
      const Result<uint64_t> bytes = shape_.memory_budget.BytesFor(*table);
      if (!bytes.ok()) {
        return ROCKSDB_NAMESPACE::Status::InvalidArgument(std::string(Name()) + ": " +
                                                          bytes.error());
      }
    }
  } catch (const std::exception&) {
    return ROCKSDB_NAMESPACE::Status::MemoryLimit(
        "sstfilter: out of memory checking the filter policy's options");
  }
  return checked;
}

Result<std::vector<LevelFilter>> LeveledPolicy::Allocation(int num_levels,
                                                           uint64_t keys_per_filter) const {
  return allocations_->Get(num_levels, shape_.size_ratio, BudgetBitsPerKey(), keys_per_filter);
}

LeveledPolicy::ModelPlace LeveledPolicy::PlaceInModel(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context, const TreeId& tree) const {
  ModelPlace place;
  // A column family of more levels than the model takes: its deepest levels modelled as one.
  place.num_levels =
      std::min(shape_.num_levels > 0 ? shape_.num_levels : context.num_levels, kMaxLevels);
  if (context.compaction_style != ROCKSDB_NAMESPACE::kCompactionStyleLevel ||
      place.num_levels < 1 || context.level_at_creation < 0) {
    place.num_levels = 1;  // the allocation of a tree of one level, holding every key
    return place;
  }
  const int level = std::min(context.level_at_creation, place.num_levels - 1);
  int shallowest = 1;  // the first level below level 0 in the model
  if (shape_.num_levels == 0 && place.num_levels > 1) {
    // The levels the tree really has (plugin/tree_history.h): level 0, then those compaction
    // outputs have gone to.
    const TreeHistory::LevelSpan span =
        level > 0 ? history_->RecordCompaction(tree, level) : history_->Compactions(tree);
    if (span.deepest > 0) {
      shallowest = span.shallowest;
      place.num_levels = std::min(span.deepest - span.shallowest + 2, kMaxLevels);
    }
  }
  // A file RocksDB writes to the bottommost level holding data belongs to the tree's largest
  // level, whatever its number: the tree may not (yet) reach num_levels.
  place.level = ModelLevelOf(level, context.is_bottommost, shallowest, place.num_levels);
  return place;
}

double LeveledPolicy::TreeBitsPerKey(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                                     const TreeId& tree, FlushLimit* limit) const {
  const double ceiling = BudgetBitsPerKey();
  const MemoryBudget& memory = shape_.memory_budget;
  if (!memory.Given()) return ceiling;
  auto warn_once = [&](std::atomic<bool>& warned, const std::string& why) {
    if (!warned.exchange(true)) {
      LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
            std::string(Name()) + ": " + why + "; its files get bits_per_key " +
                FormatNumber(ceiling) + " (said once)");
    }
    return ceiling;
  };
  const Result<uint64_t> bytes = memory.BytesFor(context.table_options);
  if (!bytes.ok()) return warn_once(warned_->no_cache, bytes.error());
  const std::vector<TreeId> all = history_->TreesWith(tree);
  const BudgetedTrees trees = SumAccounts(all, history_.get());
  if (trees.trees.empty()) {
    // A table written as the database opens (its WAL replayed) comes before the listener has
    // named the database: its tree has no accounts, listener or not.
    if (context.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kRecovery) return ceiling;
    return warn_once(warned_->no_listener, NeedsTheListener(memory));
  }
  const double bits = BitsPerKeyWithin(bytes.value(), trees.keys, ceiling);
  const double budget_bytes = static_cast<double>(bytes.value());
  limit->bytes_left = budget_bytes - static_cast<double>(trees.filter_bytes);
  const double overshoot = kBudgetSwing * budget_bytes;
  limit->overshoot_bytes =
      trees.SettledBeyond(budget_bytes) ? std::numeric_limits<double>::infinity() : overshoot;
  // For the rewrites, of the trees with accounts only: a tree of a closed session (its database
  // reopened, perhaps under another policy) would take the place of the open one's target.
  BudgetTargets::Target target;
  target.bits_per_key = bits;
  target.budget_bytes = bytes.value();
  target.history = history_;
  target.model_levels = shape_.num_levels;
  target.size_ratio = shape_.size_ratio;
  for (const TreeId& t : trees.trees) BudgetTargets::Global().SetBudget(t, target);
  const std::string line = Printf(
      "%s: memory_budget %llu bytes over %zu trees of %.0f keys: %.4g bits/key (at most "
      "%.4g); their filters now %llu bytes (%.3fx the budget)",
      Name(), static_cast<unsigned long long>(bytes.value()), trees.trees.size(), trees.keys, bits,
      ceiling, static_cast<unsigned long long>(trees.filter_bytes),
      static_cast<double>(trees.filter_bytes) / static_cast<double>(bytes.value()));
  LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
  return bits;
}

double LeveledPolicy::CacheBitsPerKey(const ShardLoad& load, double keys_per_block,
                                      double bits_per_key, ROCKSDB_NAMESPACE::Logger* log) const {
  const uint64_t keys = static_cast<uint64_t>(std::max(std::round(keys_per_block), 1.0));
  // What a probe costs with every block of `bits` bits per key: the rate of the best filter
  // there, and the re-reads of a block among as many of the same size.
  auto cost = [&](double bits, double* rate, double* rereads) {
    const Result<std::vector<LevelFilter>> one =
        allocations_->Get(1, shape_.size_ratio, bits, keys);
    if (!one.ok() || !one.value()[0].base.has_filter) return false;
    const double block_bytes = one.value()[0].ExpectedBitsPerKey() * keys_per_block / 8;
    *rate = one.value()[0].ExpectedFpRate();
    *rereads =
        TreeRereadsPerProbe(block_bytes, {load.shards, load.other_blocks, block_bytes, load.heat});
    return true;
  };
  double given_rate = 0, given_rereads = 0;
  if (!cost(bits_per_key, &given_rate, &given_rereads) ||
      !LeanerMayPay(given_rate, given_rereads)) {
    return bits_per_key;  // fits, as far as leaner filters could tell
  }
  const double floor = std::max(kMinCacheBudgetShare * bits_per_key, kMinBitsPerKey);
  const double best = CheapestLeaner(bits_per_key, floor, (bits_per_key - floor) / kMaxLeanerSteps,
                                     given_rate + given_rereads, [&](double bits, double* c) {
                                       double rate = 0, rereads = 0;
                                       if (!cost(bits, &rate, &rereads)) return false;
                                       *c = rate + rereads;
                                       return true;
                                     });
  double best_rate = given_rate, best_rereads = given_rereads;
  if (best < bits_per_key) cost(best, &best_rate, &best_rereads);
  if (best < bits_per_key) {
    const std::string line = Printf(
        "%s: %.0f filter blocks of about %.0f keys in a block cache of %zu shards of %zu "
        "KiB, probed %s: at %.2f bits/key a probe costs %.3g false positives and %.3g "
        "re-reads; the tree gets %.2f bits/key (%.3g and %.3g)",
        Name(), load.other_blocks, keys_per_block, load.shards.shards,
        load.shards.ShardBytes() >> 10, load.heat.empty() ? "alike" : "as the readers counted",
        bits_per_key, given_rate, given_rereads, best, best_rate, best_rereads);
    LogAt(log, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
  }
  return best;
}

bool LeveledPolicy::AccountsFor(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                                const TreeId& tree, const CacheShards& shards,
                                LeveledChooser* chooser, TreeAccounts* accounts,
                                bool* watched) const {
  *watched = shape_.num_levels == 0 && Ledger::Global().Get(tree, accounts) &&
             accounts->levels.size() <= static_cast<size_t>(kMaxLevels) &&
             context.level_at_creation < kMaxLevels;
  if (context.compaction_style != ROCKSDB_NAMESPACE::kCompactionStyleLevel) return false;
  if (*watched) return true;
  if (shards.shards == 0 || context.level_at_creation < 0 ||
      context.level_at_creation >= kMaxLevels) {
    return false;
  }
  chooser->RecordBuiltInto(
      history_, tree, context.level_at_creation,
      context.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kCompaction);
  *accounts = history_->Built(tree);
  return true;
}

namespace {

// The tree's filter blocks in a cache of `shards` that holds them whole: the measured files'
// (level 0 at its fullest lately, as the allocation counts it), and those running compactions are
// writing, as many per key as the measured ones; *keys_per_block, their mean keys. The file being
// written counts among the latter, if a compaction writes it: one block too many, against tens in
// a tree whose shards it crowds. No shards (a load of none) for a tree with no filter yet.
ShardLoad FilterBlocksInCache(const TreeAccounts& accounts, const CacheShards& shards,
                              double* keys_per_block) {
  ShardLoad load;
  if (shards.shards == 0) return load;
  LevelAccount all;
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    const LevelAccount& a =
        i == 0 && accounts.level0_peak.filter_files > accounts.levels[0].filter_files
            ? accounts.level0_peak
            : accounts.levels[i];
    all.filter_keys += a.filter_keys;
    all.filter_bytes += a.filter_bytes;
    all.filter_files += a.filter_files;
    all.pending_keys += a.pending_keys;
  }
  if (all.filter_files == 0 || all.filter_keys == 0) return load;
  *keys_per_block = static_cast<double>(all.filter_keys) / static_cast<double>(all.filter_files);
  load.shards = shards;
  load.other_blocks = static_cast<double>(all.filter_files) +
                      static_cast<double>(all.pending_keys) / *keys_per_block;
  load.mean_block_bytes =
      static_cast<double>(all.filter_bytes) / static_cast<double>(all.filter_files);
  if (accounts.heat != nullptr) load.heat = BlockHeatOf(*accounts.heat, accounts.counted_weight);
  return load;
}

}  // namespace

Result<bool> LeveledPolicy::SteerByAccounts(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                                            const TreeId& tree, const TreeAccounts& accounts,
                                            int num_levels, double bits_per_key,
                                            const CacheShards& shards,
                                            LeveledChooser* chooser) const {
  const int level = num_levels > 1 ? context.level_at_creation : -1;
  TreeShape shape(accounts, level);
  shape.under_memory_budget = shape_.memory_budget.Given();
  // A tree with no keys yet (a new database's first flush): nothing to allocate over.
  if (shape.Empty()) return true;
  const double uncut_bits_per_key = bits_per_key;
  double keys_per_block = 0;
  const ShardLoad load = FilterBlocksInCache(accounts, shards, &keys_per_block);
  if (load.shards.shards > 0) {
    bits_per_key = CacheBitsPerKey(load, keys_per_block, bits_per_key, context.info_log);
  }
  const bool cache_cut = bits_per_key < uncut_bits_per_key;
  if (shape_.num_levels != 0) {  // the user's model, cut for the cache
    if (cache_cut) chooser->UseBudget(bits_per_key);
    if (load.shards.shards > 0) chooser->UseCache(load, context.info_log);
    return true;
  }
  Result<double> excess =
      ExcessBelowLevel0(shape, accounts, bits_per_key, history_->Steered(tree, bits_per_key));
  if (!excess.ok()) return Err(excess.error());
  // Under a memory budget, where the listener rewrites the files that spend the most, the
  // steering answers what they will not take back (plugin/budget_rewrites.h); a file the listener
  // rewrites gets its level's share, unsteered.
  // (Not while the cache cuts the budget: the rewrites answer the memory budget's, not the cut's.)
  BudgetTargets::Target target;
  if (!cache_cut && shape_.memory_budget.Given() && BudgetTargets::Global().Get(tree, &target) &&
      !std::isnan(target.residual_excess)) {
    excess = std::min(excess.value(), target.residual_excess);
  }
  // Under a cut, the steering does not go below it. The files written before the cut, at the
  // old budget, are the tree's excess until compactions rewrite them (never, for the moved files
  // of ordered keys), and the cut is where a probe's false positives and its block's re-reads cost
  // least: paying for those files' bytes with the files being written now, at fewer bits per key
  // than the cut, costs more false positives than the bytes save in re-reads: the few files a
  // compaction is writing would carry the whole tree's correction, far below their level's
  // share (docs/filters.md).
  const double budget =
      RewritingForBudget()
          ? bits_per_key
          : std::min(std::max(history_->Steer(tree, accounts.changes, excess.value(), bits_per_key,
                                              cache_cut ? bits_per_key : 0),
                              kMinBitsPerKey),
                     kMaxBitsPerKey);
  // The line of a rewrite's file says what the rewrite asks of the chooser (the plan's decision,
  // RewritingForBudgetScope; ForKeys then chooses): that the decision reached this thread.
  const char* rewrite_note = !RewritingForBudget()  ? ""
                             : RewriteKeepsTheMix() ? " a budget rewrite: its level's mix kept"
                                                    : " a budget rewrite: the leaner of a mix";
  LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL,
        Describe(Name(), accounts, level, excess.value(), budget) + rewrite_note);
  chooser->UseAccounts(std::move(shape), level, budget);
  if (load.shards.shards > 0) chooser->UseCache(load, context.info_log);
  if (accounts.heat != nullptr && accounts.counted_weight > 0) {
    chooser->UseHeat(accounts.heat, accounts.counted_weight);
  }
  return true;
}

ROCKSDB_NAMESPACE::FilterBitsBuilder* LeveledPolicy::NewBuilder(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  const Result<FilterSpec> uniform = Spec();
  if (!uniform.ok()) {
    LogNoFilter(context.info_log, Name(), uniform.error());
    return nullptr;
  }
  const TreeId tree = TreeOfTableInCreation(context.info_log, context.column_family_name);
  const ModelPlace place = PlaceInModel(context, tree);
  // The model's allocation, computed once per level count and cached for the chooser: a model the
  // allocation refuses gives no builder (logged), before any key is added.
  if (const auto checked = Allocation(place.num_levels); !checked.ok()) {
    LogNoFilter(context.info_log, Name(), checked.error());
    return nullptr;
  }
  // Each filter takes its level's choice for its own key count (a smaller partition, for its
  // file's fullest): which kind is cheapest for a level's rate depends on how many keys the
  // filter holds (core/level_allocation.h).
  FlushLimit limit;
  const double bits_per_key = TreeBitsPerKey(context, tree, &limit);
  auto chooser = std::make_unique<LeveledChooser>(allocations_, shape_.size_ratio, bits_per_key,
                                                  place.num_levels, place.level);
  if (context.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kFlush &&
      !std::isinf(limit.bytes_left)) {
    chooser->SpendAtMost(limit.bytes_left, TreeHistory::kSteerLowest * bits_per_key,
                         limit.overshoot_bytes, context.info_log);
  }
  // Whatever allocates the file (the accounts' shares, or the user's model): keys that drew a mix's
  // richer filter draw it again, and only another policy's file keeps the mix (KeepsItsLevelsMix).
  if (RewritingForBudget()) chooser->ForABudgetRewrite(RewriteKeepsTheMix());
  if (place.num_levels > 1 && context.level_at_creation == 0) {
    chooser->FollowFlushes(
        history_, tree, context.reason != ROCKSDB_NAMESPACE::TableFileCreationReason::kCompaction);
  }
  if (context.compaction_style == ROCKSDB_NAMESPACE::kCompactionStyleUniversal) {
    chooser->UnderUniversalCompaction(context.num_levels, history_, tree);
  }
  // The tree as the sstfilter.LeveledBudget listener last saw it: allocate over its levels, for a
  // budget that steers it back to the policy's (include/sstfilter/leveled_budget.h).
  const CacheShards shards = ShardsHoldingWholeFilters(context.table_options);  // may throw
  TreeAccounts accounts;
  bool watched = false;
  if (AccountsFor(context, tree, shards, chooser.get(), &accounts, &watched)) {
    const Result<bool> steered = SteerByAccounts(context, tree, accounts, place.num_levels,
                                                 bits_per_key, shards, chooser.get());
    if (!steered.ok() && watched) {
      LogNoFilter(context.info_log, Name(), steered.error());
      return nullptr;
    }
    // Without the listener the accounts are the policy's own count: the model serves instead.
    if (!steered.ok()) {
      LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
            std::string(Name()) + ": the files written since the database opened give no " +
                "allocation (" + steered.error() + "); this file follows the model of the tree");
    }
  }
  if (!watched && warned_->opened_without_listener.load(std::memory_order_relaxed) &&
      !warned_->said_no_listener.exchange(true)) {
    LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
          std::string(Name()) + ": a database opened without the " + kLeveledBudgetName +
              " listener (listeners=" + kLeveledBudgetName +
              "): where full filters live in the block cache its files' filters are fitted to it "
              "over the files written since the database opened, elsewhere they follow a model "
              "of the tree; either way blind to files written before and to where lookups go "
              "(said once)");
  }
  std::unique_ptr<ConstructionCharge> charge = ConstructionCharge::For(context.table_options);
  auto* builder = new (std::nothrow) SstFilterBitsBuilder(
      std::move(chooser), context.table_options.detect_filter_construct_corruption,
      context.info_log);
  if (builder != nullptr) {
    builder->SetConstructionCharge(std::move(charge));
    if (context.table_options.optimize_filters_for_memory) builder->SetSizeClassRounding(rounding_);
    builder->SetCacheShards(shards, oversized_);
    builder->SetFileLevel(context.level_at_creation, fallback_warnings_);
    // The listener learns where lookups go from the probes the readers count.
    if (watched) builder->CountProbes();
  }
  return builder;
}

}  // namespace sstfilter
