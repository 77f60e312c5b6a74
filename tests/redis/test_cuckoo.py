# SPDX-License-Identifier: Apache-2.0
# CF.* commands of the module, against RedisBloom's public command documentation:
#   CF.RESERVE   https://redis.io/docs/latest/commands/cf.reserve/
#                - OK; "(error) ERR item exists" for an existing key (its example); BUCKETSIZE "an
#                  integer between 1 and 255", default 2; MAXITERATIONS "between 1 and 65535",
#                  default 20; EXPANSION "between 0 and 32768", default 1; "The minimal false
#                  positive error rate is 2/255 ≈ 0.78% when bucket size of 1 is used. Larger
#                  buckets increase the error rate linearly".
#                  ERROR <rate> is this module's extension (the brief): it sizes the fingerprints.
#   CF.ADD       https://redis.io/docs/latest/commands/cf.add/     - 1; the same item can be added
#                  again (example 1, 1); a missing key is created; an error "when the filter is
#                  full".
#   CF.ADDNX     https://redis.io/docs/latest/commands/cf.addnx/   - 1, then 0 (its example).
#   CF.INSERT    https://redis.io/docs/latest/commands/cf.insert/
#                - array of 1, or -1 "when the item cannot be added because the filter is full";
#                  default capacity 1024; CAPACITY ignored for an existing filter; NOCREATE on a
#                  missing key: "(error) ERR not found" (its example); NOCREATE "mutually
#                  exclusive with CAPACITY".
#   CF.INSERTNX  https://redis.io/docs/latest/commands/cf.insertnx/ - [1, 1] then [0, 0, 1] (its
#                  example); NOCREATE on a missing key: "(error) ERR not found".
#   CF.EXISTS    https://redis.io/docs/latest/commands/cf.exists/   - 1/0, 0 for a missing key.
#   CF.MEXISTS   https://redis.io/docs/latest/commands/cf.mexists/  - array of 1/0 (example
#                  [1, 1, 0]), 0 for a missing key.
#   CF.DEL       https://redis.io/docs/latest/commands/cf.del/      - 1 deleted, 0 not found (its
#                  example: item1 item2 item2 inserted; DEL item1 1, 0; DEL item2 1, 1, 0). A
#                  missing key is an error: the brief's reading of the page's "[] on error
#                  (invalid arguments, wrong key type, etc.)".
#   CF.COUNT     https://redis.io/docs/latest/commands/cf.count/    - 1 and 2 in its example; 0 for
#                  a missing key; an overestimate is possible, never an underestimate.
#   CF.INFO      https://redis.io/docs/latest/commands/cf.info/
#                - pairs Size, Number of buckets, Number of filters, Number of items inserted,
#                  Number of items deleted, Bucket size, Expansion rate, Max iterations; an error
#                  for a missing key. (The page's example spells two names "Number of filter" and
#                  "Max iteration"; the names here are the brief's and python3-redis's CFInfo's.)
#   Error texts: https://redis.io/docs/latest/develop/reference/errors/all/probabilistic/ (item
#   exists, key not found, filter full); the tests match "item exists", "not found" (the pages'
#   examples) and "full", no more.
#   WRONGTYPE: the brief asks it of every command. (CF.EXISTS / CF.MEXISTS pages instead say 0
#   for "key contains a value of the wrong type".)
import pytest
import redis

from sfhelpers import (BAD_INSERT_ARGS, assert_fields, bulk, each, expect_error, fp_limit, info,
                       items, pairs, wrong_arity)

CF_INFO_FIELDS = ["Size", "Number of buckets", "Number of filters", "Number of items inserted",
                  "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"]


# ---------------------------------------------------------------------------------------------
# CF.RESERVE

def test_reserve_defaults(r):
    assert r.execute_command("CF.RESERVE", "cf", "1000") == b"OK"
    reply = r.execute_command("CF.INFO", "cf")
    assert [n.decode() for n in reply[0::2]] == CF_INFO_FIELDS
    fields = pairs(reply)
    assert fields["Size"] > 0
    assert fields["Number of buckets"] > 0
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 0
    assert fields["Number of items deleted"] == 0
    assert fields["Bucket size"] == 2
    assert fields["Expansion rate"] == 1
    assert fields["Max iterations"] == 20
    assert r.type("cf") not in (b"none", b"string")


