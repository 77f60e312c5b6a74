// SPDX-License-Identifier: Apache-2.0
// FilterSpec: which filter to build, as the parameters of one kind (core/kinds.h), and the
// operations every kind provides, dispatched to the kind the spec holds. The RocksDB plugin and
// the benchmarks hold a FilterSpec and never name a kind's operations themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/hash_list.h"
#include "core/kinds.h"
#include "core/result.h"

namespace sstfilter {

class FilterSpec {
 public:
  // A blocked Bloom filter with its default parameters.
  FilterSpec() = default;
  // The filter that a kind's parameters describe: FilterSpec(Cuckoo::ForFpRate(0.001).value()).
  template <typename Params, typename = std::enable_if_t<!std::is_void_v<KindOf<Params>>>>
  FilterSpec(const Params& params) : params_(params) {}  // NOLINT(google-explicit-constructor)

  FilterKind kind() const {
    return Visit(params_, [](const auto& p) { return KindOf<std::decay_t<decltype(p)>>::kId; });
  }
  const AnyParams& params() const { return params_; }
  // The parameters if the spec is of that kind's, else null.
  template <typename Params>
  const Params* get_if() const {
    return std::get_if<Params>(&params_);
  }

  // For logs and benchmark output: "blocked Bloom, 10.00 bits/key, 6 probes".
  std::string ToString() const;

 private:
  AnyParams params_;
};

// The filter of a kind that spends at most bits_per_key, or that reaches fp_rate.
template <typename Kind>
Result<FilterSpec> SpecForBitsPerKey(double bits_per_key) {
  const Result<typename Kind::Params> params = Kind::ForBitsPerKey(bits_per_key);
  if (!params.ok()) return Err(params.error());
  return FilterSpec(params.value());
}
template <typename Kind>
Result<FilterSpec> SpecForFpRate(double fp_rate) {
  const Result<typename Kind::Params> params = Kind::ForFpRate(fp_rate);
  if (!params.ok()) return Err(params.error());
  return FilterSpec(params.value());
}

// Size in bytes of the filter for num_keys distinct keys (a cuckoo build that needs more buckets
// after failed placements can be a few percent larger).
Result<uint64_t> FilterBytes(const FilterSpec& spec, uint64_t num_keys);

// The most keys whose filter fits in `bytes`: the exact inverse of FilterBytes (for a fuse or
// Ribbon budget, whose size is not monotone, an n that fits whose n + 1 does not).
uint64_t MaxKeysForBytes(const FilterSpec& spec, uint64_t bytes);

// The temporary bytes BuildFilter holds for num_keys keys beyond its input and its output (the
// kind's BuildScratchBytes).
uint64_t BuildScratchBytes(const FilterSpec& spec, uint64_t num_keys);

// Builds the filter of hashes[0, count); consecutive duplicates are skipped.
Result<std::string> BuildFilter(const FilterSpec& spec, const uint64_t* hashes, size_t count);
// The same from a builder's chunked hash list.
Result<std::string> BuildFilter(const FilterSpec& spec, const HashList& hashes);

// The false-positive rate to expect from the filter of num_keys keys.
Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys);
// The same for num_keys keys in `bytes` bytes: the rate above when `bytes` is the spec's own size
// for them (FilterBytes), else that of the spec's kind at 8 * bytes / num_keys bits per key
// (ForBitsPerKey). 0 for no keys.
Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys, uint64_t bytes);

// A valid filter that answers "may match" for every key: what a builder emits when it cannot build
// the real one (out of memory, say), so that the file is still written and no key is lost.
std::string MatchAllFilter(uint64_t num_keys);

}  // namespace sstfilter
