// SPDX-License-Identifier: Apache-2.0
#include "core/range/elias_fano.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "core/format.h"

namespace sstfilter {
namespace {

// The position of the r-th (from 0) set bit of w; w has more than r set bits.
inline uint32_t SelectInWord(uint64_t w, uint64_t r) {
  for (; r > 0; --r) w &= w - 1;
  return static_cast<uint32_t>(__builtin_ctzll(w));
}

// The position just past the `zeros`-th zero bit (zeros >= 1) from bit `pos` of `high`; at least
// high_bits if there are fewer before high_bits (no word past the one holding bit high_bits - 1
// is read).
// Counting zeros word by word is most of a query's time: on x86-64 this is compiled twice, with
// and without the POPCNT instruction, and the loader picks (GCC's function multiversioning; a
// build without -mpopcnt otherwise calls libgcc's __popcountdi2, which made a query 5 times as
// slow).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SSTFILTER_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SSTFILTER_THREAD_SANITIZER 1
#endif
// The clones need glibc's ifunc; ThreadSanitizer crashes in an ifunc resolver (it runs before
// the sanitizer's runtime starts), so its builds count with the plain builtin.
#if defined(__x86_64__) && !defined(__POPCNT__) && defined(__GLIBC__) && \
    !defined(SSTFILTER_THREAD_SANITIZER)
__attribute__((target_clones("popcnt", "default")))
#endif
uint64_t
SkipZeros(const uint8_t* high, uint64_t high_bits, uint64_t pos, uint64_t zeros) {
  while (pos < high_bits) {
    const uint64_t w = ~LoadLE64(high + 8 * (pos >> 6)) >> (pos & 63);  // zeros read as ones
    const uint64_t c = static_cast<uint64_t>(__builtin_popcountll(w));
    if (c >= zeros) return pos + SelectInWord(w, zeros - 1) + 1;
    zeros -= c;
    pos = (pos | 63) + 1;
  }
  return high_bits;
}

}  // namespace

bool EliasFanoShape::Valid() const {
  if (low_bits > kMaxEliasFanoLowBits || universe == 0) return false;
  // Buckets() <= universe and num_values < 2^32 keep HighBits() from overflowing.
  if (num_values >= kMaxEliasFanoHighBits) return false;
  return HighBits() < kMaxEliasFanoHighBits;
}

EliasFanoWriter::EliasFanoWriter(const EliasFanoShape& shape)
    : shape_(shape),
      low_mask_(shape.low_bits == 0 ? 0 : ~uint64_t{0} >> (64 - shape.low_bits)),
      low_(shape.LowWords() + 1, 0),  // + 1: a value may straddle two words, or have no bits
      high_(shape.HighWords(), 0),
      starts_(shape.Samples(), 0) {
  assert(shape.Valid());
}

void EliasFanoWriter::AppendTo(std::string* out) {
  assert(i_ == shape_.num_values);
  for (; next_sample_ < starts_.size(); ++next_sample_) {
    starts_[next_sample_] = static_cast<uint32_t>((next_sample_ << kBucketsPerSampleShift) + i_);
  }
  const size_t begin = out->size();
  out->resize(begin + shape_.BodyBytes());
  uint8_t* p = reinterpret_cast<uint8_t*>(&(*out)[begin]);
  for (uint64_t w = 0; w < shape_.LowWords(); ++w, p += 8) StoreLE64(p, low_[w]);
  for (uint64_t w : high_) {
    StoreLE64(p, w);
    p += 8;
  }
  for (uint32_t s : starts_) {
    StoreLE32(p, s);
    p += 4;
  }
}

void AppendEliasFano(const EliasFanoShape& shape, const uint64_t* values, std::string* out) {
  EliasFanoWriter writer(shape);
  for (uint64_t i = 0; i < shape.num_values; ++i) {
    assert(values[i] < shape.universe && (i == 0 || values[i - 1] <= values[i]));
    writer.Add(values[i]);
  }
  writer.AppendTo(out);
}

EliasFanoView::EliasFanoView(const EliasFanoShape& shape, const uint8_t* body)
    : shape_(shape),
      high_bits_(shape.HighBits()),
      low_(body),
      high_(body + 8 * shape.LowWords()),
      starts_(body + 8 * (shape.LowWords() + shape.HighWords())) {}

inline bool EliasFanoView::HighBit(uint64_t pos) const {
  return (LoadLE64(high_ + 8 * (pos >> 6)) >> (pos & 63)) & 1;
}

// One 64-bit load from the byte holding the value's first low bit: 7 + 56 bits fit. The load
// stays inside the body: the high words (at least one) follow the low ones.
inline uint64_t EliasFanoView::Low(uint64_t i) const {
  const uint32_t l = shape_.low_bits;
  if (l == 0) return 0;
  const uint64_t bit = i * l;
  return (LoadLE64(low_ + (bit >> 3)) >> (bit & 7)) & (~uint64_t{0} >> (64 - l));
}

bool EliasFanoView::AnyInRange(uint64_t lo, uint64_t hi) const {
  const uint64_t n = shape_.num_values;
  if (n == 0 || lo > hi || lo >= shape_.universe) return false;
  const uint32_t l = shape_.low_bits;
  const uint64_t bucket = lo >> l;
  // The start of `bucket`: from its sample, past the zeros of the buckets in between.
  const uint64_t sample = bucket >> kBucketsPerSampleShift;
  uint64_t pos = LoadLE32(starts_ + 4 * sample);
  const uint64_t zeros = bucket - (sample << kBucketsPerSampleShift);
  if (zeros > 0) pos = SkipZeros(high_, high_bits_, pos, zeros);
  // A bucket starts before its own ending zero: a start at or past the end is not what a build
  // writes.
  if (pos >= high_bits_) return true;
  // Value i is the one at `pos`: the ones before pos are pos minus the zeros before it (bucket).
  if (pos < bucket) return true;
  uint64_t i = pos - bucket;
  for (; pos < high_bits_ && HighBit(pos); ++pos, ++i) {
    if (i >= n) return true;
    const uint64_t v = (bucket << l) | Low(i);
    if (v >= lo) return v <= hi;
  }
  // Every value of `bucket` is below lo; the next value (value i, if any) is in a later bucket,
  // at the next one bit, and is above lo.
  if (i >= n) return false;
  for (uint64_t word = pos >> 6; word < shape_.HighWords(); ++word) {
    uint64_t w = LoadLE64(high_ + 8 * word);
    if (word == pos >> 6) w &= ~uint64_t{0} << (pos & 63);
    if (w == 0) continue;
    const uint64_t next = word * 64 + static_cast<uint64_t>(__builtin_ctzll(w));
    if (next >= high_bits_ || next < i) return true;
    const uint64_t next_bucket = next - i;
    if (next_bucket > (hi >> l)) return false;
    return ((next_bucket << l) | Low(i)) <= hi;
  }
  return true;  // value i has no bit: not what a build writes
}

}  // namespace sstfilter