def test_reserve_options_are_reported(r):
    assert r.execute_command("CF.RESERVE", "cf", "1000", "BUCKETSIZE", "4",
                             "MAXITERATIONS", "50", "EXPANSION", "2") == b"OK"
    fields = info(r, "CF.INFO", "cf")
    assert fields["Bucket size"] == 4
    assert fields["Max iterations"] == 50
    assert fields["Expansion rate"] == 2
    assert fields["Number of filters"] == 1


def test_reserve_options_in_any_order(r):
    assert r.execute_command("CF.RESERVE", "cf", "1000", "EXPANSION", "4",
                             "MAXITERATIONS", "7", "BUCKETSIZE", "3") == b"OK"
    fields = info(r, "CF.INFO", "cf")
    assert (fields["Bucket size"], fields["Max iterations"], fields["Expansion rate"]) == (3, 7, 4)


def test_reserve_larger_capacity_takes_more_memory(r):
    r.execute_command("CF.RESERVE", "small", "1000")
    r.execute_command("CF.RESERVE", "large", "100000")
    small, large = info(r, "CF.INFO", "small"), info(r, "CF.INFO", "large")
    assert large["Size"] > small["Size"]
    assert large["Number of buckets"] > small["Number of buckets"]


@pytest.mark.parametrize("capacity,bucket_size", [(1000, 2), (1024, 2), (1000, 4), (5000, 1),
                                                  (100000, 3)])
def test_info_buckets_hold_the_capacity(r, capacity, bucket_size):
    # CF.RESERVE: "Capacity is rounded to the next 2^n number", so the table's slots, Number of
    # buckets x Bucket size in CF.INFO, are at least the capacity asked (CF.INFO's example:
    # 512 buckets of 2 for a filter of about 1000).
    r.execute_command("CF.RESERVE", "cf", str(capacity), "BUCKETSIZE", str(bucket_size))
    fields = info(r, "CF.INFO", "cf")
    assert fields["Bucket size"] == bucket_size
    assert fields["Number of buckets"] * fields["Bucket size"] >= capacity, fields


def test_reserve_existing_key_is_an_error_and_keeps_the_filter(r):
    r.execute_command("CF.RESERVE", "cf", "1000", "BUCKETSIZE", "4")
    r.execute_command("CF.ADD", "cf", "x")
    before = r.execute_command("CF.INFO", "cf")
    expect_error(r, "CF.RESERVE", "cf", "1000", contains="item exists")
    assert r.execute_command("CF.INFO", "cf") == before
    assert r.execute_command("CF.EXISTS", "cf", "x") == 1


@pytest.mark.parametrize("capacity", ["0", "-1", "abc", "1.5", "", str(2 ** 63), str(2 ** 64)])
def test_reserve_bad_capacity(r, capacity):
    expect_error(r, "CF.RESERVE", "cf", capacity)
    assert r.exists("cf") == 0
    assert r.ping()


@pytest.mark.parametrize("capacity", [str(2 ** 62), str(2 ** 63 - 1), str(10 ** 15)])
def test_impossible_capacity_is_refused_and_the_server_stays_up(r, capacity):
    # No page sets a maximum; a filter of 10^15 keys cannot be allocated anywhere, and asking for
    # one must answer an error rather than abort the server on a failed allocation.
    expect_error(r, "CF.RESERVE", "cf", capacity)
    expect_error(r, "CF.INSERT", "cf", "CAPACITY", capacity, "ITEMS", "a")
    expect_error(r, "CF.INSERTNX", "cf", "CAPACITY", capacity, "ITEMS", "a")
    assert r.exists("cf") == 0
    assert r.ping()


