// SPDX-License-Identifier: Apache-2.0
// BF.SCANDUMP / CF.SCANDUMP and BF.LOADCHUNK / CF.LOADCHUNK, for both types: a filter's dump
// (redis/dump_format.h) in pieces of at most kDumpChunkBytes, and back.
//
//   SCANDUMP key iterator     -> [next, piece]: iterator 0 starts; each reply's `next` is the
//                                iterator of the piece after it, and [0, ""] ends the scan
//   LOADCHUNK key next piece  -> OK: the pieces in order, each with the `next` SCANDUMP gave it
//
// An iterator is 1 + the offset in the dump where the piece after it starts, so a LOADCHUNK
// piece of n bytes with iterator i lies at offset i - 1 - n. The first piece, once understood,
// replaces the key's filter (or creates the key); until the last arrives the key holds the dump
// so far, and the filter commands answer that it is loading. A piece that is out of order, or that
// makes the dump one no filter reads, is refused and the key keeps what it had. A scan reads the
// filter as it was at iterator 0: the dump is kept until the scan ends or a write changes the
// filter, and a scan that finds it gone answers an error (restart at 0), never a mix of two dumps.
#pragma once

#include <climits>
#include <string>

#include "redis/command_args.h"
#include "redis/filter_value.h"

namespace sstfilter::redis {

// SCANDUMP key iterator, for the type *kType holds.
template <typename Value, RedisModuleType** kType>
int ScanDump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  long long iterator = 0;
  if (!ParseInteger(argv[2], 0, LLONG_MAX, &iterator)) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid iterator");
  }
  RedisModuleKey* key = nullptr;
  void* v = nullptr;
  switch (OpenKey(ctx, argv[1], REDISMODULE_READ, *kType, &key, &v)) {
    case KeyState::kEmpty:
      return RedisModule_ReplyWithError(ctx, "ERR not found");
    case KeyState::kWrongType:
      return RedisModule_ReplyWithError(ctx, kWrongTypeError);
    case KeyState::kOurs:
      break;
  }
  Value& value = *static_cast<Value*>(v);
  if (!value.loaded()) return RedisModule_ReplyWithError(ctx, "ERR the filter is still loading");
  // A scan reads one dump, made at iterator 0. A write since (or another scan of the key that
  // ended) dropped it: going on with a new dump would mix two states of the filter, which could
  // lose an item that moved between pieces, so the scan must start again.
  if (iterator == 0) {
    value.scan_cache = value.Dump();
  } else if (value.scan_cache.empty()) {
    return RedisModule_ReplyWithError(
        ctx,
        "ERR the filter changed during the scan (or another scan of it ended): restart the "
        "scan at iterator 0");
  }
  const std::string& dump = value.scan_cache;
  const size_t offset = iterator == 0 ? 0 : static_cast<size_t>(iterator - 1);
  RedisModule_ReplyWithArray(ctx, 2);
  if (offset >= dump.size()) {
    FreeString(&value.scan_cache);  // the scan ended
    RedisModule_ReplyWithLongLong(ctx, 0);
    return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
  }
  const size_t length = std::min(kDumpChunkBytes, dump.size() - offset);
  RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(offset + length + 1));
  return RedisModule_ReplyWithStringBuffer(ctx, dump.data() + offset, length);
}

// The first piece of a dump, into an empty key (or one whose load it restarts).
template <typename Value>
int LoadFirstPiece(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleType* type,
                   const char* data, size_t size) {
  const bool complete = DumpBytesNeeded(data, size) == size;  // else FromFirstPiece says why not
  auto value = complete ? Value::FromDump(data, size) : Value::FromFirstPiece(data, size);
  if (!value.ok()) return RedisModule_ReplyWithError(ctx, ("ERR " + value.error()).c_str());
  RedisModule_ModuleTypeSetValue(key, type, std::move(value).value().release());
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// A further piece, appended to the dump the key holds; the filter once the dump is complete.
template <typename Value>
int LoadNextPiece(RedisModuleCtx* ctx, Value* value, size_t offset, const char* data, size_t size) {
  std::string& dump = value->loading;
  if (offset != dump.size()) {
    return RedisModule_ReplyWithError(
        ctx, ("ERR invalid chunk: the next piece starts at iterator-offset " +
              std::to_string(dump.size()) + ", not " + std::to_string(offset))
                 .c_str());
  }
  dump.append(data, size);
  // Whatever happens below (an error, or std::bad_alloc), the key keeps what it had unless the
  // piece is taken.
  struct Undo {
    std::string* dump;
    size_t size;
    bool keep = false;
    ~Undo() {
      if (!keep) dump->resize(size);
    }
  } undo{&dump, offset};
  const uint64_t needed = DumpBytesNeeded(dump.data(), dump.size());
  if (needed > dump.size()) {
    undo.keep = true;
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
  }
  if (needed == 0) return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: no filter reads it");
  if (needed < dump.size()) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: it runs past the end of the dump");
  }
  auto loaded = Value::FromDump(dump.data(), dump.size());
  if (!loaded.ok()) return RedisModule_ReplyWithError(ctx, ("ERR " + loaded.error()).c_str());
  undo.keep = true;
  *value = std::move(*std::move(loaded).value());
  FreeString(&value->loading);
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// LOADCHUNK key iterator piece, for the type *kType holds.
template <typename Value, RedisModuleType** kType>
int LoadChunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  RedisModuleType* type = *kType;
  if (argc != 4) return RedisModule_WrongArity(ctx);
  long long iterator = 0;
  if (!ParseInteger(argv[2], 1, LLONG_MAX, &iterator)) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid iterator");
  }
  size_t size = 0;
  const char* data = RedisModule_StringPtrLen(argv[3], &size);
  if (size == 0 || size > static_cast<unsigned long long>(iterator - 1)) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: it does not fit its iterator");
  }
  const size_t offset = static_cast<size_t>(iterator - 1) - size;
  RedisModuleKey* key = nullptr;
  void* v = nullptr;
  const KeyState state =
      OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, type, &key, &v);
  if (state == KeyState::kWrongType) return RedisModule_ReplyWithError(ctx, kWrongTypeError);
  Value* value = static_cast<Value*>(v);
  // A first piece replaces whatever filter the key holds, once it is understood (RedisBloom's
  // LOADCHUNK overwrites too).
  if (offset == 0) return LoadFirstPiece<Value>(ctx, key, type, data, size);
  if (state == KeyState::kEmpty || value->loaded()) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: no load in progress at this key");
  }
  return LoadNextPiece(ctx, value, offset, data, size);
}

}  // namespace sstfilter::redis
