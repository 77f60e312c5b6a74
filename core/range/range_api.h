// SPDX-License-Identifier: Apache-2.0
// The range filter: "may the set hold a key k with lower <= k < upper?" for byte-string keys in
// bytewise order, with no false negatives, point queries included. The RocksDB plugin keeps one
// per SST file in the file's properties (sstfilter.RangeFilter) and skips files that hold nothing
// in an iterator's bounds.
//
// The design is Grafite's (M. Costa, P. Ferragina, G. Vinciguerra, "Grafite: Taming Adversarial
// Queries with Optimal Range Filters", SIGMOD 2024), over keys made integers:
//
// 1. Keys become windows: the file's keys share a prefix P (kept in the filter); a key's window
//    is the next W <= 16 bytes after P, zero-padded, read as a big-endian integer. W is as
//    narrow as keeps neighbouring keys apart, down to the last byte the median pair of them
//    differs in (WindowBytesFor in the .cc): constant padding after an integer is left out.
//    Then each window byte becomes a digit: its rank among the values the keys have at that
//    byte (kept in the filter, 32 bytes per byte), and the window the number in that mixed
//    radix, its position. Decimal ids ("user:0001234") then count in tens, not in 256s. The map
//    keeps order (k1 <= k2 gives window(k1) <= window(k2)), so a range of keys is a range of
//    windows and nothing is lost; keys that differ only past the window share it, which costs false
//    positives, never a lost key. Fixed-length keys (integers, ids, timestamps) whose varying
//    bytes fit 16 bytes past P keep them all, unless fewer keep the keys apart.
// 2. Windows are hashed in blocks that keep order inside them: h(x) = q(x >> b) + (x mod 2^b),
//    q a hash of the block onto [0, r). A query range inside one block is one range of hashes of
//    the same length; across two blocks, two. Keys in the query's own block land outside its
//    range for certain; a key in another block lands in a range of length L with probability at
//    most L / r, whatever the queries: queries that hug the keys (the range just after a key) are
//    no worse than random ones. Grafite's hash is q(x / L) + x mod r; this one adds no modulo and
//    its universe is r + 2^b. A block spans at most 16 keys' share of the hash range: the bound
//    holds in expectation over q, and a file of a few large blocks draws its rate from few
//    hashes (RangeShapeFor has the figures).
// 3. The n hashes, sorted, go into Elias-Fano (elias_fano.h) at bits_per_key bits per key in all,
//    which fixes r: a range of L windows is a false positive with probability at most
//    about n L / r = L / 2^(B - 2.03) at B bits per key (Grafite's bound is L / 2^(B - 2); the
//    0.03 is the Elias-Fano samples).
//
// Every range deletion of the file is kept as one covering range [min start, max end): a query
// that meets it answers "may contain", so a skipped file never hides a range tombstone, whatever
// RocksDB does with the tombstones of files an iterator skips.
//
// The byte format is docs/format.md section 15. A reader answers "may contain" for bytes it does
// not fully understand, and reads nothing outside them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash_list.h"
#include "core/range/elias_fano.h"
#include "core/result.h"

namespace sstfilter {

using Window = unsigned __int128;

// Accepted budgets. Below 4 bits a range of one key is a false positive 1 time in 4.
inline constexpr double kMinRangeBitsPerKey = 4.0;
inline constexpr double kMaxRangeBitsPerKey = 48.0;
// The widest window, in bytes.
inline constexpr uint32_t kMaxWindowBytes = 16;
// The longest shared prefix a filter keeps; a longer one is cut (correct, coarser).
inline constexpr uint32_t kMaxPrefixBytes = 255;
// A query range spanning more blocks than this answers "may contain" without looking.
inline constexpr uint64_t kMaxBlocksPerQuery = 64;
// The most keys (distinct windows) one filter holds; a larger set has no filter.
inline constexpr uint64_t kMaxRangeFilterKeys = uint64_t{1} << 30;

// Whether bits_per_key is accepted ([kMinRangeBitsPerKey, kMaxRangeBitsPerKey]); the message says
// what was given.
Result<double> CheckRangeBitsPerKey(double bits_per_key);

// The sizes a filter of num_keys (> 0) keys at bits_per_key (checked) gets.
struct RangeFilterShape {
  uint32_t low_bits = 0;    // Elias-Fano's low part
  uint32_t block_bits = 0;  // b: windows are hashed in blocks of 2^b
  uint64_t hash_range = 1;  // r: q(block) lies in [0, r)
  uint64_t Universe() const { return hash_range + (uint64_t{1} << block_bits); }
};
RangeFilterShape RangeShapeFor(uint64_t num_keys, double bits_per_key);

// The probability that a range of `range_windows` windows, none a key, is a false positive, for
// n keys hashed into r: 1 - (1 - L / r)^n, about n L / r; 1 from r / L keys on.
double RangeFpRate(const RangeFilterShape& shape, uint64_t num_keys, double range_windows);

// The builder: keys in any order (RocksDB gives them sorted, which saves a sort), repeated or
// not. Memory: 16 bytes per key (a key repeated right after itself, as RocksDB gives a key's
// versions, once), in chunks of 32 KiB, nothing copied as it grows; Finish sorts the hashes in
// that same memory and adds the filter being written (bits_per_key / 8 bytes per key) and small
// tables (the digits', at most 64 KiB; the partitions' counts, 8 bytes per 1,000 keys). Keys out
// of order take 16 bytes per key more, for a sorted copy.
class RangeFilterBuilder {
 public:
  explicit RangeFilterBuilder(double bits_per_key);  // bits_per_key: checked by the caller

