# SPDX-License-Identifier: Apache-2.0
# BF.* commands of the module, against RedisBloom's public command documentation:
#   BF.RESERVE  https://redis.io/docs/latest/commands/bf.reserve/
#               - OK; "(error) ERR item exists" for an existing key (its example); error_rate "a
#                 decimal value between 0 and 1"; EXPANSION "a positive integer", default 2;
#                 NONSCALING: "The filter returns an error when capacity is reached"; a new
#                 sub-filter has "size of the previous sub-filter multiplied by expansion";
#                 error_rate is the filter's "upper bound".
#   BF.ADD      https://redis.io/docs/latest/commands/bf.add/
#               - 1 added, 0 maybe there; a missing key is created "with default error rate,
#                 capacity, and expansion"; an error "when the filter is full".
#   BF.MADD     https://redis.io/docs/latest/commands/bf.madd/
#               - array of 1/0, example [1, 1, 0] for item1 item2 item2; an element is an error
#                 "when the item cannot be added because the filter is full".
#   BF.EXISTS   https://redis.io/docs/latest/commands/bf.exists/   - 1/0; 0 if the key is missing.
#   BF.MEXISTS  https://redis.io/docs/latest/commands/bf.mexists/  - array of 1/0, 0 for a missing
#                 key, example [1, 1, 0].
#   BF.INSERT   https://redis.io/docs/latest/commands/bf.insert/
#               - CAPACITY / ERROR / EXPANSION / NONSCALING apply to a filter it creates and
#                 CAPACITY "is ignored if the filter already exists"; NOCREATE on a missing key
#                 is an error; "It is an error to specify NOCREATE together with either CAPACITY
#                 or ERROR"; ITEMS is required.
#   BF.INFO     https://redis.io/docs/latest/commands/bf.info/
#               - pairs Capacity, Size, Number of filters, Number of items inserted, Expansion
#                 rate (its example, in that order: 100 / 240 / 1 / 1 / 2 after one BF.ADD to a
#                 new key); with CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION "a singleton array reply"
#                 (its example: "BF.INFO bf1 CAPACITY" -> "1) (integer) 100"); an error for a
#                 missing key or invalid arguments.
#   BF.CARD     https://redis.io/docs/latest/commands/bf.card/
#               - the items detected as unique, 0 for a missing key, "the same value as BF.INFO
#                 key ITEMS".
#   Error texts: https://redis.io/docs/latest/develop/reference/errors/all/probabilistic/ ("Others
#   say that an item already exists, that a key wasn't found, or that a filter that doesn't scale
#   is full"); the tests match "item exists" (BF.RESERVE's example) and "full", no more.
#   Defaults error rate 0.01, capacity 100, expansion 2: ERROR_RATE and INITIAL_SIZE on
#   https://redis.io/docs/latest/develop/data-types/probabilistic/configuration/ and BF.INFO's
#   example (Capacity 100, Expansion rate 2 after BF.ADD to a new key).
#   WRONGTYPE on another type's key: the pages' "wrong key type" error, with Redis's own text
#   (https://redis.io/docs/latest/develop/reference/modules/modules-api-ref/,
#   REDISMODULE_ERRORMSG_WRONGTYPE).
#   BF.INFO's "Expansion rate" of a NONSCALING filter is not shown by any page (this module
#   answers nil); it is not asserted.
#   The python3-redis client (4.3.4) helpers r.bf().* are exercised as-is; 4.3.4 has no
#   r.bf().card, so BF.CARD goes through execute_command.
import pytest
import redis

from sfhelpers import (BAD_INSERT_ARGS, assert_fields, bulk, each, expect_error, fp_limit, info,
                       items, pairs, wrong_arity)

BF_INFO_FIELDS = ["Capacity", "Size", "Number of filters", "Number of items inserted",
                  "Expansion rate"]
BF_INFO_SELECTORS = {"CAPACITY": "Capacity", "SIZE": "Size", "FILTERS": "Number of filters",
                     "ITEMS": "Number of items inserted", "EXPANSION": "Expansion rate"}


# ---------------------------------------------------------------------------------------------
# BF.RESERVE

