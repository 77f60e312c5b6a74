// SPDX-License-Identifier: Apache-2.0
#include "plugin/level_probes.h"

#include <algorithm>
#include <utility>

namespace sstfilter {

std::vector<double> BlendProbes(const std::vector<double>& estimated,
                                const std::vector<double>& counted, double counted_key_fraction,
                                double* weight) {
  double n = 0, total = 0;
  for (const double c : counted) n += c;
  for (const double e : estimated) total += e;
  *weight = counted_key_fraction >= kMinCountedKeys && n > 0 ? n / (n + kPriorSamples) : 0;
  std::vector<double> probes = estimated;
  if (*weight == 0) return probes;
  for (size_t i = 0; i < probes.size(); ++i) {
    const double c = i < counted.size() ? counted[i] : 0;
    probes[i] = (1 - *weight) * estimated[i] + *weight * total * c / n;
  }
  return probes;
}

std::vector<double> ProbesPerLevel(const std::vector<FileRange>& files, size_t num_levels) {
  std::vector<double> probes(num_levels, 0);
  double total = 0;
  for (const FileRange& f : files) total += f.keys;
  if (total <= 0) return probes;
  auto meets = [](const FileRange& a, const std::string& lo, const std::string& hi) {
    return !(a.largest < lo || hi < a.smallest);
  };
  for (size_t level = 0; level < num_levels; ++level) {
    // The level's ranges, merged and sorted (level 0's files are counted one by one).
    std::vector<std::pair<std::string, std::string>> ranges;
    for (const FileRange& f : files) {
      if (static_cast<size_t>(f.level) == level) ranges.emplace_back(f.smallest, f.largest);
    }
    if (ranges.empty()) continue;
    if (level == 0) {
      for (const auto& [lo, hi] : ranges) {
        for (const FileRange& g : files) probes[0] += meets(g, lo, hi) ? g.keys : 0;
      }
    } else {
      std::sort(ranges.begin(), ranges.end());
      std::vector<std::pair<std::string, std::string>> merged;
      for (auto& r : ranges) {
        if (!merged.empty() && !(merged.back().second < r.first)) {
          if (merged.back().second < r.second) merged.back().second = std::move(r.second);
        } else {
          merged.push_back(std::move(r));
        }
      }
      for (const FileRange& g : files) {
        // The first merged range that does not end before g begins.
        const auto it = std::lower_bound(merged.begin(), merged.end(), g.smallest,
                                         [](const std::pair<std::string, std::string>& r,
                                            const std::string& key) { return r.second < key; });
        if (it != merged.end() && meets(g, it->first, it->second)) probes[level] += g.keys;
      }
    }
    probes[level] /= total;
  }
  return probes;
}

}  // namespace sstfilter
