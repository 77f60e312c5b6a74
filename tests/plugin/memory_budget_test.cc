// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled's memory_budget (plugin/memory_budget.h): the option as RocksDB parses,
// writes and compares it, and real databases whose filters stay within it as they grow tenfold,
// with random and ordered keys, in one column family or two sharing the policy.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "plugin/budget_rewrites.h"
#include "plugin/memory_budget.h"
#include "sstfilter/inspect.h"
#include "sstfilter/sstfilter.h"

#include "tests/plugin/db_test_fixture.h"

namespace sstfilter::db_tests {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;

TEST(MemoryBudget, ParsesBytesWithRocksDbsSuffixesAndSharesOfTheCache) {
  struct Case {
    const char* text;
    uint64_t bytes;
    double share;
  };
  for (const Case& c :
       {Case{"2G", 2ull << 30, 0}, Case{"512M", 512ull << 20, 0}, Case{"1.5k", 1536, 0},
        Case{"1048576", 1048576, 0}, Case{"3T", 3ull << 40, 0}, Case{"25%", 0, 0.25},
        Case{"100%", 0, 1}, Case{"0.5%", 0, 0.005}, Case{"", 0, 0}}) {
    SCOPED_TRACE(c.text);
    const Result<MemoryBudget> budget = MemoryBudget::Parse(c.text);
    ASSERT_TRUE(budget.ok()) << budget.error();
    EXPECT_EQ(budget.value().bytes, c.bytes);
    EXPECT_EQ(budget.value().cache_share, c.share);
    EXPECT_EQ(budget.value().Given(), c.bytes > 0 || c.share > 0);
    // What OPTIONS files hold reads back to the same budget.
    const Result<MemoryBudget> again = MemoryBudget::Parse(budget.value().ToString());
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_TRUE(again.value() == budget.value());
  }
  // Whole bytes exactly, beyond a double's 53 bits; a share written as typed.
  EXPECT_EQ(MemoryBudget::Parse("9007199254740993").value().bytes, 9007199254740993ull);
  EXPECT_EQ(MemoryBudget::Parse("7.287%").value().ToString(), "7.287%");
  EXPECT_EQ(MemoryBudget::Parse("2G").value().ToString(), "2147483648");
  // strtod would take whitespace, signs, hexadecimal, exponents and the locale's decimal point.
  for (const char* bad :
       {"0",    "-1G",  "2X", "1GB", "abc", " 1G",      "\t1G", "+1G", "0x10M", "1e3",
        "1,5G", "150%", "0%", "nan", "inf", "9999999T", "%",    "G",   "1.9",   "."}) {
    SCOPED_TRACE(bad);
    const Result<MemoryBudget> budget = MemoryBudget::Parse(bad);
    ASSERT_FALSE(budget.ok());
    EXPECT_NE(budget.error().find("memory_budget"), std::string::npos) << budget.error();
    EXPECT_NE(budget.error().find(bad), std::string::npos) << budget.error();
  }
}

TEST(MemoryBudget, ShareOfTheBlockCacheNeedsOne) {
  BlockBasedTableOptions table;
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(8 << 20);
  EXPECT_EQ(MemoryBudget::Parse("25%").value().BytesFor(table).value(), 2u << 20);
  EXPECT_EQ(MemoryBudget::Parse("1M").value().BytesFor(table).value(), 1u << 20);
  table.no_block_cache = true;
  table.block_cache = nullptr;
  const Result<uint64_t> none = MemoryBudget::Parse("25%").value().BytesFor(table);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no_block_cache"), std::string::npos) << none.error();
  EXPECT_EQ(MemoryBudget::Parse("1M").value().BytesFor(table).value(), 1u << 20);
}

TEST(MemoryBudget, BitsPerKeyWithinTheBudgetAndTheCeiling) {
  EXPECT_EQ(BitsPerKeyWithin(1000, 1000, 10), 8);      // 8,000 bits over 1,000 keys
  EXPECT_EQ(BitsPerKeyWithin(1 << 20, 1000, 10), 10);  // the ceiling
  EXPECT_EQ(BitsPerKeyWithin(1000, 0, 10), 10);        // no keys: the ceiling
  EXPECT_EQ(BitsPerKeyWithin(1, 1e12, 10), kMinBitsPerKey);
  EXPECT_EQ(BitsPerKeyWithin(1000, 3000, 10), 2.625);  // 2.667, down to a sixteenth
}

// Level 0 counts at its fullest lately where the tree's flushes append (its files move down whole
// and keep their filters), and at its keys now plus half its fullest's excess where they overlap
// (compactions merge them into the level below): what SumAccounts gives the budget to divide.
TEST(MemoryBudget, LevelZeroCountsAtItsFullestOnlyWhereFlushesAppend) {
  TreeHistory history;
  const auto alive = std::make_shared<int>(0);
  const TreeId merged = LoggerTree(alive.get(), "merged"), moved = LoggerTree(alive.get(), "moved");
  TreeAccounts accounts;
  accounts.levels.resize(2);
  accounts.levels[0].keys = 10'000;  // one flush now
  accounts.levels[0].filter_bytes = 12'000;
  accounts.level0_peak.keys = 50'000;  // five, lately
  accounts.levels[1].keys = 100'000;
  accounts.levels[1].filter_bytes = 120'000;
  Ledger::Global().Publish(merged, alive, accounts);
  Ledger::Global().Publish(moved, alive, accounts);
  EXPECT_TRUE(history.FlushesAppend(merged));  // none recorded: as if they appended
  history.Record(merged, history.NewFile(), testing::RangeOf("a", "m"), /*flushed=*/true);
  EXPECT_TRUE(history.FlushesAppend(merged));  // one flush: nothing to overlap
  history.Record(merged, history.NewFile(), testing::RangeOf("b", "z"), true);
  EXPECT_FALSE(history.FlushesAppend(merged));
  // A flush's file with partitioned filters is recorded as each partition finishes: the same
  // file, its range widening, overlaps only itself.
  history.Record(moved, history.NewFile(), testing::RangeOf("a", "b"), true);
  const uint64_t partitioned = history.NewFile();
  history.Record(moved, partitioned, testing::RangeOf("c", "d"), true);
  history.Record(moved, partitioned, testing::RangeOf("c", "e"), true);
  EXPECT_TRUE(history.FlushesAppend(moved));
  // A compaction's output into level 0 covers its inputs' keys: it overlaps them, and the flushes
  // still append.
  history.Record(moved, history.NewFile(), testing::RangeOf("a", "e"), /*flushed=*/false);
  EXPECT_TRUE(history.FlushesAppend(moved));

  EXPECT_EQ(SumAccounts({merged}, &history).keys, 10'000 + 20'000 + 100'000);
  EXPECT_EQ(SumAccounts({moved}, &history).keys, 50'000 + 100'000);
  EXPECT_EQ(SumAccounts({merged}, nullptr).keys, 50'000 + 100'000);
  // A tree without accounts (never published, or a closed session's) adds nothing, and is not
  // among the trees whose rewrites the policy sets.
  const TreeId unpublished = LoggerTree(alive.get(), "unpublished");
  const BudgetedTrees both = SumAccounts({merged, unpublished, moved}, &history);
  EXPECT_EQ(both.trees, (std::vector<TreeId>{merged, moved}));
  EXPECT_EQ(both.keys, 130'000 + 150'000);
  EXPECT_EQ(both.filter_bytes, 2u * 132'000);
  // A newest flush that overlaps an earlier file: the tree's keys no longer append.
  history.Record(moved, history.NewFile(), testing::RangeOf("f", "z"), true);
  EXPECT_TRUE(history.FlushesAppend(moved));
  history.Record(moved, history.NewFile(), testing::RangeOf("y", "z"), true);
  EXPECT_FALSE(history.FlushesAppend(moved));
  EXPECT_EQ(SumAccounts({moved}, &history).keys, 130'000);
}

// A running compaction's input files count where their keys are going (pending_keys), and their
// filters, live until it completes, in the budget's bytes: a flush meanwhile finds only what is
// left beside them.
TEST(MemoryBudget, ARunningCompactionsInputsStillSpendTheBudget) {
  const auto alive = std::make_shared<int>(0);
  const TreeId tree = LoggerTree(alive.get(), "compacting");
  TreeAccounts accounts;
  accounts.levels.resize(2);
  accounts.levels[1].keys = 100'000;
  accounts.levels[1].filter_bytes = 120'000;
  accounts.levels[1].pending_keys = 10'000;  // level 0's one file, being merged into level 1
  accounts.levels[1].pending_filter_bytes = 12'000;
  Ledger::Global().Publish(tree, alive, accounts);
  const BudgetedTrees sum = SumAccounts({tree}, nullptr);
  EXPECT_EQ(sum.keys, 110'000);
  EXPECT_EQ(sum.filter_bytes, 132'000u);
}

// Under a budget, no level gets more than BudgetCeiling: the levels Monkey's allocation puts above
// it (level 0 and the small base level of a random tree of 10M keys under 1 MiB, its LOG's levels
// as level 0 filled) are held at the filter of a tree of one level at the ceiling, and the others
// share what that leaves, so the tree still spends the budget. A ceiling no level reaches changes
// nothing, and a tree not under a budget gets Monkey's allocation whatever its ceiling would be.
TEST(MemoryBudget, NoLevelGetsMoreThanTheCeilingAndTheBudgetIsStillSpent) {
  constexpr double kBits = 1.125;
  const std::vector<double> shares = {578'524, 578'524, 575'861, 5'787'903};
  const std::vector<double> probes = {4, 1, 0.67, 1};
  double total = 0;
  for (const double k : shares) total += k;
  auto spent = [&](const std::vector<LevelFilter>& a) {
    double bits = 0;
    for (size_t i = 0; i < a.size(); ++i) bits += shares[i] / total * a[i].ExpectedBitsPerKey();
    return bits;
  };
  const double ceiling = BudgetCeiling(kBits, shares[0] / total);
  EXPECT_NEAR(ceiling, kBits * (1 + kBudgetSwing * total / shares[0]), 1e-9);
  const std::vector<LevelFilter> free =
      AllocateShares(shares, kBits, FilterCostModel::kSstfilter, 0, probes).value();
  ASSERT_GT(free[0].ExpectedBitsPerKey(), ceiling);  // Monkey's level 0: above the ceiling
  ASSERT_GT(free[1].ExpectedBitsPerKey(), ceiling);  // and the base level below it
  const std::vector<LevelFilter> held =
      AllocateWithinCeiling(shares, kBits, 0, probes, ceiling).value();
  const LevelFilter one_level =
      AllocateShares({1.0}, ceiling, FilterCostModel::kSstfilter, 0, {1.0}).value()[0];
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_LE(held[i].ExpectedBitsPerKey(), ceiling + 1e-9) << "level " << i;
  }
  EXPECT_NEAR(held[0].ExpectedBitsPerKey(), one_level.ExpectedBitsPerKey(), 1e-9);
  EXPECT_NEAR(held[1].ExpectedBitsPerKey(), one_level.ExpectedBitsPerKey(), 1e-9);
  // The levels below share what level 0 and the base level leave: more than Monkey gave them.
  EXPECT_GT(held[3].ExpectedBitsPerKey(), free[3].ExpectedBitsPerKey());
  EXPECT_NEAR(spent(held), kBits, 0.01 * kBits);
  EXPECT_NEAR(spent(free), kBits, 0.01 * kBits);
  printf("[ figures  ] ceiling %.3f bits/key: levels", ceiling);
  for (size_t i = 0; i < held.size(); ++i) {
    printf(" %.3f (Monkey's %.3f)", held[i].ExpectedBitsPerKey(), free[i].ExpectedBitsPerKey());
  }
  printf("\n");
  // A ceiling above every level's bits: Monkey's allocation.
  const std::vector<LevelFilter> above =
      AllocateWithinCeiling(shares, kBits, 0, probes, 2 * free[0].ExpectedBitsPerKey()).value();
  for (size_t i = 0; i < above.size(); ++i) {
    EXPECT_EQ(above[i].ExpectedBitsPerKey(), free[i].ExpectedBitsPerKey()) << "level " << i;
  }
  // TreeShape::Allocate applies it under a memory budget only.
  TreeShape shape;
  EXPECT_EQ(shape.Allocate(shares, probes, kBits, 0).value()[0].ExpectedBitsPerKey(),
            free[0].ExpectedBitsPerKey());
  shape.under_memory_budget = true;
  EXPECT_EQ(shape.Allocate(shares, probes, kBits, 0).value()[0].ExpectedBitsPerKey(),
            held[0].ExpectedBitsPerKey());
}

// A tree the user's num_levels model allocates: the listener plans its rewrites at the model's
// filters where the policy places each file (LeveledPolicy::PlaceInModel): level 0 at the model's
// level 0, the deepest level holding keys at its last, the others at their number within the
// model. A tree of 7 levels, populated on 0, 5 and 6 (dynamic level bytes), under a model of 3;
// a tree populated on 0 to 2 under a model of 5. Planned at the accounts' shares instead
// (SteadyAllocation, within the ceiling), the model's middle level got more than its share, and
// its files came out of their rewrites no smaller
// (MemoryBudgetDb.AModelledTreeIsRewrittenToTheFiltersItsModelGives).
TEST(MemoryBudget, AModelledTreesRewritesArePlannedAtTheModelsFilters) {
  auto mean_bits = [](const std::vector<LevelFilter>& a) {
    std::vector<double> bits;
    for (const LevelFilter& level : a) bits.push_back(level.ExpectedBitsPerKey());
    return bits;
  };
  TreeAccounts deep;
  deep.levels.resize(7);
  deep.levels[0].keys = 20'000;
  deep.levels[5].keys = 60'000;
  deep.levels[6].keys = 600'000;
  const std::vector<double> model3 = mean_bits(AllocateLevels(3, 10, 6).value());
  EXPECT_EQ(mean_bits(ModelAllocation(deep, 3, 10, 6).value()),
            (std::vector<double>{model3[0], model3[1], model3[2], model3[2], model3[2], model3[2],
                                 model3[2]}));
  TreeAccounts shallow;
  shallow.levels.resize(5);
  shallow.levels[0].keys = 20'000;
  shallow.levels[1].keys = 60'000;
  shallow.levels[2].pending_keys = 600'000;  // a running compaction's outputs hold keys too
  const std::vector<double> model5 = mean_bits(AllocateLevels(5, 10, 6).value());
  EXPECT_EQ(mean_bits(ModelAllocation(shallow, 5, 10, 6).value()),
            (std::vector<double>{model5[0], model5[1], model5[4], model5[3], model5[4]}));
  // In a tree of levels 0 to 2, as the model's, the model gives level 1 more than the accounts'
  // shares within the ceiling do: the files planned at those came out no smaller.
  TreeAccounts three;
  three.levels = {deep.levels[0], deep.levels[5], deep.levels[6]};
  EXPECT_EQ(mean_bits(ModelAllocation(three, 3, 10, 6).value()), model3);
  const std::vector<double> steady =
      SteadyBitsPerKey(three, 6, /*under_memory_budget=*/true).value();
  EXPECT_GT(model3[1], kRewriteAbove * steady[1]);
  printf(
      "[ figures  ] 3-level model at 6 bits/key: %.3f / %.3f / %.3f; the accounts' shares: "
      "%.3f / %.3f / %.3f\n",
      model3[0], model3[1], model3[2], steady[0], steady[1], steady[2]);
}

// A flush that finds the budget spent gets the floor, half the bits per key the budget buys, for
// each of its filters whatever keys it holds: the best single filter within the floor. The
// allocation at the floor mixes two filters (at 20,000 keys, Ribbon filters of about 1 and 2 bits
// per key), each key set drawing one, which keeps the floor only in expectation: three flushes in
// a row can all draw the richer one (docs/history.md). So the floor is a single filter's.
TEST(MemoryBudget, AFlushThatFindsTheBudgetSpentKeepsItsFloorWhateverItsKeys) {
  constexpr uint64_t kTreeKeys = 3'000'000, kFlushKeys = 20'000, kKeySets = 20;
  constexpr uint64_t kBytes = kTreeKeys * 262 / 800;  // 2.62 bits per key, all spent
  BlockBasedTableOptions table;
  table.filter_policy =
      PolicyFrom("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kBytes) + "}");
  TreeAccounts accounts;
  accounts.levels.resize(7);
  accounts.levels[6].keys = kTreeKeys;
  accounts.levels[6].filter_bytes = kBytes;
  accounts.levels[6].probes = 1;
  const double floor =
      TreeHistory::kSteerLowest *
      BitsPerKeyWithin(kBytes, kTreeKeys, LeveledPolicy::kBitsPerKeyUnderMemoryBudget);
  const Result<std::vector<LevelFilter>> at_floor =
      AllocateLevels(1, 10, floor, FilterCostModel::kSstfilter, kFlushKeys);
  ASSERT_TRUE(at_floor.ok()) << at_floor.error();
  ASSERT_GT(at_floor.value()[0].upper_fraction, 0) << "the floor's allocation no longer mixes";
  ASSERT_GT(at_floor.value()[0].upper.bits_per_key, floor + 0.5);
  testing::SilentLogger logger;
  const auto alive = std::make_shared<int>();
  double most = 0;
  for (uint64_t set = 0; set < kKeySets; ++set) {
    const std::unique_ptr<FilterBitsBuilder> builder =
        testing::BuilderWithAccounts(table, accounts, &logger, alive, "spent", /*level=*/0,
                                     ROCKSDB_NAMESPACE::TableFileCreationReason::kFlush);
    for (uint64_t i = 0; i < kFlushKeys; ++i) {
      builder->AddKey(testing::NumberedKey(set * kFlushKeys + i, /*digits=*/10));
    }
    std::unique_ptr<const char[]> buf;
    const double bits = 8.0 * static_cast<double>(builder->Finish(&buf).size()) / kFlushKeys;
    most = std::max(most, bits);
    // The filter's trailer (docs/format.md, 32 bytes) comes on top of its bits per key.
    EXPECT_LE(bits, floor + 8.0 * 32 / kFlushKeys) << "key set " << set;
    EXPECT_GT(bits, 0.5 * floor) << "key set " << set;  // a real filter, not "may match" for all
  }
  printf("[ figures  ] %llu flushes at a floor of %.3f bits/key: at most %.3f\n",
         static_cast<unsigned long long>(kKeySets), floor, most);
}

// The option through RocksDB's machinery: created from a string, written and compared; alone it
// stands for a ceiling of kBitsPerKeyUnderMemoryBudget bits per key; bad values are errors that
// name it.
TEST(MemoryBudget, LeveledTakesItByStringAndWritesItToOptions) {
  const auto policy = PolicyFrom("{id=sstfilter.Leveled;memory_budget=2G}");
  const auto* leveled = dynamic_cast<const LeveledPolicy*>(policy.get());
  ASSERT_NE(leveled, nullptr);
  EXPECT_EQ(leveled->GetMemoryBudget().bytes, 2ull << 30);
  EXPECT_EQ(leveled->BudgetBitsPerKey(), LeveledPolicy::kBitsPerKeyUnderMemoryBudget);
  const auto both = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=7;memory_budget=25%}");
  const auto* both_leveled = dynamic_cast<const LeveledPolicy*>(both.get());
  ASSERT_NE(both_leveled, nullptr);
  EXPECT_EQ(both_leveled->GetMemoryBudget().cache_share, 0.25);
  EXPECT_EQ(both_leveled->BudgetBitsPerKey(), 7);

  std::string written;
  ASSERT_TRUE(policy->GetOptionString(StrictConfigOptions(), &written).ok());
  EXPECT_NE(written.find("memory_budget=2147483648"), std::string::npos) << written;
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> read;
  ASSERT_TRUE(ROCKSDB_NAMESPACE::FilterPolicy::CreateFromString(
                  StrictConfigOptions(), "{id=sstfilter.Leveled;" + written + "}", &read)
                  .ok());
  std::string mismatch;
  EXPECT_TRUE(policy->AreEquivalent(StrictConfigOptions(), read.get(), &mismatch)) << mismatch;
  EXPECT_FALSE(policy->AreEquivalent(StrictConfigOptions(), both.get(), &mismatch));

  for (const char* bad :
       {"{id=sstfilter.Leveled;memory_budget=2X}", "{id=sstfilter.Leveled;memory_budget=0}",
        "{id=sstfilter.Leveled;memory_budget=200%}",
        "{id=sstfilter.Leveled;memory_budget=1G;fp_rate=0.01}"}) {
    SCOPED_TRACE(bad);
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> p;
    const Status s =
        ROCKSDB_NAMESPACE::FilterPolicy::CreateFromString(StrictConfigOptions(), bad, &p);
    ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("sstfilter.Leveled"), std::string::npos) << s.ToString();
  }
}

// Each event rewrites at most kMaxRewriteBytesPerEvent of files; a universal tree's, four times
// that while the live filters of the trees under the budget hold more than kBudgetLimit times it
// (RewriteBytesPerEvent): the cap a user should see, which a universal tree's last run, written
// when the budget bought more, passed for good at the usual pace. At the cap itself, and in a
// leveled tree, the usual pace.
TEST(MemoryBudget, AUniversalTreesRewritesCatchUpFasterWhileItsFiltersHoldMoreThanTheCap) {
  constexpr uint64_t kBudget = 1'000'000;
  EXPECT_EQ(RewriteBytesPerEvent(true, 0, kBudget), kMaxRewriteBytesPerEvent);
  EXPECT_EQ(RewriteBytesPerEvent(true, kBudget, kBudget), kMaxRewriteBytesPerEvent);
  EXPECT_EQ(RewriteBytesPerEvent(true, 1'050'000, kBudget), kMaxRewriteBytesPerEvent);
  EXPECT_EQ(RewriteBytesPerEvent(true, 1'050'001, kBudget), kMaxCatchUpBytesPerEvent);
  EXPECT_EQ(RewriteBytesPerEvent(true, 3 * kBudget, kBudget), kMaxCatchUpBytesPerEvent);
  EXPECT_EQ(RewriteBytesPerEvent(false, 3 * kBudget, kBudget), kMaxRewriteBytesPerEvent);
  EXPECT_EQ(kMaxCatchUpBytesPerEvent, 4 * kMaxRewriteBytesPerEvent);
}

// The plan: no rewrite while the files spend within kRewriteAbove of their levels' shares; then
// the files spending at least kRewriteRatio times their level's share (kRewriteAbove times, beyond
// kBudgetLimit), the greatest excess first, until the files, the chosen at what a rewrite gives
// them, spend within kRewriteAbove of the shares; never a file of level 0. The residual excess is
// what the files spend beyond their shares, the chosen at what a rewrite gives them, per key; and
// so those that max_bytes leaves to the plans that follow, where those take them.
TEST(MemoryBudget, PlansTheRewritesOfTheFilesSpendingTheMostBeyondTheirLevelsShare) {
  // Levels of one filter each: a rewrite gives a file its level's share.
  const std::vector<LevelShare> level_bits = {{12, 12, 12}, {8, 8, 8}, {5, 5, 5}};
  // Bits per key: 10 (2x its level's share), 6 (1.2x), 16 (2x), and level 0's 40.
  const std::vector<FileSpend> over = {{"/a.sst", 2, 1250, 1000, 100},
                                       {"/b.sst", 2, 750, 1000, 100},
                                       {"/c.sst", 1, 4000, 2000, 200},
                                       {"/d.sst", 0, 5000, 1000, 100}};
  // Excess in bits: a 5,000, b 1,000, c 16,000; the tree's 22,000 beyond its 26,000, beyond
  // kBudgetLimit: b too, though under kRewriteRatio.
  RewritePlan plan = PlanRewrites(over, level_bits, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0, 1}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 0);
  // A file whose rewrite would come out as it is (UnshrunkFiles) is never chosen; its excess
  // stays in the residual (c's 16,000 bits, over the 4,000 keys of a, b and c).
  std::vector<FileSpend> c_unshrunk = over;
  c_unshrunk[2].rewritable = false;
  plan = PlanRewrites(c_unshrunk, level_bits, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 16000.0 / 4000);
  // A file a compaction is rewriting is neither chosen nor counted: c's 16,000 bits beyond its
  // share leave the plan, and a and b then spend 7,000 bits beyond their 10,000, beyond
  // kBudgetLimit: both are chosen.
  std::vector<FileSpend> c_compacted = over;
  c_compacted[2].being_compacted = true;
  plan = PlanRewrites(c_compacted, level_bits, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 0);
  // At most max_bytes of files, but at least one: c alone, 200 bytes beyond 100.
  plan = PlanRewrites(over, level_bits, 100, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 6000.0 / 4000);  // a's and b's, over 4,000 keys
  plan = PlanRewrites(over, level_bits, 300, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 1000.0 / 4000);  // b's
  // Where the events that follow take the rest, the residual counts a and b rewritten too.
  plan = PlanRewrites(over, level_bits, 100, true);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 0);
  plan = PlanRewrites(over, level_bits, 300, true);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 0);
  // Beyond kRewriteAbove, within kBudgetLimit (146,800 bits for 143,000): the files at
  // kRewriteRatio or more only (a; not f, at 1.1x).
  const std::vector<FileSpend> slightly = {{"/a.sst", 2, 1250, 1000},
                                           {"/e.sst", 2, 6000, 10000},
                                           {"/c.sst", 1, 10000, 10000},
                                           {"/f.sst", 1, 1100, 1000}};
  plan = PlanRewrites(slightly, level_bits, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{0}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, (-2000.0 + 800) / 22000);  // e's and f's
  // Within kRewriteAbove of the shares (26,080 bits for 26,000): nothing, and the whole excess is
  // residual.
  const std::vector<FileSpend> within = {
      {"/a.sst", 2, 660, 1000}, {"/c.sst", 1, 2000, 2000}, {"/e.sst", 2, 600, 1000}};
  plan = PlanRewrites(within, level_bits, 1000, false);
  EXPECT_TRUE(plan.files.empty());
  EXPECT_DOUBLE_EQ(plan.residual_excess, 80.0 / 4000);
  // A level the shares do not cover, and files without keys, are never chosen.
  plan = PlanRewrites({{"/f.sst", 5, 9000, 1000, 100}, {"/g.sst", 1, 100, 0, 100}}, level_bits,
                      1000, false);
  EXPECT_TRUE(plan.files.empty());
  // Level 2 mixes no filter and a richer one, 5 bits/key on average: a rewrite there takes the
  // leaner, none, and saves a's 10,000 bits, not its 5,000 beyond the share. c and a then bring
  // the files within the shares (22,000 bits for 26,000), and b stays; a and c end below them.
  const std::vector<LevelShare> mixed = {{12, 12, 12}, {8, 8, 8}, {5, 0, 10}};
  plan = PlanRewrites(over, mixed, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, (22000.0 - 26000) / 4000);
  // A file another policy wrote keeps its level's mix if even the richer filter saves
  // kRewriteAbove (KeepsItsLevelsMix), and the plan counts it at the level's mean. Level 2 mixes
  // none and 8 bits per key: a (10 bits per key) then keeps the mix and saves 5,000 bits, not
  // 10,000; b (6) gets the leaner, none, and saves its 6,000. c, a and b then bring the files
  // within the shares (21,000 bits for 26,000).
  const std::vector<LevelShare> mixed_of_8 = {{12, 12, 12}, {8, 8, 8}, {5, 0, 8}};
  plan = PlanRewrites(over, mixed_of_8, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, (22000.0 - 26000) / 4000);
  std::vector<FileSpend> switched = over;
  for (FileSpend& f : switched) f.other_policy = true;
  plan = PlanRewrites(switched, mixed_of_8, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{2, 0, 1}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, (21000.0 - 26000) / 4000);
  // A file a rewrite would not make smaller (h: 6 bits/key, 1.2x its share, where a rewrite gives
  // 7) is never chosen, though the files spend beyond kBudgetLimit times their shares.
  plan = PlanRewrites({{"/h.sst", 2, 750, 1000, 100}, {"/c.sst", 1, 4000, 2000, 200}},
                      {{12, 12, 12}, {8, 8, 8}, {5, 7, 7}}, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{1}));
  // A level whose share is no filter (under a budget of about 1 bit per key, for a while) is
  // left as it is: i (2,000 bits) is not chosen, though the files still spend beyond the shares
  // once c is; its bits stay in the residual, over the 3,000 keys.
  plan = PlanRewrites({{"/i.sst", 2, 250, 1000, 100}, {"/c.sst", 1, 4000, 2000, 200}},
                      {{12, 12, 12}, {8, 8, 8}, {0, 0, 0}}, 1000, false);
  EXPECT_EQ(plan.files, (std::vector<size_t>{1}));
  EXPECT_DOUBLE_EQ(plan.residual_excess, 2000.0 / 3000);
}

