// SPDX-License-Identifier: Apache-2.0
// What a production database throws at a filter: corrupt filter blocks in real SST files,
// concurrent reads while filters are built, SIGKILL in the middle of synced writes, hostile keys
// and configurations, and the silent loss of the filter policy.
#include <gtest/gtest.h>
#include <poll.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compat/filter_bits_interface.h"
#include "core/format.h"
#include "sstfilter/inspect.h"
#include "sstfilter/range_filter.h"
#include "sstfilter/sstfilter.h"
#include "tests/plugin/db_fixture.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

namespace fs = std::filesystem;
using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;

using testing::OpenDb;
using testing::PolicyFrom;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// The width of crash_writer's keys, which the crash test reads back.
std::string Key(uint64_t i) { return testing::NumberedKey(i, testing::kCrashWriterKeyDigits); }

Options MakeOptions(const std::string& uri, bool cache_filters = false) {
  BlockBasedTableOptions table;
  // With the filter in the block cache it is read under each lookup's ReadOptions, so
  // verify_checksums = false really lets unverified filter bytes reach the reader.
  table.cache_index_and_filter_blocks = cache_filters;
  return testing::OptionsFor(uri, table);
}

// ---- Locating the filter block of an SST file -------------------------------------------------

struct BlockHandle {
  uint64_t offset = 0, size = 0;
};

// The filter block of an SST file whose table properties give its size: the bytes that end with
// sstfilter's trailer marker (kRocksDbUnknownMarker), which must occur exactly once in the file.
// (Reading the footer and the metaindex instead would tie the test to one SST format version:
// RocksDB's footer changed at format_version 6.)
const std::string kMarker(reinterpret_cast<const char*>(kRocksDbUnknownMarker), kMarkerBytes);

bool FindFilterBlock(const std::string& sst, uint64_t filter_size, BlockHandle* out) {
  const size_t marker = sst.find(kMarker);
  if (marker == std::string::npos || sst.find(kMarker, marker + 1) != std::string::npos) {
    return false;
  }
  const uint64_t end = marker + kMarkerBytes;
  if (filter_size > end) return false;
  out->offset = end - filter_size;
  out->size = filter_size;
  return true;
}

// ---- Corrupt filter blocks --------------------------------------------------------------------

class CorruptFilterTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CorruptFilterTest, ChecksumsReportItLoseNoKeyAndUnverifiedReadsNeverCrash) {
  const TempDir dir("corrupt");
  // More keys than a wrapped Ribbon table takes: every filter here ends in layout 2's marker,
  // which FindFilterBlock looks for (the compact trailer has none).
  constexpr int kKeys = 20000;
  uint64_t filter_size = 0;
  {
    Status s;
    auto db = OpenDb(MakeOptions(GetParam()), dir.path(), &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key(2 * i), "v").ok());
    ASSERT_TRUE(db->Flush({}).ok());
    ROCKSDB_NAMESPACE::TablePropertiesCollection tables;
    ASSERT_TRUE(db->GetPropertiesOfAllTables(&tables).ok());
    ASSERT_EQ(tables.size(), 1u);
    filter_size = tables.begin()->second->filter_size;
  }
  std::string sst_path;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().extension() == ".sst") sst_path = e.path().string();
  }
  const std::string original = ReadFile(sst_path);
  BlockHandle filter;
  ASSERT_TRUE(FindFilterBlock(original, filter_size, &filter));
  ASSERT_GT(filter.size, 32u);
  ASSERT_EQ(original.substr(filter.offset + filter.size - kMarkerBytes, kMarkerBytes), kMarker);

  std::mt19937_64 rng(5);
  int reported = 0, trials = 0;
  for (int trial = 0; trial < 60; ++trial, ++trials) {
    std::string bad = original;
    // Half the trials hit the trailer, half the body; 1 to 8 bytes each.
    const uint64_t region_start = trial % 2 ? filter.offset + filter.size - 32 : filter.offset;
    const uint64_t region_size = trial % 2 ? 32 : filter.size - 32;
    for (int flips = 1 + static_cast<int>(rng() % 8); flips > 0; --flips) {
      bad[region_start + rng() % region_size] ^= static_cast<char>(1 + rng() % 255);
    }
    WriteFile(sst_path, bad);
    for (const bool verify : {true, false}) {
      Status s;
      auto db = OpenDb(MakeOptions(GetParam(), /*cache_filters=*/true), dir.path(), &s);
      ASSERT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
      if (db == nullptr) continue;
      ReadOptions ro;
      ro.verify_checksums = verify;
      PinnableSlice value;
      int present_found = 0;
      for (int i = 0; i < 400; ++i) {
        const Status g = db->Get(ro, db->DefaultColumnFamily(), Key(i), &value);
        ASSERT_TRUE(g.ok() || g.IsNotFound() || g.IsCorruption()) << g.ToString();
        present_found += (i % 2 == 0) && g.ok();
      }
      if (verify) {
        // RocksDB's checksums catch the damage; a filter block that fails them is not used, so
        // every key is still found.
        const Status v = db->VerifyChecksum();
        EXPECT_TRUE(v.IsCorruption()) << "trial " << trial << ": " << v.ToString();
        reported += v.IsCorruption();
        EXPECT_EQ(present_found, 200) << "trial " << trial;
      }
      // Without verification, unverified bytes reach the reader: no crash (the sanitizer build
      // checks every access); a flipped body bit can turn keys into false negatives there, which
      // is why checksums must stay on.
    }
  }
  WriteFile(sst_path, original);
  printf("[ figures  ] %s: %d corrupt filter blocks, %d reported by checksums, no crash\n",
         GetParam(), trials, reported);
}

