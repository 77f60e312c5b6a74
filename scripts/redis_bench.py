#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The Redis module against a Bloom filter built by hand from SETBIT/GETBIT, side by side.

Starts its own redis-server (loopback, a free port, no persistence) with the module loaded, and
for each way of keeping a filter of --items items at the rate --rate, adds every item in round
trips of --batch items, then looks up every item and as many absent ones, and prints a table:
items per second for adds and lookups, the p99 latency of one round trip of --batch items, bytes
per item (MEMORY USAGE), and the measured false-positive rate over the absent items.

  bf.madd     BF.RESERVE ... NONSCALING, one BF.MADD / BF.MEXISTS per round trip
  bf.add      BF.ADD / BF.EXISTS, --batch commands pipelined per round trip; beside it the
              client's ceiling: as many HEXISTS of a missing key, pipelined the same way
  setbit      the hand-built filter: m = -n ln p / ln^2 2 bits, k = round(m/n ln 2) probes from one
              128-bit hash per item (h1 + i h2 mod m, computed by the client), k SETBIT / GETBIT
              commands per item, pipelined
  lua         the same filter, the probes computed and set in one Lua script per round trip
              (EVALSHA, positions from redis.sha1hex)
  cf.insert   CF.RESERVE ... EXPANSION 0, one CF.INSERT / CF.MEXISTS per round trip; then every
              item deleted with CF.DEL, pipelined

Then redis-benchmark, pipelined (-P) with random items (-r), one item per request: BF.ADD,
BF.EXISTS, CF.ADD, CF.EXISTS and the hand-built filter's Lua script.

  /usr/bin/python3 scripts/redis_bench.py --module build/redis/libsstfilter_redis.so \
      [--items 1000000] [--rate 0.01] [--batch 1000] [--absent N] [--skip-benchmark]
      [--fp-sweep E]   (also the measured rates of filters of 10^3 .. 10^E items)
      [--against-redisbloom-cuckoo]   (instead: the cuckoo filter beside RedisBloom's, simulated
                                       by scripts/redisbloom_cuckoo_model.py)

