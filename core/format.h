// SPDX-License-Identifier: Apache-2.0
// The byte format shared by every sstfilter filter: a body whose layout depends on the kind,
// followed by a trailer that names the kind, its version and parameters: 32 bytes, or 10 in the
// compact layout that small filters of a kind that asks for it carry (a wrapped Ribbon table).
//
//   +------------------------------+----------------------------+
//   | body (body_bytes)            | trailer (32 or 10 bytes)   |
//   +------------------------------+----------------------------+
//
// Trailer, all integers little-endian. Writers write layout 2, or layout 3 where the kind asks for
// it and the fields fit; readers read layouts 1, 2 and 3, told apart by their last bytes:
//
//   offset size field
//        0    8 num_keys       keys the filter answers for: Bloom kinds, the distinct key hashes;
//                              cuckoo, the fingerprints stored (a key whose fingerprint is
//                              already in one of its buckets is not stored again); 0 means an
//                              empty filter; the match-all filter writes at least 1
//        8    8 num_units      kind-specific size of the body: 64-byte blocks (blocked Bloom),
//                              64-bit words (standard Bloom), buckets (cuckoo), cells (fuse),
//                              slots (ribbon; bumped ribbon's version 2), the key count its
//                              layers are sized for (bumped ribbon's version 1)
//       16    4 seed           cuckoo, ribbons: the seed that the build succeeded with (0 = the
//                              key hash itself); fuse: that seed and the table's geometry;
//                              Bloom: 0
//       20    1 param          Bloom: num_probes; cuckoo, fuse, ribbons: fingerprint_bits
//       21    1 kind           FilterKind: each kind's kId (core/kinds.h lists them)
//       22    1 version        format version of that kind: 1 .. the kind's kMaxVersion (cuckoo: 2
//                              and 3 for semi-sorted buckets; Ribbon and bumped Ribbon: 2 for a
//                              wrapped table; every other kind: 1)
//   Layout 2 (written since sstfilter filters share RocksDB's compatibility name):
//       23    4 check          low 32 bits of XXH3-64(trailer bytes 0..22, seed kTrailerCheckSeed2)
//       27    5 marker         FF 53 E0 54 46 (kRocksDbUnknownMarker): RocksDB's built-in
//                              readers take these five bytes as the metadata of a filter of theirs
//                              and answer "may match" for every key (below)
//   Layout 1 (written before; still read):
//       23    1 flags          0
//       24    4 check          low 32 bits of XXH3-64(trailer bytes 0..23, seed kTrailerCheckSeed)
//       28    4 magic          "SSTF" (0x46545353 as a little-endian u32)
//   Layout 3, compact (10 bytes; the same fields, narrower; for filters of at most 65,535 units
//   whose kind asks for it, Solver::TrailerLayoutFor in core/static_build.h):
//        0    2 num_units      1 .. 65,535
//        2    2 num_keys       1 .. 65,535 (an empty filter is written in layout 2)
//        4    1 seed           0 .. 255
//        5    1 zero           0: byte -5, which RocksDB's built-in readers take for a filter of
//                              zero probes, "may match" for every key (AlwaysTrueFilter)
//        6    1 param
//        7    1 kind_version   kind | version << 4 (each 1 .. 15); never 0x53, so that no compact
//                              trailer ends in layout 1's magic
//        8    2 check          low 16 bits of XXH3-64(trailer bytes 0..7, seed kTrailerCheckSeed3)
//   A span of at least 32 bytes ending in layout 2's marker is layout 2; else one of at least 32
//   ending in layout 1's magic, layout 1; else one of at least 10 whose byte -5 is 0 and that does
//   not end in the magic, layout 3 (TrailerLayoutOf). The compact layout's 22 bytes less are 4.4%
//   of a filter of 1,000 keys at 4 bits each (a 6% false-positive rate).
//
// Why the marker. RocksDB's built-in filter policies (bloomfilter, ribbonfilter) read a filter by
// its last 5 bytes (BuiltinFilterPolicy::GetBuiltinFilterBitsReader, the same in RocksDB 7.8 to
// 9.11). Byte -5 = 0xFF sends it to their "newer Bloom" reader (GetBloomBitsReader), which answers
// "may match" for every key unless all of four fields hold a value it knows; the marker sets each
// of them to a value it reserves: byte -3's low 5 bits (num_probes) 0, byte -3's top 3 bits (block
// size) 7 rather than 0 (64-byte blocks), byte -4 (sub-implementation) 0x53 rather than 0
// (FastLocalBloom), and bytes -2..-1 ("reserved, possibly for hash seed") 0x4654 rather than 0. A
// value RocksDB assigns later to one of these fields leaves the other three reserved. So a file
// sstfilter wrote is unfiltered, never wrong, for RocksDB after a rollback. Layout 1's bytes would
// not be safe there: its byte -5, the check word's top byte, is 0xFE (RocksDB's Ribbon marker) in
// 1 filter of 256. Layout 3's zero byte is RocksDB's own "zero probes" value, not a reserved one:
// RocksDB writes it for a filter that matches everything (FinishAlwaysTrue: 6 zero bytes, too
// short for layout 3), so no RocksDB filter that filters ends in it.
//
// The check word exists because a flipped trailer byte could otherwise describe a *valid* filter
// with other parameters (one more probe, a wider fingerprint) and turn every query into a false
// negative; layout 3's 16 bits let 1 random corruption of its 8 field bytes in 65,536 through (a
// changed num_units or param often also changes the length the body must have). The body is not
// checksummed here: inside RocksDB, block checksums cover it and the trailer.
//
// Reader rules, common to all kinds: bytes that are too short, end in no layout's last bytes,
// fail the check, name an unknown kind or version, or whose length does not equal exactly
// body_bytes + the layout's trailer bytes are not understood, and a filter that is not understood
// answers "may match" for every key. A valid filter with num_keys = 0 answers "no" for every key;
// its body is empty (num_units = 0), or, for a serialised dynamic cuckoo filter that was never
// added to, an empty table. No reader ever touches a byte outside the span it was given.
// DecodeTrailer below checks the marker and the check word; ParseFilter (core/parse.h) applies the
// rest, kind by kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace sstfilter {

