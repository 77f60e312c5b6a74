# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the benchmark and build scripts: the checks of their arguments, each failing
# through the caller's die() (one line on stderr, exit 2).

# RequirePositive NAME VALUE...: each VALUE (of --NAME) a positive integer.
RequirePositive() {
  local name=$1 v
  shift
  for v in "$@"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "--$name must be a positive integer"
  done
}

# SplitEach NAME LIST PATTERN WHAT ARRAY: the comma-separated LIST (of --NAME) into the array
# named ARRAY, each item matching the extended regular expression PATTERN whole, else
# "--NAME: 'item' is not WHAT".
SplitEach() {
  local name=$1 list=$2 pattern=$3 what=$4 x
  local -n items=$5
  IFS=, read -r -a items <<< "$list"
  for x in "${items[@]}"; do
    [[ "$x" =~ ^($pattern)$ ]] || die "--$name: '$x' is not $what"
  done
}

# ParseArgs SPEC ARG...: each ARG --name=value sets the variable that SPEC (space-separated
# entries) maps it to, name=variable; each ARG --name, an entry name?variable, sets it to true.
# Any other ARG: "unknown argument ARG (see the comment at the top of the script)".
ParseArgs() {
  local arg entry matched entries
  read -r -a entries <<< "$1"  # not a glob: "name?variable" would be one
  shift
  for arg in "$@"; do
    matched=false
    for entry in "${entries[@]}"; do
      if [[ "$entry" == *=* && "$arg" == "--${entry%%=*}="* ]]; then
        printf -v "${entry#*=}" '%s' "${arg#*=}"
      elif [[ "$entry" == *\?* && "$arg" == "--${entry%%\?*}" ]]; then
        printf -v "${entry#*\?}" '%s' true
      else
        continue
      fi
      matched=true
      break
    done
    $matched || die "unknown argument $arg (see the comment at the top of the script)"
  done
}

# ParseBuildArgs SPEC ARG...: the build scripts' words: one SOURCE (a word not starting with -),
# --work DIR into $work, and each --flag that SPEC (space-separated entries flag=variable) names,
# setting its variable to 1. Any other option: "unknown option"; no SOURCE: "USAGE", the caller's.
# shellcheck disable=SC2034  # work and source are the caller's
ParseBuildArgs() {
  local entry matched entries
  read -r -a entries <<< "$1"
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --work) [ $# -ge 2 ] || die "--work needs a directory"
              work="$2"; shift ;;
      -*) matched=false
          for entry in "${entries[@]}"; do
            if [ "$1" = "--${entry%%=*}" ]; then printf -v "${entry#*=}" '%s' 1; matched=true; fi
          done
          $matched || die "unknown option '$1'" ;;
      *) source="$1" ;;
    esac
    shift
  done
  [ -n "$source" ] || die "usage: $USAGE"
}
