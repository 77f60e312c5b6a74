#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds RocksDB with sstfilter inside it (RocksDB's plugin convention: this repository as
# plugin/sstfilter, ROCKSDB_PLUGINS=sstfilter, sstfilter.mk), then a small program linked
# statically against that librocksdb (tests/in_tree) which, with nothing preloaded, opens a
# database with filter_policy=sstfilter.Leveled:10 and table_properties_collectors=
# sstfilter.RangeFilter from an options string and proves both are used.
#
#   scripts/build-into-rocksdb.sh SOURCE [--make [--compile-only] | --jni] [--unoptimized]
#                                 [--work DIR]
#
# SOURCE: a RocksDB source tree or a source tarball (.tar.xz/.tar.gz, extracted under the work
# directory), such as ../shared/rocksdb/src/rocksdb_9.11.2.orig.tar.gz. The sources this build needs
# are copied to SOURCE/plugin/sstfilter (a copy, not a link: RocksDB's Makefile writes object files
# next to the sources), unless this repository already is that directory. --make: build with
# RocksDB's Makefile instead of CMake. --work: where the build goes (default build-in-rocksdb/ in
# this repository). --compile-only (with --make): only sstfilter's objects, compiled by RocksDB's
# Makefile with its flags (-fno-rtti among them), and a dry run of the library's build that must
# archive them into librocksdb.a and name sstfilter_register among the built-in registrars of the
# util/build_version.cc it generates: what sstfilter.mk decides, in a few minutes, without
# RocksDB's own sources or the static program (CI's check; the full build is the user's).
# --jni: CMake with WITH_JNI=ON, and also RocksJava's JNI library and jar with
# sstfilter inside (java/jni/sstfilter_jni.cc added to it), copied to WORK/java/ (the rest of the
# Java build is scripts/build-rocksjava.sh's). RocksDB's library alone takes 10 (CMake) to 12
# (make) minutes on 2 cores. --unoptimized (CMake): -O0 instead of Release's -O3, NDEBUG kept; a
# build for tests (CI's), whose compile takes about 0.7x as long; never one to ship or measure.
# RocksDB's own sources do not all build with -Werror under g++ 12 (11.8.1's -Wrestrict in
# options/configurable.cc), so warnings are not errors here; sstfilter's own build keeps them at
# zero.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
source=""
use_make=0
use_jni=0
compile_only=0
unoptimized=0
work="$root/build-in-rocksdb"
die() { echo "build-into-rocksdb.sh: $*" >&2; exit 2; }
USAGE="SOURCE_DIR|TARBALL [--make [--compile-only] | --jni] [--unoptimized] [--work DIR]"
source "$root/scripts/args.sh"
ParseBuildArgs "make=use_make jni=use_jni compile-only=compile_only unoptimized=unoptimized" "$@"
if [ $use_make = 1 ] && [ $use_jni = 1 ]; then
  echo "build-into-rocksdb.sh: --jni builds with CMake; it does not go with --make" >&2
  exit 2
fi
if [ $compile_only = 1 ] && [ $use_make = 0 ]; then
  echo "build-into-rocksdb.sh: --compile-only goes with --make" >&2
  exit 2
fi
if [ $unoptimized = 1 ] && [ $use_make = 1 ]; then
  echo "build-into-rocksdb.sh: --unoptimized builds with CMake; it does not go with --make" >&2
  exit 2
fi
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
jobs=$(nproc)
# Each step logs to a file under the work directory; a failed step shows the end of its log.
log=""
# shellcheck disable=SC2154  # status is assigned inside the trap
trap 'status=$?; if [ "$status" -ne 0 ] && [ -n "$log" ]; then echo "build-into-rocksdb.sh: failed; the end of $log:" >&2; tail -n 30 "$log" | cut -c 1-400 >&2; fi' EXIT

if [ -f "$source" ]; then
  src="$work/src"
  if [ ! -f "$src/.extracted-$(basename "$source")" ]; then
    rm -rf "$src"
    mkdir -p "$src"
    tar -xf "$source" -C "$src" --strip-components=1
    touch "$src/.extracted-$(basename "$source")"
  fi
elif [ -d "$source" ]; then
  src=$(cd "$source" && pwd -P)
else
  echo "build-into-rocksdb.sh: $source is neither a directory nor a file" >&2
  exit 1
fi
if [ ! -f "$src/include/rocksdb/version.h" ] || [ ! -d "$src/plugin" ]; then
  echo "build-into-rocksdb.sh: $src is not a RocksDB source tree" >&2
  exit 1
fi
plugin="$src/plugin/sstfilter"
if [ "$(readlink -f "$plugin")" != "$root" ]; then
  rm -rf "$plugin"
  mkdir -p "$plugin/java"
  cp -r "$root"/{CMakeLists.txt,sstfilter.mk,core,plugin,compat,include} "$plugin/"
  cp -r "$root/java/jni" "$plugin/java/"
