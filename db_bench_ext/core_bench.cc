// SPDX-License-Identifier: Apache-2.0
// core_bench: Google Benchmark micro benchmarks of the filters alone (no database), sstfilter's
// beside RocksDB's own, on the same keys in the same process.
//
// For every filter: build cost per key (hashing included), single queries for present keys (hit)
// and absent keys (miss), batched absent-key queries, bits per key and the measured
// false-positive rate (over at least 1M absent keys). RocksDB's filters are built and queried
// through the same FilterBitsBuilder and FilterBitsReader interface that RocksDB itself uses, and
// sstfilter's through the reader the plugin hands RocksDB, by the same code (BitsReaderFilter,
// below): both pay the same calls. After the Google Benchmark output it prints one table with
// every figure and ratios against RocksDB's bloomfilter:10; with --benchmark_repetitions=N, each
// time is the fastest of the N runs (the least disturbed by the machine's other work).
//
// sstfilter's blocked Bloom filters run the SIMD kernels of this CPU (core/blocked_bloom/simd.h),
// to query and, on AVX-512, to build; sstfilter.blocked-scalar:10 is sstfilter.blocked:10 with
// them switched off. Static cuckoo filters semi-sort their buckets; sstfilter.cuckoo-plain@0.1%
// is the same filter in plain ones.
//
//   core_bench [--keys=N] [--filters=NAME,...] [--list] [Google Benchmark flags]
#include <benchmark/benchmark.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/blocked_bloom/simd.h"
#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/fuse/fuse.h"
#include "core/hash.h"
#include "core/ribbon/ribbon.h"
#include "plugin/bits_adapters.h"
#include "plugin/probe_counts.h"

namespace {

using sstfilter::BlockedBloom;
using sstfilter::BumpedRibbon;
using sstfilter::Cuckoo;
using sstfilter::Fuse;
using sstfilter::Ribbon;
using sstfilter::SpecForBitsPerKey;
using sstfilter::SpecForFpRate;
using sstfilter::StandardBloom;

constexpr size_t kKeyBytes = 24;
constexpr size_t kBatch = 32;  // keys per batched query, as in a MultiGet of 32

// Key i of set s: 24 bytes, "s" + 23 decimal digits of a mixed i, like db_bench's fixed-width keys.
std::string MakeKey(uint64_t set, uint64_t i) {
  char buf[kKeyBytes + 1];
  snprintf(buf, sizeof(buf), "%c%023" PRIu64, static_cast<char>('a' + set), sstfilter::Mix64(i));
  return std::string(buf, kKeyBytes);
}

// A filter under test: built from keys, queried by key.
class Filter {
 public:
  virtual ~Filter() = default;
  // Called before each benchmark of the filter, for settings that are the process's.
  virtual void Activate() {}
  virtual void Build(const std::vector<std::string>& keys) = 0;  // replaces the previous filter
  virtual size_t Bytes() const = 0;
  virtual bool MayMatch(const std::string& key) = 0;
  // may_match[i] for keys[i], i < count <= kBatch.
  virtual void MayMatchBatch(const std::string* keys, size_t count, bool* may_match) = 0;
};

// Queries made as RocksDB makes them, through a FilterBitsReader: one virtual call per query, or
// per batch of Slices. RocksDB's filters and sstfilter's (the plugin's own reader) are queried by
// this same code.
class BitsReaderFilter : public Filter {
 public:
  bool MayMatch(const std::string& key) override { return reader_->MayMatch(key); }
  void MayMatchBatch(const std::string* keys, size_t count, bool* may_match) override {
    rocksdb::Slice slices[kBatch];
    rocksdb::Slice* ptrs[kBatch];
    for (size_t i = 0; i < count; ++i) {
      slices[i] = keys[i];
      ptrs[i] = &slices[i];
    }
    reader_->MayMatch(static_cast<int>(count), ptrs, may_match);
  }

