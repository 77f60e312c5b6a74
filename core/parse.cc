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

// Whether an understood trailer implies exactly body_bytes.
bool Implies(const Trailer& t, uint64_t body_bytes) {
  uint64_t expected_bytes = 0;
  return BodyBytes(t, &expected_bytes) && expected_bytes == body_bytes;
}

}  // namespace

bool ParseTrailerFor(const uint8_t* trailer, uint64_t body_bytes, Trailer* out) {
  Trailer t;
  size_t trailer_bytes = 0;
  if (trailer == nullptr || !DecodeTrailer(trailer, kTrailerBytes, &t, &trailer_bytes) ||
      trailer_bytes != kTrailerBytes || !Implies(t, body_bytes)) {
    return false;
  }
  *out = t;
  return true;
}

bool ParseFilter(const uint8_t* data, size_t size, ParsedFilter* out) {
  Trailer t;
  size_t trailer_bytes = 0;  // the body is what precedes the trailer, whose size its layout tells
  if (!DecodeTrailer(data, size, &t, &trailer_bytes) || !Implies(t, size - trailer_bytes)) {
    return false;
  }
  out->trailer = t;
  out->body = data;
  out->body_bytes = size - trailer_bytes;
  return true;
}

const char* FilterKindName(FilterKind kind) {
  const char* name = "unknown";
  VisitKind(kind, [&](auto k) { name = decltype(k)::kName; });
  return name;
}

}  // namespace sstfilter