  void AddKey(std::string_view key);
  // A range deletion [start, end): the filter answers "may contain" for every query meeting it.
  void AddRangeDeletion(std::string_view start, std::string_view end);

  uint64_t num_keys_added() const { return keys_added_; }
  // The filter's bytes; the builder is empty again afterwards. Fails only for more than
  // kMaxRangeFilterKeys distinct windows (and then the builder is empty too).
  Result<std::string> Finish();

 private:
  void ShortenPrefix(uint32_t new_prefix);
  void Reset();

  double bits_per_key_;
  uint64_t keys_added_ = 0;
  std::string reference_;      // the first key, cut to kMaxPrefixBytes + kMaxWindowBytes bytes
  uint32_t prefix_bytes_ = 0;  // what every key so far shares with reference_
  size_t longest_key_ = 0;
  ChunkedList<Window> windows_;  // 16-byte windows at offset prefix_bytes_, left-aligned
  bool sorted_ = true;
  bool has_deletions_ = false;
  std::string deletions_start_, deletions_end_;
};

// A view over a filter's bytes, which must outlive it. Opening checks the header and hashes it
// with the prefix, the alphabets and the cover (the check word), and counts the alphabets: no
// copy, no allocation, nothing proportional to the keys. Bytes not understood give a reader that
// answers "may contain". The check word does not cover the Elias-Fano body: a body corrupted
// on disk is caught by RocksDB's checksum of the properties block, not here (a flipped body bit
// can turn an answer into "no").
class RangeFilterReader {
 public:
  static RangeFilterReader Open(const uint8_t* data, size_t size);

  // Whether the bytes were understood (false: every query answers "may contain").
  bool understood() const { return understood_; }
  uint64_t num_keys() const { return num_keys_; }
  uint32_t window_bytes() const { return window_bytes_; }

  // May a key k with *lower <= k < *upper be in the set? A null bound is open.
  bool MayContain(const std::string_view* lower, const std::string_view* upper) const;
  // May a key whose position (its window in the alphabets' mixed radix) lies in [lo, hi]
  // (inclusive) be in the set? (Range deletions aside.)
  bool MayContainWindows(Window lo, Window hi) const;

 private:
  uint32_t RankBelow(uint32_t i, uint32_t c, bool* member) const;
  // A bound's digits while its window bytes are in the alphabets: their position, the first
  // byte that is not (window_bytes_ if every one is), and that byte's rank (values below it).
  struct BoundDigits {
    Window position = 0;
    uint32_t stop = 0;
    uint32_t below = 0;
  };
  BoundDigits DigitsOf(std::string_view suffix) const;
  bool LowestPositionFrom(std::string_view suffix, Window* out) const;
  bool HighestPositionBelow(std::string_view suffix, Window* out) const;

  bool understood_ = false;
  uint64_t num_keys_ = 0;
  uint32_t window_bytes_ = 0;
  uint32_t block_bits_ = 0;
  uint64_t hash_range_ = 0;
  Window min_window_ = 0, max_window_ = 0;
  std::string_view prefix_;
  const uint8_t* alphabets_ = nullptr;  // window_bytes_ sets of 32 bytes
  uint32_t radix_[kMaxWindowBytes] = {};
  Window weight_[kMaxWindowBytes] = {};    // of digit i: the product of the radixes after it
  Window prefixes_[kMaxWindowBytes] = {};  // the product of the radixes before digit i
  Window largest_position_ = 0;
  bool has_deletions_ = false;
  std::string_view deletions_start_, deletions_end_;
  EliasFanoView sequence_;
};

namespace range_detail {
// Sorts values that are out of order only within their Elias-Fano buckets (a builder's hashes
// after a counting sort by bucket): an insertion sort, each value moved a step or two. Keys far
// denser than the hash range, in two blocks whose hashes overlap, fill buckets with two long
// sorted runs, and the insertion sort would move each value of one past all of the other's
// (two runs of 8,192 in a bucket at 16 bits per key: 33 million moves); past 8 moves per value
// it sorts with std::sort instead, and returns true. For tests.
bool SortWithinBuckets(uint64_t* values, uint32_t count);
}  // namespace range_detail

}  // namespace sstfilter
