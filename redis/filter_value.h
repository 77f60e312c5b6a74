// SPDX-License-Identifier: Apache-2.0
// The value of one key of the module's types, and the type's callbacks: RDB save and load, AOF
// rewrite, memory usage, free (as Redis's src/modules/hellotype.c lays a type out).
//
// A value holds a scalable filter, or, while BF.LOADCHUNK / CF.LOADCHUNK pieces arrive, the dump
// received so far (redis/dump_format.h). RDB files and AOF rewrites carry the same dump, and one
// reader, which checks every byte, reads whatever a client or a file gives
// (chain_format::ReadFrom): from an RDB file piece by piece, each filter's body straight into its
// memory; from LOADCHUNK once the dump is whole.
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
#include "core/app_filters/chain_format.h"
#include "redis/dump_format.h"
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

// Empties `s` and gives its memory back (assigning an empty string may keep the buffer).
inline void FreeString(std::string* s) { std::string().swap(*s); }

template <typename Filter, DumpType kType>
struct FilterValue {
  static constexpr uint8_t kChainKind =
      kType == DumpType::kBloom ? chain_format::kBloomChain : chain_format::kCuckooChain;

  std::unique_ptr<Filter> filter;  // null while a dump is loading
  std::string loading;             // the dump received so far, while filter is null
  DumpHeader header;               // what the dump carries besides the filter (cuckoo options)
  uint64_t last_write = NextWriteStamp();  // renewed by every write (FilterForWrite)

  bool loaded() const { return filter != nullptr; }

  // The length of the dump: header, then the filter's bytes; for a value still loading, what it
  // received.
  uint64_t DumpBytes() const {
    return loaded() ? kDumpHeaderBytes + filter->SerializedBytes() : loading.size();
  }

