#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `scripts/bench.sh --tight`: the shape production runs in, where filters and indexes share a
# block cache far smaller than the data. Each build: --num random puts of 16 + 100 bytes (8 MiB
# files, 64 MiB level base, dynamic level bytes, the sstfilter.LeveledBudget listener, settled
# fill), once with full filters and once partitioned (4 KiB partitions, two-level index); then
# each fill is read, without writing it again, under every block cache size (--caches, MiB) and
# key distribution (--dists): readmixed (half present keys) and readmissing, direct reads, each
# for --duration seconds (0: --reads lookups) after a warm-up pass. Policies: no filter;
# RocksDB's bloomfilter:10 and ribbonfilter:14.5:-1, each also with optimize_filters_for_hits (a
# fill of its own); sstfilter.Leveled at about the memory of RocksDB's Ribbon (--equal) and at
# about 0.6x it (--lower). Every fill is done on --builds fresh builds, each with its own order
# of puts and lookups (--seed), since which filter blocks evict each other changes from build to
# build, and which absent keys are false positives with the files' keys. Each cell is read
# --repeats times, by a process per database (RocksDB's policies, sstfilter's, RocksDB's with
# optimize_filters_for_hits) in turn, starting each time with the next; no filter, --lower and
# optimize_filters_for_hits the first time only (their reads per absent lookup, which hardly
# change between repeats, decide their figures: with optimize_filters_for_hits a lookup that
# reaches the last level reads a block there). sstfilter.Leveled chooses its full filters for
# the block cache they are built with (it cuts the filters whose blocks would overflow their
# shards), so with full filters its policies are filled once per cache size, under that cache;
# every other fill is read under every cache.
#
# A build's fills run first, --fill_jobs at a time (each settled fill waits for its compactions,
# so it keeps about one core busy), then its reads, one process at a time. A settled fill's tree
# does not depend on timing: alone or beside another fill, the same files, byte for byte, for
# RocksDB's filters and sstfilter's (DbTest.LeveledBudgetListenerSeesLevel0AtItsFullestWhicheverEventComesFirst).
#
#   scripts/bench.sh --tight [--builds=2] [--num=3000000] [--duration=1] [--repeats=2]
#       [--reads=50000] [--caches=8,32,128] [--dists=uniform,zipfian[,scrambled]]
#       [--modes=full,partitioned] [--equal=sstfilter.Leveled:10.6]
#       [--lower=sstfilter.Leveled:6.4] [--fill_jobs=2] [--decouple_partitioned_filters]
#       [--db=DIR]
#
# --decouple_partitioned_filters: the partitioned fills with RocksDB's option of that name (9.6 and
# later; DB_BENCH_EXT names a db_bench_ext built against such a RocksDB).
#
# Prints one line per build and repeat (build.repeat), mode, cache, distribution and policy (its
# bits/key over the SST files, false positives and storage reads per absent lookup, readmissing
# and readmixed ops/sec, readmissing's p99.9 latency, the false positives per absent lookup its
# allocation over the levels expects), then the medians over those lines and the mean reads per
# absent lookup, with the ratios of each sstfilter policy to RocksDB's best configuration in the
# same cell (the most ops/sec; the fewest reads, median and mean) and to its expected false
# positives (reads / bound).
# Takes about 30 minutes on 2 cores at the defaults.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ext=${DB_BENCH_EXT:-}
builds=2
num=3000000
reads=50000
duration=1
repeats=2
caches="8,32,128"
dists="uniform,zipfian"
modes="full,partitioned"
equal="sstfilter.Leveled:10.6"
lower="sstfilter.Leveled:6.4"
db=${TMPDIR:-/tmp}/sstfilter_bench_tight
decouple=false
fill_jobs=2
die() { echo "bench.sh --tight: $*" >&2; exit 2; }
# shellcheck source=scripts/args.sh
source "$root/scripts/args.sh"
ParseArgs "builds=builds num=num reads=reads duration=duration repeats=repeats caches=caches \
  dists=dists modes=modes equal=equal lower=lower db=db fill_jobs=fill_jobs \
  decouple_partitioned_filters?decouple" "$@"