INSTANTIATE_TEST_SUITE_P(Policies, CorruptFilterTest, ::testing::ValuesIn(testing::EveryPolicy()));

// ---- Concurrency ------------------------------------------------------------------------------

struct ConcurrencyPolicy {
  const char* label;
  const char* uri;
  size_t file_bytes;  // the memtables' and the files' size
  friend void PrintTo(const ConcurrencyPolicy& p, std::ostream* os) { *os << p.uri; }
};

class PluginConcurrency : public ::testing::TestWithParam<ConcurrencyPolicy> {};

// Readers, MultiGets and bounded scans while a writer fills the database with ordered keys, and
// flushes and compactions replace the files under them. Under a memory_budget the files are
// smaller, and the budget binds from about a third of the keys: ordered files move down whole, and
// the listener rewrites them for the budget (counted in the LOG) under the readers too.
TEST_P(PluginConcurrency, ReadsDuringFlushesAndCompactionsFindEveryKey) {
  const TempDir dir("concurrent");
  Options options = MakeOptions(GetParam().uri);
  options.write_buffer_size = GetParam().file_bytes;
  options.target_file_size_base = GetParam().file_bytes;
  options.max_bytes_for_level_base = 4 * GetParam().file_bytes;
  options.level0_file_num_compaction_trigger = 2;
  options.max_background_jobs = 4;
  const auto log = std::make_shared<testing::RecordingLogger>();
  options.info_log = log;
  // Every file also gets a range filter, which bounded scans with SkipEmptyFiles read (the range
  // filters' share of this test: db_stress from RocksDB 9.10 on drops the collector).
  std::shared_ptr<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory> range_filters;
  ASSERT_TRUE(NewRangeFilterCollectorFactory(kDefaultRangeBitsPerKey, &range_filters).ok());
  options.table_properties_collector_factories.push_back(range_filters);
  Status s;
  auto db = OpenDb(options, dir.path(), &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  constexpr uint64_t kPreloaded = 20000, kWritten = 60000;
  for (uint64_t i = 0; i < kPreloaded; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(2 * i), "v").ok());
  }
  ASSERT_TRUE(db->Flush({}).ok());

  std::atomic<uint64_t> acknowledged{kPreloaded};  // keys [0, acknowledged) are written
  std::atomic<bool> done{false};
  std::atomic<uint64_t> lost{0}, phantom{0}, lookups{0}, scans{0}, files_skipped{0};
  auto reader = [&](int seed, bool multi) {
    std::mt19937_64 rng(seed);
    PinnableSlice value;
    while (!done) {
      const uint64_t limit = acknowledged.load();
      std::vector<std::string> keys;
      for (int j = 0; j < 16; ++j) keys.push_back(Key(2 * (rng() % limit)));
      keys.push_back(Key(2 * (rng() % limit) + 1));  // never written
      if (multi) {
        std::vector<Slice> slices(keys.begin(), keys.end());
        std::vector<PinnableSlice> values(keys.size());
        std::vector<Status> statuses(keys.size());
        db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), keys.size(), slices.data(),
                     values.data(), statuses.data());
        for (size_t j = 0; j + 1 < keys.size(); ++j) lost += !statuses[j].ok();
        phantom += !statuses.back().IsNotFound();
      } else {
        for (size_t j = 0; j + 1 < keys.size(); ++j) {
          lost += !db->Get(ReadOptions(), db->DefaultColumnFamily(), keys[j], &value).ok();
        }
        phantom +=
            !db->Get(ReadOptions(), db->DefaultColumnFamily(), keys.back(), &value).IsNotFound();
      }
      lookups += keys.size();
    }
  };
  // Bounded scans that skip files by their range filters: [Key(2i), Key(2i + 1)) holds exactly
  // Key(2i), and [Key(2i + 1), Key(2i + 2)) nothing.
  auto scanner = [&](int seed) {
    std::mt19937_64 rng(seed);
    while (!done) {
      const uint64_t i = rng() % acknowledged.load();
      const bool holds = rng() % 2 == 0;
      const std::string lower = Key(holds ? 2 * i : 2 * i + 1);
      const std::string upper = Key(holds ? 2 * i + 1 : 2 * i + 2);
      const Slice lower_bound(lower), upper_bound(upper);
      ReadOptions ro;
      ro.iterate_lower_bound = &lower_bound;
      ro.iterate_upper_bound = &upper_bound;
      if (!SkipEmptyFiles(&ro).ok()) {
        ++lost;
        continue;
      }
      testing::FileCounts counts;  // so the test knows files were skipped
      testing::CountFiles(&ro, &counts);
      std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db->NewIterator(ro));
      it->Seek(lower);
      if (holds) {
        lost += !(it->Valid() && it->key() == Slice(lower));
      } else {
        phantom += it->Valid() || !it->status().ok();
      }
      it.reset();  // the iterator may ask the table_filter until it goes
      files_skipped += counts.skipped;
      ++scans;
    }
  };
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) readers.emplace_back(reader, t, t % 2 == 1);
  readers.emplace_back(scanner, 4);
  for (uint64_t i = kPreloaded; i < kPreloaded + kWritten; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(2 * i), "v").ok());
    acknowledged = i + 1;
  }
  // scripts/soak.sh sets a time: the writer then goes on overwriting written keys, so flushes and
  // compactions keep replacing the files (and filters) under the readers while the database stays
  // the same size. CI runs none of this.
  const uint64_t soak_seconds = testing::SoakKnob("SSTFILTER_SOAK_CONCURRENCY_SECONDS", 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(soak_seconds);
  std::mt19937_64 writer_rng(99);
  uint64_t overwrites = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int j = 0; j < 1000; ++j, ++overwrites) {
      const uint64_t k = writer_rng() % (kPreloaded + kWritten);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(2 * k), std::to_string(overwrites)).ok());
    }
  }
  ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
  testing::WaitForCompactions(db.get());
  done = true;
  for (std::thread& t : readers) t.join();
  db.reset();
  EXPECT_EQ(lost.load(), 0u);
  EXPECT_EQ(phantom.load(), 0u);
  EXPECT_GT(lookups.load(), 10000u);
  EXPECT_GT(scans.load(), 100u);
  EXPECT_GT(files_skipped.load(), 0u);
  // A rewrite may lose a race for its file to a compaction (and say so); it never loses a key.
  size_t rewrites = 0;
  for (const std::string& line : log->LinesWith("memory_budget: rewriting")) {
    rewrites += line.find("): OK") != std::string::npos;
  }
  if (NeedsLeveledBudgetListener(GetParam().uri)) {
    EXPECT_GT(rewrites, 0u);
  }
  printf(
      "[ figures  ] %s: %llu concurrent lookups and %llu bounded scans (%llu files skipped by "
      "their range filters) during flushes, compactions and %zu rewrites for the budget (%llu s "
      "of %llu overwrites after %llu writes), %llu lost\n",
      GetParam().label, static_cast<unsigned long long>(lookups.load()),
      static_cast<unsigned long long>(scans.load()),
      static_cast<unsigned long long>(files_skipped.load()), rewrites,
      static_cast<unsigned long long>(soak_seconds), static_cast<unsigned long long>(overwrites),
      static_cast<unsigned long long>(kWritten), static_cast<unsigned long long>(lost.load()));
}

