#include "core/cuckoo.h"

#include <algorithm>
#include <cmath>

#include "core/random.h"

namespace sstfilter {
namespace {

// Longest eviction walk before an insertion gives up (and is undone). The paper uses 500
// (section 5.2); longer walks buy little load and cost build time near the load threshold.
constexpr int kMaxKicks = 500;
// Seeds tried at one table size before the static build adds buckets.
constexpr uint32_t kSeedsPerSize = 4;
// Growth of the table after kSeedsPerSize failed seeds.
constexpr double kGrowth = 1.03;
// Keys between prefetches and their use in batched queries (see bloom.cc).
constexpr size_t kBatch = 16;

enum class Placement { kStored, kRepresented, kFailed };

struct Kick {
  uint64_t bucket;
  int slot;
  uint32_t evicted;
};

// Places fp, whose buckets are i1 and Alt(i1, fp). With `skip_represented` (static builds), a
// fingerprint already in one of those buckets is not stored again: the key is already answered
// "may match". A failed walk is undone in reverse order, so the table is exactly as before.
Placement Place(CuckooTable* table, const CuckooHashing& hashing, uint64_t i1, uint32_t fp,
                bool skip_represented, uint64_t* rng, std::vector<Kick>* path) {
  const uint64_t i2 = hashing.Alt(i1, fp);
  if (skip_represented && (table->Contains(i1, fp) || table->Contains(i2, fp))) {
    return Placement::kRepresented;
  }
  if (table->TryPut(i1, fp) || table->TryPut(i2, fp)) return Placement::kStored;
  path->clear();
  uint64_t r = SplitMix64(rng);
  uint64_t bucket = (r & 1) ? i1 : i2;
  uint32_t carried = fp;
  for (int kick = 0; kick < kMaxKicks; ++kick) {
    if (kick % 16 == 0) r = SplitMix64(rng);  // 4 random bits per kick, 64 per draw
    const int slot = static_cast<int>((r >> (4 * (kick % 16) + 1)) & 3);
    const uint32_t evicted = table->Slot(bucket, slot);
    table->SetSlot(bucket, slot, carried);
    path->push_back({bucket, slot, evicted});
    carried = evicted;
    bucket = hashing.Alt(bucket, carried);
    if (table->TryPut(bucket, carried)) return Placement::kStored;
  }
  for (auto it = path->rbegin(); it != path->rend(); ++it) {
    table->SetSlot(it->bucket, it->slot, it->evicted);
  }
  return Placement::kFailed;
}

bool ValidFingerprintBits(int f) {
  return f >= kCuckooMinFingerprintBits && f <= kCuckooMaxFingerprintBits;
}

Result<bool> CheckParams(const CuckooParams& p) {
  if (!ValidFingerprintBits(p.fingerprint_bits)) {
    return Err("fingerprint_bits must be in [4, 32], got " + std::to_string(p.fingerprint_bits));
  }
  if (!(p.load > 0.0 && p.load <= 1.0)) return Err("cuckoo load must be in (0, 1]");
  return true;
}

}  // namespace

void CuckooReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
  uint64_t buckets[kBatch];
  uint64_t alts[kBatch];
  uint32_t fps[kBatch];
  for (size_t start = 0; start < count; start += kBatch) {
    const size_t n = std::min(kBatch, count - start);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = hashing_.Remix(hashes[start + i]);
      buckets[i] = hashing_.Bucket(h);
      fps[i] = hashing_.Fingerprint(h);
      alts[i] = hashing_.Alt(buckets[i], fps[i]);
      __builtin_prefetch(table_.BucketAddress(buckets[i]));
      __builtin_prefetch(table_.BucketAddress(alts[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      // Both buckets without a branch between them, as in MayContain.
      may_match[start + i] = (static_cast<int>(table_.Contains(buckets[i], fps[i])) |
                              static_cast<int>(table_.Contains(alts[i], fps[i]))) != 0;
    }
  }
}

Result<CuckooParams> CuckooParamsForFpRate(double fp_rate) {
  const Result<int> f = CuckooFingerprintBits(fp_rate);
  if (!f.ok()) return Err(f.error());
  CuckooParams p;
  p.fingerprint_bits = f.value();
  return p;
}

Result<CuckooParams> CuckooParamsForBitsPerKey(double bits_per_key) {
  const Result<int> f = CuckooFingerprintBitsForBitsPerKey(bits_per_key, kCuckooTargetLoad);
  if (!f.ok()) return Err(f.error());
  CuckooParams p;
  p.fingerprint_bits = f.value();
  return p;
}

Result<uint64_t> CuckooFilterBytes(const CuckooParams& params, uint64_t num_keys) {
  const Result<bool> valid = CheckParams(params);
  if (!valid.ok()) return Err(valid.error());
  if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
  const Result<uint64_t> buckets = CuckooBuckets(num_keys, params.load);
  if (!buckets.ok()) return Err(buckets.error());
  return CuckooTableView::BytesFor(buckets.value(), params.fingerprint_bits) + kTrailerBytes;
}

uint64_t CuckooMaxKeysForBytes(const CuckooParams& params, uint64_t bytes) {
  if (!CheckParams(params).ok() || bytes < kTrailerBytes) return 0;
  const double bits_per_key = params.fingerprint_bits / params.load;
  const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / bits_per_key;
  return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return CuckooFilterBytes(params, n); });
}

