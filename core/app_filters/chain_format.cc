// SPDX-License-Identifier: Apache-2.0
// The scalable filters' serialised bytes (core/app_filters/chain_format.h).
#include "core/app_filters/chain_format.h"

#include <cstdint>
#include <cstring>

#include "core/format.h"

namespace sstfilter {
namespace chain_format {
namespace {

constexpr char kMagic[4] = {'S', 'F', 'C', 'H'};
constexpr uint8_t kVersion = 1;

uint64_t BitsOf(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

double DoubleOf(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

void EncodeHeader(const Header& header, uint8_t* out) {
  std::memcpy(out, kMagic, sizeof kMagic);
  out[4] = kVersion;
  out[5] = header.filters;
  out[6] = header.scaling ? 1 : 0;
  out[7] = header.layout;
  StoreLE64(out + 8, BitsOf(header.fp_rate));
  StoreLE64(out + 16, BitsOf(header.growth));
  StoreLE64(out + 24, BitsOf(header.tightening));
  StoreLE64(out + 32, header.initial_capacity);
  StoreLE64(out + 40, header.newest_keys);
  StoreLE64(out + 48, header.size);
  StoreLE64(out + 56, header.num_filters);  // n, then the 4 zero bytes
}

Result<Header> ParseHeader(const void* data, size_t size, uint8_t filters) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (p == nullptr || size < kHeaderBytes || std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    return Err("not a scalable filter's bytes (" + std::to_string(size) + " bytes, no header)");
  }
  if (p[4] != kVersion) {
    return Err("a scalable filter of format version " + std::to_string(p[4]) + ", not 1");
  }
  if (p[5] != filters) {
    return Err(std::string("a scalable ") + (p[5] == kBloomChain ? "Bloom" : "cuckoo") +
               " filter's bytes, not a scalable " + (filters == kBloomChain ? "Bloom" : "cuckoo") +
               " filter's");
  }
  const uint8_t max_layout = filters == kBloomChain ? 1 : 0;
  if ((p[6] & ~1) != 0 || p[7] > max_layout || LoadLE32(p + 60) != 0) {
    return Err("a scalable filter's header with reserved bits set");
  }
  Header h;
  h.filters = filters;
  h.scaling = (p[6] & 1) != 0;
  h.layout = p[7];
  h.fp_rate = DoubleOf(LoadLE64(p + 8));
  h.growth = DoubleOf(LoadLE64(p + 16));
  h.tightening = DoubleOf(LoadLE64(p + 24));
  h.initial_capacity = LoadLE64(p + 32);
  h.newest_keys = LoadLE64(p + 40);
  h.size = LoadLE64(p + 48);
  h.num_filters = LoadLE32(p + 56);
  if (h.num_filters == 0 || h.num_filters > kMaxChainFilters) {
    return Err("a scalable filter of " + std::to_string(h.num_filters) + " filters (1 to " +
               std::to_string(kMaxChainFilters) + ")");
  }
  return h;
}

Result<Header> ParseFilters(const void* header, uint8_t filters, size_t num_filters) {
  Result<Header> parsed = ParseHeader(header, kHeaderBytes, filters);
  if (parsed.ok() && parsed.value().num_filters != num_filters) {
    return Err("a scalable filter's header that counts " +
               std::to_string(parsed.value().num_filters) + " filters, with " +
               std::to_string(num_filters));
  }
  return parsed;
}

}  // namespace chain_format
}  // namespace sstfilter
