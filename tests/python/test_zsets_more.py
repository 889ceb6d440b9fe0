"""Sorted-set pops, blocking pops, algebra, random members and scans through
the real binary: exact RESP2/RESP3 bytes, errors, keyspace events, WATCH,
member deadlines and real blocking.

Set REFERENCE_PORT to run the same tests against a running redis-server 7.0
(tests that need ebb-only features or a restart are skipped there)."""

import os
import threading
import time

import pytest
import redis

from conftest import events, Raw, raw_cmd, wait_until

REFERENCE_PORT = os.environ.get("REFERENCE_PORT")
ebb_only = pytest.mark.skipif(REFERENCE_PORT is not None, reason="ebb-only feature")

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


class Reference:
    """A server that is already running (redis-server, for comparison)."""

    def __init__(self, port):
        self.port = port

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)


@pytest.fixture
def srv(server_factory):
    """A fresh server per test, so blocked clients never leak between tests."""
    if REFERENCE_PORT:
        return Reference(int(REFERENCE_PORT))
    return server_factory()


@pytest.fixture
def r(srv):
    c = srv.client()
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


@pytest.fixture
def c2(srv, r):
    c = Raw(srv.port)
    yield c
    c.close()


@pytest.fixture
def c3(srv, r):
    c = Raw(srv.port, resp3=True)
    yield c
    c.close()


def bulks(*items):
    return b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


def arr(n, body=b""):
    return b"*%d\r\n" % n + body


def dbl(x):
    return b"," + x + b"\r\n"


def err(text):
    return b"-" + text.encode() + b"\r\n"


def blocked(server, *args, resp3=False):
    """Starts a blocking command on its own connection; returns a thread
    whose .result holds the raw reply once it ends."""
    c = Raw(server.port, resp3=resp3)
    t = threading.Thread(target=lambda: setattr(t, "result", c.cmd(*args)), daemon=True)
    t.result = None
    t.conn = c
    t.start()
    return t


def blocked_count(r):
    return r.info("clients")["blocked_clients"]


# --- pops -----------------------------------------------------------------


def test_zpop_shapes_in_both_protocols(r, c2, c3):
    r.zadd("z", {"a": 1, "b": 2.5, "c": 3, "d": 4})
    assert c2.cmd("ZPOPMIN", "z") == arr(2, bulks(b"a", b"1"))
    assert c3.cmd("ZPOPMIN", "z") == arr(2, bulks(b"b") + dbl(b"2.5"))
    assert c2.cmd("ZPOPMAX", "z", "1") == arr(2, bulks(b"d", b"4"))
    assert c3.cmd("ZPOPMAX", "z", "5") == arr(1, arr(2, bulks(b"c") + dbl(b"3")))
    assert r.exists("z") == 0
    for c in (c2, c3):
        assert c.cmd("ZPOPMIN", "z") == b"*0\r\n"
        assert c.cmd("ZPOPMIN", "z", "3") == b"*0\r\n"
    r.zadd("z", {"a": 1})
    assert c2.cmd("ZPOPMIN", "z", "0") == b"*0\r\n"
    assert r.zcard("z") == 1


def test_zpop_errors(r, c2):
    r.set("s", "x")
    r.zadd("z", {"a": 1})
    assert c2.cmd("ZPOPMIN", "z", "-1") == err("ERR value is out of range, must be positive")
    assert c2.cmd("ZPOPMIN", "s", "x") == err("ERR value is out of range, must be positive")
    assert c2.cmd("ZPOPMAX", "s") == WRONGTYPE
    assert c2.cmd("ZPOPMIN", "z", "1", "2") == err("ERR syntax error")
    assert c2.cmd("ZPOPMIN") == err("ERR wrong number of arguments for 'zpopmin' command")


