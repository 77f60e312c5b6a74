# SPDX-License-Identifier: Apache-2.0
# The filters' memory is Redis's: their arrays come from Redis's allocator (RedisModule_TryAlloc,
# set at load through sstfilter::SetFilterAllocator), so INFO memory's used_memory counts them and
# maxmemory refuses writes beyond it. A filter of 1 MiB or more that would take a primary past
# maxmemory for good (under an allkeys-* policy: that its keys' eviction cannot make room for) is
# refused before its memory is taken (redis/module.cc), but for the growth of an add, which its
# replicas make whatever their memory, and never while Redis loads; a filter larger than the memory
# Redis can have is an error reply.
import struct
import time

from sfhelpers import expect_error, info, items, scandump


def used_memory(r):
    return r.info("memory")["used_memory"]


def test_used_memory_counts_the_filters(r):
    before = used_memory(r)
    # 1e7 items at 1%: about 12 MB of bits (Bloom), 11.8 MB of table (cuckoo: 10-bit fingerprints
    # in semi-sorted buckets, 9 bits a slot, at 95% load).
    r.execute_command("BF.RESERVE", "bf", "0.01", "10000000", "NONSCALING")
    r.execute_command("CF.RESERVE", "cf", "10000000", "EXPANSION", "0")
    sizes = r.memory_usage("bf", samples=0) + r.memory_usage("cf", samples=0)
    assert sizes > 23_500_000
    grown = used_memory(r) - before
    assert grown >= 0.99 * sizes, (grown, sizes)
    r.delete("bf", "cf")
    assert used_memory(r) - before < 0.01 * sizes


def test_maxmemory_refuses_writes_beyond_it(r):
    # One filter of 12 MB, made without a limit; then a limit 4 MB below what the server holds:
    # every write is refused (the commands are deny-oom), and reads still answer.
    r.execute_command("BF.RESERVE", "big", "0.01", "10000000", "NONSCALING")
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", str(used_memory(r) - 4_000_000))
    for command in (["BF.ADD", "other", "x"], ["CF.ADD", "c", "x"], ["BF.RESERVE", "b2", "0.01", "10"]):
        try:
            r.execute_command(*command)
        except Exception as e:  # redis.exceptions.OutOfMemoryError on python3-redis 4.3.4
            assert "OOM" in str(e) or "maxmemory" in str(e), e
        else:
            raise AssertionError(f"{command} was not refused beyond maxmemory")
    assert r.execute_command("BF.EXISTS", "big", "x") == 0
    r.config_set("maxmemory", "0")


# 1e7 items at 1%: a Bloom filter of about 14 MB (a scaling key's first filter has half its rate)
# and a cuckoo filter of about 12 MB.
BIG_FILTERS = [["BF.RESERVE", "big", "0.01", "10000000"], ["CF.RESERVE", "big", "10000000"]]


def test_a_filter_that_would_pass_maxmemory_is_refused_before_its_memory_is_taken(r):
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", str(used_memory(r) + 8_000_000))
    for command in BIG_FILTERS:
        before = used_memory(r)
        expect_error(r, *command, contains="allocate")
        assert r.exists("big") == 0
        assert used_memory(r) - before < 1_000_000
    # Smaller filters fit, and are made.
    assert r.execute_command("BF.RESERVE", "small", "0.01", "3000000") == b"OK"
    assert r.execute_command("CF.RESERVE", "small2", "1000000") == b"OK"
    # The same under volatile-lru, which evicts only keys with a TTL (here none), and under
    # allkeys-lru, where the filter is larger than maxmemory itself.
    for policy in ("volatile-lru", "allkeys-lru"):
        r.config_set("maxmemory-policy", policy)
        expect_error(r, *BIG_FILTERS[0], contains="allocate")
    assert r.exists("small", "small2") == 2
    r.config_set("maxmemory", "0")


def _full_cache(r, strings):
    """`strings` strings of 1 MB, written 1.5 s before what follows (the LRU clock counts whole
    seconds) so that they are idler than any key made after, under allkeys-lru and a maxmemory 0.5 MB above
    the server's used memory: a cache that is full. Returns the maxmemory."""
    for i in range(strings):
        r.set(f"s{i}", b"x" * 1_000_000)
    time.sleep(1.5)
    r.config_set("maxmemory-policy", "allkeys-lru")
    maxmemory = used_memory(r) + 500_000
    r.config_set("maxmemory", str(maxmemory))
    return maxmemory


