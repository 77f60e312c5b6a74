// SPDX-License-Identifier: Apache-2.0
// What the scalable filters (scalable_bloom_filter.h, scalable_cuckoo_filter.h) share: how they
// grow (ScalingOptions, and the ScalingSchedule they make), and what an add answers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sstfilter/result.h"

namespace sstfilter {

// A scalable filter is a list of filters. When the newest holds its capacity, a new one is added
// with `growth` times its capacity and `tightening` times its rate; the first has the rate
// p (1 - tightening), so the rates of however many filters are ever added sum to less than p.
// Without scaling there is only the first filter, and it has the rate p.
struct ScalingOptions {
  double growth = 2;        // capacity of each new filter over the previous one's, in [1, 32768]
  double tightening = 0.5;  // rate of each new filter over the previous one's, in (0, 1)
  bool scaling = true;      // false: at capacity, Add answers kFull instead of adding a filter
};

enum class AddOutcome {
  kAdded,         // the key is now in the filter
  kMayBePresent,  // the filter already reported the key (added before, or a false positive)
  kFull,          // not added: a non-scaling filter at capacity, or no room for a further filter
};

// The capacity and rate of each filter a scalable filter adds, one after another.
class ScalingSchedule {
 public:
  // Fails, with a message, for options or a rate out of range, or a capacity of 0.
  static Result<ScalingSchedule> Create(uint64_t initial_capacity, double fp_rate,
                                        const ScalingOptions& options) {
    if (!(options.growth >= 1 && options.growth <= 32768)) {
      return Err("growth must be in [1, 32768], got " + std::to_string(options.growth));
    }
    if (!(options.tightening > 0 && options.tightening < 1)) {
      return Err("tightening must be in (0, 1), got " + std::to_string(options.tightening));
    }
    if (!(fp_rate > 0 && fp_rate < 1)) {
      return Err("fp_rate must be in (0, 1), got " + std::to_string(fp_rate));
    }
    if (initial_capacity == 0) return Err("capacity must be at least 1 key");
    ScalingSchedule s;
    s.growth_ = options.growth;
    s.tightening_ = options.tightening;
    // The first filter's share of the bound: the geometric series of the rates sums to fp_rate.
    // A chain that does not scale has only the first filter, which then takes the whole bound.
    s.next_rate_ = options.scaling ? fp_rate * (1 - options.tightening) : fp_rate;
    s.next_capacity_ = static_cast<double>(initial_capacity);
    return s;
  }

  // The capacity and rate of the next filter; false when the capacities would pass 2^62 keys in
  // all (beyond any memory, and the limit that keeps their sums from overflowing).
  bool Peek(uint64_t* capacity, double* rate) const {
    const double c = std::ceil(next_capacity_);
    if (!(c + total_capacity_ < 4.6e18)) return false;
    *capacity = static_cast<uint64_t>(c);
    *rate = next_rate_;
    return true;
  }
  // Moves on to the filter after the one Peek gave, once that one was made.
  void Advance() {
    total_capacity_ += std::ceil(next_capacity_);
    next_capacity_ *= growth_;
    next_rate_ *= tightening_;
  }

 private:
  double growth_ = 2, tightening_ = 0.5;
  double next_capacity_ = 0, next_rate_ = 0, total_capacity_ = 0;
};

// The most filters a scalable filter holds; beyond it Add answers kFull. A chain stops sooner where
// its next filter's rate is below what its kind sizes (each is `tightening` times the one
// before's): at tightening 0.5 from 1%, after 62 standard-layout Bloom filters (100 bits per key,
// about 1.4e-21) or 22 cuckoo filters (32-bit fingerprints, about 1.9e-9).
inline constexpr size_t kMaxChainFilters = 65536;

// The filters of a scalable filter, oldest first, with the schedule of the next: the mechanism the
// scalable Bloom and cuckoo filters share (Filter has MayContainHash and memory_bytes).
// `make(capacity, rate)` returns a Result<Filter> for one filter of that capacity whose
// false-positive rate is at most `rate`.
template <typename Filter>
class FilterChain {
 public:
  // The first filter; an error for options, a capacity or a rate that it cannot take.
  template <typename Make>
  Result<bool> Start(uint64_t initial_capacity, double fp_rate, const ScalingOptions& options,
                     Make&& make) {
    auto schedule = ScalingSchedule::Create(initial_capacity, fp_rate, options);
    if (!schedule.ok()) return Err(schedule.error());
    schedule_ = schedule.value();
    scaling_ = options.scaling;
    fp_rate_ = fp_rate;
    uint64_t capacity = 0;
    double rate = 0;
    if (!schedule_.Peek(&capacity, &rate)) {
      return Err("capacity " + std::to_string(initial_capacity) + " is too large");
    }
    auto first = make(capacity, rate);
    if (!first.ok()) return Err(first.error());
    Append(std::move(first).value(), capacity);
    return true;
  }

