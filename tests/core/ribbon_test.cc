#include "core/parse.h"
#include "core/ribbon/ribbon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/fuse/fuse.h"
#include "core/ribbon/math.h"
#include "core/sizing.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::BinomialTolerance;
using testing::KeyHashes;
using testing::ReaderOf;

struct Built {
  std::string bytes;
  RibbonBuildInfo info;
};

Built Build(const RibbonParams& params, const std::vector<uint64_t>& hashes,
            int max_attempts = kRibbonMaxAttempts) {
  Built b;
  const Result<RibbonBuildInfo> r =
      BuildRibbonFilter(params, hashes.data(), hashes.size(), &b.bytes, max_attempts);
  EXPECT_TRUE(r.ok()) << r.error();
  if (r.ok()) b.info = r.value();
  return b;
}
Built Build(int fingerprint_bits, const std::vector<uint64_t>& hashes,
            int max_attempts = kRibbonMaxAttempts) {
  return Build(RibbonParams{fingerprint_bits}, hashes, max_attempts);
}

// Every key found, by the single and the batched query.
void ExpectAllFound(const std::string& bytes, const std::vector<uint64_t>& keys,
                    const std::string& what) {
  const FilterReader reader = ReaderOf(bytes);
  ASSERT_TRUE(reader.valid()) << what;
  EXPECT_EQ(testing::CountMissing(reader, keys), 0u) << what;
}

