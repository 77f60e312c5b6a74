// SPDX-License-Identifier: Apache-2.0
// Registration of sstfilter's policies, its SST partitioner and its event listener in RocksDB's
// ObjectLibrary, at load time and on request.
#include <rocksdb/convenience.h>
#include <rocksdb/utilities/object_registry.h>

#include <exception>
#include <memory>
#include <new>

#include "plugin/leveled_budget.h"
#include "plugin/policies.h"
#include "plugin/range_filter_collector.h"
#include "sstfilter/leveled_budget.h"
#include "sstfilter/no_trivial_move.h"
#include "sstfilter/sstfilter.h"

using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::ObjectLibrary;

namespace sstfilter {
namespace {

// The name a renamed policy had before, or nullptr: its factory answers to it too, so that the
// OPTIONS files of existing databases still load.
template <typename Policy>
const char* FormerName() {
  return nullptr;
}
template <>
const char* FormerName<BumpedRibbonPolicy>() {
  return kBumpedRibbonFormerPolicyName;
}

// A factory for "<Name>" and "<Name>:<bits_per_key>", and the same under its FormerName. RocksDB
// configures the options of the "{id=...;...}" form afterwards and then calls PrepareOptions,
// which validates everything.
// The pattern takes any text after the colon (RocksDB's own number pattern refuses "1e308" and
// "nan" before any factory runs, with a bare "Could not load FilterPolicy"), and the policy
// parses it as it parses its bits_per_key option, with the same messages.
// Each Add*Factory adds one factory and returns 1, so that sstfilter_register counts what it adds.
template <typename Policy>
int AddPolicyFactory(ObjectLibrary& library) {
  ObjectLibrary::PatternEntry names(Policy::kClassName(), /*optional=*/true);
  if (const char* former = FormerName<Policy>()) names.AnotherName(former);
  library.AddFactory<const FilterPolicy>(
      names.AddSeparator(":", /*at_least_one=*/false),
      [](const std::string& uri, std::unique_ptr<const FilterPolicy>* guard,
         std::string* errmsg) -> const FilterPolicy* {
        std::unique_ptr<Policy> policy(new (std::nothrow) Policy());
        if (policy == nullptr) {
          *errmsg = "out of memory";
          return nullptr;
        }
        // A number that does not parse refuses the policy's options (SstFilterPolicy::refused_),
        // which RocksDB then reports as it configures the policy. An error here would leave no
        // filter where RocksDB loads an OPTIONS file: it drops a factory's errors there.
        const size_t colon = uri.find(':');
        if (colon != std::string::npos) policy->SetBitsPerKey(uri.substr(colon + 1));
        guard->reset(policy.release());
        return guard->get();
      });
  return 1;
}

template <typename... Policies>
int AddPolicyFactories(ObjectLibrary& library, PolicyList<Policies...>) {
  return (AddPolicyFactory<Policies>(library) + ...);
}

// Adds the factory of `name` making a T by `make` (which returns nullptr when out of memory).
template <typename T, typename Make>
int AddFactoryOf(ObjectLibrary& library, const char* name, Make make) {
  library.AddFactory<T>(
      name,
      [make](const std::string& /*uri*/, std::unique_ptr<T>* guard, std::string* errmsg) -> T* {
        guard->reset(make());
        if (*guard == nullptr) *errmsg = "out of memory";
        return guard->get();
      });
  return 1;
}

int AddNoTrivialMoveFactory(ObjectLibrary& library) {
  return AddFactoryOf<ROCKSDB_NAMESPACE::SstPartitionerFactory>(
      library, NoTrivialMoveFactory::kClassName(),
      [] { return new (std::nothrow) NoTrivialMoveFactory(); });
}

int AddLeveledBudgetFactory(ObjectLibrary& library) {
  return AddFactoryOf<ROCKSDB_NAMESPACE::EventListener>(library, kLeveledBudgetName,
                                                        [] { return NewLeveledBudgetOrNull(); });
}

// "sstfilter.RangeFilter", its options in the "{id=...;bits_per_key=...}" form. No
// "<name>:<number>" form: table_properties_collectors is a list separated by colons.
int AddRangeFilterFactory(ObjectLibrary& library) {
  return AddFactoryOf<ROCKSDB_NAMESPACE::TablePropertiesCollectorFactory>(
      library, RangeFilterCollectorFactory::kClassName(),
      [] { return new (std::nothrow) RangeFilterCollectorFactory(); });
}

// Runs when libsstfilter.so is loaded: preloading the library (LD_PRELOAD) is enough for stock
// RocksDB tools to understand the names.
const int kRegisteredAtLoad = [] {
  try {
    return sstfilter_register(*ObjectLibrary::Default(), "");
  } catch (const std::exception&) {
    return 0;  // out of memory while loading: nothing better to do than not register
  }
}();

}  // namespace

ROCKSDB_NAMESPACE::ConfigOptions StrictConfigOptions() {
  ROCKSDB_NAMESPACE::ConfigOptions strict;
  strict.ignore_unknown_options = false;
  strict.ignore_unsupported_options = false;
  strict.input_strings_escaped = false;
  return strict;
}

ROCKSDB_NAMESPACE::Status NewFilterPolicy(const std::string& uri,
                                          std::shared_ptr<const FilterPolicy>* policy) {
  // RocksDB's own factories may throw on a bad value: 7.8's ribbonfilter parses its arguments with
  // std::stoi, so "ribbonfilter:8:0000009999999999" threw std::out_of_range through this call
  // (found by the options fuzzer). A bad string is an error, not an exception.
  try {
    const ROCKSDB_NAMESPACE::Status s =
        FilterPolicy::CreateFromString(StrictConfigOptions(), uri, policy);
    if (!s.ok()) policy->reset();  // RocksDB keeps an object its options refused
    return s;
  } catch (const std::exception& e) {
    policy->reset();
    return ROCKSDB_NAMESPACE::Status::InvalidArgument("cannot create filter policy '" + uri + "'",
                                                      e.what());
  } catch (...) {
    policy->reset();
    return ROCKSDB_NAMESPACE::Status::InvalidArgument("cannot create filter policy '" + uri + "'");
  }
}

}  // namespace sstfilter

extern "C" int sstfilter_register(ObjectLibrary& library, const std::string& /*arg*/) {
  if (library.FindFactory<const FilterPolicy>(sstfilter::kBloomPolicyName) != nullptr) return 0;
  return sstfilter::AddPolicyFactories(library, sstfilter::AllPolicies{}) +
         sstfilter::AddNoTrivialMoveFactory(library) + sstfilter::AddLeveledBudgetFactory(library) +
         sstfilter::AddRangeFilterFactory(library);
}