// Trailer byte 21. Its values are the kinds' kId constants (1 BlockedBloom, 2 StandardBloom,
// 3 Cuckoo, 4 Fuse, 5 Ribbon, 6 BumpedRibbon); 0 is never a kind. FilterKindName (core/parse.h)
// names one.
enum class FilterKind : uint8_t {};

inline constexpr size_t kTrailerBytes = 32;
// Layout 2's last bytes (see above): what RocksDB's built-in readers take for a filter of a kind
// they do not know.
inline constexpr size_t kMarkerBytes = 5;
inline constexpr uint8_t kRocksDbUnknownMarker[kMarkerBytes] = {0xFF, 0x53, 0xE0, 0x54, 0x46};
inline constexpr uint64_t kTrailerCheckSeed2 = 0x7472'6169'6c65'7232ull;  // "trailer2"
// Layout 1's magic and check seed.
inline constexpr uint32_t kTrailerMagic = 0x46545353;  // "SSTF" in little-endian byte order
inline constexpr uint64_t kTrailerCheckSeed = 0x7472'6169'6c65'7231ull;  // "trailer1"
// Layout 3's size and check seed.
inline constexpr size_t kCompactTrailerBytes = 10;
inline constexpr uint64_t kTrailerCheckSeed3 = 0x7472'6169'6c65'7233ull;  // "trailer3"
// The version writers put in a trailer unless the kind's layout says otherwise (Trailer's default).
inline constexpr uint8_t kFormatVersion = 1;

