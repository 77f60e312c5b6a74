// SPDX-License-Identifier: Apache-2.0
// HashKey: the 64-bit hash sstfilter gives a key, shared by every filter of the installed API.
#pragma once

#include <cstdint>
#include <string_view>

#include "sstfilter/export.h"

namespace sstfilter {

// XXH3-64 with sstfilter's fixed seed, the hash its SST filters store. Persistent: a serialised
// filter answers for the same keys in every version. Hash once and pass the hash to several
// filters (AddHash, MayContainHash) to save the hashing.
SSTFILTER_EXPORT uint64_t HashKey(std::string_view key);

}  // namespace sstfilter
