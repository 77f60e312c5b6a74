// SPDX-License-Identifier: Apache-2.0
#include "plugin/tree_history.h"

#include <algorithm>
#include <cstdio>

namespace sstfilter {

void KeyRange::Add(std::string_view key) {
  if (unbounded_) return;
  if (empty_) {
    smallest_.assign(key.data(), key.size());
    largest_.assign(key.data(), key.size());
    empty_ = false;
  } else if (key < smallest_) {
    smallest_.assign(key.data(), key.size());
  } else if (key > largest_) {
    largest_.assign(key.data(), key.size());
  }
}

bool KeyRange::Overlaps(const KeyRange& other) const {
  if (empty_ || other.empty_) return false;
  if (unbounded_ || other.unbounded_) return true;
  return !(largest_ < other.smallest_ || other.largest_ < smallest_);
}

bool KeyRange::Meets(const std::string& smallest, const std::string& largest) const {
  if (empty_) return false;
  if (unbounded_) return true;
  return !(largest_ < smallest || largest < smallest_);
}

void KeyRange::Bounds(std::string* smallest, std::string* largest) const {
  if (unbounded_) {
    smallest->clear();
    largest->assign(64, '\xff');
  } else {
    *smallest = smallest_;
    *largest = largest_;
  }
}

TreeId DatabaseTree(const std::string& db_name, const std::string& session,
                    const std::string& column_family) {
  return TreeId{"db:" + db_name, session, column_family};
}

TreeId LoggerTree(const void* logger, const std::string& column_family) {
  char address[32];
  snprintf(address, sizeof(address), "logger:%p", logger);
  return TreeId{address, "", column_family};
}

uint64_t TreeHistory::NewFile() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_file_++;
}

bool TreeHistory::Appends(const TreeId& tree, uint64_t file, const KeyRange& keys) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end()) return true;
  for (const Flush& f : it->second.flushes) {
    if (f.file != file && f.keys.Overlaps(keys)) return false;
  }
  return true;
}

bool TreeHistory::FlushesAppend(const TreeId& tree) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it == trees_.end()) return true;
  const std::deque<Flush>& flushes = it->second.flushes;
  const auto newest =
      std::find_if(flushes.rbegin(), flushes.rend(), [](const Flush& f) { return f.flushed; });
  if (newest == flushes.rend()) return true;
  return std::none_of(flushes.begin(), flushes.end(), [&](const Flush& f) {
    return f.flushed && &f != &*newest && f.keys.Overlaps(newest->keys);
  });
}

TreeHistory::Tree& TreeHistory::TreeLocked(const TreeId& tree) {
  return TreeEntry(trees_, tree, kMaxTrees);
}

void TreeHistory::Record(const TreeId& tree, uint64_t file, const KeyRange& keys, bool flushed) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<Flush>& flushes = TreeLocked(tree).flushes;
  for (Flush& f : flushes) {
    if (f.file == file) {
      f.keys = keys;  // the file's range so far (a partitioned filter finishes several times)
      return;
    }
  }
  flushes.push_back(Flush{file, keys, flushed});
  if (flushes.size() > kFlushesPerTree) flushes.pop_front();
}

TreeHistory::LevelSpan TreeHistory::RecordCompaction(const TreeId& tree, int level) {
  std::lock_guard<std::mutex> lock(mu_);
  LevelSpan& span = TreeLocked(tree).compactions;
  if (span.shallowest == 0 || level < span.shallowest) span.shallowest = level;
  if (level > span.deepest) span.deepest = level;
  return span;
}

double TreeHistory::Steer(const TreeId& tree, uint64_t accounts_changes, double excess,
                          double budget, double lowest_budget) {
  std::lock_guard<std::mutex> lock(mu_);
  Tree& t = TreeLocked(tree);
  const double highest = (kSteerHighest - 1) * budget;
  const double lowest = std::min(std::max(kSteerLowest * budget, lowest_budget) - budget, highest);
  auto output = [&] { return t.correction - kSteerProportion * excess; };
  if (accounts_changes != t.steered_changes) {
    t.steered_changes = accounts_changes;
    // No integrating while the output is already at the bound the excess pushes it to: the
    // integral would wind up there, and overshoot once the tree comes back (anti-windup).
    const bool pinned = (excess > 0 && output() <= lowest) || (excess < 0 && output() >= highest);
    if (!pinned) {
      t.correction = std::min(std::max(t.correction - kSteerGain * excess, lowest), highest);
    }
  }
  t.steered = budget + std::min(std::max(output(), lowest), highest);
  return t.steered;
}

