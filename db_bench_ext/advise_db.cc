// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/advise_db.h"

#include <rocksdb/metadata.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include "compat/rocksdb_api.h"
#include "core/random.h"
#include "db_bench_ext/measure.h"
#include "sstfilter/sstfilter.h"

namespace db_bench_ext {
namespace {

// A line of --absent_keys_hex: two hexadecimal digits per byte; false if it is not that.
bool FromHex(const std::string& line, std::string* key) {
  auto digit = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  if (line.size() % 2 != 0) return false;
  key->clear();
  for (size_t i = 0; i < line.size(); i += 2) {
    const int high = digit(line[i]), low = digit(line[i + 1]);
    if (high < 0 || low < 0) return false;
    key->push_back(static_cast<char>(high * 16 + low));
  }
  return true;
}

}  // namespace

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::Comparator;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

void OpenReadOnly(const std::string& path, Database* d) {
  d->path = path;
  // The error_code form: the throwing one ends the program on a directory it cannot read, a
  // symbolic link loop or a path too long, where a one-line error is due.
  std::error_code ec;
  const bool has_current = std::filesystem::exists(path + "/CURRENT", ec);
  if (ec) Fail("--db=" + path + ": cannot read it: " + ec.message());
  if (!has_current) Fail("--db=" + path + " is not a RocksDB database (it has no CURRENT file)");
  DBOptions db_options;
  std::vector<ColumnFamilyDescriptor> cfs;
  Status s = ROCKSDB_NAMESPACE::LoadLatestOptions(sstfilter::StrictConfigOptions(), path,
                                                  &db_options, &cfs);
  if (!s.ok()) Fail("--db=" + path + ": cannot load its OPTIONS file: " + s.ToString());
  db_options.info_log = d->logger;
  s = sstfilter::compat::OpenDbForReadOnly(db_options, path, cfs, &d->handles, &d->db);
  if (!s.ok()) Fail("--db=" + path + ": cannot open it read-only: " + s.ToString());
  for (const ColumnFamilyDescriptor& cf : cfs) {
    if (cf.name == ROCKSDB_NAMESPACE::kDefaultColumnFamilyName)
      d->options = Options(db_options, cf.options);
  }
  const auto* table = d->options.table_factory == nullptr
                          ? nullptr
                          : d->options.table_factory->GetOptions<BlockBasedTableOptions>();
  if (table == nullptr) Fail("--db=" + path + ": its tables are not block-based: no filters");
  d->table_options = *table;
  if (d->options.prefix_extractor != nullptr && !d->table_options.whole_key_filtering) {
    Fail("--db=" + path + ": its filters hold key prefixes only, which the advisor does not model");
  }
}

std::vector<File> LiveFiles(DB* db) {
  std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  std::vector<File> files;
  for (const auto& f : live) {
    if (f.column_family_name != ROCKSDB_NAMESPACE::kDefaultColumnFamilyName) continue;
    files.push_back({f.directory + "/" + f.relative_filename, f.level, f.smallestkey, f.largestkey,
                     f.num_entries});
  }
  return files;
}

bool IsAbsent(DB* db, const std::string& key) {
  PinnableSlice value;
  const Status s = db->Get(ReadOptions(), db->DefaultColumnFamily(), key, &value);
  if (!s.ok() && !s.IsNotFound()) Fail("a lookup in the database failed: " + s.ToString());
  return s.IsNotFound();
}

std::vector<std::string> ReadAbsentKeys(DB* db, const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    Fail("--absent_keys=" + path + " is a directory, not a file of keys");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("--absent_keys=" + path + ": cannot open it");
  std::vector<std::string> keys;
  std::string line;
  for (uint64_t number = 1; std::getline(in, line); ++number) {
    if (FLAGS_absent_keys_hex) {
      std::string key;
      if (!FromHex(line, &key)) {
        Fail("--absent_keys=" + path + ": line " + std::to_string(number) +
             " is not hexadecimal (--absent_keys_hex: two digits per byte)");
      }
      line = std::move(key);
    }
    if (!IsAbsent(db, line)) {
      Fail("--absent_keys=" + path + ": line " + std::to_string(number) +
           " holds a key that the database has");
    }
    keys.push_back(line);
  }
  if (keys.empty()) Fail("--absent_keys=" + path + " holds no key");
  return keys;
}

std::vector<std::string> MakeAbsentKeys(const Database& d, const std::vector<File>& files,
                                        uint64_t entries, uint64_t count, uint64_t seed,
                                        uint64_t* total_keys) {
  std::vector<std::string> sample;
  uint64_t rng = seed, seen = 0;
  Progress progress(entries);
  for (const File& f : files) {
    ForEachKey(f, d.options, [&](const Slice& key) {
      ++seen;
      if (sample.size() < count) {
        sample.push_back(key.ToString());
      } else {
        const uint64_t slot = sstfilter::SplitMix64(&rng) % seen;
        if (slot < count) sample[slot] = key.ToString();
      }
    });
    progress.Add(f.entries);
  }
  *total_keys = seen;
  std::vector<std::string> absent;
  for (const std::string& key : sample) {
    if (key.empty()) continue;
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::string k = key;
      const uint64_t r = sstfilter::SplitMix64(&rng);
      k.back() = static_cast<char>(r);
      if (attempt >= 8 && k.size() >= 2) k[k.size() - 2] = static_cast<char>(r >> 8);
      if (k != key && IsAbsent(d.db.get(), k)) {
        absent.push_back(std::move(k));
        break;
      }
    }
  }
  if (absent.empty()) Fail("--db=" + d.path + ": could not make absent keys from its keys");
  return absent;
}

std::vector<std::vector<uint32_t>> KeysConsultingEachFile(const std::vector<File>& files,
                                                          const std::vector<std::string>& keys,
                                                          const Comparator* cmp) {
  std::vector<std::vector<uint32_t>> probes(files.size());
  std::map<int, std::vector<size_t>> by_level;  // file indexes, sorted by smallest key
  for (size_t i = 0; i < files.size(); ++i) by_level[files[i].level].push_back(i);
  for (auto& [level, indexes] : by_level) {
    std::sort(indexes.begin(), indexes.end(), [&](size_t a, size_t b) {
      return cmp->Compare(files[a].smallest, files[b].smallest) < 0;
    });
  }
  auto holds = [&](const File& f, const std::string& key) {
    return cmp->Compare(f.smallest, key) <= 0 && cmp->Compare(key, f.largest) <= 0;
  };
  for (uint32_t k = 0; k < keys.size(); ++k) {
    for (const auto& [level, indexes] : by_level) {
      if (level == 0) {
        for (const size_t i : indexes) {
          if (holds(files[i], keys[k])) probes[i].push_back(k);
        }
        continue;
      }
      // The last file whose smallest key is at most the key.
      auto it = std::upper_bound(indexes.begin(), indexes.end(), keys[k],
                                 [&](const std::string& key, size_t i) {
                                   return cmp->Compare(key, files[i].smallest) < 0;
                                 });
      if (it == indexes.begin()) continue;
      const size_t i = *(it - 1);
      if (holds(files[i], keys[k])) probes[i].push_back(k);
    }
  }
  return probes;
}

}  // namespace db_bench_ext
