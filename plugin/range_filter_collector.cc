// SPDX-License-Identifier: Apache-2.0
// sstfilter.RangeFilter: the table properties collector that writes each SST file's range filter
// (core/range/range_api.h) into its properties, and SkipEmptyFiles, the table_filter that
// reads it (include/sstfilter/range_filter.h).
#include "plugin/range_filter_collector.h"

#include <rocksdb/utilities/options_type.h>

#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/range/range_api.h"
#include "plugin/policy_options.h"
#include "plugin/skip_empty_files.h"
#include "sstfilter/range_filter.h"

using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::EntryType;
using ROCKSDB_NAMESPACE::OptionTypeFlags;
using ROCKSDB_NAMESPACE::OptionTypeInfo;
using ROCKSDB_NAMESPACE::OptionVerificationType;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::TableProperties;
using ROCKSDB_NAMESPACE::TablePropertiesCollector;
using ROCKSDB_NAMESPACE::UserCollectedProperties;

namespace sstfilter {
namespace {

// The comparator whose order the filter's windows keep; files of any other are never skipped.
constexpr const char* kBytewiseComparatorName = "leveldb.BytewiseComparator";

// One per SST file, called by one thread at a time. Every entry's user key goes in (whatever its
// type: a put, a delete, a single delete, a merge operand, a blob index, a wide-column entity, a
// timed put, or a type newer than this code); a range deletion goes in as the range it deletes.
// Nothing throws into RocksDB: a failure (out of memory) leaves the file without a filter, and a
// file without a filter is never skipped.
//
// A file whose keys do not come in bytewise order (a reverse comparator; user-defined timestamps,
// whose versions of a key come newest first) gets no filter: SkipEmptyFiles never skips a file of
// a comparator other than bytewise, so its filter would be memory and build time for nothing. The
// first such file of a factory says so in its readable properties, which RocksDB writes to the
// LOG with the file's creation; the others say nothing. (A column family with user-defined
// timestamps whose files never hold two versions of one key can go unnoticed: its files get a
// filter that is never read.)
class RangeFilterCollector : public TablePropertiesCollector {
 public:
  RangeFilterCollector(double bits_per_key, std::shared_ptr<std::atomic<bool>> told_not_bytewise)
      : builder_(bits_per_key), told_not_bytewise_(std::move(told_not_bytewise)) {}

  Status AddUserKey(const Slice& key, const Slice& value, EntryType type, SequenceNumber,
                    uint64_t) override {
    if (failed_) return Status::OK();
    try {
      if (type == EntryType::kEntryRangeDeletion) {
        // Range deletions come after the keys, in an order of their own.
        builder_.AddRangeDeletion(std::string_view(key.data(), key.size()),
                                  std::string_view(value.data(), value.size()));
        return Status::OK();
      }
      const std::string_view k(key.data(), key.size());
      if (has_previous_ && k < std::string_view(previous_)) {
        NotBytewise();
        return Status::OK();
      }
      previous_.assign(k.data(), k.size());  // no allocation once as long as the longest key
      has_previous_ = true;
      builder_.AddKey(k);
    } catch (const std::exception&) {
      failed_ = true;
    }
    return Status::OK();
  }

  Status Finish(UserCollectedProperties* properties) override {
    if (failed_) return Status::OK();
    try {
      Result<std::string> bytes = builder_.Finish();
      if (!bytes.ok()) return Status::OK();  // too many keys: no filter, never skipped
      summary_ = std::to_string(bytes.value().size()) + " bytes";
      (*properties)[kRangeFilterPropertyName] = std::move(bytes).value();
    } catch (const std::exception&) {
      properties->erase(kRangeFilterPropertyName);
    }
    return Status::OK();
  }

  UserCollectedProperties GetReadableProperties() const override {
    UserCollectedProperties readable;
    try {
      if (!summary_.empty()) readable[kRangeFilterPropertyName] = summary_;
    } catch (const std::exception&) {
    }
    return readable;
  }

  const char* Name() const override { return kRangeFilterName; }

 private:
  void NotBytewise() {
    failed_ = true;
    if (!told_not_bytewise_->exchange(true)) {
      summary_ =
          "none: the column family's keys are not in bytewise order (a reverse comparator, or "
          "user-defined timestamps), so none of its files can be skipped; its files get no range "
          "filter";
    }
  }

  RangeFilterBuilder builder_;
  bool failed_ = false;
  std::string summary_;
  std::string previous_;  // the last key added
  bool has_previous_ = false;
  std::shared_ptr<std::atomic<bool>> told_not_bytewise_;
};

// bits_per_key is checked as it is parsed: RocksDB does not prepare the collector factories
// that an options string creates.
Status ParseBitsPerKey(const std::string& text, double* out) {
  double v = 0;
  const Status parsed = ParseNumber(kRangeFilterName, "bits_per_key", text, &v);
  if (!parsed.ok()) return parsed;
  const Result<double> checked = CheckRangeBitsPerKey(v);
  if (!checked.ok()) {
    return Status::InvalidArgument(std::string(kRangeFilterName) + ": " + checked.error());
  }
  *out = v;
  return Status::OK();
}

const std::unordered_map<std::string, OptionTypeInfo>& RangeFilterTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"bits_per_key",
       OptionTypeInfo(
           0, ROCKSDB_NAMESPACE::OptionType::kDouble, OptionVerificationType::kNormal,
           OptionTypeFlags::kNone,
           [](const ConfigOptions&, const std::string&, const std::string& value, void* addr) {
             return ParseBitsPerKey(value, static_cast<double*>(addr));
           },
           [](const ConfigOptions&, const std::string&, const void* addr, std::string* value) {
             *value = FormatOptionNumber(*static_cast<const double*>(addr));
             return Status::OK();
           },
           OptionValuesEqual<double>)},
  };
  return info;
}

