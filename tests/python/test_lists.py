"""The list family through the real binary: replies and errors in RESP2 and
RESP3, keyspace events, and real blocking (wake-ups, timeouts, FIFO order)."""

import threading
import time

import pytest
import redis

from conftest import Raw, raw_cmd, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def srv(server_factory):
    """A fresh server per test: blocked clients and keys never leak between
    tests, and nothing depends on FLUSHALL."""
    return server_factory()


@pytest.fixture
def r(srv):
    c = srv.client()
    yield c
    c.close()


def absent(r, *keys):
    """Whether the keys hold no list (an emptied list is deleted)."""
    return all(r.llen(k) == 0 for k in keys)


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        raw_cmd(r, *args)
    return str(e.value)


def test_push_pop_and_ranges(r):
    assert r.lpush("l", "a", "b") == 2
    assert r.rpush("l", "c") == 3
    assert r.lpushx("l", "z") == 4
    assert r.rpushx("nokey", "z") == 0
    assert absent(r, "nokey")
    assert r.lrange("l", 0, -1) == ["z", "b", "a", "c"]
    assert r.lrange("l", -2, 100) == ["a", "c"]
    assert r.lrange("l", 3, 1) == []
    assert r.llen("l") == 4
    assert r.lindex("l", -1) == "c"
    assert r.lindex("l", 4) is None
    assert r.lpop("l") == "z"
    assert r.rpop("l", 2) == ["c", "a"]
    assert r.lpop("l", 5) == ["b"]
    assert absent(r, "l")
    assert r.lpop("l") is None
    assert r.lpop("l", 2) is None


def test_pop_nil_shapes_resp2_and_resp3(srv, r):
    c2 = Raw(srv.port)
    assert c2.cmd("LPOP", "none") == b"$-1\r\n"
    assert c2.cmd("LPOP", "none", "2") == b"*-1\r\n"
    assert c2.cmd("RPOP", "none", "0") == b"*-1\r\n"
    assert c2.cmd("LMPOP", "1", "none", "LEFT") == b"*-1\r\n"
    assert c2.cmd("LINDEX", "none", "0") == b"$-1\r\n"
    assert c2.cmd("LPOS", "none", "a") == b"$-1\r\n"
    assert c2.cmd("LPOS", "none", "a", "COUNT", "0") == b"*0\r\n"
    assert c2.cmd("LMOVE", "none", "d", "LEFT", "LEFT") == b"$-1\r\n"
    c2.cmd("RPUSH", "l", "a")
    assert c2.cmd("LPOP", "l", "0") == b"*0\r\n"
    c3 = Raw(srv.port, resp3=True)
    assert c3.cmd("LPOP", "none") == b"_\r\n"
    assert c3.cmd("LPOP", "none", "2") == b"_\r\n"
    assert c3.cmd("LMPOP", "1", "none", "LEFT") == b"_\r\n"
    assert c3.cmd("LPOP", "l", "1") == b"*1\r\n$1\r\na\r\n"
    c2.close()
    c3.close()


def test_errors(r):
    r.set("s", "v")
    r.rpush("l", "a", "b", "c")
    for args in [("LPUSH", "s", "x"), ("LPOP", "s"), ("LLEN", "s"), ("LRANGE", "s", 0, 1),
                 ("LINDEX", "s", 0), ("LSET", "s", 0, "x"), ("LINSERT", "s", "BEFORE", "a", "x"),
                 ("LREM", "s", 0, "x"), ("LTRIM", "s", 0, 1), ("LPOS", "s", "a"),
                 ("LMOVE", "s", "l", "LEFT", "LEFT"), ("LMOVE", "l", "s", "LEFT", "LEFT"),
                 ("LMPOP", 2, "none", "s", "LEFT"), ("BLPOP", "s", 0)]:
        assert err(r, *args) == WRONGTYPE, args
    assert err(r, "LPOP", "l", "-1") == "value is out of range, must be positive"
    assert err(r, "LPOP", "l", "1", "2") == "wrong number of arguments for 'lpop' command"
    assert err(r, "LSET", "none", 0, "x") == "no such key"
    assert err(r, "LSET", "l", 10, "x") == "index out of range"
    assert err(r, "LINDEX", "l", "x") == "value is not an integer or out of range"
    assert err(r, "LINSERT", "l", "MIDDLE", "a", "x") == "syntax error"
    assert err(r, "LPOS", "l", "a", "RANK", 0) == (
        "RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list")
    assert err(r, "LPOS", "l", "a", "COUNT", -1) == "COUNT can't be negative"
    assert err(r, "LPOS", "l", "a", "MAXLEN", -1) == "MAXLEN can't be negative"
    assert err(r, "LMOVE", "l", "d", "UP", "LEFT") == "syntax error"
    assert err(r, "LMPOP", 0, "l", "LEFT") == "numkeys should be greater than 0"
    assert err(r, "LMPOP", 1, "l", "LEFT", "COUNT", 0) == "count should be greater than 0"
    assert err(r, "LMPOP", 2, "l", "LEFT") == "syntax error"
    assert err(r, "BLPOP", "l", "x") == "timeout is not a float or out of range"
    assert err(r, "BLPOP", "l", "-1") == "timeout is negative"
    assert err(r, "BLMPOP", "x", 0, "l", "LEFT") == "numkeys should be greater than 0"
    assert err(r, "BLMOVE", "l", "d", "LEFT", "LEFT", "inf") == "timeout is negative"


