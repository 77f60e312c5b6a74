// SPDX-License-Identifier: Apache-2.0
// ScalableBloomFilter (include/sstfilter/scalable_bloom_filter.h): a chain of BloomFilters of
// growing capacity and tightening rate (FilterChain, include/sstfilter/scaling.h).
#include "sstfilter/scalable_bloom_filter.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "core/app_filters/chain_format.h"
#include "core/app_filters/chain_loader.h"

namespace sstfilter {

namespace {

// What makes each filter of a chain in `layout`.
auto FilterMaker(BloomLayout layout) {
  return [layout](uint64_t capacity, double rate) {
    return BloomFilter::Create(capacity, rate, layout);
  };
}

}  // namespace

Result<ScalableBloomFilter> ScalableBloomFilter::Create(uint64_t initial_capacity, double fp_rate,
                                                        ScalingOptions options,
                                                        BloomLayout layout) {
  ScalableBloomFilter filter;
  filter.layout_ = layout;
  const Result<bool> started =
      filter.chain_.Start(initial_capacity, fp_rate, options, FilterMaker(layout));
  if (!started.ok()) return Err(started.error());
  filter.options_ = options;
  filter.initial_capacity_ = initial_capacity;
  return filter;
}

AddOutcome ScalableBloomFilter::AddHash(uint64_t hash) {
  if (chain_.filters().empty()) return AddOutcome::kFull;  // moved from
  if (MayContainHash(hash)) return AddOutcome::kMayBePresent;
  if (newest_keys_ >= chain_.newest_capacity()) {
    if (!chain_.Grow(FilterMaker(layout_))) return AddOutcome::kFull;
    newest_keys_ = 0;
  }
  // The key is in no filter, so it changes the newest: every key added is counted once.
  chain_.filters().back().AddHash(hash);
  ++newest_keys_;
  ++size_;
  return AddOutcome::kAdded;
}

double ScalableBloomFilter::ExpectedFpRate() const {
  double none = 1;  // the chance that no filter passes an absent key
  for (const BloomFilter& f : chain_.filters()) none *= 1 - f.ExpectedFpRate();
  return 1 - none;
}

// The chain's header as Serialize writes it (its count of filters left to chain_format).
static chain_format::Header ChainHeaderOf(const ScalableBloomFilter& f, uint64_t newest_keys) {
  chain_format::Header header = chain_format::HeaderOf(chain_format::kBloomChain, f.options(),
                                                       f.fp_rate(), f.initial_capacity());
  header.layout = static_cast<uint8_t>(f.layout());
  header.newest_keys = newest_keys;
  header.size = f.size();
  return header;
}

std::string ScalableBloomFilter::Serialize() const {
  return chain_format::Write(ChainHeaderOf(*this, newest_keys_), chain_.filters());
}

uint64_t ScalableBloomFilter::SerializedBytes() const {
  return chain_format::BytesOf(chain_.filters());
}

size_t ScalableBloomFilter::SerializeRange(uint64_t offset, size_t length, void* out) const {
  return chain_format::CopyRange(ChainHeaderOf(*this, newest_keys_), chain_.filters(), offset,
                                 length, out);
}

Result<ScalableBloomFilter> ScalableBloomFilter::Deserialize(const void* data, size_t size) {
  return chain_format::ReadScalable<ScalableBloomFilter>(data, size, chain_format::kBloomChain);
}

Result<ScalableBloomFilter> ScalableBloomFilter::FromFilters(const void* header,
                                                             std::vector<BloomFilter> filters) {
  const Result<chain_format::Header> parsed =
      chain_format::ParseFilters(header, chain_format::kBloomChain, filters.size());
  if (!parsed.ok()) return Err(parsed.error());
  const chain_format::Header& h = parsed.value();
  ScalableBloomFilter filter;
  filter.options_ = chain_format::OptionsOf(h);
  filter.initial_capacity_ = h.initial_capacity;
  filter.layout_ = static_cast<BloomLayout>(h.layout);
  const Result<bool> restored =
      filter.chain_.Restore(h.initial_capacity, h.fp_rate, filter.options_, std::move(filters),
                            [&filter](const BloomFilter& f, uint64_t capacity, double rate) {
                              return f.layout() == filter.layout_ && f.IsSizedFor(capacity, rate);
                            });
  if (!restored.ok()) return Err(restored.error());
  // The older filters hold size - newest_keys keys, at most their capacities: a count beyond
  // would let the filter's size pass its capacity as it takes keys.
  const uint64_t older_capacity = filter.chain_.capacity() - filter.chain_.newest_capacity();
  if (h.newest_keys > filter.chain_.newest_capacity() || h.size < h.newest_keys ||
      h.size - h.newest_keys > older_capacity) {
    return Err("a scalable Bloom filter whose key counts exceed its capacity");
  }
  filter.newest_keys_ = h.newest_keys;
  filter.size_ = h.size;
  return filter;
}

}  // namespace sstfilter
