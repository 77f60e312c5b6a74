// SPDX-License-Identifier: Apache-2.0
// BloomFilter (include/sstfilter/bloom_filter.h): the blocked Bloom kind of core/blocked_bloom/,
// grown key by key with atomic bit sets. The probe positions are the kind's own
// (ForEachBlockedProbe), so the bytes Serialize writes are those the static build writes for the
// same keys, blocks and probes (tested).
#include "sstfilter/bloom_filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>

#include "core/app_filters/byte_range.h"
#include "core/batch.h"
#include "core/blocked_bloom/blocked_bloom.h"
#include "core/hash.h"
#include "core/parse.h"
#include "core/standard_bloom/standard_bloom.h"

namespace sstfilter {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "bits are set by lock-free atomic OR");
static_assert(sizeof(std::atomic<uint64_t>) == 8, "a block is 8 atomic words");
static_assert(BlockedBloomReader::kBlockBytes == 64, "BloomFilter's blocks are the kind's");

namespace {

// The probes of a key as one mask per word of its block: an add ORs them in, a query tests them.
struct BlockMask {
  uint64_t words[8] = {};
};

BlockMask MaskOf(uint64_t hash, int num_probes) {
  BlockMask mask;
  ForEachBlockedProbe(hash, num_probes, [&mask](uint32_t bit) {
    mask.words[bit >> 6] |= uint64_t{1} << (bit & 63);
    return true;
  });
  return mask;
}

// Sets `mask`'s bits of `word`; true if any was clear. A plain load first: a locked OR costs far
// more, and streams that repeat keys (dedup) mostly find their bits set already.
bool SetBits(std::atomic<uint64_t>* word, uint64_t mask) {
  if ((word->load(std::memory_order_relaxed) & mask) == mask) return false;
  return (word->fetch_or(mask, std::memory_order_relaxed) & mask) != mask;
}

// The blocks and bits of a filter of `capacity` keys at `fp_rate` in `layout`.
Result<uint64_t> BitsFor(BloomLayout layout, uint64_t capacity, double fp_rate, int* num_probes) {
  switch (layout) {
    case BloomLayout::kBlocked: {
      const Result<BlockedBloomParams> params = BlockedBloom::ForFpRate(fp_rate);
      if (!params.ok()) return Err(params.error());
      const Result<uint64_t> blocks = BlockedBloom::Units(params.value(), capacity);
      if (!blocks.ok()) return Err(blocks.error());
      *num_probes = params.value().num_probes;
      return blocks.value() * kBloomBlockBits;
    }
    case BloomLayout::kStandard: {
      Result<StandardBloomParams> params = StandardBloom::ForFpRate(fp_rate);
      if (!params.ok()) return Err(params.error());
      StandardBloomParams p = params.value();
      // The textbook bits, -ln p / ln^2 2 per key, assume the best real probe count; with a whole
      // one the rate can be up to about 0.4% above p. Bits are added, 0.05% at a time, until the
      // model gives at most p for this capacity.
      for (int i = 0; i < 64; ++i) {
        const Result<double> rate = StandardBloom::EstimatedFpRate(p, capacity);
        if (!rate.ok() || rate.value() <= fp_rate) break;
        p.bits_per_key *= 1.0005;
        const Result<int> probes = StandardBloom::ProbesForBitsPerKey(p.bits_per_key);
        if (!probes.ok()) return Err(probes.error());
        p.num_probes = probes.value();
      }
      const Result<uint64_t> words = StandardBloom::Units(p, capacity);
      if (!words.ok()) return Err(words.error());
      *num_probes = p.num_probes;
      return words.value() * 64;
    }
  }
  return Err("unknown Bloom layout");
}

std::string NotOurFormat(uint64_t size) {
  return "not a filter of sstfilter's format (" + std::to_string(size) +
         " bytes: truncated, corrupt, or of a newer version)";
}

std::string NotABloomFilter(FilterKind kind) {
  return "not a blocked or standard Bloom filter (kind " + std::to_string(static_cast<int>(kind)) +
         "); a BloomFilter reads only those";
}

std::string AllocationError(uint64_t bytes) {
  return "cannot allocate " + std::to_string(bytes) + " bytes";
}

}  // namespace

bool BloomFilter::Allocate(BloomLayout layout, uint64_t num_bits) {
  const uint64_t num_blocks = (num_bits + kBloomBlockBits - 1) / kBloomBlockBits;
  FilterBuffer buffer;
  return num_blocks <= SIZE_MAX / kBlockBytes && buffer.Allocate(num_blocks * kBlockBytes) &&
         Adopt(layout, num_bits, &buffer);  // zeroed bytes: zero words
}

