// SPDX-License-Identifier: Apache-2.0
// The flags, defined here and declared in flags.h (their checks: flag_checks.cc), and Fail.
#include "db_bench_ext/flags.h"

#include <cstdio>
#include <cstdlib>
#include <string>

DEFINE_string(benchmarks, "fillrandom,readrandom,readmissing,multireadrandom,multireadmissing",
              db_bench_ext::BenchmarksHelp());
DEFINE_string(filter_uri,
              "none,bloomfilter:10,ribbonfilter:10,sstfilter.Bloom:10,"
              "{id=sstfilter.Cuckoo;fp_rate=0.01}",
              "Comma-separated filter policies, compared side by side: sstfilter's "
              "(sstfilter.Bloom:10, {id=sstfilter.Cuckoo;fp_rate=0.001}), RocksDB's own "
              "(bloomfilter:10, ribbonfilter:10) and none. Commas inside {...} belong to the "
              "policy.");
DEFINE_int64(num, 2000000, "Number of keys in the database (and in filterbuild's filter)");
DEFINE_int64(reads, 1000000,
             "Lookups per read benchmark; -1 means --num (db_bench's default). The default "
             "keeps the default run under 5 minutes on 2 cores");
DEFINE_int32(key_size, 16, "Key size in bytes (at least 8)");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_string(db, "/tmp/sstfilter_db_bench_ext", "Directory of the databases (one per policy)");
DEFINE_bool(use_existing_db, false, "Reuse the databases of an earlier run; skip fill benchmarks");
DEFINE_int32(threads, 1, "Threads for the read benchmarks");
DEFINE_int64(cache_size, 8 << 20, "Block cache size in bytes");
DEFINE_int32(bloom_bits, -1,
             "If >= 0 and --filter_uri is not given, compare none with bloomfilter:<bloom_bits>");
DEFINE_bool(statistics, false, "Print RocksDB's statistics after each policy's benchmarks");
DEFINE_int64(seed, 42, "Seed of the key order and the lookups");
DEFINE_string(key_dist, "uniform",
              "Which keys the read benchmarks look up: uniform, or zipfian (--zipf_theta), or "
              "zipf:THETA (the same with its exponent: zipf:0.99); the hottest keys are the last "
              "of the key space, the newest of an ordered fill; in filltimeseries, the newest "
              "written so far. scrambled (or scrambled:THETA): the same law with the hottest "
              "keys spread over the key space, as YCSB's zipfian");
DEFINE_double(read_hit_ratio, 0.5,
              "readmixed and multireadmixed: the share of lookups that are of present keys (the "
              "others are of absent keys), in [0, 1]");
DEFINE_int32(duration, 0,
             "If > 0, each read benchmark runs for this many seconds (per pass and per round) "
             "instead of --reads lookups");
DEFINE_string(options_file, "",
              "A RocksDB OPTIONS file (of a database of yours, or written by hand): every "
              "database takes its DBOptions and its default column family's options, with the "
              "filter policy replaced by each --filter_uri entry; option flags given on the "
              "command line override the file, the others do not apply. Paths in it (wal_dir, "
              "db_paths, cf_paths, db_log_dir) are ignored: everything is written under --db. "
              "The block cache is --cache_size (OPTIONS files do not record one)");
DEFINE_bool(cache_index_and_filter_blocks, false,
            "Keep index and filter blocks in the block cache (competing with data blocks), not "
            "in the table readers' own memory");
DEFINE_bool(pin_l0_filter_and_index_blocks_in_cache, false,
            "With --cache_index_and_filter_blocks: pin level 0's filter and index blocks");
DEFINE_bool(partition_filters, false,
            "Partitioned filters (and the two-level index they need): filter partitions of "
            "--metadata_block_size bytes, loaded into the block cache as lookups need them");
DEFINE_int64(metadata_block_size, 4096, "Size of index and filter partitions in bytes");
DEFINE_bool(decouple_partitioned_filters, false,
            "With --partition_filters: RocksDB's decouple_partitioned_filters (from 9.6), which "
            "cuts each filter partition at --metadata_block_size by its own size; off (RocksDB's "
            "default), 9.x cuts one at each index partition's cut too, leaving a small one after "
            "each full one. An error before 9.6");
DEFINE_int32(format_version, -1,
             "The block-based table's format_version; -1: RocksDB's default (which RocksDB "
             "checks at open)");
DEFINE_double(reads_per_write, 1,
              "filltimeseries and readmissingwriterandom: absent-key lookups after each write, by "
              "--key_dist (filltimeseries: over the keys written so far), in [0, 1000]; fractions "
              "spread them (0.1: one every 10 writes)");
DEFINE_double(late_fraction, 0,
              "fillseq and filltimeseries: the share of keys written late, in [0, 1]; each up to "
              "--late_keys places after its own (drawn uniformly), as late data "
              "arrives in a time series");
