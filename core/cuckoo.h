// Cuckoo filters (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo Filter: Practically Better Than
// Bloom", CoNEXT 2014) over 64-bit key hashes, with 4-slot buckets and bit-packed f-bit
// fingerprints (core/cuckoo_table.h).
//
// From a key hash h and the filter's seed:
//   h'  = h                                  if seed = 0
//         Mix64(h + seed * kGoldenMul64)     otherwise (a retry's fresh, independent placement)
//   i1  = FastRange64(h', num_buckets)                    (high bits of h')
//   fp  = FastRange32(low 32 bits of h', 2^f - 1) + 1     (never 0: 0 marks an empty slot)
//   i2  = Alt(i1, fp) = (c - i1) mod num_buckets, c = 2 FastRange64(fp * kFingerprintMul,
//         num_buckets / 2) + 1
// Alt is its own inverse for any bucket count: Alt(Alt(i)) = c - (c - i) = i (mod m), so a
// fingerprint can move between its two buckets knowing only where it is, as the paper's
// partial-key cuckoo hashing requires (section 3.1), without the paper's power-of-two table. And
// because the count m is even and c is odd, c - i = i (mod m) would need 2i = c (mod m), an
// even number equal to an odd one: the two buckets always differ.
//
// A query is a hit if fp is in bucket i1 or i2: two bucket loads, one SWAR compare each.
//
// The static build (BuildCuckooFilter) is for immutable SST files: it knows every key, so a key
// whose fingerprint is already in one of its buckets is represented and is not stored again. That
// makes any number of duplicate or colliding hashes harmless. Placement uses bounded random
// eviction walks; if a walk fails it is undone, the build starts over with the next seed, and after
// a few seeds with 3% more buckets. It never fails and never drops a key, and it is deterministic:
// the same hashes give the same bytes.
//
// Trailer (core/format.h): kind kCuckoo, num_keys = fingerprints stored, num_units = buckets,
// seed = the seed placement succeeded with, param = fingerprint_bits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuckoo_table.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/sizing.h"

namespace sstfilter {

// Spreads fingerprints over the bucket offsets in Alt. Odd, so fp -> fp * kFingerprintMul is a
// bijection and distinct fingerprints get distinct 64-bit products.
inline constexpr uint64_t kFingerprintMul = 0xc2b2'ae3d'27d4'eb4full;

// Where a key lives in a table of a given shape. Cheap to copy.
class CuckooHashing {
 public:
  CuckooHashing() = default;
  CuckooHashing(uint64_t num_buckets, int fingerprint_bits, uint32_t seed)
      : num_buckets_(num_buckets),
        fingerprint_values_(static_cast<uint32_t>((uint64_t{1} << fingerprint_bits) - 1)),
        seed_(seed) {}

  uint64_t Remix(uint64_t hash) const {
    return seed_ == 0 ? hash : Mix64(hash + seed_ * kGoldenMul64);
  }
  uint64_t Bucket(uint64_t remixed) const { return FastRange64(remixed, num_buckets_); }
  uint32_t Fingerprint(uint64_t remixed) const {
    return FastRange32(static_cast<uint32_t>(remixed), fingerprint_values_) + 1;
  }
  uint64_t Alt(uint64_t bucket, uint32_t fp) const {
    const uint64_t c = 2 * FastRange64(fp * kFingerprintMul, num_buckets_ / 2) + 1;
    return c >= bucket ? c - bucket : c + num_buckets_ - bucket;
  }

  uint32_t seed() const { return seed_; }

 private:
  uint64_t num_buckets_ = 0;
  uint32_t fingerprint_values_ = 0;  // 2^f - 1: fingerprints are 1..2^f - 1
  uint32_t seed_ = 0;
};

// A view over a parsed cuckoo body: the query side, for SST files and serialised dynamic filters.
class CuckooReader {
 public:
  CuckooReader() = default;
  CuckooReader(const uint8_t* table, uint64_t num_buckets, int fingerprint_bits, uint32_t seed)
      : table_(table, num_buckets, fingerprint_bits),
        hashing_(num_buckets, fingerprint_bits, seed) {}

  bool MayContain(uint64_t hash) const {
    const uint64_t h = hashing_.Remix(hash);
    const uint64_t i1 = hashing_.Bucket(h);
    const uint32_t fp = hashing_.Fingerprint(h);
    // Both buckets are tested without a branch between them: a hit found in the first bucket
    // is about as likely as one in the second, so a branch would be mispredicted.
    return (static_cast<int>(table_.Contains(i1, fp)) |
            static_cast<int>(table_.Contains(hashing_.Alt(i1, fp), fp))) != 0;
  }

  // Prefetches both buckets of every key first, then tests them.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const;

 private:
  CuckooTableView table_;
  CuckooHashing hashing_;
};

struct CuckooParams {
  int fingerprint_bits = 13;
  double load = kCuckooTargetLoad;  // the load the table is sized for
};

// Parameters for a target rate (fingerprint width from the paper's bound) or a space budget.
Result<CuckooParams> CuckooParamsForFpRate(double fp_rate);
Result<CuckooParams> CuckooParamsForBitsPerKey(double bits_per_key);

// Size in bytes of the filter a static build of num_keys distinct keys aims for (before any
// retry with more buckets): table plus trailer; 32 for zero keys.
Result<uint64_t> CuckooFilterBytes(const CuckooParams& params, uint64_t num_keys);
// The most keys whose nominal filter fits in `bytes`: the exact inverse of CuckooFilterBytes.
uint64_t CuckooMaxKeysForBytes(const CuckooParams& params, uint64_t bytes);

// Statistics of a static build, for benchmarks and tests.
struct CuckooBuildInfo {
  uint64_t stored = 0;       // fingerprints stored (keys after dropping represented ones)
  uint64_t num_buckets = 0;  // buckets of the final table
  uint32_t seed = 0;         // the seed placement succeeded with
  int attempts = 1;          // placements tried (1 = the first succeeded)
  double load() const {
    return num_buckets == 0 ? 0
                            : static_cast<double>(stored) / (num_buckets * kCuckooSlotsPerBucket);
  }
};

// Builds the static filter for hashes[0, count) (any order, duplicates allowed) into *out (which
// is replaced). Fails only for invalid params.
Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const uint64_t* hashes,
                                          size_t count, std::string* out);
// The same from the chunked hash list of a builder.
Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const HashList& hashes,
                                          std::string* out);

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

  // The same byte format as the static build; readable by CuckooReader and FilterReader.
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
