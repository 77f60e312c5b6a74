// db_bench_ext: a db_bench-style benchmark of RocksDB with any filter policy.
//
// Not built yet: it is the subject of its own issue. Until then this stub only says so, and the
// README's main command runs core_bench, the micro benchmark of the filters alone.
#include <gflags/gflags.h>

#include <cstdio>

int main(int argc, char** argv) {
  gflags::SetUsageMessage("db_bench_ext is not implemented yet; run core_bench instead");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  fprintf(stderr, "db_bench_ext: not implemented yet; run core_bench for filter benchmarks\n");
  return 1;
}
