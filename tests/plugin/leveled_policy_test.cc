// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled's builders outside a database: each level's filter, appending flushes, the
// levels compactions reach, probes and heat, mixed levels, tiny files, a file's smaller
// partitions; the Ledger.
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "plugin/block_cache_fit.h"
#include "plugin/budget_rewrites.h"
#include "plugin/listener_channel.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::Slice;
using testing::LeveledChoice;
using testing::PolicyFrom;

// Not padded ("key7"): the builders' false-positive counts below are measured on these keys.
std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

// A builder of `options`' policy for a file written to `level` of a tree of 5 levels.
std::unique_ptr<FilterBitsBuilder> BuilderAtLevel(
    const BlockBasedTableOptions& options, int level,
    ROCKSDB_NAMESPACE::CompactionStyle style = ROCKSDB_NAMESPACE::kCompactionStyleLevel) {
  FilterBuildingContext context(options);
  context.num_levels = 5;
  context.level_at_creation = level;
  context.compaction_style = style;
  return std::unique_ptr<FilterBitsBuilder>(options.filter_policy->GetBuilderWithContext(context));
}

// sstfilter.Leveled gives each file the filter of its level: more bits per key on the small upper
// levels, fewer on the last; the budget's filters for files of unknown level, and for universal
// trees the one of them within the budget.

TEST(LeveledPolicy, EachLevelGetsItsOwnFilter) {
  BlockBasedTableOptions options;
  options.filter_policy =
      PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;size_ratio=10;num_levels=5}");
  ASSERT_NE(options.filter_policy, nullptr);
  EXPECT_STREQ(options.filter_policy->CompatibilityName(), "rocksdb.BuiltinBloomFilter");
  auto bits_per_key_at = [&](int level, ROCKSDB_NAMESPACE::CompactionStyle style) {
    std::unique_ptr<FilterBitsBuilder> builder = BuilderAtLevel(options, level, style);
    if (builder == nullptr) return 0.0;
    for (int i = 0; i < 20000; ++i) builder->AddKey(Key(i));
    std::unique_ptr<const char[]> buf;
    const Slice filter = builder->Finish(&buf);
    std::unique_ptr<FilterBitsReader> reader(options.filter_policy->GetFilterBitsReader(filter));
    for (int i = 0; i < 20000; ++i) EXPECT_TRUE(reader->MayMatch(Key(i))) << level;
    return 8.0 * filter.size() / 20000;
  };
  const auto level_style = ROCKSDB_NAMESPACE::kCompactionStyleLevel;
  const auto& leveled = dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; ++i) keys.push_back(Key(i));
  auto chosen_bits = [&](int num_levels, int level) {
    const FilterChoice c = LeveledChoice(leveled, num_levels, level, keys);
    return 8.0 * FilterBytes(c.spec, keys.size()).value() / keys.size();
  };
  // Each file gets its level's filter for its key count (on the one level that mixes two filters,
  // the one its keys draw); expected bits per key fall with depth.
  const std::vector<LevelFilter> allocation = leveled.Allocation(5, keys.size()).value();
  // Level 0 is a flush: the tree's first appends (it has nothing to overlap) and gets the budget's
  // filter (FlushesThatAppendGetTheBudgetsFilter); the same keys again overlap it.
  EXPECT_EQ(bits_per_key_at(0, level_style), chosen_bits(1, 0));
  for (int level = 0; level < 5; ++level) {
    EXPECT_EQ(bits_per_key_at(level, level_style), chosen_bits(5, level)) << "level " << level;
    if (level >= 2) {
      EXPECT_LT(allocation[level].ExpectedBitsPerKey(), allocation[level - 1].ExpectedBitsPerKey())
          << "level " << level;
    }
  }
  EXPECT_GT(bits_per_key_at(0, level_style), 18);     // the top level: a wide filter
  EXPECT_LT(allocation[4].ExpectedBitsPerKey(), 10);  // the last level holds 90% of the keys
  // An unknown level (an ingested file) gets the filters of one level holding every key, which
  // spend the budget exactly (the trailer's 32 bytes included) in expectation.
  const double uniform = bits_per_key_at(-1, level_style);
  EXPECT_EQ(uniform, chosen_bits(1, 0));
  EXPECT_NEAR(leveled.Allocation(1, keys.size()).value()[0].ExpectedBitsPerKey(), 10, 1e-9);
  // A universal tree's filter is one of the budget's two, as the tree's error diffusion gives it
  // (TreeHistory::DrawsTheRicher; here the richer holds 99% of the mix: the tree's first filter
  // takes it), never a draw by its keys.
  const LevelFilter one_level = leveled.Allocation(1, keys.size()).value()[0];
  ASSERT_GT(one_level.upper_fraction, 0.5);
  EXPECT_NEAR(bits_per_key_at(2, ROCKSDB_NAMESPACE::kCompactionStyleUniversal),
              8.0 * FilterBytes(one_level.upper.spec, keys.size()).value() / keys.size(), 1e-9);
  // The listener plans a universal tree's rewrites at that mix on every level, at nominal sizes:
  // a file written with its richer filter is not chosen again (within kRewriteAbove of its share,
  // the bytes a filter of 20,000 keys adds beside nominal sizes included).
  TreeAccounts accounts;
  accounts.levels.resize(4);
  const std::vector<LevelFilter> planned = OneFilterAllocation(accounts, 10).value();
  ASSERT_EQ(planned.size(), 4u);
  for (const LevelFilter& level : planned) {
    EXPECT_GT(level.upper_fraction, 0);  // the mix itself, whose mean is the budget
    EXPECT_NEAR(level.ExpectedBitsPerKey(), 10, 0.01);
    EXPECT_LT(bits_per_key_at(2, ROCKSDB_NAMESPACE::kCompactionStyleUniversal),
              kRewriteAbove * level.ExpectedBitsPerKey());
  }
  printf("[ figures  ] universal: a file of 20,000 keys %.4f bits/key, planned at %.4f\n",
         bits_per_key_at(2, ROCKSDB_NAMESPACE::kCompactionStyleUniversal),
         planned[0].ExpectedBitsPerKey());
}

