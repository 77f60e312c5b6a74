// SPDX-License-Identifier: Apache-2.0
// ScalableBloomFilter: a Bloom filter that grows with its set, for applications that cannot know
// their final size (RedisBloom's BF.RESERVE with EXPANSION; Almeida, Baquero, Preguica and
// Hutchison, "Scalable Bloom Filters", Information Processing Letters, 2007).
//
// It is a list of BloomFilters (include/sstfilter/bloom_filter.h). Keys go into the newest; when
// that one holds its capacity, a new one is added with `growth` times the capacity and
// `tightening` times the rate of the one before. The first has the rate p (1 - tightening), so the
// rates, summed over however many filters are ever added, stay below p: a key not in the set
// passes filter i with probability at most p (1 - r) r^i, and so passes the whole at most
//     sum_i p (1 - r) r^i < p            (r = tightening).
// That bound holds at every size, to within the blocked layout's sizing model, which reads 1-3%
// low (it takes a block's mean fill for its fill; BloomFilter::ExpectedFpRate, from the bits,
// measured 0.9% above it at 1% and 2.6% at 0.1%). The tests grow a filter 100x past its first
// capacity and measure it: 0.9925% at a 1% bound with the defaults. The price is memory: filter i
// needs about 1.44 (log2(1/p) + log2(1/(1 - r)) + i log2(1/r)) bits per key (a little more in the
// blocked layout), so each doubling costs 1.44 bits per key more with r = 0.5, 0.46 with r = 0.8:
// a set grown 100x from its first capacity costs two to three times a filter sized for it in
// advance (docs/applications.md gives the figures). A set
// expected to grow far does better with a tightening nearer 1; one that rarely grows with 0.5,
// which costs 1.44 bits per key before any growth against 3.3 for 0.8. The defaults are
// RedisBloom's: growth 2, tightening 0.5.
//
// Threads: queries may run from many threads at once, but not during an Add, which may append a
// filter to the list (one writer at a time, with no query running).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sstfilter/bloom_filter.h"
#include "sstfilter/export.h"
#include "sstfilter/result.h"
#include "sstfilter/scaling.h"

namespace sstfilter {

class SSTFILTER_EXPORT ScalableBloomFilter {
 public:
  // Fails, with a message, for a capacity of 0, a rate sstfilter does not accept, or options out
  // of range.
  // `layout`: the layout of every filter of the chain (BloomLayout, bloom_filter.h).
  static Result<ScalableBloomFilter> Create(uint64_t initial_capacity, double fp_rate,
                                            ScalingOptions options = {},
                                            BloomLayout layout = BloomLayout::kBlocked);

  AddOutcome Add(std::string_view key) { return AddHash(HashKey(key)); }
  AddOutcome AddHash(uint64_t hash);

  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }
  bool MayContainHash(uint64_t hash) const { return chain_.MayContainHash(hash); }
  // may_match[i] = MayContainHash(hashes[i]): each filter answers the whole batch with its memory
  // loads overlapped (BloomFilter::MayContainBatch). Allocates a flag per hash.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
    chain_.MayContainBatch(hashes, count, may_match);
  }
  // The filters, oldest first.
  const std::vector<BloomFilter>& filters() const { return chain_.filters(); }

  // Keys added (Add answered kAdded).
  uint64_t size() const { return size_; }
  // The keys the filters hold before the next one is added (or before kFull, not scaling).
  uint64_t capacity() const { return chain_.capacity(); }
  size_t num_filters() const { return chain_.filters().size(); }
  // The capacity and rate of the filter the next growth makes; false where the capacities would
  // pass 2^62 keys in all (then the filter cannot grow).
  bool PeekNextFilter(uint64_t* capacity, double* rate) const {
    return chain_.PeekNext(capacity, rate);
  }
  // The rate the whole answers with now, from the bits that are set: 1 - prod_i (1 - p_i), p_i
  // each filter's BloomFilter::ExpectedFpRate(). Reads every filter.
  double ExpectedFpRate() const;
  // The bound above: the rate asked of Create.
  double fp_rate() const { return chain_.fp_rate(); }
  uint64_t memory_bytes() const { return chain_.memory_bytes(); }

  // The filter as bytes (core/app_filters/chain_format.h: a header, then each BloomFilter's
  // Serialize), and back: Deserialize fails, with a message, for bytes that are not a scalable
  // Bloom filter this one could have become (truncated, corrupt, of another kind, or with filters
  // that its options would not have made), and then builds nothing.
  std::string Serialize() const;
  // Serialize()'s length, and its bytes [offset, offset + length) (BloomFilter's contract): only
  // the filters the range touches are read.
  uint64_t SerializedBytes() const;
  size_t SerializeRange(uint64_t offset, size_t length, void* out) const;
  static Result<ScalableBloomFilter> Deserialize(const void* data, size_t size);
  // Deserialize's last step, for bytes read in pieces (the Redis module's RDB loading): the
  // filter of the chain's 64-byte header and its filters, each read (BloomFilter::FromBody),
  // checked as Deserialize checks them.
  static Result<ScalableBloomFilter> FromFilters(const void* header,
                                                 std::vector<BloomFilter> filters);
  const ScalingOptions& options() const { return options_; }
  uint64_t initial_capacity() const { return initial_capacity_; }
  BloomLayout layout() const { return layout_; }

  // A moved-from filter takes no keys (kFull) and answers "may match" to every query.
  ScalableBloomFilter(ScalableBloomFilter&& other) noexcept { *this = std::move(other); }
  ScalableBloomFilter& operator=(ScalableBloomFilter&& other) noexcept {
    chain_ = std::move(other.chain_);
    newest_keys_ = std::exchange(other.newest_keys_, 0);
    size_ = std::exchange(other.size_, 0);
    options_ = other.options_;
    initial_capacity_ = other.initial_capacity_;
    layout_ = other.layout_;
    return *this;
  }

 private:
  friend class Result<ScalableBloomFilter>;  // its failed state holds a default-made filter
  ScalableBloomFilter() = default;

  FilterChain<BloomFilter> chain_;
  uint64_t newest_keys_ = 0;  // keys added to the newest filter
  uint64_t size_ = 0;
  ScalingOptions options_;  // as given to Create
  uint64_t initial_capacity_ = 0;
  BloomLayout layout_ = BloomLayout::kBlocked;
};

}  // namespace sstfilter
