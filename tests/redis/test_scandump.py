# SPDX-License-Identifier: Apache-2.0
# BF.SCANDUMP / BF.LOADCHUNK and CF.SCANDUMP / CF.LOADCHUNK, against RedisBloom's public pages:
#   BF.SCANDUMP   https://redis.io/docs/latest/commands/bf.scandump/
#   CF.SCANDUMP   https://redis.io/docs/latest/commands/cf.scandump/
#                 - "The first time this command is called, the value of iter should be 0";
#                   "returns successive (iter, data) pairs until (0, NULL) to indicate
#                   completion" (BF's example ends with 0, "", CF's with 0, nil); an error for a
#                   missing key or another type's key; the example's first chunk has iterator 1.
#   BF.LOADCHUNK  https://redis.io/docs/latest/commands/bf.loadchunk/
#   CF.LOADCHUNK  https://redis.io/docs/latest/commands/cf.loadchunk/
#                 - OK; "This command overwrites the ... filter stored under key"; an error for
#                   "invalid arguments, wrong key type, or when invalid data was passed"; the
#                   pages' Python loop loads every (iter, data) pair but the closing one.
# Beyond the pages, from the brief: garbage bytes, truncated chunks and wrong iterators are
# refused with an error, leave the key as it was (or absent), and the server stays up.
import random
import struct

import pytest
import redis

from sfhelpers import bulk, events_of, expect_error, items, loadchunks, pairs, scandump

PRESENT = items("p", 10_000)
ABSENT = items("a", 10_000)

KINDS = {
    "bf": dict(scandump="BF.SCANDUMP", loadchunk="BF.LOADCHUNK", info="BF.INFO",
               mexists="BF.MEXISTS", add="BF.ADD"),
    "cf": dict(scandump="CF.SCANDUMP", loadchunk="CF.LOADCHUNK", info="CF.INFO",
               mexists="CF.MEXISTS", add="CF.ADD"),
}


def make_bloom(r, key, shape):
    """A Bloom filter of the given shape at key; returns the items it holds."""
    if shape == "one":
        r.execute_command("BF.ADD", key, "item1")
        return [b"item1"]
    if shape == "grown":
        r.execute_command("BF.RESERVE", key, "0.01", "1000", "EXPANSION", "2")
    elif shape == "nonscaling":
        r.execute_command("BF.RESERVE", key, "0.001", "20000", "NONSCALING")
    elif shape == "large":
        r.execute_command("BF.RESERVE", key, "0.0001", "200000")
    elif shape == "huge":  # a dump of three 16 MiB chunks
        r.execute_command("BF.RESERVE", key, "0.01", "25000000")
    bulk(r, "BF.MADD", key, PRESENT)
    if shape == "grown":
        assert int(r.execute_command("BF.INFO", key, "FILTERS")[0]) > 2
    return PRESENT


def make_cuckoo(r, key, shape):
    """A cuckoo filter of the given shape at key; returns the items it holds."""
    if shape == "one":
        r.execute_command("CF.ADD", key, "item1")
        return [b"item1"]
    if shape == "grown":
        r.execute_command("CF.RESERVE", key, "1000", "EXPANSION", "2", "BUCKETSIZE", "4",
                          "MAXITERATIONS", "50")
    elif shape == "deleted":
        r.execute_command("CF.RESERVE", key, "20000")
    elif shape == "error":
        r.execute_command("CF.RESERVE", key, "20000", "ERROR", "0.0001")
    elif shape == "huge":  # a dump of three 16 MiB chunks: 34 MB, 11-bit fingerprints in
        r.execute_command("CF.RESERVE", key, "26000000")  # semi-sorted buckets, 10 bits a slot
    bulk(r, "CF.INSERT", key, PRESENT, prefix_args=("ITEMS",))
    if shape == "deleted":
        pipe = r.pipeline(transaction=False)
        for item in PRESENT[:2000]:
            pipe.execute_command("CF.DEL", key, item)
        assert pipe.execute() == [1] * 2000
        return PRESENT[2000:]
    return PRESENT


def make(r, kind, key, shape):
    return (make_bloom if kind == "bf" else make_cuckoo)(r, key, shape)


def huge_dump(r, kind):
    """A "huge" filter at "src" (a dump of three 16 MiB chunks): its items and its chunks."""
    present = make(r, kind, "src", "huge")
    chunks = scandump(r, KINDS[kind]["scandump"], "src")
    assert len(chunks) >= 3, "a dump of 34 MB came in fewer than three chunks"
    return present, chunks


