// SPDX-License-Identifier: Apache-2.0
// The policies' options as RocksDB parses, serialises and compares them (RegisterOptions).
#include "plugin/policy_options.h"

#include <rocksdb/env.h>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/decimal.h"
#include "plugin/bits_adapters.h"
#include "plugin/policies.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::OptionType;
using ROCKSDB_NAMESPACE::OptionTypeFlags;
using ROCKSDB_NAMESPACE::OptionTypeInfo;
using ROCKSDB_NAMESPACE::OptionVerificationType;
using ROCKSDB_NAMESPACE::Status;

Status ParseNumber(const std::string& who, const std::string& name, const std::string& value,
                   double* out) {
  if (!ParseFiniteDecimal(value, out)) {
    return Status::InvalidArgument(who + ": " + name + " must be a finite number, got '" + value +
                                   "'");
  }
  return Status::OK();
}

std::string FormatOptionNumber(double value) {
  char buf[32];  // the shortest text of a double is at most 24 characters
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

namespace {

// A double option that may be absent (NaN). Parsing is strict (ParseNumber); absent values
// serialise to "", which RocksDB then leaves out of OPTIONS files.
Status ParseOptionalDouble(const ConfigOptions&, const std::string& name, const std::string& value,
                           void* addr) {
  double* out = static_cast<double*>(addr);
  if (value.empty()) {
    *out = std::nan("");
    return Status::OK();
  }
  return ParseNumber("sstfilter", name, value, out);
}

// Either double option's text: the shortest that reads back (FormatOptionNumber), "" for absent.
Status SerializeDouble(const ConfigOptions&, const std::string&, const void* addr,
                       std::string* value) {
  const double v = *static_cast<const double*>(addr);
  if (std::isnan(v)) {
    value->clear();
  } else {
    *value = FormatOptionNumber(v);
  }
  return Status::OK();
}

// A double option that must be given (size_ratio): "" is refused as any other non-number is, not
// read as absent.
Status ParseRequiredDouble(const ConfigOptions&, const std::string& name, const std::string& value,
                           void* addr) {
  return ParseNumber("sstfilter", name, value, static_cast<double*>(addr));
}

bool DoublesEqual(const ConfigOptions&, const std::string& name, const void* a, const void* b,
                  std::string* mismatch) {
  const double x = *static_cast<const double*>(a);
  const double y = *static_cast<const double*>(b);
  const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
}

OptionTypeInfo OptionalDouble(int offset) {
  return OptionTypeInfo(offset, OptionType::kDouble, OptionVerificationType::kNormal,
                        OptionTypeFlags::kNone, ParseOptionalDouble, SerializeDouble, DoublesEqual);
}

OptionTypeInfo RequiredDouble(int offset) {
  return OptionTypeInfo(offset, OptionType::kDouble, OptionVerificationType::kNormal,
                        OptionTypeFlags::kNone, ParseRequiredDouble, SerializeDouble, DoublesEqual);
}

// An option that takes one of a few words (an enum E). `values`: each word and its value, the
// first the default; `who` and `meaning` make the message ("<who>: <name> must be <meaning>, got
// '<value>'"). With `empty_is_default`, "" is the default and the default serialises to "", which
// RocksDB leaves out of OPTIONS files: an option added in a later release then stays out of the
// OPTIONS files of databases that keep its default, so an earlier release still opens them.
template <typename E>
struct NamedValues {
  const char* who;
  const char* meaning;
  std::vector<std::pair<std::string, E>> values;
  bool empty_is_default;
};

template <typename E>
OptionTypeInfo NamedValuesOption(int offset, const NamedValues<E>* named) {
  return OptionTypeInfo(
      offset, OptionType::kUnknown, OptionVerificationType::kNormal, OptionTypeFlags::kNone,
      [named](const ConfigOptions&, const std::string& name, const std::string& value, void* addr) {
        if (value.empty() && named->empty_is_default) {
          *static_cast<E*>(addr) = named->values.front().second;
          return Status::OK();
        }
        for (const auto& [word, v] : named->values) {
          if (value == word) {
            *static_cast<E*>(addr) = v;
            return Status::OK();
          }
        }
        return Status::InvalidArgument(std::string(named->who) + ": " + name + " must be " +
                                       named->meaning + ", got '" + value + "'");
      },
      [named](const ConfigOptions&, const std::string&, const void* addr, std::string* value) {
        const E v = *static_cast<const E*>(addr);
        value->clear();
        if (named->empty_is_default && v == named->values.front().second) return Status::OK();
        for (const auto& [word, each] : named->values) {
          if (v == each) *value = word;
        }
        return Status::OK();
      },
      OptionValuesEqual<E>);
}

// LeveledPolicy's memory_budget (plugin/memory_budget.h): "" (none, left out of OPTIONS files),
// bytes, or a share of the block cache.
Status ParseMemoryBudget(const ConfigOptions&, const std::string&, const std::string& value,
                         void* addr) {
  const Result<MemoryBudget> budget = MemoryBudget::Parse(value);
  if (!budget.ok()) return Status::InvalidArgument("sstfilter.Leveled: " + budget.error());
  *static_cast<MemoryBudget*>(addr) = budget.value();
  return Status::OK();
}

Status SerializeMemoryBudget(const ConfigOptions&, const std::string&, const void* addr,
                             std::string* value) {
  *value = static_cast<const MemoryBudget*>(addr)->ToString();
  return Status::OK();
}

}  // namespace

const OptionTypeMap& BudgetTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"bits_per_key", OptionalDouble(offsetof(BudgetOptions, bits_per_key))},
      {"fp_rate", OptionalDouble(offsetof(BudgetOptions, fp_rate))},
  };
  return info;
}

const OptionTypeMap& CompatibilityTypeInfo() {
  using C = SstFilterPolicy::Compatibility;
  static const NamedValues<C> compatibility = {
      "sstfilter",
      "rocksdb (RocksDB's filter family, the default) or sstfilter (for databases sstfilter 0.1 "
      "wrote)",
      {{"rocksdb", C::kRocksDb}, {"sstfilter", C::kSstFilter}},
      /*empty_is_default=*/true};
  static const OptionTypeMap info = {{"compatibility", NamedValuesOption(0, &compatibility)}};
  return info;
}

const OptionTypeMap& BloomTypeInfo() {
  using L = BloomPolicy::Layout;
  static const NamedValues<L> layout = {"sstfilter.Bloom",
                                        "blocked or standard",
                                        {{"blocked", L::kBlocked}, {"standard", L::kStandard}},
                                        /*empty_is_default=*/false};
  static const OptionTypeMap info = {{"layout", NamedValuesOption(0, &layout)}};
  return info;
}

const OptionTypeMap& LeveledTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"size_ratio", RequiredDouble(offsetof(LeveledPolicy::Shape, size_ratio))},
      {"num_levels", {offsetof(LeveledPolicy::Shape, num_levels), OptionType::kInt}},
      {"memory_budget",
       OptionTypeInfo(offsetof(LeveledPolicy::Shape, memory_budget), OptionType::kUnknown,
                      OptionVerificationType::kNormal, OptionTypeFlags::kNone, ParseMemoryBudget,
                      SerializeMemoryBudget, OptionValuesEqual<MemoryBudget>)},
  };
  return info;
}

void LogNoFilter(ROCKSDB_NAMESPACE::Logger* log, const char* policy, const std::string& why) {
  LogError(log, std::string(policy) + ": " + why + "; this SST file gets no filter");
}

}  // namespace sstfilter
