#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# RocksDB's own stress test (db_stress) over sstfilter: every policy in every configuration where
# filters are used differently, each read checked against db_stress's expected state, then crash
# rounds (kill -9 at a random moment, restart, verify), as db_crashtest.py's blackbox mode does.
# Every file also gets a range filter (table_properties_collectors=sstfilter.RangeFilter in the
# OPTIONS file), so the collector runs under the same load, where db_stress keeps it: RocksDB 7.8's
# db_stress adds its own collector to the OPTIONS file's, 9.10's and later replace them with
# theirs (a probe run finds out which, and the script says so). db_stress's reads do not skip
# files.
#
#   scripts/stress.sh [--duration SECONDS] [--rocksdb VERSION] [--crash-rounds N] [--work DIR]
#
# --duration: the time for the matrix (default 600), shared by its cells; every cell runs at
#   least once. Each run reopens the cell's database --reopen times and verifies every key at
#   its end; later runs of a cell continue on the same database and expected state.
# --rocksdb: the RocksDB whose db_stress runs: Debian's installed one (the default, 7.8.3 on
#   bookworm, "7.8" for short; the db_stress built for it is in ../shared/rocksdb/7.8.3/bin), or an
#   install in ../shared/rocksdb/ (`scripts/rocksdb-versions.sh stress` lists them), with sstfilter
#   built against it by scripts/setup.sh --rocksdb. Its bin/db_stress is what runs.
# --crash-rounds: kill -9 rounds after the matrix (default 10), over the matrix's policy
#   configurations in turn, on one database. Then, always, five kill -9 rounds on another
#   database whose policy switches between RocksDB's filters and sstfilter's, full and
#   partitioned.
# --work: where databases and logs go (default a new directory under ${TMPDIR:-/tmp}).
#
# Exits 1 on any verification failure or db_stress error, and keeps that cell's database and
# log (their paths are printed); exits 0 and removes the work directory otherwise. Prints a
# summary line per cell and closes with "N passed, N failed".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

duration=600
version=""  # Debian's installed RocksDB
crash_rounds=10
work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift ;;
    --rocksdb) version="$2"; shift ;;
    --crash-rounds) crash_rounds="$2"; shift ;;
    --work) work="$2"; shift ;;
    *) echo "stress.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$duration" =~ ^[0-9]+$ ]] && [[ "$crash_rounds" =~ ^[0-9]+$ ]] ||
  { echo "stress.sh: --duration and --crash-rounds take whole numbers" >&2; exit 2; }
# Debian's installed RocksDB is the default build (setup.sh installs it on a new machine); any
# other version is one of the installs in ../shared/rocksdb/ (scripts/rocksdb-versions.sh).
installed=$("$root/scripts/rocksdb-versions.sh" installed 2> /dev/null || true)
if [ -z "$version" ] || [ "$version" = "$installed" ] || [ "$version" = "${installed%.*}" ]; then
  setup=()
else
  setup=(--rocksdb "$version")
