#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""RedisBloom's cuckoo filter as its documentation describes it, simulated: the memory and the
false-positive rate it would have for n items, to set beside this module's filter.

RedisBloom needs Redis 7.4 and does not load into Debian bookworm's Redis 7.0, so it cannot be
measured here. Its CF.RESERVE page and its cuckoo-filter page describe the design, and this model
follows them, written from that description alone:

  - a sub-filter of `capacity` slots, its buckets rounded up to a power of two, BUCKETSIZE
    (default 2) slots of 8-bit fingerprints (1..255; the documented rate is 2 b / 255);
  - an item's two buckets i1 and i2 = i1 xor hash(fingerprint) (partial-key cuckoo hashing, the
    paper the page cites);
  - an insert takes a free slot of either bucket in any sub-filter, oldest first ("unused capacity
    in prior sub-filters is automatically used when possible"), else evicts fingerprints at random
    along a walk of at most MAXITERATIONS (default 20) moves in the newest sub-filter; when the
    walk fails the filter "declares itself full" and adds a sub-filter as large as the previous
    one (EXPANSION's default, 1, the only expansion modelled), which takes the fingerprint left
    without a place;
  - a lookup asks every sub-filter.

RedisBloom's page gives fill rates (55% with buckets of 1 slot, 80% with 3, 95% with 4), and the
cuckoo filter paper gives the fills of walks of 500 moves (50%, 84%, 95% with buckets of 1, 2, 4):
--check sets the model's beside them.

  /usr/bin/python3 scripts/redisbloom_cuckoo_model.py --items N [--capacity C] [--bucket-size B]
      [--max-iterations M] [--absent A] [--seed S]
  /usr/bin/python3 scripts/redisbloom_cuckoo_model.py --check
"""
import argparse
import random
import sys

MASK64 = (1 << 64) - 1


def mix64(x):
    """A 64-bit finalizer (splitmix64's): the model's hash of an integer item."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


class SubFilter:
    def __init__(self, num_buckets, bucket_size):
        self.mask = num_buckets - 1
        self.b = bucket_size
        self.slots = [0] * (num_buckets * bucket_size)

    def alt(self, bucket, fp):
        return (bucket ^ mix64(fp)) & self.mask

    def try_put(self, bucket, fp):
        at = (bucket & self.mask) * self.b
        for s in range(at, at + self.b):
            if self.slots[s] == 0:
                self.slots[s] = fp
                return True
        return False

    def holds(self, bucket, fp):
        at = (bucket & self.mask) * self.b
        return fp in self.slots[at:at + self.b]


class Model:
    def __init__(self, capacity, bucket_size, max_iterations, seed):
        self.b, self.max_iterations = bucket_size, max_iterations
        self.filters = [SubFilter(self.buckets_for(capacity), bucket_size)]
        self.rng = random.Random(seed)
        self.items = 0
        self.first_full_at = None  # items held when the first sub-filter declared itself full

    def buckets_for(self, slots):
        """Buckets of a sub-filter of `slots` slots: a power of two, so that xor stays inside."""
        buckets = 1
        while buckets * self.b < slots:
            buckets *= 2
        return buckets

    @staticmethod
    def hashes(item):
        h = mix64(item)
        return h & 0xFFFFFFFF, (h >> 32) % 255 + 1  # bucket hash, fingerprint 1..255

    def insert(self, item):
        i1, fp = self.hashes(item)
        self.items += 1
        for f in self.filters:
            if f.try_put(i1, fp) or f.try_put(f.alt(i1 & f.mask, fp), fp):
                return
        f = self.filters[-1]
        bucket = self.rng.choice((i1 & f.mask, f.alt(i1 & f.mask, fp)))
        for _ in range(self.max_iterations):
            s = bucket * f.b + self.rng.randrange(f.b)
            fp, f.slots[s] = f.slots[s], fp
            bucket = f.alt(bucket, fp)
            if f.try_put(bucket, fp):
                return
        if self.first_full_at is None:
            self.first_full_at = self.items - 1
        grown = SubFilter(f.mask + 1, self.b)
        self.filters.append(grown)
        # The fingerprint left without a place, in the new sub-filter at the bucket it was bound
        # for: one of its two buckets there too, the new sub-filter being as large as the last.
        grown.try_put(bucket, fp)

    def contains(self, item):
        i1, fp = self.hashes(item)
        return any(f.holds(i1, fp) or f.holds(f.alt(i1 & f.mask, fp), fp) for f in self.filters)

    def bits(self):
        return 8 * sum(len(f.slots) for f in self.filters)


def run(items, capacity, bucket_size, max_iterations, absent, seed):
    """Returns (bits per item, measured false-positive rate, sub-filters, fill of the first when it
    declared itself full, or None)."""
    model = Model(capacity, bucket_size, max_iterations, seed)
    rng = random.Random(seed + 1)
    present = set()
    while len(present) < items:
        present.add(rng.getrandbits(63))
    for item in present:
        model.insert(item)
    lost = sum(1 for item in present if not model.contains(item))
    if lost:
        sys.exit(f"redisbloom_cuckoo_model: the model lost {lost} items (a defect of the model)")
    wrong = tested = 0
    while tested < absent:
        item = rng.getrandbits(63) | (1 << 63)  # outside the present items' range
        wrong += model.contains(item)
        tested += 1
    first = model.filters[0]
    fill = None if model.first_full_at is None else model.first_full_at / len(first.slots)
    return model.bits() / items, wrong / absent, len(model.filters), fill


def check():
    """The first sub-filter's fill when it declares itself full, against the figures published:
    RedisBloom's page (which does not say after how long a walk) and the cuckoo filter paper
    (walks of 500)."""
    print("fill of the first sub-filter when it declares itself full: the mean of 3 seeds, "
          "2^16 slots or more")
    print("bucket size  20 moves  RedisBloom's page  500 moves  the paper")
    for b, page, paper in ((1, "55%", "50%"), (2, "-", "84%"), (3, "80%", "-"), (4, "95%", "95%")):
        fills = []
        for walk in (20, 500):
            runs = [run(2 << 16, 1 << 16, b, walk, 1, seed)[3] for seed in (1, 2, 3)]
            fills.append(100 * sum(runs) / len(runs))
        print(f"{b:11d}  {fills[0]:7.1f}%  {page:>17}  {fills[1]:8.1f}%  {paper:>9}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int)
    parser.add_argument("--capacity", type=int, help="default: --items")
    parser.add_argument("--bucket-size", type=int, default=2)
    parser.add_argument("--max-iterations", type=int, default=20)
    parser.add_argument("--absent", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.check:
        check()
        return
    if not args.items or args.items < 1 or args.bucket_size < 1 or args.max_iterations < 1:
        sys.exit("redisbloom_cuckoo_model: --items, --bucket-size, --max-iterations must be >= 1")
    bits, rate, filters, fill = run(args.items, args.capacity or args.items, args.bucket_size,
                                    args.max_iterations, args.absent, args.seed)
    print(f"{bits:.2f} bits/item, {100 * rate:.3f}% false positives, {filters} sub-filter(s)"
          + ("" if fill is None else f", the first declared full at {100 * fill:.1f}%"))


if __name__ == "__main__":
    main()
