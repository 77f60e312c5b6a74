// SPDX-License-Identifier: Apache-2.0
#include "core/ribbon/math.h"

#include <algorithm>
#include <cmath>

#include "core/sizing.h"

namespace sstfilter {

Result<uint64_t> RibbonSlotsFor(uint64_t num_keys) {
  if (num_keys == 0) return Err(kNoKeysError);
  const double n = static_cast<double>(num_keys);
  const double margin = std::max(0.0, 0.0165 * std::log(n) - 0.105);
  const double rows = std::ceil(n * (1 + margin)) + (kRibbonCoeffBits - 1);
  if (rows > static_cast<double>(kRibbonMaxSlots))
    return Err(OverflowError("ribbon filter", num_keys));
  const uint64_t blocks = (static_cast<uint64_t>(rows) + kRibbonCoeffBits - 1) / kRibbonCoeffBits;
  return blocks * kRibbonCoeffBits;
}

Result<int> RibbonFingerprintBitsForBudget(double bits_per_key, uint64_t num_keys) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (num_keys == 0) return kRibbonMinFingerprintBits;
  const Result<uint64_t> slots = RibbonSlotsFor(num_keys);
  if (!slots.ok()) return Err(slots.error());
  const double r =
      std::floor(bits_per_key * static_cast<double>(num_keys) / static_cast<double>(slots.value()));
  return static_cast<int>(
      std::clamp(r, double{kRibbonMinFingerprintBits}, double{kRibbonMaxFingerprintBits}));
}

}  // namespace sstfilter
