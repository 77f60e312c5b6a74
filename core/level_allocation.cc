#include "core/level_allocation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/kinds.h"
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

// The offers priced for filters of num_keys keys: bits per key from the bytes each really takes
// (without the 32-byte trailer, as the nominal costs). The rates stay the nominal ones: the
// kinds' rates hardly depend on the key count (rounding up to whole blocks or buckets only
// lowers them), their sizes do (a fuse table's cells per key most of all).
std::vector<Offer> OffersFor(uint64_t num_keys) {
  std::vector<Offer> priced;
  for (const Offer& nominal : NominalOffers()) {
    const Result<uint64_t> bytes = FilterBytes(nominal.spec, num_keys);
    if (!bytes.ok()) continue;  // the kind cannot hold that many keys
    Offer o = nominal;
    o.bits = static_cast<double>(bytes.value() - kTrailerBytes) * 8 / static_cast<double>(num_keys);
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
               std::to_string(size_ratio));
  }
  const Result<double> budget_ok = StandardBloomFpRateForBitsPerKey(bits_per_key);
  if (!budget_ok.ok()) return Err(budget_ok.error());
  return true;
}

std::vector<LevelFilter> Assemble(const std::vector<double>& shares,
                                  const std::vector<Offer>& frontier,
                                  const std::vector<size_t>& choice) {
  std::vector<LevelFilter> levels(shares.size());
  for (size_t i = 0; i < shares.size(); ++i) {
    const Offer& o = frontier[choice[i]];
    levels[i].share = shares[i];
    levels[i].fp_rate = o.rate;
    levels[i].bits_per_key = o.bits;
    levels[i].has_filter = o.has_filter;
    levels[i].spec = o.spec;
  }
  return levels;
}

double AverageBits(const std::vector<double>& shares, const std::vector<Offer>& frontier,
                   const std::vector<size_t>& choice) {
  double bits = 0;
  for (size_t i = 0; i < shares.size(); ++i) bits += shares[i] * frontier[choice[i]].bits;
  return bits;
}

}  // namespace

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

Result<std::vector<LevelFilter>> AllocateLevels(int num_levels, double size_ratio,
                                                double bits_per_key, FilterCostModel model,
                                                uint64_t keys_per_filter) {
  const Result<bool> ok = CheckArgs(num_levels, size_ratio, bits_per_key);
  if (!ok.ok()) return Err(ok.error());
  const std::vector<double> shares = LevelShares(num_levels, size_ratio).value();
  const std::vector<Offer> frontier = Frontier(model, keys_per_filter);

  // For a price mu per bit, each level takes the offer minimising rate + mu * share * bits.
  std::vector<size_t> choice(num_levels);
  auto choose = [&](double mu, std::vector<size_t>* out) {
    for (int i = 0; i < num_levels; ++i) {
      size_t best = 0;
      double best_cost = 1;  // no filter: rate 1, no bits
      for (size_t j = 1; j < frontier.size(); ++j) {
        const double cost = frontier[j].rate + mu * shares[i] * frontier[j].bits;
        if (cost < best_cost) {
          best_cost = cost;
          best = j;
        }
      }
      (*out)[i] = best;
    }
  };
  // The cheapest price whose choices fit the budget, by bisection in log space: the average
  // falls as the price rises, and a high enough price buys no filters at all.
  double lo = -40, hi = 40;  // log(mu)
  for (int iter = 0; iter < 200; ++iter) {
    const double mid = (lo + hi) / 2;
    choose(std::exp(mid), &choice);
    (AverageBits(shares, frontier, choice) <= bits_per_key ? hi : lo) = mid;
  }
  choose(std::exp(hi), &choice);
  // Spend what the discrete offers left over: repeatedly take the one-step upgrade that removes
  // the most rate per bit and still fits.
  for (;;) {
    const double spent = AverageBits(shares, frontier, choice);
    int best_level = -1;
    double best_gain = 0;
    for (int i = 0; i < num_levels; ++i) {
      if (choice[i] + 1 >= frontier.size()) continue;
      const Offer& now = frontier[choice[i]];
      const Offer& next = frontier[choice[i] + 1];
      const double extra = shares[i] * (next.bits - now.bits);
      if (spent + extra > bits_per_key * (1 + 1e-12)) continue;
      const double gain = (now.rate - next.rate) / extra;
      if (gain > best_gain) {
        best_gain = gain;
        best_level = i;
      }
    }
    if (best_level < 0) break;
    ++choice[best_level];
  }
  return Assemble(shares, frontier, choice);
}

Result<std::vector<LevelFilter>> UniformAllocation(int num_levels, double size_ratio,
                                                   double bits_per_key, FilterCostModel model,
                                                   uint64_t keys_per_filter) {
  const Result<bool> ok = CheckArgs(num_levels, size_ratio, bits_per_key);
  if (!ok.ok()) return Err(ok.error());
  const std::vector<double> shares = LevelShares(num_levels, size_ratio).value();
  const std::vector<Offer> frontier = Frontier(model, keys_per_filter);
  size_t best = 0;
  while (best + 1 < frontier.size() && frontier[best + 1].bits <= bits_per_key) ++best;
  return Assemble(shares, frontier, std::vector<size_t>(num_levels, best));
}

}  // namespace sstfilter
