// SPDX-License-Identifier: Apache-2.0
// sstfilter.NoTrivialMove: an SstPartitionerFactory that makes RocksDB rewrite, instead of move,
// files it would push down a level unchanged ("trivial moves").
//
// Why: a filter is built once, when its file is written, for the level the file is written to.
// sstfilter.Leveled gives upper levels more bits per key than deeper ones, so a file moved down
// unchanged carries its upper-level filter into a level that was allotted less, and the tree
// spends more filter memory than its budget. With this partitioner every file that changes level
// is rewritten, and so gets the filter of the level it lands on.
//
// The cost is write I/O: each file RocksDB would have moved is read and written once more. In
// random-key workloads moves are rare (tens of files per million keys in db_bench_ext); in
// sequential loads every file is a move, so there it multiplies the write amplification.
//
// RocksDB 7.8 asks the partitioner only for moves into levels above the last one
// (Compaction::IsTrivialMove skips the question when the output level is num_levels - 1), so a
// file can still move unchanged into the last level.
//
// It never splits output files (ShouldPartition always answers kNotRequired).
//
// Select it by name, like the filter policies: "sst_partitioner_factory=sstfilter.NoTrivialMove"
// in ColumnFamilyOptions strings and OPTIONS files, or NewNoTrivialMoveFactory() in code.
#pragma once

#include <rocksdb/sst_partitioner.h>

#include <memory>

#include "sstfilter/export.h"

namespace sstfilter {

inline constexpr const char* kNoTrivialMoveName = "sstfilter.NoTrivialMove";

class SSTFILTER_EXPORT NoTrivialMoveFactory : public ROCKSDB_NAMESPACE::SstPartitionerFactory {
 public:
  static const char* kClassName() { return kNoTrivialMoveName; }
  const char* Name() const override { return kClassName(); }
  std::unique_ptr<ROCKSDB_NAMESPACE::SstPartitioner> CreatePartitioner(
      const ROCKSDB_NAMESPACE::SstPartitioner::Context& context) const override;
};

SSTFILTER_EXPORT std::shared_ptr<ROCKSDB_NAMESPACE::SstPartitionerFactory>
NewNoTrivialMoveFactory();

}  // namespace sstfilter
