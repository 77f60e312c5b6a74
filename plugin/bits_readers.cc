// SPDX-License-Identifier: Apache-2.0
// The FilterBitsReaders RocksDB gets for sstfilter's filter blocks and for its own
// (bits_adapters.h).
#include <rocksdb/filter_policy.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "core/batch.h"
#include "core/filter_reader.h"
#include "plugin/bits_adapters.h"
#include "plugin/probe_counts.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;

namespace {

// The reader of one kind of filter (or of the match-all and match-none answers): the core
// reader's queries with the key hashing in front, and the probes counted into `probes` when the
// block has a cell (plugin/probe_counts.h). One instantiation per alternative of AnyReader.
template <typename CoreReader>
class TypedReader : public FilterBitsReader {
 public:
  TypedReader(const CoreReader& reader, std::shared_ptr<ProbeCell> probes)
      : reader_(reader), probes_(std::move(probes)) {}

  bool MayMatch(const Slice& key) override { return MayMatchOne(key); }

  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    constexpr int kChunk = 64;  // hashes on the stack: no allocation per query
    uint64_t hashes[kChunk];
    for (int start = 0; start < num_keys; start += kChunk) {
      const int n = std::min(kChunk, num_keys - start);
      if constexpr (!kConstant) {
        uint64_t sampled = 0;  // counted whether or not the block has a cell: no branch per key
        for (int i = 0; i < n; ++i) {
          hashes[i] = KeyHashOf(*keys[start + i]);
          reader_.Prefetch(hashes[i]);  // loads while the next keys hash
          sampled += SampledProbe(hashes[i]) ? 1 : 0;
        }
        if (sampled > 0 && probes_ != nullptr) probes_->Add(sampled);
      }
      reader_.MayContainBatch(hashes, static_cast<size_t>(n), may_match + start,
                              BatchPrefetch::kByCaller);
    }
  }

 protected:
  // One key's query: MayMatch's, and PopcntReader's copy of it.
  bool MayMatchOne(const Slice& key) const {
    if constexpr (kConstant) return reader_.MayContain(0);  // no need to hash the key
    const uint64_t h = KeyHashOf(key);
    if (probes_ != nullptr && SampledProbe(h)) probes_->Add(1);
    return reader_.MayContain(h);
  }

 private:
  // The answers that do not depend on the key (bytes not understood, or no keys).
  static constexpr bool kConstant =
      std::is_same_v<CoreReader, MatchAllReader> || std::is_same_v<CoreReader, MatchNoneReader>;
  const CoreReader reader_;
  const std::shared_ptr<ProbeCell> probes_;  // null: not counted
};

#if SSTFILTER_POPCNT_DISPATCH
// A Ribbon kind's reader whose single queries are compiled with popcnt (core/batch.h), chosen
// when the block is opened on a CPU that has it. Its batches are TypedReader's: core's
// MayContainBatch chooses its own copy per batch.
template <typename CoreReader>
class PopcntReader final : public TypedReader<CoreReader> {
 public:
  using TypedReader<CoreReader>::TypedReader;
  using TypedReader<CoreReader>::MayMatch;  // the batch
  SSTFILTER_TARGET_POPCNT bool MayMatch(const Slice& key) override {
    return this->MayMatchOne(key);
  }
};
#endif

// The reader for one alternative of AnyReader.
template <typename CoreReader>
FilterBitsReader* NewTypedReader(const CoreReader& reader, std::shared_ptr<ProbeCell> probes) {
#if SSTFILTER_POPCNT_DISPATCH
  if constexpr (kHasPopcntCopy<CoreReader>) {
    if (CpuHasPopcnt()) {
      return new (std::nothrow) PopcntReader<CoreReader>(reader, std::move(probes));
    }
  }
#endif
  return new (std::nothrow) TypedReader<CoreReader>(reader, std::move(probes));
}

}  // namespace

// Allocated with nothrow: RocksDB treats a null reader as "may match" for every key.
FilterBitsReader* NewSstFilterBitsReader(const Slice& contents) {
  const FilterReader r =
      FilterReader::Open(reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
  std::shared_ptr<ProbeCell> probes;
  try {
    probes = ProbeRegistry::Global().Find(FilterBlockId(contents.data(), contents.size()));
  } catch (const std::exception&) {  // out of memory: this reader does not count
  }
  return Visit(r.reader(), [&](const auto& reader) -> FilterBitsReader* {
    return NewTypedReader(reader, probes);
  });
}

FilterBitsReader* NewBuiltinFilterBitsReader(const Slice& contents) {
  // One built-in policy for the process: any of them reads every built-in format, and it holds no
  // state a reader depends on. Never destroyed, so that no reader outlives it at exit.
  static const ROCKSDB_NAMESPACE::FilterPolicy* const builtin = []() {
    try {
      return ROCKSDB_NAMESPACE::NewBloomFilterPolicy(10);
    } catch (const std::exception&) {
      return static_cast<const ROCKSDB_NAMESPACE::FilterPolicy*>(nullptr);
    }
  }();
  if (builtin == nullptr) return nullptr;
  try {
    return builtin->GetFilterBitsReader(contents);
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace sstfilter
