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
// load, binary fuse filters of every fingerprint width), or no filter when a rate of 1 is best. It minimises the sum of rates subject to the average bits per key staying within the
// budget, by a Lagrangian relaxation over the Pareto frontier of those filters.
//
// Which kind is cheapest depends on the filters' key count: a fuse table needs 1.075 cells per
// key for a million keys but 1.3 for 2,000 (core/fuse/math.h), so at a 0.1% rate a fuse filter
// beats a cuckoo filter for large files and loses to it for small ones. Given keys_per_filter,
// the offers are priced at that count (the bytes each filter really takes); 0 prices them
// nominally, as for unlimited keys.
#pragma once

#include <cstdint>
#include <vector>

#include "core/filter_spec.h"
#include "core/result.h"

namespace sstfilter {

// The deepest tree the allocation accepts (RocksDB's num_levels is an int; real trees have 7).
inline constexpr int kMaxLevels = 64;

struct LevelFilter {
  double share = 0;         // the level's fraction of the tree's keys
  double fp_rate = 1;       // the filter's false-positive rate; 1 means no filter
  double bits_per_key = 0;  // what the filter spends per key of the level
  bool has_filter = false;
  FilterSpec spec;  // what to build, when has_filter
};

// How a filter's cost in bits per key depends on its rate.
enum class FilterCostModel {
  kSstfilter,   // sstfilter's filters, as built (the kinds' LevelOffers)
  kIdealBloom,  // b = -ln p / ln^2 2 (Monkey's model; for checking against its closed form)
};

// The share of the keys on each of num_levels levels of a leveled tree whose levels grow by
// size_ratio: level 0 (flushed files, L0) is as large as level 1, each deeper level size_ratio
// times the one above it.
Result<std::vector<double>> LevelShares(int num_levels, double size_ratio);

// Per-level filters minimising the sum of false-positive rates, with the key-weighted average of
// bits per key at most bits_per_key, for filters of keys_per_filter keys (0: nominal costs; the
// ideal model ignores it).
Result<std::vector<LevelFilter>> AllocateLevels(int num_levels, double size_ratio,
                                                double bits_per_key,
                                                FilterCostModel model = FilterCostModel::kSstfilter,
                                                uint64_t keys_per_filter = 0);

// The same budget on every level: the best single filter within bits_per_key, everywhere.
Result<std::vector<LevelFilter>> UniformAllocation(
    int num_levels, double size_ratio, double bits_per_key,
    FilterCostModel model = FilterCostModel::kSstfilter, uint64_t keys_per_filter = 0);

}  // namespace sstfilter
