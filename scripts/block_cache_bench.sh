#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Filters in the block cache, over several fresh builds: RocksDB's own db_bench (rocksdb-tools)
# with libsstfilter.so preloaded and an OPTIONS file, filters and indexes in a block cache
# (cache_index_and_filter_blocks=true, level 0 pinned), absent-key lookups with direct reads.
# Which filter blocks share a cache shard changes with every build, and so does whether they
# evict each other (docs/filters.md: Filters in the block cache); one build says little.
#
#   scripts/block_cache_bench.sh [--builds=3] [--num=5000000] [--cache_size=33554432]
#       [--filter_uri=LIST] [--configs=LIST] [--without_listener] [--db=DIR]
#
# sstfilter.Leveled runs with its listener (listeners=sstfilter.LeveledBudget); with
# --without_listener each Leveled entry also runs without it, as a row of its own: what a user who
# copies only the filter_policy line gets.
#
# --configs, any of:
#   whole        full filters, evictable (RocksDB's default with cache_index_and_filter_blocks)
#   whole_hipri  the same, with half the cache a high-priority pool for filters and indexes
#   pinned       full filters pinned (metadata_cache_options={unpartitioned_pinning=kAll})
#   partitioned  partition_filters=true, kTwoLevelIndexSearch, 4 KiB partitions, top level pinned
#   4shards      full filters, evictable, in a cache of 4 shards (--cache_numshardbits=2)
# Each build: --num random puts of 16 + 100 bytes (64 MiB memtables, 8 MiB files, dynamic level
# bytes), a wait for compactions, then two passes of 100,000 absent-key lookups (readmissing).
# Prints, per config and policy, each build's filter bits/key over the SST files, the second
# pass's ops/sec and, in brackets, the filter blocks read into the cache over both passes (about
# the number of files when nothing is evicted). Takes about 35 s per build and policy at 5M keys.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=${SSTFILTER_LIB:-$here/build/plugin/libsstfilter.so}
ext=${DB_BENCH_EXT:-$here/build/db_bench_ext/db_bench_ext}
builds=3
num=5000000
cache_size=33554432
filter_uris="sstfilter.Leveled:10,sstfilter.BumpedRibbon:10,ribbonfilter:14.5:-1,bloomfilter:10"
configs="whole,pinned,partitioned"
without_listener=false
db=${TMPDIR:-/tmp}/sstfilter_block_cache_bench
die() { echo "block_cache_bench.sh: $*" >&2; exit 2; }
# shellcheck source=scripts/stock_db_bench.sh
source "$here/scripts/stock_db_bench.sh"
# shellcheck source=scripts/args.sh
source "$here/scripts/args.sh"
ParseArgs "builds=builds num=num cache_size=cache_size filter_uri=filter_uris configs=configs \
  db=db without_listener?without_listener" "$@"
RequirePositive builds "$builds"
RequirePositive num "$num"
RequirePositive cache_size "$cache_size"  # bytes
[ -f "$lib" ] || die "no $lib (build first, or set SSTFILTER_LIB)"
[ -x "$ext" ] || die "no $ext (build first, or set DB_BENCH_EXT)"
command -v db_bench > /dev/null || die "db_bench not found (apt-get install rocksdb-tools)"
IFS=, read -r -a uris <<< "$filter_uris"
IFS=, read -r -a cfgs <<< "$configs"
for c in "${cfgs[@]}"; do
  case "$c" in whole | whole_hipri | pinned | partitioned | 4shards) ;; *) die "unknown config $c" ;; esac
done
for u in "${uris[@]}"; do [[ "$u" =~ ^[A-Za-z0-9_.:-]+$ ]] || die "bad --filter_uri entry '$u'"; done
if $without_listener; then
  rows=()
  for u in "${uris[@]}"; do
    rows+=("$u")
    [[ "$u" == sstfilter.Leveled* ]] && rows+=("$u/without_listener")
  done
  uris=("${rows[@]}")
fi

# One build of `policy` under `config`: prints "bits/key ops/sec filter_blocks_read".
run() {
  local policy=$1 config=$2 ini="$db.ini" table="" hipri=0 shard_bits=-1 listeners=""
  case "$config" in
    whole) table="partition_filters=false" ;;
    whole_hipri) table="partition_filters=false"; hipri=0.5 ;;
    pinned) table="partition_filters=false
  metadata_cache_options={unpartitioned_pinning=kAll;partition_pinning=kAll;top_level_index_pinning=kAll}" ;;
    partitioned) table="partition_filters=true
  index_type=kTwoLevelIndexSearch
  metadata_block_size=4096
  pin_top_level_index_and_filter=true"; hipri=0.5 ;;
    4shards) table="partition_filters=false"; shard_bits=2 ;;
  esac
  if [[ "$policy" == */without_listener ]]; then
    policy=${policy%/without_listener}
  elif [[ "$policy" == sstfilter.Leveled* ]]; then
    listeners="listeners=sstfilter.LeveledBudget"
  fi
  stock_options_file "$ini" "$policy" "$listeners" "cache_index_and_filter_blocks=true
  pin_l0_filter_and_index_blocks_in_cache=true
  $table"
  local common=(--options_file="$ini" --db="$db" --cache_size="$cache_size" --key_size=16
    --value_size=100 --num="$num" --compression_type=none)
  local read_flags=(--use_direct_reads=true --statistics=true
    --cache_high_pri_pool_ratio="$hipri" --cache_numshardbits="$shard_bits")
  stock_fill_and_read "$(readlink -f "$lib")" "$policy"
  local bits ops misses
  bits=$(LD_PRELOAD="" "$ext" --inspect_db="$db" 2> /dev/null |
    awk '$1 ~ /\.sst$/ {k += $4; b += $5} END {if (k > 0) printf "%.2f", 8 * b / k; else print "-"}')
  ops=$(awk '/^readmissing/ {ops = $5} END {print ops}' "$db.read.log")
  misses=$(awk '/rocksdb.block.cache.filter.miss/ {print $4}' "$db.read.log")
  echo "$bits $ops $misses"
}

printf "%-12s %-38s %s\n" "config" "policy" "per build: bits/key, readmissing ops/sec (filter blocks read)"
for config in "${cfgs[@]}"; do
  for policy in "${uris[@]}"; do
    line=""
    for ((b = 1; b <= builds; ++b)); do
      result=$(run "$policy" "$config") || exit 2
      read -r bits ops misses <<< "$result"
      line+=$(printf "  %s %9s (%s)" "$bits" "$ops" "$misses")
    done
    printf "%-12s %-38s%s\n" "$config" "$policy" "$line"
  done
done
rm -rf "$db" "$db.ini" "$db.fill.log" "$db.read.log"
