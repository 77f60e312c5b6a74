// SPDX-License-Identifier: Apache-2.0
#include "plugin/policies.h"

#include <rocksdb/env.h>
#include <rocksdb/utilities/options_type.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <tuple>
#include <unordered_map>

#include "core/sizing.h"
#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::OptionType;
using ROCKSDB_NAMESPACE::OptionTypeFlags;
using ROCKSDB_NAMESPACE::OptionTypeInfo;
using ROCKSDB_NAMESPACE::OptionVerificationType;
using ROCKSDB_NAMESPACE::Status;

Status ParseNumber(const std::string& who, const std::string& name, const std::string& value,
                   double* out) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !std::isfinite(v)) {
    return Status::InvalidArgument(who + ": " + name + " must be a finite number, got '" + value +
                                   "'");
  }
  *out = v;
  return Status::OK();
}

namespace {

// A double option that may be absent (NaN). Parsing is strict (ParseNumber); absent values
// serialise to "", which RocksDB then leaves out of OPTIONS files.
Status ParseOptionalDouble(const ConfigOptions&, const std::string& name, const std::string& value,
                           void* addr) {
  double* out = static_cast<double*>(addr);
  if (value.empty()) {
    *out = std::nan("");
    return Status::OK();
  }
  return ParseNumber("sstfilter", name, value, out);
}

Status SerializeOptionalDouble(const ConfigOptions&, const std::string&, const void* addr,
                               std::string* value) {
  const double v = *static_cast<const double*>(addr);
  if (std::isnan(v)) {
    value->clear();
  } else {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.17g", v);  // round-trips exactly
    *value = buf;
  }
  return Status::OK();
}

bool OptionalDoublesEqual(const ConfigOptions&, const std::string& name, const void* a,
                          const void* b, std::string* mismatch) {
  const double x = *static_cast<const double*>(a);
  const double y = *static_cast<const double*>(b);
  const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
}

OptionTypeInfo OptionalDouble(int offset) {
  return OptionTypeInfo(offset, OptionType::kDouble, OptionVerificationType::kNormal,
                        OptionTypeFlags::kNone, ParseOptionalDouble, SerializeOptionalDouble,
                        OptionalDoublesEqual);
}

const std::unordered_map<std::string, OptionTypeInfo>& BudgetTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"bits_per_key", OptionalDouble(offsetof(BudgetOptions, bits_per_key))},
      {"fp_rate", OptionalDouble(offsetof(BudgetOptions, fp_rate))},
  };
  return info;
}

Status ParseLayout(const ConfigOptions&, const std::string& name, const std::string& value,
                   void* addr) {
  auto* out = static_cast<BloomPolicy::Layout*>(addr);
  if (value == "blocked") {
    *out = BloomPolicy::Layout::kBlocked;
  } else if (value == "standard") {
    *out = BloomPolicy::Layout::kStandard;
  } else {
    return Status::InvalidArgument("sstfilter.Bloom: " + name +
                                   " must be blocked or standard, got '" + value + "'");
  }
  return Status::OK();
}

Status SerializeLayout(const ConfigOptions&, const std::string&, const void* addr,
                       std::string* value) {
  *value = *static_cast<const BloomPolicy::Layout*>(addr) == BloomPolicy::Layout::kBlocked
               ? "blocked"
               : "standard";
  return Status::OK();
}

bool LayoutsEqual(const ConfigOptions&, const std::string& name, const void* a, const void* b,
                  std::string* mismatch) {
  const bool same =
      *static_cast<const BloomPolicy::Layout*>(a) == *static_cast<const BloomPolicy::Layout*>(b);
  if (!same && mismatch != nullptr) *mismatch = name;
  return same;
}

const std::unordered_map<std::string, OptionTypeInfo>& BloomTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"layout",
       OptionTypeInfo(0, OptionType::kUnknown, OptionVerificationType::kNormal,
                      OptionTypeFlags::kNone, ParseLayout, SerializeLayout, LayoutsEqual)},
  };
  return info;
}

