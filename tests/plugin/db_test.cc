// SPDX-License-Identifier: Apache-2.0
// sstfilter policies in real RocksDB databases on disk: load, flush, compact across levels,
// reopen from the OPTIONS file, and check through RocksDB's own statistics and table properties
// that the filters RocksDB built and consulted are sstfilter's, lose no key, and reject absent keys
// at the rate the math predicts; prefixes, partitions, ingestion, optimize_filters_for_hits and
// detect_filter_construct_corruption.
#include "tests/plugin/db_test_fixture.h"

namespace sstfilter::db_tests {
namespace {

TEST_P(DbPolicyTest, LoadCompactReopenAndFilter) {
  constexpr uint64_t kKeys = 100'000;
  constexpr uint64_t kAbsent = 100'000;
  // Sizes as the builder computes them, not rounded to the allocator's classes (RocksDB 9.x's
  // default optimize_filters_for_memory: SizeClassRoundingTest).
  BlockBasedTableOptions unrounded;
  unrounded.optimize_filters_for_memory = false;
  Open(MakeOptions(GetParam(), unrounded));
  for (uint64_t part = 0; part < 4; ++part) Load(part * kKeys / 4, kKeys / 4);
  CompactAll();
  // Updates of every 10th key: a newer file over the whole key range, so that absent-key lookups
  // consult filters on more than one level. And a file of new keys beyond the range.
  {
    WriteOptions w;
    for (uint64_t i = 0; i < kKeys; i += 10) {
      ASSERT_TRUE(db_->Put(w, PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(db_->Flush({}).ok());
  }
  Load(kKeys, 5000);
  EXPECT_GE(PopulatedLevels(), 2);

  const Options reopened = ReopenFromOptionsFile();
  const auto* table = TableOptionsOf(reopened);
  ASSERT_NE(table->filter_policy, nullptr) << "the OPTIONS file lost the filter policy";
  const auto expected_policy = PolicyFrom(GetParam());
  EXPECT_STREQ(table->filter_policy->Name(), expected_policy->Name());
  const FilterSpec spec = SpecOf(*expected_policy);
  EXPECT_EQ(SpecOf(*table->filter_policy).ToString(), spec.ToString());

  ExpectAllPresent(0, kKeys + 5000);

  // Every file's filter is sstfilter's, of exactly the size its builder computes.
  std::map<std::string, uint64_t> keys_of_file;  // file name ("000012.sst") -> filter entries
  for (const auto& [path, props] : Tables()) {
    EXPECT_EQ(props->filter_policy_name, expected_policy->Name()) << path;
    const uint64_t n = props->num_filter_entries;
    ASSERT_GT(n, 0u) << path;
    const uint64_t nominal = FilterBytes(spec, n).value();
    if (spec.kind() == Cuckoo::kId) {
      EXPECT_GE(props->filter_size, nominal) << path;  // a retry may add buckets
      EXPECT_LE(props->filter_size, nominal * 1.1) << path;
    } else {
      EXPECT_EQ(props->filter_size, nominal) << path;
    }
    keys_of_file[fs::path(path).filename().string()] = n;
  }

  // Absent keys: every "may match" is a false positive. A lookup consults the filter of each file
  // whose key range holds the key, so the false positives to expect are the sum over files of
  // (absent keys in the file's range) x (the file's estimated rate). Bound: 5 binomial sigmas.
  double expected_positives = 0;
  uint64_t expected_checks = 0;
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  for (const auto& f : files) {
    const uint64_t n = keys_of_file.at(fs::path(f.name).filename().string());
    // Absent key i is Key(2i + 1): count the i with smallest <= Key(2i + 1) <= largest.
    const uint64_t lo = std::stoull(f.smallestkey.substr(3)),
                   hi = std::stoull(f.largestkey.substr(3));
    const uint64_t first = lo / 2, last = std::min<uint64_t>(kAbsent, (hi + 1) / 2);
    const uint64_t in_range = last > first ? last - first : 0;
    expected_checks += in_range;
    expected_positives += in_range * EstimatedFpRate(spec, n).value();
  }
  const FilterCounts counts = LookUpAbsent(kAbsent);
  EXPECT_EQ(counts.true_positives, 0u);
  EXPECT_EQ(counts.checks(), expected_checks);
  EXPECT_GT(counts.checks(), kAbsent * 3 / 2);  // most lookups consult two levels or more
  const double expected_rate = expected_positives / expected_checks;
  const double measured = static_cast<double>(counts.positives) / counts.checks();
  EXPECT_NEAR(static_cast<double>(counts.positives), expected_positives,
              testing::BinomialTolerance(counts.checks(), expected_rate))
      << GetParam() << ": measured " << measured << " over " << counts.checks()
      << " filter checks, estimate " << expected_rate;
  printf(
      "[ figures  ] %s: %llu filter checks, false-positive rate %.4f%% (estimate %.4f%%), "
      "%.2f filter bits/key\n",
      GetParam(), static_cast<unsigned long long>(counts.checks()), 100 * measured,
      100 * expected_rate, [&] {
        uint64_t bytes = 0, n = 0;
        for (const auto& [file, props] : Tables()) {
          bytes += props->filter_size;
          n += props->num_filter_entries;
        }
        return 8.0 * bytes / n;
      }());
}

TEST_P(DbPolicyTest, OptionsFileNamesThePolicyWithItsOptions) {
  Open(MakeOptions(GetParam()));
  Load(0, 1000);
  db_.reset();
  const std::string newest = testing::NewestOptionsFile(dir_);
  ASSERT_FALSE(newest.empty());
  const std::string text = testing::ReadFile(newest);
  const std::string expected_id =
      std::string("filter_policy={id=") + PolicyFrom(GetParam())->Name() + ";";
  EXPECT_NE(text.find(expected_id), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Policies, DbPolicyTest,
                         // One filter spec for every file: sstfilter.Leveled's filters per level
                         // have tests of their own.
                         ::testing::ValuesIn(testing::EveryPolicyExcept(
                             kLeveledPolicyName,
                             {"sstfilter.Cuckoo:12", "sstfilter.Fuse:10",
                              "{id=sstfilter.Fuse;fp_rate=0.001}", "sstfilter.BumpedRibbon:10",
                              "{id=sstfilter.BumpedRibbon;fp_rate=0.001}"})));

TEST_F(DbTest, ChangingThePolicyKeepsOldFiltersWorking) {
  // Every sstfilter policy of the default family in turn, each writing one file of its own: the
  // files written under the earlier ones keep filtering, whichever policy is configured now. All
  // rates are at most 1%.
  std::vector<std::pair<std::string, std::string>> policies;
  for (const char* uri : testing::EveryPolicyOfTheDefaultFamily()) {
    policies.emplace_back(uri, PolicyFrom(uri)->Name());
  }
  constexpr uint64_t kKeysPerFile = 10'000;
  std::set<std::string> written_by;
  for (size_t i = 0; i < policies.size(); ++i) {
    SCOPED_TRACE(policies[i].first);
    Open(MakeOptions(policies[i].first));
    const uint64_t old_keys = i * kKeysPerFile;
    if (old_keys > 0) {
      const FilterCounts old_files = LookUpAbsent(old_keys);
      EXPECT_GT(old_files.negatives, old_keys * 0.95);
    }
    Load(old_keys, kKeysPerFile);  // a new file, with this policy's filter
    written_by.insert(policies[i].second);
    std::set<std::string> names;
    for (const auto& [file, props] : Tables()) names.insert(props->filter_policy_name);
    EXPECT_EQ(names, written_by);
    ExpectAllPresent(0, old_keys + kKeysPerFile);
  }
  // Each absent key lies in at most one file's key range (at most two per file fall between or
  // after the files): one check each, by the filter of whichever policy wrote that file.
  const uint64_t all_keys = policies.size() * kKeysPerFile;
  const FilterCounts every_file = LookUpAbsent(all_keys);
  EXPECT_LE(every_file.checks(), all_keys);
  EXPECT_GE(every_file.checks(), all_keys - 2 * policies.size());
  EXPECT_GT(every_file.negatives, all_keys * 0.98);
  CompactAll();
  ExpectAllPresent(0, all_keys);
}

TEST_F(DbTest, OpeningWithoutAFilterPolicyReadsEveryKey) {
  Open(MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}"));
  Load(0, 30'000);
  CompactAll();
  Open(MakeOptions(""));  // no filter policy at all
  ExpectAllPresent(0, 30'000);
  const FilterCounts counts = LookUpAbsent(10'000);
  EXPECT_EQ(counts.checks(), 0u);
  // And RocksDB's own policies find sstfilter's filters under their family's name, and read them
  // as "may match" for every key (docs/format.md, the trailer's marker): no harm, no help.
  Open(MakeOptions("bloomfilter:10"));
  ExpectAllPresent(0, 30'000);
  const FilterCounts rolled_back = LookUpAbsent(10'000);
  EXPECT_GT(rolled_back.checks(), 9'000u);
  EXPECT_EQ(rolled_back.negatives, 0u);
}

TEST_F(DbTest, PrefixFiltering) {
  // Prefix: the first 10 bytes of Key(i) ("key" and 7 digits), so a prefix holds 1000 numbers.
  // Even groups of 1000 hold keys, odd groups none, so absent prefixes lie inside the file's range.
  BlockBasedTableOptions table;
  table.whole_key_filtering = false;
  Options options = MakeOptions("sstfilter.Bloom:10", table);
  options.prefix_extractor.reset(ROCKSDB_NAMESPACE::NewFixedPrefixTransform(10));
  Open(options);
  auto in_group = [](uint64_t group, uint64_t j) { return Key(group * 1000 + j); };
  WriteOptions w;
  for (uint64_t group = 0; group < 100; group += 2) {
    for (uint64_t j = 0; j < 1000; ++j) ASSERT_TRUE(db_->Put(w, in_group(group, j), "v").ok());
  }
  ASSERT_TRUE(db_->Flush({}).ok());
  PinnableSlice value;
  for (uint64_t group = 0; group < 100; group += 2) {
    for (uint64_t j = 0; j < 1000; j += 7) {
      ASSERT_TRUE(
          db_->Get(ReadOptions(), db_->DefaultColumnFamily(), in_group(group, j), &value).ok());
    }
  }
  const FilterCounts before = Counts();
  const int lookups = LookUpAbsentKeys(/*first_group=*/1, /*first_j=*/0, /*j_step=*/25, in_group);
  const FilterCounts during = Counts() - before;
  const uint64_t useful = during.prefix_negatives + during.negatives;
  // 50 absent prefixes among 50 present ones at 10 bits per prefix: at most a few get through.
  EXPECT_GT(useful, lookups * 0.9) << useful << " of " << lookups;
  // Prefix iteration finds every key of a prefix.
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(ro));
  int found = 0;
  for (it->Seek(in_group(12, 0)); it->Valid(); it->Next()) ++found;
  EXPECT_EQ(found, 1000);
}

// A prefix extractor with whole-key filtering: each file's filter holds its keys and their
// prefixes (RocksDB 9.6 and later add both in one AddKeyAndAlt call, earlier versions call AddKey
// twice), and answers both kinds of query.
TEST_F(DbTest, PrefixAndWholeKeyFiltering) {
  for (const char* uri : testing::EveryPolicy()) {
    SCOPED_TRACE(uri);
    // Prefix: "key" and 7 digits, so a prefix spans 1000 numbers. Even groups hold their even
    // numbers; odd groups hold nothing.
    BlockBasedTableOptions table;
    table.whole_key_filtering = true;
    Options options = MakeOptions(uri, table);
    options.prefix_extractor.reset(ROCKSDB_NAMESPACE::NewFixedPrefixTransform(10));
    Open(options);
    auto number = [](uint64_t group, uint64_t j) { return Key(group * 1000 + j); };
    for (uint64_t group = 0; group < 100; group += 2) {
      for (uint64_t j = 0; j < 1000; j += 2) {
        ASSERT_TRUE(db_->Put(WriteOptions(), number(group, j), "v").ok());
      }
    }
    ASSERT_TRUE(db_->Flush({}).ok());
    const auto tables = Tables();
    ASSERT_EQ(tables.size(), 1u);
    EXPECT_EQ(tables.begin()->second->num_filter_entries, 50u * 500 + 50);  // keys + prefixes

    PinnableSlice value;
    for (uint64_t group = 0; group < 100; group += 2) {
      for (uint64_t j = 0; j < 1000; j += 2) {
        ASSERT_TRUE(
            db_->Get(ReadOptions(), db_->DefaultColumnFamily(), number(group, j), &value).ok());
      }
    }
    // Absent keys under present prefixes: only the whole-key entries can reject them.
    FilterCounts before = Counts();
    const int lookups = LookUpAbsentKeys(/*first_group=*/0, /*first_j=*/1, /*j_step=*/20, number);
    const FilterCounts keys = Counts() - before;
    EXPECT_GT(keys.negatives, lookups * 0.9) << keys.negatives << " of " << lookups;
    // Seeks into absent prefixes: the prefix entries reject them.
    before = Counts();
    ReadOptions same_prefix;
    same_prefix.prefix_same_as_start = true;
    int seeks = 0;
    for (uint64_t group = 1; group < 100; group += 2, ++seeks) {
      std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(same_prefix));
      it->Seek(number(group, 0));
      EXPECT_FALSE(it->Valid());
      EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    }
    const FilterCounts prefixes = Counts() - before;
    EXPECT_GT(prefixes.seek_negatives, seeks * 0.9) << prefixes.seek_negatives << " of " << seeks;
    db_.reset();
    fs::remove_all(dir_);
  }
}

TEST_F(DbTest, PartitionedFilters) {
  for (const char* uri : testing::EveryPolicy()) {
    SCOPED_TRACE(uri);
    BlockBasedTableOptions table;
    table.partition_filters = true;
    table.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 1024;
    Options options = MakeOptions(uri, table);
    options.write_buffer_size = 16 << 20;  // one file of 50k keys, many partitions
    Open(options);
    Load(0, 50'000);
    const FilterSpec spec = SpecOf(*TableOptionsOf(options)->filter_policy);
    for (const auto& [file, props] : Tables()) {
      // Many partitions, each a whole filter with its own trailer, plus their index: larger
      // than one filter of all the keys.
      EXPECT_GT(props->filter_size, FilterBytes(spec, props->num_filter_entries).value() + 1024)
          << file;
    }
    ExpectAllPresent(0, 50'000);
    const FilterCounts counts = LookUpAbsent(50'000);
    EXPECT_GT(counts.negatives, 50'000u * 0.97);
    db_.reset();
    fs::remove_all(dir_);
  }
}

TEST_F(DbTest, IngestedFilesCarryTheFilter) {
  const Options options = MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.001}");
  fs::create_directories(dir_);
  const std::string sst = dir_ + "/../sstfilter_ingest_" + std::to_string(::getpid()) + ".sst";
  {
    ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(), options);
    ASSERT_TRUE(writer.Open(sst).ok());
    for (uint64_t i = 0; i < 20'000; ++i) {
      ASSERT_TRUE(writer.Put(PresentKey(i), ValueOf(PresentKey(i))).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  Open(options);
  ROCKSDB_NAMESPACE::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  ASSERT_TRUE(db_->IngestExternalFile({sst}, ingest).ok());
  for (const auto& [file, props] : Tables()) {
    EXPECT_EQ(props->filter_policy_name, "sstfilter.Cuckoo");
  }
  ExpectAllPresent(0, 20'000);
  EXPECT_GT(LookUpAbsent(20'000).negatives, 19'900u);
  fs::remove(sst);
}

TEST_F(DbTest, OptimizeFiltersForHits) {
  Options options = MakeOptions("sstfilter.Bloom:10");
  options.optimize_filters_for_hits = true;
  options.num_levels = 3;  // so that compaction reaches the last level, which gets no filters
  Open(options);
  for (uint64_t part = 0; part < 4; ++part) Load(part * 25'000, 25'000);
  CompactAll();
  Load(100'000, 5'000);
  // RocksDB skips building or consulting filters where it deems a level bottommost; whichever
  // files have them, every key is found and absent keys are still answered "not found".
  ExpectAllPresent(0, 105'000);
  const FilterCounts counts = LookUpAbsent(20'000);
  EXPECT_EQ(counts.true_positives, 0u);
}

// Good filters pass the check that detect_filter_construct_corruption asks for: flushes and
// compactions succeed and every key is found. That the check runs at all is the next test's.
TEST_F(DbTest, DetectFilterConstructCorruptionPassesGoodFilters) {
  BlockBasedTableOptions table;
  table.detect_filter_construct_corruption = true;
  Open(MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}", table));
  Load(0, 30'000);  // MaybePostVerify checks every filter; a failure would fail the flush
  CompactAll();
  ExpectAllPresent(0, 30'000);
}

// sstfilter's builder, except that the filter RocksDB receives from Finish has its body zeroed:
// every key the builder was given is missing from it, as if memory had been corrupted between
// the build and the write. MaybePostVerify goes to sstfilter's builder unchanged.
class ZeroingBuilder : public FilterBitsBuilder {
 public:
  explicit ZeroingBuilder(std::unique_ptr<FilterBitsBuilder> inner) : inner_(std::move(inner)) {}
  void AddKey(const Slice& key) override { inner_->AddKey(key); }
#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override { inner_->AddKeyAndAlt(key, alt); }
#endif
  size_t EstimateEntriesAdded() override { return inner_->EstimateEntriesAdded(); }
  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    Status ignored;
    return Finish(buf, &ignored);
  }
  Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) override {
    const Slice built = inner_->Finish(buf, status);
    if (built.size() <= kTrailerBytes) return built;
    char* zeroed = new char[built.size()];
    std::memcpy(zeroed, built.data(), built.size());
    std::memset(zeroed, 0, built.size() - kTrailerBytes);
    buf->reset(zeroed);
    return Slice(zeroed, built.size());
  }
  Status MaybePostVerify(const Slice& filter) override { return inner_->MaybePostVerify(filter); }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->ApproximateNumEntries(bytes);
  }
#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
  size_t CalculateSpace(size_t num_entries) override { return inner_->CalculateSpace(num_entries); }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->EstimatedFpRate(num_entries, bytes);
  }
#endif

 private:
  std::unique_ptr<FilterBitsBuilder> inner_;
};

class ZeroingPolicy : public ROCKSDB_NAMESPACE::FilterPolicy {
 public:
  explicit ZeroingPolicy(std::shared_ptr<const FilterPolicy> inner) : inner_(std::move(inner)) {}
  const char* Name() const override { return "sstfilter.test.Zeroing"; }
  const char* CompatibilityName() const override { return inner_->CompatibilityName(); }
  FilterBitsBuilder* GetBuilderWithContext(const FilterBuildingContext& context) const override {
    FilterBitsBuilder* inner = inner_->GetBuilderWithContext(context);
    return inner == nullptr ? nullptr
                            : new ZeroingBuilder(std::unique_ptr<FilterBitsBuilder>(inner));
  }
  ROCKSDB_NAMESPACE::FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    return inner_->GetFilterBitsReader(contents);
  }

 private:
  std::shared_ptr<const FilterPolicy> inner_;
};

// With detect_filter_construct_corruption, RocksDB hands each filter back to sstfilter's builder
// (MaybePostVerify), which checks every key against it: a filter that lost its keys fails the
// flush with Corruption. Without the option the same filters are not checked and the flush
// succeeds, so the failure is the check's.
TEST_F(DbTest, DetectFilterConstructCorruptionCatchesAFilterThatLostItsKeys) {
  for (const bool detect : {true, false}) {
    BlockBasedTableOptions table;
    table.detect_filter_construct_corruption = detect;
    Options options = MakeOptions("{id=sstfilter.Cuckoo;fp_rate=0.01}", table);
    table.filter_policy =
        std::make_shared<ZeroingPolicy>(PolicyFrom("{id=sstfilter.Cuckoo;fp_rate=0.01}"));
    options.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table));
    ASSERT_TRUE(ROCKSDB_NAMESPACE::DestroyDB(dir_, options).ok());
    Open(options);
    for (uint64_t i = 0; i < 1000; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), PresentKey(i), "v").ok());
    }
    const Status s = db_->Flush({});
    if (detect) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    } else {
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    db_.reset();
  }
}

}  // namespace
}  // namespace sstfilter::db_tests
