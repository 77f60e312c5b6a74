// SPDX-License-Identifier: Apache-2.0
// What the sstfilter.LeveledBudget listener (plugin/leveled_budget.cc) and the sstfilter.Leveled
// policy (plugin/leveled_policy.cc) tell each other. RocksDB hands a filter policy no listener
// and a listener no policy, and the two may live in separate OPTIONS lines: so they meet in
// process-wide state, all of it here, each piece keyed by tree (TreeId, tree_history.h) or by
// thread.
//
//   what              writer -> reader                    key      forgotten                lock
//   TableInCreation   listener -> policy, per table      thread   at OnTableFileCreated    none
//   Ledger            listener -> policy, per account    tree     a tree whose logger      Ledger's
//                                                                 died reads as none; the
//                                                                 others below
//   BudgetTargets     policy -> listener (bits_per_key,  tree     another session of its   its own
//                     the budget's bytes and trees)               database and column
//                     listener -> policy (residual)               family is written (it is
//                                                                 closed: TreeEntry); past
//                                                                 kMaxTrees, all
//   RewritingForBudget listener -> policy, per rewrite   thread   at the rewrite's end     none
//
// The readers' probe counts reach the listener apart from this, through the filter blocks
// themselves (plugin/probe_counts.h: ProbeRegistry, keyed by block id, held weakly).
//
// The singletons are made on first use and never destroyed: listeners and policies may outlive
// static destructors (a database closed at exit). Each lock is taken alone, never while holding
// another of these. A tree is a database's session and column family with the listener, a
// logger's address and column family without it (TreeOfTableInCreation): a reopened database is
// a new tree, and its accounts start over. No RocksDB types.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "plugin/tree_history.h"

namespace sstfilter {

// The table the calling thread is writing, as the listener heard of it (OnTableFileCreationStarted,
// which RocksDB calls on the thread that then builds the table, before its filter builder is made;
// cleared by OnTableFileCreated): its tree, and the database's logger, which a policy compares
// with its FilterBuildingContext's before trusting the rest.
struct TableInCreation {
  TreeId tree;
  const void* logger = nullptr;
};
void SetTableInCreation(TableInCreation table);
void ClearTableInCreation();
// The tree of the table being built for a column family logging to `logger`: the listener's, if it
// named one for this thread with that logger and column family, else LoggerTree. May throw
// std::bad_alloc.
TreeId TreeOfTableInCreation(const void* logger, const std::string& column_family);

// The accounts of every tree that the sstfilter.LeveledBudget listener watches (plugin/
// leveled_budget.h), for every sstfilter.Leveled policy to read: one per process, thread-safe,
// bounded like TreeHistory.
//
// A tree of a logger (LoggerTree: the advisor's, a read-only database's) is named by an address
// that a logger made after this one dies may reuse: so the accounts hold the logger weakly
// (`logger`, the database's DBOptions::info_log), and a tree whose logger is gone has none.
class Ledger {
 public:
  static Ledger& Global();
  void Publish(const TreeId& tree, const std::shared_ptr<const void>& logger,
               TreeAccounts accounts);
  // Whether the tree has accounts (then in *accounts). May throw std::bad_alloc.
  bool Get(const TreeId& tree, TreeAccounts* accounts) const;

 private:
  struct Entry {
    std::weak_ptr<const void> logger;
    TreeAccounts accounts;
  };
  mutable std::mutex mu_;
  std::map<TreeId, Entry> trees_;
};

// What the policy and the listener tell each other of each tree under a memory budget: one per
// process, thread-safe, bounded like the Ledger.
class BudgetTargets {
 public:
  struct Target {
    // What the budget buys now, as its policy last computed it (LeveledPolicy::TreeBitsPerKey).
    double bits_per_key = 0;
    // The budget in bytes, and the policy's record of the trees it spans (expired once the
    // policy is gone): what the trees hold against it (plugin/budget_rewrites.h).
    uint64_t budget_bytes = 0;
    std::weak_ptr<TreeHistory> history;
    // The policy's num_levels model (0: none) and its size ratio: where given, the tree's files
    // take the model's filters, not the accounts' shares (LeveledPolicy::PlaceInModel), and the
    // rewrites plan with them (ModelAllocation). The policy's, so the same for every tree under
    // its budget.
    int model_levels = 0;
    double size_ratio = 0;
    // What the tree's files below level 0 spend beyond their levels' shares and the listener's
    // rewrites leave (PlanRewrites), per key of those levels, once every rewrite of the last plan
    // is done, none if it chose none; or as a compaction begins, while older files hold the tree
    // beyond its budget (PlanAsACompactionBegins). NaN where the last event made no plan (the
    // accounts within the shares, an ordered tree within its budget's bytes, writes waiting,
    // another rewrite running) or its rewrites stopped: the steering answers its own excess.
    double residual_excess = std::numeric_limits<double>::quiet_NaN();
    uint64_t residual_ticket = 0;  // ForgetResidualExcess's count
  };
  static BudgetTargets& Global();
  // Sets the fields above residual_excess.
  void SetBudget(const TreeId& tree, const Target& budget);
  // Sets the residual excess to NaN, as an event begins its plan, and returns the ticket that
  // SetResidualExcess takes from that plan: a plan finished after another event forgot the
  // residual again was made from older accounts, and sets nothing.
  uint64_t ForgetResidualExcess(const TreeId& tree);
  void SetResidualExcess(const TreeId& tree, double bits_per_key, uint64_t ticket);
  bool Get(const TreeId& tree, Target* target) const;

 private:
  mutable std::mutex mu_;
  std::map<TreeId, Target> trees_;
};

// Whether the calling thread is rewriting a file for a memory budget (RewriteFilesOverBudget: its
// DB::CompactFiles, one subcompaction, builds the new file on this thread).
bool RewritingForBudget();
// Whether the calling thread's rewrite for the budget keeps its level's mix of two filters rather
// than take the leaner (KeepsItsLevelsMix, budget_rewrites.h).
bool RewriteKeepsTheMix();
// Marks the calling thread as rewriting for the budget while it lives, keeping its level's mix
// or not.
class RewritingForBudgetScope {
 public:
  explicit RewritingForBudgetScope(bool keeps_the_mix);
  ~RewritingForBudgetScope();
  RewritingForBudgetScope(const RewritingForBudgetScope&) = delete;
  RewritingForBudgetScope& operator=(const RewritingForBudgetScope&) = delete;
};

}  // namespace sstfilter
