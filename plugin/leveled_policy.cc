// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled (plugin/policies.h, LeveledPolicy): the allocation cache, one file's choice of
// filters (Chooser), and the builder for a new file.
#include <rocksdb/env.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
#include "plugin/budget_rewrites.h"
#include "plugin/policies.h"
#include "plugin/policy_options.h"
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

// The search both cache-aware cuts make (the tree's budget, CacheBitsPerKey; one file's filter,
// FitCache). A leaner budget costs a higher rate, so it can cost kMinLeanerGain less only where
// the re-reads are more than kMinLeanerGain / (1 - kMinLeanerGain) of the rate: below that, no
// search. Otherwise budgets from `richest` down to `floor` in steps of `step` bits per key
// (rounded to 1/16 bit: the allocations are cached by budget), at most kMaxLeanerSteps of them,
// each priced by `cost(bits, &cost)` (false: no answer there, and the search stops); a leaner
// one is taken when it costs at least kMinLeanerGain less than the best so far (`best_cost`,
// of the richest, to start), not for the rounding of its size. The budget taken, or `richest`.
constexpr double kMinLeanerGain = 0.01;
constexpr int kMaxLeanerSteps = 32;
bool LeanerMayPay(double rate, double rereads) {
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
}  // namespace

// Allocations by level count and key count, computed on first use (about 0.5 ms each; the
// partitions of a partitioned filter mostly share one key count) and then shared by the builders.
// Priced at each exact count: a fuse table's cells per key do not fall steadily as sets grow (its
// segments double in length at some counts), so one count's choice may not fit a neighbour's.
struct LeveledPolicy::Allocations {
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
                                          double bits_per_key, uint64_t keys) {
    // The options are part of the key: a policy reconfigured later must not reuse old choices.
    const auto key = std::make_tuple(single, num_levels, keys, size_ratio, bits_per_key);
    {
      std::lock_guard<std::mutex> lock(mu);
      const auto it = cache.find(key);
      if (it != cache.end()) return it->second;
    }
    Result<std::vector<LevelFilter>> a =
        single ? UniformAllocation(num_levels, size_ratio, bits_per_key,
                                   FilterCostModel::kSstfilter, keys)
               : AllocateLevels(num_levels, size_ratio, bits_per_key, FilterCostModel::kSstfilter,
                                keys);
    if (a.ok() && keys > 0) {
      const Result<std::vector<LevelFilter>> nominal =
          Cached(single, num_levels, size_ratio, bits_per_key, 0);
      if (!nominal.ok()) return nominal;
      a = KeepSmallFilesFilters(a.value(), nominal.value());
    }
    if (a.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      BoundedEntry(cache, key, kMaxCached) = a.value();
    }
    return a;
  }

  std::mutex mu;
  std::map<std::tuple<bool, int, uint64_t, double, double>, std::vector<LevelFilter>> cache;
};

LeveledPolicy::LeveledPolicy()
    : allocations_(std::make_shared<Allocations>()), history_(std::make_shared<TreeHistory>()) {
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
               "] (0: the column family's), got " + std::to_string(shape_.num_levels));
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
                    return l != nullptr && std::string(l->Name()) == kLeveledBudgetName;
                  });
  if (!shape_.memory_budget.Given()) {
    if (!listening) warned_->opened_without_listener.store(true, std::memory_order_relaxed);
    return checked;
  }
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
    if (!bytes.ok())
      return ROCKSDB_NAMESPACE::Status::InvalidArgument(std::string(Name()) + ": " + bytes.error());
  }
  return checked;
}

Result<std::vector<LevelFilter>> LeveledPolicy::Allocation(int num_levels,
                                                           uint64_t keys_per_filter) const {
  return allocations_->Get(num_levels, shape_.size_ratio, BudgetBitsPerKey(), keys_per_filter);
}

// One file's filters: its level's in the allocation priced at each filter's key count (a smaller
// partition: at its file's fullest partition's, ForKeys). A flush (level 0) of a leveled tree
// first asks whether it appends, once its first filter finishes (the estimates before then guess
// from the keys so far), and records its keys for later flushes.
// With the tree's accounts (the sstfilter.LeveledBudget listener), the allocation is over the
// levels' real shares, the file's own level counting its keys, for the steered budget.
class LeveledPolicy::Chooser : public FilterChooser {
 public:
  Chooser(std::shared_ptr<Allocations> allocations, double size_ratio, double bits_per_key,
          int num_levels, int modelled)
      : allocations_(std::move(allocations)),
        size_ratio_(size_ratio),
        bits_per_key_(bits_per_key),
        num_levels_(num_levels),
        modelled_(modelled) {}