namespace {

// The static build over hashes delivered by for_each_chunk(f) as f(hashes, count), in the same
// order on every call (placement may need several passes). `distinct` counts them without
// consecutive repeats, which are skipped.
template <typename ForEachChunk>
Result<CuckooBuildInfo> BuildCuckooFromChunks(const CuckooParams& params, uint64_t distinct,
                                              ForEachChunk&& for_each_chunk, std::string* out) {
  const Result<bool> valid = CheckParams(params);
  if (!valid.ok()) return Err(valid.error());
  const int f = params.fingerprint_bits;
  Trailer trailer;
  trailer.kind = FilterKind::kCuckoo;
  trailer.param = static_cast<uint8_t>(f);
  CuckooBuildInfo info;
  if (distinct == 0) {
    out->clear();
    AppendTrailer(trailer, out);
    info.attempts = 0;
    return info;
  }
  const Result<uint64_t> initial = CuckooBuckets(distinct, params.load);
  if (!initial.ok()) return Err(initial.error());
  uint64_t num_buckets = initial.value();

  std::vector<Kick> path;
  path.reserve(kMaxKicks);
  for (uint32_t attempt = 0;; ++attempt) {
    const uint32_t seed = attempt;
    if (attempt > 0 && attempt % kSeedsPerSize == 0) {
      const auto grown = static_cast<uint64_t>(std::ceil(num_buckets * kGrowth));
      num_buckets = grown + (grown & 1);
    }
    const uint64_t table_bytes = CuckooTableView::BytesFor(num_buckets, f);
    out->assign(table_bytes + kTrailerBytes, '\0');
    CuckooTable table(reinterpret_cast<uint8_t*>(out->data()), num_buckets, f);
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
                                          size_t count, std::string* out) {
  uint64_t distinct = 0;
  for (size_t i = 0; i < count; ++i) distinct += (i == 0 || hashes[i] != hashes[i - 1]);
  return BuildCuckooFromChunks(
      params, distinct, [&](auto&& f) { f(hashes, count); }, out);
}

Result<CuckooBuildInfo> BuildCuckooFilter(const CuckooParams& params, const HashList& hashes,
                                          std::string* out) {
  return BuildCuckooFromChunks(
      params, hashes.size(), [&](auto&& f) { hashes.ForEachChunk(f); }, out);
}

Result<CuckooFilter> CuckooFilter::Create(uint64_t capacity, int fingerprint_bits) {
  if (!ValidFingerprintBits(fingerprint_bits)) {
    return Err("fingerprint_bits must be in [4, 32], got " + std::to_string(fingerprint_bits));
  }
  const Result<uint64_t> buckets = CuckooBuckets(capacity, kCuckooTargetLoad);
  if (!buckets.ok()) return Err(buckets.error());
  CuckooFilter filter;
  filter.bytes_.assign(CuckooTableView::BytesFor(buckets.value(), fingerprint_bits), 0);
  filter.table_ = CuckooTable(filter.bytes_.data(), buckets.value(), fingerprint_bits);
  filter.hashing_ = CuckooHashing(buckets.value(), fingerprint_bits, 0);
  return filter;
}

Result<CuckooFilter> CuckooFilter::Deserialize(const uint8_t* data, size_t size) {
  ParsedFilter parsed;
  if (!ParseFilter(data, size, &parsed)) return Err("not a valid sstfilter filter");
  const Trailer& t = parsed.trailer;
  if (t.kind != FilterKind::kCuckoo) {
    return Err(std::string("not a cuckoo filter: ") + FilterKindName(t.kind));
  }
  CuckooFilter filter;
  if (t.num_units == 0) return filter;  // built from no keys: holds nothing, accepts nothing
  filter.bytes_.assign(parsed.body, parsed.body + parsed.body_bytes);
  filter.table_ = CuckooTable(filter.bytes_.data(), t.num_units, t.param);
  filter.hashing_ = CuckooHashing(t.num_units, t.param, t.seed);
  // The table must hold exactly the fingerprints the trailer counts: a filter that disagrees
  // with itself is corrupt, and adding to it would overrun its real capacity.
  uint64_t occupied = 0;
  for (uint64_t b = 0; b < t.num_units; ++b) {
    for (int s = 0; s < kCuckooSlotsPerBucket; ++s) occupied += filter.table_.Slot(b, s) != 0;
  }
  if (occupied != t.num_keys) {
    return Err("corrupt cuckoo filter: the trailer counts " + std::to_string(t.num_keys) +
               " keys, the table holds " + std::to_string(occupied));
  }
  filter.size_ = occupied;
  return filter;
}

CuckooFilter& CuckooFilter::operator=(CuckooFilter&& other) noexcept {
  const uint64_t buckets = other.table_.num_buckets();
  const int f = other.table_.fingerprint_bits();
  bytes_ = std::move(other.bytes_);
  table_ = CuckooTable(bytes_.data(), buckets, f);
  hashing_ = other.hashing_;
  size_ = other.size_;
  rng_state_ = other.rng_state_;
  other.table_ = CuckooTable();
  other.size_ = 0;
  return *this;
}

bool CuckooFilter::AddHash(uint64_t hash) {
  if (num_buckets() == 0) return false;
  const uint64_t h = hashing_.Remix(hash);
  std::vector<Kick> path;  // Add is not a query path; the walk is rare below ~90% load
  const Placement p = Place(&table_, hashing_, hashing_.Bucket(h), hashing_.Fingerprint(h), false,
                            &rng_state_, &path);
  if (p == Placement::kFailed) return false;
  ++size_;
  return true;
}

bool CuckooFilter::EraseHash(uint64_t hash) {
  if (num_buckets() == 0) return false;
  const uint64_t h = hashing_.Remix(hash);
  const uint64_t i1 = hashing_.Bucket(h);
  const uint32_t fp = hashing_.Fingerprint(h);
  for (const uint64_t bucket : {i1, hashing_.Alt(i1, fp)}) {
    const int slot = table_.FindSlot(bucket, fp);
    if (slot >= 0) {
      table_.SetSlot(bucket, slot, 0);
      --size_;
      return true;
    }
  }
  return false;
}

std::string CuckooFilter::Serialize() const {
  Trailer t;
  t.kind = FilterKind::kCuckoo;
  t.param = static_cast<uint8_t>(fingerprint_bits());
  t.num_keys = size_;
  t.num_units = num_buckets();
  t.seed = hashing_.seed();
  std::string out(bytes_.begin(), bytes_.end());
  AppendTrailer(t, &out);
  return out;
}

}  // namespace sstfilter
