// SPDX-License-Identifier: Apache-2.0
// A filter builder's memory charged to the block cache, as RocksDB charges its own builders' when
// BlockBasedTableOptions::cache_usage_options charges CacheEntryRole::kFilterConstruction: what
// RocksDB users set so that the block cache's capacity bounds a process's memory.
//
// The charge is held as placeholder entries of the cache (a key, no value, a charge of
// kPlaceholderBytes each), inserted before the memory they stand for is used and erased when it
// is freed. The builder keeps three accounts: its key hashes (8 bytes per key, charged as the list
// grows), a build's scratch and output (charged before the build, released after), and the
// finished filters (held until the builder is destroyed, when RocksDB has written the file). The
// placeholders cover the sum of the accounts, rounded up to whole placeholders, as RocksDB's
// CacheReservationManager rounds its own.
//
// A cache with strict_capacity_limit refuses an insert that would exceed its capacity: the
// account's new size is then not covered, and Charge says so, so that the builder can build a
// kind that needs less (bits_adapters.cc). RocksDB's statistics count the placeholders under
// CacheEntryRole::kFilterConstruction ("filter-construction" in rocksdb.block-cache-entry-stats)
// from RocksDB 8.1 on; 7.8's statistics know a role by its deleter, which is RocksDB's own, so
// there they count as "misc". The cache's GetUsage includes them in every version.
#pragma once

#include <rocksdb/table.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "compat/rocksdb_api.h"

namespace sstfilter {

class ConstructionCharge {
 public:
  // The charge of each placeholder entry: RocksDB's own (CacheReservationManager's dummy entry).
  static constexpr uint64_t kPlaceholderBytes = 256 * 1024;

  enum class Account { kHashes, kBuild, kFilters };

  // The charge for a builder of a table with these options: null unless they charge
  // kFilterConstruction (its override in cache_usage_options unless that is kFallback, else the
  // default there, kEnabled) and have a block cache. May throw std::bad_alloc.
  static std::unique_ptr<ConstructionCharge> For(
      const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options);

  explicit ConstructionCharge(std::shared_ptr<ROCKSDB_NAMESPACE::Cache> cache);
  ~ConstructionCharge();  // erases every placeholder
  ConstructionCharge(const ConstructionCharge&) = delete;
  ConstructionCharge& operator=(const ConstructionCharge&) = delete;

  // Sets `account` to `bytes` and the placeholders to cover the sum of the accounts. False if the
  // cache refused a placeholder (strict capacity), or there was no memory to hold one: the
  // account keeps `bytes` unless the caller sets it back. Never throws.
  bool Charge(Account account, uint64_t bytes);
  uint64_t Bytes(Account account) const { return bytes_[static_cast<int>(account)]; }
  // The bytes the placeholders held now charge to the cache.
  uint64_t ChargedBytes() const { return placeholders_.size() * kPlaceholderBytes; }

 private:
  const std::shared_ptr<ROCKSDB_NAMESPACE::Cache> cache_;
  uint64_t bytes_[3] = {0, 0, 0};
  std::vector<ROCKSDB_NAMESPACE::Cache::Handle*> placeholders_;
};

}  // namespace sstfilter
