#include "core/hash.h"

#include <xxhash.h>

#include "sstfilter/hash_key.h"

namespace sstfilter {

uint64_t KeyHash(const void* data, size_t size) {
  return XXH3_64bits_withSeed(data, size, kKeyHashSeed);
}

uint64_t HashKey(std::string_view key) { return KeyHash(key.data(), key.size()); }

}  // namespace sstfilter
