#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `scripts/bench.sh --budget`: sstfilter.Leveled's memory_budget as a database grows. Each
# database is filled from empty by db_bench_ext in production's shape (16 + 100-byte keys and
# values, 8 MiB files, 64 MiB level base, dynamic level bytes, the sstfilter.LeveledBudget
# listener, settled fill, no compression) with random (fillrandom) or ordered (fillseq) keys, under
# {id=sstfilter.Leveled;memory_budget=B}: B a budget of 6 bits per key at the final size
# (0.75 bytes per key), and one budget of 1 MiB for every size. Once the fill's compactions
# settle, it prints, per database: the bits per key of the live SST files' filters, their bytes
# against the budget (--inspect_db), and the files the listener rewrote for the budget
# ("memory_budget: rewriting ... OK" in the LOG) against the table files created (flushes,
# compaction outputs and rewrites).
#
#   scripts/bench.sh --budget [--nums=1000000,3000000,10000000] [--orders=random,ordered]
#       [--budgets=6bits,1048576] [--db=DIR]
#
# --budgets: a number of bytes, or Nbits (N bits per key at the final size). About 6 minutes on
# 2 cores at the defaults.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ext=${DB_BENCH_EXT:-}
nums="1000000,3000000,10000000"
orders="random,ordered"
budgets="6bits,1048576"
db=${TMPDIR:-/tmp}/sstfilter_bench_budget
die() { echo "bench.sh --budget: $*" >&2; exit 2; }
# shellcheck source=scripts/args.sh
source "$root/scripts/args.sh"
ParseArgs "nums=nums orders=orders budgets=budgets db=db" "$@"
SplitEach nums "$nums" '[1-9][0-9]*' 'a count' num_list
SplitEach orders "$orders" 'random|ordered' 'random or ordered' order_list
SplitEach budgets "$budgets" '[1-9][0-9]*(bits)?' 'bytes or Nbits' budget_list
if [ -z "$ext" ]; then
  ext="$("$root/scripts/setup.sh" | tail -n 1)/db_bench_ext/db_bench_ext"
fi
[ -x "$ext" ] || die "no $ext (build first, or set DB_BENCH_EXT)"

common=(--settled_fill --compression_type=none --target_file_size_base=8388608
  --max_bytes_for_level_base=67108864 --level_compaction_dynamic_level_bytes
  --listeners=sstfilter.LeveledBudget --plot=)
start=$SECONDS
printf "%-10s %-8s %-12s %10s %16s %18s\n" keys order budget bits/key "filters/budget" \
  "rewrites/tables"
for budget in "${budget_list[@]}"; do
  for num in "${num_list[@]}"; do
    bytes=$budget
    [[ "$budget" == *bits ]] && bytes=$(( num * ${budget%bits} / 8 ))
    for order in "${order_list[@]}"; do
      fill=fillrandom
      [ "$order" = ordered ] && fill=fillseq
      rm -rf "$db"
      "$ext" --db="$db" "${common[@]}" --num="$num" --benchmarks="$fill" \
        --filter_uri="{id=sstfilter.Leveled;memory_budget=$bytes}" > /dev/null
      report=$("$ext" --inspect_db="$db/policy0")
      bits=$(awk '$1 ~ /\.sst$/ { keys += $4; bytes += $5 }
                  END { printf "%.2f", keys ? 8 * bytes / keys : 0 }' <<< "$report")
      ratio=$(sed -n 's/.*its filters [0-9]* bytes, \([0-9.]*\)x the budget.*/\1/p' <<< "$report")
      rewrites=$(cat "$db"/policy0/LOG* | grep -c "memory_budget: rewriting .*): OK" || true)
      tables=$(cat "$db"/policy0/LOG* | grep -c '"event": "table_file_creation"' || true)
      printf "%-10s %-8s %-12s %10s %15sx %18s\n" "$num" "$order" "$bytes" "$bits" "${ratio:-?}" \
        "$rewrites / $tables"
    done
  done
done
rm -rf "$db"
echo "took $((SECONDS - start)) s"
