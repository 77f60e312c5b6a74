// SPDX-License-Identifier: Apache-2.0
// The range filter's bytes (core/range/range_api.h): the format, its one header codec, and the
// arithmetic that builder (range_builder.cc) and reader (range_reader.cc) must share exactly.
// Internal to core/range/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/format.h"
#include "core/hash.h"
#include "core/range/range_api.h"

namespace sstfilter {
namespace range_detail {

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
constexpr size_t kAlphabetBytes = 32;                          // a 256-bit set per window byte

// The fixed fields of the 64-byte header (all but the magic, the version and the check word).
struct RangeHeader {
  bool has_deletions = false;
  uint32_t window_bytes = 0, low_bits = 0, block_bits = 0, prefix_bytes = 0;
  uint64_t keys = 0, hash_range = 0;
  Window min_window = 0, max_window = 0;
};
// Appends the header, its check word zero (SealCheckWord fills it in once the strings after it
// are written).
void AppendHeader(const RangeHeader& header, std::string* out);
// The header of `data`, if it is one this code understands: the magic, the version, no unknown
// flag, every field within its range, the reserved bytes zero. The check word is not checked here.
bool ReadHeader(const uint8_t* data, size_t size, RangeHeader* header);
// A length-prefixed string (a range deletion bound), appended, or read at *pos (advanced).
void AppendString(std::string_view s, std::string* out);
bool ReadString(const uint8_t* data, size_t size, size_t* pos, std::string_view* s);
// The check word of the header and strings that end at `size`: they are hashed in two spans
// around the word, so that checking allocates nothing.
uint32_t CheckWord(const uint8_t* data, size_t size);
// Writes the check word of what `out` holds so far (the header and strings; not the body).
void SealCheckWord(std::string* out);

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
inline Window LoadWindow16(std::string_view s, size_t offset) {
  const size_t length =
      offset < s.size() ? std::min<size_t>(kMaxWindowBytes, s.size() - offset) : 0;
  const char* p = s.data() + offset;
  if (length <= 8) return static_cast<Window>(LoadHigh(p, length)) << 64;
  return static_cast<Window>(LoadBE64(p)) << 64 | LoadHigh(p + 8, length - 8);
}

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

// How many leading bytes a and b share, at most `limit`.
size_t CommonPrefix(std::string_view a, std::string_view b, size_t limit);

}  // namespace range_detail
}  // namespace sstfilter
