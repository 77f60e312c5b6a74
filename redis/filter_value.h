// SPDX-License-Identifier: Apache-2.0
// The value of one key of the module's types, and the type's callbacks: RDB save and load, AOF
// rewrite, memory usage, free (as Redis's src/modules/hellotype.c lays a type out).
//
// A value holds a scalable filter, or, while BF.LOADCHUNK / CF.LOADCHUNK pieces arrive, the dump
// received so far (redis/dump_format.h). RDB files and AOF rewrites carry the same dump, and one
// reader, which checks every byte, reads whatever a client or a file gives, piece by piece, each
// filter's body straight into its memory (redis/dump_loader.h).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/app_filters/byte_range.h"
#include "redis/dump_format.h"
#include "redis/dump_loader.h"
#include "redis/redis_api.h"
#include "sstfilter/result.h"

namespace sstfilter::redis {

// The bytes an SCANDUMP call returns, and AOF rewrites and RDB files write, in one piece.
inline constexpr size_t kDumpChunkBytes = size_t{16} << 20;

// A stamp for a value that is made or written, never the same twice in a process: a scan checks
// that the value it reads is the one it began on (redis/dump_commands.h). Commands run on
// Redis's main thread; the atomic keeps the stamps unique under any threading.
inline uint64_t NextWriteStamp() {
  static std::atomic<uint64_t> clock{0};
  return clock.fetch_add(1, std::memory_order_relaxed) + 1;
}

template <typename Filter, DumpType kType>
struct FilterValue {
  using Loader = DumpLoader<Filter, kType>;

  std::unique_ptr<Filter> filter;   // null while a dump is loading
  std::unique_ptr<Loader> loading;  // the dump received so far, while filter is null
  DumpHeader header;                // what the dump carries besides the filter (cuckoo options)
  uint64_t last_write = NextWriteStamp();  // renewed by every write (FilterForWrite)

  bool loaded() const { return filter != nullptr; }

  // The length of the dump: header, then the filter's bytes; for a value still loading, what it
  // received.
  uint64_t DumpBytes() const {
    return loaded() ? kDumpHeaderBytes + filter->SerializedBytes() : loading->received();
  }

  // The dump's bytes [offset, offset + length), to `out`; how many there were. Made from the
  // filter as it is, with no copy of the whole: a save of a filter of gigabytes needs one
  // piece's memory.
  size_t CopyDump(uint64_t offset, size_t length, char* out) const {
    if (!loaded()) return loading->CopyReceived(offset, length, out);
    RangeCopier copier(offset, length, out);
    uint8_t header_bytes[kDumpHeaderBytes];
    EncodeDumpHeader(header, header_bytes);
    copier.NextBytes(header_bytes, sizeof header_bytes);
    copier.Next(filter->SerializedBytes(), [this](uint64_t from, size_t n, uint8_t* dst) {
      filter->SerializeRange(from, n, dst);
    });
    return copier.copied();
  }

  // A buffer for one piece of the dump: kDumpChunkBytes, or the whole dump if it is shorter.
  // Throws std::bad_alloc if it cannot be had.
  std::string PieceBuffer() const {
    return std::string(static_cast<size_t>(std::min<uint64_t>(DumpBytes(), kDumpChunkBytes)), '\0');
  }

  // Calls emit(offset, piece, size) for each piece of the dump in order, made in `buffer`
  // (PieceBuffer's): pieces of kDumpChunkBytes but the last.
  template <typename Emit>
  void ForEachDumpPiece(std::string* buffer, Emit&& emit) const {
    const uint64_t total = DumpBytes();
    for (uint64_t at = 0; at < total; at += kDumpChunkBytes) {
      emit(at, buffer->data(), CopyDump(at, buffer->size(), buffer->data()));
    }
  }

  // A value whose loader `feed` fills (feed(loader) takes pieces into it and answers the first
  // refusal): the filter if the dump is then whole, else the value loading. An error, with a
  // message, for pieces that cannot begin a dump of this type (both headers must be in, so that
  // they are known to begin one) or a whole dump Loader::Finish refuses.
  template <typename Feed>
  static Result<std::unique_ptr<FilterValue>> FromLoader(Feed&& feed) {
    auto value = std::make_unique<FilterValue>();
    value->loading = std::make_unique<Loader>();
    const Result<bool> fed = feed(value->loading.get());
    if (!fed.ok()) return Err(fed.error());
    if (value->loading->received() < Loader::kHeadersBytes) {
      return Err("a dump's first piece must hold its two headers (" +
                 std::to_string(Loader::kHeadersBytes) + " bytes)");
    }
    const Result<bool> finished = value->FinishIfComplete();
    if (!finished.ok()) return Err(finished.error());
    return value;
  }