// A flush whose keys overlap none of its tree's recent flushes (an append: time series, logs,
// ids) will be moved down unchanged, so it gets the budget's filter, that of a tree of one level;
// a flush of keys among the recent ones gets level 0's. Column families are separate trees, the
// first filter of a file (partition) decides for all of it, and only flushes are remembered.
TEST(LeveledPolicy, FlushesThatAppendGetTheBudgetsFilter) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}");
  const auto& leveled = dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  auto keys_from = [](uint64_t first, uint64_t count) {
    std::vector<std::string> keys;
    for (uint64_t i = first; i < first + count; ++i) keys.push_back(testing::NumberedKey(i, 8));
    return keys;
  };
  auto builder_for = [&](int level, const std::string& column_family) {
    FilterBuildingContext context(options);
    context.num_levels = 5;
    context.level_at_creation = level;
    context.column_family_name = column_family;
    return std::unique_ptr<FilterBitsBuilder>(
        options.filter_policy->GetBuilderWithContext(context));
  };
  // Each Finish of `builder` over its partitions (sets of keys): true where it took the budget's
  // filter, false where level 0's.
  auto budgets_filter = [&](FilterBitsBuilder& builder,
                            const std::vector<std::vector<std::string>>& partitions) {
    std::vector<bool> out;
    for (const std::vector<std::string>& keys : partitions) {
      for (const std::string& k : keys) builder.AddKey(k);
      std::unique_ptr<const char[]> buf;
      const size_t bytes = builder.Finish(&buf).size();
      const uint64_t appended =
          FilterBytes(LeveledChoice(leveled, 1, 0, keys).spec, keys.size()).value();
      const uint64_t level0 =
          FilterBytes(LeveledChoice(leveled, 5, 0, keys).spec, keys.size()).value();
      EXPECT_LT(appended, level0);
      EXPECT_TRUE(bytes == appended || bytes == level0) << bytes;
      out.push_back(bytes == appended);
    }
    return out;
  };
  auto flush = [&](const std::string& column_family, uint64_t first, uint64_t count) -> bool {
    return budgets_filter(*builder_for(0, column_family), {keys_from(first, count)})[0];
  };
  EXPECT_TRUE(flush("a", 10'000, 2'000));  // the first flush: nothing to overlap
  EXPECT_TRUE(flush("a", 12'000, 2'000));  // ascending keys
  EXPECT_TRUE(flush("a", 8'000, 2'000));   // descending keys
  EXPECT_FALSE(flush("a", 9'000, 2'000));  // keys among the last flushes'
  EXPECT_FALSE(flush("a", 11'000, 200));   // inside one flush's range
  EXPECT_TRUE(flush("b", 10'000, 2'000));  // another column family: another tree
  // Another level's file is no flush: neither asked nor remembered.
  budgets_filter(*builder_for(1, "a"), {keys_from(20'000, 2'000)});
  EXPECT_TRUE(flush("a", 20'000, 2'000));
  // A partitioned filter: its first partition decides, and its whole range is remembered.
  EXPECT_EQ(budgets_filter(*builder_for(0, "a"), {keys_from(30'000, 1'000), keys_from(0, 1'000)}),
            (std::vector<bool>{true, true}));
  EXPECT_FALSE(flush("a", 25'000, 1'000));  // between that file's two partitions
  EXPECT_EQ(
      budgets_filter(*builder_for(0, "a"), {keys_from(5'000, 1'000), keys_from(40'000, 1'000)}),
      (std::vector<bool>{false, false}));
}

// The steering under a raised lower bound (a cut: LeveledPolicy::SteerByAccounts): an excess of
// 3 bits/key for 20 changes of the accounts leaves the budget at the bound, and, the excess gone,
// at the budget: the integral did not wind up against the bound. Without it the same excess
// steers below the budget and the integral keeps part of it after the excess is gone.
TEST(LeveledPolicy, SteeringStopsAtItsLowestBudgetWithoutWindingUp) {
  const TreeId tree{"db:steering", "session", "default"};
  TreeHistory bounded, free;
  for (uint64_t change = 1; change <= 20; ++change) {
    EXPECT_EQ(bounded.Steer(tree, change, 3, 8, 8), 8) << change;
    EXPECT_LT(free.Steer(tree, change, 3, 8), 5.1) << change;
  }
  EXPECT_EQ(bounded.Steer(tree, 21, 0, 8, 8), 8);
  EXPECT_EQ(bounded.Steer(tree, 22, 0, 8), 8);
  EXPECT_LT(free.Steer(tree, 21, 0, 8), 7.5) << "the integral wound down while the excess lasted";
  // A bound above the highest the steering gives (1.25 times the budget) is held to it.
  EXPECT_EQ(bounded.Steer(tree, 23, 0, 8, 100), 8 * TreeHistory::kSteerHighest);
}

// A universal tree's filters take one of a mix's two by error diffusion: over filters of uneven
// sizes the keys given the richer stay within one filter's keys of the mix's share, where
// the richer (or the leaner) for every filter misses it by the whole share; a fraction of 0 or 1
// gives the one filter; trees are apart. Without the carry (each filter alone: the richer
// whenever its share is at least half) the richer's keys here would be all or none.
TEST(LeveledPolicy, UniversalFiltersTakeTheRicherForTheMixsShareOfTheKeys) {
  TreeHistory history;
  const TreeId tree = LoggerTree(&history, "default"), other = LoggerTree(&history, "other");
  for (const double fraction : {0.1, 0.3, 0.5, 0.9}) {
    SCOPED_TRACE(fraction);
    TreeHistory fresh;
    double keys = 0, richer = 0, largest = 0;
    for (int i = 0; i < 200; ++i) {
      const double n = 1000 + 37 * (i % 11) * (i % 7);  // 1,000 to 3,220 keys
      if (fresh.DrawsTheRicher(tree, n, fraction)) richer += n;
      keys += n;
      largest = std::max(largest, n);
      EXPECT_LE(std::abs(richer - fraction * keys), largest) << "after " << i + 1 << " filters";
    }
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(history.DrawsTheRicher(tree, 1000, 0));
    EXPECT_TRUE(history.DrawsTheRicher(other, 1000, 1));
  }
  // Each tree its own carry (both empty now): one shared would hold 800 keys at the second draw.
  EXPECT_FALSE(history.DrawsTheRicher(other, 1000, 0.4));
  EXPECT_FALSE(history.DrawsTheRicher(tree, 1000, 0.4));
  EXPECT_TRUE(history.DrawsTheRicher(tree, 1000, 0.4));
}

// The files a policy wrote for a tree, without the listener, as accounts: flushes add to level 0;
// a compaction's output at level L replaces the files of L and L - 1 that its key range meets,
// and no other, or of every level above where L is the shallowest that compactions reach; level
// 0 counts at its fullest over the last records; each level's probes are its files' ranges'
// (ProbesPerLevel); `changes` counts the flushes; trees are apart.
TEST(LeveledPolicy, CountsTheFilesItWroteAsCompactionsReplaceThem) {
  // Files, keys and filter bytes over the levels, level 0 at its fullest lately.
  struct Totals {
    uint64_t files = 0, keys = 0, filter_bytes = 0;
  };
  auto totals = [](const TreeAccounts& accounts) {
    Totals t;
    for (size_t i = 0; i < accounts.levels.size(); ++i) {
      const LevelAccount& a = i == 0 && accounts.level0_peak.keys > accounts.levels[0].keys
                                  ? accounts.level0_peak
                                  : accounts.levels[i];
      t.files += a.filter_files;
      t.keys += a.keys;
      t.filter_bytes += a.filter_bytes;
    }
    return t;
  };
  TreeHistory history;
  const TreeId tree = LoggerTree(&history, "default"), other = LoggerTree(&history, "other");
  history.RecordBuilt(tree, 0, false, testing::RangeOf("a", "m"), 100, 1000);
  history.RecordBuilt(tree, 0, false, testing::RangeOf("c", "z"), 100, 1000);
  history.RecordBuilt(tree, 2, true, testing::RangeOf("x", "z"), 50,
                      400);  // below the compaction's levels
  history.RecordBuilt(other, 0, false, testing::RangeOf("a", "z"), 7, 70);
  TreeAccounts built = history.Built(tree);
  ASSERT_EQ(built.levels.size(), 3u);
  EXPECT_EQ(built.levels[0].filter_files, 2u);
  EXPECT_EQ(built.levels[2].filter_keys, 50u);
  EXPECT_EQ(built.changes, 2u);
  // A lookup drawn like the keys probes both flushes where they overlap ([c, m]) and level 2 in
  // [x, z], its own file's range and that of the second flush.
  EXPECT_GT(built.levels[0].probes, 1.0);
  EXPECT_LT(built.levels[0].probes, 2.0);
  EXPECT_GT(built.levels[2].probes, 0.0);
  EXPECT_LT(built.levels[2].probes, 1.0);
  EXPECT_EQ(totals(built).files, 3u);
  EXPECT_EQ(totals(built).keys, 250u);
  EXPECT_EQ(totals(built).filter_bytes, 2400u);
  // Level 0 into level 1: two outputs that together meet both flushes.
  history.RecordBuilt(tree, 1, true, testing::RangeOf("a", "k"), 100, 900);
  history.RecordBuilt(tree, 1, true, testing::RangeOf("l", "z"), 100, 900);
  built = history.Built(tree);
  EXPECT_EQ(built.levels[0].keys, 0u);
  EXPECT_EQ(built.level0_peak.keys, 200u);
  EXPECT_EQ(built.changes, 2u);
  EXPECT_EQ(totals(built).files,
            5u);  // the two outputs, level 2's file, and level 0 at its fullest
  EXPECT_EQ(totals(built).keys, 450u);
  EXPECT_EQ(totals(built).filter_bytes, 4200u);
  // Level 1 into level 2 over [l, z]: replaces that output and level 2's file, not [a, k].
  history.RecordBuilt(tree, 2, true, testing::RangeOf("l", "z"), 150, 1200);
  built = history.Built(tree);
  EXPECT_EQ(built.levels[1].filter_files, 1u);
  EXPECT_EQ(built.levels[2].filter_files, 1u);
  EXPECT_EQ(totals(built).files, 4u);
  EXPECT_EQ(totals(built).keys, 450u);
  EXPECT_EQ(totals(history.Built(other)).files, 1u);
  EXPECT_TRUE(history.Built(LoggerTree(nullptr, "default")).levels.empty());
  // Dynamic level bytes: level 0 compacts into the base level (6 here), the levels between
  // empty; its outputs replace the flushes they meet.
  const TreeId dynamic = LoggerTree(&history, "dynamic");
  history.RecordBuilt(dynamic, 0, false, testing::RangeOf("a", "m"), 100, 1000);
  history.RecordBuilt(dynamic, 0, false, testing::RangeOf("n", "z"), 100, 1000);
  history.RecordCompaction(dynamic, 6);  // what the policy records as it places the output
  history.RecordBuilt(dynamic, 6, true, testing::RangeOf("a", "p"), 150, 1500);
  built = history.Built(dynamic);
  EXPECT_EQ(built.levels[0].keys, 0u);
  EXPECT_EQ(totals(built).files, 3u);  // the output, and the two flushes: level 0 at its fullest
  EXPECT_EQ(totals(built).keys, 350u);
  // Once the window has passed, level 0 counts as it is: empty.
  for (size_t i = 0; i < TreeAccounts::kLevel0Window; ++i) {
    const std::string key = "q" + std::to_string(100 + i);
    history.RecordBuilt(dynamic, 6, true, testing::RangeOf(key.c_str(), key.c_str()), 1, 10);
  }
  built = history.Built(dynamic);
  EXPECT_EQ(totals(built).files, 1u + TreeAccounts::kLevel0Window);
  EXPECT_EQ(totals(built).keys, 150u + TreeAccounts::kLevel0Window);
}

// Without num_levels, the model is the levels the tree really has (plugin/tree_history.h):
// level 0, then from the shallowest to the deepest level that compaction outputs have gone to,
// level 0 as large as the shallowest. Before any compaction, the column family's num_levels.
TEST(LeveledPolicy, ModelsTheLevelsCompactionsReach) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  const auto& leveled = dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(Key(i));
  auto bytes_at = [&](int level, bool bottommost) {
    FilterBuildingContext context(options);
    context.num_levels = 7;
    context.level_at_creation = level;
    context.is_bottommost = bottommost;
    std::unique_ptr<FilterBitsBuilder> builder(
        options.filter_policy->GetBuilderWithContext(context));
    for (const std::string& k : keys) builder->AddKey(k);
    std::unique_ptr<const char[]> buf;
    return builder->Finish(&buf).size();
  };
  auto allocated = [&](int num_levels, int level) {
    return FilterBytes(LeveledChoice(leveled, num_levels, level, keys).spec, keys.size()).value();
  };
  EXPECT_EQ(bytes_at(0, false), allocated(1, 0));  // the first flush appends
  EXPECT_EQ(bytes_at(0, false), allocated(7, 0));  // the same keys again: before any compaction,
                                                   // level 0 of num_levels
  EXPECT_EQ(bytes_at(4, false), allocated(2, 1));  // the first compaction: levels 0 and 4
  EXPECT_EQ(bytes_at(6, true), allocated(4, 3));   // levels 0, 4, 5, 6
  EXPECT_EQ(bytes_at(5, false), allocated(4, 2));
  EXPECT_EQ(bytes_at(4, false), allocated(4, 1));
  EXPECT_EQ(bytes_at(5, true),
            allocated(4, 3));  // bottommost: the largest level, whatever its number
  EXPECT_EQ(bytes_at(0, false), allocated(4, 0));  // level 0 of the model
  EXPECT_LT(allocated(4, 0), allocated(7, 0));     // level 0 of a real tree is no 1e-6 of it
  EXPECT_EQ(bytes_at(3, false), allocated(5, 1));  // the base level moves up: levels 0, 3 to 6
}

// With the sstfilter.LeveledBudget listener's accounts of a tree, a file gets its level's filter
// in the allocation over the tree's real shares, for the probes each level receives: an upper
// level of a random tree (every lookup probes every level) gets Monkey's rich filter; the same
// level of an ordered tree (each level probed for its own keys only) the budget's, like the last
// level.
TEST(LeveledPolicy, AllocatesForTheProbesEachLevelReceives) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  testing::SilentLogger logger;
  const auto alive = std::make_shared<int>();  // the database whose logger it is stays open
  const std::vector<uint64_t> level_keys = {0, 0, 0, 0, 10'000, 90'000, 900'000};
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(Key(i));
  // Bits per key of a file of `keys` written to `level` of a tree whose levels receive `probes`.
  auto bits_at = [&](const std::string& column_family, int level,
                     const std::vector<double>& probes) {
    TreeAccounts accounts;
    accounts.levels.resize(level_keys.size());
    for (size_t i = 0; i < level_keys.size(); ++i) {
      accounts.levels[i].keys = level_keys[i];
      accounts.levels[i].filter_bytes = level_keys[i] * 10 / 8;
      accounts.levels[i].probes = probes[i];
    }
    const std::unique_ptr<FilterBitsBuilder> builder =
        testing::BuilderWithAccounts(options, accounts, &logger, alive, column_family, level);
    for (const std::string& k : keys) builder->AddKey(k);
    std::unique_ptr<const char[]> buf;
    return 8.0 * builder->Finish(&buf).size() / keys.size();
  };
  const std::vector<double> random = {0, 0, 0, 0, 1, 1, 1};
  const std::vector<double> ordered = {0, 0, 0, 0, 0.01, 0.09, 0.9};
  const double random_upper = bits_at("random", 4, random);
  const double ordered_upper = bits_at("ordered", 4, ordered);
  const double ordered_last = bits_at("ordered", 6, ordered);
  printf(
      "[ figures  ] level 4 of 7: %.2f bits/key when every lookup probes it, %.2f when it is "
      "probed for its own keys (the last level: %.2f)\n",
      random_upper, ordered_upper, ordered_last);
  EXPECT_GT(random_upper, 15);
  EXPECT_LT(ordered_upper, 11.5);
  EXPECT_NEAR(ordered_upper, ordered_last, 1.5);
  // A flush: the first of a tree appends (the budget's filter); one over the same keys does not,
  // and every lookup probes it, though level 0 has no files in the accounts yet.
  EXPECT_LT(bits_at("random", 0, random), 11.5);
  EXPECT_GT(bits_at("random", 0, random), 15);
}

// A file the readers counted, `sampled_probes` over `exposure` (FileRange), where it is now.
FileRange CountedFile(int level, double keys, double sampled_probes, double exposure,
                      std::string smallest, std::string largest) {
  FileRange f{level, level, keys, std::move(smallest), std::move(largest)};
  f.counted = true;
  f.sampled_probes = sampled_probes;
  f.exposure = exposure;
  return f;
}

// Keys of the heat tests: 8 digits, so that bytewise order is numeric order.
std::string HeatKey(int i) { return testing::NumberedKey(i, /*digits=*/8); }

// Ten files of level 4, of 10,000 keys each ([f x 10,000, f x 10,000 + 9,999]): the first with
// 10,000 sampled probes, the others with 100, all equally exposed.
std::vector<FileRange> LevelFourOneHot() {
  std::vector<FileRange> files;
  for (int f = 0; f < 10; ++f) {
    files.push_back(CountedFile(4, 10'000, f == 0 ? 10'000.0 : 100.0, 1, HeatKey(f * 10'000),
                                HeatKey(f * 10'000 + 9'999)));
  }
  return files;
}

// The lookup heat of a key range (HeatOf): ten files of level 4, one of which takes 100 times
// the probes per key of the others. At the level's probes per key each file would have sampled
// 1,090; the hot file's 10,000 and the cold ones' 100 scatter far beyond counting noise (Pearson's
// statistic 80,927 against 9), so the prior is small (HeatPriorSamples: 9,810 / 80,918 = 0.121)
// and the hot file's heat is (10,000 + 0.121) / (1,090 + 0.121) = 9.17, each cold one's 0.0918,
// held at a quarter; their key-weighted geometric mean is 9.17^0.1 x 0.25^0.9 = 0.358, so the hot
// range is 25.6 times as hot as the level's mean and a cold one 0.70 times. A range that meets
// the hot file and a cold one counts both.
TEST(LeveledPolicy, HeatOfAKeyRangeIsItsFilesProbesPerKeyOverTheLevels) {
  const auto& name = HeatKey;
  std::vector<FileRange> files = LevelFourOneHot();
  files.push_back(CountedFile(5, 50'000, 1e6, 1, name(0),
                              name(99'999)));  // another level: no part in level 4's
  auto heat_of = [&](int first, int last, int level = 4) {
    KeyRange range;
    range.Add(name(first));
    range.Add(name(last));
    return HeatOf(files, level, range);
  };
  const double expected = 1'090;
  const double pearson =
      (std::pow(10'000 - expected, 2) + 9 * std::pow(100 - expected, 2)) / expected;
  const double prior = (10 * expected - expected) / (pearson - 9);
  EXPECT_NEAR(HeatPriorSamples(files, 4), prior, 1e-12);
  const double hot = (10'000 + prior) / (expected + prior),
               cold = (100 + prior) / (expected + prior);
  const double mean = std::pow(hot, 0.1) * std::pow(kMinHeat, 0.9);
  EXPECT_NEAR(heat_of(0, 4'999), hot / mean, 1e-9);
  EXPECT_NEAR(heat_of(50'000, 54'999), kMinHeat / mean, 1e-9);
  EXPECT_NEAR(heat_of(5'000, 14'999), (hot + cold) / 2 / mean, 1e-9);
  EXPECT_EQ(heat_of(200'000, 300'000), 1) << "meets no file";
  EXPECT_EQ(heat_of(0, 4'999, 3), 1) << "a level with no counted files";
  // A small file far hotter than its level (a file can be at most its level's keys over its own
  // keys hotter than the level) is held at kMaxHeat.
  files[0].keys = 100;
  files[0].sampled_probes = 1e9;
  const double held = std::exp((100 * std::log(kMaxHeat) + 90'000 * std::log(kMinHeat)) / 90'100);
  EXPECT_NEAR(heat_of(0, 4'999), kMaxHeat / held, 1e-9);
}

// The rates at which lookups probe the tree's filter blocks, from the readers' counts (BlockHeatOf,
// BlockRateOf): ten files of level 4, one of 10,000 sampled probes and nine of 100 (the level's
// mean file: 1,090), and two of level 5 with none. With kBlockHeatPriorSamples (16) added to each
// side, the hot block is probed (10,016 / 1,106) = 9.06 times as often as its level's mean block
// and a cold one 0.105 times; level 5's, with no counts, alike. Three classes, whose shares sum to
// 1 and whose mean rate is 1. Blended by half: the hot block at 1 + (9.06 - 1) / 2. A new file of
// 5,000 keys within the hot file's range, at its probes per key: (5,000 + 16) / 1,106. Where the
// counts say nothing (no weight; files probed alike; a level with a single sample), no classes.
TEST(LeveledPolicy, BlockHeatIsEachFilesProbesAgainstItsLevelsMeanFile) {
  const auto& name = HeatKey;
  std::vector<FileRange> files = LevelFourOneHot();
  files.push_back(CountedFile(5, 50'000, 0, 1, name(0), name(49'999)));
  files.push_back(CountedFile(5, 50'000, 0, 1, name(50'000), name(99'999)));
  const double hot = 10'016.0 / 1'106, cold = 116.0 / 1'106;
  const std::vector<BlockHeatClass> heat = BlockHeatOf(files, 1);
  ASSERT_EQ(heat.size(), 3u);
  double shares = 0, mean = 0;
  for (const BlockHeatClass& c : heat) {
    shares += c.share;
    mean += c.share * c.rate;
  }
  EXPECT_NEAR(shares, 1, 1e-12);
  EXPECT_NEAR(mean, 1, 1e-12);
  EXPECT_NEAR(heat[0].rate, cold, 1e-9);
  EXPECT_NEAR(heat[0].share, 9.0 / 12, 1e-12);
  EXPECT_NEAR(heat[1].rate, 1, 1e-9);
  EXPECT_NEAR(heat[2].rate, hot, 1e-9);
  EXPECT_NEAR(BlockHeatOf(files, 0.5).back().rate, 1 + (hot - 1) / 2, 1e-9);

  KeyRange in_hot, nowhere;
  in_hot.Add(name(0));
  in_hot.Add(name(4'999));
  nowhere.Add(name(500'000));
  EXPECT_NEAR(BlockRateOf(files, 4, in_hot, 5'000, 1), 5'016.0 / 1'106, 1e-9);
  EXPECT_EQ(BlockRateOf(files, 4, nowhere, 5'000, 1), 1) << "meets no file";
  EXPECT_EQ(BlockRateOf(files, 3, in_hot, 5'000, 1), 1) << "a level with no counted files";
  EXPECT_EQ(BlockRateOf(files, 5, in_hot, 5'000, 1), 1) << "a level with no probes counted";

  // Files whose samples are not finite, or negative, take no part.
  std::vector<FileRange> with_bad = files;
  for (const double bad : {std::nan(""), HUGE_VAL, -5.0}) {
    with_bad.push_back(CountedFile(4, 10'000, bad, 1, name(900'000), name(909'999)));
  }
  const std::vector<BlockHeatClass> without_bad = BlockHeatOf(with_bad, 1);
  ASSERT_EQ(without_bad.size(), heat.size());
  for (size_t c = 0; c < heat.size(); ++c) {
    EXPECT_EQ(without_bad[c].rate, heat[c].rate);
    EXPECT_EQ(without_bad[c].share, heat[c].share);
  }
  KeyRange in_bad;
  in_bad.Add(name(900'000));
  in_bad.Add(name(909'999));
  EXPECT_EQ(BlockRateOf(with_bad, 4, in_hot, 5'000, 1), BlockRateOf(files, 4, in_hot, 5'000, 1));
  EXPECT_EQ(BlockRateOf(with_bad, 4, in_bad, 10'000, 1), 1) << "meets no counted file";
  EXPECT_EQ(HeatOf(with_bad, 4, in_hot), HeatOf(files, 4, in_hot));
  EXPECT_EQ(HeatOf(with_bad, 4, in_bad), HeatOf(files, 4, in_bad));
  EXPECT_TRUE(BlockHeatOf(files, 0).empty());
  std::vector<FileRange> alike = files, one_sample = files;
  for (FileRange& f : alike) f.sampled_probes = 100;
  EXPECT_TRUE(BlockHeatOf(alike, 1).empty());
  for (FileRange& f : one_sample) f.sampled_probes = 0;
  one_sample[0].sampled_probes = 1;
  EXPECT_TRUE(BlockHeatOf(one_sample, 1).empty()) << "(1 + 16) / (0.1 + 16) against 16 / 16.1";
}

// Files compare by their shares of the lookups (sampled probes over exposure), not by their
// samples: level 4's ten files, each written at a different time (file f exposed to 1,000 x (f +
// 1) of the tree's sampled probes) and each sampling a tenth of them, are probed alike: no file's
// range is hotter or colder, and no block classes; a new file within the first file's range, of its
// keys, is rated as a file of the level as exposed as its mean file (its share, 0.1, times the mean
// exposure, 5,500): 1. By their samples alone (as if equally exposed), the oldest file would look
// 10 times as hot as the youngest: 1.81 against 0.19 times the level's probes per key (1.82 and
// 0.18 shrunk by the prior their scatter gives, 3.32), the youngest held at kMinHeat. Beside
// LevelFourOneHot's files, which make classes, a file that takes no part in level 4's heat changes
// nothing, and a range that meets only it is not known (1): one not exposed yet (exposure 0), or
// whose exposure is not finite or negative, or not counted, or now on another level (a running
// compaction writing its keys to level 4 from level 3). The hot file, exposed twice as long as the
// others with twice the samples, keeps its heat (within 1e-4: HeatOf's prior and BlockRateOf's
// weigh a little less), and a new file of 5,000 keys in its range is rated as before within 1%:
// over the level's mean exposure, 1.1, (5,000 x 1.1 + 16) / (1,090 x 1.1 + 16).
TEST(LeveledPolicy, HeatComparesFilesByTheirSharesOfTheLookups) {
  const auto& name = HeatKey;
  std::vector<FileRange> files = LevelFourOneHot();
  for (int f = 0; f < 10; ++f) {
    files[f].exposure = 1'000.0 * (f + 1);
    files[f].sampled_probes = files[f].exposure / 10;
  }
  auto range = [&](int first, int last) {
    KeyRange keys;
    keys.Add(name(first));
    keys.Add(name(last));
    return keys;
  };
  EXPECT_NEAR(HeatOf(files, 4, range(0, 9'999)), 1, 1e-12) << "the youngest";
  EXPECT_NEAR(HeatOf(files, 4, range(90'000, 99'999)), 1, 1e-12) << "the oldest";
  EXPECT_TRUE(BlockHeatOf(files, 1).empty());
  EXPECT_NEAR(BlockRateOf(files, 4, range(0, 9'999), 10'000, 1), 1, 1e-12);
  std::vector<FileRange> as_samples = files;
  for (FileRange& f : as_samples) f.exposure = 1;
  const double prior = (5'500 - 550) / (825'000 / 550.0 - 9);  // samples 100 to 1,000 about 550
  EXPECT_NEAR(HeatOf(as_samples, 4, range(90'000, 99'999)) / HeatOf(as_samples, 4, range(0, 9'999)),
              (1'000 + prior) / (550 + prior) / kMinHeat, 1e-9);

  const std::vector<FileRange> hot = LevelFourOneHot();
  const std::vector<BlockHeatClass> classes = BlockHeatOf(hot, 1);
  ASSERT_EQ(classes.size(), 2u);
  std::vector<std::vector<FileRange>> taking_no_part;
  for (const double exposure : {0.0, std::nan(""), HUGE_VAL, -1.0}) {
    taking_no_part.push_back(hot);
    taking_no_part.back().push_back(
        CountedFile(4, 10'000, 1e6, exposure, name(200'000), name(209'999)));
  }
  taking_no_part.push_back(hot);
  taking_no_part.back().push_back(CountedFile(4, 10'000, 1e6, 1, name(200'000), name(209'999)));
  taking_no_part.back().back().counted = false;
  taking_no_part.push_back(hot);
  taking_no_part.back().push_back(CountedFile(3, 10'000, 1e6, 1, name(200'000), name(209'999)));
  taking_no_part.back().back().level = 4;
  for (size_t c = 0; c < taking_no_part.size(); ++c) {
    const std::vector<FileRange>& with = taking_no_part[c];
    EXPECT_EQ(HeatOf(with, 4, range(200'000, 209'999)), 1) << c;
    EXPECT_EQ(HeatOf(with, 4, range(0, 4'999)), HeatOf(hot, 4, range(0, 4'999))) << c;
    EXPECT_EQ(BlockRateOf(with, 4, range(0, 4'999), 5'000, 1),
              BlockRateOf(hot, 4, range(0, 4'999), 5'000, 1))
        << c;
    if (c == taking_no_part.size() - 1) continue;  // level 3's file is its level's mean: a class
    const std::vector<BlockHeatClass> with_classes = BlockHeatOf(with, 1);
    ASSERT_EQ(with_classes.size(), classes.size()) << c;
    for (size_t k = 0; k < classes.size(); ++k) {
      EXPECT_EQ(with_classes[k].rate, classes[k].rate) << c;
      EXPECT_EQ(with_classes[k].share, classes[k].share) << c;
    }
  }

  std::vector<FileRange> hot_older = hot;
  hot_older[0].exposure = 2;
  hot_older[0].sampled_probes *= 2;
  EXPECT_NEAR(HeatOf(hot_older, 4, range(0, 4'999)) / HeatOf(hot, 4, range(0, 4'999)), 1, 1e-4);
  EXPECT_NEAR(BlockRateOf(hot_older, 4, range(0, 4'999), 5'000, 1),
              (5'000 * 1.1 + 16) / (1'090 * 1.1 + 16), 1e-9);
  EXPECT_NEAR(BlockRateOf(hot_older, 4, range(0, 4'999), 5'000, 1) /
                  BlockRateOf(hot, 4, range(0, 4'999), 5'000, 1),
              1, 0.01);
}

// Samples that scatter no more than counting makes them (Pearson's statistic at most the files'
// number less 1) are no heat: level 4's ten files, each of which would sample 100 at the level's
// probes per key, sampled 97 or 103 (a statistic of 0.9): the prior is infinite and every range's
// heat 1, where the samples alone would make the 103s' ranges 1.03 times as hot as their level.
// Where the scatter is wider (1 and 199: 980.1), the prior is (1,000 - 100) / (980.1 - 9) = 0.927
// and shrinks the heats toward 1: (199 + prior) / (100 + prior) over the level's geometric mean,
// the 1s' heats held at kMinHeat; less than the samples alone give. A level of one counted file is
// its own mean.
TEST(LeveledPolicy, HeatOfCountingNoiseIsNone) {
  const auto& name = HeatKey;
  auto level_four = [&](double low, double high) {
    std::vector<FileRange> files;
    for (int f = 0; f < 10; ++f) {
      files.push_back(CountedFile(4, 10'000, f % 2 == 0 ? low : high, 1, name(f * 10'000),
                                  name(f * 10'000 + 9'999)));
    }
    return files;
  };
  auto range = [&](int f) {
    KeyRange keys;
    keys.Add(name(f * 10'000));
    keys.Add(name(f * 10'000 + 9'999));
    return keys;
  };
  const std::vector<FileRange> noise = level_four(97, 103);
  EXPECT_TRUE(std::isinf(HeatPriorSamples(noise, 4)));
  for (int f = 0; f < 10; ++f) EXPECT_EQ(HeatOf(noise, 4, range(f)), 1) << f;

  const std::vector<FileRange> wide = level_four(1, 199);
  const double prior = 900 / (10 * 99.0 * 99 / 100 - 9);
  EXPECT_NEAR(HeatPriorSamples(wide, 4), prior, 1e-12);
  const double high = (199 + prior) / (100 + prior);
  EXPECT_NEAR(HeatOf(wide, 4, range(1)), high / std::sqrt(high * kMinHeat), 1e-9);
  EXPECT_LT(HeatOf(wide, 4, range(1)), 1.99 / std::sqrt(1.99 * kMinHeat));

  const std::vector<FileRange> one(wide.begin(), wide.begin() + 1);
  EXPECT_TRUE(std::isinf(HeatPriorSamples(one, 4)));
  EXPECT_EQ(HeatOf(one, 4, range(0)), 1);
}

// With the readers' counts per file, a file of the hot range gets more bits than its level's
// filter without counts: about log2(25.6) = 4.7 halvings of the rate, at 0.9 of the counts'
// weight (one file's draw on a level that mixes two filters moves it by a bit either way).
TEST(LeveledPolicy, GivesHotKeyRangesMoreBits) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  testing::SilentLogger logger;
  const auto alive = std::make_shared<int>();
  const auto& name = HeatKey;
  // Bits per key of a file of level 4 holding keys [first, first + 5000).
  auto bits_at = [&](const std::string& column_family, int first, bool with_heat) {
    TreeAccounts accounts;
    accounts.levels.resize(7);
    const std::vector<uint64_t> level_keys = {0, 0, 0, 0, 100'000, 900'000, 9'000'000};
    for (size_t i = 0; i < level_keys.size(); ++i) {
      accounts.levels[i].keys = level_keys[i];
      accounts.levels[i].filter_bytes = level_keys[i] * 10 / 8;
      accounts.levels[i].probes = level_keys[i] > 0 ? 1 : 0;
    }
    if (with_heat) {
      accounts.heat = std::make_shared<std::vector<FileRange>>(LevelFourOneHot());
      accounts.counted_weight = 0.9;
    }
    const std::unique_ptr<FilterBitsBuilder> builder =
        testing::BuilderWithAccounts(options, accounts, &logger, alive, column_family, 4);
    for (int i = first; i < first + 5000; ++i) builder->AddKey(name(i));
    std::unique_ptr<const char[]> buf;
    return 8.0 * builder->Finish(&buf).size() / 5000;
  };
  const double level = bits_at("no counts", 0, false);
  const double hot = bits_at("hot", 0, true);
  printf("[ figures  ] level 4: %.2f bits/key without counts, %.2f in the hot range with them\n",
         level, hot);
  EXPECT_GT(hot, level + 3);
}

// A tree is named by its database's logger's address, which the next database may reuse: the
// accounts of a database whose logger is gone are nobody's.
TEST(Ledger, ForgetsTheAccountsOfAClosedDatabase) {
  auto logger = std::make_shared<int>();
  const TreeId tree = LoggerTree(logger.get(), "default");
  TreeAccounts accounts;
  accounts.levels.resize(2);
  accounts.levels[1].keys = 1000;
  Ledger::Global().Publish(tree, logger, accounts);
  TreeAccounts got;
  ASSERT_TRUE(Ledger::Global().Get(tree, &got));
  EXPECT_EQ(got.levels.at(1).keys, 1000u);
  logger.reset();  // the database closed
  EXPECT_FALSE(Ledger::Global().Get(tree, &got));
}

// sstfilter.Leveled at 10 bits per key over 5 levels, and the level whose filter for files of
// kMixedKeys keys falls between two filters: its files mix them.
constexpr int kMixedKeys = 2000;
struct MixedLevel {
  BlockBasedTableOptions options;
  int level = -1;  // none mixes
  LevelFilter filter;

  MixedLevel() {
    options.filter_policy = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}");
    if (options.filter_policy == nullptr) return;
    const std::vector<LevelFilter> allocation = leveled().Allocation(5, kMixedKeys).value();
    for (int l = 0; l < 5; ++l) {
      if (allocation[l].upper_fraction > 0) level = l;
    }
    if (level >= 0) filter = allocation[level];
  }
  const LeveledPolicy& leveled() const {
    return dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  }
  // Whether the policy loaded and a level mixes: what the tests below are about.
  bool Mixes() const { return options.filter_policy != nullptr && level >= 0; }
  // The filter a file of `keys` written to the level gets.
  std::string Build(const std::vector<std::string>& keys) const {
    std::unique_ptr<FilterBitsBuilder> builder = BuilderAtLevel(options, level);
    for (const std::string& k : keys) builder->AddKey(k);
    std::unique_ptr<const char[]> buf;
    return builder->Finish(&buf).ToString();
  }
};

// On the level whose budget falls between two filters, each file takes one of them, drawn from
// its keys: the same keys in another order get the same choice, and the share of
// files that take the larger one is the allocation's fraction (within a 5-sigma binomial bound).
TEST(LeveledPolicy, AMixedLevelsFilesDrawTheirFilterFromTheirKeys) {
  const MixedLevel mixed_level;
  ASSERT_TRUE(mixed_level.Mixes()) << "10 bits/key over 5 levels of 2,000-key files mix";
  const int mixed = mixed_level.level;
  const LevelFilter& level = mixed_level.filter;
  const LeveledPolicy& leveled = mixed_level.leveled();
  constexpr int kKeys = kMixedKeys;
  // The larger filter, by size (a cuckoo build may take a few more buckets than FilterBytes).
  const uint64_t upper_bytes = FilterBytes(level.upper.spec, kKeys).value();
  const uint64_t base_bytes = FilterBytes(level.base.spec, kKeys).value();
  ASSERT_GT(upper_bytes, base_bytes);
  auto TrailerOf = [](const std::string& filter) {
    return FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size())
        .trailer();
  };
  auto build = [&](const std::vector<std::string>& keys) { return mixed_level.Build(keys); };
  constexpr int kFiles = 400;
  int upper = 0;
  for (int file = 0; file < kFiles; ++file) {
    std::vector<std::string> keys;
    for (int i = 0; i < kKeys; ++i) keys.push_back("file" + std::to_string(file) + Key(i));
    const std::string bytes = build(keys);
    upper += 2 * bytes.size() > upper_bytes + base_bytes;
    if (file < 3) {
      // The same choice (kind, parameter and size; a cuckoo build's placement may differ).
      std::vector<std::string> reversed(keys.rbegin(), keys.rend());
      reversed.insert(reversed.begin() + 100, reversed[100]);  // a repeat, which is skipped
      const std::string again = build(reversed);
      const Trailer t = TrailerOf(bytes), u = TrailerOf(again);
      EXPECT_EQ(std::make_tuple(u.kind, u.param, u.num_units, u.num_keys, again.size()),
                std::make_tuple(t.kind, t.param, t.num_units, t.num_keys, bytes.size()))
          << "file " << file;
      EXPECT_EQ(bytes.size(),
                FilterBytes(LeveledChoice(leveled, 5, mixed, keys).spec, kKeys).value());
    }
  }
  const double p = level.upper_fraction;
  EXPECT_NEAR(upper, p * kFiles, testing::BinomialTolerance(kFiles, p))
      << "level " << mixed << ", fraction " << p;
}

// A file rewritten for a memory budget (plugin/budget_rewrites.h) takes the leaner filter of its
// level's mix, whatever its keys draw: keys that drew the richer would draw it again. Unless the
// rewrite keeps the mix (KeepsItsLevelsMix: a file another policy wrote): then its keys draw, as a
// file compacted there would, the richer or the leaner.
TEST(LeveledPolicy, ABudgetRewriteTakesTheLeanerOfAMixUnlessItKeepsTheMix) {
  const MixedLevel mixed_level;
  ASSERT_TRUE(mixed_level.Mixes()) << "10 bits/key over 5 levels of 2,000-key files mix";
  const int mixed = mixed_level.level;
  const LevelFilter& level = mixed_level.filter;
  constexpr int kKeys = kMixedKeys;
  const uint64_t richer = FilterBytes(level.upper.spec, kKeys).value();
  const uint64_t leaner = FilterBytes(level.base.spec, kKeys).value();
  ASSERT_GT(richer, leaner);
  // Keys that draw the richer filter, and keys that draw the leaner.
  std::vector<std::string> draw_richer, draw_leaner;
  for (int file = 0; file < 1000 && (draw_richer.empty() || draw_leaner.empty()); ++file) {
    std::vector<std::string> keys;
    for (int i = 0; i < kKeys; ++i) keys.push_back("file" + std::to_string(file) + Key(i));
    const uint64_t drawn =
        FilterBytes(LeveledChoice(mixed_level.leveled(), 5, mixed, keys).spec, kKeys).value();
    (drawn == richer ? draw_richer : draw_leaner) = keys;
  }
  ASSERT_FALSE(draw_richer.empty());
  ASSERT_FALSE(draw_leaner.empty());
  auto filter_bytes = [&](const std::vector<std::string>& keys) {
    const std::string filter = mixed_level.Build(keys);
    std::unique_ptr<FilterBitsReader> reader(
        mixed_level.options.filter_policy->GetFilterBitsReader(filter));
    for (const std::string& k : keys) EXPECT_TRUE(reader->MayMatch(k));
    return filter.size();
  };
  // Compacted there: the draw.
  EXPECT_EQ(filter_bytes(draw_richer), richer);
  EXPECT_EQ(filter_bytes(draw_leaner), leaner);
  {
    const RewritingForBudgetScope rewrite(/*keeps_the_mix=*/false);
    EXPECT_TRUE(RewriteKeepsTheMix() == false && RewritingForBudget());
    EXPECT_EQ(filter_bytes(draw_richer), leaner);
    EXPECT_EQ(filter_bytes(draw_leaner), leaner);
  }
  {
    const RewritingForBudgetScope rewrite(/*keeps_the_mix=*/true);
    EXPECT_EQ(filter_bytes(draw_richer), richer);
    EXPECT_EQ(filter_bytes(draw_leaner), leaner);
  }
  EXPECT_FALSE(RewritingForBudget());
  EXPECT_FALSE(RewriteKeepsTheMix());
}

// Every kind has a fixed minimum size (a 64-byte block, two buckets, a few segments), so for a
// file of a handful of keys every filter costs more bits per key than the budget. Such a file still
// gets its level's filter: a few bytes, not a data block read for every lookup.
TEST(LeveledPolicy, TinyFilesKeepTheirLevelsFilter) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}");
  ASSERT_NE(options.filter_policy, nullptr);
  for (const int level : {-1, 0, 4}) {
    SCOPED_TRACE(level);
    std::unique_ptr<FilterBitsBuilder> builder = BuilderAtLevel(options, level);
    ASSERT_NE(builder, nullptr);
    for (const int keys : {1, 3}) {
      for (int i = 0; i < keys; ++i) builder->AddKey(Key(i));
      std::unique_ptr<const char[]> buf;
      const Slice filter = builder->Finish(&buf);
      std::unique_ptr<FilterBitsReader> reader(options.filter_policy->GetFilterBitsReader(filter));
      for (int i = 0; i < keys; ++i) EXPECT_TRUE(reader->MayMatch(Key(i)));
      int false_positives = 0;
      for (int i = 0; i < 10000; ++i) false_positives += reader->MayMatch(Key(1'000'000 + i));
      // The least of these filters (level 4's) is an 8-bit fuse filter: 0.39%.
      EXPECT_LT(false_positives, 100) << keys << " keys";
    }
  }
}

// A partitioned filter's partitions are filters of their own, built by one builder; the file's
// last holds what is left of its keys, as few as one. Priced at those few keys, the fixed bytes
// of a filter (a trailer; at least 64 slots for a Ribbon table) would buy the level's budget a
// rate many times the level's (here the allocation for 50-key sets on the last level). A partition
// smaller than the file's fullest takes the fullest one's filter instead, so the lookups of the end
// of its key range (the newest keys of an ordered tree) pay the level's rate.
TEST(LeveledPolicy, AFilesSmallerPartitionsKeepItsFullestPartitionsRate) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}");
  ASSERT_NE(options.filter_policy, nullptr);
  const auto& leveled = dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  constexpr int kLevel = 4, kFullKeys = 3300, kProbes = 20000;
  // The worse of the level's two filters for full partitions.
  const LevelFilter full = leveled.Allocation(5, kFullKeys).value()[kLevel];
  ASSERT_TRUE(full.base.has_filter);
  const double full_rate = full.base.fp_rate;
  ASSERT_GT(leveled.Allocation(5, 50).value()[kLevel].ExpectedFpRate(), 4 * full_rate)
      << "priced at 50 keys, the last level's filters would not be leaner: the test shows nothing";
  for (const int tail_keys : {50, 100, 300, 1000}) {
    SCOPED_TRACE(tail_keys);
    std::unique_ptr<FilterBitsBuilder> builder = BuilderAtLevel(options, kLevel);
    ASSERT_NE(builder, nullptr);
    std::unique_ptr<const char[]> full_buf, tail_buf;
    for (int i = 0; i < kFullKeys; ++i) builder->AddKey(Key(i));
    builder->Finish(&full_buf);
    for (int i = kFullKeys; i < kFullKeys + tail_keys; ++i) builder->AddKey(Key(i));
    const Slice tail = builder->Finish(&tail_buf);
    // One of the full partitions' filters, at the tail's keys.
    const uint64_t base_bytes = FilterBytes(full.base.spec, tail_keys).value();
    EXPECT_TRUE(
        tail.size() == base_bytes ||
        (full.upper_fraction > 0 && tail.size() == FilterBytes(full.upper.spec, tail_keys).value()))
        << tail.size() << " bytes, the base filter " << base_bytes;
    std::unique_ptr<FilterBitsReader> reader(options.filter_policy->GetFilterBitsReader(tail));
    for (int i = kFullKeys; i < kFullKeys + tail_keys; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
    int false_positives = 0;
    for (int i = 0; i < kProbes; ++i) false_positives += reader->MayMatch(Key(1'000'000 + i));
    EXPECT_LE(false_positives,
              kProbes * full_rate + testing::BinomialTolerance(kProbes, full_rate));
  }
}

}  // namespace
}  // namespace sstfilter
