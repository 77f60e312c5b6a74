#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's benchmark command: sets the machine up if needed, builds, and runs db_bench_ext's
# default comparison twice, on a random tree and on an ordered one: 1M keys in a tree of 4+ levels
# that every policy builds alike (small memtables and files, --settled_fill, RocksDB's own
# compaction with dynamic level bytes, no SST partitioner, the sstfilter.LeveledBudget listener;
# fillrandom, then fillseq, each followed by readmissing and multireadmissing, a warm-up pass and
# 3 rounds interleaved across the policies), for no filter, RocksDB's bloomfilter:10 and
# ribbonfilter:14.5, and sstfilter.Bloom:10, sstfilter.Fuse:10, sstfilter.BumpedRibbon:10 and
# sstfilter.Leveled:10: all about 10 bits per key (but RocksDB's Ribbon policy, which gives
# flushed files Bloom filters of 14.5 bits per key, and an ordered tree is made of flushed files).
# Each run ends with its table; the random run also draws a plot (memory against false positives
# per absent-key lookup, and lookup cost; $TMPDIR/sstfilter_bench.png unless --plot says
# otherwise, --plot= for none). About 4 minutes on 2 cores. Arguments go to both runs of
# db_bench_ext, after these defaults, and override them (for example --num=5000000 or
# --filter_uri=...); `scripts/bench.sh --micro` runs core_bench instead (the filters alone,
# Google Benchmark). Figures from these runs: docs/benchmarks.md.
#
# `scripts/bench.sh --large` is shaped like production instead: a database of 3M keys (about 400
# MiB, over 10x the 32 MiB block cache), SST files of about 60,000 keys, index and filter blocks in
# the block cache with the data (cache_index_and_filter_blocks), direct reads (a block the cache
# misses is a device read), and lookups half of present keys (readmixed) besides all of absent
# ones (readmissing); at equal block cache, each policy's throughput, blocks read from storage per
# lookup and filter memory. A second run takes RocksDB's optimize_filters_for_hits (no filters on
# the last level) with RocksDB's filters. About 5 minutes on 2 cores; arguments go to both runs.
#
# `scripts/bench.sh --range` measures range filters: range_bench (the filter alone: false-positive
# rates from 8 to 20 bits per key for ranges of 1, 16 and 1,024 keys, random and just after a
# key, integer and string keys; build time beside the blocked Bloom filter), then db_bench_ext's
# bounded scans on a 2M-key database with direct reads and a 32 MiB block cache, with and without
# sstfilter.RangeFilter (16 bits per key): seekempty (ranges of 16 integers just after a present
# key, empty) and seekrandom (16 keys), 3 rounds. About 4 minutes; arguments go to db_bench_ext.
#
# `scripts/bench.sh --tight` is production's shape with a block cache far smaller than the data:
# full and partitioned filters, caches of 8, 32 and 128 MiB, uniform and Zipfian lookups, RocksDB's
# filters with and without optimize_filters_for_hits, sstfilter.Leveled at about the same memory and
# at about 0.6x, each fill on 2 fresh builds (a build's fills two at a time), each cell read twice
# (scripts/bench_tight.sh says more). About 30 minutes.
#
# `scripts/bench.sh --budget` fills databases of 1M, 3M and 10M keys, random and ordered, under
# sstfilter.Leveled's memory_budget, and prints their filters against the budget once settled and
# at their peak, the files the listener rewrote, and the bytes written beside the same fill at the
# settled bits per key (scripts/bench_budget.sh says more; `--styles=universal` for universal
# compaction). About 12 minutes.
#
# `scripts/bench.sh --migration` moves a database of 1M keys from RocksDB's ribbonfilter:10 to
# sstfilter.Leveled:10 and back with RocksDB's own db_bench, full and partitioned, and prints the
# storage reads per absent Get in each phase (with --to='{id=sstfilter.Leveled;memory_budget=B}',
# the filters against the budget too; --fills=N: on N fresh databases, with each phase's mean and
# range; scripts/bench_migration.sh says more). About 1 to 2 minutes a fill.
#
# `scripts/bench.sh --redis` runs the Redis module against a Bloom filter built by hand from
# SETBIT/GETBIT (pipelined, and in a Lua script) at 1M items and a 1% rate, in a redis-server of
# its own: items per second, p99 latency, bytes per item, measured false positives; then
# redis-benchmark, and the measured rates of filters of 1e3 to 1e7 items (scripts/redis_bench.py
# says more; --fp-sweep 8 for 1e8). About 5 minutes; arguments go to redis_bench.py.
#
# `scripts/bench.sh --size_classes` measures optimize_filters_for_memory under jemalloc's size
# classes with RocksDB's own db_bench: the filters' bytes, what the block cache is charged for
# them, and false positives, with the option off and on (scripts/bench_size_classes.sh says
# more; needs libjemalloc2). About 2 minutes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" | tail -n 1)
# The modes that run a script of their own, with DB_BENCH_EXT and SSTFILTER_LIB if set (another
# build's db_bench_ext and plugin: another RocksDB's), else this build's.
case "${1:-}" in
  --tight) script=bench_tight.sh ;;
  --budget) script=bench_budget.sh ;;
  --migration) script=bench_migration.sh ;;
  --size_classes) script=bench_size_classes.sh ;;
  *) script="" ;;
