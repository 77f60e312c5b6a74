// SPDX-License-Identifier: Apache-2.0
#include "plugin/bits_adapters.h"

#include <rocksdb/filter_policy.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <exception>
#include <utility>

#include "core/filter_reader.h"
#include "core/format.h"
#include "core/hash.h"
#include "plugin/probe_counts.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

// Copies `bytes` into a new buffer owned by *buf. Only throws std::bad_alloc.
Slice Hand(const std::string& bytes, std::unique_ptr<const char[]>* buf) {
  char* data = new char[bytes.size()];
  std::memcpy(data, bytes.data(), bytes.size());
  buf->reset(data);
  return Slice(data, bytes.size());
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The kind a built filter's trailer names (FilterKind{0} if it has none).
FilterKind TrailerKindOf(const std::string& bytes) {
  Trailer t;
  return DecodeTrailer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t)
             ? t.kind
             : FilterKind{0};
}

// What a builder hands RocksDB when even the match-all filter cannot be allocated: built when the
// library loads, so the out-of-memory path allocates nothing.
const std::string kMatchAllFilter = MatchAllFilter(1);

// The smallest hash of a filter's keys: what a mixed level's choice is drawn from. Computed only
// for such a level (a pass over 8 bytes per key at Finish).
uint64_t SmallestHash(const HashList& hashes) {
  uint64_t smallest = UINT64_MAX;
  hashes.ForEachChunk([&](const uint64_t* h, size_t n) {
    for (size_t i = 0; i < n; ++i) smallest = std::min(smallest, h[i]);
  });
  return smallest;
}

#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
// The bytes Finish writes for num_keys keys with `choice`: its size, or the match-all filter's
// when it is no filter or cannot hold that many keys.
double BytesOrMatchAll(const FilterChoice& choice, uint64_t num_keys) {
  if (choice.has_filter) {
    const Result<uint64_t> bytes = FilterBytes(choice.spec, num_keys);
    if (bytes.ok()) return static_cast<double>(bytes.value());
  }
  return static_cast<double>(kMatchAllFilter.size());
}
#endif

}  // namespace

SstFilterBitsBuilder::SstFilterBitsBuilder(const FilterSpec& spec, bool verify,
                                           ROCKSDB_NAMESPACE::Logger* log)
    : spec_(spec), track_key_range_(false), verify_(verify), log_(log) {}

SstFilterBitsBuilder::SstFilterBitsBuilder(std::unique_ptr<FilterChooser> chooser, bool verify,
                                           ROCKSDB_NAMESPACE::Logger* log)
    : chooser_(std::move(chooser)),
      track_key_range_(chooser_->WantsKeyRange()),
      verify_(verify),
      log_(log) {}

Result<LevelFilter> SstFilterBitsBuilder::FilterFor(uint64_t num_keys, bool finishing) const {
  if (chooser_) return chooser_->ForKeys(num_keys, file_keys_, finishing);
  LevelFilter fixed;
  fixed.base.has_filter = true;
  fixed.base.spec = spec_;
  return fixed;
}

void SstFilterBitsBuilder::AddToKeyRange(const Slice& key) {
  try {
    file_keys_.Add(std::string_view(key.data(), key.size()));
  } catch (const std::exception&) {
    file_keys_.SetUnbounded();  // a range not known overlaps everything: no guess of an append
    key_range_lost_ = true;
  }
}

void SstFilterBitsBuilder::AddKey(const Slice& key) {
  if (track_key_range_) AddToKeyRange(key);
  const uint64_t h = KeyHashOf(key);
  const bool repeat = have_last_key_ && h == last_key_;
  have_last_key_ = true;
  last_key_ = h;
  if (repeat) return;
  try {
    Record(h);  // also skips a repeat of the previous entry (an alternate)
  } catch (const std::exception&) {
    failed_ = true;  // Finish writes a match-all filter: reads cost more, no key is lost
  }
}

void SstFilterBitsBuilder::Record(uint64_t h) {
  const size_t before = hashes_.size();
  hashes_.Add(h);
  if (hashes_.size() == before) return;
  if (verify_) added_sum_ += h;
  // A key that starts a placeholder's worth of hashes charges all of them. A refusal is not an
  // error: the keys are already held, and RocksDB's builders go on the same way.
  constexpr uint64_t kHashesPerPlaceholder = ConstructionCharge::kPlaceholderBytes / 8;
  static_assert((kHashesPerPlaceholder & (kHashesPerPlaceholder - 1)) == 0, "a power of two");
  if (charge_ != nullptr && (before & (kHashesPerPlaceholder - 1)) == 0) {
    charge_->Charge(ConstructionCharge::Account::kHashes, 8 * (before + kHashesPerPlaceholder));
  }
}