// The budget: 4 bits per key over the 80,000 keys, so it binds from 32,000 (at 10 bits per key).
INSTANTIATE_TEST_SUITE_P(
    Policies, PluginConcurrency,
    ::testing::Values(ConcurrencyPolicy{"cuckoo", "{id=sstfilter.Cuckoo;fp_rate=0.01}", 256 << 10},
                      ConcurrencyPolicy{"memory_budget",
                                        "{id=sstfilter.Leveled;memory_budget=40000}", 64 << 10}),
    [](const auto& info) { return std::string(info.param.label); });

// ---- SIGKILL during synced writes -------------------------------------------------------------

// What crash_writer printed before `deadline` and up to the kill, read as it comes: a writer whose
// pipe is full would block, and stop writing. False if it acknowledged nothing in 60 s.
bool ReadAcksUntilKill(int fd, pid_t child, std::chrono::steady_clock::time_point deadline,
                       std::string* acks) {
  char buf[4096];
  bool first = true;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (!first && now >= deadline) break;
    // The wait starts at the writer's first acknowledgment: timed from the fork instead, a writer
    // slowed by a loaded machine (ASan, ctest -j) could be killed while still recovering its log,
    // and the round would test nothing.
    const int timeout_ms =
        first ? 60'000
              : static_cast<int>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    pollfd ready = {fd, POLLIN, 0};
    if (poll(&ready, 1, timeout_ms) != 1) {
      if (first) return false;
      continue;
    }
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;  // the writer exited by itself; the caller finds out
    acks->append(buf, static_cast<size_t>(n));
    if (first) deadline += std::chrono::steady_clock::now() - now;
    first = false;
  }
  kill(child, SIGKILL);
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) acks->append(buf, static_cast<size_t>(n));
  return true;
}

