// SPDX-License-Identifier: Apache-2.0
// Filter memory spent where an LSM tree's lookups need it (Monkey: Dayan, Athanassoulis, Idreos,
// "Monkey: Optimal Navigable Key-Value Store", SIGMOD 2017).
//
// A lookup of an absent key consults one filter per level, so its expected cost in wasted reads is
// the sum of the levels' false-positive rates, while the memory is dominated by the largest, last
// level. Monkey shows that rates proportional to the levels' sizes minimise that sum for a given
// memory (section 4): p_i = c * w_i, with w_i the level's share of the keys. For ideal Bloom
// filters (b = -ln p / ln^2 2 bits per key) the constant has a closed form,
//   c = exp(-B ln^2 2 - sum_i w_i ln w_i),
// against exp(-B ln^2 2) per level for the uniform allocation: the sum of rates shrinks by
// e^{H(w)} / L, where H is the entropy of the level shares (about 0.36 for 4 levels, ratio 10).
//
// AllocateLevels solves the same problem for sstfilter's real filters: each level takes the
// cheapest filter that reaches its rate among those every kind offers (each kind's LevelOffers:
// blocked Bloom filters in 0.05 bits/key steps, cuckoo filters of every fingerprint width at 95%
// load, binary fuse filters of every fingerprint width), or no filter when a rate of 1 is best.
//
// Those filters come in steps (a fingerprint bit doubles the rate), so a level's budget falls
// between two of them. A level may therefore mix two neighbouring filters: a fraction of its
// filters (files, or partitions) takes the larger one, each chosen from its own keys
// (ChoiceForKeys), so that the level's expected bits and rate lie on the line between the two.
// A lookup consults one filter per level, so its expected cost is the mixture's rate. With
// mixtures, the allocation is the exact optimum of the relaxed problem: the greedy walk along the
// lower convex hull of (bits, rate) that buys the most rate per bit first, the last step bought
// in part (a fractional knapsack; each hull step costs more per rate than the one before). At
// most one level mixes. Test HalvesTheUniformSumOfRates holds the sum of rates it reaches against
// the uniform allocation's and prints the levels.
//
// Which kind is cheapest depends on the filters' key count: a fuse table needs 1.075 cells per
// key for a million keys but 1.3 for 2,000 (core/fuse/math.h), a Ribbon table 1.12 and 1.06
// (core/ribbon/math.h), so fuse filters win for large files (from about 250,000 keys) and Ribbon
// filters for small ones. Given keys_per_filter, the offers are priced at that count (the bytes
// each filter really takes); 0 prices them nominally, as for unlimited keys.
#pragma once

#include <cstdint>
#include <vector>

#include "core/filter_spec.h"
#include "core/result.h"

namespace sstfilter {

// The deepest tree the allocation accepts (RocksDB's num_levels is an int; real trees have 7).
inline constexpr int kMaxLevels = 64;

// One filter a level's files may get.
struct FilterChoice {
  bool has_filter = false;  // false: no filter (every key may match)
  FilterSpec spec;          // what to build, when has_filter
  double fp_rate = 1;       // its false-positive rate; 1 for no filter
  double bits_per_key = 0;  // what it spends per key
};

struct LevelFilter {
  double share = 0;  // the level's fraction of the tree's keys
  FilterChoice base;
  // A mixed level: this fraction of its filters take `upper` (more bits, a lower rate) instead of
  // `base`. 0 on every level but at most one.
  double upper_fraction = 0;
  FilterChoice upper;

  // Over the level's filters, in expectation.
  double ExpectedFpRate() const {
    return base.fp_rate + upper_fraction * (upper.fp_rate - base.fp_rate);
  }
  double ExpectedBitsPerKey() const {
    return base.bits_per_key + upper_fraction * (upper.bits_per_key - base.bits_per_key);
  }
  // The larger of the choices: for estimates of size that must not fall short.
  const FilterChoice& Largest() const { return upper_fraction > 0 ? upper : base; }
};

// The choice of a mixed level for a filter whose smallest key hash is smallest_key_hash: `upper`
// for a fraction upper_fraction of key sets, decided by the keys alone (the same keys in any
// order, with any repeats, choose alike; different sets are independent draws). `base` on a level
// that does not mix, whatever the keys.
const FilterChoice& ChoiceForKeys(const LevelFilter& level, uint64_t smallest_key_hash);

// How a filter's cost in bits per key depends on its rate.
enum class FilterCostModel {
  kSstfilter,   // sstfilter's filters, as built (the kinds' LevelOffers)
  kIdealBloom,  // b = -ln p / ln^2 2 (Monkey's model; for checking against its closed form)
};

// The share of the keys on each of num_levels levels of a leveled tree whose levels grow by
// size_ratio: level 0 (flushed files, L0) is as large as level 1, each deeper level size_ratio
// times the one above it.
Result<std::vector<double>> LevelShares(int num_levels, double size_ratio);

// Per-level filters minimising the expected sum of false-positive rates, with the key-weighted
// average of expected bits per key at most bits_per_key (equal to it, unless every level has its
// best filter), for filters of keys_per_filter keys (0: nominal costs; the ideal model ignores
// it).
Result<std::vector<LevelFilter>> AllocateLevels(int num_levels, double size_ratio,
                                                double bits_per_key,
                                                FilterCostModel model = FilterCostModel::kSstfilter,
                                                uint64_t keys_per_filter = 0);

// The same for a tree whose level i holds shares[i] of the keys (each finite and at least 0, not
// all 0; normalised to sum to 1), a real tree's levels as they are, and whose level i receives
// probes[i] filter probes per absent-key lookup (empty: 1 on every level, Monkey's assumption).
// The allocation minimises the expected wasted reads, sum_i probes[i] x rate_i, within the
// budget. Where each level receives probes in proportion to its keys (an ordered tree, whose
// levels hold disjoint key ranges), that is the same rate on every level; where every lookup
// probes every level (random keys), it is Monkey's. A level of share 0 costs nothing, so it gets
// the best filter there is; a level that receives no probes gets no filter.
Result<std::vector<LevelFilter>> AllocateShares(std::vector<double> shares, double bits_per_key,
                                                FilterCostModel model = FilterCostModel::kSstfilter,
                                                uint64_t keys_per_filter = 0,
                                                const std::vector<double>& probes = {});

// The same budget on every level: the best single filter within bits_per_key, everywhere (no
// mixing: what a policy of one filter kind and one budget builds).
Result<std::vector<LevelFilter>> UniformAllocation(
    int num_levels, double size_ratio, double bits_per_key,
    FilterCostModel model = FilterCostModel::kSstfilter, uint64_t keys_per_filter = 0);

}  // namespace sstfilter
