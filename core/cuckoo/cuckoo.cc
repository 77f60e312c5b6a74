// SPDX-License-Identifier: Apache-2.0
#include "core/cuckoo/cuckoo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/batch.h"
#include "core/cuckoo/placement.h"
#include "core/sizing.h"
#include "core/static_build.h"

namespace sstfilter {

uint64_t CuckooTableBytes(uint64_t num_buckets, int fingerprint_bits, CuckooLayout layout) {
  switch (layout) {
    case CuckooLayout::kPlain:
      return CuckooTableView::BytesFor(num_buckets, fingerprint_bits);
    case CuckooLayout::kSemiSorted:
    case CuckooLayout::kSemiSortedMultiset:
      return SemiSortedTableView::BytesFor(num_buckets, fingerprint_bits);
  }
  return 0;  // not reached: the switch is exhaustive (-Wswitch)
}

namespace {

// Seeds tried at one table size before the static build adds buckets.
constexpr uint32_t kSeedsPerSize = 4;
// Growth of the table after kSeedsPerSize failed seeds.
constexpr double kGrowth = 1.03;

using cuckoo_internal::Kick;
using cuckoo_internal::kMaxKicks;
using cuckoo_internal::Place;
using cuckoo_internal::Placement;

Result<bool> CheckParams(const CuckooParams& p) {
  if (!ValidCuckooFingerprintBits(p.fingerprint_bits)) {
    return Err(CuckooFingerprintBitsError(p.fingerprint_bits));
  }
  if (!ValidLoad(p.load)) return Err(LoadError(p.load));
  return true;
}

}  // namespace

void CuckooReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                   BatchPrefetch prefetch) const {
  uint64_t buckets[kPrefetchBatch];
  uint64_t alts[kPrefetchBatch];
  uint32_t fps[kPrefetchBatch];
  for (size_t start = 0; start < count; start += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = hashing_.Remix(hashes[start + i]);
      buckets[i] = hashing_.Bucket(h);
      fps[i] = hashing_.Fingerprint(h);
      alts[i] = hashing_.Alt(buckets[i], fps[i]);
      if (prefetch == BatchPrefetch::kInBatch) {
        PrefetchBucket(buckets[i]);
        PrefetchBucket(alts[i]);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      may_match[start + i] = semi_sorted_ ? sorted_.ContainsEither(buckets[i], alts[i], fps[i])
                                          : EitherHolds(plain_, buckets[i], alts[i], fps[i]);
    }
  }
}

Result<CuckooParams> Cuckoo::ForFpRate(double fp_rate) {
  const Result<int> f = CuckooFingerprintBits(fp_rate);
  if (!f.ok()) return Err(f.error());
  CuckooParams p;
  p.fingerprint_bits = f.value();
  return p;
}

Result<CuckooParams> Cuckoo::ForBitsPerKey(double bits_per_key) {
  const Result<int> f = CuckooFingerprintBitsForBitsPerKey(bits_per_key, kCuckooTargetLoad);
  if (!f.ok()) return Err(f.error());
  CuckooParams p;
  p.fingerprint_bits = f.value();
  return p;
}

Result<uint64_t> Cuckoo::FilterBytes(const Params& params, uint64_t num_keys) {
  const Result<bool> valid = CheckParams(params);
  if (!valid.ok()) return Err(valid.error());
  if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
  const Result<uint64_t> buckets = CuckooBuckets(num_keys, params.load);
  if (!buckets.ok()) return Err(buckets.error());
  const int f = params.fingerprint_bits;
  return CuckooTableBytes(buckets.value(), f, StaticCuckooLayout(f)) + kTrailerBytes;
}

uint64_t Cuckoo::BuildScratchBytes(const Params& params, uint64_t num_keys) {
  constexpr uint64_t kPathBytes = kMaxKicks * sizeof(Kick);
  const int f = params.fingerprint_bits;
  if (num_keys == 0 || !CheckParams(params).ok() || StaticCuckooLayout(f) == CuckooLayout::kPlain) {
    return kPathBytes;
  }
  const Result<uint64_t> buckets = CuckooBuckets(num_keys, params.load);
  return kPathBytes + (buckets.ok() ? CuckooTableView::BytesFor(buckets.value(), f) : 0);
}