@pytest.mark.parametrize("option,value,ok", [
    ("BUCKETSIZE", "1", True), ("BUCKETSIZE", "255", True),
    ("BUCKETSIZE", "0", False), ("BUCKETSIZE", "256", False), ("BUCKETSIZE", "-1", False),
    ("BUCKETSIZE", "abc", False),
    ("MAXITERATIONS", "1", True), ("MAXITERATIONS", "65535", True),
    ("MAXITERATIONS", "0", False), ("MAXITERATIONS", "65536", False),
    ("MAXITERATIONS", "abc", False),
    ("EXPANSION", "0", True), ("EXPANSION", "32768", True),
    ("EXPANSION", "-1", False), ("EXPANSION", "32769", False), ("EXPANSION", "abc", False),
])
def test_reserve_option_ranges(r, option, value, ok):
    args = ["CF.RESERVE", "cf", "1000", option, value]
    if ok:
        assert r.execute_command(*args) == b"OK"
        field = {"BUCKETSIZE": "Bucket size", "MAXITERATIONS": "Max iterations",
                 "EXPANSION": "Expansion rate"}[option]
        # ("Expansion is rounded to the next 2^n number": the EXPANSION values here are 0 or
        # already powers of two, so the reported rate is the value given either way.)
        assert info(r, "CF.INFO", "cf")[field] == int(value)
    else:
        expect_error(r, *args)
        assert r.exists("cf") == 0


@pytest.mark.parametrize("tail", [["BUCKETSIZE"], ["MAXITERATIONS"], ["EXPANSION"], ["FOO"],
                                  ["BUCKETSIZE", "2", "FOO"], ["ERROR"]])
def test_reserve_bad_options(r, tail):
    expect_error(r, "CF.RESERVE", "cf", "1000", *tail)
    assert r.exists("cf") == 0


@pytest.mark.parametrize("args", [[], ["cf"]])
def test_reserve_wrong_arity(r, args):
    wrong_arity(r, "CF.RESERVE", *args)


# ERROR <rate>: this module's extension.

def test_reserve_error_extension_sizes_the_fingerprints(r):
    assert r.execute_command("CF.RESERVE", "loose", "10000", "ERROR", "0.01") == b"OK"
    assert r.execute_command("CF.RESERVE", "tight", "10000", "ERROR", "0.0001") == b"OK"
    loose, tight = info(r, "CF.INFO", "loose"), info(r, "CF.INFO", "tight")
    assert tight["Size"] > loose["Size"]
    # the other fields are those of any CF.RESERVE
    for fields in (loose, tight):
        assert fields["Bucket size"] == 2
        assert fields["Max iterations"] == 20
        assert fields["Expansion rate"] == 1
        assert fields["Number of filters"] == 1


def test_reserve_error_extension_with_the_other_options(r):
    assert r.execute_command("CF.RESERVE", "cf", "1000", "BUCKETSIZE", "4", "ERROR", "0.001",
                             "MAXITERATIONS", "30", "EXPANSION", "2") == b"OK"
    fields = info(r, "CF.INFO", "cf")
    assert (fields["Bucket size"], fields["Max iterations"], fields["Expansion rate"]) == (4, 30, 2)


@pytest.mark.parametrize("rate", ["0", "1", "-0.1", "1.5", "nan", "inf", "abc", "", "1e-12"])
def test_reserve_error_extension_bad_rate(r, rate):
    # 1e-12 would need fingerprints of more than 32 bits
    expect_error(r, "CF.RESERVE", "cf", "1000", "ERROR", rate)
    assert r.exists("cf") == 0
    assert r.ping()


def test_error_extension_false_positive_rate_within_the_requested_rate(r):
    rate, capacity, n = 0.001, 20_000, 100_000
    r.execute_command("CF.RESERVE", "cf", str(capacity), "ERROR", str(rate))
    present = items("present", capacity)
    assert set(bulk(r, "CF.INSERT", "cf", present, prefix_args=("ITEMS",))) == {1}
    assert bulk(r, "CF.MEXISTS", "cf", present).count(1) == capacity
    measured = bulk(r, "CF.MEXISTS", "cf", items("absent", n)).count(1) / n
    assert measured <= fp_limit(rate, n), f"false-positive rate {measured:.5f} for {rate}"


