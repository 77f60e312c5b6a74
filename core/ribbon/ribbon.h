// SPDX-License-Identifier: Apache-2.0
// The standard Ribbon filter kind (FilterKind 5): a static filter for the key set of one SST file
// or filter partition, at 1.05 to 1.13 times the information limit of log2(1/p) bits per key for
// 1,000 to 1,000,000 keys (math.h): smaller than a binary fuse table (up to 1.4 cells per key)
// for small sets, and the smallest kind below about 5,400 keys, where the bumped Ribbon kind
// (core/bumped_ribbon/, layers of these tables) writes one wrapped table of this kind's.
//
// From a key hash h and the filter's seed index s:
//   h'    = h                              if s = 0
//           Mix64(h + s * kGoldenMul64)    otherwise (a retry's fresh, independent hashing)
//   start = FastRange64(h', num_slots - 63)          version 1
//           FastRange64(h', num_slots)               version 2 (wrapped)
//   coeff = Mix64(h') | 1                  (64 coefficients; slot start's is always 1)
//   fp    = (h' xor (h' >> 32)) & (2^r - 1)
// The table is a solution Z (num_slots rows of r bits) of the equations
//   XOR of Z[(start + j) mod num_slots] over the bits j of coeff  =  fp      (one per key)
// so a stored key always matches, and an absent key, whose fp is independent of its row, matches
// with chance 2^-r. In version 1 start + j never reaches num_slots.
//
// Body: num_slots / 64 blocks; block b is r little-endian 64-bit words, word k holding bit k of
// the rows 64 b .. 64 b + 63 (row 64 b + i in bit i). A query reads the r words of the block of
// its start and, unless the start is a block's first slot, of the next block: 2 r words in one
// span of 16 r bytes. Version 2 (math.h, RibbonWrappedTableBytes) then holds its last
// num_slots % 64 rows in r bit-packed planes; a query whose 64 rows reach them, or run on past
// the last row to the first, reads them from up to three places (RibbonReader::MatchesWrapped).
// Trailer (core/format.h): num_keys = equations stored (the distinct key hashes but any whose
// equation the others already implied), num_units = slots, param = r, seed = s, version 1 or 2
// (RibbonTableFor: 2 for at most kRibbonWrappedMaxKeys keys). Every byte: docs/format.md.
//
// The build (Ribbon::BuildWithInfo) never fails and never drops a key: elimination over GF(2) as
// the keys arrive (in a wrapped table, in the order of their remixed hashes, so that the bytes do
// not depend on the order they came in); a repeated hash gives an equation already implied and adds
// nothing (the table is then built again at the size of the distinct keys); a seed whose system has
// no solution, or whose wrapped table the build gives up on (RibbonAddEquationIn,
// RibbonSolveWrapped), is retried with the next, and after kRibbonMaxAttempts seeds it writes a
// blocked Bloom filter of the same size instead. The bytes depend only on the set of hashes: in a
// table of whole blocks the rows no equation fixes are 0, which makes the solution the same
// whatever the order of the keys; a wrapped table takes the keys in one order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/hash_list.h"
#include "core/packed_fields.h"
#include "core/result.h"
#include "core/ribbon/math.h"
#include "core/static_kind.h"

namespace sstfilter {

struct RibbonTag;
using RibbonParams = StaticParams<RibbonTag>;

// Where a key's equation lies in a table of num_slots slots: a multiple of 64 and at least 64
// (RibbonSlotsFor's), so that every start has 64 slots; or wrapped, at least 64 (RibbonTableFor's),
// every slot a start. BodyBytes checks a trailer's. Cheap to copy.
class RibbonHashing {
 public:
  RibbonHashing() = default;
  RibbonHashing(uint32_t seed_index, uint64_t num_slots, int fingerprint_bits, bool wrapped = false)
      : seed_index_(seed_index),
        num_starts_(wrapped ? num_slots : num_slots - (kRibbonCoeffBits - 1)),
        fp_mask_(LowBitsMask(fingerprint_bits)) {}

