#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `scripts/bench.sh --budget`: sstfilter.Leveled's memory_budget as a database grows. Each
# database is filled from empty by db_bench_ext in production's shape (16 + 100-byte keys and
# values, 8 MiB files, 64 MiB level base, dynamic level bytes, the sstfilter.LeveledBudget
# listener, settled fill, no compression) with random (fillrandom) or ordered (fillseq) keys, or
# ordered with late data (`late`: fillseq with 1% of the keys written up to a memtable's worth of
# keys late, --late_fraction=0.01 --late_keys=144631; not in the default --orders), under
# {id=sstfilter.Leveled;memory_budget=B}: B a budget of 6 bits per key at the final size
# (0.75 bytes per key), and one budget of 1 MiB for every size; under leveled compaction, or
# universal (`--styles=universal`: RocksDB's defaults for it, the same files and memtables). Once
# the fill's compactions settle, it prints, per database:
#   bits/key         the live SST files' filters over their keys (--inspect_db);
#   settled/budget   those filters' bytes against the budget;
#   peak/budget      the most the live filters held at any account of the fill (the largest of
#                    the "their filters now N bytes" the policy logs as each file is written,
#                    counted by the listener after each flush and compaction, and the settled
#                    bytes), against the budget;
#   rewrites/tables  the files the listener rewrote for the budget ("memory_budget: rewriting
#                    ... OK" in the LOG) against the table files created (flushes, compaction
#                    outputs and rewrites);
#   written          the bytes of every table file created (the LOG's table_file_creation
#                    events: flushes, compactions, rewrites; the WAL not counted), in MiB, then
#                    the same for the same fill under sstfilter.Leveled:<the settled bits/key>
#                    (with the listener, no budget; `none` where those bits buy no filter, said
#                    under the row), and the ratio of the two.
#
#   scripts/bench.sh --budget [--nums=1000000,3000000,10000000] [--orders=random,ordered[,late]]
#       [--budgets=6bits,1048576] [--styles=level[,universal]] [--db=DIR]
#
# --budgets: a number of bytes, or Nbits (N bits per key at the final size). About 12 minutes on
# 2 cores at the defaults (each cell filled twice: under the budget, then at fixed bits).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ext=${DB_BENCH_EXT:-}
nums="1000000,3000000,10000000"
orders="random,ordered"
budgets="6bits,1048576"
styles="level"
db=${TMPDIR:-/tmp}/sstfilter_bench_budget
die() { echo "bench.sh --budget: $*" >&2; exit 2; }
# shellcheck source=scripts/args.sh
source "$root/scripts/args.sh"
ParseArgs "nums=nums orders=orders budgets=budgets styles=styles db=db" "$@"
SplitEach nums "$nums" '[1-9][0-9]*' 'a count' num_list
SplitEach orders "$orders" 'random|ordered|late' 'random, ordered or late' order_list
SplitEach budgets "$budgets" '[1-9][0-9]*(bits)?' 'bytes or Nbits' budget_list
SplitEach styles "$styles" 'level|universal' 'level or universal' style_list
if [ -z "$ext" ]; then
  ext="$("$root/scripts/setup.sh" | tail -n 1)/db_bench_ext/db_bench_ext"
fi
[ -x "$ext" ] || die "no $ext (build first, or set DB_BENCH_EXT)"

common=(--settled_fill --compression_type=none --target_file_size_base=8388608
  --max_bytes_for_level_base=67108864 --level_compaction_dynamic_level_bytes
  --listeners=sstfilter.LeveledBudget --plot=)
# Fill(NUM, ORDER, URI, STYLE): a database filled from empty at $db.
Fill() {
  local fill=(--benchmarks=fillrandom)
  [ "$2" = ordered ] && fill=(--benchmarks=fillseq)
  # A memtable (16 MiB) holds 144,631 keys and values of 116 bytes.
  [ "$2" = late ] && fill=(--benchmarks=fillseq --late_fraction=0.01 --late_keys=144631)
  rm -rf "$db"
  "$ext" --db="$db" "${common[@]}" --num="$1" "${fill[@]}" --filter_uri="$3" \
    --compaction_style="$4" > /dev/null
}
# The bytes of the table files the database at $db created, by its LOG (%.0f: mawk's %d stops at
# 2^31 - 1).
WrittenBytes() {
  cat "$db"/policy0/LOG* | grep '"event": "table_file_creation"' |
    grep -o '"file_size": [0-9]*' | awk '{ sum += $2 } END { printf "%.0f", sum }'
}
start=$SECONDS
printf "%-10s %-8s %-9s %-10s %8s %14s %11s %16s %10s %10s %13s\n" keys order style budget \
  bits/key settled/budget peak/budget rewrites/tables "MiB written" "at fixed" "written/fixed"
for budget in "${budget_list[@]}"; do
  for num in "${num_list[@]}"; do
    bytes=$budget
    [[ "$budget" == *bits ]] && bytes=$(( num * ${budget%bits} / 8 ))
    for order in "${order_list[@]}"; do
      for style in "${style_list[@]}"; do
        Fill "$num" "$order" "{id=sstfilter.Leveled;memory_budget=$bytes}" "$style"
        report=$("$ext" --inspect_db="$db/policy0")
        bits=$(awk '$1 ~ /\.sst$/ { keys += $4; bytes += $5 }
                    END { printf "%.2f", keys ? 8 * bytes / keys : 0 }' <<< "$report")
        settled=$(sed -n 's/.*its filters \([0-9]*\) bytes, [0-9.]*x the budget.*/\1/p' <<< "$report")
        peak=$(cat "$db"/policy0/LOG* | sed -n 's/.*their filters now \([0-9]*\) bytes.*/\1/p' |
          awk -v s="${settled:-0}" 'BEGIN { m = s } $1 > m { m = $1 } END { print m }')
        rewrites=$(cat "$db"/policy0/LOG* | grep -c "memory_budget: rewriting .*): OK" || true)
        tables=$(cat "$db"/policy0/LOG* | grep -c '"event": "table_file_creation"' || true)
        written=$(WrittenBytes)
        # A tree that settled below the bits per key of any filter (a budget buying too little
        # for a filter of one level) is compared with no filter, which the policy then refuses.
        fixed_uri="sstfilter.Leveled:$bits"
        if ! Fill "$num" "$order" "$fixed_uri" "$style" 2> "$db.err"; then
          grep -q "too small for any filter" "$db.err" || { cat "$db.err" >&2; exit 1; }
          fixed_uri=none
          Fill "$num" "$order" "$fixed_uri" "$style"
        fi
        fixed=$(WrittenBytes)
        awk -v n="$num" -v o="$order" -v st="$style" -v b="$bytes" -v bits="$bits" \
          -v s="${settled:-0}" -v p="$peak" -v r="$rewrites / $tables" -v w="$written" \
          -v f="$fixed" 'BEGIN {
          printf "%-10s %-8s %-9s %-10s %8s %13.3fx %10.3fx %16s %10.1f %10.1f %12.3fx\n", n, o,
            st, b, bits, s / b, p / b, r, w / 1048576, f / 1048576, (f > 0 ? w / f : 0) }'
        [ "$fixed_uri" = none ] &&
          echo "  (at $bits bits/key no filter: the fixed-bits fill is --filter_uri=none)"
      done
    done
  done
done
rm -rf "$db" "$db.err"
echo "took $((SECONDS - start)) s"
