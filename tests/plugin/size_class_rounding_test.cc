// SPDX-License-Identifier: Apache-2.0
// optimize_filters_for_memory (plugin/size_class_rounding.h): Bloom filters sized to fill the
// allocation their block lives in, never above the chosen filters' mean rate; other kinds as
// chosen; and through a policy's builder with the process's own malloc.
#include <gtest/gtest.h>
#include <rocksdb/table.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/hash.h"
#include "core/random.h"
#include "plugin/size_class_rounding.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

// jemalloc's size classes above 16 KiB: four per doubling (80, 96, 112, 128 KiB, ...).
uint64_t JemallocLikeClass(uint64_t bytes) {
  if (bytes <= 16384) return (bytes + 15) / 16 * 16;
  uint64_t power = 16384;
  while (power * 2 < bytes) power *= 2;
  const uint64_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

// Under an allocator of coarse classes, 400 filters of 20,000 to 200,000 keys: each block fills
// its class to within one unit of the kind, the mean rate is at most the chosen filters', and the
// classes charged are fewer bytes than the chosen filters'.
TEST(SizeClassRoundingTest, FillsCoarseClassesAtTheChosenMeanRate) {
  for (const FilterSpec& chosen : {SpecForBitsPerKey<BlockedBloom>(10).value(),
                                   SpecForBitsPerKey<StandardBloom>(10).value()}) {
    SCOPED_TRACE(chosen.ToString());
    SizeClassRounding rounding(JemallocLikeClass);
    const uint64_t unit =
        chosen.kind() == BlockedBloom::kId ? BlockedBloom::kUnitBytes : StandardBloom::kUnitBytes;
    uint64_t random = 7;
    double chosen_rates = 0, rates = 0;
    uint64_t chosen_charged = 0, charged = 0;
    for (int i = 0; i < 400; ++i) {
      const uint64_t n = 20'000 + SplitMix64(&random) % 180'000;
      const FilterSpec rounded = rounding.Round(chosen, n);
      ASSERT_EQ(rounded.kind(), chosen.kind());
      const uint64_t bytes = FilterBytes(rounded, n).value();
      const uint64_t block = bytes + kBlockTrailerBytes;
      EXPECT_LT(JemallocLikeClass(block) - block, unit) << n;  // no whole unit left over
      chosen_rates += EstimatedFpRate(chosen, n).value();
      rates += EstimatedFpRate(rounded, n).value();
      chosen_charged += JemallocLikeClass(FilterBytes(chosen, n).value() + kBlockTrailerBytes);
      charged += JemallocLikeClass(block);
    }
    EXPECT_LE(rates, chosen_rates * (1 + 1e-9));
    EXPECT_LE(rounding.Balance(), 0);
    EXPECT_LT(charged, chosen_charged);
    printf("[ figures  ] %s: charged %.4fx the chosen filters' classes, mean rate %.4fx\n",
           chosen.ToString().c_str(), static_cast<double>(charged) / chosen_charged,
           rates / chosen_rates);
  }
}

// Kinds whose size follows from their keys are built as chosen; so is every filter where the
// allocator rounds nothing.
TEST(SizeClassRoundingTest, LeavesOtherKindsAndExactAllocatorsAlone) {
  SizeClassRounding coarse(JemallocLikeClass);
  for (const FilterSpec& spec :
       {SpecForBitsPerKey<Fuse>(10).value(), SpecForBitsPerKey<BumpedRibbon>(10).value(),
        SpecForBitsPerKey<Cuckoo>(12).value()}) {
    EXPECT_EQ(coarse.Round(spec, 50'000).ToString(), spec.ToString());
  }
  SizeClassRounding exact([](uint64_t bytes) { return bytes; });
  const FilterSpec bloom = SpecForBitsPerKey<BlockedBloom>(10).value();
  for (uint64_t n : {1u, 1000u, 123'457u}) {
    EXPECT_EQ(FilterBytes(exact.Round(bloom, n), n).value(), FilterBytes(bloom, n).value()) << n;
  }
  EXPECT_EQ(exact.Balance(), 0);
}

// Through the policy's builder, with this process's malloc (glibc rounds a request to 16 bytes,
// or to 4 KiB pages where it maps it): a Bloom filter of 300,000 keys (375 KB) fills its
// allocation to within a block, holds every key, and is the builder's own size when the option is
// off.
TEST(SizeClassRoundingTest, ABuilderSizesItsBloomFilterToItsAllocation) {
  constexpr int kKeys = 300'000;
  for (const bool optimize : {false, true}) {
    ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
    table.filter_policy = testing::PolicyFrom("sstfilter.Bloom:10");
    table.optimize_filters_for_memory = optimize;
    auto builder = testing::NewBuilder(table);
    ASSERT_NE(builder, nullptr);
    std::vector<uint64_t> hashes;
    for (int i = 0; i < kKeys; ++i) {
      const std::string key = testing::NumberedKey(i, /*digits=*/0);
      builder->AddKey(key);
      hashes.push_back(KeyHash(key.data(), key.size()));
    }
    std::unique_ptr<const char[]> buf;
    ROCKSDB_NAMESPACE::Status s;
    const ROCKSDB_NAMESPACE::Slice filter = builder->Finish(&buf, &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const uint64_t nominal =
        FilterBytes(SpecForBitsPerKey<BlockedBloom>(10).value(), kKeys).value();
    const uint64_t block = filter.size() + kBlockTrailerBytes;
    if (optimize) {
      EXPECT_GE(filter.size(), nominal);  // a first filter: no surplus to round down with
      EXPECT_LT(SizeClassRounding::MallocUsableBytes(block) - block, BlockedBloom::kUnitBytes);
    } else {
      EXPECT_EQ(filter.size(), nominal);
    }
    const FilterReader reader =
        FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size());
    EXPECT_EQ(testing::CountMissing(reader, hashes), 0u);
    printf(
        "[ figures  ] optimize_filters_for_memory=%d: %zu bytes (the builder's own: %llu), "
        "usable %llu\n",
        optimize, filter.size(), static_cast<unsigned long long>(nominal),
        static_cast<unsigned long long>(SizeClassRounding::MallocUsableBytes(block)));
  }
}

}  // namespace
}  // namespace sstfilter
