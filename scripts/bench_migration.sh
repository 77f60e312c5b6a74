#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An operator's move of a live database to sstfilter and back, with RocksDB's own db_bench and
# libsstfilter.so preloaded (bash scripts/bench.sh --migration). For full and for partitioned
# filters: N keys (default 1M: --num) written under RocksDB's filter (ribbonfilter:10, --from),
# then read under it, under sstfilter (sstfilter.Leveled:10 with its listener, --to) right after
# the switch, after 20% more writes under sstfilter, and after the rollback to RocksDB's filter;
# each phase's lookups are absent keys (db_bench's readmissing, --reads). 4 MiB files, filters and
# index held by the table readers, an 8 MiB block cache for the data, direct reads: a data block
# the cache misses is a storage read. Each write phase ends flushed and compacted, and the read
# phases run without compactions, so that every data block read is a Get's. Prints, per phase,
# the data blocks read from storage per absent Get and the filters' answers (their checks count
# once per file a lookup consults), and, where --to has a memory_budget, the live filters' bytes
# against it (db_bench_ext --inspect_db; DB_BENCH_EXT, or the build's). About 2 minutes on 2 cores.
# --fills=N repeats it all on N fresh databases and then prints, per phase, the mean and the
# range of the reads per absent Get and of the filters against the budget: the same fill's shape
# (and so its reads) swings with the timing of its compactions, by up to 2x between fills.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=${SSTFILTER_LIB:-$root/build/plugin/libsstfilter.so}
num=1000000
reads=200000
fills=1
from="ribbonfilter:10"
to="sstfilter.Leveled:10"
dir="${TMPDIR:-/tmp}/sstfilter_migration"
die() { echo "bench_migration.sh: $*" >&2; exit 2; }
# shellcheck source=scripts/args.sh
source "$root/scripts/args.sh"
ParseArgs "num=num reads=reads from=from to=to db=dir fills=fills" "$@"
RequirePositive num "$num"
RequirePositive reads "$reads"
RequirePositive fills "$fills"
[ -f "$lib" ] || die "no $lib (build first, or set SSTFILTER_LIB)"
ext=${DB_BENCH_EXT:-$root/build/db_bench_ext/db_bench_ext}
[[ "$from$to" != *memory_budget* || -x "$ext" ]] || die "no $ext (build first, or set DB_BENCH_EXT)"
command -v db_bench > /dev/null || die "db_bench not found (apt-get install rocksdb-tools)"

# The OPTIONS file of a phase: the policy, whether filters are partitioned, whether RocksDB
# compacts.
options() {
  local policy=$1 partitioned=$2 file=$3 compactions=$4 index=kBinarySearch listeners=""
  [ "$partitioned" = true ] && index=kTwoLevelIndexSearch
  [[ "$policy" == sstfilter.Leveled* || "$policy" == *"id=sstfilter.Leveled"* ]] &&
    listeners="  listeners=sstfilter.LeveledBudget"
  cat > "$file" <<INI
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1
[DBOptions]
  create_if_missing=true
  use_direct_reads=true
$listeners
[CFOptions "default"]
  write_buffer_size=4194304
  target_file_size_base=4194304
  max_bytes_for_level_base=16777216
  compression=kNoCompression
  disable_auto_compactions=$([ "$compactions" = on ] && echo false || echo true)
[TableOptions/BlockBasedTable "default"]
  filter_policy=$policy
  partition_filters=$partitioned
  index_type=$index
  cache_index_and_filter_blocks=false
  block_cache=8388608
INI
}

# The name of the filters' mode: partitioned (`partitioned` true) or full.
mode_of() { if [ "$1" = true ]; then echo partitioned; else echo full; fi; }

