// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the Redis module's loaders fed arbitrary bytes, as BF.LOADCHUNK / CF.LOADCHUNK, RDB
// files and RESTORE give them: a key's dump header (redis/dump_format.h), then the scalable
// filters' Deserialize (core/app_filters/chain_format.h). Any crash, out-of-bounds read (ASan) or
// undefined behaviour (UBSan) is a failure; so is a filter that, once accepted, misses a key it
// added, or whose bytes do not read back as the same filter.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/hash.h"
#include "redis/dump_format.h"
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy: ASan reports a read one byte past the end.
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  using sstfilter::redis::DumpType;
  const uint64_t needed = sstfilter::redis::DumpBytesNeeded(bytes.get(), size);
  // 0: never a dump; else at least the headers (never less than what a dump must hold).
  if (needed != 0 && needed < sstfilter::redis::kDumpHeaderBytes) __builtin_trap();
  for (const DumpType type : {DumpType::kBloom, DumpType::kCuckoo}) {
    (void)sstfilter::redis::ParseDumpHeader(bytes.get(), size, type);
  }
  // The filter's bytes: after a dump header when there is one, else the whole input.
  const bool dump = sstfilter::redis::ParseDumpHeader(bytes.get(), size, DumpType::kBloom).ok() ||
                    sstfilter::redis::ParseDumpHeader(bytes.get(), size, DumpType::kCuckoo).ok();
  const size_t skip = dump ? sstfilter::redis::kDumpHeaderBytes : 0;
  Exercise<sstfilter::ScalableBloomFilter>(bytes.get() + skip, size - skip);
  Exercise<sstfilter::ScalableCuckooFilter>(bytes.get() + skip, size - skip);
  return 0;
}
