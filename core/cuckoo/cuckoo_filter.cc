#include "core/cuckoo/cuckoo_filter.h"

#include <utility>

#include "core/cuckoo/placement.h"
#include "core/kinds.h"

namespace sstfilter {

using cuckoo_internal::Kick;
using cuckoo_internal::Place;
using cuckoo_internal::Placement;

Result<CuckooFilter> CuckooFilter::Create(uint64_t capacity, int fingerprint_bits) {
  if (!ValidCuckooFingerprintBits(fingerprint_bits)) {
    return Err(CuckooFingerprintBitsError(fingerprint_bits));
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
  if (t.kind != Cuckoo::kId) {
    return Err(std::string("not a cuckoo filter: ") + FilterKindName(t.kind));
  }
  CuckooFilter filter;
  if (t.num_units == 0) return filter;  // built from no keys: holds nothing, accepts nothing
  switch (static_cast<CuckooLayout>(t.version)) {
    case CuckooLayout::kPlain:
      filter.bytes_.assign(parsed.body, parsed.body + parsed.body_bytes);
      filter.table_ = CuckooTable(filter.bytes_.data(), t.num_units, t.param);
      break;
    case CuckooLayout::kSemiSorted: {
      // A static build's semi-sorted table: the filter keeps the plain one, decoded.
      filter.bytes_.assign(CuckooTableView::BytesFor(t.num_units, t.param), 0);
      filter.table_ = CuckooTable(filter.bytes_.data(), t.num_units, t.param);
      if (!SemiSortedTableView(parsed.body, t.num_units, t.param).Decode(&filter.table_)) {
        return Err("corrupt cuckoo filter: a bucket of the semi-sorted table is not understood");
      }
      break;
    }
  }
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
  t.kind = Cuckoo::kId;
  t.param = static_cast<uint8_t>(fingerprint_bits());
  t.num_keys = size_;
  t.num_units = num_buckets();
  t.seed = hashing_.seed();
  std::string out(bytes_.begin(), bytes_.end());
  AppendTrailer(t, &out);
  return out;
}

}  // namespace sstfilter
