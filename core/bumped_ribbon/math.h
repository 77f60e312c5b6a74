// SPDX-License-Identifier: Apache-2.0
// Sizing of the bumped Ribbon filter: standard Ribbon tables (core/ribbon/math.h, 64-bit
// coefficient rows) in layers, each but the last overloaded, with the keys a layer cannot hold
// "bumped" to the next. The idea is bumped Ribbon retrieval (BuRR: Dillinger, Huebschle-Schneider,
// Sanders, Walzer, "Fast Succinct Retrieval and Approximate Membership using Ribbon", SEA 2022);
// the layout, thresholds and sizing here are this code's own.
//
// Why: a standard Ribbon table must exceed its keys by a margin that grows with ln n (8.6% at
// 100,000 keys, 12.3% at 1M), or its one system of equations has no solution. A layer with fewer
// slots than keys has no such margin to pay: where its equations crowd, it gives up some keys
// instead of failing, and those go to a smaller layer. So nearly every slot holds a key.
//
// A layer of m slots is cut into buckets of 64 starts. Each bucket has a 2-bit threshold code
// naming one of kBumpedRibbonThresholds: the keys whose start lies in the bucket at an offset
// below the threshold are bumped (to the next layer), the others are stored here. The build
// picks the least threshold that lets the bucket's keys in (BumpedRibbonSolver). The last layer
// is a standard Ribbon table with no thresholds: it stores every key that reaches it, or the seed
// fails.
//
// Layer sizes are a function of the key count alone (BumpedRibbonShapeFor), so a filter's size
// is known before it is built: each overloaded layer has 15/16 of the keys expected to reach it
// in slots, and is expected to leave 16 + m / 2048 of its m slots empty (its band's tail and its
// crowded buckets); layers continue until at most 256 keys are expected to be left, and the last
// layer has room for them and a sixteenth more. Where one standard Ribbon table is smaller
// (below about 3,000 keys: the tails of several small layers cost more than they save), the
// shape is that one table.
//
// Slots per key (the shape; below 5,278 keys writers take a wrapped table instead), and bits per
// key over r with 7-bit fingerprints, thresholds and trailer included (core_bench measures the
// same with each filter's false-positive rate):
//
//   keys                 1k      5k      10k     100k    1M      10M
//   bumped               1.0880  1.0240  1.0112  1.0016  1.0006  1.0005
//   standard Ribbon      1.0880  1.0496  1.0560  1.0861  1.1231  1.1610
//   bumped, 7 bits       1.1246  1.0368  1.0194  1.0064  1.0051  1.0050
//
// The thresholds cost 2 bits per bucket of 64 slots: 1/32 of a bit per slot, which is 0.4% of an
// 8-bit slot and 3% of a 1-bit one. With these sizes every first seed solved in 282 builds from 1
// to 300,000 keys (static_kinds_test.cc) and in the sweeps of math.cc.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "core/ribbon/math.h"

namespace sstfilter {

// Starts per bucket, and the thresholds a bucket's 2-bit code names: a key whose start lies at
// an offset below the threshold in its bucket is bumped. 64: the whole bucket is.
inline constexpr uint64_t kBumpedRibbonBucketStarts = 64;
inline constexpr int kBumpedRibbonThresholds[4] = {0, 16, 40, 64};
inline constexpr int kBumpedRibbonThresholdBits = 2;
// Layers at most (a 10M-key filter has 5).
inline constexpr int kBumpedRibbonMaxLayers = 8;

// The slots of each layer of a filter sized for num_keys keys (each a multiple of 64, at least
// 64; overloaded layers at least 128), the last holding every key that reaches it.
struct BumpedRibbonShape {
  uint64_t sized_for = 0;  // the key count (the trailer's num_units)
  int layers = 0;
  uint64_t slots[kBumpedRibbonMaxLayers] = {};

  uint64_t TotalSlots() const;
  // Buckets with a threshold code: those of every layer but the last.
  uint64_t ThresholdBuckets() const;
};

// The shape for num_keys >= 1 distinct keys (a function of num_keys alone: the trailer's
// num_units records it, and the format fixes this function).
Result<BumpedRibbonShape> BumpedRibbonShapeFor(uint64_t num_keys);

// Bytes of a body: the layers' tables (RibbonTableBytes each), then the threshold codes, 32 per
// 64-bit word.
uint64_t BumpedRibbonTableBytes(const BumpedRibbonShape& shape, int fingerprint_bits);

// What a filter for num_keys keys is written as: one wrapped standard Ribbon table
// (RibbonTableFor's: the kind's version 2) where that filter is no larger than the layers'
// (BumpedRibbonShapeFor) at 8-bit fingerprints, trailers included: up to 5,277 keys, and at some
// sizes up to 6,370, as the layers' whole blocks fall (the constants below); else the layers
// (version 1). So the kind is within 1.01x of the smaller of the two at 4- to 16-bit
// fingerprints (tests/core/bumped_ribbon_test.cc). A wrapped table needs neither the 63 slots
// past the last start nor whole blocks (core/ribbon/math.h), which a shape of one standard table
// pays for: 1,006 slots for 1,000 keys against 1,088. The writer's choice, not the format's: the
// trailer's version says which, and a reader still reads a version 1 filter of one standard
// table, as earlier releases wrote small sets.
struct BumpedRibbonTable {
  bool wrapped = false;
  uint64_t wrapped_slots = 0;  // when wrapped
  BumpedRibbonShape shape;     // when not
};
Result<BumpedRibbonTable> BumpedRibbonTableFor(uint64_t num_keys);
// Where BumpedRibbonTableFor's tables are wrapped: for every key count up to the first, for none
// above the second (tests/core/bumped_ribbon_test.cc holds both).
inline constexpr uint64_t kBumpedRibbonAlwaysWrappedKeys = 5277;
inline constexpr uint64_t kBumpedRibbonWrappedMaxKeys = 6370;
uint64_t BumpedRibbonTableBytes(const BumpedRibbonTable& table, int fingerprint_bits);

// The widest fingerprint whose table (BumpedRibbonTableFor's) for n keys fits a budget of b bits
// per key, at least 1.
Result<int> BumpedRibbonFingerprintBitsForBudget(double bits_per_key, uint64_t num_keys);

// Slots per key for large sets, rounded up (1M keys: 1.0008; thresholds excluded).
inline constexpr double kBumpedRibbonNominalSlotsPerKey = 1.001;

}  // namespace sstfilter
