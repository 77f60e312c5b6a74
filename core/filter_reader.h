// SPDX-License-Identifier: Apache-2.0
// FilterReader: answers queries for the bytes of any sstfilter filter, whatever its kind.
//
// It applies the reader rules of core/format.h: bytes that are not fully understood give a
// reader that answers "may match" for every key (a wasted read, never a lost key), and a valid
// filter of zero keys answers "no". It never fails and never reads outside the given span, which
// must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "core/batch.h"
#include "core/format.h"
#include "core/kinds.h"

namespace sstfilter {

// A reader that gives every key the same answer, without reading anything.
template <bool kAnswer>
struct ConstantReader {
  void Prefetch(uint64_t) const {}
  bool MayContain(uint64_t) const { return kAnswer; }
  void MayContainBatch(const uint64_t*, size_t count, bool* may_match,
                       BatchPrefetch = BatchPrefetch::kInBatch) const {
    for (size_t i = 0; i < count; ++i) may_match[i] = kAnswer;
  }
};
// The reader of bytes not understood: "may match" for every key.
using MatchAllReader = ConstantReader<true>;
// The reader of a valid filter of zero keys: "no" for every key.
using MatchNoneReader = ConstantReader<false>;

// MatchAllReader, MatchNoneReader, then each kind's Reader in the order of AllKinds.
using AnyReader = kinds_internal::ReadersOf<AllKinds, MatchAllReader, MatchNoneReader>::type;

class FilterReader {
 public:
  // A reader that matches everything: the answer for bytes that could not be understood.
  FilterReader() = default;

  static FilterReader Open(const uint8_t* data, size_t size);

  // Whether the bytes were a valid filter (then trailer() describes it).
  bool valid() const { return !std::holds_alternative<MatchAllReader>(reader_); }
  const Trailer& trailer() const { return trailer_; }
  // The reader it dispatches to, for callers that want it without the dispatch (the plugin keeps
  // one adapter per reader type).
  const AnyReader& reader() const { return reader_; }
  template <typename Reader>
  bool Holds() const {
    return std::holds_alternative<Reader>(reader_);
  }

  // Queries that choose the kind's reader per query, for callers that query a filter a few times
  // (the plugin's post-build check). Hot paths take reader() once and query it directly, as the
  // plugin's adapters do: the dispatch is a branch the predictor cannot learn across kinds, paid
  // on every query (docs/history.md measures it beyond the caches).
  bool MayContain(uint64_t hash) const {
    return Visit(reader_, [hash](const auto& r) { return r.MayContain(hash); });
  }

  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const {
    Visit(reader_, [&](const auto& r) { r.MayContainBatch(hashes, count, may_match, prefetch); });
  }

  // Starts loading what a query for `hash` will read. A batch that prefetches each key as soon as
  // it is hashed overlaps the memory latency with the hashing of the keys after it, as RocksDB's
  // own batched filter queries do.
  void Prefetch(uint64_t hash) const {
    Visit(reader_, [hash](const auto& r) { r.Prefetch(hash); });
  }

 private:
  AnyReader reader_;  // MatchAllReader until Open understands the bytes
  Trailer trailer_;
};

}  // namespace sstfilter
