#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Upgrades keep their filters: databases written with sstfilter on the oldest RocksDB are opened
# on each newer one, then on the older ones again (read-only opens leave them as they were), and
# finally rewritten by the newest (writes and a full compaction) and checked there. Every open
# checks that every key is found, that the filters turn absent keys away (RocksDB's statistics),
# and that no SST file lost its sstfilter filter (tests/plugin/upgrade_tool.cc).
#
#   upgrade_test.sh BUILD_DIR...
#
# Each BUILD_DIR is a build of this repository against one RocksDB (its tests/upgrade_tool), from
# the oldest RocksDB to the newest: for example build build-rocksdb-9.10.0 build-rocksdb-9.11.2
# (.ci/run takes the list from scripts/rocksdb-versions.sh all).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: upgrade_test.sh OLDEST_BUILD_DIR ... NEWEST_BUILD_DIR" >&2
  exit 2
fi
tools=()
for b in "$@"; do
  t="$b/tests/upgrade_tool"
  if [ ! -x "$t" ]; then
    echo "upgrade_test.sh: no $t (build the tests of $b first)" >&2
    exit 1
  fi
  tools+=("$(readlink -f "$t")")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=${#tools[@]}
"${tools[0]}" write "$work"
for ((i = 1; i < n; i++)); do "${tools[i]}" verify "$work"; done        # up
for ((i = n - 2; i >= 0; i--)); do "${tools[i]}" verify "$work"; done   # and down again
"${tools[n - 1]}" verify "$work" --read-write                         # rewritten by the newest
echo "1 passed, 0 failed"
