// SPDX-License-Identifier: Apache-2.0
// The scalable filters' bytes (core/app_filters/chain_format.h), which the Redis module's RDB
// files, SCANDUMP and LOADCHUNK carry: they round-trip with every key, count and option; a filter
// read back and the original go on to the same bytes under the same adds (what replication
// needs); golden bytes; and bytes that are cut short, of the other kind, or hold a filter the
// chain's schedule would not make, are refused.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/app_filters/chain_format.h"
#include "core/app_filters/chain_loader.h"
#include "core/format.h"
#include "sstfilter/scalable_bloom_filter.h"
#include "sstfilter/scalable_cuckoo_filter.h"

namespace sstfilter {
namespace {

std::string Key(int i) { return "key" + std::to_string(i); }

template <typename Filter>
Filter Make(uint64_t capacity, double rate, int keys) {
  auto made = Filter::Create(capacity, rate);
  EXPECT_TRUE(made.ok()) << made.error();
  Filter filter = std::move(made).value();
  for (int i = 0; i < keys; ++i) EXPECT_NE(filter.Add(Key(i)), AddOutcome::kFull) << i;
  return filter;
}

template <typename Filter>
Filter ReadBack(const std::string& bytes) {
  auto read = Filter::Deserialize(bytes.data(), bytes.size());
  EXPECT_TRUE(read.ok()) << read.error();
  return std::move(read).value();
}

// A chain of standard-layout Bloom filters at 1%, the first of `capacity`, holding keys 0..keys-1.
ScalableBloomFilter StandardLayoutChain(uint64_t capacity, int keys) {
  auto made = ScalableBloomFilter::Create(capacity, 0.01, ScalingOptions{}, BloomLayout::kStandard);
  EXPECT_TRUE(made.ok()) << made.error();
  ScalableBloomFilter filter = std::move(made).value();
  for (int i = 0; i < keys; ++i) filter.Add(Key(i));
  return filter;
}

template <typename Filter>
class ScalableSerialization : public ::testing::Test {};
using Filters = ::testing::Types<ScalableBloomFilter, ScalableCuckooFilter>;
TYPED_TEST_SUITE(ScalableSerialization, Filters);

// Grown to several filters, read back with every key, its counts and options; then the original
// and the copy take the same adds (growing further) and stay byte for byte the same.
TYPED_TEST(ScalableSerialization, RoundTripsAndThenGrowsAsTheOriginal) {
  TypeParam original = Make<TypeParam>(1000, 0.01, 5000);
  ASSERT_GE(original.num_filters(), 3u);
  const std::string bytes = original.Serialize();
  TypeParam copy = ReadBack<TypeParam>(bytes);
  EXPECT_EQ(copy.size(), original.size());
  EXPECT_EQ(copy.capacity(), original.capacity());
  EXPECT_EQ(copy.num_filters(), original.num_filters());
  EXPECT_EQ(copy.initial_capacity(), 1000u);
  EXPECT_EQ(copy.options().growth, original.options().growth);
  EXPECT_EQ(copy.Serialize(), bytes);
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(copy.MayContain(Key(i))) << i;
  for (int i = 5000; i < 20000; ++i) {
    ASSERT_EQ(copy.Add(Key(i)), original.Add(Key(i))) << i;
  }
  EXPECT_GT(copy.num_filters(), 3u);
  EXPECT_EQ(copy.Serialize(), original.Serialize());
}

// Every prefix of the bytes is refused; so is one byte more.
TYPED_TEST(ScalableSerialization, CutShortOrLongerIsRefused) {
  const std::string bytes = Make<TypeParam>(8, 0.1, 40).Serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(TypeParam::Deserialize(bytes.data(), n).ok()) << n << " of " << bytes.size();
  }
  const std::string longer = bytes + '\0';
  const auto refused = TypeParam::Deserialize(longer.data(), longer.size());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("left over"), std::string::npos) << refused.error();
  EXPECT_FALSE(TypeParam::Deserialize(nullptr, 0).ok());
}