# ---------------------------------------------------------------------------------------------
# CF.ADD, CF.ADDNX, CF.EXISTS, CF.MEXISTS, CF.COUNT, CF.DEL

def test_add_allows_duplicates(r):
    r.execute_command("CF.RESERVE", "cf", "1000")
    assert r.execute_command("CF.ADD", "cf", "item1") == 1
    assert r.execute_command("CF.ADD", "cf", "item1") == 1
    assert r.execute_command("CF.COUNT", "cf", "item1") == 2
    assert r.execute_command("CF.EXISTS", "cf", "item1") == 1
    assert r.execute_command("CF.EXISTS", "cf", "item2") == 0
    assert info(r, "CF.INFO", "cf")["Number of items inserted"] == 2


@pytest.mark.parametrize("first", [["CF.ADD", "cf", "x"], ["CF.ADDNX", "cf", "x"],
                                   ["CF.INSERT", "cf", "ITEMS", "x"],
                                   ["CF.INSERTNX", "cf", "ITEMS", "x"]])
def test_write_to_missing_key_creates_default_filter(r, first):
    # Defaults: capacity 1024 (CF.INSERT's page), bucket size 2, max iterations 20, expansion 1.
    assert r.execute_command(*first) in (1, [1])
    r.execute_command("CF.RESERVE", "ref", "1024")
    r.execute_command("CF.ADD", "ref", "x")
    created = info(r, "CF.INFO", "cf")
    assert created == info(r, "CF.INFO", "ref")
    assert_fields(created, {"Bucket size": 2, "Max iterations": 20, "Expansion rate": 1,
                            "Number of filters": 1, "Number of items inserted": 1})
    r.execute_command("CF.RESERVE", "other", "100000")
    assert info(r, "CF.INFO", "other")["Size"] != created["Size"]


def test_addnx(r):
    assert r.execute_command("CF.ADDNX", "cf", "item") == 1
    assert r.execute_command("CF.ADDNX", "cf", "item") == 0
    assert r.execute_command("CF.COUNT", "cf", "item") == 1
    assert info(r, "CF.INFO", "cf")["Number of items inserted"] == 1


def test_exists_and_mexists(r):
    assert r.execute_command("CF.INSERT", "cf", "ITEMS", "item1", "item2") == [1, 1]
    assert r.execute_command("CF.MEXISTS", "cf", "item1", "item2", "item3") == [1, 1, 0]
    assert r.execute_command("CF.EXISTS", "cf", "item1") == 1
    assert r.execute_command("CF.EXISTS", "cf", "item3") == 0


def test_items_are_binary_safe(r):
    odd = [b"", b"\x00", b"\x00\x01\xff", b"a" * 100000, "caf\u00e9".encode()]
    assert r.execute_command("CF.INSERT", "cf", "ITEMS", *odd) == [1] * len(odd)
    assert r.execute_command("CF.MEXISTS", "cf", *odd) == [1] * len(odd)


def test_missing_key_reads_as_absent(r):
    assert r.execute_command("CF.EXISTS", "nokey", "a") == 0
    assert r.execute_command("CF.MEXISTS", "nokey", "a", "b") == [0, 0]
    assert r.execute_command("CF.COUNT", "nokey", "a") == 0
    assert r.exists("nokey") == 0


def test_count(r):
    assert r.execute_command("CF.INSERT", "cf", "ITEMS", "item1", "item2", "item2") == [1, 1, 1]
    assert r.execute_command("CF.COUNT", "cf", "item1") == 1
    assert r.execute_command("CF.COUNT", "cf", "item2") == 2
    assert r.execute_command("CF.COUNT", "cf", "item3") == 0


def test_del(r):
    assert r.execute_command("CF.INSERT", "cf", "ITEMS", "item1", "item2", "item2") == [1, 1, 1]
    assert r.execute_command("CF.DEL", "cf", "item1") == 1
    assert r.execute_command("CF.DEL", "cf", "item1") == 0
    assert r.execute_command("CF.DEL", "cf", "item2") == 1
    assert r.execute_command("CF.DEL", "cf", "item2") == 1
    assert r.execute_command("CF.DEL", "cf", "item2") == 0
    assert r.execute_command("CF.MEXISTS", "cf", "item1", "item2") == [0, 0]
    assert r.execute_command("CF.COUNT", "cf", "item2") == 0
    fields = info(r, "CF.INFO", "cf")
    assert fields["Number of items deleted"] == 3
    # RedisBloom's pages do not say whether "Number of items inserted" drops on deletion: either
    # it counts every insertion (3) or the items held now (0).
    assert fields["Number of items inserted"] in (3, 0)


