// SPDX-License-Identifier: Apache-2.0
// The policies through RocksDB's own configuration machinery, and their builders and readers
// through the re-declared FilterBitsBuilder/FilterBitsReader interface.
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
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "plugin/block_cache_fit.h"
#include "plugin/policies.h"
#include "plugin/policy_list.h"
#include "plugin/tree_history.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::ObjectLibrary;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using testing::LargestSpecOf;
using testing::LeveledChoice;
using testing::PolicyFrom;
using testing::SpecOf;

// Not padded ("key7"): the builders' false-positive counts below are measured on these keys.
std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

template <typename... Policies>
std::vector<std::string> NamesOf(PolicyList<Policies...>) {
  return {Policies::kClassName()...};
}

// The registered policies and the configurations that tests, tools and scripts run over name the
// same policies, in the same order: a new policy cannot be registered and left out of them, or
// listed and left unregistered. Every configuration creates its policy.
TEST(Policy, TheListsNameTheRegisteredPolicies) {
  EXPECT_EQ(PolicyNames(), NamesOf(AllPolicies{}));
  for (const PolicyConfig& c : kPolicyConfigs) {
    const std::shared_ptr<const FilterPolicy> policy = PolicyFrom(c.uri);
    ASSERT_NE(policy, nullptr) << c.uri;
    EXPECT_EQ(policy->Name(), PolicyNameOf(c.uri)) << c.uri;
  }
  // Every name, and nothing else, is registered.
  for (const std::string& name : PolicyNames()) {
    EXPECT_NE(ObjectLibrary::Default()->FindFactory<const FilterPolicy>(name), nullptr) << name;
  }
  EXPECT_EQ(ObjectLibrary::Default()->FindFactory<const FilterPolicy>("sstfilter.Nothing"),
            nullptr);
}

TEST(Policy, AcceptedForms) {
  struct Case {
    const char* uri;
    const char* name;
    FilterKind kind;
    double bits_per_key;  // of the resulting spec, 0 to skip
    int param;            // probes or fingerprint bits
  } cases[] = {
      {"sstfilter.Bloom:10", "sstfilter.Bloom", BlockedBloom::kId, 10, 7},
      {"sstfilter.Bloom:16.5", "sstfilter.Bloom", BlockedBloom::kId, 16.5, 10},
      {"{id=sstfilter.Bloom;bits_per_key=10;layout=standard}", "sstfilter.Bloom",
       StandardBloom::kId, 10, 7},
      {"{id=sstfilter.Bloom;fp_rate=0.01}", "sstfilter.Bloom", BlockedBloom::kId, 9.9, 6},
      // A budget of b bits/key buys slots of floor(0.95 b) bits, semi-sorted fingerprints of one
      // bit more.
      {"sstfilter.Cuckoo:12", "sstfilter.Cuckoo", Cuckoo::kId, 0, 12},
      {"{id=sstfilter.Cuckoo;fp_rate=0.001}", "sstfilter.Cuckoo", Cuckoo::kId, 0, 13},
      {"{id=sstfilter.Cuckoo;bits_per_key=20}", "sstfilter.Cuckoo", Cuckoo::kId, 0, 20},
      {"sstfilter.Fuse:10", "sstfilter.Fuse", Fuse::kId, 10, 9},
      {"{id=sstfilter.Fuse;fp_rate=0.01}", "sstfilter.Fuse", Fuse::kId, 0, 7},
      {"{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.Fuse", Fuse::kId, 0, 10},
      // sstfilter.Ribbon: the bumped Ribbon kind, 1.001 slots per key for large sets.
      {"sstfilter.Ribbon:10", "sstfilter.Ribbon", BumpedRibbon::kId, 10, 9},
      {"{id=sstfilter.Ribbon;fp_rate=0.01}", "sstfilter.Ribbon", BumpedRibbon::kId, 0, 7},
      {"{id=sstfilter.Ribbon;fp_rate=0.001}", "sstfilter.Ribbon", BumpedRibbon::kId, 0, 10},
  };
  for (const Case& c : cases) {
    const auto policy = PolicyFrom(c.uri);
    ASSERT_NE(policy, nullptr) << c.uri;
    EXPECT_STREQ(policy->Name(), c.name) << c.uri;
    EXPECT_STREQ(policy->CompatibilityName(), "sstfilter") << c.uri;
    const FilterSpec spec = SpecOf(*policy);
    EXPECT_EQ(spec.kind(), c.kind) << c.uri;
    if (c.kind == Fuse::kId) {
      EXPECT_EQ(spec.get_if<FuseParams>()->fingerprint_bits, c.param) << c.uri;
      EXPECT_EQ(spec.get_if<FuseParams>()->bits_per_key, c.bits_per_key) << c.uri;
    } else if (c.kind == BumpedRibbon::kId) {
      EXPECT_EQ(spec.get_if<BumpedRibbonParams>()->fingerprint_bits, c.param) << c.uri;
      EXPECT_EQ(spec.get_if<BumpedRibbonParams>()->bits_per_key, c.bits_per_key) << c.uri;
    } else if (c.kind == Cuckoo::kId) {
      EXPECT_EQ(spec.get_if<CuckooParams>()->fingerprint_bits, c.param) << c.uri;
    } else {
      // Both Bloom kinds' parameters have these two fields.
      Visit(spec.params(), [&](const auto& bloom) {
        if constexpr (std::is_base_of_v<BloomParams, std::decay_t<decltype(bloom)>>) {
          EXPECT_NEAR(bloom.bits_per_key, c.bits_per_key, 1e-9) << c.uri;
          EXPECT_EQ(bloom.num_probes, c.param) << c.uri;
        }
      });
    }
  }
}

