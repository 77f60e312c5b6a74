// SPDX-License-Identifier: Apache-2.0
// The byte format: golden bytes that pin it, the trailer round trip, and the reader rules on
// hostile input (every truncation, every trailer bit flip, random bytes, crafted trailers).
#include "core/format.h"
#include "core/parse.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/blocked_bloom/blocked_bloom.h"
#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/cuckoo/cuckoo.h"
#include "core/filter_reader.h"
#include "core/fuse/fuse.h"
#include "core/kinds.h"
#include "core/ribbon/ribbon.h"
#include "core/standard_bloom/standard_bloom.h"
#include "sstfilter/cuckoo_filter.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using testing::KeyHashes;

// Copies bytes into a heap block of exactly that size, so that the sanitizer build reports any
// read past the end.
std::unique_ptr<uint8_t[]> Exact(const std::string& bytes) {
  std::unique_ptr<uint8_t[]> p(new uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)]);
  if (!bytes.empty()) std::memcpy(p.get(), bytes.data(), bytes.size());
  return p;
}

// The keys of the golden filters: "key0" ... "key999", not padded.
std::vector<uint64_t> GoldenKeys() {
  std::vector<uint64_t> out;
  for (int i = 0; i < 1000; ++i) {
    const std::string key = testing::NumberedKey(i, /*digits=*/0);
    out.push_back(KeyHash(key.data(), key.size()));
  }
  return out;
}

template <typename BloomKind>
std::string BloomBytes(double bits_per_key, const std::vector<uint64_t>& k) {
  return BloomKind::Build(BloomKind::ForBitsPerKey(bits_per_key).value(), k.data(), k.size())
      .value();
}

std::string CuckooBytes(int fingerprint_bits, const std::vector<uint64_t>& keys,
                        CuckooLayout layout) {
  CuckooParams params;
  params.fingerprint_bits = fingerprint_bits;
  std::string out;
  EXPECT_TRUE(BuildCuckooFilter(params, keys.data(), keys.size(), &out, layout).ok());
  return out;
}

// A dynamic CuckooFilter for the keys, filled key by key (version 3 from f = 5 on).
std::string DynamicCuckooBytes(int fingerprint_bits, const std::vector<uint64_t>& keys) {
  CuckooFilter filter = CuckooFilter::Create(keys.size(), fingerprint_bits).value();
  for (uint64_t h : keys) EXPECT_TRUE(filter.AddHash(h));
  return filter.Serialize();
}

std::string FuseBytes(int fingerprint_bits, const std::vector<uint64_t>& keys) {
  std::string out;
  EXPECT_TRUE(
      Fuse::BuildWithInfo(FuseParams{fingerprint_bits}, keys.data(), keys.size(), &out).ok());
  return out;
}

std::string RibbonBytes(int fingerprint_bits, const std::vector<uint64_t>& keys) {
  std::string out;
  EXPECT_TRUE(
      Ribbon::BuildWithInfo(RibbonParams{fingerprint_bits}, keys.data(), keys.size(), &out).ok());
  return out;
}

std::string BumpedRibbonBytes(int fingerprint_bits, const std::vector<uint64_t>& keys) {
  std::string out;
  EXPECT_TRUE(BumpedRibbon::BuildWithInfo(BumpedRibbonParams{fingerprint_bits}, keys.data(),
                                          keys.size(), &out)
                  .ok());
  return out;
}

uint64_t Digest(const std::string& bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

// The same filter with its trailer in layout 1 (as sstfilter 0.1 wrote it): byte 23 a flags byte
// of 0, the check over bytes 0..23 with the seed "trailer1", then "SSTF". Encoded here from the
// format's description, not by the library.
std::string AsLayout1(const std::string& filter, uint8_t flags = 0) {
  std::string out = filter.substr(0, filter.size() - kTrailerBytes + 23);
  out.push_back(static_cast<char>(flags));
  const uint8_t* tr = reinterpret_cast<const uint8_t*>(out.data()) + out.size() - 24;
  const uint32_t check = static_cast<uint32_t>(XXH3_64bits_withSeed(tr, 24, 0x747261696c657231));
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(check >> (8 * b)));
  return out + "SSTF";
}

