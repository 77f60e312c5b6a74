// SPDX-License-Identifier: Apache-2.0
// Cuckoo filters (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo Filter: Practically Better Than
// Bloom", CoNEXT 2014) over 64-bit key hashes, with 4-slot buckets and bit-packed f-bit
// fingerprints (core/cuckoo/cuckoo_table.h).
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
// This header is the static cuckoo filter kind (FilterKind 3); the dynamic CuckooFilter for
// applications is in include/sstfilter/cuckoo_filter.h (implemented in cuckoo_filter.cc).
//
// Body: the bucket table, semi-sorted (core/cuckoo/semi_sorted_table.h, format version 2 from a
// static build, 3 from the dynamic CuckooFilter) from 5-bit fingerprints on, plain
// (core/cuckoo/cuckoo_table.h, version 1) for 4 bits (and the dynamic filters written before
// version 3). A static build places fingerprints in a plain table, then encodes it. Trailer
// (core/format.h): num_keys = fingerprints stored, num_units = buckets, seed = the seed placement
// succeeded with, param = fingerprint_bits, version = the layout. Sizing math: core/cuckoo/math.h.
// Every byte: docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/cuckoo/cuckoo_table.h"
#include "core/cuckoo/math.h"
#include "core/cuckoo/semi_sorted_table.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/result.h"

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

  uint64_t Remix(uint64_t hash) const { return RemixHash(hash, seed_); }
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

// The two bucket tables of the cuckoo kind. The value is the format version (trailer byte 22) of
// the bytes that use it, so a reader knows the layout from the version.
enum class CuckooLayout : uint8_t {
  kPlain = 1,       // core/cuckoo/cuckoo_table.h: f bits a slot
  kSemiSorted = 2,  // core/cuckoo/semi_sorted_table.h: f - 1 bits a slot, for f >= 5; a static
                    // build's, which stores a fingerprint once for the keys of a bucket pair
                    // that share it (so none may be erased)
  kSemiSortedMultiset = 3,  // the same bytes, each key's fingerprint stored (the dynamic
                            // CuckooFilter's: one copy may be erased)
};

// Whether a layout's bytes are semi-sorted buckets (one exhaustive switch: -Wswitch).
inline bool IsSemiSorted(CuckooLayout layout) {
  switch (layout) {
    case CuckooLayout::kPlain:
      return false;
    case CuckooLayout::kSemiSorted:
    case CuckooLayout::kSemiSortedMultiset:
      return true;
  }
  return false;  // not reached
}

// The layout a static build writes for f-bit fingerprints.
inline CuckooLayout StaticCuckooLayout(int fingerprint_bits) {
  return fingerprint_bits >= kCuckooSemiSortMinFingerprintBits ? CuckooLayout::kSemiSorted
                                                               : CuckooLayout::kPlain;
}

// The layout the dynamic CuckooFilter creates for f-bit fingerprints.
inline CuckooLayout DynamicCuckooLayout(int fingerprint_bits) {
  return fingerprint_bits >= kCuckooSemiSortMinFingerprintBits ? CuckooLayout::kSemiSortedMultiset
                                                               : CuckooLayout::kPlain;
}

// Bytes of a table of num_buckets buckets in a layout, its pad bytes included.
uint64_t CuckooTableBytes(uint64_t num_buckets, int fingerprint_bits, CuckooLayout layout);

// A view over a parsed cuckoo body, of either layout: the query side, for SST files and
// serialised dynamic filters.
class CuckooReader {
 public:
  CuckooReader() = default;
  CuckooReader(const uint8_t* table, uint64_t num_buckets, int fingerprint_bits, uint32_t seed,
               CuckooLayout layout = CuckooLayout::kPlain)
      : semi_sorted_(IsSemiSorted(layout)), hashing_(num_buckets, fingerprint_bits, seed) {
    if (semi_sorted_) {
      sorted_ = SemiSortedTableView(table, num_buckets, fingerprint_bits);
    } else {
      plain_ = CuckooTableView(table, num_buckets, fingerprint_bits);
    }
  }

  bool MayContain(uint64_t hash) const {
    const uint64_t h = hashing_.Remix(hash);
    const uint64_t i1 = hashing_.Bucket(h);
    const uint32_t fp = hashing_.Fingerprint(h);
    const uint64_t i2 = hashing_.Alt(i1, fp);
    // The layout branch goes the same way for every query of a filter: always predicted.
    return semi_sorted_ ? sorted_.ContainsEither(i1, i2, fp) : EitherHolds(plain_, i1, i2, fp);
  }