FilterSpec SstFilterBitsBuilder::SpecWithinCharge(const FilterSpec& chosen,
                                                  const std::string& where) {
  if (charge_ == nullptr) return chosen;
  const uint64_t n = hashes_.size();
  const uint64_t scratch = BuildScratchBytes(chosen, n);
  const Result<uint64_t> output = FilterBytes(chosen, n);
  const uint64_t output_bytes = output.ok() ? output.value() : 0;
  using Account = ConstructionCharge::Account;
  if (charge_->Charge(Account::kBuild, scratch + output_bytes) || scratch == 0 || n == 0) {
    return chosen;  // charged, or nothing cheaper to build
  }
  // As RocksDB's Ribbon builder does when the cache refuses its banding memory: a blocked Bloom
  // filter, which is set in place in its output, of about the chosen filter's size.
  charge_->Charge(Account::kBuild, output_bytes);
  const Result<BlockedBloomParams> bloom = BlockedBloom::ForBodyBytes(
      output_bytes > kTrailerBytes ? output_bytes - kTrailerBytes : 0, n);
  if (!bloom.ok()) return chosen;
  build_refused_ = true;
  const FilterSpec fallback(bloom.value());
  Warn("the block cache refused the " + std::to_string(scratch + output_bytes) +
       " bytes of building a " + chosen.ToString() + " filter of " + where +
       " (cache_usage_options charges kFilterConstruction); built a " + fallback.ToString() +
       " filter instead");
  return fallback;
}

#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
void SstFilterBitsBuilder::AddKeyAndAlt(const Slice& key, const Slice& alt) {
  if (track_key_range_) AddToKeyRange(key);
  const uint64_t k = KeyHashOf(key), a = KeyHashOf(alt);
  const bool key_is_new =
      !(have_last_key_ && k == last_key_) && !(have_last_alt_ && k == last_alt_);
  const bool alt_is_new =
      a != k && !(have_last_alt_ && a == last_alt_) && !(have_last_key_ && a == last_key_);
  have_last_key_ = have_last_alt_ = true;
  last_key_ = k;
  last_alt_ = a;
  try {
    if (key_is_new) Record(k);
    if (alt_is_new) Record(a);
  } catch (const std::exception&) {
    failed_ = true;
  }
}
#endif

Slice SstFilterBitsBuilder::Finish(std::unique_ptr<const char[]>* buf) {
  Status status;
  return Finish(buf, &status);
}

Slice SstFilterBitsBuilder::Finish(std::unique_ptr<const char[]>* buf, Status* status) {
  if (status != nullptr) *status = Status::OK();
  Slice result;
  const bool corrupted = HashesCorrupted();
  if (corrupted && status != nullptr) {
    *status = Status::Corruption(
        "sstfilter: a key hash changed in memory between AddKey and Finish; the filter would "
        "miss keys");
  }
  try {
    const Result<LevelFilter> level = FilterFor(hashes_.size(), /*finishing=*/true);
    const FilterChoice* choice = nullptr;
    Result<std::string> built = Err(corrupted ? "a key hash changed in memory since it was added"
                                              : "out of memory while adding keys");
    bool counted = false;  // a filter whose probes are counted (plugin/probe_counts.h)
    const std::string where =
        std::to_string(hashes_.size()) + " keys in a file of " +
        (level_ < 0 ? std::string("unknown level") : "level " + std::to_string(level_));
    if (!level.ok()) {
      built = Err(level.error());
    } else {
      choice = &ChoiceForKeys(level.value(),
                              level.value().upper_fraction > 0 ? SmallestHash(hashes_) : 0);
      if (!choice->has_filter) {
        built = MatchAllFilter(hashes_.size());  // chosen: this set is best served by no filter
      } else if (!failed_ && !corrupted) {
        const FilterSpec sized =
            rounding_ != nullptr ? rounding_->Round(choice->spec, hashes_.size()) : choice->spec;
        built = BuildFilter(SpecWithinCharge(sized, where), hashes_);
        counted = count_probes_ && built.ok();
      }
    }
    if (!built.ok()) {
      Warn("cannot build " + (choice != nullptr ? choice->spec.ToString() : std::string("a")) +
           " filter of " + where + " (" + built.error() +
           "); writing a filter that matches every key");
      built = MatchAllFilter(hashes_.size());
    } else if (choice != nullptr && choice->has_filter &&
               TrailerKindOf(built.value()) != choice->spec.kind() && !build_refused_) {
      Warn(choice->spec.ToString() + " filter of " + where +
           ": no seed solved its build; wrote a blocked Bloom filter instead");
    }
    if (key_range_lost_) {
      key_range_lost_ = false;
      WarnNoThrow("out of memory tracking a file's key range: it counts as overlapping every file");
    }
    result = Hand(built.value(), buf);
    NoteFinished(result, counted);
  } catch (const std::exception& e) {
    // Nothing here may allocate: RocksDB's Log formats into its own buffer.
    if (log_ != nullptr) {
      ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::ERROR_LEVEL, log_,
                             "[sstfilter] cannot build a filter (%s); writing a filter that "
                             "matches every key",
                             e.what());
    }
    buf->reset();
    result = Slice(kMatchAllFilter);  // static storage: valid for as long as RocksDB may use it
  }
  StartNextFilter();
  return result;
}

