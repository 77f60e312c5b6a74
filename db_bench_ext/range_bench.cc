// SPDX-License-Identifier: Apache-2.0
// range_bench: the range filter (core/range/) alone. For each budget in --bits and each range
// length in --lengths, the false-positive rate of empty ranges drawn at random and of empty
// ranges that start just after a present key (the adversarial case for prefix-based range
// filters), on integer keys (8-byte big-endian) and on string keys ("user:" and a 10-digit
// decimal id), beside Grafite's bound L / 2^(B - 2) and the rate RangeFpRate predicts (for keys
// spread over more positions than the filter's hash range: fewer positions, as 10^10 ids at 20
// bits per key, leave fewer false positives); then the
// build time per key against sstfilter's blocked Bloom filter (keys hashed and built) on the
// same keys, and the query time.
//
//   range_bench [--keys=N] [--queries=N] [--bits=8,10,...] [--lengths=1,16,1024] [--seed=S]
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/filter_spec.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/range/range_api.h"

DEFINE_int64(keys, 1000000, "Keys in the filter");
DEFINE_int64(queries, 1000000, "Empty ranges per rate (random, and after a key)");
DEFINE_string(bits, "8,10,12,14,16,18,20", "Budgets, bits per key");
DEFINE_string(lengths, "1,16,1024", "Range lengths, in keys (integers; string ids)");
DEFINE_int64(seed, 42, "Seed of the keys and the queries");
DEFINE_int32(build_repetitions, 5, "Builds per figure (the median is printed)");

namespace {

using sstfilter::RangeFilterBuilder;
using sstfilter::RangeFilterReader;
using Clock = std::chrono::steady_clock;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "range_bench: %s\n", message.c_str());
  std::exit(1);
}

std::vector<double> ParseList(const std::string& text, const char* flag) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    double v = 0;
    if (!sstfilter::ParseFiniteDecimal(item, &v) || v <= 0) {
      Fail(std::string("--") + flag + ": '" + item + "' is not a positive number");
    }
    out.push_back(v);
  }
  if (out.empty()) Fail(std::string("--") + flag + " is empty");
  return out;
}

std::string BigEndian(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xff);
  return s;
}

// The two key sets: integers spread over 2^62 (queries above them fit in 64 bits), and string
// ids below 10^10, both as sorted distinct values; a key is the value written out.
struct KeySet {
  const char* name;
  std::vector<uint64_t> values;
  uint64_t limit;  // values lie below it
  std::string (*key)(uint64_t);
};

std::string IntegerKey(uint64_t v) { return BigEndian(v); }
std::string StringKey(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user:%010llu", static_cast<unsigned long long>(v));
  return buf;
}

KeySet MakeKeys(const char* name, uint64_t limit, std::string (*key)(uint64_t), uint64_t n,
                std::mt19937_64* rng) {
  KeySet set{name, {}, limit, key};
  set.values.reserve(n + n / 8);
  while (set.values.size() < n) {
    for (uint64_t i = set.values.size(); i < n; ++i) set.values.push_back((*rng)() % limit);
    std::sort(set.values.begin(), set.values.end());
    set.values.erase(std::unique(set.values.begin(), set.values.end()), set.values.end());
  }
  return set;
}

// Whether [lo, lo + length) holds no value.
bool Empty(const std::vector<uint64_t>& sorted, uint64_t lo, uint64_t length) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), lo);
  return it == sorted.end() || *it >= lo + length;
}

std::string Build(const KeySet& set, double bits) {
  RangeFilterBuilder builder(bits);
  for (uint64_t v : set.values) builder.AddKey(set.key(v));
  auto bytes = builder.Finish();
  if (!bytes.ok()) Fail(bytes.error());
  return std::move(bytes).value();
}

struct Rates {
  double random = 0, after_key = 0;
  double query_ns = 0;
};

Rates Measure(const KeySet& set, const RangeFilterReader& reader, uint64_t length, uint64_t queries,
              std::mt19937_64* rng) {
  Rates rates;
  uint64_t fp[2] = {0, 0}, asked[2] = {0, 0};
  double seconds = 0;
  std::string lower, upper;
  for (uint64_t q = 0; asked[0] < queries || asked[1] < queries; ++q) {
    if (q > 100 * queries) break;  // ranges this long are rarely empty
    for (int kind = 0; kind < 2; ++kind) {
      if (asked[kind] >= queries) continue;
      const uint64_t lo = kind == 0 ? (*rng)() % (set.limit - length)
                                    : set.values[(*rng)() % set.values.size()] + 1;
      if (lo + length > set.limit || !Empty(set.values, lo, length)) continue;
      lower = set.key(lo);
      upper = set.key(lo + length);
      const std::string_view l(lower), u(upper);
      const auto start = Clock::now();
      fp[kind] += reader.MayContain(&l, &u);
      seconds += std::chrono::duration<double>(Clock::now() - start).count();
      ++asked[kind];
    }
  }
  rates.random = asked[0] ? static_cast<double>(fp[0]) / asked[0] : -1;
  rates.after_key = asked[1] ? static_cast<double>(fp[1]) / asked[1] : -1;
  rates.query_ns = 1e9 * seconds / static_cast<double>(asked[0] + asked[1]);
  return rates;
}

