#include "core/standard_bloom/standard_bloom.h"

#include <algorithm>
#include <cstdio>

#include "core/batch.h"
#include "core/sizing.h"

namespace sstfilter {

Result<StandardBloomParams> StandardBloom::ForBitsPerKey(double bits_per_key) {
  const Result<int> k = StandardBloomProbesForBitsPerKey(bits_per_key);
  if (!k.ok()) return Err(k.error());
  return Params{bits_per_key, k.value()};
}

Result<StandardBloomParams> StandardBloom::ForFpRate(double fp_rate) {
  const Result<double> b = StandardBloomBitsPerKey(fp_rate);
  if (!b.ok()) return Err(b.error());
  return ForBitsPerKey(b.value());
}

std::string StandardBloom::Describe(const Params& params) {
  char buf[96];
  snprintf(buf, sizeof(buf), "standard Bloom, %.2f bits/key, %d probes", params.bits_per_key,
           params.num_probes);
  return buf;
}

Result<uint64_t> StandardBloom::Units(const Params& params, uint64_t num_keys) {
  return StandardBloomWords(num_keys, params.bits_per_key);
}

Result<uint64_t> StandardBloom::FilterBytes(const Params& params, uint64_t num_keys) {
  if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  return units.value() * kUnitBytes + kTrailerBytes;
}

uint64_t StandardBloom::MaxKeysForBytes(const Params& params, uint64_t bytes) {
  if (bytes < kTrailerBytes) return 0;
  const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / params.bits_per_key;
  return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return FilterBytes(params, n); });
}

Result<double> StandardBloom::EstimatedFpRate(const Params& params, uint64_t num_keys) {
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  // The real budget after rounding up to whole words.
  return StandardBloomFpRate(num_keys, units.value() * kUnitBytes * 8, params.num_probes);
}

double StandardBloom::NominalFpRate(const Params& params) {
  return StandardBloomRateAtLoad(1.0 / params.bits_per_key, params.num_probes);
}

void StandardBloom::SetBits(const Params& params, uint64_t num_units, const uint64_t* hashes,
                            uint64_t n, uint8_t* body) {
  const uint64_t num_bits = num_units * 64;
  for (uint64_t i = 0; i < n; ++i) {
    ForEachStandardProbe(hashes[i], params.num_probes, num_bits, [body](uint64_t bit) {
      SetBit(body, bit);
      return true;
    });
  }
}

Result<std::string> StandardBloom::Build(const Params& params, const HashList& hashes) {
  return BuildBloom<StandardBloom>(params, hashes.size(),
                                   [&](auto&& f) { hashes.ForEachChunk(f); });
}

Result<std::string> StandardBloom::Build(const Params& params, const uint64_t* hashes,
                                         size_t count) {
  return BuildBloom<StandardBloom>(params, hashes, count);
}

bool StandardBloom::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (t.param < 1 || t.param > kMaxNumProbes || t.seed != 0) return false;
  *body_bytes = t.num_units * kUnitBytes;
  return true;
}

void StandardBloomReader::MayContainBatch(const uint64_t* hashes, size_t count,
                                          bool* may_match) const {
  for (size_t start = 0; start < count; start += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      __builtin_prefetch(bits_ + (FastRange64(hashes[start + i], num_bits_) >> 3));
    }
    for (size_t i = 0; i < n; ++i) may_match[start + i] = MayContain(hashes[start + i]);
  }
}

}  // namespace sstfilter
