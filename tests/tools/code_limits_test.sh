#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The limits that keep the code readable in pieces: every source file of core/, plugin/,
# db_bench_ext/, redis/ and java/ at most 500 lines, no function there over 80 lines, and the
# README at most 200 lines. Fails naming each file or function beyond its limit.
#
# A function is found as clang-format lays it out: its signature starts at column 0 (a member
# defined in its class, at column 2), its body opens at the end of the signature's last line, and
# closes with a lone "}" at the signature's column; its length counts from the signature's first
# line (a template line included) to that brace.
#
#   code_limits_test.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=tests/tools/project_files.sh
source "$(dirname "${BASH_SOURCE[0]}")/project_files.sh"
cd "$1"
readonly kMaxFileLines=500 kMaxFunctionLines=80 kMaxReadmeLines=200
mapfile -t files < <(ProjectFiles | grep -E '^(core|plugin|db_bench_ext|redis|java)/.*\.(cc|h|c|java)$')
[ "${#files[@]}" -gt 0 ] || { echo "code_limits_test: no sources found" >&2; exit 1; }
failed=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  lines=$(wc -l < "$f")
  if [ "$lines" -gt "$kMaxFileLines" ]; then
    echo "code_limits_test: $f has $lines lines (at most $kMaxFileLines)" >&2
    failed=$((failed + 1))
  fi
done
readme=$(wc -l < README.md)
if [ "$readme" -gt "$kMaxReadmeLines" ]; then
  echo "code_limits_test: README.md has $readme lines (at most $kMaxReadmeLines)" >&2
  failed=$((failed + 1))
fi
long=$(awk -v max="$kMaxFunctionLines" '
  FNR == 1 { for (d = 0; d <= 2; d += 2) { start[d] = 0; pending[d] = 0 } }
  {
    line = $0
    match(line, /^ */)
    indent = RLENGTH
    for (d = 0; d <= 2; d += 2) {
      if (line ~ /^[ \t]*$/) { pending[d] = 0; continue }
      if (indent > d) {  # a signature continued, or a body
        if (pending[d] && line ~ /;$/) pending[d] = 0
        else if (pending[d] && line ~ /\{$/) { start[d] = pending[d]; sig[d] = first[d]; pending[d] = 0 }
        continue
      }
      if (indent < d) continue
      body = substr(line, d + 1)
      if (body == "}") {
        if (start[d] > 0 && FNR - start[d] + 1 > max)
          printf "%s:%d: %s (%d lines)\n", FILENAME, start[d], sig[d], FNR - start[d] + 1
        start[d] = 0
        pending[d] = 0
        continue
      }
      if (body ~ /^(\/\/|#|}|public:|private:|protected:)/) { pending[d] = 0; continue }
      if (!pending[d]) { pending[d] = FNR; first[d] = body }
      if (body ~ /;$/ || first[d] ~ /^(namespace|class|struct|enum|union|extern)( |$)/) {
        pending[d] = 0
        continue
      }
      if (first[d] ~ /^template/ && body !~ /^template/) first[d] = body
      if (body ~ /\{$/) {
        if (first[d] ~ /\(/) { start[d] = pending[d]; sig[d] = first[d] }
        pending[d] = 0
      }
    }
  }' "${files[@]}")
if [ -n "$long" ]; then
  while IFS= read -r entry; do
    echo "code_limits_test: $entry, beyond $kMaxFunctionLines" >&2
    failed=$((failed + 1))
  done <<< "$long"
fi
[ "$failed" -eq 0 ] || exit 1
echo "code_limits_test: ${#files[@]} files within $kMaxFileLines lines, functions within $kMaxFunctionLines, README $readme lines"