// The lines of the database's LOG files (RocksDB's, the current and the old ones) that contain
// `text`.
size_t LogLinesWith(const std::string& db_path, const std::string& text) {
  size_t count = 0;
  for (const auto& e : fs::directory_iterator(db_path)) {
    if (e.path().filename().string().rfind("LOG", 0) != 0) continue;
    std::istringstream lines(ReadFile(e.path().string()));
    for (std::string line; std::getline(lines, line);) count += line.find(text) != line.npos;
  }
  return count;
}

struct CrashPolicy {
  const char* label;
  const char* uri;
  friend void PrintTo(const CrashPolicy& p, std::ostream* os) { *os << p.uri; }
};

class Crash : public ::testing::TestWithParam<CrashPolicy> {
 protected:
  // Lookups by Get per round at most, but this round's keys (a soak's 100 rounds write millions).
  static constexpr uint64_t kGetsPerRound = 200'000;
};

// A writer (crash_writer) of synced batches is killed at random moments, round after round on one
// database; each round reopens it under the same policy, reads back every acknowledged key, and
// checks the filters. Under a memory_budget the listener rewrites files for it on the compaction
// threads, so kills also land during rewrites (the writer's LOGs count them; the budget binds
// from about 800 keys).
TEST_P(Crash, EveryAcknowledgedKeySurvivesSigkill) {
  const TempDir dir("crash");
  std::mt19937_64 rng(17);
  uint64_t next = 0;  // the first key the next child writes
  uint64_t total_acked = 0;
  // scripts/soak.sh sets the rounds (100 for the reliability report); CI runs 5.
  const uint64_t rounds = testing::SoakKnob("SSTFILTER_SOAK_CRASH_ROUNDS", 5);
  const bool budget = NeedsLeveledBudgetListener(GetParam().uri);
  for (uint64_t round = 0; round < rounds; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // only exec: no RocksDB state of this process is used in the child
      dup2(pipe_fds[1], STDOUT_FILENO);
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      const std::string start = std::to_string(next);
      execl(CRASH_WRITER, CRASH_WRITER, dir.path().c_str(), start.c_str(), GetParam().uri,
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(pipe_fds[1]);
    std::string acks;
    const bool acknowledged = ReadAcksUntilKill(
        pipe_fds[0], child,
        std::chrono::steady_clock::now() + std::chrono::milliseconds(50 + rng() % 400), &acks);
    close(pipe_fds[0]);
    if (!acknowledged) kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself: " << status;
    ASSERT_TRUE(acknowledged) << "round " << round << ": the writer acknowledged nothing in 60 s";
    // Everything the child printed was acknowledged; a partial last line was not.
    std::vector<uint64_t> acked;
    std::istringstream lines(acks.substr(0, acks.rfind('\n') + 1));
    for (uint64_t v; lines >> v;) acked.push_back(v);
    ASSERT_FALSE(acked.empty()) << "round " << round << ": nothing written before the kill";

    Options options = MakeOptions(GetParam().uri);
    // No LOG of its own, so that the LOG files count the writer's rewrites alone.
    options.info_log = std::make_shared<testing::SilentLogger>();
    Status s;
    auto db = OpenDb(options, dir.path(), &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // Every acknowledged key by Get, through the filters (rewrites for the budget rewrite the
    // earlier rounds' files): all of them while they are at most kGetsPerRound, then a stride
    // that starts one further each round, and all of this round's; and every key by a scan.
    PinnableSlice value;
    const uint64_t stride = 1 + next / kGetsPerRound;
    auto expect_found = [&](uint64_t k) {
      ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(k), &value).ok())
          << "round " << round << ": acknowledged key " << k << " lost";
    };
    for (uint64_t k = round % stride; k < next; k += stride) expect_found(k);
    for (uint64_t k = next; k <= acked.back(); ++k) expect_found(k);
    {
      std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db->NewIterator(ReadOptions()));
      uint64_t k = 0;
      for (it->SeekToFirst(); it->Valid() && k <= acked.back(); it->Next(), ++k) {
        ASSERT_EQ(it->key().ToString(), Key(k)) << "round " << round << ": acknowledged key lost";
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      ASSERT_GT(k, acked.back()) << "round " << round << ": acknowledged key " << k << " lost";
    }
    // The filters agree: absent keys (sorting between written ones, so inside the files' key
    // ranges) are rejected by them, present ones never.
    ASSERT_TRUE(db->Flush({}).ok());
    for (uint64_t k = 0; k < acked.back(); k += 1 + acked.back() / 2000) {
      EXPECT_TRUE(
          db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(k) + "~", &value).IsNotFound());
    }
    // Under the budget in the first round only: as the tree grows, the bits per key the budget
    // buys fall below any filter's (a 100-round soak reached 0.01 under 1K), and then no filter
    // rejects a key.
    if (!budget || round == 0) {
      EXPECT_GT(testing::FilterCountsOf(*options.statistics).negatives, 0u) << "round " << round;
    }
    std::vector<SstFilterInfo> files;
    ASSERT_TRUE(DescribeFilters(db.get(), &files).ok());
    // A budget that buys too few bits per key for any filter on a level gives its files none (a
    // long soak's tree grows to hundreds of times the keys the budget binds at); every filter
    // there is, is sstfilter's.
    for (const SstFilterInfo& f : files) {
      EXPECT_TRUE(f.has_sstfilter_filter() || (budget && f.filter_bytes == 0)) << f.file;
    }
    total_acked += acked.size();
    next = acked.back() + 1;
  }
  const size_t rewrites = LogLinesWith(dir.path(), "memory_budget: rewriting");
  if (budget) {
    EXPECT_GT(rewrites, 0u);
  }
  printf(
      "[ figures  ] %s: %llu SIGKILLs during synced writes, %llu acknowledged keys, none lost; "
      "%zu files rewritten for the budget\n",
      GetParam().label, static_cast<unsigned long long>(rounds),
      static_cast<unsigned long long>(total_acked), rewrites);
}

