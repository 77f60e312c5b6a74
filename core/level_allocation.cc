// SPDX-License-Identifier: Apache-2.0
#include "core/level_allocation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/hash.h"
#include "core/kinds.h"
#include "core/random.h"
#include "core/sizing.h"
#include "core/standard_bloom/math.h"

namespace sstfilter {
namespace {

constexpr double kLn2Squared = 0.4804530139182014;  // (ln 2)^2
constexpr double kMaxSizeRatio = 1000;
// Budget steps of the ideal model's offers, and the largest one (60 bits/key reach about 1e-10,
// beyond any useful per-level rate). Its rates are a formula, so it can offer finer steps than
// the blocked Bloom kind, each of whose rates is a Poisson sum.
constexpr double kIdealBitsStep = 0.01;
constexpr double kIdealMaxOfferedBits = 60;

// One filter on offer: what it costs and what it buys.
struct Offer {
  double bits = 0;
  double rate = 1;
  bool has_filter = false;
  FilterSpec spec;
};

// Every kind's offers at their nominal cost and rate, in the order of AllKinds (which breaks ties
// of cost in the frontier). Computed once per process: about 50 ms of Poisson sums for the
// blocked Bloom rates.
const std::vector<Offer>& NominalOffers() {
  static const std::vector<Offer> offers = [] {
    std::vector<Offer> all;
    ForEachKind([&all](auto kind) {
      using Kind = decltype(kind);
      for (const typename Kind::Params& params : Kind::LevelOffers()) {
        Offer o;
        o.bits = Kind::NominalBitsPerKey(params);
        o.rate = Kind::NominalFpRate(params);
        o.has_filter = true;
        o.spec = FilterSpec(params);
        all.push_back(o);
      }
    });
    return all;
  }();
  return offers;
}

// The offers priced for filters of num_keys keys: bits per key from the bytes each really takes,
// the trailer included (what a user measures as the filter's size: 0.26 bits per key in a filter
// of 1,000 keys for 32 bytes, 0.08 for a Ribbon filter's compact 10; negligible in the nominal
// costs). The rates stay the nominal ones: the kinds' rates hardly depend on the key count
// (rounding up to whole blocks or buckets only lowers them), their sizes do (a fuse table's cells
// per key most of all).
std::vector<Offer> OffersFor(uint64_t num_keys) {
  std::vector<Offer> priced;
  for (const Offer& nominal : NominalOffers()) {
    const Result<uint64_t> bytes = FilterBytes(nominal.spec, num_keys);
    if (!bytes.ok()) continue;  // the kind cannot hold that many keys
    Offer o = nominal;
    o.bits = static_cast<double>(bytes.value()) * 8 / static_cast<double>(num_keys);
    priced.push_back(o);
  }
  return priced;
}

// The Pareto frontier of `all` and of no filter: by cost, each offer strictly better than every
// cheaper one.
std::vector<Offer> ParetoFrontier(std::vector<Offer> all) {
  all.insert(all.begin(), Offer{});  // no filter: free, matches everything
  std::stable_sort(all.begin(), all.end(),
                   [](const Offer& a, const Offer& b) { return a.bits < b.bits; });
  std::vector<Offer> frontier;
  for (const Offer& o : all) {
    if (frontier.empty() || o.rate < frontier.back().rate) frontier.push_back(o);
  }
  return frontier;
}

std::vector<Offer> IdealBloomOffers() {
  std::vector<Offer> all;
  const int steps = static_cast<int>(kIdealMaxOfferedBits / kIdealBitsStep);
  for (int i = 1; i <= steps; ++i) {
    const double b = i * kIdealBitsStep;
    Offer o;
    o.bits = b;
    o.has_filter = true;
    // The model's rate, with k = b ln 2 probes unrounded; the spec's probe count (rounded) is
    // only what a real filter of this budget would use.
    o.rate = std::exp(-b * kLn2Squared);
    StandardBloomParams params;
    params.bits_per_key = b;
    params.num_probes = StandardBloomProbesForBitsPerKey(b).value();
    o.spec = FilterSpec(params);
    all.push_back(o);
  }
  return all;
}

// The frontier of a model; for sstfilter's filters, priced at num_keys keys per filter (0: the
// nominal costs, computed once).
std::vector<Offer> Frontier(FilterCostModel model, uint64_t num_keys) {
  static const std::vector<Offer> ideal = ParetoFrontier(IdealBloomOffers());
  static const std::vector<Offer> nominal = ParetoFrontier(NominalOffers());
  if (model == FilterCostModel::kIdealBloom) return ideal;
  return num_keys == 0 ? nominal : ParetoFrontier(OffersFor(num_keys));
}

Result<bool> CheckArgs(int num_levels, double size_ratio, double bits_per_key) {
  if (num_levels < 1 || num_levels > kMaxLevels) {
    return Err("num_levels must be in [1, " + std::to_string(kMaxLevels) + "], got " +
               std::to_string(num_levels));
  }
  if (!(size_ratio > 1 && size_ratio <= kMaxSizeRatio)) {
    return Err("size_ratio must be in (1, " + FormatNumber(kMaxSizeRatio) + "], got " +
               FormatNumber(size_ratio));
  }
  const Result<double> budget_ok = StandardBloomFpRateForBitsPerKey(bits_per_key);
  if (!budget_ok.ok()) return Err(budget_ok.error());
  return true;
}

// The lower convex hull of a frontier (which starts at no filter): the offers that some mixture
// of two others does not beat. Between two neighbours of the hull, a mixture is the best buy.
std::vector<Offer> LowerHull(const std::vector<Offer>& frontier) {
  std::vector<Offer> hull;
  for (const Offer& o : frontier) {
    // Drop the last point while it lies on or above the line from the one before it to o.
    while (hull.size() >= 2) {
      const Offer& a = hull[hull.size() - 2];
      const Offer& b = hull.back();
      const double t = (b.bits - a.bits) / (o.bits - a.bits);
      if (b.rate < a.rate + t * (o.rate - a.rate)) break;
      hull.pop_back();
    }
    hull.push_back(o);
  }
  return hull;
}

FilterChoice ChoiceOf(const Offer& o) {
  FilterChoice c;
  c.has_filter = o.has_filter;
  c.spec = o.spec;
  c.fp_rate = o.rate;
  c.bits_per_key = o.bits;
  return c;
}

// Level i of `shares` with offers[choice[i]] as its base filter, and no mixing.
std::vector<LevelFilter> Assemble(const std::vector<double>& shares,
                                  const std::vector<Offer>& offers,
                                  const std::vector<size_t>& choice) {
  std::vector<LevelFilter> levels(shares.size());
  for (size_t i = 0; i < shares.size(); ++i) {
    levels[i].share = shares[i];
    levels[i].base = ChoiceOf(offers[choice[i]]);
  }
  return levels;
}

}  // namespace

const FilterChoice& ChoiceForKeys(const LevelFilter& level, uint64_t smallest_key_hash) {
  if (level.upper_fraction <= 0) return level.base;
  // A uniform draw in [0, 1) from the keys: the smallest hash is the same for any order and any
  // repeats, and remixed it is uniform (the smallest of n hashes itself is not: it is about
  // 2^64 / n).
  const double draw = UnitInterval(Mix64(smallest_key_hash));
  return draw < level.upper_fraction ? level.upper : level.base;
}

Result<std::vector<double>> LevelShares(int num_levels, double size_ratio) {
  const Result<bool> ok = CheckArgs(num_levels, size_ratio, 10);
  if (!ok.ok()) return Err(ok.error());
  std::vector<double> shares(num_levels);
  double level_size = 1, total = 0;
  for (int i = 0; i < num_levels; ++i) {
    if (i >= 2) level_size *= size_ratio;  // levels 0 and 1 are the same size
    shares[i] = level_size;
    total += level_size;
  }
  for (double& s : shares) s /= total;
  return shares;
}

namespace {

// The level shares of a tree of num_levels levels, after checking every argument.
Result<std::vector<double>> CheckedShares(int num_levels, double size_ratio, double bits_per_key) {
  const Result<bool> ok = CheckArgs(num_levels, size_ratio, bits_per_key);
  if (!ok.ok()) return Err(ok.error());
  return LevelShares(num_levels, size_ratio);
}

}  // namespace

Result<std::vector<LevelFilter>> AllocateLevels(int num_levels, double size_ratio,
                                                double bits_per_key, FilterCostModel model,
                                                uint64_t keys_per_filter) {
  const Result<std::vector<double>> shares = CheckedShares(num_levels, size_ratio, bits_per_key);
  if (!shares.ok()) return Err(shares.error());
  return AllocateShares(shares.value(), bits_per_key, model, keys_per_filter);
}

Result<std::vector<LevelFilter>> AllocateShares(std::vector<double> shares, double bits_per_key,
                                                FilterCostModel model, uint64_t keys_per_filter,
                                                const std::vector<double>& probes) {
  const Result<bool> ok =
      CheckArgs(static_cast<int>(std::min<size_t>(shares.size(), kMaxLevels + 1)),
                /*size_ratio=*/10, bits_per_key);
  if (!ok.ok()) return Err(ok.error());
  double total = 0;
  for (const double s : shares) {
    if (!(s >= 0 && std::isfinite(s))) return Err("level shares must be finite and at least 0");
    total += s;
  }
  if (!(total > 0 && std::isfinite(total))) return Err("level shares must not all be 0");
  if (!probes.empty() && probes.size() != shares.size()) {
    return Err("probes must be empty or one per level");
  }
  for (const double p : probes) {
    if (!(p >= 0 && std::isfinite(p))) return Err("level probes must be finite and at least 0");
  }
  for (double& s : shares) s /= total;
  const int num_levels = static_cast<int>(shares.size());
  // The nominal hull is the same for every call (sstfilter.Leveled asks for it for every file it
  // builds with the listener's accounts: plugin/tree_model.h, ExcessBelowLevel0).
  static const std::vector<Offer> nominal_hull =
      LowerHull(Frontier(FilterCostModel::kSstfilter, 0));
  const std::vector<Offer> hull = model == FilterCostModel::kSstfilter && keys_per_filter == 0
                                      ? nominal_hull
                                      : LowerHull(Frontier(model, keys_per_filter));

  // Every level starts with no filter (hull[0]); each round buys the hull step of the level that
  // removes the most rate per bit of the tree's budget, until a step no longer fits: that one is
  // bought in part, as a mixture. A level of share 0 buys every step first, for nothing; one
  // that receives no probes buys none.
  std::vector<size_t> at(num_levels, 0);
  int mixed = -1;  // the level that buys its last step in part, if any
  double fraction = 0;
  double left = bits_per_key;  // per key of the tree
  for (;;) {
    int best = -1;
    double best_gain = 0;
    for (int i = 0; i < num_levels; ++i) {
      if (at[i] + 1 >= hull.size()) continue;
      const Offer& now = hull[at[i]];
      const Offer& next = hull[at[i] + 1];
      const double cost = shares[i] * (next.bits - now.bits);
      const double weight = probes.empty() ? 1 : probes[i];
      const double gain = cost > 0 ? weight * (now.rate - next.rate) / cost
                                   : std::numeric_limits<double>::infinity();
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
      }
    }
    if (best < 0) break;  // every level has the best filter there is
    const double cost = shares[best] * (hull[at[best] + 1].bits - hull[at[best]].bits);
    if (cost <= left + 1e-12 * bits_per_key) {  // a step that fits but for rounding fits
      left = std::max(0.0, left - cost);
      ++at[best];
      continue;
    }
    if (left > 1e-12 * bits_per_key) {  // a remainder of rounding buys no second filter
      mixed = best;
      fraction = left / cost;
    }
    break;
  }
  std::vector<LevelFilter> levels = Assemble(shares, hull, at);
  if (mixed >= 0) {
    levels[mixed].upper_fraction = fraction;
    levels[mixed].upper = ChoiceOf(hull[at[mixed] + 1]);
  }
  return levels;
}

Result<std::vector<LevelFilter>> UniformAllocation(int num_levels, double size_ratio,
                                                   double bits_per_key, FilterCostModel model,
                                                   uint64_t keys_per_filter) {
  const Result<std::vector<double>> shares = CheckedShares(num_levels, size_ratio, bits_per_key);
  if (!shares.ok()) return Err(shares.error());
  const std::vector<Offer> frontier = Frontier(model, keys_per_filter);
  size_t best = 0;
  while (best + 1 < frontier.size() && frontier[best + 1].bits <= bits_per_key) ++best;
  return Assemble(shares.value(), frontier, std::vector<size_t>(num_levels, best));
}

}  // namespace sstfilter