const std::unordered_map<std::string, OptionTypeInfo>& LeveledTypeInfo() {
  static const std::unordered_map<std::string, OptionTypeInfo> info = {
      {"size_ratio", OptionalDouble(offsetof(LeveledPolicy::Shape, size_ratio))},
      {"num_levels", {offsetof(LeveledPolicy::Shape, num_levels), OptionType::kInt}},
  };
  return info;
}

void LogNoFilter(ROCKSDB_NAMESPACE::Logger* log, const char* policy, const std::string& why) {
  LogError(log, std::string(policy) + ": " + why + "; this SST file gets no filter");
}

}  // namespace

SstFilterPolicy::SstFilterPolicy() { RegisterOptions("budget", &budget_, &BudgetTypeInfo()); }

const char* SstFilterPolicy::CompatibilityName() const { return kCompatibilityName; }

Status SstFilterPolicy::SetBitsPerKey(const std::string& text) {
  return ParseNumber(Name(), "bits_per_key", text, &budget_.bits_per_key);
}

Result<bool> SstFilterPolicy::CheckBudget(const BudgetOptions& budget) const {
  const bool has_bits = !std::isnan(budget.bits_per_key);
  const bool has_rate = !std::isnan(budget.fp_rate);
  if (has_bits && has_rate) {
    return Err(
        "give exactly one of bits_per_key (a space budget) or fp_rate (a target rate), "
        "not both");
  }
  if (!has_bits && !has_rate) {
    return Err("needs bits_per_key (a space budget, in [" + FormatNumber(kMinBitsPerKey) + ", " +
               FormatNumber(kMaxBitsPerKey) +
               "]) or fp_rate (a target rate, in (0, 1)), for example " + std::string(Name()) +
               ":10 or {id=" + Name() + ";fp_rate=0.01}");
  }
  return true;
}

Status SstFilterPolicy::PrepareOptions(const ConfigOptions& options) {
  try {
    const Result<FilterSpec> spec = Spec();
    if (!spec.ok()) return Status::InvalidArgument(std::string(Name()) + ": " + spec.error());
    prepared_spec_ = spec.value();
    prepared_ = true;
  } catch (const std::exception&) {
    return Status::MemoryLimit("sstfilter: out of memory preparing the filter policy");
  }
  return FilterPolicy::PrepareOptions(options);
}

template <typename Kind>
Result<FilterSpec> SstFilterPolicy::KindSpec() const {
  const Result<bool> budget = CheckBudget(budget_);
  if (!budget.ok()) return Err(budget.error());
  return std::isnan(budget_.fp_rate) ? SpecForBitsPerKey<Kind>(budget_.bits_per_key)
                                     : SpecForFpRate<Kind>(budget_.fp_rate);
}

ROCKSDB_NAMESPACE::FilterBitsBuilder* SstFilterPolicy::GetBuilderWithContext(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  try {
    return NewBuilder(context);
  } catch (const std::exception& e) {
    if (context.info_log != nullptr) {  // no allocation: RocksDB's Log formats into its buffer
      ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::ERROR_LEVEL, context.info_log,
                             "[sstfilter] %s: %s; this SST file gets no filter", Name(), e.what());
    }
    return nullptr;
  }
}

ROCKSDB_NAMESPACE::FilterBitsBuilder* SstFilterPolicy::NewBuilder(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  const Result<FilterSpec> spec = prepared_ ? Result<FilterSpec>(prepared_spec_) : Spec();
  if (!spec.ok()) {
    LogNoFilter(context.info_log, Name(), spec.error());
    return nullptr;
  }
  const CacheShards shards = ShardsHoldingWholeFilters(context.table_options);
  auto* builder = new (std::nothrow) SstFilterBitsBuilder(
      spec.value(), context.table_options.detect_filter_construct_corruption, context.info_log);
  if (builder != nullptr) builder->SetCacheShards(shards, oversized_);
  return builder;
}

ROCKSDB_NAMESPACE::FilterBitsReader* SstFilterPolicy::GetFilterBitsReader(
    const ROCKSDB_NAMESPACE::Slice& contents) const {
  return NewSstFilterBitsReader(contents);
}

BloomPolicy::BloomPolicy() { RegisterOptions("bloom", &layout_, &BloomTypeInfo()); }

const char* BloomPolicy::kClassName() { return kBloomPolicyName; }

