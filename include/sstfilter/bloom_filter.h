// SPDX-License-Identifier: Apache-2.0
// BloomFilter: a Bloom filter for applications, which adds keys one at a time from many threads at
// once: the URLs a crawler has seen, the events a pipeline has processed, the items a user has
// read. Installed with sstfilter's core library (find_package(sstfilter COMPONENTS core), or
// pkg-config sstfilter-core), which needs no RocksDB.
//
//   auto created = sstfilter::BloomFilter::Create(/*capacity=*/10'000'000, /*fp_rate=*/0.01);
//   if (!created.ok()) { /* created.error() says why */ }
//   sstfilter::BloomFilter seen = std::move(created).value();
//   if (seen.TestAndAdd(event_id)) { /* probably a duplicate: drop it */ }
//
// By default it is a blocked Bloom filter, the layout of sstfilter's SST filters: all probes of a
// key fall in one 64-byte block, so an add or a query touches one cache line;
// BloomLayout::kStandard spreads them over the whole array, for the fewest bits per key. Its
// serialised bytes are a blocked (or standard) Bloom filter of sstfilter's byte format
// (docs/format.md), readable by the SST filter readers; a static one deserialises into a
// BloomFilter that can take more keys.
//
// Threads: Add, TestAndAdd, MayContain, Merge (into this filter) and the statistics may run at the
// same time from any number of threads, without a lock: bits are set by atomic OR (relaxed order).
// A query finds a key if its Add returned before the query, in the same thread or in one that
// learnt of it through any synchronisation (a mutex, a release store, a thread join). Clear,
// assignment and destruction need the caller to stop the other threads first.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sstfilter/export.h"
#include "sstfilter/filter_memory.h"
#include "sstfilter/hash_key.h"
#include "sstfilter/result.h"

namespace sstfilter {

// Where a BloomFilter puts a key's probes: kBlocked, all in one 64-byte block (one cache line per
// add or query; about 3% more bits than kStandard for the same rate at 1%), or kStandard, over the
// whole array (the textbook filter, -ln p / ln^2 2 bits per key: the fewest bits for a rate, at a
// cache miss per probe). The SST filter kinds of the same names (docs/format.md).
enum class BloomLayout : uint8_t { kBlocked = 0, kStandard = 1 };

class SSTFILTER_EXPORT BloomFilter {
 public:
  // An empty filter whose false-positive rate is at most fp_rate once `capacity` distinct keys are
  // in it (the rate keeps rising beyond). Fails for a capacity of 0, a rate outside sstfilter's
  // accepted range (as the SST policies), a size that overflows, or memory that cannot be had.
  static Result<BloomFilter> Create(uint64_t capacity, double fp_rate,
                                    BloomLayout layout = BloomLayout::kBlocked);

  // A filter from Serialize's bytes, or from any blocked or standard Bloom filter of sstfilter's
  // format. Fails, with a message, for anything else: bytes of another kind, truncated or corrupt
  // bytes.
  static Result<BloomFilter> Deserialize(const void* data, size_t size);
  // Deserialize in two steps, for bytes that arrive in pieces (the Redis module's RDB loading):
  // AllocateBody gives a buffer for a body of `body_bytes` (Serialize()'s bytes but the last 32),
  // which the caller fills with it; FromBody makes the filter of that body and the 32-byte
  // trailer after it, checked as Deserialize checks. The body becomes the filter's memory.
  static bool AllocateBody(uint64_t body_bytes, FilterBuffer* body);
  static Result<BloomFilter> FromBody(FilterBuffer body, uint64_t body_bytes,
                                      const uint8_t* trailer);

  // Adds a key. Returns true if the filter changed: the key was not reported present before. Two
  // threads adding the same new key at the same moment may both see true.
  bool Add(std::string_view key) { return AddHash(HashKey(key)); }
  bool AddHash(uint64_t hash);

  // Adds a key and returns whether it may have been present before: !Add(key).
  bool TestAndAdd(std::string_view key) { return !Add(key); }
  bool TestAndAddHash(uint64_t hash) { return !AddHash(hash); }

  // False: the key was never added. True: it probably was (a false positive at ExpectedFpRate()).
  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }
  bool MayContainHash(uint64_t hash) const;
  // may_match[i] = MayContainHash(hashes[i]), with the memory loads of many keys overlapped.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