TEST(Policy, WorksInTableOptionStrings) {
  const ConfigOptions strict = StrictConfigOptions();
  BlockBasedTableOptions base, out;
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
                  strict, base, "filter_policy={id=sstfilter.Cuckoo;fp_rate=0.001}", &out)
                  .ok());
  ASSERT_NE(out.filter_policy, nullptr);
  EXPECT_STREQ(out.filter_policy->Name(), "sstfilter.Cuckoo");
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
                  strict, base, "filter_policy=sstfilter.Bloom:12;block_size=8192", &out)
                  .ok());
  EXPECT_STREQ(out.filter_policy->Name(), "sstfilter.Bloom");
}

TEST(Policy, BadStringsAreClearErrors) {
  struct Case {
    const char* uri;
    std::vector<std::string> message_parts;
  } cases[] = {
      {"{id=sstfilter.Bloom;bits_per_key=10;fp_rate=0.01}", {"exactly one", "bits_per_key"}},
      {"sstfilter.Bloom", {"needs bits_per_key", "fp_rate"}},
      {"{id=sstfilter.Cuckoo}", {"sstfilter.Cuckoo", "needs bits_per_key"}},
      {"sstfilter.Bloom:0", {"bits_per_key must be in [0.01, 100]"}},
      {"sstfilter.Bloom:101", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;bits_per_key=1e-55}", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;bits_per_key=-3}", {"bits_per_key must be in [0.01, 100]"}},
      {"{id=sstfilter.Bloom;fp_rate=0}", {"fp_rate must be in (0, 1)"}},
      {"{id=sstfilter.Bloom;fp_rate=1.5}", {"fp_rate must be in (0, 1)"}},
      {"{id=sstfilter.Cuckoo;fp_rate=1e-12}", {"fingerprints wider than 32"}},
      {"sstfilter.Cuckoo:4", {"below the cuckoo minimum"}},
      {"sstfilter.Ribbon:1", {"sstfilter.Ribbon", "below the bumped_ribbon minimum of 1.001"}},
      {"{id=sstfilter.Ribbon;fp_rate=1e-12}", {"sstfilter.Ribbon", "fingerprints wider than 32"}},
      {"{id=sstfilter.Ribbon}", {"sstfilter.Ribbon", "needs bits_per_key"}},
      {"{id=sstfilter.Bloom;bits_per_key=ten}", {"bits_per_key must be a finite number", "ten"}},
      {"{id=sstfilter.Bloom;bits_per_key=nan}", {"bits_per_key must be a finite number"}},
      {"{id=sstfilter.Bloom;bits_per_key=inf}", {"bits_per_key must be a finite number"}},
      {"{id=sstfilter.Bloom;bits_per_key=10;layout=sideways}",
       {"layout must be blocked or standard", "sideways"}},
      {"{id=sstfilter.Bloom;bits_per_key=10;colour=blue}", {"colour"}},
      {"sstfilter.Blom:10", {"sstfilter.Blom"}},
      {"sstfilter.Bloom:ten", {"sstfilter.Bloom: bits_per_key must be a finite number", "'ten'"}},
      {"{id=sstfilter.Leveled;fp_rate=0.01}", {"sstfilter.Leveled", "not fp_rate"}},
      {"sstfilter.Leveled", {"needs bits_per_key"}},
      {"{id=sstfilter.Leveled;bits_per_key=10;size_ratio=1}", {"size_ratio must be in (1, 1000]"}},
      {"{id=sstfilter.Leveled;bits_per_key=10;num_levels=-2}", {"num_levels must be in [0, 64]"}},
  };
  for (const Case& c : cases) {
    std::shared_ptr<const FilterPolicy> policy;
    const Status s = NewFilterPolicy(c.uri, &policy);
    EXPECT_FALSE(s.ok()) << c.uri;
    // InvalidArgument for bad values; NotSupported for an unknown policy name; NotFound (RocksDB's
    // own) for an unknown option.
    EXPECT_TRUE(s.IsInvalidArgument() || s.IsNotSupported() || s.IsNotFound())
        << c.uri << ": " << s.ToString();
    for (const std::string& part : c.message_parts) {
      EXPECT_NE(s.ToString().find(part), std::string::npos)
          << c.uri << ": '" << s.ToString() << "' lacks '" << part << "'";
    }
  }
}

