#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the core component alone (cmake --install --component core) into a temporary prefix and
# builds an application of it (tests/install/core_app) with find_package(sstfilter COMPONENTS core)
# and with pkg-config sstfilter-core, then runs both, and the example programs (examples/). Checks that the component holds no RocksDB
# plugin, that the application does not load RocksDB, and that asking a core-only install for the
# plugin fails with a message.
#
#   core_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(readlink -f "$1")
src=$(readlink -f "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" --component core > "$work/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libsstfilter_core.so' | head -n 1)")
if find "$prefix" -name 'libsstfilter.so*' -o -name 'sstfilter.h' | grep -q .; then
  echo "FAIL: the core component installed plugin files:" >&2
  find "$prefix" -name 'libsstfilter.so*' -o -name 'sstfilter.h' >&2
  exit 1
fi
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "== find_package(sstfilter COMPONENTS core)"
cmake -S "$src/tests/install/core_app" -B "$work/app" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/app.log"
cmake --build "$work/app" > "$work/app-build.log"
"$work/app/core_app"
if ldd "$work/app/core_app" | grep -q rocksdb; then
  echo "FAIL: the core application loads RocksDB:" >&2
  ldd "$work/app/core_app" >&2
  exit 1
fi

echo "== pkg-config sstfilter-core"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++17 "$src/tests/install/core_app/main.cc" -o "$work/app_pc" \
  $(pkg-config --cflags --libs sstfilter-core)
"$work/app_pc"

echo "== the example programs (examples/), built against the installed package"
cmake -S "$src/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" > "$work/examples.log"
cmake --build "$work/examples" > "$work/examples-build.log"
"$work/examples/dedup" 200000 0.3 0.001
"$work/examples/read_exclusion" 1000 0.01
if "$work/examples/dedup" 0 2> "$work/dedup.err"; then
  echo "FAIL: dedup accepted 0 events" >&2
  exit 1
fi
[ "$(wc -l < "$work/dedup.err")" -eq 1 ] ||
  { echo "FAIL: dedup's error is not one line:" >&2; cat "$work/dedup.err" >&2; exit 1; }

echo "== find_package(sstfilter COMPONENTS plugin) on a core-only install"
mkdir -p "$work/plugin_app"
cat > "$work/plugin_app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(wants_plugin LANGUAGES CXX)
find_package(sstfilter REQUIRED COMPONENTS plugin)
CMAKE
if cmake -S "$work/plugin_app" -B "$work/plugin_app/build" -DCMAKE_PREFIX_PATH="$prefix" \
     > "$work/plugin.log" 2>&1; then
  echo "FAIL: a core-only install claimed the plugin component" >&2
  exit 1
fi
grep -o "has no component 'plugin'[^(]*" "$work/plugin.log" | head -n 1 |
  sed 's/^/as expected: /'
grep -q "has no component 'plugin'" "$work/plugin.log" ||
  { echo "FAIL: no message naming the missing component:" >&2; cat "$work/plugin.log" >&2; exit 1; }
echo "== the license, as the installed component states it"
grep -qx "License: Apache-2.0" "$libdir/pkgconfig/sstfilter-core.pc"
cmp "$src/LICENSE" "$prefix/share/doc/sstfilter/LICENSE"
echo "Apache-2.0: in sstfilter-core.pc and share/doc/sstfilter/LICENSE"
echo "1 passed, 0 failed"
