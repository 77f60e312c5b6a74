// SPDX-License-Identifier: Apache-2.0
// db_bench_ext as a user runs it: bad flags, the JSON output, and a small end-to-end run whose
// measured false-positive rates agree with the filters' own estimates.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "compat/rocksdb_api.h"
#include "core/filter_spec.h"
#include "core/kinds.h"
#include "core/random.h"
#include "db_bench_ext/key_dist.h"
#include "db_bench_ext/measure.h"
#include "db_bench_ext/settle.h"
#include "plugin/policies.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// runner: a command that runs the tool (such as setpriv, to run it as another user), or none.
RunResult RunTool(const std::vector<std::string>& args, const std::string& runner = "") {
  const std::string dir = fs::temp_directory_path() / ("dbx_out_" + std::to_string(::getpid()));
  std::string cmd = runner.empty() ? Quote(DB_BENCH_EXT) : runner + " " + Quote(DB_BENCH_EXT);
  for (const std::string& a : args) {
    // Appended, not " " + Quote(a): in C++20, g++ 12 warns on that form (-Wrestrict, a false
    // positive, GCC bug 105651).
    cmd += ' ';
    cmd += Quote(a);
  }
  cmd += " > " + dir + ".out 2> " + dir + ".err";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(dir + ".out");
  r.err = ReadFile(dir + ".err");
  fs::remove(dir + ".out");
  fs::remove(dir + ".err");
  return r;
}

class DbBenchExtTest : public ::testing::Test {
 protected:
  const testing::TempDir db_dir_{"db_bench_ext_test"};
  const std::string db_ = db_dir_.path();

  // --inspect_db of the database at `path`, written under memory_budget=40K with the listener,
  // says the budget (40,960 bytes) and what its filters spend: within the overshoot, and at least
  // half of it.
  static void ExpectInspectSaysTheBudgetSpent(const std::string& path) {
    const RunResult inspect = RunTool({"--inspect_db=" + path});
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const std::string line =
        "memory_budget of column family default (sstfilter.Leveled): 40960 bytes";
    const size_t at = inspect.out.find(line);
    ASSERT_NE(at, std::string::npos) << inspect.out;
    const size_t ratio_at = inspect.out.find("bytes, ", at + line.size());
    ASSERT_NE(ratio_at, std::string::npos) << inspect.out;
    const double spent = std::stod(inspect.out.substr(ratio_at + 7));
    EXPECT_LE(spent, 1.05) << inspect.out;
    EXPECT_GE(spent, 0.5) << inspect.out;
  }
};

