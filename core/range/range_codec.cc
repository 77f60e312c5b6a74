// SPDX-License-Identifier: Apache-2.0
#include "core/range/range_codec.h"

#include <algorithm>
#include <cstring>

namespace sstfilter {
namespace range_detail {
namespace {

void PutWindow(Window w, std::string* out) {
  uint8_t buf[8];
  StoreLE64(buf, static_cast<uint64_t>(w));
  out->append(reinterpret_cast<const char*>(buf), 8);
  StoreLE64(buf, static_cast<uint64_t>(w >> 64));
  out->append(reinterpret_cast<const char*>(buf), 8);
}

Window GetWindow(const uint8_t* p) {
  return (static_cast<Window>(LoadLE64(p + 8)) << 64) | LoadLE64(p);
}

}  // namespace

void AppendHeader(const RangeHeader& h, std::string* out) {
  out->append(reinterpret_cast<const char*>(kMagic), 4);
  out->push_back(static_cast<char>(kVersion));
  out->push_back(static_cast<char>(h.has_deletions ? kFlagDeletions : 0));
  out->push_back(static_cast<char>(h.window_bytes));
  out->push_back(static_cast<char>(h.low_bits));
  out->push_back(static_cast<char>(h.block_bits));
  out->push_back(static_cast<char>(h.prefix_bytes));
  out->append(6, '\0');  // two zero bytes, then the check word
  uint8_t buf[8];
  StoreLE64(buf, h.keys);
  out->append(reinterpret_cast<const char*>(buf), 8);
  StoreLE64(buf, h.hash_range);
  out->append(reinterpret_cast<const char*>(buf), 8);
  PutWindow(h.min_window, out);
  PutWindow(h.max_window, out);
}

bool ReadHeader(const uint8_t* data, size_t size, RangeHeader* h) {
  if (data == nullptr || size < kHeaderBytes || std::memcmp(data, kMagic, 4) != 0 ||
      data[4] != kVersion || (data[5] & ~kFlagDeletions) != 0 || data[6] > kMaxWindowBytes ||
      data[7] > kMaxEliasFanoLowBits || data[8] > 62 || data[10] != 0 || data[11] != 0) {
    return false;
  }
  h->has_deletions = (data[5] & kFlagDeletions) != 0;
  h->window_bytes = data[6];
  h->low_bits = data[7];
  h->block_bits = data[8];
  h->prefix_bytes = data[9];
  h->keys = LoadLE64(data + 16);
  h->hash_range = LoadLE64(data + 24);
  h->min_window = GetWindow(data + 32);
  h->max_window = GetWindow(data + 48);
  return true;
}

void AppendString(std::string_view s, std::string* out) {
  uint8_t buf[4];
  StoreLE32(buf, static_cast<uint32_t>(s.size()));
  out->append(reinterpret_cast<const char*>(buf), 4);
  out->append(s.data(), s.size());
}

bool ReadString(const uint8_t* data, size_t size, size_t* pos, std::string_view* s) {
  if (size - *pos < 4) return false;
  const uint32_t length = LoadLE32(data + *pos);
  *pos += 4;
  if (size - *pos < length) return false;
  *s = std::string_view(reinterpret_cast<const char*>(data + *pos), length);
  *pos += length;
  return true;
}

uint32_t CheckWord(const uint8_t* data, size_t size) {
  return static_cast<uint32_t>(
      KeyHash(data, kCheckWordOffset) ^
      Mix64(KeyHash(data + kCheckWordOffset + 4, size - kCheckWordOffset - 4)));
}

void SealCheckWord(std::string* out) {
  uint8_t buf[4];
  StoreLE32(buf, CheckWord(reinterpret_cast<const uint8_t*>(out->data()), out->size()));
  std::memcpy(&(*out)[kCheckWordOffset], buf, 4);
}

size_t CommonPrefix(std::string_view a, std::string_view b, size_t limit) {
  const size_t n = std::min({a.size(), b.size(), limit});
  // 8 bytes at a time (every key is compared with the prefix): the first byte that differs is
  // the highest of the big-endian words' difference.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t x = LoadBE64(a.data() + i) ^ LoadBE64(b.data() + i);
    if (x != 0) return i + static_cast<size_t>(__builtin_clzll(x)) / 8;
  }
  // Fewer than 8 bytes left to compare: one more word where both strings hold 8 bytes from i.
  if (i < n && a.size() - i >= 8 && b.size() - i >= 8) {
    const uint64_t x = LoadBE64(a.data() + i) ^ LoadBE64(b.data() + i);
    return x == 0 ? n : std::min(n, i + static_cast<size_t>(__builtin_clzll(x)) / 8);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace range_detail
}  // namespace sstfilter
