// SPDX-License-Identifier: Apache-2.0
#include "plugin/memory_budget.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "compat/rocksdb_api.h"  // Cache's definition
#include "core/sizing.h"
#include "plugin/tree_model.h"

namespace sstfilter {

Result<MemoryBudget> MemoryBudget::Parse(const std::string& text) {
  MemoryBudget budget;
  if (text.empty()) return budget;
  auto bad = [&](const std::string& why) -> Result<MemoryBudget> {
    return Err("memory_budget must be " + why +
               " (bytes, as 2G, 1.5G, 512M or 1073741824, or a share of the block cache, as "
               "25%), got '" +
               text + "'");
  };
  // The grammar, checked before any conversion (strtod would take whitespace, signs, hexadecimal,
  // exponents and the locale's decimal point): digits, an optional fraction, one optional unit.
  size_t digits = 0, at = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at, ++digits;
  if (at < text.size() && text[at] == '.') {
    ++at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at, ++digits;
  }
  const std::string number = text.substr(0, at), unit = text.substr(at);
  if (digits == 0 || digits > 20 || unit.size() > 1) return bad("a positive size");
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !(value > 0)) {
    return bad("a positive size");
  }
  if (unit == "%") {
    if (value > 100) return bad("a share of the block cache in (0%, 100%]");
    budget.cache_share = value / 100;
    return budget;
  }
  if (unit.empty()) {  // whole bytes, exactly
    if (number.find('.') != std::string::npos) return bad("a whole number of bytes");
    uint64_t whole = 0;
    const auto [last, error] = std::from_chars(number.data(), number.data() + number.size(), whole);
    if (error != std::errc() || last != number.data() + number.size() || whole >= (1ull << 62)) {
      return bad("at least 1 byte and below 4 EiB");
    }
    budget.bytes = whole;
    return budget;
  }
  double scale = 1;
  switch (unit[0]) {
    case 'k':
    case 'K':
      scale = 0x1p10;
      break;
    case 'm':
    case 'M':
      scale = 0x1p20;
      break;
    case 'g':
    case 'G':
      scale = 0x1p30;
      break;
    case 't':
    case 'T':
      scale = 0x1p40;
      break;
    default:
      return bad("a positive size");
  }
  const double bytes = std::floor(value * scale);
  if (!(bytes >= 1) || bytes >= 0x1p62) return bad("at least 1 byte and below 4 EiB");
  budget.bytes = static_cast<uint64_t>(bytes);
  return budget;
}

std::string MemoryBudget::ToString() const {
  if (bytes > 0) return std::to_string(bytes);
  if (!(cache_share > 0)) return "";
  char text[40];
  // In the "C" locale whatever the process's (OPTIONS files are read back), to 15 digits: a share
  // typed with as many reads back as typed, and parses to the same share.
  const auto [end, ec] = std::to_chars(text, text + sizeof(text) - 1, 100 * cache_share,
                                       std::chars_format::general, 15);
  if (ec != std::errc()) return "";
  *end = '%';
  return std::string(text, end + 1);
}

Result<uint64_t> MemoryBudget::BytesFor(
    const ROCKSDB_NAMESPACE::BlockBasedTableOptions& table) const {
  if (bytes > 0) return bytes;
  if (table.no_block_cache || table.block_cache == nullptr) {
    return Err("memory_budget=" + ToString() +
               " is a share of the block cache, and the table has none (no_block_cache)");
  }
  const double share =
      std::floor(cache_share * static_cast<double>(table.block_cache->GetCapacity()));
  return static_cast<uint64_t>(std::min(std::max(share, 1.0), 0x1p62));
}

bool BudgetedTrees::SettledBeyond(double budget_bytes) const {
  return static_cast<double>(settled_below_level0_bytes) > kBudgetLimit * budget_bytes;
}

BudgetedTrees SumAccounts(const std::vector<TreeId>& trees, const TreeHistory* history) {
  BudgetedTrees sum;
  TreeAccounts accounts;
  for (const TreeId& tree : trees) {
    if (!Ledger::Global().Get(tree, &accounts)) continue;
    sum.trees.push_back(tree);
    for (size_t i = 0; i < accounts.levels.size(); ++i) {
      const LevelAccount& a = accounts.levels[i];
      uint64_t keys = a.keys + a.pending_keys;
      const uint64_t fullest = accounts.level0_peak.keys;
      if (i == 0 && fullest > keys) {
        keys += history == nullptr || history->FlushesAppend(tree) ? fullest - keys
                                                                   : (fullest - keys) / 2;
      }
      sum.keys += static_cast<double>(keys);
      sum.filter_bytes += a.filter_bytes + a.pending_filter_bytes;
      if (i > 0) sum.settled_below_level0_bytes += a.filter_bytes;
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
