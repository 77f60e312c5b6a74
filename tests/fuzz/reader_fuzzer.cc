// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the filter readers fed arbitrary bytes, then queried. Any crash, out-of-bounds read
// (ASan), undefined behaviour (UBSan), a disagreement between single and batched queries, or a
// "no" from bytes that were not understood is a failure. Bytes the application filters accept
// (CuckooFilter, BloomFilter) must keep working as filters.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/filter_reader.h"
#include "core/hash.h"
#include "sstfilter/bloom_filter.h"
#include "sstfilter/cuckoo_filter.h"

using sstfilter::FilterReader;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy: ASan reports a read one byte past the end.
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(bytes.get(), data, size);
  const FilterReader reader = FilterReader::Open(bytes.get(), size);
  constexpr int kQueries = 64;
  uint64_t hashes[kQueries];
  for (uint64_t i = 0; i < kQueries; ++i) hashes[i] = sstfilter::KeyHash(&i, sizeof(i)) + size;
  bool batch[kQueries];
  reader.MayContainBatch(hashes, kQueries, batch);
  for (int i = 0; i < kQueries; ++i) {
    if (reader.MayContain(hashes[i]) != batch[i]) __builtin_trap();
    if (!reader.valid() && !batch[i]) __builtin_trap();  // not understood: "may match"
  }
  // The dynamic cuckoo filter accepts only valid cuckoo bytes, and keeps working on them.
  auto dynamic = sstfilter::CuckooFilter::Deserialize(bytes.get(), size);
  if (dynamic.ok()) {
    sstfilter::CuckooFilter filter = std::move(dynamic).value();
    for (int i = 0; i < 8; ++i) {
      if (filter.AddHash(hashes[i]) && !filter.MayContainHash(hashes[i])) __builtin_trap();
    }
    const std::string again = filter.Serialize();
    if (!FilterReader::Open(reinterpret_cast<const uint8_t*>(again.data()), again.size()).valid()) {
      __builtin_trap();
    }
  }
  // So does the application Bloom filter, with blocked Bloom bytes: every hash it adds it finds.
  auto bloom = sstfilter::BloomFilter::Deserialize(bytes.get(), size);
  if (bloom.ok()) {
    sstfilter::BloomFilter filter = std::move(bloom).value();
    for (int i = 0; i < 8; ++i) {
      filter.AddHash(hashes[i]);
      if (!filter.MayContainHash(hashes[i])) __builtin_trap();
    }
    (void)filter.ApproximateElementCount();
    (void)filter.ExpectedFpRate();
    const std::string again = filter.Serialize();
    if (!FilterReader::Open(reinterpret_cast<const uint8_t*>(again.data()), again.size()).valid()) {
      __builtin_trap();
    }
  }
  return 0;
}