 protected:
  std::unique_ptr<rocksdb::FilterBitsReader> reader_;
};

// sstfilter's filters, queried through the reader the plugin hands RocksDB
// (NewSstFilterBitsReader: the kind's reader, chosen once when the filter is opened; the key is
// hashed behind the virtual call, and a batch prefetches each key as soon as it is hashed). Not
// through FilterReader's own queries, which choose the kind per query and which the plugin does
// not use: beyond the caches that dispatch costs a single miss about a fifth more
// (docs/history.md).
class SstFilter : public BitsReaderFilter {
 public:
  SstFilter(std::function<void(const std::vector<uint64_t>&, std::string*)> build, bool simd,
            bool prefetch_while_hashing = true, bool count_probes = false)
      : build_(std::move(build)),
        simd_(simd),
        prefetch_while_hashing_(prefetch_while_hashing),
        count_probes_(count_probes) {}
  void Activate() override { sstfilter::SetBlockedBloomSimdEnabled(simd_); }
  void Build(const std::vector<std::string>& keys) override {
    hashes_.clear();
    hashes_.reserve(keys.size());
    for (const std::string& k : keys) hashes_.push_back(sstfilter::KeyHash(k.data(), k.size()));
    reader_.reset();
    build_(hashes_, &bytes_);
    // A block whose probes are counted, as sstfilter.Leveled's are in a tree its listener
    // watches (plugin/probe_counts.h): the reader finds its cell.
    if (count_probes_) {
      probes_ = sstfilter::ProbeRegistry::Global().Register(
          sstfilter::FilterBlockId(bytes_.data(), bytes_.size()));
    }
    reader_.reset(sstfilter::NewSstFilterBitsReader(bytes_));
    late_prefetch_reader_ = sstfilter::FilterReader::Open(
        reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size());
  }
  size_t Bytes() const override { return bytes_.size(); }
  void MayMatchBatch(const std::string* keys, size_t count, bool* may_match) override {
    if (prefetch_while_hashing_) return BitsReaderFilter::MayMatchBatch(keys, count, may_match);
    // Every key hashed first, then the batch's own prefetch pass, as before the plugin
    // prefetched while hashing.
    uint64_t hashes[kBatch];
    for (size_t i = 0; i < count; ++i) {
      hashes[i] = sstfilter::KeyHash(keys[i].data(), keys[i].size());
    }
    late_prefetch_reader_.MayContainBatch(hashes, count, may_match,
                                          sstfilter::BatchPrefetch::kInBatch);
  }

 private:
  std::function<void(const std::vector<uint64_t>&, std::string*)> build_;
  bool simd_;
  bool prefetch_while_hashing_;
  bool count_probes_;
  std::shared_ptr<sstfilter::ProbeCell> probes_;  // the registered cell, while counting
  std::vector<uint64_t> hashes_;
  std::string bytes_;
  sstfilter::FilterReader late_prefetch_reader_;  // for batches without prefetch_while_hashing_
};

class RocksDbFilter : public BitsReaderFilter {
 public:
  explicit RocksDbFilter(const std::string& uri) {
    rocksdb::ConfigOptions config;
    config.ignore_unsupported_options = false;
    const rocksdb::Status s = rocksdb::FilterPolicy::CreateFromString(config, uri, &policy_);
    if (!s.ok() || policy_ == nullptr) {
      fprintf(stderr, "core_bench: cannot create RocksDB filter %s: %s\n", uri.c_str(),
              s.ToString().c_str());
      std::exit(1);
    }
    table_options_.filter_policy = policy_;
    table_options_.format_version = 5;
  }
  void Build(const std::vector<std::string>& keys) override {
    const rocksdb::FilterBuildingContext context(table_options_);
    std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy_->GetBuilderWithContext(context));
    for (const std::string& k : keys) builder->AddKey(k);
    rocksdb::Status status;
    reader_.reset();
    const rocksdb::Slice bytes = builder->Finish(&buf_, &status);
    size_ = bytes.size();
    reader_.reset(policy_->GetFilterBitsReader(bytes));
  }
  size_t Bytes() const override { return size_; }

 private:
  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  rocksdb::BlockBasedTableOptions table_options_;
  std::unique_ptr<const char[]> buf_;
  size_t size_ = 0;
};

std::unique_ptr<Filter> MakeSstFilter(const sstfilter::Result<sstfilter::FilterSpec>& spec,
                                      bool simd = true, bool prefetch_while_hashing = true,
                                      bool count_probes = false) {
  return std::make_unique<SstFilter>(
      [spec = spec.value()](const std::vector<uint64_t>& h, std::string* out) {
        *out = sstfilter::BuildFilter(spec, h.data(), h.size()).value();
      },
      simd, prefetch_while_hashing, count_probes);
}

// Counter flags that turn "keys per second" into "seconds per key".
const benchmark::Counter::Flags kPerKey = static_cast<benchmark::Counter::Flags>(
    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);

struct Candidate {
  const char* name;
  std::function<std::unique_ptr<Filter>()> make;
};