bool BloomFilter::Adopt(BloomLayout layout, uint64_t num_bits, FilterBuffer* buffer) {
  const uint64_t num_blocks = (num_bits + kBloomBlockBits - 1) / kBloomBlockBits;
  if (num_blocks > buffer->size() / kBlockBytes) return false;
  buffer_ = std::move(*buffer);
  words_ = reinterpret_cast<std::atomic<uint64_t>*>(buffer_.data());
  num_blocks_ = num_blocks;
  num_bits_ = num_bits;
  layout_ = layout;
  for (uint64_t i = 0; i < num_blocks * kWordsPerBlock; ++i) {
    const uint64_t word = LoadLE64(buffer_.data() + 8 * i);
    new (&words_[i]) std::atomic<uint64_t>(word);
  }
  return true;
}

bool BloomFilter::AllocateBody(uint64_t body_bytes, FilterBuffer* body) {
  const uint64_t num_blocks = body_bytes / kBlockBytes + (body_bytes % kBlockBytes != 0 ? 1 : 0);
  if (num_blocks > SIZE_MAX / kBlockBytes ||
      !body->AllocateForOverwrite(num_blocks * kBlockBytes)) {
    return false;
  }
  // A standard filter's last block is partly past its words: zero, as Allocate leaves it.
  std::memset(body->data() + body_bytes, 0, body->size() - body_bytes);
  return true;
}

BloomFilter::~BloomFilter() = default;  // buffer_ frees the bits (atomics need no destruction)

BloomFilter& BloomFilter::operator=(BloomFilter&& other) noexcept {
  if (this != &other) {
    buffer_ = std::move(other.buffer_);
    words_ = std::exchange(other.words_, nullptr);
    num_blocks_ = std::exchange(other.num_blocks_, 0);
    num_bits_ = std::exchange(other.num_bits_, 0);
    layout_ = other.layout_;
    num_probes_ = other.num_probes_;
    capacity_ = other.capacity_;
    fp_rate_at_capacity_ = other.fp_rate_at_capacity_;
  }
  return *this;
}

Result<BloomFilter> BloomFilter::Create(uint64_t capacity, double fp_rate, BloomLayout layout) {
  if (capacity == 0) return Err("capacity must be at least 1 key");
  int num_probes = 0;
  const Result<uint64_t> bits = BitsFor(layout, capacity, fp_rate, &num_probes);
  if (!bits.ok()) return Err(bits.error());
  BloomFilter filter;
  if (!filter.Allocate(layout, bits.value())) {
    return Err("cannot allocate " + std::to_string(bits.value() / 8) +
               " bytes for a Bloom filter of " + std::to_string(capacity) + " keys");
  }
  filter.num_probes_ = num_probes;
  filter.capacity_ = capacity;
  filter.fp_rate_at_capacity_ = filter.EstimatedFpRateAt(capacity);
  return filter;
}

bool BloomFilter::IsSizedFor(uint64_t capacity, double fp_rate) const {
  int num_probes = 0;
  const Result<uint64_t> bits = BitsFor(layout_, capacity, fp_rate, &num_probes);
  return bits.ok() && num_bits_ == bits.value() && num_probes_ == num_probes &&
         capacity_ == capacity;
}

double BloomFilter::EstimatedFpRateAt(uint64_t keys) const {
  BloomParams params;
  params.num_probes = num_probes_;
  params.bits_per_key = std::min(kMaxBitsPerKey, static_cast<double>(num_bits_) / keys);
  const Result<double> rate =
      layout_ == BloomLayout::kStandard
          ? StandardBloom::EstimatedFpRate(StandardBloomParams{params}, keys)
          : BlockedBloom::EstimatedFpRate(BlockedBloomParams{params}, keys);
  return rate.ok() ? rate.value() : 1.0;
}

Result<BloomFilter> BloomFilter::Deserialize(const void* data, size_t size) {
  ParsedFilter parsed;
  if (data == nullptr || !ParseFilter(static_cast<const uint8_t*>(data), size, &parsed)) {
    return Err(NotOurFormat(size));
  }
  // FromBody takes a 32-byte trailer; a compact one (layout 3) is a small Ribbon filter's.
  if (size - parsed.body_bytes != kTrailerBytes) return Err(NotABloomFilter(parsed.trailer.kind));
  FilterBuffer body;
  if (!AllocateBody(parsed.body_bytes, &body)) return Err(AllocationError(parsed.body_bytes));
  std::memcpy(body.data(), parsed.body, parsed.body_bytes);
  return FromBody(std::move(body), parsed.body_bytes, parsed.body + parsed.body_bytes);
}

