// SPDX-License-Identifier: Apache-2.0
// The policies' options as RocksDB parses, serialises and compares them (RegisterOptions).
#include "plugin/policy_options.h"

#include <rocksdb/env.h>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>

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
  double v = 0;
  const char* const last = value.data() + value.size();
  const auto [end, ec] = std::from_chars(value.data(), last, v);
  if (ec != std::errc() || end != last || !std::isfinite(v)) {
    return Status::InvalidArgument(who + ": " + name + " must be a finite number, got '" + value +
                                   "'");
  }
  *out = v;
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

Status ParseLayout(const ConfigOptions&, const std::string& name, const std::string& value,
                   void* addr) {
  auto* out = static_cast<BloomPolicy::Layout*>(addr);
  if (value == "blocked") {
    *out = BloomPolicy::Layout::kBlocked;
  } else if (value == "standard") {
    *out = BloomPolicy::Layout::kStandard;
  } else {
    return Status::InvalidArgument("sstfilter.Bloom: " + name +
                                   " must be blocked or standard, got '" + value + "'");
  }
  return Status::OK();
}

Status SerializeLayout(const ConfigOptions&, const std::string&, const void* addr,
                       std::string* value) {
  *value = *static_cast<const BloomPolicy::Layout*>(addr) == BloomPolicy::Layout::kBlocked
               ? "blocked"
               : "standard";
  return Status::OK();
}

bool LayoutsEqual(const ConfigOptions&, const std::string& name, const void* a, const void* b,
                  std::string* mismatch) {
  const bool same =
      *static_cast<const BloomPolicy::Layout*>(a) == *static_cast<const BloomPolicy::Layout*>(b);
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
}

Status ParseCompatibility(const ConfigOptions&, const std::string& name, const std::string& value,
                          void* addr) {
  auto* out = static_cast<SstFilterPolicy::Compatibility*>(addr);
  if (value == "rocksdb") {
    *out = SstFilterPolicy::Compatibility::kRocksDb;
  } else if (value == "sstfilter") {
    *out = SstFilterPolicy::Compatibility::kSstFilter;
  } else {
    return Status::InvalidArgument(
        "sstfilter: " + name +
        " must be rocksdb (RocksDB's filter family, the default) or sstfilter (for databases "
        "sstfilter 0.1 wrote), got '" +
        value + "'");
  }
  return Status::OK();
}

Status SerializeCompatibility(const ConfigOptions&, const std::string&, const void* addr,
                              std::string* value) {
  *value = *static_cast<const SstFilterPolicy::Compatibility*>(addr) ==
                   SstFilterPolicy::Compatibility::kRocksDb
               ? "rocksdb"
               : "sstfilter";
  return Status::OK();
}

bool CompatibilitiesEqual(const ConfigOptions&, const std::string& name, const void* a,
                          const void* b, std::string* mismatch) {
  const bool same = *static_cast<const SstFilterPolicy::Compatibility*>(a) ==
                    *static_cast<const SstFilterPolicy::Compatibility*>(b);
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
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

bool MemoryBudgetsEqual(const ConfigOptions&, const std::string& name, const void* a, const void* b,
                        std::string* mismatch) {
  const bool same = *static_cast<const MemoryBudget*>(a) == *static_cast<const MemoryBudget*>(b);
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
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
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"compatibility", OptionTypeInfo(0, OptionType::kUnknown, OptionVerificationType::kNormal,
                                       OptionTypeFlags::kNone, ParseCompatibility,
                                       SerializeCompatibility, CompatibilitiesEqual)},
  };
  return info;
}

const OptionTypeMap& BloomTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"layout",
       OptionTypeInfo(0, OptionType::kUnknown, OptionVerificationType::kNormal,
                      OptionTypeFlags::kNone, ParseLayout, SerializeLayout, LayoutsEqual)},
  };
  return info;
}

const OptionTypeMap& LeveledTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"size_ratio", RequiredDouble(offsetof(LeveledPolicy::Shape, size_ratio))},
      {"num_levels", {offsetof(LeveledPolicy::Shape, num_levels), OptionType::kInt}},
      {"memory_budget",
       OptionTypeInfo(offsetof(LeveledPolicy::Shape, memory_budget), OptionType::kUnknown,
                      OptionVerificationType::kNormal, OptionTypeFlags::kNone, ParseMemoryBudget,
                      SerializeMemoryBudget, MemoryBudgetsEqual)},
  };
  return info;
}

void LogNoFilter(ROCKSDB_NAMESPACE::Logger* log, const char* policy, const std::string& why) {
  LogError(log, std::string(policy) + ": " + why + "; this SST file gets no filter");
}

}  // namespace sstfilter
