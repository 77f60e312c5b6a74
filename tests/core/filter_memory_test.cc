// SPDX-License-Identifier: Apache-2.0
// The application filters' allocator (include/sstfilter/filter_memory.h): every filter takes its
// array from the allocator set when it was made and gives it back there, whenever it is freed; an
// allocator that has nothing left makes Create an error, not a crash.
#include "sstfilter/filter_memory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

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
