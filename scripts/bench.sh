#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's benchmark command: sets the machine up if needed, builds, and runs db_bench_ext's
# default comparison: 1M keys in a tree of 4+ levels that every policy builds alike (small
# memtables and files, --settled_fill, sstfilter.NoTrivialMove; fillrandom, then readmissing and
# multireadmissing, a warm-up pass and 3 rounds interleaved across the policies), for no filter,
# RocksDB's bloomfilter:10 and ribbonfilter:14.5, and sstfilter.Bloom:10, sstfilter.Fuse:10,
# sstfilter.Ribbon:10 and sstfilter.Leveled:10: all about 10 bits per key; it ends with the table
# and a plot (memory against false positives per absent-key lookup, and lookup cost;
# $TMPDIR/sstfilter_bench.png unless --plot says otherwise, --plot= for none). Arguments go to
# db_bench_ext after these defaults and override them (for example --num=5000000 or
# --filter_uri=...); `scripts/bench.sh --micro` runs core_bench instead (the filters alone, Google
# Benchmark). Figures from these runs: docs/benchmarks.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" | tail -n 1)
if [ "${1:-}" = "--micro" ]; then
  shift
  exec "$build_dir/db_bench_ext/core_bench" --benchmark_min_time=0.3 "$@"
fi
defaults=(
  --num=1000000 --reads=100000 --rounds=3
  --benchmarks=fillrandom,readmissing,multireadmissing
  --settled_fill --compression_type=none --write_buffer_size=262144
  --max_bytes_for_level_base=262144 --target_file_size_base=262144
  --level_compaction_dynamic_level_bytes --sst_partitioner_factory=sstfilter.NoTrivialMove
  "--filter_uri=none,bloomfilter:10,ribbonfilter:14.5,sstfilter.Bloom:10,sstfilter.Fuse:10,sstfilter.Ribbon:10,sstfilter.Leveled:10"
  --plot="${TMPDIR:-/tmp}/sstfilter_bench.png"
)
exec "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" \
  "${defaults[@]}" "$@"
