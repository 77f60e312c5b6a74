// SPDX-License-Identifier: Apache-2.0
// Key hashing and range reduction, shared by every filter in core/.
//
// Each key is hashed exactly once, to 64 bits, with XXH3 (libxxhash) and the fixed seed
// kKeyHashSeed. That hash is part of the persistent byte format: a filter written today must answer
// for the same keys in ten years, so neither the function nor the seed may ever change for an
// existing format version. Everything a filter needs beyond those 64 bits (block index, probe
// positions, bucket index, fingerprint) is derived from them by multiplication and shifts, never by
// hashing the key again and never with `%`.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sstfilter {

// The seed of XXH3_64bits_withSeed for every key hash. Persistent: part of all format versions.
inline constexpr uint64_t kKeyHashSeed = 0x5354'4646'494c'5452ull;  // "STFFILTR"

// XXH3-64 of the key with kKeyHashSeed. Defined in hash.cc so that callers need not include
// xxhash.h; the call is the only hash a key ever gets.
uint64_t KeyHash(const void* data, size_t size);

// Maps a uniformly distributed 64-bit value onto [0, range) without division: the high 64 bits of
// the 128-bit product (Lemire, "Fast Random Integer Generation in an Interval", 2019). Unbiased to
// within range / 2^64. Uses the high bits of `x`, so callers feed low bits to other decisions.
inline uint64_t FastRange64(uint64_t x, uint64_t range) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * range) >> 64);
}

// The 32-bit twin of FastRange64: [0, range) from the high bits of the 64-bit product.
inline uint32_t FastRange32(uint32_t x, uint32_t range) {
  return static_cast<uint32_t>((static_cast<uint64_t>(x) * range) >> 32);
}

// An odd 64-bit constant with well-spread bits (2^64 / golden ratio). Multiplying by it is a
// bijection on 64-bit values that pushes the entropy of low bits into the high bits, which is
// what a range reduction by FastRange64 or `>> (64 - b)` reads.
inline constexpr uint64_t kGoldenMul64 = 0x9e37'79b9'7f4a'7c15ull;

// A full-avalanche bijective mixer (the finaliser of MurmurHash3). Used to derive a new,
// independent-looking hash from an old hash and a seed when a cuckoo, fuse or Ribbon build
// retries with another seed (RemixHash below), for a Ribbon key's coefficients (on every Ribbon
// query), and for the draw of a level that mixes two filters (ChoiceForKeys); never on the Bloom
// query path.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51'afd7'ed55'8ccdull;
  x ^= x >> 33;
  x *= 0xc4ce'b9fe'1a85'ec53ull;
  x ^= x >> 33;
  return x;
}

// The hash a filter built with seed index s places and checks a key by: the key's hash itself
// for s = 0 (the first try of every build, so most filters cost no extra mixing), and for a
// retry's seed s > 0 a fresh, independent-looking hash. The cuckoo, fuse and Ribbon kinds write
// s in their trailer.
inline uint64_t RemixHash(uint64_t hash, uint32_t seed_index) {
  return seed_index == 0 ? hash : Mix64(hash + seed_index * kGoldenMul64);
}

// The fingerprint of the xor-family kinds (fuse, Ribbon): the two halves of the remixed hash
// folded together, then its low bits (mask = 2^w - 1), so that a w-bit fingerprint depends on
// high bits too, which a filter's position (FastRange64) also reads.
inline uint32_t XorFoldFingerprint(uint64_t remixed, uint32_t mask) {
  return static_cast<uint32_t>(remixed ^ (remixed >> 32)) & mask;
}

}  // namespace sstfilter
