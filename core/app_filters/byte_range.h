// SPDX-License-Identifier: Apache-2.0
// RangeCopier: one part of a serialised filter's bytes, made without the whole. A filter offers
// its bytes as a stream of pieces, in order; the copier writes the part of the stream that falls
// in [offset, offset + length) and has each piece made only where it overlaps that range. So a
// filter of gigabytes goes to an RDB file or a client in bounded pieces (SerializeRange).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sstfilter {

class RangeCopier {
 public:
  // The range [offset, offset + length) of the stream, to `out` (length bytes).
  RangeCopier(uint64_t offset, size_t length, void* out)
      : begin_(offset),
        end_(length > UINT64_MAX - offset ? UINT64_MAX : offset + length),
        out_(static_cast<uint8_t*>(out)) {}

  // The stream's next `size` bytes: fill(from, n, dst) writes bytes [from, from + n) of them to
  // dst, called once, for the part inside the range, or not at all.
  template <typename Fill>
  void Next(uint64_t size, Fill&& fill) {
    const uint64_t piece_end = size > UINT64_MAX - at_ ? UINT64_MAX : at_ + size;
    const uint64_t lo = std::max(at_, begin_);
    const uint64_t hi = std::min(piece_end, end_);
    if (lo < hi) fill(lo - at_, static_cast<size_t>(hi - lo), out_ + (lo - begin_));
    at_ = piece_end;
  }

  // The stream's next `size` bytes, held at `bytes`.
  void NextBytes(const void* bytes, size_t size) {
    Next(size, [bytes](uint64_t from, size_t n, uint8_t* dst) {
      std::memcpy(dst, static_cast<const uint8_t*>(bytes) + from, n);
    });
  }

  // Whether the stream has passed the range's end: later pieces need not be offered.
  bool done() const { return at_ >= end_; }
  // The bytes of the range the stream has covered so far (all of them once it is done, or fewer
  // where the stream ends inside the range).
  size_t copied() const {
    return at_ <= begin_ ? 0 : static_cast<size_t>(std::min(at_, end_) - begin_);
  }

 private:
  uint64_t begin_, end_;
  uint8_t* out_;
  uint64_t at_ = 0;  // the stream's bytes offered so far
};

}  // namespace sstfilter
