// SPDX-License-Identifier: Apache-2.0
// ChainLoader: a scalable filter's bytes (core/app_filters/chain_format.h) taken in pieces of any
// size as they arrive (one span for Deserialize; an RDB file's strings or LOADCHUNK commands in
// the Redis module), each filter's body written straight into the buffer that becomes its memory
// (Filter::AllocateBody, Filter::FromBody). Reading so needs the filters' memory and no copy of
// their bytes. It is the one reader of the format.
//
// Each check is made once the bytes it needs have arrived: the header (and the schedule of
// capacities and rates it gives) as soon as its 64 bytes have, a filter's length (against the
// capacity the schedule gives that filter) as soon as its 8, a trailer (against the length of its
// body) as soon as its 32; FromBody's own checks when the loader finishes, and that each filter is
// the schedule's in the scalable filter's FromFilters, which its callers make next. A piece that
// fails a check leaves the loader as it was before the piece. A body's memory is allocated when its
// length arrives, so the length check is what keeps a few bytes from asking for any amount of
// memory: a body is allocated only as large as a filter of its capacity can be.
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
#include "core/app_filters/chain_format.h"
#include "core/format.h"
#include "core/parse.h"
#include "core/sizing.h"
#include "sstfilter/filter_memory.h"
#include "sstfilter/result.h"

namespace sstfilter {
namespace chain_format {

// Filter: BloomFilter or CuckooFilter, the chain's filters.
template <typename Filter>
class ChainLoader {
 public:
  static constexpr uint64_t kUnknownTotal = UINT64_MAX;

  // A chain of `filters_kind` (kBloomChain, kCuckooChain). `total_bytes`, when known, is all the
  // bytes that will come: a filter's length that runs past it is refused before anything is
  // allocated for it.
  explicit ChainLoader(uint8_t filters_kind, uint64_t total_bytes = kUnknownTotal)
      : kind_(filters_kind), total_(total_bytes) {}

  // Takes the next `size` bytes. An error, with a message, taking none of them, for bytes that no
  // chain of this kind holds: a header ParseHeader refuses or whose options no chain has, a filter
  // shorter than its trailer, longer than the bytes to come or than a filter of its capacity can
  // be (BodyFitsCapacity), a trailer that is not a filter of its body's length, a body whose
  // memory cannot be had, or bytes past the last filter. An exception (std::bad_alloc) also
  // leaves the loader as it was.
  Result<bool> Take(const void* data, size_t size) {
    const size_t header_taken = header_taken_;
    const uint32_t num_filters = num_filters_;
    const ScalingSchedule schedule = schedule_;
    const size_t num_parts = parts_.size();
    const uint64_t last_taken = parts_.empty() ? 0 : parts_.back().taken;
    const uint64_t received = received_;
    const auto roll_back = [&] {
      header_taken_ = header_taken;
      num_filters_ = num_filters;
      schedule_ = schedule;
      parts_.erase(parts_.begin() + static_cast<std::ptrdiff_t>(num_parts), parts_.end());
      if (num_parts > 0) {
        Part& last = parts_.back();
        last.taken = last_taken;
        if (last_taken < kLengthBytes) last.body.Clear();
      }
      received_ = received;
    };
    // The caller may answer an error and be sent the piece again.
    try {
      Result<bool> taken = TakeBytes(static_cast<const uint8_t*>(data), size);
      if (!taken.ok()) roll_back();
      return taken;
    } catch (...) {
      roll_back();
      throw;
    }
  }

  // Whether the bytes taken are a whole chain.
  bool complete() const {
    return header_taken_ == kHeaderBytes && parts_.size() == num_filters_ && parts_.back().done();
  }
  uint64_t received() const { return received_; }

  // The bytes taken, [offset, offset + length) of them, to `out`; how many there were.
  size_t CopyReceived(uint64_t offset, size_t length, void* out) const {
    RangeCopier copier(offset, length, out);
    copier.NextBytes(header_, header_taken_);
    for (const Part& part : parts_) {
      if (copier.done()) break;
      copier.NextBytes(part.length_bytes, static_cast<size_t>(std::min(part.taken, kLengthBytes)));
      if (part.taken <= kLengthBytes) continue;
      copier.NextBytes(part.body.data(),
                       static_cast<size_t>(std::min(part.taken - kLengthBytes, part.body_bytes)));
      if (part.taken > kLengthBytes + part.body_bytes) {
        copier.NextBytes(part.trailer,
                         static_cast<size_t>(part.taken - kLengthBytes - part.body_bytes));
      }
    }
    return copier.copied();
  }

