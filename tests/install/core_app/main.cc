// SPDX-License-Identifier: Apache-2.0
// An application of sstfilter's core component alone: BloomFilter, ScalableBloomFilter and
// CuckooFilter, no RocksDB. Built by
// tests/install/core_install_test.sh against the installed package, with find_package and with
// pkg-config. Exits 0 only if every added key is found, the false positives stay near the target,
// a serialised filter reads back the same, a scalable filter grows and a cuckoo filter forgets.
#include <sstfilter/bloom_filter.h>
#include <sstfilter/cuckoo_filter.h>
#include <sstfilter/scalable_bloom_filter.h>
#include <sstfilter/scalable_cuckoo_filter.h>

#include <cstdio>
#include <string>
#include <utility>

int main() {
  constexpr int kKeys = 10000;
  auto created = sstfilter::BloomFilter::Create(kKeys, 0.01);
  if (!created.ok()) {
    std::fprintf(stderr, "core_app: %s\n", created.error().c_str());
    return 1;
  }
  sstfilter::BloomFilter seen = std::move(created).value();
  for (int i = 0; i < kKeys; ++i) seen.Add("event-" + std::to_string(i));
  int missed = 0, false_positives = 0;
  for (int i = 0; i < kKeys; ++i) missed += !seen.MayContain("event-" + std::to_string(i));
  for (int i = 0; i < kKeys; ++i) false_positives += seen.MayContain("other-" + std::to_string(i));
  const std::string bytes = seen.Serialize();
  auto loaded = sstfilter::BloomFilter::Deserialize(bytes.data(), bytes.size());
  const bool round_trip =
      loaded.ok() && loaded.value().MayContain("event-42") && loaded.value().Serialize() == bytes;
  const auto bad = sstfilter::BloomFilter::Deserialize("junk", 4);
  std::printf(
      "core_app: %d keys, %d missed, %d false positives in %d (target 1%%), %zu bytes, round trip "
      "%s, junk bytes: \"%s\"\n",
      kKeys, missed, false_positives, kKeys, bytes.size(), round_trip ? "ok" : "FAILED",
      bad.ok() ? "accepted!" : bad.error().c_str());

  auto scalable_made = sstfilter::ScalableBloomFilter::Create(100, 0.01);
  auto cuckoo_made = sstfilter::CuckooFilter::Create(1000, 13);
  if (!scalable_made.ok() || !cuckoo_made.ok()) return 1;
  sstfilter::ScalableBloomFilter scalable = std::move(scalable_made).value();
  sstfilter::CuckooFilter unread = std::move(cuckoo_made).value();
  for (int i = 0; i < kKeys; ++i) scalable.Add("event-" + std::to_string(i));
  auto growing_made = sstfilter::ScalableCuckooFilter::Create(10, 0.01);
  if (!growing_made.ok()) return 1;
  sstfilter::ScalableCuckooFilter growing = std::move(growing_made).value();
  for (int i = 0; i < 1000; ++i) growing.Add("item-" + std::to_string(i));
  const bool forgets = unread.Add("item") && unread.Add("item") && unread.Count("item") == 2 &&
                       unread.Erase("item") && unread.Erase("item") && !unread.MayContain("item") &&
                       growing.num_filters() > 1 &&
                       growing.Erase("item-7") == sstfilter::EraseOutcome::kErased;
  std::printf("core_app: a scalable filter of %zu filters for %llu keys; a cuckoo filter that %s\n",
              scalable.num_filters(), static_cast<unsigned long long>(scalable.size()),
              forgets ? "counts and forgets" : "FAILED to count and forget");
  // 5 binomial sigmas above 1% of 10000 is 150.
  return missed == 0 && false_positives < 150 && round_trip && !bad.ok() &&
                 scalable.num_filters() > 1 && forgets
             ? 0
             : 1;
}
