#include "core/bloom.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/sizing.h"

namespace sstfilter {
namespace {

FilterKind KindOf(BloomLayout layout) {
  return layout == BloomLayout::kBlocked ? FilterKind::kBlockedBloom : FilterKind::kStandardBloom;
}

uint64_t UnitBytes(BloomLayout layout) {
  return layout == BloomLayout::kBlocked ? BlockedBloomReader::kBlockBytes : 8;
}

Result<uint64_t> Units(const BloomParams& params, uint64_t num_keys) {
  return params.layout == BloomLayout::kBlocked ? BlockedBloomBlocks(num_keys, params.bits_per_key)
                                                : StandardBloomWords(num_keys, params.bits_per_key);
}

// Keys processed between prefetches and their use in batched loops: enough to overlap a DRAM
// miss (~100 ns) with the work of the other keys, small enough for the addresses to stay in
// registers and L1.
constexpr size_t kBatch = 16;

}  // namespace

Result<BloomParams> BloomParamsForBitsPerKey(BloomLayout layout, double bits_per_key) {
  const Result<int> k = layout == BloomLayout::kBlocked
                            ? BlockedBloomProbes(bits_per_key)
                            : StandardBloomProbesForBitsPerKey(bits_per_key);
  if (!k.ok()) return Err(k.error());
  BloomParams p;
  p.layout = layout;
  p.bits_per_key = bits_per_key;
  p.num_probes = k.value();
  return p;
}

Result<BloomParams> BloomParamsForFpRate(BloomLayout layout, double fp_rate) {
  const Result<double> b = layout == BloomLayout::kBlocked ? BlockedBloomBitsPerKey(fp_rate)
                                                           : StandardBloomBitsPerKey(fp_rate);
  if (!b.ok()) return Err(b.error());
  return BloomParamsForBitsPerKey(layout, b.value());
}

Result<double> BloomEstimatedFpRate(const BloomParams& params, uint64_t num_keys) {
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  // The real budget after rounding up to whole units, which can exceed the nominal one.
  const uint64_t num_bits = units.value() * UnitBytes(params.layout) * 8;
  if (params.layout == BloomLayout::kStandard) {
    return StandardBloomFpRate(num_keys, num_bits, params.num_probes);
  }
  const double bits_per_key =
      std::min(kMaxBitsPerKey, static_cast<double>(num_bits) / static_cast<double>(num_keys));
  return BlockedBloomFpRateExact(bits_per_key, params.num_probes, num_keys);
}

Result<uint64_t> BloomFilterBytes(const BloomParams& params, uint64_t num_keys) {
  if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
  const Result<uint64_t> units = Units(params, num_keys);
  if (!units.ok()) return Err(units.error());
  return units.value() * UnitBytes(params.layout) + kTrailerBytes;
}

uint64_t BloomMaxKeysForBytes(const BloomParams& params, uint64_t bytes) {
  if (bytes < kTrailerBytes) return 0;
  const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / params.bits_per_key;
  return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return BloomFilterBytes(params, n); });
}

