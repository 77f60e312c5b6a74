# SPDX-License-Identifier: Apache-2.0
# The module's types through Redis persistence and replication. Expectations, and the pages they
# come from:
#   DEBUG RELOAD saves the dataset as RDB and loads it back: every key must come back the same
#     (https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/ for RDB/AOF;
#     DEBUG is enabled with --enable-debug-command, redis.conf).
#   BGREWRITEAOF, INFO persistence aof_rewrite_in_progress / aof_rewrite_scheduled / aof_rewrites /
#     aof_last_bgrewrite_status (https://redis.io/docs/latest/commands/bgrewriteaof/,
#     https://redis.io/docs/latest/commands/info/). aof-use-rdb-preamble no makes the rewrite use
#     the module type's AOF-rewrite callback instead of its RDB save (redis.conf).
#   appendfsync always: "fsync every time new commands are appended to the AOF", so an
#     acknowledged write survives kill -9 (persistence page above).
#   REPLICAOF, INFO replication master_link_status, WAIT numreplicas timeout
#     (https://redis.io/docs/latest/commands/replicaof/, .../wait/); replicas answer read
#     commands.
#   DUMP: "the serialized value" of a key, for module types through their RDB callbacks
#     (https://redis.io/docs/latest/commands/dump/), so equal filters give equal DUMP bytes.
#   BF.INFO / CF.INFO pairs: https://redis.io/docs/latest/commands/bf.info/, .../cf.info/.
# State is compared as INFO, the answers (false positives included) to present and absent items,
# and DUMP: see sfhelpers.snapshot.
import threading

import pytest
import redis

from sfhelpers import assert_same_state, bulk, info, items, snapshot, wait_for

BLOOM_KEYS = ("bf:grown", "bf:plain", "bf:nonscaling")
CUCKOO_KEYS = ("cf:grown", "cf:plain", "cf:deleted")
PRESENT = items("p", 30_000)
ABSENT = items("a", 20_000)
PROBES = PRESENT + ABSENT


def populate(r, present=PRESENT):
    """Bloom and cuckoo filters of several shapes, the grown ones with several sub-filters."""
    r.execute_command("BF.RESERVE", "bf:grown", "0.01", "1000", "EXPANSION", "2")
    bulk(r, "BF.MADD", "bf:grown", present)
    r.execute_command("BF.RESERVE", "bf:plain", "0.001", "50000")
    bulk(r, "BF.MADD", "bf:plain", present[:5000])
    r.execute_command("BF.RESERVE", "bf:nonscaling", "0.01", "3000", "NONSCALING")
    bulk(r, "BF.MADD", "bf:nonscaling", present[:2000])
    r.execute_command("CF.RESERVE", "cf:grown", "1000", "EXPANSION", "2", "BUCKETSIZE", "4",
                      "MAXITERATIONS", "50")
    bulk(r, "CF.INSERT", "cf:grown", present[:20000], prefix_args=("ITEMS",))
    r.execute_command("CF.RESERVE", "cf:plain", "10000", "ERROR", "0.001")
    bulk(r, "CF.INSERT", "cf:plain", present[:5000], prefix_args=("ITEMS",))
    r.execute_command("CF.RESERVE", "cf:deleted", "10000")
    bulk(r, "CF.INSERT", "cf:deleted", present[:4000], prefix_args=("ITEMS",))
    pipe = r.pipeline(transaction=False)
    for item in present[:1000]:
        pipe.execute_command("CF.DEL", "cf:deleted", item)
    assert pipe.execute() == [1] * 1000
    assert info(r, "BF.INFO", "bf:grown")["Number of filters"] > 3
    assert info(r, "CF.INFO", "cf:grown")["Number of filters"] > 1
    assert info(r, "CF.INFO", "cf:deleted")["Number of items deleted"] == 1000


