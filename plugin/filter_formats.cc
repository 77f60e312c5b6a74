// SPDX-License-Identifier: Apache-2.0
#include "plugin/filter_formats.h"

#include <rocksdb/cache.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>

#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/filter_spec.h"
#include "core/format.h"
#include "core/parse.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// A policy that builds nothing and records the format of every filter block RocksDB hands it,
// answering with no reader (RocksDB: "may match"). Its compatibility name chooses which blocks
// RocksDB finds.
class RecordingPolicy : public ROCKSDB_NAMESPACE::FilterPolicy {
 public:
  explicit RecordingPolicy(const char* family) : family_(family) {}
  const char* Name() const override { return "sstfilter.internal.RecordingPolicy"; }
  const char* CompatibilityName() const override { return family_; }
  ROCKSDB_NAMESPACE::FilterBitsBuilder* GetBuilderWithContext(
      const ROCKSDB_NAMESPACE::FilterBuildingContext&) const override {
    return nullptr;
  }
  ROCKSDB_NAMESPACE::FilterBitsReader* GetFilterBitsReader(const Slice& block) const override {
    try {
      std::lock_guard<std::mutex> lock(mu_);
      if (first_.empty()) first_ = FilterFormatOf(block);
    } catch (const std::exception&) {  // out of memory: the format stays unknown
    }
    return nullptr;
  }
  std::string First() const {
    std::lock_guard<std::mutex> lock(mu_);
    return first_;
  }

 private:
  const char* const family_;
  mutable std::mutex mu_;
  mutable std::string first_;
};

}  // namespace

std::string FilterFormatOf(const Slice& block) {
  const auto* data = reinterpret_cast<const uint8_t*>(block.data());
  const size_t size = block.size();
  ParsedFilter parsed;
  if (ParseFilter(data, size, &parsed)) {
    // The filter written for a set given no filter, or by a failed build, is a valid one-block
    // Bloom filter that matches every key (MatchAllFilter).
    if (block == Slice(MatchAllFilter(parsed.trailer.num_keys))) return "sstfilter:match_all";
    return std::string("sstfilter:") + FilterKindName(parsed.trailer.kind);
  }
  if (TrailerLayoutOf(data, size) != TrailerLayout::kNone) return "sstfilter:unreadable";
  // RocksDB's metadata: its last 5 bytes (docs/format.md section 3, "Why layout 2's marker").
  if (size <= kMarkerBytes) return "rocksdb:empty";
  const uint8_t marker = data[size - kMarkerBytes];
  if (marker >= 1 && marker <= 127) return "rocksdb:legacy_bloom";
  if (marker == 0xFF && data[size - 4] == 0) return "rocksdb:fast_local_bloom";
  if (marker == 0xFE) return "rocksdb:ribbon";
  return "rocksdb:unknown";
}

Status ReadFileFilterFormat(const std::string& path, const ROCKSDB_NAMESPACE::Options& options,
                            FileFilterFormat* out) {
  *out = FileFilterFormat();
  for (const char* family : {kRocksDbCompatibilityName, kSstFilterCompatibilityName}) {
    auto recording = std::make_shared<RecordingPolicy>(family);
    ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
    if (const auto* own =
            options.table_factory == nullptr
                ? nullptr
                : options.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>()) {
      table = *own;
    }
    table.filter_policy = recording;
    // Every filter block loaded as the file opens: full filters at once, a partitioned filter's
    // partitions through a cache of their own.
    table.cache_index_and_filter_blocks = true;
    table.no_block_cache = false;
    table.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(1 << 20);
    ROCKSDB_NAMESPACE::Options probe = options;
    probe.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
    ROCKSDB_NAMESPACE::SstFileReader reader(probe);
    const Status s = reader.Open(path);
    if (!s.ok()) return s;
    const std::string first = recording->First();
    if (!first.empty()) {
      out->family = family;
      out->format = first;
      return Status::OK();
    }
  }
  return Status::OK();
}

}  // namespace sstfilter
