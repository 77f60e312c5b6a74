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

// Layout 1's magic's byte -3 ("SSTF"'s second 'S'): no compact trailer's kind_version byte, its
// byte -3, has it, so no compact trailer ends in the magic.
constexpr uint8_t kMagicByteMinus3 = static_cast<uint8_t>(kTrailerMagic >> 8);

// Layout 3's fields: its bytes 0..7 (its zero byte included).
constexpr size_t kCompactFieldBytes = 8;
constexpr size_t kCompactZeroAt = kCompactTrailerBytes - kMarkerBytes;  // byte -5

uint16_t Layout3Check(const uint8_t* trailer) {
  return static_cast<uint16_t>(
      XXH3_64bits_withSeed(trailer, kCompactFieldBytes, kTrailerCheckSeed3));
}

}  // namespace

TrailerLayout TrailerLayoutOf(const uint8_t* data, size_t size) {
  if (data == nullptr) return TrailerLayout::kNone;
  const bool ends_in_magic = size >= 4 && LoadLE32(data + size - 4) == kTrailerMagic;
  if (size >= kTrailerBytes) {
    if (std::memcmp(data + size - kMarkerBytes, kRocksDbUnknownMarker, kMarkerBytes) == 0) {
      return TrailerLayout::kLayout2;
    }
    if (ends_in_magic) return TrailerLayout::kLayout1;
  }
  return size >= kCompactTrailerBytes && data[size - kMarkerBytes] == 0 && !ends_in_magic
             ? TrailerLayout::kCompact
             : TrailerLayout::kNone;
}

size_t TrailerBytesOf(TrailerLayout layout) {
  switch (layout) {
    case TrailerLayout::kNone:
      return 0;
    case TrailerLayout::kLayout1:
    case TrailerLayout::kLayout2:
      return kTrailerBytes;
    case TrailerLayout::kCompact:
      return kCompactTrailerBytes;
  }
  return 0;
}

bool FitsCompactTrailer(const Trailer& t) {
  const auto kind = static_cast<uint8_t>(t.kind);
  return t.num_keys >= 1 && t.num_keys <= 0xFFFF && t.num_units >= 1 && t.num_units <= 0xFFFF &&
         t.seed <= 0xFF && kind >= 1 && kind <= 15 && t.version >= 1 && t.version <= 15 &&
         (kind | t.version << 4) != kMagicByteMinus3;
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

bool EncodeCompactTrailer(const Trailer& t, uint8_t* dst) {
  if (!FitsCompactTrailer(t)) return false;
  StoreLE16(dst + 0, static_cast<uint16_t>(t.num_units));
  StoreLE16(dst + 2, static_cast<uint16_t>(t.num_keys));
  dst[4] = static_cast<uint8_t>(t.seed);
  dst[kCompactZeroAt] = 0;
  dst[6] = t.param;
  dst[7] = static_cast<uint8_t>(static_cast<uint8_t>(t.kind) | t.version << 4);
  StoreLE16(dst + kCompactFieldBytes, Layout3Check(dst));
  return true;
}

void AppendTrailer(const Trailer& t, std::string* out) {
  uint8_t buf[kTrailerBytes];
  EncodeTrailer(t, buf);
  out->append(reinterpret_cast<const char*>(buf), sizeof(buf));
}

namespace {

bool DecodeCompactTrailer(const uint8_t* tr, Trailer* out) {
  if (LoadLE16(tr + kCompactFieldBytes) != Layout3Check(tr)) return false;
  Trailer t;
  t.num_units = LoadLE16(tr + 0);
  t.num_keys = LoadLE16(tr + 2);
  t.seed = tr[4];
  t.param = tr[6];
  t.kind = static_cast<FilterKind>(tr[7] & 0x0F);
  t.version = static_cast<uint8_t>(tr[7] >> 4);
  if (!FitsCompactTrailer(t)) return false;  // zeros that no writer writes
  *out = t;
  return true;
}

}  // namespace

bool DecodeTrailer(const uint8_t* data, size_t size, Trailer* out, size_t* trailer_bytes) {
  const TrailerLayout layout = TrailerLayoutOf(data, size);
  if (layout == TrailerLayout::kNone) return false;  // also every span shorter than its trailer
  if (layout == TrailerLayout::kCompact) {
    if (!DecodeCompactTrailer(data + (size - kCompactTrailerBytes), out)) return false;
    if (trailer_bytes != nullptr) *trailer_bytes = kCompactTrailerBytes;
    return true;
  }
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
  if (trailer_bytes != nullptr) *trailer_bytes = kTrailerBytes;
  return true;
}

}  // namespace sstfilter