Result<FilterSpec> BloomPolicy::Spec() const {
  switch (layout_) {
    case Layout::kBlocked:
      return KindSpec<BlockedBloom>();
    case Layout::kStandard:
      return KindSpec<StandardBloom>();
  }
  return Err("unknown layout");  // unreachable: the parser accepts only the two above
}

template <typename Kind, const char* const& kPolicyName>
Result<FilterSpec> KindPolicy<Kind, kPolicyName>::Spec() const {
  return KindSpec<Kind>();
}
template class KindPolicy<Cuckoo, kCuckooPolicyName>;
template class KindPolicy<Fuse, kFusePolicyName>;
template class KindPolicy<BumpedRibbon, kRibbonPolicyName>;

// A level never loses its filter to a file's size: where every filter of a small set costs more
// than the level's bits (each kind has a fixed minimum: a 64-byte block, two buckets, a few
// segments, and the 32-byte trailer), the file gets the level's filter for large sets (`nominal`,
// the allocation at nominal costs). A few bytes beyond the budget, rather than a read for every
// lookup. (Where the level's base choice at this count is no filter, even if some of its files
// would draw one. The nominal level may itself mix, which can give tiny files a second mixed
// level.)
std::vector<LevelFilter> KeepSmallFilesFilters(std::vector<LevelFilter> priced,
                                               const std::vector<LevelFilter>& nominal) {
  for (size_t i = 0; i < priced.size(); ++i) {
    if (!priced[i].base.has_filter && nominal[i].Largest().has_filter) priced[i] = nominal[i];
  }
  return priced;
}

// A tree as the sstfilter.LeveledBudget listener last saw it (plugin/tree_history.h), for the
// allocation: each level's keys (in live files, and pending from running compactions) and the
// filter probes it receives per lookup.
struct TreeShape {
  std::vector<double> keys, probes;  // by level; empty: no accounts
  std::vector<bool> pending;         // a compaction is writing to the level
  LevelAccount level0_peak;
  double counted_weight = 0;  // of the readers' counts in `probes`

  explicit TreeShape(const TreeAccounts& accounts = {}, int level = -1)
      : level0_peak(accounts.level0_peak), counted_weight(accounts.counted_weight) {
    const size_t n = std::max<size_t>(accounts.levels.size(), level + 1);
    keys.assign(n, 0);
    probes.assign(n, 0);
    pending.assign(n, false);
    for (size_t i = 0; i < accounts.levels.size(); ++i) {
      const LevelAccount& a = accounts.levels[i];
      keys[i] = static_cast<double>(a.keys + a.pending_keys);
      probes[i] = a.probes;
      pending[i] = a.pending_keys > 0;
    }
  }

  // No keys anywhere (a new database's first flush): nothing to allocate over.
  bool Empty() const {
    for (const double k : keys) {
      if (k > 0) return false;
    }
    return level0_peak.keys == 0;
  }

  // The shares and probes to allocate over for a file of num_keys written to `level` (-1: no
  // file). The file's keys join its level, unless a compaction writing there counted them
  // already (its inputs' keys). Level 0 counts as at its fullest lately, if that was fuller. A
  // level receives at least the lookups of its own keys (its share), as far as the estimate knows:
  // the readers' counts lower that floor by their weight, to kMinShareOfProbes of the share, so
  // that a level no lookup probes now keeps a filter for the lookups of later (a filter is fixed
  // for its file's life). A flush receives at least one probe per lookup: one that does not
  // append has keys across the range, as far as anyone knows.
  static constexpr double kMinShareOfProbes = 0.25;
  void WithFile(int level, double num_keys, std::vector<double>* shares,
                std::vector<double>* level_probes) const {
    *shares = keys;
    *level_probes = probes;
    if (level >= 0 && !pending[level]) (*shares)[level] += num_keys;
    if (static_cast<double>(level0_peak.keys) > (*shares)[0]) {
      (*shares)[0] = static_cast<double>(level0_peak.keys);
      (*level_probes)[0] = std::max((*level_probes)[0], level0_peak.probes);
    }
    double total = 0;
    for (const double k : *shares) total += k;
    const double floor = std::max(1 - counted_weight, kMinShareOfProbes);
    for (size_t i = 0; i < shares->size(); ++i) {
      (*level_probes)[i] =
          std::max((*level_probes)[i], total > 0 ? floor * (*shares)[i] / total : 0);
    }
    if (level == 0) (*level_probes)[0] = std::max((*level_probes)[0], 1.0);
  }
};