def test_reserve_creates_an_empty_filter(r):
    assert r.execute_command("BF.RESERVE", "bf", "0.01", "1000") == b"OK"
    reply = r.execute_command("BF.INFO", "bf")
    assert [n.decode() for n in reply[0::2]] == BF_INFO_FIELDS
    fields = pairs(reply)
    assert fields["Size"] > 0
    assert_fields(fields, {"Capacity": 1000, "Number of filters": 1,
                           "Number of items inserted": 0, "Expansion rate": 2})
    assert r.execute_command("BF.CARD", "bf") == 0
    assert r.type("bf") not in (b"none", b"string")


def test_reserve_expansion_is_reported(r):
    assert r.execute_command("BF.RESERVE", "bf", "0.01", "1000", "EXPANSION", "4") == b"OK"
    assert info(r, "BF.INFO", "bf")["Expansion rate"] == 4


def test_reserve_nonscaling_is_accepted(r):
    assert r.execute_command("BF.RESERVE", "bf", "0.001", "5000", "NONSCALING") == b"OK"
    fields = info(r, "BF.INFO", "bf")
    assert fields["Capacity"] == 5000
    assert fields["Number of filters"] == 1


def test_reserve_smaller_error_rate_takes_more_memory(r):
    r.execute_command("BF.RESERVE", "loose", "0.01", "10000")
    r.execute_command("BF.RESERVE", "tight", "0.0001", "10000")
    assert info(r, "BF.INFO", "tight")["Size"] > info(r, "BF.INFO", "loose")["Size"]


def test_reserve_existing_key_is_an_error_and_keeps_the_filter(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "1000")
    r.execute_command("BF.ADD", "bf", "x")
    expect_error(r, "BF.RESERVE", "bf", "0.1", "1000000", contains="item exists")
    fields = info(r, "BF.INFO", "bf")
    assert fields["Capacity"] == 1000
    assert fields["Number of items inserted"] == 1
    assert r.execute_command("BF.EXISTS", "bf", "x") == 1


@pytest.mark.parametrize("rate", ["0.5", "1e-3", "0.999", "0.0001", "+0.01", ".5"])
def test_reserve_accepts_rates_inside_zero_one(r, rate):
    assert r.execute_command("BF.RESERVE", "bf", rate, "1000") == b"OK"
    assert info(r, "BF.INFO", "bf")["Capacity"] == 1000


@pytest.mark.parametrize("rate", ["0", "1", "-0.01", "1.5", "2", "nan", "NaN", "inf", "-inf",
                                  "abc", "", "0.01abc", "0x", "0x1p-7", " 0.01", "0.01 ",
                                  "+-0.01", "++0.01", "+", "1e-400", "0,01"])
def test_reserve_bad_error_rate(r, rate):
    expect_error(r, "BF.RESERVE", "bf", rate, "1000")
    assert r.exists("bf") == 0
    assert r.ping()


@pytest.mark.parametrize("capacity", ["0", "-1", "-1000", "abc", "1.5", "", str(2 ** 63),
                                      str(2 ** 64), str(-2 ** 63)])
def test_reserve_bad_capacity(r, capacity):
    expect_error(r, "BF.RESERVE", "bf", "0.01", capacity)
    assert r.exists("bf") == 0
    assert r.ping()


@pytest.mark.parametrize("capacity", [str(2 ** 62), str(2 ** 63 - 1), str(10 ** 15)])
def test_impossible_capacity_is_refused_and_the_server_stays_up(r, capacity):
    # No page sets a maximum; a filter of 10^15 keys cannot be allocated anywhere, and asking for
    # one must answer an error rather than abort the server on a failed allocation.
    expect_error(r, "BF.RESERVE", "bf", "0.01", capacity)
    expect_error(r, "BF.INSERT", "bf", "CAPACITY", capacity, "ITEMS", "a")
    assert r.exists("bf") == 0
    assert r.ping()


@pytest.mark.parametrize("tail", [["EXPANSION", "0"], ["EXPANSION", "-1"], ["EXPANSION", "abc"],
                                  ["EXPANSION"], ["FOO"], ["EXPANSION", "2", "FOO"]])
def test_reserve_bad_options(r, tail):
    expect_error(r, "BF.RESERVE", "bf", "0.01", "1000", *tail)
    assert r.exists("bf") == 0


