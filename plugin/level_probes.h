// SPDX-License-Identifier: Apache-2.0
// The filter probes each level of a tree receives per lookup, as the sstfilter.LeveledBudget
// listener (plugin/leveled_budget.cc) estimates them from its files' key ranges and blends the
// estimate with the probes sstfilter's readers count (plugin/probe_counts.h). No RocksDB types.
#pragma once

#include <string>
#include <vector>

namespace sstfilter {

// Counted probes decay by kCountDecay per completed flush or compaction, so that they follow a
// workload that changes; they weigh n / (n + kPriorSamples) for n counted samples, and nothing
// while files holding more than 1 - kMinCountedKeys of the tree's keys are not counted.
inline constexpr double kCountDecay = 0.75, kPriorSamples = 256, kMinCountedKeys = 0.9;

// The probes the readers counted, blended with the key-range estimate (ProbesPerLevel) into
// the probes each level receives. Counted probes are the readers' sampled counts per level,
// scaled to the estimate's total probes per lookup; they weigh n / (n + kPriorSamples) for n
// counted samples (about 256 x 32 probes weigh a half), and nothing while files holding more than
// a tenth of the tree's keys are not counted (after a restart: files written before it, until
// compaction rewrites them). *weight: the counts' weight, in [0, 1).
std::vector<double> BlendProbes(const std::vector<double>& estimated,
                                const std::vector<double>& counted, double counted_key_fraction,
                                double* weight);

// A live file of the tree: its level, keys, and bytewise key range.
struct FileRange {
  int level = 0;
  double keys = 0;
  std::string smallest, largest;
};

// The filter probes each level receives per lookup of a key drawn like the tree's keys: a lookup
// consults a level's filter when its key falls in the range of one of the level's files (level 0:
// of each of its files). A key of file G is taken to fall in level L's ranges when G's range
// meets one of them: exact where ranges nest or are disjoint (random keys, where every level spans
// the key space: 1 probe per level; ordered keys, where levels hold disjoint ranges: each level's
// share of the keys), an overestimate at the edges of partial overlaps. Ranges are bytewise: a
// comparator that is not (little-endian integers) makes them overlap, which counts every level
// probed, Monkey's assumption. O(files x log(files)) per level.
std::vector<double> ProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels);

}  // namespace sstfilter