esac
if [ -n "$script" ]; then
  shift
  SSTFILTER_LIB="${SSTFILTER_LIB:-$build_dir/plugin/libsstfilter.so}" \
    DB_BENCH_EXT="${DB_BENCH_EXT:-$build_dir/db_bench_ext/db_bench_ext}" \
    exec bash "$root/scripts/$script" "$@"
fi
if [ "${1:-}" = "--redis" ]; then
  shift
  module="$build_dir/redis/libsstfilter_redis.so"
  [ -f "$module" ] || { echo "bench.sh: no Redis module at $module" >&2; exit 1; }
  exec /usr/bin/python3 "$root/scripts/redis_bench.py" --module "$module" --items 1000000 \
    --fp-sweep 7 "$@"
fi
if [ "${1:-}" = "--micro" ]; then
  shift
  exec "$build_dir/db_bench_ext/core_bench" --benchmark_min_time=0.3 "$@"
fi
if [ "${1:-}" = "--range" ]; then
  shift
  echo "=== range_bench: the range filter alone"
  "$build_dir/db_bench_ext/range_bench" --keys=1000000 --queries=1000000
  echo "=== bounded scans, direct reads"
  exec "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" \
    --num=2000000 --reads=20000 --rounds=3 --settled_fill --compression_type=none \
    --cache_size=33554432 --cache_index_and_filter_blocks --use_direct_reads \
    --target_file_size_base=8388608 --max_bytes_for_level_base=67108864 \
    --level_compaction_dynamic_level_bytes --key_spacing=9 --scan_length=16 \
    --benchmarks=fillrandom,seekempty,seekrandom --filter_uri=bloomfilter:10 \
    --range_filter=none,sstfilter.RangeFilter "$@"
fi
if [ "${1:-}" = "--large" ]; then
  shift
  large=(
    --num=3000000 --reads=50000 --rounds=2 --settled_fill --compression_type=none
    --cache_size=33554432 --cache_index_and_filter_blocks --use_direct_reads
    --target_file_size_base=8388608 --max_bytes_for_level_base=67108864
    --level_compaction_dynamic_level_bytes --listeners=sstfilter.LeveledBudget
    --read_hit_ratio=0.5 "--benchmarks=fillrandom,readmixed,readmissing"
  )
  echo "=== large: filters in the block cache, direct reads"
  "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" "${large[@]}" \
    "--filter_uri=none,bloomfilter:10,ribbonfilter:10,ribbonfilter:14.5:-1,sstfilter.Fuse:10,sstfilter.Leveled:10" \
    "--plot=${TMPDIR:-/tmp}/sstfilter_bench_large.png" "$@"
  echo "=== large, RocksDB's optimize_filters_for_hits"
  exec "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" \
    "${large[@]}" --optimize_filters_for_hits "--filter_uri=bloomfilter:10,ribbonfilter:14.5:-1" \
    "$@"
fi
defaults=(
  --num=1000000 --reads=100000 --rounds=3
  --settled_fill --compression_type=none --write_buffer_size=262144
  --max_bytes_for_level_base=262144 --target_file_size_base=262144
  --level_compaction_dynamic_level_bytes --listeners=sstfilter.LeveledBudget
  "--filter_uri=none,bloomfilter:10,ribbonfilter:14.5,sstfilter.Bloom:10,sstfilter.Fuse:10,sstfilter.BumpedRibbon:10,sstfilter.Leveled:10"
)
plot="--plot=${TMPDIR:-/tmp}/sstfilter_bench.png"
for fill in fillrandom fillseq; do
  echo "=== $fill"
  "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" \
    "${defaults[@]}" --benchmarks="$fill,readmissing,multireadmissing" "$plot" "$@"
  plot="--plot="
done
