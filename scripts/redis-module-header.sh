#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts Redis's module API header, redismodule.h (BSD-3-Clause), of the redis source package that
# Debian ships into DIR/redismodule.h, for the module's build (redis/CMakeLists.txt looks in
# BUILD_DIR/redis-include). It takes the header from, in order: the tarball or source tree named by
# REDIS_SOURCE; a redis_*.orig.tar.gz in ../shared/redis/src beside the checkout; Debian itself
# (apt-get source redis, after adding a deb-src line for bookworm if there is none; as root).
#
#   scripts/redis-module-header.sh DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: redis-module-header.sh DIR" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dest=$1
mkdir -p "$dest"
[ -s "$dest/redismodule.h" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

FromTarball() {  # TARBALL
  local member
  member=$(tar tzf "$1" | grep '/src/redismodule\.h$') || return 1  # all read: no SIGPIPE
  member=${member%%$'\n'*}  # the first, if several
  tar xzf "$1" -C "$work" "$member" && cp "$work/$member" "$dest/redismodule.h"
}

source_given=${REDIS_SOURCE:-}
if [ -n "$source_given" ]; then
  if [ -d "$source_given" ]; then
    cp "$source_given/src/redismodule.h" "$dest/redismodule.h"
  else
    FromTarball "$source_given"
  fi
elif tarball=$(ls "$root"/../shared/redis/src/redis_*.orig.tar.gz 2>/dev/null | head -n 1) &&
     [ -n "$tarball" ]; then
  FromTarball "$tarball"
else
  if [ "$(id -u)" -ne 0 ]; then
    echo "redis-module-header.sh: no redis source here and not root to apt-get source it;" \
         "set REDIS_SOURCE to a redis source tarball or tree" >&2
    exit 1
  fi
  if ! grep -rqs '^deb-src .*bookworm' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb-src http://deb.debian.org/debian bookworm main" \
      > /etc/apt/sources.list.d/sstfilter-redis-src.list
  fi
  "$root/scripts/install-packages.sh" redis-module-header.sh dpkg-dev
  apt-get update -qq >&2
  (cd "$work" && apt-get source -qq --download-only redis >&2)
  FromTarball "$(ls "$work"/redis_*.orig.tar.gz | head -n 1)"
fi
[ -s "$dest/redismodule.h" ] || { echo "redis-module-header.sh: no redismodule.h found" >&2; exit 1; }
echo "redis-module-header.sh: $dest/redismodule.h" >&2
