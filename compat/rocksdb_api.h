// SPDX-License-Identifier: Apache-2.0
// The parts of RocksDB's public API that sstfilter uses and that moved between 7.8 and 11.8, in
// one place, so that no other file needs a version #if.
//
// - Opening a database: up to 10.x, DB::Open and DB::OpenForReadOnly return a DB** (10.x also
//   has std::unique_ptr<DB>* forms); 11.x has only the std::unique_ptr<DB>* forms.
// - Seeks that a prefix filter turned away: counted in BLOOM_FILTER_PREFIX_USEFUL up to 8.2, in
//   LAST_LEVEL_SEEK_FILTERED and NON_LAST_LEVEL_SEEK_FILTERED from 8.3.
// - From 10.7, RocksDB's headers need C++20 (defaulted comparison operators): the top-level
//   CMakeLists.txt raises the language standard for those versions, not this file.
// - ReadOptions::table_filter: a std::function held by value up to 11.8; after 11.8 a pointer to
//   one that the caller owns (facebook/rocksdb #15005, on RocksDB's main branch for 11.9). Told
//   apart by the member's type, not by the version: 11.9's main branch had the value form for a
//   while. No release has the pointer form yet: the tests instantiate it with a stand-in
//   ReadOptions of that shape.
// - Cache's definition (GetCapacity, GetPrintableOptions): rocksdb/cache.h up to 8.0, then
//   rocksdb/advanced_cache.h.
// - BlockBasedTableOptions::decouple_partitioned_filters: from 9.6.
// - Cache::Insert: up to 8.0 with a deleter function (an entry's role in the statistics is told
//   by its deleter); from 8.1, where advanced_cache.h appeared, with a CacheItemHelper that names
//   the role.
#pragma once

// Cache's definition: rocksdb/cache.h before 8.x moved it to rocksdb/advanced_cache.h.
#if __has_include(<rocksdb/advanced_cache.h>)
#include <rocksdb/advanced_cache.h>
#endif
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "compat/rocksdb_version.h"

