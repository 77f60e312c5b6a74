// SPDX-License-Identifier: Apache-2.0
#include "plugin/tree_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plugin/printf.h"

namespace sstfilter {

std::vector<LevelFilter> KeepSmallFilesFilters(std::vector<LevelFilter> priced,
                                               const std::vector<LevelFilter>& nominal) {
  for (size_t i = 0; i < priced.size(); ++i) {
    if (!priced[i].base.has_filter && nominal[i].Largest().has_filter) priced[i] = nominal[i];
  }
  return priced;
}

namespace {
// Whether a file's counts take part: exposed (level_probes.h), on a level, with keys.
bool Counted(const FileRange& f) { return Exposed(f) && f.level_now >= 0 && f.keys > 0; }
// A file's share of the lookups (FileRange): comparable between files of any age.
double Share(const FileRange& f) { return f.sampled_probes / f.exposure; }
// The counts of a set of files (a level; a key range's): their shares, exposures, keys and
// number.
struct Samples {
  double shares = 0, exposure = 0, keys = 0, files = 0;
  void Add(const FileRange& f) {
    shares += Share(f);
    exposure += f.exposure;
    keys += f.keys;
    files += 1;
  }
  // The mean file's share and exposure.
  double MeanShare() const { return files > 0 ? shares / files : 0; }
  double MeanExposure() const { return files > 0 ? exposure / files : 0; }
};
// Each level's, by level.
std::vector<Samples> SamplesByLevel(const std::vector<FileRange>& files) {
  std::vector<Samples> levels;
  for (const FileRange& f : files) {
    if (!Counted(f)) continue;
    if (levels.size() <= static_cast<size_t>(f.level_now)) levels.resize(f.level_now + 1);
    levels[f.level_now].Add(f);
  }
  return levels;
}
// `level`'s (`level_total`), and of its files that `keys` meets (`range`).
void SamplesOfLevel(const std::vector<FileRange>& files, int level, const KeyRange& keys,
                    Samples* level_total, Samples* range) {
  for (const FileRange& f : files) {
    if (f.level_now != level || !Counted(f)) continue;
    level_total->Add(f);
    if (keys.Meets(f.smallest, f.largest)) range->Add(f);
  }
}
// A block of `samples` sampled probes over `exposure` against its level's mean file, blended by
// weight: (samples + prior) / (the level's mean share x exposure + prior), the prior
// kBlockHeatPriorSamples on each side; where the level's files are equally exposed, the samples
// against the level's mean file's, each with the prior.
double RateAgainst(double samples, double exposure, const Samples& level, double weight) {
  if (!(level.shares > 0)) return 1;
  const double against = (std::max(samples, 0.0) + kBlockHeatPriorSamples) /
                         (level.MeanShare() * exposure + kBlockHeatPriorSamples);
  return 1 + std::min(std::max(weight, 0.0), 1.0) * (against - 1);
}
// The samples a counted file would have at its level's mean share per key (`per_key`), as exposed
// as it is: what HeatOf sets its samples against.
double UnheatedSamples(const FileRange& f, double per_key) { return per_key * f.keys * f.exposure; }
}  // namespace

double HeatPriorSamples(const std::vector<FileRange>& files, int level) {
  // Each file's expectation is the level's samples in proportion to its keys times its exposure:
  // the samples' own rate, not the files' mean share per key (HeatOf's per_key), which differs
  // from it where the files differ in exposure; Pearson's statistic would count that as heat.
  double samples = 0, weights = 0;
  for (const FileRange& f : files) {
    if (f.level_now != level || !Counted(f)) continue;
    samples += f.sampled_probes;
    weights += f.keys * f.exposure;
  }
  if (!(samples > 0) || !(weights > 0)) return HUGE_VAL;
  const double per_weight = samples / weights;
  double pearson = 0, expected = 0, expected_squares = 0, n = 0;
  for (const FileRange& f : files) {
    if (f.level_now != level || !Counted(f)) continue;
    const double e = per_weight * f.keys * f.exposure;
    if (!(e > 0)) continue;
    pearson += (f.sampled_probes - e) * (f.sampled_probes - e) / e;
    expected += e;
    expected_squares += e * e;
    n += 1;
  }
  const double spread = expected - expected_squares / expected;
  const double heat_variance = n >= 2 && spread > 0 ? (pearson - (n - 1)) / spread : 0;
  return heat_variance > 0 ? 1 / heat_variance : HUGE_VAL;
}

double HeatOf(const std::vector<FileRange>& files, int level, const KeyRange& keys) {
  Samples level_total, range;
  SamplesOfLevel(files, level, keys, &level_total, &range);
  if (!(level_total.shares > 0) || range.keys <= 0) return 1;
  const double per_key = level_total.shares / level_total.keys;
  const double prior = HeatPriorSamples(files, level);
  auto clamped = [](double heat) { return std::min(std::max(heat, kMinHeat), kMaxHeat); };
  double log_mean = 0, range_heat = 0;
  for (const FileRange& f : files) {
    if (f.level_now != level || !Counted(f)) continue;
    const double heat =
        std::isinf(prior) ? 1 : (f.sampled_probes + prior) / (UnheatedSamples(f, per_key) + prior);
    log_mean += f.keys * std::log(clamped(heat));
    if (keys.Meets(f.smallest, f.largest)) range_heat += f.keys * heat;
  }
  return clamped(range_heat / range.keys) / std::exp(log_mean / level_total.keys);
}

std::vector<BlockHeatClass> BlockHeatOf(const std::vector<FileRange>& files, double weight) {
  if (!(weight > 0)) return {};
  const std::vector<Samples> levels = SamplesByLevel(files);
  std::vector<double> rates;
  for (const FileRange& f : files) {
    if (Counted(f)) {
      rates.push_back(RateAgainst(f.sampled_probes, f.exposure, levels[f.level_now], weight));
    }
  }
  if (rates.empty()) return {};
  const auto [lowest, highest] = std::minmax_element(rates.begin(), rates.end());
  if (!(*lowest > 0) || !std::isfinite(*highest) || *highest <= kAlikeHeat * *lowest) return {};
  const double log_low = std::log(*lowest), width = std::log(*highest) - log_low;
  double rate_sums[kMaxHeatClasses] = {}, counts[kMaxHeatClasses] = {};
  for (const double r : rates) {
    const size_t c =
        std::min(static_cast<size_t>((std::log(r) - log_low) / width * kMaxHeatClasses),
                 kMaxHeatClasses - 1);
    rate_sums[c] += r;
    counts[c] += 1;
  }
  std::vector<BlockHeatClass> heat;
  double mean = 0;
  for (size_t c = 0; c < kMaxHeatClasses; ++c) {
    if (counts[c] == 0) continue;
    heat.push_back({rate_sums[c] / counts[c], counts[c] / static_cast<double>(rates.size())});
    mean += heat.back().rate * heat.back().share;
  }
  for (BlockHeatClass& c : heat) c.rate /= mean;  // the mean block's rate is 1
  return heat;
}

double BlockRateOf(const std::vector<FileRange>& files, int level, const KeyRange& keys,
                   double num_keys, double weight) {
  if (level < 0 || !(num_keys > 0)) return 1;
  Samples level_total, range;
  SamplesOfLevel(files, level, keys, &level_total, &range);
  if (range.keys <= 0) return 1;
  // The samples the file would have over the level's mean file's exposure, at its range's shares
  // per key.
  const double exposure = level_total.MeanExposure();
  return RateAgainst(range.shares / range.keys * num_keys * exposure, exposure, level_total,
                     weight);
}

std::string Describe(const char* policy, const TreeAccounts& accounts, int level, double excess,
                     double budget) {
  std::string line = Printf(
      "%s: a file for level %d; excess below level 0 %+.2f bits/key, budget steered to "
      "%.2f; probes counted by readers weigh %.2f; levels:",
      policy, level, excess, budget, accounts.counted_weight);
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    if (a.keys == 0 && a.pending_keys == 0 && !(i == 0 && accounts.level0_peak.keys > 0)) continue;
    line += Printf(" L%zu %llu keys", i, static_cast<unsigned long long>(a.keys));
    if (a.keys > a.unmeasured_keys) {
      line += Printf(" at %.2f bits/key", 8.0 * static_cast<double>(a.filter_bytes) /
                                              static_cast<double>(a.keys - a.unmeasured_keys));
    }
    if (a.unmeasured_keys > 0) {
      line += Printf(" (%llu with filters not yet measured)",
                     static_cast<unsigned long long>(a.unmeasured_keys));
    }
    if (a.pending_keys > 0) {
      line += Printf(" + %llu being written", static_cast<unsigned long long>(a.pending_keys));
    }
    if (i == 0 && accounts.level0_peak.keys > a.keys) {
      line += Printf(" (fullest lately %llu)",
                     static_cast<unsigned long long>(accounts.level0_peak.keys));
    }
    line += Printf(", %.2f probes;", a.probes);
  }
  return line;
}

