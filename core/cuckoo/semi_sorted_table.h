// SPDX-License-Identifier: Apache-2.0
// The semi-sorted bucket table of static cuckoo filters (Fan, Andersen, Kaminsky, Mitzenmacher,
// CoNEXT 2014, section 5.2): format version 2 of the cuckoo kind, one bit per slot smaller than
// the plain table (core/cuckoo/cuckoo_table.h) at the same fingerprints, so at the same rate.
//
// A bucket holds 4 f-bit fingerprints (5 <= f <= 32; 0 is an empty slot). Their order within the
// bucket carries no information, so they are stored sorted. Each fingerprint is split into its top
// 4 bits (its nibble) and its low r = f - 4 bits. The nibbles of a sorted bucket are
// non-decreasing: one of C(16 + 4 - 1, 4) = 3876 multisets, so their rank in 12 bits replaces 4
// nibbles of 4 bits. A bucket takes 12 + 4r = 4f - 4 bits instead of 4f.
//
// Byte layout: bucket i is bits [i (4f - 4), (i + 1)(4f - 4)) of the little-endian bit string of
// the body (bit j is bit j & 7 of byte j >> 3). Its first 12 bits are the rank of its nibbles
// (n0, n1, n2, n3), n0 <= n1 <= n2 <= n3, among all such 4-tuples in lexicographic order: (0, 0, 0,
// 0) is rank 0, (0, 0, 0, 1) rank 1, ..., (15, 15, 15, 15) rank 3875. Then come the low parts l0 ..
// l3 of r bits each, in the same order. Slot s holds (n_s << r) | l_s. Ranks 3876 .. 4095 are never
// written; a reader that meets one answers "may match". The buckets are followed by kPadBytes zero
// bytes, so that an 8-byte load at any byte where a bucket's fields start stays inside the table.
//
// A static build places the fingerprints in a plain table, then Encode converts it (version 2).
// The dynamic CuckooFilter places into SemiSortedTable (below) directly, each change decoding and
// encoding its bucket whole (version 3: the same bytes, read the same way).
#pragma once

#include <array>
#include <cstdint>

#include "core/cuckoo/cuckoo_table.h"
#include "core/cuckoo/math.h"
#include "core/packed_fields.h"

namespace sstfilter {

namespace semi_sorted_internal {

inline constexpr int kNibbleBits = 4;
inline constexpr int kRankBits = 12;
inline constexpr int kNumRanks = 3876;  // C(19, 4): sorted 4-tuples of nibbles

// kNibblesOfRank[rank] = n0 << 12 | n1 << 8 | n2 << 4 | n3: increasing with the rank, because the
// ranks follow lexicographic order and n0 is the most significant.
constexpr std::array<uint16_t, kNumRanks> MakeNibblesOfRank() {
  std::array<uint16_t, kNumRanks> table{};
  int rank = 0;
  for (int a = 0; a < 16; ++a) {
    for (int b = a; b < 16; ++b) {
      for (int c = b; c < 16; ++c) {
        for (int d = c; d < 16; ++d) {
          table[rank++] = static_cast<uint16_t>(a << 12 | b << 8 | c << 4 | d);
        }
      }
    }
  }
  return table;
}
inline constexpr std::array<uint16_t, kNumRanks> kNibblesOfRank = MakeNibblesOfRank();
static_assert(kNibblesOfRank[0] == 0 && kNibblesOfRank[1] == 1 &&
                  kNibblesOfRank[kNumRanks - 1] == 0xffff,
              "ranks in lexicographic order, (0,0,0,0) to (15,15,15,15)");

}  // namespace semi_sorted_internal

// The rank Encode writes for sorted nibbles a <= b <= c <= d (tests compare it with the table).
uint32_t SemiSortedRankForTesting(uint32_t a, uint32_t b, uint32_t c, uint32_t d);

// Read-only access to a semi-sorted table.
class SemiSortedTableView {
 public:
  static constexpr uint64_t kPadBytes = CuckooTableView::kPadBytes;
  static constexpr int kMinFingerprintBits = 5;  // a low part of at least 1 bit