  // Appends the next filter. False, changing nothing, when the chain does not scale, or the
  // schedule or `make` cannot give one (a capacity past 2^62 keys, a rate too small to size, no
  // memory), or the chain has kMaxChainFilters: the scalable filter is then full.
  template <typename Make>
  bool Grow(Make&& make) {
    uint64_t capacity = 0;
    double rate = 0;
    if (!scaling_ || filters_.size() >= kMaxChainFilters || !schedule_.Peek(&capacity, &rate)) {
      return false;
    }
    auto next = make(capacity, rate);
    if (!next.ok()) return false;
    Append(std::move(next).value(), capacity);
    return true;
  }

  // A chain of the filters given, oldest first, that must be those Start and Grow would have made:
  // `fits(filter, capacity, rate)` tells whether a filter is the one of that capacity and rate.
  // An error, leaving the chain empty, for options, a capacity or a rate out of range, no filters,
  // more than one in a chain that does not scale, or a filter that is not the schedule's.
  template <typename Fits>
  Result<bool> Restore(uint64_t initial_capacity, double fp_rate, const ScalingOptions& options,
                       std::vector<Filter> filters, Fits&& fits) {
    auto schedule = ScalingSchedule::Create(initial_capacity, fp_rate, options);
    if (!schedule.ok()) return Err(schedule.error());
    if (filters.empty()) return Err("no filters");
    if (filters.size() > kMaxChainFilters) return Err("more than kMaxChainFilters filters");
    if (!options.scaling && filters.size() > 1) {
      return Err(std::to_string(filters.size()) + " filters in a chain that does not scale");
    }
    FilterChain chain;
    chain.schedule_ = schedule.value();
    chain.scaling_ = options.scaling;
    chain.fp_rate_ = fp_rate;
    for (size_t i = 0; i < filters.size(); ++i) {
      uint64_t capacity = 0;
      double rate = 0;
      if (!chain.schedule_.Peek(&capacity, &rate) || !fits(filters[i], capacity, rate)) {
        return Err("filter " + std::to_string(i) + " is not the one the chain's schedule makes");
      }
      chain.Append(std::move(filters[i]), capacity);
    }
    *this = std::move(chain);
    return true;
  }

  FilterChain() = default;
  // A moved-from chain is empty: no filter, no capacity, does not scale.
  FilterChain(FilterChain&& other) noexcept { *this = std::move(other); }
  FilterChain& operator=(FilterChain&& other) noexcept {
    if (this != &other) {
      filters_ = std::move(other.filters_);
      other.filters_.clear();
      newest_capacity_ = std::exchange(other.newest_capacity_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      fp_rate_ = other.fp_rate_;
      scaling_ = std::exchange(other.scaling_, false);
      schedule_ = other.schedule_;
    }
    return *this;
  }

  // Whether any filter may hold the key, newest first (the largest holds most keys). A moved-from
  // chain, with no filter, answers "may match": never a false negative.
  bool MayContainHash(uint64_t hash) const {
    if (filters_.empty()) return true;
    for (size_t i = filters_.size(); i-- > 0;) {
      if (filters_[i].MayContainHash(hash)) return true;
    }
    return false;
  }
  // may_match[i] = MayContainHash(hashes[i]), each filter answering the whole batch
  // (Filter::MayContainBatch); allocates a flag per hash.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
    for (size_t i = 0; i < count; ++i) may_match[i] = filters_.empty();
    if (filters_.empty() || count == 0) return;
    const std::unique_ptr<bool[]> in_one(new bool[count]);
    for (const Filter& f : filters_) {
      f.MayContainBatch(hashes, count, in_one.get());
      for (size_t i = 0; i < count; ++i) may_match[i] = may_match[i] || in_one[i];
    }
  }
  // The bytes of all the filters.
  uint64_t memory_bytes() const {
    uint64_t bytes = 0;
    for (const Filter& f : filters_) bytes += f.memory_bytes();
    return bytes;
  }

  std::vector<Filter>& filters() { return filters_; }
  const std::vector<Filter>& filters() const { return filters_; }
  // The capacity of the newest filter, and of all of them.
  uint64_t newest_capacity() const { return newest_capacity_; }
  uint64_t capacity() const { return capacity_; }
  double fp_rate() const { return fp_rate_; }
  // The capacity and rate of the filter Grow would make next; false past 2^62 keys in all
  // (ScalingSchedule::Peek).
  bool PeekNext(uint64_t* capacity, double* rate) const { return schedule_.Peek(capacity, rate); }

 private:
  void Append(Filter filter, uint64_t capacity) {
    filters_.push_back(std::move(filter));
    schedule_.Advance();
    newest_capacity_ = capacity;
    capacity_ += capacity;
  }

  std::vector<Filter> filters_;
  uint64_t newest_capacity_ = 0;
  uint64_t capacity_ = 0;
  double fp_rate_ = 0;
  bool scaling_ = true;
  ScalingSchedule schedule_;
};

}  // namespace sstfilter