uint64_t Cuckoo::MaxKeysForBytes(const Params& params, uint64_t bytes) {
  if (!CheckParams(params).ok() || bytes < kTrailerBytes) return 0;
  const double bits_per_key = CuckooStaticSlotBits(params.fingerprint_bits) / params.load;
  const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / bits_per_key;
  return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return FilterBytes(params, n); });
}

namespace {

// The static build over hashes delivered by for_each_chunk(f) as f(hashes, count), in the same
// order on every call (placement may need several passes). `distinct` counts them without
// consecutive repeats, which are skipped.
template <typename ForEachChunk>
Result<CuckooBuildInfo> BuildCuckooFromChunks(const CuckooParams& params, uint64_t distinct,
                                              CuckooLayout layout, ForEachChunk&& for_each_chunk,
                                              std::string* out) {
  const Result<bool> valid = CheckParams(params);
  if (!valid.ok()) return Err(valid.error());
  const int f = params.fingerprint_bits;
  if (layout == CuckooLayout::kSemiSorted && f < kCuckooSemiSortMinFingerprintBits) {
    return Err("semi-sorted cuckoo buckets need fingerprints of at least " +
               std::to_string(kCuckooSemiSortMinFingerprintBits) + " bits, got " +
               std::to_string(f));
  }
  CuckooBuildInfo info;
  if (distinct == 0) {
    // Version 1, which every sstfilter release reads as "no key"; releases from before
    // semi-sorting would read a version-2 one as "may match".
    WriteEmptyFilter(Cuckoo::kId, f, out);
    info.attempts = 0;
    return info;
  }
  Trailer trailer;
  trailer.kind = Cuckoo::kId;
  trailer.param = static_cast<uint8_t>(f);
  trailer.version = static_cast<uint8_t>(layout);
  const Result<uint64_t> initial = CuckooBuckets(distinct, params.load);
  if (!initial.ok()) return Err(initial.error());
  uint64_t num_buckets = initial.value();

  std::vector<Kick> path;
  path.reserve(kMaxKicks);
  // Placement needs a plain table; the plain layout places straight into *out, the semi-sorted
  // one into this scratch table, which is then encoded into *out.
  std::string scratch;
  std::string* placed_into = layout == CuckooLayout::kPlain ? out : &scratch;
  for (uint32_t attempt = 0;; ++attempt) {
    const uint32_t seed = attempt;
    if (attempt > 0 && attempt % kSeedsPerSize == 0) {
      const auto grown = static_cast<uint64_t>(std::ceil(num_buckets * kGrowth));
      num_buckets = grown + (grown & 1);
    }
    const uint64_t trailer_room = layout == CuckooLayout::kPlain ? kTrailerBytes : 0;
    placed_into->assign(CuckooTableView::BytesFor(num_buckets, f) + trailer_room, '\0');
    CuckooTable table(reinterpret_cast<uint8_t*>(placed_into->data()), num_buckets, f);
    const CuckooHashing hashing(num_buckets, f, seed);
    uint64_t rng = 0x6375'636b'6f6f'0000ull + seed;  // "cuckoo" + seed
    uint64_t stored = 0;
    bool placed_all = true;
    bool first = true;
    uint64_t previous = 0;
    for_each_chunk([&](const uint64_t* hashes, size_t count) {
      for (size_t i = 0; i < count && placed_all; ++i) {
        if (!first && hashes[i] == previous) continue;
        first = false;
        previous = hashes[i];
        const uint64_t h = hashing.Remix(hashes[i]);
        const Placement p =
            Place(&table, hashing, hashing.Bucket(h), hashing.Fingerprint(h), true, &rng, &path);
        placed_all = p != Placement::kFailed;
        stored += (p == Placement::kStored);
      }
    });
    if (!placed_all) continue;
    const uint64_t table_bytes = CuckooTableBytes(num_buckets, f, layout);
    if (layout == CuckooLayout::kSemiSorted) {
      out->assign(table_bytes + kTrailerBytes, '\0');
      SemiSortedTableView::Encode(table, reinterpret_cast<uint8_t*>(out->data()));
    }
    trailer.num_keys = stored;
    trailer.num_units = num_buckets;
    trailer.seed = seed;
    EncodeTrailer(trailer, reinterpret_cast<uint8_t*>(out->data()) + table_bytes);
    info.stored = stored;
    info.num_buckets = num_buckets;
    info.seed = seed;
    info.attempts = static_cast<int>(attempt) + 1;
    return info;
  }
}

}  // namespace

Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const uint64_t* hashes,
                                          size_t count, std::string* out,
                                          std::optional<CuckooLayout> layout) {
  uint64_t distinct = 0;
  for (size_t i = 0; i < count; ++i) distinct += (i == 0 || hashes[i] != hashes[i - 1]);
  return BuildCuckooFromChunks(
      params, distinct, layout.value_or(StaticCuckooLayout(params.fingerprint_bits)),
      [&](auto&& f) { f(hashes, count); }, out);
}

Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const HashList& hashes,
                                          std::string* out) {
  return BuildCuckooFromChunks(
      params, hashes.size(), StaticCuckooLayout(params.fingerprint_bits),
      [&](auto&& f) { hashes.ForEachChunk(f); }, out);
}