// A changed header byte is refused, or reads as a filter that still holds every key: the options,
// capacities and counts must agree with the filters that follow.
TYPED_TEST(ScalableSerialization, AChangedHeaderByteIsRefusedOrLosesNoKey) {
  const std::string bytes = Make<TypeParam>(8, 0.1, 40).Serialize();
  int refused = 0;
  for (size_t at = 0; at < 64; ++at) {
    std::string changed = bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x5a);
    const auto read = TypeParam::Deserialize(changed.data(), changed.size());
    if (!read.ok()) {
      ++refused;
      continue;
    }
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(read.value().MayContain(Key(i))) << at << " " << i;
  }
  // Only the key counts' high bytes and growth's low mantissa bytes may change unrefused.
  EXPECT_GE(refused, 40);
}

// The batched query answers as the single one, over a chain of several filters, for present and
// absent keys (BF.MEXISTS and CF.MEXISTS use it).
TYPED_TEST(ScalableSerialization, BatchedQueriesAnswerAsSingleOnes) {
  const TypeParam filter = Make<TypeParam>(1000, 0.01, 5000);
  ASSERT_GE(filter.num_filters(), 3u);
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 10000; ++i) hashes.push_back(HashKey(Key(i)));  // half of them absent
  std::unique_ptr<bool[]> batch(new bool[hashes.size()]);
  filter.MayContainBatch(hashes.data(), hashes.size(), batch.get());
  int present = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    ASSERT_EQ(batch[i], filter.MayContainHash(hashes[i])) << i;
    present += batch[i];
  }
  EXPECT_GE(present, 5000);
  EXPECT_LT(present, 5200);
}

// Every part SerializeRange gives is that part of Serialize(): pieces that start and end inside a
// header, a length, a filter's body or its trailer, and ranges that run past the end (fewer bytes)
// or start there (none); the same for the single filters the chain holds.
template <typename Filter>
void ExpectRangesAreSerializesParts(const Filter& filter) {
  const std::string whole = filter.Serialize();
  ASSERT_EQ(filter.SerializedBytes(), whole.size());
  std::vector<uint64_t> offsets = {0, 1, 7, 8, 63, 64, 65, 71, 72, 73, 100};
  for (uint64_t at = 0; at < whole.size(); at += 997) offsets.push_back(at);
  for (uint64_t back = 1; back <= 40; ++back) offsets.push_back(whole.size() - back);
  offsets.push_back(whole.size());
  offsets.push_back(whole.size() + 5);
  for (const uint64_t offset : offsets) {
    for (const size_t length :
         {size_t{1}, size_t{3}, size_t{8}, size_t{33}, size_t{4096}, whole.size()}) {
      std::string part(length, '\x5a');
      const size_t copied = filter.SerializeRange(offset, length, part.data());
      const std::string expected = offset < whole.size() ? whole.substr(offset, length) : "";
      ASSERT_EQ(copied, expected.size()) << offset << "+" << length;
      ASSERT_EQ(part.substr(0, copied), expected) << offset << "+" << length;
      ASSERT_EQ(part.substr(copied), std::string(length - copied, '\x5a'))
          << "written past the part, " << offset << "+" << length;
    }
  }
}

TYPED_TEST(ScalableSerialization, SerializeRangeGivesPartsOfSerialize) {
  const TypeParam filter = Make<TypeParam>(1000, 0.01, 5000);
  ASSERT_GE(filter.num_filters(), 3u);
  ExpectRangesAreSerializesParts(filter);
  for (const auto& f : filter.filters()) ExpectRangesAreSerializesParts(f);
}

