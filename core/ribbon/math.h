// SPDX-License-Identifier: Apache-2.0
// Sizing math of the standard Ribbon filter (Dillinger and Walzer, "Ribbon filter: practically
// smarter than Bloom and Xor", 2021) with 64-bit coefficient rows: each key is one equation over
// GF(2), "the XOR of the solution rows picked by the key's 64-bit coefficient word, starting at
// its start slot, equals its r-bit fingerprint"; an absent key matches with chance 2^-r. The table
// has num_slots rows of r bits, so a filter costs r * num_slots / n bits per key.
//
// The system is banded (each key's 64 columns are consecutive), so elimination as keys arrive
// solves it in one pass, and it is solvable with high probability once the slots exceed the keys
// by a margin that grows with ln n (measured with this code's hashing, the share of first seeds
// that solve, 40 to 200 key sets per size):
//
//   keys        1k    2k    5k    10k   20k   50k   100k  200k  1M
//   slots/key   1.088 1.056 1.050 1.056 1.062 1.075 1.086 1.097 1.123
//   solved      1.00  0.98  0.88  0.90  0.86  0.88  0.95  0.90  0.90
//
// So below about 233,000 keys a Ribbon table is smaller than a binary fuse table (core/fuse/math.h:
// 1.30 cells per key at 2,000 keys, 1.18 at 20,000), above 264,000 the fuse table is, and between
// them it depends on the fuse table's rounding (FilterBytes compared in steps of 1,000 keys at 7,
// 10 and 13 bits); Leveled prices both at each filter's key count. Shared validation and limits:
// core/sizing.h.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace sstfilter {

// Fingerprint widths (bits per slot): 1 bit is a 50% filter; 32 bits reach 2.3e-10.
inline constexpr int kRibbonMinFingerprintBits = 1;
inline constexpr int kRibbonMaxFingerprintBits = 32;
// The coefficient row of a key spans this many consecutive slots; the table is whole blocks of
// this many slots (the storage interleaves a block's r solution columns as r 64-bit words).
inline constexpr int kRibbonCoeffBits = 64;
// Largest table: 2^40 slots (a trillion keys), far beyond any SST file, and well inside 64-bit
// arithmetic at 32 bits per slot.
inline constexpr uint64_t kRibbonMaxSlots = uint64_t{1} << 40;

inline bool ValidRibbonFingerprintBits(int r) {
  return r >= kRibbonMinFingerprintBits && r <= kRibbonMaxFingerprintBits;
}

// The slots for n distinct keys (n >= 1): n (1 + e) rounded up, plus the 63 slots past the last
// start, rounded up to whole 64-slot blocks, where e = max(0, 0.0165 ln n - 0.105) (fitted to the
// measurements above so that a seed solves at least 5 times in 6).
Result<uint64_t> RibbonSlotsFor(uint64_t num_keys);
// Bytes of a table: num_slots / 64 blocks of r 64-bit words.
inline uint64_t RibbonTableBytes(uint64_t num_slots, int fingerprint_bits) {
  return num_slots / 8 * static_cast<uint64_t>(fingerprint_bits);
}

// Wrapped tables (the kind's version 2). A key's 64 slots run on from its start past the table's
// last slot to its first, so every slot is a start, and the table is any whole number of slots,
// at least 64: there are no 63 slots past the last start, and no rounding up to whole blocks (up
// to 126 slots between them, 12% of a table of 1,000 keys). The elimination and back substitution
// then meet around the table: the last rows' equations reach the first 63 rows, whose values the
// build solves for as a small dense system (ribbon.h, RibbonSolveWrapped). That system's cost
// grows with the free rows past 63 that it carries, so wrapped tables are for small sets, which
// is where the slots they save count: SST files and filter partitions of a few thousand keys.
inline constexpr uint64_t kRibbonWrappedMaxKeys = 16384;
// A wrapped table has at most max(64, 2n) slots (its spare slots are at most max(4, n)): they fit
// the compact trailer's 16 bits (core/format.h).
static_assert(2 * kRibbonWrappedMaxKeys <= 0xFFFF, "wrapped slots fit 16 bits");
// The smallest wrapped table: every key's 64 slots are distinct.
inline constexpr uint64_t kRibbonWrappedMinSlots = kRibbonCoeffBits;

// A table's shape: its slots, and whether it wraps (version 2) or stops 63 slots past its last
// start (version 1).
struct RibbonTable {
  uint64_t slots = 0;
  bool wrapped = false;
};
// The slots a wrapped table of n keys has past n: 5.2 (n / 1000)^2 rounded up, at least 4, or,
// once that is more (from about 8,800 keys), the slots past n of RibbonSlotsFor's starts plus 8.
// Two things fail a seed. First, a run of slots holding more starts than it has slots plus 63;
// around a wrapped table the starts' excess over a run is a random walk tied down at both ends,
// spreading as sqrt(n), which the quadratic term outgrows. Second, as in any random binary
// system, equations that happen to depend on each other; there each spare slot about halves the
// chance (the first seed solved 58%, 77%, 89% and 95% of 400 key sets of 100 to 1,000 keys with
// 2, 3, 4 and 6 spare slots). With none, a seed solves about 1 time in 12 at 1,000 keys. These
// spare slots keep the first seed solving at least about 2 times in 3 at every size
// (tests/core/ribbon_test.cc), for at most 2.1% more slots than keys up to 4,000 keys.
uint64_t RibbonWrappedSpareSlots(uint64_t num_keys);
// The table for n distinct keys (n >= 1): wrapped for at most kRibbonWrappedMaxKeys keys, with
// n + RibbonWrappedSpareSlots(n) slots, at least 64; larger sets RibbonSlotsFor's.
Result<RibbonTable> RibbonTableFor(uint64_t num_keys);
// Bytes of a wrapped table: its num_slots / 64 whole blocks as above, then its last
// num_slots % 64 = t rows as r planes of t bits each (bit i of plane k: bit k of row
// 64 (num_slots / 64) + i), packed from bit 0 of the first byte, the last byte's unused high bits
// 0.
inline uint64_t RibbonWrappedTableBytes(uint64_t num_slots, int fingerprint_bits) {
  const uint64_t r = static_cast<uint64_t>(fingerprint_bits);
  return num_slots / kRibbonCoeffBits * 8 * r + (num_slots % kRibbonCoeffBits * r + 7) / 8;
}
inline uint64_t RibbonTableBytes(const RibbonTable& table, int fingerprint_bits) {
  return table.wrapped ? RibbonWrappedTableBytes(table.slots, fingerprint_bits)
                       : RibbonTableBytes(table.slots, fingerprint_bits);
}
// The widest fingerprint whose table (RibbonTableFor's) for n keys fits a budget of b bits per key,
// at least 1.
Result<int> RibbonFingerprintBitsForBudget(double bits_per_key, uint64_t num_keys);
// The slots per key that stand for "large sets" (a million keys: 1.123, rounded up). Unlike a
// fuse table's, a Ribbon table's slots per key keep growing with ln n, so there is no limit to
// quote; at this cost a fuse filter (1.075) is always cheaper, as it is from about 264,000 keys.
inline constexpr double kRibbonNominalSlotsPerKey = 1.125;

}  // namespace sstfilter