  // Bucket bits: 4f - 4.
  static constexpr uint64_t BucketBits(int fingerprint_bits) {
    return uint64_t{kCuckooSlotsPerBucket} * fingerprint_bits - 4;
  }
  // Bytes of a table: the buckets rounded up to a byte, plus kPadBytes.
  static uint64_t BytesFor(uint64_t num_buckets, int fingerprint_bits) {
    return (num_buckets * BucketBits(fingerprint_bits) + 7) / 8 + kPadBytes;
  }

  SemiSortedTableView() = default;
  SemiSortedTableView(const uint8_t* data, uint64_t num_buckets, int fingerprint_bits)
      : data_(data),
        bucket_bits_(BucketBits(fingerprint_bits)),
        low_bits_(fingerprint_bits - semi_sorted_internal::kNibbleBits),
        num_buckets_(num_buckets) {
    low_mask_ = LowBitsMask(low_bits_);
    all_lows_mask_ = low_bits_ <= 12 ? (uint64_t{1} << (4 * low_bits_)) - 1 : 0;
    // The lanes of LowsMayHold: all 4 low parts in one load while 4r <= 56 bits (f <= 18), else
    // 2 per load (2r <= 56 for every f <= 32).
    low_lanes_ = 4 * low_bits_ <= 56 ? 4 : 2;
    low_lane_ones_ = 0;
    for (int s = 0; s < low_lanes_; ++s) low_lane_ones_ |= uint64_t{1} << (s * low_bits_);
    low_lane_highs_ = low_lane_ones_ << (low_bits_ - 1);
    low_lanes_mask_ = (uint64_t{1} << (low_lanes_ * low_bits_)) - 1;
    whole_bucket_load_ = bucket_bits_ <= 57;
    // The last load of a query (LowsMayHold, then Contains) starts at bit 0 when one load holds
    // the bucket, else at the low parts (12), or at the last one (12 + 3r) for f > 16.
    const uint64_t lows_bit = semi_sorted_internal::kRankBits;
    const uint64_t last_load_bit = whole_bucket_load_ ? 0
                                   : low_bits_ <= 12
                                       ? lows_bit
                                       : lows_bit + 3 * static_cast<uint64_t>(low_bits_);
    bucket_read_bytes_ = LoadSpanBytes(last_load_bit);
  }

  uint64_t num_buckets() const { return num_buckets_; }

  // Address of the first byte of a bucket, and the bytes from there that a query of the bucket
  // may read: what to prefetch.
  const uint8_t* BucketAddress(uint64_t bucket) const {
    return data_ + ((bucket * bucket_bits_) >> 3);
  }
  uint64_t BucketReadBytes() const { return bucket_read_bytes_; }

  // Whether either bucket holds fp: Contains(b1, fp) || Contains(b2, fp), the query of a key.
  //
  // First the low parts alone, without decoding a rank: a key is absent from both buckets unless
  // its low r bits equal one of their 8 low parts, which for an absent key happens with chance
  // about 8 / 2^r (0.2% at f = 16, 3% at f = 12). So a miss almost always stops at two loads and
  // two SWAR tests, as cheap as the plain table's query; the branch goes the same way for nearly
  // every absent key, and for every present one.
  bool ContainsEither(uint64_t b1, uint64_t b2, uint32_t fp) const {
    const uint64_t low_lanes = (fp & low_mask_) * low_lane_ones_;
    const bool may1 = LowsMayHold(b1, low_lanes);
    const bool may2 = LowsMayHold(b2, low_lanes);
    if (!((static_cast<int>(may1) | static_cast<int>(may2)) != 0)) return false;
    // A present key decodes the bucket whose low parts matched (both, in the rare case that both
    // did). A hit still costs more than with the plain table (the decode), which is small beside
    // the data block read that follows a hit.
    if (may1 != may2) return Contains(may1 ? b1 : b2, fp);
    return (static_cast<int>(Contains(b1, fp)) | static_cast<int>(Contains(b2, fp))) != 0;
  }

