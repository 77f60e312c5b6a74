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
// In core_bench the kernels answer faster than their scalar twins and RocksDB's bloomfilter:10,
// in the caches and beyond them in batches. A single miss beyond the caches costs the memory's
// latency: a query that only reads the block's two lines costs about as much as the kernel, so no
// kernel design can win there (figures and the designs tried: docs/history.md).
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
