// SPDX-License-Identifier: Apache-2.0
// Elias-Fano: a non-decreasing sequence of n values below a universe U, in
// n * (low_bits + 1) + U / 2^low_bits bits plus 32 bits per kBucketsPerSample buckets, with
// "is there a value in [lo, hi]?" answered by one successor query (P. Elias, 1974; R. Fano, 1971).
// The range filter (range_api.h) stores its hashed keys this way; this file knows nothing of
// keys or hashing, only of the sequence.
//
// The layout of a body (docs/format.md section 15 has it byte by byte; words little-endian; the
// body sits at any address, so every load is a memcpy):
//
//   low      LowWords() 64-bit words: value i's low `low_bits` bits at bit i * low_bits
//   high     HighWords() 64-bit words, HighBits() bits used, the rest zero: value i sets bit
//            (v_i >> low_bits) + i. Bucket j (the values whose high part is j) is a run of ones
//            ended by a zero, so bucket j starts after the j-th zero, at bit j + (values in
//            buckets before j).
//   starts   Samples() 32-bit words: where bucket k * kBucketsPerSample starts in high, so a
//            query skips at most kBucketsPerSample - 1 buckets by counting zeros.
//
// A query never reads outside the body, whatever its bits: bits that contradict the shape (a
// missing zero, a start past the end) answer "may contain".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sstfilter {

// Sampled bucket starts: 32 bits per 2048 buckets. A filter has about 2 buckets per value, so the
// samples cost 1/32 bit per value, and a query counts the zeros of at most 2047 buckets (about
// 3,000 bits: 48 words, 24 on average).
inline constexpr uint64_t kBucketsPerSampleShift = 11;
inline constexpr uint64_t kBucketsPerSample = uint64_t{1} << kBucketsPerSampleShift;
// The widest low part: 56 bits keeps every low-part load one 64-bit word (7 + 56 < 64).
inline constexpr uint32_t kMaxEliasFanoLowBits = 56;
// high's bit positions are 32-bit samples.
inline constexpr uint64_t kMaxEliasFanoHighBits = uint64_t{1} << 32;

struct EliasFanoShape {
  uint64_t num_values = 0;
  uint64_t universe = 1;  // every value < universe, >= 1
  uint32_t low_bits = 0;

  uint64_t Buckets() const { return ((universe - 1) >> low_bits) + 1; }
  uint64_t HighBits() const { return num_values + Buckets(); }
  uint64_t LowWords() const { return (num_values * low_bits + 63) / 64; }
  uint64_t HighWords() const { return (HighBits() + 63) / 64; }
  uint64_t Samples() const { return (Buckets() + kBucketsPerSample - 1) / kBucketsPerSample; }
  uint64_t BodyBytes() const { return 8 * (LowWords() + HighWords()) + 4 * Samples(); }
  // Whether a body of this shape can be written and read: low_bits <= kMaxEliasFanoLowBits,
  // universe >= 1, HighBits() < kMaxEliasFanoHighBits (and so no product above overflows).
  bool Valid() const;
};

// Writes a body value by value: Add each of shape.num_values values (non-decreasing, each below
// shape.universe; shape.Valid()), then AppendTo. Holds the body's words meanwhile. May throw
// std::bad_alloc.
class EliasFanoWriter {
 public:
  explicit EliasFanoWriter(const EliasFanoShape& shape);
  // Inline: the range filter's sort calls it once per value, in its innermost loop.
  void Add(uint64_t value) {
    const uint64_t bucket = value >> shape_.low_bits;
    // Samples whose buckets come before or at this value's: they start before it.
    while (next_sample_ < starts_.size() && (next_sample_ << kBucketsPerSampleShift) <= bucket) {
      starts_[next_sample_] = static_cast<uint32_t>((next_sample_ << kBucketsPerSampleShift) + i_);
      ++next_sample_;
    }
    const uint64_t bit = i_ * shape_.low_bits;
    const uint64_t v = value & low_mask_;
    low_[bit >> 6] |= v << (bit & 63);
    if ((bit & 63) + shape_.low_bits > 64) low_[(bit >> 6) + 1] |= v >> (64 - (bit & 63));
    high_[(bucket + i_) >> 6] |= uint64_t{1} << ((bucket + i_) & 63);
    ++i_;
  }
  // Appends the body; every value was added.
  void AppendTo(std::string* out);

 private:
  EliasFanoShape shape_;
  uint64_t low_mask_;
  uint64_t i_ = 0;            // values added
  uint64_t next_sample_ = 0;  // the sample whose bucket start comes next
  std::vector<uint64_t> low_, high_;
  std::vector<uint32_t> starts_;
};

// Appends the body of `values` (shape.num_values of them, non-decreasing, each below
// shape.universe; shape.Valid()) to *out.
void AppendEliasFano(const EliasFanoShape& shape, const uint64_t* values, std::string* out);

// A view over a body of a valid shape; the bytes must outlive it. Cheap to copy.
class EliasFanoView {
 public:
  EliasFanoView() = default;
  // `body` holds shape.BodyBytes() bytes; shape.Valid().
  EliasFanoView(const EliasFanoShape& shape, const uint8_t* body);

  // Whether a value lies in [lo, hi] (or the bits contradict the shape).
  bool AnyInRange(uint64_t lo, uint64_t hi) const;

 private:
  bool HighBit(uint64_t pos) const;
  uint64_t Low(uint64_t i) const;

  EliasFanoShape shape_;
  uint64_t high_bits_ = 0;
  const uint8_t* low_ = nullptr;
  const uint8_t* high_ = nullptr;
  const uint8_t* starts_ = nullptr;
};

}  // namespace sstfilter