def assert_items_present(r, present=PRESENT):
    assert bulk(r, "BF.MEXISTS", "bf:grown", present).count(1) == len(present)
    assert bulk(r, "BF.MEXISTS", "bf:plain", present[:5000]).count(1) == 5000
    assert bulk(r, "BF.MEXISTS", "bf:nonscaling", present[:2000]).count(1) == 2000
    assert bulk(r, "CF.MEXISTS", "cf:grown", present[:20000]).count(1) == 20000
    assert bulk(r, "CF.MEXISTS", "cf:plain", present[:5000]).count(1) == 5000
    assert bulk(r, "CF.MEXISTS", "cf:deleted", present[1000:4000]).count(1) == 3000


def state(r):
    return snapshot(r, BLOOM_KEYS, CUCKOO_KEYS, PROBES)


def persistence(r):
    return {k.decode() if isinstance(k, bytes) else k: v
            for k, v in r.info("persistence").items()}


def bgrewriteaof(r):
    """BGREWRITEAOF, then wait until it has finished, successfully."""
    wait_for(lambda: persistence(r)["aof_rewrite_in_progress"] == 0 and
             persistence(r)["aof_rewrite_scheduled"] == 0, "an earlier AOF rewrite to finish")
    before = persistence(r)["aof_rewrites"]
    r.execute_command("BGREWRITEAOF")

    def done():
        p = persistence(r)
        return (p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0 and
                p["aof_rewrites"] > before)
    wait_for(done, "BGREWRITEAOF to finish", timeout=60)
    assert persistence(r)["aof_last_bgrewrite_status"] == "ok"


# ---------------------------------------------------------------------------------------------
# RDB: DEBUG RELOAD

def test_debug_reload_keeps_every_item_and_info(server):
    r = server.client()
    populate(r)
    before = state(r)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert_same_state(before, state(r))
    assert_items_present(r)
    # and the reloaded filters still take items
    assert r.execute_command("BF.ADD", "bf:grown", "after-reload") == 1
    assert r.execute_command("CF.ADD", "cf:grown", "after-reload") == 1
    assert r.execute_command("BF.EXISTS", "bf:grown", "after-reload") == 1
    assert r.execute_command("CF.EXISTS", "cf:grown", "after-reload") == 1


def test_debug_reload_twice_is_stable(server):
    r = server.client()
    r.execute_command("BF.MADD", "bf", *items("x", 500))
    r.execute_command("CF.INSERT", "cf", "ITEMS", *items("x", 500))
    dumps = (r.dump("bf"), r.dump("cf"))
    for _ in range(2):
        r.execute_command("DEBUG", "RELOAD")
        assert (r.dump("bf"), r.dump("cf")) == dumps


def test_restore_of_dump_round_trips(server):
    r = server.client()
    populate(r)
    for key in BLOOM_KEYS + CUCKOO_KEYS:
        payload = r.dump(key)
        assert r.restore(key + ":copy", 0, payload) == b"OK"
        assert r.dump(key + ":copy") == payload
    for key in BLOOM_KEYS:
        assert r.execute_command("BF.INFO", key + ":copy") == r.execute_command("BF.INFO", key)
    for key in CUCKOO_KEYS:
        assert r.execute_command("CF.INFO", key + ":copy") == r.execute_command("CF.INFO", key)


def test_copy_makes_a_filter_of_its_own(server):
    # COPY (https://redis.io/docs/latest/commands/copy/): the copy answers as the source and dumps
    # the same bytes; writes to either leave the other as it was; an existing destination needs
    # REPLACE; a key still loading (LOADCHUNK) is copied as what it received.
    r = server.client()
    populate(r)
    for key, kind in [(k, "BF") for k in BLOOM_KEYS] + [(k, "CF") for k in CUCKOO_KEYS]:
        assert r.copy(key, key + ":copy") is True
        assert r.dump(key + ":copy") == r.dump(key)
        assert r.execute_command(f"{kind}.INFO", key + ":copy") == \
            r.execute_command(f"{kind}.INFO", key)
        before = r.dump(key)
        r.execute_command(f"{kind}.ADD", key + ":copy", "only-in-the-copy")
        assert r.dump(key) == before
        assert r.execute_command(f"{kind}.EXISTS", key + ":copy", "only-in-the-copy") == 1
        assert r.copy(key, key + ":copy") is False
        assert r.copy(key, key + ":copy", replace=True) is True
        assert r.dump(key + ":copy") == before
    assert_items_present(r)
    it, first = r.execute_command("BF.SCANDUMP", "bf:grown", 0)
    assert r.execute_command("BF.LOADCHUNK", "loading", it, first) == b"OK"
    assert r.copy("loading", "loading:copy") is True
    assert r.dump("loading:copy") == r.dump("loading")


