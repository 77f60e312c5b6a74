// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the Redis module's loaders fed arbitrary bytes, as BF.LOADCHUNK / CF.LOADCHUNK, RDB
// files and RESTORE give them: the DumpLoader (redis/dump_loader.h), whole and in pieces, and the
// scalable filters' Deserialize (core/app_filters/chain_loader.h) after a key's dump header. Any
// crash, out-of-bounds read (ASan) or undefined behaviour (UBSan) is a failure; so is a loader
// that answers otherwise in pieces than whole, a filter that, once accepted, misses a key it
// added, or whose bytes do not read back as the same filter.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/hash.h"
#include "redis/dump_format.h"
#include "redis/dump_loader.h"
#include "sstfilter/scalable_bloom_filter.h"
#include "sstfilter/scalable_cuckoo_filter.h"

namespace {

// An accepted filter keeps every key it takes, and round-trips.
template <typename Filter>
void Exercise(const uint8_t* data, size_t size) {
  auto accepted = Filter::Deserialize(data, size);
  if (!accepted.ok()) return;
  Filter filter = std::move(accepted).value();
  // Its bytes read back as the same filter (the input may differ in fields its filters normalise).
  const std::string before = filter.Serialize();
  auto again = Filter::Deserialize(before.data(), before.size());
  if (!again.ok() || again.value().Serialize() != before) __builtin_trap();
  // Its bytes in pieces, as RDB saves and SCANDUMP make them, are its bytes.
  if (filter.SerializedBytes() != before.size()) __builtin_trap();
  const size_t piece = 1 + size % 97;
  std::string pieces(before.size(), '\0');
  for (size_t at = 0; at < before.size(); at += piece) {
    const size_t want = std::min(piece, before.size() - at);
    if (filter.SerializeRange(at, piece, pieces.data() + at) != want) __builtin_trap();
  }
  if (pieces != before) __builtin_trap();
  for (uint64_t i = 0; i < 8; ++i) {
    const uint64_t hash = sstfilter::KeyHash(&i, sizeof(i)) + size;
    if (filter.AddHash(hash) != sstfilter::AddOutcome::kFull && !filter.MayContainHash(hash)) {
      __builtin_trap();
    }
  }
  const std::string after = filter.Serialize();
  if (!Filter::Deserialize(after.data(), after.size()).ok()) __builtin_trap();
}

}  // namespace

// The loader takes the input whole and in pieces (of a size its first byte gives), as LOADCHUNK
// and RDB loading give them: a refused piece changes nothing, both ways meet the same checks, and
// what they take they give back byte for byte and finish into the same filter.
template <typename Filter, sstfilter::redis::DumpType kType>
void Load(const uint8_t* data, size_t size) {
  using Loader = sstfilter::redis::DumpLoader<Filter, kType>;
  Loader whole(size);
  const bool whole_ok = whole.Take(data, size).ok();
  Loader pieces(size);
  bool pieces_ok = true;
  const size_t piece = 1 + (size > 0 ? data[0] : 0);
  for (size_t at = 0; at < size && pieces_ok; at += piece) {
    const uint64_t before = pieces.received();
    pieces_ok = pieces.Take(data + at, std::min(piece, size - at)).ok();
    if (!pieces_ok && pieces.received() != before) __builtin_trap();
  }
  if (whole_ok != pieces_ok) __builtin_trap();
  if (!whole_ok) return;
  std::string taken(size, '\0');
  if (whole.received() != size || pieces.CopyReceived(0, size, taken.data()) != size ||
      std::memcmp(taken.data(), data, size) != 0 || whole.complete() != pieces.complete()) {
    __builtin_trap();
  }
  if (!whole.complete()) return;
  auto from_whole = whole.Finish();
  auto from_pieces = pieces.Finish();
  if (from_whole.ok() != from_pieces.ok()) __builtin_trap();
  if (from_whole.ok() && from_whole.value().Serialize() != from_pieces.value().Serialize()) {
    __builtin_trap();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy: ASan reports a read one byte past the end.
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  using sstfilter::redis::DumpType;
  Load<sstfilter::ScalableBloomFilter, DumpType::kBloom>(bytes.get(), size);
  Load<sstfilter::ScalableCuckooFilter, DumpType::kCuckoo>(bytes.get(), size);
  // The filter's bytes: after a dump header when there is one, else the whole input.
  const bool dump = sstfilter::redis::ParseDumpHeader(bytes.get(), size, DumpType::kBloom).ok() ||
                    sstfilter::redis::ParseDumpHeader(bytes.get(), size, DumpType::kCuckoo).ok();
  const size_t skip = dump ? sstfilter::redis::kDumpHeaderBytes : 0;
  Exercise<sstfilter::ScalableBloomFilter>(bytes.get() + skip, size - skip);
  Exercise<sstfilter::ScalableCuckooFilter>(bytes.get() + skip, size - skip);
  return 0;
}
