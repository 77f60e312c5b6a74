#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages named that are not installed yet (apt-get update first), as root;
# says which on stderr. Not root and some missing: exits 1 naming them. The scripts' one way to
# install what they need (setup.sh, fuzz.sh, build-rocksjava.sh).
#
#   scripts/install-packages.sh CALLER PACKAGE...
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: install-packages.sh CALLER PACKAGE..." >&2
  exit 2
fi
caller=$1
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "$caller: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "$caller: missing packages and not root: run as root, or apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