// Sizes around block boundaries (63, 64, 65 keys and 1 block of slots) and up.
TEST(Ribbon, NoFalseNegativesForEveryWidthAndSize) {
  for (int r : {1, 2, 4, 7, 8, 10, 13, 16, 24, 31, 32}) {
    for (uint64_t n : {1u, 2u, 3u, 63u, 64u, 65u, 100u, 999u, 2000u, 4097u, 11521u, 100'000u}) {
      const std::vector<uint64_t> keys = KeyHashes(r * 1000 + n, n);
      const Built b = Build(r, keys);
      EXPECT_FALSE(b.info.fell_back) << "r=" << r << " n=" << n;
      ExpectAllFound(b.bytes, keys, "r=" + std::to_string(r) + " n=" + std::to_string(n));
      EXPECT_TRUE(ReaderOf(b.bytes).Holds<RibbonReader>());
      // Every distinct hash's equation is stored unless the others implied it (a dependent
      // equation agrees with chance 2^-r, so narrow widths may store fewer).
      EXPECT_LE(ReaderOf(b.bytes).trailer().num_keys, n);
      EXPECT_EQ(ReaderOf(b.bytes).trailer().num_keys, b.info.stored);
      if (r >= 16) {
        EXPECT_EQ(b.info.stored, n) << "r=" << r << " n=" << n;
      }
    }
  }
}

TEST(Ribbon, NoFalseNegativesAtOneMillionKeys) {
  const std::vector<uint64_t> keys = KeyHashes(171, 1'000'000);
  for (int r : {7, 16}) ExpectAllFound(Build(r, keys).bytes, keys, std::to_string(r));
}

// The measured rate of absent keys matches 2^-r within a 5-sigma binomial bound, for one large
// filter and for many filters of 2,000 keys (the size Ribbon is chosen for).
TEST(Ribbon, MeasuredFalsePositiveRateIsTwoToTheMinusR) {
  constexpr uint64_t kQueries = 2'000'000;
  const std::vector<uint64_t> absent = KeyHashes(173, kQueries);
  for (uint64_t n : {2'000u, 300'000u}) {
    for (int r : {1, 4, 7, 10, 13}) {
      uint64_t hits = 0;
      // 2,000-key filters: 100 of them, each asked 1/100 of the queries.
      const uint64_t filters = n == 2'000 ? 100 : 1;
      for (uint64_t f = 0; f < filters; ++f) {
        const Built b = Build(r, KeyHashes(10'000 + f * 100 + r, n));
        const FilterReader reader = ReaderOf(b.bytes);
        for (uint64_t q = f * (kQueries / filters); q < (f + 1) * (kQueries / filters); ++q) {
          hits += reader.MayContain(absent[q]);
        }
      }
      const double p = Ribbon::EstimatedFpRate(RibbonParams{r}, n).value();
      EXPECT_NEAR(static_cast<double>(hits), p * kQueries, BinomialTolerance(kQueries, p))
          << "n=" << n << " r=" << r << ": measured " << static_cast<double>(hits) / kQueries;
    }
  }
}

// Repeated hashes, consecutive or not, add no equation; the bytes equal the deduplicated
// build's, whatever the order (the rows no equation fixes are 0).
TEST(Ribbon, RepeatedHashesAnyOrderGiveTheSameBytes) {
  const std::vector<uint64_t> keys = KeyHashes(174, 50'000);
  std::vector<uint64_t> messy;
  for (int copy = 0; copy < 3; ++copy) messy.insert(messy.end(), keys.begin(), keys.end());
  std::mt19937_64 rng(175);
  std::shuffle(messy.begin(), messy.end(), rng);
  const Built once = Build(9, keys);
  std::vector<uint64_t> shuffled = keys;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  EXPECT_EQ(Build(9, shuffled).bytes, once.bytes);
  const Built repeated = Build(9, messy);
  EXPECT_EQ(repeated.bytes, once.bytes);
  EXPECT_EQ(repeated.info.stored, keys.size());
  // Millions of copies of a handful of keys.
  std::vector<uint64_t> few(2'000'000);
  for (size_t i = 0; i < few.size(); ++i) few[i] = keys[i % 5];
  const Built tiny = Build(9, few);
  EXPECT_FALSE(tiny.info.fell_back);
  EXPECT_EQ(tiny.info.stored, 5u);
  EXPECT_EQ(tiny.bytes.size(), Ribbon::FilterBytes(RibbonParams{9}, 5).value());
  ExpectAllFound(tiny.bytes, {keys.begin(), keys.begin() + 5}, "five keys");
}

TEST(Ribbon, UnsolvedSeedsFallBackToABlockedBloomFilterOfTheSameSize) {
  const std::vector<uint64_t> keys = KeyHashes(176, 20'000);
  const Built normal = Build(8, keys);
  const Built fallback = Build(8, keys, /*max_attempts=*/0);
  EXPECT_TRUE(fallback.info.fell_back);
  EXPECT_TRUE(ReaderOf(fallback.bytes).Holds<BlockedBloomReader>());
  ExpectAllFound(fallback.bytes, keys, "fallback");
  EXPECT_LE(fallback.bytes.size(), normal.bytes.size() + 64);
  EXPECT_GE(fallback.bytes.size(), normal.bytes.size() - 64);
}

// RocksDB's builders hand over a HashList (chunks of 4,096 hashes, walked once per seed and once
// more for the deduplication): repeats spread across chunks give the bytes of the array build.
TEST(Ribbon, HashListInputGivesTheBytesOfTheArrayInput) {
  const std::vector<uint64_t> keys = KeyHashes(180, 10'000);
  HashList list;
  for (int copy = 0; copy < 2; ++copy) {
    for (uint64_t h : keys) list.Add(h);  // each key twice, 10,000 hashes apart (three chunks)
  }
  ASSERT_GT(list.size(), 4 * HashList::kChunkHashes);
  std::string from_list;
  const Result<RibbonBuildInfo> info = BuildRibbonFilter(RibbonParams{8}, list, &from_list);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(from_list, Build(8, keys).bytes);
  EXPECT_FALSE(info.value().fell_back);
  ExpectAllFound(from_list, keys, "hash list");
}

// The query recomputed from the documented layout (docs/format.md, 7d) with every bit of the
// result, no early exit: the reader's answer must be the same for stored and absent keys at
// every width, including the ones whose last group of 4 bits is partial or whose bits run to 32.
// It also counts the starts at the edges of the layout (the last start, a block's last slot), so
// that those are known to have been tested.
TEST(Ribbon, ReaderAgreesWithTheLayoutEvaluatedBitByBit) {
  uint64_t last_starts = 0, block_ends = 0;
  for (int r : {1, 3, 4, 5, 17, 31, 32}) {
    for (uint64_t set = 0; set < 40; ++set) {
      const uint64_t n = set < 30 ? 64 : 5'000;  // 64 keys: 128 slots, 65 starts
      const std::vector<uint64_t> keys = KeyHashes(20'000 + r * 100 + set, n);
      const Built b = Build(r, keys);
      ASSERT_FALSE(b.info.fell_back);
      const FilterReader reader = ReaderOf(b.bytes);
      const Trailer& t = reader.trailer();
      const RibbonHashing hashing(t.seed, t.num_units, r);
      const uint8_t* body = reinterpret_cast<const uint8_t*>(b.bytes.data());
      auto row_bit = [&](uint64_t row, int k) {
        const uint8_t* word = body + 8 * ((row / 64) * r + k);
        return (word[(row % 64) / 8] >> (row % 8)) & 1;
      };
      auto reference = [&](uint64_t hash) {
        const uint64_t h = hashing.Remix(hash);
        const uint64_t start = hashing.Start(h);
        const uint64_t coeff = RibbonHashing::Coefficients(h);
        uint32_t result = 0;
        for (int k = 0; k < r; ++k) {
          int parity = 0;
          for (int j = 0; j < 64; ++j) parity ^= ((coeff >> j) & 1) & row_bit(start + j, k);
          result |= static_cast<uint32_t>(parity) << k;
        }
        return result == hashing.Fingerprint(h);
      };
      for (uint64_t h : keys) {
        const uint64_t start = hashing.Start(hashing.Remix(h));
        last_starts += start == t.num_units - 64;
        block_ends += start % 64 == 63;
        ASSERT_TRUE(reference(h)) << "r=" << r;  // the layout holds the key
        ASSERT_TRUE(reader.MayContain(h)) << "r=" << r;
      }
      const std::vector<uint64_t> absent = KeyHashes(30'000 + r * 100 + set, 2'000);
      for (uint64_t h : absent) ASSERT_EQ(reader.MayContain(h), reference(h)) << "r=" << r;
    }
  }
  EXPECT_GT(last_starts, 10u);
  EXPECT_GT(block_ends, 10u);
}

// Every size from 1 to 300,000 keys builds within a few seeds and none falls back. Prints the
// figures the attempt limit was chosen from.
TEST(Ribbon, EverySizeBuildsWithinAFewSeeds) {
  int worst = 0;
  uint64_t total = 0, builds = 0;
  for (uint64_t n = 1; n < 300'000; n = n < 130 ? n + 1 : n + n / 19) {
    const Built b = Build(8, KeyHashes(177 + n, n));
    ASSERT_FALSE(b.info.fell_back) << n;
    worst = std::max(worst, b.info.attempts);
    total += b.info.attempts;
    ++builds;
  }
  EXPECT_LE(worst, kRibbonMaxAttempts / 4);
  printf("[ figures  ] %llu sizes from 1 to 300000 keys: %.2f seeds on average, at most %d\n",
         static_cast<unsigned long long>(builds), static_cast<double>(total) / builds, worst);
}

// Slots per key, the efficiency of a Ribbon filter (its bits per key over log2(1/2^-r) = r),
// as math.h's table states; and the reason the kind exists: below about 233,000 keys its table
// is smaller than a fuse table of the same rate.
TEST(Ribbon, SlotsPerKeyAndTheSizesWhereItBeatsTheFuseTable) {
  const struct {
    uint64_t keys;
    double slots_per_key;
  } expected[] = {
      {1'000, 1.088}, {2'000, 1.056}, {10'000, 1.056}, {100'000, 1.086}, {1'000'000, 1.123}};
  for (const auto& e : expected) {
    const uint64_t slots = RibbonSlotsFor(e.keys).value();
    EXPECT_EQ(slots % kRibbonCoeffBits, 0u);
    EXPECT_NEAR(static_cast<double>(slots) / e.keys, e.slots_per_key, 0.0005) << e.keys;
  }
  // The crossover math.h states: Ribbon smaller below about 233,000 keys, fuse above 264,000.
  for (int r : {7, 10, 13}) {
    for (uint64_t n : {1'000u, 2'000u, 10'000u, 100'000u, 232'000u}) {
      EXPECT_LT(Ribbon::FilterBytes(RibbonParams{r}, n).value(),
                Fuse::FilterBytes(FuseParams{r}, n).value())
          << n << " keys, r=" << r;
    }
    for (uint64_t n : {265'000u, 1'000'000u}) {
      EXPECT_GT(Ribbon::FilterBytes(RibbonParams{r}, n).value(),
                Fuse::FilterBytes(FuseParams{r}, n).value())
          << n << " keys, r=" << r;
    }
  }
}

// The build's scratch memory is 12 bytes per slot: at most 12 * 1.13 bytes per key from 1,000
// to 1,000,000 keys.
TEST(Ribbon, ScratchMemoryIsBounded) {
  for (uint64_t n : {1000u, 100'000u, 1'000'000u}) {
    const Built b = Build(8, KeyHashes(179, n));
    const uint64_t slots = RibbonSlotsFor(n).value();
    // 8 bytes per key more only when the seed that solved stored fewer equations than keys.
    EXPECT_EQ(b.info.scratch_bytes, 12 * slots + (b.info.stored == n ? 0 : 8 * n)) << n;
    EXPECT_LE(static_cast<double>(b.info.scratch_bytes) / n, 12 * 1.13) << n;
    printf("[ figures  ] %llu keys: %.2f scratch bytes per key\n",
           static_cast<unsigned long long>(n), static_cast<double>(b.info.scratch_bytes) / n);
  }
}

// A budget of bits per key holds at every key count: the widest fingerprint whose slots fit.
TEST(Ribbon, ABudgetPicksTheWidestFingerprintThatFitsEachFilter) {
  for (double budget : {4.0, 8.0, 10.0, 16.0}) {
    const RibbonParams params = Ribbon::ForBitsPerKey(budget).value();
    for (uint64_t n : {100u, 1000u, 25'000u, 1'000'000u}) {
      const uint64_t slots = RibbonSlotsFor(n).value();
      const int r = Ribbon::FingerprintBitsFor(params, n).value();
      EXPECT_LE(static_cast<double>(slots * r), budget * n) << budget << " " << n;
      EXPECT_GT(static_cast<double>(slots * (r + 1)), budget * n) << budget << " " << n;
      Built b = Build(params, KeyHashes(180, n));
      EXPECT_EQ(ReaderOf(b.bytes).trailer().param, r);
      EXPECT_EQ(b.bytes.size(), Ribbon::FilterBytes(params, n).value());
      EXPECT_EQ(Ribbon::EstimatedFpRate(params, n).value(),
                Ribbon::EstimatedFpRate(RibbonParams{r}, n).value());
    }
  }
}

TEST(Ribbon, RejectsBadParameters) {
  EXPECT_FALSE(Ribbon::ForFpRate(0).ok());
  EXPECT_FALSE(Ribbon::ForFpRate(1e-12).ok());  // needs 40 bits
  EXPECT_FALSE(Ribbon::ForBitsPerKey(0.5).ok());
  EXPECT_EQ(Ribbon::ForFpRate(0.01).value().fingerprint_bits, 7);
  EXPECT_EQ(Ribbon::ForFpRate(0.001).value().fingerprint_bits, 10);
  EXPECT_EQ(Ribbon::ForFpRate(0.5).value().fingerprint_bits, 1);
  EXPECT_EQ(Ribbon::ForBitsPerKey(10).value().fingerprint_bits, 8);  // at a million keys
  std::string out;
  EXPECT_FALSE(BuildRibbonFilter(RibbonParams{0}, nullptr, 0, &out).ok());
  EXPECT_FALSE(BuildRibbonFilter(RibbonParams{33}, nullptr, 0, &out).ok());
  EXPECT_FALSE(Ribbon::FilterBytes(RibbonParams{33}, 10).ok());
}

// Trailers no build writes are not understood: the filter answers "may match".
TEST(Ribbon, TrailersNoBuildWritesAreNotUnderstood) {
  const std::vector<uint64_t> keys = KeyHashes(181, 1000);
  const std::string good = Build(8, keys).bytes;
  ASSERT_TRUE(ReaderOf(good).Holds<RibbonReader>());
  auto with = [&](auto change) {
    ParsedFilter parsed;
    EXPECT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(good.data()), good.size(), &parsed));
    Trailer t = parsed.trailer;
    change(&t);
    std::string bytes = good.substr(0, good.size() - kTrailerBytes);
    AppendTrailer(t, &bytes);
    return bytes;
  };
  auto understood = [&](auto change) {
    const std::string bytes = with(change);
    return ReaderOf(bytes).valid();
  };
  EXPECT_TRUE(understood([](Trailer*) {}));
  EXPECT_FALSE(understood([](Trailer* t) { t->param = 0; }));
  EXPECT_FALSE(understood([](Trailer* t) { t->param = 33; }));
  EXPECT_FALSE(understood([](Trailer* t) { t->num_units += 1; }));
  EXPECT_FALSE(understood([](Trailer* t) { t->num_keys = t->num_units + 1; }));
  // A body of another length than num_units says.
  EXPECT_FALSE(understood([](Trailer* t) { t->num_units += 64; }));
  EXPECT_FALSE(understood([](Trailer* t) { t->version = 2; }));
}

}  // namespace
}  // namespace sstfilter