def test_unlink_of_a_large_filter_frees_it_in_the_background(server):
    # A value whose free effort passes Redis's lazy-free threshold (64) goes to the background
    # thread (INFO memory lazyfreed_objects); a small one is freed at once.
    r = server.client()
    r.execute_command("BF.RESERVE", "small", "0.01", "1000")
    r.execute_command("BF.RESERVE", "large", "0.01", "80000000", "NONSCALING")  # about 96 MB

    def lazyfreed():
        return r.info("memory")["lazyfreed_objects"]

    before = lazyfreed()
    assert r.unlink("small") == 1
    assert lazyfreed() == before
    assert r.unlink("large") == 1
    wait_for(lambda: lazyfreed() == before + 1, "the large filter freed in the background")


def crc64_jones(data):
    """Redis's CRC-64 (Jones, reflected, polynomial 0xad93d23594c935a9): a DUMP payload's last 8
    bytes, little-endian, over the bytes before them (src/crc64.c in the redis source)."""
    crc = 0
    for b in data:
        crc = CRC64_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _crc64_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x95AC9329AC4BC9B5 if c & 1 else 0)
        table.append(c)
    return table


CRC64_TABLE = _crc64_table()


def with_checksum(body):
    """A RESTORE payload of `body` (type, value, RDB version) and its valid checksum."""
    return body + crc64_jones(body).to_bytes(8, "little")


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_restore_of_changed_payloads_never_crashes(server, kind):
    # RESTORE hands a client's bytes to the module's RDB loading once their checksum holds: each
    # byte of the value changed (so lengths, counts and claims of gigabytes too), and the value cut
    # short, are refused or make a filter that answers; the server stays up and never loses the
    # key it had.
    r = server.client()
    if kind == "bf":
        r.execute_command("BF.RESERVE", "src", "0.01", "100", "EXPANSION", "2")
        bulk(r, "BF.MADD", "src", PRESENT[:400])
        commands = ("BF.EXISTS", "BF.INFO", "BF.ADD")
    else:
        r.execute_command("CF.RESERVE", "src", "100", "EXPANSION", "2")
        bulk(r, "CF.INSERT", "src", PRESENT[:300], prefix_args=("ITEMS",))
        commands = ("CF.EXISTS", "CF.INFO", "CF.ADD")
    payload = r.dump("src")
    assert with_checksum(payload[:-8]) == payload, "the checksum is Redis's"
    body = payload[:-8]
    value_end = len(body) - 2  # the RDB version's 2 bytes close the body
    flipped = []
    for at in range(9, value_end):  # past the type byte and the module's 8-byte id
        for xor in (0x01, 0x80, 0xFF):
            flipped.append(body[:at] + bytes([body[at] ^ xor]) + body[at + 1:])
    cut = [body[:end] + body[value_end:] for end in range(10, value_end, 7)]
    refused = 0
    for i, candidate in enumerate(flipped + cut):
        try:
            r.restore("dst", 0, with_checksum(candidate), replace=True)
        except redis.ResponseError:
            refused += 1
            continue
        assert i < len(flipped), f"a value cut at {i - len(flipped)} was accepted"
        r.execute_command(commands[0], "dst", "probe")  # a body's bits may be anything
        r.execute_command(commands[1], "dst")
        r.execute_command(commands[2], "dst", f"added-{i}")
    assert r.ping()
    assert refused > len(cut), "no changed byte was refused"
    assert bulk(r, commands[0].replace("EXISTS", "MEXISTS"), "src", PRESENT[:300]) == [1] * 300
    r.delete("src", "dst")


