#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layers' includes run one way: db_bench_ext -> plugin -> core -> include/compat, and redis/ and
# java/ -> core or plugin, with nothing running back up. Each folder may include only the folders
# below it:
#   core/          core/ and the public headers without RocksDB (include/sstfilter/ that include
#                  no <rocksdb/...>: the application filters, result.h, hash_key.h, export.h)
#   compat/        compat/ and RocksDB
#   plugin/        plugin/, core/, compat/, include/sstfilter/
#   redis/         redis/, core/ and the public headers without RocksDB
#   java/          java/, plugin/, core/, compat/, include/sstfilter/
#   db_bench_ext/  everything but redis/ and java/
#   include/       the public headers without RocksDB include only each other
# Fails naming each include that runs the wrong way.
#
#   include_layers_test.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=tests/tools/project_files.sh
source "$(dirname "${BASH_SOURCE[0]}")/project_files.sh"
cd "$1"
mapfile -t files < <(ProjectFiles | grep -E '^(core|compat|plugin|redis|java|db_bench_ext|include)/.*\.(cc|h|c)$')
[ "${#files[@]}" -gt 0 ] || { echo "include_layers_test: no sources found" >&2; exit 1; }

# The public headers that need no RocksDB, as "sstfilter/name.h".
core_api=()
for h in include/sstfilter/*.h; do
  grep -qE '^#include <rocksdb/' "$h" || core_api+=("sstfilter/$(basename "$h")")
done

IsCoreApi() {
  local h
  for h in "${core_api[@]}"; do [ "$h" = "$1" ] && return 0; done
  return 1
}

# Allowed "folder/" prefixes of quoted includes, per layer; RocksDB (<rocksdb/...>) separately.
Allowed() {  # LAYER INCLUDE -> status
  local layer="$1" inc="$2"
  case "$layer" in
    core | redis) [[ "$inc" == "$layer/"* || "$inc" == core/* ]] || IsCoreApi "$inc" ;;
    include) IsCoreApi "$inc" ;;
    compat) [[ "$inc" == compat/* || "$inc" == table/* ]] ;;  # table/: RocksDB's own, in-tree
    plugin) [[ "$inc" =~ ^(plugin|core|compat|sstfilter)/ ]] ;;
    java) [[ "$inc" =~ ^(java|plugin|core|compat|sstfilter)/ ]] ;;
    db_bench_ext) [[ ! "$inc" =~ ^(redis|java)/ ]] ;;
  esac
}
MayUseRocksDb() { [[ ! "$1" =~ ^(core|redis|include)$ ]]; }

failed=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  layer="${f%%/*}"
  # A public header without RocksDB is held to the core's rule.
  if [ "$layer" = include ] && ! IsCoreApi "${f#include/}"; then continue; fi
  while IFS= read -r line; do
    number="${line%%:*}"
    text="${line#*:}"
    if [[ "$text" =~ ^#include\ \"([^\"]+)\" ]]; then
      inc="${BASH_REMATCH[1]}"
      [[ "$inc" == */* ]] || continue  # a file beside it
      Allowed "$layer" "$inc" && continue
    elif [[ "$text" =~ ^#include\ \<rocksdb/ ]]; then
      MayUseRocksDb "$layer" && continue
    else
      continue
    fi
    echo "include_layers_test: $f:$number: $text runs up from $layer/" >&2
    failed=$((failed + 1))
  done < <(grep -nE '^#include ' "$f")
done
[ "$failed" -eq 0 ] || exit 1
echo "include_layers_test: ${#files[@]} files include only the layers below them"
