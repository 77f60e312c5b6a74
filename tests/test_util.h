// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test suites that need no RocksDB: deterministic key sets, numbered keys,
// filters of each kind, the statistical bound that measured false-positive rates are checked
// against, and whole-file reads and writes. tests/plugin/db_fixture.h adds the RocksDB side.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/hash.h"

namespace sstfilter::testing {

// The i-th key of a key set: 16 bytes, `set` in the first 8 and `i` in the last 8, so sets with
// different `set` values are disjoint. Hashed with the real KeyHash, as the plugin does.
inline uint64_t KeyHashOf(uint64_t set, uint64_t i) {
  unsigned char key[16];
  for (int b = 0; b < 8; ++b) {
    key[b] = static_cast<unsigned char>(set >> (8 * b));
    key[8 + b] = static_cast<unsigned char>(i >> (8 * b));
  }
  return KeyHash(key, sizeof(key));
}

inline std::vector<uint64_t> KeyHashes(uint64_t set, uint64_t count) {
  std::vector<uint64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = KeyHashOf(set, i);
  return out;
}

// The one format of the tests' string keys: "key" and `i` in decimal, zero-padded to `digits`
// digits (0: not padded, "key7"). Padded keys sort as their numbers do, so a key numbered between
// two others lies between them in a file's key range. The width is a parameter because it is part
// of what some tests measure or check (a prefix length, the keys crash_writer writes, the bytes of
// golden filters), so each test file keeps the width it was written for.
inline std::string NumberedKey(uint64_t i, int digits) {
  char buf[48];
  snprintf(buf, sizeof(buf), "key%0*llu", digits, static_cast<unsigned long long>(i));
  return buf;
}

// The width of the keys crash_writer writes, which reliability_test's crash test reads back.
inline constexpr int kCrashWriterKeyDigits = 12;

// A reader over filter bytes held in `bytes`, which must outlive it (hence no temporaries).
inline FilterReader ReaderOf(const std::string& bytes) {
  return FilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}
FilterReader ReaderOf(std::string&&) = delete;

// The keys the reader misses, counting the single and the batched query each: 0 for a filter
// without false negatives.
inline uint64_t CountMissing(const FilterReader& reader, const std::vector<uint64_t>& keys) {
  std::vector<uint8_t> batch(keys.size());
  reader.MayContainBatch(keys.data(), keys.size(), reinterpret_cast<bool*>(batch.data()));
  uint64_t missing = 0;
  for (size_t i = 0; i < keys.size(); ++i) missing += !reader.MayContain(keys[i]) + !batch[i];
  return missing;
}

// One filter of each kind in core/kinds.h, each sized for a 1% rate, for the properties every
// kind must have: a new kind is tested by the suites that use this without a change here.
inline std::vector<FilterSpec> OneSpecOfEachKind() {
  std::vector<FilterSpec> specs;
  ForEachKind([&](auto kind) { specs.push_back(decltype(kind)::ForFpRate(0.01).value()); });
  return specs;
}

// Largest deviation of a Binomial(trials, p) count from its mean that a correct filter may show at
// `sigmas` standard deviations. The tests run at fixed seeds, so they are deterministic; 5 sigma
// means a correct implementation would fail for fewer than 1 in 1.7 million seeds.
inline double BinomialTolerance(double trials, double p, double sigmas = 5.0) {
  return sigmas * std::sqrt(trials * p * (1.0 - p));
}

// A soak knob: the environment variable `name` (set by scripts/soak.sh to run a test longer), or
// `default_value` when it is unset. Accepts whole numbers written plainly or as "1e9". A value
// that is not one aborts the test program with a message: a typo must not shrink a soak run to
// the default without anyone noticing.
inline uint64_t SoakKnob(const char* name, uint64_t default_value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return default_value;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !(value >= 0) || value > 1e18 || value != std::floor(value)) {
    std::fprintf(stderr, "%s=%s: not a whole number\n", name, text);
    std::abort();
  }
  return static_cast<uint64_t>(value);
}

// The bytes of the file at `path` ("" if it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace sstfilter::testing