// Taken in pieces by a ChainLoader (each filter's body straight into its buffer, then FromBody and
// FromFilters: the Redis module's loading), a filter is the one Deserialize reads, byte for byte,
// and the loader gives back what it took; cut short anywhere, it is refused.
TYPED_TEST(ScalableSerialization, TakenInPiecesItIsWhatDeserializeReads) {
  using Part = typename std::decay_t<decltype(std::declval<TypeParam>().filters())>::value_type;
  const TypeParam filter = Make<TypeParam>(1000, 0.01, 5000);
  const std::string bytes = filter.Serialize();
  const uint8_t kind = std::is_same_v<TypeParam, ScalableBloomFilter> ? chain_format::kBloomChain
                                                                      : chain_format::kCuckooChain;
  for (const size_t piece : {size_t{1}, size_t{7}, size_t{4096}, bytes.size()}) {
    chain_format::ChainLoader<Part> loader(kind);
    for (size_t at = 0; at < bytes.size(); at += piece) {
      ASSERT_FALSE(loader.complete()) << at;
      const Result<bool> taken = loader.Take(bytes.data() + at, std::min(piece, bytes.size() - at));
      ASSERT_TRUE(taken.ok()) << taken.error();
    }
    ASSERT_TRUE(loader.complete());
    std::string back(bytes.size(), '\0');
    ASSERT_EQ(loader.CopyReceived(0, back.size(), back.data()), bytes.size());
    EXPECT_EQ(back, bytes);
    uint8_t header[chain_format::kHeaderBytes];
    std::vector<Part> parts;
    const Result<bool> finished = loader.Finish(header, &parts);
    ASSERT_TRUE(finished.ok()) << finished.error();
    Result<TypeParam> made = TypeParam::FromFilters(header, std::move(parts));
    ASSERT_TRUE(made.ok()) << made.error();
    EXPECT_EQ(made.value().Serialize(), bytes) << "pieces of " << piece;
  }
  for (const size_t cut : {size_t{10}, size_t{64}, size_t{70}, size_t{200}, bytes.size() - 1}) {
    chain_format::ChainLoader<Part> loader(kind);
    ASSERT_TRUE(loader.Take(bytes.data(), cut).ok()) << cut;
    uint8_t header[chain_format::kHeaderBytes];
    std::vector<Part> parts;
    const Result<bool> finished = loader.Finish(header, &parts);
    ASSERT_FALSE(finished.ok()) << "cut at " << cut;
    EXPECT_NE(finished.error().find(cut < 64 ? "no header" : "cut short"), std::string::npos)
        << finished.error();
  }
}

// A piece the loader refuses leaves it as it was: the pieces that follow, the right ones, make the
// filter. Refused: a filter count no chain has, a filter shorter than its trailer, a trailer that
// is not its body's, bytes past the end.
TEST(ScalableSerializationKinds, ARefusedPieceChangesNothing) {
  const std::string bytes = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();
  ASSERT_GT(bytes.size(), 200u);
  const auto refused = [&](chain_format::ChainLoader<BloomFilter>* loader, std::string piece) {
    const uint64_t before = loader->received();
    const Result<bool> taken = loader->Take(piece.data(), piece.size());
    EXPECT_EQ(loader->received(), before);
    return !taken.ok();
  };
  chain_format::ChainLoader<BloomFilter> loader(chain_format::kBloomChain);
  std::string many = bytes.substr(0, 64);
  for (int i = 56; i < 60; ++i) many[i] = '\xff';  // 2^32 - 1 filters
  EXPECT_TRUE(refused(&loader, many));
  EXPECT_TRUE(refused(&loader, bytes.substr(0, 64) + std::string("\x08\0\0\0\0\0\0\0", 8)));
  ASSERT_TRUE(loader.Take(bytes.data(), 100).ok());
  // The first filter's trailer, one byte changed; then the right bytes.
  const size_t first_end = 72 + LoadLE64(reinterpret_cast<const uint8_t*>(bytes.data()) + 64);
  std::string bad = bytes.substr(100, first_end - 100);
  bad.back() ^= 1;
  EXPECT_TRUE(refused(&loader, bad));
  ASSERT_TRUE(loader.Take(bytes.data() + 100, bytes.size() - 100).ok());
  EXPECT_TRUE(refused(&loader, "x"));
  ASSERT_TRUE(loader.complete());
  uint8_t header[chain_format::kHeaderBytes];
  std::vector<BloomFilter> filters;
  ASSERT_TRUE(loader.Finish(header, &filters).ok());
  auto made = ScalableBloomFilter::FromFilters(header, std::move(filters));
  ASSERT_TRUE(made.ok()) << made.error();
  EXPECT_EQ(made.value().Serialize(), bytes);
}