namespace sstfilter {
namespace compat {

// DB::Open(options, path, ...) into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDb(const ROCKSDB_NAMESPACE::Options& options,
                                        const std::string& path,
                                        std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::Open(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::Open(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::OpenForReadOnly(options, path, ...) into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDbForReadOnly(const ROCKSDB_NAMESPACE::Options& options,
                                                   const std::string& path,
                                                   std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::Open with column families into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDb(
    const ROCKSDB_NAMESPACE::DBOptions& options, const std::string& path,
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& column_families,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::Open(options, path, column_families, handles, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::DB::Open(options, path, column_families, handles, &raw);
  db->reset(raw);
  return s;
#endif
}

// DB::OpenForReadOnly with column families into *db (null on failure).
inline ROCKSDB_NAMESPACE::Status OpenDbForReadOnly(
    const ROCKSDB_NAMESPACE::DBOptions& options, const std::string& path,
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& column_families,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if SSTFILTER_ROCKSDB_VERSION >= 1100
  return ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, column_families, handles, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  const ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::DB::OpenForReadOnly(options, path, column_families, handles, &raw);
  db->reset(raw);
  return s;
#endif
}

// Iterator seeks that a prefix filter turned away, from RocksDB's statistics.
inline uint64_t SeeksFilteredByPrefix(const ROCKSDB_NAMESPACE::Statistics& stats) {
#if SSTFILTER_ROCKSDB_VERSION >= 803
  return stats.getTickerCount(ROCKSDB_NAMESPACE::LAST_LEVEL_SEEK_FILTERED) +
         stats.getTickerCount(ROCKSDB_NAMESPACE::NON_LAST_LEVEL_SEEK_FILTERED);
#else
  return stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_PREFIX_USEFUL);
#endif
}

// RocksDB's statistics of filters and block reads, read at once: the counts a benchmark or a test
// takes before and after its lookups (FilterTickersOf), and their difference.
struct FilterTickers {
  uint64_t negatives = 0;         // a whole-key filter said "no" (BLOOM_FILTER_USEFUL)
  uint64_t positives = 0;         // it said "may match" (BLOOM_FILTER_FULL_POSITIVE)
  uint64_t true_positives = 0;    // ... and the key was there (BLOOM_FILTER_FULL_TRUE_POSITIVE)
  uint64_t prefix_negatives = 0;  // a prefix filter said "no" (BLOOM_FILTER_PREFIX_USEFUL)
  uint64_t seek_negatives = 0;    // ... to an iterator's seek (SeeksFilteredByPrefix)
  uint64_t data_misses = 0;       // data blocks read into the block cache
  uint64_t filter_misses = 0;     // filter blocks read into the block cache
  uint64_t checks() const { return negatives + positives; }  // whole-key checks

  FilterTickers operator-(const FilterTickers& before) const {
    FilterTickers d;
    d.negatives = negatives - before.negatives;
    d.positives = positives - before.positives;
    d.true_positives = true_positives - before.true_positives;
    d.prefix_negatives = prefix_negatives - before.prefix_negatives;
    d.seek_negatives = seek_negatives - before.seek_negatives;
    d.data_misses = data_misses - before.data_misses;
    d.filter_misses = filter_misses - before.filter_misses;
    return d;
  }
};

inline FilterTickers FilterTickersOf(const ROCKSDB_NAMESPACE::Statistics& stats) {
  FilterTickers t;
  t.negatives = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_USEFUL);
  t.positives = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_FULL_POSITIVE);
  t.true_positives = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  t.prefix_negatives = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOOM_FILTER_PREFIX_USEFUL);
  t.seek_negatives = SeeksFilteredByPrefix(stats);
  t.data_misses = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOCK_CACHE_DATA_MISS);
  t.filter_misses = stats.getTickerCount(ROCKSDB_NAMESPACE::BLOCK_CACHE_FILTER_MISS);
  return t;
}

// What ReadOptions::table_filter calls for each SST file an iterator meets: false skips the file.
using TableFilter = std::function<bool(const ROCKSDB_NAMESPACE::TableProperties&)>;

// Whether R::table_filter (R: ReadOptions, or a stand-in in tests) is a pointer the caller owns.
template <typename R>
inline constexpr bool kTableFilterIsPointer =
    std::is_pointer_v<std::remove_reference_t<decltype(std::declval<R&>().table_filter)>>;

// The table_filter set in read_options, or null if none is.
template <typename R>
const TableFilter* CurrentTableFilter(const R& read_options) {
  if constexpr (kTableFilterIsPointer<R>) {
    return read_options.table_filter != nullptr && *read_options.table_filter
               ? read_options.table_filter
               : nullptr;
  } else {
    return read_options.table_filter ? &read_options.table_filter : nullptr;
  }
}

// Makes read_options->table_filter *filter: a copy in the value form; in the pointer form its
// address, so *filter must outlive every iterator made with *read_options or a copy of it.
template <typename R>
void SetTableFilter(R* read_options, const TableFilter* filter) {
  if constexpr (kTableFilterIsPointer<R>) {
    read_options->table_filter = filter;
  } else {
    read_options->table_filter = *filter;
  }
}

// Whether T (BlockBasedTableOptions, or a stand-in in tests) has decouple_partitioned_filters
// (from 9.6: filter partitions cut by their own size, not at each index partition's cut). Told
// apart by the member, as table_filter is.
template <typename T, typename = void>
inline constexpr bool kHasDecouplePartitionedFilters = false;
template <typename T>
inline constexpr bool kHasDecouplePartitionedFilters<
    T, std::void_t<decltype(std::declval<T&>().decouple_partitioned_filters)>> = true;

// Sets table->decouple_partitioned_filters to `on`. False, and *table unchanged, when `on` asks
// for what this RocksDB does not have.
template <typename T>
bool SetDecouplePartitionedFilters(T* table, bool on) {
  if constexpr (kHasDecouplePartitionedFilters<T>) {
    table->decouple_partitioned_filters = on;
    return true;
  } else {
    (void)table;
    return !on;
  }
}

// Inserts into `cache` an entry with no value that charges `charge` bytes, counted under
// CacheEntryRole::kFilterConstruction where the version can say so, held by *handle until
// released. `key` must be 16 bytes (HyperClockCache's only key size) and unique in the cache.
inline ROCKSDB_NAMESPACE::Status InsertFilterConstructionPlaceholder(
    ROCKSDB_NAMESPACE::Cache* cache, const ROCKSDB_NAMESPACE::Slice& key, size_t charge,
    ROCKSDB_NAMESPACE::Cache::Handle** handle) {
#if __has_include(<rocksdb/advanced_cache.h>)
  static const ROCKSDB_NAMESPACE::Cache::CacheItemHelper kHelper(
      ROCKSDB_NAMESPACE::CacheEntryRole::kFilterConstruction);
  return cache->Insert(key, nullptr, &kHelper, charge, handle);
#else
  return cache->Insert(
      key, nullptr, charge, [](const ROCKSDB_NAMESPACE::Slice&, void*) {}, handle);
#endif
}

}  // namespace compat
}  // namespace sstfilter