# ---------------------------------------------------------------------------------------------
# AOF

@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_rewrite_then_restart(redis_launcher, preamble):
    server = redis_launcher("--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
    r = server.client()
    populate(r)
    bgrewriteaof(r)
    # writes after the rewrite go to the incremental AOF and must replay on top of it
    more = items("late", 3000)
    bulk(r, "BF.MADD", "bf:grown", more)
    bulk(r, "CF.INSERT", "cf:grown", more, prefix_args=("ITEMS",))
    before = state(r)
    r.close()
    server.restart()
    r = server.client()
    assert r.dbsize() == len(BLOOM_KEYS) + len(CUCKOO_KEYS)
    assert_same_state(before, state(r))
    assert_items_present(r)
    assert bulk(r, "BF.MEXISTS", "bf:grown", more).count(1) == len(more)
    assert bulk(r, "CF.MEXISTS", "cf:grown", more).count(1) == len(more)


def test_aof_replay_without_rewrite(redis_launcher):
    # Every write command replays from the AOF: RESERVE with options, ADD, MADD, INSERT (with its
    # creation options), ADDNX, INSERTNX, DEL.
    server = redis_launcher("--appendonly", "yes")
    r = server.client()
    r.execute_command("BF.RESERVE", "bf:r", "0.001", "500", "EXPANSION", "3")
    r.execute_command("BF.ADD", "bf:r", "a")
    bulk(r, "BF.MADD", "bf:r", items("x", 2000))
    r.execute_command("BF.INSERT", "bf:i", "CAPACITY", "300", "ERROR", "0.02", "EXPANSION", "4",
                      "ITEMS", *items("y", 1000))
    r.execute_command("BF.INSERT", "bf:n", "CAPACITY", "50", "NONSCALING", "ITEMS", *items("z", 30))
    r.execute_command("CF.RESERVE", "cf:r", "500", "BUCKETSIZE", "3", "MAXITERATIONS", "40",
                      "EXPANSION", "2")
    r.execute_command("CF.ADD", "cf:r", "a")
    r.execute_command("CF.ADDNX", "cf:r", "a")
    r.execute_command("CF.ADDNX", "cf:r", "b")
    r.execute_command("CF.INSERT", "cf:r", "ITEMS", *items("x", 2000))
    r.execute_command("CF.INSERTNX", "cf:i", "CAPACITY", "5000", "ITEMS", *items("y", 1000))
    r.execute_command("CF.DEL", "cf:r", "a")
    r.execute_command("CF.RESERVE", "cf:e", "2000", "ERROR", "0.0005")
    r.execute_command("CF.ADD", "cf:e", "q")
    probes = items("x", 2000) + items("y", 1000) + items("z", 30) + items("absent", 5000) + \
        [b"a", b"b", b"q"]
    bloom, cuckoo = ("bf:r", "bf:i", "bf:n"), ("cf:r", "cf:i", "cf:e")
    before = snapshot(r, bloom, cuckoo, probes)
    r.close()
    server.restart()
    r = server.client()
    assert_same_state(before, snapshot(r, bloom, cuckoo, probes))


def test_kill9_with_appendfsync_always_keeps_every_acknowledged_item(redis_launcher):
    server = redis_launcher("--appendonly", "yes", "--appendfsync", "always")
    r = server.client()
    populate(r)  # acknowledged, in bulk
    before = state(r)

    # Then single writes, acknowledged one by one, while the server is killed.
    acked_bf, acked_cf = [], []
    bf_ones = []  # acknowledged BF.ADDs that answered 1: each added one to BF.CARD
    stop = threading.Event()
    failure = []

    def writer():
        c = server.client(socket_timeout=10)
        i = 0
        try:
            while not stop.is_set():
                item = f"live:{i}".encode()
                reply = c.execute_command("BF.ADD", "bf:live", item)
                assert reply in (0, 1), reply
                acked_bf.append(item)
                if reply == 1:
                    bf_ones.append(item)
                if c.execute_command("CF.ADD", "cf:live", item) == 1:
                    acked_cf.append(item)
                i += 1
        except (redis.ConnectionError, redis.TimeoutError):
            pass  # the server died under us
        except Exception as e:  # noqa: BLE001 - reported below
            failure.append(e)
        finally:
            c.close()

    t = threading.Thread(target=writer)
    t.start()
    wait_for(lambda: len(acked_cf) >= 200, "200 acknowledged writes", timeout=60)
    server.kill9()
    stop.set()
    t.join(timeout=30)
    assert not failure, failure
    assert not t.is_alive()

    server.start()
    r = server.client()
    assert_same_state(before, state(r))
    assert_items_present(r)
    assert bulk(r, "BF.MEXISTS", "bf:live", acked_bf).count(1) == len(acked_bf)
    assert bulk(r, "CF.MEXISTS", "cf:live", acked_cf).count(1) == len(acked_cf)
    # The write in flight at the kill may or may not have reached the AOF: at most one more.
    assert info(r, "CF.INFO", "cf:live")["Number of items inserted"] in \
        (len(acked_cf), len(acked_cf) + 1)
    assert r.execute_command("BF.CARD", "bf:live") in (len(bf_ones), len(bf_ones) + 1)


# ---------------------------------------------------------------------------------------------
# Replication

def test_replica_answers_every_item_and_dumps_identically(redis_launcher):
    primary = redis_launcher(name="primary")
    p = primary.client()
    half = len(PRESENT) // 2
    populate(p, PRESENT[:half])  # before the replica: reaches it by full sync (RDB)

    replica = redis_launcher("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    s = replica.client()
    wait_for(lambda: s.info("replication").get("master_link_status") == "up",
             "the replica's link to be up", timeout=30)

    # after the sync: reaches it as the command stream
    rest = PRESENT[half:]
    bulk(p, "BF.MADD", "bf:grown", rest)
    bulk(p, "CF.INSERT", "cf:grown", rest[:5000], prefix_args=("ITEMS",))
    p.execute_command("BF.INSERT", "bf:late", "CAPACITY", "200", "ERROR", "0.001",
                      "ITEMS", *items("late", 1000))
    p.execute_command("CF.INSERTNX", "cf:late", "CAPACITY", "300", "ITEMS", *items("late", 1000))
    for item in PRESENT[1000:1100]:
        p.execute_command("CF.DEL", "cf:deleted", item)
    assert p.execute_command("WAIT", 1, 10000) >= 1

    bloom = BLOOM_KEYS + ("bf:late",)
    cuckoo = CUCKOO_KEYS + ("cf:late",)
    probes = PRESENT + items("late", 1000) + ABSENT[:5000]
    on_primary = snapshot(p, bloom, cuckoo, probes)
    on_replica = snapshot(s, bloom, cuckoo, probes)
    assert_same_state(on_primary, on_replica)
    assert sorted(s.keys()) == sorted(p.keys())

    # every item answers 1 on the replica
    assert bulk(s, "BF.MEXISTS", "bf:grown", PRESENT).count(1) == len(PRESENT)
    assert bulk(s, "CF.MEXISTS", "cf:grown", PRESENT[:half] + rest[:5000]).count(1) == \
        half + 5000
    assert bulk(s, "BF.MEXISTS", "bf:late", items("late", 1000)).count(1) == 1000
    assert bulk(s, "CF.MEXISTS", "cf:late", items("late", 1000)).count(1) == 1000
    assert s.execute_command("BF.EXISTS", "bf:grown", PRESENT[-1]) == 1
    assert s.execute_command("CF.COUNT", "cf:grown", PRESENT[0]) >= 1

    # a replica refuses writes (the commands are flagged as writes)
    with pytest.raises(redis.ReadOnlyError):
        s.execute_command("BF.ADD", "bf:grown", "on-replica")
    with pytest.raises(redis.ReadOnlyError):
        s.execute_command("CF.ADD", "cf:grown", "on-replica")
    s.close()
    p.close()
