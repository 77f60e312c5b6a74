// SPDX-License-Identifier: Apache-2.0
// The policies of one kind (sstfilter.Bloom, .Cuckoo, .Fuse, .Ribbon) and what every sstfilter
// policy shares (SstFilterPolicy). Their options: policy_options.cc; sstfilter.Leveled:
// leveled_policy.cc.
#include "plugin/policies.h"

#include <rocksdb/env.h>

#include <exception>
#include <new>
#include <string>

#include "core/format.h"
#include "plugin/bits_adapters.h"
#include "plugin/block_cache_fit.h"
#include "plugin/policy_options.h"
#include "sstfilter/sstfilter.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::Status;

SstFilterPolicy::SstFilterPolicy() {
  RegisterOptions("budget", &budget_, &BudgetTypeInfo());
  RegisterOptions("compatibility", &compatibility_, &CompatibilityTypeInfo());
}

const char* SstFilterPolicy::CompatibilityName() const {
  switch (compatibility_) {
    case Compatibility::kRocksDb:
      return kRocksDbCompatibilityName;
    case Compatibility::kSstFilter:
      return kSstFilterCompatibilityName;
  }
  return kRocksDbCompatibilityName;  // unreachable: the parser accepts only the two above
}

void SstFilterPolicy::SetBitsPerKey(const std::string& text) {
  const Status s = ParseNumber(Name(), "bits_per_key", text, &budget_.bits_per_key);
  if (!s.ok() && refused_.ok()) refused_ = s;
}

Status SstFilterPolicy::ConfigureOptions(
    const ConfigOptions& options, const std::unordered_map<std::string, std::string>& opts_map,
    std::unordered_map<std::string, std::string>* unused) {
  // Where configuring fails, RocksDB configures the policy again as it was before, within this
  // call (Configurable::ConfigureOptions, unless ignore_unknown_options): that call's errors are
  // not the user's.
  ++configure_depth_;
  const Status s = FilterPolicy::ConfigureOptions(options, opts_map, unused);
  --configure_depth_;
  if (!refused_.ok()) return refused_;
  if (!s.ok() && options.input_strings_escaped && configure_depth_ == 0) {
    // InvalidArgument, naming the policy: ldb --try_load_options takes a NotFound (an unknown
    // option's) from loading the OPTIONS file for "no OPTIONS file" and opens with defaults.
    refused_ =
        s.IsInvalidArgument()
            ? s
            : Status::InvalidArgument(std::string(Name()) + ": " +
                                      (s.getState() != nullptr ? s.getState() : s.ToString()));
  }
  return s;
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

Status SstFilterPolicy::CheckOptions(FilterSpec* spec) const {
  if (!refused_.ok()) return refused_;
  try {
    const Result<FilterSpec> checked = Spec();
    if (!checked.ok()) return Status::InvalidArgument(std::string(Name()) + ": " + checked.error());
    *spec = checked.value();
  } catch (const std::exception&) {
    return Status::MemoryLimit("sstfilter: out of memory checking the filter policy's options");
  }
  return Status::OK();
}

Status SstFilterPolicy::PrepareOptions(const ConfigOptions& options) {
  const Status checked = CheckOptions(&prepared_spec_);
  if (!checked.ok()) return checked;
  prepared_ = true;
  return FilterPolicy::PrepareOptions(options);
}

Status SstFilterPolicy::ValidateOptions(
    const ROCKSDB_NAMESPACE::DBOptions& db_options,
    const ROCKSDB_NAMESPACE::ColumnFamilyOptions& cf_options) const {
  FilterSpec spec;
  const Status checked = CheckOptions(&spec);
  if (!checked.ok()) return checked;
  return FilterPolicy::ValidateOptions(db_options, cf_options);
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
  std::unique_ptr<ConstructionCharge> charge = ConstructionCharge::For(context.table_options);
  auto* builder = new (std::nothrow) SstFilterBitsBuilder(
      spec.value(), context.table_options.detect_filter_construct_corruption, context.info_log);
  if (builder != nullptr) {
    builder->SetConstructionCharge(std::move(charge));
    if (context.table_options.optimize_filters_for_memory) builder->SetSizeClassRounding(rounding_);
    builder->SetCacheShards(shards, oversized_);
    builder->SetFileLevel(context.level_at_creation, fallback_warnings_);
  }
  return builder;
}

ROCKSDB_NAMESPACE::FilterBitsReader* SstFilterPolicy::GetFilterBitsReader(
    const ROCKSDB_NAMESPACE::Slice& contents) const {
  // A block of at most kMarkerBytes is RocksDB's empty filter to RocksDB ("no" for every key),
  // which RocksDB never writes (a table without keys gets no filter block): here it is bytes not
  // understood, "may match".
  if (compatibility_ == Compatibility::kRocksDb && contents.size() > kMarkerBytes) {
    // Layouts 2 and 3 only sstfilter writes (core/format.h); RocksDB's own reader takes the rest.
    const TrailerLayout layout =
        TrailerLayoutOf(reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
    if (layout != TrailerLayout::kLayout2 && layout != TrailerLayout::kCompact) {
      return NewBuiltinFilterBitsReader(contents);
    }
  }
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
template class KindPolicy<BumpedRibbon, kBumpedRibbonPolicyName>;

}  // namespace sstfilter