// Two compactions complete at once: each forgets the residual excess as it begins its plan, and
// the plan made from the older accounts, finishing last, sets nothing.
TEST(MemoryBudget, APlanMadeBeforeAnotherEventForgotTheResidualSetsNothing) {
  const auto alive = std::make_shared<int>(0);
  const TreeId tree = LoggerTree(alive.get(), "residual");
  BudgetTargets::Target target;
  target.bits_per_key = 6;
  BudgetTargets::Global().SetBudget(tree, target);
  const uint64_t older = BudgetTargets::Global().ForgetResidualExcess(tree);
  const uint64_t newer = BudgetTargets::Global().ForgetResidualExcess(tree);
  BudgetTargets::Global().SetResidualExcess(tree, 0.5, older);
  ASSERT_TRUE(BudgetTargets::Global().Get(tree, &target));
  EXPECT_TRUE(std::isnan(target.residual_excess));
  BudgetTargets::Global().SetResidualExcess(tree, 0.25, newer);
  ASSERT_TRUE(BudgetTargets::Global().Get(tree, &target));
  EXPECT_EQ(target.residual_excess, 0.25);
  EXPECT_EQ(target.bits_per_key, 6);
}

// An ordered tree (its flushes append) is not rewritten while the trees under its budget hold at
// most kRewriteAbove times its bytes; a tree whose flushes overlap is, by its shares alone; and so
// is any once its policy is gone.
TEST(MemoryBudget, AnOrderedTreeIsRewrittenOnlyBeyondItsBudgetsBytes) {
  const auto alive = std::make_shared<int>(0);
  const TreeId ordered = LoggerTree(alive.get(), "gate-ordered");
  const TreeId random = LoggerTree(alive.get(), "gate-random");
  TreeAccounts accounts;
  accounts.levels.resize(2);
  accounts.levels[1].keys = 100'000;
  accounts.levels[1].filter_bytes = 101'500;
  Ledger::Global().Publish(ordered, alive, accounts);
  Ledger::Global().Publish(random, alive, accounts);
  // One policy's record per tree: a budget spans the trees of its policy.
  auto ordered_history = std::make_shared<TreeHistory>();
  ordered_history->Record(ordered, ordered_history->NewFile(), testing::RangeOf("a", "b"), true);
  ordered_history->Record(ordered, ordered_history->NewFile(), testing::RangeOf("c", "d"), true);
  const auto random_history = std::make_shared<TreeHistory>();
  random_history->Record(random, random_history->NewFile(), testing::RangeOf("a", "m"), true);
  random_history->Record(random, random_history->NewFile(), testing::RangeOf("b", "z"), true);
  BudgetTargets::Target target;
  target.bits_per_key = 8;
  target.budget_bytes = 100'000;  // 101,500 bytes held: 1.015x
  target.history = ordered_history;
  EXPECT_TRUE(AppendsWithinItsBudget(ordered, target));
  target.budget_bytes = 99'000;  // 1.025x
  EXPECT_FALSE(AppendsWithinItsBudget(ordered, target));
  target.budget_bytes = 100'000;
  target.history = random_history;
  EXPECT_FALSE(AppendsWithinItsBudget(random, target));
  target.history = ordered_history;
  ordered_history.reset();  // the policy is gone
  EXPECT_FALSE(AppendsWithinItsBudget(ordered, target));
}