bool SstFilterBitsBuilder::HashesCorrupted() const {
  if (!verify_ || failed_) return false;
  uint64_t held_sum = 0;
  hashes_.ForEachChunk([&](const uint64_t* h, size_t n) {
    for (size_t i = 0; i < n; ++i) held_sum += h[i];
  });
  return held_sum != added_sum_;
}

void SstFilterBitsBuilder::NoteFinished(const Slice& filter, bool counted) {
  if (chooser_) {
    try {
      chooser_->Finished(hashes_.size(), file_keys_, filter.size());
    } catch (const std::exception&) {
      WarnNoThrow("out of memory: the policy's record of the filters it built misses one");
    }
  }
  if (charge_ != nullptr) {
    using Account = ConstructionCharge::Account;
    charge_->Charge(Account::kFilters, charge_->Bytes(Account::kFilters) + filter.size());
  }
  if (counted) {
    NoteBuiltFilter({ProbeRegistry::Global().Register(FilterBlockId(filter.data(), filter.size())),
                     filter.size()});
  }
  if (!reported_oversized_ && oversized_ != nullptr) {
    reported_oversized_ = oversized_->Report(log_, filter.size(), cache_shards_);
  }
}

void SstFilterBitsBuilder::StartNextFilter() {
  if (verify_) last_hashes_.Swap(hashes_);
  hashes_.Clear();
  build_refused_ = false;
  if (charge_ != nullptr) {
    charge_->Charge(ConstructionCharge::Account::kBuild, 0);
    // The hashes verification keeps stay charged until MaybePostVerify lets them go.
    if (!verify_) charge_->Charge(ConstructionCharge::Account::kHashes, 0);
  }
  added_sum_ = 0;
  failed_ = false;
  have_last_key_ = false;
#if SSTFILTER_ROCKSDB_HAS_ADD_KEY_AND_ALT
  have_last_alt_ = false;
#endif
}

void SstFilterBitsBuilder::WarnNoThrow(const char* message) const noexcept {
  try {
    Warn(message);
  } catch (const std::exception&) {  // no memory for the line either
  }
}

void SstFilterBitsBuilder::Warn(const std::string& message) const {
  if (warnings_ != nullptr) {
    warnings_->Log(log_, message, SteadyNowNs());
  } else {
    LogAt(log_, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL, message);
  }
}

Status SstFilterBitsBuilder::MaybePostVerify(const Slice& filter) {
  if (!verify_) return Status::OK();
  const FilterReader reader =
      FilterReader::Open(reinterpret_cast<const uint8_t*>(filter.data()), filter.size());
  Status s;
  if (!reader.valid()) {
    s = Status::Corruption("sstfilter: the filter just built does not parse");
  } else {
    bool all_found = true;
    last_hashes_.ForEachChunk([&](const uint64_t* hashes, size_t n) {
      for (size_t i = 0; i < n && all_found; ++i) all_found = reader.MayContain(hashes[i]);
    });
    if (!all_found) {
      s = Status::Corruption("sstfilter: the filter just built misses a key it was given");
    }
  }
  last_hashes_.Clear();
  if (charge_ != nullptr) charge_->Charge(ConstructionCharge::Account::kHashes, 0);
  return s;
}

