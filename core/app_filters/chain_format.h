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
// At most kMaxChainFilters filters (FilterChain stops growing there). The reader
// (core/app_filters/chain_loader.h) takes nothing on trust: the filters are what the schedule of
// (initial capacity, fp_rate, growth, tightening) makes, in order (FilterChain::Restore), and the
// bytes end exactly after the last one. Anything else is an error, and nothing is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/app_filters/byte_range.h"
#include "core/format.h"
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

// The chain's bytes, whole.
template <typename Filter>
std::string Write(const Header& header, const std::vector<Filter>& filters) {
  std::string out(BytesOf(filters), '\0');
  CopyRange(header, filters, 0, out.size(), out.data());
  return out;
}

}  // namespace chain_format
}  // namespace sstfilter
