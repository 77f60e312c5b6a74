// SPDX-License-Identifier: Apache-2.0
// sstfilter's FilterPolicy classes. Their options are registered with RocksDB (RegisterOptions),
// so RocksDB's own machinery parses, serialises (OPTIONS files) and compares them.
#pragma once

#include <rocksdb/filter_policy.h>

#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_spec.h"
#include "core/level_allocation.h"
#include "core/result.h"
#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
#include "plugin/memory_budget.h"
#include "plugin/tree_history.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

// The options every sstfilter policy takes: exactly one of the two must be set.
struct BudgetOptions {
  // NaN means "not given": such an option is not written to OPTIONS files, and the parser
  // rejects NaN and infinities, so a user can never set it.
  double bits_per_key = std::numeric_limits<double>::quiet_NaN();
  double fp_rate = std::numeric_limits<double>::quiet_NaN();
};

// The base of every sstfilter policy: its compatibility family (the compatibility option,
// sstfilter.h), one reader for all kinds. Its overrides of RocksDB's virtual functions catch every
// exception (running out of memory), so none crosses into RocksDB: a builder that cannot be made
// is "no filter" for that file, logged.
class SstFilterPolicy : public ROCKSDB_NAMESPACE::FilterPolicy {
 public:
  // The family whose filters the policy reads, and whose name its filter blocks carry.
  enum class Compatibility {
    kRocksDb,    // "rocksdb.BuiltinBloomFilter": RocksDB's filters too (the default)
    kSstFilter,  // "sstfilter": the filters of databases sstfilter 0.1 wrote
  };

