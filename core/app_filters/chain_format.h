// SPDX-License-Identifier: Apache-2.0
// The serialised bytes of a scalable filter (ScalableBloomFilter, ScalableCuckooFilter): a header
// of 64 bytes, then each filter of the chain, oldest first, as its length and its own serialised
// bytes (sstfilter's byte format, docs/format.md). Integers and doubles little-endian:
//
//   offset  bytes  field
//   0       4      magic "SFCH"
//   4       1      version: 1
//   5       1      the chain's filters: 1 blocked Bloom (BloomFilter), 2 cuckoo (CuckooFilter)
//   6       1      flags: bit 0 set if the chain scales (adds a filter when the newest is full)
//   7       1      the Bloom filters' layout: 0 blocked, 1 standard (BloomLayout; 0 for cuckoo)
//   8       8      fp_rate, the bound asked of Create (IEEE 754 double)
//   16      8      growth (double)
//   24      8      tightening (double)
//   32      8      initial capacity, in keys
//   40      8      keys added to the newest filter (Bloom chains; 0 for cuckoo)
//   48      8      keys added in all (Bloom chains; 0 for cuckoo, which counts its table)
//   56      4      n, the number of filters, at least 1
//   60      4      0
//   64      then n times: 8 bytes L, then the L bytes of one filter
//
// At most kMaxChainFilters filters (FilterChain stops growing there). A reader takes nothing on
// trust: the filters are what the schedule of (initial capacity,
// fp_rate, growth, tightening) makes, in order (FilterChain::Restore), and the bytes end exactly
// after the last one. Anything else is an error, and nothing is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/app_filters/byte_range.h"
#include "core/format.h"
#include "sstfilter/filter_memory.h"
#include "sstfilter/result.h"
#include "sstfilter/scaling.h"

