// SPDX-License-Identifier: Apache-2.0
#include "core/hash_list.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/filter_spec.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

TEST(HashList, KeepsOrderSkipsRepeatsAcrossChunksAndClears) {
  HashList list;
  const std::vector<uint64_t> keys = testing::KeyHashes(1, 3 * HashList::kChunkItems + 17);
  for (const uint64_t h : keys) {
    list.Add(h);
    list.Add(h);  // a repeat, also when it falls on a chunk boundary
  }
  ASSERT_EQ(list.size(), keys.size());
  std::vector<uint64_t> seen;
  list.ForEachChunk([&](const uint64_t* hashes, size_t n) {
    EXPECT_LE(n, HashList::kChunkItems);
    seen.insert(seen.end(), hashes, hashes + n);
  });
  EXPECT_EQ(seen, keys);
  list.Clear();
  EXPECT_TRUE(list.empty());
  list.Add(keys.back());  // not a repeat of anything after Clear
  EXPECT_EQ(list.size(), 1u);
}

TEST(HashList, FiltersBuiltFromItEqualThoseFromAnArray) {
  const std::vector<uint64_t> keys = testing::KeyHashes(2, 2 * HashList::kChunkItems + 5);
  HashList list;
  for (const uint64_t h : keys) list.Add(h);
  for (const FilterSpec& spec : testing::OneSpecOfEachKind()) {
    EXPECT_EQ(BuildFilter(spec, list).value(), BuildFilter(spec, keys.data(), keys.size()).value())
        << spec.ToString();
  }
}

}  // namespace
}  // namespace sstfilter
