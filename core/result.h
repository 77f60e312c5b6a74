// SPDX-License-Identifier: Apache-2.0
// Result<T> (include/sstfilter/result.h, installed with the filters), and what only core's builds
// use of it.
#pragma once

#include <string>

#include "sstfilter/result.h"

namespace sstfilter {

// The value a build writes into *out, without the statistics it returns: for builds of the form
// Result<Info> build(std::string* out), such as BuildCuckooFilter and Fuse::BuildWithInfo.
template <typename Build>
Result<std::string> BuiltBytes(Build&& build) {
  std::string out;
  const auto info = build(&out);
  if (!info.ok()) return Err(info.error());
  return out;
}

}  // namespace sstfilter
