#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: sets the machine up if needed, builds, and runs every test through
# ctest. With --sanitize it does the same in an ASan+UBSan build (build-sanitize/); with --tsan it
# runs core's concurrency tests in a ThreadSanitizer build (build-tsan/).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" "$@" | tail -n 1)
cd "$build_dir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
if [ "${1:-}" = "--tsan" ]; then
  # Exactly the CoreConcurrency suite (tests/core/concurrency_test.cc); --no-tests=error fails the
  # run if a rename leaves the pattern matching nothing, instead of passing with zero tests.
  ctest --output-on-failure -j "$(nproc)" --no-tests=error -R '^CoreConcurrency\.'
else
  ctest --output-on-failure -j "$(nproc)"
fi