DEFINE_int64(late_keys, 100000,
             "With --late_fraction: how many places late a late key is due, at most, in [1, 2^40]");
DEFINE_double(zipf_theta, 0.99, "Exponent of --key_dist=zipfian, in (0, 1)");
DEFINE_int64(write_buffer_size, 16 << 20, "Memtable size in bytes");
DEFINE_string(compression_type, "snappy", "none, snappy, zlib, lz4, zstd");
DEFINE_int32(num_levels, 7, "Levels of the LSM tree");
DEFINE_int64(max_bytes_for_level_base, 256 << 20, "Size of level 1 in bytes");
DEFINE_double(max_bytes_for_level_multiplier, 10, "Size ratio between adjacent levels");
DEFINE_int64(target_file_size_base, 64 << 20, "Target SST file size in bytes at level 1");
DEFINE_int32(level0_file_num_compaction_trigger, 4, "L0 files that trigger a compaction");
DEFINE_bool(level_compaction_dynamic_level_bytes, false,
            "Size levels from the last one up, each max_bytes_for_level_multiplier times the "
            "next (the shape sstfilter.Leveled assumes)");
DEFINE_string(compaction_style, "level",
              "level or universal: RocksDB's compaction_style (universal: sorted runs merged by "
              "size, where sstfilter.Leveled gives every file one filter)");
DEFINE_string(sst_partitioner_factory, "",
              "SstPartitionerFactory of every database, by name (e.g. sstfilter.NoTrivialMove); "
              "empty for none");
DEFINE_string(listeners, "",
              "EventListeners of every database, by name, as RocksDB's DBOptions string takes "
              "them (e.g. sstfilter.LeveledBudget, which keeps sstfilter.Leveled within its "
              "budget whatever RocksDB does with files); empty for none");
DEFINE_bool(settled_fill, false,
            "Fill benchmarks flush every --write_buffer_size bytes of keys and values and wait "
            "for the compactions of each flush before writing on, so that every policy's tree goes "
            "through the same flushes and compactions and the trees compare level for level "
            "(slower than db_bench's fill, whose tree shape depends on timing)");
DEFINE_bool(use_direct_reads, false,
            "Read SST files with O_DIRECT, so that a data block missing from the block cache "
            "costs a device read, not a page-cache copy (what a false positive costs a database "
            "larger than memory)");
DEFINE_bool(optimize_filters_for_hits, false,
            "RocksDB's optimize_filters_for_hits: no filters on the last level (less memory; every "
            "lookup of an absent key in the last level's range reads a block there)");
DEFINE_int32(rounds, 0,
             "Extra rounds of the read benchmarks, run after every policy's first pass (then a "
             "warm-up) and interleaved across the policies, so that the machine's drift hits "
             "all alike; the summary gives each read benchmark's median ops/sec over the rounds");
DEFINE_int32(batch_size, 32, "Keys per MultiGet in the multiread benchmarks");
DEFINE_double(fp_rate, 0.01, "Target false-positive rate for the sizing calculator");
DEFINE_string(json, "", "Write every figure to this file as JSON");
DEFINE_string(absent_keys, "",
              "--benchmarks=advise: the absent keys to look up, a key per line (its bytes as they "
              "are, or in hexadecimal with --absent_keys_hex); empty: --reads keys made from the "
              "database's own");
DEFINE_bool(absent_keys_hex, false,
            "--absent_keys: each line is a key in hexadecimal, two digits per byte (for keys "
            "that hold newlines or other binary bytes)");
DEFINE_string(inspect_db, "",
              "Report the filter policy of every SST file of the database at this path, and "
              "which files have no sstfilter filter; then exit (no benchmarks)");
DEFINE_string(range_filter, "",
              "Range filters to compare, a comma-separated list: each entry a "
              "table_properties_collectors value (sstfilter.RangeFilter, or "
              "{id=sstfilter.RangeFilter;bits_per_key=12}) or none. Every --filter_uri policy "
              "runs once with each, in its own database. Empty: no range filters");
DEFINE_int32(scan_length, 16,
             "seekrandom: the keys a scan reads; seekempty: the integers an empty scan spans, "
             "from just after a present key (2 * --key_spacing must exceed it)");
DEFINE_int64(key_spacing, 1,
             "Present key i is the integer 2 i key_spacing, absent key i (2 i + 1) key_spacing: "
             "room between the keys for seekempty's empty ranges");
DEFINE_string(plot, "",
              "Draw false positives per absent-key lookup and lookup cost against bits per "
              "key to this PNG file (needs gnuplot and readmissing or multireadmissing)");

namespace db_bench_ext {

void Fail(const std::string& message) {
  fprintf(stderr, "db_bench_ext: %s\n", message.c_str());
  std::exit(1);
}

}  // namespace db_bench_ext
