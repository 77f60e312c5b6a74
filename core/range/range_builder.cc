// SPDX-License-Identifier: Apache-2.0
// The range filter's builder (core/range/range_api.h): keys to positions, the Grafite hash,
// the sorted hashes; the shape a budget buys is computed in range_shape.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/range/range_api.h"
#include "core/range/range_codec.h"

namespace sstfilter {
namespace {

using namespace range_detail;  // NOLINT: the format's names, this file's vocabulary

// 64-bit words laid over the windows' chunks: sorting the hashes takes no memory of its own. Hash
// i is written at byte 8 i, after window i (at byte 16 i) was read, and the hashes' partitioned
// copy takes bytes 8 n to 16 n (n hashes, at most one per window): a build touches 18 bytes per
// key rather than the 34 of separate arrays (the windows, the hashes, their partitioned copy, the
// body), which counts where a builder's memory is new to the process, its pages faulted in and
// zeroed (docs/history.md). Accessed through memcpy: the chunks' objects are windows.
class WordsOverChunks {
 public:
  explicit WordsOverChunks(ChunkedList<Window>* windows) {
    for (size_t c = 0; c < windows->num_chunks(); ++c) {
      chunks_.push_back(reinterpret_cast<unsigned char*>(windows->chunk(c)));
    }
  }
  uint64_t Get(uint64_t i) const {
    uint64_t v;
    std::memcpy(&v, Address(i), 8);
    return v;
  }
  void Set(uint64_t i, uint64_t v) { std::memcpy(Address(i), &v, 8); }

 private:
  static constexpr uint64_t kChunkBytes = ChunkedList<Window>::kChunkItems * sizeof(Window);
  static_assert((kChunkBytes & (kChunkBytes - 1)) == 0, "a power of two");
  unsigned char* Address(uint64_t i) const {
    return chunks_[(8 * i) / kChunkBytes] + (8 * i) % kChunkBytes;
  }
  std::vector<unsigned char*> chunks_;
};

// Puts hashes (each below shape.universe, shape.num_values of them) in Elias-Fano order with two
// counting sorts that stay in the caches: into partitions of 2^kPartitionBucketBits buckets
// (about 1,000 keys each; counted as the hashes are added), then each partition by bucket, its
// counts in L1; SortWithinBuckets finishes the buckets (about 2 per key, so each is tiny). One
// counting sort over every bucket would miss the caches on its counts (8 bytes per key). The
// hashes and their partitioned copy lie in `words` (2 n words).
class HashSorter {
 public:
  static constexpr uint32_t kPartitionBucketBits = 11;

  HashSorter(const EliasFanoShape& shape, WordsOverChunks words)
      : shape_(shape),
        partition_shift_(shape.low_bits + kPartitionBucketBits),
        ends_((((shape.universe - 1) >> partition_shift_) + 1) + 1, 0),
        words_(std::move(words)) {}

  void Add(uint64_t h) {
    words_.Set(added_++, h);
    ++ends_[(h >> partition_shift_) + 1];
  }

  // Adds the hashes (every one added) to the body, in order.
  void SortInto(EliasFanoWriter* writer) {
    const uint64_t n = added_, partitions = ends_.size() - 1;
    uint32_t largest = 0;
    for (uint64_t j = 1; j <= partitions; ++j) {
      largest = std::max(largest, ends_[j]);
      ends_[j] += ends_[j - 1];
    }
    {
      std::vector<uint32_t> next(ends_.begin(), ends_.end() - 1);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t h = words_.Get(i);
        words_.Set(n + next[h >> partition_shift_]++, h);
      }
    }
    std::vector<uint64_t> part(largest), sorted(largest);  // a partition at a time
    constexpr uint64_t kBucketMask = (uint64_t{1} << kPartitionBucketBits) - 1;
    const uint32_t low_bits = shape_.low_bits;
    uint32_t starts[kBucketMask + 2];
    for (uint64_t j = 0; j < partitions; ++j) {
      const uint32_t count = ends_[j + 1] - ends_[j];
      for (uint32_t i = 0; i < count; ++i) part[i] = words_.Get(n + ends_[j] + i);
      std::fill(std::begin(starts), std::end(starts), 0);
      for (uint32_t i = 0; i < count; ++i) ++starts[((part[i] >> low_bits) & kBucketMask) + 1];
      for (uint64_t k = 1; k <= kBucketMask + 1; ++k) starts[k] += starts[k - 1];
      for (uint32_t i = 0; i < count; ++i) {
        sorted[starts[(part[i] >> low_bits) & kBucketMask]++] = part[i];
      }
      range_detail::SortWithinBuckets(sorted.data(), count);
      for (uint32_t i = 0; i < count; ++i) writer->Add(sorted[i]);
    }
  }