double TreeHistory::Steered(const TreeId& tree, double budget) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  return it == trees_.end() || it->second.steered == 0 ? budget : it->second.steered;
}

bool TreeHistory::DrawsTheRicher(const TreeId& tree, double keys, double richer_fraction) {
  std::lock_guard<std::mutex> lock(mu_);
  Tree& t = TreeLocked(tree);
  t.richer_carry += keys * std::min(std::max(richer_fraction, 0.0), 1.0);
  if (t.richer_carry < keys / 2) return false;
  t.richer_carry -= keys;
  return true;
}

void TreeHistory::RecordBuilt(const TreeId& tree, int level, bool by_compaction,
                              const KeyRange& keys, uint64_t num_keys, uint64_t filter_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Tree& t = TreeLocked(tree);
  std::vector<BuiltFile>& built = t.built;
  if (by_compaction) {
    // Level 0 compacts into the shallowest level compactions reach (level 1, or with dynamic
    // level bytes the base level, with the levels between empty): there the inputs are every
    // level above.
    const int shallowest = level >= 1 ? t.compactions.shallowest : 0;
    const int inputs_from = level >= 1 && level <= shallowest ? 0 : level - 1;
    built.erase(std::remove_if(built.begin(), built.end(),
                               [&](const BuiltFile& f) {
                                 return f.level >= inputs_from && f.level <= level &&
                                        f.keys.Overlaps(keys);
                               }),
                built.end());
  }
  if (built.size() >= kBuiltFilesPerTree) built.clear();
  built.push_back({level, keys, num_keys, filter_bytes});
  // The accounts of the files now recorded, level 0 at its fullest over the window: made apart,
  // then swapped in, so that an allocation that fails leaves the last accounts whole.
  TreeAccounts accounts;
  accounts.changes = t.built_accounts.changes;
  size_t num_levels = 1;
  for (const BuiltFile& f : built)
    num_levels = std::max(num_levels, static_cast<size_t>(f.level) + 1);
  accounts.levels.assign(num_levels, LevelAccount{});
  std::vector<FileRange> ranges(built.size());
  for (size_t i = 0; i < built.size(); ++i) {
    const BuiltFile& f = built[i];
    LevelAccount& a = accounts.levels[f.level];
    a.keys += f.num_keys;
    a.filter_bytes += f.filter_bytes;
    if (f.filter_bytes > 0) {
      ++a.filter_files;
      a.filter_keys += f.num_keys;
    }
    ranges[i].level = ranges[i].level_now = f.level;
    ranges[i].keys = static_cast<double>(f.num_keys);
    f.keys.Bounds(&ranges[i].smallest, &ranges[i].largest);
  }
  const std::vector<double> probes = ProbesPerLevel(ranges, num_levels);
  for (size_t i = 0; i < num_levels && i < probes.size(); ++i)
    accounts.levels[i].probes = probes[i];
  if (!by_compaction && level == 0) ++accounts.changes;
  t.built_level0.push_back(accounts.levels[0]);
  if (t.built_level0.size() > TreeAccounts::kLevel0Window) t.built_level0.pop_front();
  for (const LevelAccount& l : t.built_level0) {
    if (l.keys >= accounts.level0_peak.keys) accounts.level0_peak = l;
  }
  t.built_accounts = std::move(accounts);
}

TreeAccounts TreeHistory::Built(const TreeId& tree) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  return it == trees_.end() ? TreeAccounts{} : it->second.built_accounts;
}

TreeHistory::LevelSpan TreeHistory::Compactions(const TreeId& tree) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  return it == trees_.end() ? LevelSpan() : it->second.compactions;
}

std::vector<TreeId> TreeHistory::TreesWith(const TreeId& tree) {
  std::lock_guard<std::mutex> lock(mu_);
  TreeLocked(tree);
  std::vector<TreeId> trees;
  trees.reserve(trees_.size());
  for (const auto& entry : trees_) trees.push_back(entry.first);
  return trees;
}

}  // namespace sstfilter