double HeatOf(const std::vector<FileHeat>& files, int level, const KeyRange& keys) {
  double level_probes = 0, level_keys = 0, range_probes = 0, range_keys = 0;
  for (const FileHeat& f : files) {
    if (f.level != level || f.keys <= 0) continue;
    level_probes += f.sampled_probes;
    level_keys += f.keys;
    if (keys.Meets(f.smallest, f.largest)) {
      range_probes += f.sampled_probes;
      range_keys += f.keys;
    }
  }
  if (level_probes <= 0 || range_keys <= 0) return 1;
  const double per_key = level_probes / level_keys;
  auto factor = [&](double probes, double k) {
    return std::min(std::max(probes / k / per_key, kMinHeat), kMaxHeat);
  };
  double log_mean = 0;
  for (const FileHeat& f : files) {
    if (f.level == level && f.keys > 0)
      log_mean += f.keys * std::log(factor(f.sampled_probes, f.keys));
  }
  return factor(range_probes, range_keys) / std::exp(log_mean / level_keys);
}

// One line for the database's LOG (INFO level) when a file of a tree with accounts is begun: what
// the allocation sees. For users asking why a file got its filter, and for the tests.
std::string Describe(const char* policy, const TreeAccounts& accounts, int level, double excess,
                     double budget) {
  char part[192];
  snprintf(part, sizeof(part),
           "%s: a file for level %d; excess below level 0 %+.2f bits/key, budget steered to %.2f; "
           "probes counted by readers weigh %.2f; levels:",
           policy, level, excess, budget, accounts.counted_weight);
  std::string line = part;
  for (size_t i = 0; i < accounts.levels.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    if (a.keys == 0 && a.pending_keys == 0 && !(i == 0 && accounts.level0_peak.keys > 0)) continue;
    snprintf(part, sizeof(part), " L%zu %llu keys", i, static_cast<unsigned long long>(a.keys));
    line += part;
    if (a.keys > a.unmeasured_keys) {
      snprintf(part, sizeof(part), " at %.2f bits/key",
               8.0 * static_cast<double>(a.filter_bytes) /
                   static_cast<double>(a.keys - a.unmeasured_keys));
      line += part;
    }
    if (a.unmeasured_keys > 0) {
      snprintf(part, sizeof(part), " (%llu with filters not yet measured)",
               static_cast<unsigned long long>(a.unmeasured_keys));
      line += part;
    }
    if (a.pending_keys > 0) {
      snprintf(part, sizeof(part), " + %llu being written",
               static_cast<unsigned long long>(a.pending_keys));
      line += part;
    }
    if (i == 0 && accounts.level0_peak.keys > a.keys) {
      snprintf(part, sizeof(part), " (fullest lately %llu)",
               static_cast<unsigned long long>(accounts.level0_peak.keys));
      line += part;
    }
    snprintf(part, sizeof(part), ", %.2f probes;", a.probes);
    line += part;
  }
  return line;
}

// The tree's excess for the steering (TreeHistory::Steer): the bits its levels below 0 spend
// beyond what the allocation at `budget` for the tree as it is (level 0 at its fullest) gives
// them, per key of those levels once running compactions have written theirs: at what the
// allocation for `writing_budget` (the budget last steered to) gives them. A compaction may run
// for as long as the tree takes to fill (level 1's, in a tree of two levels): its keys must count.
// Level 0's files are compacted within minutes: their spend is no excess to correct in the files
// that stay.
Result<double> ExcessBelowLevel0(const TreeShape& shape, const TreeAccounts& accounts,
                                 double budget, double writing_budget) {
  std::vector<double> shares, probes;
  shape.WithFile(-1, 0, &shares, &probes);
  const Result<std::vector<LevelFilter>> target =
      AllocateShares(shares, budget, FilterCostModel::kSstfilter, 0, probes);
  if (!target.ok()) return Err(target.error());
  const Result<std::vector<LevelFilter>> writing =
      writing_budget == budget
          ? target
          : AllocateShares(shares, writing_budget, FilterCostModel::kSstfilter, 0, probes);
  if (!writing.ok()) return Err(writing.error());
  double excess_bits = 0, keys = 0;
  for (size_t i = 1; i < accounts.levels.size(); ++i) {
    const LevelAccount& a = accounts.levels[i];
    const double target_bits = target.value()[i].ExpectedBitsPerKey();
    keys += static_cast<double>(a.keys + a.pending_keys);
    excess_bits += 8 * static_cast<double>(a.filter_bytes) -
                   static_cast<double>(a.keys - a.unmeasured_keys) * target_bits +
                   static_cast<double>(a.pending_keys) *
                       (writing.value()[i].ExpectedBitsPerKey() - target_bits);
  }
  return keys > 0 ? excess_bits / keys : 0.0;
}

