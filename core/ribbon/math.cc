// SPDX-License-Identifier: Apache-2.0
#include "core/ribbon/math.h"

#include <algorithm>
#include <cmath>

#include "core/sizing.h"

namespace sstfilter {
namespace {

// The starts both tables give n keys (math.h): n (1 + e) rounded up.
double StartsFor(uint64_t num_keys) {
  const double n = static_cast<double>(num_keys);
  return std::ceil(n * (1 + std::max(0.0, 0.0165 * std::log(n) - 0.105)));
}

}  // namespace

Result<uint64_t> RibbonSlotsFor(uint64_t num_keys) {
  if (num_keys == 0) return Err(kNoKeysError);
  const double rows = StartsFor(num_keys) + (kRibbonCoeffBits - 1);
  if (rows > static_cast<double>(kRibbonMaxSlots))
    return Err(OverflowError("ribbon filter", num_keys));
  const uint64_t blocks = (static_cast<uint64_t>(rows) + kRibbonCoeffBits - 1) / kRibbonCoeffBits;
  return blocks * kRibbonCoeffBits;
}

Result<RibbonTable> RibbonTableFor(uint64_t num_keys) {
  if (num_keys == 0) return Err(kNoKeysError);
  if (num_keys > kRibbonWrappedMaxKeys) {
    const Result<uint64_t> slots = RibbonSlotsFor(num_keys);
    if (!slots.ok()) return Err(slots.error());
    return RibbonTable{slots.value(), false};
  }
  return RibbonTable{std::max(num_keys + RibbonWrappedSpareSlots(num_keys), kRibbonWrappedMinSlots),
                     true};
}

uint64_t RibbonWrappedSpareSlots(uint64_t num_keys) {
  const double thousands = static_cast<double>(num_keys) / 1000;
  const auto quadratic =
      std::max<uint64_t>(4, static_cast<uint64_t>(std::ceil(5.2 * thousands * thousands)));
  const uint64_t linear = static_cast<uint64_t>(StartsFor(num_keys)) - num_keys + 8;
  return std::min(quadratic, linear);
}

Result<int> RibbonFingerprintBitsForBudget(double bits_per_key, uint64_t num_keys) {
  if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
  if (num_keys == 0) return kRibbonMinFingerprintBits;
  const Result<RibbonTable> table = RibbonTableFor(num_keys);
  if (!table.ok()) return Err(table.error());
  const double budget_bits = bits_per_key * static_cast<double>(num_keys);
  int r = static_cast<int>(
      std::clamp(std::floor(budget_bits / static_cast<double>(table.value().slots)),
                 double{kRibbonMinFingerprintBits}, double{kRibbonMaxFingerprintBits}));
  // A wrapped table's last bits round up to a whole byte.
  while (r > kRibbonMinFingerprintBits &&
         8 * static_cast<double>(RibbonTableBytes(table.value(), r)) > budget_bits) {
    --r;
  }
  return r;
}

}  // namespace sstfilter