def info_without_size(r, kind, key):
    fields = pairs(r.execute_command(KINDS[kind]["info"], key))
    del fields["Size"]  # compared on its own: test_restored_filter_reports_the_same_size
    return fields


def assert_same_filter(r, kind, src, dst, present):
    k = KINDS[kind]
    assert info_without_size(r, kind, dst) == info_without_size(r, kind, src)
    assert bulk(r, k["mexists"], dst, present) == [1] * len(present)
    assert bulk(r, k["mexists"], dst, ABSENT) == bulk(r, k["mexists"], src, ABSENT)
    assert r.dump(dst) == r.dump(src)


def assert_up(r):
    assert r.ping()


# ---------------------------------------------------------------------------------------------
# Round trips

@pytest.mark.parametrize("kind,shape", [("bf", "one"), ("bf", "grown"), ("bf", "nonscaling"),
                                        ("bf", "large"), ("bf", "huge"), ("cf", "one"),
                                        ("cf", "grown"), ("cf", "deleted"), ("cf", "error"),
                                        ("cf", "huge")])
def test_round_trip_into_a_new_key(r, kind, shape):
    k = KINDS[kind]
    present = make(r, kind, "src", shape)
    chunks = scandump(r, k["scandump"], "src")
    assert chunks, "SCANDUMP returned no chunk"
    # Iterators are opaque to clients (the pages' examples happen to start at 1): all that is
    # asked is that none is 0 (which ends the scan) and none comes twice.
    assert all(it > 0 for it, _ in chunks)
    assert len({it for it, _ in chunks}) == len(chunks), "an iterator came twice"
    if shape == "huge":
        assert len(chunks) >= 3, "a dump of 34 MB came in fewer than three chunks"
    loadchunks(r, k["loadchunk"], "dst", chunks)
    assert_same_filter(r, kind, "src", "dst", present)
    # the copy is a live filter: it takes items, independently of the source
    assert r.execute_command(k["add"], "dst", "only-in-dst") == 1
    assert r.execute_command(k["mexists"], "dst", "only-in-dst") == [1]
    assert r.dump("dst") != r.dump("src")


@pytest.mark.parametrize("kind,shape", [("bf", "grown"), ("bf", "huge"), ("cf", "grown"),
                                        ("cf", "huge")])
def test_restored_filter_reports_the_same_size(r, kind, shape):
    # BF.INFO / CF.INFO Size, "number of bytes allocated": a restored filter is the same filter,
    # and neither the scan nor the load should leave buffers behind once they are finished.
    k = KINDS[kind]
    make(r, kind, "src", shape)
    size = pairs(r.execute_command(k["info"], "src"))["Size"]
    loadchunks(r, k["loadchunk"], "dst", scandump(r, k["scandump"], "src"))
    assert pairs(r.execute_command(k["info"], "src"))["Size"] == size, "the scan left a buffer"
    assert pairs(r.execute_command(k["info"], "dst"))["Size"] == size, "the load left a buffer"


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_scandump_is_repeatable(r, kind):
    k = KINDS[kind]
    make(r, kind, "src", "grown")
    assert scandump(r, k["scandump"], "src") == scandump(r, k["scandump"], "src")


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_loadchunk_overwrites_an_existing_filter(r, kind):
    k = KINDS[kind]
    present = make(r, kind, "src", "grown")
    make(r, kind, "dst", "one")
    loadchunks(r, k["loadchunk"], "dst", scandump(r, k["scandump"], "src"))
    assert_same_filter(r, kind, "src", "dst", present)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_restore_survives_debug_reload(r, kind):
    k = KINDS[kind]
    present = make(r, kind, "src", "grown")
    loadchunks(r, k["loadchunk"], "dst", scandump(r, k["scandump"], "src"))
    r.execute_command("DEBUG", "RELOAD")
    assert_same_filter(r, kind, "src", "dst", present)


