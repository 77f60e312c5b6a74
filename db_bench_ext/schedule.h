// SPDX-License-Identifier: Apache-2.0
// The order in which benchmarks run: the sizing calculator once, then every policy's benchmarks in
// --benchmarks order (a line per benchmark as it ends), then --rounds rounds of the read
// benchmarks, interleaved across the policies so that the machine's drift hits all alike.
#pragma once

#include <vector>

#include "db_bench_ext/flags.h"
#include "db_bench_ext/measure.h"

namespace db_bench_ext {

// A result per policy, in --filter_uri order; empty if only the sizing calculator ran.
std::vector<PolicyResult> RunBenchmarks(const Config& config);

}  // namespace db_bench_ext