// RocksDB 7.8's ribbonfilter factory parses its level argument with std::stoi, which throws on a
// value beyond int: NewFilterPolicy answers with a Status, never an exception (the options
// fuzzer's finding; the input is in tests/fuzz/corpus/options/). Other versions may accept it.
// The "<name>:<number>" form of every policy is parsed and validated as its bits_per_key option
// is, whatever the text: RocksDB's own number pattern would refuse "1e308" or "nan" before any
// factory runs, with a bare "Could not load FilterPolicy".
TEST(Policy, TheNumberAfterTheNameIsParsedAsTheOptionIs) {
  for (const std::string& name : PolicyNames()) {
    for (const std::string number : {"nan", "-inf", "", "10x", "0x", " "}) {
      std::shared_ptr<const FilterPolicy> policy;
      const Status s = NewFilterPolicy(name + ":" + number, &policy);
      EXPECT_TRUE(s.IsInvalidArgument()) << name << ":" << number << ": " << s.ToString();
      EXPECT_NE(
          s.ToString().find(name + ": bits_per_key must be a finite number, got '" + number + "'"),
          std::string::npos)
          << s.ToString();
    }
    for (const std::string number : {"1e308", "-5", "0", "1e-300"}) {
      std::shared_ptr<const FilterPolicy> policy;
      const Status s = NewFilterPolicy(name + ":" + number, &policy);
      EXPECT_TRUE(s.IsInvalidArgument()) << name << ":" << number << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(name), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find("bits_per_key must be in [0.01, 100]"), std::string::npos)
          << s.ToString();
    }
    std::shared_ptr<const FilterPolicy> policy;
    EXPECT_TRUE(NewFilterPolicy(name + ":1e1", &policy).ok()) << name;  // 10, as RocksDB reads it
  }
}

TEST(Policy, RocksDbFactoriesThatThrowGiveAStatus) {
  for (const std::string uri :
       {"ribbonfilter:8:0000009999999999", "ribbonfilter:99999999999999", "bloomfilter:1e999"}) {
    std::shared_ptr<const FilterPolicy> policy;
    Status s;
    EXPECT_NO_THROW(s = NewFilterPolicy(uri, &policy)) << uri;
    if (!s.ok()) {
      EXPECT_TRUE(s.IsInvalidArgument() || s.IsNotSupported() || s.IsNotFound()) << s.ToString();
      EXPECT_NE(s.ToString().find(uri), std::string::npos) << s.ToString();
      EXPECT_EQ(policy, nullptr) << uri;
    }
  }
}

