"""Values keep their bytes whatever form they are stored in: strings of up
to 22 bytes live inside the key's entry, up to 511 in one exact allocation,
from 512 in a shared growable buffer; small hashes, sets and sorted sets
are one buffer whose deadline trailer comes and goes. Every edit below
crosses one of those boundaries and the replies must not notice.

Checked against redis-server 7.0.15 too (`AGAINST_REDIS=1 pytest
tests/python/test_value_forms.py`), except the member-deadline cases.
"""

import pytest

from conftest import ebb_only

SIZES = [0, 1, 21, 22, 23, 24, 510, 511, 512, 513, 5000]


def blob(n, seed=0):
    return bytes((i * 31 + seed) % 251 for i in range(n))


@pytest.fixture
def c(srv):
    client = srv.client(decode_responses=False)
    yield client
    client.close()


def test_set_get_and_ranges_at_every_form_boundary(c):
    for n in SIZES:
        v = blob(n)
        c.set(b"s", v)
        assert c.get(b"s") == v
        assert c.strlen(b"s") == n
        assert c.getrange(b"s", 0, -1) == v
        assert c.getrange(b"s", 1, n // 2) == v[1:n // 2 + 1]
        assert c.mget([b"s", b"missing"]) == [v, None]
        assert c.getdel(b"s") == v
        assert c.get(b"s") is None


def test_append_grows_through_every_form(c):
    want = b""
    for step in [1, 20, 1, 1, 488, 1, 1, 600, 4000]:
        piece = blob(step, seed=step)
        want += piece
        assert c.append(b"a", piece) == len(want)
        assert c.get(b"a") == want
    # A reply that was handed out before an edit keeps its own bytes.
    before = c.get(b"a")
    c.setrange(b"a", 0, b"XY")
    assert c.get(b"a") == b"XY" + want[2:]
    assert before == want


def test_setrange_setbit_and_counters_cross_the_boundaries(c):
    c.set(b"r", b"abc")
    assert c.setrange(b"r", 30, b"z") == 31
    assert c.get(b"r") == b"abc" + b"\x00" * 27 + b"z"
    assert c.setrange(b"r", 600, b"end") == 603
    got = c.get(b"r")
    assert got[:3] == b"abc" and got[600:] == b"end" and len(got) == 603
    # Growing a bitmap from nothing past 512 bytes, then reading it back.
    assert c.setbit(b"bits", 8 * 700 + 3, 1) == 0
    assert c.strlen(b"bits") == 701
    assert c.getbit(b"bits", 8 * 700 + 3) == 1
    assert c.bitcount(b"bits") == 1
    # Counters live inline; a long float result still reads back.
    c.set(b"n", b"9" * 18)
    assert c.incr(b"n") == 10**18
    assert c.incrbyfloat(b"f", "1.5") == 1.5
    assert c.get(b"f") == b"1.5"
    c.set(b"big", blob(700))
    with pytest.raises(Exception, match="not an integer"):
        c.incr(b"big")


def test_small_collections_survive_edits(c):
    # A small hash: fields updated, removed and re-added keep the order a
    # listpack keeps, and the encoding stays compact.
    c.hset(b"h", mapping={b"a": b"1", b"b": b"2", b"c": b"3"})
    c.hset(b"h", b"a", b"x" * 60)
    c.hdel(b"h", b"b")
    c.hset(b"h", b"b", b"again")
    assert c.hgetall(b"h") == {b"a": b"x" * 60, b"c": b"3", b"b": b"again"}
    assert c.execute_command("HRANDFIELD", b"h", -5) is not None
    assert c.object("encoding", b"h") == b"listpack"
    # A small set of integers, then a string member.
    c.sadd(b"s", 3, 1, 2)
    assert c.smembers(b"s") == {b"1", b"2", b"3"}
    assert c.object("encoding", b"s") == b"intset"
    c.sadd(b"s", b"x")
    c.srem(b"s", b"x")
    assert c.object("encoding", b"s") == b"hashtable"
    assert sorted(c.smembers(b"s")) == [b"1", b"2", b"3"]
    # A small sorted set: scores updated in place, ranges in order.
    c.zadd(b"z", {b"a": 1700000000000, b"b": 2.5, b"c": -1})
    c.zadd(b"z", {b"b": 1700000000001})
    assert c.zrange(b"z", 0, -1, withscores=True) == [
        (b"c", -1.0), (b"a", 1700000000000.0), (b"b", 1700000000001.0)]
    assert c.zpopmin(b"z") == [(b"c", -1.0)]
    assert c.zcard(b"z") == 2


@ebb_only
def test_member_deadlines_come_and_go_in_small_collections(c):
    # The deadline trailer is added with the first deadline and dropped
    # after the last one: members, values and deadlines stay right.
    c.execute_command("SADDEX", b"otp", "LIMIT", 3, 300, b"111111", b"222222")
    assert c.execute_command("SPERSIST", b"otp", "MEMBERS", 2, b"111111", b"222222") == [1, 1]
    assert c.execute_command("STTL", b"otp", "MEMBERS", 1, b"111111") == [-1]
    c.execute_command("SEXPIRE", b"otp", 100, "MEMBERS", 1, b"222222")
    assert 0 < c.execute_command("STTL", b"otp", "MEMBERS", 1, b"222222")[0] <= 100
    assert c.scard(b"otp") == 2
    c.hset(b"h", mapping={b"f1": b"v1", b"f2": b"v2"})
    c.execute_command("HPEXPIRE", b"h", 60000, "FIELDS", 1, b"f2")
    c.execute_command("HPERSIST", b"h", "FIELDS", 1, b"f2")
    assert c.execute_command("HTTL", b"h", "FIELDS", 2, b"f1", b"f2") == [-1, -1]
    assert c.hgetall(b"h") == {b"f1": b"v1", b"f2": b"v2"}
    c.execute_command("ZADDEX", b"z", "PX", 60000, 5, b"m")
    c.execute_command("ZPERSIST", b"z", "MEMBERS", 1, b"m")
    assert c.zscore(b"z", b"m") == 5.0
    assert c.execute_command("ZTTL", b"z", "MEMBERS", 1, b"m") == [-1]
    # A member past its deadline goes; the rest stay.
    c.execute_command("SADDEX", b"short", 1, b"gone")
    c.sadd(b"short", b"stays")
    c.execute_command("SPEXPIRE", b"short", 1, "MEMBERS", 1, b"gone")
    import time

    time.sleep(0.05)
    assert c.smembers(b"short") == {b"stays"}
