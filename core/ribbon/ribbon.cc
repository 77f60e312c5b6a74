#include "core/ribbon/ribbon.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/batch.h"
#include "core/blocked_bloom/blocked_bloom.h"
#include "core/sizing.h"

namespace sstfilter {
namespace {

// The memory of one build attempt, reused by the next: per slot, the coefficients of the
// equation whose first coefficient is there (0: none yet) and its right-hand side.
struct Scratch {
  std::vector<uint64_t> coeff;
  std::vector<uint32_t> rhs;
  uint64_t Bytes() const { return 8 * coeff.capacity() + 4 * rhs.capacity(); }
};

// Adds one equation to the echelon form: while its first slot already holds an equation, that
// one is subtracted (XOR) and the remainder moves to its next coefficient. False if the
// remainder is "0 = nonzero": no solution with this seed. An equation reduced to "0 = 0" was
// implied by the stored ones (a repeated hash): nothing to store.
bool AddEquation(Scratch* s, uint64_t slot, uint64_t coeff, uint32_t rhs, uint64_t* stored) {
  for (;;) {
    const uint64_t existing = s->coeff[slot];
    if (existing == 0) {
      s->coeff[slot] = coeff;
      s->rhs[slot] = rhs;
      ++*stored;
      return true;
    }
    coeff ^= existing;
    rhs ^= s->rhs[slot];
    if (coeff == 0) return rhs == 0;
    const int skip = __builtin_ctzll(coeff);
    slot += skip;
    coeff >>= skip;
  }
}

// One attempt with one seed. On success `table` (zeroed, RibbonTableBytes long) holds the
// solution and *stored the equations.
template <typename ForEachChunk>
bool TryBuild(uint64_t num_slots, uint32_t seed_index, int r, ForEachChunk& for_each_chunk,
              Scratch* s, uint8_t* table, uint64_t* stored) {
  const RibbonHashing hashing(seed_index, num_slots, r);
  s->coeff.assign(num_slots, 0);  // allocates on the first attempt, zeroes on every one
  s->rhs.assign(num_slots, 0);
  uint64_t equations = 0;
  bool solvable = true;
  // The order of the equations does not change the solution, so a batch's first slots are all
  // prefetched before the first equation goes in (they are random lines of a table that
  // outgrows the caches from about 100,000 keys).
  uint64_t remixed[kPrefetchBatch];
  uint64_t starts[kPrefetchBatch];
  for_each_chunk([&](const uint64_t* hashes, size_t n) {
    for (size_t first = 0; first < n && solvable; first += kPrefetchBatch) {
      const size_t b = std::min(kPrefetchBatch, n - first);
      for (size_t k = 0; k < b; ++k) {
        remixed[k] = hashing.Remix(hashes[first + k]);
        starts[k] = hashing.Start(remixed[k]);
        __builtin_prefetch(&s->coeff[starts[k]], 1);
        __builtin_prefetch(&s->rhs[starts[k]], 1);
      }
      for (size_t k = 0; k < b && solvable; ++k) {
        solvable = AddEquation(s, starts[k], RibbonHashing::Coefficients(remixed[k]),
                               hashing.Fingerprint(remixed[k]), &equations);
      }
    }
  });
  if (!solvable) return false;

  // Back substitution, last row first. window[k] holds bit k of the rows i .. i + 63 (row i + j
  // in bit j); a row with an equation gets the value that satisfies it, a free row 0 (which makes
  // the solution the same whatever order the equations came in). A block's words are complete
  // when i reaches its first row.
  uint64_t window[kRibbonMaxFingerprintBits] = {};
  for (uint64_t i = num_slots; i-- > 0;) {
    const uint64_t coeff = s->coeff[i];
    uint32_t value = s->rhs[i];
    for (int k = 0; k < r; ++k) {
      window[k] <<= 1;
      // coeff's bit 0 meets the window's bit 0, still 0: only the rows after i count.
      value ^= static_cast<uint32_t>(__builtin_parityll(coeff & window[k])) << k;
    }
    if (coeff != 0) {
      for (int k = 0; k < r; ++k) window[k] |= (value >> k) & 1;
    }
    if (i % kRibbonCoeffBits == 0) {
      uint8_t* block = table + (i / kRibbonCoeffBits) * 8 * static_cast<uint64_t>(r);
      for (int k = 0; k < r; ++k) StoreLE64(block + 8 * k, window[k]);
    }
  }
  *stored = equations;
  return true;
}

// The seeds in order until one solves, for a table sized for num_keys. On success *out holds the
// filter.
template <typename ForEachChunk>
bool BuildWithSeeds(uint64_t num_slots, int r, int max_attempts, ForEachChunk& for_each_chunk,
                    Scratch* s, std::string* out, RibbonBuildInfo* info) {
  const uint64_t table_bytes = RibbonTableBytes(num_slots, r);
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    out->assign(table_bytes + kTrailerBytes, '\0');
    uint8_t* table = reinterpret_cast<uint8_t*>(out->data());
    ++info->attempts;
    if (!TryBuild(num_slots, static_cast<uint32_t>(attempt), r, for_each_chunk, s, table,
                  &info->stored)) {
      continue;
    }
    Trailer trailer;
    trailer.kind = Ribbon::kId;
    trailer.param = static_cast<uint8_t>(r);
    trailer.num_keys = info->stored;
    trailer.num_units = num_slots;
    trailer.seed = static_cast<uint32_t>(attempt);
    EncodeTrailer(trailer, table + table_bytes);
    return true;
  }
  return false;
}

// The build over hashes delivered by for_each_chunk(f) as f(hashes, count), the same on every
// call; `count` counts them, repeats included.
//
// The seeds run over the input as it is, in a table sized for `count`. That is the whole build
// when a seed solves and every hash added an equation (no repeats: the usual case). Otherwise the
// build makes a sorted copy without repeats (8 more bytes per key) and, if that has fewer keys,
// builds again in the table of the distinct keys, so that the bytes depend only on the set.
template <typename ForEachChunk>
Result<RibbonBuildInfo> BuildFromChunks(const RibbonParams& params, uint64_t count,
                                        ForEachChunk&& for_each_chunk, std::string* out,
                                        int max_attempts) {
  const Result<int> width = Ribbon::FingerprintBitsFor(params, count);
  if (!width.ok()) return Err(width.error());
  int r = width.value();
  RibbonBuildInfo info;
  if (count == 0) {
    Trailer trailer;
    trailer.kind = Ribbon::kId;
    trailer.param = static_cast<uint8_t>(r);
    out->clear();
    AppendTrailer(trailer, out);
    return info;
  }
  Result<uint64_t> slots = RibbonSlotsFor(count);
  if (!slots.ok()) return Err(slots.error());
  Scratch s;
  const bool solved =
      BuildWithSeeds(slots.value(), r, max_attempts, for_each_chunk, &s, out, &info);
  if (solved && info.stored == count) {
    info.scratch_bytes = s.Bytes();
    return info;
  }
  const std::vector<uint64_t> unique = SortedDistinctHashes(count, for_each_chunk);
  // No repeats: the hashes the seed did not store had equations that the others implied (a
  // dependent equation agrees with chance 2^-r), so the table holds every key; nothing to redo.
  if (solved && unique.size() == count) {
    info.scratch_bytes = s.Bytes() + 8 * unique.capacity();
    return info;
  }
  r = Ribbon::FingerprintBitsFor(params, unique.size()).value();  // valid: it was for `count`
  slots = RibbonSlotsFor(unique.size());
  auto over_unique = [&](auto&& f) { f(unique.data(), unique.size()); };
  if ((solved || unique.size() < count) &&
      BuildWithSeeds(slots.value(), r, max_attempts, over_unique, &s, out, &info)) {
    info.scratch_bytes = s.Bytes() + 8 * unique.capacity();
    return info;
  }
  // No seed solved: a blocked Bloom filter of about the same size, so no key is lost.
  info.fell_back = true;
  info.stored = unique.size();
  info.scratch_bytes = std::max(s.Bytes(), 8 * unique.capacity());
  Result<std::string> bytes =
      BuildBlockedBloomFallback(RibbonTableBytes(slots.value(), r), unique.data(), unique.size());
  if (!bytes.ok()) return Err(bytes.error());
  *out = std::move(bytes).value();
  return info;
}

}  // namespace

