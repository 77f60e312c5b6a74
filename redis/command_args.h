// SPDX-License-Identifier: Apache-2.0
// What the BF.* and CF.* commands share: reading their arguments (every byte a client sends is
// checked; each bad one is an error reply with RedisBloom's text where clients may match it), and
// opening a key of one of the module's types.
#pragma once

#include <cstdint>
#include <exception>

#include "redis/redis_api.h"

namespace sstfilter::redis {

// Whether `arg` is `word`, ignoring case (option names: CAPACITY, capacity).
bool ArgIs(RedisModuleString* arg, const char* word);

// A finite decimal number, written whole, with at most one leading '+' as Redis's own numbers;
// false for anything else ("nan", "1e", "0x10", " 1", "").
bool ParseDouble(RedisModuleString* arg, double* out);
// An integer in [min, max], written whole; false for anything else.
bool ParseInteger(RedisModuleString* arg, long long min, long long max, long long* out);

// The key hash of an item (sstfilter::HashKey): one hash per item, whatever the filter.
uint64_t ItemHash(RedisModuleString* item);

// The largest capacity accepted, 2^62 keys: beyond any memory, and what keeps the chain's sums
// of capacities within 64 bits.
inline constexpr long long kMaxCapacity = 1LL << 62;

enum class KeyState { kEmpty, kOurs, kWrongType };

// Opens `name` for `mode` (REDISMODULE_READ or | REDISMODULE_WRITE), closed by the context's
// automatic memory; `*value` is the key's value when it is of `type`.
KeyState OpenKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode, RedisModuleType* type,
                 RedisModuleKey** key, void** value);

// The keyspace notification of the write command argv (argv[0] the command, argv[1] its key),
// made once its change is done, as Redis's own commands make theirs: the event is the command's
// name in lower case ("bf.add"), of the generic class (notify-keyspace-events with g, or A). Every
// write command that is replicated notifies, whatever it changed (BF.ADD of an item the filter
// may hold, CF.DEL of one it does not).
void NotifyWrite(RedisModuleCtx* ctx, RedisModuleString** argv);

// While one is held, the module's allocator (redis/module.cc) lets a filter take the server past
// maxmemory. Commands hold one from ReplicateBeforeChanges until they return: a replica makes
// their changes whatever its memory, so the primary must make them too.
class MaxmemoryExemption {
 public:
  MaxmemoryExemption();
  ~MaxmemoryExemption();
  MaxmemoryExemption(const MaxmemoryExemption&) = delete;
  MaxmemoryExemption& operator=(const MaxmemoryExemption&) = delete;
};
// Whether a MaxmemoryExemption is held.
bool FiltersMayPassMaxmemory();

// Replicates the command verbatim before its changes (so that what may throw as a filter grows,
// std::bad_alloc, neither leaves a replica behind nor breaks the reply), and exempts the rest of
// the command from maxmemory: its filters grow on the replicas whatever their memory, so they
// grow here too. Hold the result until the command returns.
[[nodiscard]] MaxmemoryExemption ReplicateBeforeChanges(RedisModuleCtx* ctx);

using CommandFunction = int (*)(RedisModuleCtx*, RedisModuleString**, int);

// What the module registers for kCommand: the command with the context's automatic memory (keys
// opened are closed when it returns), and what the C++ library may throw (std::bad_alloc) turned
// into an error reply and a LOG line: nothing crosses into Redis.
template <CommandFunction kCommand>
int Guarded(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  RedisModule_AutoMemory(ctx);
  try {
    return kCommand(ctx, argv, argc);
  } catch (const std::exception& e) {
    RedisModule_Log(ctx, "warning", "sstfilter: %s", e.what());
    return RedisModule_ReplyWithError(ctx, "ERR out of memory");
  }
}

// A command as the module registers it: name, function, Redis's command flags. Every command
// takes one key, its first argument.
struct ModuleCommand {
  const char* name;
  RedisModuleCmdFunc run;
  const char* flags;
};

// The types' names (9 characters, as Redis requires) and the encoding of their RDB values.
// The options of BF.INSERT / CF.INSERT, argv[2] up to ITEMS: NOCREATE sets *nocreate, and any
// other option is option(&i), which reads argv[i] (and its value, moving i past it) and returns
// null, or the error to reply. The index of the first item; 0 once an error is replied (no ITEMS,
// or ITEMS with no item, is a wrong arity, as in RedisBloom).
template <typename Option>
int ScanInsertOptions(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool* nocreate,
                      Option&& option) {
  for (int i = 2; i < argc; ++i) {
    if (ArgIs(argv[i], "ITEMS")) {
      if (i + 1 < argc) return i + 1;
      break;
    }
    if (ArgIs(argv[i], "NOCREATE")) {
      *nocreate = true;
      continue;
    }
    if (const char* error = option(&i)) {
      RedisModule_ReplyWithError(ctx, error);
      return 0;
    }
  }
  RedisModule_WrongArity(ctx);
  return 0;
}

inline constexpr const char* kBloomTypeName = "SSTFbloom";
inline constexpr const char* kCuckooTypeName = "SSTFckoo1";
inline constexpr int kEncodingVersion = 1;

inline constexpr const char* kWrongTypeError =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

}  // namespace sstfilter::redis
