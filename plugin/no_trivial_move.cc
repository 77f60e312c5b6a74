// SPDX-License-Identifier: Apache-2.0
#include "sstfilter/no_trivial_move.h"

#include <new>

namespace sstfilter {
namespace {

class NoTrivialMove : public ROCKSDB_NAMESPACE::SstPartitioner {
 public:
  const char* Name() const override { return kNoTrivialMoveName; }
  ROCKSDB_NAMESPACE::PartitionerResult ShouldPartition(
      const ROCKSDB_NAMESPACE::PartitionerRequest& /*request*/) override {
    return ROCKSDB_NAMESPACE::kNotRequired;
  }
  bool CanDoTrivialMove(const ROCKSDB_NAMESPACE::Slice& /*smallest_user_key*/,
                        const ROCKSDB_NAMESPACE::Slice& /*largest_user_key*/) override {
    return false;
  }
};

}  // namespace

std::unique_ptr<ROCKSDB_NAMESPACE::SstPartitioner> NoTrivialMoveFactory::CreatePartitioner(
    const ROCKSDB_NAMESPACE::SstPartitioner::Context& /*context*/) const {
  // RocksDB treats a null partitioner as "no partitioner": out of memory, moves stay allowed.
  return std::unique_ptr<ROCKSDB_NAMESPACE::SstPartitioner>(new (std::nothrow) NoTrivialMove());
}

std::shared_ptr<ROCKSDB_NAMESPACE::SstPartitionerFactory> NewNoTrivialMoveFactory() {
  return std::make_shared<NoTrivialMoveFactory>();
}

}  // namespace sstfilter