 private:
  EliasFanoShape shape_;
  uint32_t partition_shift_;
  std::vector<uint32_t> ends_;  // ends_[j + 1]: the hashes in partition j, then where j ends
  WordsOverChunks words_;
  uint64_t added_ = 0;
};

// How many leading bytes two windows share (16: all).
inline uint32_t SharedBytes(Window a, Window b) {
  const Window x = a ^ b;
  const uint64_t high = static_cast<uint64_t>(x >> 64), low = static_cast<uint64_t>(x);
  if (high != 0) return static_cast<uint32_t>(__builtin_clzll(high)) / 8;
  if (low != 0) return 8 + static_cast<uint32_t>(__builtin_clzll(low)) / 8;
  return kMaxWindowBytes;
}

// Byte i (0: the first, the highest) of a window, from its two halves.
inline uint32_t ByteOf(uint64_t high, uint64_t low, uint32_t i) {
  return static_cast<uint8_t>((i < 8 ? high : low) >> (56 - 8 * (i & 7)));
}

// What the window width is chosen from: the distinct, sorted 16-byte windows' neighbours.
struct Neighbours {
  uint64_t windows = 0;
  // shared[d]: neighbours whose windows agree in exactly their first d bytes (d < 16);
  // last[d]: neighbours whose last differing byte is byte d - 1 (d >= 1).
  uint64_t shared[kMaxWindowBytes + 1] = {};
  uint64_t last[kMaxWindowBytes + 1] = {};
  // The next window after `previous` (distinct, larger), which shares `shared_bytes` with it.
  void Add(Window previous, Window w, uint32_t shared_bytes) {
    const Window x = previous ^ w;
    const uint64_t high = static_cast<uint64_t>(x >> 64), low = static_cast<uint64_t>(x);
    // x != 0; the or-ed bit only keeps the builtin defined.
    const int trailing =
        low != 0 ? __builtin_ctzll(low) : 64 + __builtin_ctzll(high | (uint64_t{1} << 63));
    ++shared[shared_bytes];
    ++last[kMaxWindowBytes - trailing / 8];
  }
};

// The window width. Wide enough that neighbouring keys stay apart (but for at most
// n / 2^(bits_per_key - 2) of them, the false-positive rate of a one-key range) and that the
// median pair of neighbours is told apart down to the last byte in which they differ (so that
// a range that starts just past a key, which differs from it in that byte, misses the key's
// window); no wider. Keys differ in their low bytes (ids, timestamps), and a window wider than
// needed spreads a range of keys over more windows than the filter can tell apart: 256 times
// more per byte (constant padding after an integer, a long key among short ones). Keys longer
// than the window share the windows of their first bytes: false positives, never a lost key.
// No key is longer than `widest` bytes past the prefix.
uint32_t WindowBytesFor(const Neighbours& neighbours, uint32_t widest, double bits_per_key) {
  const uint64_t pairs = neighbours.windows == 0 ? 0 : neighbours.windows - 1;
  uint32_t median_last = 0;
  uint64_t seen = neighbours.last[0];
  while (2 * seen < pairs) seen += neighbours.last[++median_last];
  const double allowed =
      std::floor(static_cast<double>(neighbours.windows) * std::exp2(-(bits_per_key - 2.0)));
  // merged: the neighbours that share their first `width` bytes (at width 0, all of them).
  uint64_t merged = pairs;
  for (uint32_t width = 0; width < widest; ++width) {
    if (static_cast<double>(merged) <= allowed && width >= median_last) return width;
    merged -= neighbours.shared[width];  // those that differ in byte `width` are apart from
                                         // width + 1 on
  }
  return widest;
}

// The digit alphabets of a builder: which byte values each window byte takes.
struct AlphabetBuilder {
  // The digit alphabets, as written: bit c of bits[i] for each value c byte i takes. Made from
  // seen[] by Finish.
  uint64_t bits[kMaxWindowBytes][4] = {};
  // seen[i][c] != 0: byte i takes the value c. A byte store per byte of a window, with no load
  // (setting a bit loads the word, and a window that sets the same word waits for the store).
  uint8_t seen[kMaxWindowBytes][256] = {};