  const char* CompatibilityName() const override;
  ROCKSDB_NAMESPACE::FilterBitsBuilder* GetBuilderWithContext(
      const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const final;
  // Under compatibility=rocksdb, a block of more than 5 bytes that sstfilter did not write (its
  // trailer layouts 2 and 3, TrailerLayoutOf in core/format.h) is RocksDB's: a built-in policy's
  // reader reads it. Every other block: sstfilter's reader, which answers "may match" for bytes it
  // does not understand.
  ROCKSDB_NAMESPACE::FilterBitsReader* GetFilterBitsReader(
      const ROCKSDB_NAMESPACE::Slice& contents) const override;
  // Validates the options and computes the filter to build: InvalidArgument naming the policy,
  // the option and its allowed range for anything wrong.
  ROCKSDB_NAMESPACE::Status PrepareOptions(
      const ROCKSDB_NAMESPACE::ConfigOptions& options) override;
  // The same checks when a database opens (or its options change), and the error the options were
  // refused with, if any (ConfigureOptions): a database does not open with a policy other than the
  // one its options name.
  ROCKSDB_NAMESPACE::Status ValidateOptions(
      const ROCKSDB_NAMESPACE::DBOptions& db_options,
      const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const override;

  // The filter the current options describe.
  virtual Result<FilterSpec> Spec() const = 0;

  // The "<name>:<bits_per_key>" form's number, parsed as the bits_per_key option is (the whole
  // text, a finite number) and validated by PrepareOptions like the option. A number that does
  // not parse refuses the options (refused_: InvalidArgument naming the policy).
  void SetBitsPerKey(const std::string& text);

 protected:
  SstFilterPolicy();
  // RocksDB's configuration, keeping the first error where the options come from an OPTIONS file
  // (input_strings_escaped) in refused_, and returning refused_ from then on.
  ROCKSDB_NAMESPACE::Status ConfigureOptions(
      const ROCKSDB_NAMESPACE::ConfigOptions& options,
      const std::unordered_map<std::string, std::string>& opts_map,
      std::unordered_map<std::string, std::string>* unused) override;
  // "exactly one of bits_per_key or fp_rate", with the policy's name in the message.
  Result<bool> CheckBudget(const BudgetOptions& budget) const;
  // The filter of a kind for the budget (bits_per_key or fp_rate, whichever was given).
  template <typename Kind>
  Result<FilterSpec> KindSpec() const;
  // The builder for a new file; may throw std::bad_alloc (GetBuilderWithContext catches it).
  virtual ROCKSDB_NAMESPACE::FilterBitsBuilder* NewBuilder(
      const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const;

  BudgetOptions budget_;
  Compatibility compatibility_ = Compatibility::kRocksDb;
  // The filter blocks this policy wrote too large for their block cache (block_cache_fit.h).
  const std::shared_ptr<OversizedFilterBlocks> oversized_ =
      std::make_shared<OversizedFilterBlocks>();
  // Its builders' WARN lines for filters written other than chosen (bits_adapters.h).
  const std::shared_ptr<RateLimitedWarning> fallback_warnings_ =
      std::make_shared<RateLimitedWarning>(kFallbackWarningIntervalNs);
  // Its builders' sizes under optimize_filters_for_memory, and their balance of rates.
  const std::shared_ptr<SizeClassRounding> rounding_ = std::make_shared<SizeClassRounding>();

 private:
  // What PrepareOptions and ValidateOptions check: refused_, else the filter the options describe
  // into *spec (InvalidArgument naming the policy where they describe none).
  ROCKSDB_NAMESPACE::Status CheckOptions(FilterSpec* spec) const;

  bool prepared_ = false;
  FilterSpec prepared_spec_;  // valid when prepared_
  // Why the options were refused (OK: they were not). Loading an OPTIONS file, RocksDB drops a
  // filter_policy's errors (BlockBasedTableFactory::ParseOption, where input_strings_escaped, in
  // 7.8 to 9.11 at least) and keeps the policy as far as it was configured, or as it was before
  // (a misspelt layout opened with the default one); a factory's error (a bad "<name>:<number>")
  // left no filter at all. The refusal stays with the policy, which PrepareOptions and
  // ValidateOptions return, so that the database does not open; an object once refused stays
  // refused (configuring it again does not clear it): make a new one.
  ROCKSDB_NAMESPACE::Status refused_;
  int configure_depth_ = 0;  // ConfigureOptions calls running
};

// sstfilter.Bloom: layout=blocked (the default) is the BlockedBloom kind, layout=standard the
// StandardBloom kind (core/blocked_bloom/, core/standard_bloom/).
class BloomPolicy : public SstFilterPolicy {
 public:
  enum class Layout { kBlocked, kStandard };

  BloomPolicy();
  static const char* kClassName();
  const char* Name() const override { return kClassName(); }
  Result<FilterSpec> Spec() const override;

 private:
  Layout layout_ = Layout::kBlocked;
};

// The policies of one kind each: sstfilter.Cuckoo (core/cuckoo/), sstfilter.Fuse (the binary
// fuse kind, core/fuse/: 1.075 to 1.4 times the information limit, the fastest static kind to
// query) and sstfilter.BumpedRibbon (the bumped Ribbon kind, core/bumped_ribbon/: the smallest at
// every size, 1.005 to 1.02 times the limit from 10,000 to 10M keys at 7-bit fingerprints; its
// small sets one wrapped standard Ribbon table, as the Ribbon kind's). Each sizes its kind by the
// budget or the rate given (KindSpec). A fuse or Ribbon build that no seed solves writes a blocked
// Bloom filter. Every reader reads both Ribbon kinds; sstfilter.Leveled chooses the standard one
// (core/ribbon/) where it is the cheapest.
template <typename Kind, const char* const& kPolicyName>
class KindPolicy : public SstFilterPolicy {
 public:
  static const char* kClassName() { return kPolicyName; }
  const char* Name() const override { return kClassName(); }
  Result<FilterSpec> Spec() const override;  // KindSpec<Kind>(); instantiated in policies.cc
};
using CuckooPolicy = KindPolicy<Cuckoo, kCuckooPolicyName>;
using FusePolicy = KindPolicy<Fuse, kFusePolicyName>;
using BumpedRibbonPolicy = KindPolicy<BumpedRibbon, kBumpedRibbonPolicyName>;

struct LeveledAllocations;  // plugin/leveled_chooser.h
class LeveledChooser;

// sstfilter.Leveled: one memory budget for the whole tree (bits_per_key, averaged over all keys),
// spent per level as Monkey prescribes (core/level_allocation.h). Each new file gets the filter of
// where its keys will live (plugin/tree_history.h), with the allocation priced at the filter's
// key count (which kind is cheapest depends on it), so the kind is chosen when the builder
// finishes; on the one level whose budget falls between two filters, each filter draws one of
// them from its keys:
// - a flush that appends (keys beyond every recent flush's), a file of unknown level (ingested,
//   repaired), and any file of a tree under FIFO compaction: the allocation of a tree of one
//   level, the two filters around the budget, mixed so that they spend it exactly; under
//   universal compaction, each filter one of the two by the tree's error diffusion, not by its
//   keys (LeveledChooser::UnderUniversalCompaction);
// - another file: its level (FilterBuildingContext::level_at_creation; the largest level when
//   RocksDB writes it as bottommost) in a model of num_levels levels growing by size_ratio, or,
//   when num_levels is 0, of the levels compaction outputs have reached;
// - with the sstfilter.LeveledBudget listener's accounts of the tree (leveled_budget.h), and
//   num_levels 0: its level in the tree as it is, for the steered budget.
// Reads any sstfilter filter (same compatibility family).
//
// A filter is fixed when its file is written, and RocksDB moves files down unchanged when they
// overlap nothing below; such a file keeps the filter it was written with. Appended flushes carry
// the budget's; a compaction output carries its level's, which the listener's steering pays for,
// or which the sstfilter.NoTrivialMove partitioner (no_trivial_move.h) avoids by making RocksDB
// rewrite the file, at a cost in writes.
class LeveledPolicy : public SstFilterPolicy {
 public:
  LeveledPolicy();
  static const char* kClassName();
  const char* Name() const override { return kClassName(); }
  // The best single filter within the budget (what the options describe, for OPTIONS files and
  // messages); validates the options.
  Result<FilterSpec> Spec() const override;
  // SstFilterPolicy's checks, and, under a memory_budget, what keeping it takes: the
  // sstfilter.LeveledBudget listener among the database's listeners (it counts the keys; RocksDB
  // drops a listener name it cannot load without an error), and a block cache where the budget is
  // a share of one. RocksDB calls this as DB::Open opens a database for writing (7.8 to 9.11: not
  // for read-only opens, CreateColumnFamily or SetOptions); a table written where it was not
  // called (a column family added later, SstFileWriter) gets bits_per_key, and the LOG says why,
  // once (TreeBitsPerKey). A listener that wraps the sstfilter.LeveledBudget one is not seen.
  // Without a memory_budget a database opens without the listener, and the LOG of the first table
  // built without its accounts says what the policy then cannot see, once per policy.
  ROCKSDB_NAMESPACE::Status ValidateOptions(
      const ROCKSDB_NAMESPACE::DBOptions& db_options,
      const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const override;
  // The filter of each level of a tree of num_levels levels, priced for filters of
  // keys_per_filter keys (0: nominal costs). Computed once per level count and key count.
  Result<std::vector<LevelFilter>> Allocation(int num_levels, uint64_t keys_per_filter = 0) const;
  // The budget, bits per key over the tree: bits_per_key, or kBitsPerKeyUnderMemoryBudget for a
  // memory_budget given alone. Under a memory_budget, a ceiling: the tree gets less where the
  // budget buys less (plugin/memory_budget.h).
  static constexpr double kBitsPerKeyUnderMemoryBudget = 10;
  double BudgetBitsPerKey() const;
  const MemoryBudget& GetMemoryBudget() const { return shape_.memory_budget; }
  // For advice on an existing tree (AccountTreeForAdvice): `keys`, the tree's keys below level 0,
  // as one earlier flush of its history, so that a level-0 file counts as appending (and takes the
  // budget's filter) only if it lies beyond them, as the flushes that made the tree would have
  // shown. May throw std::bad_alloc.
  void RecordEarlierFlush(const TreeId& tree, const KeyRange& keys) const {
    history_->Record(tree, history_->NewFile(), keys, /*flushed=*/true);
  }

  struct Shape {
    double size_ratio = 10;
    int num_levels = 0;  // 0: the levels the tree has (those compaction outputs have reached)
    MemoryBudget memory_budget;
  };

 private:
  ROCKSDB_NAMESPACE::FilterBitsBuilder* NewBuilder(
      const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const override;

  // Where a new file's keys will live in the model: a tree of num_levels levels, at `level`.
  struct ModelPlace {
    int num_levels = 1;
    int level = 0;
  };
  ModelPlace PlaceInModel(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                          const TreeId& tree) const;
  // The budget of a tree whose filter blocks share the shards of a cache that holds them whole
  // (`load`: the tree's blocks, of about keys_per_block keys each), at most bits_per_key: the one
  // of least cost per probe with every block at it, the best filter's rate plus the blocks'
  // re-reads (TreeRereadsPerProbe: with the readers' counts in `load.heat`, the blocks lookups
  // probe most stay cached), down to kMinCacheBudgetShare of bits_per_key in 32 equal steps
  // (leveled_chooser.cc, CheapestLeaner). A cache
  // too small for the filters at the budget re-reads them, whoever built them: fewer bits per key
  // on every block, which makes each shard's load smaller, save more reads than their rates cost
  // (where one block's cut alone, FitCache, leaves its shard as loaded). Logs when it cuts.
  static constexpr double kMinCacheBudgetShare = 0.5;
  double CacheBitsPerKey(const ShardLoad& load, double keys_per_block, double bits_per_key,
                         ROCKSDB_NAMESPACE::Logger* log) const;
  // The tree's accounts for a file of a leveled tree: the sstfilter.LeveledBudget listener's
  // (and num_levels 0: `*watched`, its readers then count probes), or without them, where the
  // file's full filter lives whole in a block cache (`shards` has any), those of the files the
  // policy has built for the tree (TreeHistory::Built; this file then joins them): a forgotten
  // listener still leaves the filters room in the cache, though a tree of an earlier process's
  // files counts only those written since. False: neither.
  bool AccountsFor(const ROCKSDB_NAMESPACE::FilterBuildingContext& context, const TreeId& tree,
                   const CacheShards& shards, LeveledChooser* chooser, TreeAccounts* accounts,
                   bool* watched) const;
  // Gives the chooser, for a file at its place in a model of `num_levels` levels, the tree as
  // `accounts` make it and the budget steered over them (with num_levels 0), and, where `shards`
  // (the cache that holds the filters whole) has any, the tree's filter blocks in it, cut for it
  // (CacheBitsPerKey). Under a model the user fixed (num_levels given) only the cut. An error
  // where the accounts give no allocation (NewBuilder says what the file gets then).
  Result<bool> SteerByAccounts(const ROCKSDB_NAMESPACE::FilterBuildingContext& context,
                               const TreeId& tree, const TreeAccounts& accounts, int num_levels,
                               double bits_per_key, const CacheShards& shards,
                               LeveledChooser* chooser) const;
  // What a flush may spend under a memory_budget (LeveledChooser::SpendAtMost): the budget less
  // what the trees' filters spend now (negative: beyond it), and how far beyond the budget a flush
  // of overlapping keys may take them. Without a budget, no limit.
  struct FlushLimit {
    double bytes_left = std::numeric_limits<double>::infinity();
    double overshoot_bytes = 0;
  };
  // The budget for the tree's next file: BudgetBitsPerKey(), or, under a memory_budget, the bits
  // per key it buys over the keys of every tree the policy builds for (logged); then `*limit` is
  // what a flush may spend, else it is left as it was. The overshoot is kBudgetSwing times the
  // budget, unless the files below level 0 that no compaction is rewriting alone hold more than
  // the budget and that overshoot (a budget just lowered, or set on a database whose filters
  // spend more): no flush can keep the tree within it then, and what brings it back is the
  // listener's rewrites (of the default column family) and the steering of compactions' outputs,
  // so the overshoot is unlimited and a flush keeps its floor, where one given no filter would
  // cost every lookup a read of it until a compaction merges it. A running compaction's inputs
  // are not counted there: those of a compaction of level 0 are level 0's files.
  double TreeBitsPerKey(const ROCKSDB_NAMESPACE::FilterBuildingContext& context, const TreeId& tree,
                        FlushLimit* limit) const;

  Shape shape_;
  std::shared_ptr<LeveledAllocations> allocations_;  // builders hold it too
  std::shared_ptr<TreeHistory> history_;             // what the policy has seen of each tree
  // Whether the LOG has been told that the memory_budget cannot be kept, for each reason, and that
  // a database opened without the listener (once per policy); whether one did (ValidateOptions).
  struct BudgetWarnings {
    std::atomic<bool> no_cache{false}, no_listener{false};
    std::atomic<bool> opened_without_listener{false}, said_no_listener{false};
  };
  std::shared_ptr<BudgetWarnings> warned_ = std::make_shared<BudgetWarnings>();
};

template <typename... Policies>
struct PolicyList {};

// Every policy RocksDB can create by name (plugin.cc registers each). Its names are those of
// kPolicyConfigs (tests/policy_list.h), which tests, tools and scripts read; a test holds the two
// to the same names.
using AllPolicies =
    PolicyList<BloomPolicy, CuckooPolicy, FusePolicy, BumpedRibbonPolicy, LeveledPolicy>;

}  // namespace sstfilter
