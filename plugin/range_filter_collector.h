// SPDX-License-Identifier: Apache-2.0
// The collector factory of sstfilter.RangeFilter (include/sstfilter/range_filter.h), registered in
// RocksDB's ObjectLibrary by plugin.cc: "sstfilter.RangeFilter" (16 bits per key) and
// "{id=sstfilter.RangeFilter;bits_per_key=12}" in table_properties_collectors.
#pragma once

#include <rocksdb/table_properties.h>

#include <atomic>
#include <memory>
#include <string>

#include "sstfilter/range_filter.h"

namespace sstfilter {

class RangeFilterCollectorFactory : public ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory {
 public:
  RangeFilterCollectorFactory();
  static const char* kClassName() { return kRangeFilterName; }
  const char* Name() const override { return kClassName(); }

  void set_bits_per_key(double bits_per_key) { bits_per_key_ = bits_per_key; }
  double bits_per_key() const { return bits_per_key_; }

  // Checks bits_per_key (4 to 48).
  ROCKSDB_NAMESPACE::Status PrepareOptions(
      const ROCKSDB_NAMESPACE::ConfigOptions& options) override;
  ROCKSDB_NAMESPACE::TablePropertiesCollector* CreateTablePropertiesCollector(
      ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory::Context context) override;
  // For the LOG: the id and the option.
  std::string ToString() const override;

 private:
  double bits_per_key_ = kDefaultRangeBitsPerKey;
  // Whether a collector of this factory has said, in its file's readable properties (which
  // RocksDB writes to the LOG), that the column family's keys are not in bytewise order.
  std::shared_ptr<std::atomic<bool>> told_not_bytewise_ = std::make_shared<std::atomic<bool>>();
};

}  // namespace sstfilter
