// FilterReader: answers queries for the bytes of any sstfilter filter, whatever its kind.
//
// It applies the reader rules of core/format.h: bytes that are not fully understood give a
// reader that answers "may match" for every key (a wasted read, never a lost key), and a valid
// filter of zero keys answers "no". It never fails and never reads outside the given span, which
// must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bloom.h"
#include "core/cuckoo.h"
#include "core/format.h"

namespace sstfilter {

class FilterReader {
 public:
  enum class Mode { kMatchAll, kMatchNone, kBlockedBloom, kStandardBloom, kCuckoo };

  // A reader that matches everything: the answer for bytes that could not be understood.
  FilterReader() = default;

  static FilterReader Open(const uint8_t* data, size_t size);

  Mode mode() const { return mode_; }
  // Whether the bytes were a valid filter (then trailer() describes it).
  bool valid() const { return mode_ != Mode::kMatchAll; }
  const Trailer& trailer() const { return trailer_; }

  const BlockedBloomReader& blocked_bloom() const { return blocked_; }
  const StandardBloomReader& standard_bloom() const { return standard_; }
  const CuckooReader& cuckoo() const { return cuckoo_; }

  bool MayContain(uint64_t hash) const {
    switch (mode_) {
      case Mode::kBlockedBloom:
        return blocked_.MayContain(hash);
      case Mode::kStandardBloom:
        return standard_.MayContain(hash);
      case Mode::kCuckoo:
        return cuckoo_.MayContain(hash);
      case Mode::kMatchNone:
        return false;
      case Mode::kMatchAll:
        break;
    }
    return true;
  }

  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

 private:
  Mode mode_ = Mode::kMatchAll;
  Trailer trailer_;
  BlockedBloomReader blocked_;
  StandardBloomReader standard_;
  CuckooReader cuckoo_;
};

}  // namespace sstfilter
