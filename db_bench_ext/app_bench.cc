// SPDX-License-Identifier: Apache-2.0
// app_bench: the application filters of the core component (BloomFilter, CuckooFilter and their
// scalable forms) as a service uses them, beside a plain std::unordered_set<uint64_t> of the key
// hashes: memory at 1e8 keys (the bytes of filters holding them) and beyond (computed, with a
// Redis SETBIT Bloom filter of the same rate), adds and queries per second with 1 and 2 threads,
// measured false-positive rates. The exact set's memory is the heap it takes (glibc's mallinfo2).
//
//   app_bench [--keys N] [--memory_keys N] [--rates 0.01,0.001]
//
// --keys (default 1e7): the throughput test's keys; --memory_keys (default 1e8, 0 skips): the
// memory test's. Times are medians of 3 passes, each over all keys; machines are noisy, so compare
// rows of one run, not runs.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/cuckoo/math.h"
#include "core/decimal.h"
#include "core/hash.h"
#include "core/standard_bloom/math.h"
#include "sstfilter/bloom_filter.h"
#include "sstfilter/cuckoo_filter.h"
#include "sstfilter/scalable_bloom_filter.h"
#include "sstfilter/scalable_cuckoo_filter.h"

namespace sstfilter {
namespace {

struct Flags {
  uint64_t keys = 10'000'000;
  uint64_t memory_keys = 100'000'000;
  std::vector<double> rates = {0.01, 0.001};
};

bool ParseCount(const char* text, uint64_t* out) {
  double v = 0;
  if (!ParseFiniteDecimal(text, &v) || !(v >= 0) || v > 1e12 || v != std::floor(v)) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

bool ParseFlags(int argc, char** argv, Flags* flags, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq),
                      value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (name == "--keys") {
      if (!ParseCount(value.c_str(), &flags->keys) || flags->keys == 0) {
        *error = "--keys takes a whole number > 0, got '" + value + "'";
        return false;
      }
    } else if (name == "--memory_keys") {
      if (!ParseCount(value.c_str(), &flags->memory_keys)) {
        *error = "--memory_keys takes a whole number, got '" + value + "'";
        return false;
      }
    } else if (name == "--rates") {
      flags->rates.clear();
      for (size_t start = 0; start <= value.size();) {
        const size_t comma = std::min(value.find(',', start), value.size());
        const std::string one = value.substr(start, comma - start);
        double rate = 0;
        if (!ParseFiniteDecimal(one, &rate) || !(rate > 0 && rate < 1)) {
          *error = "--rates takes rates in (0, 1) separated by commas, got '" + value + "'";
          return false;
        }
        flags->rates.push_back(rate);
        start = comma + 1;
      }
    } else {
      *error = "unknown flag '" + arg + "' (--keys, --memory_keys, --rates)";
      return false;
    }
  }
  return true;
}

std::vector<uint64_t> Hashes(uint64_t seed, uint64_t n) {
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key[2] = {seed, i};
    out[i] = KeyHash(key, sizeof(key));
  }
  return out;
}

double Seconds(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// Runs work(begin, end, thread) over [0, n) split between `threads` threads.
void Split(uint64_t n, int threads, const std::function<void(uint64_t, uint64_t, int)>& work) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(work, n * t / threads, n * (t + 1) / threads, t);
  }
  for (std::thread& th : pool) th.join();
}

// Where each thread counts its answers, a cache line apart, so that no query is optimised away
// and the threads share no line.
struct alignas(64) Sink {
  uint64_t matches = 0;
};

template <typename T>
T Must(Result<T> made, const char* what) {
  if (!made.ok()) {
    std::fprintf(stderr, "app_bench: %s: %s\n", what, made.error().c_str());
    std::exit(1);
  }
  return std::move(made).value();
}

size_t HeapBytes() { return mallinfo2().uordblks; }

// The largest Redis string, so the largest SETBIT filter one key holds: 512 MB.
constexpr double kRedisMaxStringBytes = 512.0 * 1024 * 1024;

// A standard Bloom filter at its best probe count, as a Redis SETBIT filter is sized (Guava's
// formula, core/standard_bloom/math.h): m = n ln(1/p) / (ln 2)^2 bits.
double StandardBloomBytes(uint64_t n, double p) {
  return Must(StandardBloomBits(n, p), "StandardBloomBits") / 8.0;
}

// One row of the throughput table: million operations per second, medians of 3 passes.
struct Row {
  std::string name;
  double bits_per_key = 0;
  double add_1 = 0, add_2 = 0, hit_1 = 0, hit_2 = 0, miss_1 = 0, miss_2 = 0;  // Mops/s; 0: n/a
  double fp = -1;
};

