// SPDX-License-Identifier: Apache-2.0
#include "core/filter_spec.h"

namespace sstfilter {
namespace {

// Calls Kind::op(params, args...) for the kind of the spec.
template <typename F>
decltype(auto) WithKind(const FilterSpec& spec, F&& f) {
  return Visit(spec.params(), [&](const auto& params) {
    using Kind = KindOf<std::decay_t<decltype(params)>>;
    return f(Kind{}, params);
  });
}

}  // namespace

std::string FilterSpec::ToString() const {
  return WithKind(*this, [](auto kind, const auto& p) { return decltype(kind)::Describe(p); });
}

Result<uint64_t> FilterBytes(const FilterSpec& spec, uint64_t num_keys) {
  return WithKind(
      spec, [&](auto kind, const auto& p) { return decltype(kind)::FilterBytes(p, num_keys); });
}

uint64_t MaxKeysForBytes(const FilterSpec& spec, uint64_t bytes) {
  return WithKind(
      spec, [&](auto kind, const auto& p) { return decltype(kind)::MaxKeysForBytes(p, bytes); });
}

uint64_t BuildScratchBytes(const FilterSpec& spec, uint64_t num_keys) {
  return WithKind(spec, [&](auto kind, const auto& p) {
    return decltype(kind)::BuildScratchBytes(p, num_keys);
  });
}

Result<std::string> BuildFilter(const FilterSpec& spec, const uint64_t* hashes, size_t count) {
  return WithKind(
      spec, [&](auto kind, const auto& p) { return decltype(kind)::Build(p, hashes, count); });
}

Result<std::string> BuildFilter(const FilterSpec& spec, const HashList& hashes) {
  return WithKind(spec, [&](auto kind, const auto& p) { return decltype(kind)::Build(p, hashes); });
}

Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys) {
  return WithKind(
      spec, [&](auto kind, const auto& p) { return decltype(kind)::EstimatedFpRate(p, num_keys); });
}

Result<double> EstimatedFpRate(const FilterSpec& spec, uint64_t num_keys, uint64_t bytes) {
  if (num_keys == 0) return 0.0;
  const Result<uint64_t> own_bytes = FilterBytes(spec, num_keys);
  if (own_bytes.ok() && own_bytes.value() == bytes) return EstimatedFpRate(spec, num_keys);
  return WithKind(spec, [&](auto kind, const auto&) -> Result<double> {
    using Kind = decltype(kind);
    const auto params = Kind::ForBitsPerKey(8.0 * static_cast<double>(bytes) / num_keys);
    if (!params.ok()) return Err(params.error());
    return Kind::EstimatedFpRate(params.value(), num_keys);
  });
}

std::string MatchAllFilter(uint64_t num_keys) {
  // One blocked-Bloom block with every bit set and one probe: valid, and every probe hits.
  std::string out(BlockedBloom::kUnitBytes, '\xff');
  Trailer t;
  t.kind = BlockedBloom::kId;
  t.num_keys = num_keys == 0 ? 1 : num_keys;
  t.num_units = 1;
  t.param = 1;
  AppendTrailer(t, &out);
  return out;
}

}  // namespace sstfilter
