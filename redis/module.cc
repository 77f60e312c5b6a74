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
namespace {

// Filters of this size and up are checked against maxmemory before they are allocated; below it,
// a filter is one more small value, which Redis's own check before a deny-oom command covers.
constexpr size_t kBytesCheckedAgainstMaxmemory = size_t{1} << 20;

// Whether `bytes` more would take a primary past maxmemory, as Redis's own overMaxmemoryAfterAlloc
// tells before it grows a hash table (the memory counted as maxmemory counts it: Redis's used
// memory less its replication and AOF buffers). Never while loading (an RDB or AOF file, a
// replica's sync): what was kept must load. Never on a replica: what its primary did must be
// done, and a replica's own writes are rare.
bool WouldPassMaxmemory(size_t bytes) {
  const int flags = RedisModule_GetContextFlags(nullptr);
  if (!(flags & REDISMODULE_CTX_FLAGS_MAXMEMORY) || !(flags & REDISMODULE_CTX_FLAGS_MASTER) ||
      (flags & (REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_ASYNC_LOADING))) {
    return false;
  }
  RedisModuleServerInfoData* info = RedisModule_GetServerInfo(nullptr, "memory");
  if (info == nullptr) return false;
  int error = REDISMODULE_OK;
  const double maxmemory =
      static_cast<double>(RedisModule_ServerInfoGetFieldUnsigned(info, "maxmemory", &error));
  RedisModule_FreeServerInfo(nullptr, info);
  if (error != REDISMODULE_OK || maxmemory <= 0) return false;
  const double used = static_cast<double>(RedisModule_GetUsedMemoryRatio()) * maxmemory;
  return used + static_cast<double>(bytes) > maxmemory;
}

// The filters' allocator: Redis's, so that INFO memory, maxmemory and eviction count the
// filters; TryAlloc, so that memory Redis cannot have is an error reply, not an abort; and no
// filter that would take a primary past maxmemory, but in a command that replicated itself before
// its changes (a MaxmemoryExemption: an add that grows a key's chain), which its replicas make
// whatever their memory. A filter is allocated whole when it is made (RESERVE, an add that creates
// a key, each filter a LOADCHUNK, RESTORE or COPY brings), so this is the one place that sees
// every filter's size before its memory is taken.
void* AllocateFilter(size_t bytes) {
  if (bytes >= kBytesCheckedAgainstMaxmemory && !FiltersMayPassMaxmemory() &&
      WouldPassMaxmemory(bytes)) {
    RedisModule_Log(nullptr, "warning",
                    "sstfilter: a filter of %zu bytes refused: it would take the server past "
                    "maxmemory",
                    bytes);
    return nullptr;
  }
  return RedisModule_TryAlloc(bytes);
}

}  // namespace

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
  if (!sstfilter::SetFilterAllocator({AllocateFilter, RedisModule_Free})) {
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
