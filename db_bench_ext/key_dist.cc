// SPDX-License-Identifier: Apache-2.0
#include "db_bench_ext/key_dist.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

#include "core/random.h"

namespace db_bench_ext {
namespace {

// sum_{i=1}^{n} 1 / i^theta: exact to 10M terms (about 50 ms), then the integral of x^-theta from
// there on, whose error is below 1e-8 of the sum.
double Zeta(uint64_t n, double theta) {
  constexpr uint64_t kExactTerms = 10'000'000;
  double sum = 0;
  const uint64_t exact = std::min(n, kExactTerms);
  for (uint64_t i = 1; i <= exact; ++i) sum += std::pow(static_cast<double>(i), -theta);
  if (n > exact) {
    const double a = static_cast<double>(exact) + 0.5, b = static_cast<double>(n) + 0.5;
    sum += (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  }
  return sum;
}

// A double uniform in [0, 1) from the next SplitMix64 value.
double UnitDraw(uint64_t* rng) { return sstfilter::UnitInterval(sstfilter::SplitMix64(rng)); }

}  // namespace

std::vector<uint64_t> RandomOrder(uint64_t num, uint64_t seed) {
  std::vector<uint64_t> order(num);
  for (uint64_t i = 0; i < num; ++i) order[i] = i;
  // std::shuffle with std::mt19937_64, not SplitMix64: the order every fillrandom so far wrote
  // (the same on any one standard library).
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  return order;
}

std::vector<uint64_t> SequentialOrder(uint64_t num, double late_fraction, uint64_t late_keys,
                                      uint64_t seed) {
  std::vector<uint64_t> order(num);
  for (uint64_t i = 0; i < num; ++i) order[i] = i;
  if (late_fraction <= 0) return order;
  // SplitMix64 and explicit draws (std::'s distributions differ between standard libraries).
  uint64_t rng = seed;
  std::vector<std::pair<uint64_t, uint64_t>> due(num);  // (place, key)
  for (uint64_t i = 0; i < num; ++i) {
    const uint64_t delay = UnitDraw(&rng) < late_fraction
                               ? 1 + sstfilter::FastRange64(sstfilter::SplitMix64(&rng), late_keys)
                               : 0;
    due[i] = {i + delay, i};
  }
  std::sort(due.begin(), due.end());
  for (uint64_t i = 0; i < num; ++i) order[i] = due[i].second;
  return order;
}

KeyDist::KeyDist(uint64_t n, double theta, bool scrambled)
    : n_(n), theta_(theta), scrambled_(scrambled) {
  if (scrambled_ && n_ > 1) {
    multiplier_ = static_cast<uint64_t>(0.6180339887498949 * static_cast<double>(n_));
    while (std::gcd(multiplier_, n_) != 1) ++multiplier_;
    offset_ = n_ / 3;
  }
  if (theta_ <= 0) return;
  zeta_n_ = Zeta(n_, theta_);
  const double zeta_2 = Zeta(2, theta_);
  alpha_ = 1 / (1 - theta_);
  eta_ = (1 - std::pow(2.0 / static_cast<double>(n_), 1 - theta_)) / (1 - zeta_2 / zeta_n_);
  half_pow_theta_ = std::pow(0.5, theta_);
}

uint64_t KeyDist::Scramble(uint64_t i) const {
  if (!scrambled_ || n_ <= 1) return i;
  const unsigned __int128 image = static_cast<unsigned __int128>(multiplier_) * i + offset_;
  return static_cast<uint64_t>(image % n_);
}

uint64_t KeyDist::Next(uint64_t* rng) const {
  // `%`, not a multiply-shift range reduction: it keeps the uniform lookups those of earlier runs.
  if (theta_ <= 0) return Scramble(sstfilter::SplitMix64(rng) % n_);
  const double u = UnitDraw(rng);
  const double uz = u * zeta_n_;
  uint64_t rank;
  if (uz < 1) {
    rank = 0;
  } else if (uz < 1 + half_pow_theta_) {
    rank = 1;
  } else {
    rank = static_cast<uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_));
  }
  return Scramble(n_ - 1 - std::min(rank, n_ - 1));
}

}  // namespace db_bench_ext