@pytest.mark.parametrize("args", [[], ["bf"], ["bf", "0.01"]])
def test_reserve_wrong_arity(r, args):
    wrong_arity(r, "BF.RESERVE", *args)
    assert r.exists("bf") == 0


# ---------------------------------------------------------------------------------------------
# BF.ADD, BF.MADD, BF.EXISTS, BF.MEXISTS, BF.CARD

def test_add_then_exists(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "1000")
    assert r.execute_command("BF.ADD", "bf", "item1") == 1
    assert r.execute_command("BF.ADD", "bf", "item1") == 0
    assert r.execute_command("BF.EXISTS", "bf", "item1") == 1
    assert r.execute_command("BF.EXISTS", "bf", "item2") == 0
    assert r.execute_command("BF.CARD", "bf") == 1


def test_items_are_binary_safe(r):
    odd = [b"", b"\x00", b"\x00\x01\xff", b"a" * 100000, "caf\u00e9".encode()]
    assert bulk(r, "BF.MADD", "bf", odd) == [1] * len(odd)
    assert bulk(r, "BF.MEXISTS", "bf", odd) == [1] * len(odd)
    assert r.execute_command("BF.CARD", "bf") == len(odd)


def test_madd_reply_and_mexists(r):
    assert r.execute_command("BF.MADD", "bf", "item1", "item2", "item2") == [1, 1, 0]
    assert r.execute_command("BF.MEXISTS", "bf", "item1", "item2", "item3") == [1, 1, 0]
    assert r.execute_command("BF.CARD", "bf") == 2
    assert info(r, "BF.INFO", "bf")["Number of items inserted"] == 2


def test_missing_key_reads_as_absent(r):
    assert r.execute_command("BF.EXISTS", "nokey", "a") == 0
    assert r.execute_command("BF.MEXISTS", "nokey", "a", "b", "c") == [0, 0, 0]
    assert r.execute_command("BF.CARD", "nokey") == 0
    assert r.exists("nokey") == 0  # reads create nothing


@pytest.mark.parametrize("first", [["BF.ADD", "bf", "x"], ["BF.MADD", "bf", "x"],
                                   ["BF.INSERT", "bf", "ITEMS", "x"]])
def test_write_to_missing_key_creates_default_filter(r, first):
    # Defaults: error rate 0.01, capacity 100, expansion 2. A filter made that way must match one
    # reserved with them, field for field (Size included, which depends on the error rate).
    assert r.execute_command(*first) in (1, [1])
    r.execute_command("BF.RESERVE", "ref", "0.01", "100")
    r.execute_command("BF.ADD", "ref", "x")
    created = info(r, "BF.INFO", "bf")
    assert created == info(r, "BF.INFO", "ref")
    assert_fields(created, {"Capacity": 100, "Expansion rate": 2, "Number of filters": 1,
                            "Number of items inserted": 1})
    # and the Size comparison means something: another error rate gives another size
    r.execute_command("BF.RESERVE", "other", "0.001", "100")
    assert info(r, "BF.INFO", "other")["Size"] != created["Size"]


@pytest.mark.parametrize("args", [["BF.ADD"], ["BF.ADD", "bf"], ["BF.ADD", "bf", "a", "b"],
                                  ["BF.MADD"], ["BF.MADD", "bf"],
                                  ["BF.EXISTS"], ["BF.EXISTS", "bf"], ["BF.EXISTS", "bf", "a", "b"],
                                  ["BF.MEXISTS"], ["BF.MEXISTS", "bf"],
                                  ["BF.CARD"], ["BF.CARD", "bf", "extra"],
                                  ["BF.INFO"],
                                  ["BF.INSERT"]])
def test_wrong_arity(r, args):
    wrong_arity(r, *args)
    assert r.exists("bf") == 0


# ---------------------------------------------------------------------------------------------
# BF.INSERT

def test_insert_creates_with_its_options(r):
    reply = r.execute_command("BF.INSERT", "bf", "CAPACITY", "1000", "ERROR", "0.001",
                              "EXPANSION", "4", "ITEMS", "a", "b", "b")
    assert reply == [1, 1, 0]
    r.execute_command("BF.RESERVE", "ref", "0.001", "1000", "EXPANSION", "4")
    r.execute_command("BF.MADD", "ref", "a", "b")
    fields = info(r, "BF.INFO", "bf")
    assert fields == info(r, "BF.INFO", "ref")
    assert fields["Capacity"] == 1000
    assert fields["Expansion rate"] == 4
    assert r.execute_command("BF.MEXISTS", "bf", "a", "b", "c") == [1, 1, 0]


