// SPDX-License-Identifier: Apache-2.0
#include "core/hash.h"

// XXH3's code compiled into KeyHash (static copies, XXH_INLINE_-prefixed) rather than a call into
// the shared libxxhash: every query and build hashes each key here, and the call through the PLT
// and the library's wrapper cost more than the hash of a short key.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {

uint64_t KeyHash(const void* data, size_t size) {
  return XXH3_64bits_withSeed(data, size, kKeyHashSeed);
}

}  // namespace sstfilter