  uint64_t Remix(uint64_t hash) const { return RemixHash(hash, seed_index_); }
  uint64_t Start(uint64_t remixed) const { return FastRange64(remixed, num_starts_); }
  static uint64_t Coefficients(uint64_t remixed) { return Mix64(remixed) | 1; }
  uint32_t Fingerprint(uint64_t remixed) const { return XorFoldFingerprint(remixed, fp_mask_); }

 private:
  uint32_t seed_index_ = 0;
  uint64_t num_starts_ = 1;
  uint32_t fp_mask_ = 0;
};

// A view over a parsed Ribbon body. Cheap to copy; does not own the bytes.
class RibbonReader {
 public:
  RibbonReader() = default;
  // A version 1 table (whole blocks, no start within 63 slots of the end).
  RibbonReader(const uint8_t* blocks, const RibbonHashing& hashing, int fingerprint_bits)
      : blocks_(blocks), hashing_(hashing), bits_(fingerprint_bits) {}
  // A wrapped table (version 2) of num_slots slots: RibbonWrappedTableBytes(num_slots, r) bytes.
  RibbonReader(const uint8_t* body, const RibbonHashing& hashing, int fingerprint_bits,
               uint64_t num_slots)
      : blocks_(body),
        hashing_(hashing),
        bits_(fingerprint_bits),
        full_slots_(num_slots / kRibbonCoeffBits * kRibbonCoeffBits),
        num_slots_(num_slots),
        tail_(body + RibbonTableBytes(full_slots_, fingerprint_bits)),
        tail_bytes_(RibbonWrappedTableBytes(num_slots, fingerprint_bits) -
                    RibbonTableBytes(full_slots_, fingerprint_bits)) {}

  bool MayContain(uint64_t hash) const {
    const uint64_t h = hashing_.Remix(hash);
    return Matches(h, hashing_.Start(h));
  }

  // Starts loading the words of the key's start block and the next one.
  void Prefetch(uint64_t hash) const { PrefetchSpan(hashing_.Start(hashing_.Remix(hash))); }

  // The steps of MayContain, for a table whose keys are already remixed (a layer of the bumped
  // Ribbon kind, core/bumped_ribbon/): the start slot, its prefetch, and the test.
  uint64_t StartOf(uint64_t remixed) const { return hashing_.Start(remixed); }
  void PrefetchAt(uint64_t start) const { PrefetchSpan(start); }
  bool MatchesAt(uint64_t remixed, uint64_t start) const { return Matches(remixed, start); }

  // Tests every key. Unless the caller prefetched (BatchPrefetch), a pass over each 32 keys first
  // computes their starts and prefetches their words.
  void MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match,
                       BatchPrefetch prefetch = BatchPrefetch::kInBatch) const;
  // Its queries have a copy compiled with popcnt (core/batch.h).
  static constexpr bool kHasPopcntCopy = true;

 private:
  // MayContainBatch's pass that prefetches every key before the tests, run in the copy
  // PopcntDispatch chooses (core/batch.h).
  friend struct PopcntDispatch;
  void BatchWithOwnPrefetch(const uint64_t* hashes, size_t count, bool* may_match) const;

