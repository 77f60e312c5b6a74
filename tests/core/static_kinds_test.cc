// SPDX-License-Identifier: Apache-2.0
// The properties the kinds built by core/static_build.h share (binary fuse, Ribbon and bumped
// Ribbon), one typed suite over them: no false negatives at every width and size, measured rates,
// bytes that depend only on the set, the fallback, the seeds needed, bounded scratch memory,
// budgets, bad parameters and trailers no build writes. What only one kind has stays in
// fuse_test.cc, ribbon_test.cc and bumped_ribbon_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/filter_reader.h"
#include "core/fuse/fuse.h"
#include "core/parse.h"
#include "core/ribbon/ribbon.h"
#include "core/sizing.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::BinomialTolerance;
using testing::KeyHashes;
using testing::ReaderOf;

// What differs between the kinds, for the shared tests.
struct KindFacts {
  int max_attempts;
  uint64_t seed_base;  // added to the key sets' numbers, so each kind keeps its own sets
  // Whether every distinct hash is stored: Ribbon stores an equation unless the others implied
  // it (a dependent equation agrees with chance 2^-r, so narrow widths may store fewer).
  bool stores_every_distinct_key;
  uint64_t large_keys;  // the rate test's large filter
  // The sizes EverySizeBuildsWithinAFewSeeds sweeps (every size to `dense`, then steps of
  // 1/step), and the attempts any of them may take.
  uint64_t sweep_keys, sweep_dense, sweep_step;
  int sweep_worst_attempts;
  // Scratch: bytes per table unit, spare bytes, and the most units per key of any set size.
  uint64_t scratch_per_unit, scratch_spare;
  double max_units_per_key;
  int width_for_ten_bits_per_key;  // ForBitsPerKey(10): what 10 bits buy for large sets
};

template <typename Kind>
constexpr KindFacts kFacts = {};
// Fuse: 13 bytes per cell and a spare 4-byte queue slot, at most 1.4 cells per key.
template <>
constexpr KindFacts kFacts<Fuse> = {kFuseMaxAttempts,     0,  true, 1'000'000, 40'000, 64, 37,
                                    kFuseMaxAttempts / 2, 13, 4,    1.4,       9};
// Ribbon: 12 bytes per slot (coefficients and fingerprint), at most 1.13 slots per key; a
// wrapped table's build more (ScratchMemoryIsBounded).
template <>
constexpr KindFacts kFacts<Ribbon> = {kRibbonMaxAttempts,     100, false, 300'000, 300'000, 130, 19,
                                      kRibbonMaxAttempts / 4, 12,  0,     1.13,    8};

// Bumped Ribbon: every distinct key counted (those whose equations the others implied too);
// scratch per key, not per slot (its per-key sort: bumped_ribbon.cc), checked against a bound, or
// a wrapped table's for small sets; at most 1.13 slots per key (a standard Ribbon table's).
template <>
constexpr KindFacts kFacts<BumpedRibbon> = {
    kBumpedRibbonMaxAttempts,     200, true, 1'000'000, 300'000, 130, 19,
    kBumpedRibbonMaxAttempts / 4, 0,   0,    1.13,      9};

template <typename Kind>
class StaticKindTest : public ::testing::Test {
 protected:
  using Params = typename Kind::Params;
  static constexpr KindFacts kF = kFacts<Kind>;

  // Cells or slots for n keys.
  static uint64_t Units(uint64_t n) {
    if constexpr (std::is_same_v<Kind, Fuse>) {
      return FuseShapeFor(n).value().num_cells;
    } else if constexpr (std::is_same_v<Kind, BumpedRibbon>) {
      const BumpedRibbonTable t = BumpedRibbonTableFor(n).value();
      return t.wrapped ? t.wrapped_slots : t.shape.TotalSlots();
    } else {
      return RibbonTableFor(n).value().slots;
    }
  }

  struct Built {
    std::string bytes;
    StaticBuildInfo info;
  };

  static Built Build(const Params& params, const std::vector<uint64_t>& hashes,
                     int max_attempts = kF.max_attempts) {
    Built b;
    const Result<StaticBuildInfo> r =
        Kind::BuildWithInfo(params, hashes.data(), hashes.size(), &b.bytes, max_attempts);
    EXPECT_TRUE(r.ok()) << r.error();
    if (r.ok()) b.info = r.value();
    return b;
  }
  static Built Build(int fingerprint_bits, const std::vector<uint64_t>& hashes,
                     int max_attempts = kF.max_attempts) {
    return Build(Params{fingerprint_bits}, hashes, max_attempts);
  }
  static std::vector<uint64_t> Keys(uint64_t set, uint64_t n) {
    return KeyHashes(kF.seed_base + set, n);
  }