const std::vector<Candidate>& Candidates() {
  static const std::vector<Candidate> all = {
      {"rocksdb.bloomfilter:10", [] { return std::make_unique<RocksDbFilter>("bloomfilter:10"); }},
      {"rocksdb.ribbonfilter:10",
       [] { return std::make_unique<RocksDbFilter>("ribbonfilter:10"); }},
      {"rocksdb.bloomfilter:16", [] { return std::make_unique<RocksDbFilter>("bloomfilter:16"); }},
      // Ribbon's argument is the Bloom budget it matches in rate: 5 is about 10%, 15 about 0.1%.
      {"rocksdb.ribbonfilter:5", [] { return std::make_unique<RocksDbFilter>("ribbonfilter:5"); }},
      {"rocksdb.ribbonfilter:15",
       [] { return std::make_unique<RocksDbFilter>("ribbonfilter:15"); }},
      {"sstfilter.blocked:10", [] { return MakeSstFilter(SpecForBitsPerKey<BlockedBloom>(10)); }},
      {"sstfilter.blocked-scalar:10",
       [] { return MakeSstFilter(SpecForBitsPerKey<BlockedBloom>(10), /*simd=*/false); }},
      // Batches that hash every key first and prefetch after (MayContainBatch's own pass), beside
      // the plugin's prefetch while hashing: what that overlap is worth (core/batch.h).
      {"sstfilter.blocked-late-prefetch:10",
       [] {
         return MakeSstFilter(SpecForBitsPerKey<BlockedBloom>(10), /*simd=*/true,
                              /*prefetch_while_hashing=*/false);
       }},
      // The same filter with its probes counted (plugin/probe_counts.h): what counting costs.
      {"sstfilter.blocked-counted:10",
       [] {
         return MakeSstFilter(SpecForBitsPerKey<BlockedBloom>(10), /*simd=*/true,
                              /*prefetch_while_hashing=*/true, /*count_probes=*/true);
       }},
      {"sstfilter.standard:10", [] { return MakeSstFilter(SpecForBitsPerKey<StandardBloom>(10)); }},
      {"sstfilter.blocked:16", [] { return MakeSstFilter(SpecForBitsPerKey<BlockedBloom>(16)); }},
      {"sstfilter.standard:16", [] { return MakeSstFilter(SpecForBitsPerKey<StandardBloom>(16)); }},
      {"sstfilter.blocked@1%", [] { return MakeSstFilter(SpecForFpRate<BlockedBloom>(0.01)); }},
      {"sstfilter.cuckoo@1%", [] { return MakeSstFilter(SpecForFpRate<Cuckoo>(0.01)); }},
      {"sstfilter.blocked@0.1%", [] { return MakeSstFilter(SpecForFpRate<BlockedBloom>(0.001)); }},
      {"sstfilter.cuckoo@0.1%", [] { return MakeSstFilter(SpecForFpRate<Cuckoo>(0.001)); }},
      // The same fingerprints in plain buckets (format version 1, before semi-sorting).
      {"sstfilter.cuckoo-plain@0.1%",
       [] {
         return std::make_unique<SstFilter>(
             [](const std::vector<uint64_t>& h, std::string* out) {
               const sstfilter::CuckooParams params = Cuckoo::ForFpRate(0.001).value();
               (void)sstfilter::BuildCuckooFilter(params, h.data(), h.size(), out,
                                                  sstfilter::CuckooLayout::kPlain)
                   .value();
             },
             /*simd=*/true);
       }},
      {"sstfilter.blocked@0.01%",
       [] { return MakeSstFilter(SpecForFpRate<BlockedBloom>(0.0001)); }},
      {"sstfilter.cuckoo@0.01%", [] { return MakeSstFilter(SpecForFpRate<Cuckoo>(0.0001)); }},
      {"sstfilter.fuse@1%", [] { return MakeSstFilter(SpecForFpRate<Fuse>(0.01)); }},
      {"sstfilter.fuse@0.1%", [] { return MakeSstFilter(SpecForFpRate<Fuse>(0.001)); }},
      {"sstfilter.fuse:10", [] { return MakeSstFilter(SpecForBitsPerKey<Fuse>(10)); }},
      // The standard Ribbon kind, which sstfilter.Leveled takes for small files.
      {"sstfilter.ribbon@10%", [] { return MakeSstFilter(SpecForFpRate<Ribbon>(0.1)); }},
      {"sstfilter.ribbon@1%", [] { return MakeSstFilter(SpecForFpRate<Ribbon>(0.01)); }},
      {"sstfilter.ribbon@0.1%", [] { return MakeSstFilter(SpecForFpRate<Ribbon>(0.001)); }},
      // A budget of 10 bits per key: the widest fingerprint that fits.
      {"sstfilter.ribbon:10", [] { return MakeSstFilter(SpecForBitsPerKey<Ribbon>(10)); }},
      // Bumped Ribbon: layers of Ribbon tables, about 1.001 slots per key for large sets.
      {"sstfilter.bumped_ribbon@1%",
       [] { return MakeSstFilter(SpecForFpRate<BumpedRibbon>(0.01)); }},
      {"sstfilter.bumped_ribbon@0.1%",
       [] { return MakeSstFilter(SpecForFpRate<BumpedRibbon>(0.001)); }},
      {"sstfilter.bumped_ribbon:10",
       [] { return MakeSstFilter(SpecForBitsPerKey<BumpedRibbon>(10)); }},
  };
  return all;
}

