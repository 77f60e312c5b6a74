// SPDX-License-Identifier: Apache-2.0
// CuckooFilter (include/sstfilter/cuckoo_filter.h): a table of the cuckoo kind, semi-sorted
// (core/cuckoo/semi_sorted_table.h) from 5-bit fingerprints on, else plain
// (core/cuckoo/cuckoo_table.h), filled key by key by the placement walk the static build uses
// (core/cuckoo/placement.h).
#include "sstfilter/cuckoo_filter.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/app_filters/byte_range.h"
#include "core/cuckoo/cuckoo.h"
#include "core/cuckoo/cuckoo_table.h"
#include "core/cuckoo/placement.h"
#include "core/cuckoo/semi_sorted_table.h"
#include "core/parse.h"

namespace sstfilter {

using cuckoo_internal::Kick;
using cuckoo_internal::Place;
using cuckoo_internal::Placement;

namespace {

// The views of a filter's bytes: rebuilt per call (a few words), so the filter holds only plain
// data, moves as a vector does, and its header needs none of core/'s. OnTable runs fn on the
// table its layout needs (CuckooTable or SemiSortedTable), OnView on the read-only view.
template <typename Fn>
auto OnTable(FilterBuffer& bytes, uint64_t num_buckets, int f, uint8_t layout, Fn&& fn) {
  if (IsSemiSorted(static_cast<CuckooLayout>(layout))) {
    SemiSortedTable table(bytes.data(), num_buckets, f);
    return fn(table);
  }
  CuckooTable table(bytes.data(), num_buckets, f);
  return fn(table);
}
template <typename Fn>
auto OnView(const FilterBuffer& bytes, uint64_t num_buckets, int f, uint8_t layout, Fn&& fn) {
  if (IsSemiSorted(static_cast<CuckooLayout>(layout))) {
    return fn(SemiSortedTableView(bytes.data(), num_buckets, f));
  }
  return fn(CuckooTableView(bytes.data(), num_buckets, f));
}

CuckooReader ReaderOf(const FilterBuffer& bytes, uint64_t num_buckets, int f, uint32_t seed,
                      uint8_t layout) {
  return CuckooReader(bytes.data(), num_buckets, f, seed, static_cast<CuckooLayout>(layout));
}

// A zeroed buffer of `bytes` (filter_memory.h); false when the memory cannot be had.
bool Allocate(FilterBuffer* out, uint64_t bytes) { return out->Allocate(bytes); }

std::string AllocationError(uint64_t bytes) {
  return "cannot allocate " + std::to_string(bytes) + " bytes for a cuckoo filter";
}

std::string NotACuckooFilter(FilterKind kind) {
  return std::string("not a cuckoo filter: ") + FilterKindName(kind);
}

}  // namespace

Result<CuckooFilter> CuckooFilter::Create(uint64_t capacity, int fingerprint_bits) {
  if (!ValidCuckooFingerprintBits(fingerprint_bits)) {
    return Err(CuckooFingerprintBitsError(fingerprint_bits));
  }
  const Result<uint64_t> buckets = CuckooBuckets(capacity, kCuckooTargetLoad);
  if (!buckets.ok()) return Err(buckets.error());
  CuckooFilter filter;
  const CuckooLayout layout = DynamicCuckooLayout(fingerprint_bits);
  const uint64_t bytes = CuckooTableBytes(buckets.value(), fingerprint_bits, layout);
  if (!Allocate(&filter.bytes_, bytes)) return Err(AllocationError(bytes));  // zeroed: empty
  filter.num_buckets_ = buckets.value();
  filter.fingerprint_bits_ = fingerprint_bits;
  filter.layout_ = static_cast<uint8_t>(layout);
  return filter;
}

Result<CuckooFilter> CuckooFilter::Deserialize(const void* data, size_t size) {
  ParsedFilter parsed;
  if (data == nullptr || !ParseFilter(static_cast<const uint8_t*>(data), size, &parsed)) {
    return Err("not a valid sstfilter filter");
  }
  // FromBody takes a 32-byte trailer; a compact one (layout 3) is a small Ribbon filter's.
  if (size - parsed.body_bytes != kTrailerBytes) return Err(NotACuckooFilter(parsed.trailer.kind));
  FilterBuffer body;
  if (!AllocateBody(parsed.body_bytes, &body)) return Err(AllocationError(parsed.body_bytes));
  std::copy(parsed.body, parsed.body + parsed.body_bytes, body.data());
  return FromBody(std::move(body), parsed.body_bytes, parsed.body + parsed.body_bytes);
}

bool CuckooFilter::AllocateBody(uint64_t body_bytes, FilterBuffer* body) {
  return body->AllocateForOverwrite(body_bytes);
}

Result<CuckooFilter> CuckooFilter::FromBody(FilterBuffer body, uint64_t body_bytes,
                                            const uint8_t* trailer) {
  Trailer t;
  if (!ParseTrailerFor(trailer, body_bytes, &t) || body.size() < body_bytes) {
    return Err("not a valid sstfilter filter");
  }
  if (t.kind != Cuckoo::kId) return Err(NotACuckooFilter(t.kind));
  CuckooFilter filter;
  if (t.num_units == 0) return filter;  // built from no keys: holds nothing, accepts nothing
  switch (static_cast<CuckooLayout>(t.version)) {
    case CuckooLayout::kPlain:
    case CuckooLayout::kSemiSortedMultiset:
      if (body.size() != body_bytes) return Err("a body buffer that is not AllocateBody's");
      filter.bytes_ = std::move(body);
      filter.layout_ = t.version;
      break;
    case CuckooLayout::kSemiSorted: {
      // A static build's semi-sorted table: the filter keeps the plain one, decoded. A static
      // build stores a fingerprint once for all the keys of a bucket pair that share it, so
      // erasing one of them would lose the others: this filter refuses Erase.
      filter.erasable_ = false;
      const uint64_t bytes = CuckooTableView::BytesFor(t.num_units, t.param);
      if (!Allocate(&filter.bytes_, bytes)) return Err(AllocationError(bytes));
      CuckooTable table(filter.bytes_.data(), t.num_units, t.param);
      if (!SemiSortedTableView(body.data(), t.num_units, t.param).Decode(&table)) {
        return Err("corrupt cuckoo filter: a bucket of the semi-sorted table is not understood");
      }
      break;
    }
  }
  filter.num_buckets_ = t.num_units;
  filter.fingerprint_bits_ = t.param;
  filter.seed_ = t.seed;
  // Every bucket understood, and the table holding exactly the fingerprints the trailer counts:
  // a filter that disagrees with itself is corrupt, and adding to it would overrun its real
  // capacity.
  if (IsSemiSorted(static_cast<CuckooLayout>(filter.layout_)) &&
      !SemiSortedTableView(filter.bytes_.data(), t.num_units, t.param).AllUnderstood()) {
    return Err("corrupt cuckoo filter: a bucket of the semi-sorted table is not understood");
  }
  const uint64_t occupied =
      OnView(filter.bytes_, t.num_units, t.param, filter.layout_, [&](const auto& table) {
        uint64_t n = 0;
        for (uint64_t b = 0; b < t.num_units; ++b) {
          for (int s = 0; s < kCuckooSlotsPerBucket; ++s) n += table.Slot(b, s) != 0;
        }
        return n;
      });
  if (occupied != t.num_keys) {
    return Err("corrupt cuckoo filter: the trailer counts " + std::to_string(t.num_keys) +
               " keys, the table holds " + std::to_string(occupied));
  }
  filter.size_ = occupied;
  return filter;
}

CuckooFilter& CuckooFilter::operator=(CuckooFilter&& other) noexcept {
  if (this == &other) return *this;
  bytes_ = std::move(other.bytes_);
  num_buckets_ = std::exchange(other.num_buckets_, 0);
  fingerprint_bits_ = other.fingerprint_bits_;
  seed_ = other.seed_;
  size_ = std::exchange(other.size_, 0);
  erasable_ = other.erasable_;
  layout_ = other.layout_;
  return *this;
}

bool CuckooFilter::AddHash(uint64_t hash) {
  if (num_buckets_ == 0) return false;
  const CuckooHashing hashing(num_buckets_, fingerprint_bits_, seed_);
  const uint64_t h = hashing.Remix(hash);
  std::vector<Kick> path;  // Add is not a query path; the walk is rare below ~90% load
  // The walk's choices drawn from the key and the table's count: no state outside the table.
  uint64_t walk_state = h ^ (size_ * 0x9e3779b97f4a7c15u);
  const Placement p = OnTable(bytes_, num_buckets_, fingerprint_bits_, layout_, [&](auto& table) {
    return Place(&table, hashing, hashing.Bucket(h), hashing.Fingerprint(h), false, &walk_state,
                 &path);
  });
  if (p == Placement::kFailed) return false;
  ++size_;
  return true;
}

bool CuckooFilter::MayContainHash(uint64_t hash) const {
  return size_ > 0 &&
         ReaderOf(bytes_, num_buckets_, fingerprint_bits_, seed_, layout_).MayContain(hash);
}

void CuckooFilter::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
  if (size_ == 0) {
    std::fill(may_match, may_match + count, false);
    return;
  }
  ReaderOf(bytes_, num_buckets_, fingerprint_bits_, seed_, layout_)
      .MayContainBatch(hashes, count, may_match);
}

