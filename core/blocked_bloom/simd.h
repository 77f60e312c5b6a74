// SPDX-License-Identifier: Apache-2.0
// The blocked Bloom filter's SIMD kernels (core/blocked_bloom/simd.cc), compiled for every
// SIMD target Google Highway offers on the architecture (x86: SSSE3, SSE4, AVX2, AVX-512; ARM:
// NEON, SVE; and a scalar fallback) and chosen at run time, on first use, from what the CPU has.
//
// Each kernel is the twin of a scalar one in core/blocked_bloom/blocked_bloom.h/.cc and gives the
// same answers for the same inputs, bit for bit; the tests run every target this CPU supports
// against the scalar twins (tests/core/blocked_bloom_simd_test.cc). The build has a vector twin
// on AVX-512 only (simd.cc says why the other targets build with the scalar one); the bytes it
// writes are the scalar build's, so a filter never depends on the CPU that built it.
//
// The vectors hold the probes of one key: its probe positions are computed in lanes (one window of
// the product per lane), each lane fetches its word of the key's 64-byte block with a table lookup
// across the block's words (one register on AVX-512, two on AVX2, four on SSE4 and NEON), and one
// comparison answers for all of them: no branch on the bits, about a dozen vector instructions for
// the 7 probes of 10 bits/key on AVX-512.
//
// Measured (core_bench, 10 bits/key, fastest of 3 interleaved repetitions, one run per size,
// AVX-512, ns per key, RocksDB 7.8.3's bloomfilter:10 in the same run):  hit   miss   batched miss
//   1M keys   SIMD kernels                                                9.4    9.4     6.3
//             scalar twins                                               13.7   13.8     9.1
//             RocksDB bloomfilter:10                                     13.4   21.3    21.9
//   20M keys  SIMD kernels                                               62.7   61.2    13.0
//             scalar twins                                               90.3   88.6    14.2
//             RocksDB bloomfilter:10                                     85.3   67.2    22.5
//
// Single misses beyond the caches: at 40M keys (50 MB of filter, beyond this machine's 32 MiB
// L3) the kernel took 52.0-53.9 ns in four runs of 56fae6c and 29d5ac0 against RocksDB's
// 65.7-77.7 ns, 0.68x-0.81x; a query that hashed its key and read one byte of each of the block's
// two cache lines, without testing the probes, took 50.4-50.9 ns in two runs of an experiment on
// 7790b4d, where the kernel through its reader took 52.5-53.1: what is left is the memory. (At 20M
// keys the 25 MB filter straddles the L3, and single queries vary with what else it holds:
// RocksDB's took 46 to 72 ns from run to run.) Before 56fae6c core_bench queried through
// FilterReader's per-query dispatch, which the plugin does not use, and that alone cost 12 ns a
// miss at 40M keys; the kernels tried then and measured no faster at 20M (testing first the probes
// in the larger of the block's two lines, through masked loads; up to 7 probes without the loop;
// the block as four 16-byte loads; fewer operations dependent on the load) were judged through it.
// The last was measured again at 40M through FilterReader: 65.1-67.4 ns against this kernel's
// 64.6-65.4, no faster. The AVX2 kernels took 65-66 ns against AVX-512's 62 at 20M.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/batch.h"

namespace sstfilter {

// The same as BlockedBloomReader::MayContainBatch over blocks[0, num_blocks) with num_probes
// probes.
void BlockedBloomMayContainBatchSimd(const uint8_t* blocks, uint64_t num_blocks, int num_probes,
                                     const uint64_t* hashes, size_t count, bool* may_match,
                                     BatchPrefetch prefetch);

// The single-key kernel, BlockedBloomReader::MatchInBlock's twin, or nullptr while the kernels
// are switched off. A pointer to the dispatched target's function: readers take it once, not per
// key.
using BlockedBloomMatchFn = bool (*)(const uint8_t* block, uint64_t hash, int num_probes);
BlockedBloomMatchFn BlockedBloomMatchKernel();

// Sets the probes of hashes[0, n) in body (num_blocks blocks): BlockedBloom::SetBitsScalar's
// bytes, written in lanes where this CPU's target has a vector build (BlockedBloomVectorBuild).
void BlockedBloomSetBitsSimd(int num_probes, uint64_t num_blocks, const uint64_t* hashes,
                             uint64_t n, uint8_t* body);

// Whether builds run in lanes here (AVX-512, while the kernels are switched on), for benchmark
// reports and for the tests.
bool BlockedBloomVectorBuild();

// The name of the target the kernels run on here ("AVX3", "AVX2", "SSE4", "NEON", "EMU128", ...),
// or "scalar" while they are switched off, for benchmark reports.
const char* BlockedBloomSimdTarget();

// Switches the kernels off (false: the functions above run or return their scalar twins) or back
// on, for the whole process; on by default. Batches and builds see the switch on their next call; a
// reader takes its single-query kernel when it opens, so readers opened before keep theirs. For
// benchmarks that compare the two, and as a way out should a target ever misbehave: the answers
// are the same either way.
void SetBlockedBloomSimdEnabled(bool enabled);

}  // namespace sstfilter