  // The memory of the bodies taken so far.
  uint64_t memory_bytes() const {
    uint64_t bytes = 0;
    for (const Part& part : parts_) bytes += part.body.size();
    return bytes;
  }

  // Once complete, the header's kHeaderBytes to `header` and the filters, each made by FromBody
  // from its body's buffer; an error, with a message, for bytes that are not a whole chain or a
  // filter FromBody refuses. Either way the bodies are spent.
  Result<bool> Finish(uint8_t* header, std::vector<Filter>* filters) {
    if (header_taken_ < kHeaderBytes) {
      return Err("not a scalable filter's bytes (" + std::to_string(received_) +
                 " bytes, no header)");
    }
    if (!complete()) return Err(kCutShort);
    std::memcpy(header, header_, kHeaderBytes);
    filters->clear();
    filters->reserve(parts_.size());
    for (Part& part : parts_) {
      Result<Filter> f = Filter::FromBody(std::move(part.body), part.body_bytes, part.trailer);
      if (!f.ok()) return Err("filter " + std::to_string(filters->size()) + ": " + f.error());
      filters->push_back(std::move(f).value());
    }
    parts_.clear();
    return true;
  }

 private:
  static constexpr uint64_t kLengthBytes = 8;
  static constexpr const char* kCutShort = "a scalable filter's bytes cut short";

  // Whether `body_bytes` is at most what a filter of `capacity` keys that a schedule makes can
  // have: twice kMaxBitsPerKey bits per key, and 4 KiB. A Bloom filter has at most kMaxBitsPerKey
  // bits per key (core/sizing.h; BitsFor in bloom_filter.cc refuses a rate that needs more), and
  // rounds up to a 64-byte block or an 8-byte word; a cuckoo filter has at most 32 bits a slot,
  // slots for its keys at a load of at most 0.95, an even count of 2 buckets or more, and its
  // table's padding (core/cuckoo/math.cc, cuckoo_table.h): about 34 bits per key and 56 bytes.
  static bool BodyFitsCapacity(uint64_t body_bytes, uint64_t capacity) {
    constexpr double kMostBytesPerKey = 2 * kMaxBitsPerKey / 8;
    constexpr double kRoundingBytes = 4096;
    return static_cast<double>(body_bytes) <=
           static_cast<double>(capacity) * kMostBytesPerKey + kRoundingBytes;
  }

  // One filter as it arrives: its length, body and trailer, `taken` bytes of them so far.
  struct Part {
    uint8_t length_bytes[kLengthBytes] = {};
    uint64_t body_bytes = 0;  // once the length is in
    FilterBuffer body;        // allocated once the length is in
    uint8_t trailer[kTrailerBytes] = {};
    uint64_t taken = 0;
    bool done() const { return taken == kLengthBytes + body_bytes + kTrailerBytes; }
  };

  Result<bool> TakeBytes(const uint8_t* p, size_t size) {
    while (size > 0) {
      size_t take = 0;
      if (header_taken_ < kHeaderBytes) {
        take = std::min(size, kHeaderBytes - header_taken_);
        std::memcpy(header_ + header_taken_, p, take);
        header_taken_ += take;
        if (header_taken_ == kHeaderBytes) {
          const Result<Header> h = ParseHeader(header_, kHeaderBytes, kind_);
          if (!h.ok()) return Err(h.error());
          const Header& header = h.value();
          Result<ScalingSchedule> schedule =
              ScalingSchedule::Create(header.initial_capacity, header.fp_rate, OptionsOf(header));
          if (!schedule.ok()) return Err("a scalable filter's header: " + schedule.error());
          schedule_ = schedule.value();
          num_filters_ = header.num_filters;
        }
      } else {
        if (!parts_.empty() && parts_.back().done() && parts_.size() == num_filters_) {
          return Err("a scalable filter's bytes with " + std::to_string(size) + " bytes left over");
        }
        if (parts_.empty() || parts_.back().done()) parts_.emplace_back();
        const Result<size_t> took = TakeForPart(p, size);
        if (!took.ok()) return Err(took.error());
        take = took.value();
      }
      p += take;
      size -= take;
      received_ += take;
    }
    return true;
  }

