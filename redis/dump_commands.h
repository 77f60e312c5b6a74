// SPDX-License-Identifier: Apache-2.0
// BF.SCANDUMP / CF.SCANDUMP and BF.LOADCHUNK / CF.LOADCHUNK, for both types: a filter's dump
// (redis/dump_format.h) in pieces of at most kDumpChunkBytes, and back.
//
//   SCANDUMP key iterator     -> [next, piece]: iterator 0 starts; each reply's `next` is the
//                                iterator of the piece after it, and [0, ""] ends the scan
//   LOADCHUNK key next piece  -> OK: the pieces in order, each with the `next` SCANDUMP gave it
//
// An iterator's low kIteratorOffsetBits bits are 1 + the offset in the dump where the piece after
// it starts, so a LOADCHUNK piece of n bytes with iterator i lies at offset (i & mask) - 1 - n.
// The bits above hold the stamp of the value the scan began on (FilterValue::last_write, which
// every write renews): a scan reads one state of the filter, and a call whose iterator carries
// another stamp answers an error (restart at 0), never a piece of another state. Each piece is
// made from the filter when it is asked for (no copy of the whole dump is kept), and scans of one
// key may run side by side.
//
// The first piece LOADCHUNK takes, once understood, replaces the key's filter (or creates the
// key); until the last arrives the key holds the dump so far (redis/dump_loader.h: each filter's
// body already in its memory), and the filter commands answer that it is loading. A piece that is
// out of order, or that makes the dump one no filter reads, is refused and the key keeps what it
// had. A dump complete but refused as a whole (its filters not its header's) is given up: the key
// is deleted.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "redis/command_args.h"
#include "redis/filter_value.h"

namespace sstfilter::redis {

inline constexpr int kIteratorOffsetBits = 44;  // dumps of up to 16 TiB
inline constexpr uint64_t kIteratorOffsetMask = (uint64_t{1} << kIteratorOffsetBits) - 1;
inline constexpr int kIteratorStampBits = 63 - kIteratorOffsetBits;  // a positive long long
static_assert(kIteratorStampBits >= 16, "a stamp wide enough that a changed filter shows");

// The stamp bits of an iterator over a value whose last write is `last_write`.
inline uint64_t IteratorStamp(uint64_t last_write) {
  return last_write & ((uint64_t{1} << kIteratorStampBits) - 1);
}

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
  const Value& value = *static_cast<const Value*>(v);
  if (!value.loaded()) return RedisModule_ReplyWithError(ctx, "ERR the filter is still loading");
  const uint64_t stamp = IteratorStamp(value.last_write);
  const uint64_t position = static_cast<uint64_t>(iterator) & kIteratorOffsetMask;
  if (iterator != 0 && position == 0) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid iterator");
  }
  // Going on over a filter written since the scan began would mix two of its states, which could
  // lose an item that moved between pieces: the scan must start again.
  if (iterator != 0 && (static_cast<uint64_t>(iterator) >> kIteratorOffsetBits) != stamp) {
    return RedisModule_ReplyWithError(
        ctx, "ERR the filter changed during the scan: restart the scan at iterator 0");
  }
  const uint64_t total = value.DumpBytes();
  if (total >= kIteratorOffsetMask) {
    return RedisModule_ReplyWithError(ctx, "ERR the filter's dump is too large to scan (16 TiB)");
  }
  const uint64_t offset = iterator == 0 ? 0 : position - 1;
  const size_t length = static_cast<size_t>(std::min<uint64_t>(
      kDumpChunkBytes, offset < total ? total - offset : 0));  // 0: the scan ended
  std::string piece(length, '\0');
  value.CopyDump(offset, length, piece.data());
  RedisModule_ReplyWithArray(ctx, 2);
  const uint64_t next = length == 0 ? 0 : (stamp << kIteratorOffsetBits) | (offset + length + 1);
  RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(next));
  return RedisModule_ReplyWithStringBuffer(ctx, piece.data(), piece.size());
}

// The first piece of a dump, into an empty key (or one whose load it restarts).
template <typename Value>
int LoadFirstPiece(RedisModuleCtx* ctx, RedisModuleString** argv, RedisModuleKey* key,
                   RedisModuleType* type, const char* data, size_t size) {
  auto value = Value::Begin(data, size);
  if (!value.ok()) return RedisModule_ReplyWithError(ctx, ("ERR " + value.error()).c_str());
  RedisModule_ModuleTypeSetValue(key, type, std::move(value).value().release());
  RedisModule_ReplicateVerbatim(ctx);
  NotifyWrite(ctx, argv);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// A further piece, into the dump the key is loading; the filter once the dump is complete. A
// piece the loader refuses changes nothing. A dump whose last piece arrived but whose filters the
// whole refuses (what only the whole can show: a filter its schedule would not make) ends the
// load: the key is deleted (a "del" notification), on replicas too, and the load must start again.
template <typename Value>
int LoadNextPiece(RedisModuleCtx* ctx, RedisModuleString** argv, RedisModuleKey* key, Value* value,
                  size_t offset, const char* data, size_t size) {
  if (offset != value->loading->received()) {
    return RedisModule_ReplyWithError(
        ctx, ("ERR invalid chunk: the next piece starts at iterator-offset " +
              std::to_string(value->loading->received()) + ", not " + std::to_string(offset))
                 .c_str());
  }
  const Result<bool> taken = value->loading->Take(data, size);
  if (!taken.ok()) {
    return RedisModule_ReplyWithError(ctx, ("ERR invalid chunk: " + taken.error()).c_str());
  }
  const Result<bool> finished = value->FinishIfComplete();
  if (!finished.ok()) {
    RedisModule_DeleteKey(key);
    RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", argv[1]);
    return RedisModule_ReplyWithError(ctx, ("ERR invalid dump: " + finished.error() +
                                            " (the load is given up: the key is "
                                            "deleted; start again from the first piece)")
                                               .c_str());
  }
  RedisModule_ReplicateVerbatim(ctx);
  NotifyWrite(ctx, argv);
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
  const uint64_t position = static_cast<uint64_t>(iterator) & kIteratorOffsetMask;
  if (size == 0 || position == 0 || size > position - 1) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: it does not fit its iterator");
  }
  const size_t offset = static_cast<size_t>(position - 1 - size);
  RedisModuleKey* key = nullptr;
  void* v = nullptr;
  const KeyState state =
      OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, type, &key, &v);
  if (state == KeyState::kWrongType) return RedisModule_ReplyWithError(ctx, kWrongTypeError);
  Value* value = static_cast<Value*>(v);
  // A first piece replaces whatever filter the key holds, once it is understood (RedisBloom's
  // LOADCHUNK overwrites too).
  if (offset == 0) return LoadFirstPiece<Value>(ctx, argv, key, type, data, size);
  if (state == KeyState::kEmpty || value->loaded()) {
    return RedisModule_ReplyWithError(ctx, "ERR invalid chunk: no load in progress at this key");
  }
  return LoadNextPiece(ctx, argv, key, value, offset, data, size);
}

}  // namespace sstfilter::redis
