"""Hashes through the real binary: Redis 7.0 replies and errors in RESP2
and RESP3, HINCRBYFLOAT's extended precision, HRANDFIELD and HSCAN, the
field-TTL commands HSETEX (Redis 8 and Dragonfly forms), HGETEX and
HGETDEL, notifications, WATCH, and field deadlines surviving a restart."""

import time

from conftest import err, events, raw_cmd, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_basic_replies_resp2(r2):
    assert r2.hset("h", mapping={"a": "1", "b": "2"}) == 2
    assert raw_cmd(r2, "HSET", "h", "a", "x", "c", "3") == 1
    assert raw_cmd(r2, "HMSET", "h", "d", "4") == "OK"
    assert raw_cmd(r2, "HSETNX", "h", "a", "y") == 0
    assert raw_cmd(r2, "HSETNX", "h", "e", "5") == 1
    assert raw_cmd(r2, "HGET", "h", "a") == "x"
    assert raw_cmd(r2, "HGET", "h", "zz") is None
    assert raw_cmd(r2, "HMGET", "h", "a", "zz", "b") == ["x", None, "2"]
    assert raw_cmd(r2, "HGETALL", "h") == ["a", "x", "b", "2", "c", "3", "d", "4", "e", "5"]
    assert raw_cmd(r2, "HKEYS", "h") == ["a", "b", "c", "d", "e"]
    assert raw_cmd(r2, "HVALS", "h") == ["x", "2", "3", "4", "5"]
    assert raw_cmd(r2, "HLEN", "h") == 5
    assert raw_cmd(r2, "HEXISTS", "h", "a") == 1
    assert raw_cmd(r2, "HSTRLEN", "h", "a") == 1
    assert raw_cmd(r2, "HDEL", "h", "a", "zz") == 1
    # Small hashes keep insertion order across removals, like a listpack.
    assert raw_cmd(r2, "HKEYS", "h") == ["b", "c", "d", "e"]
    assert raw_cmd(r2, "HGETALL", "nokey") == []
    assert raw_cmd(r2, "HDEL", "h", "b", "c", "d", "e") == 4
    assert r2.exists("h") == 0


def test_hgetall_is_a_map_in_resp3(r3):
    r3.hset("h", mapping={"a": "1", "b": "2"})
    assert raw_cmd(r3, "HGETALL", "h") == {"a": "1", "b": "2"}
    assert raw_cmd(r3, "HGETALL", "nokey") == {}
    assert raw_cmd(r3, "HGET", "nokey", "a") is None


