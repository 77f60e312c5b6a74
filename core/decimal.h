// SPDX-License-Identifier: Apache-2.0
// The one parser of the numbers users type: policy options, OPTIONS files and the tools' flags.
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>

namespace sstfilter {

// Whether text is exactly one finite decimal number ("10", "0.99", ".5", "1e-3", "-2"), and then
// *out (untouched otherwise). std::from_chars takes no leading whitespace, no '+', no hexadecimal
// and no locale's decimal comma, all of which strtod would; "inf" and "nan" are refused here.
inline bool ParseFiniteDecimal(std::string_view text, double* out) {
  double value = 0;
  const char* const last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || end != last || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

}  // namespace sstfilter