// The trailer bytes of a filter: 32, or 10 in the compact layout.
size_t TrailerBytesIn(const std::string& filter) {
  return TrailerBytesOf(
      TrailerLayoutOf(reinterpret_cast<const uint8_t*>(filter.data()), filter.size()));
}

// The filter's kind, read by the parser.
FilterKind KindOf(const std::string& filter) {
  ParsedFilter parsed;
  EXPECT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(filter.data()), filter.size(), &parsed));
  return parsed.trailer.kind;
}

// The first 23 bytes of the filter's trailer (num_keys, num_units, seed, param, kind, version),
// which both layouts share, and layout 1's flags byte, 0.
void ExpectTrailerStart(const std::string& filter, const unsigned char (&expected)[24]) {
  ASSERT_GE(filter.size(), kTrailerBytes);
  EXPECT_EQ(std::memcmp(filter.data() + filter.size() - kTrailerBytes, expected, 23), 0);
  const std::string old = AsLayout1(filter);
  EXPECT_EQ(std::memcmp(old.data() + old.size() - kTrailerBytes, expected, 24), 0);
}

// An accidental change of the byte format (hashing, probe derivation, layout, trailer) changes
// these digests. A deliberate change needs a new format version, not new constants.
// The golden filters, one or more of every kind: blocked Bloom, standard Bloom, the cuckoo kind
// in its three versions (plain buckets, version 1; semi-sorted ones from a static build, version
// 2, and from a dynamic CuckooFilter, version 3), binary fuse, Ribbon in its two versions (whole
// blocks, version 1, for large sets; a wrapped table, version 2, for small ones), bumped Ribbon
// in its two versions (layers, version 1; one wrapped table, version 2, for small sets).
struct GoldenFilters {
  std::vector<uint64_t> keys = GoldenKeys();
  std::string blocked = BloomBytes<BlockedBloom>(10, keys);
  std::string standard = BloomBytes<StandardBloom>(10, keys);
  std::string cuckoo = CuckooBytes(12, keys, CuckooLayout::kPlain);
  std::string semi_sorted = CuckooBytes(12, keys, CuckooLayout::kSemiSorted);
  std::string dynamic = DynamicCuckooBytes(12, keys);
  std::string fuse = FuseBytes(8, keys);
  std::string ribbon = RibbonBytes(8, keys);
  std::string ribbon_blocks = RibbonBytes(8, KeyHashes(35, 20'000));
  std::string bumped = BumpedRibbonBytes(8, KeyHashes(34, 8'000));
  std::string bumped_wrapped = BumpedRibbonBytes(8, keys);

  std::vector<const std::string*> All() const {
    return {&blocked, &standard, &cuckoo,        &semi_sorted, &dynamic,
            &fuse,    &ribbon,   &ribbon_blocks, &bumped,      &bumped_wrapped};
  }
};

// Every kind of core/kinds.h has golden bytes: a kind cannot be added without them.
TEST(Format, GoldenBytesCoverEveryKind) {
  const GoldenFilters golden;
  ForEachKind([&](auto kind) {
    using K = decltype(kind);
    bool found = false;
    for (const std::string* f : golden.All()) found |= KindOf(*f) == K::kId;
    EXPECT_TRUE(found) << K::kName << " has no golden bytes in GoldenFilters";
  });
}

TEST(Format, GoldenBytes) {
  const GoldenFilters golden;
  const std::vector<uint64_t>& keys = golden.keys;
  EXPECT_EQ(KeyHash("key0", 4), 0x25fe91c0b51f0819u);  // XXH3-64, seed kKeyHashSeed
  // Each filter's body bytes, the digest of its bytes with the trailer in layout 1 (as 0.1 wrote
  // them; 0 for the wrapped Ribbon filters, whose versions came after layout 1) and as written now.
  const struct {
    const std::string& filter;
    uint64_t body_bytes;
    uint64_t digest_layout1;
    uint64_t digest;
  } expected[] = {
      {golden.blocked, 1280, 0x2c7c803a25341b87u, 0x208cd3a4779d55d5u},      // 20 blocks
      {golden.standard, 1256, 0x6217237745fe071eu, 0x156bd3c8a6771d40u},     // 157 words
      {golden.cuckoo, 1592, 0xe615f607a42c8c87u, 0x65837f56d583f8fbu},       // 264 x 48 bits + 8
      {golden.semi_sorted, 1460, 0x186ce4a866bfd2f7u, 0x485dda69ee2fd777u},  // 264 x 44 bits + 8
      {golden.dynamic, 1460, 0x5a3c6b177b34ad55u,
       0xf2021f160a4f5191u},  // the same shape, keys placed one by one
      {golden.fuse, 1384, 0x7171a34467475f72u, 0xdf45d38769031dacu},  // 1376 cells of 8 bits + 8
      // 1,006 slots: 15 blocks, then 46 rows in 8 planes of 46 bits; the compact trailer.
      {golden.ribbon, 960 + 46, 0, 0x1c3a35cbabe1c5b2u},
      // 21,248 slots, 332 blocks.
      {golden.ribbon_blocks, 21'248, 0xa5088d30c3623d60u, 0x905fe1ea37a6ee6eu},
      // Layers of 7,552, 448 and 128 slots (blocks of 8 words), then the 2-bit threshold codes of
      // the first two layers' 125 buckets (4 words).
      {golden.bumped, 8'128 + 32, 0x9f9fee8fa7051a07u, 0x7788a501c64a9dc7u},
      // The wrapped Ribbon filter's body; the compact trailer.
      {golden.bumped_wrapped, 960 + 46, 0, 0xe4a9ca9581d8147au},
  };
  ASSERT_EQ(golden.All().size(), std::size(expected)) << "a golden filter without its digest";
  for (const auto& e : expected) {
    EXPECT_EQ(e.filter.size(), e.body_bytes + TrailerBytesIn(e.filter));
    if (e.digest_layout1 != 0) {
      EXPECT_EQ(Digest(AsLayout1(e.filter)), e.digest_layout1) << e.body_bytes;
    }
    EXPECT_EQ(Digest(e.filter), e.digest) << e.body_bytes;
  }
  // The static build writes the semi-sorted version by default.
  EXPECT_EQ(Cuckoo::Build(CuckooParams{12}, keys.data(), keys.size()).value(), golden.semi_sorted);
  // The trailers' first 24 bytes: num_keys, num_units, seed, the kind's parameter bytes, kind,
  // version (layout 1's flags byte last).
  ExpectTrailerStart(golden.semi_sorted, {0xe7, 0x03, 0, 0, 0, 0, 0, 0,  // 999 stored
                                          0x08, 0x01, 0, 0, 0, 0, 0, 0,  // 264 buckets
                                          0,    0,    0, 0,              // seed 0
                                          12,   3,    2, 0});            // f, kind 3, v2
  // The binary fuse filter (kind 4), 4-wise for 1000 keys.
  ExpectTrailerStart(golden.fuse, {0xe8, 0x03, 0, 0, 0, 0, 0, 0,  // num_keys 1000
                                   0x60, 0x05, 0, 0, 0, 0, 0, 0,  // num_units: 1376 cells
                                   0,    0,    5, 4,              // seed 0, L = 2^5, 4-wise
                                   8,    4,    1, 0});            // 8 bits, kind 4, v1
  // The Ribbon filter (kind 5) for 1000 keys, wrapped, in the compact layout (its check word
  // follows), and for 20,000 keys.
  ASSERT_EQ(TrailerBytesIn(golden.ribbon), kCompactTrailerBytes);
  const unsigned char compact[8] = {0xee, 0x03,   // num_units: 1006 slots
                                    0xe8, 0x03,   // num_keys 1000
                                    0,    0,      // seed 0, the zero byte
                                    8,    0x25};  // 8 bits, kind 5 | version 2 << 4
  EXPECT_EQ(std::memcmp(golden.ribbon.data() + golden.ribbon.size() - kCompactTrailerBytes, compact,
                        sizeof(compact)),
            0);
  // Its check word, computed here from the format's description: the low 16 bits of XXH3-64 of
  // those 8 bytes with the seed "trailer3", little-endian.
  const uint64_t check3 = XXH3_64bits_withSeed(compact, sizeof(compact), 0x747261696c657233);
  EXPECT_EQ(static_cast<uint8_t>(golden.ribbon[golden.ribbon.size() - 2]), check3 & 0xFF);
  EXPECT_EQ(static_cast<uint8_t>(golden.ribbon[golden.ribbon.size() - 1]), (check3 >> 8) & 0xFF);
  ExpectTrailerStart(golden.ribbon_blocks, {0x20, 0x4e, 0, 0, 0, 0, 0, 0,  // num_keys 20,000
                                            0x00, 0x53, 0, 0, 0, 0, 0, 0,  // 21,248 slots
                                            0,    0,    0, 0,              // seed 0
                                            8,    5,    1, 0});            // 8 bits, kind 5, v1
  // The bumped Ribbon filter (kind 6) for 8,000 keys.
  ExpectTrailerStart(golden.bumped, {0x40, 0x1f, 0, 0, 0, 0, 0, 0,  // num_keys 8000
                                     0x40, 0x1f, 0, 0, 0, 0, 0, 0,  // num_units: 8000 keys
                                     0,    0,    0, 0,              // seed 0
                                     8,    6,    1, 0});            // 8 bits, kind 6, v1
  // The bumped Ribbon filter for the 1000 keys: the Ribbon filter's body and trailer fields, but
  // kind 6 | version 2 << 4.
  ASSERT_EQ(TrailerBytesIn(golden.bumped_wrapped), kCompactTrailerBytes);
  EXPECT_EQ(golden.bumped_wrapped.substr(0, 1006), golden.ribbon.substr(0, 1006));
  const unsigned char bumped_compact[8] = {0xee, 0x03, 0xe8, 0x03, 0, 0, 8, 0x26};
  EXPECT_EQ(std::memcmp(golden.bumped_wrapped.data() + 1006, bumped_compact, 8), 0);
  const std::string& blocked = golden.blocked;
  // The trailer of the blocked filter, byte for byte.
  const std::string tail = blocked.substr(blocked.size() - kTrailerBytes);
  const unsigned char expected_prefix[23] = {0xe8, 0x03, 0, 0, 0, 0, 0, 0,  // num_keys 1000
                                             20,   0,    0, 0, 0, 0, 0, 0,  // num_units 20
                                             0,    0,    0, 0,              // seed 0
                                             7,    1,    1};                // probes, kind, v1
  EXPECT_EQ(std::memcmp(tail.data(), expected_prefix, sizeof(expected_prefix)), 0);
  // Layout 2: the check word at 23, then the marker RocksDB's readers take as unknown.
  EXPECT_EQ(tail.substr(27), std::string("\xFF\x53\xE0\x54\x46"));
}

TEST(Format, TrailerRoundTrips) {
  Trailer t;
  t.num_keys = 0x0102030405060708ull;
  t.num_units = 1000;
  t.seed = 0xdeadbeef;
  t.param = 13;
  t.kind = Cuckoo::kId;
  std::string bytes(CuckooTableView::BytesFor(1000, 13), '\0');
  t.num_keys = 3999;
  AppendTrailer(t, &bytes);
  ParsedFilter parsed;
  ASSERT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &parsed));
  EXPECT_EQ(parsed.trailer.num_keys, 3999u);
  EXPECT_EQ(parsed.trailer.num_units, 1000u);
  EXPECT_EQ(parsed.trailer.seed, 0xdeadbeefu);
  EXPECT_EQ(parsed.trailer.param, 13);
  EXPECT_EQ(parsed.trailer.kind, Cuckoo::kId);
  EXPECT_EQ(parsed.body_bytes, bytes.size() - kTrailerBytes);
}

// Layout 3 holds the same fields in 10 bytes, for filters whose fields fit 16 and 8 bits.
TEST(Format, CompactTrailerRoundTripsWhereItsFieldsFit) {
  Trailer t;
  t.num_units = 1009;
  t.num_keys = 1000;
  t.seed = 3;
  t.param = 8;
  t.kind = Ribbon::kId;
  t.version = 2;
  std::string bytes(RibbonWrappedTableBytes(1009, 8) + kCompactTrailerBytes, '\0');
  auto* data = reinterpret_cast<uint8_t*>(bytes.data());
  ASSERT_TRUE(EncodeCompactTrailer(t, data + bytes.size() - kCompactTrailerBytes));
  EXPECT_EQ(TrailerLayoutOf(data, bytes.size()), TrailerLayout::kCompact);
  EXPECT_EQ(bytes[bytes.size() - kMarkerBytes], '\0');  // RocksDB's "zero probes"
  ParsedFilter parsed;
  ASSERT_TRUE(ParseFilter(data, bytes.size(), &parsed));
  EXPECT_EQ(parsed.trailer.num_units, 1009u);
  EXPECT_EQ(parsed.trailer.num_keys, 1000u);
  EXPECT_EQ(parsed.trailer.seed, 3u);
  EXPECT_EQ(parsed.trailer.param, 8);
  EXPECT_EQ(parsed.trailer.kind, Ribbon::kId);
  EXPECT_EQ(parsed.trailer.version, 2);
  EXPECT_EQ(parsed.body_bytes, bytes.size() - kCompactTrailerBytes);
  // A trailer that arrives apart from its body (core/app_filters) is never the compact layout.
  Trailer apart;
  EXPECT_FALSE(
      ParseTrailerFor(data + bytes.size() - kTrailerBytes, bytes.size() - kTrailerBytes, &apart));
  EXPECT_TRUE(FitsCompactTrailer(t));
  uint8_t unused[kCompactTrailerBytes];
  for (auto edit : std::vector<void (*)(Trailer&)>{
           [](Trailer& x) { x.num_units = 0x10000; }, [](Trailer& x) { x.num_keys = 0x10000; },
           [](Trailer& x) { x.num_keys = 0; }, [](Trailer& x) { x.num_units = 0; },
           [](Trailer& x) { x.seed = 256; }, [](Trailer& x) { x.version = 16; },
           [](Trailer& x) { x.kind = static_cast<FilterKind>(16); },
           // kind 3 version 5 would end a compact trailer in layout 1's magic "SSTF"
           [](Trailer& x) {
             x.kind = static_cast<FilterKind>(3);
             x.version = 5;
           }}) {
    Trailer x = t;
    edit(x);
    EXPECT_FALSE(FitsCompactTrailer(x));
    EXPECT_FALSE(EncodeCompactTrailer(x, unused));
  }
}

// A wrapped Ribbon filter reads the same in either layout: the compact one it is written in now,
// and layout 2, which it was written in before the compact layout existed.
TEST(Format, AWrappedRibbonFilterReadsTheSameInLayouts2And3) {
  const std::vector<uint64_t> keys = KeyHashes(36, 2'000);
  const std::string compact = RibbonBytes(6, keys);
  ASSERT_EQ(TrailerBytesIn(compact), kCompactTrailerBytes);
  ParsedFilter parsed;
  ASSERT_TRUE(
      ParseFilter(reinterpret_cast<const uint8_t*>(compact.data()), compact.size(), &parsed));
  std::string layout2 = compact.substr(0, parsed.body_bytes);
  AppendTrailer(parsed.trailer, &layout2);
  const FilterReader a = testing::ReaderOf(compact), b = testing::ReaderOf(layout2);
  ASSERT_TRUE(a.valid());
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(b.trailer().version, 2);
  for (uint64_t h : keys) ASSERT_TRUE(a.MayContain(h) && b.MayContain(h));
  uint64_t agree = 0, positives = 0;
  for (uint64_t h : KeyHashes(37, 20'000)) {
    agree += a.MayContain(h) == b.MayContain(h);
    positives += a.MayContain(h);
  }
  EXPECT_EQ(agree, 20'000u);
  EXPECT_LE(positives, 20'000.0 / 64 + testing::BinomialTolerance(20'000, 1.0 / 64));  // 2^-6
}

// Real filters of every kind, small enough to try every truncation.
std::vector<std::string> SampleFilters() {
  const std::vector<uint64_t> keys = KeyHashes(31, 150);
  return {BloomBytes<BlockedBloom>(10, keys),
          BloomBytes<StandardBloom>(10, keys),
          CuckooBytes(12, keys, CuckooLayout::kPlain),
          CuckooBytes(7, keys, CuckooLayout::kPlain),
          CuckooBytes(23, keys, CuckooLayout::kPlain),
          CuckooBytes(4, keys, CuckooLayout::kPlain),
          CuckooBytes(12, keys, CuckooLayout::kSemiSorted),
          CuckooBytes(5, keys, CuckooLayout::kSemiSorted),
          CuckooBytes(15, keys, CuckooLayout::kSemiSorted),  // the last one-load bucket
          CuckooBytes(16, keys, CuckooLayout::kSemiSorted),
          CuckooBytes(18, keys, CuckooLayout::kSemiSorted),  // the last one-load low parts
          CuckooBytes(19, keys, CuckooLayout::kSemiSorted),
          CuckooBytes(23, keys, CuckooLayout::kSemiSorted),
          CuckooBytes(32, keys, CuckooLayout::kSemiSorted),
          FuseBytes(8, keys),
          FuseBytes(1, keys),
          FuseBytes(32, KeyHashes(32, 1200)),  // 4-wise
          FuseBytes(13, {}),
          RibbonBytes(8, keys),
          RibbonBytes(1, keys),
          RibbonBytes(32, KeyHashes(33, 1200)),
          RibbonBytes(13, {}),
          BumpedRibbonBytes(8, keys),
          BumpedRibbonBytes(3, KeyHashes(35, 5'000)),
          BumpedRibbonBytes(13, {}),
          BloomBytes<BlockedBloom>(10, {})};
}

// The reader of bytes that are not a filter matches every key.
void ExpectMatchesAll(const uint8_t* data, size_t size, const std::string& what) {
  const FilterReader reader = FilterReader::Open(data, size);
  ASSERT_FALSE(reader.valid()) << what;
  for (uint64_t h : KeyHashes(99, 50)) ASSERT_TRUE(reader.MayContain(h)) << what;
  bool batch[50];
  const std::vector<uint64_t> probe = KeyHashes(98, 50);
  reader.MayContainBatch(probe.data(), probe.size(), batch);
  for (bool b : batch) ASSERT_TRUE(b) << what;
}

TEST(Format, EveryTruncationMatchesAll) {
  for (const std::string& filter : SampleFilters()) {
    for (size_t len = 0; len < filter.size(); ++len) {
      // Keep the first len bytes, or drop the first (size - len) bytes.
      const std::string head = filter.substr(0, len);
      const std::string tail = filter.substr(filter.size() - len);
      ExpectMatchesAll(Exact(head).get(), head.size(), "head " + std::to_string(len));
      if (len >= kTrailerBytes) {
        ExpectMatchesAll(Exact(tail).get(), tail.size(), "tail " + std::to_string(len));
      }
    }
  }
}

TEST(Format, EveryTrailerBitFlipMatchesAll) {
  for (const std::string& filter : SampleFilters()) {
    for (size_t byte = filter.size() - TrailerBytesIn(filter); byte < filter.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = filter;
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
        ExpectMatchesAll(Exact(bad).get(), bad.size(),
                         "byte " + std::to_string(byte) + " bit " + std::to_string(bit));
      }
    }
  }
}

TEST(Format, BodyCorruptionNeverCrashes) {
  // Flipped body bits are RocksDB's block checksums' business; here they only must not crash.
  std::mt19937_64 rng(7);
  for (const std::string& filter : SampleFilters()) {
    const size_t body_bytes = filter.size() - TrailerBytesIn(filter);
    if (body_bytes == 0) continue;
    for (int round = 0; round < 200; ++round) {
      std::string bad = filter;
      bad[rng() % body_bytes] ^= static_cast<char>(1 + rng() % 255);
      const auto exact = Exact(bad);
      const FilterReader reader = FilterReader::Open(exact.get(), bad.size());
      EXPECT_TRUE(reader.valid());
      const std::vector<uint64_t> hashes = KeyHashes(round, 64);
      bool batch[64];
      for (uint64_t h : hashes) {
        reader.Prefetch(h);
        (void)reader.MayContain(h);
      }
      reader.MayContainBatch(hashes.data(), hashes.size(), batch);
    }
  }
}

TEST(Format, RandomBytesMatchAll) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (round % 4 == 0 && bytes.size() >= 4) bytes.replace(bytes.size() - 4, 4, "SSTF");
    if (round % 4 == 1 && bytes.size() >= kMarkerBytes) {
      bytes.replace(bytes.size() - kMarkerBytes, kMarkerBytes,
                    reinterpret_cast<const char*>(kRocksDbUnknownMarker), kMarkerBytes);
    }
    if (round % 4 == 2 && bytes.size() >= kMarkerBytes) bytes[bytes.size() - kMarkerBytes] = 0;
    ExpectMatchesAll(Exact(bytes).get(), bytes.size(), "random " + std::to_string(round));
  }
  ExpectMatchesAll(nullptr, 0, "null");
}

// Trailers with a correct check word but fields that do not describe a filter of these bytes.
TEST(Format, InconsistentTrailersMatchAll) {
  const std::string valid = BloomBytes<BlockedBloom>(10, KeyHashes(41, 100));
  ParsedFilter parsed;
  ASSERT_TRUE(ParseFilter(reinterpret_cast<const uint8_t*>(valid.data()), valid.size(), &parsed));
  const std::string body = valid.substr(0, valid.size() - kTrailerBytes);
  // A cuckoo trailer whose table is exactly the body: 12-bit fingerprints and an even bucket
  // count, so that only the case's own edit can make it invalid.
  auto CuckooFittingTheBody = [](size_t body_bytes, Trailer* t) {
    t->kind = Cuckoo::kId;
    t->param = 12;
    t->num_units = (body_bytes - CuckooTableView::kPadBytes) * 8 / (kCuckooSlotsPerBucket * 12);
    ASSERT_EQ(t->num_units % 2, 0u);
    ASSERT_EQ(CuckooTableView::BytesFor(t->num_units, 12), body_bytes);
  };
  auto with = [&](auto edit) {
    Trailer t = parsed.trailer;
    edit(t);
    std::string out = body;
    AppendTrailer(t, &out);
    return out;
  };
  const std::vector<std::string> bad = {
      with([](Trailer& t) { t.num_units += 1; }),  // longer than the body
      with([](Trailer& t) { t.num_units -= 1; }),  // shorter
      with([](Trailer& t) { t.num_units = ~uint64_t{0}; }),
      with([](Trailer& t) { t.num_units = 0; }),  // keys but no units
      with([](Trailer& t) { t.param = 0; }),      // no probes
      with([](Trailer& t) { t.param = kMaxNumProbes + 1; }),
      with([](Trailer& t) { t.version = 2; }),
      with([](Trailer& t) { t.version = 0; }),
      with([](Trailer& t) { t.seed = 1; }),  // Bloom filters have no seed
      with([](Trailer& t) { t.kind = static_cast<FilterKind>(0); }),
      with([](Trailer& t) { t.kind = static_cast<FilterKind>(4); }),
      with([](Trailer& t) { t.kind = static_cast<FilterKind>(255); }),
      with([](Trailer& t) {  // cuckoo with an odd bucket count
        t.kind = Cuckoo::kId;
        t.param = 8;
        t.num_units = 39;
      }),
      with([&](Trailer& t) {  // cuckoo with more keys than slots
        CuckooFittingTheBody(body.size(), &t);
        t.num_keys = t.num_units * kCuckooSlotsPerBucket + 1;
      }),
      with([](Trailer& t) {  // cuckoo with a fingerprint width out of range
        t.kind = Cuckoo::kId;
        t.param = 40;
      }),
      with([&](Trailer& t) {  // a cuckoo version no reader knows, over a fitting version-1 body
        CuckooFittingTheBody(body.size(), &t);
        t.version = 3;
      }),
      with([&](Trailer& t) {  // version 2 (semi-sorted) over a body sized for version 1
        CuckooFittingTheBody(body.size(), &t);
        t.version = 2;
      }),
      with([&](Trailer& t) {  // version 2 with 4-bit fingerprints, over a body of its size
        t.kind = Cuckoo::kId;
        t.param = 4;
        t.version = 2;
        t.num_units =
            (body.size() - SemiSortedTableView::kPadBytes) * 8 / SemiSortedTableView::BucketBits(4);
        ASSERT_EQ(SemiSortedTableView::BytesFor(t.num_units, 4), body.size());
      }),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    ExpectMatchesAll(Exact(bad[i]).get(), bad[i].size(), "case " + std::to_string(i));
  }
  // And the unedited trailer is fine, as is the cuckoo one with every slot full.
  EXPECT_TRUE(FilterReader::Open(Exact(with([](Trailer&) {})).get(), valid.size()).valid());
  const std::string full_cuckoo = with([&](Trailer& t) {
    CuckooFittingTheBody(body.size(), &t);
    t.num_keys = t.num_units * kCuckooSlotsPerBucket;
  });
  EXPECT_TRUE(FilterReader::Open(Exact(full_cuckoo).get(), full_cuckoo.size()).valid());
}

// Layout 1's trailers read as layout 2's do: the same filter, the same answers; a flags byte other
// than 0 is not understood.
TEST(Format, Layout1TrailersStillRead) {
  const GoldenFilters golden;
  const std::vector<uint64_t> absent = KeyHashes(77, 2000);
  for (const std::string* filter : golden.All()) {
    if (TrailerBytesIn(*filter) == kCompactTrailerBytes) continue;  // a layout that came later
    const std::string old = AsLayout1(*filter);
    ASSERT_EQ(old.size(), filter->size());
    const auto exact = Exact(old);
    const FilterReader before = FilterReader::Open(exact.get(), old.size());
    const FilterReader now = testing::ReaderOf(*filter);
    ASSERT_TRUE(before.valid());
    ASSERT_TRUE(now.valid());
    for (uint64_t h : absent) ASSERT_EQ(before.MayContain(h), now.MayContain(h));
    ExpectMatchesAll(Exact(AsLayout1(*filter, 1)).get(), old.size(), "layout 1, flags 1");
  }
}

}  // namespace
}  // namespace sstfilter
