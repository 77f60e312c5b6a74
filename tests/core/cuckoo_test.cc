// SPDX-License-Identifier: Apache-2.0
#include "core/cuckoo/cuckoo.h"
#include "sstfilter/cuckoo_filter.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/cuckoo/cuckoo_table.h"
#include "core/cuckoo/math.h"
#include "core/cuckoo/semi_sorted_table.h"
#include "core/filter_reader.h"
#include "core/format.h"
#include "core/parse.h"
#include "core/sizing.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::BinomialTolerance;
using testing::CountMissing;
using testing::KeyHashes;
using testing::ReaderOf;

struct Built {
  std::string bytes;
  CuckooBuildInfo info;
  FilterReader reader() const { return ReaderOf(bytes); }
};

Built Build(int fingerprint_bits, const std::vector<uint64_t>& hashes,
            double load = kCuckooTargetLoad, std::optional<CuckooLayout> layout = std::nullopt) {
  CuckooParams params;
  params.fingerprint_bits = fingerprint_bits;
  params.load = load;
  Built b;
  const Result<CuckooBuildInfo> r =
      BuildCuckooFilter(params, hashes.data(), hashes.size(), &b.bytes, layout);
  EXPECT_TRUE(r.ok()) << r.error();
  if (r.ok()) b.info = r.value();
  return b;
}

// The trailer of valid filter bytes.
Trailer ParsedTrailer(const std::string& bytes) {
  ParsedFilter parsed;
  EXPECT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &parsed));
  return parsed.trailer;
}

TEST(CuckooHashing, AlternateBucketIsItsOwnInverseAndNeverTheSame) {
  std::mt19937_64 rng(3);
  for (uint64_t m : {2u, 4u, 6u, 10u, 1000u, 263158u, 1u << 20, 987654u}) {
    for (int f : {4, 12, 32}) {
      const CuckooHashing hashing(m, f, 0);
      for (int i = 0; i < 20000; ++i) {
        const uint64_t h = hashing.Remix(rng());
        const uint64_t b = hashing.Bucket(h);
        const uint32_t fp = hashing.Fingerprint(h);
        ASSERT_LT(b, m);
        ASSERT_GE(fp, 1u);
        ASSERT_LE(fp, (uint64_t{1} << f) - 1);
        const uint64_t alt = hashing.Alt(b, fp);
        ASSERT_LT(alt, m);
        ASSERT_NE(alt, b) << "m=" << m;
        ASSERT_EQ(hashing.Alt(alt, fp), b) << "m=" << m;
      }
    }
  }
}