  // Whether any slot of the bucket holds fp (1 <= fp < 2^f).
  bool Contains(uint64_t bucket, uint32_t fp) const {
    using semi_sorted_internal::kNibblesOfRank;
    using semi_sorted_internal::kNumRanks;
    const uint64_t bit = bucket * bucket_bits_;
    const uint32_t rank = RankIn(LoadBitsFrom(data_, bit));
    if (rank >= kNumRanks) return true;  // never written: not understood
    const uint32_t nibbles = kNibblesOfRank[rank];
    if (low_bits_ <= 12) {
      // f <= 16: the 4 fingerprints as 4 lanes of 16 bits, then Mycroft's "has a zero lane" on
      // them XOR broadcast(fp), exact for existence. The low parts are one load: 4r <= 48 bits.
      const uint64_t lows = LowsAt(bit) & all_lows_mask_;
      const int r = low_bits_;
      const uint64_t m = low_mask_;
      const uint64_t low_lanes = (lows & m) | ((lows >> r) & m) << 16 |
                                 ((lows >> (2 * r)) & m) << 32 | ((lows >> (3 * r)) & m) << 48;
      // Nibble s of the rank (n0 is the top one) into lane s.
      const uint64_t n = nibbles;
      const uint64_t nibble_lanes =
          (n >> 12) | ((n >> 8) & 0xf) << 16 | ((n >> 4) & 0xf) << 32 | (n & 0xf) << 48;
      const uint64_t x = (low_lanes | nibble_lanes << r) ^ (fp * kLaneOnes);
      return ((x - kLaneOnes) & ~x & kLaneHighs) != 0;
    }
    // f > 16: slot by slot.
    bool found = false;
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) found |= FingerprintIn(bit, nibbles, s) == fp;
    return found;
  }

  // Whether the bucket's rank is one Encode writes (a reader answers "may match" for the others).
  bool Understood(uint64_t bucket) const {
    return RankIn(LoadBitsFrom(data_, bucket * bucket_bits_)) < semi_sorted_internal::kNumRanks;
  }
  bool AllUnderstood() const {
    for (uint64_t b = 0; b < num_buckets_; ++b) {
      if (!Understood(b)) return false;
    }
    return true;
  }
  // Slot s of a bucket (s = 0 holds the smallest fingerprint), or kNotUnderstood for a bucket
  // whose rank was never written (at f = 32 also a fingerprint: ask Understood first).
  static constexpr uint32_t kNotUnderstood = 0xffffffff;
  uint32_t Slot(uint64_t bucket, int slot) const;

  // Writes the semi-sorted form of a plain table of the same shape (f >= kMinFingerprintBits)
  // into `out`, BytesFor(num_buckets, f) bytes.
  static void Encode(const CuckooTableView& plain, uint8_t* out);
  // The reverse: writes every bucket into an empty plain table of the same shape. False if a
  // bucket was not understood.
  bool Decode(CuckooTable* plain) const;

 private:
  // The rank in the bits loaded at a bucket's first bit.
  static uint32_t RankIn(uint64_t bucket_bits) {
    return static_cast<uint32_t>(bucket_bits) & LowBitsMask(semi_sorted_internal::kRankBits);
  }

  // The fingerprint in slot s of the bucket at `bit`, whose rank decodes to `nibbles`.
  uint32_t FingerprintIn(uint64_t bit, uint32_t nibbles, int slot) const {
    const uint32_t nibble = (nibbles >> (12 - semi_sorted_internal::kNibbleBits * slot)) & 0xf;
    const uint64_t low_bit =
        bit + semi_sorted_internal::kRankBits + static_cast<uint64_t>(slot) * low_bits_;
    return nibble << low_bits_ | (static_cast<uint32_t>(LoadBitsFrom(data_, low_bit)) & low_mask_);
  }

  // Whether a low part of the bucket may equal the query's, broadcast to every lane: Mycroft's
  // "has a zero lane" on the r-bit lanes XOR low_lanes (exact for existence, any lane width). Also
  // true for a bucket whose rank was never written: it is not understood, so it may hold anything.
  bool LowsMayHold(uint64_t bucket, uint64_t low_lanes) const {
    using semi_sorted_internal::kNumRanks;
    using semi_sorted_internal::kRankBits;
    const uint64_t bit = bucket * bucket_bits_;
    const uint64_t first = LoadBitsFrom(data_, bit);  // the rank (and the lows, when they fit)
    const uint64_t lows =
        whole_bucket_load_ ? first >> kRankBits : LoadBitsFrom(data_, bit + kRankBits);
    const uint64_t x = (lows & low_lanes_mask_) ^ low_lanes;
    bool hit = (((x - low_lane_ones_) & ~x & low_lane_highs_) != 0) | (RankIn(first) >= kNumRanks);
    if (low_lanes_ == 2) {  // f > 18: the other two
      const uint64_t other =
          bit + semi_sorted_internal::kRankBits + 2 * static_cast<uint64_t>(low_bits_);
      const uint64_t y = (LoadBitsFrom(data_, other) & low_lanes_mask_) ^ low_lanes;
      hit |= ((y - low_lane_ones_) & ~y & low_lane_highs_) != 0;
    }
    return hit;
  }

