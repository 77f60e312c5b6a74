// SPDX-License-Identifier: Apache-2.0
// What the two Bloom kinds (core/blocked_bloom/, core/standard_bloom/) share: how a bit position
// addresses a byte of the body, the probe limit of the byte format, and the operations that do
// not depend on the layout (BloomKindOps).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/format.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/sizing.h"

namespace sstfilter {

// The most probes any Bloom filter uses or accepts: the trailer stores the count in one byte, and
// more than 128 probes never lowers the rate of a budget sstfilter accepts (kMaxBitsPerKey).
inline constexpr int kMaxNumProbes = 128;

// The parameters of a Bloom filter, of either kind. Each kind derives its own Params type from
// it, so that a FilterSpec holding them names the kind.
struct BloomParams {
  double bits_per_key = 10;
  int num_probes = 6;
};

// The message for a probe count outside [1, kMaxNumProbes].
inline std::string NumProbesError(int num_probes) {
  return "num_probes must be in [1, " + std::to_string(kMaxNumProbes) + "], got " +
         std::to_string(num_probes);
}

// Bit j of a Bloom body is bit (j & 7) of its byte j >> 3 (little-endian bit order).
inline bool TestBit(const uint8_t* bits, uint64_t bit) { return (bits[bit >> 3] >> (bit & 7)) & 1; }
inline void SetBit(uint8_t* bits, uint64_t bit) {
  bits[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
}

// The operations of the two Bloom kinds that do not depend on the layout, written once. A kind
// derives from BloomKindOps<Kind, Params> and provides kId, kUnitBytes, kLayoutName, its math as
// ProbesForBitsPerKey(b) and BitsPerKeyForFpRate(p), Units(params, n) (its blocks or words for n
// keys) and SetBits(params, num_units, hashes, n, body), which sets the bits of hashes[0, n) in a
// zeroed body. Params has bits_per_key and num_probes.
//
// Trailer: num_keys, num_units (the kind's unit), seed 0, param = num_probes.
template <typename Kind, typename Params>
struct BloomKindOps {
  // The layout's best probe count for a budget; the smallest budget that reaches a rate.
  static Result<Params> ForBitsPerKey(double bits_per_key) {
    const Result<int> k = Kind::ProbesForBitsPerKey(bits_per_key);
    if (!k.ok()) return Err(k.error());
    Params params;
    params.bits_per_key = bits_per_key;
    params.num_probes = k.value();
    return params;
  }
  // The budget of a filter of about body_bytes for num_keys keys (>= 1), clamped to
  // [kMinBitsPerKey, kMaxBitsPerKey]: what takes another filter's place in its bytes.
  static Result<Params> ForBodyBytes(uint64_t body_bytes, uint64_t num_keys) {
    return ForBitsPerKey(
        std::clamp(static_cast<double>(body_bytes) * 8 / static_cast<double>(num_keys),
                   kMinBitsPerKey, kMaxBitsPerKey));
  }
  static Result<Params> ForFpRate(double fp_rate) {
    const Result<double> b = Kind::BitsPerKeyForFpRate(fp_rate);
    if (!b.ok()) return Err(b.error());
    return ForBitsPerKey(b.value());
  }

  // "blocked Bloom, 10.00 bits/key, 6 probes".
  static std::string Describe(const Params& params) {
    char buf[96];
    snprintf(buf, sizeof(buf), "%s Bloom, %.2f bits/key, %d probes", Kind::kLayoutName,
             params.bits_per_key, params.num_probes);
    return buf;
  }

  // Size in bytes (body and trailer) of the filter for num_keys distinct keys; 32 for zero keys.
  static Result<uint64_t> FilterBytes(const Params& params, uint64_t num_keys) {
    if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
    const Result<uint64_t> units = Kind::Units(params, num_keys);
    if (!units.ok()) return Err(units.error());
    return units.value() * Kind::kUnitBytes + kTrailerBytes;
  }

  // The most keys whose filter fits in `bytes`: the exact inverse of FilterBytes.
  static uint64_t MaxKeysForBytes(const Params& params, uint64_t bytes) {
    if (bytes < kTrailerBytes) return 0;
    const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / params.bits_per_key;
    return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return FilterBytes(params, n); });
  }

  static double NominalBitsPerKey(const Params& params) { return params.bits_per_key; }

  // A Bloom filter is set in place in its output: no scratch.
  static uint64_t BuildScratchBytes(const Params& /*params*/, uint64_t /*num_keys*/) { return 0; }

  static Result<std::string> Build(const Params& params, const HashList& hashes) {
    return Write(params, hashes.size(), [&](auto&& f) { hashes.ForEachChunk(f); });
  }
  // Consecutive repeats in the array are skipped.
  static Result<std::string> Build(const Params& params, const uint64_t* hashes, size_t count) {
    return WithoutConsecutiveRepeats(hashes, count, [&](const uint64_t* unique, size_t n) {
      return Write(params, n, [&](auto&& f) { f(unique, n); });
    });
  }

  // The body size of a trailer of this kind with num_units >= 1, or false if it is invalid.
  static bool BodyBytes(const Trailer& t, uint64_t* body_bytes) {
    if (t.param < 1 || t.param > kMaxNumProbes || t.seed != 0) return false;
    *body_bytes = t.num_units * Kind::kUnitBytes;
    return true;
  }

 private:
  // The filter of num_keys hashes (no consecutive repeats), delivered by for_each_chunk(f) as
  // f(hashes, count).
  template <typename ForEachChunk>
  static Result<std::string> Write(const Params& params, uint64_t num_keys,
                                   ForEachChunk&& for_each_chunk) {
    const Result<uint64_t> bytes = FilterBytes(params, num_keys);
    if (!bytes.ok()) return Err(bytes.error());
    std::string out(bytes.value(), '\0');  // a zeroed body: no bit set
    uint8_t* dst = reinterpret_cast<uint8_t*>(out.data());
    Trailer t;
    t.kind = Kind::kId;
    t.num_keys = num_keys;
    t.param = static_cast<uint8_t>(params.num_probes);
    if (num_keys > 0) {
      t.num_units = Kind::Units(params, num_keys).value();  // FilterBytes succeeded, so this does
      for_each_chunk([&](const uint64_t* hashes, size_t n) {
        Kind::SetBits(params, t.num_units, hashes, n, dst);
      });
      dst += t.num_units * Kind::kUnitBytes;
    }
    EncodeTrailer(t, dst);
    return out;
  }
};

}  // namespace sstfilter