struct Data {
  std::vector<std::string> present;
  std::vector<std::string> absent;  // as many as present: the miss queries
  // The rate's absent keys: at least kMinRateProbes (the first of them `absent`), so that a small
  // filter's measured rate is within about 1% of the truth at 1% (1 sigma), not 10% (10,000).
  std::vector<std::string> rate_probes;
};
constexpr uint64_t kMinRateProbes = 1'000'000;

struct Row {
  double bits_per_key = 0, fp_rate = 0;
  std::map<std::string, double> ns;  // op -> ns per key
  std::set<std::string> from_min;    // ops whose figure is the fastest of repetitions
};
std::map<std::string, Row>& Rows() {
  static std::map<std::string, Row> rows;
  return rows;
}
std::vector<std::string>& Order() {
  static std::vector<std::string> order;
  return order;
}

// Collects each run's time per key for the closing table (the fastest when --benchmark_repetitions
// asks for several runs), and prints the usual console output.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool min = run.run_type == Run::RT_Aggregate && run.aggregate_name == "min";
      if (run.error_occurred || !(min || run.run_type == Run::RT_Iteration)) continue;
      const std::string name = run.run_name.str();  // "<filter>/<op>"
      const size_t slash = name.find('/');
      const auto it = run.counters.find("ns_per_key");
      if (slash == std::string::npos || it == run.counters.end()) continue;
      const std::string key = name.substr(slash + 1);
      Row& row = Rows()[name.substr(0, slash)];
      if (min || !row.from_min.count(key)) row.ns[key] = it->second.value;
      if (min) row.from_min.insert(key);
    }
  }
};

void PrintTable() {
  const Row* base =
      Rows().count("rocksdb.bloomfilter:10") ? &Rows()["rocksdb.bloomfilter:10"] : nullptr;
  // Efficiency: bits per key over the information limit log2(1 / measured rate); 1.00 is ideal.
  printf("\n%-28s %9s %9s %6s %11s %9s %9s %11s %11s\n", "filter", "bits/key", "FP %", "eff.",
         "build ns/k", "hit ns", "miss ns", "batch miss", "miss/bf:10");
  for (const std::string& name : Order()) {
    Row& r = Rows()[name];
    const double miss = r.ns["miss"];
    const double efficiency = r.fp_rate > 0 ? r.bits_per_key / -std::log2(r.fp_rate) : 0;
    printf("%-28s %9.2f %9.4f %6.3f %11.1f %9.1f %9.1f %11.1f", name.c_str(), r.bits_per_key,
           100 * r.fp_rate, efficiency, r.ns["build"], r.ns["hit"], miss, r.ns["batched_miss"]);
    if (base != nullptr && base->ns.count("miss") && base->ns.at("miss") > 0) {
      printf(" %10.2fx", miss / base->ns.at("miss"));
    }
    printf("\n");
  }
}

