// SPDX-License-Identifier: Apache-2.0
// Which filter an SST file carries, read from its filter blocks: the family name they are stored
// under (which policies read them) and who wrote their bytes in which format. For an operator
// moving a database between RocksDB's filters and sstfilter's (DescribeFilters, inspect.h).
#pragma once

#include <rocksdb/options.h>
#include <rocksdb/slice.h>

#include <string>

namespace sstfilter {

// The format of one filter block's bytes: RocksDB's "rocksdb:legacy_bloom",
// "rocksdb:fast_local_bloom", "rocksdb:ribbon", "rocksdb:empty" or "rocksdb:unknown" (a marker
// its readers take as "may match"); sstfilter's "sstfilter:<kind>" (FilterKindName),
// "sstfilter:match_all" (what a build that failed writes: every key may match) or
// "sstfilter:unreadable" (sstfilter's trailer, but bytes no reader understands: "may match").
std::string FilterFormatOf(const ROCKSDB_NAMESPACE::Slice& block);

struct FileFilterFormat {
  // The compatibility name the file's filter blocks are stored under: kRocksDbCompatibilityName
  // (read by RocksDB's policies and by sstfilter's under compatibility=rocksdb),
  // kSstFilterCompatibilityName (by sstfilter's under compatibility=sstfilter only); "" where the
  // file has no filter block under either.
  std::string family;
  // FilterFormatOf its first filter block (a partitioned filter's first partition); "" if none.
  std::string format;
};

// The filter of the SST file at `path`, opened with SstFileReader under `options` (the file's
// column family's: its comparator), whose table factory is replaced by one that records the filter
// blocks RocksDB loads. Reads the file's filter blocks; writes nothing. An error if the file does
// not open.
ROCKSDB_NAMESPACE::Status ReadFileFilterFormat(const std::string& path,
                                               const ROCKSDB_NAMESPACE::Options& options,
                                               FileFilterFormat* out);

}  // namespace sstfilter