RequirePositive builds "$builds"
RequirePositive num "$num"
RequirePositive reads "$reads"
[[ "$duration" =~ ^[0-9]+$ ]] || die "--duration must be whole seconds (0: --reads lookups)"
RequirePositive repeats "$repeats"
RequirePositive fill_jobs "$fill_jobs"
SplitEach caches "$caches" '[1-9][0-9]*' MiB cache_list
SplitEach dists "$dists" 'uniform|zipfian|scrambled' 'uniform, zipfian or scrambled' dist_list
SplitEach modes "$modes" 'full|partitioned' 'full or partitioned' mode_list
for p in "$equal" "$lower"; do [[ "$p" =~ ^[A-Za-z0-9_.:-]+$ ]] || die "bad policy '$p'"; done
if [ -z "$ext" ]; then
  ext="$("$root/scripts/setup.sh" | tail -n 1)/db_bench_ext/db_bench_ext"
fi
[ -x "$ext" ] || die "no $ext (build first, or set DB_BENCH_EXT)"

rocksdb_filters="bloomfilter:10,ribbonfilter:14.5:-1"
# No filter, --lower and optimize_filters_for_hits: read in the first repeat only. No filter and
# --lower each last, since db_bench_ext names each policy's database by its place in
# --filter_uri: the others keep theirs without it.
rocksdb_policies="$rocksdb_filters,none"
sstfilter_policies="$equal,$lower"
hits_policies="$rocksdb_filters"  # with optimize_filters_for_hits
common=(--num="$num" --reads="$reads" --duration="$duration" --rounds=1 --settled_fill
  --compression_type=none --cache_index_and_filter_blocks --use_direct_reads
  --target_file_size_base=8388608 --max_bytes_for_level_base=67108864
  --level_compaction_dynamic_level_bytes
  --listeners=sstfilter.LeveledBudget --read_hit_ratio=0.5 --plot=)
rows=$(mktemp)
lanes=()  # the fills running in the background (below)
# Should the script stop (an error, Ctrl-C), so do the fills it started: each lane's db_bench_ext,
# which fails its lane, then the lane.
stop_lanes() {
  local pid
  for pid in "${lanes[@]}"; do
    pkill -P "$pid" 2> /dev/null || true
    kill "$pid" 2> /dev/null || true
  done
}
trap 'stop_lanes; rm -f "$rows"' EXIT
trap 'exit 130' INT TERM

# The rows of db_bench_ext's closing table: "policy bits/key FP% FP/look reads/look readmissing
# multimissing readrandom readmixed ...", each printed with the cell's labels before it, and two
# figures from its policy's section: readmissing's p99.9 latency (us) and the false positives per
# absent lookup that the allocation over the tree's levels expects ("N allocated over the
# levels"; "-" where a policy has none).
table_rows() {
  awk -v labels="$1" -v suffix="$2" '
    /^== filter policy: / { policy = $4; bench = "" }
    /^[a-z]+ +: / { bench = $1 }
    bench == "readmissing" && / latency p50 / {
      q = $0; sub(/.* p99\.9 /, "", q); split(q, w, " "); p999[policy] = w[1]
    }
    / allocated over the levels/ {
      q = $0; sub(/ allocated over the levels.*/, "", q); n = split(q, w, " "); bound[policy] = w[n]
    }
    /^filter policy/ { in_table = 1; getline; next }
    in_table && NF >= 9 {
      printf "%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", labels, $1, suffix, $2, $4, $5, $6, $9,
        ($1 in p999) ? p999[$1] : "-", ($1 in bound) ? bound[$1] : "-"
    }
    in_table && NF < 9 { in_table = 0 }'
}

# The flags every fill and read of MODE takes, into mode_args.
set_mode_args() {
  mode_args=()
  if [ "$1" = partitioned ]; then
    mode_args+=(--partition_filters)
    ! $decouple || mode_args+=(--decouple_partitioned_filters)
  fi
}

# The database of MODE KIND [CACHE_MiB]: $db/MODE/KIND, with _CACHEMiB for sstfilter's full
# filters, filled under that cache.
db_of() { echo "$db/$1/$2${3:+_${3}MiB}"; }