TEST_F(DbBenchExtTest, BadFlagsFailBeforeAnyWorkWithOneLine) {
  const struct {
    std::string flag;
    std::string mentions;
  } cases[] = {
      {"--filter_uri=none,nosuch.Filter:10", "nosuch.Filter"},
      {"--filter_uri={id=sstfilter.Bloom;fp_rate=2}", "fp_rate must be in (0, 1)"},
      {"--filter_uri={id=sstfilter.Cuckoo}", "needs bits_per_key"},
      {"--num=-5", "--num"},
      {"--num=0", "--num"},
      {"--reads=-3", "--reads"},
      {"--key_size=4", "--key_size"},
      {"--value_size=-1", "--value_size"},
      {"--threads=0", "--threads"},
      {"--batch_size=0", "--batch_size"},
      {"--cache_size=-1", "--cache_size"},
      {"--write_buffer_size=10", "--write_buffer_size"},
      {"--fp_rate=1.5", "--fp_rate"},
      {"--benchmarks=fillrandom,nonsense", "nonsense"},
      {"--compression_type=brotli", "brotli"},
      {"--compaction_style=fifo", "--compaction_style 'fifo'"},
      {"--num_levels=0", "--num_levels"},
      {"--max_bytes_for_level_multiplier=1", "--max_bytes_for_level_multiplier"},
      {"--max_bytes_for_level_base=100", "--max_bytes_for_level_base"},
      {"--filter_uri={id=sstfilter.Leveled;fp_rate=0.01}", "not fp_rate"},
      {"--sst_partitioner_factory=nosuch.Partitioner", "nosuch.Partitioner"},
      {"--listeners=nosuch.Listener", "--listeners"},
      // A name RocksDB does not know, beside one it does (RocksDB's option skips the first).
      {"--listeners=sstfilter.LeveledBudget:nosuch.Listener", "'nosuch.Listener'"},
      {"--key_dist=pareto", "--key_dist"},
      {"--key_dist=zipf:1.5", "zipf:THETA"},
      {"--key_dist=zipf:", "zipf:THETA"},
      {"--key_dist=zipf:0x0.8", "zipf:THETA"},  // strtod's hexadecimal
      {"--key_dist=zipf: 0.5", "zipf:THETA"},
      {"--zipf_theta=0x0.8", "--zipf_theta takes a decimal number, got '0x0.8'"},  // strtod's
      {"--late_fraction=+0.5", "--late_fraction takes a decimal number"},
      {"--key_dist=scrambled:0", "scrambled:THETA"},
      {"--key_dist=scrambled:", "scrambled:THETA"},
      {"--key_dist=uniform:0.5", "--key_dist"},
      {"--late_fraction=-0.1", "--late_fraction must be in [0, 1]"},
      {"--late_fraction=1.5", "--late_fraction must be in [0, 1]"},
      {"--late_keys=0", "--late_keys must be in [1, 2^40]"},
      {"--read_hit_ratio=1.5", "--read_hit_ratio"},
      {"--duration=-1", "--duration"},
      {"--options_file=/nonexistent/OPTIONS-000001", "--options_file"},
      {"--format_version=-2", "--format_version"},
      {"--metadata_block_size=0", "--metadata_block_size"},
      {"--reads_per_write=-1", "--reads_per_write"},
      {"--rounds=-1", "--rounds"},
      {"--scan_length=0", "--scan_length"},
      {"--key_spacing=0", "--key_spacing"},
      {"--benchmarks=fillrandom,seekempty", "--key_spacing"},  // 16 integers need spacing 9
      {"--range_filter=nosuch.Collector", "nosuch.Collector"},
      {"--range_filter={id=sstfilter.RangeFilter;bits_per_key=1}", "between 4 and 48"},
      {"--db=/proc/sstfilter_cannot_be_here/db", "--db"},
      {"stray_argument", "stray_argument"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--num=1000", c.flag};
    if (c.flag.rfind("--db=", 0) != 0) args.push_back("--db=" + db_);
    const RunResult r = RunTool(args);
    EXPECT_NE(r.exit_code, 0) << c.flag;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.flag << ": " << r.err;
    EXPECT_EQ(r.err.rfind("db_bench_ext: ", 0), 0u) << c.flag << ": " << r.err;
    EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.flag << " printed before failing: " << r.out;
    EXPECT_FALSE(fs::exists(db_ + "/policy0")) << c.flag << " started work";
  }
}

// Flags each fine alone that ask for what the run cannot deliver: a database to reuse that is not
// there (RocksDB would make an empty one, and every lookup would miss), a JSON report of the sizing
// calculator (which prints its figures only), a --json file that cannot be written (found out
// only after the whole run). One line, before any work, and no file left behind.
TEST_F(DbBenchExtTest, RunsThatCannotDeliverFailBeforeAnyWorkWithOneLine) {
  const std::string json = db_ + ".json";
  const struct {
    std::vector<std::string> args;
    std::string mentions;
  } cases[] = {
      {{"--use_existing_db", "--benchmarks=readrandom"}, "no database at '" + db_ + "/policy0'"},
      {{"--benchmarks=sizing", "--json=" + json}, "--json"},
      {{"--benchmarks=fillrandom", "--json=" + db_ + "/no/such/dir.json"}, "--json"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--num=1000", "--reads=1000", "--db=" + db_};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const RunResult r = RunTool(args);
    EXPECT_NE(r.exit_code, 0) << c.mentions;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.mentions << ": " << r.err;
    EXPECT_EQ(r.err.rfind("db_bench_ext: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.mentions), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << c.mentions << " printed before failing: " << r.out;
    EXPECT_FALSE(fs::exists(db_ + "/policy0")) << c.mentions << " started work";
    EXPECT_FALSE(fs::exists(json)) << c.mentions;
  }
}

// The sizing report has a row for every kind of core/kinds.h, named by the kind's name (a kind
// cannot be added without one: tests/core/kind_completeness_test.cc lists the other places).
TEST_F(DbBenchExtTest, SizingNamesEveryKind) {
  const RunResult r = RunTool({"--num=10000", "--db=" + db_, "--benchmarks=sizing"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ForEachKind([&](auto kind) {
    using K = decltype(kind);
    EXPECT_NE(r.out.find("\n  " + std::string(K::kName) + " ("), std::string::npos)
        << K::kName << " has no row in the sizing report:\n"
        << r.out;
  });
}

// A double flag's value is checked in both of gflags' forms (--name=value above; --name value
// here), and the value of another flag is not read as a flag, whatever it looks like.
TEST_F(DbBenchExtTest, DecimalFlagsAreCheckedInEitherFormAndOnlyThem) {
  const RunResult split = RunTool({"--num=1000", "--db=" + db_, "--late_fraction", "0x0.8"});
  EXPECT_NE(split.exit_code, 0);
  EXPECT_NE(split.err.find("--late_fraction takes a decimal number, got '0x0.8'"),
            std::string::npos)
      << split.err;
  // --filter_uri's value: the policy that cannot be loaded is the error, not a flag.
  const RunResult value =
      RunTool({"--num=1000", "--db=" + db_, "--filter_uri", "-zipf_theta=0x0.8"});
  EXPECT_NE(value.exit_code, 0);
  EXPECT_EQ(value.err.find("takes a decimal number"), std::string::npos) << value.err;
  EXPECT_NE(value.err.find("-zipf_theta=0x0.8"), std::string::npos) << value.err;
}

// --zipf_theta is checked where it applies.
TEST_F(DbBenchExtTest, ZipfThetaOutOfRangeFails) {
  for (const char* theta : {"--zipf_theta=0", "--zipf_theta=1", "--zipf_theta=-0.5"}) {
    const RunResult r = RunTool({"--num=1000", "--db=" + db_, "--key_dist=zipfian", theta});
    EXPECT_NE(r.exit_code, 0) << theta;
    EXPECT_NE(r.err.find("--zipf_theta must be in (0, 1)"), std::string::npos) << r.err;
  }
}

// --key_dist=zipfian: index n - 1 - r drawn with probability 1 / ((r + 1)^theta zeta(n)), within
// 5 sigma, for the hottest key and for the hottest 1% of the keys; uniform covers the range.
TEST(KeyDist, ZipfianFrequenciesMatchTheLaw) {
  constexpr uint64_t kKeys = 1'000'000, kDraws = 400'000;
  constexpr double kTheta = 0.99;
  double zeta = 0, zeta_top = 0;
  for (uint64_t i = 1; i <= kKeys; ++i) {
    zeta += std::pow(static_cast<double>(i), -kTheta);
    if (i == kKeys / 100) zeta_top = zeta;
  }
  const db_bench_ext::KeyDist zipf(kKeys, kTheta);
  uint64_t rng = 1, hottest = 0, top = 0;
  for (uint64_t i = 0; i < kDraws; ++i) {
    const uint64_t k = zipf.Next(&rng);
    ASSERT_LT(k, kKeys);
    hottest += k == kKeys - 1;
    top += k >= kKeys - kKeys / 100;
  }
  const double p_hottest = 1 / zeta, p_top = zeta_top / zeta;
  EXPECT_NEAR(hottest, kDraws * p_hottest, testing::BinomialTolerance(kDraws, p_hottest));
  // The top 1%: Gray et al.'s inversion is exact for ranks 0 and 1 and approximate beyond
  // (within 1% of the law at this size), so the bound adds 1% of the expectation.
  EXPECT_NEAR(top, kDraws * p_top,
              testing::BinomialTolerance(kDraws, p_top) + 0.01 * kDraws * p_top);
  printf(
      "[ figures  ] zipfian 0.99 over 1M keys: hottest key %.4f (law %.4f), top 1%% %.4f "
      "(law %.4f)\n",
      static_cast<double>(hottest) / kDraws, p_hottest, static_cast<double>(top) / kDraws, p_top);

  const db_bench_ext::KeyDist uniform(kKeys, 0);
  uint64_t low_half = 0;
  for (uint64_t i = 0; i < kDraws; ++i) low_half += uniform.Next(&rng) < kKeys / 2;
  EXPECT_NEAR(low_half, kDraws / 2.0, testing::BinomialTolerance(kDraws, 0.5));
}

// --key_dist=scrambled: the same law over the indexes Scramble permutes (a bijection of [0, n),
// checked whole at n = 1000, 997 and 1M), so the hottest key's image is drawn with the law's
// chance 1 / zeta(n), within 5 sigma; and the hottest 1% of the keys spread over the key space.
// Their images are c - a r (mod n) for ranks r < n / 100, a Weyl sequence with a / n near the
// golden ratio's fraction, whose count in any interval is within a few of its length's share
// (its discrepancy is O(log N / N)): 100 of 10,000 in the last 1%, within 10. Unscrambled, all
// 10,000 are there.
TEST(KeyDist, ScrambledZipfianSpreadsTheHotKeys) {
  for (uint64_t n : {1'000, 997, 1'000'000}) {
    const db_bench_ext::KeyDist d(n, 0.99, /*scrambled=*/true);
    std::vector<bool> seen(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t image = d.Scramble(i);
      ASSERT_LT(image, n);
      ASSERT_FALSE(seen[image]) << n << " " << i;
      seen[image] = true;
    }
  }
  constexpr uint64_t kKeys = 1'000'000, kDraws = 400'000;
  const db_bench_ext::KeyDist plain(kKeys, 0.99), scrambled(kKeys, 0.99, /*scrambled=*/true);
  const uint64_t hottest = scrambled.Scramble(kKeys - 1);
  uint64_t rng = 3, hits = 0;
  for (uint64_t i = 0; i < kDraws; ++i) hits += scrambled.Next(&rng) == hottest;
  double zeta = 0;
  for (uint64_t i = 1; i <= kKeys; ++i) zeta += std::pow(static_cast<double>(i), -0.99);
  EXPECT_NEAR(hits, kDraws / zeta, testing::BinomialTolerance(kDraws, 1 / zeta));
  uint64_t plain_in_last = 0, scrambled_in_last = 0;
  for (uint64_t rank = 0; rank < kKeys / 100; ++rank) {
    plain_in_last += plain.Scramble(kKeys - 1 - rank) >= kKeys - kKeys / 100;
    scrambled_in_last += scrambled.Scramble(kKeys - 1 - rank) >= kKeys - kKeys / 100;
  }
  EXPECT_EQ(plain_in_last, kKeys / 100);
  EXPECT_NEAR(scrambled_in_last, kKeys / 10'000, 10);
}

// --late_fraction: every key written once; a key on time follows every key below it, and one due
// d <= --late_keys places late follows at most the d - 1 keys above it (the highest key before it
// is at most d - 1 above it); the share of keys some higher key precedes is the late fraction,
// within 5 sigma and the 1 in --late_keys whose delay of 1 leaves them in order. That none of
// about 2,000 late keys is due more than --late_keys / 2 places late has chance 2^-2000.
TEST(KeyDist, LateKeysAreWrittenOnceAndAtMostLateKeysLate) {
  constexpr uint64_t kKeys = 200'000, kLateKeys = 1'000;
  constexpr double kLate = 0.01;
  std::vector<uint64_t> order = db_bench_ext::SequentialOrder(kKeys, kLate, kLateKeys, 7);
  ASSERT_EQ(order.size(), kKeys);
  uint64_t highest = 0, late = 0, latest = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i] < highest) {
      ++late;
      latest = std::max(latest, highest - order[i]);
    }
    highest = std::max(highest, order[i]);
  }
  EXPECT_LE(latest, kLateKeys - 1);
  EXPECT_GT(latest, kLateKeys / 2);
  EXPECT_NEAR(late, kKeys * kLate,
              testing::BinomialTolerance(kKeys, kLate) + kKeys * kLate / kLateKeys);
  std::sort(order.begin(), order.end());
  for (uint64_t i = 0; i < kKeys; ++i) ASSERT_EQ(order[i], i);

  const std::vector<uint64_t> on_time = db_bench_ext::SequentialOrder(1000, 0, kLateKeys, 7);
  for (uint64_t i = 0; i < on_time.size(); ++i) ASSERT_EQ(on_time[i], i);
  std::vector<uint64_t> shuffled = db_bench_ext::RandomOrder(1000, 7);
  EXPECT_FALSE(std::is_sorted(shuffled.begin(), shuffled.end()));
  std::sort(shuffled.begin(), shuffled.end());
  for (uint64_t i = 0; i < shuffled.size(); ++i) ASSERT_EQ(shuffled[i], i);
}

// --plot draws absent-key lookups of filters: asked for without them, it fails before any work.
// Quantiles from the histogram are within 1/32 of the exact ones, from nanoseconds to hours.
TEST(LatencyHistogram, QuantilesAreWithinTheBucketWidthOfTheExactOnes) {
  std::vector<uint64_t> ns;
  uint64_t state = 5;
  for (int i = 0; i < 100000; ++i) {
    // Log-uniform over [1 ns, 2^42 ns]: every bucket scale.
    const double exponent = 42.0 * UnitInterval(SplitMix64(&state));
    ns.push_back(static_cast<uint64_t>(std::exp2(exponent)));
  }
  db_bench_ext::LatencyHistogram histogram, first, second;
  for (size_t i = 0; i < ns.size(); ++i) (i % 2 ? first : second).Add(ns[i]);
  histogram.Merge(first);
  histogram.Merge(second);
  std::sort(ns.begin(), ns.end());
  for (const double q : {0.001, 0.5, 0.99, 0.999, 1.0}) {
    const double exact = static_cast<double>(ns[static_cast<size_t>(std::ceil(q * ns.size())) - 1]);
    EXPECT_NEAR(histogram.QuantileMicros(q) * 1000, exact, exact / 32 + 0.5) << q;
  }
  EXPECT_EQ(db_bench_ext::LatencyHistogram().QuantileMicros(0.5), -1);
}

// What sstfilter's allocation expects of a tree (PolicyResult::EstimateAllocation), from its
// levels' keys and the probes counted per absent lookup. For filters whose rate falls by a
// constant factor per bit, the allocation's best (rate_i proportional to keys_i / probes_i) over
// one rate for all, at the same memory, is exp(-sum w_i ln(w_i / p_i)) / sum p_i, w_i a level's
// share of the keys and p_i its probes per lookup: sstfilter's kinds come within 5% of it (their
// rates fall by whole fingerprint bits, mixed). One level, or probes in proportion to the keys
// (an ordered tree): nothing to gain. No absent-key lookups, or no filter: no estimate.
TEST(EstimateAllocation, IsWhatTheLevelsKeysAndProbesAllow) {
  using db_bench_ext::BenchResult;
  using db_bench_ext::LevelCounts;
  using db_bench_ext::PolicyResult;
  // levels: {level, files, keys, probes per lookup}
  auto estimate = [](const std::vector<std::tuple<int, uint64_t, uint64_t, double>>& levels,
                     double bits_per_key, uint64_t lookups) {
    PolicyResult pr;
    BenchResult missing;
    static const db_bench_ext::Benchmark kReadMissing{
        "readmissing",        db_bench_ext::BenchmarkKind::kRead,
        /*sequential=*/false, /*absent_keys=*/true,
        /*multi_get=*/false,  /*mixed_keys=*/false};
    missing.benchmark = &kReadMissing;
    missing.ops = lookups;
    for (const auto& [level, files, keys, probes] : levels) {
      pr.levels[level].files = files;
      pr.levels[level].keys = keys;
      pr.files += files;
      pr.filter_entries += keys;
      missing.levels[level].negatives = static_cast<uint64_t>(probes * lookups);
    }
    pr.filter_bytes = static_cast<uint64_t>(bits_per_key * pr.filter_entries / 8);
    pr.benches.push_back(missing);
    return pr.EstimateAllocation();
  };
  auto closed_form = [](const std::vector<std::tuple<int, uint64_t, uint64_t, double>>& levels) {
    double keys = 0, probes = 0, log_lambda = 0;
    for (const auto& l : levels) keys += std::get<2>(l);
    for (const auto& [level, files, k, p] : levels) {
      const double w = k / keys;
      log_lambda -= w * std::log(w / p);
      probes += p;
    }
    return std::exp(log_lambda) / probes;
  };
  // A random tree as bench.sh --tight builds it: level 5 spans 62% of the key space.
  const std::vector<std::tuple<int, uint64_t, uint64_t, double>> random = {
      {0, 1, 107'380, 1.0}, {5, 10, 530'865, 0.62}, {6, 39, 2'361'755, 1.0}};
  const PolicyResult::AllocationEstimate r = estimate(random, 10, 50'000);
  printf(
      "[ figures  ] a random tree at 10 bits/key: %.5f FP/look with one filter, %.5f over the "
      "levels (%.3fx; the closed form %.3fx)\n",
      r.one_filter, r.over_the_levels, r.over_the_levels / r.one_filter, closed_form(random));
  ASSERT_GT(r.one_filter, 0);
  EXPECT_NEAR(r.over_the_levels / r.one_filter, closed_form(random), 0.05 * closed_form(random));
  // One filter expects its rate on every probe: 2.62 probes at sstfilter's best rate within 10
  // bits per key (under 0.2%).
  EXPECT_GT(r.one_filter, 2.62 * 0.0005);
  EXPECT_LT(r.one_filter, 2.62 * 0.002);

  const PolicyResult::AllocationEstimate one_level =
      estimate({{1, 40, 2'000'000, 1.0}}, 10, 50'000);
  EXPECT_NEAR(one_level.over_the_levels, one_level.one_filter, 1e-9);
  // Ordered: each lookup probes about one level, each in proportion to its keys.
  const PolicyResult::AllocationEstimate ordered =
      estimate({{4, 2, 100'000, 0.1}, {5, 8, 900'000, 0.9}}, 10, 50'000);
  EXPECT_NEAR(ordered.over_the_levels / ordered.one_filter, 1.0, 0.05);
  EXPECT_LT(ordered.over_the_levels, ordered.one_filter * (1 + 1e-9));

  EXPECT_LT(estimate(random, 10, 0).one_filter, 0) << "no absent-key lookups";
  EXPECT_LT(estimate(random, 0, 50'000).one_filter, 0) << "no filter";
  EXPECT_LT(estimate({{6, 39, 2'361'755, 0.0}}, 10, 50'000).one_filter, 0) << "no probes";
}

TEST_F(DbBenchExtTest, PlotWithNothingToDrawFailsBeforeAnyWork) {
  for (const std::string& flag :
       {std::string("--benchmarks=fillrandom,readrandom"), std::string("--filter_uri=none")}) {
    const RunResult r = RunTool({"--num=1000", "--db=" + db_, "--plot=" + db_ + ".png", flag});
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << flag << ": " << r.err;
    EXPECT_NE(r.err.find("--plot"), std::string::npos) << flag << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << flag << " printed before failing: " << r.out;
    EXPECT_FALSE(fs::exists(db_ + "/policy0")) << flag << " started work";
  }
}

// The value of "name": <number> at or after `from` in the JSON text.
double NumberAfter(const std::string& json, size_t from, const std::string& name) {
  const size_t at = json.find("\"" + name + "\": ", from);
  EXPECT_NE(at, std::string::npos) << name;
  return at == std::string::npos ? -1 : std::stod(json.substr(at + name.size() + 4));
}

TEST_F(DbBenchExtTest, EndToEndRatesAgreeWithTheEstimatesAndJsonHasEveryField) {
  constexpr int kNum = 20000;
  const std::string json = db_ + ".json";
  const std::string plot = db_ + ".png";
  const std::vector<std::string> uris = {"sstfilter.Bloom:10", "{id=sstfilter.Cuckoo;fp_rate=0.01}",
                                         "bloomfilter:10"};
  const RunResult r =
      RunTool({"--num=" + std::to_string(kNum), "--reads=-1", "--db=" + db_, "--json=" + json,
               "--plot=" + plot,
               "--benchmarks=fillrandom,readrandom,readmissing,multireadmissing,filterbuild,"
               "filterquery,sizing",
               "--filter_uri=none," + uris[0] + "," + uris[1] + "," + uris[2]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("readmissing  :"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("micros/op"), std::string::npos);
  EXPECT_NE(r.out.find("sizing       :"), std::string::npos);
  EXPECT_NE(r.out.find("filter policy"), std::string::npos);  // the closing table
  // The plot: a PNG, named on the last line.
  EXPECT_NE(r.out.find("plot: " + plot), std::string::npos);
  EXPECT_EQ(ReadFile(plot).substr(0, 4), "\x89PNG");
  fs::remove(plot);

  const std::string text = ReadFile(json);
  ASSERT_FALSE(text.empty());
  for (const char* field :
       {"\"config\"", "\"num\"", "\"policies\"", "\"filter_uri\"", "\"bits_per_key\"",
        "\"filter_bytes\"", "\"sst_files\"", "\"micros_per_op\"", "\"ops_per_sec\"", "\"fp_rate\"",
        "\"filter_checks\"", "\"data_blocks_per_op\"", "\"build_ns_per_key\"", "\"hit_ns\"",
        "\"miss_ns\"", "\"false_positives_per_lookup\"", "\"allocation_estimate\"",
        "\"one_filter_fp_per_lookup\"", "\"over_the_levels_fp_per_lookup\""}) {
    EXPECT_NE(text.find(field), std::string::npos) << field;
  }
  for (size_t i = 0; i < 2; ++i) {  // sstfilter's two policies: estimates from core's math
    const size_t policy = text.find("\"filter_uri\": \"" + uris[i] + "\"");
    ASSERT_NE(policy, std::string::npos) << uris[i];
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> p;
    ASSERT_TRUE(NewFilterPolicy(uris[i], &p).ok());
    const FilterSpec spec = testing::SpecOf(*p);
    // One SST file of kNum keys (they fit in one memtable): one filter per lookup.
    EXPECT_EQ(NumberAfter(text, policy, "sst_files"), 1);
    const double estimate = EstimatedFpRate(spec, kNum).value();
    const size_t missing = text.find("\"readmissing\"", policy);
    const double checks = NumberAfter(text, missing, "filter_checks");
    EXPECT_EQ(checks, kNum);
    EXPECT_EQ(NumberAfter(text, missing, "found"), 0);
    // One filter per lookup: its false positives per lookup are its rate.
    EXPECT_NEAR(NumberAfter(text, missing, "false_positives_per_lookup"),
                NumberAfter(text, missing, "fp_rate"), 1e-9);
    EXPECT_NEAR(NumberAfter(text, missing, "fp_rate") * checks, estimate * checks,
                testing::BinomialTolerance(checks, estimate))
        << uris[i];
    const size_t random = text.find("\"readrandom\"", policy);
    EXPECT_EQ(NumberAfter(text, random, "found"), kNum);
    EXPECT_NEAR(NumberAfter(text, policy, "bits_per_key"),
                8.0 * FilterBytes(spec, kNum).value() / kNum, 1e-3);
  }
  fs::remove(json);
}

// filltimeseries (keys written in order) and readmissingwriterandom (in random order): absent keys
// looked up between the writes, and their filter figures reported like readmissing's: none found,
// a filter consulted by most of them (the rest fall in the memtable's range, or beyond the keys
// written so far), and the false-positive rate of sstfilter.Bloom:10 within a binomial bound of
// its estimate.
TEST_F(DbBenchExtTest, FillsWithLookupsLookUpAbsentKeysBetweenTheWrites) {
  constexpr int kNum = 40000;
  for (const std::string benchmark : {"filltimeseries", "readmissingwriterandom"}) {
    SCOPED_TRACE(benchmark);
    const std::string json = db_ + ".json";
    const RunResult r =
        RunTool({"--num=" + std::to_string(kNum), "--db=" + db_, "--json=" + json,
                 "--benchmarks=" + benchmark, "--reads_per_write=0.5", "--write_buffer_size=65536",
                 "--target_file_size_base=65536", "--filter_uri=sstfilter.Bloom:10"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("20000 absent-key lookups between them (0 found)"), std::string::npos)
        << r.out;
    const std::string text = ReadFile(json);
    const size_t bench = text.find("\"" + benchmark + "\"");
    ASSERT_NE(bench, std::string::npos) << text;
    EXPECT_EQ(NumberAfter(text, bench, "lookups"), kNum / 2);
    EXPECT_EQ(NumberAfter(text, bench, "found"), 0);
    const double checks = NumberAfter(text, bench, "filter_checks");
    EXPECT_GT(checks, kNum / 4);
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> p;
    ASSERT_TRUE(NewFilterPolicy("sstfilter.Bloom:10", &p).ok());
    const double estimate = EstimatedFpRate(testing::SpecOf(*p), 500).value();
    EXPECT_NEAR(NumberAfter(text, bench, "fp_rate") * checks, estimate * checks,
                testing::BinomialTolerance(checks, estimate));
    EXPECT_NEAR(NumberAfter(text, bench, "false_positives_per_lookup"),
                NumberAfter(text, bench, "fp_rate") * checks / (kNum / 2), 1e-9);
    fs::remove(json);
  }
}

// Every file under a directory and its bytes.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().string()] = ReadFile(e.path().string());
  }
  return files;
}

// --benchmarks=advise on a database written with bloomfilter:10, then on one written with
// sstfilter.Bloom:10: for the policy the database uses, the advisor's filters, rebuilt from the
// files' keys, answer the absent keys exactly as the database's own do through Get, level by
// level; and nothing under the database's path changes, though it is open (read-write) in this
// process meanwhile.
TEST_F(DbBenchExtTest, AdvisorPredictsTheDatabasesOwnFiltersExactlyAndWritesNothing) {
  for (const std::string own : {"bloomfilter:10", "sstfilter.Bloom:10"}) {
    SCOPED_TRACE(own);
    fs::remove_all(db_);
    const RunResult fill =
        RunTool({"--num=60000", "--db=" + db_, "--benchmarks=fillrandom", "--settled_fill",
                 "--write_buffer_size=65536", "--target_file_size_base=65536",
                 "--max_bytes_for_level_base=262144", "--level0_file_num_compaction_trigger=2",
                 "--compression_type=none", "--filter_uri=" + own});
    ASSERT_EQ(fill.exit_code, 0) << fill.err;
    const std::string path = db_ + "/policy0";
    ROCKSDB_NAMESPACE::DBOptions db_options;
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> cfs;
    ASSERT_TRUE(
        ROCKSDB_NAMESPACE::LoadLatestOptions(StrictConfigOptions(), path, &db_options, &cfs).ok());
    ROCKSDB_NAMESPACE::Options options(db_options, cfs.at(0).options);
    ROCKSDB_NAMESPACE::Status s;
    std::unique_ptr<ROCKSDB_NAMESPACE::DB> open = testing::OpenDb(options, path, &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const auto before = Snapshot(path);

    const std::string json = db_ + ".json";
    const RunResult r =
        RunTool({"--benchmarks=advise", "--db=" + path, "--reads=20000", "--json=" + json,
                 "--filter_uri=" + own + ",sstfilter.Leveled:10,none"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("20000 absent keys (made from the database's keys)"), std::string::npos)
        << r.out;
    EXPECT_TRUE(before == Snapshot(path)) << "the advisor changed a file of the database";
    open.reset();

    const std::string text = ReadFile(json);
    const size_t live = text.find("\"live\": true");
    const size_t rebuilt = text.find("\"filter_uri\": \"" + own + "\"");
    ASSERT_NE(live, std::string::npos) << text;
    ASSERT_NE(rebuilt, std::string::npos) << text;
    // The same probes and the same false positives, overall and on every level.
    for (const char* field : {"probes", "false_positives", "filter_bytes"}) {
      EXPECT_EQ(NumberAfter(text, live, field), NumberAfter(text, rebuilt, field)) << field;
    }
    EXPECT_GT(NumberAfter(text, live, "false_positives"), 0);
    const std::string live_levels =
        text.substr(text.find("\"levels\"", live),
                    text.find(']', text.find("\"levels\"", live)) - text.find("\"levels\"", live));
    const std::string rebuilt_levels = text.substr(
        text.find("\"levels\"", rebuilt),
        text.find(']', text.find("\"levels\"", rebuilt)) - text.find("\"levels\"", rebuilt));
    EXPECT_EQ(std::count(live_levels.begin(), live_levels.end(), '{'),
              std::count(rebuilt_levels.begin(), rebuilt_levels.end(), '{'));
    EXPECT_GE(std::count(live_levels.begin(), live_levels.end(), '{'), 2) << live_levels;
    size_t at_live = 0, at_rebuilt = 0;
    while ((at_live = live_levels.find("\"level\"", at_live + 1)) != std::string::npos) {
      at_rebuilt = rebuilt_levels.find("\"level\"", at_rebuilt + 1);
      ASSERT_NE(at_rebuilt, std::string::npos);
      EXPECT_EQ(NumberAfter(live_levels, at_live, "level"),
                NumberAfter(rebuilt_levels, at_rebuilt, "level"));
      EXPECT_EQ(NumberAfter(live_levels, at_live, "false_positives"),
                NumberAfter(rebuilt_levels, at_rebuilt, "false_positives"));
      EXPECT_EQ(NumberAfter(live_levels, at_live, "probes"),
                NumberAfter(rebuilt_levels, at_rebuilt, "probes"));
    }
    // No filter: every probe reads a block.
    const size_t none = text.find("\"filter_uri\": \"none\"");
    ASSERT_NE(none, std::string::npos);
    EXPECT_EQ(NumberAfter(text, none, "false_positives"), NumberAfter(text, none, "probes"));
    fs::remove(json);
  }
}

// A memory budget in the tools: --inspect_db says each column family's budget and what its
// filters spend; the advisor, for a candidate with one, what its filters would spend. The
// database was written under the budget with the listener, which holds it.
TEST_F(DbBenchExtTest, InspectAndAdvisorShowTheMemoryBudget) {
  const std::string budgeted = "{id=sstfilter.Leveled;memory_budget=40K}";
  fs::remove_all(db_);
  const RunResult fill =
      RunTool({"--num=60000", "--db=" + db_, "--benchmarks=fillrandom", "--settled_fill",
               "--write_buffer_size=65536", "--target_file_size_base=65536",
               "--max_bytes_for_level_base=262144", "--level0_file_num_compaction_trigger=2",
               "--compression_type=none", "--listeners=sstfilter.LeveledBudget",
               "--filter_uri=" + budgeted});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const std::string path = db_ + "/policy0";
  ExpectInspectSaysTheBudgetSpent(path);

  const RunResult advise = RunTool({"--benchmarks=advise", "--db=" + path, "--reads=2000",
                                    "--filter_uri=" + budgeted + ",sstfilter.Leveled:10"});
  ASSERT_EQ(advise.exit_code, 0) << advise.err;
  const size_t advised = advise.out.find("memory_budget 40960 bytes: these filters ");
  ASSERT_NE(advised, std::string::npos) << advise.out;
  EXPECT_EQ(advise.out.find("  memory_budget ", advised + 1), std::string::npos)
      << "only the candidate with a budget says so: " << advise.out;
  const size_t x = advise.out.find("bytes, ", advised + 40);
  ASSERT_NE(x, std::string::npos) << advise.out;
  EXPECT_LE(std::stod(advise.out.substr(x + 7)), 1.05) << advise.out;
}

// The advisor against the truth: copies of one database written with each candidate policy (the
// same keys, the same settled fill: the same tree), whose own filters answer the same absent keys
// (in hexadecimal, --absent_keys_hex). What the advisor predicts on the bloomfilter:10 database for
// each candidate, in false positives per probe, is within 3 binomial sigmas of what the
// candidate's copy measures (sigmas of the difference of two binomial rates: the two sets of
// filters are independent draws), and its filter memory within 3% of the copy's.
// sstfilter.Leveled's copy is written with the sstfilter.LeveledBudget listener, which steers it to
// the allocation the advisor builds.
TEST_F(DbBenchExtTest, AdvisorPredictsCopiesRewrittenWithEachPolicy) {
  constexpr int kNum = 60000, kAbsent = 20000;
  const std::vector<std::string> candidates = {"ribbonfilter:10", "sstfilter.Fuse:10",
                                               "sstfilter.Leveled:10"};
  std::string uris = "bloomfilter:10";
  for (const std::string& c : candidates) uris += "," + c;
  const RunResult fill = RunTool(
      {"--num=" + std::to_string(kNum), "--db=" + db_, "--benchmarks=fillrandom", "--settled_fill",
       "--write_buffer_size=65536", "--target_file_size_base=65536",
       "--max_bytes_for_level_base=262144", "--level0_file_num_compaction_trigger=2",
       "--compression_type=none", "--listeners=sstfilter.LeveledBudget", "--filter_uri=" + uris});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  // db_bench_ext's absent keys: the odd integers, 8 bytes big-endian, padded with 'x' to 16.
  const std::string absent = db_ + ".absent";
  {
    std::ofstream out(absent);
    for (uint64_t i = 0; i < kAbsent; ++i) {
      char hex[40];
      snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(2 * (3 * i) + 1));
      out << hex << "7878787878787878\n";
    }
  }
  const std::string json = db_ + ".json";
  auto advise = [&](const std::string& db, const std::string& filter_uri) {
    const RunResult r =
        RunTool({"--benchmarks=advise", "--db=" + db, "--absent_keys=" + absent,
                 "--absent_keys_hex", "--json=" + json, "--filter_uri=" + filter_uri});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string text = ReadFile(json);
    fs::remove(json);
    return text;
  };
  std::string all;
  for (size_t i = 0; i < candidates.size(); ++i) all += (i ? "," : "") + candidates[i];
  const std::string predicted = advise(db_ + "/policy0", all);
  EXPECT_EQ(NumberAfter(predicted, 0, "absent_keys"), kAbsent);
  for (size_t i = 0; i < candidates.size(); ++i) {
    SCOPED_TRACE(candidates[i]);
    const std::string measured = advise(db_ + "/policy" + std::to_string(i + 1), "none");
    const size_t live = measured.find("\"live\": true");
    const size_t prediction = predicted.find("\"filter_uri\": \"" + candidates[i] + "\"");
    ASSERT_NE(live, std::string::npos);
    ASSERT_NE(prediction, std::string::npos);
    // Per probe: a copy's compactions may cut files elsewhere (RocksDB's Ribbon policy's copy
    // did), and the same absent keys then probe a few more or fewer filters.
    const double probes_measured = NumberAfter(measured, live, "probes");
    const double probes_predicted = NumberAfter(predicted, prediction, "probes");
    const double fp_measured = NumberAfter(measured, live, "false_positives");
    const double fp_predicted = NumberAfter(predicted, prediction, "false_positives");
    const double rate = (fp_measured + fp_predicted) / (probes_measured + probes_predicted);
    const double sigma =
        std::sqrt(rate * (1 - rate) * (1 / probes_measured + 1 / probes_predicted));
    const double bits_measured = NumberAfter(measured, live, "bits_per_key");
    const double bits_predicted = NumberAfter(predicted, prediction, "bits_per_key");
    printf(
        "[ figures  ] %s: predicted %.0f false positives in %.0f probes, %.2f bits/key; its "
        "copy %.0f in %.0f, %.2f (%.2f sigmas)\n",
        candidates[i].c_str(), fp_predicted, probes_predicted, bits_predicted, fp_measured,
        probes_measured, bits_measured,
        std::abs(fp_predicted / probes_predicted - fp_measured / probes_measured) / sigma);
    EXPECT_GT(fp_measured, 0);
    EXPECT_NEAR(fp_predicted / probes_predicted, fp_measured / probes_measured, 3 * sigma);
    EXPECT_NEAR(bits_predicted, bits_measured, 0.03 * bits_measured);
  }
  fs::remove(absent);
}

// The advisor's bad input: one line on stderr, a non-zero exit, nothing written.
TEST_F(DbBenchExtTest, AdvisorRejectsBadInputWithOneLine) {
  const RunResult fill = RunTool(
      {"--num=5000", "--db=" + db_, "--benchmarks=fillrandom", "--filter_uri=bloomfilter:10"});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const std::string path = db_ + "/policy0";
  const std::string present = db_ + ".present";
  {
    // Key 0 of db_bench_ext's keys: 8 bytes of the integer 0, big-endian, padded with 'x' to 16.
    std::ofstream out(present, std::ios::binary);
    out << std::string(8, '\0') << std::string(8, 'x') << "\n";
  }
  const std::string present_hex = db_ + ".present_hex";
  // An absent key (1), then key 0.
  std::ofstream(present_hex) << "00000000000000017878787878787878\n"
                             << "00000000000000007878787878787878\n";
  const struct {
    std::vector<std::string> args;
    std::string mentions;
  } cases[] = {
      {{"--benchmarks=advise", "--db=" + db_}, "not a RocksDB database"},
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys=" + present}, "line 1"},
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys=" + db_ + ".nosuch"}, "cannot open"},
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys=" + db_}, "is a directory"},
      // -1 means --num for the read benchmarks; the advisor reads no --num.
      {{"--benchmarks=advise", "--db=" + path, "--reads=-1"}, "--reads must be > 0 for advise"},
      // Key 0 again, in hexadecimal; and a line that is not hexadecimal.
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys=" + present_hex, "--absent_keys_hex"},
       "line 2"},
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys=" + present, "--absent_keys_hex"},
       "not hexadecimal"},
      {{"--benchmarks=advise", "--db=" + path, "--filter_uri=nosuch.Filter"}, "nosuch.Filter"},
      {{"--benchmarks=fillrandom,advise", "--db=" + path}, "runs alone"},
      // Flags the advisor does not use are refused, not ignored; --json is checked before the
      // work, not after it.
      {{"--benchmarks=advise", "--db=" + path, "--plot=" + db_ + ".png"}, "--plot"},
      {{"--benchmarks=advise", "--db=" + path, "--options_file=/nonexistent/OPTIONS-000001"},
       "--options_file"},
      {{"--benchmarks=advise", "--db=" + path, "--range_filter=sstfilter.RangeFilter"},
       "--range_filter"},
      {{"--benchmarks=advise", "--db=" + path, "--absent_keys_hex"}, "needs --absent_keys"},
      {{"--benchmarks=advise", "--db=" + path, "--reads=1000", "--json=" + db_ + "/no/such.json"},
       "--json"},
  };
  const auto before = Snapshot(path);
  for (const auto& c : cases) {
    const RunResult r = RunTool(c.args);
    EXPECT_NE(r.exit_code, 0) << c.mentions;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.mentions << ": " << r.err;
    EXPECT_NE(r.err.find(c.mentions), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << c.mentions << " printed before failing: " << r.out;
  }
  EXPECT_TRUE(before == Snapshot(path));
  fs::remove(present);
  fs::remove(present_hex);
}

// Paths the file system refuses (a symbolic link loop, a name over PATH_MAX) are one line on
// stderr and exit 1, for the advisor and --inspect_db alike: std::filesystem's throwing calls
// ended the advisor with an uncaught exception on these.
TEST_F(DbBenchExtTest, HostilePathsGiveOneLine) {
  fs::create_directories(db_);
  const std::string loop = db_ + "/loop";
  fs::create_symlink(loop, loop);
  const std::string too_long = db_ + "/" + std::string(5000, 'a');
  for (const std::string& path : {loop, loop + "/db", too_long}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--benchmarks=advise", "--db=" + path},
          std::vector<std::string>{"--inspect_db=" + path}}) {
      const RunResult r = RunTool(args);
      EXPECT_EQ(r.exit_code, 1) << args[0] << " " << path.substr(0, 80) << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.err.rfind("db_bench_ext: ", 0), 0u) << r.err;
    }
  }
}

// A directory the tool may not read: one line and exit 1. Root reads every directory, so as root
// the tool runs as nobody (setpriv); where that cannot run it, the test is skipped, visibly.
TEST_F(DbBenchExtTest, UnreadableDirectoryGivesOneLine) {
  std::string runner;
  if (::geteuid() == 0) {
    runner = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    if (RunTool({"--version"}, runner).exit_code != 0) {
      GTEST_SKIP() << "cannot run the tool as nobody here (setpriv, or the build tree's modes)";
    }
  }
  const std::string locked = db_ + "/locked";
  fs::create_directories(locked);
  fs::permissions(db_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  // The tool must reach db_ itself, or the refusal below would be of a directory above it.
  const RunResult reach = RunTool({"--benchmarks=advise", "--db=" + db_}, runner);
  if (reach.err.find("not a RocksDB database") == std::string::npos) {
    GTEST_SKIP() << "the tool cannot reach " << db_ << " as nobody: " << reach.err;
  }
  std::ofstream(locked + "/CURRENT") << "MANIFEST-000001\n";
  fs::permissions(locked, fs::perms::none);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--benchmarks=advise", "--db=" + locked},
        std::vector<std::string>{"--inspect_db=" + locked}}) {
    const RunResult r = RunTool(args, runner);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("ermission denied"), std::string::npos) << r.err;
  }
  fs::permissions(locked, fs::perms::owner_all);
}

// A database path that is not UTF-8: the advisor's --json report holds it with U+FFFD in place
// of the bytes JSON cannot carry (the report threw from nlohmann's dump after printing), and a
// --json path that is not UTF-8 is just a file name.
TEST_F(DbBenchExtTest, AdvisorJsonTakesPathsThatAreNotUtf8) {
  const std::string weird = db_ + "/\xff\xfe";
  const RunResult fill = RunTool(
      {"--num=5000", "--db=" + weird, "--benchmarks=fillrandom", "--filter_uri=bloomfilter:10"});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const std::string json = db_ + "/report\xff.json";
  const RunResult r = RunTool({"--benchmarks=advise", "--db=" + weird + "/policy0", "--reads=2000",
                               "--json=" + json, "--filter_uri=bloomfilter:10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_NE(j["advise"]["db"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);
}

// --rounds: the read benchmarks run again, policy after policy, and the summary gives medians.
TEST_F(DbBenchExtTest, RoundsReportTheMedianOfInterleavedRuns) {
  const std::string json = db_ + ".json";
  const RunResult r = RunTool({"--num=5000", "--reads=2000", "--db=" + db_, "--json=" + json,
                               "--benchmarks=fillrandom,readmissing", "--rounds=3",
                               "--sst_partitioner_factory=sstfilter.NoTrivialMove",
                               "--filter_uri=none,sstfilter.Bloom:10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Round 3 runs none, then Bloom: interleaved, not one policy's rounds in a row.
  const size_t round3 = r.out.find("== round 3 of 3");
  ASSERT_NE(round3, std::string::npos) << r.out;
  const size_t none_line = r.out.find("ops/sec  none", round3);
  const size_t bloom_line = r.out.find("ops/sec  sstfilter.Bloom:10", round3);
  EXPECT_TRUE(none_line != std::string::npos && bloom_line != std::string::npos &&
              none_line < bloom_line)
      << r.out;
  const std::string text = ReadFile(json);
  for (const char* uri : {"none", "sstfilter.Bloom:10"}) {
    const size_t policy = text.find(std::string("\"filter_uri\": \"") + uri + "\"");
    ASSERT_NE(policy, std::string::npos) << uri;
    const std::string field = "\"rounds_ops_per_sec\": [";
    const size_t rounds = text.find(field, policy);
    ASSERT_NE(rounds, std::string::npos) << uri;
    const size_t first = rounds + field.size();
    std::stringstream list(text.substr(first, text.find(']', first) - first));
    std::vector<double> ops;
    for (std::string item; std::getline(list, item, ',');) ops.push_back(std::stod(item));
    ASSERT_EQ(ops.size(), 3u) << uri;
    std::sort(ops.begin(), ops.end());
    EXPECT_GT(ops[0], 0) << uri;
    EXPECT_NEAR(NumberAfter(text, rounds, "median_ops_per_sec"), ops[1], 1e-6 * ops[1]) << uri;
  }
  fs::remove(json);
}

// --settled_fill: the tree goes through the same flushes and compactions on every run, so two runs
// give the same files on the same levels (with several levels populated, or the test proves
// nothing).
TEST_F(DbBenchExtTest, SettledFillGivesTheSameTreeEveryTime) {
  std::string levels[2];
  for (int run = 0; run < 2; ++run) {
    const std::string json = db_ + ".json";
    const RunResult r =
        RunTool({"--num=30000", "--db=" + db_, "--json=" + json, "--benchmarks=fillrandom",
                 "--settled_fill", "--write_buffer_size=65536", "--max_bytes_for_level_base=65536",
                 "--target_file_size_base=65536", "--level0_file_num_compaction_trigger=2",
                 "--compression_type=none", "--filter_uri=sstfilter.Leveled:10"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = ReadFile(json);
    const size_t begin = text.find("\"levels\": [");
    ASSERT_NE(begin, std::string::npos) << text;
    levels[run] = text.substr(begin, text.find(']', begin) - begin);
    fs::remove(json);
  }
  EXPECT_GE(std::count(levels[0].begin(), levels[0].end(), '{'), 3) << levels[0];
  EXPECT_EQ(levels[0], levels[1]);
}

// O_DIRECT reads work where the file system has them; elsewhere the tool says so and exits.
TEST_F(DbBenchExtTest, DirectReadsRunOrFailCleanly) {
  const RunResult r =
      RunTool({"--num=5000", "--reads=2000", "--db=" + db_, "--use_direct_reads",
               "--benchmarks=fillrandom,readmissing", "--filter_uri=sstfilter.Bloom:10"});
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find("(0 of 2000 found)"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("cannot open the database"), std::string::npos) << r.err;
  }
}

// compat::SetDecouplePartitionedFilters, on stand-ins with and without the member: it sets the
// member where there is one, and refuses only a request for what is not there.
struct TableOptionsWithDecouple {
  bool decouple_partitioned_filters = false;
};
struct TableOptionsWithoutDecouple {};

TEST(DecouplePartitionedFilters, SetWhereTheOptionExistsRefusedWhereNot) {
  TableOptionsWithDecouple with;
  EXPECT_TRUE(compat::SetDecouplePartitionedFilters(&with, true));
  EXPECT_TRUE(with.decouple_partitioned_filters);
  EXPECT_TRUE(compat::SetDecouplePartitionedFilters(&with, false));
  EXPECT_FALSE(with.decouple_partitioned_filters);
  TableOptionsWithoutDecouple without;
  EXPECT_FALSE(compat::SetDecouplePartitionedFilters(&without, true));
  EXPECT_TRUE(compat::SetDecouplePartitionedFilters(&without, false));
  // RocksDB's own options have it from 9.6 on (its HISTORY.md).
  EXPECT_EQ(compat::kHasDecouplePartitionedFilters<rocksdb::BlockBasedTableOptions>,
            SSTFILTER_ROCKSDB_VERSION >= 906);
}

// --decouple_partitioned_filters reaches the database's table options where RocksDB has the
// option (its OPTIONS file says so); before 9.6 it is one line on stderr and exit 1, before any
// work.
TEST_F(DbBenchExtTest, DecouplePartitionedFiltersReachesTheTableOptionsOrFails) {
  const RunResult r = RunTool({"--num=5000", "--db=" + db_, "--benchmarks=fillrandom",
                               "--filter_uri=bloomfilter:10", "--partition_filters",
                               "--decouple_partitioned_filters"});
  if (!compat::kHasDecouplePartitionedFilters<rocksdb::BlockBasedTableOptions>) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("needs RocksDB 9.6"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string written = testing::NewestOptionsFile(db_ + "/policy0");
  ASSERT_FALSE(written.empty());
  const std::string options = ReadFile(written);
  EXPECT_NE(options.find("  decouple_partitioned_filters=true"), std::string::npos);
  EXPECT_NE(options.find("  partition_filters=true"), std::string::npos);
}

// --compaction_style=universal reaches the database (its OPTIONS file), and a settled fill of a
// universal tree under a memory budget, with the listener, ends within the budget's overshoot
// (plugin/memory_budget.h), every key there: --inspect_db says what its filters spend. The fill
// settles though universal compaction reports a compaction pending that it then finds nothing to
// do for (db_bench_ext/settle.h): before, it waited for ever.
TEST_F(DbBenchExtTest, UniversalCompactionReachesTheDatabaseAndItsBudget) {
  const RunResult fill =
      RunTool({"--num=30000", "--reads=20000", "--db=" + db_, "--benchmarks=fillrandom,readrandom",
               "--settled_fill", "--compaction_style=universal", "--write_buffer_size=65536",
               "--target_file_size_base=65536", "--compression_type=none",
               "--listeners=sstfilter.LeveledBudget",
               "--filter_uri={id=sstfilter.Leveled;memory_budget=40K}"});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  EXPECT_NE(fill.out.find("(20000 of 20000 found)"), std::string::npos) << fill.out;
  const std::string path = db_ + "/policy0";
  const std::string options = ReadFile(testing::NewestOptionsFile(path));
  EXPECT_NE(options.find("  compaction_style=kCompactionStyleUniversal"), std::string::npos);
  ExpectInspectSaysTheBudgetSpent(path);
}

// WaitUntilSettled (db_bench_ext/settle.h) gives up after its deadline, saying what is still busy,
// where background work never ends: here a compaction pending with automatic compactions off. A
// database with nothing to do settles at once.
TEST(WaitUntilSettled, GivesUpAfterItsDeadlineSayingWhatIsBusy) {
  const testing::TempDir dir("settle");
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  options.disable_auto_compactions = true;
  options.level0_file_num_compaction_trigger = 2;
  ROCKSDB_NAMESPACE::Status s;
  const auto db = testing::OpenDb(options, dir.path(), &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const auto wait_up_to_1_s = [&] {
    return db_bench_ext::WaitUntilSettled(db.get(), std::chrono::milliseconds(1),
                                          std::chrono::seconds(1));
  };
  EXPECT_EQ(wait_up_to_1_s(), "");
  for (int file = 0; file < 3; ++file) {
    ASSERT_TRUE(db->Put({}, "key" + std::to_string(file), "value").ok());
    ASSERT_TRUE(db->Flush({}).ok());
  }
  EXPECT_EQ(wait_up_to_1_s(),
            "not settled after 1 s: rocksdb.compaction-pending=1 rocksdb.num-running-compactions=0 "
            "rocksdb.mem-table-flush-pending=0 rocksdb.num-running-flushes=0");
}

// --options_file: a user's OPTIONS file applies to every policy's database, with the filter policy
// replaced, the option flags given on the command line over it and the others (defaults of this
// tool) not; RocksDB writes what it used to each database's own OPTIONS file. Partitioned filters
// and filters in a small block cache (as the file says) then show as filter blocks read per lookup.
TEST_F(DbBenchExtTest, OptionsFileAppliesWithTheFlagsGivenOverIt) {
  const std::string options_file = db_ + ".options";
  {
    // A database's own OPTIONS file, edited as a user's would be.
    ASSERT_EQ(RunTool({"--num=1000", "--db=" + db_, "--benchmarks=fillrandom",
                       "--filter_uri=bloomfilter:10"})
                  .exit_code,
              0);
    const std::string written = testing::NewestOptionsFile(db_ + "/policy0");
    ASSERT_FALSE(written.empty());
    std::istringstream in(ReadFile(written));
    std::ofstream out(options_file);
    for (std::string line; std::getline(in, line);) {
      const std::map<std::string, std::string> edits = {
          {"  write_buffer_size=", "  write_buffer_size=524288"},
          {"  max_bytes_for_level_base=", "  max_bytes_for_level_base=2097152"},
          {"  target_file_size_base=", "  target_file_size_base=1048576"},
          {"  index_type=", "  index_type=kTwoLevelIndexSearch"},
          {"  partition_filters=", "  partition_filters=true"},
          {"  metadata_block_size=", "  metadata_block_size=1024"},
          {"  cache_index_and_filter_blocks=", "  cache_index_and_filter_blocks=true"}};
      for (const auto& [prefix, edited] : edits) {
        if (line.rfind(prefix, 0) == 0) line = edited;
      }
      out << line << "\n";
    }
    fs::remove_all(db_);
  }
  const std::string json = db_ + ".json";
  const RunResult r = RunTool(
      {"--num=60000", "--reads=20000", "--db=" + db_, "--options_file=" + options_file,
       "--target_file_size_base=262144", "--cache_size=65536", "--json=" + json,
       "--benchmarks=fillrandom,readmissing", "--filter_uri=sstfilter.Bloom:10,bloomfilter:10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(json);
  for (const std::string uri : {"sstfilter.Bloom:10", "bloomfilter:10"}) {
    SCOPED_TRACE(uri);
    const std::string dir = db_ + (uri == "bloomfilter:10" ? "/policy1" : "/policy0");
    ROCKSDB_NAMESPACE::DBOptions db_options;
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> families;
    ASSERT_TRUE(
        ROCKSDB_NAMESPACE::LoadLatestOptions(StrictConfigOptions(), dir, &db_options, &families)
            .ok());
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf = families.at(0).options;
    EXPECT_EQ(cf.write_buffer_size, 524288u);          // from the file
    EXPECT_EQ(cf.max_bytes_for_level_base, 2097152u);  // the flag's default does not apply
    EXPECT_EQ(cf.target_file_size_base, 262144u);      // the flag given overrides the file
    const auto* table = cf.table_factory->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
    ASSERT_NE(table, nullptr);
    EXPECT_TRUE(table->partition_filters);
    EXPECT_TRUE(table->cache_index_and_filter_blocks);
    EXPECT_EQ(table->metadata_block_size, 1024u);
    ASSERT_NE(table->filter_policy, nullptr);
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> expected;
    ASSERT_TRUE(NewFilterPolicy(uri, &expected).ok());
    EXPECT_STREQ(table->filter_policy->Name(), expected->Name());
    // Partitions of a 64 KiB cache's worth of filters: lookups read some of them from the files.
    const size_t policy = text.find("\"filter_uri\": \"" + uri + "\"");
    ASSERT_NE(policy, std::string::npos);
    const size_t missing = text.find("\"readmissing\"", policy);
    EXPECT_EQ(NumberAfter(text, missing, "found"), 0);
    EXPECT_GT(NumberAfter(text, missing, "filter_block_misses_per_op"), 0);
    EXPECT_GT(NumberAfter(text, missing, "file_bytes_read_per_op"), 0);
  }
  fs::remove(json);

  // A file RocksDB cannot parse, and one whose table format takes no filter policy.
  std::ofstream(options_file) << "not an OPTIONS file\n";
  RunResult bad = RunTool({"--num=1000", "--db=" + db_, "--options_file=" + options_file});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_NE(bad.err.find("cannot load --options_file"), std::string::npos) << bad.err;
  const std::string plain_db = db_ + ".plain";
  {
    ROCKSDB_NAMESPACE::Options plain;
    plain.create_if_missing = true;
    plain.allow_mmap_reads = true;
    plain.table_factory.reset(ROCKSDB_NAMESPACE::NewPlainTableFactory());
    ROCKSDB_NAMESPACE::Status s;
    ASSERT_NE(testing::OpenDb(plain, plain_db, &s), nullptr) << s.ToString();
  }
  const std::string plain_options = testing::NewestOptionsFile(plain_db);
  bad = RunTool({"--num=1000", "--db=" + db_, "--options_file=" + plain_options});
  fs::remove_all(plain_db);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("not BlockBasedTable"), std::string::npos) << bad.err;
  fs::remove(options_file);
}

// readmixed: present keys with probability --read_hit_ratio (the found count within a binomial
// bound), each lookup timed (quantiles in order); --duration runs a benchmark for its seconds.
TEST_F(DbBenchExtTest, MixedLookupsFindTheirShareAndReportLatencies) {
  constexpr int kReads = 20000;
  constexpr double kHitRatio = 0.3;
  const std::string json = db_ + ".json";
  const RunResult r =
      RunTool({"--num=20000", "--reads=" + std::to_string(kReads), "--db=" + db_, "--json=" + json,
               "--read_hit_ratio=0.3", "--key_dist=zipf:0.9", "--benchmarks=fillrandom,readmixed",
               "--filter_uri=sstfilter.Bloom:10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(json);
  EXPECT_EQ(NumberAfter(text, 0, "zipf_theta"), 0.9);
  const size_t mixed = text.find("\"readmixed\"");
  ASSERT_NE(mixed, std::string::npos);
  EXPECT_EQ(NumberAfter(text, mixed, "ops"), kReads);
  EXPECT_NEAR(NumberAfter(text, mixed, "found"), kHitRatio * kReads,
              testing::BinomialTolerance(kReads, kHitRatio));
  const double p50 = NumberAfter(text, mixed, "p50"), p99 = NumberAfter(text, mixed, "p99"),
               p999 = NumberAfter(text, mixed, "p99.9");
  EXPECT_GT(p50, 0);
  EXPECT_LE(p50, p99);
  EXPECT_LE(p99, p999);
  fs::remove(json);

  const RunResult timed =
      RunTool({"--num=20000", "--db=" + db_, "--json=" + json, "--duration=1", "--use_existing_db",
               "--benchmarks=readmixed", "--filter_uri=sstfilter.Bloom:10"});
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  const std::string timed_text = ReadFile(json);
  const size_t timed_mixed = timed_text.find("\"readmixed\"");
  EXPECT_GE(NumberAfter(timed_text, timed_mixed, "seconds"), 1.0);
  EXPECT_GT(NumberAfter(timed_text, timed_mixed, "ops"), 0);
  fs::remove(json);
}

// seekempty and seekrandom, with and without a range filter in one run: the empty scans find
// nothing and skip every file they meet (but a false positive's), the others find the same keys
// in both databases; the JSON has the files, the range filters' size and the scans' figures.
TEST_F(DbBenchExtTest, ScansSkipFilesWithARangeFilter) {
  constexpr int kScans = 2000;
  const std::string json = db_ + ".json";
  const RunResult r = RunTool(
      {"--num=40000", "--reads=" + std::to_string(kScans), "--db=" + db_, "--json=" + json,
       "--write_buffer_size=262144", "--target_file_size_base=262144", "--settled_fill",
       "--key_spacing=9", "--scan_length=16", "--benchmarks=fillrandom,seekempty,seekrandom",
       "--filter_uri=none", "--range_filter=none,{id=sstfilter.RangeFilter;bits_per_key=16}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vs no range filter"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(ReadFile(json));
  const auto& policies = doc.at("policies");
  ASSERT_EQ(policies.size(), 2u);
  EXPECT_EQ(policies[0].at("range_filter"), "none");
  EXPECT_EQ(policies[1].at("range_filter"), "{id=sstfilter.RangeFilter;bits_per_key=16}");
  EXPECT_EQ(policies[0].at("range_filter_bytes"), 0);
  // 16 bits per entry, and a header per file.
  const double bits = 8.0 * policies[1].at("range_filter_bytes").get<double>() /
                      policies[1].at("range_filter_entries").get<double>();
  EXPECT_GT(bits, 15.9);
  EXPECT_LT(bits, 17.0);
  const auto& plain_empty = policies[0].at("benchmarks").at("seekempty");
  const auto& skipping_empty = policies[1].at("benchmarks").at("seekempty");
  EXPECT_EQ(plain_empty.at("found"), 0);
  EXPECT_EQ(skipping_empty.at("found"), 0);
  EXPECT_GE(plain_empty.at("files_met_per_op").get<double>(), 1.0);  // every scan meets a file
  EXPECT_EQ(plain_empty.at("files_skipped_per_op"), 0.0);
  EXPECT_GE(skipping_empty.at("files_skipped_per_op").get<double>(),
            0.99 * skipping_empty.at("files_met_per_op").get<double>());
  const auto& plain_found = policies[0].at("benchmarks").at("seekrandom");
  const auto& skipping_found = policies[1].at("benchmarks").at("seekrandom");
  EXPECT_EQ(plain_found.at("found"), skipping_found.at("found"));
  EXPECT_GT(plain_found.at("found").get<double>(),
            15.0 * kScans);  // 16 per scan, but the last keys'
  fs::remove(json);
}

TEST_F(DbBenchExtTest, UseExistingDbSkipsTheFill) {
  ASSERT_EQ(RunTool({"--num=5000", "--db=" + db_, "--benchmarks=fillrandom",
                     "--filter_uri=sstfilter.Bloom:10"})
                .exit_code,
            0);
  const RunResult r =
      RunTool({"--num=5000", "--reads=-1", "--db=" + db_, "--use_existing_db",
               "--benchmarks=fillrandom,readrandom", "--filter_uri=sstfilter.Bloom:10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fillrandom   : skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(5000 of 5000 found)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sstfilter