Result<RibbonBuildInfo> BuildRibbonFilter(const RibbonParams& params, const uint64_t* hashes,
                                          size_t count, std::string* out, int max_attempts) {
  return BuildFromChunks(
      params, count, [&](auto&& f) { f(hashes, count); }, out, max_attempts);
}

Result<RibbonBuildInfo> BuildRibbonFilter(const RibbonParams& params, const HashList& hashes,
                                          std::string* out, int max_attempts) {
  return BuildFromChunks(
      params, hashes.size(), [&](auto&& f) { hashes.ForEachChunk(f); }, out, max_attempts);
}

void RibbonReader::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                                   BatchPrefetch prefetch) const {
  uint64_t remixed[kPrefetchBatch];
  uint64_t starts[kPrefetchBatch];
  for (size_t first = 0; first < count; first += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - first);
    for (size_t i = 0; i < n; ++i) {
      remixed[i] = hashing_.Remix(hashes[first + i]);
      starts[i] = hashing_.Start(remixed[i]);
      if (prefetch == BatchPrefetch::kInBatch) PrefetchSpan(starts[i]);
    }
    for (size_t i = 0; i < n; ++i) may_match[first + i] = Matches(remixed[i], starts[i]);
  }
}

Result<RibbonParams> Ribbon::ForBitsPerKey(double bits_per_key) {
  const Result<int> r = RibbonNominalFingerprintBits(bits_per_key);
  if (!r.ok()) return Err(r.error());
  Params p;
  p.fingerprint_bits = r.value();  // what the budget buys at the best slots per key
  p.bits_per_key = bits_per_key;
  return p;
}

