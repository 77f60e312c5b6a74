// SPDX-License-Identifier: Apache-2.0
// sstfilter.LeveledBudget: an EventListener that keeps sstfilter.Leveled within its budget
// whatever RocksDB does with files.
//
// Why: a filter is fixed when its file is written. RocksDB moves files down unchanged ("trivial
// moves"), ingests files, and fills levels in proportions no model knows in advance (level 0 may
// hold a few percent of a tree's keys, where Monkey's shares say a millionth). Alone, the policy
// models the tree from what it builds (plugin/tree_history.h); filters that a move carried
// elsewhere, or a level fuller than modelled, then overspend (10.32 bits/key for a budget of 10
// in a 3M-key random tree, docs/filters.md).
//
// With this listener, as every flush and compaction begins and after every flush, compaction
// (trivial moves included) and ingestion, the policy knows each level's keys, filter bytes and key
// ranges as they are, the keys each running compaction is writing to its output level (its inputs
// count there, not where they were), and level 0 at its fullest lately. Each new filter is then
// allocated (core/level_allocation.h, AllocateShares) over the levels' real shares of the keys,
// level 0 at its fullest, for the filter probes each level receives per lookup, and for a budget
// that steers the tree back to the policy's: the
// budget less the tree's excess (what its levels below 0 spend beyond the allocation for the tree
// as it is), plus a correction that integrates the excess (plugin/tree_history.h,
// TreeHistory::Steer), within 0.5 and 1.25 times the budget. So the tree spends its budget when
// level 0 is full, and files that stay with more than their level's share (an ingested file with
// a rich filter, the moved files of an ordered tree) are paid for by the files written after them.
//
// The probes each level receives: first estimated from the files' key ranges, for lookups spread
// like the keys (every level of a random tree, about one level of an ordered one); then, as
// lookups come, counted by sstfilter's readers of the filters the policy built while the listener
// watched (a sample of 1 probe in 32, per file, summed per level as the files are now), and
// blended with the estimate by how many were counted. So lookups of present keys, which stop at
// the level holding them, and lookups that favour some key ranges (the newest keys of a time
// series) move the filters written next toward the levels they probe. A level's probes never fall
// below a quarter of its share of the keys: filters are fixed for their files' life, and lookups
// change. Within a level, a file that compaction writes in a hot key range (its files' counted
// probes per key above the level's) gets more bits, one in a cold range fewer.
//
// Cost: after each event, one GetLiveFilesMetaData (in memory) and, when some files of the
// default column family were written before the listener saw them (after a restart, once), one
// GetPropertiesOfAllTables: RocksDB's own table properties, in memory when max_open_files is -1
// (RocksDB's default), else read by RocksDB through the database's file system. The listener
// opens no file itself. Files of other column families written before it are measured as
// compactions read them (a listener has no handle on those column families); until then their
// keys count in their levels, and neither over nor under the budget. Per file the policy builds,
// two or three allocations (a few microseconds each: tiny beside a file's build). Per lookup, in
// each filter of a file whose probes are counted: a test of bits of the key's hash, and for 1
// probe in 32 a store to a counter.
//
// Each open of a database is a tree of its own (its name and DB::GetDbSessionId): databases that
// share a Logger, a policy object and this listener keep separate accounts, and a database
// reopened starts afresh. After a restart the listener knows no running compaction and no level 0
// history: until the first events, level 0 counts as it is. Files written before it are not
// counted (their filters' ids are not known): the estimate alone serves until files not counted
// hold less than a tenth of the keys, as compactions rewrite them. A compaction RocksDB abandons
// as it closes (it then skips OnCompactionCompleted) is forgotten with its session.
//
// Select it by name in DBOptions: "listeners=sstfilter.LeveledBudget" in an options string, or
// NewLeveledBudgetListener() in code (DBOptions::listeners). One listener serves any number of
// databases and column families; policies of other kinds ignore it.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/status.h>

#include <memory>
#include <string>

#include "sstfilter/export.h"

namespace sstfilter {

inline constexpr const char* kLeveledBudgetName = "sstfilter.LeveledBudget";

SSTFILTER_EXPORT std::shared_ptr<ROCKSDB_NAMESPACE::EventListener> NewLeveledBudgetListener();

// For tools that build filters for a database's files outside RocksDB (db_bench_ext's advisor):
// accounts for column family cf_name of `db` as the listener would (its live files' levels, keys
// and key ranges; no running compaction, no counted probes), with each level's filters as
// `policy`, an sstfilter.Leveled, makes them once every file is its own; and publishes that under
// info_log. Builders of `policy` whose FilterBuildingContext has that info_log and column family,
// made on a thread that is not writing a table for a database with the listener, then allocate for
// this tree as it is, at the policy's budget, with nothing to steer. Works on a database opened
// read-only, which no event reaches. InvalidArgument for another policy, or a tree with no keys.
SSTFILTER_EXPORT ROCKSDB_NAMESPACE::Status AccountTreeForAdvice(
    ROCKSDB_NAMESPACE::DB* db, const std::string& cf_name,
    const ROCKSDB_NAMESPACE::FilterPolicy& policy,
    const std::shared_ptr<ROCKSDB_NAMESPACE::Logger>& info_log);

}  // namespace sstfilter
