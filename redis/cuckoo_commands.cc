// SPDX-License-Identifier: Apache-2.0
// CF.*: RedisBloom's cuckoo filter commands over ScalableCuckooFilter
// (include/sstfilter/scalable_cuckoo_filter.h), with RedisBloom's arities, replies, defaults and
// error texts, and one option more: CF.RESERVE ... ERROR rate sizes the fingerprints for that
// rate (RedisBloom's are 8 bits). BUCKETSIZE and MAXITERATIONS are accepted and reported; the
// table's buckets hold 4 fingerprints and its walk is its own. Every write is replicated
// verbatim: placement follows from the key and the table (CuckooFilter's determinism), so a
// replica's bytes are the primary's.
#include "redis/commands.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "redis/command_args.h"
#include "redis/dump_commands.h"
#include "redis/dump_format.h"
#include "redis/filter_value.h"
#include "redis/open_filter.h"
#include "sstfilter/scalable_cuckoo_filter.h"

namespace sstfilter::redis {
namespace {

using CuckooValue = FilterValue<ScalableCuckooFilter, DumpType::kCuckoo>;

RedisModuleType* cuckoo_type = nullptr;

// What CF.RESERVE takes, and what CF.ADD and CF.INSERT give a filter they create (RedisBloom's
// defaults; the rate is sstfilter's).
struct CuckooOptions {
  long long capacity = 1024;
  long long bucket_size = 2;
  long long max_iterations = 20;
  long long expansion = 1;  // 0: the filter does not grow
  double error_rate = 0.01;
};
constexpr double kTightening = 0.5;

CuckooValue* Create(RedisModuleCtx* ctx, RedisModuleKey* key, const CuckooOptions& options) {
  ScalingOptions scaling;
  scaling.growth = options.expansion == 0 ? 1 : static_cast<double>(options.expansion);
  scaling.tightening = kTightening;
  scaling.scaling = options.expansion != 0;
  DumpHeader header;
  header.type = DumpType::kCuckoo;
  header.bucket_size = static_cast<uint16_t>(options.bucket_size);
  header.max_iterations = static_cast<uint32_t>(options.max_iterations);
  return SetNewFilter<CuckooValue>(
      ctx, key, cuckoo_type,
      ScalableCuckooFilter::Create(static_cast<uint64_t>(options.capacity), options.error_rate,
                                   scaling),
      header);
}

constexpr auto FilterForWrite =
    redis::FilterForWrite<CuckooValue, &cuckoo_type, CuckooOptions, Create>;
template <typename Reply>
int ReadFilter(RedisModuleCtx* ctx, RedisModuleString* name, Reply&& reply) {
  return redis::ReadFilter<CuckooValue, &cuckoo_type>(ctx, name, std::forward<Reply>(reply));
}

// ---- options ----

bool ParseCapacity(RedisModuleString* arg, long long* capacity) {
  return ParseInteger(arg, 1, kMaxCapacity, capacity);
}

// The options of CF.RESERVE after its capacity; false, with the error replied, for a bad one.
bool ParseReserveOptions(RedisModuleCtx* ctx, RedisModuleString** argv, int argc,
                         CuckooOptions* options) {
  for (int i = 3; i < argc; i += 2) {
    const char* error = nullptr;
    if (i + 1 >= argc) {
      error = "ERR syntax error";
    } else if (ArgIs(argv[i], "BUCKETSIZE")) {
      if (!ParseInteger(argv[i + 1], 1, kMaxBucketSize, &options->bucket_size)) {
        error = "ERR Bad bucket size";
      }
    } else if (ArgIs(argv[i], "MAXITERATIONS")) {
      if (!ParseInteger(argv[i + 1], 1, kMaxMaxIterations, &options->max_iterations)) {
        error = "ERR Bad max iterations";
      }
    } else if (ArgIs(argv[i], "EXPANSION")) {
      if (!ParseInteger(argv[i + 1], 0, 32768, &options->expansion)) error = "ERR Bad expansion";
    } else if (ArgIs(argv[i], "ERROR")) {
      if (!ParseDouble(argv[i + 1], &options->error_rate) || !(options->error_rate > 0) ||
          !(options->error_rate < 1)) {
        error = "ERR (0 < error rate range < 1)";
      }
    } else {
      error = "ERR syntax error";
    }
    if (error != nullptr) {
      RedisModule_ReplyWithError(ctx, error);
      return false;
    }
  }
  return true;
}

// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERROR rate]
int Reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3 || argc > 11) return RedisModule_WrongArity(ctx);
  CuckooOptions options;
  if (!ParseCapacity(argv[2], &options.capacity)) {
    return RedisModule_ReplyWithError(ctx, "ERR Bad capacity");
  }
  if (!ParseReserveOptions(ctx, argv, argc, &options)) return REDISMODULE_OK;
  return ReserveNew<CuckooValue, &cuckoo_type, CuckooOptions, Create>(ctx, argv, options);
}