TEST(Cuckoo, NoFalseNegativesForEveryFingerprintWidth) {
  for (int f = kCuckooMinFingerprintBits; f <= kCuckooMaxFingerprintBits; ++f) {
    for (uint64_t n : {1u, 2u, 3u, 5u, 8u, 9u, 100u, 1000u, 30'000u}) {
      for (uint64_t set = 1; set <= (n <= 100 ? 10u : 2u); ++set) {
        const std::vector<uint64_t> keys = KeyHashes(set * 7919 + n, n);
        const Built b = Build(f, keys);
        const FilterReader reader = b.reader();
        ASSERT_TRUE(reader.Holds<CuckooReader>()) << "f=" << f << " n=" << n;
        ASSERT_EQ(CountMissing(reader, keys), 0u) << "f=" << f << " n=" << n << " set " << set;
        ASSERT_LE(b.info.stored, n);
      }
    }
  }
}

TEST(Cuckoo, NoFalseNegativesAtOneMillionKeys) {
  for (int f : {8, 12, 13, 16, 17, 24}) {
    const std::vector<uint64_t> keys = KeyHashes(100 + f, 1'000'000);
    const Built b = Build(f, keys);
    EXPECT_EQ(CountMissing(b.reader(), keys), 0u) << f;
    // Sized for 95% load, not rounded up to a power of two, and placed at the first attempt.
    EXPECT_EQ(b.info.num_buckets, CuckooBuckets(1'000'000, kCuckooTargetLoad).value());
    EXPECT_EQ(b.info.attempts, 1) << f;
    // Keys whose fingerprint is already in their bucket pair are not stored again: about half
    // the final false-positive rate of them (the rate grows from 0 as the table fills).
    const double represented = 1.0 - static_cast<double>(b.info.stored) / keys.size();
    EXPECT_LT(represented, CuckooFpRate(f, kCuckooTargetLoad).value()) << f;
    if (f >= 12) {
      EXPECT_GT(b.info.load(), 0.945) << f;
    }
  }
}

TEST(Cuckoo, IdenticalHashesAreStoredOnce) {
  // A million copies of one hash, and a million copies of three hashes interleaved (so they are
  // not consecutive duplicates).
  const std::vector<uint64_t> one(1'000'000, 0x0123456789abcdefull);
  const Built b1 = Build(12, one);
  EXPECT_EQ(b1.info.stored, 1u);
  EXPECT_EQ(b1.info.attempts, 1);
  EXPECT_TRUE(b1.reader().MayContain(one[0]));

  std::vector<uint64_t> three;
  for (int i = 0; i < 1'000'000; ++i) three.push_back(KeyHashes(5, 3)[i % 3]);
  const Built b3 = Build(12, three);
  EXPECT_LE(b3.info.stored, 3u);
  EXPECT_EQ(CountMissing(b3.reader(), KeyHashes(5, 3)), 0u);
}

TEST(Cuckoo, HashesCollidingInBucketAndFingerprintBuild) {
  // With seed 0 the bucket comes from the high bits and the fingerprint from the low 32 bits, so
  // hashes that differ only in bits 32..47 share both: the worst case for naive cuckoo hashing
  // (more than 8 copies of one bucket pair can never be placed).
  std::vector<uint64_t> colliding;
  for (uint64_t j = 0; j < 200'000; ++j) colliding.push_back(0x7000'0000'dead'beefull | (j << 32));
  // Plus ordinary keys around them, so the table is not trivially empty.
  std::vector<uint64_t> keys = KeyHashes(9, 100'000);
  keys.insert(keys.end(), colliding.begin(), colliding.end());
  const Built b = Build(13, keys);
  EXPECT_EQ(CountMissing(b.reader(), keys), 0u);
  EXPECT_LT(b.info.stored, 110'000u);  // the colliding ones collapse into a few fingerprints

  // Hashes sharing only the bucket (same high bits, different low bits).
  std::vector<uint64_t> same_bucket;
  for (uint64_t j = 0; j < 50'000; ++j) same_bucket.push_back(0x4000'0000'0000'0000ull | j * 977);
  const Built sb = Build(10, same_bucket);
  EXPECT_EQ(CountMissing(sb.reader(), same_bucket), 0u);
}

TEST(Cuckoo, FailedPlacementRetriesWithNewSeedsThenMoreBuckets) {
  // At load 1.0 placement of 100k keys cannot succeed in 4-slot buckets with bounded walks: the
  // build must retry (new seeds, then 3% more buckets each round) and still hold every key.
  const std::vector<uint64_t> keys = KeyHashes(44, 100'000);
  const Built b = Build(12, keys, 1.0);
  EXPECT_GT(b.info.attempts, 1);
  EXPECT_GT(b.info.num_buckets, CuckooBuckets(100'000, 1.0).value());
  EXPECT_EQ(b.reader().trailer().seed, b.info.seed);
  EXPECT_EQ(CountMissing(b.reader(), keys), 0u);
  // Deterministic: the same keys give the same bytes, retries included.
  EXPECT_EQ(Build(12, keys, 1.0).bytes, b.bytes);
}

TEST(Cuckoo, DeterministicBytes) {
  const std::vector<uint64_t> keys = KeyHashes(45, 50'000);
  EXPECT_EQ(Build(13, keys).bytes, Build(13, keys).bytes);
}

// The measured rate of absent keys matches the paper's 2 * 4 * load / (2^f - 1) at the load the
// build reached, within a 5-sigma binomial bound.
TEST(Cuckoo, MeasuredFalsePositiveRateMatchesThePaper) {
  const std::vector<uint64_t> keys = KeyHashes(50, 1'000'000);
  const std::vector<uint64_t> absent = KeyHashes(51, 2'000'000);
  for (int f : {6, 8, 10, 12, 13, 16}) {
    const Built b = Build(f, keys);
    const FilterReader reader = b.reader();
    uint64_t hits = 0;
    for (uint64_t h : absent) hits += reader.MayContain(h);
    const double rate = CuckooFpRate(f, b.info.load()).value();
    EXPECT_NEAR(static_cast<double>(hits), rate * absent.size(),
                BinomialTolerance(absent.size(), rate))
        << "f=" << f << " measured " << static_cast<double>(hits) / absent.size() << " estimate "
        << rate << " load " << b.info.load();
  }
}

TEST(Cuckoo, ParamsForARateReachIt) {
  const std::vector<uint64_t> keys = KeyHashes(60, 300'000);
  const std::vector<uint64_t> absent = KeyHashes(61, 2'000'000);
  for (double target : {0.01, 0.001}) {
    const CuckooParams params = Cuckoo::ForFpRate(target).value();
    const Built b = Build(params.fingerprint_bits, keys);
    const FilterReader reader = b.reader();
    uint64_t hits = 0;
    for (uint64_t h : absent) hits += reader.MayContain(h);
    EXPECT_LE(static_cast<double>(hits),
              target * absent.size() + BinomialTolerance(absent.size(), target))
        << target;
  }
}

// Its size and inverse: Kinds.MaxKeysForBytesInvertsFilterBytes.
TEST(Cuckoo, SlotsArePackedToTheirBits) {
  // A 12-bit fingerprint costs 12 bits: 4 slots in 6 bytes.
  EXPECT_EQ(CuckooTableView::BytesFor(1000, 12), 6000u + CuckooTableView::kPadBytes);
}

TEST(Cuckoo, RejectsBadParameters) {
  std::string out;
  for (int f : {0, 3, 33}) {
    CuckooParams params;
    params.fingerprint_bits = f;
    EXPECT_FALSE(BuildCuckooFilter(params, nullptr, 0, &out).ok()) << f;
    EXPECT_FALSE(Cuckoo::FilterBytes(params, 10).ok()) << f;
    EXPECT_FALSE(CuckooFilter::Create(100, f).ok()) << f;
  }
  EXPECT_FALSE(Cuckoo::ForFpRate(0).ok());
  EXPECT_FALSE(Cuckoo::ForFpRate(1e-12).ok());
  EXPECT_FALSE(Cuckoo::ForBitsPerKey(3).ok());
  EXPECT_FALSE(CuckooFilter::Create(0, 12).ok());
}

TEST(CuckooFilter, AddUntilFullThenEveryAddedKeyStillMatches) {
  for (int f : {8, 12, 20}) {
    CuckooFilter filter = CuckooFilter::Create(10'000, f).value();
    const std::vector<uint64_t> keys = KeyHashes(70 + f, 20'000);
    size_t added = 0;
    while (added < keys.size() && filter.AddHash(keys[added])) ++added;
    ASSERT_LT(added, keys.size()) << "a filter for 10k keys took 20k";
    const uint64_t capacity = filter.num_buckets() * kCuckooSlotsPerBucket;
    EXPECT_GT(added, capacity * 0.90) << f;  // the paper reaches ~95% with 4-slot buckets
    EXPECT_EQ(filter.size(), added);
    // The failed Add changed nothing, and every key added before it is still there.
    for (size_t i = 0; i < added; ++i) ASSERT_TRUE(filter.MayContainHash(keys[i])) << i;
    // Further adds may fail or succeed, but never lose a key.
    size_t more = 0;
    for (size_t i = added + 1; i < keys.size(); ++i) {
      if (filter.AddHash(keys[i])) {
        ++more;
        ASSERT_TRUE(filter.MayContainHash(keys[i]));
      }
    }
    EXPECT_EQ(filter.size(), added + more);
  }
}

TEST(CuckooFilter, EraseRemovesOneCopy) {
  CuckooFilter filter = CuckooFilter::Create(1000, 16).value();
  const std::vector<uint64_t> keys = KeyHashes(80, 500);
  for (uint64_t h : keys) ASSERT_TRUE(filter.AddHash(h));
  EXPECT_EQ(filter.CountHash(keys[0]), 1);
  ASSERT_TRUE(filter.AddHash(keys[0]));  // a second copy
  EXPECT_EQ(filter.size(), 501u);
  EXPECT_EQ(filter.CountHash(keys[0]), 2);
  EXPECT_TRUE(filter.EraseHash(keys[0]));
  EXPECT_TRUE(filter.MayContainHash(keys[0]));  // one copy left
  EXPECT_EQ(filter.CountHash(keys[0]), 1);
  EXPECT_TRUE(filter.EraseHash(keys[0]));
  EXPECT_EQ(filter.CountHash(keys[0]), 0);
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(filter.EraseHash(keys[i]));
  EXPECT_EQ(filter.size(), 500u - 1 - 250);
  for (size_t i = 2; i < keys.size(); i += 2) ASSERT_TRUE(filter.MayContainHash(keys[i])) << i;
  // With 16-bit fingerprints, erased keys answer "no" unless another key shares their slot pair.
  size_t still = 0;
  for (size_t i = 1; i < keys.size(); i += 2) still += filter.MayContainHash(keys[i]);
  EXPECT_LE(still, 2u);
  EXPECT_FALSE(filter.EraseHash(KeyHashes(81, 1)[0]) && filter.size() == 249u);
}

TEST(CuckooFilter, KeysAndSerialisationRoundTrip) {
  CuckooFilter filter = CuckooFilter::Create(5000, 13).value();
  EXPECT_FALSE(filter.MayContain("never added"));
  EXPECT_EQ(filter.Count("never added"), 0);
  for (int i = 0; i < 4000; ++i) ASSERT_TRUE(filter.Add("event-" + std::to_string(i)));
  EXPECT_GE(filter.Count("event-7"), 1);
  const std::string bytes = filter.Serialize();
  // Readable by the generic reader, like a static build.
  const FilterReader reader = ReaderOf(bytes);
  ASSERT_TRUE(reader.Holds<CuckooReader>());
  EXPECT_EQ(reader.trailer().num_keys, 4000u);
  CuckooFilter back =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())
          .value();
  EXPECT_EQ(back.size(), 4000u);
  for (int i = 0; i < 4000; ++i) {
    const std::string key = "event-" + std::to_string(i);
    ASSERT_TRUE(back.MayContain(key));
    ASSERT_TRUE(reader.MayContain(KeyHash(key.data(), key.size())));
  }
  // The copy keeps working as a dynamic filter.
  EXPECT_TRUE(back.Add("event-new"));
  EXPECT_TRUE(back.Erase("event-0"));
  EXPECT_EQ(back.Serialize().size(), bytes.size());
  // An empty dynamic filter serialises to a valid filter answering "no", and keeps its capacity.
  CuckooFilter empty = CuckooFilter::Create(100, 12).value();
  const std::string empty_bytes = empty.Serialize();
  const FilterReader empty_reader = ReaderOf(empty_bytes);
  EXPECT_TRUE(empty_reader.Holds<MatchNoneReader>());
  CuckooFilter empty_back =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(empty_bytes.data()),
                                empty_bytes.size())
          .value();
  EXPECT_TRUE(empty_back.Add("first"));
  EXPECT_TRUE(empty_back.MayContain("first"));
  // Bloom bytes and garbage are refused.
  EXPECT_FALSE(CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>("SSTF"), 4).ok());
}

TEST(CuckooFilter, DeserialiseRefusesATableThatDisagreesWithItsTrailer) {
  // Found by the reader fuzzer: a body with fewer fingerprints than the trailer counts was
  // adopted, and adds then overran the table's real capacity.
  CuckooFilter filter = CuckooFilter::Create(100, 12).value();
  for (uint64_t h : KeyHashes(95, 50)) ASSERT_TRUE(filter.AddHash(h));
  std::string bytes = filter.Serialize();
  // Clear every slot of the table, keep the trailer (whose check word stays valid).
  std::fill(bytes.begin(), bytes.end() - kTrailerBytes, '\0');
  const auto back =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().find("trailer counts 50 keys, the table holds 0"), std::string::npos)
      << back.error();
}

// Found by reader_fuzzer: the empty filter that zero-bucket bytes deserialise to was moved with a
// table view of 0-bit fingerprints, whose setup shifted by -1 (undefined behaviour, caught by
// UBSan in the sanitizer build). The bytes: the trailer of a cuckoo filter of no buckets.
TEST(CuckooFilter, AnEmptyDeserialisedFilterMovesAndStaysEmpty) {
  CuckooParams params;
  params.fingerprint_bits = 32;
  std::string bytes;
  ASSERT_TRUE(BuildCuckooFilter(params, nullptr, 0, &bytes).ok());
  ASSERT_EQ(bytes.size(), kTrailerBytes);
  Result<CuckooFilter> r =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ASSERT_TRUE(r.ok()) << r.error();
  CuckooFilter moved = std::move(r).value();
  CuckooFilter again = std::move(moved);
  EXPECT_EQ(again.size(), 0u);
  EXPECT_EQ(again.num_buckets(), 0u);
  EXPECT_FALSE(again.AddHash(KeyHash("k", 1)));
  EXPECT_FALSE(again.MayContainHash(KeyHash("k", 1)));
}

// From 5-bit fingerprints on, the dynamic table is semi-sorted (format version 3): 4 bits less a
// bucket than the plain table (version 1), which 4-bit fingerprints keep.
TEST(CuckooFilter, SemiSortedFromFiveBitsOnFourBitsPlain) {
  for (int f : {4, 5, 12, 15, 16, 19, 32}) {
    CuckooFilter filter = CuckooFilter::Create(1000, f).value();
    const uint64_t n = filter.num_buckets();
    EXPECT_EQ(filter.memory_bytes(),
              f >= 5 ? (n * (4 * f - 4) + 7) / 8 + 8 : (n * 4 * f + 7) / 8 + 8)
        << f;
    const std::vector<uint64_t> keys = KeyHashes(100 + f, 900);
    for (uint64_t h : keys) ASSERT_TRUE(filter.AddHash(h)) << f;
    const std::string bytes = filter.Serialize();
    const FilterReader reader = ReaderOf(bytes);  // as an SST reader reads it
    EXPECT_EQ(reader.trailer().version, f >= 5 ? 3 : 1) << f;
    for (uint64_t h : keys) ASSERT_TRUE(reader.MayContain(h)) << f;
    CuckooFilter back =
        CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())
            .value();
    for (uint64_t h : keys) ASSERT_TRUE(back.MayContainHash(h)) << f;
    // The copy goes on as the original does, byte for byte (a replica replaying the writes).
    for (uint64_t h : KeyHashes(200 + f, 40)) EXPECT_EQ(back.AddHash(h), filter.AddHash(h));
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(back.EraseHash(keys[i]), filter.EraseHash(keys[i]));
    EXPECT_EQ(back.Serialize(), filter.Serialize()) << f;
  }
}

// An Add that cannot place its key leaves every byte as it was (its walk undone in reverse; in a
// semi-sorted bucket by value, the slots having moved), in either layout.
TEST(CuckooFilter, AFailedAddLeavesTheBytesAsTheyWere) {
  for (int f : {4, 7, 12}) {
    CuckooFilter filter = CuckooFilter::Create(2000, f).value();
    const std::vector<uint64_t> keys = KeyHashes(300 + f, 4000);
    size_t failed = 0;
    std::string before = filter.Serialize();
    for (uint64_t h : keys) {
      if (filter.AddHash(h)) {
        before = filter.Serialize();
      } else {
        ++failed;
        ASSERT_EQ(filter.Serialize(), before) << f;
      }
    }
    EXPECT_GT(failed, 100u) << f;  // 4000 keys offered to about 2100 slots
  }
}

// Dynamic filters serialised before version 3 hold plain buckets, whatever their width: they load
// as they are (a Redis RDB file or dump of an earlier release), keep their layout, and erase.
TEST(CuckooFilter, PlainFiltersSerialisedBeforeVersion3StillLoadAndErase) {
  CuckooFilter sorted = CuckooFilter::Create(1000, 12).value();
  const std::vector<uint64_t> keys = KeyHashes(400, 900);
  for (uint64_t h : keys) ASSERT_TRUE(sorted.AddHash(h));
  const std::string bytes = sorted.Serialize();
  ParsedFilter parsed;
  ASSERT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &parsed));
  // The same fingerprints in a plain table, under a version-1 trailer.
  const uint64_t n = parsed.trailer.num_units;
  std::string plain(CuckooTableView::BytesFor(n, 12) + kTrailerBytes, '\0');
  CuckooTable table(reinterpret_cast<uint8_t*>(plain.data()), n, 12);
  ASSERT_TRUE(SemiSortedTableView(parsed.body, n, 12).Decode(&table));
  Trailer t = parsed.trailer;
  t.version = 1;
  EncodeTrailer(t, reinterpret_cast<uint8_t*>(plain.data()) + plain.size() - kTrailerBytes);
  CuckooFilter old =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(plain.data()), plain.size())
          .value();
  EXPECT_TRUE(old.IsSizedFor(1000, 12));
  EXPECT_EQ(old.memory_bytes(), CuckooTableView::BytesFor(n, 12));
  for (uint64_t h : keys) ASSERT_TRUE(old.MayContainHash(h));
  for (size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(old.EraseHash(keys[i]));
  for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(old.MayContainHash(keys[i]));
  EXPECT_TRUE(old.AddHash(keys[0]));
  const std::string still_plain = old.Serialize();
  EXPECT_EQ(ReaderOf(still_plain).trailer().version, 1);
}

// A semi-sorted bucket whose rank no encoder writes is refused, not adopted.
TEST(CuckooFilter, DeserialiseRefusesASemiSortedBucketItDoesNotUnderstand) {
  CuckooFilter filter = CuckooFilter::Create(100, 12).value();
  for (uint64_t h : KeyHashes(500, 50)) ASSERT_TRUE(filter.AddHash(h));
  std::string bytes = filter.Serialize();
  bytes[0] = '\xff';  // bucket 0's rank, its first 12 bits: now 4095, past the last rank, 3875
  bytes[1] = static_cast<char>(bytes[1] | 0x0f);
  const auto back =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().find("not understood"), std::string::npos) << back.error();
}

TEST(CuckooFilter, StaticBuildsDeserialiseToo) {
  const std::vector<uint64_t> keys = KeyHashes(90, 1000);
  const Built b = Build(12, keys);
  CuckooFilter filter =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size())
          .value();
  for (uint64_t h : keys) ASSERT_TRUE(filter.MayContainHash(h));
}

// ---- Semi-sorted buckets (format version 2) ---------------------------------------------------

// The semi-sorted table is the plain one, encoded: the same keys give filters that answer every
// query alike, at every width that semi-sorts.
TEST(SemiSortedCuckoo, AnswersExactlyAsThePlainTableOfTheSameKeys) {
  const std::vector<uint64_t> keys = KeyHashes(200, 5000);
  const std::vector<uint64_t> queries = KeyHashes(201, 50000);
  for (int f = kCuckooSemiSortMinFingerprintBits; f <= kCuckooMaxFingerprintBits; ++f) {
    SCOPED_TRACE("f=" + std::to_string(f));
    const Built plain = Build(f, keys, kCuckooTargetLoad, CuckooLayout::kPlain);
    const Built sorted = Build(f, keys, kCuckooTargetLoad, CuckooLayout::kSemiSorted);
    EXPECT_EQ(ParsedTrailer(plain.bytes).version, 1);
    EXPECT_EQ(ParsedTrailer(sorted.bytes).version, 2);
    // One bit less per slot, to the byte: num_buckets * 4 / 8 bytes.
    EXPECT_EQ(plain.bytes.size() - sorted.bytes.size(), plain.info.num_buckets / 2);
    const FilterReader a = plain.reader();
    const FilterReader b = sorted.reader();
    ASSERT_EQ(CountMissing(b, keys), 0u);
    uint64_t positives = 0;
    for (uint64_t q : queries) {
      ASSERT_EQ(a.MayContain(q), b.MayContain(q)) << q;
      positives += b.MayContain(q);
    }
    if (f <= 8) {
      EXPECT_GT(positives, 0u);  // the comparison saw both answers
    }
  }
}

// The ranks the encoder computes are the positions in the decoder's table, for all 3876 tuples.
TEST(SemiSortedCuckoo, EncoderRanksAreTheDecoderTablePositions) {
  const auto& table = semi_sorted_internal::kNibblesOfRank;
  for (uint32_t rank = 0; rank < table.size(); ++rank) {
    const uint32_t n = table[rank];
    ASSERT_EQ(SemiSortedRankForTesting(n >> 12, (n >> 8) & 15, (n >> 4) & 15, n & 15), rank);
  }
}

// Buckets that hold every mix of equal nibbles, equal fingerprints and empty slots: hashes chosen
// to crowd few buckets with fingerprints that share their top bits.
TEST(SemiSortedCuckoo, CrowdedBucketsWithSharedNibblesRoundTrip) {
  for (int f : {5, 6, 9, 13, 16, 17, 24, 32}) {
    SCOPED_TRACE("f=" + std::to_string(f));
    std::vector<uint64_t> keys;
    std::mt19937_64 rng(f);
    // Two buckets' worth of keys (8 slots at 4 buckets): high bits pick the bucket, low bits the
    // fingerprint, drawn from a handful of values so that nibbles and whole fingerprints repeat.
    for (int i = 0; i < 14; ++i) {
      const uint64_t high = (rng() % 2) << 63;
      const uint64_t low = (rng() % 6) * 0x1111'1111ull + (rng() % 3);
      keys.push_back(high | low);
    }
    const Built plain = Build(f, keys, 0.9, CuckooLayout::kPlain);
    const Built sorted = Build(f, keys, 0.9, CuckooLayout::kSemiSorted);
    ASSERT_EQ(CountMissing(sorted.reader(), keys), 0u);
    // Decoding gives the plain table back, slot for slot after sorting each bucket: compare the
    // dynamic filter's plain serialisation with a plain build's answers.
    CuckooFilter decoded =
        CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(sorted.bytes.data()),
                                  sorted.bytes.size())
            .value();
    EXPECT_EQ(decoded.size(), sorted.info.stored);
    for (uint64_t q : KeyHashes(f, 20000)) {
      ASSERT_EQ(decoded.MayContainHash(q), plain.reader().MayContain(q));
    }
  }
}

