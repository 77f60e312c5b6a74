// CuckooFilter: a cuckoo filter that grows key by key, for applications (the static SST kind is
// core/cuckoo/cuckoo.h). It serialises to the same byte format as the static build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuckoo/cuckoo.h"
#include "core/cuckoo/cuckoo_table.h"
#include "core/hash.h"
#include "core/result.h"

namespace sstfilter {

// A cuckoo filter that grows key by key, for applications: dedup of events already seen,
// "already read" exclusion. Fixed capacity; it holds a multiset of fingerprints, so adding a key
// twice stores it twice and erasing it once leaves one copy.
class CuckooFilter {
 public:
  // An empty filter sized for `capacity` keys at kCuckooTargetLoad.
  static Result<CuckooFilter> Create(uint64_t capacity, int fingerprint_bits);
  // A filter from the serialised bytes of any cuckoo filter (static or dynamic). Fails for bytes
  // that are not a valid cuckoo filter.
  static Result<CuckooFilter> Deserialize(const uint8_t* data, size_t size);

  CuckooFilter() = default;

  // Adds a key (by its KeyHash). Returns false, leaving the filter exactly as it was, when the key
  // cannot be placed: the table is full around this key. There is no hidden "victim" slot: a key
  // that was not added is never reported as added.
  bool AddHash(uint64_t hash);
  bool Add(std::string_view key) { return AddHash(KeyHash(key.data(), key.size())); }

  bool MayContainHash(uint64_t hash) const { return size_ > 0 && Reader().MayContain(hash); }
  bool MayContain(std::string_view key) const {
    return MayContainHash(KeyHash(key.data(), key.size()));
  }

  // Removes one copy of the key's fingerprint; false if none is present. Only erase keys that were
  // added: erasing a key never added can remove the fingerprint of another key that shares its
  // bucket and fingerprint, and that key then becomes a false negative.
  bool EraseHash(uint64_t hash);
  bool Erase(std::string_view key) { return EraseHash(KeyHash(key.data(), key.size())); }

  uint64_t size() const { return size_; }
  uint64_t num_buckets() const { return table_.num_buckets(); }
  int fingerprint_bits() const { return table_.fingerprint_bits(); }
  double load() const {
    return num_buckets() == 0
               ? 0
               : static_cast<double>(size_) / (num_buckets() * kCuckooSlotsPerBucket);
  }

  // The byte format of the cuckoo kind, with plain buckets (format version 1; a static build
  // semi-sorts them): readable by CuckooReader and FilterReader, and by Deserialize.
  std::string Serialize() const;

  // Copying would leave table_ pointing into the other filter's bytes.
  CuckooFilter(CuckooFilter&& other) noexcept { *this = std::move(other); }
  CuckooFilter& operator=(CuckooFilter&& other) noexcept;
  CuckooFilter(const CuckooFilter&) = delete;
  CuckooFilter& operator=(const CuckooFilter&) = delete;

 private:
  CuckooReader Reader() const {
    return CuckooReader(bytes_.data(), table_.num_buckets(), table_.fingerprint_bits(),
                        hashing_.seed());
  }

  std::vector<uint8_t> bytes_;
  CuckooTable table_;
  CuckooHashing hashing_;
  uint64_t size_ = 0;
  uint64_t rng_state_ = 0;
};

}  // namespace sstfilter
