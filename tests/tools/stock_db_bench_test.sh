#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stock RocksDB tools with libsstfilter.so preloaded: Debian's /usr/bin/db_bench runs, through
# db_bench_ext/stock_db_bench.sh, with an OPTIONS file naming sstfilter.Cuckoo, and its
# statistics must show the filter answering "no" for absent keys at about its rate; sst_dump
# names the policy and ldb reads the database; an OPTIONS file naming sstfilter.RangeFilter gives
# the files range filters. The script also sets sstfilter.NoTrivialMove,
# and fails when RocksDB drops a policy it cannot load. The same run without the preload
# is the control: RocksDB then silently drops the policy, and the filter is never consulted.
#
#   stock_db_bench_test.sh /path/to/libsstfilter.so
set -euo pipefail
lib=$(readlink -f "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
common=("--benchmarks=fillrandom,readrandom" --num=100000 --reads=50000 --key_size=16
        --value_size=100 --statistics --seed=1)

ticker() {  # $1: output file, $2: ticker name
  awk -v name="$2" '$1 == name && $2 == "COUNT" { print $4 }' "$1"
}

# Through db_bench_ext/stock_db_bench.sh, which preloads the library and writes the OPTIONS file.
SSTFILTER_LIB="$lib" bash "$src/db_bench_ext/stock_db_bench.sh" \
  --filter_uri='{id=sstfilter.Cuckoo;fp_rate=0.001}' --write_buffer_size=1048576 \
  --options_out="$work/options.ini" --db="$work/with" "${common[@]}" \
  > "$work/with.out" 2> "$work/with.err"
useful=$(ticker "$work/with.out" rocksdb.bloom.filter.useful)
positive=$(ticker "$work/with.out" rocksdb.bloom.filter.full.positive)
true_positive=$(ticker "$work/with.out" rocksdb.bloom.filter.full.true.positive)
echo "with the plugin: useful=$useful full.positive=$positive true.positive=$true_positive"
[ "${useful:-0}" -gt 10000 ] || { echo "FAIL: the filter did not reject absent keys" >&2; exit 1; }
false_positives=$((positive - true_positive))
# At 0.1%, 10x the target over ~100k checks is far outside chance.
[ $((false_positives * 100)) -lt $((useful + false_positives)) ] ||
  { echo "FAIL: false positives $false_positives of $((useful + false_positives))" >&2; exit 1; }
grep -q 'filter_policy={id=sstfilter.Cuckoo;fp_rate=0.001' "$work"/with/OPTIONS-* ||
  { echo "FAIL: the database's OPTIONS file does not name the policy" >&2; exit 1; }

sst=$(ls "$work"/with/*.sst | head -n 1)
LD_PRELOAD="$lib" sst_dump --file="$sst" --show_properties > "$work/sst_dump.out" 2>&1
grep -q "filter policy name: sstfilter.Cuckoo" "$work/sst_dump.out" ||
  { echo "FAIL: sst_dump does not show the policy" >&2; exit 1; }
LD_PRELOAD="$lib" ldb --db="$work/with" --try_load_options scan --max_keys=3 > "$work/ldb.out" \
  2> "$work/ldb.err"
[ "$(wc -l < "$work/ldb.out")" -eq 3 ] || { echo "FAIL: ldb could not scan" >&2; exit 1; }

# An OPTIONS file naming the policy with a value it refuses: RocksDB drops the error while it loads
# the file, and ldb opened the database with the policy as far as it was configured (here the
# default layout) and exited 0. It must fail, saying why.
# A misspelt option is refused too (ldb took RocksDB's NotFound for "no OPTIONS file" and opened
# the database with default options).
bad_value() {  # $1: the filter_policy value, $2: what the error must say
  rm -rf "$work/bad_value"
  cp -r "$work/with" "$work/bad_value"
  local options_file
  options_file=$(ls "$work"/bad_value/OPTIONS-* | sort | tail -n 1)
  sed -i "s|^\( *filter_policy=\).*|\1$1|" "$options_file"
  if LD_PRELOAD="$lib" ldb --db="$work/bad_value" --try_load_options get k > /dev/null \
    2> "$work/bad_value.err"; then
    echo "FAIL: ldb opened a database whose OPTIONS file names $1" >&2; exit 1
  fi
  grep -q "$2" "$work/bad_value.err" ||
    { echo "FAIL: no clear error for $1" >&2; cat "$work/bad_value.err" >&2; exit 1; }
}
bad_value '{id=sstfilter.Bloom;bits_per_key=10;layout=Standard}' \
  "layout must be blocked or standard, got 'Standard'"
bad_value '{id=sstfilter.Bloom;bits_per_key=10;colour=blue}' 'sstfilter.Bloom: .*colour'

# sstfilter.Leveled with sstfilter.NoTrivialMove, which db_bench has no flag for: the script puts
# it in the OPTIONS file. Sequential keys never overlap, so without it RocksDB moves files down
# unchanged (the control: "Moved" in the LOG); with it, every file is rewritten.
moves() {  # $1: --sst_partitioner_factory flag or "", $2: database
  SSTFILTER_LIB="$lib" bash "$src/db_bench_ext/stock_db_bench.sh" --filter_uri=sstfilter.Leveled:10 \
    --write_buffer_size=262144 ${1:+"$1"} --db="$2" --benchmarks=fillseq --num=200000 --key_size=16 \
    --value_size=100 > "$2.out" 2>&1
  # "[default] Moved #4 files to level-1": a trivial move. A bare 'Moved' also matched the
  # "Moved(GB)" column of the statistics that RocksDB dumps into the LOG when a run is slow (a
  # loaded machine), and failed the test with no move made.
  grep -c '\] Moved #[0-9]* files to level' "$2/LOG" || true
}
with_moves=$(moves --sst_partitioner_factory=sstfilter.NoTrivialMove "$work/leveled")
without_moves=$(moves "" "$work/leveled_moves")
echo "sstfilter.Leveled, fillseq: $with_moves trivial moves with sstfilter.NoTrivialMove," \
  "$without_moves without"
grep -q 'sst_partitioner_factory=sstfilter.NoTrivialMove' "$work"/leveled/OPTIONS-* ||
  { echo "FAIL: the database's OPTIONS file does not name the partitioner" >&2; exit 1; }
[ "$without_moves" -gt 0 ] && [ "$with_moves" -eq 0 ] ||
  { echo "FAIL: the partitioner did not stop trivial moves" >&2; exit 1; }

# sstfilter.Leveled with the sstfilter.LeveledBudget listener, which db_bench has no flag for
# either: the script puts it in the OPTIONS file's DBOptions, and RocksDB keeps it; a misspelt
# name fails the script.
SSTFILTER_LIB="$lib" bash "$src/db_bench_ext/stock_db_bench.sh" --filter_uri=sstfilter.Leveled:10 \
  --listeners=sstfilter.LeveledBudget --write_buffer_size=262144 --db="$work/budget" \
  --benchmarks=fillseq --num=200000 --key_size=16 --value_size=100 > "$work/budget.out" 2>&1
grep -q '^ *listeners={.*sstfilter.LeveledBudget' "$work"/budget/OPTIONS-* ||
  { echo "FAIL: the database's OPTIONS file does not name the listener" >&2; exit 1; }
if SSTFILTER_LIB="$lib" bash "$src/db_bench_ext/stock_db_bench.sh" --filter_uri=sstfilter.Leveled:10 \
  --listeners=sstfilter.LeveledBudgt --db="$work/misspelt_listener" --benchmarks=fillseq --num=1000 \
  > "$work/misspelt_listener.out" 2> "$work/misspelt_listener.err"; then
  echo "FAIL: a misspelt listener ran without it and exited 0" >&2; exit 1
fi
grep -q 'RocksDB dropped listeners=sstfilter.LeveledBudgt' "$work/misspelt_listener.err" ||
  { echo "FAIL: no clear error for a misspelt listener" >&2; exit 1; }

# A name RocksDB cannot load is not silently run without a filter: the script fails.
if SSTFILTER_LIB="$lib" bash "$src/db_bench_ext/stock_db_bench.sh" --filter_uri=sstfilter.Blom:10 \
  --db="$work/misspelt" --benchmarks=fillseq --num=1000 > "$work/misspelt.out" 2> "$work/misspelt.err"; then
  echo "FAIL: a misspelt policy ran without a filter and exited 0" >&2; exit 1
fi
grep -q 'RocksDB dropped filter_policy=sstfilter.Blom:10' "$work/misspelt.err" ||
  { echo "FAIL: no clear error for a misspelt policy" >&2; exit 1; }

# sstfilter.RangeFilter named in an OPTIONS file: stock db_bench writes range filters into the SST
# files' properties (sst_dump shows them), and the database's OPTIONS file keeps the collector.
cat > "$work/range.ini" <<INI
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1
[DBOptions]
  create_if_missing=true
[CFOptions "default"]
  write_buffer_size=262144
  table_properties_collectors={id=sstfilter.RangeFilter;bits_per_key=12}
[TableOptions/BlockBasedTable "default"]
INI
LD_PRELOAD="$lib" db_bench --options_file="$work/range.ini" --db="$work/range" \
  --benchmarks=fillseq --num=20000 --key_size=16 --value_size=100 > "$work/range.out" 2>&1
grep -q 'table_properties_collectors={{id=sstfilter.RangeFilter;bits_per_key=12' \
  "$work"/range/OPTIONS-* ||
  { echo "FAIL: the database's OPTIONS file does not name the range filter collector" >&2; exit 1; }
range_sst=$(ls "$work"/range/*.sst | head -n 1)
LD_PRELOAD="$lib" sst_dump --file="$range_sst" --show_properties > "$work/range_dump.out" 2>&1
grep -q '# sstfilter.range: 0x5353545201' "$work/range_dump.out" ||
  { echo "FAIL: sst_dump shows no range filter property" >&2; exit 1; }
echo "sstfilter.RangeFilter from an OPTIONS file: sst_dump shows $(basename "$range_sst")'s" \
  "range filter"

# The control: no preload, the policy is silently dropped.
db_bench --options_file="$work/options.ini" --db="$work/without" "${common[@]}" \
  > "$work/without.out" 2> "$work/without.err"
useful=$(ticker "$work/without.out" rocksdb.bloom.filter.useful)
echo "without the plugin: useful=$useful (RocksDB dropped the policy it could not load)"
[ "${useful:-0}" -eq 0 ] || { echo "FAIL: control run used a filter" >&2; exit 1; }
# Runs a command that must fail (a script given an argument it cannot take) with one line on
# stderr that says $1.
refuses() {
  local message=$1
  shift
  if "$@" > /dev/null 2> "$work/refused.err"; then
    echo "FAIL: accepted: $*" >&2; exit 1
  fi
  [ "$(wc -l < "$work/refused.err")" -eq 1 ] && grep -q "$message" "$work/refused.err" ||
    { echo "FAIL: no one-line error saying '$message': $*" >&2; cat "$work/refused.err" >&2; exit 1; }
}
# scripts/block_cache_bench.sh: one small build per config, a row per config and policy with
# bits/key, ops/sec and the filter blocks read; a config it does not know is one line and exit 2.
build=$(dirname "$(dirname "$lib")")
bcb=(env SSTFILTER_LIB="$lib" DB_BENCH_EXT="$build/db_bench_ext/db_bench_ext"
     bash "$src/scripts/block_cache_bench.sh" --db="$work/bcb")
"${bcb[@]}" --builds=1 --num=200000 --configs=whole,pinned --filter_uri=sstfilter.BumpedRibbon:10 \
  > "$work/bcb.out"
cat "$work/bcb.out"
[ "$(grep -Ec '^(whole|pinned) +sstfilter.BumpedRibbon:10 +[0-9]+\.[0-9]+ +[0-9]+ \([0-9]+\)$' "$work/bcb.out")" -eq 2 ] ||
  { echo "FAIL: block_cache_bench.sh did not print a row per config" >&2; exit 1; }
refuses "unknown config bogus" "${bcb[@]}" --configs=bogus
# scripts/bench_tight.sh (scripts/bench.sh --tight), small: one build, one cache and
# distribution, full and partitioned filters (their fills two at a time); a row per policy, the
# ratios on sstfilter's; a cache it cannot read is one line and exit 2.
tight=(env DB_BENCH_EXT="$build/db_bench_ext/db_bench_ext" bash "$src/scripts/bench_tight.sh"
       --db="$work/tight")
"${tight[@]}" --builds=1 --num=20000 --reads=2000 --caches=1 --dists=zipfian \
  --modes=full,partitioned > "$work/tight.out"
cat "$work/tight.out"
for mode in full partitioned; do
  [ "$(grep -Ec "^$mode +1 zipfian +[^ ]+ " "$work/tight.out")" -eq 7 ] ||
    { echo "FAIL: bench_tight.sh did not print a median row per policy ($mode)" >&2; exit 1; }
  [ "$(grep -Ec "^$mode +1 zipfian +sstfilter.Leveled:[0-9.]+ .*x +[0-9.]+x +[0-9.]+x\$" "$work/tight.out")" -eq 2 ] ||
    { echo "FAIL: bench_tight.sh did not print the ratios of sstfilter's policies ($mode)" >&2; exit 1; }
done
refuses "is not MiB" "${tight[@]}" --caches=8MiB
refuses "fill_jobs must be" "${tight[@]}" --fill_jobs=0
# scripts/bench_budget.sh (scripts/bench.sh --budget), small: a row per database, leveled and
# universal, its filters against the budget settled and at their peak (never below settled), the
# rewrites counted, the bytes written beside the fixed-bits fill's; a bad budget or style is one
# line and exit 2.
mb=(env DB_BENCH_EXT="$build/db_bench_ext/db_bench_ext" bash "$src/scripts/bench_budget.sh"
    --db="$work/mb")
"${mb[@]}" --nums=200000 --budgets=4bits --styles=level,universal > "$work/mb.out"
cat "$work/mb.out"
row='^200000 +(random|ordered) +(level|universal) +100000 +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+x +[0-9]+\.[0-9]+x +[0-9]+ / [1-9][0-9]* +[0-9]+\.[0-9] +[0-9]+\.[0-9] +[0-9]+\.[0-9]+x$'
[ "$(grep -Ec "$row" "$work/mb.out")" -eq 4 ] ||
  { echo "FAIL: bench_budget.sh did not print a row per database" >&2; exit 1; }
awk '$1 == 200000 && ($7 + 0 < $6 + 0 || $13 + 0 <= 0) { bad = 1 } END { exit bad }' "$work/mb.out" ||
  { echo "FAIL: bench_budget.sh: a peak below its settled bytes, or no bytes written" >&2; exit 1; }
refuses "is not bytes or Nbits" "${mb[@]}" --budgets=2G
refuses "is not level or universal" "${mb[@]}" --styles=fifo
echo "1 passed, 0 failed"