  // The dump's bytes [offset, offset + length), to `out`; how many there were. Made from the
  // filter as it is, with no copy of the whole: a save of a filter of gigabytes needs one
  // piece's memory.
  size_t CopyDump(uint64_t offset, size_t length, char* out) const {
    RangeCopier copier(offset, length, out);
    if (!loaded()) {
      copier.NextBytes(loading.data(), loading.size());
      return copier.copied();
    }
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

  // A value from a complete dump; an error, with a message, for anything else.
  static Result<std::unique_ptr<FilterValue>> FromDump(const void* data, size_t size) {
    const Result<DumpHeader> h = ParseDumpHeader(data, size, kType);
    if (!h.ok()) return Err(h.error());
    Result<Filter> f = Filter::Deserialize(static_cast<const uint8_t*>(data) + kDumpHeaderBytes,
                                           size - kDumpHeaderBytes);
    if (!f.ok()) return Err(f.error());
    auto value = std::make_unique<FilterValue>();
    value->filter = std::make_unique<Filter>(std::move(f).value());
    value->header = h.value();
    return value;
  }

  // A value that received the first piece of a dump, not yet complete: an error if the piece
  // cannot begin one (another type, a bad header, or a dump that is already complete or past it).
  static Result<std::unique_ptr<FilterValue>> FromFirstPiece(const void* data, size_t size) {
    const Result<DumpHeader> h = ParseDumpHeader(data, size, kType);
    if (!h.ok()) return Err(h.error());
    // Both headers in the first piece, checked now rather than when the last piece arrives.
    const Result<chain_format::Header> chain = chain_format::ParseHeader(
        static_cast<const uint8_t*>(data) + kDumpHeaderBytes, size - kDumpHeaderBytes, kChainKind);
    if (!chain.ok()) return Err(chain.error());
    const uint64_t needed = DumpBytesNeeded(data, size);
    if (needed == 0) return Err("not a dump any filter reads");
    if (needed <= size) return Err("a dump that ends in its first piece");
    auto value = std::make_unique<FilterValue>();
    value->loading.assign(static_cast<const char*>(data), size);
    value->header = h.value();
    return value;
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

  static void* Load(RedisModuleIO* io) {
    const uint64_t complete = RedisModule_LoadUnsigned(io);
    const uint64_t chunks = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || complete > 1 || chunks > (uint64_t{1} << 24)) return nullptr;
    RdbPieces pieces{io, chunks};
    Result<std::unique_ptr<FilterValue>> value =
        complete ? FromSource(pieces) : IncompleteFromPieces(pieces);
    if (!value.ok()) {
      RedisModule_LogIOError(io, "warning", "sstfilter: %s", value.error().c_str());
      return nullptr;
    }
    return std::move(value).value().release();
  }

  // The bytes of an RDB value's pieces, pulled in order (chain_format::ReadFrom's source); each
  // piece is freed once read, so that loading holds one piece beside the filter it builds.
  struct RdbPieces {
    RedisModuleIO* io;
    uint64_t left;  // pieces not yet loaded
    char* piece = nullptr;
    size_t size = 0, at = 0;

    RdbPieces(RedisModuleIO* rdb, uint64_t count) : io(rdb), left(count) {}
    RdbPieces(const RdbPieces&) = delete;
    RdbPieces& operator=(const RdbPieces&) = delete;
    ~RdbPieces() { Release(); }

    // The next n bytes to `out`; false once they cannot be had.
    bool operator()(void* out, size_t n) {
      uint8_t* to = static_cast<uint8_t*>(out);
      while (n > 0) {
        if (at == size && !Next()) return false;
        const size_t take = std::min(n, size - at);
        std::memcpy(to, piece + at, take);
        to += take;
        at += take;
        n -= take;
      }
      return true;
    }
    bool Next() {
      Release();
      if (left == 0) return false;
      --left;
      piece = RedisModule_LoadStringBuffer(io, &size);
      return piece != nullptr && !RedisModule_IsIOError(io);
    }
    void Release() {
      if (piece != nullptr) RedisModule_Free(piece);
      piece = nullptr;
      size = at = 0;
    }
    // The pieces' sizes are not known ahead: any length may come (a body's buffer is allocated
    // for overwriting, so a false claim costs address space until the pieces run out).
    bool CanHave(uint64_t) const { return true; }
    // Whether every byte of every piece has been read.
    bool done() const { return left == 0 && at == size; }
  };

  // The value of a complete dump pulled from `source` (RdbPieces, DumpSource), each filter's body
  // read straight into its memory.
  template <typename Source>
  static Result<std::unique_ptr<FilterValue>> FromSource(Source& pieces) {
    uint8_t dump_header[kDumpHeaderBytes];
    if (!pieces(dump_header, sizeof dump_header)) return Err("a value cut short");
    const Result<DumpHeader> h = ParseDumpHeader(dump_header, sizeof dump_header, kType);
    if (!h.ok()) return Err(h.error());
    using Part =
        typename std::decay_t<decltype(std::declval<const Filter&>().filters())>::value_type;
    uint8_t chain_header[chain_format::kHeaderBytes];
    std::vector<Part> parts;
    const Result<bool> read = chain_format::ReadFrom(pieces, kChainKind, chain_header, &parts);
    if (!read.ok()) return Err(read.error());
    if (!pieces.done()) return Err("a value with bytes after its filter");
    Result<Filter> f = Filter::FromFilters(chain_header, std::move(parts));
    if (!f.ok()) return Err(f.error());
    auto value = std::make_unique<FilterValue>();
    value->filter = std::make_unique<Filter>(std::move(f).value());
    value->header = h.value();
    return value;
  }

  // The dump of a loaded value as a source for FromSource: a copy made piece by piece.
  struct DumpSource {
    const FilterValue& from;
    uint64_t at = 0;
    bool operator()(void* out, size_t n) {
      if (from.CopyDump(at, n, static_cast<char*>(out)) != n) return false;
      at += n;
      return true;
    }
    bool CanHave(uint64_t n) const { return n <= from.DumpBytes() - at; }
    bool done() const { return at == from.DumpBytes(); }
  };

  // A value saved while LOADCHUNK pieces arrived: the dump received so far, whole.
  static Result<std::unique_ptr<FilterValue>> IncompleteFromPieces(RdbPieces& pieces) {
    std::string dump;
    while (pieces.Next()) dump.append(pieces.piece, pieces.size);
    if (RedisModule_IsIOError(pieces.io) || pieces.left != 0) return Err("a value cut short");
    return FromFirstPiece(dump.data(), dump.size());
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
           value.loading.capacity();
  }

  static void Free(void* v) { delete static_cast<FilterValue*>(v); }

  // COPY: a value of its own (null, which COPY answers as an error, if it cannot be made).
  static void* Copy(RedisModuleString*, RedisModuleString*, const void* v) {
    const FilterValue& from = *static_cast<const FilterValue*>(v);
    try {
      if (!from.loaded()) {
        auto copy = std::make_unique<FilterValue>();
        copy->loading = from.loading;
        copy->header = from.header;
        return copy.release();
      }
      DumpSource source{from};
      Result<std::unique_ptr<FilterValue>> copy = FromSource(source);
      return copy.ok() ? std::move(copy).value().release() : nullptr;
    } catch (const std::exception&) {
      return nullptr;
    }
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