Result<BloomFilter> BloomFilter::FromBody(FilterBuffer body, uint64_t body_bytes,
                                          const uint8_t* trailer) {
  Trailer t;
  if (!ParseTrailerFor(trailer, body_bytes, &t))
    return Err(NotOurFormat(body_bytes + kTrailerBytes));
  if (t.kind != BlockedBloom::kId && t.kind != StandardBloom::kId)
    return Err(NotABloomFilter(t.kind));
  if (t.num_units == 0) return Err("an empty filter (no bits) cannot take keys");
  const bool standard = t.kind == StandardBloom::kId;
  BloomFilter filter;
  if (!filter.Adopt(standard ? BloomLayout::kStandard : BloomLayout::kBlocked, body_bytes * 8,
                    &body)) {
    return Err("a body buffer of " + std::to_string(body.size()) + " bytes, not AllocateBody's");
  }
  filter.num_probes_ = t.param;
  filter.capacity_ = std::max<uint64_t>(t.num_keys, 1);
  filter.fp_rate_at_capacity_ = filter.EstimatedFpRateAt(filter.capacity_);
  return filter;
}

bool BloomFilter::AddHash(uint64_t hash) {
  if (num_blocks_ == 0) return false;  // moved from: takes nothing (and answers "may match")
  bool changed = false;
  if (layout_ == BloomLayout::kStandard) {
    ForEachStandardProbe(hash, num_probes_, num_bits_, [&](uint64_t bit) {
      changed |= SetBits(&words_[bit >> 6], uint64_t{1} << (bit & 63));
      return true;
    });
    return changed;
  }
  const BlockMask mask = MaskOf(hash, num_probes_);
  std::atomic<uint64_t>* block = words_ + BlockedBloomBlock(hash, num_blocks_) * kWordsPerBlock;
  for (uint64_t w = 0; w < kWordsPerBlock; ++w) {
    if (mask.words[w] != 0) changed |= SetBits(&block[w], mask.words[w]);
  }
  return changed;
}

bool BloomFilter::MayContainHash(uint64_t hash) const {
  if (num_blocks_ == 0) return true;  // moved from: "may match", never a false negative
  if (layout_ == BloomLayout::kStandard) {
    return ForEachStandardProbe(hash, num_probes_, num_bits_, [this](uint64_t bit) {
      return ((words_[bit >> 6].load(std::memory_order_relaxed) >> (bit & 63)) & 1) != 0;
    });
  }
  const BlockMask mask = MaskOf(hash, num_probes_);
  const std::atomic<uint64_t>* block =
      words_ + BlockedBloomBlock(hash, num_blocks_) * kWordsPerBlock;
  uint64_t missing = 0;  // no branch per word: an absent key fails at an unpredictable word
  for (uint64_t w = 0; w < kWordsPerBlock; ++w) {
    missing |= mask.words[w] & ~block[w].load(std::memory_order_relaxed);
  }
  return missing == 0;
}

void BloomFilter::MayContainBatch(const uint64_t* hashes, size_t count, bool* may_match) const {
  if (num_blocks_ == 0) {
    std::fill(may_match, may_match + count, true);
    return;
  }
  const bool standard = layout_ == BloomLayout::kStandard;
  for (size_t start = 0; start < count; start += kPrefetchBatch) {
    const size_t n = std::min(kPrefetchBatch, count - start);
    // A blocked key's one block; a standard key's first probe (a miss usually ends there).
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = hashes[start + i];
      __builtin_prefetch(standard ? words_ + (FastRange64(h, num_bits_) >> 6)
                                  : words_ + BlockedBloomBlock(h, num_blocks_) * kWordsPerBlock);
    }
    for (size_t i = 0; i < n; ++i) may_match[start + i] = MayContainHash(hashes[start + i]);
  }
}

Result<bool> BloomFilter::Merge(const BloomFilter& other) {
  if (!IsCompatible(other)) {
    return Err("cannot merge a Bloom filter of " + std::to_string(other.num_bits_) + " bits and " +
               std::to_string(other.num_probes_) + " probes into one of " +
               std::to_string(num_bits_) + " bits and " + std::to_string(num_probes_) +
               " probes: create both with the same capacity, rate and layout");
  }
  if (&other == this) return true;
  for (uint64_t i = 0; i < num_blocks_ * kWordsPerBlock; ++i) {
    const uint64_t bits = other.words_[i].load(std::memory_order_relaxed);
    if (bits != 0) words_[i].fetch_or(bits, std::memory_order_relaxed);
  }
  return true;
}

