// SPDX-License-Identifier: Apache-2.0
// The probes each level receives per lookup (plugin/level_probes.h): from the files' key ranges,
// from the readers' counts, and the two blended.
#include "plugin/level_probes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace sstfilter {
namespace {

// Bytewise-ordered keys: key k of the key space [0, 1000).
std::string K(int k) {
  char buf[16];
  snprintf(buf, sizeof(buf), "k%04d", k);
  return buf;
}

FileRange File(int level, double keys, int lo, int hi) {
  return {level, level, keys, K(lo), K(hi)};
}

// A file the readers counted, exposed to `exposure` of the tree's sampled probes (alike for files
// that were all live as long: then their counts alone set their shares).
FileRange Counted(int level, double keys, int lo, int hi, double sampled_probes,
                  double exposure = 10'000) {
  FileRange f = File(level, keys, lo, hi);
  f.counted = true;
  f.sampled_probes = sampled_probes;
  f.exposure = exposure;
  return f;
}

void ExpectProbes(const std::vector<double>& probes, const std::vector<double>& expected,
                  double tolerance = 1e-12) {
  ASSERT_EQ(probes.size(), expected.size());
  for (size_t i = 0; i < probes.size(); ++i) EXPECT_NEAR(probes[i], expected[i], tolerance) << i;
}

// Random keys: every level spans the key space, so a lookup probes each level once, and each of
// level 0's files. Ordered keys: levels hold disjoint ranges, and a lookup drawn like the keys
// probes each level by its share of them.
TEST(LevelProbes, KeyRangesGiveOneProbePerLevelForRandomKeysAndTheKeySharesForOrdered) {
  const std::vector<FileRange> random = {File(0, 100, 0, 999),    File(0, 100, 1, 998),
                                         File(5, 400, 0, 499),    File(5, 400, 500, 999),
                                         File(6, 2000, 0, 249),   File(6, 2000, 250, 499),
                                         File(6, 2000, 500, 749), File(6, 2000, 750, 999)};
  ExpectProbes(ProbesPerLevel(random, 7), {2, 0, 0, 0, 0, 1, 1});

  const std::vector<FileRange> ordered = {File(0, 100, 900, 999), File(5, 300, 600, 899),
                                          File(6, 600, 0, 599)};
  ExpectProbes(ProbesPerLevel(ordered, 7), {0.1, 0, 0, 0, 0, 0.3, 0.6});
  ExpectProbes(ProbesPerLevel({}, 3), {0, 0, 0});
}

// In a tree of random keys every level spans the key space, and a lookup anywhere probes each
// level once, and each of level 0's files: however skewed the counts, so are the probes.
TEST(LevelProbes, WhereEveryLevelSpansTheKeysTheCountsMoveNoLevel) {
  std::vector<FileRange> random = {Counted(0, 100, 0, 999, 64), Counted(0, 100, 3, 997, 64),
                                   Counted(5, 400, 0, 499, 32), Counted(5, 400, 500, 999, 32)};
  for (int i = 0; i < 4; ++i) random.push_back(Counted(6, 2000, 250 * i, 250 * i + 249, 1 + i * i));
  ExpectProbes(CountedProbesPerLevel(random, 7), {2, 0, 0, 0, 0, 1, 1});
}

// A lookup is counted once on each filter it probes, so each count weighs one over the filters a
// lookup in its range probes. Here lookups spread evenly over the key space; level 5 covers its
// lower half and level 6 all of it, so a lookup probes level 5 half the time. Weighed alike, the
// counts of the lower half would have come twice (level 5: 2/3).
TEST(LevelProbes, ALookupCountedOnSeveralLevelsIsOneLookup) {
  const std::vector<FileRange> files = {Counted(5, 100, 0, 499, 500), Counted(6, 500, 0, 499, 500),
                                        Counted(6, 500, 500, 999, 500)};
  ExpectProbes(CountedProbesPerLevel(files, 7), {0, 0, 0, 0, 0, 0.5, 1});
}

// The case the counts per level got wrong: lookups go to the end of the key space (Zipfian's hot
// keys), where the last compaction left level 5 with a gap (its last file of a few keys, the file
// below moved down to level 6), so level 5's files counted few probes. The next compaction writes
// level 5 anew from its files and level 0's, which span the key space: its files are probed about
// as often as level 6's, and the estimate says so from the ranges they are going to. Where level 5
// does leave the hot range uncovered, the estimate follows: few probes.
TEST(LevelProbes, CountsSayWhereLookupsGoAndTheRangesNowWhichLevelsTheyProbe) {
  std::vector<FileRange> below = {Counted(6, 900, 0, 899, 90), Counted(6, 100, 900, 999, 900)};
  std::vector<FileRange> rewritten = below;
  // Level 5's old file and level 0's, counted where their keys are going (level 5).
  rewritten.push_back(Counted(5, 400, 0, 899, 90));
  rewritten.push_back(Counted(5, 50, 0, 999, 990));
  const std::vector<double> probes = CountedProbesPerLevel(rewritten, 7);
  EXPECT_NEAR(probes[5], 1, 1e-12);
  EXPECT_NEAR(probes[6], 1, 1e-12);

  std::vector<FileRange> gap = below;
  gap.push_back(Counted(5, 400, 0, 899, 90));
  const std::vector<double> with_gap = CountedProbesPerLevel(gap, 7);
  // 90 lookups in [0, 899] (each counted on both levels), 900 in [900, 999] (level 6 only).
  EXPECT_NEAR(with_gap[5], 90.0 / 990, 1e-12);
  EXPECT_NEAR(with_gap[6], 1, 1e-12);
  // The key-range estimate, which takes lookups to go like the keys, gives level 5 13/14.
  EXPECT_NEAR(ProbesPerLevel(gap, 7)[5], 1300.0 / 1400, 1e-12);
}

// A running compaction's inputs are counted where their keys are going, but their lookups were
// counted where they are: two level-0 files of the upper tenth of the key space, being compacted
// into level 5, each counted the 100 lookups there, as did level 6's file of that range (each
// lookup probed three filters); the lower range's 100 lookups probed level 6's other file only.
// Level 5 will receive half the lookups. Divided as the files are going to be (two filters, one
// level each), the upper range would have weighed 150 against 100 (level 5: 0.6).
TEST(LevelProbes, ACompactionsInputsLookupsAreCountedWhereTheInputsAre) {
  std::vector<FileRange> files = {Counted(6, 900, 0, 899, 100), Counted(6, 100, 900, 999, 100),
                                  Counted(5, 50, 900, 999, 100), Counted(5, 50, 900, 999, 100)};
  files[2].level_now = files[3].level_now = 0;
  ExpectProbes(CountedProbesPerLevel(files, 7), {0, 0, 0, 0, 0, 0.5, 1});
}

// A file's share of the probes is its count over its exposure, so that a file written lately,
// which has had fewer lookups, is not taken as cold: level 6's file, live for 1,000 sampled probes
// of the tree, counted 400 of them; level 5's, live for the last 100, counted 60 of those. Taken
// as they are, the counts would give level 5 60/460. A file not exposed yet (in the listener,
// until its second account) receives its keys at the exposed files' lookups per key.
TEST(LevelProbes, AFilesShareOfTheProbesIsItsCountOverItsExposure) {
  std::vector<FileRange> files = {Counted(5, 500, 500, 999, 60, 100),
                                  Counted(6, 1000, 0, 499, 400, 1000)};
  ExpectProbes(CountedProbesPerLevel(files, 7), {0, 0, 0, 0, 0, 0.6, 0.4});
  files[0].sampled_probes = files[0].exposure = 0;
  ExpectProbes(CountedProbesPerLevel(files, 7), {0, 0, 0, 0, 0, 1.0 / 3, 2.0 / 3});
  files[1].exposure = 0;
  EXPECT_TRUE(CountedProbesPerLevel(files, 7).empty()) << "no file exposed";
}

// A file whose probes are not counted (written before the database opened) receives its keys at
// the counted files' lookups per key; so do files whose counts are not finite or are negative.
// No lookups counted: no estimate.
TEST(LevelProbes, UncountedFilesReceiveTheCountedLookupsPerKey) {
  // Ordered: 1,000 lookups on level 6's 1,000 keys; level 5's 500 keys uncounted get 500.
  std::vector<FileRange> files = {File(5, 500, 500, 999), Counted(6, 1000, 0, 499, 1000)};
  ExpectProbes(CountedProbesPerLevel(files, 7), {0, 0, 0, 0, 0, 1.0 / 3, 2.0 / 3});
  for (const double bad : {std::nan(""), HUGE_VAL, -5.0}) {
    std::vector<FileRange> with_bad = files;
    with_bad[0].counted = true;
    with_bad[0].sampled_probes = bad;
    ExpectProbes(CountedProbesPerLevel(with_bad, 7), {0, 0, 0, 0, 0, 1.0 / 3, 2.0 / 3});
  }
  for (const std::vector<FileRange>& none :
       {std::vector<FileRange>{File(5, 500, 500, 999), File(6, 1000, 0, 499)},
        std::vector<FileRange>{Counted(5, 500, 500, 999, 0), Counted(6, 1000, 0, 499, 0)}}) {
    EXPECT_TRUE(CountedProbesPerLevel(none, 7).empty());
  }
}

// The counted estimate weighs n / (n + kPriorSamples) for the n samples the tree has counted
// (those of files since replaced included), and nothing while files that are not counted hold
// more than 1 - kMinCountedKeys of the keys, or while no file is exposed.
TEST(LevelProbes, TheCountsWeighByTheirSamplesOnceTheyCoverTheTree) {
  // Ordered: the key estimate gives level 5 1/3, the counts (all lookups on level 5) 1.
  std::vector<FileRange> files = {Counted(5, 500, 500, 999, 768), Counted(6, 1000, 0, 499, 0)};
  double weight = 0;
  const std::vector<double> probes = BlendProbes(files, 7, 768, &weight);
  EXPECT_NEAR(weight, 768.0 / (768 + kPriorSamples), 1e-12);
  EXPECT_NEAR(probes[5], (1 - weight) / 3 + weight, 1e-12);
  EXPECT_NEAR(probes[6], (1 - weight) * 2 / 3, 1e-12);

  // A file of a tenth of the keys and one more not counted: the key estimate alone.
  files.push_back(File(4, 167, 400, 600));
  ExpectProbes(BlendProbes(files, 7, 768, &weight), ProbesPerLevel(files, 7));
  EXPECT_EQ(weight, 0);
  files.back().keys = 166;  // under a tenth of 1,666: counted again
  BlendProbes(files, 7, 2304, &weight);
  EXPECT_NEAR(weight, 0.9, 1e-12) << "the tree's samples, not the live files'";
  for (FileRange& f : files) f.exposure = 0;
  ExpectProbes(BlendProbes(files, 7, 2304, &weight), ProbesPerLevel(files, 7));
  EXPECT_EQ(weight, 0) << "no file exposed";
  EXPECT_TRUE(BlendProbes({}, 3, 100, &weight) == std::vector<double>(3, 0));
  EXPECT_EQ(weight, 0);
}

}  // namespace
}  // namespace sstfilter
