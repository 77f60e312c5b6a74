#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what sstfilter needs on Debian bookworm (as root) if it is missing, then configures and
# builds one build tree.
#
#   scripts/setup.sh [--sanitize | --tsan] [--rocksdb VERSION|PREFIX] [--build-dir DIR]
#
# --sanitize: ASan+UBSan at -O1, everything but the micro benchmarks (build-sanitize/). --tsan:
# ThreadSanitizer, core/ and its tests only, since Debian's librocksdb is not instrumented
# (build-tsan/). --rocksdb: build against another RocksDB than Debian's: a version in
# ../shared/rocksdb/ (listed by scripts/rocksdb-versions.sh builds) or the prefix of any install
# (build-rocksdb-<name>/, without the Google Benchmark programs, and without core's unit tests,
# which do not use RocksDB and run in the default build).
#
# Prints the build directory on its last line. Used by scripts/bench.sh, scripts/test.sh and CI.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize=OFF
tsan=OFF
build_dir=""
rocksdb=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=ON ;;
    --tsan) tsan=ON ;;
    --build-dir) build_dir="$2"; shift ;;
    --rocksdb) rocksdb="$2"; shift ;;
    *) echo "setup.sh: unknown argument '$1' (expected --sanitize, --tsan, --rocksdb VERSION|PREFIX or --build-dir DIR)" >&2
       exit 2 ;;
  esac
  shift
done
if [ -z "$build_dir" ]; then
  build_dir="$root/build"
  [ "$sanitize" = ON ] && build_dir="$root/build-sanitize"
  [ "$tsan" = ON ] && build_dir="$root/build-tsan"
  [ -n "$rocksdb" ] && build_dir="$root/build-rocksdb-$(basename "$rocksdb")"
fi

packages=(cmake g++ make pkg-config librocksdb-dev rocksdb-tools libgflags-dev libgtest-dev
          libxxhash-dev libhwy-dev libbenchmark-dev gnuplot-nox nlohmann-json3-dev
          redis-server redis-tools python3-redis python3-pytest)
"$root/scripts/install-packages.sh" setup.sh "${packages[@]}"

build_type=Release
extra=()
if [ "$sanitize" = ON ]; then
  # -O1 and line tables only (-g1): what ASan's reports need (function, file and line of each
  # frame), and about half the compile time of RelWithDebInfo's -O2 -g, which was most of CI's
  # sanitizer stage. NDEBUG stays, as in the librocksdb the tests link. No micro benchmarks: no
  # test runs them.
  build_type=RelWithDebInfo
  extra+=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
          "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DSSTFILTER_BENCHMARKS=OFF)
fi
if [ "$tsan" = ON ]; then
  build_type=RelWithDebInfo
  extra=(-DSSTFILTER_WITH_ROCKSDB=OFF -DSSTFILTER_BENCHMARKS=OFF)
fi
if [ -n "$rocksdb" ]; then
  prefix=$("$root/scripts/rocksdb-prefix.sh" "$rocksdb" "$build_dir/rocksdb-prefix")
  extra+=(-DCMAKE_PREFIX_PATH="$prefix" -DSSTFILTER_BENCHMARKS=OFF -DSSTFILTER_CORE_TESTS=OFF)
fi
# The Redis module's build needs redismodule.h: in the default build only (the module does not use
# RocksDB, and an instrumented one cannot load into Debian's redis-server).
if [ "$sanitize" = OFF ] && [ "$tsan" = OFF ] && [ -z "$rocksdb" ]; then
  "$root/scripts/redis-module-header.sh" "$build_dir/redis-include"
fi
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" \
  -DSSTFILTER_SANITIZE="$sanitize" -DSSTFILTER_TSAN="$tsan" "${extra[@]}" >&2
cmake --build "$build_dir" -j "$(nproc)" >&2
echo "$build_dir"
