// SPDX-License-Identifier: Apache-2.0
#include "core/decimal.h"

#include <gtest/gtest.h>

#include <string>

namespace sstfilter {
namespace {

TEST(Decimal, ReadsExactlyOneFiniteDecimalNumber) {
  const struct {
    std::string text;
    double value;
  } accepted[] = {{"10", 10}, {"0.99", 0.99}, {".5", 0.5},    {"1e-3", 1e-3},
                  {"-2", -2}, {"0", 0},       {"10.6", 10.6}, {"1E2", 100}};
  for (const auto& c : accepted) {
    double out = -7;
    EXPECT_TRUE(ParseFiniteDecimal(c.text, &out)) << c.text;
    EXPECT_EQ(out, c.value) << c.text;
  }
}

TEST(Decimal, RefusesWhatStrtodWouldTakeAndLeavesTheOutputAlone) {
  // strtod reads a number at the start of each but the empty text ("1e999" as HUGE_VAL, with
  // ERANGE).
  const char* const refused[] = {"",     " 0.5", "0.5 ",  "+0.5", "0x0.8", "0x1p-1", "inf",
                                 "-inf", "nan",  "1e999", "0,5",  "1..2",  "5%",     "0.5\n"};
  for (const char* text : refused) {
    double out = -7;
    EXPECT_FALSE(ParseFiniteDecimal(text, &out)) << "'" << text << "'";
    EXPECT_EQ(out, -7) << "'" << text << "'";
  }
}

}  // namespace
}  // namespace sstfilter
