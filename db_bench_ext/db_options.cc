// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/db_options.h"

#include <gflags/gflags.h>
#include <rocksdb/cache.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <algorithm>

#include "compat/rocksdb_api.h"
#include "sstfilter/range_filter.h"

namespace db_bench_ext {

namespace {

// Without an OPTIONS file every option flag applies (its default is db_bench_ext's); with one,
// only those given on the command line do: the file is the user's configuration, and a default of
// this tool must not quietly replace a setting of theirs (stock db_bench's --options_file ignores
// most option flags instead, given or not).
bool Applies(bool from_file, const char* flag) {
  return !from_file || !gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
}

// The tree's flags: memtables, levels, files, compaction, reads.
void ApplyTreeFlags(const Config& config, bool from_file, ROCKSDB_NAMESPACE::Options* options) {
  auto applies = [from_file](const char* flag) { return Applies(from_file, flag); };
  if (applies("write_buffer_size")) {
    options->write_buffer_size = static_cast<size_t>(FLAGS_write_buffer_size);
  }
  // A settled fill flushes by itself (DbRunner::Fill); RocksDB's own flushes, which come at a
  // moment that depends on memtable overhead and timing, must not come first.
  if (FLAGS_settled_fill) options->write_buffer_size *= 4;
  if (applies("compression_type")) options->compression = config.compression;
  if (applies("num_levels")) options->num_levels = FLAGS_num_levels;
  if (applies("max_bytes_for_level_base")) {
    options->max_bytes_for_level_base = static_cast<uint64_t>(FLAGS_max_bytes_for_level_base);
  }
  if (applies("max_bytes_for_level_multiplier")) {
    options->max_bytes_for_level_multiplier = FLAGS_max_bytes_for_level_multiplier;
  }
  if (applies("target_file_size_base")) {
    options->target_file_size_base = static_cast<uint64_t>(FLAGS_target_file_size_base);
  }
  if (applies("level0_file_num_compaction_trigger")) {
    options->level0_file_num_compaction_trigger = FLAGS_level0_file_num_compaction_trigger;
  }
  if (applies("level_compaction_dynamic_level_bytes")) {
    options->level_compaction_dynamic_level_bytes = FLAGS_level_compaction_dynamic_level_bytes;
  }
  if (applies("compaction_style")) options->compaction_style = config.compaction_style;
  if (applies("sst_partitioner_factory")) options->sst_partitioner_factory = config.partitioner;
  if (applies("listeners")) options->listeners = config.listeners;
  if (applies("use_direct_reads")) options->use_direct_reads = FLAGS_use_direct_reads;
  if (applies("optimize_filters_for_hits")) {
    options->optimize_filters_for_hits = FLAGS_optimize_filters_for_hits;
  }
}

// The table's flags: the block cache and what it holds, partitions, the format.
void ApplyTableFlags(bool from_file, ROCKSDB_NAMESPACE::BlockBasedTableOptions* table) {
  auto applies = [from_file](const char* flag) { return Applies(from_file, flag); };
  table->block_cache = ROCKSDB_NAMESPACE::NewLRUCache(static_cast<size_t>(FLAGS_cache_size));
  if (applies("cache_index_and_filter_blocks")) {
    table->cache_index_and_filter_blocks = FLAGS_cache_index_and_filter_blocks;
  }
  if (applies("pin_l0_filter_and_index_blocks_in_cache")) {
    table->pin_l0_filter_and_index_blocks_in_cache = FLAGS_pin_l0_filter_and_index_blocks_in_cache;
  }
  if (applies("partition_filters")) {
    table->partition_filters = FLAGS_partition_filters;
    // RocksDB partitions filters only under the two-level index.
    if (FLAGS_partition_filters) {
      table->index_type = ROCKSDB_NAMESPACE::BlockBasedTableOptions::kTwoLevelIndexSearch;
    }
  }
  if (applies("decouple_partitioned_filters")) {
    // ValidateFlags refused the flag where this RocksDB does not have the option.
    sstfilter::compat::SetDecouplePartitionedFilters(table, FLAGS_decouple_partitioned_filters);
  }
  if (applies("metadata_block_size")) {
    table->metadata_block_size = static_cast<uint64_t>(FLAGS_metadata_block_size);
  }
  if (FLAGS_format_version >= 0) {
    table->format_version = static_cast<uint32_t>(FLAGS_format_version);
  }
}

// --range_filter replaces an OPTIONS file's range filter collector (and "none" removes it).
void SetRangeFilterCollector(const PolicyUnderTest& policy, ROCKSDB_NAMESPACE::Options* options) {
  if (policy.range_filter.empty()) return;
  auto& collectors = options->table_properties_collector_factories;
  collectors.erase(std::remove_if(collectors.begin(), collectors.end(),
                                  [](const auto& f) {
                                    return f != nullptr &&
                                           std::string(f->Name()) == sstfilter::kRangeFilterName;
                                  }),
                   collectors.end());
  if (policy.range_collector != nullptr) collectors.push_back(policy.range_collector);
}

}  // namespace

ROCKSDB_NAMESPACE::Options DatabaseOptions(const Config& config, const PolicyUnderTest& policy) {
  const bool from_file = config.options_file != nullptr;
  ROCKSDB_NAMESPACE::Options options;
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table;
  if (from_file) {
    options = *config.options_file;
    // Everything is written under --db: never to the paths of the database the file came from.
    options.wal_dir.clear();
    options.db_log_dir.clear();
    options.db_paths.clear();
    options.cf_paths.clear();
    table = *options.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
  } else {
    options.IncreaseParallelism(2);
  }
  // --use_existing_db reads what an earlier run wrote: a database missing is an error, not an
  // empty one made on the spot.
  options.create_if_missing = !FLAGS_use_existing_db;
  options.error_if_exists = false;
  options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
  ApplyTreeFlags(config, from_file, &options);
  SetRangeFilterCollector(policy, &options);
  table.filter_policy = policy.policy;
  ApplyTableFlags(from_file, &table);
  options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
  return options;
}

}  // namespace db_bench_ext
