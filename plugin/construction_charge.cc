// SPDX-License-Identifier: Apache-2.0
#include "plugin/construction_charge.h"

#include <algorithm>
#include <cstring>
#include <exception>

namespace sstfilter {

using ROCKSDB_NAMESPACE::CacheEntryRole;
using Decision = ROCKSDB_NAMESPACE::CacheEntryRoleOptions::Decision;

std::unique_ptr<ConstructionCharge> ConstructionCharge::For(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table_options) {
  const auto& usage = table_options.cache_usage_options;
  const auto role = usage.options_overrides.find(CacheEntryRole::kFilterConstruction);
  // As RocksDB's BlockBasedTableFactory resolves it: an override of kFallback is the default.
  const Decision charged =
      role != usage.options_overrides.end() && role->second.charged != Decision::kFallback
          ? role->second.charged
          : usage.options.charged;
  if (charged != Decision::kEnabled || table_options.block_cache == nullptr) return nullptr;
  return std::make_unique<ConstructionCharge>(table_options.block_cache);
}

ConstructionCharge::ConstructionCharge(std::shared_ptr<ROCKSDB_NAMESPACE::Cache> cache)
    : cache_(std::move(cache)) {}

ConstructionCharge::~ConstructionCharge() {
  for (ROCKSDB_NAMESPACE::Cache::Handle* h : placeholders_) {
    cache_->Release(h, /*erase_if_last_ref=*/true);
  }
}

bool ConstructionCharge::Charge(Account account, uint64_t bytes) {
  bytes_[static_cast<int>(account)] = bytes;
  const uint64_t total = bytes_[0] + bytes_[1] + bytes_[2];
  const uint64_t wanted = total / kPlaceholderBytes + (total % kPlaceholderBytes != 0 ? 1 : 0);
  while (placeholders_.size() > wanted) {
    cache_->Release(placeholders_.back(), /*erase_if_last_ref=*/true);
    placeholders_.pop_back();
  }
  while (placeholders_.size() < wanted) {
    try {
      placeholders_.reserve(std::max<size_t>(wanted, 2 * placeholders_.size()));
    } catch (const std::exception&) {
      return false;  // no memory to hold the handle: as if the cache refused
    }
    // RocksDB's own key for an entry that is never looked up: 8 zero bytes, then an id unique in
    // this cache (Cache::NewId, plus one so that the key is never all zeros). No key of a file's
    // block has that form, so the placeholder never shadows a block.
    char key[16] = {};
    const uint64_t id = cache_->NewId() + 1;
    std::memcpy(key + 8, &id, sizeof(id));
    ROCKSDB_NAMESPACE::Cache::Handle* handle = nullptr;
    ROCKSDB_NAMESPACE::Status s;
    try {  // the cache may allocate (its table grows)
      s = compat::InsertFilterConstructionPlaceholder(
          cache_.get(), ROCKSDB_NAMESPACE::Slice(key, sizeof(key)), kPlaceholderBytes, &handle);
    } catch (const std::exception&) {
      return false;
    }
    if (!s.ok() || handle == nullptr) return false;
    placeholders_.push_back(handle);
  }
  return true;
}

}  // namespace sstfilter
