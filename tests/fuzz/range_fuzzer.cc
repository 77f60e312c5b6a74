// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the range filter (core/range/) two ways, chosen by the input's first byte.
//   even: the rest is a filter's bytes (hostile properties: what an SST file could hold), queried
//         with bounds drawn from the input; if they start with the magic, the check word is
//         recomputed first (as docs/format.md section 15 defines it), so that the checks after it
//         are fuzzed too. Any crash, out-of-bounds read (ASan) or undefined behaviour (UBSan) is
//         a failure.
//   odd:  the next byte is a separator, the rest keys (split at it) and range deletions; the
//         filter built from them must answer "may contain" for every range that holds a key or
//         meets a deletion, with bounds drawn from the keys and the input (edited bytes, cut and
//         extended), either side open.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/format.h"
#include "core/hash.h"
#include "core/range/range_api.h"

using sstfilter::RangeFilterBuilder;
using sstfilter::RangeFilterReader;

namespace {

bool Query(const RangeFilterReader& r, const std::string& lower, const std::string& upper) {
  const std::string_view l(lower), u(upper);
  return r.MayContain(&l, &u);
}

// The check word of a value whose header, prefix, alphabets and cover end at `end`.
uint32_t CheckWord(const uint8_t* bytes, size_t end) {
  return static_cast<uint32_t>(sstfilter::KeyHash(bytes, 12) ^
                               sstfilter::Mix64(sstfilter::KeyHash(bytes + 16, end - 16)));
}

void Hostile(const uint8_t* data, size_t size) {
  // An exact-size copy: ASan reports a read one byte past the end.
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  if (size >= 64 && std::memcmp(bytes.get(), "SSTR", 4) == 0) {
    // Where the strings end if the header's lengths are right (the cover's lengths read if they
    // fit); the check word over them, so that Open's later checks see mutated fields.
    size_t end = 64 + bytes[9] + 32 * size_t{bytes[6]};
    for (int bound = 0; bound < 2 && (bytes[5] & 1) && end + 4 <= size; ++bound) {
      end += 4 + sstfilter::LoadLE32(bytes.get() + end);
    }
    if (end <= size) sstfilter::StoreLE32(bytes.get() + 12, CheckWord(bytes.get(), end));
  }
  const RangeFilterReader reader = RangeFilterReader::Open(bytes.get(), size);
  // Bounds: slices of the input itself (its prefix and window bytes are likely in there).
  for (size_t i = 0; i + 1 < std::min<size_t>(size, 96); i += 3) {
    const std::string lower(reinterpret_cast<const char*>(data) + i,
                            std::min<size_t>(size - i, 1 + data[i] % 24));
    std::string upper = lower;
    upper.back() = static_cast<char>(upper.back() + 1 + data[i + 1] % 7);
    const std::string_view l(lower), u(upper);
    const bool answers[3] = {Query(reader, lower, upper), reader.MayContain(&l, nullptr),
                             reader.MayContain(nullptr, &u)};
    // Bytes not understood answer "may contain" (for a non-empty range).
    if (!reader.understood() && ((lower < upper && !answers[0]) || !answers[1])) __builtin_trap();
  }
}

void Built(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t separator = data[0];
  ++data;
  --size;
  std::vector<std::string> keys;
  std::vector<std::pair<std::string, std::string>> deletions;
  std::string current;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != separator) {
      current.push_back(static_cast<char>(data[i]));
      continue;
    }
    // A doubled separator after a key makes it and the next one a range deletion.
    if (i + 1 < size && data[i + 1] == separator && !keys.empty()) {
      deletions.emplace_back(keys.back(), current);
      keys.pop_back();
      ++i;
    } else {
      keys.push_back(current);
    }
    current.clear();
  }
  keys.push_back(current);
  RangeFilterBuilder builder(4 + static_cast<double>(size % 89) / 2);  // 4 to 48 bits
  for (const auto& k : keys) builder.AddKey(k);
  for (const auto& [start, end] : deletions) builder.AddRangeDeletion(start, end);
  auto built = builder.Finish();
  if (!built.ok()) __builtin_trap();  // only more than 2^30 keys fail
  const std::string bytes = std::move(built).value();
  std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
  std::memcpy(exact.get(), bytes.data(), bytes.size());
  const RangeFilterReader reader = RangeFilterReader::Open(exact.get(), bytes.size());
  if (!reader.understood()) __builtin_trap();
  const std::set<std::string> set(keys.begin(), keys.end());
  auto holds = [&](const std::string& lower, const std::string& upper) {
    if (!(lower < upper)) return false;  // an empty range holds nothing
    auto it = set.lower_bound(lower);
    if (it != set.end() && *it < upper) return true;
    for (const auto& [start, end] : deletions) {
      if (lower < end && start < upper) return true;
    }
    return false;
  };
  // Bounds from every key and from the input, edited.
  std::vector<std::string> bounds(keys.begin(), keys.end());
  for (const auto& k : keys) {
    bounds.push_back(k + std::string(1, '\0'));
    if (!k.empty()) bounds.push_back(k.substr(0, k.size() - 1));
    std::string up = k;
    if (!up.empty()) up.back() = static_cast<char>(up.back() + 1);
    bounds.push_back(up);
  }
  for (size_t i = 0; i < std::min<size_t>(size, 32); ++i) {
    std::string b = keys[data[i] % keys.size()];
    if (!b.empty()) b[data[i] % b.size()] = static_cast<char>(data[(i * 7) % size]);
    bounds.push_back(b);
  }
  // At most 96 bounds (every pair is a query): a spread of them.
  if (bounds.size() > 96) {
    std::vector<std::string> some;
    for (size_t i = 0; i < 96; ++i)
      some.push_back(bounds[(i * bounds.size()) / 96 + data[i % size] % 2]);
    bounds.swap(some);
  }
  for (const auto& lower : bounds) {
    for (const auto& upper : bounds) {
      if (holds(lower, upper) && !Query(reader, lower, upper)) __builtin_trap();
    }
    const std::string_view l(lower);
    if (holds(lower, std::string(300, '\xff')) && !reader.MayContain(&l, nullptr)) __builtin_trap();
    if (holds(std::string(), lower) && !reader.MayContain(nullptr, &l)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    Hostile(data + 1, size - 1);
  } else {
    Built(data + 1, size - 1);
  }
  return 0;
}