int CuckooFilter::CountHash(uint64_t hash) const {
  if (size_ == 0) return 0;
  const CuckooHashing hashing(num_buckets_, fingerprint_bits_, seed_);
  const uint64_t h = hashing.Remix(hash);
  const uint64_t i1 = hashing.Bucket(h);
  const uint32_t fp = hashing.Fingerprint(h);
  // The two buckets are never the same one (Alt adds an odd offset modulo an even count).
  return OnView(bytes_, num_buckets_, fingerprint_bits_, layout_, [&](const auto& table) {
    int copies = 0;
    for (const uint64_t bucket : {i1, hashing.Alt(i1, fp)}) {
      for (int s = 0; s < kCuckooSlotsPerBucket; ++s) copies += table.Slot(bucket, s) == fp;
    }
    return copies;
  });
}

bool CuckooFilter::EraseHash(uint64_t hash) {
  if (size_ == 0 || !erasable_) return false;
  const CuckooHashing hashing(num_buckets_, fingerprint_bits_, seed_);
  const uint64_t h = hashing.Remix(hash);
  const uint64_t i1 = hashing.Bucket(h);
  const uint32_t fp = hashing.Fingerprint(h);
  const bool erased = OnTable(bytes_, num_buckets_, fingerprint_bits_, layout_, [&](auto& table) {
    for (const uint64_t bucket : {i1, hashing.Alt(i1, fp)}) {
      const int slot = table.FindSlot(bucket, fp);
      if (slot >= 0) {
        table.SetSlot(bucket, slot, 0);
        return true;
      }
    }
    return false;
  });
  if (erased) --size_;
  return erased;
}

