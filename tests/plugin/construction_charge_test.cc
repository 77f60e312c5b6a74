// SPDX-License-Identifier: Apache-2.0
// Filter construction charged to the block cache (plugin/construction_charge.h): the placeholders
// a builder holds for its hashes, its build and its finished filters, read from a real LRU cache
// while the filter builds; a cache that refuses the charge gets a blocked Bloom filter; a database
// whose strict block cache is too small for a build flushes, compacts and finds every key.
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>

#include <memory>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "compat/rocksdb_api.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/hash.h"
#include "plugin/bits_adapters.h"
#include "plugin/construction_charge.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::CacheEntryRole;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using Account = ConstructionCharge::Account;
using Decision = ROCKSDB_NAMESPACE::CacheEntryRoleOptions::Decision;
constexpr uint64_t kPlaceholder = ConstructionCharge::kPlaceholderBytes;

std::string Key(int i) { return testing::NumberedKey(i, /*digits=*/0); }

// A cache of one shard, so that its capacity is one limit for every placeholder.
std::shared_ptr<ROCKSDB_NAMESPACE::Cache> OneShardCache(size_t capacity, bool strict) {
  return ROCKSDB_NAMESPACE::NewLRUCache(capacity, /*num_shard_bits=*/0, strict);
}

// The bytes the cache's entries charge, without its per-entry metadata (which the default
// metadata charge policy adds to GetUsage): every entry here is a placeholder.
uint64_t PlaceholderBytesIn(ROCKSDB_NAMESPACE::Cache& cache) {
  return (cache.GetUsage() / kPlaceholder) * kPlaceholder;
}

BlockBasedTableOptions Charging(std::shared_ptr<ROCKSDB_NAMESPACE::Cache> cache) {
  BlockBasedTableOptions table;
  table.block_cache = std::move(cache);
  table.cache_usage_options.options_overrides[CacheEntryRole::kFilterConstruction].charged =
      Decision::kEnabled;
  return table;
}

// Charged only when kFilterConstruction's override, or the default where it has none or
// kFallback, is kEnabled, and the table has a block cache.
TEST(ConstructionCharge, ForFollowsTheRoleOptionsAsRocksDbDoes) {
  BlockBasedTableOptions table;
  table.block_cache = OneShardCache(1 << 20, false);
  EXPECT_EQ(ConstructionCharge::For(table), nullptr);  // kFallback: RocksDB's "not charged"
  table.cache_usage_options.options.charged = Decision::kEnabled;
  EXPECT_NE(ConstructionCharge::For(table), nullptr);
  auto& role = table.cache_usage_options.options_overrides[CacheEntryRole::kFilterConstruction];
  role.charged = Decision::kFallback;  // the default decides
  EXPECT_NE(ConstructionCharge::For(table), nullptr);
  role.charged = Decision::kDisabled;
  EXPECT_EQ(ConstructionCharge::For(table), nullptr);
  role.charged = Decision::kEnabled;
  table.cache_usage_options.options.charged = Decision::kDisabled;
  EXPECT_NE(ConstructionCharge::For(table), nullptr);
  table.block_cache = nullptr;
  EXPECT_EQ(ConstructionCharge::For(table), nullptr);
}