# One fill: fill MODE KIND [CACHE_MiB], into db_of's database. Its progress and errors go to its
# log, printed should it fail.
fill() {
  local mode=$1 kind=$2 cache=${3:-} log
  set_mode_args "$mode"
  local args=("${flags[@]}" "${mode_args[@]}")
  case $kind in
    plain) args+=(--filter_uri="$rocksdb_policies") ;;
    hits) args+=(--optimize_filters_for_hits --filter_uri="$hits_policies") ;;
    sstfilter) args+=(--filter_uri="$sstfilter_policies")
      [ -n "$cache" ] && args+=(--cache_size=$((cache << 20))) ;;
  esac
  log="$db/logs/$mode-$kind${cache:+_${cache}MiB}.log"
  "$ext" --db="$(db_of "$@")" "${args[@]}" --benchmarks=fillrandom > /dev/null 2> "$log" || {
    tr '\r' '\n' < "$log" | grep -v '^\.\.\. finished' | grep . | tail -n 3 >&2
    return 1
  }
}

start=$SECONDS
for ((b = 1; b <= builds; b++)); do
  flags=("${common[@]}" --seed=$((41 + b)))  # each build its own order of puts and lookups
  rm -rf "$db"
  mkdir -p "$db/logs"
  # The build's fills, longest first (RocksDB's plain fill holds three policies), dealt to
  # --fill_jobs lanes that each run theirs in turn.
  jobs_list=()
  for mode in "${mode_list[@]}"; do jobs_list+=("$mode plain"); done
  for mode in "${mode_list[@]}"; do jobs_list+=("$mode hits"); done
  for mode in "${mode_list[@]}"; do
    if [ "$mode" = full ]; then
      for cache in "${cache_list[@]}"; do jobs_list+=("full sstfilter $cache"); done
    else
      jobs_list+=("partitioned sstfilter")
    fi
  done
  echo "== build $b: ${#jobs_list[@]} fills, $fill_jobs at a time ($((SECONDS - start)) s)" >&2
  lanes=()
  for ((l = 0; l < fill_jobs; l++)); do
    (
      for ((j = l; j < ${#jobs_list[@]}; j += fill_jobs)); do
        read -r -a job <<< "${jobs_list[j]}"
        fill "${job[@]}" || exit 1
      done
    ) &
    lanes+=($!)
  done
  failed=0
  for pid in "${lanes[@]}"; do wait "$pid" || failed=1; done
  lanes=()
  ((failed == 0)) || die "a fill of build $b failed (its last lines above)"
  echo "== build $b: reading ($((SECONDS - start)) s)" >&2
  for mode in "${mode_list[@]}"; do
    set_mode_args "$mode"
    read_base=("${flags[@]}" "${mode_args[@]}" --use_existing_db)
    plain_db=$(db_of "$mode" plain)
    hits_db=$(db_of "$mode" hits)
    for cache in "${cache_list[@]}"; do
      sstfilter_db=$(db_of "$mode" sstfilter)
      [ "$mode" = full ] && sstfilter_db=$(db_of full sstfilter "$cache")
      for dist in "${dist_list[@]}"; do
        read_flags=("${read_base[@]}" --cache_size=$((cache << 20)) --key_dist="$dist"
          "--benchmarks=readmixed,readmissing")
        # Each repeat reads the cell's databases in turn (the first repeat three, the next ones
        # two), each in a process of its own, starting from a different one: the machine's speed
        # drifts from minute to minute, and taking turns spreads that over every policy. (Which
        # blocks share a cache shard follows from the files' cache keys, so it changes between
        # builds, not between repeats.)
        for ((r = 0; r < repeats; r++)); do
          labels="$b.$((r + 1))	$mode	$cache	$dist"
          plain_policies=$rocksdb_filters
          sst_policies=$equal
          ((r > 0)) || { plain_policies=$rocksdb_policies; sst_policies=$sstfilter_policies; }
          for ((i = 0; i < 3; i++)); do
            case $(((i + r) % 3)) in
              0) "$ext" --db="$plain_db" "${read_flags[@]}" --filter_uri="$plain_policies" |
                table_rows "$labels" "" >> "$rows" ;;
              1) "$ext" --db="$sstfilter_db" "${read_flags[@]}" --filter_uri="$sst_policies" |
                table_rows "$labels" "" >> "$rows" ;;
              2) if ((r == 0)); then
                  "$ext" --db="$hits_db" "${read_flags[@]}" --optimize_filters_for_hits \
                    --filter_uri="$hits_policies" | table_rows "$labels" "+hits" >> "$rows"
                fi ;;
            esac
          done
        done
      done
    done
  done
