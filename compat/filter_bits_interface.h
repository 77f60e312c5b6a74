// SPDX-License-Identifier: Apache-2.0
// RocksDB's FilterBitsBuilder and FilterBitsReader, re-declared for every RocksDB from 7.8 to 11.8.
//
// A FilterPolicy hands RocksDB objects of these two classes, but RocksDB declares them in an
// internal header (table/block_based/filter_policy_internal.h) that distributions do not install;
// <rocksdb/filter_policy.h> only forward-declares them. This is the one place in sstfilter that
// declares them. RocksDB calls our objects through their vtables, so these declarations must match
// the library's exactly: the same virtual functions with the same signatures in the same order. A
// declaration one slot off calls the wrong function.
//
// Read from that header at each of the 52 release tags from v7.8.3 to v11.8.1, the builder has
// three layouts and the reader one:
//
//   RocksDB       FilterBitsBuilder's virtual functions, in vtable order
//   7.8 to 9.5    ~, AddKey, EstimateEntriesAdded, Finish, Finish(Status*), MaybePostVerify,
//                 ApproximateNumEntries
//   9.6 to 10.8   AddKeyAndAlt added right after AddKey
//   10.9 to 11.8  CalculateSpace and EstimatedFpRate added at the end
//
//   FilterBitsReader (all): ~, MayMatch, MayMatch(batch)
//
// The layout is chosen at compile time from <rocksdb/version.h>; the SSTFILTER_ROCKSDB_HAS_*
// macros below say which functions exist, for the code that implements them. A RocksDB outside
// 7.8 to 11.8 stops the build (inside a RocksDB tree, only one older than 7.8). The tests
// DbPolicyTest.LoadCompactReopenAndFilter and DbTest.PrefixAndWholeKeyFiltering
// (tests/plugin/db_test.cc), run against each RocksDB that CI covers, prove that the real library
// calls through these declarations: they build real SST files and count, in RocksDB's statistics,
// the reads the filters skipped. CI covers the first two layouts (7.8.3; 9.10.0 and 9.11.2); the
// third, 10.9 to 11.8, is written from RocksDB's definitions and neither built nor tested here,
// since no RocksDB of those versions can be built from Debian's sources.
//
// Built inside a RocksDB source tree (plugin/sstfilter, sstfilter.mk), that tree's own header is
// on the include path and is used instead: the declarations are then RocksDB's, by construction.
//
// It lives in compat/ rather than plugin/ because the benchmarks (db_bench_ext, core_bench) also
// call RocksDB's own filters through it.
#pragma once

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <cstddef>
#include <memory>

#include "compat/rocksdb_version.h"

#if SSTFILTER_ROCKSDB_VERSION < 708
#error "sstfilter needs RocksDB 7.8 or later."
#endif

// From 9.6: AddKeyAndAlt, right after AddKey.
#define SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT (SSTFILTER_ROCKSDB_VERSION >= 906)
// From 10.9: CalculateSpace and EstimatedFpRate, pure virtual, at the end.
#define SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE (SSTFILTER_ROCKSDB_VERSION >= 1009)

#if __has_include("table/block_based/filter_policy_internal.h")
// Inside RocksDB's tree: the real declarations, of any version (a newer pure virtual function
// would stop the build as an abstract class, naming it).
#include "table/block_based/filter_policy_internal.h"
#else
#if SSTFILTER_ROCKSDB_VERSION > 1108
#error \
    "sstfilter re-declares RocksDB's internal FilterBitsBuilder/FilterBitsReader as they are \
in RocksDB 7.8 to 11.8 (table/block_based/filter_policy_internal.h). This RocksDB is newer: \
compare that header at this version's tag with compat/filter_bits_interface.h, add its layout if \
the virtual functions or their order changed, then widen this check."
#endif

namespace ROCKSDB_NAMESPACE {

// Collects the keys of one filter (one SST file, or one partition of a partitioned filter) and
// produces the filter's bytes. RocksDB reuses a builder for the partitions of one file.
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}

  // Adds a key or prefix. Keys arrive in sorted order and may repeat.
  virtual void AddKey(const Slice& key) = 0;

#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  // Adds a key and an alternate entry (its prefix, when a prefix extractor and whole-key
  // filtering are both on). Repeats are skipped between successive keys, between successive
  // alternates, and between a key and the alternates just before and beside it; an AddKey after
  // AddKeyAndAlt is compared with the last key only.
  virtual void AddKeyAndAlt(const Slice& key, const Slice& alt) = 0;
#endif

  // The number of distinct entries added so far (it fills TableProperties::num_filter_entries).
  // 0 if and only if nothing was added.
  virtual size_t EstimateEntriesAdded() = 0;

  // Builds the filter of the keys added since the last Finish; *buf receives the bytes that the
  // returned Slice points into.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;

  // The overload RocksDB calls. A non-OK *status marks a failed construction, whose bytes RocksDB
  // must not use.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf, Status* /*status*/) {
    return Finish(buf);
  }

  // Called after a successful Finish with its result, to check it against the keys when the
  // table options ask for detect_filter_construct_corruption.
  virtual Status MaybePostVerify(const Slice& /*filter_content*/) { return Status::OK(); }

  // About how many keys fit in a filter of at most `bytes` bytes (used to size partitions).
  virtual size_t ApproximateNumEntries(size_t bytes) = 0;

#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
  // The bytes of the filter of `num_entries` entries, metadata included (RocksDB adds it to its
  // estimate of the file's size, which decides where compaction cuts output files).
  virtual size_t CalculateSpace(size_t num_entries) = 0;

  // The false-positive rate of a filter of `num_entries` entries in `bytes` bytes.
  virtual double EstimatedFpRate(size_t num_entries, size_t bytes) = 0;
#endif
};

// Answers queries for the bytes of one filter.
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}

  virtual bool MayMatch(const Slice& entry) = 0;

  // The batched form MultiGet uses.
  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) {
    for (int i = 0; i < num_keys; ++i) may_match[i] = MayMatch(*keys[i]);
  }
};

}  // namespace ROCKSDB_NAMESPACE
#endif  // inside RocksDB's tree