  const uint8_t* BlockAddress(uint64_t start) const {
    return blocks_ + (start / kRibbonCoeffBits) * 8 * static_cast<uint64_t>(bits_);
  }
  void PrefetchSpan(uint64_t start) const {
    if (start + kRibbonCoeffBits > full_slots_) {
      PrefetchWrapped(start);
      return;
    }
    PrefetchBytes(BlockAddress(start), (start % kRibbonCoeffBits != 0 ? 16 : 8) * bits_);
  }
  bool Matches(uint64_t remixed, uint64_t start) const {
    // Only a wrapped table has starts whose 64 rows leave the whole blocks.
    if (start + kRibbonCoeffBits > full_slots_) return MatchesWrapped(remixed, start);
    const int shift = static_cast<int>(start % kRibbonCoeffBits);
    const uint64_t coeff = RibbonHashing::Coefficients(remixed);
    // Row start + j is bit shift + j of the block's words for j < 64 - shift, and bit
    // j - (64 - shift) of the next block's after that; a start at a block's first slot reads
    // only its own block (the next one may not exist).
    const uint64_t in_block = coeff << shift;
    const uint64_t in_next = (coeff >> 1) >> (63 - shift);
    const uint8_t* lo = BlockAddress(start);
    const uint8_t* hi = lo + (shift != 0 ? 8 * bits_ : 0);
    const uint32_t fp = hashing_.Fingerprint(remixed);
    // An absent key's result differs from its fingerprint in each bit with chance 1/2, so the
    // bits are compared kGroupBits at a time: a miss stops after the first group 15 times in
    // 16, and a hit costs what computing every bit first would.
    for (int first = 0; first < bits_; first += kGroupBits) {
      const int last = first + kGroupBits < bits_ ? first + kGroupBits : bits_;
      uint32_t diff = 0;
      for (int k = first; k < last; ++k) {
        const uint64_t picked =
            (LoadLE64(lo + 8 * k) & in_block) ^ (LoadLE64(hi + 8 * k) & in_next);
        diff |= (static_cast<uint32_t>(__builtin_parityll(picked)) ^ (fp >> k)) & 1u;
      }
      if (diff != 0) return false;
    }
    return true;
  }
  static constexpr int kGroupBits = 4;

  // A wrapped table's starts whose 64 rows do not all lie in its whole blocks (wrapped.cc): their
  // rows, gathered in up to three pieces, from the last whole block, the last rows' planes and
  // the first block.
  void PrefetchWrapped(uint64_t start) const;
  bool MatchesWrapped(uint64_t remixed, uint64_t start) const;
  // Bit k of the rows full_slots_ + first .. + count - 1 (1 <= count <= 63, all past the whole
  // blocks), row full_slots_ + first + j in bit j.
  uint64_t TailRows(int k, uint64_t first, int count) const;

  const uint8_t* blocks_ = nullptr;
  RibbonHashing hashing_;
  int bits_ = 0;
  // The rows in whole blocks (version 1: every row, never reached), all rows, and the bit planes
  // of the rows past the whole blocks (version 2).
  uint64_t full_slots_ = ~uint64_t{0};
  uint64_t num_slots_ = 0;
  const uint8_t* tail_ = nullptr;
  uint64_t tail_bytes_ = 0;
};

// The echelon form a build keeps, one equation per slot: coeff[i], the coefficients of the
// equation whose first coefficient is slot i (bit j: slot i + j; 0: no equation there), and
// rhs[i], its right-hand side. Shared with the bumped Ribbon kind (core/bumped_ribbon/).
enum class RibbonAdd {
  kStored,        // the equation went in, at *pivot
  kImplied,       // it reduced to 0 = 0: the stored ones imply it (a repeated hash)
  kInconsistent,  // it reduced to 0 = nonzero: no solution holds it with the others; or, in a
                  // wrapped table, it went round the table without finding a slot (the seed fails)
};
// Adds one equation (its first slot, coefficients with bit 0 set, right-hand side): while its
// first slot already holds an equation, that one is subtracted (XOR) and the remainder moves to
// its next coefficient. Existing equations never change, so removing the last ones added, newest
// first, restores the form as it was before them. kWrapped: a wrapped table of num_slots slots
// (at least 64), where the remainder's first slot runs on past the last slot to the first. A move
// can skip a slot with no equation, so there a remainder may go round the table without finding
// one; after a full turn it gives up as kInconsistent (the seed fails). In a table of whole blocks
// the remainder's last coefficient never moves past the last slot, so the moves end.
template <bool kWrapped>
inline RibbonAdd RibbonAddEquationIn(uint64_t* coeff, uint32_t* rhs, uint64_t num_slots,
                                     uint64_t slot, uint64_t c, uint32_t f, uint64_t* pivot) {
  for (uint64_t moved = 0; !kWrapped || moved <= num_slots;) {
    const uint64_t existing = coeff[slot];
    if (existing == 0) {
      coeff[slot] = c;
      rhs[slot] = f;
      *pivot = slot;
      return RibbonAdd::kStored;
    }
    c ^= existing;
    f ^= rhs[slot];
    if (c == 0) return f == 0 ? RibbonAdd::kImplied : RibbonAdd::kInconsistent;
    const int skip = __builtin_ctzll(c);
    slot += static_cast<uint64_t>(skip);
    c >>= skip;
    if constexpr (kWrapped) {
      moved += static_cast<uint64_t>(skip);
      if (slot >= num_slots) slot -= num_slots;
    }
  }
  return RibbonAdd::kInconsistent;
}
inline RibbonAdd RibbonAddEquation(uint64_t* coeff, uint32_t* rhs, uint64_t slot, uint64_t c,
                                   uint32_t f, uint64_t* pivot) {
  return RibbonAddEquationIn<false>(coeff, rhs, 0, slot, c, f, pivot);
}
inline RibbonAdd RibbonAddWrappedEquation(uint64_t* coeff, uint32_t* rhs, uint64_t num_slots,
                                          uint64_t slot, uint64_t c, uint32_t f, uint64_t* pivot) {
  return RibbonAddEquationIn<true>(coeff, rhs, num_slots, slot, c, f, pivot);
}
// Writes the table (num_slots / 64 blocks of r words, RibbonTableBytes) that solves the echelon
// form: back substitution, last row first; a row with no equation is 0, which makes the solution
// the same whatever order the equations came in.
void RibbonBackSubstitute(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots, int r,
                          uint8_t* table);

