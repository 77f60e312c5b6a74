#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long versions of the project's own checks, for the figures of docs/reliability.md. Each
# part is a test that CI runs short, run here at a size given on the command line; the figures
# are printed at the end.
#
#   scripts/soak.sh [--membership-checks N] [--crash-rounds N] [--concurrency-seconds S]
#                   [--fuzz-runs N] [--fuzz-jobs J] [--fuzz-split K]
#
# --membership-checks (default 1e9): filters of every kind, 1 to 10M keys, several widths, new key
#   sets until N single and batched checks of added keys ran; false negatives are counted
#   (Soak.EveryAddedKeyMatchesAtEverySizeAndWidth).
# --crash-rounds (default 100): SIGKILLs of a writer during synced writes, every acknowledged key
#   looked up after each (Crash.EveryAcknowledgedKeySurvivesSigkill), with and without a
#   memory_budget: N rounds each.
# --concurrency-seconds (default 600): readers and MultiGets while flushes, compactions and the
#   budget's rewrites replace the files under them
#   (PluginConcurrency.ReadsDuringFlushesAndCompactionsFindEveryKey): S seconds each, with and
#   without a memory_budget.
# --fuzz-runs (default 3e7): inputs per libFuzzer target (scripts/fuzz.sh --runs), --fuzz-jobs
#   targets at a time (default 1), --fuzz-split processes per target, N/K inputs each (default 1;
#   2 uses both cores for one slow target).
# A part given 0 is skipped. Numbers may be written 1e9. Release build from scripts/setup.sh;
# the fuzzers are clang ASan+UBSan builds. Exits 1 if any part failed, after running the others.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

membership=1e9
crash_rounds=100
concurrency_seconds=600
fuzz_runs=3e7
fuzz_jobs=1
fuzz_split=1
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "soak.sh: $1 needs a value (see the comment at the top)" >&2; exit 2; }
  case "$1" in
    --membership-checks) membership="$2" ;;
    --crash-rounds) crash_rounds="$2" ;;
    --concurrency-seconds) concurrency_seconds="$2" ;;
    --fuzz-runs) fuzz_runs="$2" ;;
    --fuzz-jobs) fuzz_jobs="$2" ;;
    --fuzz-split) fuzz_split="$2" ;;
    *) echo "soak.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
  shift 2
done
for v in "$membership" "$crash_rounds" "$concurrency_seconds" "$fuzz_runs" "$fuzz_jobs" \
  "$fuzz_split"; do
  [[ "$v" =~ ^[0-9]+(e[0-9]+)?$ ]] ||
    { echo "soak.sh: '$v' is not a whole number (1e9 allowed)" >&2; exit 2; }
done
is_zero() { [ "$(awk -v v="$1" 'BEGIN { print (v == 0) }')" = 1 ]; }

build=$("$root/scripts/setup.sh" | tail -n 1)
figures=()
failed=0

# Runs one gtest test with a soak knob set; keeps its "[ figures ]" line.
soak_test() {
  local part=$1 binary=$2 filter=$3 knob=$4 value=$5 log start=$SECONDS
  log=$(mktemp "${TMPDIR:-/tmp}/sstfilter_soak_${part}.XXXXXX")
  echo "soak.sh: $part ($knob=$value) ..." >&2
  if env "$knob=$value" "$build/tests/$binary" --gtest_filter="$filter" > "$log" 2>&1; then
    figures+=("$part: $(sed -n 's/^\[ figures  \] //p' "$log") ($((SECONDS - start)) s)")
    rm -f "$log"
  else
    figures+=("$part: FAILED after $((SECONDS - start)) s (log: $log)")
    failed=$((failed + 1))
  fi
}

is_zero "$membership" || soak_test membership core_tests \
  'Soak.EveryAddedKeyMatchesAtEverySizeAndWidth' SSTFILTER_SOAK_MEMBERSHIP_CHECKS "$membership"
is_zero "$crash_rounds" || soak_test crash plugin_tests \
  '*/Crash.EveryAcknowledgedKeySurvivesSigkill/*' SSTFILTER_SOAK_CRASH_ROUNDS "$crash_rounds"
is_zero "$concurrency_seconds" || soak_test concurrency plugin_tests \
  '*/PluginConcurrency.ReadsDuringFlushesAndCompactionsFindEveryKey/*' \
  SSTFILTER_SOAK_CONCURRENCY_SECONDS "$concurrency_seconds"
if ! is_zero "$fuzz_runs"; then
  echo "soak.sh: fuzzers (--runs $fuzz_runs --jobs $fuzz_jobs --split $fuzz_split) ..." >&2
  fuzz_log=$(mktemp "${TMPDIR:-/tmp}/sstfilter_soak_fuzz.XXXXXX")
  if "$root/scripts/fuzz.sh" --runs "$fuzz_runs" --jobs "$fuzz_jobs" --split "$fuzz_split" \
    > "$fuzz_log" 2>&1; then
    while read -r line; do figures+=("fuzz: $line"); done < <(grep "no crash" "$fuzz_log")
    rm -f "$fuzz_log"
  else
    figures+=("fuzz: FAILED (log: $fuzz_log)")
    failed=$((failed + 1))
  fi
fi

echo "soak.sh figures (commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)):"
for line in "${figures[@]}"; do echo "  $line"; done
[ "$failed" -eq 0 ]
