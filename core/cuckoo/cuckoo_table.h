// SPDX-License-Identifier: Apache-2.0
// The bucket table of a cuckoo filter: num_buckets buckets of 4 slots, each slot an f-bit
// fingerprint (4 <= f <= 32), bit-packed with no padding between slots, so a 12-bit fingerprint
// costs 12 bits. The value 0 means "empty slot"; fingerprints are never 0.
//
// Byte layout: slot s of bucket i holds bits [(4i + s) f, (4i + s + 1) f) of the little-endian bit
// string formed by the bytes (bit j is bit j & 7 of byte j >> 3). The table ends with
// kPadBytes zero bytes so that an 8-byte load at the byte where any slot or bucket starts stays
// inside the table: readers never touch a byte past it.
//
// This class only stores and matches fingerprints; which buckets a key uses and what its
// fingerprint is belong to the filter (core/cuckoo/cuckoo.h).
#pragma once

#include <cstdint>

#include "core/cuckoo/math.h"
#include "core/format.h"
#include "core/packed_fields.h"

namespace sstfilter {

// Read-only access, for readers over bytes they do not own.
class CuckooTableView {
 public:
  static constexpr uint64_t kPadBytes = 8;
  // The widest fingerprint whose half bucket (2 slots) fits one 64-bit load at any bit offset.
  static constexpr int kMaxHalfBucketBits = 28;

  // Bytes of a table: the packed slots rounded up to a byte, plus kPadBytes. The caller keeps
  // num_buckets * 4 * fingerprint_bits below 2^63 (sizing and the trailer parser do).
  static uint64_t BytesFor(uint64_t num_buckets, int fingerprint_bits) {
    return (num_buckets * kCuckooSlotsPerBucket * fingerprint_bits + 7) / 8 + kPadBytes;
  }

  // How Contains reads a bucket of f-bit slots (its comment says why each fits its loads).
  enum class BucketLoads {
    kWhole,       // f <= 16: one load, 4 SWAR lanes
    kHalves,      // f <= kMaxHalfBucketBits: two loads of 2 slots, 2 SWAR lanes each
    kSlotBySlot,  // wider: four loads, one per slot
  };
  static BucketLoads LoadsFor(int fingerprint_bits) {
    return fingerprint_bits <= 16                   ? BucketLoads::kWhole
           : fingerprint_bits <= kMaxHalfBucketBits ? BucketLoads::kHalves
                                                    : BucketLoads::kSlotBySlot;
  }

  CuckooTableView() = default;
  CuckooTableView(const uint8_t* data, uint64_t num_buckets, int fingerprint_bits)
      : data_(data),
        num_buckets_(num_buckets),
        fingerprint_bits_(fingerprint_bits),
        loads_(LoadsFor(fingerprint_bits)) {
    const int f = fingerprint_bits;
    slot_mask_ = LowBitsMask(f);
    // The SWAR constants of Contains, and the bit its last load starts at.
    // An empty view (f = 0: a default or zero-bucket table) has no lanes, and nothing matches.
    int lanes = 0;
    uint64_t last_load_bit = 0;
    switch (loads_) {
      case BucketLoads::kWhole:
        lanes = f >= kCuckooMinFingerprintBits ? 4 : 0;
        break;
      case BucketLoads::kHalves:
        lanes = 2;
        last_load_bit = 2 * f;
        break;
      case BucketLoads::kSlotBySlot:
        last_load_bit = 3 * f;
        break;
    }
    if (lanes > 0) {
      lane_ones_ = 0;
      for (int s = 0; s < lanes; ++s) lane_ones_ |= uint64_t{1} << (s * f);
      lane_highs_ = lane_ones_ << (f - 1);
      bucket_mask_ = lanes * f == 64 ? ~uint64_t{0} : (uint64_t{1} << (lanes * f)) - 1;
    }
    bucket_read_bytes_ = LoadSpanBytes(last_load_bit);
  }

  uint64_t num_buckets() const { return num_buckets_; }
  int fingerprint_bits() const { return fingerprint_bits_; }
  const uint8_t* data() const { return data_; }

