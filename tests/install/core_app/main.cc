// An application of sstfilter's core component alone: BloomFilter, no RocksDB. Built by
// tests/install/core_install_test.sh against the installed package, with find_package and with
// pkg-config. Exits 0 only if every added key is found, the false positives stay near the target,
// and a serialised filter reads back the same.
#include <sstfilter/bloom_filter.h>

#include <cstdio>
#include <string>

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
  // 5 binomial sigmas above 1% of 10000 is 150.
  return missed == 0 && false_positives < 150 && round_trip && !bad.ok() ? 0 : 1;
}