  // Starts loading both of the key's buckets.
  void Prefetch(uint64_t hash) const {
    const uint64_t h = hashing_.Remix(hash);
    const uint64_t i1 = hashing_.Bucket(h);
    PrefetchBucket(i1);
    PrefetchBucket(hashing_.Alt(i1, hashing_.Fingerprint(h)));
  }

  // Prefetches both buckets of every key first (unless the caller did: BatchPrefetch), then
  // tests them.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;

 private:
  void PrefetchBucket(uint64_t bucket) const {
    if (semi_sorted_) {
      PrefetchBytes(sorted_.BucketAddress(bucket), sorted_.BucketReadBytes());
    } else {
      PrefetchBytes(plain_.BucketAddress(bucket), plain_.BucketReadBytes());
    }
  }
  // Both buckets are tested without a branch between them: a hit found in the first bucket is
  // about as likely as one in the second, so a branch would be mispredicted.
  template <typename Table>
  static bool EitherHolds(const Table& table, uint64_t i1, uint64_t i2, uint32_t fp) {
    return (static_cast<int>(table.Contains(i1, fp)) | static_cast<int>(table.Contains(i2, fp))) !=
           0;
  }

  bool semi_sorted_ = false;
  CuckooTableView plain_;       // when !semi_sorted_
  SemiSortedTableView sorted_;  // when semi_sorted_
  CuckooHashing hashing_;
};

struct CuckooParams {
  int fingerprint_bits = 13;
  double load = kCuckooTargetLoad;  // the load the table is sized for
};

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
// is replaced), in StaticCuckooLayout(f) unless `layout` says which (tests write the plain layout
// of older versions with it; the semi-sorted one needs f >= 5). Fails only for invalid params.
// Cuckoo::Build is the same without the statistics.
Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const uint64_t* hashes,
                                          size_t count, std::string* out,
                                          std::optional<CuckooLayout> layout = std::nullopt);
// The same from the chunked hash list of a builder.
Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const HashList& hashes,
                                          std::string* out);

// The kind's descriptor (the operations every kind provides: core/kinds.h).
struct Cuckoo {
  using Params = CuckooParams;
  using Reader = CuckooReader;
  static constexpr FilterKind kId = FilterKind{3};
  static constexpr const char* kName = "cuckoo";
  // Version 1: plain buckets; 2 and 3: semi-sorted (CuckooLayout).
  static constexpr uint8_t kMaxVersion = 3;

  // Parameters for a target rate (fingerprint width from the paper's bound) or a space budget
  // (the widest fingerprint that fits it at kCuckooTargetLoad).
  static Result<Params> ForBitsPerKey(double bits_per_key);
  static Result<Params> ForFpRate(double fp_rate);
  // "cuckoo, 13-bit fingerprints semi-sorted, 12.63 bits/key at 95% load".
  static std::string Describe(const Params& params);

  // Size in bytes of the filter a static build of num_keys distinct keys aims for (before any
  // retry with more buckets): table plus trailer; 32 for zero keys.
  static Result<uint64_t> FilterBytes(const Params& params, uint64_t num_keys);
  // The most keys whose nominal filter fits in `bytes`: the exact inverse of FilterBytes.
  static uint64_t MaxKeysForBytes(const Params& params, uint64_t bytes);
  // The scratch a build holds beyond its input and output: the kick path, and for the
  // semi-sorted layout the plain table it places into before encoding (at the first table size;
  // a build whose placement fails at that size grows the table, and the scratch with it).
  static uint64_t BuildScratchBytes(const Params& params, uint64_t num_keys);
  // At the load this many keys give: the bucket count rounds up, so small filters run below the
  // nominal load (and their rate with it).
  static Result<double> EstimatedFpRate(const Params& params, uint64_t num_keys);
  static double NominalFpRate(const Params& params);
  static double NominalBitsPerKey(const Params& params);
  // Every fingerprint width, at kCuckooTargetLoad.
  static std::vector<Params> LevelOffers();

  static Result<std::string> Build(const Params& params, const HashList& hashes);
  static Result<std::string> Build(const Params& params, const uint64_t* hashes, size_t count);

  static bool BodyBytes(const Trailer& t, uint64_t* body_bytes);
  static Reader OpenReader(const Trailer& t, const uint8_t* body) {
    return Reader(body, t.num_units, t.param, t.seed, static_cast<CuckooLayout>(t.version));
  }
};

}  // namespace sstfilter
