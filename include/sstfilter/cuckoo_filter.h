// SPDX-License-Identifier: Apache-2.0
// CuckooFilter: a cuckoo filter that grows key by key and can forget keys, for applications:
// events already seen, items already read (RedisBloom's CF.ADD, CF.DEL, CF.COUNT). Installed with
// sstfilter's core library (find_package(sstfilter COMPONENTS core)); no RocksDB. It serialises to
// the byte format of the cuckoo kind of the SST filters: semi-sorted buckets from 5-bit
// fingerprints on (format version 3), plain ones for 4 bits (version 1).
//
//   auto created = sstfilter::CuckooFilter::Create(/*capacity=*/1'000'000,
//   /*fingerprint_bits=*/13); if (!created.ok()) { /* created.error() says why */ }
//   sstfilter::CuckooFilter seen = std::move(created).value();
//   if (!seen.MayContain(url)) { crawl(url); if (!seen.Add(url)) { /* full */ } }
//
// The rate with f-bit fingerprints is at most load x 8 / (2^f - 1) (8 slots in two buckets, each
// matching with chance 1 / (2^f - 1) when occupied), 0.093% at 13 bits and 95% load; the table
// costs (f - 1) / 0.95 bits per key of capacity (semi-sorted: the order of a bucket's 4
// fingerprints carries no information, and sorting them saves 4 bits a bucket), f / 0.95 at 4.
//
// Deletion, and its caveat: Erase removes one copy of the key's fingerprint. Only erase keys that
// were added. Erasing a key that was never added can remove the fingerprint of another key that
// shares its bucket and fingerprint (as likely as a false positive), and that key is then lost: a
// false negative. A 4-bit counting Bloom filter, the other way to delete from a filter, has the
// same caveat at four times a Bloom filter's size.
//
// Determinism: where Add places a key (the kicks of its walk) follows from the key and the table
// alone, so the bytes of a filter follow from its adds and erases, in order: a replica that
// replays them holds the same bytes, whatever it loaded them from.
//
// Threads: const methods may run at the same time from many threads; Add and Erase need one writer
// at a time, with no query running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sstfilter/export.h"
#include "sstfilter/filter_memory.h"
#include "sstfilter/hash_key.h"
#include "sstfilter/result.h"

namespace sstfilter {

class SSTFILTER_EXPORT CuckooFilter {
 public:
  // An empty filter for `capacity` keys at 95% load, with fingerprints of 4 to 32 bits. Fails, with
  // a message, for a capacity of 0, a width outside 4..32, or a size that overflows.
  static Result<CuckooFilter> Create(uint64_t capacity, int fingerprint_bits);
  // A filter from the serialised bytes of any cuckoo filter (static or dynamic). Fails, with a
  // message, for bytes that are not a valid cuckoo filter.
  static Result<CuckooFilter> Deserialize(const void* data, size_t size);
  // Deserialize in two steps, as BloomFilter's: a buffer for the body, then the filter of the
  // filled body and its trailer (a plain or version-3 table becomes the filter's memory).
  static bool AllocateBody(uint64_t body_bytes, FilterBuffer* body);
  static Result<CuckooFilter> FromBody(FilterBuffer body, uint64_t body_bytes,
                                       const uint8_t* trailer);

  // Adds a key. Returns false, leaving the filter exactly as it was, when the key cannot be placed:
  // the table is full around this key. There is no hidden "victim" slot: a key that was not added
  // is never reported as added. Adding a key twice stores it twice (Count counts the copies).
  bool Add(std::string_view key) { return AddHash(HashKey(key)); }
  bool AddHash(uint64_t hash);

  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }
  bool MayContainHash(uint64_t hash) const;
  // may_match[i] = MayContainHash(hashes[i]), with both buckets of many keys loaded at once.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

  // The copies of the key's fingerprint in its two buckets, 0 to 8: how many times it was added
  // and not erased, plus any other key's equal fingerprint there (a false positive's count). In a
  // filter deserialised from a static build, keys that share a fingerprint share one copy.
  int Count(std::string_view key) const { return CountHash(HashKey(key)); }
  int CountHash(uint64_t hash) const;

  // Removes one copy of the key's fingerprint; false if none is present. See the caveat above.
  // Also false, removing nothing, for a filter deserialised from a static SST build in semi-sorted
  // buckets: a static build stores a fingerprint once for all the keys of a bucket pair that share
  // it, so erasing one key would lose the others. (Static builds in plain buckets, of 4-bit
  // fingerprints or from sstfilter before semi-sorting, cannot be told from a CuckooFilter's own
  // bytes: do not erase from those.)
  bool Erase(std::string_view key) { return EraseHash(HashKey(key)); }
  bool EraseHash(uint64_t hash);

  // Fingerprints stored.
  uint64_t size() const { return size_; }
  uint64_t num_buckets() const { return num_buckets_; }
  int fingerprint_bits() const { return fingerprint_bits_; }
  // Stored fingerprints over slots.
  double load() const;
  // The bytes of the table.
  uint64_t memory_bytes() const { return bytes_.size(); }

  // The byte format of the cuckoo kind, in the filter's layout (version 3 or 1, above; a static
  // build's are 2 or 1): readable by the SST filter readers and by Deserialize.
  std::string Serialize() const;
  // Serialize()'s length, and its bytes [offset, offset + length) (BloomFilter's contract).
  uint64_t SerializedBytes() const;
  size_t SerializeRange(uint64_t offset, size_t length, void* out) const;
  // Whether the filter is the one Create(capacity, fingerprint_bits) makes: the same buckets and
  // fingerprints, in buckets that Erase may change (plain ones too: a filter serialised before
  // version 3 keeps its layout).
  bool IsSizedFor(uint64_t capacity, int fingerprint_bits) const;

  // A moved-from filter is empty: it holds nothing and accepts nothing.
  CuckooFilter(CuckooFilter&& other) noexcept { *this = std::move(other); }
  CuckooFilter& operator=(CuckooFilter&& other) noexcept;

 private:
  friend class Result<CuckooFilter>;  // its failed state holds a default-made filter
  CuckooFilter() = default;

  FilterBuffer bytes_;  // the table in layout_, then its pad bytes
  uint64_t num_buckets_ = 0;
  int fingerprint_bits_ = 0;
  uint32_t seed_ = 0;  // the hashing seed (core/cuckoo/cuckoo.h, CuckooHashing)
  uint64_t size_ = 0;
  bool erasable_ = true;  // false for a static build's semi-sorted table (see Erase)
  uint8_t layout_ = 1;    // the format version of bytes_: 1 plain, 3 semi-sorted (CuckooLayout)
};

}  // namespace sstfilter
