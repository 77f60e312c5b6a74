#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a RocksDB install usable as a CMake prefix and prints the prefix to use.
#
#   scripts/rocksdb-prefix.sh VERSION|PREFIX VIEW_DIR
#
# VERSION (9.10.0, 9.11.2, ...: scripts/rocksdb-versions.sh builds) names a build in
# ../shared/rocksdb/ beside the project's root; PREFIX is any install (include/,
# lib/librocksdb.so.*, lib/cmake/rocksdb/). The printed prefix is VIEW_DIR, a tree of symbolic
# links to that install in which the library's soname links (librocksdb.so.9 ->
# librocksdb.so.9.11.2, librocksdb.so) are real links: copies of an install can hold them as small
# text files instead, which the linker and the loader reject ("file too short"). Its lib/ is where
# programs built against it find the library (CMake's build rpath, LD_LIBRARY_PATH).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -ne 2 ]; then
  echo "usage: rocksdb-prefix.sh VERSION|PREFIX VIEW_DIR" >&2
  exit 2
fi
case "$1" in
  */*) src=$1 ;;                            # a path
  *) src="$root/../shared/rocksdb/$1" ;;    # a version
esac
if [ ! -d "$src/include/rocksdb" ] || [ ! -d "$src/lib/cmake/rocksdb" ]; then
  echo "rocksdb-prefix.sh: $src has no include/rocksdb/ and lib/cmake/rocksdb/: not a RocksDB install" >&2
  exit 1
fi
src=$(cd "$src" && pwd)
view=$2
rm -rf "$view"
mkdir -p "$view/lib"
ln -s "$src/include" "$view/include"
ln -s "$src/lib/cmake" "$view/lib/cmake"
# pkg-config files are copied, not linked: their prefix is relative to the directory they are
# found in (${pcfiledir}/../..), which must be the view's.
if [ -d "$src/lib/pkgconfig" ]; then
  mkdir -p "$view/lib/pkgconfig"
  find "$src/lib/pkgconfig" -maxdepth 1 -name '*.pc' -exec cp {} "$view/lib/pkgconfig/" \;
fi
[ -d "$src/bin" ] && ln -s "$src/bin" "$view/bin"
# The library itself: the librocksdb.so* that is an ELF file (the newest, should there be several);
# then its soname and the linker's name as links to it.
lib=""
while read -r f; do
  if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ] && [ ! -L "$f" ]; then lib=$f; fi
done < <(ls "$src"/lib/librocksdb.so* 2>/dev/null | sort -V)
if [ -z "$lib" ]; then
  echo "rocksdb-prefix.sh: no shared librocksdb in $src/lib" >&2
  exit 1
fi
name=$(basename "$lib")
ln -s "$lib" "$view/lib/$name"
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ -n "$soname" ] && [ "$soname" != "$name" ] && ln -s "$name" "$view/lib/$soname"
[ "$name" != librocksdb.so ] && ln -s "$name" "$view/lib/librocksdb.so"
echo "$view"
