// SPDX-License-Identifier: Apache-2.0
// The one list of filter kinds, and the generic dispatch over it.
//
// A filter kind is a descriptor struct in its own folder of core/ (core/blocked_bloom/,
// core/standard_bloom/, core/cuckoo/, core/fuse/, core/ribbon/, core/bumped_ribbon/) that holds
// everything about the kind. Every layer above (the byte format's parser, FilterSpec, FilterReader,
// the RocksDB builder and reader adapters, sstfilter.Leveled's allocation) reaches a kind only
// through this list: none of them changes for a new kind, which is its folder, one entry in
// AllKinds below, its sources in sstfilter.mk, its section of docs/format.md and its tests
// (docs/architecture.md, "Adding a filter kind"; tests fail for a kind without golden bytes, a
// reader fuzz seed, a format section or a sizing row). A kind that lacks an operation fails to
// compile here, with the message of the static_assert it fails.
//
// A kind K provides (CheckKind below enforces each):
//   using Params;   the parameters that describe one filter of the kind (a type of its own)
//   using Reader;   a cheap-to-copy view over a parsed body, with
//                     bool MayContain(uint64_t hash) const,
//                     void MayContainBatch(const uint64_t* hashes, size_t n, bool* out,
//                                          BatchPrefetch) const (core/batch.h) and
//                     void Prefetch(uint64_t hash) const (starts loading what MayContain reads)
//   static constexpr FilterKind kId;          trailer byte 21: persistent, unique, never 0
//   static constexpr const char* kName;       "blocked_bloom", for reports and messages
//   static constexpr uint8_t kMaxVersion;     trailer byte 22 runs 1 .. kMaxVersion; what each
//                                             version means is the kind's (BodyBytes, OpenReader)
//   static Result<Params> ForBitsPerKey(double bits_per_key);   the best filter within a budget
//   static Result<Params> ForFpRate(double fp_rate);            the smallest filter for a rate
//   static std::string Describe(const Params&);                 for logs and benchmark output
//   static Result<uint64_t> FilterBytes(const Params&, uint64_t num_keys);   body + trailer
//   static uint64_t MaxKeysForBytes(const Params&, uint64_t bytes);   inverse of FilterBytes: an n
//                                             that fits whose n + 1 does not (the largest such
//                                             n unless a budget makes the size non-monotone)
//   static uint64_t BuildScratchBytes(const Params&, uint64_t num_keys);   the temporary memory
//                                             Build holds beyond its input and its output (what
//                                             a RocksDB builder charges to the block cache)
//   static Result<double> EstimatedFpRate(const Params&, uint64_t num_keys);
//   static double NominalFpRate(const Params&);       unlimited keys, no rounding
//   static double NominalBitsPerKey(const Params&);   likewise
//   static std::vector<Params> LevelOffers();         what sstfilter.Leveled may choose (or none)
//   static Result<std::string> Build(const Params&, const HashList&);
//   static Result<std::string> Build(const Params&, const uint64_t* hashes, size_t count);
//   static bool BodyBytes(const Trailer&, uint64_t* body_bytes);   false: not understood
//   static Reader OpenReader(const Trailer&, const uint8_t* body);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/batch.h"
#include "core/blocked_bloom/blocked_bloom.h"
#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/cuckoo/cuckoo.h"
#include "core/format.h"
#include "core/fuse/fuse.h"
#include "core/hash_list.h"
#include "core/result.h"
#include "core/ribbon/ribbon.h"
#include "core/standard_bloom/standard_bloom.h"

