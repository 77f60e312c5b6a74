// SPDX-License-Identifier: Apache-2.0
#include "core/format.h"

#include <xxhash.h>

namespace sstfilter {
namespace {

// The fields both layouts share: trailer bytes 0..22.
constexpr size_t kFieldBytes = 23;

uint32_t Layout2Check(const uint8_t* trailer) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(trailer, kFieldBytes, kTrailerCheckSeed2));
}

// Layout 1's check covers its flags byte too.
uint32_t Layout1Check(const uint8_t* trailer) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(trailer, kFieldBytes + 1, kTrailerCheckSeed));
}

}  // namespace

TrailerLayout TrailerLayoutOf(const uint8_t* data, size_t size) {
  if (data == nullptr || size < kTrailerBytes) return TrailerLayout::kNone;
  if (std::memcmp(data + size - kMarkerBytes, kRocksDbUnknownMarker, kMarkerBytes) == 0) {
    return TrailerLayout::kLayout2;
  }
  return LoadLE32(data + size - 4) == kTrailerMagic ? TrailerLayout::kLayout1
                                                    : TrailerLayout::kNone;
}

void EncodeTrailer(const Trailer& t, uint8_t* dst) {
  StoreLE64(dst + 0, t.num_keys);
  StoreLE64(dst + 8, t.num_units);
  StoreLE32(dst + 16, t.seed);
  dst[20] = t.param;
  dst[21] = static_cast<uint8_t>(t.kind);
  dst[22] = t.version;
  StoreLE32(dst + kFieldBytes, Layout2Check(dst));
  std::memcpy(dst + kTrailerBytes - kMarkerBytes, kRocksDbUnknownMarker, kMarkerBytes);
}

void AppendTrailer(const Trailer& t, std::string* out) {
  uint8_t buf[kTrailerBytes];
  EncodeTrailer(t, buf);
  out->append(reinterpret_cast<const char*>(buf), sizeof(buf));
}

bool DecodeTrailer(const uint8_t* data, size_t size, Trailer* out) {
  const TrailerLayout layout = TrailerLayoutOf(data, size);
  if (layout == TrailerLayout::kNone) return false;  // also every span shorter than a trailer
  const uint8_t* tr = data + (size - kTrailerBytes);
  const bool checked = layout == TrailerLayout::kLayout2
                           ? LoadLE32(tr + kFieldBytes) == Layout2Check(tr)
                           : LoadLE32(tr + 24) == Layout1Check(tr) && tr[23] == 0;
  if (!checked) return false;
  out->num_keys = LoadLE64(tr + 0);
  out->num_units = LoadLE64(tr + 8);
  out->seed = LoadLE32(tr + 16);
  out->param = tr[20];
  out->kind = static_cast<FilterKind>(tr[21]);
  out->version = tr[22];
  return true;
}

}  // namespace sstfilter