def test_zmpop(r, c2, c3):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    want = arr(2, bulks(b"z") + arr(1, arr(2, bulks(b"a", b"1"))))
    assert c2.cmd("ZMPOP", "2", "none", "z", "MIN") == want
    want = arr(2, bulks(b"z") + arr(2, arr(2, bulks(b"c") + dbl(b"3")) + arr(2, bulks(b"b") + dbl(b"2"))))
    assert c3.cmd("ZMPOP", "1", "z", "MAX", "COUNT", "10") == want
    assert c2.cmd("ZMPOP", "1", "z", "MIN") == b"*-1\r\n"
    assert c3.cmd("ZMPOP", "1", "z", "MIN") == b"_\r\n"
    r.set("s", "x")
    for args, want in [
        (("ZMPOP", "0", "z", "MIN"), err("ERR numkeys should be greater than 0")),
        (("ZMPOP", "x", "z", "MIN"), err("ERR numkeys should be greater than 0")),
        (("ZMPOP", "2", "z", "MIN"), err("ERR syntax error")),
        (("ZMPOP", "1", "z", "MID"), err("ERR syntax error")),
        (("ZMPOP", "1", "z", "MIN", "COUNT", "0"), err("ERR count should be greater than 0")),
        (("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"), err("ERR syntax error")),
        (("ZMPOP", "2", "none", "s", "MIN"), WRONGTYPE),
        (("ZMPOP", "1", "z"), err("ERR wrong number of arguments for 'zmpop' command")),
    ]:
        assert c2.cmd(*args) == want, args


def test_pops_emit_events_and_touch_watchers(srv, r):
    r.config_set("notify-keyspace-events", "KEzg")
    p = srv.client().pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    r.zadd("z", {"a": 1, "b": 2})
    r.zpopmin("z")
    r.execute_command("ZMPOP", "1", "z", "MAX")
    got = events(p, 4)
    p.close()
    assert got == [
        ("__keyevent@0__:zadd", "z"),
        ("__keyevent@0__:zpopmin", "z"),
        ("__keyevent@0__:zpopmax", "z"),
        ("__keyevent@0__:del", "z"),
    ]
    r.zadd("w", {"a": 1})
    c = srv.client()
    c.execute_command("WATCH", "w")
    r.zpopmin("w", 0)  # nothing popped: EXEC still runs
    c.execute_command("MULTI")
    c.execute_command("ZCARD", "w")
    assert c.execute_command("EXEC") == [1]
    c.execute_command("WATCH", "w")
    r.zpopmax("w")
    c.execute_command("MULTI")
    c.execute_command("ZCARD", "w")
    assert c.execute_command("EXEC") is None
    c.close()


# --- blocking pops ----------------------------------------------------------


def test_bzpop_serves_at_once_when_something_is_there(r, c2, c3):
    r.zadd("z", {"a": 1, "b": 2})
    assert c2.cmd("BZPOPMIN", "none", "z", "0") == arr(3, bulks(b"z", b"a", b"1"))
    assert c3.cmd("BZPOPMAX", "z", "0") == arr(3, bulks(b"z", b"b") + dbl(b"2"))


def test_bzpopmin_woken_by_zadd(srv, r):
    t = blocked(srv, "BZPOPMIN", "a", "b", "0")
    wait_until(lambda: blocked_count(r) == 1)
    r.zadd("b", {"x": 5, "y": 6})
    t.join(5)
    assert t.result == arr(3, bulks(b"b", b"x", b"5"))
    assert r.zrange("b", 0, -1) == ["y"]
    assert blocked_count(r) == 0


def test_bzpopmax_woken_in_resp3_and_fifo(srv, r):
    t1 = blocked(srv, "BZPOPMAX", "q", "0", resp3=True)
    wait_until(lambda: blocked_count(r) == 1)
    t2 = blocked(srv, "BZPOPMAX", "q", "0")
    wait_until(lambda: blocked_count(r) == 2)
    r.zadd("q", {"m": 1})
    t1.join(5)
    assert t1.result == arr(3, bulks(b"q", b"m") + dbl(b"1"))
    assert t2.result is None
    r.zadd("q", {"n": 2})
    t2.join(5)
    assert t2.result == arr(3, bulks(b"q", b"n", b"2"))


