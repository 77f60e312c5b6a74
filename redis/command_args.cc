// SPDX-License-Identifier: Apache-2.0
// The commands' argument reading and key opening (redis/command_args.h).
#include "redis/command_args.h"

#include <strings.h>

#include <cctype>
#include <string>
#include <string_view>

#include "core/decimal.h"
#include "sstfilter/hash_key.h"

namespace sstfilter::redis {

bool ArgIs(RedisModuleString* arg, const char* word) {
  size_t length = 0;
  const char* text = RedisModule_StringPtrLen(arg, &length);
  return length == std::char_traits<char>::length(word) && strncasecmp(text, word, length) == 0;
}

bool ParseDouble(RedisModuleString* arg, double* out) {
  size_t length = 0;
  const char* text = RedisModule_StringPtrLen(arg, &length);
  std::string_view number(text, length);
  // Redis's own numbers take one leading '+'; ParseFiniteDecimal refuses it, and refuses what
  // strtod would also read: leading spaces, hexadecimal floats, "inf" and "nan".
  if (!number.empty() && number.front() == '+') {
    number.remove_prefix(1);
    if (!number.empty() && number.front() == '-') return false;  // "+-1"
  }
  return ParseFiniteDecimal(number, out);
}

bool ParseInteger(RedisModuleString* arg, long long min, long long max, long long* out) {
  long long v = 0;
  if (RedisModule_StringToLongLong(arg, &v) != REDISMODULE_OK || v < min || v > max) return false;
  *out = v;
  return true;
}

uint64_t ItemHash(RedisModuleString* item) {
  size_t length = 0;
  const char* data = RedisModule_StringPtrLen(item, &length);
  return HashKey(std::string_view(data, length));
}

namespace {
// Exemptions held: commands run on Redis's main thread, one at a time.
int maxmemory_exemptions = 0;
}  // namespace

MaxmemoryExemption::MaxmemoryExemption() { ++maxmemory_exemptions; }
MaxmemoryExemption::~MaxmemoryExemption() { --maxmemory_exemptions; }
bool FiltersMayPassMaxmemory() { return maxmemory_exemptions > 0; }

MaxmemoryExemption ReplicateBeforeChanges(RedisModuleCtx* ctx) {
  RedisModule_ReplicateVerbatim(ctx);
  return MaxmemoryExemption();
}

void NotifyWrite(RedisModuleCtx* ctx, RedisModuleString** argv) {
  size_t length = 0;
  const char* name = RedisModule_StringPtrLen(argv[0], &length);
  std::string event(name, length);
  for (char& c : event) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, event.c_str(), argv[1]);
}

KeyState OpenKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode, RedisModuleType* type,
                 RedisModuleKey** key, void** value) {
  *key = static_cast<RedisModuleKey*>(RedisModule_OpenKey(ctx, name, mode));
  *value = nullptr;
  const int key_type = RedisModule_KeyType(*key);
  if (key_type == REDISMODULE_KEYTYPE_EMPTY) return KeyState::kEmpty;
  if (RedisModule_ModuleTypeGetType(*key) != type) return KeyState::kWrongType;
  *value = RedisModule_ModuleTypeGetValue(*key);
  return KeyState::kOurs;
}

}  // namespace sstfilter::redis
