// FilterSpec: which filter to build (kind and parameters), and the operations that depend on the
// kind: size, inverse of the size, build, and the rate to expect. The RocksDB plugin and the
// benchmarks hold a FilterSpec and never switch on the kind themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/bloom.h"
#include "core/cuckoo.h"
#include "core/format.h"
#include "core/hash_list.h"
#include "core/result.h"

namespace sstfilter {

struct FilterSpec {
  FilterKind kind = FilterKind::kBlockedBloom;
  BloomParams bloom;    // for kBlockedBloom and kStandardBloom
  CuckooParams cuckoo;  // for kCuckoo

  static FilterSpec Bloom(const BloomParams& params);
  static FilterSpec Cuckoo(const CuckooParams& params);

  // For logs and benchmark output: "blocked Bloom, 10 bits/key, 7 probes".
  std::string ToString() const;
};

// Size in bytes of the filter for num_keys distinct keys (a cuckoo build that needs more buckets
// after failed placements can be a few percent larger).
Result<uint64_t> FilterBytes(const FilterSpec& spec, uint64_t num_keys);

// The most keys whose filter fits in `bytes`: the exact inverse of FilterBytes.
uint64_t MaxKeysForBytes(const FilterSpec& spec, uint64_t bytes);

// Builds the filter of hashes[0, count); consecutive duplicates are skipped.
Result<std::string> BuildFilter(const FilterSpec& spec, const uint64_t* hashes, size_t count);
// The same from a builder's chunked hash list.
Result<std::string> BuildFilter(const FilterSpec& spec, const HashList& hashes);

// The false-positive rate to expect from the filter of num_keys keys.
Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys);

// A valid filter that answers "may match" for every key: what a builder emits when it cannot build
// the real one (out of memory, say), so that the file is still written and no key is lost.
std::string MatchAllFilter(uint64_t num_keys);

}  // namespace sstfilter
