// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the builders fed arbitrary key sequences, then every key queried. A false negative
// traps. Input: byte 0 picks the filter kind, byte 1 its size parameter, the rest are keys, each
// a length byte (0..63) followed by that many bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/fuse/fuse.h"
#include "core/hash.h"
#include "core/ribbon/ribbon.h"

using namespace sstfilter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  FilterSpec spec;
  switch (data[0] % 6) {
    case 0:
    case 1: {
      const double bits_per_key = 0.5 + data[1] % 40;
      auto params = data[0] % 6 == 0 ? SpecForBitsPerKey<BlockedBloom>(bits_per_key)
                                     : SpecForBitsPerKey<StandardBloom>(bits_per_key);
      if (!params.ok()) __builtin_trap();  // every budget in (0, 100] is valid
      spec = params.value();
      break;
    }
    case 2: {  // a fuse filter of any width: short keys repeat often, which the build must handle
      spec = FilterSpec(FuseParams{1 + data[1] % 32});
      break;
    }
    case 3: {  // a Ribbon filter of any width: repeats add no equation, and must not fail it
      spec = FilterSpec(RibbonParams{1 + data[1] % 32});
      break;
    }
    case 4: {  // a bumped Ribbon filter of any width; each key brings 7 more hashes (below), so
               // that the layers bump keys
      spec = FilterSpec(BumpedRibbonParams{1 + data[1] % 32});
      break;
    }
    default: {
      CuckooParams params;
      params.fingerprint_bits = 4 + data[1] % 29;
      params.load = (data[0] & 0x80) ? 1.0 : kCuckooTargetLoad;  // 1.0 forces retries
      spec = FilterSpec(params);
    }
  }
  std::vector<uint64_t> hashes;
  for (size_t pos = 2; pos < size;) {
    const size_t len = data[pos++] % 64;
    const size_t take = len < size - pos ? len : size - pos;
    hashes.push_back(KeyHash(data + pos, take));
    if (data[0] % 6 == 4) {
      for (uint64_t i = 1; i < 8; ++i) hashes.push_back(Mix64(hashes.back() + i));
    }
    pos += take;
  }
  const auto built = BuildFilter(spec, hashes.data(), hashes.size());
  if (!built.ok()) __builtin_trap();
  const std::string& bytes = built.value();
  const FilterReader reader =
      FilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!reader.valid()) __builtin_trap();
  for (const uint64_t h : hashes) {
    if (!reader.MayContain(h)) __builtin_trap();  // a false negative
  }
  return 0;
}
