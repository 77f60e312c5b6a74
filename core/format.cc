#include "core/format.h"

#include <xxhash.h>

#include "core/kinds.h"

namespace sstfilter {
namespace {

constexpr size_t kCheckedBytes = 24;  // trailer bytes covered by the check word

uint32_t TrailerCheck(const uint8_t* trailer) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(trailer, kCheckedBytes, kTrailerCheckSeed));
}

// Largest unit count accepted for any kind: keeps every byte count far below 2^64.
constexpr uint64_t kMaxUnits = uint64_t{1} << 48;

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

bool BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (t.flags != 0) return false;
  if (t.num_units > kMaxUnits) return false;
  bool valid = false;
  const bool known = VisitKind(t.kind, [&](auto kind) {
    using Kind = decltype(kind);
    if (t.version < 1 || t.version > Kind::kMaxVersion) return;  // a version not known here
    // No units: an empty filter of a known kind, and nothing else can be. Keys without units are
    // inconsistent.
    if (t.num_units == 0) {
      *body_bytes = 0;
      valid = t.num_keys == 0;
    } else {
      valid = Kind::BodyBytes(t, body_bytes);
    }
  });
  return known && valid;
}

bool ParseFilter(const uint8_t* data, size_t size, ParsedFilter* out) {
  if (data == nullptr || size < kTrailerBytes) return false;
  const uint8_t* tr = data + (size - kTrailerBytes);
  if (LoadLE32(tr + 28) != kTrailerMagic) return false;
  if (LoadLE32(tr + 24) != TrailerCheck(tr)) return false;
  Trailer t;
  t.num_keys = LoadLE64(tr + 0);
  t.num_units = LoadLE64(tr + 8);
  t.seed = LoadLE32(tr + 16);
  t.param = tr[20];
  t.kind = static_cast<FilterKind>(tr[21]);
  t.version = tr[22];
  t.flags = tr[23];
  uint64_t body_bytes = 0;
  if (!BodyBytes(t, &body_bytes)) return false;
  if (body_bytes != size - kTrailerBytes) return false;
  out->trailer = t;
  out->body = data;
  out->body_bytes = body_bytes;
  return true;
}

}  // namespace sstfilter