fi
build_dir=$("$root/scripts/setup.sh" "${setup[@]}" | tail -n 1)
[ ${#setup[@]} -gt 0 ] || version=$("$root/scripts/rocksdb-versions.sh" installed)
db_stress="$root/../shared/rocksdb/$version/bin/db_stress"
[ -x "$db_stress" ] ||
  { echo "stress.sh: no db_stress at $db_stress (../shared/rocksdb beside the project)" >&2
    exit 2; }
plugin="$build_dir/plugin/libsstfilter.so"
# db_stress finds its librocksdb through the prefix view's real soname links (rocksdb-prefix.sh).
if [ ${#setup[@]} -gt 0 ]; then
  export LD_LIBRARY_PATH="$build_dir/rocksdb-prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -z "$work" ] && work=$(mktemp -d "${TMPDIR:-/tmp}/sstfilter_stress.XXXXXX")
mkdir -p "$work"

# Every policy configuration: the uris of kPolicyConfigs, the one list (tests/policy_list.h).
mapfile -t policies < <(sed -n '/BEGIN kPolicyConfigs/,/END kPolicyConfigs/s/^ *{"[a-z_]*", "\(.*\)"},$/\1/p' \
  "$root/tests/policy_list.h")
entries=$(sed -n '/BEGIN kPolicyConfigs/,/END kPolicyConfigs/p' "$root/tests/policy_list.h" |
  grep -vc 'kPolicyConfigs')
[ ${#policies[@]} -ge 1 ] && [ ${#policies[@]} -eq "$entries" ] ||
  { echo "stress.sh: read ${#policies[@]} of $entries policy configurations from" \
      "tests/policy_list.h (one {\"label\", \"uri\"}, per line)" >&2; exit 2; }
# db_stress replaces the OPTIONS file's listeners with its own (db_stress_test_base.cc clears
# options_.listeners before DB::Open), so the sstfilter.LeveledBudget listener cannot run here,
# and sstfilter.Leveled refuses to open a database under a memory_budget without it: those
# configurations are left out.
kept=()
for policy in "${policies[@]}"; do
  [[ "$policy" == *memory_budget* ]] || kept+=("$policy")
done
policies=("${kept[@]}")
# name|table options|column family options. db_stress's keys are 8-byte units, so an 8-byte
# prefix is a whole key's first unit. db_stress must be told the same prefix (--prefix_size):
# with its default of 7 against an 8-byte extractor its own checks fail, with any filter or none
# (measured: RocksDB's bloomfilter:10 failed the same way).
configs=("full||"
         "partitioned|partition_filters=true;index_type=kTwoLevelIndexSearch;metadata_block_size=1024|"
         "prefix_and_whole|whole_key_filtering=true|prefix_extractor=rocksdb.FixedPrefix.8"
         "prefix_only|whole_key_filtering=false|prefix_extractor=rocksdb.FixedPrefix.8")

# Writes an OPTIONS file for db_stress --options_file: small memtables and files, so that a short
# run flushes, compacts and builds many filters (and partitions).
write_options() {  # file policy table_options cf_options
  local cf="$4"
  case "$2" in
    sstfilter.Leveled*)  # with its partitioner under db_stress's load (not its listener: above)
      cf="${cf:+$cf;}sst_partitioner_factory=sstfilter.NoTrivialMove" ;;
  esac
  {
    printf '[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n'
    printf '[DBOptions]\n  create_if_missing=true\n  create_missing_column_families=true\n'
    printf '[CFOptions "default"]\n  write_buffer_size=262144\n  target_file_size_base=262144\n'
    printf '  max_bytes_for_level_base=1048576\n  level_compaction_dynamic_level_bytes=true\n'
    printf '  table_properties_collectors=sstfilter.RangeFilter\n'  # every file gets a range filter
    if [ -n "$cf" ]; then tr ';' '\n' <<< "$cf" | sed 's/^/  /'; fi
    printf '[TableOptions/BlockBasedTable "default"]\n'
    printf '  filter_policy=%s\n' "$2"  # on its own line: {id=...;...} holds semicolons
    if [ -n "$3" ]; then tr ';' '\n' <<< "$3" | sed 's/^/  /'; fi
  } > "$1"
}

# A run passed when db_stress's own verification says so near the end of its output (9.10 and
# later print "Stress test bg threads finished" after it).
# The flags of every db_stress run: release-build fault injection off, reads verified against
# the expected state, three column families.
common=(--max_key=100000 --threads=4 --column_families=3 --clear_column_family_one_in=0
        --read_fault_one_in=0 --write_fault_one_in=0 --verify_db_one_in=0)
# Later db_stress versions inject more faults, which their release builds refuse: off, where the
# flag exists.
help=$("$db_stress" --helpfull 2>&1 || true)
for flag in metadata_read_fault_one_in metadata_write_fault_one_in open_metadata_write_fault_one_in \
            open_read_fault_one_in open_write_fault_one_in; do
  if grep -q -- "-$flag " <<< "$help"; then common+=("--$flag=0"); fi
done

# Whether this db_stress keeps the OPTIONS file's table properties collectors: one short run.
probe="$work/probe"
mkdir -p "$probe/expected"
write_options "$probe/OPTIONS" "${policies[0]}" "" ""
LD_PRELOAD="$plugin" "$db_stress" "${common[@]}" --options_file="$probe/OPTIONS" --db="$probe/db" \
  --expected_values_dir="$probe/expected" --destroy_db_initially=1 --ops_per_thread=100 \
  --reopen=0 > "$probe/log" 2>&1 ||
  { echo "stress.sh: db_stress failed its first run (log: $probe/log)" >&2; exit 1; }
collectors=$(grep -h "table_properties_collectors=" "$probe"/db/OPTIONS-* 2> /dev/null || true)
if grep -q "sstfilter\.RangeFilter" <<< "$collectors"; then
  range_collector=1
elif grep -q "DbStressTablePropertiesCollectorFactory" <<< "$collectors"; then
  range_collector=0
  echo "stress.sh: RocksDB $version's db_stress replaces the OPTIONS file's table properties" \
    "collectors with its own: the range-filter collector is not stressed here"
else  # anything else that lost it is a failure, not a reason to stop checking
  echo "stress.sh: the probe's OPTIONS file names neither sstfilter.RangeFilter nor db_stress's" \
    "collector (log: $probe/log)" >&2
  exit 1
fi
rm -rf "$probe"

passed=0
failed=0
runs=0
fail() {  # cell log db
  echo "stress.sh: FAILED $1 (log: $2, database kept: $3)" >&2
  failed=$((failed + 1))
}

cells=$(( ${#policies[@]} * ${#configs[@]} ))
per_cell=$(( duration / cells ))
start_all=$(date +%s)
n=0
for policy in "${policies[@]}"; do
  for config in "${configs[@]}"; do
    n=$((n + 1))
    IFS='|' read -r cname ctable ccf <<< "$config"
    prefix_size=7  # db_stress's default
    [[ "$ccf" == *FixedPrefix.8* ]] && prefix_size=8
    dir="$work/cell$n"
    mkdir -p "$dir/expected"
    write_options "$dir/OPTIONS" "$policy" "$ctable" "$ccf"
    cell_start=$(date +%s)
    cell_runs=0
    ok=1
    while :; do
      destroy=0
      [ $cell_runs -eq 0 ] && destroy=1
      if ! LD_PRELOAD="$plugin" "$db_stress" "${common[@]}" --options_file="$dir/OPTIONS" \
           --db="$dir/db" --expected_values_dir="$dir/expected" --destroy_db_initially=$destroy \
           --prefix_size=$prefix_size --ops_per_thread=5000 --reopen=2 >> "$dir/log" 2>&1 ||
         ! tail -n 3 "$dir/log" | grep -q "Verification successful"; then
        ok=0
        break
      fi
      cell_runs=$((cell_runs + 1))
      [ $(( $(date +%s) - cell_start )) -ge "$per_cell" ] && break
    done
    runs=$((runs + cell_runs))
    # The filter really is sstfilter's: RocksDB would silently drop a policy it cannot load.
    if [ $ok -eq 1 ] && ! grep -q "filter_policy={id=sstfilter\." "$dir"/db/OPTIONS-*; then
      echo "stress.sh: $dir/db's OPTIONS file lost the sstfilter policy" >> "$dir/log"
      ok=0
    fi
    if [ $ok -eq 1 ] && [ $range_collector -eq 1 ] &&
       ! grep -q "table_properties_collectors=.*sstfilter\.RangeFilter" "$dir"/db/OPTIONS-*; then
      echo "stress.sh: $dir/db's OPTIONS file lost the sstfilter.RangeFilter collector" \
        >> "$dir/log"
      ok=0
    fi
    if [ $ok -eq 1 ]; then
      passed=$((passed + 1))
      echo "stress.sh: $policy, $cname: $cell_runs runs of 20000 operations, every read verified"
      rm -rf "$dir"
    else
      fail "$policy, $cname" "$dir/log" "$dir/db"
    fi
  done
done
matrix_seconds=$(( $(date +%s) - start_all ))

# A crash round: db_stress under the OPTIONS file `options` is killed with SIGKILL at a random
# moment of a long run; the next run on the same database and expected state verifies every key
# (including the writes that were in flight, which db_stress's expected state allows either way).
crash_round() {  # dir options destroy label
  local dir=$1 options=$2 destroy=$3 label=$4 pid
  LD_PRELOAD="$plugin" "$db_stress" "${common[@]}" --options_file="$options" \
    --db="$dir/db" --expected_values_dir="$dir/expected" --destroy_db_initially="$destroy" \
    --ops_per_thread=100000000 --reopen=0 >> "$dir/log" 2>&1 &
  pid=$!
  sleep "$(( 2 + RANDOM % 5 )).$(( RANDOM % 10 ))"
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" || true
    fail "$label (db_stress ended before the kill)" "$dir/log" "$dir/db"
    return 1
  fi
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  echo "== killed with SIGKILL ($label); reopening and verifying" >> "$dir/log"
  if LD_PRELOAD="$plugin" "$db_stress" "${common[@]}" --options_file="$options" \
       --db="$dir/db" --expected_values_dir="$dir/expected" --destroy_db_initially=0 \
       --ops_per_thread=1000 --reopen=0 >> "$dir/log" 2>&1 &&
     tail -n 3 "$dir/log" | grep -q "Verification successful"; then
    return 0
  fi
  fail "$label" "$dir/log" "$dir/db"
  return 1
}

# Crash rounds over the matrix's policy configurations in turn, on one database.
crash_ok=0
crash_policies=("${policies[@]}")
for ((round = 1; round <= crash_rounds; round++)); do
  which=$(((round - 1) % ${#crash_policies[@]}))
  policy=${crash_policies[$which]}
  dir="$work/crash"
  options="$dir/OPTIONS.$which"
  mkdir -p "$dir/expected"
  [ $round -le ${#crash_policies[@]} ] && write_options "$options" "$policy" "" ""
  destroy=0
  [ $round -eq 1 ] && destroy=1
  crash_round "$dir" "$options" "$destroy" "crash round $round ($policy)" || break
  crash_ok=$((crash_ok + 1))
done
if [ "$crash_rounds" -gt 0 ] && [ "$crash_ok" -eq "$crash_rounds" ]; then
  passed=$((passed + 1))
  echo "stress.sh: $crash_ok kill -9 rounds, every key verified after each"
  rm -rf "$work/crash"
fi

# Switch rounds: one database moved between RocksDB's filters and sstfilter's, full and
# partitioned, a crash round under each (docs/filters.md, "Moving an existing database"): every
# file of either family answers right under the other's policy.
partitioned_table="partition_filters=true;index_type=kTwoLevelIndexSearch;metadata_block_size=1024"
switches=("bloomfilter:10||" "sstfilter.Leveled:10|$partitioned_table|"
          "ribbonfilter:10:-1|$partitioned_table|" "{id=sstfilter.BumpedRibbon;fp_rate=0.01}||"
          "bloomfilter:10||")
switch_ok=0
dir="$work/switch"
mkdir -p "$dir/expected"
for ((round = 1; round <= ${#switches[@]}; round++)); do
  IFS='|' read -r policy table cf <<< "${switches[$((round - 1))]}"
  write_options "$dir/OPTIONS.$round" "$policy" "$table" "$cf"
  destroy=0
  [ $round -eq 1 ] && destroy=1
  crash_round "$dir" "$dir/OPTIONS.$round" "$destroy" "switch round $round ($policy)" || break
  switch_ok=$((switch_ok + 1))
done
if [ "$switch_ok" -eq ${#switches[@]} ]; then
  passed=$((passed + 1))
  echo "stress.sh: $switch_ok kill -9 rounds switching between RocksDB's filters and sstfilter's," \
    "every key verified after each"
  rm -rf "$dir"
fi

collector_state="range-filter collector on"
[ $range_collector -eq 1 ] || collector_state="range-filter collector dropped by db_stress"
echo "stress.sh: RocksDB $version, $runs matrix runs in ${matrix_seconds}s," \
  "$crash_ok crash rounds, $switch_ok switch rounds, $collector_state"
echo "$passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then
  rm -rf "$work"
  exit 0
fi
exit 1