// What the back substitution of a wrapped table carries: the values of the first 63 rows, which
// the last rows' equations reach around the table's end, and of up to 64 rows past them that no
// equation starts on, are unknowns; every other row's value is a constant plus a sum of unknowns,
// the set of them in two words (unknown u: bit u % 64 of word u / 64).
struct RibbonUnknowns {
  uint64_t words[2];
};
inline constexpr int kRibbonCarriedRows = kRibbonCoeffBits - 1;
inline constexpr int kRibbonExtraUnknowns = 64;
static_assert(kRibbonCarriedRows + kRibbonExtraUnknowns <= 128,
              "the unknowns of a wrapped table fit RibbonUnknowns' two words");
// Writes the wrapped table (RibbonWrappedTableBytes long, zeroed) that solves the echelon form that
// RibbonAddWrappedEquation built: back substitution from the last row down to row 63, each row's
// value in terms of the unknowns; then the equations whose first slot is below 63 are a dense
// system over the unknowns, solved by elimination, unknowns it leaves free 0; then every row's
// value. The free rows past the 64 it carries are 0, so it can miss a solution that needs one of
// them otherwise: false if it finds none (the seed fails). *implied: the equations that reduced to
// 0 = 0 there, which the solution satisfies as it is (implied by the others, unless a row held at
// 0 was what told them apart). `depends` and `values` are scratch (num_slots entries each, reused).
bool RibbonSolveWrapped(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots, int r,
                        std::vector<RibbonUnknowns>* depends, std::vector<uint32_t>* values,
                        uint8_t* table, uint64_t* implied);

// The memory of one build attempt, reused by the next: per slot, the coefficients of the
// equation whose first coefficient is there (0: none yet) and its right-hand side (12 bytes per
// slot; BuildStatic adds 8 per key when the input had repeats, a seed stored fewer equations than
// keys, or no seed solved). A wrapped table's build adds its sorted remixed hashes (8 bytes per
// key) and RibbonSolveWrapped's scratch (20 bytes per slot).
struct RibbonScratch {
  std::vector<uint64_t> coeff;
  std::vector<uint32_t> rhs;
  std::vector<uint64_t> remixed;
  std::vector<RibbonUnknowns> depends;
  std::vector<uint32_t> values;
  uint64_t Bytes() const {
    return 8 * coeff.capacity() + 4 * rhs.capacity() + 8 * remixed.capacity() +
           sizeof(RibbonUnknowns) * depends.capacity() + 4 * values.capacity();
  }
};