  // The bytes in `bytes_mask` (bit i: byte i) of window w: unrolled, every shift a constant. The
  // mask is the same window after window, so its tests predict well.
  void Add(Window w, uint32_t bytes_mask) {
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    for (uint32_t i = 0; i < 8; ++i) {
      if ((bytes_mask >> i) & 1) seen[i][static_cast<uint8_t>(high >> (56 - 8 * i))] = 1;
      if ((bytes_mask >> (8 + i)) & 1) seen[8 + i][static_cast<uint8_t>(low >> (56 - 8 * i))] = 1;
    }
  }
  // The same for a mask of a few bytes (random integers, once all but their first bytes are
  // full): a loop over its few bits costs less than the 16 tests.
  void AddFew(Window w, uint32_t bytes_mask) {
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    for (; bytes_mask != 0; bytes_mask &= bytes_mask - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctz(bytes_mask));
      seen[i][ByteOf(high, low, i)] = 1;
    }
  }
  void Finish() {
    for (uint32_t i = 0; i < kMaxWindowBytes; ++i) {
      for (uint32_t c = 0; c < 256; ++c) {
        if (seen[i][c] != 0) bits[i][c >> 6] |= uint64_t{1} << (c & 63);
      }
    }
  }
  // The values byte i takes, its digit's radix (after Finish).
  uint32_t Radix(uint32_t i) const {
    return PopCount(bits[i][0]) + PopCount(bits[i][1]) + PopCount(bits[i][2]) +
           PopCount(bits[i][3]);
  }
  // The bytes (bit i: byte i) that have not taken every value: the others need no more Adds
  // (random integers fill all but their first bytes within a few thousand keys).
  uint32_t NotFull() {
    Finish();
    uint32_t mask = 0;
    for (uint32_t i = 0; i < kMaxWindowBytes; ++i) {
      if (Radix(i) != 256) mask |= 1u << i;
    }
    return mask;
  }
};

// Each distinct window's hash, in the windows' order: the window (its first window_bytes bytes)
// becomes its position, its digits in mixed radix over the bytes' alphabets, and the position is
// hashed. The map keeps order and tells windows apart, and a range of keys spans fewer positions
// than windows: ten digits where a byte had 256 values. Position: uint64_t when every position
// fits (integers of up to 8 bytes, decimal ids of up to 19 digits), Window otherwise; the figures
// are the same either way, the 64-bit sums cheaper. for_each_window(f) calls f(window) for the
// sorted windows; the hashes go to *sorter. Returns the smallest and largest position.
template <typename Position, typename ForEachWindow>
void HashPositions(ForEachWindow&& for_each_window, uint32_t window_bytes,
                   const AlphabetBuilder& alphabets, const RangeFilterShape& shape,
                   HashSorter* sorter, Window* min_position, Window* max_position) {
  // digit[256 i + c]: byte value c's part of a position at window byte i, its rank times the
  // product of the radixes after i (every byte value at every byte: the position is the window).
  std::vector<Position> digit(size_t{256} * window_bytes);
  Position weight = 1;
  for (uint32_t i = window_bytes; i-- > 0;) {
    uint32_t below = 0;
    for (uint32_t c = 0; c < 256; ++c) {
      digit[256 * i + c] = weight * below;
      below += (alphabets.bits[i][c >> 6] >> (c & 63)) & 1;
    }
    if (i > 0) weight *= below;  // no overflow: the caller checked that positions fit
  }
  // Each position sums all its digits: a loop of the same length for every window predicts its
  // end, where one that starts at the first byte not shared with the window before (fewer adds)
  // mispredicted about once per window and was slower. Sorted positions meet each block in one
  // run, so a block is hashed once.
  const Position offset_mask = static_cast<Position>(LowBitsOf(shape.block_bits));
  Position position = 0, block = 0;
  uint64_t block_hash = 0;
  uint64_t out = 0;
  Window previous = 0;
  for_each_window([&](Window w) {
    // A window that shares its first window_bytes bytes with the one before it has its position.
    if (out > 0 && SharedBytes(previous, w) >= window_bytes) return;
    previous = w;
    const uint64_t high = static_cast<uint64_t>(w >> 64), low = static_cast<uint64_t>(w);
    position = 0;
    for (uint32_t j = 0; j < window_bytes; ++j) position += digit[256 * j + ByteOf(high, low, j)];
    if (out == 0 || position >> shape.block_bits != block) {
      block = position >> shape.block_bits;
      block_hash = BlockHash(block, shape.hash_range);
    }
    if (out++ == 0) *min_position = position;
    sorter->Add(block_hash + static_cast<uint64_t>(position & offset_mask));
  });
  *max_position = position;
}

