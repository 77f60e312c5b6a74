// SPDX-License-Identifier: Apache-2.0
// libsstfilter_redis.so: RedisBloom's BF.* and CF.* commands over sstfilter's scalable filters,
// for the Redis Debian ships (7.0). Loaded with `redis-server --loadmodule
// /path/to/libsstfilter_redis.so` (or `loadmodule` in redis.conf); it takes no arguments.
// docs/redis.md is the user's guide.
#define SSTFILTER_REDIS_DEFINE_API  // this file defines the API's function pointers
#include "redis/redis_api.h"
//
#include <algorithm>
#include <cstring>
#include "redis/command_args.h"
#include "redis/commands.h"
#include "sstfilter/filter_memory.h"

namespace sstfilter::redis {
namespace {

// Filters of this size and up are checked against maxmemory before they are allocated; below it,
// a filter is one more small value, which Redis's own check before a deny-oom command covers.
constexpr size_t kBytesCheckedAgainstMaxmemory = size_t{1} << 20;

// Whether `bytes` more would take a primary past maxmemory for good. Under noeviction and the
// volatile-* policies (which evict only keys with a TTL, whose share is unknown here): whether its
// used memory as maxmemory counts it (less its replication and AOF buffers,
// mem_not_counted_for_evict), plus `bytes`, passes maxmemory, as Redis's own
// overMaxmemoryAfterAlloc tells before it grows a hash table. Under an allkeys-* policy Redis
// evicts keys until it is back under maxmemory, from the next command on, as after any large
// value, so there a filter passes for good only if it would with every key evicted: what no
// eviction frees, about used_memory_overhead less the buffers not counted (that overhead also
// counts the keys' table entries, which eviction frees), plus `bytes`. Nor where the server is
// already past maxmemory: the commands of a MULTI or a script run with no eviction between them,
// and eviction runs in time slices, so a filter made moments ago may not have been made room for
// yet; that keeps the server within about twice maxmemory while eviction catches up. Never while
// loading (an RDB or AOF file, a replica's sync): what was kept must load. Never on a replica: what
// its primary did must be done, and a replica's own writes are rare.
bool WouldPassMaxmemory(size_t bytes) {
  const int flags = RedisModule_GetContextFlags(nullptr);
  if (!(flags & REDISMODULE_CTX_FLAGS_MAXMEMORY) || !(flags & REDISMODULE_CTX_FLAGS_MASTER) ||
      (flags & (REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_ASYNC_LOADING))) {
    return false;
  }
  RedisModuleServerInfoData* info = RedisModule_GetServerInfo(nullptr, "memory");
  if (info == nullptr) return false;
  int error = REDISMODULE_OK;
  const auto field = [&](const char* name) {
    int field_error = REDISMODULE_OK;
    const double value =
        static_cast<double>(RedisModule_ServerInfoGetFieldUnsigned(info, name, &field_error));
    if (field_error != REDISMODULE_OK) error = field_error;
    return value;
  };
  const double maxmemory = field("maxmemory");
  const char* policy = RedisModule_ServerInfoGetFieldC(info, "maxmemory_policy");
  const bool evicts_any_key = policy != nullptr && std::strncmp(policy, "allkeys-", 8) == 0;
  const float used_over_maxmemory = RedisModule_GetUsedMemoryRatio();
  double counted = used_over_maxmemory * maxmemory;
  if (evicts_any_key && used_over_maxmemory <= 1) {
    counted = std::max(0.0, field("used_memory_overhead") - field("mem_not_counted_for_evict"));
  }
  RedisModule_FreeServerInfo(nullptr, info);
  if (error != REDISMODULE_OK || maxmemory <= 0) return false;
  return counted + static_cast<double>(bytes) > maxmemory;
}

// The filters' allocator: Redis's, so that INFO memory, maxmemory and eviction count the
// filters; TryAlloc, so that memory Redis cannot have is an error reply, not an abort; and no
// filter that would take a primary past maxmemory for good (WouldPassMaxmemory), but in a command
// that replicated itself before its changes (a MaxmemoryExemption: an add that grows a key's
// chain), which its replicas make whatever their memory. A filter is allocated whole when it is
// made (RESERVE, an add that creates a key, each filter a LOADCHUNK, RESTORE or COPY brings), so
// this is the one place that sees every filter's size before its memory is taken.
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