// The hashes for_each_chunk(f) delivers as f(hashes, n), remixed with a seed (RemixHash), into
// *remixed (replaced): a wrapped table's build takes its keys in their order.
template <typename ForEachChunk>
void RibbonRemixAll(ForEachChunk& for_each_chunk, uint32_t seed_index,
                    std::vector<uint64_t>* remixed) {
  size_t count = 0;
  for_each_chunk([&](const uint64_t*, size_t n) { count += n; });
  remixed->clear();
  remixed->reserve(count);
  for_each_chunk([&](const uint64_t* hashes, size_t n) {
    for (size_t i = 0; i < n; ++i) remixed->push_back(RemixHash(hashes[i], seed_index));
  });
}

// One attempt at a wrapped table of num_slots slots (RibbonTableFor's) for the hashes in
// s->remixed, each already remixed with the attempt's seed (RemixHash): sorted there, so that the
// bytes depend only on the set of hashes; then each key's equation in that order, and
// RibbonSolveWrapped into `table` (zeroed, RibbonWrappedTableBytes long). True if it solved, with
// *stored the equations stored (the others implied the rest). Shared with the bumped Ribbon kind,
// whose small sets are one such table (core/bumped_ribbon/).
bool RibbonSolveWrappedSet(uint64_t num_slots, int r, RibbonScratch* s, uint8_t* table,
                           uint64_t* stored);

// The scratch bytes of a wrapped table's build (RibbonRemixAll, RibbonSolveWrappedSet, and the
// distinct copy BuildStatic may make) for num_keys hashes, taken as 1 to kRibbonWrappedMaxKeys: 32
// bytes per slot and 16 per key.
uint64_t RibbonWrappedBuildScratchBytes(uint64_t num_keys);

// The body bytes of a wrapped table's trailer (version 2 of the Ribbon and bumped Ribbon kinds):
// false unless the fingerprint width, the slots (64 to kRibbonMaxSlots) and num_keys (at most the
// slots) are ones a build writes.
bool RibbonWrappedBodyBytes(const Trailer& t, uint64_t* body_bytes);

// Seeds tried before the build falls back to a blocked Bloom filter. A seed solves at least 2
// times in 3 (math.h), so 32 failures in a row have a chance below 1e-15.
inline constexpr int kRibbonMaxAttempts = 32;

struct RibbonSolver;  // ribbon.cc

// The kind's descriptor (the operations every kind provides: core/kinds.h; those it shares with
// the fuse kind: core/static_kind.h).
struct Ribbon : StaticKind<Ribbon, RibbonParams> {
  // What StaticKind reads.
  // Scratch: 12 bytes per slot (RibbonScratch), at most 1.15 slots per key, and the
  // distinct copy's 8 bytes per key; a wrapped table's build more (BuildScratchBytes below).
  static constexpr StaticKindFacts kFacts = {"ribbon",
                                             kRibbonMinFingerprintBits,
                                             kRibbonMaxFingerprintBits,
                                             kRibbonNominalSlotsPerKey,
                                             kRibbonMaxAttempts,
                                             12 * 1.15 + 8};
  using Reader = RibbonReader;
  static constexpr FilterKind kId = FilterKind{5};
  static constexpr const char* kName = "ribbon";
  static constexpr uint8_t kMaxVersion = 2;  // 2: a wrapped table

  // The fingerprint width of the filter of num_keys keys: the budget's widest that fits, at
  // least 1, or the fixed width.
  static Result<int> FingerprintBitsFor(const Params& params, uint64_t num_keys);
  using Solver = RibbonSolver;  // its table and one attempt (core/static_build.h), in ribbon.cc

  static bool BodyBytes(const Trailer& t, uint64_t* body_bytes);
  static Reader OpenReader(const Trailer& t, const uint8_t* body);

  // At least the scratch bytes a build of num_keys hashes (repeats included) holds at its peak:
  // StaticKind's for a table of whole blocks; a wrapped table's build holds 32 bytes per slot and
  // 16 per key (its sorted remixed hashes and the distinct copy). A build of more hashes than a
  // wrapped table takes may still build one for their distinct keys, so its figure adds the
  // largest wrapped build's (about 0.7 MB).
  static uint64_t BuildScratchBytes(const Params& params, uint64_t num_keys);
};

// Instantiated in ribbon.cc, beside the Solver.
extern template struct StaticKind<Ribbon, RibbonParams>;

}  // namespace sstfilter
