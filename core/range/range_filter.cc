// SPDX-License-Identifier: Apache-2.0
#include "core/range/range_filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/format.h"
#include "core/hash.h"

namespace sstfilter {
namespace {

// ---- The byte format (docs/format.md section 15) --------------------------------------------
//
//  offset size
//   0     4   magic "SSTR"
//   4     1   version: 1
//   5     1   flags: bit 0 = the file has range deletions (their cover follows the alphabets);
//             the other bits are 0
//   6     1   window bytes W (0..16)
//   7     1   Elias-Fano low bits (0..56)
//   8     1   block bits b (0..62)
//   9     1   prefix bytes p (0..255)
//  10     2   zero
//  12     4   check word: the low 32 bits of KeyHash(bytes 0..11) ^ Mix64(KeyHash(bytes 16 to the
//             end of the cover)) (XXH3-64 and Mix64, core/hash.h): the header, prefix, alphabets
//             and cover
//  16     8   keys n (distinct positions)
//  24     8   hash range r
//  32    16   smallest position (low 8 bytes, then high 8 bytes)
//  48    16   largest position
//  64     p   the prefix every key starts with
//   then  32 W  the digit alphabets: for each window byte, a 256-bit set (four 64-bit words, bit c
//               of word c / 64 for byte value c) of the values the keys have there; a key's
//               position is its window in mixed radix, digit i the rank of its byte i in set i
//   then, if flags bit 0: 4 bytes length, the cover's start; 4 bytes length, its end
//   then, if n > 0: the Elias-Fano body of the n sorted hashes, universe r + 2^b (elias_fano.h)
// Every integer is little-endian. The bytes end there: a longer or shorter value is not
// understood.
constexpr uint8_t kMagic[4] = {'S', 'S', 'T', 'R'};
constexpr uint8_t kVersion = 1;
constexpr uint8_t kFlagDeletions = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kCheckWordOffset = 12;
// The seed of a block's hash q. Persistent: part of format version 1.
constexpr uint64_t kBlockHashSeed = 0x5253'5446'494c'5452ull;  // "RSTFILTR"

// The Elias-Fano samples' cost in bits per key: 32 bits per kBucketsPerSample buckets, and a
// filter has at most about 2 buckets per key.
constexpr double kSampleBitsPerKey = 2.0 * 32.0 / static_cast<double>(kBucketsPerSample);

inline uint64_t BlockHash(Window block, uint64_t hash_range) {
  const uint64_t high = static_cast<uint64_t>(block >> 64);
  const uint64_t low = static_cast<uint64_t>(block);
  return FastRange64(Mix64(low ^ Mix64(high ^ kBlockHashSeed)), hash_range);
}

inline Window LowBitsOf(uint32_t bits) {
  return bits >= 128 ? ~Window{0} : (Window{1} << bits) - 1;
}

// Up to 16 bytes of s from `offset`, zero-padded, as a big-endian number (the first byte high).
Window LoadWindow16(std::string_view s, size_t offset) {
  uint8_t bytes[kMaxWindowBytes] = {};
  if (offset < s.size()) {
    std::memcpy(bytes, s.data() + offset, std::min<size_t>(kMaxWindowBytes, s.size() - offset));
  }
  uint64_t high, low;
  std::memcpy(&high, bytes, 8);
  std::memcpy(&low, bytes + 8, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  high = __builtin_bswap64(high);
  low = __builtin_bswap64(low);
#endif
  return (static_cast<Window>(high) << 64) | low;
}

void PutWindow(Window w, std::string* out) {
  uint8_t buf[8];
  StoreLE64(buf, static_cast<uint64_t>(w));
  out->append(reinterpret_cast<const char*>(buf), 8);
  StoreLE64(buf, static_cast<uint64_t>(w >> 64));
  out->append(reinterpret_cast<const char*>(buf), 8);
}

Window GetWindow(const uint8_t* p) {
  return (static_cast<Window>(LoadLE64(p + 8)) << 64) | LoadLE64(p);
}

void PutString(std::string_view s, std::string* out) {
  uint8_t buf[4];
  StoreLE32(buf, static_cast<uint32_t>(s.size()));
  out->append(reinterpret_cast<const char*>(buf), 4);
  out->append(s.data(), s.size());
}

// The check word of the header and strings that end at `size`: they are hashed in two spans
// around the word, so that checking allocates nothing.
uint32_t CheckWord(const uint8_t* data, size_t size) {
  return static_cast<uint32_t>(
      KeyHash(data, kCheckWordOffset) ^
      Mix64(KeyHash(data + kCheckWordOffset + 4, size - kCheckWordOffset - 4)));
}

size_t CommonPrefix(std::string_view a, std::string_view b, size_t limit) {
  const size_t n = std::min({a.size(), b.size(), limit});
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Sorts hashes (each below shape.Universe()) by counting them into their Elias-Fano buckets:
// about 2 buckets per key, so each bucket is tiny and an insertion sort finishes it.
void SortIntoBuckets(const EliasFanoShape& shape, std::vector<uint64_t>* hashes) {
  const uint64_t buckets = shape.Buckets();
  std::vector<uint32_t> starts(buckets + 1, 0);
  for (uint64_t h : *hashes) ++starts[(h >> shape.low_bits) + 1];
  for (uint64_t j = 1; j <= buckets; ++j) starts[j] += starts[j - 1];
  std::vector<uint64_t> sorted(hashes->size());
  for (uint64_t h : *hashes) sorted[starts[h >> shape.low_bits]++] = h;
  // starts[j] is now the end of bucket j.
  uint64_t begin = 0;
  for (uint64_t j = 0; j < buckets; ++j) {
    const uint64_t end = starts[j];
    for (uint64_t i = begin + 1; i < end; ++i) {
      const uint64_t v = sorted[i];
      uint64_t k = i;
      for (; k > begin && sorted[k - 1] > v; --k) sorted[k] = sorted[k - 1];
      sorted[k] = v;
    }
    begin = end;
  }
  hashes->swap(sorted);
}

// The window width. Wide enough that neighbouring keys stay apart (but for at most
// n / 2^(bits_per_key - 2) of them, the false-positive rate of a one-key range) and that the
// median pair of neighbours is told apart down to the last byte in which they differ (so that
// a range that starts just past a key, which differs from it in that byte, misses the key's
// window); no wider. Keys differ in their low bytes (ids, timestamps), and a window wider than
// needed spreads a range of keys over more windows than the filter can tell apart: 256 times
// more per byte (constant padding after an integer, a long key among short ones). Keys longer
// than the window share the windows of their first bytes: false positives, never a lost key.
// `sorted` are the distinct 16-byte windows; no key is longer than `longest_suffix` past the
// prefix.
uint32_t WindowBytesFor(const std::vector<Window>& sorted, size_t longest_suffix,
                        double bits_per_key) {
  const uint32_t widest = static_cast<uint32_t>(std::min<size_t>(kMaxWindowBytes, longest_suffix));
  // shared[d]: neighbours whose windows agree in exactly their first d bytes (d < 16);
  // last[d]: neighbours whose last differing byte is byte d - 1 (d >= 1).
  uint64_t shared[kMaxWindowBytes + 1] = {};
  uint64_t last[kMaxWindowBytes + 1] = {};
  for (size_t i = 1; i < sorted.size(); ++i) {
    const Window x = sorted[i - 1] ^ sorted[i];
    const uint64_t high = static_cast<uint64_t>(x >> 64), low = static_cast<uint64_t>(x);
    // Distinct windows: x != 0. The or-ed bits only keep the builtins defined.
    const int leading = high != 0 ? __builtin_clzll(high) : 64 + __builtin_clzll(low | 1);
    const int trailing =
        low != 0 ? __builtin_ctzll(low) : 64 + __builtin_ctzll(high | (uint64_t{1} << 63));
    ++shared[leading / 8];
    ++last[kMaxWindowBytes - trailing / 8];
  }
  const uint64_t pairs = sorted.empty() ? 0 : sorted.size() - 1;
  uint32_t median_last = 0;
  uint64_t seen = last[0];
  while (2 * seen < pairs) seen += last[++median_last];
  const double allowed =
      std::floor(static_cast<double>(sorted.size()) * std::exp2(-(bits_per_key - 2.0)));
  // merged: the neighbours that share their first `width` bytes (at width 0, all of them).
  uint64_t merged = pairs;
  for (uint32_t width = 0; width < widest; ++width) {
    if (static_cast<double>(merged) <= allowed && width >= median_last) return width;
    merged -= shared[width];  // those that differ in byte `width` are apart from width + 1 on
  }
  return widest;
}

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

constexpr size_t kAlphabetBytes = 32;  // a 256-bit set per window byte

// Set bits of a word, inline: the alphabets are counted on every query, and without -mpopcnt
// __builtin_popcountll is a call to libgcc.
inline uint32_t PopCount(uint64_t x) {
#if defined(__POPCNT__) || !defined(__x86_64__)
  return static_cast<uint32_t>(__builtin_popcountll(x));
#else
  x -= (x >> 1) & 0x5555'5555'5555'5555ull;
  x = (x & 0x3333'3333'3333'3333ull) + ((x >> 2) & 0x3333'3333'3333'3333ull);
  x = (x + (x >> 4)) & 0x0f0f'0f0f'0f0f'0f0full;
  return static_cast<uint32_t>((x * 0x0101'0101'0101'0101ull) >> 56);
#endif
}

// The digit alphabets of a builder: which byte values each window position takes.
struct AlphabetBuilder {
  uint64_t bits[kMaxWindowBytes][4] = {};
  void Add(Window w, uint32_t window_bytes) {
    for (uint32_t i = 0; i < window_bytes; ++i) {
      const uint32_t c = static_cast<uint8_t>(w >> (8 * (window_bytes - 1 - i)));
      bits[i][c >> 6] |= uint64_t{1} << (c & 63);
    }
  }
};

}  // namespace

Result<double> CheckRangeBitsPerKey(double bits_per_key) {
  if (!(bits_per_key >= kMinRangeBitsPerKey && bits_per_key <= kMaxRangeBitsPerKey)) {
    return Err("range filter bits_per_key must be between " +
               std::to_string(static_cast<int>(kMinRangeBitsPerKey)) + " and " +
               std::to_string(static_cast<int>(kMaxRangeBitsPerKey)) + ", got " +
               std::to_string(bits_per_key));
  }
  return bits_per_key;
}

RangeFilterShape RangeShapeFor(uint64_t num_keys, double bits_per_key) {
  // n keys in a universe U cost n (l + 1) + U / 2^l bits in Elias-Fano: for a budget of B bits per
  // key, U = n 2^l (B - l - 1), largest at l = B - 3 (rounded either way; equal for whole B).
  const double body_bits = bits_per_key - kSampleBitsPerKey;
  const int first = std::max(0, static_cast<int>(std::floor(body_bits - 3.0)));
  RangeFilterShape shape;
  double best_per_key = 0;
  for (int l = first; l <= first + 1 && l <= static_cast<int>(kMaxEliasFanoLowBits); ++l) {
    const double per_key = std::ldexp(body_bits - l - 1.0, l);
    if (per_key > best_per_key) {
      best_per_key = per_key;
      shape.low_bits = static_cast<uint32_t>(l);
    }
  }
  const double universe =
      std::min(std::ldexp(1.0, 62), std::max(2.0, std::floor(best_per_key * num_keys)));
  const uint64_t u = static_cast<uint64_t>(universe);
  // Blocks of 1/1024 of the universe at most (a power of two): r loses at most 1/1024.
  uint32_t block_bits = 0;
  while (block_bits < 62 && (uint64_t{1} << (block_bits + 1)) <= u / 1024) ++block_bits;
  shape.block_bits = block_bits;
  shape.hash_range = u - (uint64_t{1} << block_bits);
  return shape;
}

double RangeFpRate(const RangeFilterShape& shape, uint64_t num_keys, double range_windows) {
  const double p = range_windows / static_cast<double>(shape.hash_range);
  if (p >= 1.0) return 1.0;
  return -std::expm1(static_cast<double>(num_keys) * std::log1p(-p));
}

// ---- Builder ----------------------------------------------------------------------------------

RangeFilterBuilder::RangeFilterBuilder(double bits_per_key) : bits_per_key_(bits_per_key) {}

void RangeFilterBuilder::Reset() {
  keys_added_ = 0;
  reference_.clear();
  prefix_bytes_ = 0;
  longest_key_ = 0;
  std::vector<Window>().swap(windows_);
  sorted_ = true;
  has_deletions_ = false;
  deletions_start_.clear();
  deletions_end_.clear();
}

// Every window so far is at offset prefix_bytes_ of a key that starts with reference_'s first
// prefix_bytes_ bytes; at the shorter offset, its window is reference_'s bytes in between, then
// its own first bytes.
void RangeFilterBuilder::ShortenPrefix(uint32_t new_prefix) {
  const uint32_t cut = prefix_bytes_ - new_prefix;
  if (cut >= kMaxWindowBytes) {
    const Window same = LoadWindow16(reference_, new_prefix);
    for (Window& w : windows_) w = same;
  } else {
    Window head = 0;
    for (uint32_t i = 0; i < cut; ++i)
      head = (head << 8) | static_cast<uint8_t>(reference_[new_prefix + i]);
    head <<= 8 * (kMaxWindowBytes - cut);
    for (Window& w : windows_) w = head | (w >> (8 * cut));
  }
  prefix_bytes_ = new_prefix;
}

void RangeFilterBuilder::AddKey(std::string_view key) {
  if (keys_added_ == 0 && windows_.empty()) {
    reference_.assign(key.data(), std::min<size_t>(key.size(), kMaxPrefixBytes + kMaxWindowBytes));
    prefix_bytes_ = static_cast<uint32_t>(std::min<size_t>(key.size(), kMaxPrefixBytes));
  }
  ++keys_added_;
  const size_t common = CommonPrefix(key, reference_, prefix_bytes_);
  if (common < prefix_bytes_) ShortenPrefix(static_cast<uint32_t>(common));
  longest_key_ = std::max(longest_key_, key.size());
  const Window w = LoadWindow16(key, prefix_bytes_);
  if (!windows_.empty()) {
    if (w == windows_.back()) return;  // a key's versions, one after another
    if (w < windows_.back()) sorted_ = false;
  }
  windows_.push_back(w);
}

void RangeFilterBuilder::AddRangeDeletion(std::string_view start, std::string_view end) {
  if (!has_deletions_ || start < deletions_start_) deletions_start_.assign(start);
  if (!has_deletions_ || end > deletions_end_) deletions_end_.assign(end);
  has_deletions_ = true;
}

Result<std::string> RangeFilterBuilder::Finish() {
  if (!sorted_) std::sort(windows_.begin(), windows_.end());
  windows_.erase(std::unique(windows_.begin(), windows_.end()), windows_.end());
  if (windows_.size() > kMaxRangeFilterKeys) {
    const size_t distinct = windows_.size();
    Reset();
    return Err("a range filter holds at most " + std::to_string(kMaxRangeFilterKeys) +
               " distinct keys, got " + std::to_string(distinct));
  }
  const uint32_t window_bytes = WindowBytesFor(
      windows_, longest_key_ > prefix_bytes_ ? longest_key_ - prefix_bytes_ : 0, bits_per_key_);
  const uint32_t shift = 8 * (kMaxWindowBytes - window_bytes);
  for (Window& w : windows_) w = shift >= 128 ? 0 : w >> shift;
  windows_.erase(std::unique(windows_.begin(), windows_.end()), windows_.end());
  const uint64_t n = windows_.size();
  // Positions: each window in mixed radix over its bytes' alphabets. The map keeps order and
  // tells windows apart, and a range of keys spans fewer positions than windows: ten digits
  // where a byte had 256 values.
  AlphabetBuilder alphabets;
  for (const Window w : windows_) alphabets.Add(w, window_bytes);
  uint8_t rank[kMaxWindowBytes][256];
  uint32_t radix[kMaxWindowBytes];
  for (uint32_t i = 0; i < window_bytes; ++i) {
    uint32_t below = 0;
    for (uint32_t c = 0; c < 256; ++c) {
      rank[i][c] = static_cast<uint8_t>(below);
      below += (alphabets.bits[i][c >> 6] >> (c & 63)) & 1;
    }
    radix[i] = below;
  }
  const bool identity =
      std::all_of(radix, radix + window_bytes, [](uint32_t r) { return r == 256; });
  for (Window& w : windows_) {
    if (identity) break;  // every byte value at every byte: the position is the window
    Window position = 0;
    for (uint32_t i = 0; i < window_bytes; ++i) {
      position =
          position * radix[i] + rank[i][static_cast<uint8_t>(w >> (8 * (window_bytes - 1 - i)))];
    }
    w = position;
  }

  RangeFilterShape shape;
  EliasFanoShape sequence;
  std::vector<uint64_t> hashes;
  if (n > 0) {
    shape = RangeShapeFor(n, bits_per_key_);
    sequence = EliasFanoShape{n, shape.Universe(), shape.low_bits};
    hashes.resize(n);
    const Window offset_mask = LowBitsOf(shape.block_bits);
    for (uint64_t i = 0; i < n; ++i) {
      const Window w = windows_[i];
      hashes[i] = BlockHash(w >> shape.block_bits, shape.hash_range) +
                  static_cast<uint64_t>(w & offset_mask);
    }
  }
  const Window min_window = n > 0 ? windows_.front() : 0;
  const Window max_window = n > 0 ? windows_.back() : 0;
  std::vector<Window>().swap(windows_);
  if (n > 0) SortIntoBuckets(sequence, &hashes);

  std::string out;
  out.append(reinterpret_cast<const char*>(kMagic), 4);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(has_deletions_ ? kFlagDeletions : 0));
  out.push_back(static_cast<char>(window_bytes));
  out.push_back(static_cast<char>(shape.low_bits));
  out.push_back(static_cast<char>(shape.block_bits));
  out.push_back(static_cast<char>(prefix_bytes_));
  out.append(6, '\0');  // two zero bytes, then the check word, filled in below
  uint8_t buf[8];
  StoreLE64(buf, n);
  out.append(reinterpret_cast<const char*>(buf), 8);
  StoreLE64(buf, n > 0 ? shape.hash_range : 0);
  out.append(reinterpret_cast<const char*>(buf), 8);
  PutWindow(min_window, &out);
  PutWindow(max_window, &out);
  out.append(reference_.data(), prefix_bytes_);
  for (uint32_t i = 0; i < window_bytes; ++i) {
    for (uint64_t word : alphabets.bits[i]) {
      StoreLE64(buf, word);
      out.append(reinterpret_cast<const char*>(buf), 8);
    }
  }
  if (has_deletions_) {
    PutString(deletions_start_, &out);
    PutString(deletions_end_, &out);
  }
  StoreLE32(buf, CheckWord(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  std::memcpy(&out[kCheckWordOffset], buf, 4);
  if (n > 0) AppendEliasFano(sequence, hashes.data(), &out);
  Reset();
  return out;
}

// ---- Reader -----------------------------------------------------------------------------------

RangeFilterReader RangeFilterReader::Open(const uint8_t* data, size_t size) {
  RangeFilterReader r;  // understood_ = false: "may contain"
  if (data == nullptr || size < kHeaderBytes || std::memcmp(data, kMagic, 4) != 0 ||
      data[4] != kVersion || (data[5] & ~kFlagDeletions) != 0 || data[6] > kMaxWindowBytes ||
      data[7] > kMaxEliasFanoLowBits || data[8] > 62 || data[10] != 0 || data[11] != 0) {
    return r;
  }
  const uint32_t window_bytes = data[6];
  const uint32_t low_bits = data[7];
  const uint32_t block_bits = data[8];
  const uint32_t prefix_bytes = data[9];
  const uint64_t n = LoadLE64(data + 16);
  const uint64_t hash_range = LoadLE64(data + 24);
  const Window min_window = GetWindow(data + 32);
  const Window max_window = GetWindow(data + 48);
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
  const bool has_deletions = (data[5] & kFlagDeletions) != 0;
  if (has_deletions) {
    for (std::string_view& bound : deletion_bounds) {
      if (size - pos < 4) return r;
      const uint32_t length = LoadLE32(data + pos);
      pos += 4;
      if (size - pos < length) return r;
      bound = std::string_view(reinterpret_cast<const char*>(data + pos), length);
      pos += length;
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