def test_edit_commands(r):
    r.rpush("l", "a", "b", "a", "c", "a")
    assert r.linsert("l", "BEFORE", "b", "x") == 6
    assert r.linsert("l", "AFTER", "nope", "x") == -1
    assert r.linsert("none", "AFTER", "a", "x") == 0
    assert r.lset("l", -1, "A") is True
    assert r.lrange("l", 0, -1) == ["a", "x", "b", "a", "c", "A"]
    assert r.lrem("l", -1, "a") == 1
    assert r.lrem("l", 0, "x") == 1
    assert r.lrange("l", 0, -1) == ["a", "b", "c", "A"]
    assert r.ltrim("l", 1, -2) is True
    assert r.lrange("l", 0, -1) == ["b", "c"]
    assert r.ltrim("l", 5, 2) is True
    assert absent(r, "l")
    r.rpush("p", "a", "b", "a", "c", "a", "d", "a")
    assert r.lpos("p", "a") == 0
    assert r.lpos("p", "a", rank=-2, count=2) == [4, 2]
    assert r.lpos("p", "a", rank=2, count=0, maxlen=5) == [2, 4]
    assert raw_cmd(r, "LPOS", "p", "a", "RANK", "-9223372036854775808", "COUNT", "1") == [6, 4, 2, 0]
    assert r.lpos("p", "zz") is None


def test_move_commands(r):
    r.rpush("src", "a", "b", "c")
    assert r.rpoplpush("src", "dst") == "c"
    assert r.lmove("src", "dst", "LEFT", "RIGHT") == "a"
    assert r.lmove("dst", "dst", "LEFT", "RIGHT") == "c"
    assert r.lrange("dst", 0, -1) == ["a", "c"]
    assert r.lmove("none", "dst", "LEFT", "LEFT") is None
    assert r.lmpop(2, "none", "src", direction="RIGHT", count=5) == ["src", ["b"]]
    assert absent(r, "src")


def test_keyspace_events(srv, r):
    r.config_set("notify-keyspace-events", "KEA")
    p = srv.client().pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: p.get_message(timeout=0.1) is not None)
    r.rpush("src", "a")
    r.lmove("src", "dst", "LEFT", "RIGHT")
    r.rpush("t", "a", "b")
    r.ltrim("t", 0, 0)
    r.linsert("t", "BEFORE", "a", "z")
    r.lset("t", 0, "y")
    r.lrem("t", 0, "y")
    r.rpop("t")
    want = [("rpush", "src"), ("rpush", "dst"), ("lpop", "src"), ("del", "src"),
            ("rpush", "t"), ("ltrim", "t"), ("linsert", "t"), ("lset", "t"), ("lrem", "t"),
            ("rpop", "t"), ("del", "t")]
    got = []
    end = time.time() + 3
    while time.time() < end and len(got) < len(want):
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            got.append((m["channel"].split(":", 1)[1], m["data"]))
    assert got == want
    p.close()


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


def test_blpop_woken_by_push_from_another_client(srv, r):
    t = blocked(srv, "BLPOP", "a", "b", "0")
    wait_until(lambda: blocked_count(r) == 1)
    assert r.rpush("b", "x", "y") == 2
    t.join(5)
    assert t.result == b"*2\r\n$1\r\nb\r\n$1\r\nx\r\n"
    assert r.lrange("b", 0, -1) == ["y"]
    assert blocked_count(r) == 0


