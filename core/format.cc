#include "core/format.h"

#include <xxhash.h>

#include "core/cuckoo_table.h"
#include "core/sizing.h"

namespace sstfilter {
namespace {

constexpr size_t kCheckedBytes = 24;  // trailer bytes covered by the check word

uint32_t TrailerCheck(const uint8_t* trailer) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(trailer, kCheckedBytes, kTrailerCheckSeed));
}

// Largest unit count accepted for any kind: keeps every byte count far below 2^64.
constexpr uint64_t kMaxUnits = uint64_t{1} << 48;

}  // namespace

const char* FilterKindName(FilterKind kind) {
  switch (kind) {
    case FilterKind::kBlockedBloom:
      return "blocked_bloom";
    case FilterKind::kStandardBloom:
      return "standard_bloom";
    case FilterKind::kCuckoo:
      return "cuckoo";
  }
  return "unknown";
}

void EncodeTrailer(const Trailer& t, uint8_t* dst) {
  StoreLE64(dst + 0, t.num_keys);
  StoreLE64(dst + 8, t.num_units);
  StoreLE32(dst + 16, t.seed);
  dst[20] = t.param;
  dst[21] = static_cast<uint8_t>(t.kind);
  dst[22] = t.version;
  dst[23] = t.flags;
  StoreLE32(dst + 24, TrailerCheck(dst));
  StoreLE32(dst + 28, kTrailerMagic);
}

void AppendTrailer(const Trailer& t, std::string* out) {
  uint8_t buf[kTrailerBytes];
  EncodeTrailer(t, buf);
  out->append(reinterpret_cast<const char*>(buf), sizeof(buf));
}

bool BodyBytes(const Trailer& t, uint64_t* body_bytes) {
  if (t.version != kFormatVersion || t.flags != 0) return false;
  if (t.num_units > kMaxUnits) return false;
  // No units: an empty filter, and nothing else can be. Keys without units are inconsistent.
  if (t.num_units == 0) {
    *body_bytes = 0;
    return t.num_keys == 0 &&
           (t.kind == FilterKind::kBlockedBloom || t.kind == FilterKind::kStandardBloom ||
            t.kind == FilterKind::kCuckoo);
  }
  switch (t.kind) {
    case FilterKind::kBlockedBloom:
    case FilterKind::kStandardBloom:
      if (t.param < 1 || t.param > kMaxNumProbes) return false;
      if (t.seed != 0) return false;
      *body_bytes = t.num_units * (t.kind == FilterKind::kBlockedBloom ? kBloomBlockBits / 8 : 8);
      return true;
    case FilterKind::kCuckoo:
      if (t.param < kCuckooMinFingerprintBits || t.param > kCuckooMaxFingerprintBits) return false;
      if (t.num_units % 2 != 0) return false;  // the alternate-bucket function needs even counts
      if (t.num_keys > t.num_units * kCuckooSlotsPerBucket) return false;
      *body_bytes = CuckooTableView::BytesFor(t.num_units, t.param);
      return true;
  }
  return false;
}

bool ParseFilter(const uint8_t* data, size_t size, ParsedFilter* out) {
  if (data == nullptr || size < kTrailerBytes) return false;
  const uint8_t* tr = data + (size - kTrailerBytes);
  if (LoadLE32(tr + 28) != kTrailerMagic) return false;
  if (LoadLE32(tr + 24) != TrailerCheck(tr)) return false;
  Trailer t;
  t.num_keys = LoadLE64(tr + 0);
  t.num_units = LoadLE64(tr + 8);
  t.seed = LoadLE32(tr + 16);
  t.param = tr[20];
  t.kind = static_cast<FilterKind>(tr[21]);
  t.version = tr[22];
  t.flags = tr[23];
  uint64_t body_bytes = 0;
  if (!BodyBytes(t, &body_bytes)) return false;
  if (body_bytes != size - kTrailerBytes) return false;
  out->trailer = t;
  out->body = data;
  out->body_bytes = body_bytes;
  return true;
}

}  // namespace sstfilter
