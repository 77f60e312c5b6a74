// SPDX-License-Identifier: Apache-2.0
// The options of sstfilter's policies as RocksDB's option machinery sees them (RegisterOptions):
// how each is parsed, written to OPTIONS files and compared; and the one parser of the plugin's
// floating-point options, which sstfilter.RangeFilter's bits_per_key uses too.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/status.h>
#include <rocksdb/utilities/options_type.h>

#include <string>
#include <unordered_map>

namespace sstfilter {

// The one parser of the plugin's floating-point options (the policies' bits_per_key, fp_rate and
// size_ratio, the number of "<name>:<number>", sstfilter.RangeFilter's bits_per_key; num_levels,
// an int, is RocksDB's to parse): the whole text must be a finite number, in the C locale's form
// whatever the process's locale (std::from_chars: no sign '+', no spaces, no hexadecimal). `who`
// and `name` (the policy or collector, the option) make the message.
ROCKSDB_NAMESPACE::Status ParseNumber(const std::string& who, const std::string& name,
                                      const std::string& value, double* out);
// How those options are written (OPTIONS files, GetOptionString): the shortest text that
// ParseNumber reads back as the same double, whatever the process's locale (std::to_chars).
std::string FormatOptionNumber(double value);

// RocksDB's equality callback for an option whose values compare with ==: names the option in
// *mismatch (if given) where they differ.
template <typename T>
bool OptionValuesEqual(const ROCKSDB_NAMESPACE::ConfigOptions&, const std::string& name,
                       const void* a, const void* b, std::string* mismatch) {
  const bool same = *static_cast<const T*>(a) == *static_cast<const T*>(b);
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
}

using OptionTypeMap = std::unordered_map<std::string, ROCKSDB_NAMESPACE::OptionTypeInfo>;
// BudgetOptions (bits_per_key, fp_rate: absent is NaN, and not written to OPTIONS files).
const OptionTypeMap& BudgetTypeInfo();
// SstFilterPolicy's compatibility ("rocksdb", the default, written as nothing; "sstfilter").
const OptionTypeMap& CompatibilityTypeInfo();
// BloomPolicy's layout ("blocked", "standard").
const OptionTypeMap& BloomTypeInfo();
// LeveledPolicy::Shape (size_ratio, num_levels).
const OptionTypeMap& LeveledTypeInfo();

// The one ERROR line for a file that gets no filter from `policy`, and why.
void LogNoFilter(ROCKSDB_NAMESPACE::Logger* log, const char* policy, const std::string& why);

}  // namespace sstfilter
