// SPDX-License-Identifier: Apache-2.0
// A filter kind cannot be half added: every kind of core/kinds.h has a seed in the reader
// fuzzer's corpus (tests/fuzz/corpus/reader/: a filter whose trailer names the kind) and a
// section of docs/format.md ("## N. Kind <id>: ..."). Its golden bytes are held by
// Format.GoldenBytesCoverEveryKind (format_test.cc), its row in db_bench_ext's sizing report by
// DbBenchExtTest.SizingNamesEveryKind (tests/tools/db_bench_ext_test.cc). docs/architecture.md's
// checklist for a new kind lists the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>

#include "core/format.h"
#include "core/kinds.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = SSTFILTER_SOURCE_DIR;

// The kind of the trailer a file's bytes end with, in any layout (0: none, or no trailer).
uint8_t TrailerKind(const std::string& bytes) {
  Trailer t;
  if (!DecodeTrailer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t)) return 0;
  return static_cast<uint8_t>(t.kind);
}

TEST(KindCompleteness, EveryKindHasAReaderFuzzSeed) {
  const fs::path corpus = fs::path(kSourceDir) / "tests/fuzz/corpus/reader";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  std::string seen;
  ForEachKind([&](auto kind) {
    using K = decltype(kind);
    bool found = false;
    for (const auto& entry : fs::directory_iterator(corpus)) {
      found |=
          TrailerKind(testing::ReadFile(entry.path().string())) == static_cast<uint8_t>(K::kId);
    }
    EXPECT_TRUE(found) << K::kName << " (kind " << static_cast<int>(K::kId) << ") has no seed in "
                       << corpus;
  });
}

TEST(KindCompleteness, EveryKindHasASectionOfTheFormat) {
  const std::string format = testing::ReadFile(kSourceDir + "/docs/format.md");
  ASSERT_FALSE(format.empty());
  ForEachKind([&](auto kind) {
    using K = decltype(kind);
    const std::regex heading("\n## [0-9]+\\. Kind " + std::to_string(static_cast<int>(K::kId)) +
                             ": ");
    EXPECT_TRUE(std::regex_search(format, heading))
        << K::kName << " (kind " << static_cast<int>(K::kId)
        << ") has no section in docs/format.md";
  });
}

}  // namespace
}  // namespace sstfilter