TEST(Policy, SerialisedOptionsRecreateAnEqualPolicy) {
  for (const char* uri :
       {"sstfilter.Bloom:10", "{id=sstfilter.Bloom;fp_rate=0.001;layout=standard}",
        "{id=sstfilter.Cuckoo;fp_rate=0.001}", "sstfilter.Cuckoo:12.5",
        "{id=sstfilter.Leveled;bits_per_key=8;size_ratio=4;num_levels=5}", "sstfilter.Fuse:8",
        "{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.Ribbon:8",
        "{id=sstfilter.Ribbon;fp_rate=0.001}"}) {
    BlockBasedTableOptions options;
    options.filter_policy = PolicyFrom(uri);
    ConfigOptions config;
    std::string serialised;
    std::unique_ptr<ROCKSDB_NAMESPACE::TableFactory> factory(
        ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(options));
    ASSERT_TRUE(factory->GetOptionString(config, &serialised).ok());
    const size_t at = serialised.find("filter_policy=");
    ASSERT_NE(at, std::string::npos) << serialised;
    // filter_policy={id=...;...}: the policy's own string, braces included.
    const size_t open = at + std::string("filter_policy=").size();
    ASSERT_EQ(serialised[open], '{') << serialised;
    const std::string text = serialised.substr(open, serialised.find('}', open) - open + 1);
    EXPECT_EQ(text.find("nan"), std::string::npos) << text;  // an unset option is left out
    const auto again = PolicyFrom(text);
    ASSERT_NE(again, nullptr) << text;
    EXPECT_STREQ(again->Name(), options.filter_policy->Name());
    EXPECT_EQ(SpecOf(*again).ToString(), SpecOf(*options.filter_policy).ToString())
        << uri << " -> " << text;
    std::string mismatch;
    EXPECT_TRUE(again->AreEquivalent(config, options.filter_policy.get(), &mismatch)) << mismatch;
  }
}

// The librocksdb that the tests run against is the version whose headers they were built with
// (a library found first on another path would test the wrong interface layout), and one that
// compat/filter_bits_interface.h declares.
TEST(RocksDb, TheLoadedLibraryIsTheVersionOfTheHeaders) {
  const std::string headers = std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) +
                              "." + std::to_string(ROCKSDB_PATCH);
  EXPECT_EQ(ROCKSDB_NAMESPACE::GetRocksVersionAsString(/*with_patch=*/true), headers);
  printf("[ figures  ] RocksDB %s, FilterBitsBuilder with AddKeyAndAlt: %s, CalculateSpace: %s\n",
         headers.c_str(), SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT ? "yes" : "no",
         SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE ? "yes" : "no");
}

TEST(Policy, RegistrationIsIdempotent) {
  EXPECT_EQ(sstfilter_register(*ROCKSDB_NAMESPACE::ObjectLibrary::Default(), ""), 0);
  auto library = std::make_shared<ROCKSDB_NAMESPACE::ObjectLibrary>("test");
  EXPECT_EQ(sstfilter_register(*library, ""), 8);  // five policies, the partitioner, the listener,
                                                   // the range filter collector
  EXPECT_EQ(sstfilter_register(*library, ""), 0);
}

class BuilderTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<FilterBitsBuilder> NewBuilder(bool verify = false) {
    options_.filter_policy = PolicyFrom(GetParam());
    options_.detect_filter_construct_corruption = verify;
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
  const bool ribbon = name == kRibbonPolicyName || name == kLeveledPolicyName;
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
  std::fill(zeroed.begin(), zeroed.end() - kTrailerBytes, '\0');  // every key now missing
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
  EXPECT_STREQ(options.filter_policy->CompatibilityName(), "sstfilter");
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
  // A universal tree's files take one filter, never a draw between two: the richer of the
  // budget's if within 2% of it, else the leaner (here the richer is 10.64 bits/key).
  const LevelFilter one_level = leveled.Allocation(1, keys.size()).value()[0];
  const FilterChoice& unmixed =
      one_level.upper_fraction > 0 && one_level.upper.bits_per_key > 1.02 * 10
          ? one_level.base
          : one_level.Largest();
  EXPECT_NEAR(bits_per_key_at(2, ROCKSDB_NAMESPACE::kCompactionStyleUniversal),
              8.0 * FilterBytes(unmixed.spec, keys.size()).value() / keys.size(), 1e-9);
  EXPECT_LE(bits_per_key_at(2, ROCKSDB_NAMESPACE::kCompactionStyleUniversal), 1.02 * 10);
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

// A logger that writes nothing: a database's identity in the listener's accounts.
class SilentLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  using ROCKSDB_NAMESPACE::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// With the sstfilter.LeveledBudget listener's accounts of a tree, a file gets its level's filter
// in the allocation over the tree's real shares, for the probes each level receives: an upper
// level of a random tree (every lookup probes every level) gets Monkey's rich filter; the same
// level of an ordered tree (each level probed for its own keys only) the budget's, like the last
// level.
TEST(LeveledPolicy, AllocatesForTheProbesEachLevelReceives) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  SilentLogger logger;
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
    Ledger::Global().Publish(LoggerTree(&logger, column_family), alive, accounts);
    FilterBuildingContext context(options);
    context.num_levels = 7;
    context.level_at_creation = level;
    context.info_log = &logger;
    context.column_family_name = column_family;
    std::unique_ptr<FilterBitsBuilder> builder(
        options.filter_policy->GetBuilderWithContext(context));
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

// The lookup heat of a key range (HeatOf): ten files of level 4, one of which takes 100 times
// the probes per key of the others. The hot file's probes per key are 1 / 0.109 of the level's,
// 9.17; each cold one's 0.0917, held at a quarter; their key-weighted geometric mean is
// 9.17^0.1 x 0.25^0.9 = 0.358, so the hot range is 25.6 times as hot as the level's mean and a
// cold one 0.70 times. A range that meets the hot file and a cold one counts both.
TEST(LeveledPolicy, HeatOfAKeyRangeIsItsFilesProbesPerKeyOverTheLevels) {
  auto name = [](int i) { return testing::NumberedKey(i, /*digits=*/8); };
  std::vector<FileHeat> files;
  for (int f = 0; f < 10; ++f) {
    files.push_back(
        {4, 10'000, f == 0 ? 10'000.0 : 100.0, name(f * 10'000), name(f * 10'000 + 9'999)});
  }
  files.push_back({5, 50'000, 1e6, name(0), name(99'999)});  // another level: no part in level 4's
  auto heat_of = [&](int first, int last, int level = 4) {
    KeyRange range;
    range.Add(name(first));
    range.Add(name(last));
    return HeatOf(files, level, range);
  };
  const double mean = std::pow(10'000 / 10'900.0 * 10, 0.1) * std::pow(0.25, 0.9);
  EXPECT_NEAR(heat_of(0, 4'999), (10'000 / 10'900.0 * 10) / mean, 1e-9);
  EXPECT_NEAR(heat_of(50'000, 54'999), 0.25 / mean, 1e-9);
  EXPECT_NEAR(heat_of(5'000, 14'999), (10'100 / 20'000.0) / (10'900 / 100'000.0) / mean, 1e-9);
  EXPECT_EQ(heat_of(200'000, 300'000), 1) << "meets no file";
  EXPECT_EQ(heat_of(0, 4'999, 3), 1) << "a level with no counted files";
  // A small file far hotter than its level (a file can be at most its level's keys over its own
  // keys hotter than the level) is held at kMaxHeat.
  files[0].keys = 100;
  files[0].sampled_probes = 1e9;
  const double held = std::exp((100 * std::log(kMaxHeat) + 90'000 * std::log(kMinHeat)) / 90'100);
  EXPECT_NEAR(heat_of(0, 4'999), kMaxHeat / held, 1e-9);
}

// With the readers' counts per file, a file of the hot range gets more bits than its level's
// filter without counts: about log2(25.6) = 4.7 halvings of the rate, at 0.9 of the counts'
// weight (one file's draw on a level that mixes two filters moves it by a bit either way).
TEST(LeveledPolicy, GivesHotKeyRangesMoreBits) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("sstfilter.Leveled:10");
  SilentLogger logger;
  const auto alive = std::make_shared<int>();
  auto name = [](int i) { return testing::NumberedKey(i, /*digits=*/8); };
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
      auto heat = std::make_shared<std::vector<FileHeat>>();
      for (int f = 0; f < 10; ++f) {
        heat->push_back(
            {4, 10'000, f == 0 ? 10'000.0 : 100.0, name(f * 10'000), name(f * 10'000 + 9'999)});
      }
      accounts.heat = heat;
      accounts.counted_weight = 0.9;
    }
    Ledger::Global().Publish(LoggerTree(&logger, column_family), alive, accounts);
    FilterBuildingContext context(options);
    context.num_levels = 7;
    context.level_at_creation = 4;
    context.info_log = &logger;
    context.column_family_name = column_family;
    std::unique_ptr<FilterBitsBuilder> builder(
        options.filter_policy->GetBuilderWithContext(context));
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

// On the level whose budget falls between two filters, each file takes one of them, drawn from
// its keys: the same keys in another order get the same choice, and the share of
// files that take the larger one is the allocation's fraction (within a 5-sigma binomial bound).
TEST(LeveledPolicy, AMixedLevelsFilesDrawTheirFilterFromTheirKeys) {
  BlockBasedTableOptions options;
  options.filter_policy = PolicyFrom("{id=sstfilter.Leveled;bits_per_key=10;num_levels=5}");
  ASSERT_NE(options.filter_policy, nullptr);
  const auto& leveled = dynamic_cast<const LeveledPolicy&>(*options.filter_policy);
  constexpr int kKeys = 2000;
  const std::vector<LevelFilter> allocation = leveled.Allocation(5, kKeys).value();
  int mixed = -1;
  for (int level = 0; level < 5; ++level) {
    if (allocation[level].upper_fraction > 0) mixed = level;
  }
  ASSERT_GE(mixed, 0) << "10 bits/key over 5 levels of 2,000-key files falls between filters";
  const LevelFilter& level = allocation[mixed];
  // The larger filter, by size (a cuckoo build may take a few more buckets than FilterBytes).
  const uint64_t upper_bytes = FilterBytes(level.upper.spec, kKeys).value();
  const uint64_t base_bytes = FilterBytes(level.base.spec, kKeys).value();
  ASSERT_GT(upper_bytes, base_bytes);
  auto TrailerOf = [](const std::string& filter) {
    return FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size())
        .trailer();
  };
  auto build = [&](const std::vector<std::string>& keys) {
    std::unique_ptr<FilterBitsBuilder> builder = BuilderAtLevel(options, mixed);
    for (const std::string& k : keys) builder->AddKey(k);
    std::unique_ptr<const char[]> buf;
    const Slice filter = builder->Finish(&buf);
    return filter.ToString();
  };
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

INSTANTIATE_TEST_SUITE_P(AllPolicies, BuilderTest,
                         ::testing::ValuesIn(testing::EveryPolicy({"sstfilter.Cuckoo:24",
                                                                   "sstfilter.Ribbon:10"})));

}  // namespace
}  // namespace sstfilter

namespace sstfilter {
namespace {

// A logger that keeps what it is given, with its level.
class RecordingLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  RecordingLogger() : ROCKSDB_NAMESPACE::Logger(ROCKSDB_NAMESPACE::InfoLogLevel::DEBUG_LEVEL) {}
  void Logv(const char* format, va_list ap) override {
    Logv(ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const ROCKSDB_NAMESPACE::InfoLogLevel level, const char* format, va_list ap) override {
    char line[2048];
    vsnprintf(line, sizeof(line), format, ap);
    lines.emplace_back(level, line);
  }
  std::vector<std::pair<ROCKSDB_NAMESPACE::InfoLogLevel, std::string>> lines;
};

// The shards of the block cache that holds filters whole, as RocksDB's caches print them: an LRU
// cache of 32 MiB has 64 shards of 512 KiB; one told its shard count has that many; filters held
// by the table reader, or partitioned, are not held whole by any.
TEST(BlockCacheFit, ShardsOfTheCacheThatHoldsWholeFilters) {
  BlockBasedTableOptions table;
  table.cache_index_and_filter_blocks = true;
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
  CacheShards shards = ShardsHoldingWholeFilters(table);
  EXPECT_EQ(shards.shards, 64u);
  EXPECT_EQ(shards.ShardBytes(), 512u << 10);
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20, /*num_shard_bits=*/2);
  EXPECT_EQ(ShardsHoldingWholeFilters(table).ShardBytes(), 8u << 20);
  table.partition_filters = true;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.partition_filters = false;
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kAll;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kFallback;
  table.cache_index_and_filter_blocks = false;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);

  // At most 1/8 of a shard fits; more is warned about, with the cache's figures and the remedy.
  EXPECT_EQ(FilterBlockWarning(64 << 10, shards), "");
  const std::string warning = FilterBlockWarning((64 << 10) + 1, shards);
  EXPECT_NE(warning.find("a filter block of 64 KiB"), std::string::npos) << warning;
  EXPECT_NE(warning.find("512 KiB: 32 MiB in 64 shards"), std::string::npos) << warning;
  EXPECT_NE(warning.find("partition_filters=true"), std::string::npos) << warning;
  EXPECT_NE(warning.find("unpartitioned_pinning=kAll"), std::string::npos) << warning;
  EXPECT_EQ(FilterBlockWarning(1 << 30, CacheShards{}), "");  // a cache that does not say
}

// Every sstfilter policy's builder reports a filter it writes that will be a block too large for
// its cache's shards, once per file; the policy logs a warning for the first such file and every
// 64th; never when the filter is partitioned.
TEST(BlockCacheFit, BuildersWarnOfFilterBlocksTooLargeForTheirShards) {
  std::vector<std::string> keys;
  for (int i = 0; i < 100'000; ++i) keys.push_back(Key(i));  // about 120 KiB of filter
  for (const char* uri : {"sstfilter.Ribbon:10", "sstfilter.Bloom:10", "sstfilter.Leveled:10"}) {
    for (const bool partitioned : {false, true}) {
      SCOPED_TRACE(std::string(uri) + (partitioned ? ", partitioned" : ", whole"));
      BlockBasedTableOptions table;
      table.filter_policy = PolicyFrom(uri);
      table.cache_index_and_filter_blocks = true;
      table.partition_filters = partitioned;
      table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
      RecordingLogger logger;
      FilterBuildingContext context(table);
      context.info_log = &logger;
      context.level_at_creation = 1;
      constexpr int kFiles = 66;
      for (int file = 0; file < kFiles; ++file) {
        std::unique_ptr<FilterBitsBuilder> builder(
            table.filter_policy->GetBuilderWithContext(context));
        ASSERT_NE(builder, nullptr);
        for (int round = 0; round < (file == 0 ? 2 : 1); ++round) {  // a second filter: no repeat
          for (const std::string& k : keys) builder->AddKey(k);
          std::unique_ptr<const char[]> buf;
          ASSERT_GT(builder->Finish(&buf).size(), 64u << 10);
        }
      }
      std::vector<std::string> warnings;
      for (const auto& [level, line] : logger.lines) {
        if (line.find("a filter block of") == std::string::npos) continue;
        warnings.push_back(line);
        EXPECT_EQ(level, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL);
      }
      if (partitioned) {
        EXPECT_TRUE(warnings.empty());
      } else {
        ASSERT_EQ(warnings.size(), 2u);  // files 1 and 65
        EXPECT_NE(warnings[0].find("1 such file(s) so far, logged every 64"), std::string::npos)
            << warnings[0];
        EXPECT_NE(warnings[1].find("65 such file(s) so far"), std::string::npos) << warnings[1];
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
