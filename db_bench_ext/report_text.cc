// SPDX-License-Identifier: Apache-2.0
// The text on stdout: db_bench's line per benchmark, the levels of each policy's tree, the rounds,
// and the closing table.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "core/blocked_bloom/blocked_bloom.h"
#include "core/blocked_bloom/math.h"
#include "core/bumped_ribbon/bumped_ribbon.h"
#include "core/cuckoo/cuckoo.h"
#include "core/cuckoo/math.h"
#include "core/fuse/fuse.h"
#include "core/ribbon/ribbon.h"
#include "core/sizing.h"
#include "core/standard_bloom/math.h"
#include "core/standard_bloom/standard_bloom.h"
#include "db_bench_ext/report.h"

namespace db_bench_ext {
namespace {

std::string Human(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[u]);
  return buf;
}

// Per level: files, keys and filter bits per key from the table properties, and the filters'
// false-positive rate over absent-key lookups (readmissing, else multireadmissing) from the
// per-level perf context.
void PrintLevels(const PolicyResult& pr) {
  printf("  %5s %6s %12s %9s %12s %10s\n", "level", "files", "keys", "bits/key", "checks", "FP %");
  for (const auto& [level, l] : pr.levels) {
    printf("  %5d %6" PRIu64 " %12" PRIu64 " %9.2f", level, l.files, l.keys,
           BitsPerKey(l.filter_bytes, l.filter_entries));
    const LevelCounts c = pr.AbsentKeyLevelCounts(level);
    if (c.checks() > 0) {
      printf(" %12" PRIu64 " %10.4f\n", c.checks(), 100.0 * c.false_positives() / c.checks());
    } else {
      printf(" %12s %10s\n", "-", "-");
    }
  }
  const PolicyResult::AllocationEstimate e = EstimateAllocationOf(pr);
  if (e.one_filter > 0) {
    printf(
        "  sstfilter's filters at %.2f bits/key%s on these levels (their keys, the probes "
        "counted): %.4f FP/look expected with one filter, %.4f allocated over the levels (%.2fx)\n",
        pr.bits_per_key(), FLAGS_partition_filters ? " in partitions" : "", e.one_filter,
        e.over_the_levels, e.over_the_levels / e.one_filter);
  }
}

std::string FormatTheta(double theta) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%g", theta);
  return buf;
}

}  // namespace

PolicyResult::AllocationEstimate EstimateAllocationOf(const PolicyResult& pr) {
  const double bits = pr.bits_per_key();
  if (!FLAGS_partition_filters || !(bits > 0)) return pr.EstimateAllocation();
  return pr.EstimateAllocation(
      std::max<uint64_t>(static_cast<uint64_t>(8.0 * FLAGS_metadata_block_size / bits), 1));
}

void PrintConfig(const Config& config) {
  const std::string lookups = config.zipf_theta > 0
                                  ? std::string(config.zipf_scrambled ? "scrambled " : "") +
                                        "zipfian, theta " + FormatTheta(config.zipf_theta)
                                  : "uniform";
  printf("db_bench_ext: %" PRIu64 " keys of %d bytes, values of %d bytes, %" PRIu64
         " lookups per read benchmark (%s), %d thread(s), compression %s\n",
         config.num, FLAGS_key_size, FLAGS_value_size, config.reads, lookups.c_str(), FLAGS_threads,
         FLAGS_compression_type.c_str());
}

// A fuse or Ribbon filter's size depends on its key count: the bits per key of the table of one
// filter of num keys (num >= 1), its trailer left out.
template <typename Kind>
sstfilter::Result<double> TableBitsPerKey(double fp_rate, uint64_t num) {
  const auto params = Kind::ForFpRate(fp_rate);
  if (!params.ok()) return sstfilter::Err(params.error());
  const auto w = Kind::FingerprintBitsFor(params.value(), num);
  if (!w.ok()) return sstfilter::Err(w.error());
  const auto bytes = Kind::TableBytesFor(num, w.value());
  if (!bytes.ok()) return sstfilter::Err(bytes.error());
  return 8.0 * static_cast<double>(bytes.value()) / static_cast<double>(num);
}