double MedianSeconds(int repetitions, const std::function<void()>& work) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = Clock::now();
    work();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("the range filter's false-positive rates and build time");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (argc > 1) Fail(std::string("unexpected argument '") + argv[1] + "'");
  if (FLAGS_keys < 1 || FLAGS_keys > 100000000) Fail("--keys must be in [1, 10^8]");
  if (FLAGS_queries < 1 || FLAGS_queries > 1000000000) Fail("--queries must be in [1, 10^9]");
  if (FLAGS_build_repetitions < 1) Fail("--build_repetitions must be at least 1");
  const std::vector<double> bits = ParseList(FLAGS_bits, "bits");
  const std::vector<double> lengths = ParseList(FLAGS_lengths, "lengths");
  for (double b : bits) {
    if (!sstfilter::CheckRangeBitsPerKey(b).ok()) Fail(sstfilter::CheckRangeBitsPerKey(b).error());
  }
  const uint64_t n = static_cast<uint64_t>(FLAGS_keys);
  std::mt19937_64 rng(static_cast<uint64_t>(FLAGS_seed));
  const KeySet sets[] = {MakeKeys("integer", uint64_t{1} << 62, IntegerKey, n, &rng),
                         MakeKeys("string", 10000000000ull, StringKey, n, &rng)};

  std::printf("range_bench: %llu keys, %llu empty ranges per rate\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(FLAGS_queries));
  std::printf("%-8s %6s %6s %9s %11s %11s %11s %11s %9s\n", "keys", "bits", "length", "bits/key",
              "random", "after key", "predicted", "Grafite", "query ns");
  for (const KeySet& set : sets) {
    for (double b : bits) {
      const std::string bytes = Build(set, b);
      const RangeFilterReader reader =
          RangeFilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      const double bits_per_key = 8.0 * bytes.size() / set.values.size();
      for (double length : lengths) {
        const Rates r = Measure(set, reader, static_cast<uint64_t>(length),
                                static_cast<uint64_t>(FLAGS_queries), &rng);
        const double predicted = sstfilter::RangeFpRate(
            sstfilter::RangeShapeFor(reader.num_keys(), b), reader.num_keys(), length);
        const double grafite = std::min(1.0, length / std::exp2(b - 2));
        std::printf("%-8s %6.1f %6.0f %9.3f %11.6f %11.6f %11.6f %11.6f %9.1f\n", set.name, b,
                    length, bits_per_key, r.random, r.after_key, predicted, grafite, r.query_ns);
        std::fflush(stdout);
      }
    }
  }

  // Build time: the keys sorted, as RocksDB gives them; the blocked Bloom filter hashes each key
  // into a HashList and builds from it, as sstfilter.Bloom's builder does (both start from no
  // memory, as a builder per SST file does).
  std::printf("\nbuild, ns per key (median of %d), the same keys:\n", FLAGS_build_repetitions);
  std::printf("%-8s %10s %14s %14s %8s\n", "keys", "n", "range:16", "blocked:10", "ratio");
  for (const KeySet& set : sets) {
    for (uint64_t size : {uint64_t{65536}, n}) {
      if (size > set.values.size()) continue;
      std::vector<std::string> keys;
      keys.reserve(size);
      for (uint64_t i = 0; i < size; ++i) {
        keys.push_back(set.key(set.values[i * (set.values.size() / size)]));
      }
      std::sort(keys.begin(), keys.end());
      size_t sink = 0;
      const double range_s = MedianSeconds(FLAGS_build_repetitions, [&] {
        RangeFilterBuilder builder(16);
        for (const std::string& k : keys) builder.AddKey(k);
        sink += builder.Finish().value().size();
      });
      const auto spec = sstfilter::SpecForBitsPerKey<sstfilter::BlockedBloom>(10).value();
      const double bloom_s = MedianSeconds(FLAGS_build_repetitions, [&] {
        sstfilter::HashList hashes;
        for (const std::string& k : keys) hashes.Add(sstfilter::KeyHash(k.data(), k.size()));
        sink += sstfilter::BuildFilter(spec, hashes).value().size();
      });
      std::printf("%-8s %10llu %14.1f %14.1f %7.2fx\n", set.name,
                  static_cast<unsigned long long>(size), 1e9 * range_s / size, 1e9 * bloom_s / size,
                  range_s / bloom_s);
      if (sink == 0) Fail("no filter built");
    }
  }
  return 0;
}