  // Whether Merge can take `other`: the same layout, bits and probes (filters created with the
  // same capacity, rate and layout, or one a copy or deserialised form of the other).
  bool IsCompatible(const BloomFilter& other) const {
    return layout_ == other.layout_ && num_bits_ == other.num_bits_ &&
           num_probes_ == other.num_probes_;
  }
  // Adds every key of `other` (the union of the two sets). Fails, changing nothing, when the
  // filters are not compatible; the message gives both shapes.
  Result<bool> Merge(const BloomFilter& other);

  // An independent filter with the same keys (a snapshot, if other threads are adding).
  Result<BloomFilter> Copy() const;
  // Removes every key. Not safe while other threads use the filter.
  void Clear();

  // The number of distinct keys added, estimated from the bits that are set (each block's count of
  // set bits gives its keys; 0.06% off at capacity and 0.12% at twice it, printed by
  // BloomFilter.ApproximateElementCountFollowsTheKeys). Reads the whole filter.
  double ApproximateElementCount() const;
  // The false-positive rate now, from the bits that are set: the mean over blocks of the chance
  // that all probes of an absent key hit set bits. Reads the whole filter.
  double ExpectedFpRate() const;

  uint64_t capacity() const { return capacity_; }
  // The rate at capacity, as sized (at most the rate asked of Create).
  double fp_rate_at_capacity() const { return fp_rate_at_capacity_; }
  int num_probes() const { return num_probes_; }
  BloomLayout layout() const { return layout_; }
  // The bytes the bit array holds: whole 64-byte blocks (a standard filter's last may be partly
  // unused).
  uint64_t memory_bytes() const { return num_blocks_ * kBlockBytes; }

  // sstfilter's byte format (a blocked Bloom filter whose key count is the capacity): Deserialize
  // and the SST filter readers read it.
  std::string Serialize() const;
  // The length of Serialize()'s bytes, and a part of them: SerializeRange copies the bytes
  // [offset, offset + length) of Serialize() to `out`, as many of them as there are, and returns
  // how many. A filter of gigabytes goes to a file or a socket in pieces so, with no copy of the
  // whole.
  uint64_t SerializedBytes() const;
  size_t SerializeRange(uint64_t offset, size_t length, void* out) const;
  // Whether the filter is the one Create(capacity, fp_rate, layout()) makes: the same bits, probes
  // and capacity (a deserialised filter is checked so before it joins a scalable filter).
  bool IsSizedFor(uint64_t capacity, double fp_rate) const;

  // A moved-from filter takes no keys and answers "may match" to every query.
  BloomFilter(BloomFilter&& other) noexcept { *this = std::move(other); }
  BloomFilter& operator=(BloomFilter&& other) noexcept;
  // Copying a filter of gigabytes is never an accident here: Copy() says it.
  BloomFilter(const BloomFilter&) = delete;
  BloomFilter& operator=(const BloomFilter&) = delete;
  ~BloomFilter();

 private:
  friend class Result<BloomFilter>;  // its failed state holds a default-made filter
  static constexpr uint64_t kBlockBytes = 64;
  static constexpr uint64_t kWordsPerBlock = kBlockBytes / 8;

  BloomFilter() = default;
  // A zeroed filter of num_bits bits in `layout` (whole blocks allocated); false if the memory
  // cannot be had.
  bool Allocate(BloomLayout layout, uint64_t num_bits);
  // Takes `buffer` (num_bits in whole blocks, at least) as the bit array, its bytes read as
  // little-endian words; false, taking nothing, if it is too small.
  bool Adopt(BloomLayout layout, uint64_t num_bits, FilterBuffer* buffer);
  // The set bits of the whole array (kStandard's estimates read it).
  uint64_t BitsSet() const;
  // The rate the model of its layout gives for `keys` keys in this filter's bits and probes.
  double EstimatedFpRateAt(uint64_t keys) const;
  // Counts blocks by their number of set bits, 0 to 512: what both estimates read.
  void BlockFillHistogram(uint64_t* blocks_with_bits) const;

  FilterBuffer buffer_;                     // the bits (filter_memory.h)
  std::atomic<uint64_t>* words_ = nullptr;  // num_blocks_ * 8 words in buffer_
  uint64_t num_blocks_ = 0;
  uint64_t num_bits_ = 0;  // the bits probes reach: all (kBlocked), whole words (kStandard)
  BloomLayout layout_ = BloomLayout::kBlocked;
  int num_probes_ = 0;
  uint64_t capacity_ = 0;
  double fp_rate_at_capacity_ = 0;
};

}  // namespace sstfilter
