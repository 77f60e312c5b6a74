// SPDX-License-Identifier: Apache-2.0
// libsstfilter_redis.so: RedisBloom's BF.* and CF.* commands over sstfilter's scalable filters,
// for the Redis Debian ships (7.0). Loaded with `redis-server --loadmodule
// /path/to/libsstfilter_redis.so` (or `loadmodule` in redis.conf); it takes no arguments.
// docs/redis.md is the user's guide.
#define SSTFILTER_REDIS_DEFINE_API  // this file defines the API's function pointers
#include "redis/redis_api.h"
//
#include "redis/command_args.h"
#include "redis/commands.h"
#include "sstfilter/filter_memory.h"

namespace sstfilter::redis {

bool RegisterCommands(RedisModuleCtx* ctx, const ModuleCommand* commands, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (RedisModule_CreateCommand(ctx, commands[i].name, commands[i].run, commands[i].flags,
                                  /*firstkey=*/1, /*lastkey=*/1, /*keystep=*/1) != REDISMODULE_OK) {
      RedisModule_Log(ctx, "warning", "sstfilter: cannot register %s", commands[i].name);
      return false;
    }
  }
  return true;
}

}  // namespace sstfilter::redis

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString**,
                                                                         int argc) {
  using namespace sstfilter::redis;
  if (RedisModule_Init(ctx, "sstfilter", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) {
    return REDISMODULE_ERR;
  }
  if (argc != 0) {
    RedisModule_Log(ctx, "warning", "sstfilter: the module takes no arguments, got %d", argc);
    return REDISMODULE_ERR;
  }
  // The filters' arrays come from Redis's allocator, so that INFO memory, maxmemory and eviction
  // count them. TryAlloc: a filter too large for the memory left is an error reply, not an abort.
  if (!sstfilter::SetFilterAllocator({RedisModule_TryAlloc, RedisModule_Free})) {
    RedisModule_Log(ctx, "warning", "sstfilter: cannot set the filters' allocator");
    return REDISMODULE_ERR;
  }
  // RDB loading checks RedisModule_IsIOError after each read instead of Redis exiting on a
  // short read, so that a bad value is refused with a LOG line (a RESTORE answers an error).
  RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
  if (!LoadBloom(ctx) || !LoadCuckoo(ctx)) {
    RedisModule_Log(ctx, "warning", "sstfilter: cannot create the data types and commands");
    return REDISMODULE_ERR;
  }
  return REDISMODULE_OK;
}