Result<int> Ribbon::FingerprintBitsFor(const Params& params, uint64_t num_keys) {
  if (params.bits_per_key > 0) return RibbonFingerprintBitsForBudget(params.bits_per_key, num_keys);
  if (!ValidRibbonFingerprintBits(params.fingerprint_bits)) {
    return Err(FingerprintBitsError(params.fingerprint_bits, kRibbonMinFingerprintBits,
                                    kRibbonMaxFingerprintBits));
  }
  return params.fingerprint_bits;
}

Result<RibbonParams> Ribbon::ForFpRate(double fp_rate) {
  const Result<int> r = FingerprintBitsForFpRate(fp_rate, kRibbonMaxFingerprintBits);
  if (!r.ok()) return Err(r.error());
  Params p;
  p.fingerprint_bits = r.value();
  return p;
}

std::string Ribbon::Describe(const Params& params) {
  char buf[64];
  if (params.bits_per_key > 0) {
    snprintf(buf, sizeof(buf), "ribbon, at most %.2f bits/key", params.bits_per_key);
  } else {
    snprintf(buf, sizeof(buf), "ribbon, %d-bit fingerprints", params.fingerprint_bits);
  }
  return buf;
}

Result<uint64_t> Ribbon::FilterBytes(const Params& params, uint64_t num_keys) {
  const Result<int> r = FingerprintBitsFor(params, num_keys);
  if (!r.ok()) return Err(r.error());
  if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
  const Result<uint64_t> slots = RibbonSlotsFor(num_keys);
  if (!slots.ok()) return Err(slots.error());
  return RibbonTableBytes(slots.value(), r.value()) + kTrailerBytes;
}

uint64_t Ribbon::MaxKeysForBytes(const Params& params, uint64_t bytes) {
  if (!FingerprintBitsFor(params, 1).ok() || bytes < kTrailerBytes) return 0;
  const double guess = static_cast<double>(bytes - kTrailerBytes) * 8 / NominalBitsPerKey(params);
  return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return FilterBytes(params, n); });
}

Result<double> Ribbon::EstimatedFpRate(const Params& params, uint64_t num_keys) {
  if (num_keys == 0) return Err(kNoKeysError);
  const Result<int> r = FingerprintBitsFor(params, num_keys);
  if (!r.ok()) return Err(r.error());
  return IndependentSum(std::ldexp(1.0, -r.value()), HashCollisionRate(num_keys));
}

double Ribbon::NominalFpRate(const Params& params) {
  return std::ldexp(1.0, -params.fingerprint_bits);
}

double Ribbon::NominalBitsPerKey(const Params& params) {
  return params.bits_per_key > 0 ? params.bits_per_key
                                 : kRibbonNominalSlotsPerKey * params.fingerprint_bits;
}

std::vector<RibbonParams> Ribbon::LevelOffers() {
  std::vector<Params> offers;
  for (int r = kRibbonMinFingerprintBits; r <= kRibbonMaxFingerprintBits; ++r) {
    Params p;
    p.fingerprint_bits = r;
    offers.push_back(p);
  }
  return offers;
}

Result<std::string> Ribbon::Build(const Params& params, const HashList& hashes) {
  return BuiltBytes([&](std::string* out) { return BuildRibbonFilter(params, hashes, out); });
}

Result<std::string> Ribbon::Build(const Params& params, const uint64_t* hashes, size_t count) {
  return BuiltBytes(
      [&](std::string* out) { return BuildRibbonFilter(params, hashes, count, out); });
}

bool Ribbon::BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (!ValidRibbonFingerprintBits(t.param)) return false;
  // Whole blocks, at least one, and no more equations than slots.
  if (t.num_units == 0 || t.num_units % kRibbonCoeffBits != 0 || t.num_units > kRibbonMaxSlots) {
    return false;
  }
  if (t.num_keys > t.num_units) return false;
  *body_bytes = RibbonTableBytes(t.num_units, t.param);
  return true;
}

RibbonReader Ribbon::OpenReader(const Trailer& t, const uint8_t* body) {
  return RibbonReader(body, RibbonHashing(t.seed, t.num_units, t.param), t.param);
}

}  // namespace sstfilter
