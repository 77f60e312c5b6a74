// SPDX-License-Identifier: Apache-2.0
// Fixed-width fields of at most 32 bits packed with no gaps into a little-endian bit string
// (bit j is bit j & 7 of byte j >> 3): the storage of the cuckoo table and of the fuse table.
// Every access is one unaligned 64-bit load (and store) at the field's first byte, so 8 bytes
// must be readable and writable from there: both tables end in 8 pad bytes for that.
#pragma once

#include <cstdint>

#include "core/format.h"

namespace sstfilter {

// The low `width` bits set, for 1 <= width <= 32.
inline constexpr uint32_t LowBitsMask(int width) {
  return width == 32 ? 0xffffffffu : (1u << width) - 1;
}

// The bits from bit offset `bit` on: a field starting there in the low bits, its neighbours
// above (at least 57 valid bits).
inline uint64_t LoadBitsFrom(const uint8_t* data, uint64_t bit) {
  return LoadLE64(data + (bit >> 3)) >> (bit & 7);
}
// The bytes LoadBitsFrom reads: 8, from the byte holding `bit`.
inline constexpr uint64_t kLoadBitsBytes = 8;
// The bytes from the first byte of a field that LoadBitsFrom calls starting at most
// `last_load_bit` bits into the field read, whatever the field's bit offset (0..7) in that
// byte: what to prefetch for them.
inline constexpr uint64_t LoadSpanBytes(uint64_t last_load_bit) {
  return ((7 + last_load_bit) >> 3) + kLoadBitsBytes;
}

// Writes the low `width` bits of value into the field at bit offset `bit`.
inline void StoreField(uint8_t* data, uint64_t bit, int width, uint32_t value) {
  uint8_t* p = data + (bit >> 3);
  const int shift = static_cast<int>(bit & 7);
  const uint64_t mask = static_cast<uint64_t>(LowBitsMask(width)) << shift;
  StoreLE64(p, (LoadLE64(p) & ~mask) | ((static_cast<uint64_t>(value) << shift) & mask));
}

}  // namespace sstfilter
