// What the two Bloom kinds (core/blocked_bloom/, core/standard_bloom/) share: how a bit position
// addresses a byte of the body, the probe limit of the byte format, and the build skeleton.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "core/format.h"
#include "core/hash_list.h"
#include "core/result.h"

namespace sstfilter {

// The most probes any Bloom filter uses or accepts: the trailer stores the count in one byte, and
// more than 128 probes never lowers the rate of a budget sstfilter accepts (kMaxBitsPerKey).
inline constexpr int kMaxNumProbes = 128;

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

// The build both Bloom kinds share. `Kind` provides kId, kUnitBytes, FilterBytes(params, n),
// Units(params, n) and SetBits(params, num_units, hashes, n, body), which sets the bits of
// hashes[0, n) in a zeroed body. The hashes, num_keys of them with no consecutive repeats, arrive
// through for_each_chunk(f) as f(hashes, count).
//
// Trailer: num_keys, num_units (the kind's unit: blocks or words), seed 0, param = num_probes.
template <typename Kind, typename ForEachChunk>
Result<std::string> BuildBloom(const typename Kind::Params& params, uint64_t num_keys,
                               ForEachChunk&& for_each_chunk) {
  const Result<uint64_t> bytes = Kind::FilterBytes(params, num_keys);
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

// The same from an array, which may hold consecutive repeats (they are skipped).
template <typename Kind>
Result<std::string> BuildBloom(const typename Kind::Params& params, const uint64_t* hashes,
                               size_t count) {
  return WithoutConsecutiveRepeats(hashes, count, [&](const uint64_t* unique, size_t n) {
    return BuildBloom<Kind>(params, n, [&](auto&& f) { f(unique, n); });
  });
}

}  // namespace sstfilter