  // A value begun with the first piece of a dump (LOADCHUNK).
  static Result<std::unique_ptr<FilterValue>> Begin(const void* data, size_t size) {
    return FromLoader([&](Loader* loader) { return loader->Take(data, size); });
  }

  // A value of its own with `from`'s dump (COPY), read from it piece by piece as a load reads.
  static Result<std::unique_ptr<FilterValue>> CopyOf(const FilterValue& from) {
    std::string buffer = from.PieceBuffer();
    return FromLoader([&](Loader* loader) {
      Result<bool> taken = true;
      from.ForEachDumpPiece(&buffer, [&](uint64_t, const char* piece, size_t size) {
        if (taken.ok()) taken = loader->Take(piece, size);
      });
      return taken;
    });
  }

  // Once the loader holds a whole dump: the filter, and the loader gone. An error, with a
  // message, for a dump whose filters Loader::Finish refuses, or whose filter cannot be made
  // for want of memory (std::bad_alloc, caught here so that the callers give the dump up as they
  // give up a refused one: the loader is spent either way).
  Result<bool> FinishIfComplete() {
    if (loaded() || !loading->complete()) return true;
    try {
      Result<Filter> f = loading->Finish();
      if (!f.ok()) return Err(f.error());
      filter = std::make_unique<Filter>(std::move(f).value());
    } catch (const std::exception& e) {
      return Err(std::string("cannot make the filter: ") + e.what());
    }
    header = loading->header();
    loading.reset();
    last_write = NextWriteStamp();
    return true;
  }

  // ---- the type's callbacks ----

  // Every callback catches what the C++ library may throw (std::bad_alloc): nothing crosses into
  // Redis. A dump that cannot be made (the buffer of one piece, up to kDumpChunkBytes) must fail
  // the save, never write a file without the key: in a fork child (BGSAVE, BGREWRITEAOF, a
  // replica's sync) the child ends, the save fails, and Redis keeps its last good file. In the
  // server itself (SAVE, DEBUG RELOAD) the value is saved as an empty incomplete dump, which
  // loading refuses: the failure shows when the file is read, never as a missing key.
  static void FailSave(RedisModuleIO* io, const char* what, const std::exception& e) {
    RedisModule_LogIOError(io, "warning", "sstfilter: cannot %s a filter: %s", what, e.what());
    const int flags = RedisModule_GetContextFlags(RedisModule_GetContextFromIO(io));
    if ((flags & REDISMODULE_CTX_FLAGS_IS_CHILD) != 0) std::abort();
  }

  // Saved as: whether the dump is complete, the number of pieces, each piece as a string.
  static void RdbSave(RedisModuleIO* io, void* v) {
    const FilterValue& value = *static_cast<const FilterValue*>(v);
    std::string buffer;
    try {
      buffer = value.PieceBuffer();
    } catch (const std::exception& e) {
      FailSave(io, "save", e);
      RedisModule_SaveUnsigned(io, 0);
      RedisModule_SaveUnsigned(io, 0);
      return;
    }
    RedisModule_SaveUnsigned(io, value.loaded() ? 1 : 0);
    RedisModule_SaveUnsigned(io, (value.DumpBytes() + kDumpChunkBytes - 1) / kDumpChunkBytes);
    value.ForEachDumpPiece(&buffer, [io](uint64_t, const char* piece, size_t size) {
      RedisModule_SaveStringBuffer(io, piece, size);
    });
  }

  static void* RdbLoad(RedisModuleIO* io, int encoding_version) {
    if (encoding_version != 1) {
      RedisModule_LogIOError(io, "warning", "sstfilter: encoding version %d is not 1",
                             encoding_version);
      return nullptr;
    }
    try {
      return Load(io);
    } catch (const std::exception& e) {
      RedisModule_LogIOError(io, "warning", "sstfilter: cannot load a filter: %s", e.what());
      return nullptr;
    }
  }