  // Address of the first byte of a bucket, and the bytes from there that a query of the bucket
  // may read: what to prefetch.
  const uint8_t* BucketAddress(uint64_t bucket) const {
    return data_ + ((bucket * kCuckooSlotsPerBucket * fingerprint_bits_) >> 3);
  }
  uint64_t BucketReadBytes() const { return bucket_read_bytes_; }

  uint32_t Slot(uint64_t bucket, int slot) const {
    const uint64_t bit = (bucket * kCuckooSlotsPerBucket + slot) * fingerprint_bits_;
    return static_cast<uint32_t>(LoadBitsFrom(data_, bit)) & slot_mask_;
  }

  // Whether any slot of the bucket holds `fp` (fp = 0 asks for an empty slot).
  //
  // SWAR: "has a zero lane" (Mycroft's test) on the loaded slots XOR broadcast(fp), exact for
  // existence, since a borrow only enters a lane above a lane that is zero.
  //  - f <= 16: one load covers the bucket: 4f <= 64 bits starting at bit offset 0 or 4 (4f is a
  //    multiple of 4), and 4f + 4 <= 64 unless f = 16, whose buckets start on byte boundaries.
  //  - f <= 28: two loads, one per half bucket of 2 slots: 2f bits at a bit offset up to 7, and
  //    2f + 7 <= 63.
  bool Contains(uint64_t bucket, uint32_t fp) const {
    const int f = fingerprint_bits_;
    const uint64_t bit = bucket * kCuckooSlotsPerBucket * f;
    switch (loads_) {
      case BucketLoads::kWhole:
        return LanesHold(bit, fp);
      case BucketLoads::kHalves:
        return (static_cast<int>(LanesHold(bit, fp)) |
                static_cast<int>(LanesHold(bit + 2 * f, fp))) != 0;
      case BucketLoads::kSlotBySlot:
        break;
    }
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) {
      if (Slot(bucket, s) == fp) return true;
    }
    return false;
  }

  // The first slot of the bucket holding `fp`, or -1.
  int FindSlot(uint64_t bucket, uint32_t fp) const {
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) {
      if (Slot(bucket, s) == fp) return s;
    }
    return -1;
  }

 private:
  // Whether the lanes (4 or 2 slots, see Contains) that start at `bit` hold fp.
  bool LanesHold(uint64_t bit, uint32_t fp) const {
    const uint64_t slots = LoadBitsFrom(data_, bit) & bucket_mask_;
    const uint64_t x = slots ^ (fp * lane_ones_);
    return ((x - lane_ones_) & ~x & lane_highs_) != 0;
  }

  const uint8_t* data_ = nullptr;
  uint64_t num_buckets_ = 0;
  int fingerprint_bits_ = 0;
  BucketLoads loads_ = BucketLoads::kWhole;
  uint32_t slot_mask_ = 0;
  uint64_t lane_ones_ = 0;    // the lowest bit of each lane
  uint64_t lane_highs_ = 0;   // the highest bit of each lane
  uint64_t bucket_mask_ = 0;  // the bits of all lanes of one load
  uint64_t bucket_read_bytes_ = kLoadBitsBytes;
};

// Read-write access over a buffer of BytesFor(num_buckets, fingerprint_bits) bytes that the
// caller owns and zeroed (all slots empty).
class CuckooTable : public CuckooTableView {
 public:
  CuckooTable() = default;
  CuckooTable(uint8_t* data, uint64_t num_buckets, int fingerprint_bits)
      : CuckooTableView(data, num_buckets, fingerprint_bits), mutable_data_(data) {}

  void SetSlot(uint64_t bucket, int slot, uint32_t fp) {
    const int f = fingerprint_bits();
    StoreField(mutable_data_, (bucket * kCuckooSlotsPerBucket + slot) * f, f, fp);
  }

  // Puts fp into an empty slot of the bucket; false if the bucket is full.
  bool TryPut(uint64_t bucket, uint32_t fp) {
    const int s = FindSlot(bucket, 0);
    if (s < 0) return false;
    SetSlot(bucket, s, fp);
    return true;
  }

 private:
  uint8_t* mutable_data_ = nullptr;
};

}  // namespace sstfilter
