// SPDX-License-Identifier: Apache-2.0
// The filter probes each level of a tree receives per lookup, as the sstfilter.LeveledBudget
// listener (plugin/leveled_budget.cc) estimates them from its files' key ranges and blends the
// estimate with the probes sstfilter's readers count (plugin/probe_counts.h). No RocksDB types.
#pragma once

#include <string>
#include <vector>

namespace sstfilter {

// Counted probes decay by kCountDecay per completed flush or compaction, so that they follow a
// workload that changes; they weigh n / (n + kPriorSamples) for the n samples counted on the
// tree, decayed, and nothing while files holding more than 1 - kMinCountedKeys of the tree's keys
// are not counted (BlendProbes).
inline constexpr double kCountDecay = 0.75, kPriorSamples = 256, kMinCountedKeys = 0.9;

// A live file of the tree: the level its keys are going to (`level_now` unless a running
// compaction is rewriting it), its keys and bytewise key range, and the probes sstfilter's readers
// counted on its filter (`counted` false: they are not counted, as for a file written before the
// database opened): `sampled_probes`, and `exposure`, the probes sampled on all the tree's counted
// files over the same intervals, both decayed by kCountDecay per flush or compaction, so that their
// ratio is the file's share of the probes whatever its age. The listener counts both from a
// file's second account on (its first comes within an interval it was live for only part of).
// The same files give the lookup heat of key ranges (tree_model.h, HeatOf), each at `level_now`.
struct FileRange {
  int level = 0, level_now = 0;
  double keys = 0;
  std::string smallest, largest;
  bool counted = false;
  double sampled_probes = 0, exposure = 0;
};

// Whether a file's share of the probes (sampled_probes / exposure) can be read: counted, its
// samples finite and not negative, its exposure finite and above 0.
bool Exposed(const FileRange& f);

// The filter probes each level receives per lookup of a key drawn like the tree's keys: a lookup
// consults a level's filter when its key falls in the range of one of the level's files (level 0:
// of each of its files). A key of file G is taken to fall in level L's ranges when G's range
// meets one of them: exact where ranges nest or are disjoint (random keys, where every level spans
// the key space: 1 probe per level; ordered keys, where levels hold disjoint ranges: each level's
// share of the keys), an overestimate at the edges of partial overlaps. Ranges are bytewise: a
// comparator that is not (little-endian integers) makes them overlap, which counts every level
// probed, Monkey's assumption. O(files x log(files)) per level.
std::vector<double> ProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels);

// The same with lookups drawn like those the readers counted. A lookup is counted once on each
// filter it probes, so a counted file's share of the probes (sampled_probes / exposure) weighs
// 1 / (the filters a lookup in its range probed: the levels its range meets, as ProbesPerLevel
// counts them, with the files where they are now); the lookups so found in each file's range
// then probe the levels it meets in the tree its keys are going to. A file not counted, or not
// exposed yet (no exposure: in the listener, until its second account), receives its keys at the
// exposed files' lookups per key; so does a file whose counts are not finite or are negative. So
// the counts say which key ranges lookups go to, and the ranges now which levels a lookup there
// probes. Each level's counts summed would price the files a compaction writes by the ranges of the
// files they replace: where one compaction left an upper level with a gap in which the lookups fall
// (its last file of a few keys, the file below moved down unchanged), the level was counted as a
// quarter as probed as the last level, and the next compaction's files for it, which span the
// gap and are probed about as often, got fewer bits per key than the last level's
// (docs/filters.md). Empty where no file is counted and exposed, with counts finite and
// non-negative and some lookups.
std::vector<double> CountedProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels);

// The probes each level receives per lookup: the key-range estimate (ProbesPerLevel) blended
// with the counted one (CountedProbesPerLevel), which weighs n / (n + kPriorSamples) for the
// `samples` n the readers have counted on the tree, decayed like the files' (about 256 x 32
// probes weigh a half), and nothing while files holding more than a tenth of the tree's keys are
// not counted (after a restart: files written before it, until compaction rewrites them) or no
// exposed file has counted a probe. The weight counts the samples of files since replaced: in a
// tree of small files many are compacted before their second account, and the exposed files'
// samples alone would give about half the weight, which also weakens the hot ranges' bits
// (HeatOf, which takes the same weight). *weight: the counts' weight, in [0, 1).
std::vector<double> BlendProbes(const std::vector<FileRange>& files, size_t num_levels,
                                double samples, double* weight);

}  // namespace sstfilter
