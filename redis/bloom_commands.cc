// SPDX-License-Identifier: Apache-2.0
// BF.*: RedisBloom's Bloom filter commands over ScalableBloomFilter
// (include/sstfilter/scalable_bloom_filter.h) in the standard layout: the textbook filter's bits,
// the fewest for a rate (a Redis command costs more than the cache misses of its probes). With
// RedisBloom's arities, replies, defaults and error texts. Every write is replicated verbatim: the
// filter's bytes follow from the commands alone, so a replica's are the primary's.
#include "redis/commands.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "redis/command_args.h"
#include "redis/dump_commands.h"
#include "redis/filter_value.h"
#include "redis/open_filter.h"
#include "sstfilter/scalable_bloom_filter.h"

namespace sstfilter::redis {
namespace {

using BloomValue = FilterValue<ScalableBloomFilter, DumpType::kBloom>;

RedisModuleType* bloom_type = nullptr;

// What BF.ADD and BF.INSERT give a filter they create: RedisBloom's defaults.
struct BloomOptions {
  double error_rate = 0.01;
  long long capacity = 100;
  long long expansion = 2;
  bool nonscaling = false;
};
// The chain's rate of each new filter over the one before: RedisBloom's.
constexpr double kTightening = 0.5;
constexpr long long kMaxExpansion = 32768;

// A filter of `options`, as the key's new value; an error reply when it cannot be made.
BloomValue* Create(RedisModuleCtx* ctx, RedisModuleKey* key, const BloomOptions& options) {
  ScalingOptions scaling;
  scaling.growth = static_cast<double>(options.expansion);
  scaling.tightening = kTightening;
  scaling.scaling = !options.nonscaling;
  return SetNewFilter<BloomValue>(
      ctx, key, bloom_type,
      ScalableBloomFilter::Create(static_cast<uint64_t>(options.capacity), options.error_rate,
                                  scaling, BloomLayout::kStandard),
      DumpHeader());
}

constexpr auto FilterForWrite =
    redis::FilterForWrite<BloomValue, &bloom_type, BloomOptions, Create>;
template <typename Reply>
int ReadFilter(RedisModuleCtx* ctx, RedisModuleString* name, Reply&& reply) {
  return redis::ReadFilter<BloomValue, &bloom_type>(ctx, name, std::forward<Reply>(reply));
}

// The error of an add `filter` could not take. RedisBloom's for a filter that does not scale; for
// one that does, why its next filter cannot be made: the chain's limits, or a filter whose rate
// is below what the kind sizes (each filter's rate is kTightening times the one before's, and
// 100 bits per item buy about 1.4e-21) or whose memory Redis cannot give (past maxmemory, the LOG
// says so).
std::string FullError(const ScalableBloomFilter& filter) {
  if (!filter.options().scaling) return "ERR non scaling filter is full";
  const size_t filters = filter.num_filters();
  if (filters >= kMaxChainFilters) {
    return "ERR the filter cannot grow: it holds " + std::to_string(filters) + " filters";
  }
  uint64_t capacity = 0;
  double rate = 0;
  if (filter.PeekNextFilter(&capacity, &rate)) {
    char error[160];
    std::snprintf(error, sizeof error,
                  "ERR the filter cannot grow: its filter %zu, of %llu items at a rate of %.3g, "
                  "cannot be made",
                  filters + 1, static_cast<unsigned long long>(capacity), rate);
    return error;
  }
  return "ERR the filter cannot grow: its capacity would pass 2^62 items";
}

// One item's reply to an add: 1 added, 0 reported before, an error when the filter is full.
void ReplyToAdd(RedisModuleCtx* ctx, const ScalableBloomFilter& filter, AddOutcome outcome) {
  switch (outcome) {
    case AddOutcome::kAdded:
      RedisModule_ReplyWithLongLong(ctx, 1);
      return;
    case AddOutcome::kMayBePresent:
      RedisModule_ReplyWithLongLong(ctx, 0);
      return;
    case AddOutcome::kFull:
      RedisModule_ReplyWithError(ctx, FullError(filter).c_str());
      return;
  }
}

// The items argv[first..argc) added, one reply each, in an array; replicated and notified.
int AddItems(RedisModuleCtx* ctx, BloomValue* value, RedisModuleString** argv, int first,
             int argc) {
  // Answered after the last change, so that what may throw does not break the reply.
  const MaxmemoryExemption exemption = ReplicateBeforeChanges(ctx);
  std::vector<AddOutcome> outcomes;
  outcomes.reserve(static_cast<size_t>(argc - first));
  for (int i = first; i < argc; ++i) outcomes.push_back(value->filter->AddHash(ItemHash(argv[i])));
  NotifyWrite(ctx, argv);
  RedisModule_ReplyWithArray(ctx, static_cast<long>(outcomes.size()));
  for (const AddOutcome outcome : outcomes) ReplyToAdd(ctx, *value->filter, outcome);
  return REDISMODULE_OK;
}

// ---- options ----

const char* kRateError = "ERR (0 < error rate range < 1)";
const char* kCapacityError = "ERR (capacity should be larger than 0)";
const char* kExpansionError = "ERR expansion should be greater or equal to 1";

bool ParseRate(RedisModuleString* arg, double* rate) {
  return ParseDouble(arg, rate) && *rate > 0 && *rate < 1;
}
bool ParseCapacity(RedisModuleString* arg, long long* capacity) {
  return ParseInteger(arg, 1, kMaxCapacity, capacity);
}
bool ParseExpansion(RedisModuleString* arg, long long* expansion) {
  return ParseInteger(arg, 1, kMaxExpansion, expansion);
}

// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
int Reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4 || argc > 7) return RedisModule_WrongArity(ctx);
  BloomOptions options;
  if (!ParseRate(argv[2], &options.error_rate)) return RedisModule_ReplyWithError(ctx, kRateError);
  if (!ParseCapacity(argv[3], &options.capacity)) {
    return RedisModule_ReplyWithError(ctx, kCapacityError);
  }
  bool expansion_given = false;
  for (int i = 4; i < argc; ++i) {
    if (ArgIs(argv[i], "NONSCALING")) {
      options.nonscaling = true;
    } else if (ArgIs(argv[i], "EXPANSION") && i + 1 < argc) {
      if (!ParseExpansion(argv[++i], &options.expansion)) {
        return RedisModule_ReplyWithError(ctx, kExpansionError);
      }
      expansion_given = true;
    } else {
      return RedisModule_ReplyWithError(ctx, "ERR syntax error");
    }
  }
  if (options.nonscaling && expansion_given) {
    return RedisModule_ReplyWithError(ctx, "ERR Nonscaling filters cannot expand");
  }
  return ReserveNew<BloomValue, &bloom_type, BloomOptions, Create>(ctx, argv, options);
}

