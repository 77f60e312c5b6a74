#include "core/fuse/fuse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/fuse/math.h"
#include "core/sizing.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::BinomialTolerance;
using testing::KeyHashes;
using testing::ReaderOf;

struct Built {
  std::string bytes;
  FuseBuildInfo info;
};

Built Build(int fingerprint_bits, const std::vector<uint64_t>& hashes,
            int max_attempts = kFuseMaxAttempts) {
  Built b;
  const Result<FuseBuildInfo> r = BuildFuseFilter(FuseParams{fingerprint_bits}, hashes.data(),
                                                  hashes.size(), &b.bytes, max_attempts);
  EXPECT_TRUE(r.ok()) << r.error();
  if (r.ok()) b.info = r.value();
  return b;
}

// Every key found, by the single and the batched query.
void ExpectAllFound(const std::string& bytes, const std::vector<uint64_t>& keys,
                    const std::string& what) {
  const FilterReader reader = ReaderOf(bytes);
  ASSERT_TRUE(reader.valid()) << what;
  EXPECT_EQ(testing::CountMissing(reader, keys), 0u) << what;
}

TEST(Fuse, NoFalseNegativesForEveryWidthAndSize) {
  for (int w : {1, 2, 4, 7, 8, 10, 13, 16, 24, 31, 32}) {
    for (uint64_t n : {1u, 2u, 3u, 4u, 7u, 64u, 100u, 999u, 1000u, 4097u, 11521u, 100'000u}) {
      const std::vector<uint64_t> keys = KeyHashes(w * 1000 + n, n);
      const Built b = Build(w, keys);
      EXPECT_FALSE(b.info.fell_back) << "w=" << w << " n=" << n;
      ExpectAllFound(b.bytes, keys, "w=" + std::to_string(w) + " n=" + std::to_string(n));
      EXPECT_TRUE(ReaderOf(b.bytes).Holds<FuseReader>());
      EXPECT_EQ(ReaderOf(b.bytes).trailer().num_keys, n);
    }
  }
}

TEST(Fuse, NoFalseNegativesAtOneMillionKeys) {
  const std::vector<uint64_t> keys = KeyHashes(71, 1'000'000);
  for (int w : {7, 10, 16}) ExpectAllFound(Build(w, keys).bytes, keys, std::to_string(w));
}

// The measured rate of absent keys matches 2^-w within a 5-sigma binomial bound.
TEST(Fuse, MeasuredFalsePositiveRateIsTwoToTheMinusW) {
  constexpr uint64_t kKeys = 1'000'000;
  constexpr uint64_t kQueries = 2'000'000;
  const std::vector<uint64_t> keys = KeyHashes(72, kKeys);
  const std::vector<uint64_t> absent = KeyHashes(73, kQueries);
  for (int w : {1, 4, 7, 10, 13}) {
    const Built b = Build(w, keys);
    const FilterReader reader = ReaderOf(b.bytes);
    uint64_t hits = 0;
    for (uint64_t h : absent) hits += reader.MayContain(h);
    const double p = Fuse::EstimatedFpRate(FuseParams{w}, kKeys).value();
    EXPECT_NEAR(static_cast<double>(hits), p * kQueries, BinomialTolerance(kQueries, p))
        << "w=" << w << ": measured " << static_cast<double>(hits) / kQueries;
  }
}

// RocksDB hands over sorted keys that may repeat (and prefixes repeat between whole keys):
// repeated hashes, consecutive or not, are stored once and the bytes equal the deduplicated
// build's, whatever the order.
TEST(Fuse, RepeatedHashesAnyOrderGiveTheSameBytes) {
  const std::vector<uint64_t> keys = KeyHashes(74, 50'000);
  std::vector<uint64_t> messy;
  for (int copy = 0; copy < 3; ++copy) messy.insert(messy.end(), keys.begin(), keys.end());
  std::mt19937_64 rng(75);
  std::shuffle(messy.begin(), messy.end(), rng);
  const Built once = Build(9, keys);
  std::vector<uint64_t> shuffled = keys;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  EXPECT_EQ(Build(9, shuffled).bytes, once.bytes);
  const Built repeated = Build(9, messy);
  EXPECT_EQ(repeated.bytes, once.bytes);
  EXPECT_EQ(repeated.info.stored, keys.size());
  EXPECT_EQ(ReaderOf(repeated.bytes).trailer().num_keys, keys.size());
  // Millions of copies of a handful of keys.
  std::vector<uint64_t> few(2'000'000);
  for (size_t i = 0; i < few.size(); ++i) few[i] = keys[i % 5];
  const Built tiny = Build(9, few);
  EXPECT_FALSE(tiny.info.fell_back);
  EXPECT_EQ(tiny.info.stored, 5u);
  ExpectAllFound(tiny.bytes, {keys.begin(), keys.begin() + 5}, "five keys");
}

TEST(Fuse, FailedPeelsFallBackToABlockedBloomFilterOfTheSameSize) {
  const std::vector<uint64_t> keys = KeyHashes(76, 20'000);
  const Built normal = Build(8, keys);
  const Built fallback = Build(8, keys, /*max_attempts=*/0);
  EXPECT_TRUE(fallback.info.fell_back);
  EXPECT_TRUE(ReaderOf(fallback.bytes).Holds<BlockedBloomReader>());
  ExpectAllFound(fallback.bytes, keys, "fallback");
  // About the same memory: whole 64-byte blocks of the fuse table's bits.
  EXPECT_LE(fallback.bytes.size(), normal.bytes.size() + 64);
  EXPECT_GE(fallback.bytes.size(), normal.bytes.size() - 64);
}

// Sizes across the doublings of the segment length, where peeling is hardest: every size builds
// within a few seeds and none falls back. Prints the figures the attempt limit was chosen from.
TEST(Fuse, EverySizeBuildsWithinAFewSeeds) {
  int worst = 0;
  uint64_t total = 0, builds = 0;
  for (uint64_t n = 1; n < 40'000; n = n < 64 ? n + 1 : n + n / 37) {
    const Built b = Build(8, KeyHashes(77 + n, n));
    ASSERT_FALSE(b.info.fell_back) << n;
    worst = std::max(worst, b.info.attempts);
    total += b.info.attempts;
    ++builds;
  }
  EXPECT_LE(worst, kFuseMaxAttempts / 2);
  printf("[ figures  ] %llu sizes from 1 to 40000 keys: %.2f seeds on average, at most %d\n",
         static_cast<unsigned long long>(builds), static_cast<double>(total) / builds, worst);
}

// The table's size against the information limit, as the shape formulas promise: 4-wise from
// kFuse4MinKeys keys, the large-set factor 1.075 reached at a million keys.
TEST(Fuse, ShapeFollowsTheSizeFactors) {
  for (uint64_t n : {1u, 2u, 10u, 999u, 1000u, 100'000u, 1'000'000u, 10'000'000u}) {
    const FuseShape s = FuseShapeFor(n).value();
    EXPECT_EQ(s.arity, n >= kFuse4MinKeys ? 4 : 3) << n;
    EXPECT_EQ(s.num_cells, (s.segment_count + s.arity - 1) * s.segment_length()) << n;
    EXPECT_GE(s.num_cells, n) << n;
    EXPECT_LE(s.segment_length_log2, kFuseMaxSegmentLengthLog2);
  }
  const double ratio_1m = static_cast<double>(FuseShapeFor(1'000'000).value().num_cells) / 1e6;
  EXPECT_NEAR(ratio_1m, kFuse4LargeSizeFactor, 0.01);
}

// The build's scratch memory is 13 bytes per cell (and one 4-byte spare queue slot): at most
// 13 * 1.4 bytes per key even for small sets (the largest size factor), about 14 at a million.
TEST(Fuse, ScratchMemoryIsBounded) {
  for (uint64_t n : {1000u, 100'000u, 1'000'000u}) {
    const Built b = Build(8, KeyHashes(79, n));
    const uint64_t cells = FuseShapeFor(n).value().num_cells;
    EXPECT_EQ(b.info.scratch_bytes, 13 * cells + 4) << n;
    EXPECT_LE(static_cast<double>(b.info.scratch_bytes - 4) / n, 13 * 1.4) << n;
    printf("[ figures  ] %llu keys: %.2f scratch bytes per key\n",
           static_cast<unsigned long long>(n), static_cast<double>(b.info.scratch_bytes) / n);
  }
}

// A budget of bits per key holds at every key count: the widest fingerprint whose cells fit.
TEST(Fuse, ABudgetPicksTheWidestFingerprintThatFitsEachFilter) {
  for (double budget : {4.0, 8.0, 10.0, 16.0}) {
    const FuseParams params = Fuse::ForBitsPerKey(budget).value();
    for (uint64_t n : {100u, 1000u, 25'000u, 1'000'000u}) {
      const uint64_t cells = FuseShapeFor(n).value().num_cells;
      const int w = Fuse::FingerprintBitsFor(params, n).value();
      EXPECT_LE(static_cast<double>(cells * w), budget * n) << budget << " " << n;
      EXPECT_GT(static_cast<double>(cells * (w + 1)), budget * n) << budget << " " << n;
      const Built b = [&] {
        Built out;
        out.info = BuildFuseFilter(params, KeyHashes(80, n).data(), n, &out.bytes).value();
        return out;
      }();
      EXPECT_EQ(ReaderOf(b.bytes).trailer().param, w);
      EXPECT_EQ(b.bytes.size(), Fuse::FilterBytes(params, n).value());
      EXPECT_EQ(Fuse::EstimatedFpRate(params, n).value(),
                Fuse::EstimatedFpRate(FuseParams{w}, n).value());
    }
  }
}

TEST(Fuse, RejectsBadParameters) {
  EXPECT_FALSE(Fuse::ForFpRate(0).ok());
  EXPECT_FALSE(Fuse::ForFpRate(1e-12).ok());  // needs 40 bits
  EXPECT_FALSE(Fuse::ForBitsPerKey(0.5).ok());
  EXPECT_EQ(Fuse::ForFpRate(0.01).value().fingerprint_bits, 7);
  EXPECT_EQ(Fuse::ForFpRate(0.001).value().fingerprint_bits, 10);
  EXPECT_EQ(Fuse::ForFpRate(0.5).value().fingerprint_bits, 1);
  EXPECT_EQ(Fuse::ForBitsPerKey(10).value().fingerprint_bits, 9);  // what 10 buys for large sets
  EXPECT_EQ(Fuse::ForBitsPerKey(10).value().bits_per_key, 10);
  std::string out;
  EXPECT_FALSE(BuildFuseFilter(FuseParams{0}, nullptr, 0, &out).ok());
  EXPECT_FALSE(BuildFuseFilter(FuseParams{33}, nullptr, 0, &out).ok());
  EXPECT_FALSE(Fuse::FilterBytes(FuseParams{33}, 10).ok());
}

}  // namespace
}  // namespace sstfilter