Result<double> ExcessBelowLevel0(const TreeShape& shape, const TreeAccounts& accounts,
                                 double budget, double writing_budget) {
  std::vector<double> shares, probes;
  shape.WithFile(-1, 0, &shares, &probes);
  const Result<std::vector<LevelFilter>> target = shape.Allocate(shares, probes, budget, 0);
  if (!target.ok()) return Err(target.error());
  const Result<std::vector<LevelFilter>> writing =
      writing_budget == budget ? target : shape.Allocate(shares, probes, writing_budget, 0);
  if (!writing.ok()) return Err(writing.error());
  const SpendBelowLevel0 spend = SpendOf(accounts, target.value());
  double excess_bits = spend.spent_bits - spend.share_bits, keys = 0;
  for (size_t i = 1; i < accounts.levels.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    keys += static_cast<double>(a.keys + a.pending_keys);
    excess_bits += static_cast<double>(a.pending_keys) * (writing.value()[i].ExpectedBitsPerKey() -
                                                          target.value()[i].ExpectedBitsPerKey());
  }
  return keys > 0 ? excess_bits / keys : 0.0;
}

SpendBelowLevel0 SpendOf(const TreeAccounts& accounts, const std::vector<LevelFilter>& allocation) {
  SpendBelowLevel0 spend;
  for (size_t i = 1; i < accounts.levels.size() && i < allocation.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    spend.spent_bits += 8 * static_cast<double>(a.filter_bytes);
    spend.share_bits +=
        allocation[i].ExpectedBitsPerKey() * static_cast<double>(a.keys - a.unmeasured_keys);
  }
  return spend;
}