INSTANTIATE_TEST_SUITE_P(Policies, Crash,
                         ::testing::Values(CrashPolicy{"bloom", "sstfilter.Bloom:10"},
                                           CrashPolicy{"memory_budget",
                                                       "{id=sstfilter.Leveled;memory_budget=1K}"}),
                         [](const auto& info) { return std::string(info.param.label); });

// ---- Hostile keys and configurations ----------------------------------------------------------

TEST(HostileKeys, EmptyHugeBinaryAndDuplicateKeys) {
  const TempDir dir("hostile_keys");
  Status s;
  auto db = OpenDb(MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.001}"), dir.path(), &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> keys = {"", std::string(1 << 20, 'k'), std::string(1 << 20, '\0'),
                                   std::string("\0\0\0", 3), std::string("\xff\xfe", 2)};
  for (int i = 0; i < 1000; ++i) {
    std::string binary(8 + i % 50, '\0');
    for (size_t j = 0; j < binary.size(); ++j)
      binary[j] = static_cast<char>((i * 131 + j * 7) & 0xff);
    keys.push_back(binary);
  }
  for (const std::string& k : keys) ASSERT_TRUE(db->Put(WriteOptions(), k, "v").ok());
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(db->Put(WriteOptions(), "same", "v").ok());
  ASSERT_TRUE(db->Flush({}).ok());
  ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
  {
    PinnableSlice value;  // pins blocks of the database: must go before it
    for (const std::string& k : keys) {
      ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), k, &value).ok()) << k.size();
    }
    ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), "same", &value).ok());
  }
}

