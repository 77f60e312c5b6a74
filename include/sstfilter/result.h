// SPDX-License-Identifier: Apache-2.0
// Result<T>: a value or an error message, returned by every sstfilter function that can be handed
// a bad argument (a rate of 0, NaN, a size that overflows, bytes that are not a filter) instead of
// asserting, throwing or invoking undefined behaviour.
//
// The filters (core/) have no RocksDB dependency, so they cannot use rocksdb::Status; the RocksDB
// plugin turns the message into a Status::InvalidArgument. Functions that only succeed or fail
// return Result<bool>, true on success.
#pragma once

#include <cassert>
#include <string>
#include <utility>

namespace sstfilter {

// [[nodiscard]]: ignoring a Result ignores its error (a refused Merge, a filter not made).
template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit on purpose: `return value;` and `return Error("...");` both read naturally.
  Result(T value) : ok_(true), value_(std::move(value)) {}  // NOLINT(runtime/explicit)

  static Result Error(std::string message) {
    Result r;
    r.message_ = std::move(message);
    return r;
  }

  bool ok() const { return ok_; }
  // Requires ok(). The rvalue form moves the value out (for move-only types) and returns it by
  // value, so that `auto f = Create(...).value();` never refers into a destroyed Result.
  const T& value() const& {
    assert(ok_);
    return value_;
  }
  T& value() & {
    assert(ok_);
    return value_;
  }
  T value() && {
    assert(ok_);
    return std::move(value_);
  }
  // Empty when ok().
  const std::string& error() const { return message_; }

 private:
  Result() : ok_(false), value_() {}

  bool ok_;
  T value_;
  std::string message_;
};

// Builds a failed Result of any T from a message: `return Err("n must be > 0");`.
struct Err {
  explicit Err(std::string m) : message(std::move(m)) {}
  template <typename T>
  operator Result<T>() const {  // NOLINT(google-explicit-constructor)
    return Result<T>::Error(message);
  }
  std::string message;
};

}  // namespace sstfilter
