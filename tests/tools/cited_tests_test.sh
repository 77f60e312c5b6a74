#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every test that a comment or a document names as Suite.Name exists. A citation is a Suite.Name
# written anywhere in the sources, scripts and docs whose suite is one the tests define (TEST,
# TEST_F, TEST_P, TYPED_TEST), or any Word.Name whose name is a long CamelCase phrase (15 or more
# characters), the shape of this project's test names, so that a wrong suite is caught too. A
# renamed test otherwise leaves comments that point at nothing. Fails naming each dangling
# citation.
#
#   cited_tests_test.sh SOURCE_DIR
set -euo pipefail
# shellcheck source=tests/tools/project_files.sh
source "$(dirname "${BASH_SOURCE[0]}")/project_files.sh"
cd "$1"
mapfile -t files < <(ProjectFiles)
sources=()
for f in "${files[@]}"; do
  case "$f" in
    *.h | *.cc | *.java | *.sh | *.md | *.py) [ -f "$f" ] && sources+=("$f") ;;
  esac
done
tests=()
for f in "${sources[@]}"; do
  case "$f" in tests/*.cc) tests+=("$f") ;; esac
done
# "Suite.Name" of every test the suites define.
defined=$(grep -hoE '^(TEST|TEST_F|TEST_P|TYPED_TEST)\([A-Za-z0-9_]+, *[A-Za-z0-9_]+\)' "${tests[@]}" |
            sed -E 's/^[A-Z_]+\(([A-Za-z0-9_]+), *([A-Za-z0-9_]+)\)/\1.\2/' | sort -u)
suites=$(cut -d. -f1 <<< "$defined" | sort -u | paste -sd'|')
[ -n "$suites" ] || { echo "cited_tests_test: no test suites found under tests/" >&2; exit 1; }
cited=0
dangling=0
while IFS=: read -r file citation; do
  cited=$((cited + 1))
  if ! grep -qxF "$citation" <<< "$defined"; then
    echo "cited_tests_test: $file names $citation, which no test defines" >&2
    dangling=$((dangling + 1))
  fi
done < <(grep -oHE "\\b(($suites)\\.[A-Z][A-Za-z0-9_]+|[A-Z][A-Za-z0-9]+\\.[A-Z][a-z]+[A-Za-z0-9]{14,})\\b" \
           "${sources[@]}" | sort -u)
[ "$cited" -gt 10 ] || { echo "cited_tests_test: only $cited citations found" >&2; exit 1; }
echo "$cited citations of tests, $dangling naming no test"
[ "$dangling" -eq 0 ]