Result<std::vector<double>> SteadyBitsPerKey(const TreeAccounts& accounts, double bits_per_key) {
  std::vector<double> shares, probes;
  const TreeShape shape(accounts);
  if (shape.Empty()) return Err(std::string("the tree holds no keys"));
  shape.WithFile(-1, 0, &shares, &probes);
  const Result<std::vector<LevelFilter>> allocation =
      AllocateShares(shares, bits_per_key, FilterCostModel::kSstfilter, 0, probes);
  if (!allocation.ok()) return Err(allocation.error());
  std::vector<double> bits;
  for (const LevelFilter& level : allocation.value()) bits.push_back(level.ExpectedBitsPerKey());
  return bits;
}

// Allocations by level count and key count, computed on first use (about 0.5 ms each; the
// partitions of a partitioned filter mostly share one key count) and then shared by the builders.
// Priced at each exact count: a fuse table's cells per key do not fall steadily as sets grow (its
// segments double in length at some counts), so one count's choice may not fit a neighbour's.
struct LeveledPolicy::Allocations {
  static constexpr size_t kMaxCached = 4096;  // then the cache starts over: memory stays bounded

  Result<std::vector<LevelFilter>> Get(int num_levels, double size_ratio, double bits_per_key,
                                       uint64_t keys) {
    // The options are part of the key: a policy reconfigured later must not reuse old choices.
    const auto key = std::make_tuple(num_levels, keys, size_ratio, bits_per_key);
    {
      std::lock_guard<std::mutex> lock(mu);
      const auto it = cache.find(key);
      if (it != cache.end()) return it->second;
    }
    Result<std::vector<LevelFilter>> a =
        AllocateLevels(num_levels, size_ratio, bits_per_key, FilterCostModel::kSstfilter, keys);
    if (a.ok() && keys > 0) {
      const Result<std::vector<LevelFilter>> nominal = Get(num_levels, size_ratio, bits_per_key, 0);
      if (!nominal.ok()) return nominal;
      a = KeepSmallFilesFilters(a.value(), nominal.value());
    }
    if (a.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      BoundedEntry(cache, key, kMaxCached) = a.value();
    }
    return a;
  }

  std::mutex mu;
  std::map<std::tuple<int, uint64_t, double, double>, std::vector<LevelFilter>> cache;
};

LeveledPolicy::LeveledPolicy()
    : allocations_(std::make_shared<Allocations>()), history_(std::make_shared<TreeHistory>()) {
  RegisterOptions("leveled", &shape_, &LeveledTypeInfo());
}

const char* LeveledPolicy::kClassName() { return kLeveledPolicyName; }

Result<FilterSpec> LeveledPolicy::Spec() const {
  if (!std::isnan(budget_.fp_rate)) {
    return Err(
        "takes bits_per_key (a memory budget averaged over all keys of the tree), not "
        "fp_rate: the rate of each level follows from the budget");
  }
  const Result<bool> budget = CheckBudget(budget_);
  if (!budget.ok()) return Err(budget.error());
  if (shape_.num_levels < 0 || shape_.num_levels > kMaxLevels) {
    return Err("num_levels must be in [0, " + std::to_string(kMaxLevels) +
               "] (0: the column family's), got " + std::to_string(shape_.num_levels));
  }
  const Result<std::vector<LevelFilter>> uniform =
      UniformAllocation(1, shape_.size_ratio, budget_.bits_per_key);
  if (!uniform.ok()) return Err(uniform.error());
  const FilterChoice& only = uniform.value()[0].base;
  if (!only.has_filter) return Err("bits_per_key is too small for any filter");
  return only.spec;
}