Needs Debian's redis-server, redis-tools and python3-redis (for /usr/bin/python3).
"""
import argparse
import hashlib
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

LUA_BLOOM = """
local m, k, set = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local out = {}
for j = 4, #ARGV do
  local h = redis.sha1hex(ARGV[j])
  local h1, h2 = tonumber(string.sub(h, 1, 12), 16), tonumber(string.sub(h, 13, 24), 16)
  local all = 1
  for i = 0, k - 1 do
    local bit = (h1 + i * h2) % m
    if set then
      redis.call('SETBIT', KEYS[1], bit, 1)
    elseif redis.call('GETBIT', KEYS[1], bit) == 0 then
      all = 0
      break
    end
  end
  out[#out + 1] = all
end
return out
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A redis-server of its own, stopped by stop()."""

    def __init__(self, module):
        self.dir = tempfile.mkdtemp(prefix="sstfilter_redis_bench_")
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--loadmodule", os.path.abspath(module)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.client = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        sys.exit("redis_bench: redis-server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def items_of(prefix, n):
    return [f"{prefix}:{i:012x}".encode() for i in range(n)]


def batches(items, size):
    for at in range(0, len(items), size):
        yield items[at:at + size]


def p99(seconds):
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def timed(round_trips):
    """Runs each round trip (a function returning a list of 0/1 answers); returns the answers,
    the total seconds and the p99 of one round trip in ms."""
    answers, laps = [], []
    start = time.perf_counter()
    for trip in round_trips:
        t = time.perf_counter()
        answers.extend(trip())
        laps.append(time.perf_counter() - t)
    return answers, time.perf_counter() - start, p99(laps)


class HandBuilt:
    """The textbook filter for n items at rate p, m bits in one Redis string."""

    def __init__(self, n, p):
        self.m = math.ceil(-n * math.log(p) / math.log(2) ** 2)
        self.k = max(1, round(self.m / n * math.log(2)))

    def bits(self, item):
        h = hashlib.blake2b(item, digest_size=16).digest()
        h1, h2 = int.from_bytes(h[:8], "little"), int.from_bytes(h[8:], "little")
        return [(h1 + i * h2) % self.m for i in range(self.k)]


def run_module(c, name, setup, add, query, items, absent, batch):
    c.flushall()
    c.execute_command(*setup)
    _, add_s, add_p99 = timed(lambda b=b: add(b) for b in batches(items, batch))
    found, look_s, look_p99 = timed(lambda b=b: query(b) for b in batches(items, batch))
    if not all(found):
        sys.exit(f"redis_bench: {name} lost an item")
    wrong, _, _ = timed(lambda b=b: query(b) for b in batches(absent, batch))
    return dict(name=name, adds=len(items) / add_s, lookups=len(items) / look_s,
                add_p99=add_p99, look_p99=look_p99,
                bytes=c.memory_usage("f", samples=0) / len(items), fp=sum(wrong) / len(absent))


def pipelined(c, command_of):
    def trip(b):
        pipe = c.pipeline(transaction=False)
        for item in b:
            pipe.execute_command(*command_of(item))
        return pipe.execute()
    return trip


def hand_built_contenders(c, hb):
    def setbit(b):
        pipe = c.pipeline(transaction=False)
        for item in b:
            for bit in hb.bits(item):
                pipe.setbit("f", bit, 1)
        pipe.execute()
        return [1] * len(b)

    def getbit(b):
        pipe = c.pipeline(transaction=False)
        for item in b:
            for bit in hb.bits(item):
                pipe.getbit("f", bit)
        got = pipe.execute()
        return [int(all(got[i * hb.k:(i + 1) * hb.k])) for i in range(len(b))]

    sha = c.script_load(LUA_BLOOM)

    def lua(set_bits):
        return lambda b: c.evalsha(sha, 1, "f", hb.m, hb.k, 1 if set_bits else 0, *b)

    # A string key of m bits, allocated before the adds as BF.RESERVE does.
    setup = ("SETBIT", "f", hb.m - 1, 0)
    return [("setbit", setup, setbit, getbit), ("lua", setup, lua(True), lua(False))]


def table(rows, hb, args):
    """Prints the rows and the ratios of ours to the hand-built filter's; returns the rows by
    name."""
    print(f"\n{args.items} items at a requested rate of {args.rate}, round trips of "
          f"{args.batch} items; hand-built filter: m = {hb.m} bits, k = {hb.k}")
    print(f"{'':10} {'adds/s':>10} {'lookups/s':>10} {'add p99':>9} {'lookup p99':>10} "
          f"{'bytes/item':>10} {'measured fp':>12}")
    for r in rows:
        print(f"{r['name']:10} {r['adds']:10.0f} {r['lookups']:10.0f} {r['add_p99']:7.2f}ms "
              f"{r['look_p99']:8.2f}ms {r['bytes']:10.3f} {100 * r['fp']:11.3f}%")
    by = {r["name"]: r for r in rows}
    for mine in ("bf.madd", "bf.add"):
        for theirs in ("setbit", "lua"):
            a, b = by[mine], by[theirs]
            print(f"{mine} / {theirs}: adds {a['adds'] / b['adds']:.2f}x, lookups "
                  f"{a['lookups'] / b['lookups']:.2f}x, bytes per item "
                  f"{a['bytes'] / b['bytes']:.3f}x, measured fp {a['fp'] / b['fp']:.2f}x")
    return by


def redis_benchmark(port, hb, sha, requests):
    """redis-benchmark's figures for one item per command. The hand-built filter runs as its Lua
    script, one item per EVALSHA: redis-benchmark's __rand_int__ is zero-padded, which SETBIT and
    GETBIT refuse as a bit offset."""
    print(f"\nredis-benchmark -P 64 -c 8 -r 100000000, {requests} requests each, one item per "
          f"request")
    print(f"{'command':32} {'items/s':>10} {'p50 ms':>7} {'p99 ms':>7}")
    m, k = str(hb.m), str(hb.k)
    for label, command in (
            ("BF.ADD", ["BF.ADD", "bench", "item:__rand_int__"]),
            ("BF.EXISTS", ["BF.EXISTS", "bench", "item:__rand_int__"]),
            ("CF.ADD", ["CF.ADD", "cuckoo", "item:__rand_int__"]),
            ("CF.EXISTS", ["CF.EXISTS", "cuckoo", "item:__rand_int__"]),
            ("hand-built add (EVALSHA)", ["EVALSHA", sha, "1", "bits", m, k, "1",
                                          "item:__rand_int__"]),
            ("hand-built lookup (EVALSHA)", ["EVALSHA", sha, "1", "bits", m, k, "0",
                                             "item:__rand_int__"])):
        out = subprocess.run(
            ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", str(requests),
             "-P", "64", "-r", "100000000", "-c", "8", "--csv"] + command,
            check=True, capture_output=True, text=True).stdout.strip().splitlines()
        fields = [f.strip('"') for f in out[-1].split(",")]
        print(f"{label:32} {float(fields[1]):10.0f} {float(fields[4]):7.3f} "
              f"{float(fields[6]):7.3f}")


def filled_rate(c, setup, add, query, n, lookups, batch):
    """Makes key "f" anew with `setup`, adds n items with `add` (BF.MADD, or CF.INSERT ... ITEMS),
    pipelined in round trips of `batch`, and returns the share of `lookups` absent items that
    `query` (BF.MEXISTS, CF.MEXISTS) finds."""
    c.flushall()
    c.execute_command(*setup)
    pipe = c.pipeline(transaction=False)
    for at in range(0, n, batch):
        chunk = [f"present:{i:012x}" for i in range(at, min(n, at + batch))]
        pipe.execute_command(add, "f", *(["ITEMS"] if add == "CF.INSERT" else []), *chunk)
        if len(pipe) >= 16:
            pipe.execute()
    pipe.execute()
    wrong = 0
    for at in range(0, lookups, batch):
        chunk = [f"absent:{i:012x}" for i in range(at, min(lookups, at + batch))]
        wrong += sum(c.execute_command(query, "f", *chunk))
    return wrong / lookups


def fp_sweep(c, rate, max_exponent, batch, lookups=1_000_000):
    """The measured false-positive rate of filters of 10^3 .. 10^max_exponent items, each sized
    for its items at `rate`, over `lookups` absent items: the rate each command's filter gives."""
    print(f"\nmeasured false-positive rates, {lookups} absent items each, requested {rate} "
          f"(bound: the rate + 3 binomial sigmas)")
    print(f"{'items':>11} {'filter':34} {'measured':>9} {'bound':>9} {'bytes/item':>10}")
    worst = 0.0
    for e in range(3, max_exponent + 1):
        n = 10 ** e
        for label, setup, add, query in (
                ("BF.RESERVE ... NONSCALING", ("BF.RESERVE", "f", str(rate), str(n), "NONSCALING"),
                 "BF.MADD", "BF.MEXISTS"),
                ("BF.RESERVE (scaling)", ("BF.RESERVE", "f", str(rate), str(n)), "BF.MADD",
                 "BF.MEXISTS"),
                ("CF.RESERVE ... ERROR, EXPANSION 0",
                 ("CF.RESERVE", "f", str(n), "EXPANSION", "0", "ERROR", str(rate)), "CF.INSERT",
                 "CF.MEXISTS")):
            measured = filled_rate(c, setup, add, query, n, lookups, batch)
            bound = rate + 3 * math.sqrt(rate * (1 - rate) / lookups)
            worst = max(worst, measured / rate)
            print(f"{n:11d} {label:34} {100 * measured:8.3f}% {100 * bound:8.3f}% "
                  f"{c.memory_usage('f', samples=0) / n:10.3f}"
                  f"{'' if measured <= bound else '  ABOVE THE BOUND'}")
    print(f"worst measured / requested: {worst:.3f}")


def against_redisbloom_cuckoo(c, batch, absent=200_000):
    """CF.RESERVE c EXPANSION 0 ERROR p beside RedisBloom's cuckoo filter of capacity c (its
    defaults: buckets of 2, 8-bit fingerprints, expansion 1) as scripts/redisbloom_cuckoo_model.py
    simulates it, c items in each, p the model's measured rate: bytes per item at the same or a
    lower measured rate. The capacities put RedisBloom's first sub-filter of 2^20 slots from half
    full to nearly full; walks of 20 moves are its default MAXITERATIONS, walks of 500 the paper's
    (a fuller first sub-filter)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import redisbloom_cuckoo_model as model
    print(f"\ncuckoo filters against RedisBloom's by its documented design (simulated), "
          f"{absent} absent items each")
    print(f"{'capacity':>9} {'walk':>4} {'RedisBloom bits/item':>20} {'its rate':>8} "
          f"{'sub-filters':>11} {'this module bits/item':>21} {'its rate':>8} {'bytes':>7}")
    worst = 0.0
    for fraction in (0.51, 0.57, 0.60, 0.63, 0.66, 0.75, 0.85, 0.95):
        n = int(fraction * (1 << 20))
        for walk in (20, 500):
            rb_bits, rb_rate, rb_filters, _ = model.run(n, n, 2, walk, absent, seed=n)
            rate = filled_rate(
                c, ("CF.RESERVE", "f", str(n), "EXPANSION", "0", "ERROR", str(rb_rate)),
                "CF.INSERT", "CF.MEXISTS", n, absent, batch)
            bits = 8 * c.memory_usage("f", samples=0) / n
            ratio = bits / rb_bits
            if walk == 20:
                worst = max(worst, ratio)
            print(f"{n:9d} {walk:4d} {rb_bits:20.2f} {100 * rb_rate:7.3f}% {rb_filters:11d} "
                  f"{bits:21.2f} {100 * rate:7.3f}% {ratio:6.3f}x")
    print(f"worst bytes ratio at RedisBloom's default walk: {worst:.3f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", required=True)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=0.01)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--absent", type=int, default=0, help="default: as many as --items")
    parser.add_argument("--skip-benchmark", action="store_true")
    parser.add_argument("--fp-sweep", type=int, default=0, metavar="E",
                        help="also measure the rates of filters of 10^3 .. 10^E items")
    parser.add_argument("--against-redisbloom-cuckoo", action="store_true",
                        help="only the cuckoo filter beside RedisBloom's, simulated (3 minutes)")
    args = parser.parse_args()
    if args.items < 1 or args.batch < 1 or not 0 < args.rate < 1:
        sys.exit("redis_bench: --items and --batch must be positive, --rate in (0, 1)")
    if not os.path.exists(args.module):
        sys.exit(f"redis_bench: no module at {args.module}")
    items = items_of("present", args.items)
    absent = items_of("absent", args.absent or args.items)
    hb = HandBuilt(args.items, args.rate)
    server = Server(args.module)
    try:
        c = server.client
        if args.against_redisbloom_cuckoo:
            against_redisbloom_cuckoo(c, args.batch)
            return
        n, p = str(args.items), str(args.rate)
        contenders = [
            ("bf.madd", ("BF.RESERVE", "f", p, n, "NONSCALING"),
             lambda b: c.execute_command("BF.MADD", "f", *b),
             lambda b: c.execute_command("BF.MEXISTS", "f", *b)),
            ("bf.add", ("BF.RESERVE", "f", p, n, "NONSCALING"),
             pipelined(c, lambda i: ("BF.ADD", "f", i)),
             pipelined(c, lambda i: ("BF.EXISTS", "f", i))),
        ] + hand_built_contenders(c, hb) + [
            ("cf.insert", ("CF.RESERVE", "f", n, "EXPANSION", "0", "ERROR", p),
             lambda b: [int(x == 1) for x in c.execute_command("CF.INSERT", "f", "ITEMS", *b)],
             lambda b: c.execute_command("CF.MEXISTS", "f", *b)),
        ]
        rows = [run_module(c, *contender, items, absent, args.batch) for contender in contenders]
        # The cuckoo filter the last contender left: every item deleted.
        cf_del = pipelined(c, lambda i: ("CF.DEL", "f", i))
        deleted, del_s, _ = timed(lambda b=b: cf_del(b) for b in batches(items, args.batch))
        by = table(rows, hb, args)
        # What this client gets through with commands of BF.EXISTS's shape (a key, an item, an
        # integer reply) that cost the server next to nothing: where bf.add's rates come near it,
        # they measure the client, not the filter.
        _, ceiling_s, _ = timed(lambda b=b: pipelined(c, lambda i: ("HEXISTS", "none", i))(b)
                                for b in batches(absent, args.batch))
        ceiling = len(absent) / ceiling_s
        print(f"the client's ceiling, HEXISTS of a missing key pipelined as bf.add's commands: "
              f"{ceiling:.0f}/s; bf.add's adds {by['bf.add']['adds'] / ceiling:.2f}x and lookups "
              f"{by['bf.add']['lookups'] / ceiling:.2f}x it")
        print(f"cf.del: {len(items) / del_s:.0f} items/s, {sum(deleted)} of {len(items)} "
              f"deleted, {c.execute_command('CF.COUNT', 'f', items[0])} copies of the first left")
        if not args.skip_benchmark:
            c.flushall()
            c.execute_command("BF.RESERVE", "bench", p, n, "NONSCALING")
            requests = max(100_000, args.items)
            # Room for every request's item: a full cuckoo filter answers errors.
            c.execute_command("CF.RESERVE", "cuckoo", str(2 * requests), "ERROR", p)
            c.setbit("bits", hb.m - 1, 0)
            redis_benchmark(server.port, hb, c.script_load(LUA_BLOOM), requests)
        if args.fp_sweep:
            fp_sweep(c, args.rate, args.fp_sweep, args.batch)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
