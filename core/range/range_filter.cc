// SPDX-License-Identifier: Apache-2.0
#include "core/range/range_filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

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
// The most keys' share of the universe a block spans (see RangeShapeFor).
constexpr uint64_t kKeysPerBlock = 16;

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

// The first `length` (<= 8) bytes at p as a big-endian number, left-aligned in 64 bits (zeros
// after them). Whole-word loads where the bytes allow: a copy into a zeroed buffer followed by a
// word load stalls on store forwarding (40% of AddKey's samples in range_bench).
inline uint64_t LoadHigh(const char* p, size_t length) {
  if (length == 8) return LoadBE64(p);
  if (length >= 4) {  // two 4-byte loads, overlapping unless length is 8
    return uint64_t{LoadBE32(p)} << 32 | uint64_t{LoadBE32(p + length - 4)} << (8 * (8 - length));
  }
  uint64_t v = 0;
  for (size_t i = 0; i < length; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (56 - 8 * i);
  return v;
}

// Up to 16 bytes of s from `offset`, zero-padded, as a big-endian number (the first byte high).
Window LoadWindow16(std::string_view s, size_t offset) {
  const size_t length =
      offset < s.size() ? std::min<size_t>(kMaxWindowBytes, s.size() - offset) : 0;
  const char* p = s.data() + offset;
  if (length <= 8) return static_cast<Window>(LoadHigh(p, length)) << 64;
  return static_cast<Window>(LoadBE64(p)) << 64 | LoadHigh(p + 8, length - 8);
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
  // 8 bytes at a time (every key is compared with the prefix): the first byte that differs is
  // the highest of the big-endian words' difference.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t x = LoadBE64(a.data() + i) ^ LoadBE64(b.data() + i);
    if (x != 0) return i + static_cast<size_t>(__builtin_clzll(x)) / 8;
  }
  // Fewer than 8 bytes left to compare: one more word where both strings hold 8 bytes from i.
  if (i < n && a.size() - i >= 8 && b.size() - i >= 8) {
    const uint64_t x = LoadBE64(a.data() + i) ^ LoadBE64(b.data() + i);
    return x == 0 ? n : std::min(n, i + static_cast<size_t>(__builtin_clzll(x)) / 8);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// 64-bit words laid over the windows' chunks: sorting the hashes takes no memory of its own. Hash
// i is written at byte 8 i, after window i (at byte 16 i) was read, and the hashes' partitioned
// copy takes bytes 8 n to 16 n (n hashes, at most one per window). A build touched 34 bytes per
// key in separate arrays (the windows, the hashes, their partitioned copy, the body) and now 18,
// which counts where a builder's memory is new to the process, its pages faulted in and zeroed:
// a million random integers took 44 ns per key, and take 35, with glibc made to map and unmap
// every array (MALLOC_MMAP_THRESHOLD_); 23.5 and 25.5 with its heap reused. Accessed through
// memcpy: the chunks' objects are windows.
class WordsOverChunks {
 public:
  explicit WordsOverChunks(ChunkedList<Window>* windows) {
    for (size_t c = 0; c < windows->num_chunks(); ++c) {
      chunks_.push_back(reinterpret_cast<unsigned char*>(windows->chunk(c)));
    }
  }
  uint64_t Get(uint64_t i) const {
    uint64_t v;
    std::memcpy(&v, Address(i), 8);
    return v;
  }
  void Set(uint64_t i, uint64_t v) { std::memcpy(Address(i), &v, 8); }

 private:
  static constexpr uint64_t kChunkBytes = ChunkedList<Window>::kChunkItems * sizeof(Window);
  static_assert((kChunkBytes & (kChunkBytes - 1)) == 0, "a power of two");
  unsigned char* Address(uint64_t i) const {
    return chunks_[(8 * i) / kChunkBytes] + (8 * i) % kChunkBytes;
  }
  std::vector<unsigned char*> chunks_;
};

// Puts hashes (each below shape.universe, shape.num_values of them) in Elias-Fano order with two
// counting sorts that stay in the caches: into partitions of 2^kPartitionBucketBits buckets
// (about 1,000 keys each; counted as the hashes are added), then each partition by bucket, its
// counts in L1; SortWithinBuckets finishes the buckets (about 2 per key, so each is tiny). One
// counting sort over every bucket missed the caches on its counts (8 bytes per key): 15 ns per
// key at a million random keys, and the encoding from its sorted copy 4 more, against about 6
// and 2 now. The hashes and their partitioned copy lie in `words` (2 n words).
class HashSorter {
 public:
  static constexpr uint32_t kPartitionBucketBits = 11;

  HashSorter(const EliasFanoShape& shape, WordsOverChunks words)
      : shape_(shape),
        partition_shift_(shape.low_bits + kPartitionBucketBits),
        ends_((((shape.universe - 1) >> partition_shift_) + 1) + 1, 0),
        words_(std::move(words)) {}

  void Add(uint64_t h) {
    words_.Set(added_++, h);
    ++ends_[(h >> partition_shift_) + 1];
  }

  // Adds the hashes (every one added) to the body, in order.
  void SortInto(EliasFanoWriter* writer) {
    const uint64_t n = added_, partitions = ends_.size() - 1;
    uint32_t largest = 0;
    for (uint64_t j = 1; j <= partitions; ++j) {
      largest = std::max(largest, ends_[j]);
      ends_[j] += ends_[j - 1];
    }
    {
      std::vector<uint32_t> next(ends_.begin(), ends_.end() - 1);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t h = words_.Get(i);
        words_.Set(n + next[h >> partition_shift_]++, h);
      }
    }
    std::vector<uint64_t> part(largest), sorted(largest);  // a partition at a time
    constexpr uint64_t kBucketMask = (uint64_t{1} << kPartitionBucketBits) - 1;
    const uint32_t low_bits = shape_.low_bits;
    uint32_t starts[kBucketMask + 2];
    for (uint64_t j = 0; j < partitions; ++j) {
      const uint32_t count = ends_[j + 1] - ends_[j];
      for (uint32_t i = 0; i < count; ++i) part[i] = words_.Get(n + ends_[j] + i);
      std::fill(std::begin(starts), std::end(starts), 0);
      for (uint32_t i = 0; i < count; ++i) ++starts[((part[i] >> low_bits) & kBucketMask) + 1];
      for (uint64_t k = 1; k <= kBucketMask + 1; ++k) starts[k] += starts[k - 1];
      for (uint32_t i = 0; i < count; ++i) {
        sorted[starts[(part[i] >> low_bits) & kBucketMask]++] = part[i];
      }
      range_detail::SortWithinBuckets(sorted.data(), count);
      for (uint32_t i = 0; i < count; ++i) writer->Add(sorted[i]);
    }
  }

 private:
  EliasFanoShape shape_;
  uint32_t partition_shift_;
  std::vector<uint32_t> ends_;  // ends_[j + 1]: the hashes in partition j, then where j ends
  WordsOverChunks words_;
  uint64_t added_ = 0;
};

// How many leading bytes two windows share (16: all).
inline uint32_t SharedBytes(Window a, Window b) {
  const Window x = a ^ b;
  const uint64_t high = static_cast<uint64_t>(x >> 64), low = static_cast<uint64_t>(x);
  if (high != 0) return static_cast<uint32_t>(__builtin_clzll(high)) / 8;
  if (low != 0) return 8 + static_cast<uint32_t>(__builtin_clzll(low)) / 8;
  return kMaxWindowBytes;
}

// Byte i (0: the first, the highest) of a window, from its two halves.
inline uint32_t ByteOf(uint64_t high, uint64_t low, uint32_t i) {
  return static_cast<uint8_t>((i < 8 ? high : low) >> (56 - 8 * (i & 7)));
}

// What the window width is chosen from: the distinct, sorted 16-byte windows' neighbours.
struct Neighbours {
  uint64_t windows = 0;
  // shared[d]: neighbours whose windows agree in exactly their first d bytes (d < 16);
  // last[d]: neighbours whose last differing byte is byte d - 1 (d >= 1).
  uint64_t shared[kMaxWindowBytes + 1] = {};
  uint64_t last[kMaxWindowBytes + 1] = {};
  // The next window after `previous` (distinct, larger), which shares `shared_bytes` with it.
  void Add(Window previous, Window w, uint32_t shared_bytes) {
    const Window x = previous ^ w;
    const uint64_t high = static_cast<uint64_t>(x >> 64), low = static_cast<uint64_t>(x);
    // x != 0; the or-ed bit only keeps the builtin defined.
    const int trailing =
        low != 0 ? __builtin_ctzll(low) : 64 + __builtin_ctzll(high | (uint64_t{1} << 63));
    ++shared[shared_bytes];
    ++last[kMaxWindowBytes - trailing / 8];
  }
};

// The window width. Wide enough that neighbouring keys stay apart (but for at most
// n / 2^(bits_per_key - 2) of them, the false-positive rate of a one-key range) and that the
// median pair of neighbours is told apart down to the last byte in which they differ (so that
// a range that starts just past a key, which differs from it in that byte, misses the key's
// window); no wider. Keys differ in their low bytes (ids, timestamps), and a window wider than
// needed spreads a range of keys over more windows than the filter can tell apart: 256 times
// more per byte (constant padding after an integer, a long key among short ones). Keys longer
// than the window share the windows of their first bytes: false positives, never a lost key.
// No key is longer than `widest` bytes past the prefix.
uint32_t WindowBytesFor(const Neighbours& neighbours, uint32_t widest, double bits_per_key) {
  const uint64_t pairs = neighbours.windows == 0 ? 0 : neighbours.windows - 1;
  uint32_t median_last = 0;
  uint64_t seen = neighbours.last[0];
  while (2 * seen < pairs) seen += neighbours.last[++median_last];
  const double allowed =
      std::floor(static_cast<double>(neighbours.windows) * std::exp2(-(bits_per_key - 2.0)));
  // merged: the neighbours that share their first `width` bytes (at width 0, all of them).
  uint64_t merged = pairs;
  for (uint32_t width = 0; width < widest; ++width) {
    if (static_cast<double>(merged) <= allowed && width >= median_last) return width;
    merged -= neighbours.shared[width];  // those that differ in byte `width` are apart from
                                         // width + 1 on
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

// The digit alphabets of a builder: which byte values each window byte takes.
struct AlphabetBuilder {
  // The digit alphabets, as written: bit c of bits[i] for each value c byte i takes. Made from
  // seen[] by Finish.
  uint64_t bits[kMaxWindowBytes][4] = {};
  // seen[i][c] != 0: byte i takes the value c. A byte store per byte of a window, with no load
  // (setting a bit loads the word, and a window that sets the same word waits for the store).
  // The alphabets took 11 of 35 ns per key of a build of decimal ids when each window's bytes
  // after those it shares with the window before were added in a loop; see Add.
  uint8_t seen[kMaxWindowBytes][256] = {};

  // The bytes in `bytes_mask` (bit i: byte i) of window w: unrolled, every shift a constant (a
  // loop over the mask's bits was 6 ns per key slower on decimal ids). The mask is the same
  // window after window, so its tests predict well.
  void Add(Window w, uint32_t bytes_mask) {
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    for (uint32_t i = 0; i < 8; ++i) {
      if ((bytes_mask >> i) & 1) seen[i][static_cast<uint8_t>(high >> (56 - 8 * i))] = 1;
      if ((bytes_mask >> (8 + i)) & 1) seen[8 + i][static_cast<uint8_t>(low >> (56 - 8 * i))] = 1;
    }
  }
  // The same for a mask of a few bytes (random integers, once all but their first bytes are
  // full): a loop over its bits, 3 ns per key faster there than the 16 tests.
  void AddFew(Window w, uint32_t bytes_mask) {
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    for (; bytes_mask != 0; bytes_mask &= bytes_mask - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctz(bytes_mask));
      seen[i][ByteOf(high, low, i)] = 1;
    }
  }
  void Finish() {
    for (uint32_t i = 0; i < kMaxWindowBytes; ++i) {
      for (uint32_t c = 0; c < 256; ++c) {
        if (seen[i][c] != 0) bits[i][c >> 6] |= uint64_t{1} << (c & 63);
      }
    }
  }
  // The values byte i takes, its digit's radix (after Finish).
  uint32_t Radix(uint32_t i) const {
    return PopCount(bits[i][0]) + PopCount(bits[i][1]) + PopCount(bits[i][2]) +
           PopCount(bits[i][3]);
  }
  // The bytes (bit i: byte i) that have not taken every value: the others need no more Adds
  // (random integers fill all but their first bytes within a few thousand keys).
  uint32_t NotFull() {
    Finish();
    uint32_t mask = 0;
    for (uint32_t i = 0; i < kMaxWindowBytes; ++i) {
      if (Radix(i) != 256) mask |= 1u << i;
    }
    return mask;
  }
};

// Each distinct window's hash, in the windows' order: the window (its first window_bytes bytes)
// becomes its position, its digits in mixed radix over the bytes' alphabets, and the position is
// hashed. The map keeps order and tells windows apart, and a range of keys spans fewer positions
// than windows: ten digits where a byte had 256 values. Position: uint64_t when every position
// fits (integers of up to 8 bytes, decimal ids of up to 19 digits), Window otherwise; the figures
// are the same either way, the 64-bit sums cheaper. for_each_window(f) calls f(window) for the
// sorted windows; the hashes go to *sorter. Returns the smallest and largest position.
template <typename Position, typename ForEachWindow>
void HashPositions(ForEachWindow&& for_each_window, uint32_t window_bytes,
                   const AlphabetBuilder& alphabets, const RangeFilterShape& shape,
                   HashSorter* sorter, Window* min_position, Window* max_position) {
  // digit[256 i + c]: byte value c's part of a position at window byte i, its rank times the
  // product of the radixes after i (every byte value at every byte: the position is the window).
  std::vector<Position> digit(size_t{256} * window_bytes);
  Position weight = 1;
  for (uint32_t i = window_bytes; i-- > 0;) {
    uint32_t below = 0;
    for (uint32_t c = 0; c < 256; ++c) {
      digit[256 * i + c] = weight * below;
      below += (alphabets.bits[i][c >> 6] >> (c & 63)) & 1;
    }
    if (i > 0) weight *= below;  // no overflow: the caller checked that positions fit
  }
  // Each position sums all its digits: a loop of the same length for every window predicts its
  // end, where one that starts at the first byte not shared with the window before (fewer adds)
  // mispredicted about once per window and was slower. Sorted positions meet each block in one
  // run, so a block is hashed once.
  const Position offset_mask = static_cast<Position>(LowBitsOf(shape.block_bits));
  Position position = 0, block = 0;
  uint64_t block_hash = 0;
  uint64_t out = 0;
  Window previous = 0;
  for_each_window([&](Window w) {
    // A window that shares its first window_bytes bytes with the one before it has its position.
    if (out > 0 && SharedBytes(previous, w) >= window_bytes) return;
    previous = w;
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    position = 0;
    for (uint32_t j = 0; j < window_bytes; ++j) position += digit[256 * j + ByteOf(high, low, j)];
    if (out == 0 || position >> shape.block_bits != block) {
      block = position >> shape.block_bits;
      block_hash = BlockHash(block, shape.hash_range);
    }
    if (out++ == 0) *min_position = position;
    sorter->Add(block_hash + static_cast<uint64_t>(position & offset_mask));
  });
  *max_position = position;
}

}  // namespace

namespace range_detail {

bool SortWithinBuckets(uint64_t* values, uint32_t count) {
  const uint64_t move_budget = 8 * uint64_t{count} + 64;
  uint64_t moves = 0;
  for (uint32_t i = 1; i < count; ++i) {
    const uint64_t v = values[i];
    uint32_t k = i;
    for (; k > 0 && values[k - 1] > v; --k) values[k] = values[k - 1];
    values[k] = v;
    moves += i - k;
    if (moves > move_budget) {
      std::sort(values, values + count);
      return true;
    }
  }
  return false;
}

}  // namespace range_detail

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
  // Blocks (a power of two) of at most kKeysPerBlock keys' share of the universe and at most
  // 1/1024 of it (r loses at most that). A file's rate rests on how its blocks' hashes fall, and
  // few blocks make it a lottery: a million decimal ids under 10^10 in 1,192 blocks (1/1024 of
  // the universe alone) gave 0.0938% to 0.1061% at 16 bits and L = 16 over three seeds of q,
  // where 0.0992% is predicted; in 76,000 blocks (16 keys' share), 0.0999% to 0.1005% (10M
  // queries each; one standard deviation 0.001%). Smaller blocks hash more of them in a build of
  // keys denser than the hash range, and cost a query more than two lookups only for ranges
  // longer than a block, at least 8 keys' share, whose rate is above 99.9% anyway.
  const uint64_t block_limit =
      std::min(u / 1024, std::min(u / num_keys, uint64_t{1} << 58) * kKeysPerBlock);
  uint32_t block_bits = 0;
  while (block_bits < 62 && (uint64_t{1} << (block_bits + 1)) <= block_limit) ++block_bits;
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
  windows_.Release();
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
    windows_.Transform([same](Window) { return same; });
  } else {
    Window head = 0;
    for (uint32_t i = 0; i < cut; ++i)
      head = (head << 8) | static_cast<uint8_t>(reference_[new_prefix + i]);
    head <<= 8 * (kMaxWindowBytes - cut);
    windows_.Transform([head, cut](Window w) { return head | (w >> (8 * cut)); });
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
  if (!windows_.empty() && w < windows_.back()) sorted_ = false;
  windows_.Add(w);  // not a repeat of the last: a key's versions, one after another
}

