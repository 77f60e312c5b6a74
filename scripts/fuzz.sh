#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a bounded time or number of
# inputs, starting from the seed corpus in tests/fuzz/corpus/<target>/. Fails on any crash, leak,
# sanitizer report or false negative (the targets trap on one).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60; CI's pass)
#   scripts/fuzz.sh --runs N [--jobs J]      (N inputs per target, e.g. 3e7 for scripts/soak.sh;
#                                             J targets at a time, default 1)
#   ... --only TARGET [--only TARGET]        (just these targets, e.g. --only builder_fuzzer)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=60
runs=""
jobs=1
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:-}"; shift ;;
    --jobs) jobs="${2:-}"; shift ;;
    --only) only+=("${2:-}"); shift ;;
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

# The slowest first, so that with --jobs the others share the remaining cores while it runs.
targets=(options_fuzzer builder_fuzzer reader_fuzzer)
if [ ${#only[@]} -gt 0 ]; then
  for target in "${only[@]}"; do
    [[ " ${targets[*]} " == *" $target "* ]] ||
      { echo "fuzz.sh: --only takes one of ${targets[*]}, got '$target'" >&2; exit 2; }
  done
  targets=("${only[@]}")
fi

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
if [ -n "$runs" ]; then bound=(-runs="$runs"); what="$runs inputs"
else bound=(-max_total_time="$seconds"); what="${seconds}s"; fi

# One target: its log in $build/<target>.log, its verdict in $build/<target>.verdict.
fuzz_one() {
  local target=$1 corpus log
  corpus=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/${target%_fuzzer}/"* "$corpus/"
  log="$build/$target.log"
  local start=$SECONDS
  if "$build/tests/fuzz/$target" "${bound[@]}" -print_final_stats=1 \
       -max_len=4096 -rss_limit_mb=4096 -artifact_prefix="$build/$target-" "$corpus" \
       > "$log" 2>&1; then
    local done_runs
    done_runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
    echo "$target: $done_runs inputs in $((SECONDS - start)) s, no crash, leak or false negative" \
      > "$build/$target.verdict"
  else
    { echo "$target: FAILED after $((SECONDS - start)) s (log: $log)"
      grep -E "ERROR|SUMMARY|runtime error|deadly signal|Test unit written" "$log" | head -20
    } > "$build/$target.verdict"
  fi
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