Result<BloomFilter> BloomFilter::Copy() const {
  BloomFilter copy;
  if (!copy.Allocate(layout_, num_bits_)) {
    return Err("cannot allocate " + std::to_string(memory_bytes()) + " bytes for the copy");
  }
  for (uint64_t i = 0; i < num_blocks_ * kWordsPerBlock; ++i) {
    copy.words_[i].store(words_[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  copy.num_probes_ = num_probes_;
  copy.capacity_ = capacity_;
  copy.fp_rate_at_capacity_ = fp_rate_at_capacity_;
  return copy;
}

void BloomFilter::Clear() {
  for (uint64_t i = 0; i < num_blocks_ * kWordsPerBlock; ++i) {
    words_[i].store(0, std::memory_order_relaxed);
  }
}

void BloomFilter::BlockFillHistogram(uint64_t* blocks_with_bits) const {
  std::fill(blocks_with_bits, blocks_with_bits + kBloomBlockBits + 1, 0);
  for (uint64_t b = 0; b < num_blocks_; ++b) {
    int bits = 0;
    for (uint64_t w = 0; w < kWordsPerBlock; ++w) {
      bits += __builtin_popcountll(words_[b * kWordsPerBlock + w].load(std::memory_order_relaxed));
    }
    ++blocks_with_bits[bits];
  }
}

uint64_t BloomFilter::BitsSet() const {
  uint64_t set = 0;
  for (uint64_t i = 0; i < num_blocks_ * kWordsPerBlock; ++i) {
    set += __builtin_popcountll(words_[i].load(std::memory_order_relaxed));
  }
  return set;
}

double BloomFilter::ApproximateElementCount() const {
  if (layout_ == BloomLayout::kStandard) {
    // m (1 - (1 - 1/m)^(k x)) bits set after x keys, inverted (Swamidass and Baldi); a full
    // array counts as half a bit short of full.
    const double m = static_cast<double>(num_bits_);
    const double set = std::min(static_cast<double>(BitsSet()), m - 0.5);
    return std::log1p(-set / m) / (num_probes_ * std::log1p(-1.0 / m));
  }
  uint64_t histogram[kBloomBlockBits + 1];
  BlockFillHistogram(histogram);
  // A block that received x distinct keys has, in expectation, 512 (1 - (1 - 1/512)^(k x)) bits
  // set (Swamidass and Baldi's estimator, per block). Inverted: x = ln(1 - bits/512) /
  // (k ln(1 - 1/512)). A full block would give infinity; it counts as half a bit short of full.
  const double per_key = num_probes_ * std::log1p(-1.0 / kBloomBlockBits);
  double keys = 0;
  for (int bits = 1; bits <= kBloomBlockBits; ++bits) {
    if (histogram[bits] == 0) continue;
    const double set = std::min(static_cast<double>(bits), kBloomBlockBits - 0.5);
    keys += histogram[bits] * (std::log1p(-set / kBloomBlockBits) / per_key);
  }
  return keys;
}

double BloomFilter::ExpectedFpRate() const {
  if (num_blocks_ == 0) return 1;  // moved from: every query matches
  if (layout_ == BloomLayout::kStandard) {
    // An absent key's k probes each find a set bit with chance (bits set) / m.
    return std::pow(static_cast<double>(BitsSet()) / static_cast<double>(num_bits_), num_probes_);
  }
  uint64_t histogram[kBloomBlockBits + 1];
  BlockFillHistogram(histogram);
  // An absent key picks a block uniformly (its hash's high bits) and probes k positions in it;
  // it passes when all of them are set: (bits/512)^k for a block with `bits` set.
  double sum = 0;
  for (int bits = 1; bits <= kBloomBlockBits; ++bits) {
    if (histogram[bits] == 0) continue;
    sum += histogram[bits] * std::pow(static_cast<double>(bits) / kBloomBlockBits, num_probes_);
  }
  return sum / static_cast<double>(num_blocks_);
}

std::string BloomFilter::Serialize() const {
  std::string out(SerializedBytes(), '\0');
  SerializeRange(0, out.size(), out.data());
  return out;
}

uint64_t BloomFilter::SerializedBytes() const { return num_bits_ / 8 + kTrailerBytes; }

// The body is the bit array's words, little-endian; then the trailer.
size_t BloomFilter::SerializeRange(uint64_t offset, size_t length, void* out) const {
  RangeCopier copier(offset, length, out);
  copier.Next(num_bits_ / 8, [this](uint64_t from, size_t n, uint8_t* dst) {
    while (n > 0) {
      uint8_t word[8];
      StoreLE64(word, words_[from >> 3].load(std::memory_order_relaxed));
      const size_t skip = static_cast<size_t>(from & 7);
      const size_t take = std::min(sizeof word - skip, n);
      std::memcpy(dst, word + skip, take);
      dst += take;
      from += take;
      n -= take;
    }
  });
  const bool standard = layout_ == BloomLayout::kStandard;
  Trailer t;
  t.kind = standard ? StandardBloom::kId : BlockedBloom::kId;
  t.num_keys = capacity_;
  t.num_units = standard ? num_bits_ / 64 : num_blocks_;
  t.param = static_cast<uint8_t>(num_probes_);
  uint8_t trailer[kTrailerBytes];
  EncodeTrailer(t, trailer);
  copier.NextBytes(trailer, sizeof trailer);
  return copier.copied();
}

}  // namespace sstfilter