// BF.ADD key item
int Add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  bool replied = false;
  BloomValue* value = FilterForWrite(ctx, argv[1], /*create=*/true, BloomOptions(), &replied);
  if (value == nullptr) return REDISMODULE_OK;
  const MaxmemoryExemption exemption = ReplicateBeforeChanges(ctx);
  const AddOutcome outcome = value->filter->AddHash(ItemHash(argv[2]));
  NotifyWrite(ctx, argv);
  ReplyToAdd(ctx, *value->filter, outcome);
  return REDISMODULE_OK;
}

// BF.MADD key item [item ...]
int MAdd(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return RedisModule_WrongArity(ctx);
  bool replied = false;
  BloomValue* value = FilterForWrite(ctx, argv[1], /*create=*/true, BloomOptions(), &replied);
  if (value == nullptr) return REDISMODULE_OK;
  return AddItems(ctx, value, argv, 2, argc);
}

// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item [item ...]
int Insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  BloomOptions options;
  bool nocreate = false, sized = false, expansion_given = false;
  const int items = ScanInsertOptions(ctx, argv, argc, &nocreate, [&](int* i) -> const char* {
    if (ArgIs(argv[*i], "NONSCALING")) {
      options.nonscaling = true;
      return nullptr;
    }
    if (*i + 1 >= argc) return "ERR syntax error";
    RedisModuleString* name = argv[*i];
    RedisModuleString* number = argv[++*i];
    if (ArgIs(name, "CAPACITY")) {
      sized = true;
      return ParseCapacity(number, &options.capacity) ? nullptr : kCapacityError;
    }
    if (ArgIs(name, "ERROR")) {
      sized = true;
      return ParseRate(number, &options.error_rate) ? nullptr : kRateError;
    }
    if (ArgIs(name, "EXPANSION")) {
      expansion_given = true;
      return ParseExpansion(number, &options.expansion) ? nullptr : kExpansionError;
    }
    return "ERR syntax error";
  });
  if (items == 0) return REDISMODULE_OK;  // replied
  if (nocreate && sized) {
    return RedisModule_ReplyWithError(
        ctx, "ERR NOCREATE cannot be used together with CAPACITY or ERROR");
  }
  if (options.nonscaling && expansion_given) {
    return RedisModule_ReplyWithError(ctx, "ERR Nonscaling filters cannot expand");
  }
  bool replied = false;
  BloomValue* value = FilterForWrite(ctx, argv[1], !nocreate, options, &replied);
  if (value == nullptr) return REDISMODULE_OK;
  return AddItems(ctx, value, argv, items, argc);
}

