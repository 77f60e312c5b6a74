// SPDX-License-Identifier: Apache-2.0
// sstfilter's RocksDB plugin: filter policies selected by string.
//
//   sstfilter.Bloom:10                         blocked Bloom filter, 10 bits per key
//   {id=sstfilter.Bloom;fp_rate=0.01;layout=standard}
//   sstfilter.Cuckoo:12                        cuckoo filter, at most 12 bits per key
//   {id=sstfilter.Cuckoo;fp_rate=0.001}        cuckoo filter for a 0.1% false-positive rate
//   sstfilter.Fuse:10                          binary fuse filter, at most 10 bits per key for
//                                              large files (9-bit fingerprints)
//   {id=sstfilter.Fuse;fp_rate=0.01}           binary fuse filter for a 1% rate (7-bit
//                                              fingerprints, 0.78%; about 7.5 bits per key)
//   sstfilter.BumpedRibbon:10                  bumped Ribbon filter, at most 10 bits per key:
//                                              the smallest at every size from ~3,000 keys
//   {id=sstfilter.BumpedRibbon;fp_rate=0.01}   bumped Ribbon filter for a 1% rate (7-bit
//                                              fingerprints, about 7.04 bits per key)
//   sstfilter.Leveled:10                       10 bits per key over the whole tree, spent per
//                                              level as Monkey prescribes (size_ratio=10,
//                                              num_levels=0: the levels the tree has)
//   {id=sstfilter.Leveled;memory_budget=2G}    at most 2 GiB of filters (or 25% of the block
//                                              cache) over every tree the policy serves; needs
//                                              the sstfilter.LeveledBudget listener
//
// Each policy takes exactly one of bits_per_key (a space budget, in [0.01, 100]) or fp_rate (a
// target rate, in (0, 1)), but sstfilter.Leveled, which takes bits_per_key, memory_budget, or both
// (bits_per_key then a ceiling); sstfilter.Bloom also takes layout=blocked (default) or standard.
// The names work wherever RocksDB accepts a filter policy: FilterPolicy::CreateFromString,
// GetBlockBasedTableOptionsFromString ("filter_policy=..."), OPTIONS files, and RocksDB's own
// tools with libsstfilter.so preloaded.
//
// Every sstfilter policy takes compatibility=rocksdb (the default) or compatibility=sstfilter,
// the family whose filters it reads and whose name its files' filter blocks carry:
// - rocksdb: RocksDB's built-in family ("rocksdb.BuiltinBloomFilter"). The policy reads the
//   filters of RocksDB's bloomfilter and ribbonfilter (through a built-in policy's
//   GetFilterBitsReader) as well as every sstfilter filter, so a database switched from RocksDB's
//   filters keeps every old file filtered; and RocksDB's own policies read sstfilter's filters as
//   "may match" for every key (docs/format.md, the trailer's marker), so a database switched back
//   answers right, with those files unfiltered until compactions rewrite them.
// - sstfilter: the family of sstfilter releases before 0.2 ("sstfilter"), for databases they
//   wrote: their files' filters are read, and RocksDB's are not.
// Within a family any policy reads the filters any other wrote, so a database whose policy changes
// from Bloom to Cuckoo keeps using the filters in its older files.
//
// The library also registers an SstPartitionerFactory, "sstfilter.NoTrivialMove"
// (no_trivial_move.h): it makes RocksDB rewrite files instead of moving them down a level
// unchanged, so that every file carries the filter sstfilter.Leveled allots to its level; and an
// EventListener, "sstfilter.LeveledBudget" (leveled_budget.h): it tells sstfilter.Leveled each
// level's keys and filter bytes, so that the policy holds its budget whatever RocksDB does with
// files. And a TablePropertiesCollectorFactory, "sstfilter.RangeFilter" (range_filter.h): each
// SST file's range filter, for iterators that skip files.
//
// Registration: loading libsstfilter.so registers all of these in ObjectLibrary::Default(). Code
// that keeps its own ObjectLibrary calls sstfilter_register on it.
#pragma once

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/status.h>
#include <rocksdb/utilities/object_registry.h>

#include <memory>
#include <string>

#include "sstfilter/export.h"

// Registers sstfilter's policies, partitioner, listener and range-filter collector in `library`;
// the registrar signature RocksDB plugins use. Returns the number of factories added (0 if the
// library already had them).
extern "C" SSTFILTER_EXPORT int sstfilter_register(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                                   const std::string& arg);

namespace sstfilter {

inline constexpr const char* kBloomPolicyName = "sstfilter.Bloom";
inline constexpr const char* kCuckooPolicyName = "sstfilter.Cuckoo";
inline constexpr const char* kLeveledPolicyName = "sstfilter.Leveled";
inline constexpr const char* kFusePolicyName = "sstfilter.Fuse";
inline constexpr const char* kBumpedRibbonPolicyName = "sstfilter.BumpedRibbon";
// sstfilter.BumpedRibbon's earlier name, still accepted wherever a name is read (code, option
// strings, the OPTIONS files of existing databases); the policy then names itself
// sstfilter.BumpedRibbon, and the OPTIONS files RocksDB writes afterwards carry that name.
inline constexpr const char* kBumpedRibbonFormerPolicyName = "sstfilter.Ribbon";
// The CompatibilityName of an sstfilter policy, and so the suffix of the SST metaindex entry of its
// filters: RocksDB's built-in family's ("fullfilter.rocksdb.BuiltinBloomFilter",
// "partitionedfilter.rocksdb.BuiltinBloomFilter") under compatibility=rocksdb, the default; or
// under compatibility=sstfilter ("fullfilter.sstfilter", "partitionedfilter.sstfilter").
inline constexpr const char* kRocksDbCompatibilityName = "rocksdb.BuiltinBloomFilter";
inline constexpr const char* kSstFilterCompatibilityName = "sstfilter";

// ConfigOptions that report what RocksDB's defaults silently drop: an unknown name, option or value
// (a plugin that is not loaded) is an error naming it. Use them to load OPTIONS files
// (LoadLatestOptions) and option strings. All three settings count: with input_strings_escaped
// true (RocksDB's default), a misspelt filter_policy inside block_based_table_factory={...} still
// becomes no filter without an error (RocksDB 7.8.3 and 9.11.2).
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::ConfigOptions StrictConfigOptions();

// Creates any filter policy RocksDB knows (sstfilter's or RocksDB's own) from a string, strictly:
// an unknown name, an unknown option or a bad value is an error naming it, never a silent "no
// filter", and never an exception (RocksDB's own factories may throw on a bad value; that is an
// InvalidArgument here). Prefer it to FilterPolicy::CreateFromString with default ConfigOptions.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status NewFilterPolicy(
    const std::string& uri, std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy);

}  // namespace sstfilter
