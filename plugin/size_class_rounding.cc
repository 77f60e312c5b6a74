// SPDX-License-Identifier: Apache-2.0
#include "plugin/size_class_rounding.h"

#if __has_include(<malloc.h>)
#include <malloc.h>
#define SSTFILTER_HAS_MALLOC_USABLE_SIZE 1
#endif

#include <cmath>
#include <cstdlib>
#include <optional>

namespace sstfilter {
namespace {

// Kind's largest filter of num_keys keys in at most max_bytes (body and trailer), if any.
template <typename Kind>
std::optional<FilterSpec> LargestWithin(uint64_t num_keys, uint64_t max_bytes) {
  if (max_bytes <= kTrailerBytes) return std::nullopt;
  const uint64_t units = (max_bytes - kTrailerBytes) / Kind::kUnitBytes;
  // Bits per key a little under `units` units' (their size rounds up to whole units), then
  // fewer units should the rounding still make one more.
  for (uint64_t u = units; u > 0 && u + 2 > units; --u) {
    const double bits =
        (static_cast<double>(u * Kind::kUnitBytes * 8) - 0.5) / static_cast<double>(num_keys);
    if (!ValidBitsPerKey(bits)) return std::nullopt;
    const Result<FilterSpec> spec = SpecForBitsPerKey<Kind>(bits);
    if (!spec.ok()) return std::nullopt;
    const Result<uint64_t> bytes = FilterBytes(spec.value(), num_keys);
    if (bytes.ok() && bytes.value() <= max_bytes) return spec.value();
  }
  return std::nullopt;
}

template <typename Kind>
std::optional<FilterSpec> LargestOfKindWithin(const FilterSpec& like, uint64_t num_keys,
                                              uint64_t max_bytes) {
  return like.kind() == Kind::kId ? LargestWithin<Kind>(num_keys, max_bytes) : std::nullopt;
}

// The filter of like's kind in at most max_bytes: Bloom kinds only.
std::optional<FilterSpec> SameKindWithin(const FilterSpec& like, uint64_t num_keys,
                                         uint64_t max_bytes) {
  if (auto s = LargestOfKindWithin<BlockedBloom>(like, num_keys, max_bytes)) return s;
  return LargestOfKindWithin<StandardBloom>(like, num_keys, max_bytes);
}

constexpr double kBalanceScale = 4294967296.0;  // 2^32: the balance's fixed point

}  // namespace

uint64_t SizeClassRounding::MallocUsableBytes(uint64_t bytes) {
#ifdef SSTFILTER_HAS_MALLOC_USABLE_SIZE
  void* p = std::malloc(bytes);
  if (p == nullptr) return bytes;
  const uint64_t usable = malloc_usable_size(p);
  std::free(p);
  return usable;
#else
  return bytes;
#endif
}

FilterSpec SizeClassRounding::Round(const FilterSpec& chosen, uint64_t num_keys) {
  if (num_keys == 0 ||
      (chosen.kind() != BlockedBloom::kId && chosen.kind() != StandardBloom::kId)) {
    return chosen;
  }
  const Result<uint64_t> chosen_bytes = FilterBytes(chosen, num_keys);
  const Result<double> chosen_rate = EstimatedFpRate(chosen, num_keys);
  if (!chosen_bytes.ok() || !chosen_rate.ok()) return chosen;
  std::lock_guard<std::mutex> lock(mu_);
  FilterSpec spec = chosen;
  uint64_t bytes = chosen_bytes.value();
  double rate = chosen_rate.value();
  if (balance_ < 0) {
    // A smaller filter whose rate the surplus covers, from the smallest tried up.
    const double allowed = rate + static_cast<double>(-balance_) / kBalanceScale;
    for (const uint64_t sixteenths : {12, 13, 14, 15}) {
      const std::optional<FilterSpec> smaller =
          SameKindWithin(chosen, num_keys, chosen_bytes.value() * sixteenths / 16);
      if (!smaller) continue;
      const Result<double> r = EstimatedFpRate(*smaller, num_keys);
      const Result<uint64_t> b = FilterBytes(*smaller, num_keys);
      if (r.ok() && b.ok() && r.value() <= allowed) {
        spec = *smaller;
        bytes = b.value();
        rate = r.value();
        break;
      }
    }
  }
  // The largest filter whose block fits the class this size falls in. A class more than 4/3 of
  // the request is not an allocator's rounding (RocksDB's bound): left alone.
  const uint64_t requested = bytes + kBlockTrailerBytes;
  const uint64_t usable = usable_(requested);
  if (usable > requested && usable - usable / 4 <= requested) {
    if (const std::optional<FilterSpec> larger =
            SameKindWithin(chosen, num_keys, usable - kBlockTrailerBytes)) {
      const Result<uint64_t> b = FilterBytes(*larger, num_keys);
      const Result<double> r = EstimatedFpRate(*larger, num_keys);
      if (b.ok() && r.ok() && b.value() > bytes) {
        spec = *larger;
        rate = r.value();
      }
    }
  }
  balance_ += static_cast<int64_t>(std::llround((rate - chosen_rate.value()) * kBalanceScale));
  return spec;
}

}  // namespace sstfilter
