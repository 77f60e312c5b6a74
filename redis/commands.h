// SPDX-License-Identifier: Apache-2.0
// The module's two types and their commands: the Bloom filter and BF.* (bloom_commands.cc), the
// cuckoo filter and CF.* (cuckoo_commands.cc). module.cc creates the types and registers the
// commands at load.
#pragma once

#include <cstddef>

#include "redis/command_args.h"

namespace sstfilter::redis {

// Each creates its type and registers its commands, at module load; false if Redis refuses one
// (RegisterCommands logs which command).
bool LoadBloom(RedisModuleCtx* ctx);
bool LoadCuckoo(RedisModuleCtx* ctx);

// Registers each command, its key the first argument (module.cc); false, with a LOG line naming
// the command, if Redis refuses one.
bool RegisterCommands(RedisModuleCtx* ctx, const ModuleCommand* commands, size_t count);

// Creates the type of Value into *kType, named `type_name`, then registers its commands.
template <typename Value, RedisModuleType** kType, size_t kCount>
bool LoadType(RedisModuleCtx* ctx, const char* type_name, const ModuleCommand (&commands)[kCount]) {
  return Value::CreateType(ctx, type_name, kEncodingVersion, kType) &&
         RegisterCommands(ctx, commands, kCount);
}

}  // namespace sstfilter::redis