  // An RDB value (format.md section 16): each piece goes into the loader and is freed, so that
  // loading holds one piece beside the filter.
  static void* Load(RedisModuleIO* io) {
    const uint64_t complete = RedisModule_LoadUnsigned(io);
    const uint64_t chunks = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || complete > 1 || chunks > (uint64_t{1} << 24)) return nullptr;
    bool io_error = false;
    Result<std::unique_ptr<FilterValue>> value = FromLoader([&](Loader* loader) -> Result<bool> {
      for (uint64_t i = 0; i < chunks; ++i) {
        size_t length = 0;
        char* piece = RedisModule_LoadStringBuffer(io, &length);
        if (piece == nullptr || RedisModule_IsIOError(io)) {
          if (piece != nullptr) RedisModule_Free(piece);
          io_error = true;
          return Err("a value cut short");
        }
        const Result<bool> taken = loader->Take(piece, length);
        RedisModule_Free(piece);
        if (!taken.ok()) return taken;
      }
      if ((complete == 1) != loader->complete()) {
        return Err(complete == 1 ? "a dump cut short" : "a loading value that is complete");
      }
      return true;
    });
    if (io_error) return nullptr;
    if (!value.ok()) return Refuse(io, value.error());
    return std::move(value).value().release();
  }

  static void* Refuse(RedisModuleIO* io, const std::string& why) {
    RedisModule_LogIOError(io, "warning", "sstfilter: %s", why.c_str());
    return nullptr;
  }

  // LOADCHUNK commands of at most kDumpChunkBytes each, as SCANDUMP would give them.
  static void AofRewrite(RedisModuleIO* aof, RedisModuleString* key, void* v) {
    const FilterValue& value = *static_cast<const FilterValue*>(v);
    std::string buffer;
    try {
      buffer = value.PieceBuffer();
    } catch (const std::exception& e) {
      FailSave(aof, "rewrite", e);  // a rewrite runs in a fork child: it ends there
      return;
    }
    const char* command = kType == DumpType::kBloom ? "BF.LOADCHUNK" : "CF.LOADCHUNK";
    value.ForEachDumpPiece(&buffer, [&](uint64_t at, const char* piece, size_t size) {
      RedisModule_EmitAOF(aof, command, "slb", key, static_cast<long long>(at + size + 1), piece,
                          size);
    });
  }

  static size_t MemoryUsage(const void* v) {
    const FilterValue& value = *static_cast<const FilterValue*>(v);
    return sizeof(FilterValue) + (value.loaded() ? value.filter->memory_bytes() : 0) +
           (value.loading != nullptr ? value.loading->memory_bytes() : 0);
  }

  static void Free(void* v) { delete static_cast<FilterValue*>(v); }

  // COPY: a value of its own; if it cannot be made, null, which COPY answers as an error, and a
  // LOG line that says why (the callback has no context: no reply of our own).
  static void* Copy(RedisModuleString*, RedisModuleString*, const void* v) {
    try {
      Result<std::unique_ptr<FilterValue>> copy = CopyOf(*static_cast<const FilterValue*>(v));
      if (copy.ok()) return std::move(copy).value().release();
      RedisModule_Log(nullptr, "warning", "sstfilter: cannot copy a filter: %s",
                      copy.error().c_str());
    } catch (const std::exception& e) {
      RedisModule_Log(nullptr, "warning", "sstfilter: cannot copy a filter: %s", e.what());
    }
    return nullptr;
  }

  // Megabytes, at least 1: Redis frees a value of more than 64 in a background thread (UNLINK,
  // the lazyfree-lazy-* settings), so giving back a large filter's memory never stalls the
  // server. Free touches nothing but the value and RedisModule_Free, as a background free needs.
  static size_t FreeEffort(RedisModuleString*, const void* v) {
    return 1 + MemoryUsage(v) / (size_t{1} << 20);
  }

  // Registers the type, at module load, into *type; false if Redis refuses it.
  static bool CreateType(RedisModuleCtx* ctx, const char* name, int encoding_version,
                         RedisModuleType** type) {
    RedisModuleTypeMethods methods = {};
    methods.version = REDISMODULE_TYPE_METHOD_VERSION;
    methods.rdb_load = RdbLoad;
    methods.rdb_save = RdbSave;
    methods.aof_rewrite = AofRewrite;
    methods.mem_usage = MemoryUsage;
    methods.free = Free;
    methods.copy = Copy;
    methods.free_effort = FreeEffort;
    *type = RedisModule_CreateDataType(ctx, name, encoding_version, &methods);
    return *type != nullptr;
  }
};

}  // namespace sstfilter::redis
