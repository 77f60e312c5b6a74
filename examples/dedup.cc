// SPDX-License-Identifier: Apache-2.0
// dedup: drops events already processed, as a pipeline that sees each event id one or more times
// would, with a ScalableBloomFilter that starts at a hundredth of the stream and grows with it.
// Prints what was dropped, the memory the filter used, and the rate at which new events were
// wrongly dropped (false positives), measured against an exact set that only this example keeps.
//
//   dedup [EVENTS] [DUPLICATE_SHARE] [FP_RATE]     (defaults 1000000 0.3 0.001)
//
// The stream: EVENTS events, each a repeat of an earlier event with probability DUPLICATE_SHARE,
// otherwise a new one. Built against the installed core component (examples/CMakeLists.txt).
#include <sstfilter/bloom_filter.h>
#include <sstfilter/scalable_bloom_filter.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>

namespace {

bool ParseArgs(int argc, char** argv, uint64_t* events, double* duplicate_share, double* fp_rate) {
  char* end = nullptr;
  if (argc > 1) {
    *events = std::strtoull(argv[1], &end, 10);
    if (*end != '\0' || *events == 0) return false;
  }
  if (argc > 2) {
    *duplicate_share = std::strtod(argv[2], &end);
    if (*end != '\0' || !(*duplicate_share >= 0 && *duplicate_share < 1)) return false;
  }
  if (argc > 3) {
    *fp_rate = std::strtod(argv[3], &end);
    if (*end != '\0') return false;
  }
  return argc <= 4;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 1'000'000;
  double duplicate_share = 0.3, fp_rate = 0.001;
  if (!ParseArgs(argc, argv, &events, &duplicate_share, &fp_rate)) {
    std::fprintf(stderr,
                 "dedup: usage: dedup [EVENTS > 0] [DUPLICATE_SHARE in [0, 1)] [FP_RATE]\n");
    return 2;
  }
  // Sized for a hundredth of the stream: the filter grows as the stream does. A stream expected to
  // grow far does better with a tightening nearer 1 (sstfilter/scalable_bloom_filter.h).
  auto created = sstfilter::ScalableBloomFilter::Create(
      events / 100 + 1, fp_rate, sstfilter::ScalingOptions{/*growth=*/2, /*tightening=*/0.8});
  if (!created.ok()) {
    std::fprintf(stderr, "dedup: %s\n", created.error().c_str());
    return 2;
  }
  sstfilter::ScalableBloomFilter seen = std::move(created).value();

  std::mt19937_64 rng(42);
  std::unordered_set<uint64_t> exact;  // the truth, to measure the filter against
  uint64_t next_id = 0, passed = 0, dropped_duplicates = 0, dropped_new = 0, full = 0;
  uint64_t passed_duplicates = 0;  // a duplicate the filter missed: must never happen
  for (uint64_t i = 0; i < events; ++i) {
    const bool repeat =
        next_id > 0 && std::uniform_real_distribution<>(0, 1)(rng) < duplicate_share;
    const uint64_t id = repeat ? rng() % next_id : next_id++;
    const std::string event = "event-" + std::to_string(id);
    const sstfilter::AddOutcome outcome = seen.Add(event);
    const bool is_new = exact.insert(id).second;
    if (outcome == sstfilter::AddOutcome::kFull) ++full;  // not with scaling on; counted anyway
    if (outcome == sstfilter::AddOutcome::kMayBePresent) {
      (is_new ? dropped_new : dropped_duplicates) += 1;
    } else {
      ++passed;
      passed_duplicates += !is_new;
    }
  }
  const double new_events = static_cast<double>(exact.size());
  std::printf(
      "dedup: %llu events, %llu distinct: %llu passed, %llu duplicates dropped, %llu duplicates "
      "passed\n",
      static_cast<unsigned long long>(events), static_cast<unsigned long long>(exact.size()),
      static_cast<unsigned long long>(passed), static_cast<unsigned long long>(dropped_duplicates),
      static_cast<unsigned long long>(passed_duplicates));
  std::printf("dedup: new events wrongly dropped (false positives): %llu, %.4f%% (bound %.4f%%)\n",
              static_cast<unsigned long long>(dropped_new), 100 * dropped_new / new_events,
              100 * fp_rate);
  auto sized = sstfilter::BloomFilter::Create(exact.size(), fp_rate);
  std::printf(
      "dedup: filter memory %.2f MB in %zu filters, %.2f bits per distinct event (one filter "
      "sized in advance for them: %.2f)%s\n",
      seen.memory_bytes() / 1e6, seen.num_filters(), 8.0 * seen.memory_bytes() / new_events,
      sized.ok() ? 8.0 * sized.value().memory_bytes() / new_events : 0.0,
      full > 0 ? " (FULL)" : "");
  // Every duplicate dropped (no false negatives) is what lets a pipeline trust the filter.
  return passed_duplicates == 0 && full == 0 ? 0 : 1;
}