def test_blocked_clients_are_served_in_fifo_order(srv, r):
    ts = []
    for _ in range(3):
        ts.append(blocked(srv, "BRPOP", "q", "0"))
        n = len(ts)
        wait_until(lambda: blocked_count(r) == n)
    r.rpush("q", "1", "2")
    ts[0].join(5)
    ts[1].join(5)
    assert ts[0].result == b"*2\r\n$1\r\nq\r\n$1\r\n2\r\n"
    assert ts[1].result == b"*2\r\n$1\r\nq\r\n$1\r\n1\r\n"
    assert ts[2].result is None
    r.lpush("q", "3")
    ts[2].join(5)
    assert ts[2].result == b"*2\r\n$1\r\nq\r\n$1\r\n3\r\n"
    assert absent(r, "q")


def test_timeouts(srv, r):
    start = time.time()
    assert r.blpop(["none"], timeout=0.2) is None
    assert 0.15 <= time.time() - start < 2
    for args in (("BLMOVE", "none", "d", "LEFT", "LEFT", "0.1"), ("BRPOPLPUSH", "none", "d", "0.1"),
                 ("BLMPOP", "0.1", "1", "none", "LEFT")):
        c = Raw(srv.port)
        assert c.cmd(*args) == b"*-1\r\n", args
        c.close()
    c = Raw(srv.port, resp3=True)
    assert c.cmd("BLPOP", "none", "0.1") == b"_\r\n"
    c.close()


def test_blmove_woken_and_chain(srv, r):
    t1 = blocked(srv, "BLMOVE", "a", "b", "RIGHT", "LEFT", "0")
    wait_until(lambda: blocked_count(r) == 1)
    t2 = blocked(srv, "BLPOP", "b", "0")
    wait_until(lambda: blocked_count(r) == 2)
    # The element moved into b by the first client wakes the second.
    r.rpush("a", "x")
    t1.join(5)
    t2.join(5)
    assert t1.result == b"$1\r\nx\r\n"
    assert t2.result == b"*2\r\n$1\r\nb\r\n$1\r\nx\r\n"
    assert absent(r, "a", "b")


def test_blmpop_and_brpoplpush_woken(srv, r):
    t = blocked(srv, "BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "2")
    wait_until(lambda: blocked_count(r) == 1)
    r.rpush("b", "1", "2", "3")
    t.join(5)
    assert t.result == b"*2\r\n$1\r\nb\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n"
    t = blocked(srv, "BRPOPLPUSH", "c", "d", "0")
    wait_until(lambda: blocked_count(r) == 1)
    r.lpush("c", "v")
    t.join(5)
    assert t.result == b"$1\r\nv\r\n"
    assert r.lrange("d", 0, -1) == ["v"]


def test_blocking_inside_multi_does_not_block(srv, r):
    c = Raw(srv.port)
    c.cmd("MULTI")
    for args in (("BLPOP", "none", "0"), ("BLMOVE", "none", "d", "LEFT", "LEFT", "0"),
                 ("BRPOPLPUSH", "none", "d", "0"), ("BLMPOP", "0", "1", "none", "LEFT")):
        assert c.cmd(*args) == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == b"*4\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n"
    c.close()


def test_served_blocking_pops_replay_from_the_log(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    r = s.client()
    r.rpush("src", "a", "b", "c", "d")
    t = blocked(s, "BLPOP", "w", "0")
    wait_until(lambda: blocked_count(r) == 1)
    r.rpush("w", "1", "2")
    t.join(5)
    assert r.blmove("src", "dst", 0, "LEFT", "RIGHT") == "a"
    assert r.brpoplpush("src", "dst", 0) == "d"
    assert r.blmpop(0, 1, "src", direction="LEFT", count=1) == ["src", ["b"]]
    assert r.lmpop(1, "src", direction="RIGHT", count=3) == ["src", ["c"]]
    before = {k: r.lrange(k, 0, -1) for k in ("src", "dst", "w")}
    r.close()
    s.stop()
    s.start()
    r = s.client()
    assert {k: r.lrange(k, 0, -1) for k in ("src", "dst", "w")} == before
    assert before == {"src": [], "dst": ["d", "a"], "w": ["2"]}
