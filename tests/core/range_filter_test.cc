// SPDX-License-Identifier: Apache-2.0
// The range filter (core/range/): no false negatives against a sorted set, measured false-positive
// rates within a binomial bound of RangeFpRate on random and on correlated queries, the same bytes
// for any order of the same keys, range deletions, golden bytes, and bytes not understood.
#include "core/range/range_api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/range/elias_fano.h"

namespace sstfilter {
namespace {

std::string BigEndian(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i) {
    s[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return s;
}

std::string Build(const std::vector<std::string>& keys, double bits_per_key) {
  RangeFilterBuilder builder(bits_per_key);
  for (const auto& k : keys) builder.AddKey(k);
  auto bytes = builder.Finish();
  EXPECT_TRUE(bytes.ok()) << bytes.error();
  return std::move(bytes).value();
}

RangeFilterReader Open(const std::string& bytes) {
  return RangeFilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}
// A reader is a view over its bytes: a temporary would be freed under it.
RangeFilterReader Open(std::string&& bytes) = delete;

bool Query(const RangeFilterReader& r, const std::string& lower, const std::string& upper) {
  const std::string_view lo(lower), up(upper);
  return r.MayContain(&lo, &up);
}

// Whether the sorted set holds a key in [lower, upper).
bool Holds(const std::set<std::string>& set, const std::string& lower, const std::string& upper) {
  auto it = set.lower_bound(lower);
  return it != set.end() && *it < upper;
}

TEST(EliasFanoTest, AnyInRangeMatchesTheSequence) {
  std::mt19937_64 rng(7);
  for (uint64_t n : {1, 2, 5, 100, 5000}) {
    for (uint32_t l : {0u, 3u, 9u}) {
      const uint64_t universe = (n << l) * 3 + 1;
      std::vector<uint64_t> values(n);
      for (auto& v : values) v = rng() % universe;
      std::sort(values.begin(), values.end());
      EliasFanoShape shape{n, universe, l};
      ASSERT_TRUE(shape.Valid());
      std::string body;
      AppendEliasFano(shape, values.data(), &body);
      ASSERT_EQ(body.size(), shape.BodyBytes());
      std::vector<uint8_t> exact(body.begin(), body.end());  // ASan sees a read past the end
      EliasFanoView view(shape, exact.data());
      for (int q = 0; q < 3000; ++q) {
        const uint64_t lo = rng() % universe;
        const uint64_t hi = lo + rng() % (q % 2 ? 4 : (uint64_t{1} << (l + 2)));
        const auto it = std::lower_bound(values.begin(), values.end(), lo);
        const bool expected = it != values.end() && *it <= hi;
        ASSERT_EQ(view.AnyInRange(lo, hi), expected) << n << " " << l << " " << lo << " " << hi;
      }
      for (uint64_t v : values) ASSERT_TRUE(view.AnyInRange(v, v));
    }
  }
}

TEST(RangeFilterTest, NoFalseNegativesOnIntegerAndStringKeys) {
  std::mt19937_64 rng(11);
  for (int shape = 0; shape < 4; ++shape) {
    std::set<std::string> set;
    for (int i = 0; i < 20000; ++i) {
      switch (shape) {
        case 0:
          set.insert(BigEndian(rng()));
          break;  // random integers
        case 1:
          set.insert(BigEndian(rng() % 1000000));
          break;  // dense small integers
        case 2:
          set.insert("user:" + std::to_string(rng() % 100000) + ":" + std::to_string(rng() % 1000));
          break;  // strings, varying length
        case 3:
          set.insert("tenant/42/" + std::string(rng() % 24, 'x') + BigEndian(rng()));
          break;  // beyond the 16-byte window
      }
    }
    std::vector<std::string> keys(set.begin(), set.end());
    // In order, the build sorts the hashes in the windows' own memory (10 chunks of them here);
    // out of order, beside a sorted copy: the same bytes.
    const std::string in_order = Build(keys, 12);
    std::shuffle(keys.begin(), keys.end(), rng);  // any order
    const std::string bytes = Build(keys, 12);
    ASSERT_EQ(bytes, in_order) << shape;
    const RangeFilterReader reader = Open(bytes);
    ASSERT_TRUE(reader.understood());
    ASSERT_LE(reader.num_keys(), set.size());
    for (const auto& k : set) {
      ASSERT_TRUE(Query(reader, k, k + std::string(1, '\0'))) << shape;  // the point
      ASSERT_TRUE(Query(reader, k.substr(0, k.size() - 1), k + "\xff")) << shape;
      const std::string_view lo(k);
      ASSERT_TRUE(reader.MayContain(&lo, nullptr));
      const std::string up = k + std::string(1, '\0');
      const std::string_view upv(up);
      ASSERT_TRUE(reader.MayContain(nullptr, &upv));
    }
    // Random bounds drawn near keys: every range the set meets answers yes.
    for (int q = 0; q < 20000; ++q) {
      std::string a = keys[rng() % keys.size()], b = keys[rng() % keys.size()];
      if (rng() % 2) a.back() = static_cast<char>(a.back() + 1);
      if (rng() % 3 == 0) b.resize(rng() % (b.size() + 1));
      // A byte no key has there (the digit alphabets' edge cases), or any byte.
      if (rng() % 3 == 0) a[rng() % a.size()] = static_cast<char>(rng());
      if (rng() % 3 == 0 && !b.empty()) b[rng() % b.size()] = static_cast<char>(rng());
      if (b < a) std::swap(a, b);
      if (Holds(set, a, b)) {
        ASSERT_TRUE(Query(reader, a, b)) << shape;
      }
    }
    EXPECT_TRUE(reader.MayContain(nullptr, nullptr));
  }
}

// Key sets at the edges, at budgets from 4 to 48 bits: empty keys, keys of 0x00 and 0xff bytes,
// keys that are prefixes of others, one key, one key repeated, a 260-byte shared prefix (cut to
// 255), 16 random bytes past the prefix (every byte value at every window byte: positions of all
// 128 bits). Every range that holds a key answers yes, with bounds of any bytes and either side
// open.
TEST(RangeFilterTest, NoFalseNegativesAtTheEdges) {
  std::mt19937_64 rng(29);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
  };
  std::vector<std::vector<std::string>> sets;
  sets.push_back({""});
  sets.push_back({"", "\0", std::string(2, '\0'), "\xff", "\xff\xff", "a", "a\0", "a\xff"});
  sets.push_back({"only one key"});
  sets.push_back(std::vector<std::string>(50, "the same key"));
  std::vector<std::string> long_prefix, full, binary;
  for (int i = 0; i < 3000; ++i) {
    long_prefix.push_back(std::string(260, 'p') + random_bytes(1 + rng() % 20));
    full.push_back("t" + random_bytes(16));
    binary.push_back(std::string(rng() % 3, rng() % 2 ? '\0' : '\xff') + random_bytes(rng() % 6));
  }
  sets.push_back(long_prefix);
  sets.push_back(full);
  sets.push_back(binary);
  for (double bits : {4.0, 9.5, 16.0, 48.0}) {
    for (const auto& keys : sets) {
      const std::string bytes = Build(keys, bits);
      const RangeFilterReader reader = Open(bytes);
      ASSERT_TRUE(reader.understood());
      const std::set<std::string> set(keys.begin(), keys.end());
      std::vector<std::string> bounds(set.begin(), set.end());
      for (const auto& k : set) {
        bounds.push_back(k + std::string(1, '\0'));
        if (!k.empty()) bounds.push_back(k.substr(0, k.size() - 1));
        std::string edited = k.empty() ? std::string(1, '\x01') : k;
        edited[rng() % edited.size()] = static_cast<char>(rng());
        bounds.push_back(edited);
      }
      if (bounds.size() > 200) bounds.resize(200);
      for (const auto& lower : bounds) {
        for (const auto& upper : bounds) {
          if (Holds(set, lower, upper)) {
            ASSERT_TRUE(Query(reader, lower, upper)) << bits << " " << keys.size();
          }
        }
        const std::string_view l(lower);
        if (set.lower_bound(lower) != set.end()) {
          ASSERT_TRUE(reader.MayContain(&l, nullptr)) << bits;
        }
        if (!set.empty() && *set.begin() < lower) {
          ASSERT_TRUE(reader.MayContain(nullptr, &l)) << bits;
        }
      }
    }
  }
}

// Bound: the measured rate of n queries at most p + 4 sqrt(p (1 - p) / n) + 1 / n, and (for the
// random queries, whose rate is the formula's) at least p - 4 sqrt(...) - 1 / n.
void ExpectRate(uint64_t hits, uint64_t queries, double p, bool two_sided, const char* what) {
  const double rate = static_cast<double>(hits) / static_cast<double>(queries);
  const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(queries));
  EXPECT_LE(rate, p + 4 * sigma + 1.0 / static_cast<double>(queries)) << what;
  if (two_sided) {
    EXPECT_GE(rate, p - 4 * sigma - 1.0 / static_cast<double>(queries)) << what;
  }
}

TEST(RangeFilterTest, FalsePositiveRatesFollowTheBound) {
  std::mt19937_64 rng(13);
  const uint64_t n = 50000;
  std::vector<uint64_t> ints;
  for (uint64_t i = 0; i < n; ++i) ints.push_back(rng() >> 8);  // 56-bit integers in 8-byte keys
  std::sort(ints.begin(), ints.end());
  ints.erase(std::unique(ints.begin(), ints.end()), ints.end());
  std::vector<std::string> keys;
  for (uint64_t v : ints) keys.push_back(BigEndian(v));
  // Whether [lo, lo + length) holds no key.
  auto empty = [&](uint64_t lo, uint64_t length) {
    auto it = std::lower_bound(ints.begin(), ints.end(), lo);
    return it == ints.end() || *it >= lo + length;
  };
  for (double bits : {8.0, 12.0, 16.0}) {
    const std::string bytes = Build(keys, bits);
    const RangeFilterReader reader = Open(bytes);
    const RangeFilterShape shape = RangeShapeFor(ints.size(), bits);
    EXPECT_NEAR(8.0 * bytes.size() / ints.size(), bits, 0.05) << bits;
    for (uint64_t length : {1, 16, 1024}) {
      const double p = RangeFpRate(shape, ints.size(), static_cast<double>(length));
      uint64_t random_fp = 0, random_queries = 0, correlated_fp = 0, correlated_queries = 0;
      const int queries = p > 0.05 ? 20000 : 200000;
      for (int q = 0; q < queries; ++q) {
        // Random: a range of `length` integers anywhere among the keys, empty.
        const uint64_t lo = ints.front() + rng() % (ints.back() - ints.front() - length);
        if (empty(lo, length)) {
          ++random_queries;
          random_fp += Query(reader, BigEndian(lo), BigEndian(lo + length));
        }
        // Correlated: the range just after a key.
        const uint64_t key = ints[rng() % ints.size()];
        if (empty(key + 1, length)) {
          ++correlated_queries;
          correlated_fp += Query(reader, BigEndian(key + 1), BigEndian(key + 1 + length));
        }
      }
      ExpectRate(random_fp, random_queries, p, true, "random");
      ExpectRate(correlated_fp, correlated_queries, p, false, "correlated");
    }
  }
}

// Decimal ids: each digit's alphabet has ten values, so a range of L ids spans L positions and
// the rate is the integers' (without the alphabets, ASCII digits spread 16 ids over up to 500
// windows: 17.6% at 16 bits).
TEST(RangeFilterTest, DecimalStringKeysCountInTens) {
  std::mt19937_64 rng(23);
  auto key = [](uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "user:%010llu", static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  std::vector<uint64_t> ids;
  for (int i = 0; i < 50000; ++i) ids.push_back(rng() % 10000000000ull);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::string> keys;
  for (uint64_t v : ids) keys.push_back(key(v));
  const std::string bytes = Build(keys, 16);  // the reader is a view: the bytes must outlive it
  const RangeFilterReader reader = Open(bytes);
  for (uint64_t length : {1, 16}) {
    const double p = RangeFpRate(RangeShapeFor(ids.size(), 16), ids.size(), length);
    uint64_t fp = 0, queries = 0;
    for (int q = 0; q < 200000; ++q) {
      const uint64_t lo = rng() % (10000000000ull - length);
      auto it = std::lower_bound(ids.begin(), ids.end(), lo);
      if (it != ids.end() && *it < lo + length) continue;
      ++queries;
      fp += Query(reader, key(lo), key(lo + length));
    }
    ExpectRate(fp, queries, p, true, "decimal ids");
  }
}

// A build's hashes after the counting sort by bucket: out of order in pairs (the usual case),
// or, for keys far denser than the hash range in two blocks whose hashes overlap, two long sorted
// runs in the same buckets, where insertion sort alone is quadratic.
TEST(RangeFilterTest, SortWithinBucketsSortsNearlySortedAndInterleavedRuns) {
  std::vector<uint64_t> pairs;
  for (uint64_t i = 0; i < 10000; i += 2) {
    pairs.push_back(i + 1);
    pairs.push_back(i);
  }
  std::vector<uint64_t> expected = pairs;
  std::sort(expected.begin(), expected.end());
  EXPECT_FALSE(range_detail::SortWithinBuckets(pairs.data(), static_cast<uint32_t>(pairs.size())));
  EXPECT_EQ(pairs, expected);

  std::vector<uint64_t> runs;
  for (uint64_t i = 0; i < 8192; ++i) runs.push_back(2 * i);      // one block's hashes
  for (uint64_t i = 0; i < 8192; ++i) runs.push_back(2 * i + 1);  // another's, interleaved
  expected = runs;
  std::sort(expected.begin(), expected.end());
  EXPECT_TRUE(range_detail::SortWithinBuckets(runs.data(), static_cast<uint32_t>(runs.size())));
  EXPECT_EQ(runs, expected);
}

TEST(RangeFilterTest, SameBytesForAnyOrderAndRepeats) {
  std::mt19937_64 rng(17);
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(rng() % 100000) + "/x");
  std::sort(keys.begin(), keys.end());
  const std::string sorted = Build(keys, 10);
  // Reverse order shortens the prefix at the last keys instead of the first.
  std::vector<std::string> reversed(keys.rbegin(), keys.rend());
  EXPECT_EQ(Build(reversed, 10), sorted);
  std::vector<std::string> repeated = keys;
  repeated.insert(repeated.end(), keys.begin(), keys.begin() + 500);
  std::shuffle(repeated.begin(), repeated.end(), rng);
  EXPECT_EQ(Build(repeated, 10), sorted);
}

TEST(RangeFilterTest, PrefixAndWindowOfTheKeys) {
  // Keys sharing "tenant/7/" and at most 8 bytes after it: the window is those bytes, exact.
  std::vector<std::string> keys;
  for (uint64_t v = 0; v < 1000; v += 10) keys.push_back("tenant/7/" + BigEndian(v * 1000));
  const std::string bytes = Build(keys, 16);  // the reader is a view: the bytes must outlive it
  const RangeFilterReader reader = Open(bytes);
  ASSERT_TRUE(reader.understood());
  EXPECT_EQ(reader.window_bytes(), 3u);  // the values fit 3 bytes: 5 zero bytes join the prefix
  EXPECT_FALSE(Query(reader, "tenant/6/", "tenant/7/"));  // below every key
  EXPECT_FALSE(Query(reader, "tenant/8", "tenant/9"));    // above
  EXPECT_TRUE(Query(reader, "tenant/", "tenant/8"));
  EXPECT_FALSE(Query(reader, "tenant/7/" + BigEndian(1), "tenant/7/" + BigEndian(11)));
  EXPECT_TRUE(Query(reader, "tenant/7/" + BigEndian(1), "tenant/7/" + BigEndian(10001)));
  EXPECT_FALSE(Query(reader, "b", "a"));  // an empty query range holds nothing

  // Constant padding after the integer stays out of the window.
  std::vector<std::string> padded;
  for (uint64_t v = 0; v < 1000; ++v) padded.push_back(BigEndian(v * 1000) + "xxxxxxxx");
  const std::string padded_bytes = Build(padded, 16);
  EXPECT_EQ(Open(padded_bytes).window_bytes(), 3u);
  // Short keys with a few long ones: the window is the short keys'.
  std::vector<std::string> mixed;
  for (uint32_t id = 0; id < 5000; ++id) {
    mixed.push_back("k" + BigEndian(id * 977).substr(4) +
                    (id % 7 == 0 ? "/a suffix past the window" : ""));
  }
  const std::string mixed_bytes = Build(mixed, 16);
  const RangeFilterReader mixed_reader = Open(mixed_bytes);
  EXPECT_EQ(mixed_reader.window_bytes(), 3u);  // the ids' low 3 bytes; the first joins "k"
}

TEST(RangeFilterTest, RangeDeletionsAnswerMayContainWhereTheyReach) {
  RangeFilterBuilder builder(10);
  builder.AddKey("m");
  builder.AddRangeDeletion("c", "e");
  builder.AddRangeDeletion("p", "r");
  const std::string bytes = builder.Finish().value();
  const RangeFilterReader reader = Open(bytes);
  EXPECT_TRUE(Query(reader, "d", "d1"));  // inside the cover [c, r)
  EXPECT_TRUE(Query(reader, "a", "c1"));
  EXPECT_FALSE(Query(reader, "a", "c"));  // ends where the cover starts
  EXPECT_FALSE(Query(reader, "r", "z"));  // starts where it ends
  // A file with only a range deletion.
  RangeFilterBuilder only(10);
  only.AddRangeDeletion("c", "e");
  const std::string only_bytes = only.Finish().value();  // the reader is a view over them
  const RangeFilterReader deletion_only = Open(only_bytes);
  EXPECT_TRUE(Query(deletion_only, "a", "d"));
  EXPECT_FALSE(Query(deletion_only, "e", "z"));
  // No keys at all.
  RangeFilterBuilder empty(10);
  const std::string empty_bytes = empty.Finish().value();
  const RangeFilterReader none = Open(empty_bytes);
  ASSERT_TRUE(none.understood());
  EXPECT_FALSE(Query(none, "a", "z"));
  EXPECT_FALSE(none.MayContain(nullptr, nullptr));
}

TEST(RangeFilterTest, BitsPerKeyOutsideTheLimitsIsAnError) {
  EXPECT_TRUE(CheckRangeBitsPerKey(16).ok());
  EXPECT_FALSE(CheckRangeBitsPerKey(3.9).ok());
  EXPECT_FALSE(CheckRangeBitsPerKey(49).ok());
  EXPECT_FALSE(CheckRangeBitsPerKey(std::nan("")).ok());
  EXPECT_NE(CheckRangeBitsPerKey(2).error().find("got 2"), std::string::npos);
}

TEST(RangeFilterTest, BytesNotUnderstoodAnswerMayContain) {
  std::vector<std::string> keys;
  for (uint64_t v = 0; v < 2000; ++v) keys.push_back(BigEndian(v * 7919));
  std::string bytes;
  {
    RangeFilterBuilder builder(12);
    for (const auto& k : keys) builder.AddKey(k);
    builder.AddRangeDeletion(BigEndian(5), BigEndian(6));
    bytes = builder.Finish().value();
  }
  // Everything before the body, which the check word covers: the header, the prefix (byte 9 has
  // its length), the alphabets (32 bytes per window byte, byte 6) and the cover (two 8-byte keys).
  const size_t header_and_strings =
      64 + static_cast<uint8_t>(bytes[9]) + 32 * static_cast<uint8_t>(bytes[6]) + 2 * (4 + 8);
  std::mt19937_64 rng(19);
  auto check_no_crash_and_no_lost_key = [&](const std::string& b) {
    std::vector<uint8_t> exact(b.begin(), b.end());
    const RangeFilterReader r = RangeFilterReader::Open(exact.data(), exact.size());
    for (int q = 0; q < 50; ++q) {
      const uint64_t v = rng() % (2000 * 7919);
      const bool answer = Query(r, BigEndian(v), BigEndian(v + 1 + rng() % 100000));
      if (!r.understood()) {
        EXPECT_TRUE(answer);  // not understood: "may contain"
      }
    }
    return r.understood();
  };
  // Every truncation and extension is refused.
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(check_no_crash_and_no_lost_key(bytes.substr(0, size))) << size;
  }
  EXPECT_FALSE(check_no_crash_and_no_lost_key(bytes + "x"));
  // A flipped bit in the header, prefix, alphabets or cover is refused (the check word); in the
  // body, nothing crashes.
  for (size_t bit = 0; bit < 8 * bytes.size(); bit += (bit < 8 * header_and_strings ? 1 : 37)) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    const bool understood = check_no_crash_and_no_lost_key(flipped);
    if (bit < 8 * header_and_strings) {
      EXPECT_FALSE(understood) << bit;
    }
  }
  for (int i = 0; i < 2000; ++i) {
    std::string random(rng() % 300, '\0');
    for (auto& c : random) c = static_cast<char>(rng());
    if (i % 2 && random.size() >= 4) random.replace(0, 4, "SSTR");
    check_no_crash_and_no_lost_key(random);
  }
}

// The bytes of a small filter, pinned: a change is a new format version.
TEST(RangeFilterTest, GoldenBytes) {
  RangeFilterBuilder builder(10);
  for (const char* k : {"user:0017", "user:0042", "user:0108", "user:0420", "user:9999"}) {
    builder.AddKey(k);
  }
  builder.AddRangeDeletion("user:05", "user:06");
  const std::string bytes = builder.Finish().value();
  std::string hex;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    hex += buf;
  }
  EXPECT_EQ(hex,
            "535354520101040700050000f15b0b970500000000000000eb0400000000000007000000000000000000"
            "000000000000c7000000000000000000000000000000757365723a000000000000010200000000000000"
            "000000000000000000000000000000000000000000000013020000000000000000000000000000000000"
            "000000000000000000000000001702000000000000000000000000000000000000000000000000000000"
            "000000850300000000000000000000000000000000000000000000000007000000757365723a30350700"
            "0000757365723a30363e7942d105000000181900000000000000000000");
  const RangeFilterReader reader = Open(bytes);
  EXPECT_TRUE(Query(reader, "user:0042", "user:0043"));
  EXPECT_TRUE(Query(reader, "user:0500", "user:0501"));  // the range deletion
}

}  // namespace
}  // namespace sstfilter
