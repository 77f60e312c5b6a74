// SPDX-License-Identifier: Apache-2.0
// What every filter kind promises through its FilterSpec (core/kinds.h, core/filter_spec.h),
// checked for all kinds at once; each kind's own behaviour is in its *_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/batch.h"
#include "core/bumped_ribbon/math.h"
#include "core/filter_spec.h"
#include "core/ribbon/math.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::KeyHashes;
using testing::OneSpecOfEachKind;
using testing::ReaderOf;

// A filter of no keys is the 32-byte trailer of its kind, and answers no for every key.
TEST(Kinds, ZeroKeysAnswerNo) {
  for (const FilterSpec& spec : OneSpecOfEachKind()) {
    const Result<std::string> bytes = BuildFilter(spec, nullptr, 0);
    ASSERT_TRUE(bytes.ok()) << spec.ToString() << ": " << bytes.error();
    EXPECT_EQ(bytes.value().size(), kTrailerBytes) << spec.ToString();
    const FilterReader reader = ReaderOf(bytes.value());
    EXPECT_TRUE(reader.Holds<MatchNoneReader>()) << spec.ToString();
    EXPECT_EQ(reader.trailer().kind, spec.kind()) << spec.ToString();
    for (uint64_t h : KeyHashes(3, 1000)) EXPECT_FALSE(reader.MayContain(h)) << spec.ToString();
  }
}

// Every kind's MaxKeysForBytes inverts its FilterBytes, from no bytes to 64 MiB: the n it gives
// fits (once the trailer does) and n + 1 does not, which is what RocksDB's ApproximateNumEntries
// needs to cut partitions no larger than asked; and a built filter has the size FilterBytes
// announced. Budgets of the fuse and Ribbon kinds too, whose size is not monotone (core/sizing.h).
TEST(Kinds, MaxKeysForBytesInvertsFilterBytes) {
  std::vector<FilterSpec> specs;
  for (double bits_per_key : {1.0, 7.3, 10.0, 16.0}) {
    specs.push_back(SpecForBitsPerKey<BlockedBloom>(bits_per_key).value());
    specs.push_back(SpecForBitsPerKey<StandardBloom>(bits_per_key).value());
  }
  for (int f : {4, 12, 13, 32}) specs.push_back(CuckooParams{f});
  for (int w : {1, 7, 10, 32}) {
    specs.push_back(FuseParams{w});
    specs.push_back(RibbonParams{w});
  }
  for (double budget : {4.0, 10.0}) {
    specs.push_back(SpecForBitsPerKey<Fuse>(budget).value());
    specs.push_back(SpecForBitsPerKey<Ribbon>(budget).value());
  }
  const std::vector<uint64_t> keys = KeyHashes(62, 12345);
  for (const FilterSpec& spec : specs) {
    const std::string what = spec.ToString();
    EXPECT_EQ(FilterBytes(spec, 0).value(), kTrailerBytes) << what;
    for (uint64_t bytes : {0u, 31u, 32u, 33u, 40u, 97u, 1000u, 4096u, 1u << 20, 1u << 26}) {
      const uint64_t n = MaxKeysForBytes(spec, bytes);
      if (bytes >= kTrailerBytes) {
        EXPECT_LE(FilterBytes(spec, n).value(), bytes) << what;
      }
      EXPECT_GT(FilterBytes(spec, n + 1).value(), bytes) << what << ", " << bytes << " bytes";
    }
    const Result<std::string> built = BuildFilter(spec, keys.data(), keys.size());
    ASSERT_TRUE(built.ok()) << what << ": " << built.error();
    EXPECT_EQ(built.value().size(), FilterBytes(spec, keys.size()).value()) << what;
  }
}

// Present and absent keys in turn, present first.
std::vector<uint64_t> Alternating(const std::vector<uint64_t>& present,
                                  const std::vector<uint64_t>& absent) {
  std::vector<uint64_t> queries;
  for (size_t i = 0; i < present.size() && i < absent.size(); ++i) {
    queries.push_back(present[i]);
    queries.push_back(absent[i]);
  }
  return queries;
}

// Runs `queries` (present keys at even indexes) through batch(keys, n, may_match, prefetch) in
// batches of 1 to 70 keys, which cross the 32-key passes: each answer is reader.MayContain's,
// whether the batch prefetched or the caller did (reader.Prefetch on each key first), and every
// present key matches. Stops at the first wrong answer.
template <typename Reader, typename Batch>
void ExpectBatchesAnswerAsSingleQueries(const Reader& reader, const std::vector<uint64_t>& queries,
                                        Batch&& batch, const std::string& what) {
  bool in_batch[70];
  bool by_caller[70];
  size_t start = 0;
  for (size_t n = 1; start + n <= queries.size(); start += n, n = n % 70 + 1) {
    const uint64_t* keys = queries.data() + start;
    batch(keys, n, in_batch, BatchPrefetch::kInBatch);
    for (size_t i = 0; i < n; ++i) reader.Prefetch(keys[i]);
    batch(keys, n, by_caller, BatchPrefetch::kByCaller);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(in_batch[i], reader.MayContain(keys[i])) << what << ", key " << i;
      ASSERT_EQ(by_caller[i], in_batch[i]) << what << ", key " << i;
      if ((start + i) % 2 == 0) {
        ASSERT_TRUE(in_batch[i]) << what << ", key " << i;
      }
    }
  }
}

