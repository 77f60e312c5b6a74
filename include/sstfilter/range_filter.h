// SPDX-License-Identifier: Apache-2.0
// Range filters for iterators on stock RocksDB: an iterator bounded to a range that an SST file
// holds nothing of skips that file (no index or data block read), without a fork of RocksDB.
//
// Writing: the table properties collector sstfilter.RangeFilter stores a range filter of every
// key of each new SST file (puts, deletes, single deletes, merge operands, blob indexes, wide
// columns: every entry's key) in the file's properties, under kRangeFilterPropertyName. Select it
// by string, in code, option strings and OPTIONS files:
//
//     table_properties_collectors=sstfilter.RangeFilter          (16 bits per key)
//     table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=12}
//
// (no "sstfilter.RangeFilter:12": RocksDB splits that option's value at colons)
//
// or in code: NewRangeFilterCollectorFactory(16, &factory), appended to
// ColumnFamilyOptions::table_properties_collector_factories. Files written before have no filter
// and are never skipped; compactions give them one as they rewrite them.
//
// Reading: SkipEmptyFiles(&read_options) (or SkipEmptyFiles(&read_options, &holder), the form
// for RocksDB after 11.8) on ReadOptions whose iterate_lower_bound and/or iterate_upper_bound are
// set. Iterators made with those ReadOptions then skip every file whose filter says it holds no
// key in [lower, upper). Forward and backward iteration, Seek and SeekForPrev, snapshots and
// column families answer exactly as without it: a file is skipped only if it holds no entry of
// any kind in the bounds, and a file with range deletions is never skipped for bounds its
// deletions reach (see docs/range_filters.md for why tombstones stay correct).
//
// The filter reads the bounds where RocksDB reads them, through the two Slice pointers set when
// SkipEmptyFiles is called, each time it decides on a file: changing the Slices or their bytes in
// place between iterators is safe, as it is for RocksDB. Pointing iterate_lower_bound or
// iterate_upper_bound at another Slice (or at none) is not something the filter can see: call
// SkipEmptyFiles again after doing so, before making an iterator (the new bounds replace the old
// ones; a table_filter of your own set before the first call stays); until then the filter
// still reads the Slices it was given, which must stay alive. As RocksDB requires, do not change
// the bounds an iterator was made with while it lives (it reads files lazily). If you wrap the
// table_filter it set in a function of your own, set it back before calling it again. Only column
// families with the default bytewise comparator are filtered; files of any other comparator
// (reverse, user-defined timestamps) are never skipped.
//
// Memory: a filter takes bits_per_key bits per distinct key (plus 64 bytes, the keys' common
// prefix, 32 bytes per window byte and the range deletions' bounds) in the file's table
// properties, which RocksDB keeps in memory, outside the block cache, for as long as the
// file is open (max_open_files = -1: always). 16 bits per key is 2 bytes per key.
//
// How good: a range of L keys that holds none of the file's keys is a false positive with
// probability about L / 2^(bits_per_key - 2) (Grafite's bound, SIGMOD 2024), for any query,
// including ranges that start just after a present key. A key counts by its first bytes after the
// prefix all of the file's keys share (at most 16: as many as tell the keys apart); keys that
// differ only beyond them share a position, which costs false positives, never a lost key.
// docs/range_filters.md has the measurements.
#pragma once

#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/table_properties.h>

#include <functional>
#include <memory>

#include "sstfilter/export.h"

namespace sstfilter {

inline constexpr const char* kRangeFilterName = "sstfilter.RangeFilter";
// The user-collected property that holds a file's range filter (docs/format.md section 15).
inline constexpr const char* kRangeFilterPropertyName = "sstfilter.range";
inline constexpr double kDefaultRangeBitsPerKey = 16.0;

// The collector factory of sstfilter.RangeFilter at bits_per_key (4 to 48); InvalidArgument
// outside that.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status NewRangeFilterCollectorFactory(
    double bits_per_key,
    std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory>* factory);

// Sets read_options->table_filter so that iterators made with *read_options skip files whose
// range filter says they hold no key in [iterate_lower_bound, iterate_upper_bound) (a missing
// bound is open). A table_filter already set still applies: a file is read only if both let it;
// one that an earlier SkipEmptyFiles set is replaced. InvalidArgument, leaving *read_options
// unchanged, if neither bound is set.
//
// RocksDB up to 11.8 keeps the table_filter in ReadOptions by value. After 11.8 (RocksDB's main
// branch, facebook/rocksdb #15005) ReadOptions only points to a table_filter that the caller
// owns: there this form returns NotSupported, and the form below, with a TableFilterHolder, is
// the one that works. The form with a holder works on every version.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status SkipEmptyFiles(
    ROCKSDB_NAMESPACE::ReadOptions* read_options);

// Where SkipEmptyFiles keeps the table_filter it sets, for RocksDB versions whose ReadOptions
// only point to it. Keep the holder alive, at the same address, for as long as any iterator made
// with those ReadOptions or a copy of them lives (copies of ReadOptions share the pointer); give
// each ReadOptions in use a holder of its own (a second SkipEmptyFiles with the same holder
// changes the filter of every iterator still reading with it). Up to 11.8 ReadOptions keep a copy
// of the filter and the holder may go at once.
class TableFilterHolder {
 public:
  TableFilterHolder() = default;
  TableFilterHolder(const TableFilterHolder&) = delete;
  TableFilterHolder& operator=(const TableFilterHolder&) = delete;

 private:
  friend ROCKSDB_NAMESPACE::Status SkipEmptyFiles(ROCKSDB_NAMESPACE::ReadOptions*,
                                                  TableFilterHolder*);
  std::function<bool(const ROCKSDB_NAMESPACE::TableProperties&)> filter_;
};

// SkipEmptyFiles above, keeping the filter in *holder (see TableFilterHolder).
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status SkipEmptyFiles(
    ROCKSDB_NAMESPACE::ReadOptions* read_options, TableFilterHolder* holder);

// Whether the file of these properties may hold a key in [*lower, *upper) (null: open): false
// only if the file has a range filter that says so. For tools and tests; SkipEmptyFiles uses it.
SSTFILTER_EXPORT bool FileMayHoldKeysIn(const ROCKSDB_NAMESPACE::TableProperties& properties,
                                        const ROCKSDB_NAMESPACE::Slice* lower,
                                        const ROCKSDB_NAMESPACE::Slice* upper);

}  // namespace sstfilter
