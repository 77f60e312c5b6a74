# SPDX-License-Identifier: Apache-2.0
# The filters' memory is Redis's: their arrays come from Redis's allocator (RedisModule_TryAlloc,
# set at load through sstfilter::SetFilterAllocator), so INFO memory's used_memory counts them and
# maxmemory refuses writes beyond it; a filter larger than the memory left is an error reply.


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
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", str(used_memory(r) + 8_000_000))
    # One filter of 12 MB goes over: reserving it is allowed (the check is before the command),
    # and every write after it is refused.
    r.execute_command("BF.RESERVE", "big", "0.01", "10000000", "NONSCALING")
    for command in (["BF.ADD", "other", "x"], ["CF.ADD", "c", "x"], ["BF.RESERVE", "b2", "0.01", "10"]):
        try:
            r.execute_command(*command)
        except Exception as e:  # redis.exceptions.OutOfMemoryError on python3-redis 4.3.4
            assert "OOM" in str(e) or "maxmemory" in str(e), e
        else:
            raise AssertionError(f"{command} was not refused beyond maxmemory")
    assert r.execute_command("BF.EXISTS", "big", "x") == 0  # reads still answer
    r.config_set("maxmemory", "0")


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