def test_errors(r):
    r.set("s", "v")
    assert err(r, "HSET", "h", "a", "1", "b") == "wrong number of arguments for 'hset' command"
    assert err(r, "HMSET", "h", "a") == "wrong number of arguments for 'hmset' command"
    assert err(r, "HGET", "h") == "wrong number of arguments for 'hget' command"
    for cmd in (["HSET", "s", "a", "1"], ["HGET", "s", "a"], ["HGETALL", "s"], ["HLEN", "s"], ["HSCAN", "s", "0"]):
        assert err(r, *cmd) == WRONGTYPE
    r.hset("h", mapping={"s": "abc", "big": "9223372036854775807", "n": "1"})
    assert err(r, "HINCRBY", "h", "n", "x") == "value is not an integer or out of range"
    assert err(r, "HINCRBY", "h", "s", "1") == "hash value is not an integer"
    assert err(r, "HINCRBY", "h", "big", "1") == "increment or decrement would overflow"
    assert err(r, "HINCRBYFLOAT", "h", "n", "x") == "value is not a valid float"
    assert err(r, "HINCRBYFLOAT", "h", "n", "inf") == "value is NaN or Infinity"
    assert err(r, "HINCRBYFLOAT", "h", "s", "1") == "hash value is not a float"
    assert err(r, "HSCAN", "h", "x") == "invalid cursor"
    assert err(r, "HSCAN", "h", "0", "COUNT", "0") == "syntax error"
    assert err(r, "HRANDFIELD", "h", "1", "WITHVALUE") == "syntax error"
    assert err(r, "HRANDFIELD", "h", "-9223372036854775808") == (
        "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    )


def test_counters(r2):
    assert raw_cmd(r2, "HINCRBY", "h", "n", "5") == 5
    assert raw_cmd(r2, "HINCRBY", "h", "n", "-7") == -2
    assert raw_cmd(r2, "HINCRBYFLOAT", "h", "f", "0.1") == "0.1"
    assert raw_cmd(r2, "HINCRBYFLOAT", "h", "f", "0.2") == "0.3"
    r2.hset("h", "g", "5.0e3")
    assert raw_cmd(r2, "HINCRBYFLOAT", "h", "g", "2.0e2") == "5200"
    assert raw_cmd(r2, "HINCRBYFLOAT", "h", "g", "-5200") == "0"


def test_hrandfield_shapes(r2, r3):
    for c in (r2, r3):
        c.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert raw_cmd(r2, "HRANDFIELD", "nokey") is None
    assert raw_cmd(r2, "HRANDFIELD", "h") in ("a", "b", "c")
    assert raw_cmd(r2, "HRANDFIELD", "h", "5") == ["a", "b", "c"]
    assert raw_cmd(r2, "HRANDFIELD", "h", "5", "WITHVALUES") == ["a", "1", "b", "2", "c", "3"]
    assert raw_cmd(r3, "HRANDFIELD", "h", "5", "WITHVALUES") == [["a", "1"], ["b", "2"], ["c", "3"]]
    many = raw_cmd(r2, "HRANDFIELD", "h", "-7")
    assert len(many) == 7 and set(many) <= {"a", "b", "c"}
    pairs = raw_cmd(r3, "HRANDFIELD", "h", "-4", "WITHVALUES")
    assert len(pairs) == 4 and all(len(p) == 2 and {"a": "1", "b": "2", "c": "3"}[p[0]] == p[1] for p in pairs)
    two = raw_cmd(r2, "HRANDFIELD", "h", "2")
    assert len(set(two)) == 2
    assert raw_cmd(r2, "HRANDFIELD", "nokey", "-3") == []


def test_hscan(r):
    r.hset("small", mapping={"a": "1", "b": "2", "ab": "3"})
    assert raw_cmd(r, "HSCAN", "small", "0") == ["0", ["a", "1", "b", "2", "ab", "3"]]
    assert raw_cmd(r, "HSCAN", "small", "0", "MATCH", "a*", "NOVALUES") == ["0", ["a", "ab"]]
    assert raw_cmd(r, "HSCAN", "nokey", "0") == ["0", []]
    # More fields than hash-max-listpack-entries (512): walked in steps.
    r.hset("big", mapping={f"f{i}": str(i) for i in range(600)})
    seen, cursor, calls = {}, "0", 0
    while True:
        cursor, items = raw_cmd(r, "HSCAN", "big", cursor, "COUNT", "50")
        calls += 1
        seen.update(dict(zip(items[::2], items[1::2])))
        if cursor == "0":
            break
    assert calls > 5
    assert seen == {f"f{i}": str(i) for i in range(600)}
    assert dict(r.hscan_iter("big", match="f4?")) == {f"f4{i}": f"4{i}" for i in range(10)}


def test_field_ttl_with_hsetex_redis_form(r):
    assert raw_cmd(r, "HSETEX", "h", "PX", "150", "FIELDS", "2", "a", "1", "b", "2") == 1
    r.hset("h", "c", "3")
    ttl = raw_cmd(r, "HPTTL", "h", "FIELDS", "3", "a", "b", "c")
    assert 0 < ttl[0] <= 150 and 0 < ttl[1] <= 150 and ttl[2] == -1
    wait_until(lambda: r.hlen("h") == 1)
    assert r.hgetall("h") == {"c": "3"}
    assert raw_cmd(r, "HSETEX", "h", "FXX", "EX", "10", "FIELDS", "1", "zz", "1") == 0
    assert raw_cmd(r, "HSETEX", "h", "FNX", "KEEPTTL", "FIELDS", "1", "d", "4") == 1
    assert raw_cmd(r, "HSETEX", "h", "PXAT", "1", "FIELDS", "1", "c", "x") == 1
    assert r.hgetall("h") == {"d": "4"}
    assert err(r, "HSETEX", "h", "EX", "1", "PX", "1", "FIELDS", "1", "a", "b") == (
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    )
    assert err(r, "HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "b") == "Only one of FXX or FNX arguments can be specified"
    assert err(r, "HSETEX", "h", "FIELDS", "0", "a", "b") == "invalid number of fields"
    assert err(r, "HSETEX", "h", "FIELDS", "2", "a", "b") == "wrong number of arguments for 'hsetex' command"
    assert err(r, "HSETEX", "h", "nx", "FIELDS", "1", "a", "b") == "unknown argument: nx"


def test_hsetex_dragonfly_form(r):
    assert raw_cmd(r, "HSETEX", "h", "100", "a", "1", "b", "2") == 2
    assert raw_cmd(r, "HSETEX", "h", "NX", "100", "a", "x", "c", "3") == 1
    assert r.hget("h", "a") == "1"
    r.hset("h", "plain", "p")
    assert raw_cmd(r, "HSETEX", "h", "KEEPTTL", "100", "plain", "q", "d", "4") == 1
    ttl = raw_cmd(r, "HTTL", "h", "FIELDS", "3", "a", "plain", "d")
    assert 99 <= ttl[0] <= 100 and ttl[1] == -1 and 99 <= ttl[2] <= 100
    assert err(r, "HSETEX", "h", "0", "a", "1") == "value is not an integer or out of range"
    assert err(r, "HSETEX", "h", "10", "a") == "wrong number of arguments for 'hsetex' command"


def test_hincr_keeps_field_deadline(r):
    raw_cmd(r, "HSETEX", "h", "EX", "100", "FIELDS", "2", "n", "1", "f", "1.5")
    assert r.hincrby("h", "n", 2) == 3
    assert raw_cmd(r, "HINCRBYFLOAT", "h", "f", "0.25") == "1.75"
    ttl = raw_cmd(r, "HTTL", "h", "FIELDS", "2", "n", "f")
    assert 99 <= ttl[0] <= 100 and 99 <= ttl[1] <= 100
    r.hset("h", "n", "0")
    assert raw_cmd(r, "HTTL", "h", "FIELDS", "1", "n") == [-1]


def test_hgetex_and_hgetdel(r):
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert raw_cmd(r, "HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "zz") == ["1", None]
    assert 99 <= raw_cmd(r, "HTTL", "h", "FIELDS", "1", "a")[0] <= 100
    assert raw_cmd(r, "HGETEX", "h", "PERSIST", "FIELDS", "1", "a") == ["1"]
    assert raw_cmd(r, "HTTL", "h", "FIELDS", "1", "a") == [-1]
    assert raw_cmd(r, "HGETEX", "h", "PXAT", "1", "FIELDS", "1", "a") == ["1"]
    assert r.hexists("h", "a") == 0
    assert raw_cmd(r, "HGETDEL", "h", "FIELDS", "2", "b", "zz") == ["2", None]
    assert raw_cmd(r, "HGETDEL", "h", "FIELDS", "1", "c") == ["3"]
    assert r.exists("h") == 0
    assert raw_cmd(r, "HGETEX", "nokey", "FIELDS", "1", "a") == [None]
    assert err(r, "HGETEX", "h", "XFIELDX", "1", "a") == "Mandatory argument FIELDS is missing or not at the right position"
    assert err(r, "HGETEX", "h", "FIELDS", "0", "a") == "Number of fields must be a positive integer"
    assert err(r, "HGETDEL", "h", "FIELDS", "2", "a") == "The `numfields` parameter must match the number of arguments"
    assert err(r, "HGETEX", "h", "PX", "-1", "FIELDS", "1", "a") == "invalid expire time, must be >= 0"


def test_notifications(ebb, r):
    r.config_set("notify-keyspace-events", "KEhgS")
    p = ebb.client().pubsub()
    p.psubscribe("__keyevent@0__:*", "__subkeyspace@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    r.hset("h", mapping={"a": "1", "b": "2"})
    raw_cmd(r, "HSETEX", "h", "EX", "100", "FIELDS", "1", "c", "3")
    r.hdel("h", "a", "b", "c")
    got = events(p, 9)
    p.close()
    assert got == [
        ("__keyevent@0__:hset", "h"),
        ("__subkeyspace@0__:h", "hset|1:a,1:b"),
        ("__keyevent@0__:hset", "h"),
        ("__subkeyspace@0__:h", "hset|1:c"),
        ("__keyevent@0__:hexpire", "h"),
        ("__subkeyspace@0__:h", "hexpire|1:c"),
        ("__keyevent@0__:hdel", "h"),
        ("__subkeyspace@0__:h", "hdel|1:a,1:b,1:c"),
        ("__keyevent@0__:del", "h"),
    ]


def test_expired_fields_are_notified(ebb, r):
    r.config_set("notify-keyspace-events", "KEhgS")
    p = ebb.client().pubsub()
    p.psubscribe("__keyevent@0__:hexpired", "__subkeyspace@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    raw_cmd(r, "HSETEX", "h", "PX", "50", "FIELDS", "1", "a", "1")
    r.hset("h", "keep", "1")
    got = events(p, 5)
    p.close()
    assert ("__keyevent@0__:hexpired", "h") in got
    assert ("__subkeyspace@0__:h", "hexpired|1:a") in got
    assert r.hgetall("h") == {"keep": "1"}


def test_watch_aborts_on_field_changes(ebb, r):
    r.hset("h", "a", "1")
    c = ebb.client()
    c.execute_command("WATCH", "h")
    raw_cmd(r, "HGETEX", "h", "FIELDS", "1", "a")  # a read: EXEC still runs
    c.execute_command("MULTI")
    c.execute_command("HLEN", "h")
    assert c.execute_command("EXEC") == [1]
    c.execute_command("WATCH", "h")
    raw_cmd(r, "HGETEX", "h", "EX", "100", "FIELDS", "1", "a")
    c.execute_command("MULTI")
    c.execute_command("HLEN", "h")
    assert c.execute_command("EXEC") is None
    c.close()


def test_deadlines_survive_restart_from_aof(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = s.client()
    raw_cmd(c, "HSETEX", "h", "EX", "1000", "FIELDS", "2", "n", "1", "f", "0.1")
    c.hset("h", "plain", "p")
    c.hincrby("h", "n", 1)
    raw_cmd(c, "HINCRBYFLOAT", "h", "f", "0.2")
    raw_cmd(c, "HSETEX", "h", "NX", "1000", "d", "x")
    raw_cmd(c, "HGETEX", "h", "PX", "500000", "FIELDS", "1", "plain")
    raw_cmd(c, "HGETDEL", "h", "FIELDS", "1", "d")
    before = raw_cmd(c, "HPEXPIRETIME", "h", "FIELDS", "3", "n", "f", "plain")
    s.kill()
    time.sleep(0.2)
    s.start()
    c = s.client()
    assert c.hgetall("h") == {"n": "2", "f": "0.3", "plain": "p"}
    assert raw_cmd(c, "HPEXPIRETIME", "h", "FIELDS", "3", "n", "f", "plain") == before
