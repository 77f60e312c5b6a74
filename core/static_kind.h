// SPDX-License-Identifier: Apache-2.0
// The descriptor operations shared by the kinds that BuildStatic builds (core/static_build.h) and
// that a fingerprint width or a budget of bits per key chooses: binary fuse and Ribbon. A filter
// of w-bit fingerprints answers an absent key with chance 2^-w, and its table's size follows from
// the key count and w, so everything here derives from the kind's table size and its choice of w.
//
// A kind derives from StaticKind<Kind, Params> (Params a StaticParams of its own) and provides:
//   static constexpr StaticKindFacts kFacts;
//   static Result<int> FingerprintBitsFor(const Params&, uint64_t num_keys);
//   using Solver;   its solver for BuildStatic (core/static_build.h), which also sizes its table:
//                   defined in the kind's .cc, which instantiates StaticKind<Kind, Params> there
// and the operations of core/kinds.h that are its own (BodyBytes, OpenReader).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/sizing.h"

namespace sstfilter {

// A static kind's choice: a fingerprint width (a rate: 2^-w), or a budget of bits per key, which
// picks for each filter the widest fingerprint whose table fits the budget at that filter's key
// count. Tag makes each kind's parameters a type of their own: a FilterSpec tells them apart.
template <typename Tag>
struct StaticParams {
  int fingerprint_bits = 8;
  double bits_per_key = 0;  // > 0: a budget, and fingerprint_bits is not used
};

// What a static build reports.
struct StaticBuildInfo {
  // Keys stored: the distinct key hashes (Ribbon: but for any whose equation the others already
  // implied; a dependent equation agrees with chance 2^-r, otherwise the seed fails).
  uint64_t stored = 0;
  int attempts = 0;        // seeds tried (0 for no keys)
  bool fell_back = false;  // wrote a blocked Bloom filter instead
  // The temporary memory the build held at its peak, beyond its input and output: the solver's
  // scratch, plus 8 bytes per key when the build needed the sorted distinct copy.
  uint64_t scratch_bytes = 0;
};

struct StaticKindFacts {
  const char* label;  // what Describe calls the filter: "binary fuse"
  int min_fingerprint_bits;
  int max_fingerprint_bits;
  double nominal_units_per_key;  // table units (w bits each) per key, for large sets
  int max_attempts;  // seeds tried before the build falls back to a blocked Bloom filter
  // The most scratch bytes per key a build holds (StaticBuildInfo::scratch_bytes) at any count of
  // hashes given, repeats included, with the 8 per hash given of the sorted distinct copy (it
  // reserves room for all of them); BuildScratchBytes adds kStaticBuildSpareBytes.
  double max_scratch_bytes_per_key;
};

// What a static build's scratch may hold beyond max_scratch_bytes_per_key per key: vectors'
// spare slots, and a small set's rounding up to whole table units.
inline constexpr uint64_t kStaticBuildSpareBytes = 4096;

template <typename Kind, typename KindParams>
struct StaticKind {
  using Params = KindParams;

  // A budget of b bits per key. Each filter gets the widest fingerprint that fits it at its own
  // key count (the kind's FingerprintBitsFor); fingerprint_bits holds what the budget buys for
  // large sets, floor(b / nominal_units_per_key) (NominalFpRate). An error below one unit's bits.
  static Result<Params> ForBitsPerKey(double bits_per_key) {
    if (!ValidBitsPerKey(bits_per_key)) return Err(BitsPerKeyError(bits_per_key));
    const double w = std::floor(bits_per_key / Kind::kFacts.nominal_units_per_key);
    if (w < Kind::kFacts.min_fingerprint_bits) {
      return Err(
          "bits_per_key " + FormatNumber(bits_per_key) + " is below the " + Kind::kName +
          " minimum of " +
          FormatNumber(Kind::kFacts.nominal_units_per_key * Kind::kFacts.min_fingerprint_bits));
    }
    Params p;
    p.fingerprint_bits = static_cast<int>(std::min(w, double{Kind::kFacts.max_fingerprint_bits}));
    p.bits_per_key = bits_per_key;
    return p;
  }

  // ceil(log2(1/p))-bit fingerprints for a rate.
  static Result<Params> ForFpRate(double fp_rate) {
    const Result<int> w = FingerprintBitsForFpRate(fp_rate, Kind::kFacts.max_fingerprint_bits);
    if (!w.ok()) return Err(w.error());
    Params p;
    p.fingerprint_bits = w.value();
    return p;
  }

