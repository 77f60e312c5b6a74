// SPDX-License-Identifier: Apache-2.0
#include "plugin/leveled_chooser.h"

#include <string>

#include "plugin/printf.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

Result<std::vector<LevelFilter>> LeveledAllocations::Cached(bool single, int num_levels,
                                                            double size_ratio, double bits_per_key,
                                                            uint64_t keys) {
  // The options are part of the key: a policy reconfigured later must not reuse old choices.
  const auto key = std::make_tuple(single, num_levels, keys, size_ratio, bits_per_key);
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  Result<std::vector<LevelFilter>> a =
      single
          ? UniformAllocation(num_levels, size_ratio, bits_per_key, FilterCostModel::kSstfilter,
                              keys)
          : AllocateLevels(num_levels, size_ratio, bits_per_key, FilterCostModel::kSstfilter, keys);
  if (a.ok() && keys > 0) {
    const Result<std::vector<LevelFilter>> nominal =
        Cached(single, num_levels, size_ratio, bits_per_key, 0);
    if (!nominal.ok()) return nominal;
    a = KeepSmallFilesFilters(a.value(), nominal.value());
  }
  if (a.ok()) {
    std::lock_guard<std::mutex> lock(mu);
    BoundedEntry(cache, key, kMaxCached) = a.value();
  }
  return a;
}