def test_bzmpop_woken_with_count(srv, r):
    t = blocked(srv, "BZMPOP", "0", "2", "a", "b", "MAX", "COUNT", "2")
    wait_until(lambda: blocked_count(r) == 1)
    r.zadd("b", {"x": 1, "y": 2, "z": 3})
    t.join(5)
    assert t.result == arr(2, bulks(b"b") + arr(2, arr(2, bulks(b"z", b"3")) + arr(2, bulks(b"y", b"2"))))
    assert r.zrange("b", 0, -1) == ["x"]


def test_zunionstore_wakes_a_blocked_pop(srv, r):
    r.zadd("src", {"a": 1})
    t = blocked(srv, "BZPOPMIN", "dst", "0")
    wait_until(lambda: blocked_count(r) == 1)
    assert r.zunionstore("dst", ["src"]) == 1
    t.join(5)
    assert t.result == arr(3, bulks(b"dst", b"a", b"1"))


def test_blocking_timeouts_and_errors(srv, r, c2):
    start = time.time()
    assert r.bzpopmin(["none"], timeout=0.2) is None
    assert 0.15 <= time.time() - start < 2
    assert c2.cmd("BZMPOP", "0.1", "1", "none", "MIN") == b"*-1\r\n"
    c = Raw(srv.port, resp3=True)
    assert c.cmd("BZPOPMAX", "none", "0.1") == b"_\r\n"
    c.close()
    r.set("s", "x")
    for args, want in [
        (("BZPOPMIN", "z", "x"), err("ERR timeout is not a float or out of range")),
        (("BZPOPMIN", "z", "-1"), err("ERR timeout is negative")),
        (("BZPOPMIN", "z", "inf"), err("ERR timeout is negative")),
        (("BZPOPMIN", "none", "s", "0"), WRONGTYPE),
        (("BZMPOP", "x", "x", "z", "MIN"), err("ERR numkeys should be greater than 0")),
        (("BZMPOP", "x", "1", "z", "MIN"), err("ERR timeout is not a float or out of range")),
        (("BZMPOP", "0", "1", "z", "MIN", "COUNT", "-2"), err("ERR count should be greater than 0")),
    ]:
        assert c2.cmd(*args) == want, args


def test_blocking_inside_multi_does_not_block(r, c2):
    c2.cmd("MULTI")
    for args in (("BZPOPMIN", "none", "0"), ("BZPOPMAX", "none", "0"), ("BZMPOP", "0", "1", "none", "MIN")):
        assert c2.cmd(*args) == b"+QUEUED\r\n"
    assert c2.cmd("EXEC") == b"*3\r\n*-1\r\n*-1\r\n*-1\r\n"


