#include "core/filter_spec.h"

#include <cstdio>
#include <cstring>

#include "core/sizing.h"

namespace sstfilter {

FilterSpec FilterSpec::Bloom(const BloomParams& params) {
  FilterSpec spec;
  spec.kind = params.layout == BloomLayout::kBlocked ? FilterKind::kBlockedBloom
                                                     : FilterKind::kStandardBloom;
  spec.bloom = params;
  return spec;
}

FilterSpec FilterSpec::Cuckoo(const CuckooParams& params) {
  FilterSpec spec;
  spec.kind = FilterKind::kCuckoo;
  spec.cuckoo = params;
  return spec;
}

std::string FilterSpec::ToString() const {
  char buf[128];
  if (kind == FilterKind::kCuckoo) {
    snprintf(buf, sizeof(buf), "cuckoo, %d-bit fingerprints, %.2f bits/key at %.0f%% load",
             cuckoo.fingerprint_bits, cuckoo.fingerprint_bits / cuckoo.load, 100 * cuckoo.load);
  } else {
    snprintf(buf, sizeof(buf), "%s Bloom, %.2f bits/key, %d probes",
             kind == FilterKind::kBlockedBloom ? "blocked" : "standard", bloom.bits_per_key,
             bloom.num_probes);
  }
  return buf;
}

Result<uint64_t> FilterBytes(const FilterSpec& spec, uint64_t num_keys) {
  return spec.kind == FilterKind::kCuckoo ? CuckooFilterBytes(spec.cuckoo, num_keys)
                                          : BloomFilterBytes(spec.bloom, num_keys);
}

uint64_t MaxKeysForBytes(const FilterSpec& spec, uint64_t bytes) {
  return spec.kind == FilterKind::kCuckoo ? CuckooMaxKeysForBytes(spec.cuckoo, bytes)
                                          : BloomMaxKeysForBytes(spec.bloom, bytes);
}

Result<std::string> BuildFilter(const FilterSpec& spec, const uint64_t* hashes, size_t count) {
  if (spec.kind != FilterKind::kCuckoo) return BuildBloomFilter(spec.bloom, hashes, count);
  std::string out;
  const Result<CuckooBuildInfo> info = BuildCuckooFilter(spec.cuckoo, hashes, count, &out);
  if (!info.ok()) return Err(info.error());
  return out;
}

Result<std::string> BuildFilter(const FilterSpec& spec, const HashList& hashes) {
  if (spec.kind != FilterKind::kCuckoo) return BuildBloomFilter(spec.bloom, hashes);
  std::string out;
  const Result<CuckooBuildInfo> info = BuildCuckooFilter(spec.cuckoo, hashes, &out);
  if (!info.ok()) return Err(info.error());
  return out;
}

Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys) {
  if (spec.kind != FilterKind::kCuckoo) return BloomEstimatedFpRate(spec.bloom, num_keys);
  // At the load this many keys give: the bucket count rounds up, so small filters run below the
  // nominal load (and their rate with it).
  const Result<uint64_t> buckets = CuckooBuckets(num_keys, spec.cuckoo.load);
  if (!buckets.ok()) return Err(buckets.error());
  const double load = static_cast<double>(num_keys) /
                      (static_cast<double>(buckets.value()) * kCuckooSlotsPerBucket);
  return CuckooFpRate(spec.cuckoo.fingerprint_bits, load);
}

std::string MatchAllFilter(uint64_t num_keys) {
  // One blocked-Bloom block with every bit set and one probe: valid, and every probe hits.
  std::string out(BlockedBloomReader::kBlockBytes, '\xff');
  Trailer t;
  t.kind = FilterKind::kBlockedBloom;
  t.num_keys = num_keys == 0 ? 1 : num_keys;
  t.num_units = 1;
  t.param = 1;
  AppendTrailer(t, &out);
  return out;
}

}  // namespace sstfilter
