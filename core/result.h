// Result<T>: a value or an error message, for core functions that validate their input.
//
// core/ has no RocksDB dependency, so it cannot use rocksdb::Status. Every function that can be
// handed a bad argument (a rate of 0, NaN, a size that overflows) returns a Result instead of
// asserting, throwing or invoking undefined behaviour; the plugin turns the message into a
// Status::InvalidArgument.
#pragma once

#include <cassert>
#include <string>
#include <utility>

namespace sstfilter {

template <typename T>
class Result {
 public:
  // Implicit on purpose: `return value;` and `return Error("...");` both read naturally.
  Result(T value) : ok_(true), value_(std::move(value)) {}  // NOLINT(runtime/explicit)

  static Result Error(std::string message) {
    Result r;
    r.message_ = std::move(message);
    return r;
  }

  bool ok() const { return ok_; }
  // Requires ok(). The rvalue form moves the value out (for move-only types).
  const T& value() const& {
    assert(ok_);
    return value_;
  }
  T&& value() && {
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

// The value a build writes into *out, without the statistics it returns: for builds of the form
// Result<Info> build(std::string* out), such as BuildCuckooFilter and BuildFuseFilter.
template <typename Build>
Result<std::string> BuiltBytes(Build&& build) {
  std::string out;
  const auto info = build(&out);
  if (!info.ok()) return Err(info.error());
  return out;
}

}  // namespace sstfilter
