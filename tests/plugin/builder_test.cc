// SPDX-License-Identifier: Apache-2.0
// The policies' builders and readers through the re-declared FilterBitsBuilder/FilterBitsReader
// interface, as RocksDB drives them (partitions, AddKeyAndAlt, post-verification).
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/batch.h"
#include "core/bumped_ribbon/math.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/kinds.h"
#include "core/ribbon/math.h"
#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
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
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using testing::LargestSpecOf;
using testing::PolicyFrom;
using testing::SpecOf;

// Not padded ("key7"): the builders' false-positive counts below are measured on these keys.
std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

class BuilderTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<FilterBitsBuilder> NewBuilder(bool verify = false) {
    options_.filter_policy = PolicyFrom(GetParam());
    options_.detect_filter_construct_corruption = verify;
    options_.optimize_filters_for_memory = false;  // the sizes below are the builder's own
    return testing::NewBuilder(options_);
  }
  BlockBasedTableOptions options_;
};

TEST_P(BuilderTest, FinishEmptiesTheBuilderForTheNextPartition) {
  auto builder = NewBuilder();
  ASSERT_NE(builder, nullptr);
  for (int partition = 0; partition < 3; ++partition) {
    const int first = partition * 10000;
    for (int i = first; i < first + 10000; ++i) {
      builder->AddKey(Key(i));
      builder->AddKey(Key(i));  // a repeat of the previous key is skipped
    }
    EXPECT_EQ(builder->EstimateEntriesAdded(), 10000u);
    std::unique_ptr<const char[]> buf;
    Status status = Status::Incomplete();
    const Slice filter = builder->Finish(&buf, &status);
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(builder->EstimateEntriesAdded(), 0u);
    std::vector<std::string> partition_keys;
    for (int i = first; i < first + 10000; ++i) partition_keys.push_back(Key(i));
    EXPECT_EQ(filter.size(),
              FilterBytes(SpecOf(*options_.filter_policy, partition_keys), 10000).value());
    std::unique_ptr<FilterBitsReader> reader(options_.filter_policy->GetFilterBitsReader(filter));
    // This partition's keys all match, singly and batched; the trailer counts exactly them.
    EXPECT_EQ(FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size())
                      .trailer()
                      .num_keys <= 10000u,
              true);
    std::vector<std::string> keys;
    for (int i = first; i < first + 10000; ++i) keys.push_back(Key(i));
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<Slice*> ptrs;
    for (Slice& s : slices) ptrs.push_back(&s);
    std::unique_ptr<bool[]> may_match(new bool[keys.size()]);
    reader->MayMatch(static_cast<int>(keys.size()), ptrs.data(), may_match.get());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(reader->MayMatch(keys[i])) << keys[i];
      ASSERT_TRUE(may_match[i]) << keys[i];
    }
    // Keys of other partitions are (mostly) not in this one.
    int others = 0;
    for (int i = 100000; i < 110000; ++i) others += reader->MayMatch(Key(i));
    EXPECT_LT(others, 300);
  }
}

