// SPDX-License-Identifier: Apache-2.0
// The application filters' allocator (include/sstfilter/filter_memory.h): every filter takes its
// array from the allocator set when it was made and gives it back there, whenever it is freed; an
// allocator that has nothing left makes Create an error, not a crash.
#include "sstfilter/filter_memory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "core/format.h"
#include "sstfilter/bloom_filter.h"
#include "sstfilter/cuckoo_filter.h"
#include "sstfilter/scalable_bloom_filter.h"

namespace sstfilter {
namespace {

// A counting allocator over malloc.
int allocations = 0, releases = 0;
void* CountedAllocate(size_t bytes) {
  ++allocations;
  return std::malloc(bytes);
}
void CountedRelease(void* memory) {
  ++releases;
  std::free(memory);
}
void* NothingLeft(size_t) { return nullptr; }

// Restores the C++ heap however the test ends.
struct HeapAfterwards {
  ~HeapAfterwards() { SetFilterAllocator({}); }
};

TEST(FilterMemory, FiltersUseTheAllocatorTheyWereMadeWith) {
  HeapAfterwards restore;
  allocations = releases = 0;
  ASSERT_TRUE(SetFilterAllocator({CountedAllocate, CountedRelease}));
  {
    BloomFilter bloom = BloomFilter::Create(10'000, 0.01).value();
    CuckooFilter cuckoo = CuckooFilter::Create(10'000, 12).value();
    EXPECT_EQ(allocations, 2);
    // Made before the change, freed after it: through the allocator it was made with.
    ASSERT_TRUE(SetFilterAllocator({}));
    BloomFilter moved = std::move(bloom);  // a move hands the array over, allocating nothing
    EXPECT_TRUE(moved.Add("k"));
    EXPECT_TRUE(moved.MayContain("k"));
    BloomFilter heap = BloomFilter::Create(10'000, 0.01).value();
    EXPECT_EQ(allocations, 2);
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 2);
  ASSERT_TRUE(SetFilterAllocator({CountedAllocate, CountedRelease}));
  {
    ScalableBloomFilter grows = ScalableBloomFilter::Create(100, 0.01).value();
    for (int i = 0; i < 1000; ++i) grows.Add("key" + std::to_string(i));
    EXPECT_EQ(allocations, 2 + static_cast<int>(grows.num_filters()));
  }
  EXPECT_EQ(releases, allocations);
}

// Read back, a filter's body buffer becomes its memory: one allocation per filter, from the
// allocator set, and nothing copied into a second array.
TEST(FilterMemory, AReadFilterKeepsTheBufferItsBodyWasReadInto) {
  HeapAfterwards restore;
  BloomFilter standard = BloomFilter::Create(10'000, 0.01, BloomLayout::kStandard).value();
  CuckooFilter cuckoo = CuckooFilter::Create(10'000, 12).value();
  ASSERT_TRUE(standard.Add("k") && cuckoo.Add("k"));
  const std::string bloom_bytes = standard.Serialize();
  const std::string cuckoo_bytes = cuckoo.Serialize();
  allocations = releases = 0;
  ASSERT_TRUE(SetFilterAllocator({CountedAllocate, CountedRelease}));
  {
    const uint64_t body_bytes = bloom_bytes.size() - kTrailerBytes;
    FilterBuffer body;
    ASSERT_TRUE(BloomFilter::AllocateBody(body_bytes, &body));
    std::memcpy(body.data(), bloom_bytes.data(), body_bytes);
    auto read =
        BloomFilter::FromBody(std::move(body), body_bytes,
                              reinterpret_cast<const uint8_t*>(bloom_bytes.data()) + body_bytes);
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_TRUE(read.value().MayContain("k"));
    EXPECT_EQ(read.value().Serialize(), bloom_bytes);
    auto again = CuckooFilter::Deserialize(cuckoo_bytes.data(), cuckoo_bytes.size());
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_TRUE(again.value().MayContain("k"));
    EXPECT_EQ(allocations, 2);
    // A body of another length than its trailer's is refused.
    FilterBuffer short_body;
    ASSERT_TRUE(BloomFilter::AllocateBody(body_bytes - 64, &short_body));
    EXPECT_FALSE(
        BloomFilter::FromBody(std::move(short_body), body_bytes - 64,
                              reinterpret_cast<const uint8_t*>(bloom_bytes.data()) + body_bytes)
            .ok());
  }
  EXPECT_EQ(releases, allocations);
}

TEST(FilterMemory, AnAllocatorWithNothingLeftMakesCreateAnError) {
  HeapAfterwards restore;
  ASSERT_TRUE(SetFilterAllocator({NothingLeft, CountedRelease}));
  const auto bloom = BloomFilter::Create(1000, 0.01);
  ASSERT_FALSE(bloom.ok());
  EXPECT_NE(bloom.error().find("cannot allocate"), std::string::npos) << bloom.error();
  const auto cuckoo = CuckooFilter::Create(1000, 12);
  ASSERT_FALSE(cuckoo.ok());
  EXPECT_NE(cuckoo.error().find("cannot allocate"), std::string::npos) << cuckoo.error();
  EXPECT_FALSE(ScalableBloomFilter::Create(100, 0.01).ok());
}

}  // namespace
}  // namespace sstfilter
