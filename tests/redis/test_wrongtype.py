# SPDX-License-Identifier: Apache-2.0
# WRONGTYPE: every BF.* and CF.* command that names a key answers WRONGTYPE on a key of another
# type (a string, or the other filter type) and leaves that key as it was.
import pytest

from sfhelpers import expect_error

BF_ON_KEY = [
    ["BF.ADD", "{k}", "a"],
    ["BF.MADD", "{k}", "a", "b"],
    ["BF.EXISTS", "{k}", "a"],
    ["BF.MEXISTS", "{k}", "a", "b"],
    ["BF.INSERT", "{k}", "ITEMS", "a"],
    ["BF.INSERT", "{k}", "NOCREATE", "ITEMS", "a"],
    ["BF.INFO", "{k}"],
    ["BF.INFO", "{k}", "CAPACITY"],
    ["BF.CARD", "{k}"],
    ["BF.SCANDUMP", "{k}", "0"],
]

CF_ON_KEY = [
    ["CF.ADD", "{k}", "a"],
    ["CF.ADDNX", "{k}", "a"],
    ["CF.INSERT", "{k}", "ITEMS", "a"],
    ["CF.INSERT", "{k}", "NOCREATE", "ITEMS", "a"],
    ["CF.INSERTNX", "{k}", "ITEMS", "a"],
    ["CF.EXISTS", "{k}", "a"],
    ["CF.MEXISTS", "{k}", "a", "b"],
    ["CF.DEL", "{k}", "a"],
    ["CF.COUNT", "{k}", "a"],
    ["CF.INFO", "{k}"],
    ["CF.SCANDUMP", "{k}", "0"],
]


def _fill(cmd, key):
    return [key if a == "{k}" else a for a in cmd]


# (command, what the other type's key is made with)
CASES = ([(cmd, ["CF.ADD", "{k}", "a"]) for cmd in BF_ON_KEY] +
         [(cmd, ["BF.ADD", "{k}", "a"]) for cmd in CF_ON_KEY])


@pytest.mark.parametrize("cmd", BF_ON_KEY + CF_ON_KEY, ids=lambda c: " ".join(c))
def test_wrongtype_on_a_string_key(r, cmd):
    r.set("s", "value")
    expect_error(r, *_fill(cmd, "s"), contains="WRONGTYPE")
    assert r.get("s") == b"value"


@pytest.mark.parametrize("cmd,other", CASES, ids=lambda c: " ".join(c))
def test_wrongtype_on_the_other_filter_type(r, cmd, other):
    r.execute_command(*_fill(other, "o"))
    dump = r.dump("o")
    expect_error(r, *_fill(cmd, "o"), contains="WRONGTYPE")
    assert r.dump("o") == dump
