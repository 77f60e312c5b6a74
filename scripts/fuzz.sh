#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a bounded time or number of
# inputs, starting from the seed corpus in tests/fuzz/corpus/<target>/. Fails on any crash, leak,
# sanitizer report or false negative (the targets trap on one).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60; CI's pass)
#   scripts/fuzz.sh --runs N [--jobs J]      (N inputs per target, e.g. 3e7 for scripts/soak.sh;
#                                             J targets at a time, default 1)
#   ... --only TARGET [--only TARGET]        (just these targets, e.g. --only builder_fuzzer)
#   ... --split K                            (with --runs: each target as K processes of N/K
#                                             inputs, seeds 1..K, to use K cores; counts summed)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=60
runs=""
jobs=1
only=()
split=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:-}"; shift ;;
    --jobs) jobs="${2:-}"; shift ;;
    --only) only+=("${2:-}"); shift ;;
    --split) split="${2:-}"; shift ;;
    *) seconds="$1" ;;
  esac
  shift
done
# 3e7 is accepted for 30000000.
[[ "$runs" =~ ^[0-9]+e[0-9]+$ ]] && runs=$(awk -v v="$runs" 'BEGIN { printf "%.0f", v }')
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] ||
  { echo "fuzz.sh: SECONDS_PER_TARGET must be a positive integer, got '$seconds'" >&2; exit 2; }
[ -z "$runs" ] || { [[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -gt 0 ]; } ||
  { echo "fuzz.sh: --runs takes a positive whole number (3e7 allowed), got '$runs'" >&2; exit 2; }
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] ||
  { echo "fuzz.sh: --jobs takes a positive integer, got '$jobs'" >&2; exit 2; }
[[ "$split" =~ ^[0-9]+$ ]] && [ "$split" -gt 0 ] ||
  { echo "fuzz.sh: --split takes a positive integer, got '$split'" >&2; exit 2; }
[ "$split" -eq 1 ] || [ -n "$runs" ] ||
  { echo "fuzz.sh: --split needs --runs (it divides the inputs between processes)" >&2; exit 2; }

# The slowest first, so that with --jobs the others share the remaining cores while it runs.
targets=(options_fuzzer builder_fuzzer reader_fuzzer range_fuzzer dump_fuzzer)
if [ ${#only[@]} -gt 0 ]; then
  for target in "${only[@]}"; do
    [[ " ${targets[*]} " == *" $target "* ]] ||
      { echo "fuzz.sh: --only takes one of ${targets[*]}, got '$target'" >&2; exit 2; }
  done
  targets=("${only[@]}")
fi

# The normal set-up first (packages, and proof that the tree builds), then clang's.
"$root/scripts/setup.sh" > /dev/null
"$root/scripts/install-packages.sh" fuzz.sh clang libclang-rt-14-dev

build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSSTFILTER_FUZZ=ON -DSSTFILTER_BENCHMARKS=OFF -DBUILD_TESTING=OFF > /dev/null
cmake --build "$build" -j "$(nproc)" --target reader_fuzzer builder_fuzzer options_fuzzer range_fuzzer dump_fuzzer \
  > /dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -n "$runs" ]; then bound=(-runs="$(( (runs + split - 1) / split ))"); what="$runs inputs"
else bound=(-max_total_time="$seconds"); what="${seconds}s"; fi

# One target, as `split` processes (seeds 1..split): their logs in $build/<target>.log (or
# <target>.<seed>.log), the verdict in $build/<target>.verdict.
fuzz_one() {
  local target=$1 corpus start=$SECONDS pids=() logs=() failed=0 total=0
  corpus=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/${target%_fuzzer}/"* "$corpus/"
  for ((seed = 1; seed <= split; seed++)); do
    local log="$build/$target.log"
    [ "$split" -eq 1 ] || log="$build/$target.$seed.log"
    local seed_flag=()
    [ "$split" -eq 1 ] || seed_flag=(-seed="$seed")
    "$build/tests/fuzz/$target" "${bound[@]}" "${seed_flag[@]}" -print_final_stats=1 \
      -max_len=4096 -rss_limit_mb=4096 -artifact_prefix="$build/$target-" "$corpus" \
      > "$log" 2>&1 &
    pids+=($!)
    logs+=("$log")
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      total=$((total + $(awk '/stat::number_of_executed_units/ { print $2 }' "${logs[$i]}")))
    else
      failed=1
      { echo "$target: FAILED after $((SECONDS - start)) s (log: ${logs[$i]})"
        grep -E "ERROR|SUMMARY|runtime error|deadly signal|Test unit written" "${logs[$i]}" |
          head -20
      } >> "$build/$target.verdict"
    fi
  done
  [ "$failed" -eq 1 ] ||
    echo "$target: $total inputs in $((SECONDS - start)) s$([ "$split" -eq 1 ] ||
      echo " ($split processes)"), no crash, leak or false negative" > "$build/$target.verdict"
  rm -rf "$corpus"
}

running=0
for target in "${targets[@]}"; do
  rm -f "$build/$target.verdict"
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
passed=0
failed=0
for target in "${targets[@]}"; do
  if grep -q "no crash" "$build/$target.verdict" 2>/dev/null; then
    cat "$build/$target.verdict"
    passed=$((passed + 1))
  else
    cat "$build/$target.verdict" >&2 2>/dev/null || echo "$target: no verdict ($what)" >&2
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