// One pass over the sorted windows: their neighbours, for the width, and the values each byte
// takes, the digit alphabets (a byte's values do not depend on the width). The bytes a window
// shares with the one before it were counted with that one; equal windows (keys that differ only
// beyond 16 bytes past the prefix, or repeated out of order) count once. widest <= 16.
template <typename ForEachWindow>
void ScanWindows(const ForEachWindow& for_each_window, uint32_t widest, Neighbours* neighbours,
                 AlphabetBuilder* alphabets) {
  Window previous = 0;
  const uint32_t up_to_widest = (uint32_t{1} << widest) - 1;
  uint32_t growing = up_to_widest;  // alphabets not yet full
  bool few_growing = false;
  for_each_window([&](Window w) {
    uint32_t from = 0;
    if (neighbours->windows > 0) {
      from = SharedBytes(previous, w);
      if (from == kMaxWindowBytes) return;
      neighbours->Add(previous, w, from);
    }
    previous = w;
    if (++neighbours->windows % 4096 == 0) {
      growing = alphabets->NotFull() & up_to_widest;
      few_growing = PopCount(growing) <= 3;
    }
    // Every growing byte, those the window shares with the one before too: a loop of the same
    // length for every window predicts its end.
    if (few_growing) {
      alphabets->AddFew(w, growing);
    } else {
      alphabets->Add(w, growing);
    }
  });
  alphabets->Finish();
}

// Whether every position of a window's first window_bytes bytes fits 64 bits: the product of the
// radixes is at most 2^64 (checked in 128 bits, before it can overflow them).
bool PositionsFit64Bits(const AlphabetBuilder& alphabets, uint32_t window_bytes) {
  constexpr Window kPositions64 = Window{1} << 64;
  Window positions = 1;
  for (uint32_t i = 0; i < window_bytes && positions <= kPositions64; ++i) {
    positions *= alphabets.Radix(i);
  }
  return positions <= kPositions64;
}

// The filter's bytes (docs/format.md): the header, the prefix, the alphabets of the header's
// window_bytes bytes, the range deletions if the header has them, the check word over all those,
// then the body (null: no keys).
std::string Encode(const RangeHeader& header, std::string_view prefix,
                   const AlphabetBuilder& alphabets, const std::string& deletions_start,
                   const std::string& deletions_end, EliasFanoWriter* body) {
  std::string out;
  AppendHeader(header, &out);
  out.append(prefix.data(), prefix.size());
  uint8_t buf[8];
  for (uint32_t i = 0; i < header.window_bytes; ++i) {
    for (uint64_t word : alphabets.bits[i]) {
      StoreLE64(buf, word);
      out.append(reinterpret_cast<const char*>(buf), 8);
    }
  }
  if (header.has_deletions) {
    AppendString(deletions_start, &out);
    AppendString(deletions_end, &out);
  }
  SealCheckWord(&out);
  if (body != nullptr) body->AppendTo(&out);
  return out;
}

}  // namespace

namespace range_detail {

bool SortWithinBuckets(uint64_t* values, uint32_t count) {
  const uint64_t move_budget = 8 * uint64_t{count} + 64;
  uint64_t moves = 0;
  for (uint32_t i = 1; i < count; ++i) {
    const uint64_t v = values[i];
    uint32_t k = i;
    for (; k > 0 && values[k - 1] > v; --k) values[k] = values[k - 1];
    values[k] = v;
    moves += i - k;
    if (moves > move_budget) {
      std::sort(values, values + count);
      return true;
    }
  }
  return false;
}

}  // namespace range_detail

// ---- Builder ----------------------------------------------------------------------------------

RangeFilterBuilder::RangeFilterBuilder(double bits_per_key) : bits_per_key_(bits_per_key) {}

void RangeFilterBuilder::Reset() {
  keys_added_ = 0;
  reference_.clear();
  prefix_bytes_ = 0;
  longest_key_ = 0;
  windows_.Release();
  sorted_ = true;
  has_deletions_ = false;
  deletions_start_.clear();
  deletions_end_.clear();
}

// Every window so far is at offset prefix_bytes_ of a key that starts with reference_'s first
// prefix_bytes_ bytes; at the shorter offset, its window is reference_'s bytes in between, then
// its own first bytes.
void RangeFilterBuilder::ShortenPrefix(uint32_t new_prefix) {
  const uint32_t cut = prefix_bytes_ - new_prefix;
  if (cut >= kMaxWindowBytes) {
    const Window same = LoadWindow16(reference_, new_prefix);
    windows_.Transform([same](Window) { return same; });
  } else {
    Window head = 0;
    for (uint32_t i = 0; i < cut; ++i)
      head = (head << 8) | static_cast<uint8_t>(reference_[new_prefix + i]);
    head <<= 8 * (kMaxWindowBytes - cut);
    windows_.Transform([head, cut](Window w) { return head | (w >> (8 * cut)); });
  }
  prefix_bytes_ = new_prefix;
}