Result<LevelFilter> LeveledChooser::ForKeys(uint64_t num_keys, const KeyRange& file_keys,
                                            bool finishing) {
  // A partition smaller than the file's fullest so far (its last; on RocksDB 9.x by default,
  // also the one cut right after each full one) takes the filter chosen for the fullest, at
  // its own size. Priced at its own few keys, a filter's fixed bytes (the trailer, a table's
  // least slots) would buy it a rate many times its level's: on the last of 5 levels at 10
  // bits/key, 100 keys after a partition of 3,300 got 7.6% false positives where the full
  // partition's filter has 0.2% (the test AFilesSmallerPartitionsKeepItsFullestPartitionsRate).
  // Such partitions hold the ends of files' key ranges: the newest keys of an ordered tree,
  // and the end of the key space. Their extra bytes are a filter's fixed costs over few keys.
  // Where a memory_budget limits the flush (below), the limit still decides, at their keys.
  const uint64_t priced_keys = std::max(num_keys, fullest_partition_keys_);
  Result<LevelFilter> chosen = LevelsFilter(priced_keys, file_keys, finishing);
  if (chosen.ok() && priced_keys != num_keys) chosen = AtKeys(chosen.value(), num_keys);
  if (budget_rewrite_ && !rewrite_keeps_the_mix_ && chosen.ok() &&
      chosen.value().upper_fraction > 0) {
    LevelFilter leaner = chosen.value();
    leaner.upper_fraction = 0;
    chosen = leaner;
  }
  if (finishing) fullest_partition_keys_ = std::max(fullest_partition_keys_, num_keys);
  if (std::isinf(bytes_left_) || !chosen.ok() || num_keys == 0) {
    return OneFilter(chosen, num_keys, finishing);
  }
  const double keys = static_cast<double>(num_keys);
  // What these keys' filter may spend: of a mix, the richer of the two, whichever they draw.
  const double chosen_bits = chosen.value().Largest().bits_per_key;
  // In sixteenths of a bit: the allocations are cached by budget.
  const double left = std::max(bytes_left_, 0.0);
  double bits = std::max(std::floor(16 * 8 * left / keys) / 16, floor_bits_per_key_);
  if (flushes_merged_ || (history_ != nullptr && decided_ && !appends_)) {
    const double overshoot_left = bytes_left_ + overshoot_bytes_;
    bits =
        std::min(bits, std::max(std::floor(16 * 8 * overshoot_left / keys) / 16, kMinBitsPerKey));
  }
  if (bits < chosen_bits) {
    chosen = allocations_->Single(size_ratio_, bits, num_keys);
    if (finishing && chosen.ok()) {
      const std::string line = Printf(
          "%s: memory_budget: a flushed filter of %llu keys gets %.4g bits/key instead of "
          "up to %.4g: the budget has %.0f bytes left",
          kLeveledPolicyName, static_cast<unsigned long long>(num_keys),
          chosen.value().base.bits_per_key, chosen_bits, left);
      LogAt(log_, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
    }
  }
  chosen = OneFilter(chosen, num_keys, finishing);  // a filter the limit chose is one already
  if (finishing && chosen.ok()) {  // the next partition gets what this one may leave
    bytes_left_ -= chosen.value().Largest().bits_per_key * keys / 8;
  }
  return chosen;
}

Result<LevelFilter> LeveledChooser::LevelsFilter(uint64_t num_keys, const KeyRange& file_keys,
                                                 bool finishing) {
  const bool appends = history_ != nullptr && Appends(file_keys, finishing);
  if (appends || (!tree_shape_.keys.empty() && level_ < 0)) {
    // The budget's filter: an appended file will hold its keys wherever it moves.
    return OneOf(allocations_->Get(1, size_ratio_, bits_per_key_, num_keys), 0);
  }
  if (tree_shape_.keys.empty()) {
    // A universal tree's filter takes one of a mix's two in ForKeys (OneFilter).
    return OneOf(allocations_->Get(num_levels_, size_ratio_, bits_per_key_, num_keys), modelled_);
  }
  const auto cached = by_keys_.find(num_keys);
  if (cached != by_keys_.end()) {
    return ForFile(cached->second, num_keys, file_keys, finishing);
  }
  std::vector<double> shares, probes;
  tree_shape_.WithFile(level_, budget_rewrite_ ? 0 : static_cast<double>(num_keys), &shares,
                       &probes);
  Result<std::vector<LevelFilter>> a =
      tree_shape_.Allocate(shares, probes, bits_per_key_, num_keys);
  if (a.ok() && num_keys > 0) {
    const Result<std::vector<LevelFilter>> nominal =
        tree_shape_.Allocate(shares, probes, bits_per_key_, 0);
    if (!nominal.ok()) return Err(nominal.error());
    a = KeepSmallFilesFilters(a.value(), nominal.value());
  }
  const Result<LevelFilter> chosen = OneOf(a, level_);
  if (by_keys_.size() < kMaxCached) by_keys_.emplace(num_keys, chosen);
  return ForFile(chosen, num_keys, file_keys, finishing);
}

Result<LevelFilter> LeveledChooser::ForFile(const Result<LevelFilter>& level, uint64_t num_keys,
                                            const KeyRange& file_keys, bool finishing) {
  return FitCache(finishing ? ForHeat(level, num_keys, file_keys) : level, num_keys, finishing,
                  BlockRate(num_keys, file_keys, finishing));
}

Result<LevelFilter> LeveledChooser::ForHeat(const Result<LevelFilter>& level, uint64_t num_keys,
                                            const KeyRange& file_keys) {
  if (heat_ == nullptr || level_ < 1 || !level.ok() || file_keys.empty()) return level;
  const double bits = level.value().ExpectedBitsPerKey();
  const double rate = level.value().ExpectedFpRate();
  if (!level.value().base.has_filter || !(rate > 0 && rate < 1) || bits <= 0) return level;
  const double heat = HeatOf(*heat_, level_, file_keys);
  const double bits_per_halving = bits / std::log2(1 / rate);
  // In sixteenths of a bit: the allocations are cached by budget.
  const double hot_bits = std::min(
      std::max(std::round(16 * (bits + heat_weight_ * bits_per_halving * std::log2(heat))) / 16,
               kMinBitsPerKey),
      kMaxBitsPerKey);
  if (std::abs(hot_bits - bits) < 1.0 / 16) return level;
  return OneOf(allocations_->Get(1, size_ratio_, hot_bits, num_keys), 0);
}

Result<LevelFilter> LeveledChooser::FitCache(const Result<LevelFilter>& level, uint64_t num_keys,
                                             bool finishing, double block_rate) {
  if (cache_.shards.shards == 0 || !level.ok() || num_keys == 0) return level;
  const auto fitted = fitted_.find(num_keys);
  if (!finishing && fitted != fitted_.end()) return fitted->second;
  const double keys = static_cast<double>(num_keys);
  auto rereads = [&](const FilterChoice& c) {
    return c.has_filter ? ExpectedRereadsPerProbe(c.bits_per_key * keys / 8, cache_, block_rate)
                        : 0.0;
  };
  // A mix of two filters (upper_fraction of the files get the upper one) re-reads each
  // filter's block in its share of the files.
  auto expected_rereads = [&](const LevelFilter& f) {
    return (1 - f.upper_fraction) * rereads(f.base) + f.upper_fraction * rereads(f.upper);
  };
  auto cost = [&](const LevelFilter& f) { return f.ExpectedFpRate() + expected_rereads(f); };
  const LevelFilter& given = level.value();
  const double given_bits = given.ExpectedBitsPerKey();
  LevelFilter best = given;
  if (given.base.has_filter && given_bits > bits_per_key_ &&
      LeanerMayPay(given.ExpectedFpRate(), rereads(given.Largest()))) {
    auto leaner = [&](double bits) {
      return OneOf(allocations_->Get(1, size_ratio_, bits, num_keys), 0);
    };
    const double richest = std::min(given_bits, kMaxBitsPerKey);
    const double bits =
        CheapestLeaner(richest, bits_per_key_,
                       std::max(kCutStepBitsPerKey, (richest - bits_per_key_) / kMaxLeanerSteps),
                       cost(given), [&](double b, double* c) {
                         const Result<LevelFilter> f = leaner(b);
                         if (f.ok()) *c = cost(f.value());
                         return f.ok();
                       });
    if (bits < richest) best = leaner(bits).value();  // cached: it was priced
  }
  if (!finishing) {
    if (fitted_.size() < kMaxCached) fitted_.emplace(num_keys, best);
  } else if (best.ExpectedBitsPerKey() < given_bits) {
    const std::string probed =
        cache_.heat.empty() ? "alike" : Printf("%.2gx as often as the mean block", block_rate);
    const std::string line = Printf(
        "%s: a filter of %.0f KiB (%.2f bits/key, rate %.2g, probed %s) shares a "
        "block-cache shard of %zu KiB with about %.1f other filter blocks of %.0f KiB: %.3g "
        "re-reads per probe expected; %.2f bits/key instead (rate %.2g, %.3g re-reads)",
        kLeveledPolicyName, given_bits * keys / 8 / 1024, given_bits, given.ExpectedFpRate(),
        probed.c_str(), cache_.shards.ShardBytes() >> 10,
        cache_.other_blocks / static_cast<double>(cache_.shards.shards),
        cache_.mean_block_bytes / 1024, expected_rereads(given), best.ExpectedBitsPerKey(),
        best.ExpectedFpRate(), expected_rereads(best));
    LogAt(log_, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL, line);
  }
  return best;
}

double LeveledChooser::BlockRate(uint64_t num_keys, const KeyRange& file_keys,
                                 bool finishing) const {
  if (!finishing || heat_ == nullptr || cache_.heat.empty() || level_ < 1 || file_keys.empty()) {
    return 1;
  }
  return BlockRateOf(*heat_, level_, file_keys, static_cast<double>(num_keys), heat_weight_);
}

Result<LevelFilter> LeveledChooser::AtKeys(LevelFilter filter, uint64_t num_keys) {
  if (num_keys == 0) return filter;
  for (FilterChoice* c : {&filter.base, &filter.upper}) {
    if (!c->has_filter) continue;
    const Result<uint64_t> bytes = FilterBytes(c->spec, num_keys);
    if (!bytes.ok()) return Err(bytes.error());
    c->bits_per_key = 8 * static_cast<double>(bytes.value()) / static_cast<double>(num_keys);
  }
  return filter;
}

Result<LevelFilter> LeveledChooser::OneOf(const Result<std::vector<LevelFilter>>& a, int level) {
  if (!a.ok()) return Err(a.error());
  return a.value()[static_cast<size_t>(level)];
}

Result<LevelFilter> LeveledChooser::OneFilter(const Result<LevelFilter>& chosen, uint64_t num_keys,
                                              bool finishing) {
  if (!finishing || draws_ == nullptr || !chosen.ok() || !(chosen.value().upper_fraction > 0)) {
    return chosen;
  }
  LevelFilter one = chosen.value();
  if (draws_->DrawsTheRicher(draws_tree_, static_cast<double>(num_keys), one.upper_fraction)) {
    one.base = one.upper;
  }
  one.upper_fraction = 0;
  return one;
}

bool LeveledChooser::Appends(const KeyRange& file_keys, bool finishing) {
  const bool appends =
      decided_ ? appends_ : !file_keys.empty() && history_->Appends(tree_, file_, file_keys);
  if (finishing) {
    decided_ = true;  // every filter (partition) of the file takes the first one's answer
    appends_ = appends;
    history_->Record(tree_, file_, file_keys, flushed_);  // the file's keys so far
  }
  return appends;
}

void LeveledChooser::SpendAtMost(double bytes_left, double floor_bits_per_key,
                                 double overshoot_bytes, ROCKSDB_NAMESPACE::Logger* log) {
  bytes_left_ = bytes_left;
  overshoot_bytes_ = overshoot_bytes;
  floor_bits_per_key_ = std::max(floor_bits_per_key, kMinBitsPerKey);
  log_ = log;
}

void LeveledChooser::Finished(uint64_t num_keys, const KeyRange& file_keys, uint64_t filter_bytes) {
  if (built_into_ != nullptr) {
    built_into_->RecordBuilt(built_tree_, built_level_, built_by_compaction_, file_keys, num_keys,
                             filter_bytes);
  }
}

}  // namespace sstfilter