  // The bits of a bucket from its low parts on. When the whole bucket fits one 64-bit load (4f - 4
  // <= 57, f <= 15) they come from the load at the bucket's first byte, the one that reads its
  // rank, so a query touches one 8-byte window per bucket, as with the plain table (a second
  // window can be a second cache miss).
  uint64_t LowsAt(uint64_t bucket_bit) const {
    return whole_bucket_load_ ? LoadBitsFrom(data_, bucket_bit) >> semi_sorted_internal::kRankBits
                              : LoadBitsFrom(data_, bucket_bit + semi_sorted_internal::kRankBits);
  }

  static constexpr uint64_t kLaneOnes = 0x0001'0001'0001'0001ull;
  static constexpr uint64_t kLaneHighs = 0x8000'8000'8000'8000ull;

 protected:
  // Sorts a bucket's 4 fingerprints and writes them as the bucket at `bit` of `out`.
  static void EncodeBucket(uint32_t* fp, int low_bits, uint64_t bit, uint8_t* out);

  const uint8_t* data_ = nullptr;
  uint64_t bucket_bits_ = 0;
  int low_bits_ = 0;  // r = f - 4
  uint64_t num_buckets_ = 0;
  uint32_t low_mask_ = 0;       // r bits
  uint64_t all_lows_mask_ = 0;  // 4r bits, when r <= 12
  int low_lanes_ = 0;           // low parts per load in LowsMayHold: 4 or 2
  uint64_t low_lane_ones_ = 0;  // the lowest bit of each r-bit lane
  uint64_t low_lane_highs_ = 0;
  uint64_t low_lanes_mask_ = 0;
  bool whole_bucket_load_ = false;  // the bucket fits the 57 bits one load gives
  uint64_t bucket_read_bytes_ = kLoadBitsBytes;
};

// Read-write access over BytesFor(num_buckets, f) bytes that the caller owns, every bucket
// understood (a zeroed table is: rank 0, every slot empty). The interface of CuckooTable that the
// placement walk needs (core/cuckoo/placement.h), but a bucket holds a multiset: its slots are its
// fingerprints sorted, so a change may move the others to other slots, and a walk is undone by
// value (ReplaceOne), not by slot.
class SemiSortedTable : public SemiSortedTableView {
 public:
  SemiSortedTable(uint8_t* data, uint64_t num_buckets, int fingerprint_bits)
      : SemiSortedTableView(data, num_buckets, fingerprint_bits), mutable_data_(data) {}

  // Replaces the fingerprint in slot `slot` with fp (0 empties it); the bucket is sorted again.
  void SetSlot(uint64_t bucket, int slot, uint32_t fp) {
    uint32_t fps[kCuckooSlotsPerBucket];
    Read(bucket, fps);
    fps[slot] = fp;
    EncodeBucket(fps, low_bits_, bucket * bucket_bits_, mutable_data_);
  }
  int FindSlot(uint64_t bucket, uint32_t fp) const {
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) {
      if (Slot(bucket, s) == fp) return s;
    }
    return -1;
  }
  // Puts fp into an empty slot of the bucket; false if it has none.
  bool TryPut(uint64_t bucket, uint32_t fp) {
    const int s = FindSlot(bucket, 0);
    if (s < 0) return false;
    SetSlot(bucket, s, fp);
    return true;
  }
  // Replaces one copy of `from` in the bucket with `to`; false if the bucket holds no `from`.
  bool ReplaceOne(uint64_t bucket, uint32_t from, uint32_t to) {
    const int s = FindSlot(bucket, from);
    if (s < 0) return false;
    SetSlot(bucket, s, to);
    return true;
  }

 private:
  void Read(uint64_t bucket, uint32_t* fps) const {
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) fps[s] = Slot(bucket, s);
  }

  uint8_t* mutable_data_;
};

}  // namespace sstfilter
