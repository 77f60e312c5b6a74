// SPDX-License-Identifier: Apache-2.0
// The strict parser of the numbers in policy options (and OPTIONS files), in the tools' flags
// (db_bench_ext's --key_dist, and its double flags before gflags reads them; app_bench's and
// range_bench's) and in the Redis module's error rates. (memory_budget has a grammar of its own.)
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>

namespace sstfilter {

// Whether text is exactly one finite decimal number ("10", "0.99", ".5", "1e-3", "-2"), and then
// *out (untouched otherwise). std::from_chars takes no leading whitespace, no '+' and no
// hexadecimal, all of which strtod takes, and ignores the locale (LC_NUMERIC) where strtod reads
// its decimal point; "inf" and "nan" are refused here.
inline bool ParseFiniteDecimal(std::string_view text, double* out) {
  double value = 0;
  const char* const last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || end != last || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

}  // namespace sstfilter
