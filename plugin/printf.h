// SPDX-License-Identifier: Apache-2.0
// Text formatted as printf formats it, of any length: LOG lines and reports are never cut short.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace sstfilter {

// May throw std::bad_alloc. The compiler checks the arguments against the format.
std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

inline std::string Printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text;
  if (length > 0) {
    text.resize(static_cast<size_t>(length));
    std::vsnprintf(text.data(), text.size() + 1, format, again);  // C++17: data() is writable
  }
  va_end(again);
  return text;
}

}  // namespace sstfilter