// A collector that collects nothing: the file gets no range filter, and is never skipped.
class NoRangeFilterCollector : public TablePropertiesCollector {
 public:
  Status AddUserKey(const Slice&, const Slice&, EntryType, SequenceNumber, uint64_t) override {
    return Status::OK();
  }
  Status Finish(UserCollectedProperties*) override { return Status::OK(); }
  UserCollectedProperties GetReadableProperties() const override { return {}; }
  const char* Name() const override { return kRangeFilterName; }
};

}  // namespace

RangeFilterCollectorFactory::RangeFilterCollectorFactory() {
  RegisterOptions("range_filter", &bits_per_key_, &RangeFilterTypeInfo());
}

Status RangeFilterCollectorFactory::PrepareOptions(const ConfigOptions& options) {
  const Result<double> checked = CheckRangeBitsPerKey(bits_per_key_);
  if (!checked.ok()) {
    return Status::InvalidArgument(std::string(kRangeFilterName) + ": " + checked.error());
  }
  return TablePropertiesCollectorFactory::PrepareOptions(options);
}

TablePropertiesCollector* RangeFilterCollectorFactory::CreateTablePropertiesCollector(
    TablePropertiesCollectorFactory::Context) {
  // bits_per_key was checked by PrepareOptions when the factory came from a string; a factory
  // made in code (NewRangeFilterCollectorFactory) was checked there. A value set since then
  // that is out of range is clamped to the range rather than refused mid-flush.
  const double bits =
      std::isnan(bits_per_key_)
          ? kDefaultRangeBitsPerKey
          : std::min(kMaxRangeBitsPerKey, std::max(kMinRangeBitsPerKey, bits_per_key_));
  TablePropertiesCollector* collector =
      new (std::nothrow) RangeFilterCollector(bits, told_not_bytewise_);
  // Out of memory. RocksDB before 8.10 does not accept a null collector (it calls it): a smaller
  // one that collects nothing, and the file has no range filter.
  if (collector == nullptr) collector = new (std::nothrow) NoRangeFilterCollector();
  return collector;
}

std::string RangeFilterCollectorFactory::ToString() const {
  return "{id=" + std::string(kRangeFilterName) +
         ";bits_per_key=" + FormatOptionNumber(bits_per_key_) + "}";
}

Status NewRangeFilterCollectorFactory(
    double bits_per_key,
    std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory>* factory) {
  if (factory == nullptr) return Status::InvalidArgument("NewRangeFilterCollectorFactory: null");
  const Result<double> checked = CheckRangeBitsPerKey(bits_per_key);
  if (!checked.ok()) {
    return Status::InvalidArgument(std::string(kRangeFilterName) + ": " + checked.error());
  }
  try {
    auto made = std::make_shared<RangeFilterCollectorFactory>();
    made->set_bits_per_key(bits_per_key);
    *factory = std::move(made);
  } catch (const std::exception&) {
    return Status::MemoryLimit(std::string(kRangeFilterName) + ": out of memory");
  }
  return Status::OK();
}

bool FileMayHoldKeysIn(const TableProperties& properties, const Slice* lower, const Slice* upper) {
  try {
    if (properties.comparator_name != kBytewiseComparatorName) return true;
    const auto it = properties.user_collected_properties.find(kRangeFilterPropertyName);
    if (it == properties.user_collected_properties.end()) return true;
    const std::string& bytes = it->second;
    const RangeFilterReader reader =
        RangeFilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::string_view lo, up;
    if (lower != nullptr) lo = std::string_view(lower->data(), lower->size());
    if (upper != nullptr) up = std::string_view(upper->data(), upper->size());
    return reader.MayContain(lower != nullptr ? &lo : nullptr, upper != nullptr ? &up : nullptr);
  } catch (...) {
    // (std::bad_alloc, opening the reader.) "May hold" costs the file's read, never a key; no
    // logger reaches a table filter, and RocksDB must not see an exception.
    return true;
  }
}

Status SkipEmptyFiles(ReadOptions* read_options) {
  return skip_detail::InstallSkipFilter(read_options, nullptr);
}

Status SkipEmptyFiles(ReadOptions* read_options, TableFilterHolder* holder) {
  if (holder == nullptr) return Status::InvalidArgument("SkipEmptyFiles: null TableFilterHolder");
  return skip_detail::InstallSkipFilter(read_options, &holder->filter_);
}

}  // namespace sstfilter
