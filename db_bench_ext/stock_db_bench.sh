#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs RocksDB's own db_bench (/usr/bin/db_bench, from rocksdb-tools) with libsstfilter.so
# preloaded and an OPTIONS file naming the filter policy, for users who want RocksDB's tool.
#
#   db_bench_ext/stock_db_bench.sh --filter_uri=URI [--write_buffer_size=BYTES]
#       [--sst_partitioner_factory=NAME] [--listeners=NAME] [--options_out=FILE]
#       [any other db_bench flag ...]
#
# db_bench --options_file ignores most option flags, so the ones that shape the database go
# into the generated file: the policy, write_buffer_size (default 4 MiB, so that SST files
# appear in short runs), the SST partitioner and the event listeners (sstfilter.NoTrivialMove and
# sstfilter.LeveledBudget, for sstfilter.Leveled; db_bench has no flag for them). --options_out
# keeps the generated file. The library is found at
# $SSTFILTER_LIB, or else in build/plugin/ of this checkout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=${SSTFILTER_LIB:-$here/../build/plugin/libsstfilter.so}
filter_uri=""
write_buffer_size=4194304
options_out=""
partitioner=""
listeners=""
args=()
for arg in "$@"; do
  case "$arg" in
    --filter_uri=*) filter_uri=${arg#--filter_uri=} ;;
    --write_buffer_size=*) write_buffer_size=${arg#--write_buffer_size=} ;;
    --options_out=*) options_out=${arg#--options_out=} ;;
    --sst_partitioner_factory=*) partitioner=${arg#--sst_partitioner_factory=} ;;
    --listeners=*) listeners=${arg#--listeners=} ;;
    --options_file=*) echo "stock_db_bench.sh: --options_file is generated; give --filter_uri" >&2; exit 2 ;;
    *) args+=("$arg") ;;
  esac
done
[ -n "$filter_uri" ] || { echo "stock_db_bench.sh: --filter_uri=URI is required" >&2; exit 2; }
[[ "$write_buffer_size" =~ ^[0-9]+$ ]] && [ "$write_buffer_size" -ge 65536 ] ||
  { echo "stock_db_bench.sh: --write_buffer_size must be an integer >= 65536" >&2; exit 2; }
[[ "$partitioner" =~ ^[A-Za-z0-9_.]*$ ]] ||
  { echo "stock_db_bench.sh: --sst_partitioner_factory must be a registered name" >&2; exit 2; }
[[ "$listeners" =~ ^[A-Za-z0-9_.]*$ ]] ||
  { echo "stock_db_bench.sh: --listeners must be a registered name" >&2; exit 2; }
[ -f "$lib" ] || { echo "stock_db_bench.sh: no $lib (build first, or set SSTFILTER_LIB)" >&2; exit 2; }
command -v db_bench > /dev/null ||
  { echo "stock_db_bench.sh: db_bench not found (apt-get install rocksdb-tools)" >&2; exit 2; }

if [ -z "$options_out" ]; then
  options_out=$(mktemp --suffix=.ini)
  trap 'rm -f "$options_out"' EXIT
fi
if [ "$filter_uri" = "none" ]; then policy="nullptr"; else policy="$filter_uri"; fi
cat > "$options_out" <<INI
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1
[DBOptions]
  create_if_missing=true
${listeners:+  listeners=$listeners}
[CFOptions "default"]
  write_buffer_size=$write_buffer_size
${partitioner:+  sst_partitioner_factory=$partitioner}
[TableOptions/BlockBasedTable "default"]
  filter_policy=$policy
INI
LD_PRELOAD="$(readlink -f "$lib")" db_bench --options_file="$options_out" "${args[@]}"

# RocksDB silently drops a policy, partitioner or listener it cannot load (a misspelt name, say)
# and runs without it. The database's newest OPTIONS file shows what was really used: fail if it was dropped.
db=${TEST_TMPDIR:-/tmp/rocksdbtest-$(id -u)}/dbbench  # db_bench's default --db
for ((i = 0; i < ${#args[@]}; ++i)); do  # --db=PATH or --db PATH, as gflags takes it
  case "${args[i]}" in
    --db=*) db=${args[i]#--db=} ;;
    --db) db=${args[i + 1]:-$db} ;;
  esac
done
used=$(ls -t "$db"/OPTIONS-* 2> /dev/null | head -n 1) || true
if [ -n "$used" ]; then
  if [ "$policy" != "nullptr" ] && grep -q '^ *filter_policy=nullptr$' "$used"; then
    echo "stock_db_bench.sh: RocksDB dropped filter_policy=$policy (unknown name?); the run had no filter" >&2
    exit 1
  fi
  if [ -n "$partitioner" ] && grep -q '^ *sst_partitioner_factory=nullptr$' "$used"; then
    echo "stock_db_bench.sh: RocksDB dropped sst_partitioner_factory=$partitioner (unknown name?)" >&2
    exit 1
  fi
  if [ -n "$listeners" ] && ! grep -q "^ *listeners=.*$listeners" "$used"; then
    echo "stock_db_bench.sh: RocksDB dropped listeners=$listeners (unknown name?)" >&2
    exit 1
  fi
fi