TEST(HostileKeys, MillionsOfDuplicatesThroughTheBuilder) {
  for (const char* uri : testing::EveryPolicy()) {
    BlockBasedTableOptions table;
    table.filter_policy = PolicyFrom(uri);
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder = testing::NewBuilder(table);
    for (int i = 0; i < 2'000'000; ++i) builder->AddKey("the same key");
    EXPECT_EQ(builder->EstimateEntriesAdded(), 1u) << uri;
    std::unique_ptr<const char[]> buf;
    Status status;
    Slice filter = builder->Finish(&buf, &status);
    ASSERT_TRUE(status.ok());
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
        table.filter_policy->GetFilterBitsReader(filter));
    EXPECT_TRUE(reader->MayMatch("the same key"));
    // Alternating keys are not consecutive duplicates: the cuckoo build stores each once.
    for (int i = 0; i < 2'000'000; ++i) builder->AddKey(i % 2 ? "a" : "b");
    filter = builder->Finish(&buf, &status);
    reader.reset(table.filter_policy->GetFilterBitsReader(filter));
    EXPECT_TRUE(reader->MayMatch("a") && reader->MayMatch("b")) << uri;
  }
}

TEST(HostileConfig, TinyAndHugeBudgetsWorkOrFailClearly) {
  for (const char* uri :
       {"sstfilter.Bloom:0.01", "sstfilter.Bloom:100", "sstfilter.Cuckoo:4.3",
        "sstfilter.Cuckoo:100", "{id=sstfilter.Bloom;fp_rate=0.999999}",
        "{id=sstfilter.Bloom;fp_rate=1e-9}", "{id=sstfilter.Cuckoo;fp_rate=0.9}",
        "{id=sstfilter.Cuckoo;fp_rate=1e-8}", "sstfilter.Fuse:100",
        "{id=sstfilter.Fuse;fp_rate=0.9}", "{id=sstfilter.Fuse;fp_rate=2.4e-10}",
        "sstfilter.BumpedRibbon:1.2", "sstfilter.BumpedRibbon:100",
        "{id=sstfilter.BumpedRibbon;fp_rate=0.9}", "{id=sstfilter.BumpedRibbon;fp_rate=2.4e-10}"}) {
    BlockBasedTableOptions table;
    table.filter_policy = PolicyFrom(uri);
    ASSERT_NE(table.filter_policy, nullptr) << uri;
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsBuilder> builder = testing::NewBuilder(table);
    ASSERT_NE(builder, nullptr) << uri;
    EXPECT_EQ(builder->ApproximateNumEntries(0), 0u) << uri;
    EXPECT_GT(builder->ApproximateNumEntries(SIZE_MAX), 0u) << uri;
    for (int i = 0; i < 1000; ++i) builder->AddKey(Key(i));
    std::unique_ptr<const char[]> buf;
    Status status;
    const Slice filter = builder->Finish(&buf, &status);
    ASSERT_TRUE(status.ok()) << uri;
    std::unique_ptr<ROCKSDB_NAMESPACE::FilterBitsReader> reader(
        table.filter_policy->GetFilterBitsReader(filter));
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(reader->MayMatch(Key(i))) << uri;
  }
  // Beyond what 100 bits per key reach, or not numbers in range: clear errors.
  for (const char* uri :
       {"sstfilter.Bloom:1e300", "sstfilter.Bloom:-0",
        "{id=sstfilter.Bloom;"
        "fp_rate=1e-400}",
        "{id=sstfilter.Bloom;fp_rate=1e-20}", "{id=sstfilter.Cuckoo;fp_rate=1e-9}",
        "{id=sstfilter.Cuckoo;bits_per_key=1e-300}", "{id=sstfilter.Cuckoo;fp_rate=}",
        "{id=sstfilter.Bloom;fp_rate=0x10}", "sstfilter.BumpedRibbon:1",
        "{id=sstfilter.BumpedRibbon;fp_rate=1e-10}", "{id=sstfilter.Fuse;fp_rate=1e-10}"}) {
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> p;
    const Status s = NewFilterPolicy(uri, &p);
    EXPECT_FALSE(s.ok()) << uri;
  }
}

