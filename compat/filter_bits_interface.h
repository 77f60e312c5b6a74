// RocksDB's FilterBitsBuilder and FilterBitsReader, re-declared.
//
// A FilterPolicy hands RocksDB objects of these two classes, but RocksDB 7.8 declares them in an
// internal header (table/block_based/filter_policy_internal.h) that Debian's librocksdb-dev does
// not install; <rocksdb/filter_policy.h> only forward-declares them. This is the one place in
// sstfilter that declares them. RocksDB calls our objects through their vtables, so these
// declarations must match the library's exactly: the same virtual functions with the same
// signatures in the same order (a destructor, then AddKey, EstimateEntriesAdded, Finish,
// Finish with a Status*, MaybePostVerify, ApproximateNumEntries; a destructor, then MayMatch and
// the batched MayMatch), as at tag v7.8.3. The test DbPolicyTest.LoadCompactReopenAndFilter
// (tests/plugin/db_test.cc) proves that the real library calls through them: it builds real SST
// files with every policy and counts, in RocksDB's statistics, the reads the filters skipped.
//
// It lives in compat/ rather than plugin/ because the benchmarks (db_bench_ext, core_bench) also
// call RocksDB's own filters through it.
#pragma once

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/version.h>

#include <cstddef>
#include <memory>

#if !(ROCKSDB_MAJOR == 7 && ROCKSDB_MINOR == 8)
#error \
    "sstfilter re-declares RocksDB's internal FilterBitsBuilder/FilterBitsReader as they are \
in RocksDB 7.8 (table/block_based/filter_policy_internal.h). This RocksDB has another version: \
compare that header at this version's tag with compat/filter_bits_interface.h, update the \
declarations to match it exactly (order of virtual functions included), then widen this check."
#endif

namespace ROCKSDB_NAMESPACE {

// Collects the keys of one filter (one SST file, or one partition of a partitioned filter) and
// produces the filter's bytes. RocksDB reuses a builder for the partitions of one file.
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}

  // Adds a key or prefix. Keys arrive in sorted order and may repeat.
  virtual void AddKey(const Slice& key) = 0;

  // The number of distinct keys added so far (it fills TableProperties::num_filter_entries).
  virtual size_t EstimateEntriesAdded() = 0;

  // Builds the filter of the keys added since the last Finish; *buf receives the bytes that the
  // returned Slice points into.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;

  // The overload RocksDB 7.8 calls. A non-OK *status marks a failed construction, whose bytes
  // RocksDB must not use.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf, Status* /*status*/) {
    return Finish(buf);
  }

  // Called after a successful Finish with its result, to check it against the keys when the
  // table options ask for detect_filter_construct_corruption.
  virtual Status MaybePostVerify(const Slice& /*filter_content*/) { return Status::OK(); }

  // About how many keys fit in a filter of at most `bytes` bytes (used to size partitions).
  virtual size_t ApproximateNumEntries(size_t bytes) = 0;
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
