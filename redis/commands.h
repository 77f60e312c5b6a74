// SPDX-License-Identifier: Apache-2.0
// The module's two types and their commands: the Bloom filter and BF.* (bloom_commands.cc), the
// cuckoo filter and CF.* (cuckoo_commands.cc). module.cc creates the types and registers the
// commands at load.
#pragma once

#include <cstddef>

#include "redis/command_args.h"

namespace sstfilter::redis {

// Each creates its type, at module load; false if Redis refuses it.
bool CreateBloomType(RedisModuleCtx* ctx);
bool CreateCuckooType(RedisModuleCtx* ctx);

extern const ModuleCommand kBloomCommands[];
extern const size_t kNumBloomCommands;
extern const ModuleCommand kCuckooCommands[];
extern const size_t kNumCuckooCommands;

}  // namespace sstfilter::redis
