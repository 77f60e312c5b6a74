# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the tests that read the project's own files: ProjectFiles prints, one a line, the
# files of the project in the current directory, as git sees them (tracked, and untracked but not
# ignored) in a checkout, else every file outside build directories and .git.
ProjectFiles() {
  if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard
  else
    find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||'
  fi
}
