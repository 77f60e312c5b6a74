#!/usr/bin/env bash
# The README's main command: sets the machine up if needed, builds, and runs the benchmark on the
# default data set (1M keys of 24 bytes), sstfilter's filters beside RocksDB's own. Arguments are
# passed to core_bench (for example --keys=200000 or --filters=rocksdb.bloomfilter:10,...).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$("$root/scripts/setup.sh" | tail -n 1)
exec "$build_dir/db_bench_ext/core_bench" --benchmark_min_time=0.3 "$@"