namespace sstfilter {

template <typename... Kinds>
struct KindList {};

// ---- The list. A new kind goes here (and nowhere else outside its folder). ------------------
using AllKinds = KindList<BlockedBloom, StandardBloom, Cuckoo, Fuse, Ribbon, BumpedRibbon>;

// ---- Checks that each kind is complete and the list consistent. -----------------------------
namespace kinds_internal {

template <typename K, typename = void>
struct HasTypes : std::false_type {};
template <typename K>
struct HasTypes<
    K, std::void_t<typename K::Params, typename K::Reader, decltype(K::kId), decltype(K::kName)>>
    : std::true_type {};

// Each operation's exact signature, so a kind with a missing or mistyped one fails here.
template <typename K>
constexpr bool CheckKind() {
  static_assert(HasTypes<K>::value, "a kind needs Params, Reader, kId and kName");
  using P = typename K::Params;
  using R = typename K::Reader;
  static_assert(std::is_same_v<decltype(K::kId), const FilterKind>, "kId must be a FilterKind");
  static_assert(static_cast<uint8_t>(K::kId) != 0, "kind 0 is reserved: it marks no kind");
  static_assert(std::is_same_v<decltype(K::kMaxVersion), const uint8_t> && K::kMaxVersion >= 1,
                "kMaxVersion: a uint8_t, at least 1");
  static_assert(std::is_same_v<decltype(&K::ForBitsPerKey), Result<P> (*)(double)>,
                "ForBitsPerKey(double) -> Result<Params>");
  static_assert(std::is_same_v<decltype(&K::ForFpRate), Result<P> (*)(double)>,
                "ForFpRate(double) -> Result<Params>");
  static_assert(std::is_same_v<decltype(&K::Describe), std::string (*)(const P&)>,
                "Describe(const Params&) -> std::string");
  static_assert(std::is_same_v<decltype(&K::FilterBytes), Result<uint64_t> (*)(const P&, uint64_t)>,
                "FilterBytes(const Params&, uint64_t num_keys) -> Result<uint64_t>");
  static_assert(std::is_same_v<decltype(&K::MaxKeysForBytes), uint64_t (*)(const P&, uint64_t)>,
                "MaxKeysForBytes(const Params&, uint64_t bytes) -> uint64_t");
  static_assert(std::is_same_v<decltype(&K::BuildScratchBytes), uint64_t (*)(const P&, uint64_t)>,
                "BuildScratchBytes(const Params&, uint64_t num_keys) -> uint64_t");
  static_assert(
      std::is_same_v<decltype(&K::EstimatedFpRate), Result<double> (*)(const P&, uint64_t)>,
      "EstimatedFpRate(const Params&, uint64_t num_keys) -> Result<double>");
  static_assert(std::is_same_v<decltype(&K::NominalFpRate), double (*)(const P&)>,
                "NominalFpRate(const Params&) -> double");
  static_assert(std::is_same_v<decltype(&K::NominalBitsPerKey), double (*)(const P&)>,
                "NominalBitsPerKey(const Params&) -> double");
  static_assert(std::is_same_v<decltype(&K::LevelOffers), std::vector<P> (*)()>,
                "LevelOffers() -> std::vector<Params>");
  static_assert(
      std::is_same_v<decltype(static_cast<Result<std::string> (*)(const P&, const HashList&)>(
                         &K::Build)),
                     Result<std::string> (*)(const P&, const HashList&)>,
      "Build(const Params&, const HashList&) -> Result<std::string>");
  static_assert(std::is_same_v<decltype(static_cast<Result<std::string> (*)(
                                            const P&, const uint64_t*, size_t)>(&K::Build)),
                               Result<std::string> (*)(const P&, const uint64_t*, size_t)>,
                "Build(const Params&, const uint64_t*, size_t) -> Result<std::string>");
  static_assert(std::is_same_v<decltype(&K::BodyBytes), bool (*)(const Trailer&, uint64_t*)>,
                "BodyBytes(const Trailer&, uint64_t*) -> bool");
  static_assert(std::is_same_v<decltype(&K::OpenReader), R (*)(const Trailer&, const uint8_t*)>,
                "OpenReader(const Trailer&, const uint8_t* body) -> Reader");
  static_assert(std::is_same_v<decltype(std::declval<const R&>().MayContain(uint64_t{})), bool>,
                "Reader::MayContain(uint64_t) const -> bool");
  static_assert(std::is_same_v<decltype(std::declval<const R&>().MayContainBatch(
                                   std::declval<const uint64_t*>(), size_t{}, std::declval<bool*>(),
                                   BatchPrefetch{})),
                               void>,
                "Reader::MayContainBatch(const uint64_t*, size_t, bool*, BatchPrefetch) const");
  static_assert(std::is_same_v<decltype(std::declval<const R&>().Prefetch(uint64_t{})), void>,
                "Reader::Prefetch(uint64_t) const");
  static_assert(std::is_trivially_copyable_v<R>, "a Reader is a view: cheap to copy");
  return true;
}

template <typename... Ks>
constexpr bool CheckList(KindList<Ks...>) {
  static_assert((CheckKind<Ks>() && ...));
  constexpr uint8_t ids[] = {static_cast<uint8_t>(Ks::kId)...};
  for (size_t i = 0; i < sizeof...(Ks); ++i) {
    for (size_t j = i + 1; j < sizeof...(Ks); ++j) {
      if (ids[i] == ids[j]) return false;
    }
  }
  return true;
}
static_assert(CheckList(AllKinds{}), "two kinds share a kId");

template <typename List>
struct ParamsOf;
template <typename... Ks>
struct ParamsOf<KindList<Ks...>> {
  using type = std::variant<typename Ks::Params...>;
};

template <typename List, typename... Extra>
struct ReadersOf;
template <typename... Ks, typename... Extra>
struct ReadersOf<KindList<Ks...>, Extra...> {
  using type = std::variant<Extra..., typename Ks::Reader...>;
};

template <typename F, typename... Ks>
void ForEachKindIn(F& f, KindList<Ks...>) {
  (f(Ks{}), ...);
}

template <typename F, typename... Ks>
bool VisitKindIn(FilterKind id, F& f, KindList<Ks...>) {
  return ((Ks::kId == id ? (f(Ks{}), true) : false) || ...);
}

template <typename P, typename List>
struct KindOfParams;
template <typename P, typename K, typename... Ks>
struct KindOfParams<P, KindList<K, Ks...>> {
  using type = std::conditional_t<std::is_same_v<P, typename K::Params>, K,
                                  typename KindOfParams<P, KindList<Ks...>>::type>;
};
template <typename P>
struct KindOfParams<P, KindList<>> {
  using type = void;
};

}  // namespace kinds_internal

// The parameters of any kind: what FilterSpec holds.
using AnyParams = kinds_internal::ParamsOf<AllKinds>::type;

// The kind whose Params is P.
template <typename P>
using KindOf = typename kinds_internal::KindOfParams<P, AllKinds>::type;

// Calls f(K{}) for every kind K, in the order of AllKinds.
template <typename F>
void ForEachKind(F&& f) {
  kinds_internal::ForEachKindIn(f, AllKinds{});
}

// Calls f(K{}) for the kind K whose kId is `id` and returns true; false if no kind has that id.
template <typename F>
bool VisitKind(FilterKind id, F&& f) {
  return kinds_internal::VisitKindIn(id, f, AllKinds{});
}

// std::visit for one variant, as a chain of index tests that the compiler inlines (libstdc++'s
// std::visit calls through a table of function pointers, which costs a query path an indirect
// call). Exhaustive: every alternative is handled by the same generic f.
template <size_t I = 0, typename Variant, typename F>
decltype(auto) Visit(Variant&& v, F&& f) {
  constexpr size_t kSize = std::variant_size_v<std::decay_t<Variant>>;
  if constexpr (I + 1 == kSize) {
    return f(*std::get_if<I>(&v));
  } else {
    if (v.index() == I) return f(*std::get_if<I>(&v));
    return Visit<I + 1>(std::forward<Variant>(v), std::forward<F>(f));
  }
}

}  // namespace sstfilter
