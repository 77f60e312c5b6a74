// SPDX-License-Identifier: Apache-2.0
// db_bench_ext's flags, and the configuration they make once checked. Every check runs before any
// work starts, and a bad flag ends the run with one line on stderr and exit status 1.
#pragma once

#include <gflags/gflags.h>
#include <rocksdb/compression_type.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_partitioner.h>
#include <rocksdb/table_properties.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db_bench_ext/benchmarks.h"

DECLARE_string(benchmarks);
DECLARE_string(filter_uri);
DECLARE_int64(num);
DECLARE_int64(reads);
DECLARE_int32(key_size);
DECLARE_int32(value_size);
DECLARE_string(db);
DECLARE_bool(use_existing_db);
DECLARE_int32(threads);
DECLARE_int64(cache_size);
DECLARE_int32(bloom_bits);
DECLARE_bool(statistics);
DECLARE_int64(seed);
DECLARE_string(key_dist);
DECLARE_double(read_hit_ratio);
DECLARE_double(zipf_theta);
DECLARE_int32(duration);
DECLARE_string(options_file);
DECLARE_bool(cache_index_and_filter_blocks);
DECLARE_bool(pin_l0_filter_and_index_blocks_in_cache);
DECLARE_bool(partition_filters);
DECLARE_int64(metadata_block_size);
DECLARE_bool(decouple_partitioned_filters);
DECLARE_int32(format_version);
DECLARE_double(reads_per_write);
DECLARE_double(late_fraction);
DECLARE_int64(late_keys);
DECLARE_int64(write_buffer_size);
DECLARE_string(compression_type);
DECLARE_int32(num_levels);
DECLARE_int64(max_bytes_for_level_base);
DECLARE_double(max_bytes_for_level_multiplier);
DECLARE_int64(target_file_size_base);
DECLARE_int32(level0_file_num_compaction_trigger);
DECLARE_bool(level_compaction_dynamic_level_bytes);
DECLARE_string(compaction_style);
DECLARE_string(sst_partitioner_factory);
DECLARE_string(listeners);
DECLARE_bool(settled_fill);
DECLARE_bool(use_direct_reads);
DECLARE_bool(optimize_filters_for_hits);
DECLARE_int32(rounds);
DECLARE_int32(batch_size);
DECLARE_double(fp_rate);
DECLARE_string(json);
DECLARE_string(inspect_db);
DECLARE_string(absent_keys);
DECLARE_bool(absent_keys_hex);
DECLARE_string(plot);
DECLARE_string(range_filter);
DECLARE_int32(scan_length);
DECLARE_int64(key_spacing);

namespace db_bench_ext {

// The --filter_uri entry that means "no filter".
inline constexpr const char* kNoFilterUri = "none";

struct PolicyUnderTest {
  std::string uri;                                                // as given
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;  // null for kNoFilterUri
  // The --range_filter entry this run has ("" without --range_filter), and its collector
  // factory (null for kNoFilterUri).
  std::string range_filter;
  std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> range_collector;
  // How the reports name it: the uri, and the range filter if --range_filter was given.
  std::string Label() const { return range_filter.empty() ? uri : uri + " | " + range_filter; }
};

struct Config {
  std::vector<const Benchmark*> benchmarks;  // in --benchmarks order
  std::vector<PolicyUnderTest> policies;
  uint64_t num = 0, reads = 0;
  double zipf_theta = 0;        // the read benchmarks' Zipfian exponent; 0: uniform lookups
  bool zipf_scrambled = false;  // the Zipfian's hot keys spread over the key space
  ROCKSDB_NAMESPACE::CompressionType compression = ROCKSDB_NAMESPACE::kSnappyCompression;
  ROCKSDB_NAMESPACE::CompactionStyle compaction_style = ROCKSDB_NAMESPACE::kCompactionStyleLevel;
  std::shared_ptr<ROCKSDB_NAMESPACE::SstPartitionerFactory> partitioner;  // null: none
  std::vector<std::shared_ptr<ROCKSDB_NAMESPACE::EventListener>> listeners;
  // --options_file's DBOptions and default column family options; null without one.
  std::shared_ptr<const ROCKSDB_NAMESPACE::Options> options_file;
};

// Prints "db_bench_ext: <message>" on stderr and exits with status 1.
[[noreturn]] void Fail(const std::string& message);

// Before gflags parses argv: the value of each double flag given (--name=value, or --name value)
// must be one decimal number (sstfilter::ParseFiniteDecimal), where gflags' strtod would also take
// hexadecimal ("--zipf_theta=0x0.8" is 0.5 to it), "inf" and "nan". (Flags read from a --flagfile
// or the environment, --fromenv, are gflags' alone.)
void CheckDecimalFlags(int argc, char** argv);

// Checks every flag (failing at the first bad one), loads the policies and the partitioner, and
// makes sure the --db directory and the --json file can be written (and, with --use_existing_db,
// that the databases to read are there).
Config ValidateFlags();

// --benchmarks=advise's checks: refuses every flag the advisor does not use, and makes sure the
// --json file can be written.
void ValidateAdvisorFlags();

// The policies of --filter_uri, loaded (Fail()s naming a policy that cannot be).
std::vector<PolicyUnderTest> PoliciesFromFlags();

// The directory of the database of Config::policies[index], under --db.
std::string DatabasePath(size_t index);

}  // namespace db_bench_ext
