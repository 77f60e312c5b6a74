// SPDX-License-Identifier: Apache-2.0
#include "plugin/level_probes.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sstfilter {
namespace {

bool Meets(const FileRange& g, const std::string& lo, const std::string& hi) {
  return !(g.largest < lo || hi < g.smallest);
}

// Per file, per level: the filters of the level that a lookup of a key in the file's range
// probes, as ProbesPerLevel counts them (level 0: the level's files its range meets; a level
// below: 1 if it meets the level's merged ranges).
std::vector<std::vector<double>> FiltersMet(const std::vector<FileRange>& files,
                                            size_t num_levels) {
  std::vector<std::vector<double>> met(files.size(), std::vector<double>(num_levels, 0));
  for (size_t level = 0; level < num_levels; ++level) {
    // The level's ranges, sorted and merged (level 0's files are counted one by one).
    std::vector<std::pair<std::string, std::string>> ranges;
    for (const FileRange& f : files) {
      if (static_cast<size_t>(f.level) == level) ranges.emplace_back(f.smallest, f.largest);
    }
    if (ranges.empty()) continue;
    if (level == 0) {
      for (size_t g = 0; g < files.size(); ++g) {
        for (const auto& [lo, hi] : ranges) met[g][0] += Meets(files[g], lo, hi) ? 1 : 0;
      }
      continue;
    }
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<std::string, std::string>> merged;
    for (auto& r : ranges) {
      if (!merged.empty() && !(merged.back().second < r.first)) {
        if (merged.back().second < r.second) merged.back().second = std::move(r.second);
      } else {
        merged.push_back(std::move(r));
      }
    }
    for (size_t g = 0; g < files.size(); ++g) {
      // The first merged range that does not end before g begins.
      const auto it = std::lower_bound(merged.begin(), merged.end(), files[g].smallest,
                                       [](const std::pair<std::string, std::string>& r,
                                          const std::string& key) { return r.second < key; });
      met[g][level] = it != merged.end() && Meets(files[g], it->first, it->second) ? 1 : 0;
    }
  }
  return met;
}

// Each level's probes per lookup for lookups spread over the files' ranges as `lookups` says
// (per file), given what each file's range meets.
std::vector<double> Spread(const std::vector<std::vector<double>>& met,
                           const std::vector<double>& lookups, size_t num_levels) {
  std::vector<double> probes(num_levels, 0);
  double total = 0;
  for (size_t g = 0; g < met.size(); ++g) {
    total += lookups[g];
    for (size_t level = 0; level < num_levels; ++level) probes[level] += lookups[g] * met[g][level];
  }
  if (!(total > 0)) return std::vector<double>(num_levels, 0);
  for (double& p : probes) p /= total;
  return probes;
}

bool Counted(const FileRange& f) {
  return f.counted && std::isfinite(f.sampled_probes) && f.sampled_probes >= 0;
}
}  // namespace

bool Exposed(const FileRange& f) {
  return Counted(f) && std::isfinite(f.exposure) && f.exposure > 0;
}

namespace {

// CountedProbesPerLevel, given what each file's range meets where its keys are going.
std::vector<double> CountedSpread(const std::vector<FileRange>& files,
                                  const std::vector<std::vector<double>>& met, size_t num_levels) {
  // What each range meets where the files are now, where the readers counted its lookups.
  bool moving = false;
  for (const FileRange& f : files) moving |= f.level != f.level_now;
  std::vector<std::vector<double>> met_now;
  if (moving) {
    std::vector<FileRange> now = files;
    size_t levels_now = num_levels;
    for (FileRange& f : now) {
      f.level = f.level_now;
      levels_now = std::max(levels_now, static_cast<size_t>(std::max(f.level_now, 0)) + 1);
    }
    met_now = FiltersMet(now, levels_now);
  }
  std::vector<double> lookups(files.size(), 0);
  std::vector<bool> exposed(files.size(), false);
  double counted_lookups = 0, counted_keys = 0;
  for (size_t g = 0; g < files.size(); ++g) {
    const FileRange& f = files[g];
    if (!Exposed(f)) continue;
    double filters = 0;
    for (const double m : moving ? met_now[g] : met[g]) filters += m;
    exposed[g] = true;
    lookups[g] = f.sampled_probes / f.exposure / std::max(filters, 1.0);
    counted_lookups += lookups[g];
    counted_keys += f.keys;
  }
  if (!(counted_lookups > 0) || !(counted_keys > 0)) return {};
  for (size_t g = 0; g < files.size(); ++g) {
    if (!exposed[g]) lookups[g] = files[g].keys * counted_lookups / counted_keys;
  }
  return Spread(met, lookups, num_levels);
}

}  // namespace

std::vector<double> ProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels) {
  std::vector<double> keys;
  for (const FileRange& f : files) keys.push_back(f.keys);
  return Spread(FiltersMet(files, num_levels), keys, num_levels);
}

std::vector<double> CountedProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels) {
  return CountedSpread(files, FiltersMet(files, num_levels), num_levels);
}

std::vector<double> BlendProbes(const std::vector<FileRange>& files, size_t num_levels,
                                double samples, double* weight) {
  double keys = 0, counted_keys = 0;
  std::vector<double> file_keys;
  for (const FileRange& f : files) {
    keys += f.keys;
    counted_keys += Counted(f) ? f.keys : 0;
    file_keys.push_back(f.keys);
  }
  const std::vector<std::vector<double>> met = FiltersMet(files, num_levels);
  std::vector<double> probes = Spread(met, file_keys, num_levels);
  const std::vector<double> counted = CountedSpread(files, met, num_levels);
  *weight = keys > 0 && counted_keys / keys >= kMinCountedKeys && samples > 0 && !counted.empty()
                ? samples / (samples + kPriorSamples)
                : 0;
  if (*weight == 0) return probes;
  for (size_t i = 0; i < probes.size(); ++i) {
    probes[i] = (1 - *weight) * probes[i] + *weight * counted[i];
  }
  return probes;
}

}  // namespace sstfilter