// A rank that no writer produces (3876 .. 4095) makes its bucket answer "may match", and the
// dynamic filter refuses the bytes: never a false negative, never a crash.
TEST(SemiSortedCuckoo, RanksNeverWrittenReadAsMayMatch) {
  const std::vector<uint64_t> keys = KeyHashes(300, 2000);
  Built b = Build(13, keys);
  ASSERT_EQ(ParsedTrailer(b.bytes).version, 2);
  // Bucket 0's rank is the first 12 bits of the body: make it 4095.
  b.bytes[0] = static_cast<char>(0xff);
  b.bytes[1] = static_cast<char>(b.bytes[1] | 0x0f);
  const FilterReader reader = b.reader();
  ASSERT_TRUE(reader.valid());
  const SemiSortedTableView table(reinterpret_cast<const uint8_t*>(b.bytes.data()),
                                  ParsedTrailer(b.bytes).num_units, 13);
  for (uint32_t fp = 1; fp < 8192; fp += 97) {
    EXPECT_TRUE(table.Contains(0, fp)) << fp;
    EXPECT_TRUE(table.ContainsEither(0, 2, fp)) << fp;  // the query path, whatever the low parts
    EXPECT_TRUE(table.ContainsEither(2, 0, fp)) << fp;
  }
  // Every key whose first bucket is 0 gets "may match" from the reader, single and batched.
  const uint64_t buckets = ParsedTrailer(b.bytes).num_units;
  std::vector<uint64_t> in_bucket_0;
  for (uint64_t h : KeyHashes(302, 200000)) {
    if (FastRange64(h, buckets) == 0) in_bucket_0.push_back(h);
  }
  ASSERT_GT(in_bucket_0.size(), 100u);
  EXPECT_EQ(CountMissing(reader, in_bucket_0), 0u);
  EXPECT_FALSE(
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(b.bytes.data()), b.bytes.size())
          .ok());
}