def test_insert_options_are_ignored_for_an_existing_filter(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "500")
    assert r.execute_command("BF.INSERT", "bf", "CAPACITY", "9999", "ERROR", "0.5",
                             "EXPANSION", "7", "ITEMS", "a") == [1]
    fields = info(r, "BF.INFO", "bf")
    assert fields["Capacity"] == 500
    assert fields["Expansion rate"] == 2


def test_insert_nocreate_on_missing_key_is_an_error(r):
    expect_error(r, "BF.INSERT", "bf", "NOCREATE", "ITEMS", "a")
    assert r.exists("bf") == 0


@pytest.mark.parametrize("option", [["CAPACITY", "1000"], ["ERROR", "0.01"]])
def test_insert_nocreate_with_capacity_or_error_is_an_error(r, option):
    expect_error(r, "BF.INSERT", "bf", "NOCREATE", *option, "ITEMS", "a")
    assert r.exists("bf") == 0


def test_insert_nocreate_on_existing_key_adds(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "1000")
    assert r.execute_command("BF.INSERT", "bf", "NOCREATE", "ITEMS", "a", "b") == [1, 1]
    assert r.execute_command("BF.MEXISTS", "bf", "a", "b") == [1, 1]


def test_insert_nonscaling_creates_a_nonscaling_filter(r):
    reply = r.execute_command("BF.INSERT", "bf", "CAPACITY", "10", "NONSCALING",
                              "ITEMS", *items("x", 200))
    ones = [v for v in reply if v == 1]
    errors = [v for v in reply if isinstance(v, redis.ResponseError)]
    assert len(ones) == 10, reply
    assert errors and all("full" in str(e).lower() for e in errors), reply
    assert all(v in (0, 1) or isinstance(v, redis.ResponseError) for v in reply)
    first_error = next(i for i, v in enumerate(reply) if isinstance(v, redis.ResponseError))
    assert 1 not in reply[first_error:], "an item was added after the filter was full"
    fields = info(r, "BF.INFO", "bf")
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 10


@pytest.mark.parametrize("args", BAD_INSERT_ARGS + [
    ["ERROR", "0", "ITEMS", "a"],
    ["ERROR", "1", "ITEMS", "a"],
    ["ERROR", "nan", "ITEMS", "a"],
    ["ERROR", "abc", "ITEMS", "a"],
    ["EXPANSION", "0", "ITEMS", "a"],
    ["EXPANSION", "abc", "ITEMS", "a"],
])
def test_insert_bad_arguments(r, args):
    expect_error(r, "BF.INSERT", "bf", *args)
    assert r.exists("bf") == 0
    assert r.ping()


# ---------------------------------------------------------------------------------------------
# BF.INFO, BF.CARD

def test_info_full_reply_as_pairs(r):
    assert r.execute_command("BF.ADD", "bf1", "observation1") == 1
    reply = r.execute_command("BF.INFO", "bf1")
    assert len(reply) == 10
    assert [n.decode() for n in reply[0::2]] == BF_INFO_FIELDS
    assert all(isinstance(v, int) for v in reply[1::2])
    fields = pairs(reply)
    assert fields["Size"] > 0
    assert_fields(fields, {"Capacity": 100, "Number of filters": 1, "Number of items inserted": 1,
                           "Expansion rate": 2})


@pytest.mark.parametrize("selector", sorted(BF_INFO_SELECTORS))
def test_info_single_field_is_a_singleton_array(r, selector):
    r.execute_command("BF.RESERVE", "bf", "0.01", "1000", "EXPANSION", "3")
    r.execute_command("BF.MADD", "bf", *items("x", 1500))  # grown: every field is non-trivial
    full = info(r, "BF.INFO", "bf")
    assert full["Number of filters"] > 1
    assert r.execute_command("BF.INFO", "bf", selector) == [full[BF_INFO_SELECTORS[selector]]]