// The reader the plugin hands RocksDB (NewSstFilterBitsReader) answers as core's FilterReader does
// for the same bytes, singly and batched, present keys and absent ones, for every kind. On an
// x86-64 CPU with popcnt the Ribbon kinds' plugin reader is a copy compiled with it (PopcntReader,
// plugin/bits_readers.cc) and core's single queries are not. 3,000 keys make both Ribbon kinds'
// wrapped tables, 20,000 the tables of whole blocks (and the bumped kind's layers).
TEST(PluginReader, AnswersAsCoresReaderOnTheSameBytes) {
  static_assert(3000 <= kBumpedRibbonAlwaysWrappedKeys && 20000 > kRibbonWrappedMaxKeys &&
                    20000 > kBumpedRibbonWrappedMaxKeys,
                "the sizes below must make both shapes of both Ribbon kinds");
  for (const int num_keys : {3000, 20000}) {
    std::vector<std::string> keys;  // present, then as many absent
    for (int i = 0; i < 2 * num_keys; ++i) keys.push_back(Key(i));
    std::vector<uint64_t> present;
    for (int i = 0; i < num_keys; ++i) present.push_back(KeyHash(keys[i].data(), keys[i].size()));
    for (const FilterSpec& spec : testing::OneSpecOfEachKind()) {
      const std::string what = spec.ToString() + ", " + std::to_string(num_keys) + " keys";
      const Result<std::string> bytes = BuildFilter(spec, present.data(), present.size());
      ASSERT_TRUE(bytes.ok()) << what << ": " << bytes.error();
      const FilterReader core = FilterReader::Open(
          reinterpret_cast<const uint8_t*>(bytes.value().data()), bytes.value().size());
      ASSERT_TRUE(core.valid()) << what;
      std::unique_ptr<FilterBitsReader> reader(NewSstFilterBitsReader(bytes.value()));
      ASSERT_NE(reader, nullptr) << what;
#if SSTFILTER_POPCNT_DISPATCH
      const bool ribbon = core.Holds<RibbonReader>() || core.Holds<BumpedRibbonReader>();
      const bool popcnt_copy =
          std::string(typeid(*reader).name()).find("PopcntReader") != std::string::npos;
      EXPECT_EQ(popcnt_copy, ribbon && CpuHasPopcnt()) << what;
#endif
      std::vector<Slice> slices(keys.begin(), keys.end());
      std::vector<Slice*> ptrs;
      for (Slice& s : slices) ptrs.push_back(&s);
      std::unique_ptr<bool[]> batched(new bool[keys.size()]);
      reader->MayMatch(static_cast<int>(keys.size()), ptrs.data(), batched.get());
      size_t matched = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        const bool expected = core.MayContain(KeyHash(keys[i].data(), keys[i].size()));
        ASSERT_EQ(reader->MayMatch(keys[i]), expected) << what << ", " << keys[i];
        ASSERT_EQ(batched[i], expected) << what << ", " << keys[i];
        matched += expected ? 1 : 0;
      }
      // Every present key, and some absent ones (a 1% filter): the comparison saw both answers.
      EXPECT_GT(matched, static_cast<size_t>(num_keys)) << what;
      EXPECT_LT(matched, keys.size()) << what;
    }
  }
}

