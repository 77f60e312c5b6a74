#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source, build and script file of the project states its license as an SPDX line: the
# first line, or the second after a #! line. Fails naming each file without one.
#
#   license_lines_test.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=tests/tools/project_files.sh
source "$(dirname "${BASH_SOURCE[0]}")/project_files.sh"
cd "$1"
mapfile -t files < <(ProjectFiles)
line='SPDX-License-Identifier: Apache-2.0'
checked=0
missing=0
for f in "${files[@]}"; do
  case "$f" in
    *.h | *.cc | *.java | *.sh | *.mk | *.in | *.map | CMakeLists.txt | */CMakeLists.txt | .ci/run) ;;
    *) continue ;;
  esac
  [ -f "$f" ] || continue
  checked=$((checked + 1))
  if ! head -n 2 "$f" | grep -q "^\(//\|#\) $line\$"; then
    echo "license_lines_test: $f has no '$line' line at its top" >&2
    missing=$((missing + 1))
  fi
done
[ "$checked" -gt 100 ] || { echo "license_lines_test: only $checked files found" >&2; exit 1; }
echo "$checked files, $missing without the SPDX line"
[ "$missing" -eq 0 ] && echo "1 passed, 0 failed" || { echo "0 passed, 1 failed"; exit 1; }
