// SPDX-License-Identifier: Apache-2.0
#include "plugin/listener_channel.h"

#include <utility>

namespace sstfilter {

namespace {
// Set between a table's OnTableFileCreationStarted and OnTableFileCreated (TableInCreation).
thread_local TableInCreation table_in_creation;
thread_local bool has_table_in_creation = false;
}  // namespace

void SetTableInCreation(TableInCreation table) {
  table_in_creation = std::move(table);
  has_table_in_creation = true;
}

void ClearTableInCreation() { has_table_in_creation = false; }

TreeId TreeOfTableInCreation(const void* logger, const std::string& column_family) {
  if (has_table_in_creation && table_in_creation.logger == logger &&
      table_in_creation.tree.column_family == column_family) {
    return table_in_creation.tree;
  }
  return LoggerTree(logger, column_family);
}

Ledger& Ledger::Global() {
  static Ledger* const ledger = new Ledger();  // never destroyed: listeners may outlive statics
  return *ledger;
}

void Ledger::Publish(const TreeId& tree, const std::shared_ptr<const void>& logger,
                     TreeAccounts accounts) {
  std::lock_guard<std::mutex> lock(mu_);
  TreeEntry(trees_, tree, TreeHistory::kMaxTrees) = Entry{logger, std::move(accounts)};
}

bool Ledger::Get(const TreeId& tree, TreeAccounts* accounts) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end() || it->second.logger.expired()) return false;
  *accounts = it->second.accounts;
  return true;
}

BudgetTargets& BudgetTargets::Global() {
  static BudgetTargets* const targets = new BudgetTargets;  // never destroyed: used at exit
  return *targets;
}

void BudgetTargets::SetBudget(const TreeId& tree, const Target& budget) {
  std::lock_guard<std::mutex> lock(mu_);
  Target& target = TreeEntry(trees_, tree, TreeHistory::kMaxTrees);
  target.bits_per_key = budget.bits_per_key;
  target.budget_bytes = budget.budget_bytes;
  target.history = budget.history;
  target.model_levels = budget.model_levels;
  target.size_ratio = budget.size_ratio;
}

uint64_t BudgetTargets::ForgetResidualExcess(const TreeId& tree) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end()) return 0;
  it->second.residual_excess = std::numeric_limits<double>::quiet_NaN();
  return ++it->second.residual_ticket;
}

void BudgetTargets::SetResidualExcess(const TreeId& tree, double bits_per_key, uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it != trees_.end() && it->second.residual_ticket == ticket) {
    it->second.residual_excess = bits_per_key;
  }
}

bool BudgetTargets::Get(const TreeId& tree, Target* target) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end()) return false;
  *target = it->second;
  return true;
}

namespace {
thread_local bool rewriting_for_budget = false;
thread_local bool rewrite_keeps_the_mix = false;
}  // namespace

bool RewritingForBudget() { return rewriting_for_budget; }
bool RewriteKeepsTheMix() { return rewrite_keeps_the_mix; }
RewritingForBudgetScope::RewritingForBudgetScope(bool keeps_the_mix) {
  rewriting_for_budget = true;
  rewrite_keeps_the_mix = keeps_the_mix;
}
RewritingForBudgetScope::~RewritingForBudgetScope() {
  rewriting_for_budget = false;
  rewrite_keeps_the_mix = false;
}

}  // namespace sstfilter