// A filter's length is checked against the capacity its schedule gives it as soon as its 8 bytes
// arrive: a length no filter of that capacity has (here 2^40 bytes for 8 keys) is refused before
// any memory is allocated for it, and the loader is as it was.
TEST(ScalableSerializationKinds, ALengthNoFilterOfItsCapacityHasIsRefusedBeforeItsMemory) {
  const std::string bytes = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();
  chain_format::ChainLoader<BloomFilter> loader(chain_format::kBloomChain);
  uint8_t length[8];
  StoreLE64(length, uint64_t{1} << 40);
  const std::string piece = bytes.substr(0, 64) + std::string(reinterpret_cast<char*>(length), 8);
  const Result<bool> taken = loader.Take(piece.data(), piece.size());
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.error().find("more than a filter of 8 keys has"), std::string::npos)
      << taken.error();
  EXPECT_EQ(loader.memory_bytes(), 0u);
  EXPECT_EQ(loader.received(), 0u);
  ASSERT_TRUE(loader.Take(bytes.data(), bytes.size()).ok());
  EXPECT_TRUE(loader.complete());
}

// The lengths allowed are not too few: chains grown until their rates can no longer be sized,
// whose last filters have the most bits per key their kinds give (standard-layout Bloom filters
// near 100 bits per key, cuckoo fingerprints of 32 bits), load in pieces of 1 byte as they do
// whole.
TEST(ScalableSerializationKinds, ChainsAtTheSmallestRatesLoadInPieces) {
  auto bloom = ScalableBloomFilter::Create(2000, 1e-19, ScalingOptions{}, BloomLayout::kStandard);
  auto cuckoo = ScalableCuckooFilter::Create(2000, 1e-7);
  ASSERT_TRUE(bloom.ok() && cuckoo.ok());
  int i = 0;
  while (bloom.value().Add(Key(i)) != AddOutcome::kFull) ++i;
  i = 0;
  while (cuckoo.value().Add(Key(i)) != AddOutcome::kFull) ++i;
  EXPECT_GE(bloom.value().num_filters(), 5u);
  EXPECT_GE(cuckoo.value().num_filters(), 5u);
  const auto loads_in_bytes = [](const std::string& bytes, uint8_t kind, auto parts) {
    chain_format::ChainLoader<typename decltype(parts)::value_type> loader(kind);
    for (const char& byte : bytes) {
      const Result<bool> taken = loader.Take(&byte, 1);
      if (!taken.ok()) return taken;
    }
    uint8_t header[chain_format::kHeaderBytes];
    return loader.Finish(header, &parts);
  };
  const Result<bool> bloom_loaded = loads_in_bytes(
      bloom.value().Serialize(), chain_format::kBloomChain, std::vector<BloomFilter>());
  EXPECT_TRUE(bloom_loaded.ok()) << bloom_loaded.error();
  const Result<bool> cuckoo_loaded = loads_in_bytes(
      cuckoo.value().Serialize(), chain_format::kCuckooChain, std::vector<CuckooFilter>());
  EXPECT_TRUE(cuckoo_loaded.ok()) << cuckoo_loaded.error();
}

// FromFilters takes a header whose count is the filters' only.
TEST(ScalableSerializationKinds, FromFiltersRefusesACountThatIsNotTheFilters) {
  const ScalableBloomFilter filter = Make<ScalableBloomFilter>(1000, 0.01, 5000);
  const std::string bytes = filter.Serialize();
  std::vector<BloomFilter> filters;
  ASSERT_TRUE(
      chain_format::Read(bytes.data(), bytes.size(), chain_format::kBloomChain, &filters).ok());
  ASSERT_GE(filters.size(), 2u);
  filters.pop_back();
  const auto made = ScalableBloomFilter::FromFilters(bytes.data(), std::move(filters));
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().find("counts"), std::string::npos) << made.error();
}

TEST(ScalableSerializationKinds, SerializeRangeOfTheStandardLayout) {
  const ScalableBloomFilter filter = StandardLayoutChain(1000, 3000);
  ASSERT_GE(filter.num_filters(), 2u);
  ExpectRangesAreSerializesParts(filter);
}