// What the readers prefetch for a bucket, [BucketAddress, + BucketReadBytes()), holds every byte
// a query of that bucket reads: the bucket is placed so that the span ends where an unreadable
// page begins, so a load past it faults. (The span assumes the worst bit offset, 7; buckets start
// at 0 or 4, so it may hold a byte to spare.) Both bit offsets a bucket can start at (0 and 4),
// every width, and fingerprints that make the queries read everything they can (the semi-sorted
// ones decode the rank and every low part).
TEST(CuckooTables, BucketReadBytesCoverEveryLoadOfAQuery) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapped =
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  uint8_t* const guard = static_cast<uint8_t*>(mapped) + page;
  ASSERT_EQ(mprotect(guard, page, PROT_NONE), 0);
  for (uint64_t bucket = 0; bucket < 2; ++bucket) {
    for (int f = kCuckooMinFingerprintBits; f <= kCuckooMaxFingerprintBits; ++f) {
      SCOPED_TRACE(::testing::Message() << "f " << f << ", bucket " << bucket);
      const uint32_t all = LowBitsMask(f);
      {
        const uint64_t bits = bucket * kCuckooSlotsPerBucket * f;
        const CuckooTableView probe(guard, bucket + 1, f);
        const uint8_t* data = guard - probe.BucketReadBytes() - (bits >> 3);
        const CuckooTableView table(data, bucket + 1, f);
        ASSERT_EQ(table.BucketAddress(bucket) + table.BucketReadBytes(), guard);
        for (uint32_t fp : {0u, 1u, all}) EXPECT_EQ(table.Contains(bucket, fp), fp == 0);
      }
      if (f < SemiSortedTableView::kMinFingerprintBits) continue;
      const uint64_t bits = bucket * SemiSortedTableView::BucketBits(f);
      const SemiSortedTableView probe(guard, bucket + 1, f);
      const uint8_t* data = guard - probe.BucketReadBytes() - (bits >> 3);
      const SemiSortedTableView table(data, bucket + 1, f);
      ASSERT_EQ(table.BucketAddress(bucket) + table.BucketReadBytes(), guard);
      // Zero bytes: rank 0 (four zero nibbles) and zero low parts, so fingerprint 0 in every
      // slot. 2^(f-4) has zero low parts and nibble 1: it matches every low part, decodes the
      // rank, and is absent.
      const uint32_t nibble_one = 1u << (f - 4);
      EXPECT_FALSE(table.Contains(bucket, nibble_one));
      EXPECT_FALSE(table.ContainsEither(bucket, bucket, nibble_one));
      EXPECT_TRUE(table.ContainsEither(bucket, bucket, 0));
      EXPECT_FALSE(table.ContainsEither(bucket, bucket, all));
    }
  }
  ASSERT_EQ(munmap(mapped, 2 * page), 0);
}

