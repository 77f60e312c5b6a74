// SPDX-License-Identifier: Apache-2.0
// sstfilter.Leveled's memory_budget option: a ceiling, in bytes, on the filters of every tree the
// policy builds for (the column families that share the policy object, in every database open in
// the process), given as bytes ("2G", RocksDB's size suffixes) or as a share of the block cache's
// capacity ("25%").
//
// How it is kept. The sstfilter.LeveledBudget listener counts each tree's keys; a new file's
// filters are those of the policy's allocation at the bits per key the budget buys over every key
// of those trees (level 0 as SumAccounts counts it), at most the policy's bits_per_key. The
// policy's steering (TreeHistory::Steer) answers what the files already written spend beyond
// that, from the listener's accounts, and the listener rewrites the files that spend the most
// (plugin/budget_rewrites.h): a filter is fixed for its file's life, and as a tree grows the
// files written earlier keep richer filters than the budget buys now. The rewrites come with
// compactions; a flush spends at most what the budget has left, down to half what it buys, for
// each file, or to less where that would take the filters of a flush of overlapping keys beyond
// the budget's overshoot (LeveledChooser::SpendAtMost, in leveled_chooser.h). Without the listener
// the policy cannot count the keys: it spends bits_per_key and says so in the LOG. docs/filters.md
// gives what it costs and the bounds.
#pragma once

#include <rocksdb/table.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "plugin/listener_channel.h"
#include "plugin/tree_history.h"

namespace sstfilter {

struct MemoryBudget {
  uint64_t bytes = 0;      // a ceiling in bytes; 0: none, or a share
  double cache_share = 0;  // of the block cache's capacity, in (0, 1]; 0: none

  bool Given() const { return bytes > 0 || cache_share > 0; }
  // "" (none), a whole number of bytes, "<n>K|M|G|T" (either case; n whole or decimal; powers of
  // 1024, as RocksDB's sizes), or "<x>%" (x in (0, 100], of the block cache's capacity). Anything
  // else (signs, spaces, exponents, hexadecimal) is an error whose message names the option.
  static Result<MemoryBudget> Parse(const std::string& text);
  // The text Parse reads back to this budget ("" when none).
  std::string ToString() const;
  // The ceiling for a table built with `table`: the bytes, or the share of its block cache's
  // capacity (an error when the table has no block cache).
  Result<uint64_t> BytesFor(const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table) const;
  bool operator==(const MemoryBudget& other) const {
    return bytes == other.bytes && cache_share == other.cache_share;
  }
};

// What the trees under one budget hold now, from the listener's accounts.
struct BudgetedTrees {
  std::vector<TreeId> trees;  // those with accounts
  double keys = 0;            // level 0 counted as SumAccounts says
  uint64_t filter_bytes = 0;  // of the live files measured, a running compaction's inputs too
  // Of those, the live files' below level 0 that no compaction is rewriting (a running
  // compaction's inputs count at its output level, level 0's among them).
  uint64_t settled_below_level0_bytes = 0;

  // Whether those files alone hold more than kBudgetLimit times `budget_bytes`: older files hold
  // the trees beyond the budget (a database switched to it from richer filters), which no file
  // written now can bring within it, only the listener's rewrites (plugin/budget_rewrites.h).
  bool SettledBeyond(double budget_bytes) const;
};
// Sums the accounts (Ledger::Global) of `trees`; those without accounts add nothing. Level 0's
// keys count as the budget must hold them, by what becomes of its files:
// - where a tree's flushes append (`history` says so, or is null), at its fullest lately: its
//   files move down whole and keep their filters for life, so each flush is written for the
//   tree that holds the flushes to come (a tree not leveled has no flush history: counted so);
// - otherwise at its keys now plus half of its fullest's excess over them, the midpoint:
//   compactions merge its files into the level below, and between two of them it fills from empty
//   to its fullest, so just after one the midpoint is its mean until the next. Counted at its
//   fullest, a settled tree holding few level-0 keys spends the rest of that share nowhere. A
//   flush that finds the budget spent gets what is left, down to half the bits per key the budget
//   buys, or, where its keys overlap the recent flushes (or the tree is universal, with levels
//   below level 0), down to what keeps the filters within kBudgetSwing past the budget
//   (LeveledChooser::SpendAtMost, LeveledPolicy::FlushLimit).
// A database closed while its logger lives on (one the application made, shared or kept) keeps
// its accounts until its logger goes or it reopens, and counts until then. May throw
// std::bad_alloc.
BudgetedTrees SumAccounts(const std::vector<TreeId>& trees, const TreeHistory* history);

// The bits per key that `bytes` buy over `keys` keys: at most `ceiling`, at least
// kMinBitsPerKey, rounded down to a sixteenth of a bit (allocations are cached by budget); the
// ceiling for no keys.
double BitsPerKeyWithin(uint64_t bytes, double keys, double ceiling);

}  // namespace sstfilter