// BF.EXISTS key item
int Exists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  return ReadFilter(ctx, argv[1], [&](const BloomValue* value) {
    return RedisModule_ReplyWithLongLong(
        ctx, value != nullptr && value->filter->MayContainHash(ItemHash(argv[2])));
  });
}

// The reply of BF.INFO for the filter `value`: every field, or the one
// `asked` names (if not null).
int ReplyInfo(RedisModuleCtx* ctx, const BloomValue& value, RedisModuleString* asked) {
  const ScalableBloomFilter& f = *value.filter;
  const struct {
    const char* option;
    const char* name;
    long long number;
  } fields[] = {
      {"CAPACITY", "Capacity", static_cast<long long>(f.capacity())},
      {"SIZE", "Size", static_cast<long long>(BloomValue::MemoryUsage(&value))},
      {"FILTERS", "Number of filters", static_cast<long long>(f.num_filters())},
      {"ITEMS", "Number of items inserted", static_cast<long long>(f.size())},
      {"EXPANSION", "Expansion rate", static_cast<long long>(f.options().growth)},
  };
  const bool scaling = f.options().scaling;
  auto reply_number = [&](const auto& field) {
    if (!scaling && field.option[0] == 'E') return RedisModule_ReplyWithNull(ctx);
    return RedisModule_ReplyWithLongLong(ctx, field.number);
  };
  if (asked != nullptr) {
    for (const auto& field : fields) {
      if (!ArgIs(asked, field.option)) continue;
      RedisModule_ReplyWithArray(ctx, 1);
      return reply_number(field);
    }
    return RedisModule_ReplyWithError(ctx, "ERR Invalid information value");
  }
  RedisModule_ReplyWithArray(ctx, 2 * static_cast<long>(sizeof fields / sizeof fields[0]));
  for (const auto& field : fields) {
    RedisModule_ReplyWithSimpleString(ctx, field.name);
    reply_number(field);
  }
  return REDISMODULE_OK;
}

// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
int Info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 2 || argc > 3) return RedisModule_WrongArity(ctx);
  return ReadFilter(ctx, argv[1], [&](const BloomValue* value) {
    if (value == nullptr) return RedisModule_ReplyWithError(ctx, "ERR not found");
    return ReplyInfo(ctx, *value, argc == 3 ? argv[2] : nullptr);
  });
}

// BF.CARD key
int Card(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  return ReadFilter(ctx, argv[1], [&](const BloomValue* value) {
    return RedisModule_ReplyWithLongLong(
        ctx, value == nullptr ? 0 : static_cast<long long>(value->filter->size()));
  });
}

}  // namespace

bool LoadBloom(RedisModuleCtx* ctx) {
  static const ModuleCommand kCommands[] = {
      {"BF.RESERVE", Guarded<Reserve>, "write deny-oom"},
      {"BF.ADD", Guarded<Add>, "write deny-oom fast"},
      {"BF.MADD", Guarded<MAdd>, "write deny-oom"},
      {"BF.INSERT", Guarded<Insert>, "write deny-oom"},
      {"BF.EXISTS", Guarded<Exists>, "readonly fast"},
      {"BF.MEXISTS", Guarded<MExists<BloomValue, &bloom_type>>, "readonly"},
      {"BF.SCANDUMP", Guarded<ScanDump<BloomValue, &bloom_type>>, "readonly"},
      {"BF.LOADCHUNK", Guarded<LoadChunk<BloomValue, &bloom_type>>, "write deny-oom"},
      {"BF.INFO", Guarded<Info>, "readonly fast"},
      {"BF.CARD", Guarded<Card>, "readonly fast"},
  };
  return LoadType<BloomValue, &bloom_type>(ctx, kBloomTypeName, kCommands);
}

}  // namespace sstfilter::redis