TEST_P(BuilderTest, ApproximateNumEntriesIsTheInverseOfTheSize) {
  auto builder = NewBuilder();
  for (size_t bytes : {size_t{0}, size_t{31}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    const size_t n = builder->ApproximateNumEntries(bytes);
    // The filter of that many keys (sstfilter.Leveled: the larger it may choose for that many).
    const FilterSpec spec = LargestSpecOf(*options_.filter_policy, std::max<size_t>(n, 1));
    if (n > 0) {
      EXPECT_LE(FilterBytes(spec, n).value(), bytes);
    }
    if (dynamic_cast<const LeveledPolicy*>(options_.filter_policy.get()) != nullptr) {
      // Its filter for n + 1 keys may be another (a budget's fuse fingerprint narrows as keys
      // are added), so there is no exact inverse: the count fits, and fills most of the bytes.
      if (bytes >= 4096) {
        EXPECT_GE(FilterBytes(spec, n).value(), 0.9 * bytes) << bytes;
      }
      continue;
    }
    EXPECT_GT(FilterBytes(spec, n + 1).value(), bytes);
  }
  // Huge budgets are clamped, not overflowed: to the largest filter's keys, 2^40 and more, but
  // for Ribbon, whose largest table (2^40 slots) holds 8.2e11 keys, and for sstfilter.Leveled,
  // whose cheapest kind there, bumped Ribbon, takes at most 2^39 keys.
  const std::string name = options_.filter_policy->Name();
  const bool ribbon = name == kBumpedRibbonPolicyName || name == kLeveledPolicyName;
  EXPECT_GE(builder->ApproximateNumEntries(SIZE_MAX), size_t{1} << (ribbon ? 39 : 40));
}

#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
// RocksDB 9.6 and later: a key and its prefix in one call, with the repeats of its contract
// (filter_policy_internal.h) skipped, and every key and prefix in the filter.
TEST_P(BuilderTest, AddKeyAndAltAddsBothAndSkipsRepeats) {
  auto builder = NewBuilder();
  // Keys "p<group>k<j>" with prefixes "p<group>"; a prefix repeats for the keys of its group.
  std::vector<std::string> added;
  for (int group = 0; group < 500; ++group) {
    // Appended, not "p" + std::to_string(...): in C++20, g++ 12 warns on that form (-Wrestrict,
    // a false positive, GCC bug 105651).
    std::string prefix = "p";
    prefix += std::to_string(1000 + group);
    for (int j = 0; j < 10; ++j) {
      const std::string key = prefix + "k" + std::to_string(j);
      builder->AddKeyAndAlt(key, prefix);
      builder->AddKeyAndAlt(key, prefix);  // the same key and prefix again: nothing new
      added.push_back(key);
    }
    added.push_back(prefix);
  }
  // A key that is its own prefix counts once; then AddKey after AddKeyAndAlt.
  builder->AddKeyAndAlt("p9999", "p9999");
  builder->AddKey("p9999");
  added.push_back("p9999");
  EXPECT_EQ(builder->EstimateEntriesAdded(), added.size());
  std::unique_ptr<const char[]> buf;
  Status status;
  const Slice filter = builder->Finish(&buf, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(builder->EstimateEntriesAdded(), 0u);
  std::unique_ptr<FilterBitsReader> reader(options_.filter_policy->GetFilterBitsReader(filter));
  for (const std::string& k : added) ASSERT_TRUE(reader->MayMatch(k)) << k;
}
#endif

#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
// RocksDB 10.9 and later size filters before building them: CalculateSpace must be the size that
// Finish writes, and EstimatedFpRate the rate that the built filter shows.
TEST_P(BuilderTest, CalculateSpaceAndEstimatedFpRateDescribeTheBuiltFilter) {
  auto builder = NewBuilder();
  for (const size_t n : {size_t{1}, size_t{100}, size_t{5000}, size_t{50000}}) {
    SCOPED_TRACE(n);
    for (size_t i = 0; i < n; ++i) builder->AddKey(Key(i));
    const size_t expected_bytes = builder->CalculateSpace(n);
    std::unique_ptr<const char[]> buf;
    Status status;
    const Slice filter = builder->Finish(&buf, &status);
    ASSERT_TRUE(status.ok());
    if (dynamic_cast<const LeveledPolicy*>(options_.filter_policy.get()) != nullptr) {
      // The estimate takes the choice for the power of two below n (core/level_allocation.h:
      // which filter, and on a mixed level how many take the larger, depend on the count).
      EXPECT_NEAR(filter.size(), expected_bytes, expected_bytes / 10 + 64);
    } else {
      // A cuckoo build whose placement fails takes more buckets: a few percent more at most.
      EXPECT_GE(filter.size(), expected_bytes);
      EXPECT_LE(filter.size(), expected_bytes + expected_bytes / 20 + 64);
    }
    const double rate = builder->EstimatedFpRate(n, filter.size());
    ASSERT_GT(rate, 0.0);
    ASSERT_LT(rate, 1.0);
    if (n < 5000) continue;
    std::unique_ptr<FilterBitsReader> reader(options_.filter_policy->GetFilterBitsReader(filter));
    constexpr int kTrials = 400000;
    int false_positives = 0;
    for (int i = 0; i < kTrials; ++i) false_positives += reader->MayMatch(Key(10'000'000 + i));
    // Within 5 sigma of the estimate, plus 15% for the estimate's own approximations.
    EXPECT_NEAR(false_positives, kTrials * rate,
                testing::BinomialTolerance(kTrials, rate) + 0.15 * kTrials * rate)
        << "estimated " << rate;
  }
  // Another size than the filter's own: the same kind at that many bits per key, so more bytes
  // give a lower rate.
  EXPECT_LT(builder->EstimatedFpRate(10000, 40000), builder->EstimatedFpRate(10000, 10000));
  EXPECT_EQ(builder->EstimatedFpRate(0, 100), 0.0);
}
#endif

TEST_P(BuilderTest, PostVerifyCatchesACorruptedFilter) {
  auto builder = NewBuilder(/*verify=*/true);
  for (int i = 0; i < 5000; ++i) builder->AddKey(Key(i));
  std::unique_ptr<const char[]> buf;
  Status status;
  const Slice filter = builder->Finish(&buf, &status);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(builder->MaybePostVerify(filter).ok());

  for (int i = 0; i < 5000; ++i) builder->AddKey(Key(i));
  const Slice second = builder->Finish(&buf, &status);
  std::string zeroed(second.data(), second.size());
  const size_t trailer_bytes = TrailerBytesOf(
      TrailerLayoutOf(reinterpret_cast<const uint8_t*>(zeroed.data()), zeroed.size()));
  std::fill(zeroed.begin(), zeroed.end() - trailer_bytes, '\0');  // every key now missing
  EXPECT_TRUE(builder->MaybePostVerify(zeroed).IsCorruption());
  // Without the option, nothing is checked.
  auto plain = NewBuilder(/*verify=*/false);
  EXPECT_TRUE(plain->MaybePostVerify(zeroed).ok());
}

TEST_P(BuilderTest, EmptyFilterAndGarbage) {
  auto builder = NewBuilder();
  std::unique_ptr<const char[]> buf;
  const Slice empty = builder->Finish(&buf);
  std::unique_ptr<FilterBitsReader> none(options_.filter_policy->GetFilterBitsReader(empty));
  EXPECT_FALSE(none->MayMatch("anything"));
  for (const std::string& garbage : {std::string(), std::string("x"), std::string(100, '\x07')}) {
    std::unique_ptr<FilterBitsReader> all(options_.filter_policy->GetFilterBitsReader(garbage));
    EXPECT_TRUE(all->MayMatch("anything"));
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, BuilderTest,
                         ::testing::ValuesIn(testing::EveryPolicy({"sstfilter.Cuckoo:24",
                                                                   "sstfilter.BumpedRibbon:10"})));

}  // namespace
}  // namespace sstfilter

namespace sstfilter {
namespace {

// A chooser whose every answer is an error: the builder writes a match-all filter.
class RefusingChooser : public FilterChooser {
 public:
  bool WantsKeyRange() const override { return false; }
  Result<LevelFilter> ForKeys(uint64_t, const KeyRange&, bool) override {
    return Err("refused for the test");
  }
};

// A filter written other than chosen says so once per interval, at WARN, with the file's level and
// key count; the lines left out are counted into the next.
TEST(FallbackWarnings, AreRateLimitedAndNameTheLevelAndTheKeys) {
  testing::RecordingLogger log;
  auto warnings = std::make_shared<RateLimitedWarning>(kFallbackWarningIntervalNs);
  SstFilterBitsBuilder builder(std::make_unique<RefusingChooser>(), /*verify=*/false, &log);
  builder.SetFileLevel(3, warnings);
  for (int round = 0; round < 3; ++round) {  // three partitions, one line
    for (int i = 0; i < 42; ++i) builder.AddKey(Key(i));
    std::unique_ptr<const char[]> buf;
    Status s;
    const Slice filter = builder.Finish(&buf, &s);
    EXPECT_TRUE(s.ok());
    const FilterReader reader =
        FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size());
    EXPECT_TRUE(reader.MayContain(12345));  // match-all: no key is lost
  }
  const std::vector<std::string> lines = log.LinesWith("writing a filter that matches every key");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("42 keys in a file of level 3"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("refused for the test"), std::string::npos) << lines[0];
  EXPECT_EQ(log.lines[0].first, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL);
  // The limiter itself, on a clock of its own: two left out, then the next line says so.
  RateLimitedWarning limiter(1000);
  EXPECT_TRUE(limiter.Log(&log, "first", 0));
  EXPECT_FALSE(limiter.Log(&log, "second", 999));
  EXPECT_FALSE(limiter.Log(&log, "third", 500));
  EXPECT_TRUE(limiter.Log(&log, "fourth", 1000));
  const std::vector<std::string> fourth = log.LinesWith("fourth");
  ASSERT_EQ(fourth.size(), 1u);
  EXPECT_NE(fourth[0].find("(and 2 such lines left out since the last one)"), std::string::npos)
      << fourth[0];
  EXPECT_TRUE(log.LinesWith("second").empty());
}

}  // namespace
}  // namespace sstfilter

