#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The RocksDB versions this machine can test sstfilter against, oldest first, one a line: the
# one list that CI (.ci/run) and scripts/stress.sh take, so that a version added to
# ../shared/rocksdb/ (beside the project's root) is tested without an edit.
#
#   scripts/rocksdb-versions.sh installed   Debian's installed RocksDB (librocksdb-dev), the default
#   scripts/rocksdb-versions.sh builds      the installs in ../shared/rocksdb/<version>/ (include/,
#                                           lib/cmake/rocksdb/): the suite runs against each
#   scripts/rocksdb-versions.sh all         installed and builds together, oldest first: the
#                                           upgrade chain
#   scripts/rocksdb-versions.sh stress      the versions that have a bin/db_stress there and
#                                           sstfilter can be built against (installed or builds)
#   scripts/rocksdb-versions.sh sources     the source tarballs in ../shared/rocksdb/src/, as
#                                           "VERSION PATH" (rocksdb_<version>.orig.tar.gz)
#
# Exits 1 with one line on stderr when a list would be empty, so that a caller never runs a
# matrix of nothing and passes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared="${SSTFILTER_SHARED_ROCKSDB:-$root/../shared/rocksdb}"

installed() {
  local h=/usr/include/rocksdb/version.h
  [ -f "$h" ] || return 0
  awk '/define ROCKSDB_MAJOR/ {a=$3} /define ROCKSDB_MINOR/ {b=$3} /define ROCKSDB_PATCH/ {c=$3}
       END { if (a != "") print a "." b "." c }' "$h"
}
builds() {
  local d
  for d in "$shared"/*/; do
    d=${d%/}
    [[ "$(basename "$d")" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
    if [ -d "$d/include/rocksdb" ] && [ -d "$d/lib/cmake/rocksdb" ]; then basename "$d"; fi
  done | sort -V
}
stress() {
  local d v buildable
  buildable=" $(installed) $(builds | tr '\n' ' ') "
  for d in "$shared"/*/; do
    d=${d%/}
    v=$(basename "$d")
    if [ -x "$d/bin/db_stress" ] && [[ "$buildable" == *" $v "* ]]; then echo "$v"; fi
  done | sort -V
}
sources() {
  local f v
  for f in "$shared"/src/rocksdb_*.orig.tar.*; do
    [ -f "$f" ] || continue
    v=$(basename "$f")
    v=${v#rocksdb_}
    v=${v%%.orig.tar.*}
    echo "$v $(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
  done | sort -V
}

case "${1:-}" in
  installed) out=$(installed) ;;
  builds) out=$(builds) ;;
  all) out=$({ installed; builds; } | sort -V -u) ;;
  stress) out=$(stress) ;;
  sources) out=$(sources) ;;
  *) echo "usage: rocksdb-versions.sh installed|builds|all|stress|sources" >&2; exit 2 ;;
esac
if [ -z "$out" ]; then
  echo "rocksdb-versions.sh: no RocksDB for '$1' (looked in /usr/include/rocksdb and $shared)" >&2
  exit 1
fi
echo "$out"