  // Every key found, by the single and the batched query.
  static void ExpectAllFound(const std::string& bytes, const std::vector<uint64_t>& keys,
                             const std::string& what) {
    const FilterReader reader = ReaderOf(bytes);
    ASSERT_TRUE(reader.valid()) << what;
    EXPECT_EQ(testing::CountMissing(reader, keys), 0u) << what;
  }
};

using StaticKinds = ::testing::Types<Fuse, Ribbon, BumpedRibbon>;
class KindNames {
 public:
  template <typename K>
  static std::string GetName(int) {
    return K::kName;
  }
};
TYPED_TEST_SUITE(StaticKindTest, StaticKinds, KindNames);

// Sizes around Ribbon's block boundaries (63, 64, 65 keys) and fuse's smallest tables, and up.
TYPED_TEST(StaticKindTest, NoFalseNegativesForEveryWidthAndSize) {
  constexpr KindFacts f = TestFixture::kF;
  for (int w : {1, 2, 4, 7, 8, 10, 13, 16, 24, 31, 32}) {
    for (uint64_t n :
         {1u, 2u, 3u, 4u, 7u, 63u, 64u, 65u, 100u, 999u, 1000u, 2000u, 4097u, 11521u, 100'000u}) {
      const std::vector<uint64_t> keys = KeyHashes(w * 1000 + n, n);
      const auto b = this->Build(w, keys);
      const std::string what = "w=" + std::to_string(w) + " n=" + std::to_string(n);
      EXPECT_FALSE(b.info.fell_back) << what;
      this->ExpectAllFound(b.bytes, keys, what);
      EXPECT_TRUE(ReaderOf(b.bytes).template Holds<typename TypeParam::Reader>());
      EXPECT_LE(ReaderOf(b.bytes).trailer().num_keys, n);
      EXPECT_EQ(ReaderOf(b.bytes).trailer().num_keys, b.info.stored);
      if (f.stores_every_distinct_key || w >= 16) {
        EXPECT_EQ(b.info.stored, n) << what;
      }
    }
  }
}

TYPED_TEST(StaticKindTest, NoFalseNegativesAtOneMillionKeys) {
  const std::vector<uint64_t> keys = this->Keys(71, 1'000'000);
  for (int w : {7, 10, 16})
    this->ExpectAllFound(this->Build(w, keys).bytes, keys, std::to_string(w));
}

// The measured rate of absent keys matches 2^-w within a 5-sigma binomial bound, for one large
// filter and for many filters of 2,000 keys (a filter partition's size).
TYPED_TEST(StaticKindTest, MeasuredFalsePositiveRateIsTwoToTheMinusW) {
  constexpr KindFacts f = TestFixture::kF;
  constexpr uint64_t kQueries = 2'000'000;
  const std::vector<uint64_t> absent = this->Keys(73, kQueries);
  for (uint64_t n : {uint64_t{2'000}, f.large_keys}) {
    for (int w : {1, 4, 7, 10, 13}) {
      uint64_t hits = 0;
      // 2,000-key filters: 100 of them, each asked 1/100 of the queries.
      const uint64_t filters = n == 2'000 ? 100 : 1;
      for (uint64_t f = 0; f < filters; ++f) {
        const auto b = this->Build(w, this->Keys(10'000 + f * 100 + w, n));
        const FilterReader reader = ReaderOf(b.bytes);
        for (uint64_t q = f * (kQueries / filters); q < (f + 1) * (kQueries / filters); ++q) {
          hits += reader.MayContain(absent[q]);
        }
      }
      const double p = TypeParam::EstimatedFpRate(typename TypeParam::Params{w}, n).value();
      EXPECT_NEAR(static_cast<double>(hits), p * kQueries, BinomialTolerance(kQueries, p))
          << "n=" << n << " w=" << w << ": measured " << static_cast<double>(hits) / kQueries;
    }
  }
}

// RocksDB hands over sorted keys that may repeat (and prefixes repeat between whole keys):
// repeated hashes, consecutive or not, are stored once and the bytes equal the deduplicated
// build's, whatever the order.
TYPED_TEST(StaticKindTest, RepeatedHashesAnyOrderGiveTheSameBytes) {
  const std::vector<uint64_t> keys = this->Keys(74, 50'000);
  std::vector<uint64_t> messy;
  for (int copy = 0; copy < 3; ++copy) messy.insert(messy.end(), keys.begin(), keys.end());
  std::mt19937_64 rng(TestFixture::kF.seed_base + 75);
  std::shuffle(messy.begin(), messy.end(), rng);
  const auto once = this->Build(9, keys);
  std::vector<uint64_t> shuffled = keys;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  EXPECT_EQ(this->Build(9, shuffled).bytes, once.bytes);
  const auto repeated = this->Build(9, messy);
  EXPECT_EQ(repeated.bytes, once.bytes);
  EXPECT_EQ(repeated.info.stored, keys.size());
  EXPECT_EQ(ReaderOf(repeated.bytes).trailer().num_keys, keys.size());
  // Millions of copies of a handful of keys.
  std::vector<uint64_t> few(2'000'000);
  for (size_t i = 0; i < few.size(); ++i) few[i] = keys[i % 5];
  const auto tiny = this->Build(9, few);
  EXPECT_FALSE(tiny.info.fell_back);
  EXPECT_EQ(tiny.info.stored, 5u);
  EXPECT_EQ(tiny.bytes.size(), TypeParam::FilterBytes(typename TypeParam::Params{9}, 5).value());
  this->ExpectAllFound(tiny.bytes, {keys.begin(), keys.begin() + 5}, "five keys");
}

TYPED_TEST(StaticKindTest, UnsolvedSeedsFallBackToABlockedBloomFilterOfTheSameSize) {
  const std::vector<uint64_t> keys = this->Keys(76, 20'000);
  const auto normal = this->Build(8, keys);
  const auto fallback = this->Build(8, keys, /*max_attempts=*/0);
  EXPECT_TRUE(fallback.info.fell_back);
  EXPECT_EQ(fallback.info.stored, keys.size());
  EXPECT_TRUE(ReaderOf(fallback.bytes).template Holds<BlockedBloomReader>());
  this->ExpectAllFound(fallback.bytes, keys, "fallback");
  // About the same memory: whole 64-byte blocks of the table's bits.
  EXPECT_LE(fallback.bytes.size(), normal.bytes.size() + 64);
  EXPECT_GE(fallback.bytes.size(), normal.bytes.size() - 64);
}

// RocksDB's builders hand over a HashList (chunks of 4,096 hashes, walked once per seed and once
// more for the deduplication): repeats spread across chunks give the bytes of the array build.
TYPED_TEST(StaticKindTest, HashListInputGivesTheBytesOfTheArrayInput) {
  const std::vector<uint64_t> keys = this->Keys(80, 10'000);
  HashList list;
  for (int copy = 0; copy < 2; ++copy) {
    for (uint64_t h : keys) list.Add(h);  // each key twice, 10,000 hashes apart (three chunks)
  }
  ASSERT_GT(list.size(), 4 * HashList::kChunkItems);
  std::string from_list;
  const Result<StaticBuildInfo> info =
      TypeParam::BuildWithInfo(typename TypeParam::Params{8}, list, &from_list);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(from_list, this->Build(8, keys).bytes);
  EXPECT_FALSE(info.value().fell_back);
  this->ExpectAllFound(from_list, keys, "hash list");
}

// Sizes across the table's steps (fuse: the doublings of the segment length, where peeling is
// hardest): every size builds within a few seeds and none falls back. Prints the figures the
// attempt limit was chosen from.
TYPED_TEST(StaticKindTest, EverySizeBuildsWithinAFewSeeds) {
  constexpr KindFacts f = TestFixture::kF;
  int worst = 0;
  uint64_t total = 0, builds = 0;
  for (uint64_t n = 1; n < f.sweep_keys; n = n < f.sweep_dense ? n + 1 : n + n / f.sweep_step) {
    const auto b = this->Build(8, this->Keys(77 + n, n));
    ASSERT_FALSE(b.info.fell_back) << n;
    worst = std::max(worst, b.info.attempts);
    total += b.info.attempts;
    ++builds;
  }
  EXPECT_LE(worst, f.sweep_worst_attempts);
  printf("[ figures  ] %s: %llu sizes from 1 to %llu keys: %.2f seeds on average, at most %d\n",
         TypeParam::kName, static_cast<unsigned long long>(builds),
         static_cast<unsigned long long>(f.sweep_keys), static_cast<double>(total) / builds, worst);
}

// The build's scratch memory is a fixed number of bytes per table unit, and 8 bytes per key more
// only when the seed that solved stored fewer keys than it was given; the kind's
// BuildScratchBytes for the count of hashes given, what a RocksDB builder charges to the block
// cache before the build, is at least what the build held, for distinct hashes and for every
// hash given twice out of order (a first pass sized for both copies, then the distinct copy).
TYPED_TEST(StaticKindTest, ScratchMemoryIsBounded) {
  constexpr KindFacts f = TestFixture::kF;
  for (uint64_t n : {1u, 10u, 1000u, 100'000u, 1'000'000u}) {
    std::vector<uint64_t> twice = this->Keys(79, n);
    twice.insert(twice.end(), twice.begin(), twice.end());
    const auto repeated = this->Build(8, twice);
    EXPECT_LE(repeated.info.scratch_bytes,
              TypeParam::BuildScratchBytes(typename TypeParam::Params{}, twice.size()))
        << n;
    const auto b = this->Build(8, this->Keys(79, n));
    EXPECT_LE(b.info.scratch_bytes, TypeParam::BuildScratchBytes(typename TypeParam::Params{}, n))
        << n;
    if (n < 1000) continue;
    const uint64_t units = TestFixture::Units(n);
    // A wrapped table's build (the standard Ribbon kind's for small sets, and the bumped kind's):
    // 32 bytes per slot (coefficients, fingerprint, and each row's value as a constant and a set
    // of unknowns) and its sorted remixed hashes, 8 per key.
    bool wrapped = std::is_same_v<TypeParam, Ribbon> && n <= kRibbonWrappedMaxKeys;
    if constexpr (std::is_same_v<TypeParam, BumpedRibbon>) {
      wrapped = BumpedRibbonTableFor(n).value().wrapped;
    }
    if (std::is_same_v<TypeParam, BumpedRibbon> && !wrapped) {
      // 16 bytes per key sorted, 16 per slot of the largest layer, 8 per bumped key twice: about
      // 33 per key (bumped_ribbon.cc); no distinct copy, as every key is counted.
      EXPECT_EQ(b.info.stored, n);
      EXPECT_LE(b.info.scratch_bytes, 36 * n + 4096) << n;
      printf("[ figures  ] %s: %llu keys: %.2f scratch bytes per key\n", TypeParam::kName,
             static_cast<unsigned long long>(n), static_cast<double>(b.info.scratch_bytes) / n);
      continue;
    }
    const uint64_t per_unit = wrapped ? 32 : f.scratch_per_unit;
    EXPECT_EQ(b.info.scratch_bytes, per_unit * units + f.scratch_spare + (wrapped ? 8 * n : 0) +
                                        (b.info.stored == n ? 0 : 8 * n))
        << n;
    EXPECT_LE(static_cast<double>(b.info.scratch_bytes - f.scratch_spare) / n,
              wrapped ? 32 * 1.15 + 8 : f.scratch_per_unit * f.max_units_per_key)
        << n;
    printf("[ figures  ] %s: %llu keys: %.2f scratch bytes per key\n", TypeParam::kName,
           static_cast<unsigned long long>(n), static_cast<double>(b.info.scratch_bytes) / n);
  }
}

// A budget of bits per key holds at every key count: the widest fingerprint whose table fits.
TYPED_TEST(StaticKindTest, ABudgetPicksTheWidestFingerprintThatFitsEachFilter) {
  using K = TypeParam;
  using Params = typename K::Params;
  for (double budget : {4.0, 8.0, 10.0, 16.0}) {
    const Params params = K::ForBitsPerKey(budget).value();
    for (uint64_t n : {100u, 1000u, 25'000u, 1'000'000u}) {
      const uint64_t units = TestFixture::Units(n);
      const int w = K::FingerprintBitsFor(params, n).value();
      // The table's bits at w and w + 1 (bumped Ribbon's with its threshold codes).
      auto table_bits = [&](int width) {
        if constexpr (std::is_same_v<K, BumpedRibbon>) {
          return 8.0 * BumpedRibbonTableBytes(BumpedRibbonTableFor(n).value(), width);
        } else if constexpr (std::is_same_v<K, Ribbon>) {
          return 8.0 * RibbonTableBytes(RibbonTableFor(n).value(), width);
        } else {
          return static_cast<double>(units * width);
        }
      };
      EXPECT_LE(table_bits(w), budget * n) << budget << " " << n;
      EXPECT_GT(table_bits(w + 1), budget * n) << budget << " " << n;
      const auto b = this->Build(params, this->Keys(80, n));
      EXPECT_EQ(ReaderOf(b.bytes).trailer().param, w);
      EXPECT_EQ(b.bytes.size(), K::FilterBytes(params, n).value());
      EXPECT_EQ(K::EstimatedFpRate(params, n).value(), K::EstimatedFpRate(Params{w}, n).value());
    }
  }
}

TYPED_TEST(StaticKindTest, RejectsBadParameters) {
  using K = TypeParam;
  using Params = typename K::Params;
  EXPECT_FALSE(K::ForFpRate(0).ok());
  EXPECT_FALSE(K::ForFpRate(1e-12).ok());  // needs 40 bits
  EXPECT_FALSE(K::ForBitsPerKey(0.5).ok());
  EXPECT_EQ(K::ForFpRate(0.01).value().fingerprint_bits, 7);
  EXPECT_EQ(K::ForFpRate(0.001).value().fingerprint_bits, 10);
  EXPECT_EQ(K::ForFpRate(0.5).value().fingerprint_bits, 1);
  EXPECT_EQ(K::ForBitsPerKey(10).value().fingerprint_bits,
            TestFixture::kF.width_for_ten_bits_per_key);
  EXPECT_EQ(K::ForBitsPerKey(10).value().bits_per_key, 10);
  std::string out;
  EXPECT_FALSE(TypeParam::BuildWithInfo(Params{0}, nullptr, 0, &out, 1).ok());
  EXPECT_FALSE(TypeParam::BuildWithInfo(Params{33}, nullptr, 0, &out, 1).ok());
  EXPECT_FALSE(K::FilterBytes(Params{33}, 10).ok());
}

// Trailers no build writes are not understood: the filter answers "may match". Both sizes: a
// small set's (Ribbon and bumped Ribbon: a wrapped table, version 2) and a larger one's.
TYPED_TEST(StaticKindTest, TrailersNoBuildWritesAreNotUnderstood) {
  for (uint64_t n : {1'000u, 20'000u}) {
    SCOPED_TRACE(std::to_string(n) + " keys");
    const std::string good = this->Build(8, this->Keys(81, n)).bytes;
    ASSERT_TRUE(ReaderOf(good).template Holds<typename TypeParam::Reader>());
    auto understood = [&](auto change) {
      ParsedFilter parsed;
      EXPECT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(good.data()), good.size(), &parsed));
      Trailer t = parsed.trailer;
      change(&t);
      std::string bytes = good.substr(0, parsed.body_bytes);  // in layout 2 whatever it had
      AppendTrailer(t, &bytes);
      return ReaderOf(bytes).valid();
    };
    const uint8_t version = ReaderOf(good).trailer().version;
    EXPECT_TRUE(understood([](Trailer*) {}));
    EXPECT_FALSE(understood([](Trailer* t) { t->param = 0; }));
    EXPECT_FALSE(understood([](Trailer* t) { t->param = 33; }));
    EXPECT_FALSE(understood([](Trailer* t) { t->num_units = 0; }));
    if (std::is_same_v<TypeParam, BumpedRibbon> && version == 1) {
      // num_units is the key count the layers are sized for: one whose layers differ, and more
      // keys than that.
      EXPECT_FALSE(understood([](Trailer* t) { t->num_units *= 4; }));
      EXPECT_FALSE(understood([](Trailer* t) { t->num_keys = t->num_units + 1; }));
    } else {
      EXPECT_FALSE(understood([](Trailer* t) { t->num_units += 1; }));
      EXPECT_FALSE(understood([](Trailer* t) { t->num_keys = t->num_units + 1; }));
      // A body of another length than num_units says.
      EXPECT_FALSE(understood([](Trailer* t) { t->num_units += 64; }));
    }
    EXPECT_FALSE(understood([](Trailer* t) { t->version = TypeParam::kMaxVersion + 1; }));
    if (!std::is_same_v<TypeParam, Fuse> && n == 1'000) {
      // A wrapped table (1,006 slots) as if it stopped 63 slots past its last start (Ribbon), or
      // as layers sized for 1,006 keys (bumped Ribbon): version 1 reads another length.
      ASSERT_EQ(version, 2);
      EXPECT_FALSE(understood([](Trailer* t) { t->version = 1; }));
      // Fewer slots than a key's 64.
      EXPECT_FALSE(understood([](Trailer* t) {
        t->num_units = kRibbonWrappedMinSlots - 1;
        t->num_keys = 1;
      }));
    }
  }
}

}  // namespace
}  // namespace sstfilter