void PrintSizing(const Config& config) {
  const double p = FLAGS_fp_rate;
  printf("sizing       : %" PRIu64 " keys at a %.4g%% false-positive rate\n", config.num, 100 * p);
  struct Row {
    std::string name;
    sstfilter::Result<double> bits_per_key;
  };
  using namespace std::string_literals;  // NOLINT: the labels below
  const sstfilter::Result<int> f = sstfilter::CuckooFingerprintBits(p);
  // One row per kind of core/kinds.h, each labelled with the kind's name (a test holds every
  // kind to a row).
  const Row rows[] = {
      {sstfilter::BlockedBloom::kName + " (sstfilter.Bloom, ~bloomfilter)"s,
       sstfilter::BlockedBloomBitsPerKey(p)},
      {sstfilter::StandardBloom::kName + " (sstfilter.Bloom, layout=standard)"s,
       sstfilter::StandardBloomBitsPerKey(p)},
      {sstfilter::Cuckoo::kName + " (sstfilter.Cuckoo)"s,
       f.ok() ? sstfilter::CuckooBitsPerKey(f.value(), sstfilter::kCuckooTargetLoad)
              : sstfilter::Result<double>::Error(f.error())},
      {sstfilter::Fuse::kName + " (sstfilter.Fuse), --num keys"s,
       TableBitsPerKey<sstfilter::Fuse>(p, config.num)},
      {sstfilter::Ribbon::kName + " (standard; Leveled's at some sizes), --num keys"s,
       TableBitsPerKey<sstfilter::Ribbon>(p, config.num)},
      {sstfilter::BumpedRibbon::kName + " (sstfilter.BumpedRibbon), --num keys"s,
       TableBitsPerKey<sstfilter::BumpedRibbon>(p, config.num)},
      {"information-theoretic limit", sstfilter::InformationLimitBitsPerKey(p)},
  };
  for (const Row& row : rows) {
    if (row.bits_per_key.ok()) {
      printf("  %-56s %7.2f bits/key %12s\n", row.name.c_str(), row.bits_per_key.value(),
             Human(row.bits_per_key.value() * config.num / 8).c_str());
    } else {
      printf("  %-56s %s\n", row.name.c_str(), row.bits_per_key.error().c_str());
    }
  }
}

void PrintPolicyHeader(const std::string& uri) { printf("\n== filter policy: %s\n", uri.c_str()); }

void PrintSkipped(const Benchmark& benchmark, const char* why) {
  printf("%-12s : skipped (%s)\n", benchmark.name, why);
}

