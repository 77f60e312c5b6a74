// SPDX-License-Identifier: Apache-2.0
// What the static kinds whose build can fail (binary fuse, Ribbon) do around their solver, in one
// place: the empty filter, a first pass over the input as it is, the sorted distinct copy, the
// seeds in order, and the blocked Bloom fallback, so that a build never fails and never drops a
// key, and its bytes depend only on the set of hashes.
//
// The kind's Solver (Kind::Solver: core/fuse/fuse.cc's FuseSolver, core/ribbon/ribbon.cc's
// RibbonSolver) holds no state; it provides:
//   using Table;                              the table for a key count (fuse: its shape; Ribbon:
//                                             its slot count)
//   using Scratch;                            the memory of an attempt, reused by the next; default
//                                             constructed empty, with uint64_t Bytes() const (its
//                                             capacity)
//   static constexpr int kFirstPassSeeds;     seeds tried over the input as it is, before the
//                                             build makes its distinct copy
//   static Result<Table> TableFor(uint64_t num_keys);   num_keys >= 1
//   static bool Solvable(const Table&);                 false: straight to the fallback
//   static uint64_t Units(const Table&);                trailer num_units
//   static uint8_t Version(const Table&);               trailer version (Ribbon: 2 for a
//                                                       wrapped table)
//   static uint64_t TableBytes(const Table&, int fingerprint_bits);
//   static TrailerLayout TrailerLayoutFor(const Table&);  kLayout2, or kCompact (Ribbon: for a
//                                                       wrapped table, whose fields always fit)
//   static bool TrySeed(const Table&, int fingerprint_bits, int seed, ForEachChunk&, Scratch*,
//                       uint8_t* table, uint64_t* stored, uint32_t* trailer_seed);
//                                             one attempt into `table` (zeroed, TableBytes long):
//                                             true if it solved, with the keys it stored and the
//                                             trailer's seed field
// where ForEachChunk calls f(const uint64_t* hashes, size_t n) over the same hashes each time.
// The kind gives the rest: its kId and FingerprintBitsFor(params, num_keys).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/format.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/static_kind.h"

