// SPDX-License-Identifier: Apache-2.0
// The range filter's reader (core/range/range_api.h): no copy, no allocation.
#include <algorithm>
#include <cstring>

#include "core/range/range_api.h"
#include "core/range/range_codec.h"

namespace sstfilter {
namespace {

using namespace range_detail;  // NOLINT: the format's names, this file's vocabulary

// Where a bound key lies against the strings that start with the prefix.
enum class BoundPlace { kBelow, kInside, kAbove };
BoundPlace PlaceOf(std::string_view bound, std::string_view prefix) {
  const size_t common = CommonPrefix(bound, prefix, prefix.size());
  if (common == prefix.size()) return BoundPlace::kInside;
  if (common == bound.size()) return BoundPlace::kBelow;  // a proper prefix of the prefix
  return static_cast<uint8_t>(bound[common]) < static_cast<uint8_t>(prefix[common])
             ? BoundPlace::kBelow
             : BoundPlace::kAbove;
}

}  // namespace

// ---- Reader -----------------------------------------------------------------------------------

RangeFilterReader RangeFilterReader::Open(const uint8_t* data, size_t size) {
  RangeFilterReader r;  // understood_ = false: "may contain"
  RangeHeader header;
  if (!ReadHeader(data, size, &header)) return r;
  const uint32_t window_bytes = header.window_bytes;
  const uint32_t low_bits = header.low_bits;
  const uint32_t block_bits = header.block_bits;
  const uint32_t prefix_bytes = header.prefix_bytes;
  const uint64_t n = header.keys;
  const uint64_t hash_range = header.hash_range;
  const Window min_window = header.min_window;
  const Window max_window = header.max_window;
  size_t pos = kHeaderBytes;
  if (size - pos < prefix_bytes) return r;
  const std::string_view prefix(reinterpret_cast<const char*>(data + pos), prefix_bytes);
  pos += prefix_bytes;
  if (size - pos < kAlphabetBytes * window_bytes) return r;
  const uint8_t* alphabets = data + pos;
  pos += kAlphabetBytes * window_bytes;
  // Each position's radix; the weight of digit i (the product of the radixes after it) and the
  // number of prefixes of i digits (the product before it).
  for (uint32_t i = 0; i < window_bytes; ++i) {
    uint32_t count = 0;
    for (int w = 0; w < 4; ++w) {
      count += PopCount(LoadLE64(alphabets + 32 * i + 8 * w));
    }
    if (count == 0) return r;
    r.radix_[i] = count;
  }
  Window weight = 1;
  for (uint32_t i = window_bytes; i-- > 0;) {
    r.weight_[i] = weight;
    if (i > 0) weight *= r.radix_[i];  // at most 256^15: no overflow
  }
  Window prefixes = 1;
  for (uint32_t i = 0; i < window_bytes; ++i) {
    r.prefixes_[i] = prefixes;
    if (i + 1 < window_bytes) prefixes *= r.radix_[i];
  }
  // The largest position, all digits at their largest: radix 256 in 16 bytes fills 128 bits.
  const Window largest =
      window_bytes == 0 ? 0 : (r.radix_[0] - 1) * r.weight_[0] + (r.weight_[0] - 1);
  std::string_view deletion_bounds[2];
  const bool has_deletions = header.has_deletions;
  if (has_deletions) {
    for (std::string_view& bound : deletion_bounds) {
      if (!ReadString(data, size, &pos, &bound)) return r;
    }
  }
  if (LoadLE32(data + kCheckWordOffset) != CheckWord(data, pos)) return r;
  EliasFanoShape sequence;
  if (n > 0) {
    if (n > kMaxRangeFilterKeys || hash_range == 0 || hash_range > (uint64_t{1} << 62) ||
        min_window > max_window || max_window > largest) {
      return r;
    }
    sequence = EliasFanoShape{n, hash_range + (uint64_t{1} << block_bits), low_bits};
    if (!sequence.Valid() || size - pos != sequence.BodyBytes()) return r;
  } else if (size != pos) {
    return r;
  }
  r.understood_ = true;
  r.num_keys_ = n;
  r.window_bytes_ = window_bytes;
  r.block_bits_ = block_bits;
  r.hash_range_ = hash_range;
  r.min_window_ = min_window;
  r.max_window_ = max_window;
  r.prefix_ = prefix;
  r.alphabets_ = alphabets;
  r.largest_position_ = largest;
  r.has_deletions_ = has_deletions;
  r.deletions_start_ = deletion_bounds[0];
  r.deletions_end_ = deletion_bounds[1];
  if (n > 0) r.sequence_ = EliasFanoView(sequence, data + pos);
  return r;
}

bool RangeFilterReader::MayContain(const std::string_view* lower,
                                   const std::string_view* upper) const {
  if (!understood_) return true;
  if (lower != nullptr && upper != nullptr && !(*lower < *upper)) return false;  // empty range
  if (has_deletions_ && (lower == nullptr || *lower < deletions_end_) &&
      (upper == nullptr || deletions_start_ < *upper)) {
    return true;
  }
  if (num_keys_ == 0) return false;
  // The positions of the keys in [lower, upper) lie in [lo, hi].
  Window lo = 0;
  Window hi = largest_position_;
  if (lower != nullptr) {
    switch (PlaceOf(*lower, prefix_)) {
      case BoundPlace::kBelow:
        break;
      case BoundPlace::kAbove:
        return false;
      case BoundPlace::kInside:
        if (!LowestPositionFrom(lower->substr(prefix_.size()), &lo)) return false;
        break;
    }
  }
  if (upper != nullptr) {
    switch (PlaceOf(*upper, prefix_)) {
      case BoundPlace::kBelow:
        return false;
      case BoundPlace::kAbove:
        break;
      case BoundPlace::kInside:
        if (!HighestPositionBelow(upper->substr(prefix_.size()), &hi)) return false;
        break;
    }
  }
  if (lo > hi) return false;
  return MayContainWindows(lo, hi);
}

// Byte i of a bound's window: its byte past the prefix, or the zero that pads it.
inline uint32_t BoundByte(std::string_view suffix, uint32_t i) {
  return i < suffix.size() ? static_cast<uint8_t>(suffix[i]) : 0;
}

uint32_t RangeFilterReader::RankBelow(uint32_t i, uint32_t c, bool* member) const {
  if (radix_[i] == 256) {  // every value: the rank is the byte
    *member = true;
    return c;
  }
  const uint8_t* set = alphabets_ + kAlphabetBytes * i;
  uint32_t below = 0;
  for (uint32_t w = 0; w < c >> 6; ++w) {
    below += PopCount(LoadLE64(set + 8 * w));
  }
  const uint64_t word = LoadLE64(set + 8 * (c >> 6));
  below += PopCount(word & ((uint64_t{1} << (c & 63)) - 1));
  *member = (word >> (c & 63)) & 1;
  return below;
}

RangeFilterReader::BoundDigits RangeFilterReader::DigitsOf(std::string_view suffix) const {
  BoundDigits d;
  for (; d.stop < window_bytes_; ++d.stop) {
    bool member = false;
    d.below = RankBelow(d.stop, BoundByte(suffix, d.stop), &member);
    if (!member) break;
    d.position = d.position * radix_[d.stop] + d.below;
  }
  return d;
}

// The least position a key at or above the bound can have: the bound's digits while its bytes
// are in the alphabets; at the first that is not, the next value up in that alphabet and the
// least digits after it, or (no value up) the next prefix. False if no position is that high.
bool RangeFilterReader::LowestPositionFrom(std::string_view suffix, Window* out) const {
  const BoundDigits d = DigitsOf(suffix);
  const uint32_t i = d.stop;
  if (i == window_bytes_) {
    *out = d.position;
    return true;
  }
  if (d.below < radix_[i]) {
    *out = (d.position * radix_[i] + d.below) * weight_[i];
    return true;
  }
  if (d.position + 1 == prefixes_[i]) return false;  // every prefix is below the bound
  *out = (d.position + 1) * radix_[i] * weight_[i];
  return true;
}

// The greatest position a key below the (exclusive) bound can have: the bound's digits while its
// bytes are in the alphabets; at the first that is not, the next value down and the greatest
// digits after it, or (no value down) the greatest position of a lower prefix. If every byte is
// in the alphabets, the bound's own position, less one when no key below the bound shares it:
// when the window holds all of the bound past the prefix and it does not end in a zero byte (the
// keys below end below it). False if no position is that low.
bool RangeFilterReader::HighestPositionBelow(std::string_view suffix, Window* out) const {
  const BoundDigits d = DigitsOf(suffix);
  const uint32_t i = d.stop;
  if (i < window_bytes_) {
    if (d.below > 0) {
      *out = (d.position * radix_[i] + d.below - 1) * weight_[i] + (weight_[i] - 1);
      return true;
    }
    if (d.position == 0) return false;  // every key is at or above the bound
    *out = d.position * radix_[i] * weight_[i] - 1;
    return true;
  }
  const bool exact = suffix.size() <= window_bytes_ && (suffix.empty() || suffix.back() != '\0');
  if (!exact) {
    *out = d.position;
    return true;
  }
  if (d.position == 0) return false;
  *out = d.position - 1;
  return true;
}

bool RangeFilterReader::MayContainWindows(Window lo, Window hi) const {
  if (!understood_) return true;
  if (num_keys_ == 0) return false;
  lo = std::max(lo, min_window_);
  hi = std::min(hi, max_window_);
  if (lo > hi) return false;
  const Window first_block = lo >> block_bits_;
  const Window last_block = hi >> block_bits_;
  if (last_block - first_block >= kMaxBlocksPerQuery) return true;
  const uint64_t offset_mask = (uint64_t{1} << block_bits_) - 1;
  const uint64_t blocks = static_cast<uint64_t>(last_block - first_block) + 1;
  for (uint64_t k = 0; k < blocks; ++k) {  // counted: last_block may be the largest Window
    const Window block = first_block + k;
    const uint64_t from = block == first_block ? static_cast<uint64_t>(lo) & offset_mask : 0;
    const uint64_t to = block == last_block ? static_cast<uint64_t>(hi) & offset_mask : offset_mask;
    const uint64_t base = BlockHash(block, hash_range_);
    if (sequence_.AnyInRange(base + from, base + to)) return true;
  }
  return false;
}

}  // namespace sstfilter
