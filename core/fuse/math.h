// SPDX-License-Identifier: Apache-2.0
// Sizing math of the binary fuse filter (Graf and Lemire, "Binary Fuse Filters: Fast and Smaller
// Than Xor Filters", ACM JEA 2022). Each key sets the XOR of `arity` cells, one in each of `arity`
// consecutive segments of segment_length cells, to its w-bit fingerprint; an absent key matches
// with chance 2^-w. The table has about size_factor * n cells, so a filter costs
// size_factor * w bits per key: 1.075 w (4-wise) or 1.125 w (3-wise) at a million keys and up,
// more for small sets. Shared validation and limits: core/sizing.h.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace sstfilter {

// Fingerprint widths: 1 bit is a 50% filter; 32 bits reach 2.3e-10, and a wider cell would no
// longer fit the reader's one 64-bit load at any bit offset.
inline constexpr int kFuseMinFingerprintBits = 1;
inline constexpr int kFuseMaxFingerprintBits = 32;
// Segments are at most 2^18 cells: the in-segment offsets are 18-bit fields of the key's hash.
inline constexpr int kFuseMaxSegmentLengthLog2 = 18;
inline constexpr int kFuseOffsetFieldBits = 18;
// The 4-wise table's size factor for large sets: the bits per key of a w-bit filter tend to
// 1.075 w (3-wise: 1.125 w).
inline constexpr double kFuse4LargeSizeFactor = 1.075;

inline bool ValidFuseFingerprintBits(int w) {
  return w >= kFuseMinFingerprintBits && w <= kFuseMaxFingerprintBits;
}
// "fingerprint_bits must be in [1, 32], got W".
std::string FuseFingerprintBitsError(int w);

// The table of a fuse filter: arity segments overlap each key; the table holds
// (segment_count + arity - 1) segments of 2^segment_length_log2 cells.
struct FuseShape {
  int arity = 4;
  int segment_length_log2 = 0;
  uint64_t segment_count = 0;
  uint64_t num_cells = 0;
  uint64_t segment_length() const { return uint64_t{1} << segment_length_log2; }
};

// The shape for n distinct keys (n >= 1). 4-wise from kFuse4MinKeys keys up, 3-wise below.
// Segment length and size factor follow the reference implementation's formulas (fitted by its
// authors to keep construction likely to succeed at the first or second seed):
//   3-wise: L = 2^floor(ln n / ln 3.33 + 2.25), factor max(1.125, 0.875 + 0.25 ln(1e6) / ln n)
//   4-wise: L = 2^floor(ln n / ln 2.91 - 0.5),  factor max(1.075, 0.77 + 0.305 ln(6e5) / ln n)
// with L at most 2^18 and at least 2, then round(n * factor) cells rounded up to whole
// segments, and at least `arity` segments.
Result<FuseShape> FuseShapeFor(uint64_t num_keys);
// The shape of the given arity (3 or 4), for measurements and tests.
Result<FuseShape> FuseShapeFor(uint64_t num_keys, int arity);
inline constexpr uint64_t kFuse4MinKeys = 1000;

// Bytes of a table of num_cells cells of w bits: the packed cells rounded up to a byte, plus 8
// pad bytes so that the reader's 64-bit load at any cell's first byte stays inside the table.
uint64_t FuseTableBytes(uint64_t num_cells, int fingerprint_bits);
inline constexpr uint64_t kFusePadBytes = 8;

}  // namespace sstfilter
