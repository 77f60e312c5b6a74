// SPDX-License-Identifier: Apache-2.0
// The cuckoo filter type and its CF.* commands (redis/cuckoo_commands.cc).
#pragma once

#include <cstddef>

#include "redis/command_args.h"

namespace sstfilter::redis {

// Creates the type, at module load; false if Redis refuses it.
bool CreateCuckooType(RedisModuleCtx* ctx);
extern const ModuleCommand kCuckooCommands[];
extern const size_t kNumCuckooCommands;

}  // namespace sstfilter::redis
