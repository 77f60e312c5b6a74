// The FilterBitsBuilder and FilterBitsReader that RocksDB calls for every sstfilter policy: thin
// adapters from RocksDB's interface to core/. Nothing here throws across the RocksDB boundary,
// prints, or fails a flush: a builder that cannot build its filter logs why and writes a filter
// that matches every key (allocated when the library loads, so that running out of memory needs
// no more). There is one reader adapter per reader type of core (core/filter_reader.h), so the
// per-key work is the kind's own query with no dispatch.
#pragma once

#include <rocksdb/env.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_spec.h"
#include "core/hash_list.h"

namespace sstfilter {

class SstFilterBitsBuilder : public ROCKSDB_NAMESPACE::FilterBitsBuilder {
 public:
  // `verify`: check each built filter against its keys in MaybePostVerify (RocksDB's
  // detect_filter_construct_corruption). `log` may be null.
  SstFilterBitsBuilder(const FilterSpec& spec, bool verify, ROCKSDB_NAMESPACE::Logger* log);

  // Hashes the key once and keeps the 8-byte hash, skipping a repeat of the previous key.
  void AddKey(const ROCKSDB_NAMESPACE::Slice& key) override;
  size_t EstimateEntriesAdded() override { return hashes_.size(); }
  ROCKSDB_NAMESPACE::Slice Finish(std::unique_ptr<const char[]>* buf) override;
  // Builds the filter of the keys added since the last Finish and empties the builder (RocksDB
  // reuses it for the next partition). *status is always OK: a failure is logged and answered with
  // a match-all filter, because a non-OK status would fail the whole flush.
  ROCKSDB_NAMESPACE::Slice Finish(std::unique_ptr<const char[]>* buf,
                                  ROCKSDB_NAMESPACE::Status* status) override;
  // With verification on: Corruption if the filter does not parse or misses one of its keys.
  ROCKSDB_NAMESPACE::Status MaybePostVerify(const ROCKSDB_NAMESPACE::Slice& filter) override;
  // The exact inverse of the filter size (core's MaxKeysForBytes).
  size_t ApproximateNumEntries(size_t bytes) override;

 private:
  const FilterSpec spec_;
  const bool verify_;
  ROCKSDB_NAMESPACE::Logger* const log_;
  HashList hashes_;       // 8 bytes per distinct key (core/hash_list.h)
  HashList last_hashes_;  // the keys of the last Finish, kept only for verification
  bool failed_ = false;   // a key could not be recorded (out of memory)
};

// Logs "[sstfilter] <message>" at ERROR level to a table's logger, which may be null.
void LogError(ROCKSDB_NAMESPACE::Logger* log, const std::string& message);

// The reader for any bytes under the "sstfilter" compatibility name. Never fails: bytes it does
// not understand give a reader that matches every key.
ROCKSDB_NAMESPACE::FilterBitsReader* NewSstFilterBitsReader(
    const ROCKSDB_NAMESPACE::Slice& contents);

}  // namespace sstfilter
