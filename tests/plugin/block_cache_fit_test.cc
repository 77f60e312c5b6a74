// SPDX-License-Identifier: Apache-2.0
// Whether a whole filter block fits its block cache's shards, and the builders' warning when not.
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "plugin/block_cache_fit.h"
#include "plugin/policies.h"
#include "plugin/tree_history.h"
#include "plugin/tree_model.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/policy_list.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using testing::PolicyFrom;

// Not padded ("key7"): as the builders' tests name them.
std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

// The shards of the block cache that holds filters whole, as RocksDB's caches print them: an LRU
// cache of 32 MiB has 64 shards of 512 KiB; one told its shard count has that many; filters held
// by the table reader, or partitioned, are not held whole by any.
TEST(BlockCacheFit, ShardsOfTheCacheThatHoldsWholeFilters) {
  BlockBasedTableOptions table;
  table.cache_index_and_filter_blocks = true;
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
  CacheShards shards = ShardsHoldingWholeFilters(table);
  EXPECT_EQ(shards.shards, 64u);
  EXPECT_EQ(shards.ShardBytes(), 512u << 10);
  table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20, /*num_shard_bits=*/2);
  EXPECT_EQ(ShardsHoldingWholeFilters(table).ShardBytes(), 8u << 20);
  table.partition_filters = true;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.partition_filters = false;
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kAll;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);
  table.metadata_cache_options.unpartitioned_pinning = ROCKSDB_NAMESPACE::PinningTier::kFallback;
  table.cache_index_and_filter_blocks = false;
  EXPECT_EQ(ShardsHoldingWholeFilters(table).shards, 0u);

  // At most 1/8 of a shard fits; more is warned about, with the cache's figures and the remedy.
  EXPECT_EQ(FilterBlockWarning(64 << 10, shards), "");
  const std::string warning = FilterBlockWarning((64 << 10) + 1, shards);
  EXPECT_NE(warning.find("a filter block of 64 KiB"), std::string::npos) << warning;
  EXPECT_NE(warning.find("512 KiB: 32 MiB in 64 shards"), std::string::npos) << warning;
  EXPECT_NE(warning.find("partition_filters=true"), std::string::npos) << warning;
  EXPECT_NE(warning.find("unpartitioned_pinning=kAll"), std::string::npos) << warning;
  EXPECT_EQ(FilterBlockWarning(1 << 30, CacheShards{}), "");  // a cache that does not say
}

// Every sstfilter policy's builder reports a filter it writes that will be a block too large for
// its cache's shards, once per file; the policy logs a warning for the first such file and every
// 64th; never when the filter is partitioned.
TEST(BlockCacheFit, BuildersWarnOfFilterBlocksTooLargeForTheirShards) {
  std::vector<std::string> keys;
  for (int i = 0; i < 100'000; ++i) keys.push_back(Key(i));  // about 120 KiB of filter
  for (const char* uri : {"sstfilter.Ribbon:10", "sstfilter.Bloom:10", "sstfilter.Leveled:10"}) {
    for (const bool partitioned : {false, true}) {
      SCOPED_TRACE(std::string(uri) + (partitioned ? ", partitioned" : ", whole"));
      BlockBasedTableOptions table;
      table.filter_policy = PolicyFrom(uri);
      table.cache_index_and_filter_blocks = true;
      table.partition_filters = partitioned;
      table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(32 << 20);
      testing::RecordingLogger logger;
      FilterBuildingContext context(table);
      context.info_log = &logger;
      context.level_at_creation = 1;
      constexpr int kFiles = 66;
      for (int file = 0; file < kFiles; ++file) {
        std::unique_ptr<FilterBitsBuilder> builder(
            table.filter_policy->GetBuilderWithContext(context));
        ASSERT_NE(builder, nullptr);
        for (int round = 0; round < (file == 0 ? 2 : 1); ++round) {  // a second filter: no repeat
          for (const std::string& k : keys) builder->AddKey(k);
          std::unique_ptr<const char[]> buf;
          ASSERT_GT(builder->Finish(&buf).size(), 64u << 10);
        }
      }
      std::vector<std::string> warnings;
      for (const auto& [level, line] : logger.lines) {
        if (line.find("a filter block of") == std::string::npos) continue;
        warnings.push_back(line);
        EXPECT_EQ(level, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL);
      }
      if (partitioned) {
        EXPECT_TRUE(warnings.empty());
      } else {
        ASSERT_EQ(warnings.size(), 2u);  // files 1 and 65
        EXPECT_NE(warnings[0].find("1 such file(s) so far, logged every 64"), std::string::npos)
            << warnings[0];
        EXPECT_NE(warnings[1].find("65 such file(s) so far"), std::string::npos) << warnings[1];
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