void PrintBench(const PolicyResult& pr, const BenchResult& b, const PolicyResult* none) {
  const char* name = b.benchmark->name;
  const BenchmarkKind kind = b.benchmark->kind;
  if (kind == BenchmarkKind::kFilterBuild || kind == BenchmarkKind::kFilterQuery) {
    if (b.ops == 0) {
      PrintSkipped(*b.benchmark, "no filter");
    } else if (kind == BenchmarkKind::kFilterBuild) {
      printf("%-12s : %10.1f ns/key build, %.2f bits/key\n", name, b.build_ns_per_key,
             b.filter_bits);
    } else {
      printf("%-12s : %10.1f ns/hit %.1f ns/miss, false-positive rate %.4f%%\n", name, b.hit_ns,
             b.miss_ns, 100 * b.filter_fp_rate);
    }
    return;
  }
  printf("%-12s : %11.3f micros/op %.0f ops/sec %.3f seconds %" PRIu64 " operations;", name,
         b.micros_per_op(), b.ops_per_sec(), b.seconds, b.ops);
  if (kind == BenchmarkKind::kRead) printf(" (%" PRIu64 " of %" PRIu64 " found)", b.found, b.ops);
  if (kind == BenchmarkKind::kSeek) printf(" (%" PRIu64 " keys found)", b.found);
  if (b.lookups > 0) {
    printf(" %" PRIu64 " absent-key lookups between them (%" PRIu64 " found)", b.lookups, b.found);
  }
  printf("\n");
  if (kind == BenchmarkKind::kSeek) {
    // Files: those an iterator met in its bounds (the table_filter was asked about), less those
    // the range filter skipped; blocks: data blocks the block cache missed, and every block
    // (data, index, filter) read from the files.
    printf(
        "  [%s] files read/scan %.3f (of %.3f met), data blocks read/scan %.3f, blocks "
        "read/scan %.3f, latency p50 %.2f p99 %.2f p99.9 %.2f us",
        pr.Label().c_str(), b.per_op(b.files_asked - b.files_skipped), b.per_op(b.files_asked),
        b.data_blocks_per_op(), b.per_op(b.file_block_reads), b.p50_us, b.p99_us, b.p999_us);
    const BenchResult* base = none ? none->Find(name) : nullptr;
    if (base != nullptr && base != &b && b.micros_per_op() > 0) {
      printf(", vs no range filter %.2fx", base->micros_per_op() / b.micros_per_op());
    }
    printf("\n");
    return;
  }
  if (kind != BenchmarkKind::kRead && b.lookups == 0) return;
  printf("  [%s]", pr.Label().c_str());
  // A fill's block reads are its compactions' too: none for the fills with lookups.
  if (kind == BenchmarkKind::kRead) {
    printf(" data blocks read/op %.3f, filter blocks read/op %.3f, bytes read/op %.0f,",
           b.data_blocks_per_op(), b.per_op(b.filter_block_misses), b.per_op(b.file_bytes_read));
    printf(" latency p50 %.2f p99 %.2f p99.9 %.2f us%s,", b.p50_us, b.p99_us, b.p999_us,
           b.benchmark->multi_get ? " per MultiGet" : "");
  }
  if (b.filter_checks() > 0) {
    printf(" filter checks %" PRIu64, b.filter_checks());
    // No rate where every check was of a present key (readrandom): fp_rate() is -1 there.
    if (b.fp_rate() >= 0) printf(", false positives %.4f%%", 100 * b.fp_rate());
    if (b.lookups > 0) printf(", %.4f per lookup", b.fp_per_lookup());
  }
  const BenchResult* base = none ? none->Find(name) : nullptr;
  if (base != nullptr && base != &b && b.micros_per_op() > 0) {
    printf(", speed-up vs none %.2fx", base->micros_per_op() / b.micros_per_op());
  }
  printf("\n");
}

void PrintPolicyFiles(const PolicyResult& pr) {
  printf("  [%s] %" PRIu64 " SST files, filter %.2f bits/key (%s)", pr.Label().c_str(), pr.files,
         pr.bits_per_key(), Human(static_cast<double>(pr.filter_bytes)).c_str());
  if (pr.range_filter_entries > 0) {
    printf(", range filter %.2f bits/entry (%s)",
           8.0 * static_cast<double>(pr.range_filter_bytes) /
               static_cast<double>(pr.range_filter_entries),
           Human(static_cast<double>(pr.range_filter_bytes)).c_str());
  }
  printf("\n");
  PrintLevels(pr);
}

void PrintStatistics(const std::string& text) { printf("STATISTICS:\n%s\n", text.c_str()); }

void PrintRoundHeader(int round) { printf("\n== round %d of %d\n", round, FLAGS_rounds); }

void PrintRoundResult(const Benchmark& benchmark, double ops_per_sec, const std::string& uri) {
  printf("%-16s : %11.0f ops/sec  %s\n", benchmark.name, ops_per_sec, uri.c_str());
}

