// SPDX-License-Identifier: Apache-2.0
// The blocked Bloom filter's SIMD kernels against their scalar twins, on every SIMD target this
// CPU supports (and Highway's portable EMU128, which every machine runs): the same answers and
// the same built bytes for the same inputs, for every probe count.
#include "core/blocked_bloom/simd.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/blocked_bloom/blocked_bloom.h"
#include "core/filter_reader.h"
#include "core/filter_spec.h"
#include "core/random.h"

namespace sstfilter {
namespace {

// Restricts Highway's dispatch to one target for the test's lifetime.
class OnlyTarget {
 public:
  explicit OnlyTarget(int64_t target) { hwy::SetSupportedTargetsForTest(target); }
  ~OnlyTarget() { hwy::SetSupportedTargetsForTest(0); }  // 0: the CPU's own again
};

// The targets the library was compiled for that this CPU runs. Highway compiles the kernels for
// the same list as this file (both use its default HWY_TARGETS).
std::vector<int64_t> Targets() { return hwy::SupportedAndGeneratedTargets(); }

// A body of num_blocks random blocks with about `fill_percent` of their bits set.
std::vector<uint8_t> RandomBlocks(uint64_t num_blocks, int fill_percent, uint64_t seed) {
  std::vector<uint8_t> body(num_blocks * BlockedBloomReader::kBlockBytes, 0);
  uint64_t rng = seed;
  for (uint64_t bit = 0; bit < body.size() * 8; ++bit) {
    if (SplitMix64(&rng) % 100 < static_cast<uint64_t>(fill_percent)) SetBit(body.data(), bit);
  }
  return body;
}

// The fill that makes a random key pass k probes about half the time: f^k = 1/2.
int FillForProbes(int k) { return static_cast<int>(100 * std::pow(0.5, 1.0 / k) + 0.5); }

TEST(BlockedBloomSimd, EveryTargetAnswersAsTheScalarTwinForEveryProbeCount) {
  const std::vector<int64_t> targets = Targets();
  ASSERT_FALSE(targets.empty());
  constexpr uint64_t kBlocks = 97;  // not a power of two
  constexpr size_t kKeys = 2000;
  for (int64_t target : targets) {
    OnlyTarget only(target);
    SCOPED_TRACE(hwy::TargetName(target));
    // The dispatch really runs this target (so the comparison below is of its code).
    ASSERT_STREQ(BlockedBloomSimdTarget(), hwy::TargetName(target));
    const BlockedBloomMatchFn kernel = BlockedBloomMatchKernel();
    ASSERT_NE(kernel, nullptr);
    for (int k = 1; k <= kMaxNumProbes; k += (k < 16 ? 1 : 7)) {
      SCOPED_TRACE("num_probes " + std::to_string(k));
      const std::vector<uint8_t> body = RandomBlocks(kBlocks, FillForProbes(k), 1000 + k);
      const BlockedBloomReader reader(body.data(), kBlocks, k);
      std::vector<uint64_t> hashes(kKeys);
      uint64_t rng = k;
      for (uint64_t& h : hashes) h = SplitMix64(&rng);
      std::vector<char> batch(kKeys);
      reader.MayContainBatch(hashes.data(), kKeys, reinterpret_cast<bool*>(batch.data()));
      size_t matches = 0;
      for (size_t i = 0; i < kKeys; ++i) {
        const bool expected = reader.MatchInBlock(reader.BlockFor(hashes[i]), hashes[i]);
        matches += expected;
        ASSERT_EQ(kernel(reader.BlockFor(hashes[i]), hashes[i], k), expected) << "key " << i;
        ASSERT_EQ(static_cast<bool>(batch[i]), expected) << "key " << i;
        ASSERT_EQ(reader.MayContain(hashes[i]), expected) << "key " << i;
      }
      // Both answers occurred, so neither can be a constant that happens to agree.
      EXPECT_GT(matches, kKeys / 10);
      EXPECT_LT(matches, kKeys - kKeys / 10);
    }
  }
}

// A filter block may start at any address: the kernels read it through unaligned loads.
TEST(BlockedBloomSimd, AnswersForABodyAtAnyAlignment) {
  constexpr uint64_t kBlocks = 5;
  const std::vector<uint8_t> body = RandomBlocks(kBlocks, FillForProbes(6), 7);
  for (int64_t target : Targets()) {
    OnlyTarget only(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (size_t offset = 0; offset < 8; ++offset) {
      std::vector<uint8_t> shifted(body.size() + 8);
      std::memcpy(shifted.data() + offset, body.data(), body.size());
      const BlockedBloomReader aligned(body.data(), kBlocks, 6);
      const BlockedBloomReader moved(shifted.data() + offset, kBlocks, 6);
      uint64_t rng = offset;
      for (int i = 0; i < 500; ++i) {
        const uint64_t h = SplitMix64(&rng);
        bool batch = false;
        moved.MayContainBatch(&h, 1, &batch);
        ASSERT_EQ(moved.MayContain(h), aligned.MatchInBlock(aligned.BlockFor(h), h));
        ASSERT_EQ(batch, aligned.MatchInBlock(aligned.BlockFor(h), h));
      }
    }
  }
}

// Every key of a real filter is found by every target, single and batched (no false negatives).
TEST(BlockedBloomSimd, EveryTargetFindsEveryKeyOfABuiltFilter) {
  std::vector<uint64_t> hashes(20000);
  uint64_t rng = 42;
  for (uint64_t& h : hashes) h = SplitMix64(&rng);
  for (double bits : {2.0, 10.0, 23.0}) {
    const std::string bytes =
        BuildFilter(SpecForBitsPerKey<BlockedBloom>(bits).value(), hashes.data(), hashes.size())
            .value();
    for (int64_t target : Targets()) {
      OnlyTarget only(target);
      SCOPED_TRACE(std::string(hwy::TargetName(target)) + ", bits/key " + std::to_string(bits));
      const FilterReader reader =
          FilterReader::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ASSERT_TRUE(reader.Holds<BlockedBloomReader>());
      std::vector<char> out(hashes.size());
      reader.MayContainBatch(hashes.data(), hashes.size(), reinterpret_cast<bool*>(out.data()));
      for (size_t i = 0; i < hashes.size(); ++i) {
        ASSERT_TRUE(reader.MayContain(hashes[i])) << i;
        ASSERT_TRUE(out[i]) << i;
      }
    }
  }
}

// Whether a target should build in lanes: x86's AVX-512 targets (core/blocked_bloom/simd.cc).
bool BuildsInLanes(int64_t target) {
#if HWY_ARCH_X86
  return target <= HWY_AVX3;
#else
  (void)target;
  return false;
#endif
}

// hashes[0, n) set by every target into a body at `offset` bytes past an 8-byte boundary, and by
// the scalar build: the same bytes, and only the body's.
void ExpectEveryTargetBuildsTheScalarBytes(int num_probes, uint64_t num_blocks,
                                           const std::vector<uint64_t>& hashes, size_t offset) {
  const size_t body_bytes = num_blocks * BlockedBloomReader::kBlockBytes;
  std::vector<uint8_t> expected(body_bytes, 0);
  BlockedBloom::SetBitsScalar(num_probes, num_blocks, hashes.data(), hashes.size(),
                              expected.data());
  for (int64_t target : Targets()) {
    OnlyTarget only(target);
    SCOPED_TRACE(hwy::TargetName(target));
    ASSERT_EQ(BlockedBloomVectorBuild(), BuildsInLanes(target));
    constexpr uint8_t kGuard = 0xa5;  // around the body: a write outside it changes one
    std::vector<uint8_t> buffer(offset + body_bytes + 64, kGuard);
    uint8_t* body = buffer.data() + offset;
    std::memset(body, 0, body_bytes);
    BlockedBloomSetBitsSimd(num_probes, num_blocks, hashes.data(), hashes.size(), body);
    ASSERT_EQ(std::memcmp(body, expected.data(), body_bytes), 0);
    for (size_t i = 0; i < offset; ++i) ASSERT_EQ(buffer[i], kGuard) << i;
    for (size_t i = offset + body_bytes; i < buffer.size(); ++i) ASSERT_EQ(buffer[i], kGuard) << i;
  }
}

TEST(BlockedBloomSimd, EveryTargetBuildsTheScalarBuildsBytesForEveryProbeCount) {
  for (int k = 1; k <= kMaxNumProbes; k += (k < 16 ? 1 : 7)) {
    SCOPED_TRACE("num_probes " + std::to_string(k));
    std::vector<uint64_t> hashes(150);
    uint64_t rng = 500 + k;
    for (uint64_t& h : hashes) h = SplitMix64(&rng);
    // 97 blocks (not a power of two) of about 1.5 keys each, so that blocks hold 0, 1 or several
    // keys and stay far from full; then one block of 20 keys.
    ExpectEveryTargetBuildsTheScalarBytes(k, 97, hashes, 0);
    ExpectEveryTargetBuildsTheScalarBytes(
        k, 1, std::vector<uint64_t>(hashes.begin(), hashes.begin() + 20), 0);
  }
  // Without AVX-512 every target builds with the scalar code: say so, rather than pass quietly.
  const std::vector<int64_t> targets = Targets();
  if (std::none_of(targets.begin(), targets.end(), BuildsInLanes)) {
    GTEST_SKIP() << "no AVX-512 on this CPU: the vector build was not run";
  }
}

TEST(BlockedBloomSimd, EveryTargetBuildsTheScalarBuildsBytesAtAnyAlignment) {
  std::vector<uint64_t> hashes(30);
  uint64_t rng = 9;
  for (uint64_t& h : hashes) h = SplitMix64(&rng);
  for (size_t offset = 0; offset < 64; offset += 7) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    ExpectEveryTargetBuildsTheScalarBytes(7, 13, hashes, offset);
  }
}

// A whole filter built with the kernels switched on and off: the same bytes.
TEST(BlockedBloomSimd, AFilterHasTheSameBytesWithTheKernelsOnAndOff) {
  std::vector<uint64_t> hashes(50000);
  uint64_t rng = 77;
  for (uint64_t& h : hashes) h = SplitMix64(&rng);
  const FilterSpec spec = SpecForBitsPerKey<BlockedBloom>(10).value();
  SetBlockedBloomSimdEnabled(false);
  const std::string scalar = BuildFilter(spec, hashes.data(), hashes.size()).value();
  SetBlockedBloomSimdEnabled(true);
  EXPECT_EQ(BuildFilter(spec, hashes.data(), hashes.size()).value(), scalar);
}

// Switched off, the kernels are the scalar twins; switched back on, the CPU's best target.
TEST(BlockedBloomSimd, TheSwitchSelectsTheScalarTwins) {
  SetBlockedBloomSimdEnabled(false);
  EXPECT_STREQ(BlockedBloomSimdTarget(), "scalar");
  EXPECT_EQ(BlockedBloomMatchKernel(), nullptr);
  EXPECT_FALSE(BlockedBloomVectorBuild());
  SetBlockedBloomSimdEnabled(true);
  EXPECT_STREQ(BlockedBloomSimdTarget(), hwy::TargetName(Targets().front()));
  EXPECT_NE(BlockedBloomMatchKernel(), nullptr);
  EXPECT_EQ(BlockedBloomVectorBuild(), BuildsInLanes(Targets().front()));
}

}  // namespace
}  // namespace sstfilter
