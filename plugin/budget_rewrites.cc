// SPDX-License-Identifier: Apache-2.0
#include "plugin/budget_rewrites.h"

#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>

#include "plugin/bits_adapters.h"
#include "plugin/tree_model.h"

namespace sstfilter {

BudgetTargets& BudgetTargets::Global() {
  static BudgetTargets* const targets = new BudgetTargets;  // never destroyed: used at exit
  return *targets;
}

void BudgetTargets::SetBitsPerKey(const TreeId& tree, double bits_per_key) {
  std::lock_guard<std::mutex> lock(mu_);
  TreeEntry(trees_, tree, TreeHistory::kMaxTrees).bits_per_key = bits_per_key;
}

void BudgetTargets::SetResidualExcess(const TreeId& tree, double bits_per_key) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = trees_.find(tree);
  if (it != trees_.end()) it->second.residual_excess = bits_per_key;
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
}  // namespace

bool RewritingForBudget() { return rewriting_for_budget; }

namespace {

// A file's spend against its level's share, in bits; false for a file the shares do not cover.
struct Spend {
  double bits = 0, share = 0;
};
bool SpendOf(const FileSpend& f, const std::vector<double>& level_bits, Spend* spend) {
  if (f.level < 1 || static_cast<size_t>(f.level) >= level_bits.size()) return false;
  spend->bits = 8 * static_cast<double>(f.filter_bytes);
  spend->share = level_bits[f.level] * static_cast<double>(f.filter_entries);
  return true;
}
bool Rewritable(const FileSpend& f, const Spend& spend, double ratio = kRewriteRatio) {
  return f.filter_entries > 0 && spend.bits >= ratio * spend.share;
}

}  // namespace

std::vector<size_t> ChooseRewrites(const std::vector<FileSpend>& files,
                                   const std::vector<double>& level_bits, size_t max_files) {
  double spent = 0, share = 0;
  std::vector<double> excess(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    Spend f;
    if (!SpendOf(files[i], level_bits, &f)) continue;
    spent += f.bits;
    share += f.share;
    excess[i] = f.bits - f.share;
  }
  std::vector<size_t> chosen;
  if (!(spent > kRewriteAbove * share)) return chosen;
  const double ratio = spent > kBudgetLimit * share ? kRewriteAbove : kRewriteRatio;
  std::vector<size_t> candidates;
  for (size_t i = 0; i < files.size(); ++i) {
    Spend f;
    if (SpendOf(files[i], level_bits, &f) && Rewritable(files[i], f, ratio)) {
      candidates.push_back(i);
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](size_t a, size_t b) { return excess[a] > excess[b]; });
  double covered = 0;
  for (const size_t i : candidates) {
    if (chosen.size() >= max_files || covered >= spent - share) break;
    chosen.push_back(i);
    covered += excess[i];
  }
  return chosen;
}

double ResidualExcess(const std::vector<FileSpend>& files, const std::vector<double>& level_bits) {
  double excess = 0, keys = 0;
  for (const FileSpend& file : files) {
    Spend f;
    if (!SpendOf(file, level_bits, &f)) continue;
    keys += static_cast<double>(file.filter_entries);
    if (!Rewritable(file, f)) excess += f.bits - f.share;
  }
  return keys > 0 ? excess / keys : 0;
}

namespace {

// The default column family's live files below level 0 with their filters, those no compaction
// is rewriting.
std::vector<FileSpend> FilesOf(ROCKSDB_NAMESPACE::DB* db) {
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  if (!db->GetPropertiesOfAllTables(db->DefaultColumnFamily(), &props).ok()) return {};
  std::map<std::string, const ROCKSDB_NAMESPACE::TableProperties*> by_name;
  for (const auto& [path, p] : props) {
    if (p != nullptr) by_name[std::filesystem::path(path).filename().string()] = p.get();
  }
  std::vector<FileSpend> files;
  for (const auto& f : live) {
    if (f.column_family_name != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName || f.level < 1 ||
        f.being_compacted) {
      continue;
    }
    const auto it = by_name.find(std::filesystem::path(f.name).filename().string());
    if (it == by_name.end()) continue;
    files.push_back({f.name, f.level, it->second->filter_size, it->second->num_filter_entries});
  }
  return files;
}

}  // namespace

size_t RewriteFilesOverBudget(ROCKSDB_NAMESPACE::DB* db, const TreeId& tree) {
  try {
    BudgetTargets::Target target;
    TreeAccounts accounts;
    if (tree.column_family != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName ||
        !BudgetTargets::Global().Get(tree, &target) || !Ledger::Global().Get(tree, &accounts)) {
      return 0;
    }
    const double bits_per_key = target.bits_per_key;
    const Result<std::vector<double>> level_bits = SteadyBitsPerKey(accounts, bits_per_key);
    if (!level_bits.ok()) return 0;
    const std::vector<FileSpend> files = FilesOf(db);
    BudgetTargets::Global().SetResidualExcess(tree, ResidualExcess(files, level_bits.value()));
    size_t rewritten = 0;
    ROCKSDB_NAMESPACE::CompactionOptions options;
    // The column family's compression for the level, not CompactionOptions' own default.
    options.compression = ROCKSDB_NAMESPACE::kDisableCompressionOption;
    const std::shared_ptr<ROCKSDB_NAMESPACE::Logger> log = db->GetDBOptions().info_log;
    for (const size_t i : ChooseRewrites(files, level_bits.value(), kMaxRewritesPerEvent)) {
      const FileSpend& f = files[i];
      rewriting_for_budget = true;
      const ROCKSDB_NAMESPACE::Status s =
          db->CompactFiles(options, db->DefaultColumnFamily(), {f.name}, f.level);
      rewriting_for_budget = false;
      char line[256];
      snprintf(line, sizeof(line),
               "memory_budget: rewriting %s (level %d, filter %.2f bits/key, the level's share "
               "%.2f at %.4g bits/key for the tree): %s",
               f.name.c_str(), f.level,
               8.0 * static_cast<double>(f.filter_bytes) / static_cast<double>(f.filter_entries),
               level_bits.value()[f.level], bits_per_key, s.ToString().c_str());
      LogAt(log.get(), ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
      if (!s.ok()) break;
      ++rewritten;
    }
    return rewritten;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace sstfilter