// The placeholders cover the sum of the accounts in whole placeholders, shrink with it, and go
// with the charge; a strict cache refuses what exceeds its capacity, and the refused account's
// placeholders go when it is set back.
TEST(ConstructionCharge, PlaceholdersCoverTheAccounts) {
  auto cache = OneShardCache(64 << 20, false);
  {
    ConstructionCharge charge(cache);
    EXPECT_TRUE(charge.Charge(Account::kHashes, 1));
    EXPECT_EQ(PlaceholderBytesIn(*cache), kPlaceholder);
    EXPECT_TRUE(charge.Charge(Account::kBuild, 2 * kPlaceholder));  // 2 placeholders and a byte
    EXPECT_EQ(charge.ChargedBytes(), 3 * kPlaceholder);
    EXPECT_EQ(PlaceholderBytesIn(*cache), 3 * kPlaceholder);
    EXPECT_TRUE(charge.Charge(Account::kBuild, 0));
    EXPECT_EQ(PlaceholderBytesIn(*cache), kPlaceholder);
    EXPECT_TRUE(charge.Charge(Account::kFilters, 5 * kPlaceholder));
    EXPECT_EQ(PlaceholderBytesIn(*cache), 6 * kPlaceholder);
  }
  EXPECT_EQ(cache->GetUsage(), 0u);

  auto strict = OneShardCache(4 * kPlaceholder, true);
  ConstructionCharge charge(strict);
  EXPECT_TRUE(charge.Charge(Account::kHashes, 2 * kPlaceholder));
  EXPECT_FALSE(charge.Charge(Account::kBuild, 3 * kPlaceholder));
  EXPECT_LT(charge.ChargedBytes(), 5 * kPlaceholder);
  EXPECT_TRUE(charge.Charge(Account::kBuild, 0));
  EXPECT_EQ(PlaceholderBytesIn(*strict), 2 * kPlaceholder);
}

// Counts the cache's entries that RocksDB's statistics attribute to filter construction: from
// RocksDB 8.1 the role is the entry's helper's; 7.8 knows roles only by RocksDB's own deleters,
// so there every placeholder (and every entry here is one) is counted by its charge alone.
uint64_t FilterConstructionBytes(ROCKSDB_NAMESPACE::Cache& cache) {
  uint64_t bytes = 0;
#if __has_include(<rocksdb/advanced_cache.h>)
  cache.ApplyToAllEntries(
      [&](const Slice&, ROCKSDB_NAMESPACE::Cache::ObjectPtr, size_t charge,
          const ROCKSDB_NAMESPACE::Cache::CacheItemHelper* helper) {
        if (helper != nullptr && helper->role == CacheEntryRole::kFilterConstruction) {
          bytes += charge;
        }
      },
      {});
#else
  cache.ApplyToAllEntries([&](const Slice&, void*, size_t charge,
                              ROCKSDB_NAMESPACE::Cache::DeleterFn) { bytes += charge; },
                          {});
#endif
  return bytes;
}

// A fuse filter of 200,000 keys, built through the policy as RocksDB builds it: while the keys
// are added the cache holds their hashes; after Finish, the filter (and no hash); after the
// builder, nothing.
TEST(ConstructionCharge, ABuilderChargesItsHashesThenItsFilter) {
  auto cache = OneShardCache(256 << 20, false);
  BlockBasedTableOptions table = Charging(cache);
  table.filter_policy = testing::PolicyFrom("sstfilter.Fuse:10");
  auto builder = testing::NewBuilder(table);
  ASSERT_NE(builder, nullptr);
  constexpr int kKeys = 200'000;
  for (int i = 0; i < kKeys; ++i) builder->AddKey(Key(i));
  const uint64_t hash_bytes = 8 * uint64_t{kKeys};
  EXPECT_GE(FilterConstructionBytes(*cache), hash_bytes);
  EXPECT_LE(FilterConstructionBytes(*cache), hash_bytes + kPlaceholder);
  std::unique_ptr<const char[]> buf;
  Status s;
  const Slice filter = builder->Finish(&buf, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size())
                .trailer()
                .kind,
            Fuse::kId);
  EXPECT_GE(FilterConstructionBytes(*cache), filter.size());
  EXPECT_LT(FilterConstructionBytes(*cache), filter.size() + kPlaceholder);
  builder.reset();
  EXPECT_EQ(cache->GetUsage(), 0u);
}