Result<std::vector<LevelFilter>> LeveledPolicy::Allocation(int num_levels,
                                                           uint64_t keys_per_filter) const {
  return allocations_->Get(num_levels, shape_.size_ratio, budget_.bits_per_key, keys_per_filter);
}

// One file's filters: its level's in the allocation priced at each filter's key count. A flush
// (level 0) of a leveled tree first asks whether it appends, once its first filter finishes (the
// estimates before then guess from the keys so far), and records its keys for later flushes.
// With the tree's accounts (the sstfilter.LeveledBudget listener), the allocation is over the
// levels' real shares, the file's own level counting its keys, for the steered budget.
class LeveledPolicy::Chooser : public FilterChooser {
 public:
  Chooser(std::shared_ptr<Allocations> allocations, double size_ratio, double bits_per_key,
          int num_levels, int modelled)
      : allocations_(std::move(allocations)),
        size_ratio_(size_ratio),
        bits_per_key_(bits_per_key),
        num_levels_(num_levels),
        modelled_(modelled) {}

  // For a flush: the history it consults and joins, as `file` of `tree`.
  void FollowFlushes(std::shared_ptr<TreeHistory> history, TreeId tree) {
    file_ = history->NewFile();
    history_ = std::move(history);
    tree_ = std::move(tree);
  }

  // The tree as it is (TreeShape; empty: the model's), the file's level in it (-1: one level
  // holding every key), and the budget to allocate.
  void UseAccounts(TreeShape tree, int level, double bits_per_key) {
    tree_shape_ = std::move(tree);
    level_ = level;
    bits_per_key_ = bits_per_key;
  }

  // The lookup heat of the tree's files (HeatOf), and the weight of the counts it comes from.
  void UseHeat(std::shared_ptr<const std::vector<FileHeat>> heat, double weight) {
    heat_ = std::move(heat);
    heat_weight_ = weight;
  }

  // A tree under universal compaction: each file takes one filter, the richer of the budget's two
  // if it spends at most kUnmixedSlack times the budget, else the leaner. Mixing draws one of the
  // two per file, which averages out over many files (a level; a FIFO tree's flushes); a universal
  // tree is a few large sorted runs, too few draws to average out, so its files' filters could
  // overshoot the budget by a whole draw (DbTest.LeveledKeepsUniversalAndFifoTreesWithinTheBudget).
  static constexpr double kUnmixedSlack = 1.02;
  void OneFilterPerFile() { one_filter_ = true; }

  bool WantsKeyRange() const override { return history_ != nullptr || heat_ != nullptr; }

  Result<LevelFilter> ForKeys(uint64_t num_keys, const KeyRange& file_keys,
                              bool finishing) override {
    const bool appends = history_ != nullptr && Appends(file_keys, finishing);
    if (appends || (!tree_shape_.keys.empty() && level_ < 0)) {
      // The budget's filter: an appended file will hold its keys wherever it moves.
      return OneOf(allocations_->Get(1, size_ratio_, bits_per_key_, num_keys), 0);
    }
    if (tree_shape_.keys.empty()) {
      const Result<LevelFilter> level =
          OneOf(allocations_->Get(num_levels_, size_ratio_, bits_per_key_, num_keys), modelled_);
      if (!one_filter_ || !level.ok() || level.value().upper_fraction == 0) return level;
      LevelFilter one = level.value();
      if (one.upper.bits_per_key <= kUnmixedSlack * bits_per_key_) one.base = one.upper;
      one.upper_fraction = 0;
      return one;
    }
    const auto cached = by_keys_.find(num_keys);
    if (cached != by_keys_.end()) {
      return finishing ? ForHeat(cached->second, num_keys, file_keys) : cached->second;
    }
    std::vector<double> shares, probes;
    tree_shape_.WithFile(level_, static_cast<double>(num_keys), &shares, &probes);
    Result<std::vector<LevelFilter>> a =
        AllocateShares(shares, bits_per_key_, FilterCostModel::kSstfilter, num_keys, probes);
    if (a.ok() && num_keys > 0) {
      const Result<std::vector<LevelFilter>> nominal =
          AllocateShares(shares, bits_per_key_, FilterCostModel::kSstfilter, 0, probes);
      if (!nominal.ok()) return Err(nominal.error());
      a = KeepSmallFilesFilters(a.value(), nominal.value());
    }
    const Result<LevelFilter> chosen = OneOf(a, level_);
    if (by_keys_.size() < kMaxCached) by_keys_.emplace(num_keys, chosen);
    return finishing ? ForHeat(chosen, num_keys, file_keys) : chosen;
  }