TEST(ScalableSerializationKinds, TheOtherKindsBytesAreRefused) {
  const std::string bloom = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();
  const std::string cuckoo = Make<ScalableCuckooFilter>(8, 0.1, 40).Serialize();
  const auto as_cuckoo = ScalableCuckooFilter::Deserialize(bloom.data(), bloom.size());
  ASSERT_FALSE(as_cuckoo.ok());
  EXPECT_NE(as_cuckoo.error().find("Bloom"), std::string::npos) << as_cuckoo.error();
  EXPECT_FALSE(ScalableBloomFilter::Deserialize(cuckoo.data(), cuckoo.size()).ok());
}

// A chain whose second filter is not the one its schedule makes (here: of another chain's
// options) is refused, whole.
TEST(ScalableSerializationKinds, AFilterTheScheduleWouldNotMakeIsRefused) {
  const std::string a = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();
  const std::string b = Make<ScalableBloomFilter>(8, 0.01, 40).Serialize();
  ASSERT_EQ(a.substr(0, 8), b.substr(0, 8));
  // The header of a, the filters of b.
  const std::string mixed = a.substr(0, 64) + b.substr(64);
  const auto read = ScalableBloomFilter::Deserialize(mixed.data(), mixed.size());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("schedule"), std::string::npos) << read.error();
}

// A chain of standard-layout Bloom filters round-trips with its layout (header byte 7); the same
// filters under a header that says blocked are refused.
TEST(ScalableSerializationKinds, TheBloomLayoutRoundTripsAndMustMatchItsFilters) {
  ScalableBloomFilter filter = StandardLayoutChain(100, 1000);
  ASSERT_GE(filter.num_filters(), 3u);
  const std::string bytes = filter.Serialize();
  EXPECT_EQ(bytes[7], '\x01');
  ScalableBloomFilter copy = ReadBack<ScalableBloomFilter>(bytes);
  EXPECT_EQ(copy.layout(), BloomLayout::kStandard);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(copy.MayContain(Key(i))) << i;
  for (int i = 1000; i < 3000; ++i) ASSERT_EQ(copy.Add(Key(i)), filter.Add(Key(i))) << i;
  EXPECT_EQ(copy.Serialize(), filter.Serialize());
  std::string relabelled = bytes;
  relabelled[7] = '\0';
  EXPECT_FALSE(ScalableBloomFilter::Deserialize(relabelled.data(), relabelled.size()).ok());
  relabelled[7] = '\x02';
  EXPECT_FALSE(ScalableBloomFilter::Deserialize(relabelled.data(), relabelled.size()).ok());
}

// Key counts that the older filters could not hold are refused: with them, the filter's size
// would pass its capacity as it took keys (found by dump_fuzzer).
TEST(ScalableSerializationKinds, OlderFiltersHoldNoMoreThanTheirCapacity) {
  std::string bytes = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();  // 8 + 16 + 32 keys
  ASSERT_TRUE(ScalableBloomFilter::Deserialize(bytes.data(), bytes.size()).ok());
  for (int i = 40; i < 48; ++i) bytes[i] = 0;  // no key in the newest: 40 in the older 24
  const auto refused = ScalableBloomFilter::Deserialize(bytes.data(), bytes.size());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("capacity"), std::string::npos) << refused.error();
}

// The bytes of a small filter of each kind, fixed: a change to the chain's format or to how a
// filter places keys shows here (docs/format.md describes the chain).
TEST(ScalableSerializationKinds, GoldenBytes) {
  const std::string bloom = Make<ScalableBloomFilter>(8, 0.1, 40).Serialize();
  const std::string cuckoo = Make<ScalableCuckooFilter>(8, 0.1, 40).Serialize();
  EXPECT_EQ(bloom.substr(0, 8), std::string("SFCH\x01\x01\x01\x00", 8));
  EXPECT_EQ(cuckoo.substr(0, 8), std::string("SFCH\x01\x02\x01\x00", 8));
  EXPECT_EQ(bloom.size(), 376u);
  EXPECT_EQ(cuckoo.size(), 291u);
  EXPECT_EQ(XXH3_64bits(bloom.data(), bloom.size()), 0xab854c78ec903694u);
  EXPECT_EQ(XXH3_64bits(cuckoo.data(), cuckoo.size()), 0xb551d6afb14914f5u);
}

}  // namespace
}  // namespace sstfilter
