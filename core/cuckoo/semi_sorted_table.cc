// SPDX-License-Identifier: Apache-2.0
#include "core/cuckoo/semi_sorted_table.h"

#include <algorithm>
#include <array>

namespace sstfilter {

using semi_sorted_internal::kNibbleBits;
using semi_sorted_internal::kNibblesOfRank;
using semi_sorted_internal::kNumRanks;
using semi_sorted_internal::kRankBits;

uint32_t SemiSortedTableView::Slot(uint64_t bucket, int slot) const {
  const uint64_t bit = bucket * bucket_bits_;
  const uint32_t rank = RankIn(LoadBitsFrom(data_, bit));
  if (rank >= kNumRanks) return kNotUnderstood;
  return FingerprintIn(bit, kNibblesOfRank[rank], slot);
}

namespace {

// Sorted 4-tuples of nibbles whose values are all at least v, for tuples of k = 1, 2, 3
// nibbles: C(16 - v + k - 1, k). kBefore[k][v] sums them over first values below v: the tuples
// that come before any tuple starting with v, among those of k + 1 nibbles that start at least
// where the enclosing tuple's previous nibble did.
constexpr std::array<std::array<uint32_t, 17>, 4> MakeBefore() {
  std::array<std::array<uint32_t, 17>, 4> before{};
  for (int k = 1; k <= 3; ++k) {
    uint32_t sum = 0;
    for (int v = 0; v <= 16; ++v) {
      before[k][v] = sum;
      // C(16 - v + k - 1, k), the multisets of k values from [v, 15].
      uint64_t c = 1;
      for (int j = 1; j <= k; ++j) c = c * (16 - v + k - j) / j;
      sum += static_cast<uint32_t>(v < 16 ? c : 0);
    }
  }
  return before;
}
constexpr auto kBefore = MakeBefore();

// The rank of a sorted tuple (a <= b <= c <= d), without a search: the tuples before it that
// start lower, then those that start with a and continue lower, and so on.
constexpr uint32_t RankOf(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return kBefore[3][a] + (kBefore[2][b] - kBefore[2][a]) + (kBefore[1][c] - kBefore[1][b]) +
         (d - c);
}
static_assert(RankOf(0, 0, 0, 0) == 0 && RankOf(0, 0, 0, 1) == 1 &&
                  RankOf(15, 15, 15, 15) == kNumRanks - 1,
              "RankOf numbers the tuples as kNibblesOfRank does");

// Orders x and y without a branch (a build's fingerprints are random: branches would mispredict).
inline void CompareExchange(uint32_t& x, uint32_t& y) {
  const uint32_t lo = std::min(x, y);
  y = std::max(x, y);
  x = lo;
}

}  // namespace

uint32_t SemiSortedRankForTesting(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return RankOf(a, b, c, d);
}

void SemiSortedTableView::EncodeBucket(uint32_t* fp, int low_bits, uint64_t bit, uint8_t* out) {
  // A sorting network of 4 inputs.
  CompareExchange(fp[0], fp[1]);
  CompareExchange(fp[2], fp[3]);
  CompareExchange(fp[0], fp[2]);
  CompareExchange(fp[1], fp[3]);
  CompareExchange(fp[1], fp[2]);
  // Sorted fingerprints have non-decreasing nibbles.
  const int r = low_bits;
  StoreField(out, bit, kRankBits, RankOf(fp[0] >> r, fp[1] >> r, fp[2] >> r, fp[3] >> r));
  for (int s = 0; s < kCuckooSlotsPerBucket; ++s) {
    StoreField(out, bit + kRankBits + static_cast<uint64_t>(s) * r, r, fp[s] & LowBitsMask(r));
  }
}

void SemiSortedTableView::Encode(const CuckooTableView& plain, uint8_t* out) {
  const int f = plain.fingerprint_bits();
  const uint64_t bucket_bits = BucketBits(f);
  for (uint64_t i = 0; i < plain.num_buckets(); ++i) {
    uint32_t fp[kCuckooSlotsPerBucket];
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) fp[s] = plain.Slot(i, s);
    EncodeBucket(fp, f - kNibbleBits, i * bucket_bits, out);
  }
}

bool SemiSortedTableView::Decode(CuckooTable* plain) const {
  for (uint64_t i = 0; i < num_buckets_; ++i) {
    if (!Understood(i)) return false;
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) plain->SetSlot(i, s, Slot(i, s));
  }
  return true;
}

}  // namespace sstfilter