def client_round_trip(helper, src, dst):
    """SCANDUMP of src and LOADCHUNK into dst through python3-redis's own helper methods."""
    chunks, it = [], 0
    while True:
        it, data = helper.scandump(src, it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        assert helper.loadchunk(dst, it, data) == b"OK"


def test_python_client_scandump_and_loadchunk(server):
    c = server.client()
    bf = c.bf()
    bf.create("src", 0.01, 1000)
    bf.madd("src", *PRESENT[:3000])
    client_round_trip(bf, "src", "dst")
    assert bf.mexists("dst", *PRESENT[:3000]) == [1] * 3000
    assert c.dump("dst") == c.dump("src")
    cf = c.cf()
    cf.create("csrc", 5000)
    cf.insert("csrc", PRESENT[:3000])
    client_round_trip(cf, "csrc", "cdst")
    assert cf.mexists("cdst", *PRESENT[:3000]) == [1] * 3000
    assert c.dump("cdst") == c.dump("csrc")
    c.close()


# ---------------------------------------------------------------------------------------------
# SCANDUMP errors

@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_scandump_errors(r, kind):
    k = KINDS[kind]
    expect_error(r, k["scandump"], "nokey", 0)
    make(r, kind, "src", "one")
    expect_error(r, k["scandump"], "src", "abc")
    expect_error(r, k["scandump"], "src")
    expect_error(r, k["scandump"], "src", 0, "extra")
    # an iterator no SCANDUMP gave: an error or a well-formed reply, and the server stays up
    for bogus in (-1, 999_999_999, 2 ** 63 - 1):
        try:
            reply = r.execute_command(k["scandump"], "src", bogus)
        except redis.ResponseError:
            continue
        assert isinstance(reply, list) and len(reply) == 2 and isinstance(reply[0], int)
    assert_up(r)


# ---------------------------------------------------------------------------------------------
# Hostile LOADCHUNKs

def garbage_payloads(chunks, other_kind_first_chunk):
    """Bytes that are no prefix of any dump of this kind."""
    rnd = random.Random(1234)
    first = chunks[0][1]
    return {
        "empty": b"",
        "one byte": b"\x01",
        "random 100": rnd.randbytes(100),
        "random 1M": rnd.randbytes(1 << 20),
        "first chunk reversed": first[::-1],
        "zeros like first": bytes(len(first)),
        "ones like first": b"\xff" * len(first),
        "other type's first chunk": other_kind_first_chunk,
    }


def first_chunk_iterators(chunks, data):
    """The iterators a first chunk could come with: the one SCANDUMP gave the real first chunk,
    1 (the pages' examples), and the one a first chunk of len(data) bytes would have if an
    iterator is 1 + the offset after the chunk."""
    return sorted({chunks[0][0], 1, len(data) + 1})


def other_kind(kind):
    return "cf" if kind == "bf" else "bf"


def hostile_first_chunks(r, kind):
    k = KINDS[kind]
    make(r, kind, "src", "grown")
    make(r, other_kind(kind), "other", "one")
    chunks = scandump(r, k["scandump"], "src")
    other_first = scandump(r, KINDS[other_kind(kind)]["scandump"], "other")[0][1]
    out = []
    for name, data in garbage_payloads(chunks, other_first).items():
        out += [(name, it, data) for it in first_chunk_iterators(chunks, data)]
    # a complete dump with bytes after its end
    it, first = chunks[0]
    if len(chunks) == 1:
        out += [("dump + junk", i, first + b"junk") for i in (it, it + 4, 1)]
    # truncated: the first chunk's prefixes, with the iterator SCANDUMP gave it (or 1)
    for cut in sorted({1, 3, 4, 5, 23, 24, 25, 50, 87, 88, 89, len(first) // 2, len(first) - 1}):
        if cut < len(first):
            out += [(f"first chunk cut to {cut}", i, first[:cut]) for i in (it, 1)]
    return out


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_garbage_or_truncated_first_chunk_into_a_missing_key(r, kind):
    k = KINDS[kind]
    for name, it, data in hostile_first_chunks(r, kind):
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", it, data)
        assert r.exists("dst") == 0, f"{name} at iterator {it}: a refused chunk left a key"
        assert_up(r)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_garbage_or_truncated_first_chunk_leaves_an_existing_filter_unchanged(r, kind):
    k = KINDS[kind]
    present = make(r, kind, "dst", "grown")
    dump = r.dump("dst")
    for name, it, data in hostile_first_chunks(r, kind):
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", it, data)
        assert r.dump("dst") == dump, f"{name} at iterator {it}: a refused chunk changed the filter"
        assert_up(r)
    assert bulk(r, k["mexists"], "dst", present) == [1] * len(present)


def test_a_dumps_cuckoo_fields_load_as_they_are_and_info_answers_them_as_integers(r):
    # CF.INFO only reports them, and RDB files of earlier releases must load whatever they hold
    # (redis/dump_format.h): a count of deletions past 2^63 - 1 is answered as 2^63 - 1.
    r.execute_command("CF.ADD", "src", "item")
    (it, first), = scandump(r, "CF.SCANDUMP", "src")
    crafted = first[:6] + struct.pack("<HI", 0, 0) + first[12:16] + struct.pack("<Q", 2**64 - 1) + first[24:]
    assert r.execute_command("CF.LOADCHUNK", "dst", it, crafted) == b"OK"
    fields = pairs(r.execute_command("CF.INFO", "dst"))
    assert fields["Number of items deleted"] == 2**63 - 1
    assert fields["Bucket size"] == 0
    assert r.execute_command("CF.EXISTS", "dst", "item") == 1
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert r.execute_command("CF.EXISTS", "dst", "item") == 1


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_chunk_with_extra_bytes_is_refused(r, kind):
    k = KINDS[kind]
    present, chunks = huge_dump(r, kind)
    last_it, last = chunks[-1]
    loadchunks(r, k["loadchunk"], "dst", chunks[:-1])
    for bad_it, bad in ((last_it, last + b"\x00"), (last_it + 1, last + b"\x00"),
                        (last_it + 8, last + b"8 bytes!")):
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", bad_it, bad)
        assert_up(r)
    # the restore in progress is as it was: the right last chunk still completes it
    assert r.execute_command(k["loadchunk"], "dst", last_it, last) == b"OK"
    assert_same_filter(r, kind, "src", "dst", present)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_bad_chunks_mid_restore_are_refused_and_change_nothing(r, kind):
    k = KINDS[kind]
    present, chunks = huge_dump(r, kind)
    lc = k["loadchunk"]
    assert r.execute_command(lc, "dst", *chunks[0]) == b"OK"
    for i in range(1, len(chunks)):
        it, data = chunks[i]
        hostile = []
        if len(data) > 1:
            hostile += [(it, data[:-1]), (it, data[: len(data) // 2])]     # truncated
        hostile += [(it + 1, data), (it - 1, data), (0, data), (-1, data),    # wrong iterators
                    (1, data), (2 ** 63 - 1, data), (it + (1 << 32), data)]
        if i >= 2:
            # a data chunk again (the first chunk again may restart the load: RedisBloom's
            # BF.LOADCHUNK with the first chunk creates the filter anew)
            hostile.append(chunks[i - 1])
        if i + 1 < len(chunks):
            hostile.append((chunks[i + 1][0], data))   # the next chunk's iterator
        for bad_it, bad_data in hostile:
            with pytest.raises(redis.ResponseError):
                r.execute_command(lc, "dst", bad_it, bad_data)
            assert_up(r)
        assert r.execute_command(lc, "dst", it, data) == b"OK", f"chunk {i} after refusals"
    assert_same_filter(r, kind, "src", "dst", present)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_data_chunk_without_a_first_chunk_is_refused(r, kind):
    k = KINDS[kind]
    _, chunks = huge_dump(r, kind)
    for it, data in chunks[1:]:
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", it, data)
        assert r.exists("dst") == 0
    assert_up(r)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_wrong_iterators_leave_a_complete_filter_unchanged(r, kind):
    k = KINDS[kind]
    make(r, kind, "src", "grown")
    present = make(r, kind, "dst", "one")
    dump = r.dump("dst")
    chunks = scandump(r, k["scandump"], "src")
    data = chunks[-1][1]
    for bad_it in (0, -1, -(2 ** 63), 2 ** 63 - 1, "abc", "1.5", ""):
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", bad_it, data)
        assert r.dump("dst") == dump
    for bad_it in (2 ** 64, "9" * 30):
        with pytest.raises(redis.ResponseError):
            r.execute_command(k["loadchunk"], "dst", bad_it, chunks[0][1])
        assert r.dump("dst") == dump
    assert r.execute_command(k["mexists"], "dst", *present) == [1] * len(present)
    assert_up(r)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_loadchunk_wrong_arity(r, kind):
    lc = KINDS[kind]["loadchunk"]
    for args in ([], ["k"], ["k", 1], ["k", 1, b"x", b"y"]):
        expect_error(r, lc, *args, contains="wrong number of arguments")
    assert r.exists("k") == 0


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_first_chunk_with_flipped_bytes_never_crashes(r, kind):
    # Each byte of the first chunk inverted in turn: the chunk is refused (and no key is left), or
    # accepted as some other valid filter; either way the rest of the restore, queries, DUMP and
    # DEBUG RELOAD work or answer errors, and the server stays up.
    k = KINDS[kind]
    make(r, kind, "src", "one")
    chunks = scandump(r, k["scandump"], "src")
    first = chunks[0][1]
    accepted = 0
    for pos in range(min(len(first), 160)):
        for flip in (0xFF, 0x01, 0x80):
            data = bytearray(first)
            data[pos] ^= flip
            try:
                r.execute_command(k["loadchunk"], "dst", 1, bytes(data))
            except redis.ResponseError:
                assert r.exists("dst") == 0, f"byte {pos} ^ {flip:#x}: refused but left a key"
                continue
            accepted += 1
            for it, rest in chunks[1:]:
                try:
                    r.execute_command(k["loadchunk"], "dst", it, rest)
                except redis.ResponseError:
                    break
            for cmd in ([k["mexists"], "dst", "item1", "zzz"], [k["info"], "dst"],
                        [k["add"], "dst", "new"], ["DUMP", "dst"]):
                try:
                    r.execute_command(*cmd)
                except redis.ResponseError:
                    pass
            assert_up(r)
            r.delete("dst")
    r.execute_command("DEBUG", "RELOAD")
    assert_up(r)
    assert accepted < 3 * min(len(first), 160), "every corrupted first chunk was accepted"


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_random_data_chunks_never_crash(r, kind):
    # Random bytes of a data chunk's length, at the right iterators: a Bloom filter's bits can be
    # anything, so they may be taken; whatever the module answers, it must not fall over.
    k = KINDS[kind]
    _, chunks = huge_dump(r, kind)
    rnd = random.Random(99)
    for trial in range(3):
        key = f"dst{trial}"
        r.execute_command(k["loadchunk"], key, *chunks[0])
        for it, data in chunks[1:]:
            try:
                r.execute_command(k["loadchunk"], key, it, rnd.randbytes(len(data)))
            except redis.ResponseError:
                break
        for cmd in ([k["mexists"], key, *PRESENT[:100]], [k["info"], key], [k["add"], key, "x"],
                    ["DUMP", key]):
            try:
                r.execute_command(*cmd)
            except redis.ResponseError:
                pass
        assert_up(r)
    r.execute_command("DEBUG", "RELOAD")
    assert_up(r)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_abandoned_restore_is_safe_and_can_be_restarted(r, kind):
    # A restore stopped after its first chunk: commands on the key, DUMP and DEBUG RELOAD answer
    # without bringing the server down, and loading from the first chunk again restores it.
    k = KINDS[kind]
    present, chunks = huge_dump(r, kind)
    assert r.execute_command(k["loadchunk"], "dst", *chunks[0]) == b"OK"
    for cmd in ([k["mexists"], "dst", *present[:10]], [k["info"], "dst"], ["DUMP", "dst"],
                [k["scandump"], "dst", 0]):
        try:
            r.execute_command(*cmd)
        except redis.ResponseError:
            pass
        assert_up(r)
    try:
        r.execute_command("DEBUG", "RELOAD")
    except redis.ResponseError:
        pass
    assert_up(r)
    loadchunks(r, k["loadchunk"], "dst", chunks)
    assert_same_filter(r, kind, "src", "dst", present)


def test_a_filter_over_512_mib_moves_in_pieces(r):
    # Issue 64: SCANDUMP/LOADCHUNK round trips for filters over 512 MiB, the most one Redis
    # string (and one bulk argument) holds. 450M items at 1%: about 540 MB in one key, moved
    # piece by piece (at most 16 MiB each), streamed so that the test holds one piece at a time.
    r.execute_command("BF.RESERVE", "big", "0.01", "450000000", "NONSCALING")
    size = pairs(r.execute_command("BF.INFO", "big"))["Size"]
    assert size > 512 * 1024 * 1024, size
    r.execute_command("BF.MADD", "big", *PRESENT)
    it, pieces = 0, 0
    while True:
        it, data = r.execute_command("BF.SCANDUMP", "big", it)
        if it == 0:
            break
        assert len(data) <= 16 * 1024 * 1024
        assert r.execute_command("BF.LOADCHUNK", "copy", it, data) == b"OK"
        pieces += 1
    assert pieces >= 32
    assert r.execute_command("BF.MEXISTS", "copy", *PRESENT) == [1] * len(PRESENT)
    assert pairs(r.execute_command("BF.INFO", "copy")) == pairs(r.execute_command("BF.INFO", "big"))
    r.delete("big", "copy")


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_a_write_during_a_scan_makes_it_restart(r, kind):
    # A scan reads the filter as it was at iterator 0; after a write, its next call answers an
    # error instead of pieces of another state, and a scan started again at 0 completes.
    k = KINDS[kind]
    present = make(r, kind, "src", "huge")
    it, first = r.execute_command(k["scandump"], "src", 0)
    assert it != 0 and first
    r.execute_command(k["add"], "src", "written-during-the-scan")
    expect_error(r, k["scandump"], "src", it, contains="restart")
    loadchunks(r, k["loadchunk"], "dst", scandump(r, k["scandump"], "src"))
    assert bulk(r, k["mexists"], "dst", present + ["written-during-the-scan"]) == \
        [1] * (len(present) + 1)


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_scans_side_by_side_and_a_write_between_them(r, kind):
    # Two scans of one key, interleaved, each give the whole dump. A write, then a scan begun after
    # it: the older scan's next call is refused (its iterator names the state it began on), the
    # newer one completes with the write in it.
    k = KINDS[kind]
    present = make(r, kind, "src", "huge")
    whole = scandump(r, k["scandump"], "src")
    a_it, a_first = r.execute_command(k["scandump"], "src", 0)
    b_it, b_first = r.execute_command(k["scandump"], "src", 0)
    assert (a_it, a_first) == (b_it, b_first) == whole[0]
    for it, data in whole[1:]:
        a_it, a_data = r.execute_command(k["scandump"], "src", a_it)
        b_it, b_data = r.execute_command(k["scandump"], "src", b_it)
        assert (a_it, a_data) == (b_it, b_data) == (it, data)
    assert r.execute_command(k["scandump"], "src", a_it)[0] == 0

    old_it, _ = r.execute_command(k["scandump"], "src", 0)
    r.execute_command(k["add"], "src", "written-between-the-scans")
    new_chunks = [r.execute_command(k["scandump"], "src", 0)]
    expect_error(r, k["scandump"], "src", old_it, contains="restart")
    while True:
        it, data = r.execute_command(k["scandump"], "src", new_chunks[-1][0])
        if it == 0:
            break
        new_chunks.append((it, data))
    loadchunks(r, k["loadchunk"], "dst", new_chunks)
    assert bulk(r, k["mexists"], "dst", present + ["written-between-the-scans"]) == \
        [1] * (len(present) + 1)
    r.delete("src", "dst")


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_a_scan_keeps_no_copy_of_the_dump(r, kind):
    # Each piece is made when it is asked for: a scan left half done holds no memory.
    k = KINDS[kind]
    make(r, kind, "src", "huge")
    before = r.memory_usage("src")
    chunks = scandump(r, k["scandump"], "src")
    assert len(chunks) >= 2
    r.execute_command(k["scandump"], "src", 0)
    assert r.memory_usage("src") == before
    r.delete("src")


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_a_dump_whose_filters_do_not_fit_its_header_is_given_up(r, kind):
    # The first piece's chain header says another error rate: every piece is taken (each check a
    # piece can meet holds), and the last, which shows the filters are not the header's, answers
    # an error and deletes the key; a load from the first piece again then works.
    k = KINDS[kind]
    present, chunks = huge_dump(r, kind)
    r.config_set("notify-keyspace-events", "Eg")
    pubsub = r.pubsub()
    pubsub.psubscribe("__keyevent@0__:*")
    it, first = chunks[0]
    changed = bytearray(first)
    changed[24 + 8 + 7] ^= 0x01  # the chain header's fp_rate, its top byte
    assert r.execute_command(k["loadchunk"], "dst", it, bytes(changed)) == b"OK"
    for it, data in chunks[1:-1]:
        assert r.execute_command(k["loadchunk"], "dst", it, data) == b"OK"
    expect_error(r, k["loadchunk"], "dst", *chunks[-1], contains="start again")
    assert r.exists("dst") == 0
    # Each piece taken notifies its command; the one that gives the dump up, "del".
    assert events_of(pubsub) == [(k["loadchunk"].lower(), "dst")] * (len(chunks) - 1) + [("del", "dst")]
    pubsub.close()
    loadchunks(r, k["loadchunk"], "dst", chunks)
    assert_same_filter(r, kind, "src", "dst", present)
    r.delete("src", "dst")