  // Bytes of the newest filter: its length, then its body, then its trailer.
  Result<size_t> TakeForPart(const uint8_t* p, size_t size) {
    Part& part = parts_.back();
    const std::string filter = "filter " + std::to_string(parts_.size() - 1) + ": ";
    if (part.taken < kLengthBytes) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(size, kLengthBytes - part.taken));
      std::memcpy(part.length_bytes + part.taken, p, take);
      part.taken += take;
      if (part.taken < kLengthBytes) return take;
      const uint64_t length = LoadLE64(part.length_bytes);
      if (length < kTrailerBytes) return Err("a scalable filter's filter shorter than its trailer");
      if (total_ != kUnknownTotal && length > total_ - (received_ + take)) return Err(kCutShort);
      uint64_t capacity = 0;
      double rate = 0;
      if (!schedule_.Peek(&capacity, &rate)) {
        return Err(filter + "beyond the capacities its chain's schedule makes");
      }
      if (!BodyFitsCapacity(length - kTrailerBytes, capacity)) {
        return Err(filter + "a length of " + std::to_string(length) +
                   " bytes, more than a filter of " + std::to_string(capacity) + " keys has");
      }
      schedule_.Advance();
      part.body_bytes = length - kTrailerBytes;
      if (!Filter::AllocateBody(part.body_bytes, &part.body)) {
        return Err(filter + "cannot allocate " + std::to_string(part.body_bytes) + " bytes");
      }
      return take;
    }
    if (part.taken < kLengthBytes + part.body_bytes) {
      const uint64_t at = part.taken - kLengthBytes;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(size, part.body_bytes - at));
      std::memcpy(part.body.data() + at, p, take);
      part.taken += take;
      return take;
    }
    const uint64_t at = part.taken - kLengthBytes - part.body_bytes;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(size, kTrailerBytes - at));
    std::memcpy(part.trailer + at, p, take);
    part.taken += take;
    Trailer t;
    if (part.done() && !ParseTrailerFor(part.trailer, part.body_bytes, &t)) {
      return Err(filter + "a trailer that is not sstfilter's for a body of " +
                 std::to_string(part.body_bytes) + " bytes");
    }
    return take;
  }

  uint8_t kind_;
  uint64_t total_;
  uint8_t header_[kHeaderBytes] = {};
  size_t header_taken_ = 0;
  uint32_t num_filters_ = 0;  // once the header is in
  ScalingSchedule schedule_;  // of the filter after the parts whose length is in
  std::vector<Part> parts_;
  uint64_t received_ = 0;
};

// The chain of `size` bytes at `data`: the filters, each read through a ChainLoader.
template <typename Filter>
Result<bool> Read(const void* data, size_t size, uint8_t filters_kind,
                  std::vector<Filter>* filters) {
  ChainLoader<Filter> loader(filters_kind, size);
  const Result<bool> taken = loader.Take(data, data == nullptr ? 0 : size);
  if (!taken.ok()) return taken;
  uint8_t header[kHeaderBytes];
  return loader.Finish(header, filters);
}

// Scalable::Deserialize: the scalable filter (ScalableBloomFilter, ScalableCuckooFilter) of the
// `size` bytes at `data`, its filters read by Read and joined by Scalable::FromFilters.
template <typename Scalable>
Result<Scalable> ReadScalable(const void* data, size_t size, uint8_t filters_kind) {
  using Filter =
      typename std::decay_t<decltype(std::declval<const Scalable&>().filters())>::value_type;
  std::vector<Filter> filters;
  const Result<bool> read = Read(data, size, filters_kind, &filters);
  if (!read.ok()) return Err(read.error());
  return Scalable::FromFilters(data, std::move(filters));
}

}  // namespace chain_format
}  // namespace sstfilter