namespace sstfilter {

// The bytes of a filter of `kind` that holds no key: its trailer alone (version 1, which every
// sstfilter release reads as "no key").
void WriteEmptyFilter(FilterKind kind, int param, std::string* out);

// The fallback of a static build that no seed solves: a blocked Bloom filter over hashes[0, count)
// (count >= 1, no repeats) whose body is about table_bytes, the failed table's (its bits per key
// clamped to the Bloom range, then whole 64-byte blocks), so that no key is lost and the file's
// filter memory stays what was planned. The one place where a kind's build reaches another kind.
Result<std::string> BuildFallbackFilter(uint64_t table_bytes, const uint64_t* hashes, size_t count);

namespace static_build_internal {

// The seeds [first_seed, end_seed) in order until one solves; on success *out holds the filter.
template <typename Kind, typename ForEachChunk>
bool SolveWithSeeds(const typename Kind::Solver::Table& table, int bits, int first_seed,
                    int end_seed, ForEachChunk& for_each_chunk,
                    typename Kind::Solver::Scratch* scratch, std::string* out,
                    StaticBuildInfo* info) {
  using Solver = typename Kind::Solver;
  if (!Solver::Solvable(table)) return false;
  const uint64_t table_bytes = Solver::TableBytes(table, bits);
  const TrailerLayout layout = Solver::TrailerLayoutFor(table);
  for (int seed = first_seed; seed < end_seed; ++seed) {
    out->assign(table_bytes + TrailerBytesOf(layout), '\0');
    uint8_t* body = reinterpret_cast<uint8_t*>(out->data());
    ++info->attempts;
    Trailer trailer;
    if (!Solver::TrySeed(table, bits, seed, for_each_chunk, scratch, body, &trailer.num_keys,
                         &trailer.seed)) {
      continue;
    }
    trailer.kind = Kind::kId;
    trailer.param = static_cast<uint8_t>(bits);
    trailer.num_units = Solver::Units(table);
    trailer.version = Solver::Version(table);
    if (layout != TrailerLayout::kCompact) {
      EncodeTrailer(trailer, body + table_bytes);
    } else if (!EncodeCompactTrailer(trailer, body + table_bytes)) {
      continue;  // a Solver that asks for the compact layout keeps its fields within it
    }
    info->stored = trailer.num_keys;
    return true;
  }
  return false;
}

}  // namespace static_build_internal

// The build over hashes delivered by for_each_chunk(f) as f(hashes, n), the same on every call;
// `count` counts them, repeats included (a HashList skips consecutive repeats only).
//
// The first kFirstPassSeeds seeds run over the input as it is, in a table sized for `count`.
// That is the whole build when one solves and stores every hash (no repeats: the usual case).
// Otherwise the build makes a sorted copy without repeats and, unless the first pass already
// solved that very set with every seed there is, tries the seeds again from the first in the
// table of the distinct keys, so that the bytes depend only on the set. No seed solving: the
// fallback filter.
template <typename Kind, typename ForEachChunk>
Result<StaticBuildInfo> BuildStatic(const typename Kind::Params& params, uint64_t count,
                                    ForEachChunk&& for_each_chunk, std::string* out,
                                    int max_attempts) {
  using Solver = typename Kind::Solver;
  using Table = typename Solver::Table;
  static_assert(
      std::is_same_v<decltype(Solver::kFirstPassSeeds), const int> && Solver::kFirstPassSeeds >= 1,
      "Solver::kFirstPassSeeds: an int, at least 1");
  static_assert(std::is_same_v<decltype(Solver::TableFor(uint64_t{})), Result<Table>>,
                "Solver::TableFor(uint64_t num_keys) -> Result<Table>");
  static_assert(std::is_same_v<decltype(Solver::Solvable(std::declval<const Table&>())), bool>,
                "Solver::Solvable(const Table&) -> bool");
  static_assert(
      std::is_same_v<decltype(Solver::Units(std::declval<const Table&>())), uint64_t> &&
          std::is_same_v<decltype(Solver::TableBytes(std::declval<const Table&>(), 0)), uint64_t>,
      "Solver::Units(const Table&) and Solver::TableBytes(const Table&, int) -> uint64_t");
  static_assert(std::is_same_v<decltype(Solver::Version(std::declval<const Table&>())), uint8_t>,
                "Solver::Version(const Table&) -> uint8_t");
  static_assert(std::is_same_v<decltype(Solver::TrailerLayoutFor(std::declval<const Table&>())),
                               TrailerLayout>,
                "Solver::TrailerLayoutFor(const Table&) -> TrailerLayout");
  using static_build_internal::SolveWithSeeds;
  Result<int> bits = Kind::FingerprintBitsFor(params, count);
  if (!bits.ok()) return Err(bits.error());
  StaticBuildInfo info;
  if (count == 0) {
    WriteEmptyFilter(Kind::kId, bits.value(), out);
    return info;
  }
  Result<Table> table = Solver::TableFor(count);
  if (!table.ok()) return Err(table.error());
  const int first_pass = std::min(Solver::kFirstPassSeeds, max_attempts);
  typename Solver::Scratch scratch;
  const bool solved = SolveWithSeeds<Kind>(table.value(), bits.value(), 0, first_pass,
                                           for_each_chunk, &scratch, out, &info);
  if (solved && info.stored == count) {
    info.scratch_bytes = scratch.Bytes();
    return info;
  }
  const std::vector<uint64_t> unique = SortedDistinctHashes(count, for_each_chunk);
  const uint64_t unique_bytes = 8 * unique.capacity();
  // Solved without repeats: the hashes the seed did not store had equations that the others
  // implied (Ribbon), so the table holds every key; nothing to redo.
  if (solved && unique.size() == count) {
    info.scratch_bytes = scratch.Bytes() + unique_bytes;
    return info;
  }
  bits = Kind::FingerprintBitsFor(params, unique.size());  // valid: it was for `count`
  table = Solver::TableFor(unique.size());  // likewise: sizes only fail above a limit
  if (!table.ok()) return Err(table.error());
  auto over_unique = [&](auto&& f) { f(unique.data(), unique.size()); };
  const bool other_set = solved || unique.size() < count;
  if ((other_set || first_pass < max_attempts) &&
      SolveWithSeeds<Kind>(table.value(), bits.value(), 0, max_attempts, over_unique, &scratch, out,
                           &info)) {
    info.scratch_bytes = scratch.Bytes() + unique_bytes;
    return info;
  }
  // No seed solved: the fallback, in the failed table's bytes. The scratch goes first.
  info.fell_back = true;
  info.stored = unique.size();
  info.scratch_bytes = std::max(scratch.Bytes(), unique_bytes);
  scratch = typename Solver::Scratch();
  Result<std::string> bytes = BuildFallbackFilter(Solver::TableBytes(table.value(), bits.value()),
                                                  unique.data(), unique.size());
  if (!bytes.ok()) return Err(bytes.error());
  *out = std::move(bytes).value();
  return info;
}

// StaticKind's operations over the kind's Solver (core/static_kind.h): instantiated in the kind's
// .cc, where the Solver is defined (`template struct StaticKind<Kind, Params>;`).
template <typename Kind, typename Params>
Result<uint64_t> StaticKind<Kind, Params>::TableBytesFor(uint64_t num_keys, int fingerprint_bits) {
  const auto table = Kind::Solver::TableFor(num_keys);
  if (!table.ok()) return Err(table.error());
  return Kind::Solver::TableBytes(table.value(), fingerprint_bits);
}

template <typename Kind, typename Params>
Result<uint64_t> StaticKind<Kind, Params>::FilterBytesFor(uint64_t num_keys, int fingerprint_bits) {
  const auto table = Kind::Solver::TableFor(num_keys);
  if (!table.ok()) return Err(table.error());
  return Kind::Solver::TableBytes(table.value(), fingerprint_bits) +
         TrailerBytesOf(Kind::Solver::TrailerLayoutFor(table.value()));
}

template <typename Kind, typename Params>
Result<StaticBuildInfo> StaticKind<Kind, Params>::BuildWithInfo(const Params& params,
                                                                const uint64_t* hashes,
                                                                size_t count, std::string* out,
                                                                int max_attempts) {
  return BuildStatic<Kind>(
      params, count, [&](auto&& f) { f(hashes, count); }, out, max_attempts);
}

template <typename Kind, typename Params>
Result<StaticBuildInfo> StaticKind<Kind, Params>::BuildWithInfo(const Params& params,
                                                                const HashList& hashes,
                                                                std::string* out,
                                                                int max_attempts) {
  return BuildStatic<Kind>(
      params, hashes.size(), [&](auto&& f) { hashes.ForEachChunk(f); }, out, max_attempts);
}

}  // namespace sstfilter
