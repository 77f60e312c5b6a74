// SPDX-License-Identifier: Apache-2.0
// HashKey (include/sstfilter/hash_key.h): the application filters' name for core's key hash. In a
// file of its own so that only programs of the application filters link it (libsstfilter.so takes
// core's objects from an archive, and exports none of this API).
#include "sstfilter/hash_key.h"

#include "core/hash.h"

namespace sstfilter {

uint64_t HashKey(std::string_view key) { return KeyHash(key.data(), key.size()); }

}  // namespace sstfilter