namespace {

// Sets the bits of hashes[0, n) in a zeroed body of num_units units.
void SetBloomBits(const BloomParams& params, uint64_t num_units, const uint64_t* hashes, uint64_t n,
                  uint8_t* body) {
  const int k = params.num_probes;
  if (params.layout == BloomLayout::kBlocked) {
    const BlockedBloomReader layout(body, num_units, k);
    uint8_t* blocks[kBatch];
    for (uint64_t start = 0; start < n; start += kBatch) {
      const size_t m = static_cast<size_t>(std::min<uint64_t>(kBatch, n - start));
      for (size_t i = 0; i < m; ++i) {
        blocks[i] = const_cast<uint8_t*>(layout.BlockFor(hashes[start + i]));
        __builtin_prefetch(blocks[i], 1);
      }
      for (size_t i = 0; i < m; ++i) {
        uint8_t* block = blocks[i];
        ForEachBlockedProbe(hashes[start + i], k, [block](uint32_t bit) {
          block[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
          return true;
        });
      }
    }
  } else {
    const uint64_t num_bits = num_units * 64;
    for (uint64_t i = 0; i < n; ++i) {
      ForEachStandardProbe(hashes[i], k, num_bits, [body](uint64_t bit) {
        body[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
        return true;
      });
    }
  }
}

// Writes the filter of num_keys hashes, delivered by for_each_chunk(f) as f(hashes, count), into
// dst of exactly BloomFilterBytes(params, num_keys) bytes.
template <typename ForEachChunk>
void WriteBloomFromChunks(const BloomParams& params, uint64_t num_keys,
                          ForEachChunk&& for_each_chunk, uint8_t* dst) {
  Trailer t;
  t.kind = KindOf(params.layout);
  t.num_keys = num_keys;
  t.param = static_cast<uint8_t>(params.num_probes);
  if (num_keys > 0) {
    t.num_units = Units(params, num_keys).value();
    const uint64_t body_bytes = t.num_units * UnitBytes(params.layout);
    std::memset(dst, 0, body_bytes);
    for_each_chunk([&](const uint64_t* hashes, size_t n) {
      SetBloomBits(params, t.num_units, hashes, n, dst);
    });
    dst += body_bytes;
  }
  EncodeTrailer(t, dst);
}

}  // namespace

void WriteBloomFilter(const BloomParams& params, const uint64_t* hashes, uint64_t num_keys,
                      uint8_t* dst) {
  WriteBloomFromChunks(
      params, num_keys, [&](auto&& f) { f(hashes, num_keys); }, dst);
}

Result<std::string> BuildBloomFilter(const BloomParams& params, const HashList& hashes) {
  const Result<uint64_t> bytes = BloomFilterBytes(params, hashes.size());
  if (!bytes.ok()) return Err(bytes.error());
  std::string out(bytes.value(), '\0');
  WriteBloomFromChunks(
      params, hashes.size(), [&](auto&& f) { hashes.ForEachChunk(f); },
      reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

Result<std::string> BuildBloomFilter(const BloomParams& params, const uint64_t* hashes,
                                     size_t count) {
  // Callers such as the RocksDB builder already skip consecutive duplicates: copy only if needed.
  std::vector<uint64_t> unique;
  for (size_t i = 1; i < count; ++i) {
    if (hashes[i] == hashes[i - 1]) {
      unique.reserve(count);
      unique.push_back(hashes[0]);
      for (size_t j = 1; j < count; ++j) {
        if (hashes[j] != unique.back()) unique.push_back(hashes[j]);
      }
      hashes = unique.data();
      count = unique.size();
      break;
    }
  }
  const Result<uint64_t> bytes = BloomFilterBytes(params, count);
  if (!bytes.ok()) return Err(bytes.error());
  std::string out(bytes.value(), '\0');
  WriteBloomFilter(params, hashes, count, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

void BlockedBloomReader::MayContainBatch(const uint64_t* hashes, size_t count,
                                         bool* may_match) const {
  const uint8_t* blocks[kBatch];
  for (size_t start = 0; start < count; start += kBatch) {
    const size_t n = std::min(kBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      blocks[i] = BlockFor(hashes[start + i]);
      __builtin_prefetch(blocks[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      may_match[start + i] = MatchInBlock(blocks[i], hashes[start + i]);
    }
  }
}

void StandardBloomReader::MayContainBatch(const uint64_t* hashes, size_t count,
                                          bool* may_match) const {
  for (size_t start = 0; start < count; start += kBatch) {
    const size_t n = std::min(kBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      __builtin_prefetch(bits_ + (FastRange64(hashes[start + i], num_bits_) >> 3));
    }
    for (size_t i = 0; i < n; ++i) may_match[start + i] = MayContain(hashes[start + i]);
  }
}

}  // namespace sstfilter