# Runs db_bench under `policy` with `benchmarks` (reads: readmissing, without compactions;
# writes: with them, then flushed and compacted); prints what its statistics say of the reads,
# and appends them to $dir.fills (mode, phase, reads per Get, filters/budget; tab-separated).
phase() {
  local label=$1 policy=$2 partitioned=$3 benchmarks=$4 ini="$dir.ini" log="$dir.log"
  local mode
  mode=$(mode_of "$partitioned")
  local compactions=off
  [[ "$benchmarks" == *readmissing* ]] || { compactions=on; benchmarks="$benchmarks,flush,waitforcompaction"; }
  options "$policy" "$partitioned" "$ini" "$compactions"
  LD_PRELOAD="$lib" db_bench --options_file="$ini" --db="$dir" --use_existing_db=1 \
    --benchmarks="$benchmarks" --num="$num" --writes=$((num / 5)) --reads="$reads" \
    --key_size=16 --value_size=100 --seed=42 --threads=1 --statistics > "$log" 2>&1 ||
    { tail -n 5 "$log" >&2; die "db_bench failed in phase '$label' (log: $log)"; }
  [[ "$benchmarks" == *readmissing* ]] || return 0
  # Under a memory_budget, what the live filters hold against it, as --inspect_db counts them.
  local spent="-"
  if [[ "$policy" == *memory_budget* ]]; then
    spent=$("$ext" --inspect_db="$dir" |
      sed -n 's/.*its filters [0-9]* bytes, \([0-9.]*x\) the budget.*/\1/p') ||
      die "db_bench_ext --inspect_db=$dir failed in phase '$label'"
    spent=${spent:-?}
  fi
  awk -v label="$label" -v policy="$policy" -v reads="$reads" -v spent="$spent" \
    -v mode="$mode" -v record="$dir.fills" '
    $1 == "rocksdb.block.cache.data.miss" { miss = $4 }
    $1 == "rocksdb.bloom.filter.useful" { useful = $4 }
    $1 == "rocksdb.bloom.filter.full.positive" { positive = $4 }
    END {
      printf "%-26s %-22s %12.4f %12d %12d %14s\n", label, policy, miss / reads, useful, positive,
        spent
      printf "%s\t%s\t%.6f\t%s\n", mode, label, miss / reads, spent >> record
    }
  ' "$log"
}

# The phases over all fills, in their order: the mean and range of the reads per absent Get and,
# where known, of the filters against the budget.
summary() {
  echo "=== over $fills fresh fills: mean (least to most)"
  printf "%-12s %-26s %26s %26s\n" filters phase "reads/Get" "filters/budget"
  awk -F'\t' '
    # One statistic of one phase (`at`: the statistic and the phase), a value more.
    function add(at, v) {
      if (!(at in n) || v < lo[at]) lo[at] = v
      if (!(at in n) || v > hi[at]) hi[at] = v
      ++n[at]
      sum[at] += v
    }
    function show(at, digits) {
      if (!(at in n)) return "-"
      return sprintf("%.*f (%.*f to %.*f)", digits, sum[at] / n[at], digits, lo[at], digits, hi[at])
    }
    {
      phase = $1 SUBSEP $2
      if (!(phase in seen)) order[++phases] = phase
      seen[phase] = 1
      add("reads" SUBSEP phase, $3 + 0)
      if ($4 ~ /^[0-9.]+x$/) add("budget" SUBSEP phase, substr($4, 1, length($4) - 1) + 0)
    }
    END {
      for (i = 1; i <= phases; ++i) {
        split(order[i], part, SUBSEP)
        printf "%-12s %-26s %26s %26s\n", part[1], part[2], show("reads" SUBSEP order[i], 4),
          show("budget" SUBSEP order[i], 3)
      }
    }
  ' "$dir.fills"
}

rm -f "$dir.fills"
for fill in $(seq 1 "$fills"); do
  for partitioned in false true; do
    mode=$(mode_of "$partitioned")
    of=""
    [ "$fills" -gt 1 ] && of=", fill $fill of $fills"
    echo "=== $mode filters: $num keys under $from, then $to, then back" \
      "($reads absent Gets a phase$of)"
    printf "%-26s %-22s %12s %12s %12s %14s\n" phase policy "reads/Get" "filter no" "filter maybe" \
      "filters/budget"
    rm -rf "$dir"
    # A fresh database: db_bench's fill is skipped with --use_existing_db, so fill without it.
    options "$from" "$partitioned" "$dir.ini" on
    LD_PRELOAD="$lib" db_bench --options_file="$dir.ini" --db="$dir" \
      --benchmarks=fillrandom,flush,waitforcompaction \
      --num="$num" --key_size=16 --value_size=100 --seed=42 --threads=1 > "$dir.log" 2>&1 ||
      { tail -n 5 "$dir.log" >&2; die "db_bench failed filling (log: $dir.log)"; }
    phase "under RocksDB's filter" "$from" "$partitioned" readmissing
    phase "switched to sstfilter" "$to" "$partitioned" readmissing
    phase "20% more writes" "$to" "$partitioned" overwrite
    phase "after the writes" "$to" "$partitioned" readmissing
    phase "rolled back" "$from" "$partitioned" readmissing
  done
done
[ "$fills" -gt 1 ] && summary
rm -rf "$dir" "$dir.ini" "$dir.log" "$dir.fills"
