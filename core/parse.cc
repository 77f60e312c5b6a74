// SPDX-License-Identifier: Apache-2.0
#include "core/parse.h"

#include "core/kinds.h"

namespace sstfilter {
namespace {

// Largest unit count accepted for any kind: keeps every byte count far below 2^64.
constexpr uint64_t kMaxUnits = uint64_t{1} << 48;

}  // namespace

bool BodyBytes(const Trailer& t, uint64_t* body_bytes) {
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

namespace {

// The trailer decoded, understood, and implying exactly body_bytes.
bool Understood(const uint8_t* data, size_t size, uint64_t body_bytes, Trailer* out,
                size_t* trailer_bytes) {
  Trailer t;
  uint64_t expected_bytes = 0;
  if (!DecodeTrailer(data, size, &t, trailer_bytes) || !BodyBytes(t, &expected_bytes) ||
      expected_bytes != body_bytes) {
    return false;
  }
  *out = t;
  return true;
}

}  // namespace

bool ParseTrailerFor(const uint8_t* trailer, uint64_t body_bytes, Trailer* out) {
  size_t trailer_bytes = 0;
  Trailer t;
  if (trailer == nullptr || !Understood(trailer, kTrailerBytes, body_bytes, &t, &trailer_bytes) ||
      trailer_bytes != kTrailerBytes) {
    return false;
  }
  *out = t;
  return true;
}

bool ParseFilter(const uint8_t* data, size_t size, ParsedFilter* out) {
  Trailer t;
  size_t trailer_bytes = 0;
  // The body is what precedes the trailer, whose size its last bytes tell.
  const size_t body_bytes = size - TrailerBytesOf(TrailerLayoutOf(data, size));
  if (!Understood(data, size, body_bytes, &t, &trailer_bytes)) return false;
  out->trailer = t;
  out->body = data;
  out->body_bytes = body_bytes;
  return true;
}

const char* FilterKindName(FilterKind kind) {
  const char* name = "unknown";
  VisitKind(kind, [&](auto k) { name = decltype(k)::kName; });
  return name;
}

}  // namespace sstfilter
