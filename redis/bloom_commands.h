// SPDX-License-Identifier: Apache-2.0
// The Bloom filter type and its BF.* commands (redis/bloom_commands.cc).
#pragma once

#include <cstddef>

#include "redis/command_args.h"

namespace sstfilter::redis {

// Creates the type, at module load; false if Redis refuses it.
bool CreateBloomType(RedisModuleCtx* ctx);
extern const ModuleCommand kBloomCommands[];
extern const size_t kNumBloomCommands;

}  // namespace sstfilter::redis