struct Trailer {
  uint64_t num_keys = 0;
  uint64_t num_units = 0;
  uint32_t seed = 0;
  uint8_t param = 0;
  FilterKind kind = FilterKind{0};  // no kind: every writer sets its own
  uint8_t version = kFormatVersion;
};

// Which layout's last bytes (its marker, its magic, or layout 3's zero byte) [data, data + size)
// ends in, whether or not its check word holds: kLayout2 and kCompact only for bytes sstfilter
// wrote, since no filter of RocksDB's own formats that filters ends so (their byte -5 is 1..127,
// legacy Bloom; 0xFE, Ribbon; or 0xFF with bytes -2..-1 zero, FastLocalBloom). kNone for a span
// shorter than its layout's trailer.
enum class TrailerLayout { kNone, kLayout1, kLayout2, kCompact };
TrailerLayout TrailerLayoutOf(const uint8_t* data, size_t size);
// The trailer bytes of a layout: 32, or kCompactTrailerBytes; 0 for kNone.
size_t TrailerBytesOf(TrailerLayout layout);
// Whether `t` fits layout 3: num_keys and num_units 1 .. 65,535, seed at most 255, kind and
// version 1 .. 15, kind | version << 4 not 0x53.
bool FitsCompactTrailer(const Trailer& t);

// Appends the 32-byte encoding of `t` (layout 2) to `out`.
void AppendTrailer(const Trailer& t, std::string* out);
// Writes the 32-byte encoding of `t` (layout 2) at `dst`.
void EncodeTrailer(const Trailer& t, uint8_t* dst);
// Writes the kCompactTrailerBytes encoding of `t` (layout 3) at `dst`; false, writing nothing,
// unless FitsCompactTrailer(t).
bool EncodeCompactTrailer(const Trailer& t, uint8_t* dst);

// Reads the trailer at the end of [data, data + size) into *out, and its size into
// *trailer_bytes unless that is null. False, leaving both untouched, if the span is shorter than
// its layout's trailer, ends in no layout's last bytes, fails the check word, or (layout 1) has a
// flags byte other than 0, or (layout 3) has a zero num_keys, num_units, kind or version. Whether
// the kind, version, parameters and length are understood is the parser's question (core/parse.h).
bool DecodeTrailer(const uint8_t* data, size_t size, Trailer* out, size_t* trailer_bytes = nullptr);

// Loads and stores of unsigned integers in a given byte order, through memcpy: no alignment
// assumptions, no type punning; a swap only where the order is not the host's.
namespace byte_order {
inline uint32_t Swap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t Swap(uint64_t v) { return __builtin_bswap64(v); }
constexpr bool kHostIsLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
template <typename T, bool kLittleEndian>
inline T Load(const void* p) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>, "32 or 64 bits");
  T v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (kLittleEndian != kHostIsLittleEndian) v = Swap(v);
  return v;
}
template <typename T, bool kLittleEndian>
inline void Store(void* p, T v) {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>, "32 or 64 bits");
  if constexpr (kLittleEndian != kHostIsLittleEndian) v = Swap(v);
  std::memcpy(p, &v, sizeof(v));
}
}  // namespace byte_order

// Little-endian: the byte format's integers.
inline uint64_t LoadLE64(const uint8_t* p) { return byte_order::Load<uint64_t, true>(p); }
inline uint32_t LoadLE32(const uint8_t* p) { return byte_order::Load<uint32_t, true>(p); }
inline uint16_t LoadLE16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline void StoreLE16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void StoreLE64(uint8_t* p, uint64_t v) { byte_order::Store<uint64_t, true>(p, v); }
inline void StoreLE32(uint8_t* p, uint32_t v) { byte_order::Store<uint32_t, true>(p, v); }
// Big-endian, for keys: their bytes compare as these numbers do.
inline uint64_t LoadBE64(const void* p) { return byte_order::Load<uint64_t, false>(p); }
inline uint32_t LoadBE32(const void* p) { return byte_order::Load<uint32_t, false>(p); }

}  // namespace sstfilter
