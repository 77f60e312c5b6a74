// SPDX-License-Identifier: Apache-2.0
#include "plugin/memory_budget.h"

#include <rocksdb/cache.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/sizing.h"

namespace sstfilter {

Result<MemoryBudget> MemoryBudget::Parse(const std::string& text) {
  MemoryBudget budget;
  if (text.empty()) return budget;
  const std::string example =
      " (bytes, as 2G, 512M or 1073741824, or a share of the block cache, as 25%)";
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  if (end == text.c_str() || !std::isfinite(number) || !(number > 0) || text[0] == ' ' ||
      unit.size() > 1) {
    return Err("memory_budget must be a positive size" + example + ", got '" + text + "'");
  }
  if (unit == "%") {
    if (number > 100) {
      return Err("memory_budget as a share of the block cache must be in (0%, 100%], got '" + text +
                 "'");
    }
    budget.cache_share = number / 100;
    return budget;
  }
  double scale = 1;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'k':
      case 'K':
        scale = 1024.0;
        break;
      case 'm':
      case 'M':
        scale = 1024.0 * 1024;
        break;
      case 'g':
      case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 't':
      case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return Err("memory_budget must be a positive size" + example + ", got '" + text + "'");
    }
  }
  const double bytes = std::floor(number * scale);
  if (!(bytes >= 1) || bytes >= 0x1p63) {
    return Err("memory_budget must be at least 1 byte and below 8 EiB, got '" + text + "'");
  }
  budget.bytes = static_cast<uint64_t>(bytes);
  return budget;
}

std::string MemoryBudget::ToString() const {
  char text[40] = "";
  if (bytes > 0) {
    snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(bytes));
  } else if (cache_share > 0) {
    snprintf(text, sizeof(text), "%.17g%%", 100 * cache_share);
  }
  return text;
}

Result<uint64_t> MemoryBudget::BytesFor(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table) const {
  if (bytes > 0) return bytes;
  if (table.no_block_cache || table.block_cache == nullptr) {
    return Err("memory_budget=" + ToString() +
               " is a share of the block cache, and the table has none (no_block_cache)");
  }
  return static_cast<uint64_t>(
      std::floor(cache_share * static_cast<double>(table.block_cache->GetCapacity())));
}

BudgetedTrees SumAccounts(const std::vector<TreeId>& trees) {
  BudgetedTrees sum;
  TreeAccounts accounts;
  for (const TreeId& tree : trees) {
    if (!Ledger::Global().Get(tree, &accounts)) continue;
    ++sum.trees;
    for (size_t i = 0; i < accounts.levels.size(); ++i) {
      const LevelAccount& a = accounts.levels[i];
      uint64_t keys = a.keys + a.pending_keys;
      if (i == 0) keys = std::max(keys, accounts.level0_peak.keys);
      sum.keys += static_cast<double>(keys);
      sum.filter_bytes += a.filter_bytes;
    }
  }
  return sum;
}

double BitsPerKeyWithin(uint64_t bytes, double keys, double ceiling) {
  if (!(keys > 0)) return ceiling;
  const double bits = std::floor(16 * 8 * static_cast<double>(bytes) / keys) / 16;
  return std::min(std::max(bits, kMinBitsPerKey), ceiling);
}

}  // namespace sstfilter