def test_del_on_missing_key_is_an_error(r):
    expect_error(r, "CF.DEL", "nokey", "a")
    assert r.exists("nokey") == 0


def test_deleted_items_read_as_absent(r):
    r.execute_command("CF.RESERVE", "cf", "10000")
    keep, drop = items("keep", 2000), items("drop", 2000)
    assert set(bulk(r, "CF.INSERT", "cf", keep + drop, prefix_args=("ITEMS",))) == {1}
    assert info(r, "CF.INFO", "cf")["Number of filters"] == 1
    assert each(r, "CF.DEL", "cf", drop) == [1] * len(drop)
    assert bulk(r, "CF.MEXISTS", "cf", keep).count(1) == len(keep)
    still = bulk(r, "CF.MEXISTS", "cf", drop).count(1) / len(drop)
    # what stays is a false positive: at most the documented rate for bucket size 2, 2 x 2/255
    assert still <= fp_limit(2 * 2 / 255, len(drop)), f"{still:.4f} of deleted items remain"
    assert info(r, "CF.INFO", "cf")["Number of items deleted"] == len(drop)


# ---------------------------------------------------------------------------------------------
# CF.INSERT, CF.INSERTNX

def test_insert_capacity_applies_to_a_new_filter(r):
    assert r.execute_command("CF.INSERT", "cf", "CAPACITY", "50000", "ITEMS", "a", "b") == [1, 1]
    r.execute_command("CF.RESERVE", "ref", "50000")
    r.execute_command("CF.INSERT", "ref", "ITEMS", "a", "b")
    assert info(r, "CF.INFO", "cf") == info(r, "CF.INFO", "ref")


def test_insert_capacity_is_ignored_for_an_existing_filter(r):
    r.execute_command("CF.RESERVE", "cf", "1000")
    size = info(r, "CF.INFO", "cf")["Size"]
    assert r.execute_command("CF.INSERT", "cf", "CAPACITY", "100000", "ITEMS", "a") == [1]
    fields = info(r, "CF.INFO", "cf")
    assert fields["Size"] == size
    assert fields["Number of items inserted"] == 1


def test_insert_nocreate(r):
    expect_error(r, "CF.INSERT", "cf", "NOCREATE", "ITEMS", "a", contains="not found")
    expect_error(r, "CF.INSERT", "cf", "CAPACITY", "1000", "NOCREATE", "ITEMS", "a")
    assert r.exists("cf") == 0
    r.execute_command("CF.RESERVE", "cf", "1000")
    assert r.execute_command("CF.INSERT", "cf", "NOCREATE", "ITEMS", "a", "b") == [1, 1]
    assert r.execute_command("CF.MEXISTS", "cf", "a", "b") == [1, 1]


def test_insertnx(r):
    assert r.execute_command("CF.INSERTNX", "cf", "CAPACITY", "1000",
                             "ITEMS", "item1", "item2") == [1, 1]
    assert r.execute_command("CF.INSERTNX", "cf", "CAPACITY", "1000",
                             "ITEMS", "item1", "item2", "item3") == [0, 0, 1]
    assert r.execute_command("CF.INSERTNX", "cf", "ITEMS", "item4", "item4") == [1, 0]
    assert r.execute_command("CF.COUNT", "cf", "item4") == 1
    assert info(r, "CF.INFO", "cf")["Number of items inserted"] == 4


def test_insertnx_nocreate(r):
    expect_error(r, "CF.INSERTNX", "cf_new", "NOCREATE", "ITEMS", "a", contains="not found")
    expect_error(r, "CF.INSERTNX", "cf_new", "CAPACITY", "1000", "NOCREATE", "ITEMS", "a")
    assert r.exists("cf_new") == 0


