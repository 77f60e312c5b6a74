# SPDX-License-Identifier: Apache-2.0
# What the scripts that run RocksDB's own db_bench (rocksdb-tools) with the plugin preloaded share
# (sourced by block_cache_bench.sh and bench_size_classes.sh): their database's OPTIONS file, a
# fresh fill and two passes of absent-key lookups, and the check that RocksDB kept the filter
# policy. The caller defines die() (one line on stderr, exit 2) and $db.

# Writes the OPTIONS file $1 for filter_policy=$2: 64 MiB memtables, 8 MiB files, dynamic level
# bytes, format_version 5; $3: more DBOptions lines, $4: more BlockBasedTable lines (either empty).
stock_options_file() {
  cat > "$1" << INI
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1
[DBOptions]
  create_if_missing=true
  max_background_jobs=2
  $3
[CFOptions "default"]
  write_buffer_size=67108864
  target_file_size_base=8388608
  level_compaction_dynamic_level_bytes=true
[TableOptions/BlockBasedTable "default"]
  filter_policy=$2
  format_version=5
  $4
INI
}

# A fresh database $db: db_bench with LD_PRELOAD=$1, the flags of the array `common` and
# --disable_wal fills it (fillrandom, waitforcompaction), then the same with the flags of the
# array `read_flags` reads 100,000 absent keys twice (logs: $db.fill.log, $db.read.log). Fails if
# RocksDB dropped filter_policy $2 (a name it could not load: it runs without a filter), unless $2
# is "none".
stock_fill_and_read() {
  local preload=$1 policy=$2
  rm -rf "$db"
  LD_PRELOAD="$preload" db_bench "${common[@]}" --disable_wal=true \
    --benchmarks=fillrandom,waitforcompaction > "$db.fill.log" 2>&1 ||
    die "the fill failed; see $db.fill.log"
  LD_PRELOAD="$preload" db_bench "${common[@]}" --use_existing_db=true \
    --benchmarks=readmissing,readmissing --reads=100000 "${read_flags[@]}" > "$db.read.log" 2>&1 ||
    die "the lookups failed; see $db.read.log"
  if [ "$policy" != "none" ] && grep -q '^ *filter_policy=nullptr$' "$(ls -t "$db"/OPTIONS-* | head -n 1)"; then
    die "RocksDB dropped filter_policy=$policy (unknown name?)"
  fi
}
