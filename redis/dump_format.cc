// SPDX-License-Identifier: Apache-2.0
// A key's dump (redis/dump_format.h).
#include "redis/dump_format.h"

#include <cstring>

#include "core/format.h"

namespace sstfilter::redis {
namespace {

constexpr char kMagic[4] = {'S', 'F', 'R', 'D'};
constexpr uint8_t kVersion = 1;

}  // namespace

void EncodeDumpHeader(const DumpHeader& header, uint8_t* bytes) {
  std::memset(bytes, 0, kDumpHeaderBytes);
  std::memcpy(bytes, kMagic, sizeof kMagic);
  bytes[4] = kVersion;
  bytes[5] = static_cast<uint8_t>(header.type);
  bytes[6] = static_cast<uint8_t>(header.bucket_size);
  bytes[7] = static_cast<uint8_t>(header.bucket_size >> 8);
  StoreLE32(bytes + 8, header.max_iterations);
  StoreLE64(bytes + 16, header.deleted);
}

Result<DumpHeader> ParseDumpHeader(const void* data, size_t size, DumpType type) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (p == nullptr || size < kDumpHeaderBytes || std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    return Err("not a dump of sstfilter's Redis module");
  }
  if (p[4] != kVersion) return Err("a dump of version " + std::to_string(p[4]) + ", not 1");
  if (p[5] != static_cast<uint8_t>(type)) {
    return Err(type == DumpType::kBloom ? "a cuckoo filter's dump, not a Bloom filter's"
                                        : "a Bloom filter's dump, not a cuckoo filter's");
  }
  if (LoadLE32(p + 12) != 0) return Err("a dump header with reserved bytes set");
  DumpHeader h;
  h.type = type;
  h.bucket_size = static_cast<uint16_t>(p[6] | (p[7] << 8));
  h.max_iterations = LoadLE32(p + 8);
  h.deleted = LoadLE64(p + 16);
  return h;
}

}  // namespace sstfilter::redis
