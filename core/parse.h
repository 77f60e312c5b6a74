// SPDX-License-Identifier: Apache-2.0
// Parsing a filter of any kind: the reader rules of core/format.h applied over the list of kinds
// (core/kinds.h). The trailer codec (core/format.h) knows no kind; this is the layer above the
// list that asks each kind whether it understands a trailer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/format.h"

namespace sstfilter {

// The body size in bytes implied by a kind and its parameters, or false if the combination is
// invalid (unknown kind or version, parameters out of range, size overflow). The single source of
// truth for "inconsistent lengths" that readers check: the checks common to all kinds here, then
// the kind's own BodyBytes.
bool BodyBytes(const Trailer& t, uint64_t* body_bytes);

// A filter the reader understood: its trailer and a pointer to its body inside the caller's span.
struct ParsedFilter {
  Trailer trailer;
  const uint8_t* body = nullptr;
  uint64_t body_bytes = 0;
};

// The 32-byte trailer (layout 1 or 2) at `trailer` of a body of `body_bytes` that arrived apart
// from it: false, leaving *out untouched, unless the trailer is understood and implies that length.
// Filters that arrive in parts (core/app_filters) never carry the compact layout.
bool ParseTrailerFor(const uint8_t* trailer, uint64_t body_bytes, Trailer* out);

// Parses [data, data + size). Returns false, leaving *out untouched, for anything not fully
// understood (the reader rules of core/format.h).
bool ParseFilter(const uint8_t* data, size_t size, ParsedFilter* out);

// "blocked_bloom", "standard_bloom", "cuckoo", "fuse", "ribbon" (each kind's kName), or "unknown".
const char* FilterKindName(FilterKind kind);

}  // namespace sstfilter