def test_info_errors(r):
    expect_error(r, "BF.INFO", "nokey")
    r.execute_command("BF.ADD", "bf", "a")
    expect_error(r, "BF.INFO", "bf", "BOGUS")
    expect_error(r, "BF.INFO", "bf", "CAPACITY", "SIZE")


def test_card_counts_unique_items_and_matches_info(r):
    assert r.execute_command("BF.CARD", "bf") == 0
    r.execute_command("BF.MADD", "bf", "a", "b", "b", "c")
    assert r.execute_command("BF.CARD", "bf") == 3
    assert r.execute_command("BF.CARD", "bf") == \
        r.execute_command("BF.INFO", "bf", "ITEMS")[0]


# ---------------------------------------------------------------------------------------------
# WRONGTYPE

def test_wrongtype_reserve_and_loadchunk_on_a_string_key(r):
    r.set("s", "value")
    # BF.RESERVE on any existing key fails; which error (item exists or WRONGTYPE) is not
    # documented for another type's key.
    expect_error(r, "BF.RESERVE", "s", "0.01", "100")
    r.execute_command("BF.ADD", "bf", "a")
    it, data = r.execute_command("BF.SCANDUMP", "bf", 0)
    expect_error(r, "BF.LOADCHUNK", "s", it, data, contains="WRONGTYPE")
    assert r.get("s") == b"value"


# ---------------------------------------------------------------------------------------------
# Bulk behaviour: no false negatives, the false-positive rate, full and growing filters

def test_no_false_negatives_for_100k_items(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "100000")
    present = items("present", 100_000)
    added = bulk(r, "BF.MADD", "bf", present)
    assert set(added) <= {0, 1}
    assert bulk(r, "BF.MEXISTS", "bf", present).count(1) == len(present)
    assert r.execute_command("BF.CARD", "bf") == added.count(1)
    assert added.count(1) > 99_000  # a 0 for a new item is a false positive: about 1% at most


def test_false_positive_rate_within_the_requested_rate(r):
    rate, n = 0.01, 100_000
    r.execute_command("BF.RESERVE", "bf", str(rate), str(n))
    bulk(r, "BF.MADD", "bf", items("present", n))
    assert info(r, "BF.INFO", "bf")["Number of filters"] == 1
    absent = bulk(r, "BF.MEXISTS", "bf", items("absent", n))
    measured = absent.count(1) / n
    assert measured <= fp_limit(rate, n), f"false-positive rate {measured:.5f} for {rate}"
    assert measured > 0, "no false positive at all in 100k: the filter answers nothing?"


def test_false_positive_rate_bound_holds_after_scaling(r):
    # error_rate is the filter's upper bound (BF.RESERVE), also when sub-filters were added.
    rate, n = 0.01, 100_000
    r.execute_command("BF.RESERVE", "bf", str(rate), "1000")
    present = items("present", n)
    bulk(r, "BF.MADD", "bf", present)
    assert info(r, "BF.INFO", "bf")["Number of filters"] >= 5
    assert bulk(r, "BF.MEXISTS", "bf", present).count(1) == n
    measured = bulk(r, "BF.MEXISTS", "bf", items("absent", n)).count(1) / n
    assert measured <= fp_limit(rate, n), f"false-positive rate {measured:.5f} for {rate}"


def test_a_scaling_filter_stops_growing_where_its_next_rate_cannot_be_sized(r):
    # Each filter has half the rate of the one before, and 100 bits per item buy about 1.4e-21:
    # at 1%, a key holds at most 62 filters (docs/redis.md). The add that needs one more answers
    # why it cannot be made.
    r.execute_command("BF.RESERVE", "bf", "0.01", "1", "EXPANSION", "1")
    replies = each(r, "BF.ADD", "bf", items("x", 200), raise_on_error=False)
    errors = [v for v in replies if isinstance(v, redis.ResponseError)]
    assert errors, "a chain of 1-item filters took 200 items"
    assert "cannot grow: its filter 63, of 1 items at a rate of 1.08e-21" in str(errors[0]), errors[0]
    assert info(r, "BF.INFO", "bf")["Number of filters"] == 62
    assert replies.count(1) == r.execute_command("BF.CARD", "bf") <= 62