size_t SstFilterBitsBuilder::ApproximateNumEntries(size_t bytes) {
  try {
    if (!chooser_) return static_cast<size_t>(MaxKeysForBytes(spec_, bytes));
    // The choice depends on the key count: from the nominal choice's count, the count that the
    // choice for it fits, until the two agree (they do within a few rounds; if not, the smaller).
    uint64_t keys = 0, smallest = UINT64_MAX;
    for (int round = 0; round < 8; ++round) {
      const Result<LevelFilter> level = FilterFor(keys, /*finishing=*/false);
      if (!level.ok() || !level.value().Largest().has_filter) return 0;
      const uint64_t fits = MaxKeysForBytes(level.value().Largest().spec, bytes);
      if (fits == keys || fits == 0) return static_cast<size_t>(fits);
      if (round > 0) smallest = std::min(smallest, fits);
      keys = fits;
    }
    return static_cast<size_t>(std::min(smallest, keys));
  } catch (const std::exception&) {
  }
  return 0;  // RocksDB then sizes partitions by its own rule
}

#if SSTFILTER_ROCKSDB_HAS_CALCULATE_SPACE
size_t SstFilterBitsBuilder::CalculateSpace(size_t num_entries) {
  try {
    // RocksDB calls this once per data block, each time with a new count. A choice that depends
    // on the count is taken for the power of two below it, so that a file asks for at most one
    // choice per doubling (the policy caches them): the size of that filter for num_entries keys,
    // an estimate of what Finish writes.
    const uint64_t choice_keys = chooser_ && num_entries > 0
                                     ? uint64_t{1} << (63 - __builtin_clzll(num_entries))
                                     : num_entries;
    const Result<LevelFilter> level = FilterFor(choice_keys, /*finishing=*/false);
    if (level.ok()) {
      // A level that mixes two filters: the expected size over its filters.
      const LevelFilter& l = level.value();
      const double base = BytesOrMatchAll(l.base, num_entries);
      const double upper = l.upper_fraction > 0 ? BytesOrMatchAll(l.upper, num_entries) : base;
      return static_cast<size_t>(std::llround(base + l.upper_fraction * (upper - base)));
    }
  } catch (const std::exception&) {  // out of memory for an error message
  }
  return kMatchAllFilter.size();
}

double SstFilterBitsBuilder::EstimatedFpRate(size_t num_entries, size_t bytes) {
  try {
    const Result<LevelFilter> level = FilterFor(num_entries, /*finishing=*/false);
    if (level.ok()) {
      // On a level that mixes two filters, the one whose size is nearer `bytes`.
      const LevelFilter& l = level.value();
      auto off = [&](const FilterChoice& c) {
        return std::abs(BytesOrMatchAll(c, num_entries) - static_cast<double>(bytes));
      };
      const FilterChoice& choice =
          l.upper_fraction > 0 && off(l.upper) < off(l.base) ? l.upper : l.base;
      if (choice.has_filter) {
        const Result<double> rate = sstfilter::EstimatedFpRate(choice.spec, num_entries, bytes);
        if (rate.ok()) return rate.value();
      }
    }
  } catch (const std::exception&) {
  }
  return 1.0;  // a rate it cannot say: assume every key may match
}
#endif

bool RateLimitedWarning::Log(ROCKSDB_NAMESPACE::Logger* log, const std::string& message,
                             int64_t now_ns) {
  if (log == nullptr) return false;  // a table without a logger takes no other table's line
  int64_t next = next_ns_.load(std::memory_order_relaxed);
  if (now_ns < next ||
      !next_ns_.compare_exchange_strong(next, now_ns + interval_ns_, std::memory_order_relaxed)) {
    left_out_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const uint64_t left_out = left_out_.exchange(0, std::memory_order_relaxed);
  LogAt(log, ROCKSDB_NAMESPACE::InfoLogLevel::WARN_LEVEL,
        left_out == 0 ? message
                      : message + " (and " + std::to_string(left_out) +
                            " such lines left out since the last one)");
  return true;
}

void LogAt(ROCKSDB_NAMESPACE::Logger* log, ROCKSDB_NAMESPACE::InfoLogLevel level,
           const std::string& message) {
  if (log != nullptr) ROCKSDB_NAMESPACE::Log(level, log, "[sstfilter] %s", message.c_str());
}

void LogError(ROCKSDB_NAMESPACE::Logger* log, const std::string& message) {
  LogAt(log, ROCKSDB_NAMESPACE::InfoLogLevel::ERROR_LEVEL, message);
}

}  // namespace sstfilter
