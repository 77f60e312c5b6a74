// SPDX-License-Identifier: Apache-2.0
#include "core/static_build.h"

#include "core/blocked_bloom/blocked_bloom.h"
#include "core/sizing.h"

namespace sstfilter {

void WriteEmptyFilter(FilterKind kind, int param, std::string* out) {
  Trailer trailer;
  trailer.kind = kind;
  trailer.param = static_cast<uint8_t>(param);
  out->clear();
  AppendTrailer(trailer, out);
}

Result<std::string> BuildFallbackFilter(uint64_t table_bytes, const uint64_t* hashes,
                                        size_t count) {
  const Result<BlockedBloomParams> bloom = BlockedBloom::ForBodyBytes(table_bytes, count);
  if (!bloom.ok()) return Err(bloom.error());
  return BlockedBloom::Build(bloom.value(), hashes, count);
}

}  // namespace sstfilter