done
rm -rf "$db"

echo "build	mode	cache_MiB	dist	policy	bits/key	FP/look	reads/look	readmissing	readmixed	p99.9_us	bound"
cat "$rows"
echo
echo "Medians over $builds builds x $repeats repeats (no filter, $lower and +hits: builds), and the"
echo "mean of the reads per absent lookup; ratios against RocksDB's best configuration in the cell"
echo "(the most ops/sec, the fewest reads per absent lookup, the fewest on average), sstfilter's"
echo "policies only, and their median reads over the false positives their allocation expects."
# Per cell and policy, the median of each column over its rows (builds and repeats; "-" values
# left out) and the mean of reads/look; then, per cell, the ratios.
awk -F'\t' -v equal="$equal" -v lower="$lower" '
  function median(list,    n, v, i, j, t) {
    n = split(list, v, " ")
    if (n == 0) return -1
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function shown(format, x) { return x < 0 ? "-" : sprintf(format, x) }  # -1: no values
  function lowest(table, cell, x) { if (!(cell in table) || x < table[cell]) table[cell] = x }
  function highest(table, cell, x) { if (!(cell in table) || x > table[cell]) table[cell] = x }
  {
    cell = $2 "\t" $3 "\t" $4; key = cell "\t" $5
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    for (c = 6; c <= 12; c++) if ($c != "-" && $c != "") values[key, c] = values[key, c] " " $c
    sum[key] += $8; count[key]++
  }
  END {
    printf "%-12s %6s %-8s %-28s %8s %8s %10s %10s %12s %10s %9s %8s %9s %7s %7s %7s %7s\n",
      "mode", "cache", "dist", "policy", "bits/key", "FP/look", "reads/look", "reads mean",
      "readmissing", "readmixed", "p99.9 us", "bound", "missing x", "reads x", "mean x",
      "mixed x", "/bound"
    for (i = 1; i <= n; i++) {
      key = order[i]; split(key, k, "\t"); cell = k[1] "\t" k[2] "\t" k[3]
      for (c = 6; c <= 12; c++) med[key, c] = median(values[key, c])
      mean[key] = sum[key] / count[key]
      if (k[4] != equal && k[4] != lower && k[4] != "none") {
        highest(best_missing, cell, med[key, 9])
        highest(best_mixed, cell, med[key, 10])
        lowest(best_reads, cell, med[key, 8])
        lowest(best_mean, cell, mean[key])
      }
    }
    for (i = 1; i <= n; i++) {
      key = order[i]; split(key, k, "\t"); cell = k[1] "\t" k[2] "\t" k[3]
      ratios = ""
      if (k[4] == equal || k[4] == lower) {
        ratios = sprintf("%8.2fx %6.2fx %6.2fx %6.2fx %6.2fx", med[key, 9] / best_missing[cell],
                         best_reads[cell] > 0 ? med[key, 8] / best_reads[cell] : 0,
                         best_mean[cell] > 0 ? mean[key] / best_mean[cell] : 0,
                         med[key, 10] / best_mixed[cell],
                         med[key, 12] > 0 ? med[key, 8] / med[key, 12] : 0)
      }
      printf "%-12s %6s %-8s %-28s %8.2f %8s %10.4f %10.4f %12.0f %10.0f %9s %8s %s\n", k[1],
        k[2], k[3], k[4], med[key, 6], shown("%.4f", med[key, 7]), med[key, 8], mean[key],
        med[key, 9], med[key, 10], shown("%.1f", med[key, 11]), shown("%.4f", med[key, 12]), ratios
    }
  }' "$rows"
echo "took $((SECONDS - start)) s"