void RangeFilterBuilder::AddRangeDeletion(std::string_view start, std::string_view end) {
  if (!has_deletions_ || start < deletions_start_) deletions_start_.assign(start);
  if (!has_deletions_ || end > deletions_end_) deletions_end_.assign(end);
  has_deletions_ = true;
}

Result<std::string> RangeFilterBuilder::Finish() {
  // Keys out of order (never from RocksDB): sorted into one array (the chunks are kept, for the
  // hashes).
  std::vector<Window> unsorted;
  if (!sorted_) {
    unsorted.reserve(windows_.size());
    windows_.ForEachChunk(
        [&](const Window* w, size_t count) { unsorted.insert(unsorted.end(), w, w + count); });
    std::sort(unsorted.begin(), unsorted.end());
  }
  const auto for_each_window = [&](auto&& f) {
    if (!sorted_) {
      for (const Window w : unsorted) f(w);
      return;
    }
    windows_.ForEachChunk([&](const Window* w, size_t count) {
      for (size_t i = 0; i < count; ++i) f(w[i]);
    });
  };
  const uint32_t widest = static_cast<uint32_t>(std::min<size_t>(
      kMaxWindowBytes, longest_key_ > prefix_bytes_ ? longest_key_ - prefix_bytes_ : 0));
  // One pass over the sorted windows: their neighbours, for the width, and the values each byte
  // takes, the digit alphabets (a byte's values do not depend on the width). The bytes a window
  // shares with the one before it were counted with that one; equal windows (keys that differ
  // only beyond 16 bytes past the prefix, or repeated out of order) count once.
  Neighbours neighbours;
  AlphabetBuilder alphabets;
  Window previous = 0;
  const uint32_t up_to_widest = (uint32_t{1} << widest) - 1;  // widest <= 16
  uint32_t growing = up_to_widest;                            // alphabets not yet full
  bool few_growing = false;
  for_each_window([&](Window w) {
    uint32_t from = 0;
    if (neighbours.windows > 0) {
      from = SharedBytes(previous, w);
      if (from == kMaxWindowBytes) return;
      neighbours.Add(previous, w, from);
    }
    previous = w;
    if (++neighbours.windows % 4096 == 0) {
      growing = alphabets.NotFull() & up_to_widest;
      few_growing = PopCount(growing) <= 3;
    }
    // Every growing byte, those the window shares with the one before too: a loop of the same
    // length for every window predicts its end.
    if (few_growing) {
      alphabets.AddFew(w, growing);
    } else {
      alphabets.Add(w, growing);
    }
  });
  alphabets.Finish();
  if (neighbours.windows > kMaxRangeFilterKeys) {
    const uint64_t distinct = neighbours.windows;
    Reset();
    return Err("a range filter holds at most " + std::to_string(kMaxRangeFilterKeys) +
               " distinct keys, got " + std::to_string(distinct));
  }
  const uint32_t window_bytes = WindowBytesFor(neighbours, widest, bits_per_key_);
  // The keys: windows distinct in their first window_bytes bytes.
  uint64_t n = neighbours.windows == 0 ? 0 : 1;
  for (uint32_t d = 0; d < window_bytes; ++d) n += neighbours.shared[d];

  RangeFilterShape shape;
  EliasFanoShape sequence;
  std::unique_ptr<HashSorter> sorter;
  Window min_window = 0, max_window = 0;
  if (n > 0) {
    shape = RangeShapeFor(n, bits_per_key_);
    sequence = EliasFanoShape{n, shape.Universe(), shape.low_bits};
    sorter.reset(new HashSorter(sequence, WordsOverChunks(&windows_)));
    // Whether every position fits 64 bits: the product of the radixes is at most 2^64 (checked
    // in 128 bits, before it can overflow them).
    constexpr Window kPositions64 = Window{1} << 64;
    Window positions = 1;
    for (uint32_t i = 0; i < window_bytes && positions <= kPositions64; ++i) {
      positions *= alphabets.Radix(i);
    }
    if (positions <= kPositions64) {
      HashPositions<uint64_t>(for_each_window, window_bytes, alphabets, shape, sorter.get(),
                              &min_window, &max_window);
    } else {
      HashPositions<Window>(for_each_window, window_bytes, alphabets, shape, sorter.get(),
                            &min_window, &max_window);
    }
  }
  std::vector<Window>().swap(unsorted);
  std::unique_ptr<EliasFanoWriter> body;
  if (n > 0) {
    body.reset(new EliasFanoWriter(sequence));
    sorter->SortInto(body.get());
    sorter.reset();
  }
  windows_.Release();

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
  if (n > 0) body->AppendTo(&out);
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