@pytest.mark.parametrize("command", ["CF.INSERT", "CF.INSERTNX"])
@pytest.mark.parametrize("args", BAD_INSERT_ARGS + [["ERROR", "0.01", "ITEMS", "a"]])
def test_insert_bad_arguments(r, command, args):
    expect_error(r, command, "cf", *args)
    assert r.exists("cf") == 0
    assert r.ping()


# ---------------------------------------------------------------------------------------------
# Arity, missing keys, WRONGTYPE

@pytest.mark.parametrize("args", [
    ["CF.ADD"], ["CF.ADD", "cf"], ["CF.ADD", "cf", "a", "b"],
    ["CF.ADDNX"], ["CF.ADDNX", "cf"], ["CF.ADDNX", "cf", "a", "b"],
    ["CF.EXISTS"], ["CF.EXISTS", "cf"], ["CF.EXISTS", "cf", "a", "b"],
    ["CF.MEXISTS"], ["CF.MEXISTS", "cf"],
    ["CF.DEL"], ["CF.DEL", "cf"], ["CF.DEL", "cf", "a", "b"],
    ["CF.COUNT"], ["CF.COUNT", "cf"], ["CF.COUNT", "cf", "a", "b"],
    ["CF.INFO"], ["CF.INFO", "cf", "extra"],
    ["CF.INSERT"], ["CF.INSERTNX"],
])
def test_wrong_arity(r, args):
    wrong_arity(r, *args)
    assert r.exists("cf") == 0


def test_info_on_missing_key_is_an_error(r):
    expect_error(r, "CF.INFO", "nokey")


def test_wrongtype_reserve_and_loadchunk_on_a_string_key(r):
    r.set("s", "value")
    expect_error(r, "CF.RESERVE", "s", "1000")
    r.execute_command("CF.ADD", "cf", "a")
    it, data = r.execute_command("CF.SCANDUMP", "cf", 0)
    expect_error(r, "CF.LOADCHUNK", "s", it, data, contains="WRONGTYPE")
    assert r.get("s") == b"value"


# ---------------------------------------------------------------------------------------------
# Bulk behaviour

def test_no_false_negatives_over_50k_items(r):
    r.execute_command("CF.RESERVE", "cf", "50000")
    present = items("present", 50_000)
    replies = bulk(r, "CF.INSERT", "cf", present, prefix_args=("ITEMS",))
    assert replies == [1] * len(present)
    assert bulk(r, "CF.MEXISTS", "cf", present).count(1) == len(present)
    assert info(r, "CF.INFO", "cf")["Number of items inserted"] == len(present)


def test_default_fingerprints_keep_the_documented_rate(r):
    # CF.RESERVE's page: 2/255 per unit of bucket size, so 4/255 (1.57%) for the default 2.
    r.execute_command("CF.RESERVE", "cf", "100000")
    bulk(r, "CF.INSERT", "cf", items("present", 50_000), prefix_args=("ITEMS",))
    assert info(r, "CF.INFO", "cf")["Number of filters"] == 1
    n = 50_000
    measured = bulk(r, "CF.MEXISTS", "cf", items("absent", n)).count(1) / n
    assert measured <= fp_limit(2 * 2 / 255, n), f"false-positive rate {measured:.5f}"


def test_growing_filter_keeps_every_item(r):
    r.execute_command("CF.RESERVE", "cf", "1000", "EXPANSION", "2")
    one = info(r, "CF.INFO", "cf")
    present = items("x", 10_000)
    assert set(bulk(r, "CF.INSERT", "cf", present, prefix_args=("ITEMS",))) == {1}
    grown = info(r, "CF.INFO", "cf")
    assert grown["Number of filters"] > 1
    assert grown["Number of buckets"] > one["Number of buckets"]
    assert grown["Size"] > one["Size"]
    assert grown["Number of items inserted"] == len(present)
    assert bulk(r, "CF.MEXISTS", "cf", present).count(1) == len(present)