void PrintRow(const Row& r) {
  auto cell = [](double v) {
    char buf[16];
    if (v <= 0) return std::string("-");
    std::snprintf(buf, sizeof(buf), "%.1f", v);
    return std::string(buf);
  };
  char fp[24] = "-";
  if (r.fp >= 0) std::snprintf(fp, sizeof(fp), "%.4f%%", 100 * r.fp);
  std::printf("| %s | %.2f | %s / %s | %s / %s | %s / %s | %s |\n", r.name.c_str(), r.bits_per_key,
              cell(r.add_1).c_str(), cell(r.add_2).c_str(), cell(r.hit_1).c_str(),
              cell(r.hit_2).c_str(), cell(r.miss_1).c_str(), cell(r.miss_2).c_str(), fp);
}

// Mops/s, the median of 3 passes of op(i, thread) over all n keys with `threads` threads; `reset`
// runs before each (untimed), so that adds start from an empty filter every pass.
double Mops(
    uint64_t n, int threads, const std::function<void(uint64_t, int)>& op,
    const std::function<void()>& reset = [] {}) {
  double t[3];
  for (double& seconds : t) {
    reset();
    seconds = Seconds([&] {
      Split(n, threads, [&](uint64_t begin, uint64_t end, int thread) {
        for (uint64_t i = begin; i < end; ++i) op(i, thread);
      });
    });
  }
  return n / Median3(t[0], t[1], t[2]) / 1e6;
}

// Queries of the keys (hits) and of absent ones (misses) with 1 and 2 threads; the rate of misses
// that matched. `contains(hash)` answers a query.
template <typename Contains>
void MeasureQueries(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& absent,
                    Contains&& contains, Row* row) {
  Sink sinks[2];
  auto over = [&](const std::vector<uint64_t>& set) {
    return [&](uint64_t i, int thread) { sinks[thread].matches += contains(set[i]); };
  };
  row->hit_1 = Mops(keys.size(), 1, over(keys));
  row->hit_2 = Mops(keys.size(), 2, over(keys));
  row->miss_1 = Mops(absent.size(), 1, over(absent));
  row->miss_2 = Mops(absent.size(), 2, over(absent));
  uint64_t false_positives = 0;
  for (const uint64_t h : absent) false_positives += contains(h);
  row->fp = static_cast<double>(false_positives) / absent.size();
  if (sinks[0].matches + sinks[1].matches == 0) std::printf("(no key matched)\n");
}

// The row of a scalable filter created for a hundredth of the keys and grown to hold them all.
template <typename Scalable>
void ScalableRow(const char* type, const std::vector<uint64_t>& keys,
                 const std::vector<uint64_t>& absent, double p) {
  const uint64_t n = keys.size();
  Scalable f = Must(Scalable::Create(n / 100, p), type);
  Row row;
  char name[96];
  std::snprintf(name, sizeof(name), "%s @%g, from n/100", type, p);
  row.name = name;
  row.add_1 = Mops(
      n, 1, [&](uint64_t i, int) { f.AddHash(keys[i]); },
      [&] { f = Must(Scalable::Create(n / 100, p), type); });
  row.bits_per_key = 8.0 * f.memory_bytes() / n;
  MeasureQueries(
      keys, absent, [&](uint64_t h) { return f.MayContainHash(h); }, &row);
  PrintRow(row);
}

