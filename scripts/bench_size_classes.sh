#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# optimize_filters_for_memory under an allocator of coarse size classes: RocksDB's own db_bench
# (rocksdb-tools) with jemalloc and libsstfilter.so preloaded fills a database of --num random keys
# (8 MiB files, filters of about 90 KiB, where jemalloc's classes are 16 KiB apart), once with the
# option off and once on, for sstfilter.Bloom:10 and RocksDB's bloomfilter:10; then reads absent
# keys (two passes of 100,000, statistics on).
#
# A filter block lives in the block cache in an allocation of its bytes and a 5-byte trailer,
# charged at the allocator's usable size: the script prints, per run, the filters' bytes, what
# their blocks are charged under jemalloc (malloc_usable_size, asked of jemalloc for each file's
# block), and the false positives per absent-key probe of a filter that RocksDB's statistics
# counted (bloom.filter.full.positive over all probes of full filters).
#
#   scripts/bench_size_classes.sh [--num=2000000] [--db=DIR]
#
# Needs libjemalloc2 (apt-get install libjemalloc2). About 2 minutes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=${SSTFILTER_LIB:-$here/build/plugin/libsstfilter.so}
ext=${DB_BENCH_EXT:-$here/build/db_bench_ext/db_bench_ext}
num=2000000
db=${TMPDIR:-/tmp}/sstfilter_size_classes
die() { echo "bench_size_classes.sh: $*" >&2; exit 2; }
# shellcheck source=scripts/args.sh
source "$here/scripts/args.sh"
# shellcheck source=scripts/stock_db_bench.sh
source "$here/scripts/stock_db_bench.sh"
ParseArgs "num=num db=db" "$@"
RequirePositive num "$num"
[ -f "$lib" ] || die "no $lib (build first, or set SSTFILTER_LIB)"
[ -x "$ext" ] || die "no $ext (build first, or set DB_BENCH_EXT)"
command -v db_bench > /dev/null || die "db_bench not found (apt-get install rocksdb-tools)"
jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2> /dev/null | head -n 1)
[ -n "$jemalloc" ] || die "no libjemalloc.so.2 (apt-get install libjemalloc2)"
preload="$jemalloc $(readlink -f "$lib")"

# The usable bytes jemalloc gives an allocation of each size read from stdin, summed.
charged() {
  LD_PRELOAD="$jemalloc" python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.malloc_usable_size.restype = ctypes.c_size_t
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]
libc.free.argtypes = [ctypes.c_void_p]
total = 0
for line in sys.stdin:
    p = libc.malloc(int(line))
    total += libc.malloc_usable_size(p)
    libc.free(p)
print(total)'
}

run() {
  local policy=$1 optimize=$2 ini="$db.ini"
  stock_options_file "$ini" "$policy" "" "optimize_filters_for_memory=$optimize"
  local common=(--options_file="$ini" --db="$db" --key_size=16 --value_size=100 --num="$num"
    --compression_type=none)
  local read_flags=(--statistics=true)
  stock_fill_and_read "$preload" "$policy"
  local sizes bytes files charge positive useful
  sizes=$(LD_PRELOAD="" "$ext" --inspect_db="$db" 2> /dev/null | awk '$1 ~ /\.sst$/ && $5 > 0 {print $5 + 5}')
  files=$(wc -l <<< "$sizes")
  bytes=$(awk '{b += $1 - 5} END {print b}' <<< "$sizes")
  charge=$(charged <<< "$sizes")
  positive=$(awk '/rocksdb.bloom.filter.full.positive / {print $4}' "$db.read.log")
  useful=$(awk '/rocksdb.bloom.filter.useful / {print $4}' "$db.read.log")
  printf "%-18s %-9s %6s %12s %14s %8.4f %12.5f\n" "$policy" "$optimize" "$files" "$bytes" "$charge" \
    "$(awk -v c="$charge" -v b="$bytes" 'BEGIN {print c / b}')" \
    "$(awk -v p="$positive" -v u="$useful" 'BEGIN {print (p + u > 0) ? p / (p + u) : 0}')"
}

printf "%-18s %-9s %6s %12s %14s %8s %12s\n" "policy" "optimize" "files" "filter bytes" \
  "jemalloc bytes" "charged" "fp/probe"
for policy in sstfilter.Bloom:10 bloomfilter:10; do
  for optimize in false true; do run "$policy" "$optimize"; done
done
rm -rf "$db" "$db.ini" "$db.fill.log" "$db.read.log"
