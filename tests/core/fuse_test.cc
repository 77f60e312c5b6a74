// SPDX-License-Identifier: Apache-2.0
// What only the binary fuse kind has; the properties it shares with the Ribbon kind are tested
// over both in static_kinds_test.cc.
#include "core/fuse/fuse.h"

#include <gtest/gtest.h>

#include "core/fuse/math.h"

namespace sstfilter {
namespace {

// The table's size against the information limit, as the shape formulas promise: 4-wise from
// kFuse4MinKeys keys, the large-set factor 1.075 reached at a million keys.
TEST(Fuse, ShapeFollowsTheSizeFactors) {
  for (uint64_t n : {1u, 2u, 10u, 999u, 1000u, 100'000u, 1'000'000u, 10'000'000u}) {
    const FuseShape s = FuseShapeFor(n).value();
    EXPECT_EQ(s.arity, n >= kFuse4MinKeys ? 4 : 3) << n;
    EXPECT_EQ(s.num_cells, (s.segment_count + s.arity - 1) * s.segment_length()) << n;
    EXPECT_GE(s.num_cells, n) << n;
    EXPECT_LE(s.segment_length_log2, kFuseMaxSegmentLengthLog2);
  }
  const double ratio_1m = static_cast<double>(FuseShapeFor(1'000'000).value().num_cells) / 1e6;
  EXPECT_NEAR(ratio_1m, kFuse4LargeSizeFactor, 0.01);
}

}  // namespace
}  // namespace sstfilter