namespace sstfilter {

// Reaches a builder's held hashes, as memory corruption would.
struct BuilderTestAccess {
  static void FlipAHeldHash(SstFilterBitsBuilder& builder) { builder.hashes_.chunk(0)[3] ^= 1; }
};

namespace {

// detect_filter_construct_corruption: a hash that changes between AddKey and Finish fails the file
// with Corruption (the filter would miss a key), where verification is on; without it, nothing
// is checked.
TEST(BuilderVerification, AHashChangedBeforeTheBuildIsCorruption) {
  for (const bool verify : {true, false}) {
    for (const bool flip : {false, true}) {
      SstFilterBitsBuilder builder(SpecForBitsPerKey<BlockedBloom>(10).value(), verify, nullptr);
      for (int i = 0; i < 1000; ++i) builder.AddKey(Key(i));
      if (flip) BuilderTestAccess::FlipAHeldHash(builder);
      std::unique_ptr<const char[]> buf;
      Status s;
      const Slice filter = builder.Finish(&buf, &s);
      EXPECT_EQ(s.IsCorruption(), verify && flip) << verify << flip << ": " << s.ToString();
      if (verify && flip) {
        // Written as match-all all the same: the key whose hash changed is not lost.
        const FilterReader reader =
            FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size());
        EXPECT_TRUE(reader.MayContain(0x0123456789abcdefull));
      }
      // The next partition starts clean.
      for (int i = 0; i < 1000; ++i) builder.AddKey(Key(5000 + i));
      EXPECT_TRUE((builder.Finish(&buf, &s), s.ok())) << s.ToString();
    }
  }
}

}  // namespace
}  // namespace sstfilter