// ---- The silent loss of the filter policy -----------------------------------------------------

TEST(PolicyLoss, DescribeFiltersShowsFilesWithoutAnSstfilterFilter) {
  const TempDir dir("policy_loss");
  {
    Status s;
    auto db = OpenDb(MakeOptions("sstfilter.Bloom:10"), dir.path(), &s);
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Flush({}).ok());
  }
  {
    // What a process without the plugin does: the policy is gone, new files get no filter.
    Status s;
    auto db = OpenDb(MakeOptions(""), dir.path(), &s);
    ASSERT_TRUE(s.ok());
    for (int i = 1000; i < 2000; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Flush({}).ok());
  }
  std::vector<SstFilterInfo> files;
  const Status s = DescribeFilters(dir.path(), &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 2u);
  int with = 0;
  for (const SstFilterInfo& f : files) with += f.has_sstfilter_filter();
  EXPECT_EQ(with, 1);
  const std::string report = FormatFilterReport(files);
  EXPECT_NE(report.find("sstfilter.Bloom"), std::string::npos) << report;
  EXPECT_NE(report.find("(none)"), std::string::npos) << report;
  EXPECT_NE(report.find("2 SST files, 1 without an sstfilter filter"), std::string::npos) << report;
  const SstFilterInfo& filtered = files[0].has_sstfilter_filter() ? files[0] : files[1];
  const std::string largest =
      "largest filter: " + std::to_string((filtered.filter_bytes + 1023) >> 10) + " KiB (" +
      filtered.file + ", level " + std::to_string(filtered.level) + ")";
  EXPECT_NE(report.find(largest), std::string::npos) << report;
  // A database whose OPTIONS file names a policy nobody registered fails clearly.
  EXPECT_FALSE(DescribeFilters(dir.path() + "/does-not-exist", &files).ok());
}

// Files of every column family: each is described from its own column family's table properties
// (listed without a filter, they would read as a lost policy), and named by it in the report.
TEST(PolicyLoss, DescribeFiltersShowsEveryColumnFamilysFiles) {
  const TempDir dir("policy_loss_families");
  {
    Status s;
    const Options options = MakeOptions("sstfilter.Bloom:10");
    auto db = OpenDb(options, dir.path(), &s);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ROCKSDB_NAMESPACE::ColumnFamilyHandle* events = nullptr;
    ASSERT_TRUE(db->CreateColumnFamily(MakeOptions("sstfilter.Ribbon:10"), "events", &events).ok());
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
      ASSERT_TRUE(db->Put(WriteOptions(), events, Key(i), "v").ok());
    }
    ASSERT_TRUE(db->Flush({}).ok());
    ASSERT_TRUE(db->Flush({}, events).ok());
    std::vector<SstFilterInfo> files;
    ASSERT_TRUE(DescribeFilters(db.get(), &files).ok());  // the default column family's
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].column_family, "default");
    ASSERT_TRUE(DescribeFilters(db.get(), {events, db->DefaultColumnFamily()}, &files).ok());
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0].column_family, "default");  // the default's first, whatever the order given
    EXPECT_EQ(files[1].column_family, "events");
    EXPECT_EQ(files[1].policy_name, PolicyFrom("sstfilter.Ribbon:10")->Name());
    EXPECT_TRUE(files[1].has_sstfilter_filter());
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(events).ok());
  }
  std::vector<SstFilterInfo> files;
  const Status s = DescribeFilters(dir.path(), &files);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(files.size(), 2u);
  for (const SstFilterInfo& f : files) {
    EXPECT_TRUE(f.has_sstfilter_filter()) << f.column_family << "/" << f.file;
    EXPECT_FALSE(f.filter_format.empty()) << f.column_family << "/" << f.file;
  }
  EXPECT_EQ(files[1].column_family, "events");
  const std::string report = FormatFilterReport(files);
  EXPECT_NE(report.find("events/" + files[1].file), std::string::npos) << report;
  EXPECT_NE(report.find("\ncolumn family events, level 0: sstfilter:"), std::string::npos)
      << report;
  EXPECT_NE(report.find("\nlevel 0: sstfilter:"), std::string::npos) << report;
  EXPECT_NE(report.find("2 SST files, 0 without an sstfilter filter"), std::string::npos) << report;
}

}  // namespace
}  // namespace sstfilter
