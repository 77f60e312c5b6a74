// SPDX-License-Identifier: Apache-2.0
// --benchmarks=advise: what each policy of --filter_uri would do on an existing database (--db),
// against the filters the database has.
//
// The database is opened read-only, with a logger that writes nowhere, so nothing under its path
// is written (RocksDB's read-only open takes no lock and rewrites no OPTIONS or MANIFEST file); it
// may be open in another process meanwhile. The default column family is advised on.
//
// For every live SST file, with its level and key range, the advisor reads the file's keys
// (SstFileReader: the keys a read sees, without tombstones) and builds each candidate's filter as
// that policy builds it for a file of that level (FilterBuildingContext: the level, the tree's
// level count, compaction style and bottommost level; RocksDB's policies through the same
// interface). One file's filters are in memory at a time.
//
// Absent keys: --absent_keys=FILE (one key per line, its bytes as they are; a key that is present
// is an error), or --reads of them made from the database's own keys: a sampled key with its last
// byte (or, failing that, its last two) changed, kept if the database does not hold it. So the
// keys have the database's lengths and prefixes.
//
// Each absent key follows RocksDB's read path over the file ranges: every level-0 file whose
// range holds it, then on each level below the one file whose range holds it. The advisor counts
// the filter probes, and each candidate's false positives, per level. The database's own filters
// answer the same keys through Get (RocksDB's per-level perf counters), as "live": for the policy
// the database already uses, the prediction equals what the live filters say, where the files
// hold no tombstones or range deletions.
//
// sstfilter.Leveled is advised as it builds with the sstfilter.LeveledBudget listener once the
// tree is all its own: over the tree's levels as they are (keys, key ranges), at its budget
// (AccountTreeForAdvice, include/sstfilter/leveled_budget.h). The readers' counts of where
// lookups go are not known to the advisor: the probes are the listener's estimate from the key
// ranges.
#pragma once

namespace db_bench_ext {

// Runs the advisor for the flags; prints its report (and --json); Fail()s on bad input.
void RunAdvisor();

}  // namespace db_bench_ext