// CF.ADD and CF.ADDNX key item
template <bool kIfAbsent>
int AddOne(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  bool replied = false;
  CuckooValue* value = FilterForWrite(ctx, argv[1], /*create=*/true, CuckooOptions(), &replied);
  if (value == nullptr) return REDISMODULE_OK;
  const uint64_t hash = ItemHash(argv[2]);
  const MaxmemoryExemption exemption = ReplicateBeforeChanges(ctx);
  const AddOutcome outcome =
      kIfAbsent ? value->filter->AddIfAbsentHash(hash) : value->filter->AddHash(hash);
  NotifyWrite(ctx, argv);
  switch (outcome) {
    case AddOutcome::kAdded:
      return RedisModule_ReplyWithLongLong(ctx, 1);
    case AddOutcome::kMayBePresent:
      return RedisModule_ReplyWithLongLong(ctx, 0);
    case AddOutcome::kFull:
      return RedisModule_ReplyWithError(ctx, "ERR Filter is full");
  }
  return REDISMODULE_OK;
}

// CF.INSERT and CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item [item ...]: 1 added, 0 reported
// before (INSERTNX), -1 full, per item.
template <bool kIfAbsent>
int Insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  CuckooOptions options;
  bool nocreate = false;
  const int items = ScanInsertOptions(ctx, argv, argc, &nocreate, [&](int* i) -> const char* {
    if (!ArgIs(argv[*i], "CAPACITY") || *i + 1 >= argc) return "ERR syntax error";
    return ParseCapacity(argv[++*i], &options.capacity) ? nullptr : "ERR Bad capacity";
  });
  if (items == 0) return REDISMODULE_OK;  // replied
  bool replied = false;
  CuckooValue* value = FilterForWrite(ctx, argv[1], !nocreate, options, &replied);
  if (value == nullptr) return REDISMODULE_OK;
  // Answered after the last change, so that what may throw does not break the reply.
  const MaxmemoryExemption exemption = ReplicateBeforeChanges(ctx);
  std::vector<long long> answers;
  answers.reserve(static_cast<size_t>(argc - items));
  for (int i = items; i < argc; ++i) {
    const uint64_t hash = ItemHash(argv[i]);
    const AddOutcome outcome =
        kIfAbsent ? value->filter->AddIfAbsentHash(hash) : value->filter->AddHash(hash);
    answers.push_back(outcome == AddOutcome::kAdded          ? 1
                      : outcome == AddOutcome::kMayBePresent ? 0
                                                             : -1);
  }
  NotifyWrite(ctx, argv);
  RedisModule_ReplyWithArray(ctx, static_cast<long>(answers.size()));
  for (const long long answer : answers) RedisModule_ReplyWithLongLong(ctx, answer);
  return REDISMODULE_OK;
}

// CF.EXISTS key item, CF.COUNT key item: an empty key holds none.
template <bool kCount>
int Query(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  return ReadFilter(ctx, argv[1], [&](const CuckooValue* value) {
    const uint64_t hash = ItemHash(argv[2]);
    long long answer = 0;
    if (value != nullptr) {
      answer = kCount ? static_cast<long long>(value->filter->CountHash(hash))
                      : value->filter->MayContainHash(hash);
    }
    return RedisModule_ReplyWithLongLong(ctx, answer);
  });
}

