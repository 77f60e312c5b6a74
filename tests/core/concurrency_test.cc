// SPDX-License-Identifier: Apache-2.0
// Filters shared between threads: one reader queried by many threads, builders running in
// parallel. Run under ThreadSanitizer by `scripts/test.sh --tsan` (and CI).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "sstfilter/bloom_filter.h"
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

// BloomFilter's promise: adds, test-and-adds, merges and queries from many threads at once, without
// a lock. A key is found by any query that starts after its add returned (published here through
// a release store of the writer's progress).
TEST(CoreConcurrency, BloomFilterAddsMergesAndQueriesWithoutALock) {
  constexpr int kWriters = 3;
  constexpr uint64_t kPerWriter = 60'000;
  auto created = BloomFilter::Create(kWriters * kPerWriter * 2, 0.01);
  ASSERT_TRUE(created.ok()) << created.error();
  BloomFilter filter = std::move(created).value();
  auto other = BloomFilter::Create(kWriters * kPerWriter * 2, 0.01);
  ASSERT_TRUE(other.ok());
  BloomFilter merged_in = std::move(other).value();
  const std::vector<uint64_t> merged_keys = testing::KeyHashes(40, kPerWriter);
  for (const uint64_t h : merged_keys) merged_in.AddHash(h);

  std::vector<std::vector<uint64_t>> keys;
  for (int t = 0; t < kWriters; ++t) keys.push_back(testing::KeyHashes(41 + t, kPerWriter));
  std::atomic<uint64_t> progress[kWriters] = {};
  std::atomic<bool> writing{true};
  // Everyone starts together, so that adds and queries overlap even on a loaded machine.
  std::atomic<int> ready{0};
  constexpr int kThreads = kWriters + 1 + 2;
  auto start_together = [&ready] {
    ready.fetch_add(1);
    while (ready.load() < kThreads) std::this_thread::yield();
  };
  std::atomic<uint64_t> missed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      start_together();
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        // Writers alternate the two ways of adding.
        if (i % 2 == 0) {
          filter.AddHash(keys[t][i]);
        } else {
          filter.TestAndAddHash(keys[t][i]);
        }
        progress[t].store(i + 1, std::memory_order_release);
      }
    });
  }
  threads.emplace_back([&] {
    start_together();
    EXPECT_TRUE(filter.Merge(merged_in).ok());
  });
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      start_together();
      uint64_t seen = 0, local_missed = 0, x = r + 1;
      // At least one pass with keys to query: on a loaded machine the writers can finish before
      // a reader first runs (no reader had queried anything once, under ctest -j2), and a reader
      // that queried nothing would prove nothing.
      while (writing.load() || seen == 0) {
        for (int t = 0; t < kWriters; ++t) {
          const uint64_t n = progress[t].load(std::memory_order_acquire);
          if (n == 0) continue;
          x = x * 6364136223846793005u + 1442695040888963407u;
          local_missed += !filter.MayContainHash(keys[t][(x >> 33) % n]);
          ++seen;
        }
        (void)filter.ExpectedFpRate();  // reads every word while they change
      }
      missed += local_missed;
    });
  }
  for (int t = 0; t < kWriters; ++t) threads[t].join();
  threads[kWriters].join();
  writing = false;
  for (size_t t = kWriters + 1; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(missed.load(), 0u);
  for (int t = 0; t < kWriters; ++t) {
    for (const uint64_t h : keys[t]) ASSERT_TRUE(filter.MayContainHash(h));
  }
  for (const uint64_t h : merged_keys) ASSERT_TRUE(filter.MayContainHash(h));
}

}  // namespace
}  // namespace sstfilter