Result<std::vector<LevelFilter>> SteadyAllocation(const TreeAccounts& accounts, double bits_per_key,
                                                  bool under_memory_budget) {
  std::vector<double> shares, probes;
  TreeShape shape(accounts);
  if (shape.Empty()) return Err(std::string("the tree holds no keys"));
  shape.under_memory_budget = under_memory_budget;
  shape.WithFile(-1, 0, &shares, &probes);
  return shape.Allocate(shares, probes, bits_per_key, 0);
}

double BudgetCeiling(double bits_per_key, double level0_share) {
  return level0_share > 0 ? bits_per_key * (1 + kBudgetSwing / level0_share)
                          : std::numeric_limits<double>::infinity();
}

Result<std::vector<LevelFilter>> AllocateWithinCeiling(const std::vector<double>& shares,
                                                       double bits_per_key,
                                                       uint64_t keys_per_filter,
                                                       const std::vector<double>& probes,
                                                       double ceiling) {
  const Result<std::vector<LevelFilter>> free =
      AllocateShares(shares, bits_per_key, FilterCostModel::kSstfilter, keys_per_filter, probes);
  if (!free.ok() || !(ceiling < std::numeric_limits<double>::infinity()) ||
      probes.size() != shares.size()) {
    return free;
  }
  double total = 0;
  for (const double s : shares) total += s;
  const Result<std::vector<LevelFilter>> top =
      AllocateShares({1.0}, ceiling, FilterCostModel::kSstfilter, keys_per_filter, {1.0});
  if (!top.ok()) return free;
  std::vector<LevelFilter> result = free.value();
  std::vector<bool> held(shares.size(), false);
  // Each round holds at least one more level, or ends: at most one round per level.
  for (size_t round = 0; round < shares.size(); ++round) {
    bool more = false;
    for (size_t i = 0; i < shares.size(); ++i) {
      if (!held[i] && shares[i] > 0 && result[i].ExpectedBitsPerKey() > ceiling) {
        held[i] = more = true;
      }
    }
    if (!more) break;
    double held_share = 0;
    std::vector<double> rest_shares, rest_probes;
    for (size_t i = 0; i < shares.size(); ++i) {
      if (held[i]) {
        held_share += shares[i] / total;
      } else {
        rest_shares.push_back(shares[i]);
        rest_probes.push_back(probes[i]);
      }
    }
    const double rest_bits = (bits_per_key - held_share * ceiling) / (1 - held_share);
    if (rest_shares.empty() || !(rest_bits > 0)) return free;
    const Result<std::vector<LevelFilter>> rest = AllocateShares(
        rest_shares, rest_bits, FilterCostModel::kSstfilter, keys_per_filter, rest_probes);
    if (!rest.ok()) return free;
    for (size_t i = 0, r = 0; i < shares.size(); ++i) {
      result[i] = held[i] ? top.value()[0] : rest.value()[r++];
    }
  }
  return result;
}

