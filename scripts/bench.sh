#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's benchmark command: sets the machine up if needed, builds, and runs db_bench_ext's
# default comparison twice, on a random tree and on an ordered one: 1M keys in a tree of 4+ levels
# that every policy builds alike (small memtables and files, --settled_fill, RocksDB's own
# compaction with dynamic level bytes, no SST partitioner, the sstfilter.LeveledBudget listener;
# fillrandom, then fillseq, each followed by readmissing and multireadmissing, a warm-up pass and
# 3 rounds interleaved across the policies), for no filter, RocksDB's bloomfilter:10 and
# ribbonfilter:14.5, and sstfilter.Bloom:10, sstfilter.Fuse:10, sstfilter.Ribbon:10 and
# sstfilter.Leveled:10: all about 10 bits per key (but RocksDB's Ribbon policy, which gives
# flushed files Bloom filters of 14.5 bits per key, and an ordered tree is made of flushed files).
# Each run ends with its table; the random run also draws a plot (memory against false positives
# per absent-key lookup, and lookup cost; $TMPDIR/sstfilter_bench.png unless --plot says
# otherwise, --plot= for none). About 3 minutes on 2 cores. Arguments go to both runs of
# db_bench_ext, after these defaults, and override them (for example --num=5000000 or
# --filter_uri=...); `scripts/bench.sh --micro` runs core_bench instead (the filters alone,
# Google Benchmark). Figures from these runs: docs/benchmarks.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" | tail -n 1)
if [ "${1:-}" = "--micro" ]; then
  shift
  exec "$build_dir/db_bench_ext/core_bench" --benchmark_min_time=0.3 "$@"
fi
defaults=(
  --num=1000000 --reads=100000 --rounds=3
  --settled_fill --compression_type=none --write_buffer_size=262144
  --max_bytes_for_level_base=262144 --target_file_size_base=262144
  --level_compaction_dynamic_level_bytes --listeners=sstfilter.LeveledBudget
  "--filter_uri=none,bloomfilter:10,ribbonfilter:14.5,sstfilter.Bloom:10,sstfilter.Fuse:10,sstfilter.Ribbon:10,sstfilter.Leveled:10"
)
plot="--plot=${TMPDIR:-/tmp}/sstfilter_bench.png"
for fill in fillrandom fillseq; do
  echo "=== $fill"
  "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" \
    "${defaults[@]}" --benchmarks="$fill,readmissing,multireadmissing" "$plot" "$@"
  plot="--plot="
done
