// SPDX-License-Identifier: Apache-2.0
// The wrapped table of the Ribbon kind (version 2, math.h): its solve, and the queries whose 64
// rows leave the whole blocks.
#include <algorithm>

#include "core/ribbon/ribbon.h"

namespace sstfilter {
namespace {

void Toggle(RibbonUnknowns* set, int u) { set->words[u >> 6] ^= uint64_t{1} << (u & 63); }
void XorInto(RibbonUnknowns* set, const RibbonUnknowns& other) {
  set->words[0] ^= other.words[0];
  set->words[1] ^= other.words[1];
}
// The highest unknown in the set, -1 for none.
int Highest(const RibbonUnknowns& set) {
  if (set.words[1] != 0) return 127 - __builtin_clzll(set.words[1]);
  if (set.words[0] != 0) return 63 - __builtin_clzll(set.words[0]);
  return -1;
}
// The parity of the unknowns in both sets.
uint32_t Parity(const RibbonUnknowns& a, const RibbonUnknowns& b) {
  return static_cast<uint32_t>(
      __builtin_parityll((a.words[0] & b.words[0]) ^ (a.words[1] & b.words[1])));
}

// An equation over the unknowns: the XOR of the values of those in `unknowns` is `value`.
struct DenseEquation {
  RibbonUnknowns unknowns;
  uint32_t value;
};

// Adds to *sum the values of the rows first + j (mod num_slots) for the bits j of `rows`
// (first <= num_slots, so one subtraction wraps any of them).
void AddRows(const RibbonUnknowns* depends, const uint32_t* values, uint64_t num_slots,
             uint64_t first, uint64_t rows, DenseEquation* sum) {
  for (; rows != 0; rows &= rows - 1) {
    uint64_t row = first + static_cast<uint64_t>(__builtin_ctzll(rows));
    if (row >= num_slots) row -= num_slots;
    XorInto(&sum->unknowns, depends[row]);
    sum->value ^= values[row];
  }
}

// Rows 0..62 are unknowns 0..62. From the last row down to row 63, a row with an equation is
// its right-hand side plus the rows after its first (past the end: the first rows); a row with
// none is the next unknown while there are any left, else 0.
void SubstituteDownToTheCarriedRows(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots,
                                    RibbonUnknowns* depends, uint32_t* values) {
  for (int row = 0; row < kRibbonCarriedRows; ++row) Toggle(&depends[row], row);
  int next_unknown = kRibbonCarriedRows;
  for (uint64_t row = num_slots; row-- > kRibbonCarriedRows;) {
    const uint64_t c = coeff[row];
    if (c == 0) {
      if (next_unknown < kRibbonCarriedRows + kRibbonExtraUnknowns) {
        Toggle(&depends[row], next_unknown++);
      }
      continue;
    }
    DenseEquation sum = {{}, rhs[row]};
    AddRows(depends, values, num_slots, row + 1, c >> 1, &sum);
    depends[row] = sum.unknowns;
    values[row] = sum.value;
  }
}

// The equations whose first slot is below 63, over the unknowns, reduced into `basis` (indexed
// by each equation's highest unknown) as they come. False if one reduces to 0 = nonzero.
bool ReduceCarriedEquations(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots,
                            const RibbonUnknowns* depends, const uint32_t* values,
                            DenseEquation* basis, bool* has, uint64_t* implied) {
  for (int row = 0; row < kRibbonCarriedRows; ++row) {
    const uint64_t c = coeff[row];
    if (c == 0) continue;
    DenseEquation e = {{}, rhs[row]};
    AddRows(depends, values, num_slots, static_cast<uint64_t>(row), c, &e);
    for (;;) {
      const int top = Highest(e.unknowns);
      if (top < 0) {
        if (e.value != 0) return false;
        ++*implied;
        break;
      }
      if (!has[top]) {
        basis[top] = e;
        has[top] = true;
        break;
      }
      XorInto(&e.unknowns, basis[top].unknowns);
      e.value ^= basis[top].value;
    }
  }
  return true;
}

// The table's layout (math.h, RibbonWrappedTableBytes) of the rows' values, into a zeroed table.
void WriteWrappedTable(const uint32_t* values, uint64_t num_slots, int r, uint8_t* table) {
  const uint64_t blocks = num_slots / kRibbonCoeffBits;
  for (uint64_t b = 0; b < blocks; ++b) {
    for (int k = 0; k < r; ++k) {
      uint64_t word = 0;
      for (int i = 0; i < kRibbonCoeffBits; ++i) {
        word |= static_cast<uint64_t>((values[b * kRibbonCoeffBits + i] >> k) & 1) << i;
      }
      StoreLE64(table + (b * static_cast<uint64_t>(r) + static_cast<uint64_t>(k)) * 8, word);
    }
  }
  const uint64_t first = blocks * kRibbonCoeffBits, last_rows = num_slots - first;
  uint8_t* planes = table + RibbonTableBytes(first, r);
  for (int k = 0; k < r; ++k) {
    for (uint64_t i = 0; i < last_rows; ++i) {
      const uint64_t bit = static_cast<uint64_t>(k) * last_rows + i;
      planes[bit / 8] |= static_cast<uint8_t>(((values[first + i] >> k) & 1) << (bit % 8));
    }
  }
}

}  // namespace

bool RibbonSolveWrapped(const uint64_t* coeff, const uint32_t* rhs, uint64_t num_slots, int r,
                        std::vector<RibbonUnknowns>* depends, std::vector<uint32_t>* values,
                        uint8_t* table, uint64_t* implied) {
  constexpr int kUnknowns = kRibbonCarriedRows + kRibbonExtraUnknowns;
  depends->assign(num_slots, RibbonUnknowns{});
  values->assign(num_slots, 0);
  SubstituteDownToTheCarriedRows(coeff, rhs, num_slots, depends->data(), values->data());
  DenseEquation basis[kUnknowns];
  bool has[kUnknowns] = {};
  *implied = 0;
  if (!ReduceCarriedEquations(coeff, rhs, num_slots, depends->data(), values->data(), basis, has,
                              implied)) {
    return false;
  }
  // The unknowns' values, lowest first: an equation of the basis holds its highest unknown and
  // lower ones only, whose values are known by then; an unknown no equation holds is 0. Bit u of
  // planes[k] is bit k of unknown u's value.
  RibbonUnknowns planes[kRibbonMaxFingerprintBits] = {};
  for (int u = 0; u < kUnknowns; ++u) {
    if (!has[u]) continue;
    for (int k = 0; k < r; ++k) {
      if ((((basis[u].value >> k) & 1) ^ Parity(basis[u].unknowns, planes[k])) != 0) {
        Toggle(&planes[k], u);
      }
    }
  }
  uint32_t* v = values->data();
  const RibbonUnknowns* d = depends->data();
  for (uint64_t row = 0; row < num_slots; ++row) {
    for (int k = 0; k < r; ++k) v[row] ^= Parity(d[row], planes[k]) << k;
  }
  WriteWrappedTable(v, num_slots, r, table);
  return true;
}

void RibbonReader::PrefetchWrapped(uint64_t start) const {
  if (start < full_slots_) PrefetchBytes(BlockAddress(start), 8 * static_cast<size_t>(bits_));
  if (tail_bytes_ > 0) PrefetchBytes(tail_, tail_bytes_);
  PrefetchBytes(blocks_, 8 * static_cast<size_t>(bits_));  // the first block, where rows wrap to
}

bool RibbonReader::MatchesWrapped(uint64_t remixed, uint64_t start) const {
  // The 64 rows from start, in up to three pieces whose bounds every bit k shares: `head` rows of
  // start's block (the last whole one, as start + 64 > full_slots_; none if start is past it),
  // `tail` rows of the last rows' planes from row full_slots_ + tail_first (none if the table is
  // whole blocks), and the first `wrapped` rows of the first block. Each piece is below 64 rows:
  // head, as start + 64 > full_slots_; wrapped, as head or tail has a row.
  const uint64_t t = num_slots_ - full_slots_;
  const int head = start < full_slots_ ? static_cast<int>(full_slots_ - start) : 0;
  const uint64_t tail_first = start < full_slots_ ? 0 : start - full_slots_;
  const int tail = static_cast<int>(
      std::min<uint64_t>(static_cast<uint64_t>(kRibbonCoeffBits - head), t - tail_first));
  const int wrapped = kRibbonCoeffBits - head - tail;
  const uint8_t* head_block = BlockAddress(start < full_slots_ ? start : 0);
  const int head_shift = kRibbonCoeffBits - head;  // start % 64 where head > 0
  const uint64_t wrapped_mask = (uint64_t{1} << wrapped) - 1;
  const uint64_t coeff = RibbonHashing::Coefficients(remixed);
  const uint32_t fp = hashing_.Fingerprint(remixed);
  for (int k = 0; k < bits_; ++k) {
    uint64_t window = tail > 0 ? TailRows(k, tail_first, tail) << head : 0;
    if (head > 0) window |= LoadLE64(head_block + 8 * k) >> head_shift;
    if (wrapped > 0) window |= (LoadLE64(blocks_ + 8 * k) & wrapped_mask) << (head + tail);
    if (((static_cast<uint32_t>(__builtin_parityll(window & coeff)) ^ (fp >> k)) & 1u) != 0) {
      return false;
    }
  }
  return true;
}

uint64_t RibbonReader::TailRows(int k, uint64_t first, int count) const {
  // Plane k of the last rows: bits k t .. k t + t - 1 of tail_, t = num_slots_ - full_slots_.
  const uint64_t bit = static_cast<uint64_t>(k) * (num_slots_ - full_slots_) + first;
  const uint64_t byte = bit / 8;
  uint64_t rows;
  if (byte + 9 <= tail_bytes_) {
    // The count bits (at most 63, from bit % 8 of the byte) span at most 9 bytes.
    const int shift = static_cast<int>(bit % 8);
    rows = LoadLE64(tail_ + byte) >> shift;
    if (shift != 0) rows |= static_cast<uint64_t>(tail_[byte + 8]) << (64 - shift);
  } else {
    // They lie in the body's last 8 bytes (they end by tail_'s end, and start in its last 8
    // bytes or, if tail_ is shorter, in tail_); the body has those 8 bytes: a whole block of
    // r words comes first.
    rows = LoadLE64(tail_ + tail_bytes_ - 8) >> (bit + 64 - 8 * tail_bytes_);
  }
  return rows & ((uint64_t{1} << count) - 1);
}

}  // namespace sstfilter