def test_a_filter_stops_growing_where_its_fingerprints_would_pass_32_bits(r):
    # Each filter has half the rate of the one before, one bit more per fingerprint: at 1%, 11
    # bits for the first and 32 for the 22nd, the last (docs/redis.md).
    r.execute_command("CF.RESERVE", "cf", "64", "EXPANSION", "1")
    reply = r.execute_command("CF.INSERT", "cf", "ITEMS", *items("x", 3000))
    assert -1 in reply, "a chain of 64-item filters took 3000 items"
    assert info(r, "CF.INFO", "cf")["Number of filters"] == 22
    expect_error(r, "CF.ADD", "cf", "one-more", contains="Filter is full")


def test_full_filter_without_expansion(r):
    r.execute_command("CF.RESERVE", "cf", "64", "EXPANSION", "0")
    candidates = items("x", 5000)
    replies = each(r, "CF.ADD", "cf", candidates, raise_on_error=False)
    errors = [v for v in replies if isinstance(v, redis.ResponseError)]
    assert errors, "a filter of capacity 64 without expansion took 5000 items"
    assert all("full" in str(e).lower() for e in errors), errors[0]
    assert all(v == 1 or isinstance(v, redis.ResponseError) for v in replies)
    added = [c for c, v in zip(candidates, replies) if v == 1]
    assert len(added) >= 32
    assert bulk(r, "CF.MEXISTS", "cf", added).count(1) == len(added)
    fields = info(r, "CF.INFO", "cf")
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == len(added)
    # CF.INSERT answers -1 per item that did not fit, and the command itself succeeds
    reply = r.execute_command("CF.INSERT", "cf", "ITEMS", *items("y", 500))
    assert len(reply) == 500
    assert set(reply) <= {1, -1} and -1 in reply
    reply = r.execute_command("CF.INSERTNX", "cf", "ITEMS", *items("z", 500))
    assert set(reply) <= {1, 0, -1} and -1 in reply
    assert info(r, "CF.INFO", "cf")["Number of filters"] == 1


def test_info_counts_follow_operations(r):
    r.execute_command("CF.RESERVE", "cf", "1000", "BUCKETSIZE", "4", "MAXITERATIONS", "30")
    r.execute_command("CF.INSERT", "cf", "ITEMS", *items("x", 100))
    r.execute_command("CF.ADDNX", "cf", "x:0")  # present: not added
    assert each(r, "CF.DEL", "cf", items("x", 10)) == [1] * 10
    fields = info(r, "CF.INFO", "cf")
    assert fields["Number of items deleted"] == 10
    assert fields["Number of items inserted"] in (100, 90)
    assert (fields["Bucket size"], fields["Max iterations"]) == (4, 30)


# ---------------------------------------------------------------------------------------------
# python3-redis's r.cf() helpers, unchanged

def test_python_client_cf_helpers(server):
    c = server.client()  # r.cf() installs response callbacks on its client; keep them here
    cf = c.cf()
    assert cf.create("cf", 1000, expansion=2, bucket_size=4, max_iterations=30) is True
    assert cf.add("cf", "a") == 1
    assert cf.addnx("cf", "a") == 0
    assert cf.addnx("cf", "b") == 1
    assert cf.insert("cf", ["c", "d"]) == [1, 1]
    assert cf.insertnx("cf", ["d", "e"]) == [0, 1]
    assert cf.insert("cf:new", ["p"], capacity=5000) == [1]
    with pytest.raises(redis.ResponseError):
        cf.insert("cf:none", ["p"], nocreate=True)
    assert cf.exists("cf", "c") == 1
    assert cf.exists("cf", "zzz") == 0
    assert cf.mexists("cf", "a", "b", "zzz") == [1, 1, 0]
    assert cf.count("cf", "a") == 1
    assert cf.delete("cf", "a") == 1
    assert cf.delete("cf", "a") == 0
    i = cf.info("cf")
    assert (i.bucketSize, i.maxIteration, i.expansionRate, i.filterNum) == (4, 30, 2, 1)
    assert i.deletedNum == 1
    assert i.insertedNum in (5, 4)
    assert i.size > 0 and i.bucketNum > 0
    c.close()