void Throughput(const Flags& flags) {
  const uint64_t n = flags.keys;
  const std::vector<uint64_t> keys = Hashes(1, n), absent = Hashes(2, n);
  std::printf("\n## Adds and queries per second, %llu keys (Mops/s, 1 thread / 2 threads)\n\n",
              static_cast<unsigned long long>(n));
  std::printf("| structure | bits/key | adds | hits | misses | false positives |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const double p : flags.rates) {
    char name[96];
    {
      BloomFilter f = Must(BloomFilter::Create(n, p), "BloomFilter");
      Row row;
      std::snprintf(name, sizeof(name), "BloomFilter @%g", p);
      row.name = name;
      row.bits_per_key = 8.0 * f.memory_bytes() / n;
      auto add = [&](uint64_t i, int) { f.AddHash(keys[i]); };
      row.add_1 = Mops(n, 1, add, [&] { f.Clear(); });
      row.add_2 = Mops(n, 2, add, [&] { f.Clear(); });
      MeasureQueries(
          keys, absent, [&](uint64_t h) { return f.MayContainHash(h); }, &row);
      PrintRow(row);
    }
    {
      const int bits = Must(CuckooFingerprintBits(p), "CuckooFingerprintBits");
      CuckooFilter f = Must(CuckooFilter::Create(n, bits), "CuckooFilter");
      Row row;
      std::snprintf(name, sizeof(name), "CuckooFilter @%g (f = %d)", p, bits);
      row.name = name;
      row.bits_per_key = 8.0 * f.memory_bytes() / n;
      row.add_1 = Mops(
          n, 1, [&](uint64_t i, int) { f.AddHash(keys[i]); },
          [&] { f = Must(CuckooFilter::Create(n, bits), "CuckooFilter"); });
      MeasureQueries(
          keys, absent, [&](uint64_t h) { return f.MayContainHash(h); }, &row);
      PrintRow(row);
    }
    // Grown 100x: created for a hundredth of the keys.
    ScalableRow<ScalableBloomFilter>("ScalableBloomFilter", keys, absent, p);
    ScalableRow<ScalableCuckooFilter>("ScalableCuckooFilter", keys, absent, p);
  }
  {
    // The straightforward exact set: no reserve, a mutex when two threads add.
    Row row;
    row.name = "std::unordered_set<uint64_t> (exact)";
    std::unordered_set<uint64_t> set;
    std::mutex mu;
    row.add_1 = Mops(
        n, 1, [&](uint64_t i, int) { set.insert(keys[i]); },
        [&] { std::unordered_set<uint64_t>().swap(set); });
    row.add_2 = Mops(
        n, 2,
        [&](uint64_t i, int) {
          std::lock_guard<std::mutex> lock(mu);
          set.insert(keys[i]);
        },
        [&] { std::unordered_set<uint64_t>().swap(set); });
    std::unordered_set<uint64_t>().swap(set);
    const size_t before = HeapBytes();
    for (const uint64_t h : keys) set.insert(h);
    row.bits_per_key = 8.0 * (HeapBytes() - before) / n;
    MeasureQueries(
        keys, absent, [&](uint64_t h) { return set.count(h) != 0; }, &row);
    PrintRow(row);
  }
}

void Memory(const Flags& flags) {
  const uint64_t n = flags.memory_keys;
  std::printf("\n## Memory: measured at %llu keys, computed beyond (GB = 1e9 bytes)\n\n",
              static_cast<unsigned long long>(n));
  std::printf(
      "| rate | structure | bits/key | %g keys | 1e9 keys | 1e10 keys | 512 MB shards at "
      "1e10 (Redis's string limit) |\n",
      static_cast<double>(n));
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const double p : flags.rates) {
    auto print = [&](const std::string& what, double bytes_at_n) {
      const double per_key = bytes_at_n / n;
      std::printf("| %g | %s | %.2f | %.3f GB | %.2f GB | %.1f GB | %.0f |\n", p, what.c_str(),
                  8 * per_key, bytes_at_n / 1e9, per_key * 1e9 / 1e9, per_key * 1e10 / 1e9,
                  std::ceil(per_key * 1e10 / kRedisMaxStringBytes));
    };
    {
      BloomFilter f = Must(BloomFilter::Create(n, p), "BloomFilter");
      for (uint64_t i = 0; i < n; ++i) f.AddHash(Mix64(i + 1));
      print("BloomFilter", static_cast<double>(f.memory_bytes()));
    }
    {
      CuckooFilter f =
          Must(CuckooFilter::Create(n, Must(CuckooFingerprintBits(p), "CuckooFingerprintBits")),
               "CuckooFilter");
      uint64_t added = 0;
      for (uint64_t i = 0; i < n; ++i) added += f.AddHash(Mix64(i + 1));
      if (added != n)
        std::fprintf(stderr, "app_bench: the cuckoo filter took %llu of %llu keys\n",
                     static_cast<unsigned long long>(added), static_cast<unsigned long long>(n));
      print("CuckooFilter", static_cast<double>(f.memory_bytes()));
    }
    print("standard Bloom (a Redis SETBIT filter; computed)", StandardBloomBytes(n, p));
  }
}

}  // namespace
}  // namespace sstfilter

int main(int argc, char** argv) {
  sstfilter::Flags flags;
  std::string error;
  if (!sstfilter::ParseFlags(argc, argv, &flags, &error)) {
    std::fprintf(stderr, "app_bench: %s\n", error.c_str());
    return 2;
  }
  std::printf("# app_bench: the application filters beside std::unordered_set\n");
  sstfilter::Throughput(flags);
  if (flags.memory_keys > 0) sstfilter::Memory(flags);
  return 0;
}