// A strict cache with room for the hashes but not for the fuse build's scratch: the builder
// charges the hashes as they come, then builds a blocked Bloom filter of about the fuse filter's
// size, holding every key, and says so in a WARN line. With room for the build, fuse.
TEST(ConstructionCharge, ARefusedBuildIsABloomFilterOfTheSameSize) {
  constexpr int kKeys = 200'000;
  const FilterSpec fuse = SpecForBitsPerKey<Fuse>(10).value();
  const uint64_t hash_bytes = 8 * uint64_t{kKeys};
  for (const bool room : {false, true}) {
    const uint64_t build_bytes = BuildScratchBytes(fuse, kKeys) + FilterBytes(fuse, kKeys).value();
    auto cache =
        OneShardCache(hash_bytes + (room ? build_bytes : build_bytes / 2) + 2 * kPlaceholder,
                      /*strict=*/true);
    testing::RecordingLogger log;
    SstFilterBitsBuilder builder(fuse, /*verify=*/false, &log);
    builder.SetConstructionCharge(std::make_unique<ConstructionCharge>(cache));
    for (int i = 0; i < kKeys; ++i) builder.AddKey(Key(i));
    EXPECT_GE(PlaceholderBytesIn(*cache), hash_bytes);
    std::unique_ptr<const char[]> buf;
    Status s;
    const Slice filter = builder.Finish(&buf, &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const FilterReader reader =
        FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size());
    ASSERT_TRUE(reader.valid());
    EXPECT_EQ(reader.trailer().kind, room ? Fuse::kId : BlockedBloom::kId) << room;
    EXPECT_NEAR(static_cast<double>(filter.size()),
                static_cast<double>(FilterBytes(fuse, kKeys).value()),
                0.01 * static_cast<double>(filter.size()));
    std::vector<uint64_t> hashes;
    for (int i = 0; i < kKeys; ++i) hashes.push_back(KeyHash(Key(i).data(), Key(i).size()));
    EXPECT_EQ(testing::CountMissing(reader, hashes), 0u);
    const std::vector<std::string> lines = log.LinesWith("the block cache refused");
    EXPECT_EQ(lines.size(), room ? 0u : 1u);
    if (!room && !lines.empty()) {
      EXPECT_NE(lines[0].find("binary fuse"), std::string::npos) << lines[0];
      EXPECT_NE(lines[0].find("200000 keys"), std::string::npos) << lines[0];
    }
  }
}

// A database whose strict block cache is smaller than one flush's filter build: the flush and the
// compaction succeed, the refusal is in the LOG, and every key is found after a reopen.
TEST(ConstructionCharge, ADatabaseWithACacheTooSmallForABuildLosesNothing) {
  testing::TempDir dir("construction_charge");
  auto cache = OneShardCache(2 << 20, /*strict=*/true);
  for (const char* uri :
       {"sstfilter.Fuse:10", "sstfilter.BumpedRibbon:10", "sstfilter.Leveled:10"}) {
    SCOPED_TRACE(uri);
    ROCKSDB_NAMESPACE::Options options = testing::OptionsFor(uri, Charging(cache));
    options.write_buffer_size = 32 << 20;
    auto log = std::make_shared<testing::RecordingLogger>();
    options.info_log = log;
    ROCKSDB_NAMESPACE::DestroyDB(dir.path(), options);
    auto db = testing::MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    constexpr int kKeys = 300'000;
    for (int round = 0; round < 2; ++round) {
      for (int i = round; i < kKeys; i += 2) {
        ASSERT_TRUE(db->Put({}, Key(i), "v").ok());
      }
      ASSERT_TRUE(db->Flush({}).ok());
    }
    ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
    // Leveled may choose Bloom filters, which need no scratch, for every file of so small a tree.
    if (std::string(uri) != "sstfilter.Leveled:10") {
      EXPECT_FALSE(log->LinesWith("the block cache refused").empty());
    }
    db.reset();
    db = testing::MustOpen(options, dir.path());
    ASSERT_NE(db, nullptr);
    std::string value;
    int missing = 0;
    for (int i = 0; i < kKeys; ++i) missing += db->Get({}, Key(i), &value).ok() ? 0 : 1;
    EXPECT_EQ(missing, 0);
    db.reset();
  }
}

}  // namespace
}  // namespace sstfilter
