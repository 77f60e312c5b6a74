#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A library exports exactly its API: the demangled dynamic symbols it defines must equal the list
# (tests/install/exported_symbols.txt for libsstfilter.so, core_exported_symbols.txt for
# libsstfilter_core.so). A symbol of core/ or of a private class that leaks (a clash
# waiting to happen with another copy of the same code in a program), or an API symbol that went
# missing, fails the test and is named. After a deliberate API change, name the new function or
# class in the library's exports.map (plugin/, core/), then regenerate the list with
#   nm -D --defined-only --demangle LIBRARY | cut -d' ' -f3- | LC_ALL=C sort
#
#   exported_symbols_test.sh LIBRARY EXPECTED_LIST
set -euo pipefail
lib=$1
expected=$2
actual=$(nm -D --defined-only --demangle "$lib" | cut -d' ' -f3- | LC_ALL=C sort)
if [ "$(wc -l < "$expected")" -lt 5 ]; then
  echo "exported_symbols_test: $expected lists too few symbols to be the API" >&2
  exit 1
fi
if ! diff <(echo "$actual") "$expected" > /dev/null; then
  echo "exported_symbols_test: $lib exports other symbols than its API" >&2
  echo "exported but not API (<) / API but not exported (>):" >&2
  diff <(echo "$actual") "$expected" >&2 || true
  exit 1
fi
echo "exported_symbols_test: $(echo "$actual" | wc -l) symbols, exactly the API"
