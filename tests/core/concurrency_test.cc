// Filters shared between threads: one reader queried by many threads, builders running in
// parallel. Run under ThreadSanitizer by `scripts/test.sh --tsan` (and CI).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

TEST(CoreConcurrency, OneReaderSharedByManyThreads) {
  const std::vector<uint64_t> keys = testing::KeyHashes(1, 100'000);
  const std::vector<uint64_t> absent = testing::KeyHashes(2, 100'000);
  for (const FilterSpec& spec : testing::OneSpecOfEachKind()) {
    const std::string bytes = BuildFilter(spec, keys.data(), keys.size()).value();
    const FilterReader reader = testing::ReaderOf(bytes);
    constexpr int kThreads = 4;
    std::vector<uint64_t> false_positives(kThreads), missed(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        bool batch[64];
        for (size_t i = 0; i + 64 <= keys.size(); i += 64) {
          reader.MayContainBatch(&keys[i], 64, batch);
          for (int j = 0; j < 64; ++j) missed[t] += !batch[j] + !reader.MayContain(keys[i + j]);
        }
        for (const uint64_t h : absent) false_positives[t] += reader.MayContain(h);
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(missed[t], 0u) << spec.ToString();
      EXPECT_EQ(false_positives[t], false_positives[0]) << spec.ToString();
    }
  }
}

TEST(CoreConcurrency, BuildersInParallelAgree) {
  const std::vector<uint64_t> keys = testing::KeyHashes(3, 50'000);
  for (const FilterSpec& spec : testing::OneSpecOfEachKind()) {
    constexpr int kThreads = 4;
    std::vector<std::string> built(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(
          [&, t] { built[t] = BuildFilter(spec, keys.data(), keys.size()).value(); });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(built[t], built[0]) << spec.ToString();
  }
}

}  // namespace
}  // namespace sstfilter
