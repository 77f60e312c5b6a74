#!/usr/bin/env bash
# The README's main command: sets the machine up if needed, builds, and runs db_bench_ext's
# default comparison: 2M keys in a real RocksDB database, for no filter, RocksDB's bloomfilter:10
# and ribbonfilter:10, sstfilter.Bloom:10 and sstfilter.Cuckoo at a comparable budget (1%).
# Arguments go to db_bench_ext (for example --num=5000000 or --filter_uri=...);
# `scripts/bench.sh --micro` runs core_bench instead (the filters alone, Google Benchmark).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" | tail -n 1)
if [ "${1:-}" = "--micro" ]; then
  shift
  exec "$build_dir/db_bench_ext/core_bench" --benchmark_min_time=0.3 "$@"
fi
exec "$build_dir/db_bench_ext/db_bench_ext" --db="${TMPDIR:-/tmp}/sstfilter_db_bench_ext" "$@"