double CuckooFilter::load() const {
  return num_buckets_ == 0 ? 0
                           : static_cast<double>(size_) / (num_buckets_ * kCuckooSlotsPerBucket);
}

bool CuckooFilter::IsSizedFor(uint64_t capacity, int fingerprint_bits) const {
  const Result<uint64_t> buckets = CuckooBuckets(capacity, kCuckooTargetLoad);
  return buckets.ok() && num_buckets_ == buckets.value() && fingerprint_bits_ == fingerprint_bits &&
         erasable_;
}

std::string CuckooFilter::Serialize() const {
  std::string out(SerializedBytes(), '\0');
  SerializeRange(0, out.size(), out.data());
  return out;
}

uint64_t CuckooFilter::SerializedBytes() const { return bytes_.size() + kTrailerBytes; }

// The body is the table's bytes as they are; then the trailer, its version the layout.
size_t CuckooFilter::SerializeRange(uint64_t offset, size_t length, void* out) const {
  RangeCopier copier(offset, length, out);
  copier.NextBytes(bytes_.data(), bytes_.size());
  Trailer t;
  t.kind = Cuckoo::kId;
  t.version = layout_;
  t.param = static_cast<uint8_t>(fingerprint_bits_);
  t.num_keys = size_;
  t.num_units = num_buckets_;
  t.seed = seed_;
  uint8_t trailer[kTrailerBytes];
  EncodeTrailer(t, trailer);
  copier.NextBytes(trailer, sizeof trailer);
  return copier.copied();
}

}  // namespace sstfilter
