#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs sstfilter into a temporary prefix, then builds the README's example application
# (tests/install/app) against it twice, with CMake's find_package and with pkg-config, and runs
# both. The application never calls into libsstfilter.so, so this also proves that the package's
# link settings keep the library (and its registration) despite --as-needed. A control link
# without them shows what goes wrong otherwise.
#
#   install_test.sh BUILD_DIR SOURCE_DIR [ROCKSDB_PREFIX CXX_STANDARD]
#
# ROCKSDB_PREFIX: the RocksDB install the build used, if not the system's (then its CMake package,
# pkg-config file and library are put first on the paths); CXX_STANDARD: 17, or 20 from RocksDB
# 10.7 on.
set -euo pipefail
build=$(readlink -f "$1")
src=$(readlink -f "$2")
rocksdb_prefix=${3:-}
std=${4:-17}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libsstfilter.so' | head -n 1)")
export LD_LIBRARY_PATH="$libdir${rocksdb_prefix:+:$rocksdb_prefix/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "== find_package(sstfilter)"
cmake -S "$src/tests/install/app" -B "$work/app" -DCMAKE_PREFIX_PATH="$prefix${rocksdb_prefix:+;$rocksdb_prefix}" \
  -DCMAKE_CXX_STANDARD="$std" > "$work/app.log"
cmake --build "$work/app" > "$work/app-build.log"
"$work/app/example_app" "$work/db1"

echo "== pkg-config sstfilter"
export PKG_CONFIG_PATH="$libdir/pkgconfig${rocksdb_prefix:+:$rocksdb_prefix/lib/pkgconfig}"
# shellcheck disable=SC2046
g++ -std=c++$std "$src/tests/install/app/main.cc" -o "$work/app_pc" $(pkg-config --cflags --libs sstfilter)
"$work/app_pc" "$work/db2"

echo "== the installed headers: sstfilter::NewNoTrivialMoveFactory through pkg-config"
cat > "$work/partitioner.cc" <<'CC'
#include <sstfilter/no_trivial_move.h>
#include <cstdio>
#include <cstring>
int main() {
  const auto factory = sstfilter::NewNoTrivialMoveFactory();
  rocksdb::SstPartitioner::Context context{};
  context.output_level = 2;
  const auto partitioner = factory->CreatePartitioner(context);
  const bool ok = std::strcmp(factory->Name(), "sstfilter.NoTrivialMove") == 0 &&
                  !partitioner->CanDoTrivialMove("a", "b");
  std::printf("%s: %s\n", factory->Name(), ok ? "forbids trivial moves" : "WRONG");
  return ok ? 0 : 1;
}
CC
# shellcheck disable=SC2046
g++ -std=c++$std "$work/partitioner.cc" -o "$work/partitioner" $(pkg-config --cflags --libs sstfilter)
"$work/partitioner"

echo "== the license, as the installed package states it"
grep -qx "License: Apache-2.0" "$libdir/pkgconfig/sstfilter.pc"
grep -q 'set(sstfilter_LICENSE "Apache-2.0")' "$libdir/cmake/sstfilter/sstfilterConfig.cmake"
cmp "$src/LICENSE" "$prefix/share/doc/sstfilter/LICENSE"
echo "Apache-2.0: in sstfilter.pc, sstfilterConfig.cmake and share/doc/sstfilter/LICENSE"

echo "== control: a plain -lsstfilter under --as-needed"
g++ -std=c++$std "$src/tests/install/app/main.cc" -o "$work/app_plain" -Wl,--as-needed \
  -I"$prefix/include" ${rocksdb_prefix:+-I"$rocksdb_prefix/include" -L"$rocksdb_prefix/lib"} \
  -L"$libdir" -lsstfilter -lrocksdb
if "$work/app_plain" "$work/db3" 2> "$work/plain.err"; then
  echo "FAIL: the control run found the policy without the package's link settings" >&2
  exit 1
fi
echo "as expected: $(cat "$work/plain.err")"
echo "1 passed, 0 failed"