  // "binary fuse, 7-bit fingerprints" or "binary fuse, at most 10.00 bits/key".
  static std::string Describe(const Params& params) {
    char buf[64];
    if (params.bits_per_key > 0) {
      snprintf(buf, sizeof(buf), "%s, at most %.2f bits/key", Kind::kFacts.label,
               params.bits_per_key);
    } else {
      snprintf(buf, sizeof(buf), "%s, %d-bit fingerprints", Kind::kFacts.label,
               params.fingerprint_bits);
    }
    return buf;
  }

  // The table, and the table and trailer, for num_keys >= 1 keys of w-bit fingerprints (the
  // Solver's); defined in core/static_build.h.
  static Result<uint64_t> TableBytesFor(uint64_t num_keys, int fingerprint_bits);
  static Result<uint64_t> FilterBytesFor(uint64_t num_keys, int fingerprint_bits);

  // Table plus trailer for num_keys keys (the blocked-Bloom fallback, which rounds up to 64-byte
  // blocks and has a 32-byte trailer, may write up to 85 bytes more); 32 for none.
  static Result<uint64_t> FilterBytes(const Params& params, uint64_t num_keys) {
    const Result<int> w = Kind::FingerprintBitsFor(params, num_keys);
    if (!w.ok()) return Err(w.error());
    if (num_keys == 0) return static_cast<uint64_t>(kTrailerBytes);
    return FilterBytesFor(num_keys, w.value());
  }

  static uint64_t MaxKeysForBytes(const Params& params, uint64_t bytes) {
    if (!Kind::FingerprintBitsFor(params, 1).ok()) return 0;
    // A filter with keys may be smaller than the empty one (a compact trailer: core/format.h).
    const double guess = static_cast<double>(bytes > kTrailerBytes ? bytes - kTrailerBytes : 0) *
                         8 / NominalBitsPerKey(params);
    return MaxKeysFitting(bytes, guess, [&](uint64_t n) { return FilterBytes(params, n); });
  }

  // 2^-w, with the chance of a 64-bit hash collision.
  static Result<double> EstimatedFpRate(const Params& params, uint64_t num_keys) {
    if (num_keys == 0) return Err(kNoKeysError);
    const Result<int> w = Kind::FingerprintBitsFor(params, num_keys);
    if (!w.ok()) return Err(w.error());
    return IndependentSum(std::ldexp(1.0, -w.value()), HashCollisionRate(num_keys));
  }

  static double NominalFpRate(const Params& params) {
    return std::ldexp(1.0, -params.fingerprint_bits);
  }

  static double NominalBitsPerKey(const Params& params) {
    return params.bits_per_key > 0 ? params.bits_per_key
                                   : Kind::kFacts.nominal_units_per_key * params.fingerprint_bits;
  }

  // Every fingerprint width. Their cost per key depends on the key count (a small set's table
  // has more units per key than a large one's), so sstfilter.Leveled prices them at the filter's
  // key count.
  static std::vector<Params> LevelOffers() {
    std::vector<Params> offers;
    for (int w = Kind::kFacts.min_fingerprint_bits; w <= Kind::kFacts.max_fingerprint_bits; ++w) {
      Params p;
      p.fingerprint_bits = w;
      offers.push_back(p);
    }
    return offers;
  }

  // At least the scratch bytes a build of num_keys keys holds at its peak (StaticBuildInfo).
  static uint64_t BuildScratchBytes(const Params& /*params*/, uint64_t num_keys) {
    return static_cast<uint64_t>(
               std::ceil(Kind::kFacts.max_scratch_bytes_per_key * static_cast<double>(num_keys))) +
           kStaticBuildSpareBytes;
  }

  // Builds the filter of hashes[0, count) (any order, repeats allowed) into *out (replaced), and
  // says how. Fails only for invalid params. `max_attempts` (tests): the seeds tried before the
  // fallback. Defined in core/static_build.h.
  static Result<StaticBuildInfo> BuildWithInfo(const Params& params, const uint64_t* hashes,
                                               size_t count, std::string* out,
                                               int max_attempts = Kind::kFacts.max_attempts);
  static Result<StaticBuildInfo> BuildWithInfo(const Params& params, const HashList& hashes,
                                               std::string* out,
                                               int max_attempts = Kind::kFacts.max_attempts);

  static Result<std::string> Build(const Params& params, const HashList& hashes) {
    return BuiltBytes([&](std::string* out) { return Kind::BuildWithInfo(params, hashes, out); });
  }
  static Result<std::string> Build(const Params& params, const uint64_t* hashes, size_t count) {
    return BuiltBytes(
        [&](std::string* out) { return Kind::BuildWithInfo(params, hashes, count, out); });
  }
};

}  // namespace sstfilter