// CF.DEL key item: 1 one copy removed, 0 none (or more than one filter holds it: see
// ScalableCuckooFilter::Erase).
int Del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  bool replied = false;
  CuckooValue* value = FilterForWrite(ctx, argv[1], /*create=*/false, CuckooOptions(), &replied);
  if (value == nullptr) return REDISMODULE_OK;
  RedisModule_ReplicateVerbatim(ctx);
  const bool erased = value->filter->EraseHash(ItemHash(argv[2])) == EraseOutcome::kErased;
  if (erased) ++value->header.deleted;
  NotifyWrite(ctx, argv);
  return RedisModule_ReplyWithLongLong(ctx, erased ? 1 : 0);
}

// The reply of CF.INFO for the filter `value`.
int ReplyInfo(RedisModuleCtx* ctx, const CuckooValue& value) {
  const ScalableCuckooFilter& f = *value.filter;
  // The slots, reported as buckets of the size CF.RESERVE was given (the table's hold 4).
  uint64_t slots = 0;
  for (const CuckooFilter& one : f.filters()) slots += 4 * one.num_buckets();
  const uint64_t bucket_size = value.header.bucket_size == 0 ? 4 : value.header.bucket_size;
  const uint64_t buckets = (slots + bucket_size - 1) / bucket_size;
  const long long expansion = f.options().scaling ? static_cast<long long>(f.options().growth) : 0;
  const struct {
    const char* name;
    long long number;
  } fields[] = {
      {"Size", static_cast<long long>(CuckooValue::MemoryUsage(&value))},
      {"Number of buckets", static_cast<long long>(buckets)},
      {"Number of filters", static_cast<long long>(f.num_filters())},
      {"Number of items inserted", static_cast<long long>(f.size())},
      // A dump may carry any count (dump_format.h); a reply is a signed integer.
      {"Number of items deleted",
       static_cast<long long>(std::min<uint64_t>(value.header.deleted, LLONG_MAX))},
      {"Bucket size", value.header.bucket_size},
      {"Expansion rate", expansion},
      {"Max iterations", value.header.max_iterations},
  };
  RedisModule_ReplyWithArray(ctx, 2 * static_cast<long>(sizeof fields / sizeof fields[0]));
  for (const auto& field : fields) {
    RedisModule_ReplyWithSimpleString(ctx, field.name);
    RedisModule_ReplyWithLongLong(ctx, field.number);
  }
  return REDISMODULE_OK;
}

// CF.INFO key
int Info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  return ReadFilter(ctx, argv[1], [&](const CuckooValue* value) {
    if (value == nullptr) return RedisModule_ReplyWithError(ctx, "ERR not found");
    return ReplyInfo(ctx, *value);
  });
}

}  // namespace

bool LoadCuckoo(RedisModuleCtx* ctx) {
  static const ModuleCommand kCommands[] = {
      {"CF.RESERVE", Guarded<Reserve>, "write deny-oom"},
      {"CF.ADD", Guarded<AddOne<false>>, "write deny-oom fast"},
      {"CF.ADDNX", Guarded<AddOne<true>>, "write deny-oom fast"},
      {"CF.INSERT", Guarded<Insert<false>>, "write deny-oom"},
      {"CF.INSERTNX", Guarded<Insert<true>>, "write deny-oom"},
      {"CF.EXISTS", Guarded<Query<false>>, "readonly fast"},
      {"CF.MEXISTS", Guarded<MExists<CuckooValue, &cuckoo_type>>, "readonly"},
      {"CF.SCANDUMP", Guarded<ScanDump<CuckooValue, &cuckoo_type>>, "readonly"},
      {"CF.LOADCHUNK", Guarded<LoadChunk<CuckooValue, &cuckoo_type>>, "write deny-oom"},
      {"CF.COUNT", Guarded<Query<true>>, "readonly fast"},
      {"CF.DEL", Guarded<Del>, "write fast"},
      {"CF.INFO", Guarded<Info>, "readonly fast"},
  };
  return LoadType<CuckooValue, &cuckoo_type>(ctx, kCuckooTypeName, kCommands);
}

}  // namespace sstfilter::redis
