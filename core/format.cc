// SPDX-License-Identifier: Apache-2.0
#include "core/format.h"

#include <xxhash.h>

namespace sstfilter {
namespace {

constexpr size_t kCheckedBytes = 24;  // trailer bytes covered by the check word

uint32_t TrailerCheck(const uint8_t* trailer) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(trailer, kCheckedBytes, kTrailerCheckSeed));
}

}  // namespace

void EncodeTrailer(const Trailer& t, uint8_t* dst) {
  StoreLE64(dst + 0, t.num_keys);
  StoreLE64(dst + 8, t.num_units);
  StoreLE32(dst + 16, t.seed);
  dst[20] = t.param;
  dst[21] = static_cast<uint8_t>(t.kind);
  dst[22] = t.version;
  dst[23] = t.flags;
  StoreLE32(dst + 24, TrailerCheck(dst));
  StoreLE32(dst + 28, kTrailerMagic);
}

void AppendTrailer(const Trailer& t, std::string* out) {
  uint8_t buf[kTrailerBytes];
  EncodeTrailer(t, buf);
  out->append(reinterpret_cast<const char*>(buf), sizeof(buf));
}

bool DecodeTrailer(const uint8_t* data, size_t size, Trailer* out) {
  if (data == nullptr || size < kTrailerBytes) return false;
  const uint8_t* tr = data + (size - kTrailerBytes);
  if (LoadLE32(tr + 28) != kTrailerMagic) return false;
  if (LoadLE32(tr + 24) != TrailerCheck(tr)) return false;
  out->num_keys = LoadLE64(tr + 0);
  out->num_units = LoadLE64(tr + 8);
  out->seed = LoadLE32(tr + 16);
  out->param = tr[20];
  out->kind = static_cast<FilterKind>(tr[21]);
  out->version = tr[22];
  out->flags = tr[23];
  return true;
}

}  // namespace sstfilter
