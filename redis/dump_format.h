// SPDX-License-Identifier: Apache-2.0
// The bytes of one key of the module's types, as RDB files, BF.SCANDUMP / CF.SCANDUMP, AOF
// rewrites and BF.LOADCHUNK / CF.LOADCHUNK carry them: a header of 24 bytes, then the scalable
// filter's own bytes (core/app_filters/chain_format.h). Integers little-endian:
//
//   offset  bytes  field
//   0       4      magic "SFRD"
//   4       1      version: 1
//   5       1      the type: 1 Bloom (BF.*), 2 cuckoo (CF.*)
//   6       2      bucket size CF.RESERVE was given (cuckoo; 0 for Bloom)
//   8       4      max iterations CF.RESERVE was given (cuckoo; 0 for Bloom)
//   12      4      0
//   16      8      items deleted (cuckoo; 0 for Bloom)
//   24      the scalable filter
//
// Every byte is a client's or a file's: parsing checks the magic, version, type and reserved
// bytes, and the filter's own bytes are checked as its Deserialize checks them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sstfilter/result.h"

namespace sstfilter::redis {

inline constexpr size_t kDumpHeaderBytes = 24;
// The cuckoo fields' ranges: what CF.RESERVE accepts (RedisBloom's).
inline constexpr long long kMaxBucketSize = 255;
inline constexpr long long kMaxMaxIterations = 65535;

enum class DumpType : uint8_t { kBloom = 1, kCuckoo = 2 };

struct DumpHeader {
  DumpType type = DumpType::kBloom;
  uint16_t bucket_size = 0;
  uint32_t max_iterations = 0;
  uint64_t deleted = 0;
};

// Writes `header` as its kDumpHeaderBytes bytes at `bytes`.
void EncodeDumpHeader(const DumpHeader& header, uint8_t* bytes);

// The header of the dump at `data` (at least kDumpHeaderBytes), which must be of `type`. The
// cuckoo fields are taken as they are: CF.INFO only reports them, and an RDB file that earlier
// releases wrote with any values must still load.
Result<DumpHeader> ParseDumpHeader(const void* data, size_t size, DumpType type);

}  // namespace sstfilter::redis