 private:
  // A file asks for at most one allocation per doubling of its keys in the estimates, and one
  // per partition size at Finish.
  static constexpr size_t kMaxCached = 64;

  // The level's filter, made richer or leaner for the lookup heat of the file's keys (HeatOf):
  // the rate over the heat, in bits at the filter's own bits per halving of the rate, times the
  // counts' weight (few counts, little change); a file of level 0 keeps its level's.
  Result<LevelFilter> ForHeat(const Result<LevelFilter>& level, uint64_t num_keys,
                              const KeyRange& file_keys) {
    if (heat_ == nullptr || level_ < 1 || !level.ok() || file_keys.empty()) return level;
    const double bits = level.value().ExpectedBitsPerKey();
    const double rate = level.value().ExpectedFpRate();
    if (!level.value().base.has_filter || !(rate > 0 && rate < 1) || bits <= 0) return level;
    const double heat = HeatOf(*heat_, level_, file_keys);
    const double bits_per_halving = bits / std::log2(1 / rate);
    // In sixteenths of a bit: the allocations are cached by budget.
    const double hot_bits = std::min(
        std::max(std::round(16 * (bits + heat_weight_ * bits_per_halving * std::log2(heat))) / 16,
                 kMinBitsPerKey),
        kMaxBitsPerKey);
    if (std::abs(hot_bits - bits) < 1.0 / 16) return level;
    return OneOf(allocations_->Get(1, size_ratio_, hot_bits, num_keys), 0);
  }

  static Result<LevelFilter> OneOf(const Result<std::vector<LevelFilter>>& a, int level) {
    if (!a.ok()) return Err(a.error());
    return a.value()[static_cast<size_t>(level)];
  }

  bool Appends(const KeyRange& file_keys, bool finishing) {
    const bool appends =
        decided_ ? appends_ : !file_keys.empty() && history_->Appends(tree_, file_, file_keys);
    if (finishing) {
      decided_ = true;  // every filter (partition) of the file takes the first one's answer
      appends_ = appends;
      history_->Record(tree_, file_, file_keys);  // the file's keys so far
    }
    return appends;
  }

  const std::shared_ptr<Allocations> allocations_;
  const double size_ratio_;
  double bits_per_key_;
  const int num_levels_, modelled_;
  std::shared_ptr<TreeHistory> history_;  // null: not a flush of a leveled tree
  TreeId tree_;
  uint64_t file_ = 0;
  bool decided_ = false, appends_ = false;
  TreeShape tree_shape_;  // no levels: no accounts, the modelled tree
  int level_ = 0;
  std::map<uint64_t, Result<LevelFilter>> by_keys_;
  std::shared_ptr<const std::vector<FileHeat>> heat_;  // null: no counts
  double heat_weight_ = 0;
  bool one_filter_ = false;
};

