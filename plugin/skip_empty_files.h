// SPDX-License-Identifier: Apache-2.0
// How SkipEmptyFiles (include/sstfilter/range_filter.h) installs its table_filter, for either
// form of ReadOptions::table_filter (compat/rocksdb_api.h): a template over the ReadOptions type,
// so that the tests instantiate the pointer form, which no RocksDB release has yet, with a
// stand-in.
#pragma once

#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/table_properties.h>

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "compat/rocksdb_api.h"
#include "sstfilter/range_filter.h"

namespace sstfilter {
namespace skip_detail {

// The bounds the filter reads: the Slices ReadOptions pointed to when SkipEmptyFiles was called,
// read each time a file is decided, so that bounds changed in place are the bounds used, as they
// are by RocksDB's iterator (include/sstfilter/range_filter.h says what cannot be seen).
struct Bounds {
  const ROCKSDB_NAMESPACE::Slice* lower = nullptr;  // null: open
  const ROCKSDB_NAMESPACE::Slice* upper = nullptr;
};

// The table_filter SkipEmptyFiles installs: a named type, so that a second call finds the first
// one's (std::function::target) and replaces its bounds instead of adding a filter for the old
// bounds to the new one (which would skip files that hold keys in the new bounds).
struct SkipFilter {
  Bounds bounds;
  compat::TableFilter earlier;  // the caller's own, if any

  bool operator()(const ROCKSDB_NAMESPACE::TableProperties& properties) const {
    if (earlier && !earlier(properties)) return false;
    return FileMayHoldKeysIn(properties, bounds.lower, bounds.upper);
  }
};

// libstdc++'s std::function::target works without RTTI (it compares the manager function); other
// standard libraries need RTTI for it.
#if defined(__GLIBCXX__) || defined(__cpp_rtti) || defined(__GXX_RTTI)
inline constexpr bool kHasFunctionTarget = true;
#else
inline constexpr bool kHasFunctionTarget = false;
#endif

// SkipEmptyFiles over any ReadOptions type R. slot: where the filter is kept when R::table_filter
// is a pointer (it then points to *slot); null is NotSupported there. In the value form
// read_options keeps a copy, and slot (if given) one too. Only the branch of R's form is compiled,
// so the pointer form never stores the address of a local.
template <typename R>
ROCKSDB_NAMESPACE::Status InstallSkipFilter(R* read_options, compat::TableFilter* slot) {
  using ROCKSDB_NAMESPACE::Status;
  if (read_options == nullptr) return Status::InvalidArgument("SkipEmptyFiles: null ReadOptions");
  if (read_options->iterate_lower_bound == nullptr &&
      read_options->iterate_upper_bound == nullptr) {
    return Status::InvalidArgument(
        "SkipEmptyFiles: set iterate_lower_bound or iterate_upper_bound first (without bounds "
        "no file can be skipped)");
  }
  if (compat::kTableFilterIsPointer<R> && slot == nullptr) {
    return Status::NotSupported(
        "SkipEmptyFiles: this RocksDB's ReadOptions only point to a table_filter the caller "
        "owns; call SkipEmptyFiles(&read_options, &holder) with a TableFilterHolder that "
        "outlives the iterators");
  }
  try {
    const Bounds bounds{read_options->iterate_lower_bound, read_options->iterate_upper_bound};
    // Copied before *slot is written: the current filter may be *slot itself.
    compat::TableFilter earlier;
    if (const compat::TableFilter* current = compat::CurrentTableFilter(*read_options)) {
      earlier = *current;
    }
    if (earlier) {
      if constexpr (kHasFunctionTarget) {
        if (const SkipFilter* ours = earlier.template target<SkipFilter>()) {
          earlier = compat::TableFilter(ours->earlier);  // called again: new bounds replace old
        }
      } else {
        return Status::NotSupported(
            "SkipEmptyFiles: this build cannot combine with a table_filter already set (its "
            "standard library needs RTTI for std::function::target); clear it first");
      }
    }
    compat::TableFilter filter = SkipFilter{bounds, std::move(earlier)};
    if constexpr (compat::kTableFilterIsPointer<R>) {
      *slot = std::move(filter);  // not null: checked above
      compat::SetTableFilter(read_options, slot);
    } else {
      compat::SetTableFilter(read_options, &filter);  // a copy
      if (slot != nullptr) *slot = std::move(filter);
    }
  } catch (const std::exception&) {
    return Status::MemoryLimit("SkipEmptyFiles: out of memory");
  }
  return Status::OK();
}

}  // namespace skip_detail
}  // namespace sstfilter
