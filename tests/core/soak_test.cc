// SPDX-License-Identifier: Apache-2.0
// Membership at scale: filters of every kind, at sizes from 1 to 10M keys and at several widths,
// built from many key sets, and every added key checked by single and batched queries. CI runs
// one pass up to 100k keys; scripts/soak.sh sets SSTFILTER_SOAK_MEMBERSHIP_CHECKS (1e9 for the
// reliability report) and the sizes go up to 10M, with new key sets until that many checks ran.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

// Each kind at the extremes of its parameters and in between: the Bloom kinds at 2, 10 and 23
// bits/key, the cuckoo filter plain (4-bit fingerprints) and semi-sorted (8, 13, 32 bits), the
// fuse, Ribbon and bumped Ribbon filters at 1, 8 and 32 bits.
std::vector<FilterSpec> SoakSpecs() {
  std::vector<FilterSpec> specs;
  for (const double bits : {2.0, 10.0, 23.0}) {
    specs.push_back(SpecForBitsPerKey<BlockedBloom>(bits).value());
    specs.push_back(SpecForBitsPerKey<StandardBloom>(bits).value());
  }
  for (const int width : {4, 8, 13, 32}) specs.push_back(FilterSpec(CuckooParams{width}));
  for (const int width : {1, 8, 32}) specs.push_back(FilterSpec(FuseParams{width}));
  for (const int width : {1, 8, 32}) specs.push_back(FilterSpec(RibbonParams{width}));
  for (const int width : {1, 8, 32}) specs.push_back(FilterSpec(BumpedRibbonParams{width}));
  return specs;
}

TEST(Soak, EveryAddedKeyMatchesAtEverySizeAndWidth) {
  const uint64_t target_checks = testing::SoakKnob("SSTFILTER_SOAK_MEMBERSHIP_CHECKS", 0);
  const uint64_t max_keys = target_checks == 0 ? 100'000 : 10'000'000;
  std::vector<uint64_t> sizes;
  for (uint64_t n = 1; n <= max_keys; n *= 10) {
    sizes.push_back(n);
    if (n * 3 <= max_keys) sizes.push_back(n * 3);
  }
  const std::vector<FilterSpec> specs = SoakSpecs();
  uint64_t checks = 0, false_negatives = 0, filters = 0, pass = 0;
  do {
    for (size_t s = 0; s < sizes.size(); ++s) {
      // Disjoint key sets for every (pass, size), and so different tables and seeds.
      const std::vector<uint64_t> keys = testing::KeyHashes(1'000'000 + pass * 64 + s, sizes[s]);
      for (const FilterSpec& spec : specs) {
        const auto built = BuildFilter(spec, keys.data(), keys.size());
        ASSERT_TRUE(built.ok()) << spec.ToString() << " over " << keys.size() << " keys";
        const std::string& bytes = built.value();
        const FilterReader reader = testing::ReaderOf(bytes);
        // A filter its own reader does not understand would answer "may match" to everything
        // and pass this test without testing anything.
        ASSERT_TRUE(reader.valid()) << spec.ToString() << " over " << keys.size() << " keys";
        uint64_t missed = 0;
        bool answers[256];
        for (size_t i = 0; i < keys.size(); i += 256) {
          const size_t n = keys.size() - i < 256 ? keys.size() - i : 256;
          reader.MayContainBatch(&keys[i], n, answers);
          for (size_t j = 0; j < n; ++j) missed += !answers[j] + !reader.MayContain(keys[i + j]);
        }
        EXPECT_EQ(missed, 0u) << spec.ToString() << " over " << keys.size() << " keys, pass "
                              << pass;
        false_negatives += missed;
        checks += 2 * keys.size();
        ++filters;
      }
    }
    ++pass;
  } while (checks < target_checks && false_negatives == 0);
  std::printf(
      "[ figures  ] %llu membership checks (single and batched) over %llu filters of %zu specs, "
      "1 to %llu keys, %llu passes: %llu false negatives\n",
      static_cast<unsigned long long>(checks), static_cast<unsigned long long>(filters),
      specs.size(), static_cast<unsigned long long>(max_keys),
      static_cast<unsigned long long>(pass), static_cast<unsigned long long>(false_negatives));
}

}  // namespace
}  // namespace sstfilter
