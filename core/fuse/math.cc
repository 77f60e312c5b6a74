// SPDX-License-Identifier: Apache-2.0
#include "core/fuse/math.h"

#include <algorithm>
#include <cmath>

#include "core/sizing.h"

namespace sstfilter {

std::string FuseFingerprintBitsError(int w) {
  return FingerprintBitsError(w, kFuseMinFingerprintBits, kFuseMaxFingerprintBits);
}

Result<FuseShape> FuseShapeFor(uint64_t num_keys, int arity) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (arity != 3 && arity != 4) return Err("fuse arity must be 3 or 4");
  // Both formulas divide by ln n: below 2 keys they are evaluated at 2.
  const double n = static_cast<double>(std::max<uint64_t>(num_keys, 2));
  const double exponent = arity == 3 ? std::floor(std::log(n) / std::log(3.33) + 2.25)
                                     : std::floor(std::log(n) / std::log(2.91) - 0.5);
  const double factor =
      arity == 3 ? std::max(1.125, 0.875 + 0.25 * std::log(1e6) / std::log(n))
                 : std::max(kFuse4LargeSizeFactor, 0.77 + 0.305 * std::log(600000.0) / std::log(n));
  FuseShape s;
  s.arity = arity;
  s.segment_length_log2 =
      static_cast<int>(std::clamp(exponent, 1.0, double{kFuseMaxSegmentLengthLog2}));
  const double capacity = std::round(n * factor);
  if (capacity >= kMaxFilterBits / kFuseMaxFingerprintBits) {
    return Err(OverflowError("fuse filter", num_keys));
  }
  const uint64_t length = s.segment_length();
  const uint64_t segments = std::max<uint64_t>(
      (static_cast<uint64_t>(capacity) + length - 1) / length, static_cast<uint64_t>(arity));
  s.segment_count = segments - (arity - 1);
  s.num_cells = segments * length;
  return s;
}

Result<FuseShape> FuseShapeFor(uint64_t num_keys) {
  return FuseShapeFor(num_keys, num_keys >= kFuse4MinKeys ? 4 : 3);
}

uint64_t FuseTableBytes(uint64_t num_cells, int fingerprint_bits) {
  return (num_cells * fingerprint_bits + 7) / 8 + kFusePadBytes;
}

}  // namespace sstfilter