// An empty static filter is version 1 at every width: readers from before semi-sorting read it as
// "no key" too.
TEST(SemiSortedCuckoo, EmptyFiltersStayVersionOne) {
  const Built b = Build(13, {});
  EXPECT_EQ(ParsedTrailer(b.bytes).version, 1);
  EXPECT_EQ(b.bytes.size(), kTrailerBytes);
  EXPECT_FALSE(b.reader().MayContain(KeyHash("k", 1)));
}

// The target: at 0.1%, at most 12.7 bits per key, and the measured rate at most 0.1%
// within a binomial bound.
TEST(SemiSortedCuckoo, OneTenthPercentCostsAtMost12Point7BitsPerKey) {
  const std::vector<uint64_t> keys = KeyHashes(400, 200000);
  const CuckooParams params = Cuckoo::ForFpRate(0.001).value();
  EXPECT_EQ(params.fingerprint_bits, 13);
  const std::string bytes = Cuckoo::Build(params, keys.data(), keys.size()).value();
  const double bits_per_key = 8.0 * bytes.size() / keys.size();
  EXPECT_LE(bits_per_key, 12.7);
  const FilterReader reader = ReaderOf(bytes);
  const std::vector<uint64_t> absent = KeyHashes(401, 1000000);
  uint64_t fp = 0;
  for (uint64_t q : absent) fp += reader.MayContain(q);
  const double expected = Cuckoo::EstimatedFpRate(params, keys.size()).value();
  EXPECT_LE(expected, 0.001);
  const double n = static_cast<double>(absent.size());
  EXPECT_NEAR(static_cast<double>(fp), expected * n, BinomialTolerance(n, expected));
}

}  // namespace
TEST(CuckooFilter, SelfMoveAndMovedFromFiltersStaySafe) {
  CuckooFilter filter = CuckooFilter::Create(1000, 12).value();
  ASSERT_TRUE(filter.Add("a"));
  CuckooFilter& alias = filter;
  filter = std::move(alias);  // NOLINT: a self-move, as standard algorithms may do
  EXPECT_TRUE(filter.MayContain("a"));
  EXPECT_EQ(filter.size(), 1u);
  CuckooFilter moved = std::move(filter);
  EXPECT_TRUE(moved.MayContain("a"));
  EXPECT_FALSE(filter.Add("b"));  // NOLINT(bugprone-use-after-move): holds and takes nothing
  EXPECT_FALSE(filter.Erase("a"));
  EXPECT_EQ(filter.size(), 0u);
}

// A static build stores one fingerprint for the keys of a bucket pair that share it: a filter
// deserialised from one (semi-sorted) refuses Erase, which would lose the other keys.
TEST(CuckooFilter, FiltersFromStaticBuildsRefuseErase) {
  const std::vector<uint64_t> keys = KeyHashes(90, 20'000);
  const std::string bytes = Cuckoo::Build(CuckooParams{8}, keys.data(), keys.size()).value();
  CuckooFilter filter =
      CuckooFilter::Deserialize(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())
          .value();
  const uint64_t before = filter.size();
  for (const uint64_t h : keys) ASSERT_FALSE(filter.EraseHash(h));
  EXPECT_EQ(filter.size(), before);
  for (const uint64_t h : keys) ASSERT_TRUE(filter.MayContainHash(h));
  // 8-bit fingerprints over 20k keys: some pairs share one stored copy, which is why.
  EXPECT_LT(before, keys.size());
}

}  // namespace sstfilter
