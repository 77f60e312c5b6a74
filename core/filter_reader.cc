#include "core/filter_reader.h"

namespace sstfilter {

FilterReader FilterReader::Open(const uint8_t* data, size_t size) {
  FilterReader r;
  ParsedFilter parsed;
  if (!ParseFilter(data, size, &parsed)) return r;
  const Trailer& t = parsed.trailer;
  r.trailer_ = t;
  if (t.num_keys == 0) {
    r.mode_ = Mode::kMatchNone;
    return r;
  }
  switch (t.kind) {
    case FilterKind::kBlockedBloom:
      r.mode_ = Mode::kBlockedBloom;
      r.blocked_ = BlockedBloomReader(parsed.body, t.num_units, t.param);
      break;
    case FilterKind::kStandardBloom:
      r.mode_ = Mode::kStandardBloom;
      r.standard_ = StandardBloomReader(parsed.body, t.num_units, t.param);
      break;
    case FilterKind::kCuckoo:
      r.mode_ = Mode::kCuckoo;
      r.cuckoo_ = CuckooReader(parsed.body, t.num_units, t.param, t.seed);
      break;
  }
  return r;
}

void FilterReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
  switch (mode_) {
    case Mode::kBlockedBloom:
      return blocked_.MayContainBatch(hashes, count, may_match);
    case Mode::kStandardBloom:
      return standard_.MayContainBatch(hashes, count, may_match);
    case Mode::kCuckoo:
      return cuckoo_.MayContainBatch(hashes, count, may_match);
    case Mode::kMatchNone:
    case Mode::kMatchAll:
      for (size_t i = 0; i < count; ++i) may_match[i] = (mode_ == Mode::kMatchAll);
      return;
  }
}

}  // namespace sstfilter