// The scans' table, when scans ran: files and data blocks read per scan, and the speed against
// the same filter policy without a range filter.
void PrintSeekTable(const std::vector<PolicyResult>& results) {
  const bool ran = std::any_of(results.begin(), results.end(), [](const PolicyResult& pr) {
    return pr.Find("seekempty") != nullptr || pr.Find("seekrandom") != nullptr;
  });
  if (!ran) return;
  printf("\n%-38s %9s %10s %10s %12s %8s %12s %8s\n", "filter policy | range filter", "range",
         "files", "data blks", "seekempty", "vs none", "seekrandom", "vs none");
  printf("%-38s %9s %10s %10s %12s %8s %12s %8s\n", "", "bits/entry", "(empty)", "(empty)",
         "ops/sec", "", "ops/sec", "");
  for (const PolicyResult& pr : results) {
    const PolicyResult* base = NoRangeFilterResult(results, pr.uri);
    printf("%-38s ", pr.Label().c_str());
    pr.range_filter_entries > 0
        ? printf("%9.2f ", 8.0 * static_cast<double>(pr.range_filter_bytes) /
                               static_cast<double>(pr.range_filter_entries))
        : printf("%9s ", "-");
    const BenchResult* empty = pr.Find("seekempty");
    empty != nullptr
        ? printf("%10.4f %10.4f ", empty->per_op(empty->files_asked - empty->files_skipped),
                 empty->data_blocks_per_op())
        : printf("%10s %10s ", "-", "-");
    for (const char* name : {"seekempty", "seekrandom"}) {
      const double ops = pr.OpsPerSec(name);
      ops > 0 ? printf("%12.0f ", ops) : printf("%12s ", "-");
      const double base_ops = base != nullptr ? base->OpsPerSec(name) : -1;
      ops > 0 && base_ops > 0 ? printf("%7.2fx ", ops / base_ops) : printf("%8s ", "-");
    }
    printf("\n");
  }
}

void PrintTable(const std::vector<PolicyResult>& results) {
  const PolicyResult* none = NoFilterResult(results);
  // The mixed lookups get a column when they ran.
  std::vector<const char*> columns = {"readmissing", "multireadmissing", "readrandom"};
  for (const char* mixed : {"readmixed", "multireadmixed"}) {
    for (const PolicyResult& pr : results) {
      if (pr.Find(mixed) != nullptr) {
        columns.push_back(mixed);
        break;
      }
    }
  }
  // FP % is per filter check; FP/lookup sums the checks of every level an absent key consults.
  // reads/look: blocks read from SST files (the block cache missed them: data, index or filter
  // blocks) per absent-key lookup.
  printf("\n%-38s %9s %10s %8s %10s", "filter policy", "bits/key", "FP %", "FP/look", "reads/look");
  for (const char* name : columns) {
    printf(" %12s", std::string(name) == "multireadmissing" ? "multimissing" : name);
  }
  printf(" %9s\n%-38s %9s %10s %8s %10s", "vs none", "", "(SSTs)", "(missing)", "(missing)",
         "(missing)");
  for (size_t i = 0; i < columns.size(); ++i) printf(" %12s", "ops/sec");
  printf(" %9s\n", "(missing)");
  for (const PolicyResult& pr : results) {
    const BenchResult* rate_source = pr.AbsentKeyBench();
    double fp = rate_source ? rate_source->fp_rate() : -1;
    if (fp < 0 && pr.Find("filterquery")) fp = pr.Find("filterquery")->filter_fp_rate;
    printf("%-38s %9.2f ", pr.Label().c_str(), pr.bits_per_key());
    fp < 0 ? printf("%10s ", "-") : printf("%10.4f ", 100 * fp);
    const double per_lookup = rate_source != nullptr ? rate_source->fp_per_lookup() : -1;
    per_lookup < 0 ? printf("%8s ", "-") : printf("%8.4f ", per_lookup);
    // A fill's block reads are its compactions': only a read benchmark's count.
    const bool read =
        rate_source != nullptr && rate_source->benchmark->kind == BenchmarkKind::kRead;
    read ? printf("%10.4f ", rate_source->per_op(rate_source->file_block_reads))
         : printf("%10s ", "-");
    for (const char* name : columns) {
      const double ops = pr.OpsPerSec(name);
      ops > 0 ? printf("%12.0f ", ops) : printf("%12s ", "-");
    }
    const double base = none ? none->OpsPerSec("readmissing") : -1;
    if (pr.OpsPerSec("readmissing") > 0 && base > 0) {
      printf("%8.2fx", pr.OpsPerSec("readmissing") / base);
    }
    printf("\n");
  }
  PrintSeekTable(results);
}

}  // namespace db_bench_ext
