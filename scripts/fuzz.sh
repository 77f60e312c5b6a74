#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a bounded time, starting from
# the seed corpus in tests/fuzz/corpus/<target>/. Fails on any crash, leak, sanitizer report or
# false negative (the targets trap on one).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] ||
  { echo "fuzz.sh: SECONDS_PER_TARGET must be a positive integer, got '$seconds'" >&2; exit 2; }

# The normal set-up first (packages, and proof that the tree builds), then clang's.
"$root/scripts/setup.sh" > /dev/null
missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSSTFILTER_FUZZ=ON -DSSTFILTER_BENCHMARKS=OFF -DBUILD_TESTING=OFF > /dev/null
cmake --build "$build" -j "$(nproc)" --target reader_fuzzer builder_fuzzer options_fuzzer > /dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0
failed=0
for target in reader_fuzzer builder_fuzzer options_fuzzer; do
  corpus=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/${target%_fuzzer}/"* "$corpus/"
  log="$build/$target.log"
  if "$build/tests/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 \
       -max_len=4096 -rss_limit_mb=4096 -artifact_prefix="$build/$target-" "$corpus" \
       > "$log" 2>&1; then
    runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
    echo "$target: $runs inputs in ${seconds}s, no crash, leak or false negative"
    passed=$((passed + 1))
  else
    echo "$target: FAILED (log: $log)" >&2
    grep -E "ERROR|SUMMARY|runtime error|deadly signal|Test unit written" "$log" | head -20 >&2
    failed=$((failed + 1))
  fi
  rm -rf "$corpus"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
