// SPDX-License-Identifier: Apache-2.0
// Opening the filter a command names, for both types: what a read of a missing key, a write to
// one, a key of another type and a filter still loading each answer.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "redis/command_args.h"
#include "redis/filter_value.h"

namespace sstfilter::redis {

enum class Access { kRead, kWrite };

// The key's filter. A read of an empty key: null, *replied false (its items are absent). A write
// to an empty key: `create(key)`, which sets the key's value, or replies an error and returns
// null. Another type, or a filter still loading: null, with the error replied. A write renews the
// value's stamp, so that a scan begun before it is refused (redis/dump_commands.h).
template <typename Value, typename Create>
Value* OpenFilter(RedisModuleCtx* ctx, RedisModuleString* name, RedisModuleType* type,
                  Access access, Create&& create, bool* replied) {
  RedisModuleKey* key = nullptr;
  void* v = nullptr;
  const int mode =
      access == Access::kWrite ? REDISMODULE_READ | REDISMODULE_WRITE : REDISMODULE_READ;
  *replied = true;
  switch (OpenKey(ctx, name, mode, type, &key, &v)) {
    case KeyState::kWrongType:
      RedisModule_ReplyWithError(ctx, kWrongTypeError);
      return nullptr;
    case KeyState::kEmpty:
      if (access == Access::kRead) {
        *replied = false;
        return nullptr;
      }
      if (Value* created = create(key)) {
        *replied = false;
        return created;
      }
      return nullptr;
    case KeyState::kOurs:
      break;
  }
  Value* value = static_cast<Value*>(v);
  if (!value->loaded()) {
    RedisModule_ReplyWithError(ctx, "ERR the filter is still loading (LOADCHUNK)");
    return nullptr;
  }
  *replied = false;
  if (access == Access::kWrite) value->last_write = NextWriteStamp();
  return value;
}

// For the `create` of a command that does not create: the key is not found.
template <typename Value>
Value* NotFound(RedisModuleCtx* ctx) {
  RedisModule_ReplyWithError(ctx, "ERR not found");
  return nullptr;
}

// The key's new value, `filter` with `header` (the options the dump keeps); when the filter
// could not be made, its error replied and null.
template <typename Value, typename Filter>
Value* SetNewFilter(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleType* type,
                    Result<Filter> filter, const DumpHeader& header) {
  if (!filter.ok()) {
    RedisModule_ReplyWithError(ctx, ("ERR " + filter.error()).c_str());
    return nullptr;
  }
  auto value = std::make_unique<Value>();
  value->filter = std::make_unique<Filter>(std::move(filter).value());
  value->header = header;
  Value* raw = value.release();
  RedisModule_ModuleTypeSetValue(key, type, raw);
  return raw;
}

// RESERVE key ...: a new filter made by kCreate with `options` at an empty key; "item exists" at
// any other (RedisBloom's reply, whatever the key holds).
template <typename Value, RedisModuleType** kType, typename Options,
          Value* (*kCreate)(RedisModuleCtx*, RedisModuleKey*, const Options&)>
int ReserveNew(RedisModuleCtx* ctx, RedisModuleString** argv, const Options& options) {
  RedisModuleKey* key = nullptr;
  void* v = nullptr;
  if (OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, *kType, &key, &v) !=
      KeyState::kEmpty) {
    return RedisModule_ReplyWithError(ctx, "ERR item exists");
  }
  if (kCreate(ctx, key, options) == nullptr) return REDISMODULE_OK;  // replied
  RedisModule_ReplicateVerbatim(ctx);
  NotifyWrite(ctx, argv);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// A write's filter, for the type *kType holds: created by kCreate with `options` if the key is
// empty and `create`, else not found.
template <typename Value, RedisModuleType** kType, typename Options,
          Value* (*kCreate)(RedisModuleCtx*, RedisModuleKey*, const Options&)>
Value* FilterForWrite(RedisModuleCtx* ctx, RedisModuleString* name, bool create,
                      const Options& options, bool* replied) {
  return OpenFilter<Value>(
      ctx, name, *kType, Access::kWrite,
      [&](RedisModuleKey* key) {
        return create ? kCreate(ctx, key, options) : NotFound<Value>(ctx);
      },
      replied);
}

// A read's filter, for the type *kType holds: null for an empty key, its items absent.
template <typename Value, RedisModuleType** kType>
const Value* FilterForRead(RedisModuleCtx* ctx, RedisModuleString* name, bool* replied) {
  return OpenFilter<Value>(
      ctx, name, *kType, Access::kRead, [](RedisModuleKey*) { return nullptr; }, replied);
}

// A read command's reply: reply(value) with the filter the key `name` holds for the type *kType
// holds, null for an empty key (its items absent); for another type or a filter still loading,
// the error, replied.
template <typename Value, RedisModuleType** kType, typename Reply>
int ReadFilter(RedisModuleCtx* ctx, RedisModuleString* name, Reply&& reply) {
  bool replied = false;
  const Value* value = FilterForRead<Value, kType>(ctx, name, &replied);
  return replied ? REDISMODULE_OK : reply(value);
}

// MEXISTS: one hash per item of argv[first..argc), then the filter's batched query; an array of
// 0/1 (all 0 for an empty key, `value` null).
template <typename Value>
int ReplyMayContainBatch(RedisModuleCtx* ctx, const Value* value, RedisModuleString** argv,
                         int first, int argc) {
  const size_t count = static_cast<size_t>(argc - first);
  std::vector<uint64_t> hashes(count);
  for (size_t i = 0; i < count; ++i) hashes[i] = ItemHash(argv[first + i]);
  const std::unique_ptr<bool[]> found(new bool[count]());
  if (value != nullptr) value->filter->MayContainBatch(hashes.data(), count, found.get());
  RedisModule_ReplyWithArray(ctx, static_cast<long>(count));
  for (size_t i = 0; i < count; ++i) RedisModule_ReplyWithLongLong(ctx, found[i] ? 1 : 0);
  return REDISMODULE_OK;
}

// BF.MEXISTS and CF.MEXISTS key item [item ...], for the type *kType holds.
template <typename Value, RedisModuleType** kType>
int MExists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return RedisModule_WrongArity(ctx);
  return ReadFilter<Value, kType>(ctx, argv[1], [&](const Value* value) {
    return ReplyMayContainBatch(ctx, value, argv, 2, argc);
  });
}

}  // namespace sstfilter::redis