Result<std::vector<LevelFilter>> TreeShape::Allocate(const std::vector<double>& shares,
                                                     const std::vector<double>& probes,
                                                     double bits_per_key,
                                                     uint64_t keys_per_filter) const {
  double total = 0;
  for (const double s : shares) total += s;
  const double ceiling = under_memory_budget && total > 0 && !shares.empty()
                             ? BudgetCeiling(bits_per_key, shares[0] / total)
                             : std::numeric_limits<double>::infinity();
  return AllocateWithinCeiling(shares, bits_per_key, keys_per_filter, probes, ceiling);
}

Result<std::vector<LevelFilter>> OneFilterAllocation(const TreeAccounts& accounts,
                                                     double bits_per_key) {
  if (accounts.levels.empty()) return Err(std::string("the tree has no levels"));
  const Result<std::vector<LevelFilter>> one_level =
      AllocateShares({1.0}, bits_per_key, FilterCostModel::kSstfilter, 0, {1.0});
  if (!one_level.ok()) return Err(one_level.error());
  return std::vector<LevelFilter>(accounts.levels.size(), one_level.value()[0]);
}

Result<std::vector<LevelFilter>> ModelAllocation(const TreeAccounts& accounts, int model_levels,
                                                 double size_ratio, double bits_per_key) {
  if (accounts.levels.empty()) return Err(std::string("the tree has no levels"));
  const Result<std::vector<LevelFilter>> model =
      AllocateLevels(model_levels, size_ratio, bits_per_key, FilterCostModel::kSstfilter, 0);
  if (!model.ok()) return Err(model.error());
  size_t deepest = 0;
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    if (accounts.levels[i].keys + accounts.levels[i].pending_keys > 0) deepest = i;
  }
  std::vector<LevelFilter> levels;
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    const int level = static_cast<int>(i);
    levels.push_back(model.value()[ModelLevelOf(level, i > 0 && i == deepest, 1, model_levels)]);
  }
  return levels;
}

Result<std::vector<double>> SteadyBitsPerKey(const TreeAccounts& accounts, double bits_per_key,
                                             bool under_memory_budget) {
  const Result<std::vector<LevelFilter>> allocation =
      SteadyAllocation(accounts, bits_per_key, under_memory_budget);
  if (!allocation.ok()) return Err(allocation.error());
  std::vector<double> bits;
  for (const LevelFilter& level : allocation.value()) bits.push_back(level.ExpectedBitsPerKey());
  return bits;
}

}  // namespace sstfilter
