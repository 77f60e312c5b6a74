#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds RocksJava with sstfilter inside it, from a RocksDB source tree or tarball (the one the
# versions issue tests: ../shared/rocksdb/src/rocksdb_9.11.2.orig.tar.gz), with RocksDB's own CMake
# build (WITH_JNI=ON, ROCKSDB_PLUGINS=sstfilter; scripts/build-into-rocksdb.sh --jni), and
# sstfilter's Java classes (java/src/main/java) into a small jar beside it:
#
#   WORK/java/rocksdbjni-<version>-linux64.jar   RocksDB's jar, its JNI library with sstfilter
#   WORK/java/sstfilter-java.jar                 org.sstfilter.SstFilters
#
#   scripts/build-rocksjava.sh SOURCE [--work DIR] [--test] [--unoptimized]
#
# --work: where the build goes (default build-rocksjava/ in this repository). --test: then runs
# the JUnit tests (java/src/test/java, Debian's junit4) and the example (examples/java).
# --unoptimized: RocksDB compiled at -O0, for tests only (build-into-rocksdb.sh's). Run as
# root, it installs what it needs from Debian (openjdk-17-jdk-headless, junit4,
# libassertj-core-java, the compiler and sstfilter's libraries); nothing is downloaded. 10 to 20
# minutes on 2 cores, most of it RocksDB's library.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
source=""
work="$root/build-rocksjava"
run_tests=0
unoptimized=0
die() { echo "build-rocksjava.sh: $*" >&2; exit 2; }
USAGE="SOURCE_DIR|TARBALL [--work DIR] [--test] [--unoptimized]"
source "$root/scripts/args.sh"
ParseBuildArgs "test=run_tests unoptimized=unoptimized" "$@"
# What the build needs from Debian, installed if missing (as root; nothing else is downloaded).
# junit4 and libassertj-core-java also for RocksJava's own build (build-into-rocksdb.sh --jni).
packages=(cmake g++ make libxxhash-dev libhwy-dev openjdk-17-jdk-headless junit4
          libassertj-core-java)
"$root/scripts/install-packages.sh" build-rocksjava.sh "${packages[@]}"
junit=/usr/share/java/junit4.jar
hamcrest=/usr/share/java/hamcrest.jar

build_flags=(--jni)
[ $unoptimized = 1 ] && build_flags+=(--unoptimized)
bash "$root/scripts/build-into-rocksdb.sh" "$source" "${build_flags[@]}" --work "$work"
out="$work/java"
rocksdbjni=$(ls "$out"/rocksdbjni-*.jar)
# RocksJava's classes run on Java 8 and later; so do sstfilter's.
rm -rf "$out/classes"
javac --release 8 -Xlint:all -Werror -d "$out/classes" -cp "$rocksdbjni" \
  "$root"/java/src/main/java/org/sstfilter/*.java
jar cf "$out/sstfilter-java.jar" -C "$out/classes" .
echo "== $rocksdbjni"
echo "== $out/sstfilter-java.jar"
[ $run_tests = 1 ] || exit 0

echo "== JUnit: java/src/test/java"
rm -rf "$out/test-classes" "$out/example" "$out/db"
classpath="$rocksdbjni:$out/sstfilter-java.jar:$junit:$hamcrest"
javac -Xlint:all -Werror -d "$out/test-classes" -cp "$classpath" \
  "$root"/java/src/test/java/org/sstfilter/*.java
java -Xcheck:jni -Dsstfilter.policyList="$root/tests/policy_list.h" \
  -cp "$classpath:$out/test-classes" org.junit.runner.JUnitCore org.sstfilter.SstFiltersTest
echo "== examples/java/SstFilterExample.java"
javac -Xlint:all -Werror -d "$out/example" -cp "$rocksdbjni:$out/sstfilter-java.jar" \
  "$root/examples/java/SstFilterExample.java"
java -cp "$rocksdbjni:$out/sstfilter-java.jar:$out/example" SstFilterExample "$out/db"
