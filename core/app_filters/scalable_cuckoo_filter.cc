// SPDX-License-Identifier: Apache-2.0
// ScalableCuckooFilter (include/sstfilter/scalable_cuckoo_filter.h): a chain of CuckooFilters of
// growing capacity and wider fingerprints (FilterChain, include/sstfilter/scaling.h).
#include "sstfilter/scalable_cuckoo_filter.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/app_filters/chain_format.h"
#include "core/app_filters/chain_loader.h"
#include "core/cuckoo/math.h"

namespace sstfilter {

namespace {

// The narrowest fingerprint whose union bound over the 8 slots of a bucket pair, 8 / (2^f - 1), is
// at most `rate`: f = ceil(log2(8 / rate + 1)), at least 4. Above 32 bits: 0.
int FingerprintBitsForBound(double rate) {
  const double f = std::ceil(std::log2(8 / rate + 1));
  if (!(f <= kCuckooMaxFingerprintBits)) return 0;
  return f < kCuckooMinFingerprintBits ? kCuckooMinFingerprintBits : static_cast<int>(f);
}

Result<CuckooFilter> MakeCuckooFilter(uint64_t capacity, double rate) {
  const int f = FingerprintBitsForBound(rate);
  if (f == 0) {
    return Err("a rate of " + std::to_string(rate) +
               " needs cuckoo fingerprints of more than 32 bits");
  }
  return CuckooFilter::Create(capacity, f);
}

}  // namespace

Result<ScalableCuckooFilter> ScalableCuckooFilter::Create(uint64_t initial_capacity, double fp_rate,
                                                          ScalingOptions options) {
  ScalableCuckooFilter filter;
  const Result<bool> started =
      filter.chain_.Start(initial_capacity, fp_rate, options, MakeCuckooFilter);
  if (!started.ok()) return Err(started.error());
  filter.options_ = options;
  filter.initial_capacity_ = initial_capacity;
  return filter;
}

AddOutcome ScalableCuckooFilter::AddHash(uint64_t hash) {
  // The newest filter takes the key below its capacity; one that cannot place it (full around
  // the key) is left as it was, and the key goes to a new filter.
  if (chain_.filters().empty()) return AddOutcome::kFull;  // moved from
  CuckooFilter& newest = chain_.filters().back();
  if (newest.size() < chain_.newest_capacity() && newest.AddHash(hash)) return AddOutcome::kAdded;
  // A bucket pair holds at most 8 copies of a fingerprint. A key added again and again fills its
  // pair in every new filter, and growing for it would only allocate ever larger filters: once the
  // newest holds 8 copies, the key is refused instead.
  if (newest.CountHash(hash) >= 2 * kCuckooSlotsPerBucket) return AddOutcome::kFull;
  if (!chain_.Grow(MakeCuckooFilter)) return AddOutcome::kFull;
  // An empty filter always places a key.
  return chain_.filters().back().AddHash(hash) ? AddOutcome::kAdded : AddOutcome::kFull;
}

AddOutcome ScalableCuckooFilter::AddIfAbsentHash(uint64_t hash) {
  return MayContainHash(hash) ? AddOutcome::kMayBePresent : AddHash(hash);
}

uint64_t ScalableCuckooFilter::CountHash(uint64_t hash) const {
  uint64_t copies = 0;
  for (const CuckooFilter& f : chain_.filters()) copies += f.CountHash(hash);
  return copies;
}

EraseOutcome ScalableCuckooFilter::EraseHash(uint64_t hash) {
  CuckooFilter* holder = nullptr;
  for (CuckooFilter& f : chain_.filters()) {
    if (!f.MayContainHash(hash)) continue;
    if (holder != nullptr)
      return EraseOutcome::kAmbiguous;  // two filters: which copy is the key's?
    holder = &f;
  }
  if (holder == nullptr) return EraseOutcome::kAbsent;
  return holder->EraseHash(hash) ? EraseOutcome::kErased : EraseOutcome::kAbsent;
}

uint64_t ScalableCuckooFilter::size() const {
  uint64_t n = 0;
  for (const CuckooFilter& f : chain_.filters()) n += f.size();
  return n;
}

double ScalableCuckooFilter::FpRateBound() const {
  double bound = 0;
  for (const CuckooFilter& f : chain_.filters()) {
    bound += CuckooFpRate(f.fingerprint_bits(), /*load=*/1.0).value();  // 8 / (2^f - 1)
  }
  return bound;
}

// The chain's header as Serialize writes it (its count of filters left to chain_format).
static chain_format::Header ChainHeaderOf(const ScalableCuckooFilter& f) {
  return chain_format::HeaderOf(chain_format::kCuckooChain, f.options(), f.fp_rate(),
                                f.initial_capacity());
}

std::string ScalableCuckooFilter::Serialize() const {
  return chain_format::Write(ChainHeaderOf(*this), chain_.filters());
}

uint64_t ScalableCuckooFilter::SerializedBytes() const {
  return chain_format::BytesOf(chain_.filters());
}

size_t ScalableCuckooFilter::SerializeRange(uint64_t offset, size_t length, void* out) const {
  return chain_format::CopyRange(ChainHeaderOf(*this), chain_.filters(), offset, length, out);
}

Result<ScalableCuckooFilter> ScalableCuckooFilter::Deserialize(const void* data, size_t size) {
  return chain_format::ReadScalable<ScalableCuckooFilter>(data, size, chain_format::kCuckooChain);
}

Result<ScalableCuckooFilter> ScalableCuckooFilter::FromFilters(const void* header,
                                                               std::vector<CuckooFilter> filters) {
  const Result<chain_format::Header> parsed =
      chain_format::ParseFilters(header, chain_format::kCuckooChain, filters.size());
  if (!parsed.ok()) return Err(parsed.error());
  const chain_format::Header& h = parsed.value();
  if (h.newest_keys != 0 || h.size != 0) {
    return Err("a scalable cuckoo filter's header with key counts (its tables count them)");
  }
  ScalableCuckooFilter filter;
  filter.options_ = chain_format::OptionsOf(h);
  filter.initial_capacity_ = h.initial_capacity;
  const Result<bool> restored =
      filter.chain_.Restore(h.initial_capacity, h.fp_rate, filter.options_, std::move(filters),
                            [](const CuckooFilter& f, uint64_t capacity, double rate) {
                              const int bits = FingerprintBitsForBound(rate);
                              return bits != 0 && f.IsSizedFor(capacity, bits);
                            });
  if (!restored.ok()) return Err(restored.error());
  return filter;
}

}  // namespace sstfilter
