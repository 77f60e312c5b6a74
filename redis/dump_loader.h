// SPDX-License-Identifier: Apache-2.0
// DumpLoader: a dump (redis/dump_format.h) taken in pieces as they arrive (an RDB value's strings,
// LOADCHUNK commands, the pieces COPY makes): its 24-byte header, then the scalable filter's
// bytes through a chain_format::ChainLoader, each filter's body written straight into its memory.
// A piece that fails a check leaves the loader as it was before it. No Redis API here: the dump
// fuzzer drives it as the module does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/app_filters/byte_range.h"
#include "core/app_filters/chain_loader.h"
#include "redis/dump_format.h"
#include "sstfilter/result.h"

namespace sstfilter::redis {

// Filter: ScalableBloomFilter (kType kBloom) or ScalableCuckooFilter (kCuckoo).
template <typename Filter, DumpType kType>
class DumpLoader {
 public:
  using Part = typename std::decay_t<decltype(std::declval<const Filter&>().filters())>::value_type;
  static constexpr uint8_t kChainKind =
      kType == DumpType::kBloom ? chain_format::kBloomChain : chain_format::kCuckooChain;
  // Both headers: what a first piece must hold, so that it is known to begin a dump.
  static constexpr size_t kHeadersBytes = kDumpHeaderBytes + chain_format::kHeaderBytes;

  // `total_bytes`, when known (a dump in memory), is all the bytes that will come: a filter's
  // length that runs past them is refused before anything is allocated for it.
  explicit DumpLoader(uint64_t total_bytes = chain_format::ChainLoader<Part>::kUnknownTotal)
      : chain_(kChainKind, total_bytes < kDumpHeaderBytes ? 0 : total_bytes - kDumpHeaderBytes) {}

  // Takes the next `size` bytes; an error, with a message, taking none of them, for bytes no dump
  // of this type holds (ChainLoader::Take's refusals, and a dump header ParseDumpHeader refuses).
  Result<bool> Take(const void* data, size_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    const size_t header_taken = header_taken_;
    const size_t take = std::min(size, kDumpHeaderBytes - header_taken_);
    if (take > 0) {
      std::memcpy(header_bytes_ + header_taken_, p, take);
      header_taken_ += take;
      if (header_taken_ == kDumpHeaderBytes) {
        const Result<DumpHeader> h = ParseDumpHeader(header_bytes_, kDumpHeaderBytes, kType);
        if (!h.ok()) {
          header_taken_ = header_taken;
          return Err(h.error());
        }
        header_ = h.value();
      }
    }
    Result<bool> taken = chain_.Take(p + take, size - take);
    if (!taken.ok()) header_taken_ = header_taken;
    return taken;
  }

  bool complete() const { return header_taken_ == kDumpHeaderBytes && chain_.complete(); }
  uint64_t received() const { return header_taken_ + chain_.received(); }
  // The dump's header, once its bytes are in.
  const DumpHeader& header() const { return header_; }
  uint64_t memory_bytes() const { return sizeof(*this) + chain_.memory_bytes(); }

  // The bytes taken, [offset, offset + length) of them, to `out`; how many there were.
  size_t CopyReceived(uint64_t offset, size_t length, void* out) const {
    RangeCopier copier(offset, length, out);
    copier.NextBytes(header_bytes_, header_taken_);
    copier.Next(chain_.received(), [this](uint64_t from, size_t n, uint8_t* dst) {
      chain_.CopyReceived(from, n, dst);
    });
    return copier.copied();
  }

  // Once complete, the filter, checked as Filter::Deserialize checks it; an error, with a
  // message, otherwise. The loader is spent either way.
  Result<Filter> Finish() {
    if (header_taken_ < kDumpHeaderBytes) {
      return Err("not a dump (" + std::to_string(received()) + " bytes, no header)");
    }
    uint8_t chain_header[chain_format::kHeaderBytes];
    std::vector<Part> parts;
    const Result<bool> finished = chain_.Finish(chain_header, &parts);
    if (!finished.ok()) return Err(finished.error());
    return Filter::FromFilters(chain_header, std::move(parts));
  }

 private:
  uint8_t header_bytes_[kDumpHeaderBytes] = {};
  size_t header_taken_ = 0;
  DumpHeader header_;
  chain_format::ChainLoader<Part> chain_;
};

}  // namespace sstfilter::redis