def test_nonscaling_filter_answers_an_error_when_full(r):
    capacity = 50
    r.execute_command("BF.RESERVE", "bf", "0.01", str(capacity), "NONSCALING")
    candidates = items("x", 2000)
    replies = each(r, "BF.ADD", "bf", candidates, raise_on_error=False)
    errors = [i for i, v in enumerate(replies) if isinstance(v, redis.ResponseError)]
    assert errors, "a non-scaling filter took 2000 items with capacity 50"
    first = errors[0]
    assert "full" in str(replies[first]).lower(), replies[first]
    assert replies[:first].count(1) == capacity
    assert 1 not in replies[first:], "an item was added after the filter was full"
    added = [c for c, v in zip(candidates, replies) if v == 1]
    assert bulk(r, "BF.MEXISTS", "bf", added) == [1] * capacity
    assert r.execute_command("BF.CARD", "bf") == capacity
    assert info(r, "BF.INFO", "bf")["Number of filters"] == 1
    # a single BF.ADD raises the error itself
    with pytest.raises(redis.ResponseError, match="(?i)full"):
        r.execute_command("BF.ADD", "bf", "one-more-new-item")
    # BF.MADD reports it per item, in the array
    reply = r.execute_command("BF.MADD", "bf", *items("y", 20))
    assert reply and all(v == 0 or isinstance(v, redis.ResponseError) for v in reply)
    assert any(isinstance(v, redis.ResponseError) for v in reply)
    assert r.execute_command("BF.CARD", "bf") == capacity


def test_scaling_filter_grows_and_keeps_every_item(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "100")
    present = items("x", 5000)
    bulk(r, "BF.MADD", "bf", present, batch=100)
    fields = info(r, "BF.INFO", "bf")
    assert fields["Number of filters"] > 1
    assert fields["Capacity"] > 100
    assert fields["Capacity"] >= fields["Number of items inserted"]
    assert fields["Number of items inserted"] == r.execute_command("BF.CARD", "bf")
    assert bulk(r, "BF.MEXISTS", "bf", present).count(1) == len(present)


def test_new_sub_filter_is_expansion_times_the_previous(r):
    # capacity 100, EXPANSION 3: the second sub-filter holds 300, so Capacity becomes 400
    r.execute_command("BF.RESERVE", "bf", "0.01", "100", "EXPANSION", "3")
    bulk(r, "BF.MADD", "bf", items("x", 150), batch=10)
    fields = info(r, "BF.INFO", "bf")
    assert fields["Number of filters"] == 2
    assert fields["Capacity"] == 100 + 300
    assert fields["Expansion rate"] == 3


def test_size_grows_with_sub_filters(r):
    r.execute_command("BF.RESERVE", "bf", "0.01", "100")
    before = info(r, "BF.INFO", "bf")["Size"]
    bulk(r, "BF.MADD", "bf", items("x", 1000))
    assert info(r, "BF.INFO", "bf")["Size"] > before


# ---------------------------------------------------------------------------------------------
# python3-redis's r.bf() helpers, unchanged

def test_python_client_bf_helpers(server):
    c = server.client()  # r.bf() installs response callbacks on its client; keep them here
    bf = c.bf()
    assert bf.create("bf", 0.01, 1000) is True
    assert bf.create("bf:exp", 0.01, 1000, expansion=4) is True
    assert bf.create("bf:non", 0.01, 1000, noScale=True) is True
    assert bf.add("bf", "a") == 1
    assert bf.add("bf", "a") == 0
    assert bf.madd("bf", "b", "c", "c") == [1, 1, 0]
    assert bf.exists("bf", "b") == 1
    assert bf.exists("bf", "zzz") == 0
    assert bf.mexists("bf", "a", "b", "zzz") == [1, 1, 0]
    assert bf.insert("bf:ins", ["p", "q"], capacity=500, error=0.001, expansion=3) == [1, 1]
    with pytest.raises(redis.ResponseError):
        bf.insert("bf:none", ["p"], noCreate=True)
    i = bf.info("bf")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (1000, 1, 3, 2)
    assert i.size > 0
    assert bf.info("bf:exp").expansionRate == 4
    j = bf.info("bf:ins")
    assert (j.capacity, j.insertedNum, j.expansionRate) == (500, 2, 3)
    assert c.execute_command("BF.CARD", "bf") == 3
    c.close()
