// ScalableBloomFilter (include/sstfilter/scalable_bloom_filter.h): a list of BloomFilters of
// growing capacity and tightening rate.
#include "sstfilter/scalable_bloom_filter.h"

#include <cmath>
#include <string>

namespace sstfilter {

Result<ScalableBloomFilter> ScalableBloomFilter::Create(uint64_t initial_capacity, double fp_rate,
                                                        ScalingOptions options) {
  if (!(options.growth >= 1 && options.growth <= 1024)) {
    return Err("growth must be in [1, 1024], got " + std::to_string(options.growth));
  }
  if (!(options.tightening > 0 && options.tightening < 1)) {
    return Err("tightening must be in (0, 1), got " + std::to_string(options.tightening));
  }
  if (!(fp_rate > 0 && fp_rate < 1)) {
    return Err("fp_rate must be in (0, 1), got " + std::to_string(fp_rate));
  }
  ScalableBloomFilter filter;
  filter.options_ = options;
  filter.fp_rate_ = fp_rate;
  // The first filter's share of the bound: the geometric series of the rates sums to fp_rate.
  filter.next_rate_ = fp_rate * (1 - options.tightening);
  filter.next_capacity_ = static_cast<double>(initial_capacity);
  // The first filter is made now, so that a bad capacity or rate fails here, with its message.
  auto first = BloomFilter::Create(initial_capacity, filter.next_rate_);
  if (!first.ok()) return Err(first.error());
  filter.filters_.push_back(std::move(first).value());
  filter.filter_capacities_.push_back(initial_capacity);
  filter.capacity_ = initial_capacity;
  filter.next_rate_ *= options.tightening;
  filter.next_capacity_ *= options.growth;
  return filter;
}

bool ScalableBloomFilter::Grow() {
  // Capacities stay below 2^62 keys: far beyond any memory, and no overflow in the sums.
  if (!(next_capacity_ < 4.6e18) || capacity_ + next_capacity_ >= 4.6e18) return false;
  const uint64_t capacity = static_cast<uint64_t>(std::ceil(next_capacity_));
  auto next = BloomFilter::Create(capacity, next_rate_);
  if (!next.ok()) return false;  // a rate too small to size, or no memory: the filter is full
  filters_.push_back(std::move(next).value());
  filter_capacities_.push_back(capacity);
  capacity_ += capacity;
  last_filter_keys_ = 0;
  next_rate_ *= options_.tightening;
  next_capacity_ *= options_.growth;
  return true;
}

AddOutcome ScalableBloomFilter::AddHash(uint64_t hash) {
  if (MayContainHash(hash)) return AddOutcome::kMayBePresent;
  if (last_filter_keys_ >= filter_capacities_.back()) {
    if (!options_.scaling || !Grow()) return AddOutcome::kFull;
  }
  // The key is in no filter, so it changes the newest: every key added is counted once.
  filters_.back().AddHash(hash);
  ++last_filter_keys_;
  ++size_;
  return AddOutcome::kAdded;
}

bool ScalableBloomFilter::MayContainHash(uint64_t hash) const {
  // Newest first: the largest filter holds most of the keys.
  for (size_t i = filters_.size(); i-- > 0;) {
    if (filters_[i].MayContainHash(hash)) return true;
  }
  return false;
}

double ScalableBloomFilter::ExpectedFpRate() const {
  double none = 1;  // the chance that no filter passes an absent key
  for (const BloomFilter& f : filters_) none *= 1 - f.ExpectedFpRate();
  return 1 - none;
}

uint64_t ScalableBloomFilter::memory_bytes() const {
  uint64_t bytes = 0;
  for (const BloomFilter& f : filters_) bytes += f.memory_bytes();
  return bytes;
}

}  // namespace sstfilter