// A rewrite that came out no smaller is not repeated while its level's share stays above
// 1/kRewriteAbove of what it was; files no longer live are forgotten.
TEST(MemoryBudget, ARewriteThatCameOutNoSmallerIsNotRepeatedUntilTheShareFalls) {
  const auto alive = std::make_shared<int>(0);
  const TreeId tree = LoggerTree(alive.get(), "unshrunk");
  UnshrunkFiles::Global().Add(tree, {"/db/000010.sst", "/db/000011.sst"}, 9.2);
  auto rewritable = [&](double share, std::vector<std::string> names,
                        const std::string& compacted = "") {
    std::vector<FileSpend> files;
    for (const std::string& name : names) {
      files.push_back({name, 2, 1000, 1000, 100});
      files.back().being_compacted = name == compacted;
    }
    UnshrunkFiles::Global().Mark(tree, {{0, 0}, {0, 0}, {share, share}}, &files);
    std::vector<bool> flags;
    for (const FileSpend& f : files) flags.push_back(f.rewritable);
    return flags;
  };
  EXPECT_EQ(rewritable(9.2, {"/000010.sst", "/000011.sst", "/000012.sst"}),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(rewritable(9.2 / kRewriteAbove + 0.001, {"/000010.sst", "/000011.sst"}),
            (std::vector<bool>{false, false}));
  // 000011 held by a compaction is still live: remembered.
  EXPECT_EQ(rewritable(9.2, {"/000010.sst", "/000011.sst"}, "/000011.sst"),
            (std::vector<bool>{false, false}));
  // 000011 no longer live: forgotten.
  EXPECT_EQ(rewritable(9.2, {"/000010.sst"}), (std::vector<bool>{false}));
  EXPECT_EQ(rewritable(9.2, {"/000011.sst"}), (std::vector<bool>{true}));
  // The share fell: 000010 may be rewritten again, and is forgotten.
  EXPECT_EQ(rewritable(9.0, {"/000010.sst"}), (std::vector<bool>{true}));
  EXPECT_EQ(rewritable(9.2, {"/000010.sst"}), (std::vector<bool>{true}));
}

struct Growth {
  const char* name;
  bool ordered;
};

class MemoryBudgetDb : public DbTest, public ::testing::WithParamInterface<Growth> {
 protected:
  // A tree of small files whose budget binds from 180,000 keys (below, it would buy more than
  // the 10 bits per key of the policy's default bits_per_key, its ceiling): at kKeys it buys
  // kFinalBitsPerKey.
  static constexpr uint64_t kKeys = 300'000, kStages = 5;
  static constexpr double kFinalBitsPerKey = 6;
  static constexpr uint64_t kBudgetBytes = static_cast<uint64_t>(kKeys * kFinalBitsPerKey / 8);

  Options BudgetOptions(const std::string& filter_uri, const BlockBasedTableOptions& table = {}) {
    Options options = MakeOptions(filter_uri, table);
    ShapeSmallTree(/*level1_bytes=*/1 << 20, /*file_bytes=*/256 << 10, &options);
    options.info_log = logger_;
    EXPECT_TRUE(ROCKSDB_NAMESPACE::GetDBOptionsFromString(
                    StrictConfigOptions(), options, "listeners=sstfilter.LeveledBudget", &options)
                    .ok());
    EXPECT_EQ(options.listeners.size(), 1u);
    return options;
  }

  // The filter bytes of every live file of the column families.
  uint64_t FilterBytes(const std::vector<ColumnFamilyHandle*>& families) {
    uint64_t bytes = 0;
    for (ColumnFamilyHandle* cf : families) {
      ROCKSDB_NAMESPACE::TablePropertiesCollection props;
      EXPECT_TRUE(db_->GetPropertiesOfAllTables(cf, &props).ok());
      for (const auto& [file, p] : props) bytes += p->filter_size;
    }
    return bytes;
  }

  // Writes keys [first, first + count) to `cf`, shuffled unless the keys are ordered, and flushes.
  void WriteTo(ColumnFamilyHandle* cf, uint64_t first, uint64_t count, bool ordered) {
    WriteOptions w;
    w.disableWAL = true;
    for (const uint64_t i :
         Indexes(first, count, ordered ? std::nullopt : std::optional<uint64_t>(first + 1))) {
      const std::string k = PresentKey(i);
      ASSERT_TRUE(db_->Put(w, cf, k, ValueOf(k)).ok());
    }
    ASSERT_TRUE(db_->Flush({}, cf).ok());
  }

  // Opens the database with `options`, and creates in it the column family "other" with them.
  std::unique_ptr<ColumnFamilyHandle> OpenWithOther(const Options& options) {
    Open(options);
    ColumnFamilyHandle* other = nullptr;
    const Status s = db_->CreateColumnFamily(options, "other", &other);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::unique_ptr<ColumnFamilyHandle>(s.ok() ? other : nullptr);
  }

  // Every 97th key of [0, count) is in `cf`, with its value.
  void ExpectSampleIn(ColumnFamilyHandle* cf, uint64_t count) {
    PinnableSlice value;
    for (uint64_t i = 0; i < count; i += 97) {
      const std::string k = PresentKey(i);
      ASSERT_TRUE(db_->Get(ReadOptions(), cf, k, &value).ok()) << k;
      ASSERT_EQ(value.ToString(), ValueOf(k));
    }
  }

  // Grows the default column family from empty to kKeys in kStages stages of several flushes
  // each, as a stream of writes makes, ordered or shuffled; after each stage, once `settle`
  // returns, the live filters' bytes over the budget, by stage.
  template <typename Settle>
  std::vector<double> GrowInStages(bool ordered, Settle&& settle) {
    ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
    std::vector<double> ratio;
    for (uint64_t stage = 0; stage < kStages; ++stage) {
      const uint64_t first = stage * kKeys / kStages, last = (stage + 1) * kKeys / kStages;
      for (uint64_t batch = first; batch < last; batch += 20'000) {
        WriteTo(cf, batch, std::min<uint64_t>(20'000, last - batch), ordered);
      }
      settle();
      ratio.push_back(static_cast<double>(FilterBytes({cf})) / kBudgetBytes);
    }
    return ratio;
  }

  // The bounds of a tree grown by GrowInStages (FiltersStayWithinTheBudgetAsTheTreeGrows says
  // why): at most 1.10x the budget at every settled stage, 0.75x to 1.08x at the end, and at most
  // 1.15x as files were written (`peak`, LoggedFilterBytes' most over the budget).
  static void ExpectTheBudgetsBounds(const std::vector<double>& ratio, double peak) {
    for (uint64_t stage = 0; stage < kStages; ++stage) {
      EXPECT_LE(ratio[stage], 1.10) << "stage " << stage;
    }
    EXPECT_LE(ratio[kStages - 1], 1.08);
    EXPECT_GE(ratio[kStages - 1], 0.75);
    EXPECT_LE(peak, 1.15);
  }

  // Grows the tree as GrowInStages does, GetParam()'s keys, `settle` after each stage; then every
  // key is there and no absent one, the budget's bounds hold (ExpectTheBudgetsBounds), and the
  // listener rewrote files, each rewrite OK. Prints the figures, named by `tree`. Closes the
  // database.
  template <typename Settle>
  void GrowWithinTheBudget(const char* tree, Settle&& settle) {
    const std::vector<double> ratio = GrowInStages(GetParam().ordered, settle);
    ExpectAllPresent(0, kKeys);
    EXPECT_EQ(LookUpAbsent(20'000).true_positives, 0u);
    const std::vector<double> written = LoggedFilterBytes();
    ASSERT_FALSE(written.empty());
    const double peak = *std::max_element(written.begin(), written.end()) / kBudgetBytes;
    db_.reset();
    const size_t rewrites = logger_->LinesWith("memory_budget: rewriting").size();
    printf("[ figures  ] %s, %s keys: filter bytes over the budget", tree, GetParam().name);
    for (const double r : ratio) printf(" %.3f", r);
    printf(", at most %.3f as files were written; %zu files rewritten\n", peak, rewrites);
    ExpectTheBudgetsBounds(ratio, peak);
    EXPECT_GT(rewrites, 0u);
    EXPECT_EQ(logger_->LinesWith("): OK").size(), rewrites) << "a rewrite failed";
    // Every file is sstfilter.Leveled's: each rewrite takes the leaner of a mix
    // (KeepsItsLevelsMix).
    EXPECT_TRUE(logger_->LinesWith("another policy's file").empty());
  }

  // Opens the database under RocksDB's bloomfilter:10 and writes keys [0, kFlushes x kFlushKeys),
  // shuffled, compacted into levels 1 and 2 (a database whose filters spend more than the budgets
  // switched to below).
  void PrefillUnderRocksDbsFilter() {
    Options unbudgeted = BudgetOptions("bloomfilter:10");
    unbudgeted.max_bytes_for_level_base = 256 << 10;
    Open(unbudgeted);
    WriteTo(db_->DefaultColumnFamily(), 0, kFlushes * kFlushKeys, /*ordered=*/false);
    testing::WaitForCompactions(db_.get());
  }

  // Three flushes of kFlushKeys keys under memory_budget `budget_bytes` (kFlushesBudget: 6 bits per
  // key over their keys), and no compaction: keys [0, kFlushes x kFlushKeys) in turn, each flush a
  // range of its own (they append) or every kFlushes-th key from its own first (they overlap). Each
  // waits for the listener's accounts, which the next flush's budget counts. Then every key is
  // there and no absent one. `prefilled`: the same keys were written before under RocksDB's
  // bloomfilter:10 and compacted below level 0, as in a database switched to the budget from
  // filters that spend more. Prints the figures, named by `what`. The bits per key of each file the
  // flushes wrote, oldest first (empty on a failure), and *ratio, the filters' bytes over the
  // budget. `style` and `num_levels` (0: the fixture's): the tree's compaction style and levels.
  static constexpr uint64_t kFlushKeys = 20'000, kFlushes = 3;
  static constexpr uint64_t kFlushesBudget = kFlushes * kFlushKeys * 6 / 8;
  std::vector<double> ThreeFlushes(
      const char* what, bool overlapping, double* ratio, bool prefilled = false,
      uint64_t budget_bytes = kFlushesBudget,
      ROCKSDB_NAMESPACE::CompactionStyle style = ROCKSDB_NAMESPACE::kCompactionStyleLevel,
      int num_levels = 0) {
    Options options =
        BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(budget_bytes) + "}");
    options.compaction_style = style;
    if (num_levels > 0) options.num_levels = num_levels;
    options.disable_auto_compactions = true;
    options.write_buffer_size = 16 << 20;  // one file a flush
    const uint64_t before = prefilled ? kFlushes * kFlushKeys : 0;
    std::set<std::string> prefill_files;  // not the flushes': one may stay on level 0
    if (prefilled) {
      PrefillUnderRocksDbsFilter();
      for (const auto& [file, props] : Tables()) {
        prefill_files.insert(fs::path(file).filename().string());
      }
    }
    Open(options);
    WriteOptions w;
    w.disableWAL = true;
    for (uint64_t flush = 0; flush < kFlushes; ++flush) {
      for (uint64_t i = 0; i < kFlushKeys; ++i) {
        const std::string k =
            PresentKey(overlapping ? kFlushes * i + flush : flush * kFlushKeys + i);
        if (!db_->Put(w, k, ValueOf(k)).ok()) return {};
      }
      TreeAccounts accounts;
      if (!db_->Flush({}).ok() || !AccountsHolding(before + (flush + 1) * kFlushKeys, &accounts)) {
        return {};
      }
    }
    std::map<std::string, double> flushed;  // by file name: the oldest first
    for (const auto& [file, props] : Tables()) {
      const std::string name = fs::path(file).filename().string();
      if (prefill_files.count(name) > 0) continue;
      flushed[name] = 8.0 * static_cast<double>(props->filter_size) /
                      static_cast<double>(props->num_filter_entries);
    }
    std::vector<double> bits;
    for (const auto& [name, b] : flushed) bits.push_back(b);
    *ratio = static_cast<double>(FilterBytes({db_->DefaultColumnFamily()})) / budget_bytes;
    if (bits.size() == kFlushes) {
      printf("[ figures  ] %s under memory_budget %" PRIu64
             " bytes: %.2f, %.2f and %.2f bits/key, %.3fx the budget\n",
             what, budget_bytes, bits[0], bits[1], bits[2], *ratio);
    }
    ExpectAllPresent(0, kFlushes * kFlushKeys);
    EXPECT_EQ(LookUpAbsent(20'000).true_positives, 0u);
    return bits;
  }

  // The "their filters now N bytes" of each line the policy logs as it decides a file's bits.
  std::vector<double> LoggedFilterBytes() {
    std::vector<double> bytes;
    const std::string marker = "their filters now ";
    for (const std::string& line : logger_->LinesWith(marker)) {
      bytes.push_back(std::strtod(line.c_str() + line.find(marker) + marker.size(), nullptr));
    }
    return bytes;
  }

  const std::shared_ptr<testing::RecordingLogger> logger_ =
      std::make_shared<testing::RecordingLogger>();
};

// One column family grows fivefold from its first stage, in five stages, each flushed and left to
// settle. The budget binds from 180,000 keys; as the tree grows beyond, the bits per key it buys
// fall, and the files written earlier keep richer filters: the last level's until compactions
// reach their range, and with ordered keys for ever (moved down whole). The listener rewrites
// those spending the most (plugin/budget_rewrites.h); without them the tree ends well beyond the
// budget (runs: docs/history.md). As files are written, the filters go beyond the budget by the
// flushes the rewrites have not yet answered: a flush that finds the budget spent still gets half
// what it buys, and the rewrites that take the excess back run one file at a time on the compaction
// thread, and pause while writes wait; how far they fall behind the flushes is the machine's
// timing, and a loaded machine's peaks are the highest (docs/history.md, 2026-12-03). The
// bounds: 1.10x at every settled stage, 1.15x as files are written, 1.08x and 0.75x at the end (a
// ceiling, not a target: level 0's share at its fullest is not spent between flushes, and the
// steering may run low for a while after rewrites).
TEST_P(MemoryBudgetDb, FiltersStayWithinTheBudgetAsTheTreeGrows) {
  const bool ordered = GetParam().ordered;
  Open(BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kBudgetBytes) + "}"));
  const std::vector<double> ratio =
      GrowInStages(ordered, [&] { testing::WaitForCompactions(db_.get()); });
  ExpectAllPresent(0, kKeys);
  EXPECT_EQ(LookUpAbsent(20'000).true_positives, 0u);
  printf("[ figures  ] %s keys, memory_budget %" PRIu64 " bytes: filter bytes over the budget",
         GetParam().name, kBudgetBytes);
  for (const double r : ratio) printf(" %.3f", r);
  printf(" (at %" PRIu64 " keys each)\n", kKeys / kStages);
  // Between the stages too: the live filters' bytes the policy logs as each file is written (the
  // tree as it is mid-flush and mid-compaction, the peak that scripts/bench.sh --budget reports).
  const std::vector<double> written = LoggedFilterBytes();
  ASSERT_FALSE(written.empty());
  const double peak = *std::max_element(written.begin(), written.end()) / kBudgetBytes;
  printf("[ figures  ] the most the filters held as files were written: %.3fx the budget\n", peak);
  ExpectTheBudgetsBounds(ratio, peak);
  db_.reset();
  // The LOG says what the budget buys and what the tree spends, at each file, and each rewrite.
  EXPECT_FALSE(
      logger_->LinesWith("memory_budget " + std::to_string(kBudgetBytes) + " bytes over 1 trees")
          .empty());
  printf("[ figures  ] %zu files rewritten\n",
         logger_->LinesWith("memory_budget: rewriting").size());
  EXPECT_FALSE(logger_->LinesWith("memory_budget: rewriting").empty());
  EXPECT_EQ(logger_->LinesWith("memory_budget: rewriting").size(),
            logger_->LinesWith("): OK").size())
      << "a rewrite failed";
  // --inspect_db's figures: the budget as given, the filters as measured.
  std::vector<FilterBudgetInfo> budgets;
  ASSERT_TRUE(DescribeFilterBudgets(dir_, &budgets).ok());
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0].budget.bytes, kBudgetBytes);
  EXPECT_EQ(budgets[0].filter_bytes,
            static_cast<uint64_t>(std::llround(ratio[kStages - 1] * kBudgetBytes)));
}

// A universal tree grows as above: its files each take one filter of the mix of a tree of one level
// at what the budget buys, by the tree's error diffusion
// (LeveledChooser::UnderUniversalCompaction), and the listener rewrites those of its early runs
// that kept richer ones, planned at that mix (OneFilterAllocation), not at level shares the policy
// does not give it (LeveledPolicy.EachLevelGetsItsOwnFilter). The same bounds as a leveled tree's.
TEST_P(MemoryBudgetDb, AUniversalTreeIsRewrittenToTheOneFilterItsFilesGet) {
  Options options =
      BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kBudgetBytes) + "}");
  options.compaction_style = ROCKSDB_NAMESPACE::kCompactionStyleUniversal;
  Open(options);
  GrowWithinTheBudget("universal", [&] { testing::WaitForCompactions(db_.get()); });
}

// A tree allocated by the user's model of its levels (num_levels=3) grows as above: its files
// take the model's filters at what the budget buys, not the accounts' shares, and no steering;
// the listener plans its rewrites at the model's filters (ModelAllocation). Planned at
// SteadyAllocation's shares instead, files of level 1, which the model gives more than those
// shares, came out no smaller (9.16 bits/key against a share of 6.01), one of them twice, in 2 of
// 3 runs of the random tree. The bounds are a leveled tree's.
TEST_P(MemoryBudgetDb, AModelledTreeIsRewrittenToTheFiltersItsModelGives) {
  Open(BudgetOptions(
      "{id=sstfilter.Leveled;num_levels=3;memory_budget=" + std::to_string(kBudgetBytes) + "}"));
  GrowWithinTheBudget("num_levels=3", [&] { testing::WaitForCompactions(db_.get()); });
  const std::vector<std::string> unshrunk = logger_->LinesWith("no smaller");
  EXPECT_TRUE(unshrunk.empty()) << unshrunk.size() << " rewrites, the first: " << unshrunk[0];
}

INSTANTIATE_TEST_SUITE_P(Keys, MemoryBudgetDb,
                         ::testing::Values(Growth{"random", false}, Growth{"ordered", true}),
                         [](const auto& info) { return std::string(info.param.name); });

// Two column families share one policy, and its budget, given as a share of the block cache: their
// filters together stay within it. The listener rewrites the default column family's files only
// (it has no handle on the others), so the other's early files wait for its compactions, and the
// default's filters end below the other's; without the rewrites the two trees end beyond the
// budget (runs: docs/history.md). The bounds leave room for slower machines and for the order in
// which the two trees' compactions end (the budget is a ceiling, not a target).
TEST_F(MemoryBudgetDb, ColumnFamiliesSharingThePolicyShareTheBudget) {
  constexpr uint64_t kPerFamily = kKeys / 2;
  BlockBasedTableOptions table;
  // 25% of this cache is kBudgetBytes.
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(4 * kBudgetBytes);
  std::unique_ptr<ColumnFamilyHandle> other_owner =
      OpenWithOther(BudgetOptions("{id=sstfilter.Leveled;memory_budget=25%}", table));
  ASSERT_NE(other_owner, nullptr);
  ColumnFamilyHandle* other = other_owner.get();
  for (uint64_t first = 0; first < kPerFamily; first += 30'000) {
    WriteTo(db_->DefaultColumnFamily(), first, 30'000, /*ordered=*/false);
    WriteTo(other, first, 30'000, /*ordered=*/false);
  }
  testing::WaitForCompactions(db_.get());
  const double ratio =
      static_cast<double>(FilterBytes({db_->DefaultColumnFamily(), other})) / kBudgetBytes;
  const double alone = static_cast<double>(FilterBytes({db_->DefaultColumnFamily()})) /
                       static_cast<double>(FilterBytes({other}));
  printf("[ figures  ] two column families, memory_budget=25%% of %" PRIu64
         " bytes: filter bytes %.3fx the budget, default over other %.3f\n",
         4 * kBudgetBytes, ratio, alone);
  EXPECT_LE(ratio, 1.15);
  EXPECT_GE(ratio, 0.7);
  EXPECT_GE(alone, 0.5);  // alike trees, alike shares, but for the rewrites
  EXPECT_LE(alone, 1.25);
  ExpectAllPresent(0, kPerFamily);
  ExpectSampleIn(other, kPerFamily);
  ASSERT_TRUE(db_->DestroyColumnFamilyHandle(other_owner.release()).ok());
  db_.reset();
  EXPECT_FALSE(logger_->LinesWith("over 2 trees").empty());
  // An OPTIONS file keeps the share, not the cache's capacity: --inspect_db says the share.
  std::vector<FilterBudgetInfo> budgets;
  ASSERT_TRUE(DescribeFilterBudgets(dir_, &budgets).ok());
  ASSERT_EQ(budgets.size(), 2u);
  for (const FilterBudgetInfo& b : budgets) {
    EXPECT_EQ(b.budget.cache_share, 0.25) << b.column_family;
    EXPECT_EQ(b.budget.bytes, 0u) << b.column_family;
    EXPECT_GT(b.filter_bytes, 0u) << b.column_family;
  }
  const std::string report = FormatBudgetReport(budgets);
  EXPECT_NE(report.find("memory_budget of column family other (sstfilter.Leveled): 25% of the "
                        "block cache"),
            std::string::npos)
      << report;
}

// A dropped column family sends no more events: the database's next account publishes it empty,
// and the budget buys its bits per key over the keys that remain (without that, the dropped keys
// counted until the database closed).
TEST_F(MemoryBudgetDb, ADroppedColumnFamilyNoLongerSharesTheBudget) {
  std::unique_ptr<ColumnFamilyHandle> other_owner = OpenWithOther(
      BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kBudgetBytes) + "}"));
  ASSERT_NE(other_owner, nullptr);
  WriteTo(other_owner.get(), 0, 100'000, /*ordered=*/false);
  WriteTo(db_->DefaultColumnFamily(), 0, 20'000, /*ordered=*/false);
  testing::WaitForCompactions(db_.get());
  // The keys the budget was last divided over, as the policy logs them ("... of N keys").
  auto budgeted_keys = [&]() {
    const std::vector<std::string> lines = logger_->LinesWith("bytes over 2 trees of ");
    if (lines.empty()) return 0.0;
    const std::string& last = lines.back();
    return std::strtod(last.c_str() + last.find(" trees of ") + 10, nullptr);
  };
  const double shared = budgeted_keys();
  ASSERT_TRUE(db_->DropColumnFamily(other_owner.get()).ok());
  ASSERT_TRUE(db_->DestroyColumnFamilyHandle(other_owner.release()).ok());
  WriteTo(db_->DefaultColumnFamily(), 20'000, 20'000, /*ordered=*/false);  // an account
  WriteTo(db_->DefaultColumnFamily(), 40'000, 20'000, /*ordered=*/false);  // a file after it
  testing::WaitForCompactions(db_.get());
  const double alone = budgeted_keys();
  printf("[ figures  ] the budget over %.0f keys with the other column family, %.0f once dropped\n",
         shared, alone);
  EXPECT_GE(shared, 120'000);
  // 60,000 keys, level 0's reservation included (at most all of them again).
  EXPECT_LE(alone, 120'000);
  EXPECT_GE(alone, 60'000);
  ExpectAllPresent(0, 60'000);
}

// The default column family stops growing; then the other's growth lowers what the budget they
// share buys, and the default's files, which no compaction of their own reaches any more, spend
// beyond their shares. The other's compactions give the default's tree its rewrites.
TEST_F(MemoryBudgetDb, AnotherColumnFamilysCompactionsRewriteTheDefaults) {
  constexpr uint64_t kPerFamily = kKeys / 2;
  std::unique_ptr<ColumnFamilyHandle> other_owner = OpenWithOther(
      BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kBudgetBytes) + "}"));
  ASSERT_NE(other_owner, nullptr);
  ColumnFamilyHandle* other = other_owner.get();
  for (uint64_t first = 0; first < kPerFamily; first += 30'000) {
    WriteTo(db_->DefaultColumnFamily(), first, 30'000, /*ordered=*/false);
  }
  testing::WaitForCompactions(db_.get());
  const uint64_t default_alone = FilterBytes({db_->DefaultColumnFamily()});
  const size_t rewrites_alone = logger_->LinesWith("memory_budget: rewriting").size();
  for (uint64_t first = 0; first < kPerFamily; first += 30'000) {
    WriteTo(other, first, 30'000, /*ordered=*/false);
  }
  testing::WaitForCompactions(db_.get());
  const uint64_t default_shared = FilterBytes({db_->DefaultColumnFamily()});
  const double ratio =
      static_cast<double>(FilterBytes({db_->DefaultColumnFamily(), other})) / kBudgetBytes;
  const size_t rewrites_shared =
      logger_->LinesWith("memory_budget: rewriting").size() - rewrites_alone;
  printf("[ figures  ] the default's filters %" PRIu64 " bytes alone, %" PRIu64
         " once the other grew (%zu rewrites); both %.3fx the budget\n",
         default_alone, default_shared, rewrites_shared, ratio);
  EXPECT_GT(rewrites_shared, 0u);
  // Alone, the default's tree had the whole budget, more than its ceiling buys; shared, the half
  // its keys are of all the keys, and its files spend within it.
  EXPECT_LT(static_cast<double>(default_shared), 0.8 * static_cast<double>(default_alone));
  EXPECT_LE(static_cast<double>(default_shared), kBudgetLimit * (kBudgetBytes / 2.0));
  EXPECT_LE(ratio, 1.15);
  ExpectAllPresent(0, kPerFamily);
  ExpectSampleIn(other, kPerFamily);
  ASSERT_TRUE(db_->DestroyColumnFamilyHandle(other_owner.release()).ok());
}

// With no compaction to let the listener rewrite the files written earlier, flushes spend what
// the budget has left, down to half the bits per key it buys: three flushes of 20,000 keys under
// a budget of 6 bits per key over 60,000. The first takes the policy's ceiling (the budget buys
// more than that over its keys), the second what is left, the third, finding the budget spent,
// half the 9 bits per key it buys over 40,000 keys. docs/history.md has the runs, and those of the
// design before, where each flush took what the budget buys.
TEST_F(MemoryBudgetDb, AFlushSpendsAtMostWhatTheBudgetHasLeft) {
  double ratio = 0;
  const std::vector<double> bits = ThreeFlushes("three flushes", /*overlapping=*/false, &ratio);
  ASSERT_EQ(bits.size(), kFlushes);
  // The floor, 4.5 bits per key, and a filter's fixed bytes and rounding.
  EXPECT_LE(bits[2], 5.0);
  EXPECT_LE(ratio, 1.3);
  db_.reset();
  EXPECT_FALSE(logger_->LinesWith("memory_budget: a flushed filter of").empty());
}

// The same three flushes with keys that overlap (each flush every third key of the same range):
// the compactions of level 0 would soon merge such flushes, so the third gives up its floor where
// the filters would go beyond kBudgetSwing past the budget (LeveledChooser::SpendAtMost), and the
// tree holds at most that, a filter's fixed bytes and rounding aside.
TEST_F(MemoryBudgetDb, AFlushOfOverlappingKeysKeepsTheTreeWithinTheOvershoot) {
  double ratio = 0;
  const std::vector<double> bits =
      ThreeFlushes("three overlapping flushes", /*overlapping=*/true, &ratio);
  ASSERT_EQ(bits.size(), kFlushes);
  // Not the floor of 4.5 bits per key (4.08 for the appending flushes above): what the first two
  // left of the budget and its overshoot of 2,250 bytes, under 2 bits per key.
  EXPECT_LE(bits[2], 2.0);
  EXPECT_LE(ratio, kBudgetLimit + 0.01);
}

// The appending flushes of the first test, in a universal tree: its compactions merge sorted runs
// whatever their keys (LeveledChooser::UnderUniversalCompaction), so the third gives up its floor
// as the overlapping flushes do, within the same bounds (the overshoot of 2,250 bytes and what the
// first two flushes left: under 2 bits per key for the third). Kept at its floor (4.08 bits per
// key), each flush a universal tree's compactions had not yet merged added to the overshoot, by as
// many flushes as level 0 let wait (AUniversalTreeIsRewrittenToTheOneFilterItsFilesGet's peak on
// a loaded machine).
TEST_F(MemoryBudgetDb, AUniversalTreesFlushKeepsItWithinTheOvershootThoughItsKeysAppend) {
  double ratio = 0;
  const std::vector<double> bits = ThreeFlushes(
      "three appending flushes of a universal tree", /*overlapping=*/false, &ratio,
      /*prefilled=*/false, kFlushesBudget, ROCKSDB_NAMESPACE::kCompactionStyleUniversal);
  ASSERT_EQ(bits.size(), kFlushes);
  EXPECT_LE(bits[2], 2.0);
  EXPECT_LE(ratio, kBudgetLimit + 0.01);
}

// The same in a universal tree of level 0 alone (num_levels=1): its accounts cannot tell the runs
// compactions wrote from the flushes, so they could not see older runs hold it beyond the budget
// (BudgetedTrees::SettledBeyond), and its flushes keep their floor, as appending flushes do in a
// leveled tree (LeveledChooser::UnderUniversalCompaction).
TEST_F(MemoryBudgetDb, AUniversalTreeOfLevelZeroAloneKeepsItsFlushesFloor) {
  double ratio = 0;
  const std::vector<double> bits =
      ThreeFlushes("three appending flushes of a universal tree of one level",
                   /*overlapping=*/false, &ratio, /*prefilled=*/false, kFlushesBudget,
                   ROCKSDB_NAMESPACE::kCompactionStyleUniversal, /*num_levels=*/1);
  ASSERT_EQ(bits.size(), kFlushes);
  EXPECT_GE(bits[2], 4.0);  // the floor, 4.5 bits per key, as a filter of 20,000 keys rounds it
}

// A budget set on a database whose filters spend more than it (here 10 bits per key where it
// buys 6): until compactions let the listener rewrite the files below level 0, the tree stays
// beyond the budget and its overshoot whatever the flushes get, so the overlapping flushes keep
// their floor (LeveledPolicy::FlushLimit), half the bits per key the budget buys, where those
// finding the overshoot spent would get no filter, and every lookup would read them.
TEST_F(MemoryBudgetDb, FlushesKeepTheirFloorWhileOlderFilesHoldTheTreeBeyondTheBudget) {
  double ratio = 0;
  const std::vector<double> bits =
      ThreeFlushes("three overlapping flushes over a tree at 10 bits/key", /*overlapping=*/true,
                   &ratio, /*prefilled=*/true);
  ASSERT_EQ(bits.size(), kFlushes);
  EXPECT_GT(ratio, kBudgetLimit);  // what the test is about: no flush could help it
  // The third flush's floor is 1.78 bits per key, half the 3.56 the budget buys over the 100,000
  // keys it counts then (level 0's at its keys now); a flush given no filter has its 32-byte
  // trailer, 0.013 bits per key.
  for (const double b : bits) EXPECT_GE(b, 1.0);
}

// A database switched to a budget from richer filters: its first compaction begins before any
// plan of rewrites (those come as compactions complete), while its files below level 0 hold it
// beyond the budget. As it begins, the listener plans the rewrites without running them and
// publishes what they leave (PlanAsACompactionBegins): within kRewriteAbove of the shares, where
// the prefill's files at 10 bits per key spend more than 1.5x theirs, so the compaction's outputs
// get about their level's share rather than paying for files the rewrites then take back. Once a
// residual stands, nothing is planned again; and the listener makes the plan as a compaction
// begins (OnCompactionBegin).
TEST_F(MemoryBudgetDb,
       ACompactionBeginningWhileOlderFilesHoldTheTreeBeyondTheBudgetCountsTheRewrites) {
  double ratio = 0;
  ASSERT_EQ(ThreeFlushes("switched", /*overlapping=*/true, &ratio, /*prefilled=*/true).size(),
            kFlushes);
  const TreeId tree = testing::TreeOfDb(db_.get(), "default");
  BudgetTargets::Target target;
  ASSERT_TRUE(BudgetTargets::Global().Get(tree, &target));
  ASSERT_TRUE(std::isnan(target.residual_excess));  // no compaction yet: no plan
  PlanAsACompactionBegins(db_.get(), tree);
  ASSERT_TRUE(BudgetTargets::Global().Get(tree, &target));
  // Within kRewriteAbove of shares of at most 10 bits per key, once rewritten; and not below
  // them: the prefill's files, RocksDB's, are counted at their level's mean, which their rewrites
  // keep (KeepsItsLevelsMix), not at the leaner filter of a mix.
  EXPECT_LE(target.residual_excess, (kRewriteAbove - 1) * 10);
  EXPECT_GE(target.residual_excess, -0.01);
  PlanAsACompactionBegins(db_.get(), tree);
  const std::string planned = "memory_budget: a compaction begins while older files";
  EXPECT_EQ(logger_->LinesWith(planned).size(), 1u);
  EXPECT_TRUE(logger_->LinesWith("memory_budget: rewriting").empty());  // planned, not run
  std::set<std::string> rocksdbs;  // the prefill's files below level 0, by name
  for (const auto& [file, props] : Tables()) {
    if (props->filter_policy_name != kLeveledPolicyName) {
      rocksdbs.insert(fs::path(file).filename().string());
    }
  }
  // The listener's own: the residual unknown again, the first compaction plans as it begins.
  BudgetTargets::Global().ForgetResidualExcess(tree);
  ASSERT_TRUE(db_->SetOptions({{"disable_auto_compactions", "false"}}).ok());
  testing::WaitForCompactions(db_.get());
  EXPECT_GE(logger_->LinesWith(planned).size(), 2u);
  // The prefill's files keep their level's mix as they are rewritten (their keys drew from
  // none); any file sstfilter.Leveled wrote takes the leaner. The plan's decision reaches the
  // thread that builds each rewrite's file (the policy's line for the file says which it got).
  size_t prefill_rewrites = 0;
  const std::vector<std::string> rewrites = logger_->LinesWith("memory_budget: rewriting /");
  for (const std::string& line : rewrites) {
    EXPECT_NE(line.find("): OK"), std::string::npos) << line;  // each built its file
    const size_t name = line.find("rewriting /") + std::strlen("rewriting /");
    const bool rocksdbs_file = rocksdbs.count(line.substr(name, line.find(' ', name) - name)) > 0;
    prefill_rewrites += rocksdbs_file;
    EXPECT_EQ(line.find("another policy's file: its level's mix kept") != std::string::npos,
              rocksdbs_file)
        << line;
  }
  EXPECT_GT(prefill_rewrites, 0u);
  EXPECT_EQ(logger_->LinesWith("a budget rewrite: its level's mix kept").size(), prefill_rewrites);
  EXPECT_EQ(logger_->LinesWith("a budget rewrite: the leaner of a mix").size(),
            rewrites.size() - prefill_rewrites);
  ExpectAllPresent(0, kFlushes * kFlushKeys);
}

// A database switched to a budget that takes no writes: no flush or compaction, so no event
// lets the listener rewrite its files, and it keeps its filters, beyond the budget. A compaction
// of its whole range, the last level's files compacted too (kForceOptimized, as `ldb compact`
// does; docs/filters.md), writes every file again under the budget.
TEST_F(MemoryBudgetDb, AnIdleDatabaseSwitchedToABudgetComesWithinItWhenItsRangeIsCompacted) {
  PrefillUnderRocksDbsFilter();
  // Level 0 left empty, whatever the compactions' timing: the budget counts level 0 at the most
  // it has held since the database opened, and would keep that share from the levels below.
  ASSERT_TRUE(db_->CompactRange({}, nullptr, nullptr).ok());
  testing::WaitForCompactions(db_.get());
  const double before = static_cast<double>(FilterBytes({db_->DefaultColumnFamily()}));
  Open(
      BudgetOptions("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kFlushesBudget) + "}"));
  testing::WaitForCompactions(db_.get());
  ASSERT_EQ(FilesAtLevel(0), 0);
  ASSERT_GT(before / kFlushesBudget, 1.5);
  EXPECT_EQ(FilterBytes({db_->DefaultColumnFamily()}), before);  // idle: nothing rewritten
  ROCKSDB_NAMESPACE::CompactRangeOptions force;
  force.bottommost_level_compaction = ROCKSDB_NAMESPACE::BottommostLevelCompaction::kForceOptimized;
  ASSERT_TRUE(db_->CompactRange(force, nullptr, nullptr).ok());
  testing::WaitForCompactions(db_.get());
  const double ratio =
      static_cast<double>(FilterBytes({db_->DefaultColumnFamily()})) / kFlushesBudget;
  printf("[ figures  ] an idle database at %.3fx its budget, %.3fx once compacted\n",
         before / kFlushesBudget, ratio);
  // One level, and level 0 empty since the database opened, so no share reserved for it: the
  // budget is the last level's, within the overshoot kBudgetSwing. Its share, about 6 bits per key,
  // falls between two filters (5.1 and 6.1 bits/key), and each of its three files draws one by its
  // keys: from 0.85x the budget, all three the leaner, to 1.02x (the fraction that draws the richer
  // depends on the accounts as each file is written: 1.014x in 30 runs).
  EXPECT_LE(ratio, kBudgetLimit);
  EXPECT_GE(ratio, 0.82);
  for (const auto& [file, props] : Tables()) {
    EXPECT_EQ(props->filter_policy_name, kLeveledPolicyName) << file;
  }
  ExpectAllPresent(0, kFlushes * kFlushKeys);
}

// A universal tree switched to a budget it holds five times over: one sorted run of about 92 MiB
// in files of 4 MiB, written at 10 bits per key, under a budget of 2 bits per key. As the one
// compaction its next flushes bring completes, the listener rewrites more than the
// kMaxRewriteBytesPerEvent a leveled tree's would (21 files, 84.7 MiB, in 2026-12-07's runs):
// a universal tree's rewrites take kMaxCatchUpBytesPerEvent while its filters hold more than
// kBudgetLimit times the budget (RewriteBytesPerEvent, as PrepareAPlan reads the database's
// compaction style and the trees' filter bytes; either mutated to a leveled tree's or to no
// filter bytes, the same compaction rewrote 15 files, 60.5 MiB).
TEST_F(MemoryBudgetDb, AUniversalTreeBeyondTheCapRewritesMoreThanALeveledTreeAtACompaction) {
  constexpr uint64_t kKeys = 24'000, kValueBytes = 4'000;  // about 23 files of 4 MiB
  auto options_under = [&](const std::string& filter_uri) {
    Options options = BudgetOptions(filter_uri);
    options.compaction_style = ROCKSDB_NAMESPACE::kCompactionStyleUniversal;
    options.level0_file_num_compaction_trigger = 3;  // sorted runs
    options.write_buffer_size = 8 << 20;
    options.target_file_size_base = 4 << 20;
    options.compression = ROCKSDB_NAMESPACE::kNoCompression;  // the values' bytes are the files'
    return options;
  };
  Open(options_under("sstfilter.Leveled:10"));
  WriteOptions w;
  w.disableWAL = true;
  for (const uint64_t i : Indexes(0, kKeys, std::optional<uint64_t>(7))) {
    const std::string k = PresentKey(i);
    ASSERT_TRUE(db_->Put(w, k, k + std::string(kValueBytes, 'v')).ok());
  }
  ASSERT_TRUE(db_->Flush({}).ok());
  ASSERT_TRUE(db_->CompactRange({}, nullptr, nullptr).ok());  // one sorted run, level 0 empty
  testing::WaitForCompactions(db_.get());
  constexpr uint64_t kSwitchedBudgetBytes = kKeys * 2 / 8;
  Open(options_under("{id=sstfilter.Leveled;memory_budget=" + std::to_string(kSwitchedBudgetBytes) +
                     "}"));
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> run;
  db_->GetLiveFilesMetaData(&run);
  std::map<std::string, uint64_t> file_bytes;
  uint64_t run_bytes = 0;
  for (const auto& f : run) {
    file_bytes[f.name] = f.size;
    run_bytes += f.size;
  }
  ASSERT_GT(run_bytes, kMaxRewriteBytesPerEvent + (8u << 20));
  ASSERT_GT(static_cast<double>(FilterBytes({db_->DefaultColumnFamily()})) / kSwitchedBudgetBytes,
            4.0);
  // One compaction RocksDB picks, not a manual one (the rewrites' are manual): two flushes of a
  // few keys make three sorted runs, the trigger, and it merges the two; its completion runs the
  // rewrites on its thread, which WaitForCompactions waits for.
  auto picked = [&] {
    const std::vector<std::string> started =
        logger_->LinesWith("\"event\": \"compaction_started\"");
    return std::count_if(started.begin(), started.end(), [](const std::string& line) {
      return line.find("ManualCompaction") == std::string::npos;
    });
  };
  const auto before = picked();  // the fill's
  ASSERT_TRUE(logger_->LinesWith("memory_budget: rewriting").empty());
  for (uint64_t flush = 0; flush < 2; ++flush) {
    for (uint64_t i = 0; i < 100; ++i) {
      const std::string k = PresentKey(kKeys + 2 * i + flush);
      ASSERT_TRUE(db_->Put(w, k, ValueOf(k)).ok());
    }
    ASSERT_TRUE(db_->Flush({}).ok());
  }
  for (int wait = 0; wait < 2000 && picked() == before; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  testing::WaitForCompactions(db_.get());
  ASSERT_EQ(picked(), before + 1);
  const std::string marker = "memory_budget: rewriting ";
  uint64_t rewritten_bytes = 0;
  size_t rewrites = 0;
  for (const std::string& line : logger_->LinesWith(marker)) {
    const size_t at = line.find(marker) + marker.size();
    const auto file = file_bytes.find(line.substr(at, line.find(' ', at) - at));
    ASSERT_NE(file, file_bytes.end()) << line;
    EXPECT_NE(line.find("): OK"), std::string::npos) << line;
    rewritten_bytes += file->second;
    ++rewrites;
  }
  printf(
      "[ figures  ] a universal tree at 5x its budget: %zu files, %.1f MiB rewritten at one "
      "compaction\n",
      rewrites, static_cast<double>(rewritten_bytes) / (1 << 20));
  EXPECT_GT(rewritten_bytes, kMaxRewriteBytesPerEvent);
  EXPECT_LE(rewritten_bytes, kMaxCatchUpBytesPerEvent);
  PinnableSlice value;
  for (uint64_t i = 0; i < kKeys; ++i) {
    const std::string k = PresentKey(i);
    ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), k, &value).ok()) << k;
    ASSERT_EQ(value.ToString(), k + std::string(kValueBytes, 'v'));
  }
}

// The same prefill under a budget its files below level 0 hold within 1.05x (80,000 bytes for
// their 75,000 or so), though they spend beyond their levels' shares (10 bits per key, where the
// budget buys about 5 over the tree's keys): no plan as a compaction begins, and the steering
// answers the excess itself until the compactions' plans publish theirs.
TEST_F(MemoryBudgetDb, ACompactionBeginningWithTheOlderFilesWithinTheBudgetPlansNothing) {
  double ratio = 0;
  ASSERT_EQ(ThreeFlushes("prefilled within the budget", /*overlapping=*/true, &ratio,
                         /*prefilled=*/true, /*budget_bytes=*/80'000)
                .size(),
            kFlushes);
  const TreeId tree = testing::TreeOfDb(db_.get(), "default");
  PlanAsACompactionBegins(db_.get(), tree);
  BudgetTargets::Target target;
  ASSERT_TRUE(BudgetTargets::Global().Get(tree, &target));
  EXPECT_TRUE(std::isnan(target.residual_excess));
}

// Without the listener nobody counts the keys, and RocksDB drops a listener name it cannot load
// without an error: a database does not open for writing under a budget nobody would keep, nor
// under a share of a block cache its tables do not have. With the listener it opens.
TEST_F(MemoryBudgetDb, ABudgetNobodyCanKeepDoesNotOpen) {
  Options options = BudgetOptions("{id=sstfilter.Leveled;bits_per_key=8;memory_budget=1K}");
  options.listeners.clear();
  Status s;
  auto db = testing::OpenDb(options, dir_, &s);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(db, nullptr);
  EXPECT_NE(s.ToString().find("sstfilter.Leveled: memory_budget=1024 needs the "
                              "sstfilter.LeveledBudget listener"),
            std::string::npos)
      << s.ToString();
  // A misspelt listener: RocksDB opens without it.
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetDBOptionsFromString(
                  StrictConfigOptions(), options, "listeners=sstfilter.LeveledBudgit", &options)
                  .ok());
  ASSERT_TRUE(options.listeners.empty());
  db = testing::OpenDb(options, dir_, &s);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("needs the sstfilter.LeveledBudget listener"), std::string::npos)
      << s.ToString();

  BlockBasedTableOptions no_cache;
  no_cache.no_block_cache = true;
  db = testing::OpenDb(BudgetOptions("{id=sstfilter.Leveled;memory_budget=25%}", no_cache), dir_,
                       &s);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("the table has none (no_block_cache)"), std::string::npos)
      << s.ToString();

  // Without a budget the listener is optional; with both, the database opens and writes.
  Open(MakeOptions("sstfilter.Leveled:8"));
  db_.reset();
  Open(BudgetOptions("{id=sstfilter.Leveled;bits_per_key=8;memory_budget=1K}"));
  WriteTo(db_->DefaultColumnFamily(), 0, 20'000, /*ordered=*/false);
  ExpectAllPresent(0, 20'000);
}

// RocksDB validates the table options as DB::Open opens a database, not as CreateColumnFamily
// adds a column family: one created under a budget in a database without the listener gets
// bits_per_key, and the LOG says why, once.
TEST_F(MemoryBudgetDb, AColumnFamilyAddedWithoutTheListenerGetsBitsPerKeyAndTheLogSaysSo) {
  Options plain = MakeOptions("sstfilter.Leveled:8");
  plain.info_log = logger_;
  Open(plain);
  ColumnFamilyHandle* raw = nullptr;
  ASSERT_TRUE(
      db_->CreateColumnFamily(
             BudgetOptions("{id=sstfilter.Leveled;bits_per_key=8;memory_budget=1K}"), "other", &raw)
          .ok());
  std::unique_ptr<ColumnFamilyHandle> other(raw);
  for (uint64_t first = 0; first < 60'000; first += 20'000) {
    WriteTo(other.get(), first, 20'000, /*ordered=*/false);
  }
  testing::WaitForCompactions(db_.get());
  ROCKSDB_NAMESPACE::TablePropertiesCollection tables;
  ASSERT_TRUE(db_->GetPropertiesOfAllTables(other.get(), &tables).ok());
  uint64_t bytes = 0, entries = 0;
  for (const auto& [file, props] : tables) {
    bytes += props->filter_size;
    entries += props->num_filter_entries;
  }
  ASSERT_GT(entries, 0u);
  EXPECT_GT(8.0 * bytes / entries, 6);  // bits_per_key's allocation, far above 1K's
  ExpectSampleIn(other.get(), 60'000);
  ASSERT_TRUE(db_->DestroyColumnFamilyHandle(other.release()).ok());
  db_.reset();
  EXPECT_EQ(logger_->LinesWith("needs the sstfilter.LeveledBudget listener").size(), 1u);
}

}  // namespace
}  // namespace sstfilter::db_tests