// A batch answers as single queries do, whoever prefetched (BatchPrefetch, core/batch.h): the
// batch's own pass, or the caller's Reader::Prefetch as it hashed each key (the plugin's way).
// Batches of 1 to 70 keys cross the 32-key passes; present keys must all match. Every kind, the
// cuckoo filter in both layouts (4-bit fingerprints stay plain), and the blocked Bloom filter
// with its SIMD kernels and with its scalar twin. The Ribbon kinds' batches run with popcnt where
// the CPU has it (core/batch.h), their single queries without: 5,000 keys make their wrapped
// tables, 20,000 their tables of whole blocks (and the bumped kind's layers).
class KindsBatch : public ::testing::TestWithParam<size_t> {};

TEST_P(KindsBatch, AnswerAsSingleQueriesWhoeverPrefetches) {
  static_assert(5000 <= kBumpedRibbonAlwaysWrappedKeys && 20000 > kRibbonWrappedMaxKeys &&
                    20000 > kBumpedRibbonWrappedMaxKeys,
                "the sizes instantiated below must make both shapes of both Ribbon kinds");
  const std::vector<uint64_t> present = KeyHashes(71, GetParam());
  const std::vector<uint64_t> absent = KeyHashes(72, GetParam());
  std::vector<FilterSpec> specs = OneSpecOfEachKind();
  specs.push_back(CuckooParams{4});
  std::vector<std::pair<FilterSpec, bool>> runs;  // (spec, SIMD kernels on)
  for (const FilterSpec& spec : specs) runs.emplace_back(spec, true);
  runs.emplace_back(SpecForBitsPerKey<BlockedBloom>(10).value(), false);
  struct SimdBackOn {  // also when an assertion ends the test
    ~SimdBackOn() { SetBlockedBloomSimdEnabled(true); }
  } simd_back_on;
  for (const auto& [spec, simd] : runs) {
    SetBlockedBloomSimdEnabled(simd);
    const Result<std::string> bytes = BuildFilter(spec, present.data(), present.size());
    ASSERT_TRUE(bytes.ok()) << spec.ToString() << ": " << bytes.error();
    const FilterReader reader = ReaderOf(bytes.value());
    ASSERT_NO_FATAL_FAILURE(ExpectBatchesAnswerAsSingleQueries(
        reader, Alternating(present, absent),
        [&](const uint64_t* keys, size_t n, bool* out, BatchPrefetch prefetch) {
          reader.MayContainBatch(keys, n, out, prefetch);
        },
        spec.ToString()));
  }
}

// The baseline copy of the batches of the kinds with a popcnt copy (PopcntDispatch, core/batch.h):
// on a CPU with popcnt, MayContainBatch runs the other copy, so the test above never reaches it.
// Called here directly, it answers as the single queries, whoever prefetched.
TEST_P(KindsBatch, BaselineCopyAnswersAsSingleQueries) {
  const std::vector<uint64_t> present = KeyHashes(73, GetParam());
  const std::vector<uint64_t> queries = Alternating(present, KeyHashes(74, GetParam()));
  int kinds_checked = 0;
  for (const FilterSpec& spec : OneSpecOfEachKind()) {
    const Result<std::string> bytes = BuildFilter(spec, present.data(), present.size());
    ASSERT_TRUE(bytes.ok()) << spec.ToString() << ": " << bytes.error();
    const FilterReader filter = ReaderOf(bytes.value());
    Visit(filter.reader(), [&](const auto& reader) {
      if constexpr (kHasPopcntCopy<std::decay_t<decltype(reader)>>) {
        ++kinds_checked;
        ExpectBatchesAnswerAsSingleQueries(
            reader, queries,
            [&](const uint64_t* keys, size_t n, bool* out, BatchPrefetch prefetch) {
              PopcntDispatch::WithoutPopcnt(reader, keys, n, out, prefetch);
            },
            spec.ToString());
      }
    });
  }
  EXPECT_EQ(kinds_checked, 2);  // Ribbon and bumped Ribbon
}

INSTANTIATE_TEST_SUITE_P(WrappedAndWhole, KindsBatch, ::testing::Values(5000, 20000));

}  // namespace
}  // namespace sstfilter
