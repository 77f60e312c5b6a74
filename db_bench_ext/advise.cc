// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/advise.h"

#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "compat/rocksdb_api.h"
#include "core/random.h"
#include "db_bench_ext/advise_db.h"
#include "db_bench_ext/flags.h"
#include "db_bench_ext/measure.h"
#include "sstfilter/inspect.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/sstfilter.h"

namespace db_bench_ext {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Comparator;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

// What a policy's filters do per level.
struct LevelFigures {
  uint64_t files = 0, keys = 0, filter_bytes = 0, probes = 0, false_positives = 0;
};
struct Advice {
  std::string uri;
  bool live = false;  // the database's own filters, answering through Get
  // The policy's memory budget (sstfilter::FilterMemoryBudget) in bytes at the database's block
  // cache, and the share it is of that cache (0: a budget in bytes); 0: none.
  uint64_t budget_bytes = 0;
  double budget_share = 0;
  uint64_t cache_bytes = 0;
  std::map<int, LevelFigures> levels;
  LevelFigures Total() const {
    LevelFigures t;
    for (const auto& [level, l] : levels) {
      t.files += l.files;
      t.keys += l.keys;
      t.filter_bytes += l.filter_bytes;
      t.probes += l.probes;
      t.false_positives += l.false_positives;
    }
    return t;
  }
};

// The database's own filters: their sizes from the files' properties, their answers to the absent
// keys from RocksDB's per-level perf counters over a Get of each.
Advice Live(const Database& d, const std::vector<File>& files,
            const std::vector<std::string>& keys) {
  Advice a;
  a.uri = d.table_options.filter_policy == nullptr ? kNoFilterUri
                                                   : d.table_options.filter_policy->Name();
  a.live = true;
  ROCKSDB_NAMESPACE::TablePropertiesCollection props;
  const Status s = d.db->GetPropertiesOfAllTables(&props);
  if (!s.ok()) Fail("cannot read the files' properties: " + s.ToString());
  for (const File& f : files) {
    LevelFigures& l = a.levels[f.level];
    ++l.files;
    const auto it = props.find(f.path);
    if (it == props.end()) continue;
    l.keys += it->second->num_filter_entries > 0 ? it->second->num_filter_entries : f.entries;
    l.filter_bytes += it->second->filter_size;
  }
  std::map<int, LevelCounts> counts;
  {
    const LevelPerfCounts counting;
    for (const std::string& k : keys) IsAbsent(d.db.get(), k);
    counting.AddTo(&counts);
  }
  for (const auto& [level, c] : counts) {
    a.levels[level].probes += c.checks();
    a.levels[level].false_positives += c.false_positives();
  }
  return a;
}

// A candidate's advice before any file: its URI and, under a memory_budget, the bytes it spends
// on these tables (a share of their block cache, as MemoryBudget::BytesFor computes it).
Advice AdviceFor(const Database& d, const PolicyUnderTest& policy) {
  Advice advice;
  advice.uri = policy.uri;
  if (policy.policy == nullptr) return advice;
  const sstfilter::MemoryBudgetOption budget = sstfilter::FilterMemoryBudget(*policy.policy);
  advice.budget_bytes = budget.bytes;
  if (budget.cache_share > 0 && d.table_options.block_cache != nullptr &&
      !d.table_options.no_block_cache) {
    advice.cache_bytes = d.table_options.block_cache->GetCapacity();
    advice.budget_share = budget.cache_share;
    advice.budget_bytes = std::max<uint64_t>(
        1, static_cast<uint64_t>(budget.cache_share * static_cast<double>(advice.cache_bytes)));
  }
  return advice;
}

// The logger a candidate builds under, of its own: it names the candidate's view of the tree. An
// sstfilter.Leveled candidate allocates for this tree as it is (its accounts published under this
// logger), at its own budget, as the sstfilter.LeveledBudget listener steers a tree it watches.
std::shared_ptr<ROCKSDB_NAMESPACE::Logger> LoggerFor(const Database& d,
                                                     const PolicyUnderTest& policy) {
  auto logger = std::make_shared<NullLogger>();
  if (policy.policy != nullptr &&
      std::string(policy.policy->Name()) == sstfilter::kLeveledPolicyName) {
    const Status s = sstfilter::AccountTreeForAdvice(
        d.db.get(), ROCKSDB_NAMESPACE::kDefaultColumnFamilyName, *policy.policy, logger);
    if (!s.ok()) Fail(policy.uri + ": " + s.ToString());
  }
  return logger;
}

// The builder the policy gives a file of `level` in this tree (deepest: its last level).
std::unique_ptr<FilterBitsBuilder> BuilderFor(const Database& d, const PolicyUnderTest& policy,
                                              ROCKSDB_NAMESPACE::Logger* logger, int level,
                                              int deepest) {
  BlockBasedTableOptions table = d.table_options;
  table.filter_policy = policy.policy;
  FilterBuildingContext context(table);
  context.compaction_style = d.options.compaction_style;
  context.num_levels = d.options.num_levels;
  context.column_family_name = ROCKSDB_NAMESPACE::kDefaultColumnFamilyName;
  context.info_log = logger;
  context.level_at_creation = level;
  // Level 0's files are flushes (RocksDB's Ribbon policy gives flushes Bloom filters).
  context.reason = level == 0 ? ROCKSDB_NAMESPACE::TableFileCreationReason::kFlush
                              : ROCKSDB_NAMESPACE::TableFileCreationReason::kCompaction;
  context.is_bottommost = level > 0 && level == deepest;
  std::unique_ptr<FilterBitsBuilder> builder(policy.policy->GetBuilderWithContext(context));
  if (builder == nullptr) Fail(policy.uri + ": the policy gave no filter builder");
  return builder;
}

// Each candidate's filters, built file by file as the policy builds them for the file's level,
// and asked about the absent keys whose lookups consult that file.
std::vector<Advice> Candidates(const Database& d, const std::vector<File>& files,
                               const std::vector<std::string>& keys,
                               const std::vector<std::vector<uint32_t>>& probes,
                               const std::vector<PolicyUnderTest>& policies, uint64_t entries) {
  std::vector<Advice> advice(policies.size());
  std::vector<std::shared_ptr<ROCKSDB_NAMESPACE::Logger>> loggers(policies.size());
  for (size_t p = 0; p < policies.size(); ++p) {
    advice[p] = AdviceFor(d, policies[p]);
    loggers[p] = LoggerFor(d, policies[p]);
  }
  int deepest = 0;
  for (const File& f : files) deepest = std::max(deepest, f.level);
  Progress progress(entries);
  for (size_t i = 0; i < files.size(); ++i) {
    const File& f = files[i];
    std::vector<std::unique_ptr<FilterBitsBuilder>> builders(policies.size());
    for (size_t p = 0; p < policies.size(); ++p) {
      ++advice[p].levels[f.level].files;
      if (policies[p].policy == nullptr) continue;  // none: every probe reads a block
      builders[p] = BuilderFor(d, policies[p], loggers[p].get(), f.level, deepest);
    }
    uint64_t keys_in_file = 0;
    ForEachKey(f, d.options, [&](const Slice& key) {
      ++keys_in_file;
      for (auto& b : builders) {
        if (b != nullptr) b->AddKey(key);
      }
    });
    progress.Add(f.entries);
    for (size_t p = 0; p < policies.size(); ++p) {
      LevelFigures& l = advice[p].levels[f.level];
      l.keys += keys_in_file;
      l.probes += probes[i].size();
      if (builders[p] == nullptr) {
        l.false_positives += probes[i].size();
        continue;
      }
      std::unique_ptr<const char[]> buf;
      Status status;
      const Slice filter = builders[p]->Finish(&buf, &status);
      if (!status.ok()) Fail(policies[p].uri + ": building a filter failed: " + status.ToString());
      l.filter_bytes += filter.size();
      std::unique_ptr<FilterBitsReader> reader(policies[p].policy->GetFilterBitsReader(filter));
      for (const uint32_t k : probes[i]) {
        l.false_positives += reader == nullptr || reader->MayMatch(keys[k]) ? 1 : 0;
      }
    }
  }
  return advice;
}

void Print(const std::vector<Advice>& advice, uint64_t lookups) {
  for (const Advice& a : advice) {
    printf("\n== %s%s\n", a.uri.c_str(), a.live ? " (the database's own filters)" : "");
    printf("  %5s %6s %12s %9s %10s %10s %9s\n", "level", "files", "keys", "bits/key", "probes",
           "false pos.", "FP %");
    auto row = [](const char* name, const LevelFigures& l) {
      printf("  %5s %6" PRIu64 " %12" PRIu64 " %9.2f %10" PRIu64 " %10" PRIu64 " %9.4f\n", name,
             l.files, l.keys, l.keys ? 8.0 * l.filter_bytes / l.keys : 0.0, l.probes,
             l.false_positives, l.probes ? 100.0 * l.false_positives / l.probes : 0.0);
    };
    for (const auto& [level, l] : a.levels) row(std::to_string(level).c_str(), l);
    row("all", a.Total());
    if (a.budget_bytes > 0) {
      printf("  memory_budget %" PRIu64 " bytes", a.budget_bytes);
      if (a.budget_share > 0) {
        // RocksDB's OPTIONS file does not keep a block cache's capacity: the database opens here
        // with RocksDB's default cache.
        printf(" (%.4g%% of the %" PRIu64 "-byte block cache the database opened with here)",
               100 * a.budget_share, a.cache_bytes);
      }
      printf(": these filters %" PRIu64 " bytes, %.3fx the budget\n", a.Total().filter_bytes,
             static_cast<double>(a.Total().filter_bytes) / static_cast<double>(a.budget_bytes));
    }
  }
  printf("\n%-40s %9s %12s %12s %10s\n", "filter policy", "bits/key", "filter bytes", "FP/lookup",
         "vs live");
  const LevelFigures live = advice.front().Total();
  for (const Advice& a : advice) {
    const LevelFigures t = a.Total();
    const double per_lookup = static_cast<double>(t.false_positives) / lookups;
    printf("%-40s %9.2f %12" PRIu64 " %12.5f", (a.uri + (a.live ? " (live)" : "")).c_str(),
           t.keys ? 8.0 * t.filter_bytes / t.keys : 0.0, t.filter_bytes, per_lookup);
    if (live.false_positives > 0) {
      printf(" %9.2fx", static_cast<double>(t.false_positives) / live.false_positives);
    }
    printf("\n");
  }
  printf(
      "FP/lookup: false positives per absent-key lookup, each a data block read that the filter "
      "did not save\n");
}

void WriteAdviceJson(const Database& d, const std::vector<Advice>& advice, uint64_t lookups,
                     uint64_t total_keys) {
  using Json = nlohmann::ordered_json;
  Json policies = Json::array();
  for (const Advice& a : advice) {
    Json levels = Json::array();
    for (const auto& [level, l] : a.levels) {
      levels.push_back({{"level", level},
                        {"files", l.files},
                        {"keys", l.keys},
                        {"filter_bytes", l.filter_bytes},
                        {"probes", l.probes},
                        {"false_positives", l.false_positives}});
    }
    const LevelFigures t = a.Total();
    policies.push_back({{"filter_uri", a.uri},
                        {"live", a.live},
                        {"filter_bytes", t.filter_bytes},
                        {"memory_budget_bytes", a.budget_bytes},
                        {"bits_per_key", t.keys ? 8.0 * t.filter_bytes / t.keys : 0.0},
                        {"probes", t.probes},
                        {"false_positives", t.false_positives},
                        {"false_positives_per_lookup",
                         static_cast<double>(t.false_positives) / static_cast<double>(lookups)},
                        {"levels", std::move(levels)}});
  }
  const Json j = {{"advise",
                   {{"db", d.path},
                    {"keys", total_keys},
                    {"absent_keys", lookups},
                    {"policies", std::move(policies)}}}};
  std::ofstream out(FLAGS_json);
  // Paths and keys need not be UTF-8, which JSON strings must be: such bytes become U+FFFD
  // rather than an exception.
  out << j.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) << "\n";
  if (!out) Fail("--json=" + FLAGS_json + ": cannot write it");
}

}  // namespace

