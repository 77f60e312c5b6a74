# SPDX-License-Identifier: Apache-2.0
# sstfilter built into RocksDB, by RocksDB's plugin convention (plugin/README.md in its source
# tree): this repository at plugin/sstfilter of a RocksDB tree, built with ROCKSDB_PLUGINS=sstfilter
# by make or cmake (scripts/build-into-rocksdb.sh does it). RocksDB then compiles these sources into
# librocksdb itself and lists sstfilter_register among its built-in registrars; the policies also
# register themselves when the library starts (plugin/plugin.cc), so static programs know every
# sstfilter policy with nothing preloaded.
#
# This is also the one list of the library's sources: CMakeLists.txt reads it. RocksDB's CMake
# takes the first match of each of its patterns anywhere in this file (the sources, the registrar
# function and the libraries, each a name, an equals sign between spaces, a value), so the list
# stays on one line and no comment may contain such an assignment. For make, libxxhash and libhwy
# (Google Highway, the SIMD kernels) are link flags (LDFLAGS); for cmake, library names (LIBS).
sstfilter_SOURCES = core/app_filters/bloom_filter.cc core/app_filters/chain_format.cc core/app_filters/filter_memory.cc core/app_filters/cuckoo_filter.cc core/app_filters/hash_key.cc core/app_filters/scalable_bloom_filter.cc core/app_filters/scalable_cuckoo_filter.cc core/blocked_bloom/blocked_bloom.cc core/blocked_bloom/math.cc core/blocked_bloom/simd.cc core/bumped_ribbon/bumped_ribbon.cc core/bumped_ribbon/math.cc core/cuckoo/cuckoo.cc core/cuckoo/math.cc core/cuckoo/semi_sorted_table.cc core/filter_reader.cc core/filter_spec.cc core/format.cc core/fuse/fuse.cc core/fuse/math.cc core/hash.cc core/level_allocation.cc core/parse.cc core/range/elias_fano.cc core/range/range_builder.cc core/range/range_codec.cc core/range/range_reader.cc core/range/range_shape.cc core/ribbon/math.cc core/ribbon/ribbon.cc core/ribbon/wrapped.cc core/sizing.cc core/standard_bloom/math.cc core/standard_bloom/standard_bloom.cc core/static_build.cc plugin/advice.cc plugin/bits_adapters.cc plugin/bits_readers.cc plugin/block_cache_fit.cc plugin/budget_rewrites.cc plugin/construction_charge.cc plugin/filter_formats.cc plugin/inspect.cc plugin/level_probes.cc plugin/leveled_budget.cc plugin/leveled_chooser.cc plugin/leveled_policy.cc plugin/listener_channel.cc plugin/live_tables.cc plugin/memory_budget.cc plugin/no_trivial_move.cc plugin/plugin.cc plugin/policies.cc plugin/policy_options.cc plugin/probe_counts.cc plugin/range_filter_collector.cc plugin/size_class_rounding.cc plugin/tree_accountant.cc plugin/tree_history.cc plugin/tree_model.cc
sstfilter_FUNC = sstfilter_register
sstfilter_LIBS = xxhash hwy
sstfilter_LDFLAGS = -lxxhash -lhwy
sstfilter_CXXFLAGS = -I./plugin/sstfilter -I./plugin/sstfilter/include