def test_a_full_cache_that_evicts_any_key_makes_a_filter_its_keys_make_room_for(r):
    # Under an allkeys-* policy Redis evicts keys until it is back under maxmemory, from the next
    # command on, as after any large value (redis/module.cc): a cache full of 24 MB of strings
    # makes a filter of about 14 MB and evicts strings for it.
    maxmemory = _full_cache(r, 24)
    evicted = r.info("stats")["evicted_keys"]
    assert r.execute_command(*BIG_FILTERS[0]) == b"OK"
    r.ping()  # Redis evicts before each command (MEMORY USAGE's and INFO's too)
    assert r.memory_usage("big", samples=0) > 13_000_000
    assert used_memory(r) <= maxmemory + 64_000  # INFO's own allocations before it counts
    assert r.info("stats")["evicted_keys"] - evicted >= 12
    assert r.execute_command("BF.ADD", "big", "item") == 1
    assert r.execute_command("BF.EXISTS", "big", "item") == 1
    # A filter larger than all that eviction could free is refused: about 140 MB.
    expect_error(r, "BF.RESERVE", "huge", "0.01", "100000000", contains="allocate")
    # Under volatile-lru no key here can be evicted (none has a TTL): the cache, full, refuses a
    # filter of about 12 MB, as noeviction does.
    r.config_set("maxmemory-policy", "volatile-lru")
    expect_error(r, *BIG_FILTERS[1][:1], "big2", *BIG_FILTERS[1][2:], contains="allocate")
    assert r.exists("big2") == 0
    r.config_set("maxmemory", "0")


def test_a_full_cache_makes_no_filter_while_past_maxmemory(r):
    # The commands of a MULTI run with no eviction between them: the first filter takes the cache
    # past maxmemory, and the second is refused until eviction has made room for the first.
    _full_cache(r, 48)
    transaction = r.pipeline(transaction=True)
    transaction.execute_command(*BIG_FILTERS[0])
    transaction.execute_command("BF.RESERVE", "big2", "0.01", "10000000")
    replies = transaction.execute(raise_on_error=False)
    assert replies[0] == b"OK", replies
    assert isinstance(replies[1], Exception) and "allocate" in str(replies[1]), replies
    assert r.exists("big2") == 0
    # Once evicted for, it is made.
    assert r.execute_command("BF.RESERVE", "big2", "0.01", "10000000") == b"OK"
    r.config_set("maxmemory", "0")


def test_a_full_cache_refuses_a_filter_what_no_eviction_frees_leaves_no_room_for(r):
    # Scripts' bodies count in used_memory_overhead, which no eviction frees: with 20 MB of them
    # and 10 MB of strings, evicting every string leaves no room for a filter of about 14 MB,
    # though maxmemory is larger than the filter.
    for i in range(20):
        r.script_load(f"return '{i}" + "x" * 1_000_000 + "'")
    assert r.info("memory")["used_memory_overhead"] > 20_000_000
    maxmemory = _full_cache(r, 10)
    assert maxmemory > 28_000_000
    evicted = r.info("stats")["evicted_keys"]
    expect_error(r, *BIG_FILTERS[0], contains="allocate")
    assert r.exists("big") == 0
    assert r.info("stats")["evicted_keys"] == evicted
    r.config_set("maxmemory", "0")


def test_a_filter_a_loadchunk_brings_past_maxmemory_is_refused(r):
    # The dump's first 200 bytes, its headers and its one filter's length, as LOADCHUNK's first
    # piece: the filter's memory is asked for as its length arrives.
    for kind, command in (("BF", BIG_FILTERS[0]), ("CF", BIG_FILTERS[1])):
        r.config_set("maxmemory", "0")
        r.execute_command(*command)
        first = b"".join(data for _, data in scandump(r, f"{kind}.SCANDUMP", "big"))[:200]
        r.delete("big")
        r.config_set("maxmemory-policy", "noeviction")
        r.config_set("maxmemory", str(used_memory(r) + 8_000_000))
        before = used_memory(r)
        expect_error(r, f"{kind}.LOADCHUNK", "copy", len(first) + 1, first, contains="allocate")
        assert r.exists("copy") == 0
        assert used_memory(r) - before < 1_000_000
    r.config_set("maxmemory", "0")


