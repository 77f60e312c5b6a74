# SPDX-License-Identifier: Apache-2.0
# Keyspace notifications (https://redis.io/docs/latest/develop/use/keyspace-notifications/): every
# write command that succeeds notifies once, with its name in lower case as the event, in the
# generic class (notify-keyspace-events g); reads, refused commands and commands on the wrong type
# notify nothing. A LOADCHUNK that gives its dump up deletes the key and notifies "del"
# (test_scandump.py's test_a_dump_whose_filters_do_not_fit_its_header_is_given_up).
import pytest

from sfhelpers import events_of, expect_error, scandump

# (command, its event) for each write, in the order the test runs them.
WRITES = [
    (["BF.RESERVE", "bf", "0.01", "1000"], "bf.reserve"),
    (["BF.ADD", "bf", "a"], "bf.add"),
    (["BF.ADD", "bf", "a"], "bf.add"),  # the item may be there: still a write
    (["BF.MADD", "bf", "b", "c"], "bf.madd"),
    (["BF.INSERT", "bf2", "ITEMS", "a"], "bf.insert"),  # creates bf2
    (["CF.RESERVE", "cf", "1000"], "cf.reserve"),
    (["CF.ADD", "cf", "a"], "cf.add"),
    (["CF.ADDNX", "cf", "a"], "cf.addnx"),
    (["CF.INSERT", "cf", "ITEMS", "b", "c"], "cf.insert"),
    (["CF.INSERTNX", "cf2", "ITEMS", "a"], "cf.insertnx"),  # creates cf2
    (["CF.DEL", "cf", "a"], "cf.del"),
    (["CF.DEL", "cf", "never-added"], "cf.del"),
]

# Commands that must not notify: reads, and writes refused before any change.
SILENT = [
    ["BF.EXISTS", "bf", "a"],
    ["BF.MEXISTS", "bf", "a", "b"],
    ["BF.INFO", "bf"],
    ["BF.CARD", "bf"],
    ["BF.SCANDUMP", "bf", "0"],
    ["CF.EXISTS", "cf", "a"],
    ["CF.MEXISTS", "cf", "a", "b"],
    ["CF.COUNT", "cf", "a"],
    ["CF.INFO", "cf"],
    ["CF.SCANDUMP", "cf", "0"],
]
SILENT_ERRORS = [
    ["BF.RESERVE", "bf", "0.01", "1000"],  # item exists
    ["BF.RESERVE", "new", "2", "1000"],  # bad rate
    ["BF.ADD", "string", "a"],  # WRONGTYPE
    ["BF.INSERT", "missing", "NOCREATE", "ITEMS", "a"],  # not found
    ["CF.DEL", "missing", "a"],  # not found
    ["CF.ADD", "bf", "a"],  # WRONGTYPE
    ["BF.LOADCHUNK", "new", "1", b"not a dump"],  # refused
]


@pytest.fixture
def events(r):
    r.config_set("notify-keyspace-events", "Eg$")
    pubsub = r.pubsub()
    pubsub.psubscribe("__keyevent@0__:*")
    assert pubsub.get_message(timeout=2.0)["type"] == "psubscribe"
    yield pubsub
    pubsub.close()


def test_each_write_notifies_its_command(r, events):
    for command, _ in WRITES:
        r.execute_command(*command)
    assert events_of(events) == [(event, command[1]) for command, event in WRITES]


def test_reads_and_refused_writes_notify_nothing(r, events):
    r.execute_command("BF.ADD", "bf", "a")
    r.execute_command("CF.ADD", "cf", "a")
    r.set("string", "x")
    assert [e for e, _ in events_of(events)] == ["bf.add", "cf.add", "set"]
    for command in SILENT:
        r.execute_command(*command)
    for command in SILENT_ERRORS:
        with pytest.raises(Exception):
            r.execute_command(*command)
    assert events_of(events) == []


@pytest.mark.parametrize("kind", ["bf", "cf"])
def test_loadchunk_notifies_each_piece(r, events, kind):
    r.execute_command(f"{kind.upper()}.ADD", "src", "a")
    chunks = scandump(r, f"{kind.upper()}.SCANDUMP", "src")
    for it, data in chunks:
        r.execute_command(f"{kind.upper()}.LOADCHUNK", "dst", it, data)
    assert events_of(events) == [(f"{kind}.add", "src")] + [(f"{kind}.loadchunk", "dst")] * len(chunks)