  // For a flush: the history it consults and joins, as `file` of `tree`.
  void FollowFlushes(std::shared_ptr<TreeHistory> history, TreeId tree) {
    file_ = history->NewFile();
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

  // The lookup heat of the tree's files (HeatOf), and the weight of the counts it comes from.
  void UseHeat(std::shared_ptr<const std::vector<FileRange>> heat, double weight) {
    heat_ = std::move(heat);
    heat_weight_ = weight;
  }

  // A tree under universal compaction: each file takes one filter, the richer of the budget's two
  // if it spends at most kUnmixedSlack times the budget, else the leaner. Mixing draws one of the
  // two per file, which averages out over many files (a level; a FIFO tree's flushes); a universal
  // tree is a few large sorted runs, too few draws to average out, so its files' filters could
  // overshoot the budget by a whole draw (DbTest.LeveledKeepsUniversalAndFifoTreesWithinTheBudget).
  static constexpr double kUnmixedSlack = 1.02;
  void OneFilterPerFile() { one_filter_ = true; }

  // A flush under a memory_budget: its filters together spend at most `bytes_left` (what the
  // budget has left beyond the live files' filters), each at least `floor_bits_per_key`. A flush
  // adds keys, so the bits per key the budget buys fall, and the files written before it give back
  // what they spend beyond that only when a compaction lets the listener rewrite them; a tree whose
  // writes stop after a flush would otherwise keep the overspend for good. The floor (the
  // steering's, TreeHistory::kSteerLowest of what the budget buys) keeps a flush's filter useful
  // to the lookups of its keys (level 0: every lookup probes it) until the next compaction
  // rewrites the files that spend the most. The limit holds for each file, not in expectation: a
  // filter that may spend more than it gets the best single filter within it, not a mix of two,
  // since one file may draw the richer of a mix. `log` (may be null) is told of each filter so
  // limited.
  void SpendAtMost(double bytes_left, double floor_bits_per_key, ROCKSDB_NAMESPACE::Logger* log) {
    bytes_left_ = std::max(bytes_left, 0.0);
    floor_bits_per_key_ = std::max(floor_bits_per_key, kMinBitsPerKey);
    log_ = log;
  }

  bool WantsKeyRange() const override { return history_ != nullptr || heat_ != nullptr; }

  Result<LevelFilter> ForKeys(uint64_t num_keys, const KeyRange& file_keys,
                              bool finishing) override {
    // A partition smaller than the file's fullest so far (its last; on RocksDB 9.x by default,
    // also the one cut right after each full one) takes the filter chosen for the fullest, at
    // its own size. Priced at its own few keys, a filter's fixed bytes (the trailer, a table's
    // least slots) would buy it a rate many times its level's: on the last of 5 levels at 10
    // bits/key, 100 keys after a partition of 3,300 got 7.6% false positives where the full
    // partition's filter has 0.2% (the test AFilesSmallerPartitionsKeepItsFullestPartitionsRate).
    // Such partitions hold the ends of files' key ranges: the newest keys of an ordered tree,
    // and the end of the key space. Their extra bytes are a filter's fixed costs over few keys.
    // Where a memory_budget limits the flush (below), the limit still decides, at their keys.
    const uint64_t priced_keys = std::max(num_keys, fullest_partition_keys_);
    Result<LevelFilter> chosen = LevelsFilter(priced_keys, file_keys, finishing);
    if (chosen.ok() && priced_keys != num_keys) chosen = AtKeys(chosen.value(), num_keys);
    if (finishing) fullest_partition_keys_ = std::max(fullest_partition_keys_, num_keys);
    if (std::isinf(bytes_left_) || !chosen.ok() || num_keys == 0) return chosen;
    const double keys = static_cast<double>(num_keys);
    // What these keys' filter may spend: of a mix, the richer of the two, whichever they draw.
    const double chosen_bits = chosen.value().Largest().bits_per_key;
    // In sixteenths of a bit: the allocations are cached by budget.
    const double bits = std::max(std::floor(16 * 8 * bytes_left_ / keys) / 16, floor_bits_per_key_);
    if (bits < chosen_bits) {
      chosen = allocations_->Single(size_ratio_, bits, num_keys);
      if (finishing && chosen.ok()) {
        char line[256];
        snprintf(line, sizeof(line),
                 "%s: memory_budget: a flushed filter of %llu keys gets %.4g bits/key instead of "
                 "up to %.4g: the budget has %.0f bytes left",
                 kLeveledPolicyName, static_cast<unsigned long long>(num_keys),
                 chosen.value().base.bits_per_key, chosen_bits, bytes_left_);
        LogAt(log_, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
      }
    }
    if (finishing && chosen.ok()) {  // the next partition gets what this one may leave
      bytes_left_ = std::max(bytes_left_ - chosen.value().Largest().bits_per_key * keys / 8, 0.0);
    }
    return chosen;
  }

 private:
  // The file's level's filter: the budget's for an appended flush, else the allocation's (the
  // model's, or over the tree's accounts), for the file's heat and its cache.
  Result<LevelFilter> LevelsFilter(uint64_t num_keys, const KeyRange& file_keys, bool finishing) {
    const bool appends = history_ != nullptr && Appends(file_keys, finishing);
    if (appends || (!tree_shape_.keys.empty() && level_ < 0)) {
      // The budget's filter: an appended file will hold its keys wherever it moves.
      return OneOf(allocations_->Get(1, size_ratio_, bits_per_key_, num_keys), 0);
    }
    if (tree_shape_.keys.empty()) {
      const Result<LevelFilter> level =
          OneOf(allocations_->Get(num_levels_, size_ratio_, bits_per_key_, num_keys), modelled_);
      if (!one_filter_ || !level.ok() || level.value().upper_fraction == 0) return level;
      LevelFilter one = level.value();
      if (one.upper.bits_per_key <= kUnmixedSlack * bits_per_key_) one.base = one.upper;
      one.upper_fraction = 0;
      return one;
    }
    const auto cached = by_keys_.find(num_keys);
    if (cached != by_keys_.end()) {
      return ForFile(cached->second, num_keys, file_keys, finishing);
    }
    std::vector<double> shares, probes;
    tree_shape_.WithFile(level_, static_cast<double>(num_keys), &shares, &probes);
    Result<std::vector<LevelFilter>> a =
        AllocateShares(shares, bits_per_key_, FilterCostModel::kSstfilter, num_keys, probes);
    if (a.ok() && num_keys > 0) {
      const Result<std::vector<LevelFilter>> nominal =
          AllocateShares(shares, bits_per_key_, FilterCostModel::kSstfilter, 0, probes);
      if (!nominal.ok()) return Err(nominal.error());
      a = KeepSmallFilesFilters(a.value(), nominal.value());
    }
    const Result<LevelFilter> chosen = OneOf(a, level_);
    if (by_keys_.size() < kMaxCached) by_keys_.emplace(num_keys, chosen);
    return ForFile(chosen, num_keys, file_keys, finishing);
  }

  // The level's filter for this file: for its key range's heat once it is finished (ForHeat), and
  // for the cache its block will live in (FitCache, at the block's rate).
  Result<LevelFilter> ForFile(const Result<LevelFilter>& level, uint64_t num_keys,
                              const KeyRange& file_keys, bool finishing) {
    return FitCache(finishing ? ForHeat(level, num_keys, file_keys) : level, num_keys, finishing,
                    BlockRate(num_keys, file_keys, finishing));
  }

  // A file asks for at most one allocation per doubling of its keys in the estimates, and one
  // per partition size at Finish.
  static constexpr size_t kMaxCached = 64;

  // The level's filter, made richer or leaner for the lookup heat of the file's keys (HeatOf):
  // the rate over the heat, in bits at the filter's own bits per halving of the rate, times the
  // counts' weight (few counts, little change); a file of level 0 keeps its level's.
  Result<LevelFilter> ForHeat(const Result<LevelFilter>& level, uint64_t num_keys,
                              const KeyRange& file_keys) {
    if (heat_ == nullptr || level_ < 1 || !level.ok() || file_keys.empty()) return level;
    const double bits = level.value().ExpectedBitsPerKey();
    const double rate = level.value().ExpectedFpRate();
    if (!level.value().base.has_filter || !(rate > 0 && rate < 1) || bits <= 0) return level;
    const double heat = HeatOf(*heat_, level_, file_keys);
    const double bits_per_halving = bits / std::log2(1 / rate);
    // In sixteenths of a bit: the allocations are cached by budget.
    const double hot_bits = std::min(
        std::max(std::round(16 * (bits + heat_weight_ * bits_per_halving * std::log2(heat))) / 16,
                 kMinBitsPerKey),
        kMaxBitsPerKey);
    if (std::abs(hot_bits - bits) < 1.0 / 16) return level;
    return OneOf(allocations_->Get(1, size_ratio_, hot_bits, num_keys), 0);
  }

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
                               double block_rate) {
    if (cache_.shards.shards == 0 || !level.ok() || num_keys == 0) return level;
    const auto fitted = fitted_.find(num_keys);
    if (!finishing && fitted != fitted_.end()) return fitted->second;
    const double keys = static_cast<double>(num_keys);
    auto rereads = [&](const FilterChoice& c) {
      return c.has_filter ? ExpectedRereadsPerProbe(c.bits_per_key * keys / 8, cache_, block_rate)
                          : 0.0;
    };
    // A mix of two filters (upper_fraction of the files get the upper one) re-reads each
    // filter's block in its share of the files.
    auto expected_rereads = [&](const LevelFilter& f) {
      return (1 - f.upper_fraction) * rereads(f.base) + f.upper_fraction * rereads(f.upper);
    };
    auto cost = [&](const LevelFilter& f) { return f.ExpectedFpRate() + expected_rereads(f); };
    const LevelFilter& given = level.value();
    const double given_bits = given.ExpectedBitsPerKey();
    LevelFilter best = given;
    if (given.base.has_filter && given_bits > bits_per_key_ &&
        LeanerMayPay(given.ExpectedFpRate(), rereads(given.Largest()))) {
      auto leaner = [&](double bits) {
        return OneOf(allocations_->Get(1, size_ratio_, bits, num_keys), 0);
      };
      const double richest = std::min(given_bits, kMaxBitsPerKey);
      const double bits =
          CheapestLeaner(richest, bits_per_key_,
                         std::max(kCutStepBitsPerKey, (richest - bits_per_key_) / kMaxLeanerSteps),
                         cost(given), [&](double b, double* c) {
                           const Result<LevelFilter> f = leaner(b);
                           if (f.ok()) *c = cost(f.value());
                           return f.ok();
                         });
      if (bits < richest) best = leaner(bits).value();  // cached: it was priced
    }
    if (!finishing) {
      if (fitted_.size() < kMaxCached) fitted_.emplace(num_keys, best);
    } else if (best.ExpectedBitsPerKey() < given_bits) {
      char probed[64] = "alike";
      if (!cache_.heat.empty()) {
        snprintf(probed, sizeof(probed), "%.2gx as often as the mean block", block_rate);
      }
      char line[512];
      snprintf(line, sizeof(line),
               "%s: a filter of %.0f KiB (%.2f bits/key, rate %.2g, probed %s) shares a "
               "block-cache shard of %zu KiB with about %.1f other filter blocks of %.0f KiB: %.3g "
               "re-reads per probe expected; %.2f bits/key instead (rate %.2g, %.3g re-reads)",
               kLeveledPolicyName, given_bits * keys / 8 / 1024, given_bits, given.ExpectedFpRate(),
               probed, cache_.shards.ShardBytes() >> 10,
               cache_.other_blocks / static_cast<double>(cache_.shards.shards),
               cache_.mean_block_bytes / 1024, expected_rereads(given), best.ExpectedBitsPerKey(),
               best.ExpectedFpRate(), expected_rereads(best));
      LogAt(log_, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
    }
    return best;
  }

  // The rate at which lookups will probe the file's block against the mean block's (BlockRateOf),
  // where the readers' counts say blocks are not probed alike: the file's range when it is
  // finished; 1 for the estimates, and on level 0 (whose files take their level's filter).
  double BlockRate(uint64_t num_keys, const KeyRange& file_keys, bool finishing) const {
    if (!finishing || heat_ == nullptr || cache_.heat.empty() || level_ < 1 || file_keys.empty()) {
      return 1;
    }
    return BlockRateOf(*heat_, level_, file_keys, static_cast<double>(num_keys), heat_weight_);
  }

  // `filter` (chosen for more keys) priced at num_keys: the same filters, their bits per key
  // what they take for these keys; their rates, as in every allocation, the nominal ones.
  static Result<LevelFilter> AtKeys(LevelFilter filter, uint64_t num_keys) {
    if (num_keys == 0) return filter;
    for (FilterChoice* c : {&filter.base, &filter.upper}) {
      if (!c->has_filter) continue;
      const Result<uint64_t> bytes = FilterBytes(c->spec, num_keys);
      if (!bytes.ok()) return Err(bytes.error());
      c->bits_per_key = 8 * static_cast<double>(bytes.value()) / static_cast<double>(num_keys);
    }
    return filter;
  }

  static Result<LevelFilter> OneOf(const Result<std::vector<LevelFilter>>& a, int level) {
    if (!a.ok()) return Err(a.error());
    return a.value()[static_cast<size_t>(level)];
  }

  bool Appends(const KeyRange& file_keys, bool finishing) {
    const bool appends =
        decided_ ? appends_ : !file_keys.empty() && history_->Appends(tree_, file_, file_keys);
    if (finishing) {
      decided_ = true;  // every filter (partition) of the file takes the first one's answer
      appends_ = appends;
      history_->Record(tree_, file_, file_keys);  // the file's keys so far
    }
    return appends;
  }

  const std::shared_ptr<Allocations> allocations_;
  const double size_ratio_;
  double bits_per_key_;
  const int num_levels_, modelled_;
  std::shared_ptr<TreeHistory> history_;  // null: not a flush of a leveled tree
  TreeId tree_;
  uint64_t file_ = 0;
  bool decided_ = false, appends_ = false;
  uint64_t fullest_partition_keys_ = 0;  // of the file's filters finished so far
  TreeShape tree_shape_;                 // no levels: no accounts, the modelled tree
  int level_ = 0;
  std::map<uint64_t, Result<LevelFilter>> by_keys_;
  std::shared_ptr<const std::vector<FileRange>> heat_;  // null: no file exposed, or no weight
  double heat_weight_ = 0;
  bool one_filter_ = false;
  ShardLoad cache_;  // no shards: filters not held whole by an evicting cache, or no accounts
  // SpendAtMost's: infinite, no limit.
  double bytes_left_ = std::numeric_limits<double>::infinity(), floor_bits_per_key_ = 0;
  std::map<uint64_t, LevelFilter> fitted_;  // FitCache's answers to the estimates, by key count
  ROCKSDB_NAMESPACE::Logger* log_ = nullptr;
};

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
  place.level = context.is_bottommost ? place.num_levels - 1
                : level == 0          ? 0
                             : std::min(std::max(level - shallowest + 1, 1), place.num_levels - 1);
  return place;
}

double LeveledPolicy::TreeBitsPerKey(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                                     const TreeId& tree, double* bytes_left) const {
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
  const BudgetedTrees trees = SumAccounts(all);
  if (trees.trees == 0) {
    // A table written as the database opens (its WAL replayed) comes before the listener has
    // named the database: its tree has no accounts, listener or not.
    if (context.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kRecovery) return ceiling;
    return warn_once(warned_->no_listener, NeedsTheListener(memory));
  }
  const double bits = BitsPerKeyWithin(bytes.value(), trees.keys, ceiling);
  *bytes_left = static_cast<double>(bytes.value()) - static_cast<double>(trees.filter_bytes);
  for (const TreeId& t : all) BudgetTargets::Global().SetBitsPerKey(t, bits);  // for rewrites
  char line[256];
  snprintf(line, sizeof(line),
           "%s: memory_budget %llu bytes over %zu trees of %.0f keys: %.4g bits/key (at most "
           "%.4g); their filters now %llu bytes (%.3fx the budget)",
           Name(), static_cast<unsigned long long>(bytes.value()), trees.trees, trees.keys, bits,
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
    char line[512];
    snprintf(line, sizeof(line),
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

Result<bool> LeveledPolicy::SteerByAccounts(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                                            const TreeId& tree, int num_levels, double bits_per_key,
                                            const CacheShards& shards, Chooser* chooser) const {
  TreeAccounts accounts;
  const bool watched = shape_.num_levels == 0 && Ledger::Global().Get(tree, &accounts) &&
                       accounts.levels.size() <= static_cast<size_t>(kMaxLevels) &&
                       context.level_at_creation < kMaxLevels;
  if (!watched || context.compaction_style != ROCKSDB_NAMESPACE::kCompactionStyleLevel) {
    return watched;
  }
  const int level = num_levels > 1 ? context.level_at_creation : -1;
  TreeShape shape(accounts, level);
  // A tree with no keys yet (a new database's first flush): nothing to allocate over.
  if (shape.Empty()) return watched;
  // The tree's filter blocks in a cache that holds them whole: the measured files' (level 0 at
  // its fullest lately, as the allocation counts it), and those running compactions are writing,
  // as many per key as the measured ones. The file being written counts among the latter, if a
  // compaction writes it: one block too many, against tens in a tree whose shards it crowds.
  ShardLoad load;
  double keys_per_block = 0;
  const double uncut_bits_per_key = bits_per_key;
  if (shards.shards > 0) {
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
    if (all.filter_files > 0 && all.filter_keys > 0) {
      keys_per_block = static_cast<double>(all.filter_keys) / static_cast<double>(all.filter_files);
      load.shards = shards;
      load.other_blocks = static_cast<double>(all.filter_files) +
                          static_cast<double>(all.pending_keys) / keys_per_block;
      load.mean_block_bytes =
          static_cast<double>(all.filter_bytes) / static_cast<double>(all.filter_files);
      if (accounts.heat != nullptr)
        load.heat = BlockHeatOf(*accounts.heat, accounts.counted_weight);
      bits_per_key = CacheBitsPerKey(load, keys_per_block, bits_per_key, context.info_log);
    }
  }
  const bool cache_cut = bits_per_key < uncut_bits_per_key;
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
  // than the cut, costs more false positives than the bytes save in re-reads. Steered below the
  // cut, the upper level a compaction was writing got 6.1 bits/key against the last level's 8.4,
  // and the tree 2.4x the false positives its allocation gives the same memory (docs/filters.md).
  const double budget =
      RewritingForBudget()
          ? bits_per_key
          : std::min(std::max(history_->Steer(tree, accounts.changes, excess.value(), bits_per_key,
                                              cache_cut ? bits_per_key : 0),
                              kMinBitsPerKey),
                     kMaxBitsPerKey);
  LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL,
        Describe(Name(), accounts, level, excess.value(), budget));
  chooser->UseAccounts(std::move(shape), level, budget);
  if (load.shards.shards > 0) chooser->UseCache(load, context.info_log);
  if (accounts.heat != nullptr && accounts.counted_weight > 0) {
    chooser->UseHeat(accounts.heat, accounts.counted_weight);
  }
  return watched;
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
  double bytes_left = std::numeric_limits<double>::infinity();
  const double bits_per_key = TreeBitsPerKey(context, tree, &bytes_left);
  auto chooser = std::make_unique<Chooser>(allocations_, shape_.size_ratio, bits_per_key,
                                           place.num_levels, place.level);
  if (context.reason == ROCKSDB_NAMESPACE::TableFileCreationReason::kFlush &&
      !std::isinf(bytes_left)) {
    chooser->SpendAtMost(bytes_left, TreeHistory::kSteerLowest * bits_per_key, context.info_log);
  }
  if (place.num_levels > 1 && context.level_at_creation == 0) {
    chooser->FollowFlushes(history_, tree);
  }
  if (context.compaction_style == ROCKSDB_NAMESPACE::kCompactionStyleUniversal) {
    chooser->OneFilterPerFile();
  }
  // The tree as the sstfilter.LeveledBudget listener last saw it: allocate over its levels, for a
  // budget that steers it back to the policy's (include/sstfilter/leveled_budget.h).
  const CacheShards shards = ShardsHoldingWholeFilters(context.table_options);  // may throw
  const Result<bool> watched =
      SteerByAccounts(context, tree, place.num_levels, bits_per_key, shards, chooser.get());
  if (!watched.ok()) {
    LogNoFilter(context.info_log, Name(), watched.error());
    return nullptr;
  }
  if (!watched.value() && warned_->opened_without_listener.load(std::memory_order_relaxed) &&
      !warned_->said_no_listener.exchange(true)) {
    LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
          std::string(Name()) + ": a database opened without the " + kLeveledBudgetName +
              " listener (listeners=" + kLeveledBudgetName +
              "): its files' filters follow a model of the tree, blind to the tree as it is, to "
              "where lookups go and to the load its filter blocks put on the block cache (said "
              "once)");
  }
  auto* builder = new (std::nothrow) SstFilterBitsBuilder(
      std::move(chooser), context.table_options.detect_filter_construct_corruption,
      context.info_log);
  if (builder != nullptr) {
    builder->SetCacheShards(shards, oversized_);
    builder->SetFileLevel(context.level_at_creation, fallback_warnings_);
    // The listener learns where lookups go from the probes the readers count.
    if (watched.value()) builder->CountProbes();
  }
  return builder;
}

}  // namespace sstfilter