ROCKSDB_NAMESPACE::FilterBitsBuilder* LeveledPolicy::NewBuilder(
    const ROCKSDB_NAMESPACE::FilterBuildingContext& context) const {
  const Result<FilterSpec> uniform = Spec();
  if (!uniform.ok()) {
    LogNoFilter(context.info_log, Name(), uniform.error());
    return nullptr;
  }
  const bool verify = context.table_options.detect_filter_construct_corruption;
  const TreeId tree = TreeOfTableInCreation(context.info_log, context.column_family_name);
  // A column family of more levels than the model takes: its deepest levels modelled as one.
  int num_levels =
      std::min(shape_.num_levels > 0 ? shape_.num_levels : context.num_levels, kMaxLevels);
  int modelled = 0;  // the level of the model the file belongs to
  const bool leveled = context.compaction_style == ROCKSDB_NAMESPACE::kCompactionStyleLevel;
  if (!leveled || num_levels < 1 || context.level_at_creation < 0) {
    num_levels = 1;  // the allocation of a tree of one level, holding every key
  } else {
    const int level = std::min(context.level_at_creation, num_levels - 1);
    int shallowest = 1;  // the first level below level 0 in the model
    if (shape_.num_levels == 0 && num_levels > 1) {
      // The levels the tree really has (plugin/tree_history.h): level 0, then those compaction
      // outputs have gone to.
      const TreeHistory::LevelSpan span =
          level > 0 ? history_->RecordCompaction(tree, level) : history_->Compactions(tree);
      if (span.deepest > 0) {
        shallowest = span.shallowest;
        num_levels = std::min(span.deepest - span.shallowest + 2, kMaxLevels);
      }
    }
    // A file RocksDB writes to the bottommost level holding data belongs to the tree's largest
    // level, whatever its number: the tree may not (yet) reach num_levels.
    modelled = context.is_bottommost ? num_levels - 1
               : level == 0          ? 0
                            : std::min(std::max(level - shallowest + 1, 1), num_levels - 1);
    const Result<std::vector<LevelFilter>> nominal = Allocation(num_levels);
    if (!nominal.ok()) {
      LogNoFilter(context.info_log, Name(), nominal.error());
      return nullptr;
    }
  }
  // Each filter takes its level's choice for its own key count: which kind is cheapest for a
  // level's rate depends on how many keys the filter holds (core/level_allocation.h).
  auto chooser = std::make_unique<Chooser>(allocations_, shape_.size_ratio, budget_.bits_per_key,
                                           num_levels, modelled);
  if (num_levels > 1 && context.level_at_creation == 0) chooser->FollowFlushes(history_, tree);
  if (context.compaction_style == ROCKSDB_NAMESPACE::kCompactionStyleUniversal) {
    chooser->OneFilterPerFile();
  }
  // The tree as the sstfilter.LeveledBudget listener last saw it: allocate over its levels, for a
  // budget that steers it back to the policy's (include/sstfilter/leveled_budget.h). A tree with
  // no keys yet (a new database's first flush) has nothing to allocate over: the model's filter.
  TreeAccounts accounts;
  const int level = num_levels > 1 ? context.level_at_creation : -1;
  TreeShape shape;
  const bool watched = shape_.num_levels == 0 && Ledger::Global().Get(tree, &accounts) &&
                       accounts.levels.size() <= static_cast<size_t>(kMaxLevels) &&
                       context.level_at_creation < kMaxLevels;
  if (watched && leveled) shape = TreeShape(accounts, level);
  if (!shape.Empty()) {
    const Result<double> excess = ExcessBelowLevel0(shape, accounts, budget_.bits_per_key,
                                                    history_->Steered(tree, budget_.bits_per_key));
    if (!excess.ok()) {
      LogNoFilter(context.info_log, Name(), excess.error());
      return nullptr;
    }
    const double budget = std::min(
        std::max(history_->Steer(tree, accounts.changes, excess.value(), budget_.bits_per_key),
                 kMinBitsPerKey),
        kMaxBitsPerKey);
    LogAt(context.info_log, ROCKSDB_NAMESPACE::InfoLogLevel::INFO_LEVEL,
          Describe(Name(), accounts, level, excess.value(), budget));
    chooser->UseAccounts(std::move(shape), level, budget);
    if (accounts.heat != nullptr && accounts.counted_weight > 0) {
      chooser->UseHeat(accounts.heat, accounts.counted_weight);
    }
  }
  const CacheShards shards = ShardsHoldingWholeFilters(context.table_options);
  auto* builder =
      new (std::nothrow) SstFilterBitsBuilder(std::move(chooser), verify, context.info_log);
  if (builder != nullptr) {
    builder->SetCacheShards(shards, oversized_);
    // The listener learns where lookups go from the probes the readers count.
    if (watched) builder->CountProbes();
  }
  return builder;
}

}  // namespace sstfilter
