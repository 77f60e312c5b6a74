// SPDX-License-Identifier: Apache-2.0
#include "core/filter_reader.h"

#include "core/parse.h"

namespace sstfilter {

FilterReader FilterReader::Open(const uint8_t* data, size_t size) {
  FilterReader r;
  ParsedFilter parsed;
  if (!ParseFilter(data, size, &parsed)) return r;
  const Trailer& t = parsed.trailer;
  r.trailer_ = t;
  if (t.num_keys == 0) {
    r.reader_ = MatchNoneReader();
    return r;
  }
  // ParseFilter understood the kind, so exactly one kind matches it.
  VisitKind(t.kind, [&](auto kind) { r.reader_ = decltype(kind)::OpenReader(t, parsed.body); });
  return r;
}

}  // namespace sstfilter