@ebb_only
def test_served_pops_replay_from_the_log(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    r = s.client()
    r.zadd("src", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    t = blocked(s, "BZPOPMAX", "w", "0")
    wait_until(lambda: blocked_count(r) == 1)
    r.zadd("w", {"x": 1, "y": 2})
    t.join(5)
    assert r.bzpopmin("src", 0) == ("src", "a", 1.0)
    assert r.execute_command("BZMPOP", "0", "1", "src", "MAX", "COUNT", "2") == ["src", [["e", b"5"], ["d", b"4"]]]
    assert r.execute_command("ZMPOP", "1", "src", "MIN", "COUNT", "9") == ["src", [["b", b"2"], ["c", b"3"]]]
    r.zadd("u", {"p": 1, "q": 2})
    assert r.zunionstore("v", ["u", "w"]) == 3
    assert r.zpopmin("v") == [("p", 1.0)]
    before = {k: r.zrange(k, 0, -1, withscores=True) for k in ("src", "w", "u", "v")}
    r.close()
    s.stop()
    s.start()
    r = s.client()
    assert {k: r.zrange(k, 0, -1, withscores=True) for k in ("src", "w", "u", "v")} == before
    assert before["w"] == [("x", 1.0)] and before["src"] == []


# --- algebra ----------------------------------------------------------------


def algebra_inputs(r):
    r.zadd("z1", {"a": 1, "b": 2, "c": 3})
    r.zadd("z2", {"b": 10, "c": 20, "d": 30})


def sadd_or_skip(r, key, *members):
    try:
        r.sadd(key, *members)
    except redis.ResponseError as e:
        if "unknown command" in str(e):
            pytest.skip("sets are not available in this build")
        raise


def test_sets_are_inputs_with_score_one(r, c2):
    algebra_inputs(r)
    sadd_or_skip(r, "s", "a", "b", "x")
    assert c2.cmd("ZUNION", "3", "z1", "z2", "s", "WITHSCORES") == arr(
        10, bulks(b"x", b"1", b"a", b"2", b"b", b"13", b"c", b"23", b"d", b"30")
    )
    assert c2.cmd("ZDIFF", "2", "z1", "s", "WITHSCORES") == arr(2, bulks(b"c", b"3"))
    assert c2.cmd("ZINTERCARD", "3", "z1", "z2", "s", "LIMIT", "1") == b":1\r\n"
    assert c2.cmd("ZINTERCARD", "3", "z1", "z2", "s") == b":1\r\n"
    assert c2.cmd("ZINTERSTORE", "dst", "2", "z1", "s") == b":2\r\n"
    assert r.zrange("dst", 0, -1, withscores=True) == [("a", 2.0), ("b", 3.0)]


def test_zunion_zinter_zdiff_replies(r, c2, c3):
    algebra_inputs(r)
    assert c2.cmd("ZUNION", "2", "z1", "z2") == arr(4, bulks(b"a", b"b", b"c", b"d"))
    assert c2.cmd("ZUNION", "2", "z1", "z2", "WITHSCORES") == arr(
        8, bulks(b"a", b"1", b"b", b"12", b"c", b"23", b"d", b"30")
    )
    assert c3.cmd("ZINTER", "2", "z1", "z2", "WEIGHTS", "2", "0.5", "AGGREGATE", "MAX", "WITHSCORES") == arr(
        2, arr(2, bulks(b"b") + dbl(b"5")) + arr(2, bulks(b"c") + dbl(b"10"))
    )
    assert c2.cmd("ZDIFF", "2", "z1", "z2", "WITHSCORES") == arr(2, bulks(b"a", b"1"))
    assert c3.cmd("ZDIFF", "3", "z2", "z1", "none") == arr(1, bulks(b"d"))
    assert c2.cmd("ZINTER", "2", "z1", "none") == b"*0\r\n"
    assert c2.cmd("ZINTERCARD", "2", "z1", "z2") == b":2\r\n"
    assert c2.cmd("ZINTERCARD", "2", "z1", "z2", "LIMIT", "1") == b":1\r\n"


def test_infinities_and_weights(r, c2):
    r.zadd("a", {"x": 1, "y": "inf"})
    r.zadd("b", {"y": "-inf", "x": 2})
    assert c2.cmd("ZUNION", "2", "a", "b", "WITHSCORES") == arr(4, bulks(b"y", b"0", b"x", b"3"))
    assert c2.cmd("ZINTER", "2", "a", "b", "WEIGHTS", "0", "1", "WITHSCORES") == arr(4, bulks(b"y", b"-inf", b"x", b"2"))
    assert c2.cmd("ZUNION", "1", "a", "WEIGHTS", "0x10", "WITHSCORES") == arr(4, bulks(b"x", b"16", b"y", b"inf"))
    r.zadd("n", {"m": 0})
    assert c2.cmd("ZUNION", "1", "n", "WEIGHTS", "-1", "WITHSCORES") == arr(2, bulks(b"m", b"-0"))


def test_store_forms(srv, r, c2):
    algebra_inputs(r)
    r.set("dst", "old")
    r.expire("dst", 100)
    assert c2.cmd("ZUNIONSTORE", "dst", "2", "z1", "z2", "WEIGHTS", "1", "2") == b":4\r\n"
    assert r.zrange("dst", 0, -1, withscores=True) == [("a", 1.0), ("b", 22.0), ("c", 43.0), ("d", 60.0)]
    assert r.ttl("dst") == -1
    assert c2.cmd("ZINTERSTORE", "dst", "2", "z1", "z2", "AGGREGATE", "MIN") == b":2\r\n"
    assert r.zrange("dst", 0, -1, withscores=True) == [("b", 2.0), ("c", 3.0)]
    assert c2.cmd("ZDIFFSTORE", "z1", "2", "z1", "z2") == b":1\r\n"
    assert r.zrange("z1", 0, -1, withscores=True) == [("a", 1.0)]
    assert c2.cmd("ZINTERSTORE", "dst", "2", "z1", "none") == b":0\r\n"
    assert r.exists("dst") == 0


def test_store_events(srv, r):
    algebra_inputs(r)
    r.config_set("notify-keyspace-events", "KEzg")
    p = srv.client().pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    r.zunionstore("d1", ["z1", "z2"])
    r.zinterstore("d2", ["z1", "z2"])
    r.zdiffstore("d3", ["z1", "z2"])
    r.zinterstore("d1", ["z1", "none"])
    got = events(p, 4)
    p.close()
    assert got == [
        ("__keyevent@0__:zunionstore", "d1"),
        ("__keyevent@0__:zinterstore", "d2"),
        ("__keyevent@0__:zdiffstore", "d3"),
        ("__keyevent@0__:del", "d1"),
    ]


def test_algebra_errors(r, c2):
    algebra_inputs(r)
    r.set("str", "x")
    for args, want in [
        (("ZUNION", "0", "z1"), err("ERR at least 1 input key is needed for 'zunion' command")),
        (("ZINTERSTORE", "d", "-1", "z1"), err("ERR at least 1 input key is needed for 'zinterstore' command")),
        (("ZINTERCARD", "0", "z1"), err("ERR at least 1 input key is needed for 'zintercard' command")),
        (("ZDIFF", "x", "z1"), err("ERR value is not an integer or out of range")),
        (("ZUNION", "2", "z1"), err("ERR syntax error")),
        (("ZUNION", "2", "z1", "str", "junk"), WRONGTYPE),
        (("ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "x"), err("ERR weight value is not a float")),
        (("ZUNION", "2", "z1", "z2", "WEIGHTS", "1"), err("ERR syntax error")),
        (("ZUNION", "2", "z1", "z2", "AGGREGATE", "AVG"), err("ERR syntax error")),
        (("ZUNIONSTORE", "d", "1", "z1", "WITHSCORES"), err("ERR syntax error")),
        (("ZDIFF", "2", "z1", "z2", "WEIGHTS", "1", "1"), err("ERR syntax error")),
        (("ZINTERCARD", "1", "z1", "LIMIT", "-1"), err("ERR LIMIT can't be negative")),
        (("ZINTERCARD", "1", "z1", "WITHSCORES"), err("ERR syntax error")),
        (("ZUNION", "1"), err("ERR wrong number of arguments for 'zunion' command")),
    ]:
        assert c2.cmd(*args) == want, args


def test_command_getkeys(r):
    assert raw_cmd(r, "COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2") == ["d", "a", "b"]
    assert raw_cmd(r, "COMMAND", "GETKEYS", "ZINTERCARD", "2", "a", "b", "LIMIT", "1") == ["a", "b"]
    assert raw_cmd(r, "COMMAND", "GETKEYS", "BZMPOP", "0", "2", "a", "b", "MIN") == ["a", "b"]
    assert raw_cmd(r, "COMMAND", "GETKEYS", "BZPOPMIN", "a", "b", "0") == ["a", "b"]


# --- member deadlines ---------------------------------------------------------


@ebb_only
def test_expired_members_take_no_part(r):
    r.execute_command("ZADDEX", "t", "PX", "150", "1", "gone", "2", "soon")
    r.zadd("t", {"stay": 3})
    r.zadd("u", {"gone": 10, "stay": 30})
    assert r.zinter(["t", "u"], withscores=True) == [("gone", 11.0), ("stay", 33.0)]
    wait_until(lambda: r.zcard("t") == 1, timeout=5)
    assert r.zinter(["t", "u"], withscores=True) == [("stay", 33.0)]
    assert r.zpopmin("t") == [("stay", 3.0)]
    # Members copied by a STORE carry no deadline.
    r.execute_command("ZADDEX", "e", "PX", "200", "1", "m")
    assert r.zunionstore("copy", ["e"]) == 1
    wait_until(lambda: r.exists("e") == 0, timeout=5)
    assert r.zrange("copy", 0, -1) == ["m"]


# --- random members and scans ---------------------------------------------------


def test_zrandmember(r, c2, c3):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert r.zrandmember("z") in ("a", "b", "c")
    assert c2.cmd("ZRANDMEMBER", "none") == b"$-1\r\n"
    assert c3.cmd("ZRANDMEMBER", "none") == b"_\r\n"
    assert c2.cmd("ZRANDMEMBER", "none", "3") == b"*0\r\n"
    assert c2.cmd("ZRANDMEMBER", "z", "0") == b"*0\r\n"
    # At least the whole set: all of it, highest score first.
    assert c2.cmd("ZRANDMEMBER", "z", "5", "WITHSCORES") == arr(6, bulks(b"c", b"3", b"b", b"2", b"a", b"1"))
    assert c3.cmd("ZRANDMEMBER", "z", "3", "WITHSCORES") == arr(
        3, arr(2, bulks(b"c") + dbl(b"3")) + arr(2, bulks(b"b") + dbl(b"2")) + arr(2, bulks(b"a") + dbl(b"1"))
    )
    r.zadd("t", {"x": 1, "y": 1, "w": 0})
    assert c2.cmd("ZRANDMEMBER", "t", "3") == arr(3, bulks(b"y", b"x", b"w"))
    two = r.zrandmember("z", 2)
    assert len(two) == 2 and len(set(two)) == 2
    many = r.zrandmember("z", -20)
    assert len(many) == 20 and set(many) <= {"a", "b", "c"}
    r.set("s", "x")
    for args, want in [
        (("ZRANDMEMBER", "s"), WRONGTYPE),
        (("ZRANDMEMBER", "z", "x"), err("ERR value is not an integer or out of range")),
        (("ZRANDMEMBER", "z", "1", "SCORES"), err("ERR syntax error")),
        (("ZRANDMEMBER", "z", "-9223372036854775808"),
         err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")),
        (("ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"), err("ERR value is out of range")),
    ]:
        assert c2.cmd(*args) == want, args


def test_zscan_small_and_large(r, c2, c3):
    r.zadd("z", {"a": 1, "b": 0.1, "c": 1e20})
    body = arr(6, bulks(b"b", b"0.10000000000000001", b"a", b"1", b"c", b"1e+20"))
    assert c2.cmd("ZSCAN", "z", "0") == arr(2, bulks(b"0") + body)
    assert c3.cmd("ZSCAN", "z", "0") == arr(2, bulks(b"0") + body)
    assert c2.cmd("ZSCAN", "z", "0", "MATCH", "[ab]", "COUNT", "1") == arr(
        2, bulks(b"0") + arr(4, bulks(b"b", b"0.10000000000000001", b"a", b"1"))
    )
    assert c2.cmd("ZSCAN", "none", "0") == arr(2, bulks(b"0") + b"*0\r\n")
    big = {f"m{i}": i for i in range(1000)}
    r.zadd("big", big)
    cursor, steps, seen = 0, 0, {}
    while True:
        cursor, items = r.zscan("big", cursor, count=50)
        seen.update(items)
        steps += 1
        if cursor == 0:
            break
    assert steps > 5
    assert seen == {k: float(v) for k, v in big.items()}
    assert dict(r.zscan_iter("big", match="m99*")) == {"m99": 99.0, **{f"m99{i}": 990.0 + i for i in range(10)}}


def test_zscan_errors(r, c2):
    r.zadd("z", {"a": 1})
    r.set("s", "x")
    for args, want in [
        (("ZSCAN", "z", "x"), err("ERR invalid cursor")),
        (("ZSCAN", "s", "x"), err("ERR invalid cursor")),
        (("ZSCAN", "s", "0"), WRONGTYPE),
        (("ZSCAN", "z", "0", "COUNT", "0"), err("ERR syntax error")),
        (("ZSCAN", "z", "0", "COUNT", "x"), err("ERR value is not an integer or out of range")),
        (("ZSCAN", "z", "0", "MATCH"), err("ERR syntax error")),
        (("ZSCAN", "z", "0", "TYPE", "zset"), err("ERR syntax error")),
    ]:
        assert c2.cmd(*args) == want, args
