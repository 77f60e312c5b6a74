// SPDX-License-Identifier: Apache-2.0
#include "core/hash.h"

#include <xxhash.h>

namespace sstfilter {

uint64_t KeyHash(const void* data, size_t size) {
  return XXH3_64bits_withSeed(data, size, kKeyHashSeed);
}

}  // namespace sstfilter