void RangeFilterBuilder::AddKey(std::string_view key) {
  if (keys_added_ == 0 && windows_.empty()) {
    reference_.assign(key.data(), std::min<size_t>(key.size(), kMaxPrefixBytes + kMaxWindowBytes));
    prefix_bytes_ = static_cast<uint32_t>(std::min<size_t>(key.size(), kMaxPrefixBytes));
  }
  ++keys_added_;
  const size_t common = CommonPrefix(key, reference_, prefix_bytes_);
  if (common < prefix_bytes_) ShortenPrefix(static_cast<uint32_t>(common));
  longest_key_ = std::max(longest_key_, key.size());
  const Window w = LoadWindow16(key, prefix_bytes_);
  if (!windows_.empty() && w < windows_.back()) sorted_ = false;
  windows_.Add(w);  // not a repeat of the last: a key's versions, one after another
}

void RangeFilterBuilder::AddRangeDeletion(std::string_view start, std::string_view end) {
  if (!has_deletions_ || start < deletions_start_) deletions_start_.assign(start);
  if (!has_deletions_ || end > deletions_end_) deletions_end_.assign(end);
  has_deletions_ = true;
}

Result<std::string> RangeFilterBuilder::Finish() {
  // Keys out of order (never from RocksDB): sorted into one array (the chunks are kept, for the
  // hashes).
  std::vector<Window> unsorted;
  if (!sorted_) {
    unsorted.reserve(windows_.size());
    windows_.ForEachChunk(
        [&](const Window* w, size_t count) { unsorted.insert(unsorted.end(), w, w + count); });
    std::sort(unsorted.begin(), unsorted.end());
  }
  const auto for_each_window = [&](auto&& f) {
    if (!sorted_) {
      for (const Window w : unsorted) f(w);
      return;
    }
    windows_.ForEachChunk([&](const Window* w, size_t count) {
      for (size_t i = 0; i < count; ++i) f(w[i]);
    });
  };
  const uint32_t widest = static_cast<uint32_t>(std::min<size_t>(
      kMaxWindowBytes, longest_key_ > prefix_bytes_ ? longest_key_ - prefix_bytes_ : 0));
  Neighbours neighbours;
  AlphabetBuilder alphabets;
  ScanWindows(for_each_window, widest, &neighbours, &alphabets);
  if (neighbours.windows > kMaxRangeFilterKeys) {
    const uint64_t distinct = neighbours.windows;
    Reset();
    return Err("a range filter holds at most " + std::to_string(kMaxRangeFilterKeys) +
               " distinct keys, got " + std::to_string(distinct));
  }
  const uint32_t window_bytes = WindowBytesFor(neighbours, widest, bits_per_key_);
  // The keys: windows distinct in their first window_bytes bytes.
  uint64_t n = neighbours.windows == 0 ? 0 : 1;
  for (uint32_t d = 0; d < window_bytes; ++d) n += neighbours.shared[d];

  RangeFilterShape shape;
  EliasFanoShape sequence;
  std::unique_ptr<HashSorter> sorter;
  Window min_window = 0, max_window = 0;
  if (n > 0) {
    shape = RangeShapeFor(n, bits_per_key_);
    sequence = EliasFanoShape{n, shape.Universe(), shape.low_bits};
    sorter.reset(new HashSorter(sequence, WordsOverChunks(&windows_)));
    if (PositionsFit64Bits(alphabets, window_bytes)) {
      HashPositions<uint64_t>(for_each_window, window_bytes, alphabets, shape, sorter.get(),
                              &min_window, &max_window);
    } else {
      HashPositions<Window>(for_each_window, window_bytes, alphabets, shape, sorter.get(),
                            &min_window, &max_window);
    }
  }
  std::vector<Window>().swap(unsorted);
  std::unique_ptr<EliasFanoWriter> body;
  if (n > 0) {
    body.reset(new EliasFanoWriter(sequence));
    sorter->SortInto(body.get());
    sorter.reset();
  }
  windows_.Release();

  RangeHeader header;
  header.has_deletions = has_deletions_;
  header.window_bytes = window_bytes;
  header.low_bits = shape.low_bits;
  header.block_bits = shape.block_bits;
  header.prefix_bytes = prefix_bytes_;
  header.keys = n;
  header.hash_range = n > 0 ? shape.hash_range : 0;
  header.min_window = min_window;
  header.max_window = max_window;
  std::string out = Encode(header, std::string_view(reference_.data(), prefix_bytes_), alphabets,
                           deletions_start_, deletions_end_, body.get());
  Reset();
  return out;
}

}  // namespace sstfilter