fi
major=$(awk '/define ROCKSDB_MAJOR/ {print $3}' "$src/include/rocksdb/version.h")
minor=$(awk '/define ROCKSDB_MINOR/ {print $3}' "$src/include/rocksdb/version.h")
std=17
[ $((major * 100 + minor)) -ge 1007 ] && std=20
echo "== RocksDB $major.$minor from $src, with sstfilter built in ($([ $use_make = 1 ] && echo make || echo cmake))"

if [ $use_make = 0 ]; then
  targets=(rocksdb)
  jni_flags=(-DWITH_JNI=OFF)
  if [ $use_jni = 1 ]; then
    # RocksJava's CMake downloads the jars of its tests (JUnit, Hamcrest, AssertJ, Mockito,
    # cglib) into java/test-libs when they are missing, and compiles a few test classes into its
    # main jar. Debian's jars take their place (junit4, libassertj-core-java; build-rocksjava.sh
    # installs them); Mockito and cglib, which those classes do not use, are empty jars. Nothing
    # is downloaded.
    test_libs="$src/java/test-libs"
    mkdir -p "$test_libs" "$work/empty-jar"
    for tool in javac jar; do
      command -v "$tool" > /dev/null || {
        echo "build-into-rocksdb.sh: --jni needs $tool: apt-get install openjdk-17-jdk-headless" >&2
        exit 1
      }
    done
    # The jar names RocksJava's CMake expects, from its version lines; a jar already there (a
    # source tree of the user's) is left as it is.
    v() {
      local version
      version=$(sed -n "s/^set(JAVA_$1_VERSION \"\(.*\)\")\$/\1/p" "$src/java/CMakeLists.txt")
      [ -n "$version" ] || {
        echo "build-into-rocksdb.sh: no JAVA_$1_VERSION in $src/java/CMakeLists.txt" >&2
        exit 1
      }
      echo "$version"
    }
    stand_in() {  # stand_in JAR [DEBIAN_JAR]: DEBIAN_JAR linked, or an empty jar
      if [ $# -gt 1 ] && [ ! -f "$2" ]; then
        echo "build-into-rocksdb.sh: --jni needs $2: apt-get install junit4 libassertj-core-java" >&2
        exit 1
      fi
      [ -e "$test_libs/$1" ] && return
      if [ $# -gt 1 ]; then
        ln -s "$2" "$test_libs/$1"
      else
        jar cf "$test_libs/$1" -C "$work/empty-jar" .
      fi
    }
    # Names first, each in an assignment: set -e stops on a failed $(v ...) there, not in an
    # argument.
    junit_jar="junit-$(v JUNIT).jar"
    hamcrest_jar="hamcrest-$(v HAMCR).jar"
    assertj_jar="assertj-core-$(v ASSERTJ).jar"
    mockito_jar="mockito-all-$(v MOCKITO).jar"
    cglib_jar="cglib-$(v CGLIB).jar"
    stand_in "$junit_jar" /usr/share/java/junit4.jar
    stand_in "$hamcrest_jar" /usr/share/java/hamcrest.jar
    stand_in "$assertj_jar" /usr/share/java/assertj-core.jar
    stand_in "$mockito_jar"
    stand_in "$cglib_jar"
    # CMake's FindJNI looks for AWT too, which a headless JDK (openjdk-17-jdk-headless) lacks;
    # RocksJava needs only jni.h. The JDK is javac's; the AWT variables name what it has.
    java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
    jni_flags=(-DWITH_JNI=ON "-DJAVA_HOME=$java_home" "-DJAVA_INCLUDE_PATH=$java_home/include"
               "-DJAVA_INCLUDE_PATH2=$java_home/include/linux"
               "-DJAVA_AWT_INCLUDE_PATH=$java_home/include"
               "-DJAVA_JVM_LIBRARY=$java_home/lib/server/libjvm.so"
               "-DJAVA_AWT_LIBRARY=$java_home/lib/server/libjvm.so")
    targets+=(rocksdbjava)
  fi
  # RocksDB's CMake appends its own flags (-fno-rtti) to CMAKE_CXX_FLAGS_RELEASE. Set every time,
  # since the CMake cache keeps it: a work directory built --unoptimized once is -O3 again without.
  optimization="-O3 -DNDEBUG"
  [ $unoptimized = 1 ] && optimization="-O0 -DNDEBUG"
  log="$work/configure.log"
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DROCKSDB_PLUGINS=sstfilter \
    -DPORTABLE=1 -DWITH_GFLAGS=OFF -DWITH_TESTS=OFF -DWITH_BENCHMARK_TOOLS=OFF \
    -DWITH_CORE_TOOLS=OFF -DWITH_TOOLS=OFF -DROCKSDB_BUILD_SHARED=OFF -DWITH_LIBURING=OFF \
    -DFAIL_ON_WARNINGS=OFF "${jni_flags[@]}" "-DCMAKE_CXX_FLAGS_RELEASE=$optimization" > "$log"
  log="$work/build.log"
  cmake --build "$work/build" -j "$jobs" --target "${targets[@]}" > "$log" 2>&1
  if [ $use_jni = 1 ]; then
    rm -rf "$work/java"
    mkdir -p "$work/java"
    cp "$work"/build/java/rocksdbjni-*-linux*.jar "$work/java/"
  fi
  log="$work/install.log"
  # With WITH_JNI, RocksJava's CMake also installs its javadoc, to /usr/share/javadoc whatever the
  # prefix: the program needs only the library, its headers and its CMake package (devel).
  install_scope=()
  [ $use_jni = 1 ] && install_scope=(--component devel)
  cmake --install "$work/build" --prefix "$work/prefix" "${install_scope[@]}" > "$log"
  log="$work/check-build.log"
  cmake -S "$root/tests/in_tree" -B "$work/check" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_CXX_STANDARD="$std" -DCMAKE_BUILD_TYPE=Release > "$log"
  cmake --build "$work/check" >> "$log" 2>&1
  check="$work/check/in_tree_check"
elif [ $compile_only = 1 ]; then
  make_args=(ROCKSDB_PLUGINS=sstfilter PORTABLE=1 DEBUG_LEVEL=0 DISABLE_WARNING_AS_ERROR=1
             SKIP_DEPENDS=1)
  objects=()
  read -r -a sources <<< "$(sed -n 's/^sstfilter_SOURCES = //p' "$plugin/sstfilter.mk")"
  for source_file in "${sources[@]}"; do objects+=("plugin/sstfilter/${source_file%.cc}.o"); done
  [ ${#objects[@]} -gt 0 ] || { echo "build-into-rocksdb.sh: no sstfilter_SOURCES in sstfilter.mk" >&2; exit 1; }
  log="$work/build.log"
  make -C "$src" -j "$jobs" "${objects[@]}" "${make_args[@]}" > "$log" 2>&1
  log="$work/plan.log"
  make -C "$src" -n static_lib "${make_args[@]}" > "$log" 2>&1
  # The archive's command, one word a line (its objects are ./plugin/sstfilter/...).
  archived=$(grep -E '^[^ ]*ar +[a-z]+ +librocksdb\.a ' "$log" | tr -s ' ' '\n' || true)
  for object in "${objects[@]}"; do
    grep -qxF "./$object" <<< "$archived" || {
      echo "build-into-rocksdb.sh: make would not archive $object into librocksdb.a ($log)" >&2
      exit 1
    }
  done
  # The sed that writes util/build_version.cc, its braces and quotes escaped for the shell.
  if ! grep -qF '{\"sstfilter\"\, sstfilter_register}' "$log" ||
     ! grep -qF 'int sstfilter_register(' "$log"; then
    echo "build-into-rocksdb.sh: make's util/build_version.cc would not name sstfilter_register ($log)" >&2
    exit 1
  fi
  log=""
  echo "${#objects[@]} objects compiled by make, archived and registered in its plan; 1 passed, 0 failed"
  exit 0
else
  log="$work/build.log"
  # SKIP_DEPENDS=1: no header dependency files for the ~700 sources of RocksDB's tests and tools
  # too, which a one-time build of the library never reads (minutes of preprocessing on 2 cores).
  make -C "$src" -j "$jobs" static_lib ROCKSDB_PLUGINS=sstfilter PORTABLE=1 DEBUG_LEVEL=0 \
    DISABLE_WARNING_AS_ERROR=1 SKIP_DEPENDS=1 > "$log" 2>&1
  # A static library carries no dependencies: the program links the ones RocksDB's platform
  # detection found (compression and the like) and sstfilter's libxxhash and libhwy.
  ldflags=$(sed -n 's/^PLATFORM_LDFLAGS=//p' "$src/make_config.mk")
  log="$work/check-build.log"
  # shellcheck disable=SC2086
  ${CXX:-g++} -std=c++$std -O2 "$root/tests/in_tree/main.cc" -o "$work/in_tree_check" \
    -I"$src/include" "$src/librocksdb.a" -lxxhash -lhwy $ldflags -lpthread -ldl > "$log" 2>&1
  check="$work/in_tree_check"
fi
log=""
libraries=$(ldd "$check")
if grep -q librocksdb <<< "$libraries"; then
  echo "build-into-rocksdb.sh: $check links a shared librocksdb" >&2
  exit 1
fi
rm -rf "$work/db"
"$check" "$work/db"
echo "1 passed, 0 failed"
