// SPDX-License-Identifier: Apache-2.0
// ScalableBloomFilter (include/sstfilter/scalable_bloom_filter.h): a chain of BloomFilters of
// growing capacity and tightening rate (FilterChain, include/sstfilter/scaling.h).
#include "sstfilter/scalable_bloom_filter.h"

namespace sstfilter {

namespace {

Result<BloomFilter> MakeBloomFilter(uint64_t capacity, double rate) {
  return BloomFilter::Create(capacity, rate);
}

}  // namespace

Result<ScalableBloomFilter> ScalableBloomFilter::Create(uint64_t initial_capacity, double fp_rate,
                                                        ScalingOptions options) {
  ScalableBloomFilter filter;
  const Result<bool> started =
      filter.chain_.Start(initial_capacity, fp_rate, options, MakeBloomFilter);
  if (!started.ok()) return Err(started.error());
  return filter;
}

AddOutcome ScalableBloomFilter::AddHash(uint64_t hash) {
  if (chain_.filters().empty()) return AddOutcome::kFull;  // moved from
  if (MayContainHash(hash)) return AddOutcome::kMayBePresent;
  if (newest_keys_ >= chain_.newest_capacity()) {
    if (!chain_.Grow(MakeBloomFilter)) return AddOutcome::kFull;
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

}  // namespace sstfilter
