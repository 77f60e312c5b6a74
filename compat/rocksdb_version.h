// SPDX-License-Identifier: Apache-2.0
// RocksDB's version as one number, for the version checks in compat/ (and nowhere else): 7.8 is
// 708, 11.8 is 1108.
#pragma once

#include <rocksdb/version.h>

#define SSTFILTER_ROCKSDB_VERSION (ROCKSDB_MAJOR * 100 + ROCKSDB_MINOR)