namespace sstfilter {
namespace chain_format {

inline constexpr uint8_t kBloomChain = 1;
inline constexpr uint8_t kCuckooChain = 2;
inline constexpr size_t kHeaderBytes = 64;

struct Header {
  uint8_t filters = 0;  // kBloomChain or kCuckooChain
  bool scaling = true;
  uint8_t layout = 0;  // Bloom chains: BloomLayout
  double fp_rate = 0, growth = 0, tightening = 0;
  uint64_t initial_capacity = 0;
  uint64_t newest_keys = 0;
  uint64_t size = 0;
  uint32_t num_filters = 0;
};

// Writes `header` as its kHeaderBytes bytes at `out`.
void EncodeHeader(const Header& header, uint8_t* out);

// The header at `data` (its first kHeaderBytes of `size`), checked: magic, version, `filters`,
// reserved bits, a count of 1 to kMaxChainFilters filters. What a chain's first piece can tell.
Result<Header> ParseHeader(const void* data, size_t size, uint8_t filters);

// The header at `header` (kHeaderBytes) of a chain whose `num_filters` filters have been read:
// ParseHeader's checks, and a count in the header that is the filters'.
Result<Header> ParseFilters(const void* header, uint8_t filters, size_t num_filters);

// The total length of the chain whose first `size` bytes are at `data`, as far as they tell: a
// header's worth while the header is incomplete, then the header and the filters whose lengths
// the bytes hold, plus 8 for the next length while one is still to come; 0 once the bytes can be
// no chain (a count or a length Read refuses). A chain arriving in pieces is complete when this
// equals the bytes received (and Read then reads it), and can never be once it is smaller. Its
// cost is at most one step per filter, kMaxChainFilters.
uint64_t BytesNeeded(const void* data, size_t size);

// The header of a chain of `filters` with these options (its counts and n left to the writer).
inline Header HeaderOf(uint8_t filters, const ScalingOptions& options, double fp_rate,
                       uint64_t initial_capacity) {
  Header h;
  h.filters = filters;
  h.scaling = options.scaling;
  h.fp_rate = fp_rate;
  h.growth = options.growth;
  h.tightening = options.tightening;
  h.initial_capacity = initial_capacity;
  return h;
}
inline ScalingOptions OptionsOf(const Header& h) {
  return ScalingOptions{h.growth, h.tightening, h.scaling};
}

// The length of the chain's bytes.
template <typename Filter>
uint64_t BytesOf(const std::vector<Filter>& filters) {
  uint64_t bytes = kHeaderBytes;
  for (const Filter& f : filters) bytes += 8 + f.SerializedBytes();
  return bytes;
}

// The bytes [offset, offset + length) of the chain's bytes (`header`, n set here, then each
// filter's length and its SerializeRange), to `out`; returns how many there were. Only the
// filters the range touches are read.
template <typename Filter>
size_t CopyRange(Header header, const std::vector<Filter>& filters, uint64_t offset, size_t length,
                 void* out) {
  header.num_filters = static_cast<uint32_t>(filters.size());
  uint8_t header_bytes[kHeaderBytes];
  EncodeHeader(header, header_bytes);
  RangeCopier copier(offset, length, out);
  copier.NextBytes(header_bytes, sizeof header_bytes);
  for (const Filter& f : filters) {
    if (copier.done()) break;
    const uint64_t filter_bytes = f.SerializedBytes();
    uint8_t length_bytes[8];
    StoreLE64(length_bytes, filter_bytes);
    copier.NextBytes(length_bytes, sizeof length_bytes);
    copier.Next(filter_bytes,
                [&f](uint64_t from, size_t n, uint8_t* dst) { f.SerializeRange(from, n, dst); });
  }
  return copier.copied();
}

// The chain's bytes pulled from `source` as they come, each filter's body read straight into its
// own memory (Filter::AllocateBody, Filter::FromBody): source(out, n) writes the next n bytes to
// `out`, false when they cannot be had, and source.CanHave(n) is false if n more bytes never can
// be (nothing is allocated for them). The header's kHeaderBytes go to `header`, the filters to
// `filters`; an error, with a message, for a header ParseHeader refuses, a filter shorter than a
// trailer, bytes cut short, or a filter its FromBody refuses. Reads no further than the last
// filter: bytes after it are the caller's to refuse.
template <typename Filter, typename Source>
Result<bool> ReadFrom(Source&& source, uint8_t filters_kind, uint8_t* header,
                      std::vector<Filter>* filters) {
  const std::string cut_short = "a scalable filter's bytes cut short";
  if (!source(header, kHeaderBytes)) return Err(cut_short);
  const Result<Header> parsed = ParseHeader(header, kHeaderBytes, filters_kind);
  if (!parsed.ok()) return Err(parsed.error());
  filters->clear();
  for (uint32_t i = 0; i < parsed.value().num_filters; ++i) {
    uint8_t length_bytes[8];
    if (!source(length_bytes, sizeof length_bytes)) return Err(cut_short);
    const uint64_t length = LoadLE64(length_bytes);
    if (length < kTrailerBytes) return Err("a scalable filter's filter shorter than its trailer");
    if (!source.CanHave(length)) return Err(cut_short);
    const uint64_t body_bytes = length - kTrailerBytes;
    FilterBuffer body;
    if (!Filter::AllocateBody(body_bytes, &body)) {
      return Err("filter " + std::to_string(i) + ": cannot allocate " + std::to_string(body_bytes) +
                 " bytes");
    }
    uint8_t trailer[kTrailerBytes];
    if (!source(body.data(), body_bytes) || !source(trailer, kTrailerBytes)) return Err(cut_short);
    Result<Filter> f = Filter::FromBody(std::move(body), body_bytes, trailer);
    if (!f.ok()) return Err("filter " + std::to_string(i) + ": " + f.error());
    filters->push_back(std::move(f).value());
  }
  return true;
}

// The chain's bytes, whole.
template <typename Filter>
std::string Write(const Header& header, const std::vector<Filter>& filters) {
  std::string out(BytesOf(filters), '\0');
  CopyRange(header, filters, 0, out.size(), out.data());
  return out;
}

// ReadFrom's source over the `size` bytes at `data`.
class MemorySource {
 public:
  MemorySource(const void* data, size_t size)
      : at_(static_cast<const uint8_t*>(data)), left_(data == nullptr ? 0 : size) {}
  bool CanHave(uint64_t n) const { return n <= left_; }
  bool operator()(void* out, size_t n) {
    if (n > left_) return false;
    if (n > 0) std::memcpy(out, at_, n);
    at_ += n;
    left_ -= n;
    return true;
  }
  size_t left() const { return left_; }

 private:
  const uint8_t* at_;
  size_t left_;
};

// The chain of `size` bytes at `data` (ReadFrom over them): its header's bytes are the first
// kHeaderBytes; an error also for bytes left over after the last filter.
template <typename Filter>
Result<bool> Read(const void* data, size_t size, uint8_t filters_kind,
                  std::vector<Filter>* filters) {
  MemorySource source(data, size);
  uint8_t header[kHeaderBytes];
  const Result<bool> read = ReadFrom(source, filters_kind, header, filters);
  if (!read.ok()) return read;
  if (source.left() != 0) {
    return Err("a scalable filter's bytes with " + std::to_string(source.left()) +
               " bytes left over");
  }
  return true;
}

}  // namespace chain_format
}  // namespace sstfilter
