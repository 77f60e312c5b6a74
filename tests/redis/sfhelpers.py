# SPDX-License-Identifier: Apache-2.0
# Helpers shared by the Redis module's tests (tests/redis/test_*.py): item names, pipelined bulk
# commands, INFO replies as dicts, SCANDUMP loops, error checks, state snapshots
# and keyspace events.
#
# Reply shapes these helpers rely on, and where they are documented:
# - BF.INFO / CF.INFO: an array of (simple string name, integer value) pairs
#   (https://redis.io/docs/latest/commands/bf.info/, .../cf.info/).
# - BF.SCANDUMP / CF.SCANDUMP: an array of (integer iterator, data); iterator 0 ends the dump, with
#   "" (BF.SCANDUMP's example) or nil (CF.SCANDUMP's example) as the data
#   (https://redis.io/docs/latest/commands/bf.scandump/, .../cf.scandump/).
# - DUMP: the serialized value of a key (https://redis.io/docs/latest/commands/dump/).
import math
import time

import pytest
import redis


def items(prefix, n, start=0):
    """n distinct items as bytes: b'<prefix>:<i>'."""
    return [f"{prefix}:{i}".encode() for i in range(start, start + n)]


def bulk(r, command, key, values, batch=1000, prefix_args=()):
    """Runs `command key *prefix_args *batch` for the values in batches, pipelined, and returns the
    concatenated replies (each reply is a list, as for BF.MADD / BF.MEXISTS / CF.INSERT)."""
    pipe = r.pipeline(transaction=False)
    for i in range(0, len(values), batch):
        pipe.execute_command(command, key, *prefix_args, *values[i:i + batch])
    out = []
    for reply in pipe.execute():
        assert isinstance(reply, list), f"{command} answered {reply!r}, not an array"
        out.extend(reply)
    return out


def each(r, command, key, values, raise_on_error=True):
    """Runs `command key value` once per value, pipelined; returns the replies in order."""
    pipe = r.pipeline(transaction=False)
    for v in values:
        pipe.execute_command(command, key, v)
    return pipe.execute(raise_on_error=raise_on_error)


def pairs(reply):
    """An INFO reply of (name, value) pairs as a dict {str name: value}, checking its shape."""
    assert isinstance(reply, list), f"INFO answered {reply!r}, not an array"
    assert len(reply) % 2 == 0, f"INFO answered an odd number of elements: {reply!r}"
    names = reply[0::2]
    for name in names:
        assert isinstance(name, bytes), f"INFO field name {name!r} is not a string"
    for name, value in zip(names, reply[1::2]):
        # integers; a NONSCALING Bloom filter's "Expansion rate" may be nil (RedisBloom's pages
        # show only scaling filters, and clients such as hedis read that field as optional)
        assert isinstance(value, int) or (value is None and name == b"Expansion rate"), (
            f"INFO value {value!r} of {name!r} is not an integer")
    return dict(zip((n.decode() for n in names), reply[1::2]))


def info(r, command, key):
    return pairs(r.execute_command(command, key))


def error_of(fn, *args):
    """The ResponseError that fn(*args) raises; fails the test if it raises none."""
    with pytest.raises(redis.ResponseError) as excinfo:
        fn(*args)
    return str(excinfo.value)


def expect_error(r, *args, contains=None):
    """Runs the command, which must answer an error (containing `contains`, case-insensitive)."""
    message = error_of(r.execute_command, *args)
    if contains is not None:
        assert contains.lower() in message.lower(), (
            f"{args!r} answered the error {message!r}, expected one containing {contains!r}")
    return message


def wrong_arity(r, *args):
    expect_error(r, *args, contains="wrong number of arguments")


# The INSERT arguments after the key that BF.INSERT, CF.INSERT and CF.INSERTNX all refuse.
BAD_INSERT_ARGS = [
    ["CAPACITY", "100"],                    # no ITEMS
    ["ITEMS"],                              # ITEMS without an item
    ["CAPACITY", "0", "ITEMS", "a"],
    ["CAPACITY", "-5", "ITEMS", "a"],
    ["CAPACITY", "abc", "ITEMS", "a"],
    ["CAPACITY", "ITEMS", "a"],             # CAPACITY missing its value
    ["BOGUS", "ITEMS", "a"],
]


def assert_fields(fields, expected):
    """Each field of `expected` (a dict) has its value in `fields` (pairs of an INFO reply)."""
    for name, value in expected.items():
        assert fields[name] == value, f"{name}: {fields[name]!r}, expected {value!r}"


def fp_limit(rate, n):
    """The rate plus a 3-sigma binomial margin for n trials."""
    return rate + 3 * math.sqrt(rate * (1 - rate) / n)


def scandump(r, command, key, max_chunks=1_000_000):
    """The (iterator, data) chunks of `command key` (BF.SCANDUMP / CF.SCANDUMP), from iterator 0
    until the reply's iterator is 0; the closing (0, ""/nil) pair is not included."""
    chunks = []
    it = 0
    while True:
        reply = r.execute_command(command, key, it)
        assert isinstance(reply, list) and len(reply) == 2, f"{command} answered {reply!r}"
        it, data = reply
        assert isinstance(it, int), f"{command} iterator {it!r} is not an integer"
        if it == 0:
            assert data in (None, b""), f"{command} ended with data {data[:32]!r}..."
            return chunks
        assert isinstance(data, bytes) and data, f"{command} chunk at {it} is {data!r}"
        chunks.append((it, data))
        assert len(chunks) < max_chunks, f"{command} did not end"


def loadchunks(r, command, key, chunks):
    for it, data in chunks:
        assert r.execute_command(command, key, it, data) == b"OK"


def wait_for(predicate, what, timeout=20.0, interval=0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def snapshot(r, bloom_keys=(), cuckoo_keys=(), probes=()):
    """What the tests compare across reloads, restarts and replicas: per key its INFO pairs, its
    answers for `probes` (MEXISTS, so false positives must match too) and its DUMP bytes."""
    out = {}
    for kind, keys, info_cmd, mexists in (("bf", bloom_keys, "BF.INFO", "BF.MEXISTS"),
                                          ("cf", cuckoo_keys, "CF.INFO", "CF.MEXISTS")):
        for key in keys:
            out[key] = {
                "info": r.execute_command(info_cmd, key),
                "answers": bulk(r, mexists, key, list(probes)),
                "dump": r.dump(key),
            }
            assert out[key]["dump"] is not None, f"DUMP {key} answered nil"
    return out


def assert_same_state(before, after):
    assert before.keys() == after.keys()
    for key in before:
        assert after[key]["info"] == before[key]["info"], f"INFO of {key} changed"
        changed = [i for i, (a, b) in enumerate(zip(before[key]["answers"],
                                                     after[key]["answers"])) if a != b]
        assert len(before[key]["answers"]) == len(after[key]["answers"])
        assert not changed, (
            f"{key} answers {len(changed)} probes differently, first at {changed[:5]}")
        assert after[key]["dump"] == before[key]["dump"], f"DUMP of {key} changed"


def events_of(pubsub, timeout=2.0):
    """The (event, key) pairs `pubsub`, subscribed to __keyevent@0__:*, receives: those that come
    within `timeout`, and then each within 0.3 s of the one before."""
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.1)
        if message is None or message["type"] != "pmessage":
            continue
        event = message["channel"].decode().split(":", 1)[1]
        out.append((event, message["data"].decode()))
        deadline = time.monotonic() + 0.3
    return out
