// SPDX-License-Identifier: Apache-2.0
// The options of one policy's database: db_bench_ext's defaults and option flags, or a user's
// --options_file with the option flags given on the command line over it; the filter policy
// always the one under test, the block cache --cache_size, statistics on.
#pragma once

#include <rocksdb/options.h>

#include "db_bench_ext/flags.h"

namespace db_bench_ext {

ROCKSDB_NAMESPACE::Options DatabaseOptions(const Config& config, const PolicyUnderTest& policy);

}  // namespace db_bench_ext