void RegisterFilter(const Candidate& c, std::shared_ptr<const Data> data) {
  // Build once for the query benchmarks and the rate.
  std::shared_ptr<Filter> filter = c.make();
  filter->Activate();
  filter->Build(data->present);
  uint64_t fp = 0;
  for (const std::string& k : data->rate_probes) fp += filter->MayMatch(k);
  uint64_t fn = 0;
  for (const std::string& k : data->present) fn += !filter->MayMatch(k);
  if (fn != 0) {
    fprintf(stderr, "core_bench: %s has %" PRIu64 " false negatives\n", c.name, fn);
    std::exit(1);
  }
  Row& row = Rows()[c.name];
  row.bits_per_key = 8.0 * filter->Bytes() / data->present.size();
  row.fp_rate = static_cast<double>(fp) / data->rate_probes.size();
  Order().push_back(c.name);
  const std::string prefix = std::string(c.name) + "/";
  const double n = static_cast<double>(data->present.size());
  using benchmark::Counter;

  // The "min" aggregate: the fastest repetition, which PrintTable reports.
  const auto fastest = [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  };
  benchmark::RegisterBenchmark((prefix + "build").c_str(),
                               [c, data, n](benchmark::State& st) {
                                 std::unique_ptr<Filter> f = c.make();
                                 f->Activate();
                                 for (auto _ : st) f->Build(data->present);
                                 st.counters["ns_per_key"] =
                                     Counter(n * st.iterations() / 1e9, kPerKey);
                               })
      ->Unit(benchmark::kMillisecond)
      ->ComputeStatistics("min", fastest);
  for (const char* op : {"hit", "miss"}) {
    const bool hit = std::strcmp(op, "hit") == 0;
    benchmark::RegisterBenchmark((prefix + op).c_str(), [filter, data, hit](benchmark::State& st) {
      const std::vector<std::string>& keys = hit ? data->present : data->absent;
      filter->Activate();
      size_t i = 0;
      uint64_t matches = 0;
      for (auto _ : st) {
        matches += filter->MayMatch(keys[i]);
        if (++i == keys.size()) i = 0;
      }
      benchmark::DoNotOptimize(matches);
      st.counters["ns_per_key"] = Counter(st.iterations() / 1e9, kPerKey);
    })->ComputeStatistics("min", fastest);
  }
  benchmark::RegisterBenchmark((prefix + "batched_miss").c_str(), [filter,
                                                                   data](benchmark::State& st) {
    const std::vector<std::string>& keys = data->absent;
    filter->Activate();
    bool out[kBatch];
    size_t i = 0;
    for (auto _ : st) {
      if (i + kBatch > keys.size()) i = 0;
      filter->MayMatchBatch(&keys[i], kBatch, out);
      benchmark::DoNotOptimize(out);
      i += kBatch;
    }
    st.counters["ns_per_key"] = Counter(kBatch * st.iterations() / 1e9, kPerKey);
  })->ComputeStatistics("min", fastest);
}

bool StartsWith(const char* arg, const char* prefix) {
  return std::strncmp(arg, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t num_keys = 1'000'000;
  std::vector<std::string> wanted;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (StartsWith(argv[i], "--keys=")) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i] + 7, &end, 10);
      if (*end != '\0' || v <= 0 || v > 100'000'000) {
        fprintf(stderr, "core_bench: --keys must be an integer in [1, 100000000], got %s\n",
                argv[i] + 7);
        return 2;
      }
      num_keys = static_cast<uint64_t>(v);
    } else if (StartsWith(argv[i], "--filters=")) {
      std::string list = argv[i] + 10;
      for (size_t pos = 0; pos <= list.size();) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        if (comma > pos) wanted.push_back(list.substr(pos, comma - pos));
        pos = comma + 1;
      }
    } else if (std::strcmp(argv[i], "--list") == 0) {
      for (const Candidate& c : Candidates()) printf("%s\n", c.name);
      return 0;
    } else {
      rest.push_back(argv[i]);
    }
  }
  for (const std::string& w : wanted) {
    bool known = false;
    for (const Candidate& c : Candidates()) known |= (w == c.name);
    if (!known) {
      fprintf(stderr, "core_bench: unknown filter '%s' (--list shows them)\n", w.c_str());
      return 2;
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;

  auto data = std::make_shared<Data>();
  for (uint64_t i = 0; i < num_keys; ++i) data->present.push_back(MakeKey(0, i));
  for (uint64_t i = 0; i < num_keys; ++i) data->absent.push_back(MakeKey(1, i));
  for (uint64_t i = 0; i < std::max(num_keys, kMinRateProbes); ++i) {
    data->rate_probes.push_back(MakeKey(1, i));
  }
  printf("core_bench: %" PRIu64 " keys of %zu bytes, %" PRIu64
         " absent keys (%zu for the rates); blocked Bloom SIMD kernels: %s, builds %s\n",
         num_keys, kKeyBytes, num_keys, data->rate_probes.size(),
         sstfilter::BlockedBloomSimdTarget(),
         sstfilter::BlockedBloomVectorBuild() ? "in lanes" : "scalar");
  for (const Candidate& c : Candidates()) {
    bool selected = wanted.empty();
    for (const std::string& w : wanted) selected |= (w == c.name);
    if (selected) RegisterFilter(c, data);
  }
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintTable();
  benchmark::Shutdown();
  return 0;
}