std::string Cuckoo::Describe(const Params& params) {
  char buf[96];
  const int f = params.fingerprint_bits;
  snprintf(buf, sizeof(buf), "cuckoo, %d-bit fingerprints%s, %.2f bits/key at %.0f%% load", f,
           StaticCuckooLayout(f) == CuckooLayout::kSemiSorted ? " semi-sorted" : "",
           CuckooStaticSlotBits(f) / params.load, 100 * params.load);
  return buf;
}

Result<double> Cuckoo::EstimatedFpRate(const Params& params, uint64_t num_keys) {
  const Result<uint64_t> buckets = CuckooBuckets(num_keys, params.load);
  if (!buckets.ok()) return Err(buckets.error());
  const double load = static_cast<double>(num_keys) /
                      (static_cast<double>(buckets.value()) * kCuckooSlotsPerBucket);
  return CuckooFpRate(params.fingerprint_bits, load);
}

double Cuckoo::NominalFpRate(const Params& params) {
  return CuckooFpRate(params.fingerprint_bits, params.load).value();
}

double Cuckoo::NominalBitsPerKey(const Params& params) {
  return CuckooBitsPerKey(params.fingerprint_bits, params.load).value();
}

std::vector<CuckooParams> Cuckoo::LevelOffers() {
  std::vector<Params> offers;
  // From 5 bits: a 4-bit filter costs what a 5-bit semi-sorted one does, at twice the rate.
  for (int f = kCuckooSemiSortMinFingerprintBits; f <= kCuckooMaxFingerprintBits; ++f) {
    Params p;
    p.fingerprint_bits = f;
    offers.push_back(p);
  }
  return offers;
}

Result<std::string> Cuckoo::Build(const Params& params, const HashList& hashes) {
  return BuiltBytes([&](std::string* out) { return BuildCuckooFilter(params, hashes, out); });
}

Result<std::string> Cuckoo::Build(const Params& params, const uint64_t* hashes, size_t count) {
  return BuiltBytes(
      [&](std::string* out) { return BuildCuckooFilter(params, hashes, count, out); });
}

bool Cuckoo::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (!ValidCuckooFingerprintBits(t.param)) return false;
  if (t.num_units % 2 != 0) return false;  // the alternate-bucket function needs even counts
  if (t.num_keys > t.num_units * kCuckooSlotsPerBucket) return false;
  // The version is 1 to 3 (parse.cc checks it against kMaxVersion): the layout.
  const auto layout = static_cast<CuckooLayout>(t.version);
  if (IsSemiSorted(layout) && t.param < kCuckooSemiSortMinFingerprintBits) {
    return false;
  }
  *body_bytes = CuckooTableBytes(t.num_units, t.param, layout);
  return true;
}

}  // namespace sstfilter
