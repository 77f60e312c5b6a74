// SPDX-License-Identifier: Apache-2.0
// Which SST files of a database carry which filter.
//
// RocksDB silently drops a filter policy it cannot load (for example when libsstfilter.so was not
// linked or preloaded), and a read-write open then rewrites the OPTIONS file without it: from then
// on new files get no filter, and nothing fails. And a database moving between RocksDB's filters
// and sstfilter's has files of both for as long as compactions take to rewrite it. These functions
// report, for each live SST file, the filter policy that built it (from the files' table
// properties) and, read from its filter blocks, which family's name they carry and in which
// format, so that the loss, or the migration, can be seen.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/status.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sstfilter/export.h"

namespace sstfilter {

struct SstFilterInfo {
  std::string column_family = ROCKSDB_NAMESPACE::kDefaultColumnFamilyName;
  std::string file;         // file name, e.g. "000012.sst"
  int level = -1;           // LSM level
  std::string policy_name;  // TableProperties::filter_policy_name; empty: no filter
  uint64_t filter_bytes = 0;
  uint64_t filter_entries = 0;
  uint64_t num_entries = 0;  // keys (entries) in the file
  // Read from the filter blocks (ReadFilterFormats; empty until then, and where the file has no
  // filter block): the compatibility name they are stored under, "rocksdb.BuiltinBloomFilter"
  // (read by RocksDB's policies and by sstfilter's under compatibility=rocksdb, the default) or
  // "sstfilter" (by sstfilter's under compatibility=sstfilter only); and the format of the first,
  // "rocksdb:fast_local_bloom", "rocksdb:ribbon", "rocksdb:legacy_bloom", "sstfilter:<kind>",
  // "sstfilter:match_all" (a filter that matches every key: written for a set the allocation
  // gives no filter, or by a build that failed) or "sstfilter:unreadable" (docs/filters.md,
  // "Moving an existing database").
  std::string filter_family;
  std::string filter_format;
  // Whether the policy that wrote the file is one of sstfilter's, and the file has a filter (by its
  // table properties; which policies read it, filter_family says).
  SSTFILTER_EXPORT bool has_sstfilter_filter() const;
};

// The filters of every live SST file of the column families of `handles` of an open database,
// from their table properties: the default column family's files first, then each other's in
// order of name, each by level and file name. Only a column family's handle gives its files' table
// properties, so without it a file's filter is unknown, and its files are not listed.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status DescribeFilters(
    ROCKSDB_NAMESPACE::DB* db, const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>& handles,
    std::vector<SstFilterInfo>* files);
// The same for the default column family.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status DescribeFilters(ROCKSDB_NAMESPACE::DB* db,
                                                           std::vector<SstFilterInfo>* files);

// Fills the filter_family and filter_format of each file that has a filter, reading its filter
// blocks (each file opened on its own with its column family's options where `handles` has the
// column family, else with the default column family's). A file that cannot be read keeps them
// empty; the first such error is returned after the others are read.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status ReadFilterFormats(
    ROCKSDB_NAMESPACE::DB* db, std::vector<SstFilterInfo>* files,
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>& handles = {});

// Both for a database on disk, every column family, opened read-only with its own OPTIONS file (a
// read-only open never rewrites it); a file whose filter cannot be read is reported without its
// format. Loading the OPTIONS file strictly, it fails if that file names a policy that cannot be
// loaded here.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status DescribeFilters(const std::string& db_path,
                                                           std::vector<SstFilterInfo>* files);

// A printable report: a line per file (outside the default column family named
// "<column family>/<file>"); per level, its files and keys by filter (FormatFiltersByLevel); and
// a summary naming the files without an sstfilter filter.
SSTFILTER_EXPORT std::string FormatFilterReport(const std::vector<SstFilterInfo>& files);

// A line per level ("level 6:"; outside the default column family "column family <name>, level
// 6:"): its files and keys of each filter format ("(none)" where a file has no filter;
// "[sstfilter]" after one stored under the name "sstfilter"), then, if any file's filter carries
// the name "sstfilter", a line saying which policies read those: what a database moving between
// RocksDB's filters and sstfilter's has left to rewrite.
SSTFILTER_EXPORT std::string FormatFiltersByLevel(const std::vector<SstFilterInfo>& files);

// sstfilter.Leveled's memory_budget as the policy is configured (docs/filters.md, "A memory budget
// in bytes"): bytes, or a share of the block cache. Both 0 for a policy without one (any other).
struct MemoryBudgetOption {
  uint64_t bytes = 0;
  double cache_share = 0;  // in (0, 1]
};
SSTFILTER_EXPORT MemoryBudgetOption
FilterMemoryBudget(const ROCKSDB_NAMESPACE::FilterPolicy& policy);

// A column family's filter policy, its memory budget, and what its live files' filters spend.
struct FilterBudgetInfo {
  std::string column_family;
  std::string policy;  // the filter policy's name; empty: none
  MemoryBudgetOption budget;
  uint64_t filter_bytes = 0;  // of the column family's live SST files
};

// Each column family's, for a database on disk, opened read-only with its own OPTIONS file (as
// DescribeFilters opens it). Column families that share one policy object in the process that
// wrote them share its budget; an OPTIONS file cannot say so, and each gets its own here. Nor does
// it keep a block cache's capacity: a share is reported as a share.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status DescribeFilterBudgets(
    const std::string& db_path, std::vector<FilterBudgetInfo>* budgets);

// A line per column family with a budget ("" if none has one).
SSTFILTER_EXPORT std::string FormatBudgetReport(const std::vector<FilterBudgetInfo>& budgets);

}  // namespace sstfilter