def test_an_add_that_grows_a_key_past_maxmemory_grows_it_as_its_replicas_do(r):
    # An add is replicated before it runs, and a replica grows the key whatever its memory, so the
    # primary grows it too (redis/module.cc): here a second filter of 4,096,000 items, about 6 MB,
    # past a maxmemory 2 MB away.
    for kind, reserve in (("BF", ["BF.RESERVE", "k", "0.01", "1000", "EXPANSION", "4096"]),
                          ("CF", ["CF.RESERVE", "k", "1000", "EXPANSION", "4096"])):
        r.config_set("maxmemory", "0")
        r.execute_command(*reserve)
        r.config_set("maxmemory-policy", "noeviction")
        r.config_set("maxmemory", str(used_memory(r) + 2_000_000))
        command = "BF.MADD" if kind == "BF" else "CF.INSERT"
        args = ["k", *items("x", 1200)] if kind == "BF" else ["k", "ITEMS", *items("x", 1200)]
        replies = r.execute_command(command, *args)
        assert not any(isinstance(v, Exception) or v == -1 for v in replies), replies
        assert info(r, f"{kind}.INFO", "k")["Number of filters"] == 2
        assert used_memory(r) > int(r.config_get("maxmemory")["maxmemory"])
        r.config_set("maxmemory", "0")
        r.delete("k")


def test_what_was_saved_loads_whatever_maxmemory_says(r):
    # Loading is never refused: a server restarted with less maxmemory than its data still has it.
    for command in BIG_FILTERS:
        r.execute_command(*command[:1], command[1] + "_" + command[0][:2], *command[2:])
    r.execute_command("BF.ADD", "big_BF", "item")
    r.execute_command("CF.ADD", "big_CF", "item")
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", str(used_memory(r) // 2))
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert r.execute_command("BF.EXISTS", "big_BF", "item") == 1
    assert r.execute_command("CF.EXISTS", "big_CF", "item") == 1
    r.config_set("maxmemory", "0")


def _crafted_loadchunk(kind):
    """A dump's first 96 bytes: the module's dump header, a chain header of one filter of one key
    at 1%, and that filter's length: 2^40 bytes."""
    dump = b"SFRD" + bytes([1, 1 if kind == "BF" else 2])
    dump += struct.pack("<HII", *((0, 0, 0) if kind == "BF" else (2, 20, 0))) + struct.pack("<Q", 0)
    chain = b"SFCH" + bytes([1, 1 if kind == "BF" else 2, 1, 1 if kind == "BF" else 0])
    chain += struct.pack("<dddQQQII", 0.01, 2.0, 0.5, 1, 0, 0, 1, 0)
    return dump + chain + struct.pack("<Q", 2**40)


def test_a_loadchunk_of_a_few_bytes_cannot_ask_for_much_memory(r):
    # A filter's length must be one a filter of its capacity can have: 2^40 bytes for one key is
    # refused when the length arrives, before anything is allocated.
    for kind in ("BF", "CF"):
        before = used_memory(r)
        piece = _crafted_loadchunk(kind)
        expect_error(r, f"{kind}.LOADCHUNK", "crafted", len(piece) + 1, piece,
                     contains="more than a filter of 1 keys")
        assert r.exists("crafted") == 0
        assert used_memory(r) - before < 1_000_000


def test_a_filter_larger_than_memory_is_an_error(r):
    # 2^50 items at 1%: over a petabyte; TryAlloc fails and the command answers an error.
    for command in (["BF.RESERVE", "huge", "0.01", str(2**50), "NONSCALING"],
                    ["CF.RESERVE", "huge", str(2**50)]):
        try:
            r.execute_command(*command)
        except Exception as e:
            assert "allocate" in str(e) or "too large" in str(e), e
        else:
            raise AssertionError(f"{command} made a filter of 2^50 items")
    assert r.exists("huge") == 0
    assert r.ping()