void RunAdvisor() {
  const std::vector<PolicyUnderTest> policies = PoliciesFromFlags();
  if (FLAGS_reads <= 0 && FLAGS_absent_keys.empty()) {
    Fail("--reads must be > 0 for advise, got " + std::to_string(FLAGS_reads) +
         ": the advisor makes that many absent keys (-1, --num, is for the read benchmarks)");
  }
  Database d;
  OpenReadOnly(FLAGS_db, &d);
  const std::vector<File> files = LiveFiles(d.db.get());
  if (files.empty()) Fail("--db=" + FLAGS_db + " has no SST file to advise on");
  uint64_t entries = 0;  // the files' entries (tombstones included)
  for (const File& f : files) entries += f.entries;
  uint64_t total_keys = entries;  // the keys a read sees, once the keys are sampled
  const std::vector<std::string> keys =
      FLAGS_absent_keys.empty()
          ? MakeAbsentKeys(d, files, entries, static_cast<uint64_t>(FLAGS_reads), FLAGS_seed,
                           &total_keys)
          : ReadAbsentKeys(d.db.get(), FLAGS_absent_keys);
  printf("advise: %s, %zu SST files, %" PRIu64 " keys; %zu absent keys (%s)\n", d.path.c_str(),
         files.size(), total_keys, keys.size(),
         FLAGS_absent_keys.empty() ? "made from the database's keys" : FLAGS_absent_keys.c_str());
  std::vector<sstfilter::SstFilterInfo> described;  // which filters the files carry, per level
  if (sstfilter::DescribeFilters(d.db.get(), &described).ok() &&
      sstfilter::ReadFilterFormats(d.db.get(), &described).ok()) {
    fputs(sstfilter::FormatFiltersByLevel(described).c_str(), stdout);
  }
  const std::vector<std::vector<uint32_t>> probes =
      KeysConsultingEachFile(files, keys, d.options.comparator);
  std::vector<Advice> advice = {Live(d, files, keys)};
  for (Advice& a : Candidates(d, files, keys, probes, policies, entries)) {
    advice.push_back(std::move(a));
  }
  Print(advice, keys.size());
  if (!FLAGS_json.empty()) WriteAdviceJson(d, advice, keys.size(), total_keys);
}

}  // namespace db_bench_ext
