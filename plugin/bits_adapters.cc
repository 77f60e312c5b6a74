#include "plugin/bits_adapters.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <exception>
#include <new>

#include "core/filter_reader.h"
#include "core/hash.h"

namespace sstfilter {

using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

uint64_t HashOf(const Slice& key) { return KeyHash(key.data(), key.size()); }

// Copies `bytes` into a new buffer owned by *buf. Only throws std::bad_alloc.
Slice Hand(const std::string& bytes, std::unique_ptr<const char[]>* buf) {
  char* data = new char[bytes.size()];
  std::memcpy(data, bytes.data(), bytes.size());
  buf->reset(data);
  return Slice(data, bytes.size());
}

// The reader of one kind of filter: the core reader's queries with the key hashing in front.
template <typename CoreReader>
class TypedReader : public FilterBitsReader {
 public:
  explicit TypedReader(const CoreReader& reader) : reader_(reader) {}

  bool MayMatch(const Slice& key) override { return reader_.MayContain(HashOf(key)); }

  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    constexpr int kChunk = 64;  // hashes on the stack: no allocation per query
    uint64_t hashes[kChunk];
    for (int start = 0; start < num_keys; start += kChunk) {
      const int n = std::min(kChunk, num_keys - start);
      for (int i = 0; i < n; ++i) hashes[i] = HashOf(*keys[start + i]);
      reader_.MayContainBatch(hashes, static_cast<size_t>(n), may_match + start);
    }
  }

 private:
  const CoreReader reader_;
};

// Matches every key (bytes not understood) or none (a filter of zero keys).
class ConstantReader : public FilterBitsReader {
 public:
  explicit ConstantReader(bool answer) : answer_(answer) {}
  bool MayMatch(const Slice&) override { return answer_; }
  void MayMatch(int num_keys, Slice**, bool* may_match) override {
    std::fill(may_match, may_match + num_keys, answer_);
  }

 private:
  const bool answer_;
};

}  // namespace

SstFilterBitsBuilder::SstFilterBitsBuilder(const FilterSpec& spec, bool verify,
                                           ROCKSDB_NAMESPACE::Logger* log)
    : spec_(spec), verify_(verify), log_(log) {}

void SstFilterBitsBuilder::AddKey(const Slice& key) {
  try {
    hashes_.Add(HashOf(key));  // skips a repeat of the previous key
  } catch (const std::exception&) {
    failed_ = true;  // Finish writes a match-all filter: reads cost more, no key is lost
  }
}

Slice SstFilterBitsBuilder::Finish(std::unique_ptr<const char[]>* buf) {
  Status status;
  return Finish(buf, &status);
}

Slice SstFilterBitsBuilder::Finish(std::unique_ptr<const char[]>* buf, Status* status) {
  if (status != nullptr) *status = Status::OK();
  Slice result;
  try {
    Result<std::string> built =
        failed_ ? Err("out of memory while adding keys") : BuildFilter(spec_, hashes_);
    if (!built.ok()) {
      LogError(log_, "cannot build " + spec_.ToString() + " filter of " +
                         std::to_string(hashes_.size()) + " keys (" + built.error() +
                         "); writing a filter that matches every key");
      built = MatchAllFilter(hashes_.size());
    }
    result = Hand(built.value(), buf);
  } catch (const std::exception& e) {
    LogError(log_, std::string("out of memory building a filter: ") + e.what());
    static const std::string kMatchAll = MatchAllFilter(1);
    buf->reset();
    result = Slice(kMatchAll);  // static storage: valid for as long as RocksDB may use it
  }
  if (verify_) last_hashes_.Swap(hashes_);
  hashes_.Clear();
  failed_ = false;
  return result;
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
  return s;
}

size_t SstFilterBitsBuilder::ApproximateNumEntries(size_t bytes) {
  return static_cast<size_t>(MaxKeysForBytes(spec_, bytes));
}

void LogError(ROCKSDB_NAMESPACE::Logger* log, const std::string& message) {
  if (log != nullptr) {
    ROCKSDB_NAMESPACE::Log(ROCKSDB_NAMESPACE::InfoLogLevel::ERROR_LEVEL, log, "[sstfilter] %s",
                           message.c_str());
  }
}

// Allocated with nothrow: RocksDB treats a null reader as "may match" for every key.
FilterBitsReader* NewSstFilterBitsReader(const Slice& contents) {
  const FilterReader r =
      FilterReader::Open(reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
  switch (r.mode()) {
    case FilterReader::Mode::kBlockedBloom:
      return new (std::nothrow) TypedReader<BlockedBloomReader>(r.blocked_bloom());
    case FilterReader::Mode::kStandardBloom:
      return new (std::nothrow) TypedReader<StandardBloomReader>(r.standard_bloom());
    case FilterReader::Mode::kCuckoo:
      return new (std::nothrow) TypedReader<CuckooReader>(r.cuckoo());
    case FilterReader::Mode::kMatchNone:
      return new (std::nothrow) ConstantReader(false);
    case FilterReader::Mode::kMatchAll:
      break;
  }
  return new (std::nothrow) ConstantReader(true);
}

}  // namespace sstfilter
