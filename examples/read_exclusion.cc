// SPDX-License-Identifier: Apache-2.0
// read_exclusion: a feed that hides the items each user has already read. Every user gets a
// ScalableBloomFilter that starts at 1,000 items and grows 1,000 at a time (growth 1), so a light
// user costs a small filter and only heavy readers pay for more; at 5,000 items a user's set starts
// over (the oldest reads are forgotten). Prints the memory against one filter of 5,000 per user,
// and the rate of unread items wrongly hidden, measured against exact sets this example keeps.
//
//   read_exclusion [USERS] [FP_RATE]     (defaults 20000 0.01)
//
// Activity is skewed as in real feeds: most users read a few dozen items, a few read thousands.
// Built against the installed core component (examples/CMakeLists.txt).
#include <sstfilter/bloom_filter.h>
#include <sstfilter/scalable_bloom_filter.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

constexpr uint64_t kStep = 1000;           // items a user's filter grows by
constexpr uint64_t kMaxPerUser = 5000;     // then the set starts over
constexpr uint64_t kCatalog = 10'000'000;  // item ids

sstfilter::Result<sstfilter::ScalableBloomFilter> NewSeenSet(double fp_rate) {
  return sstfilter::ScalableBloomFilter::Create(kStep, fp_rate,
                                                sstfilter::ScalingOptions{/*growth=*/1});
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t users = 20'000;
  double fp_rate = 0.01;
  char* end = nullptr;
  if (argc > 1) users = std::strtoull(argv[1], &end, 10);
  if (argc > 1 && (*end != '\0' || users == 0)) users = 0;
  if (argc > 2) fp_rate = std::strtod(argv[2], &end);
  if (users == 0 || (argc > 2 && *end != '\0') || argc > 3) {
    std::fprintf(stderr, "read_exclusion: usage: read_exclusion [USERS > 0] [FP_RATE]\n");
    return 2;
  }
  std::mt19937_64 rng(7);
  // Reads per user: log-normal, median about 40, a few users in the thousands.
  std::lognormal_distribution<double> reads_per_user(std::log(40.0), 1.6);

  uint64_t reads = 0, wrongly_hidden = 0, unread_checked = 0, restarts = 0, memory = 0;
  uint64_t light_users = 0, light_memory = 0, heavy_users = 0, heavy_memory = 0;
  for (uint64_t u = 0; u < users; ++u) {
    auto created = NewSeenSet(fp_rate);
    if (!created.ok()) {
      std::fprintf(stderr, "read_exclusion: %s\n", created.error().c_str());
      return 2;
    }
    sstfilter::ScalableBloomFilter seen = std::move(created).value();
    std::unordered_set<uint64_t> exact;  // the truth, to measure the filter against
    const uint64_t n = static_cast<uint64_t>(std::min(reads_per_user(rng), 20000.0));
    for (uint64_t i = 0; i < n; ++i) {
      // The feed offers an item; a hidden one is skipped. Check an unread one first.
      const uint64_t offered = rng() % kCatalog;
      if (exact.count(offered) == 0) {
        ++unread_checked;
        wrongly_hidden += seen.MayContain(std::to_string(offered));
      }
      if (seen.size() >= kMaxPerUser) {  // start over: the oldest reads are forgotten
        seen = std::move(NewSeenSet(fp_rate)).value();
        exact.clear();
        ++restarts;
      }
      if (seen.Add(std::to_string(offered)) != sstfilter::AddOutcome::kFull) exact.insert(offered);
      ++reads;
    }
    // Every item read since the last restart is hidden: no false negatives.
    for (const uint64_t item : exact) {
      if (!seen.MayContain(std::to_string(item))) {
        std::fprintf(stderr, "read_exclusion: user %llu: a read item is shown again\n",
                     static_cast<unsigned long long>(u));
        return 1;
      }
    }
    memory += seen.memory_bytes();
    (n <= kStep ? light_memory : heavy_memory) += seen.memory_bytes();
    (n <= kStep ? light_users : heavy_users) += 1;
  }
  auto fixed = sstfilter::BloomFilter::Create(kMaxPerUser, fp_rate);
  if (!fixed.ok()) return 2;
  const double fixed_memory = static_cast<double>(fixed.value().memory_bytes()) * users;
  std::printf("read_exclusion: %llu users, %llu reads, %llu set restarts at %llu items\n",
              static_cast<unsigned long long>(users), static_cast<unsigned long long>(reads),
              static_cast<unsigned long long>(restarts),
              static_cast<unsigned long long>(kMaxPerUser));
  std::printf(
      "read_exclusion: filters %.2f MB (light users, <= %llu reads: %llu, %.0f bytes each; heavy: "
      "%llu, %.0f bytes each), against %.2f MB for a %llu-item filter per user\n",
      memory / 1e6, static_cast<unsigned long long>(kStep),
      static_cast<unsigned long long>(light_users),
      light_users ? static_cast<double>(light_memory) / light_users : 0.0,
      static_cast<unsigned long long>(heavy_users),
      heavy_users ? static_cast<double>(heavy_memory) / heavy_users : 0.0, fixed_memory / 1e6,
      static_cast<unsigned long long>(kMaxPerUser));
  std::printf("read_exclusion: unread items wrongly hidden: %llu of %llu, %.3f%% (bound %.2f%%)\n",
              static_cast<unsigned long long>(wrongly_hidden),
              static_cast<unsigned long long>(unread_checked),
              100.0 * wrongly_hidden / unread_checked, 100 * fp_rate);
  return 0;
}
