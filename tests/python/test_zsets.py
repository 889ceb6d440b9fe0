"""Sorted sets through the real binary: Redis 7.0 replies and errors in
RESP2 and RESP3, member deadlines, ZADDEX, notifications, transactions."""

from conftest import err, events, raw_cmd, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_zadd_flags_and_replies(r2):
    assert r2.zadd("z", {"a": 1, "b": 2}) == 2
    assert r2.zadd("z", {"a": 1, "b": 3, "c": 4}) == 1
    assert raw_cmd(r2, "ZADD", "z", "CH", "1", "a", "5", "b", "6", "d") == 2
    assert raw_cmd(r2, "ZADD", "z", "NX", "9", "a", "7", "e") == 1
    assert raw_cmd(r2, "ZADD", "z", "XX", "CH", "9", "a", "8", "f") == 1
    assert raw_cmd(r2, "ZADD", "z", "GT", "CH", "5", "a", "10", "g") == 1
    assert raw_cmd(r2, "ZADD", "z", "LT", "CH", "5", "a") == 1
    assert raw_cmd(r2, "ZADD", "z", "INCR", "1.5", "a") == "6.5"
    assert raw_cmd(r2, "ZADD", "z", "NX", "INCR", "1", "a") is None
    assert raw_cmd(r2, "ZADD", "z", "0x10", "hex") == 1
    assert r2.zscore("z", "hex") == 16.0
    assert raw_cmd(r2, "ZINCRBY", "z", "1", "hex") == "17"
    assert r2.zcard("z") == 7


def test_zadd_errors(r):
    assert err(r, "ZADD", "z", "NX", "XX", "1", "a") == "XX and NX options at the same time are not compatible"
    assert err(r, "ZADD", "z", "GT", "LT", "1", "a") == "GT, LT, and/or NX options at the same time are not compatible"
    assert err(r, "ZADD", "z", "INCR", "1", "a", "2", "b") == "INCR option supports a single increment-element pair"
    assert err(r, "ZADD", "z", "1", "a", "b") == "syntax error"
    assert err(r, "ZADD", "z", "nan", "a") == "value is not a valid float"
    assert err(r, "ZADD", "z", "1e400", "a") == "value is not a valid float"
    r.zadd("z", {"i": float("inf")})
    assert err(r, "ZINCRBY", "z", "-inf", "i") == "resulting score is not a number (NaN)"
    r.set("s", "x")
    assert err(r, "ZADD", "s", "1", "a") == WRONGTYPE
    assert err(r, "ZADD", "z") == "wrong number of arguments for 'zadd' command"


def test_reads(r2):
    r2.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    assert raw_cmd(r2, "ZSCORE", "z", "c") == "3"
    assert raw_cmd(r2, "ZSCORE", "z", "x") is None
    assert raw_cmd(r2, "ZMSCORE", "z", "a", "x") == ["1", None]
    assert r2.zrank("z", "c") == 2
    assert r2.zrevrank("z", "c") == 2
    assert r2.zrank("z", "x") is None
    assert r2.zcount("z", "(1", "+inf") == 4
    assert r2.zlexcount("z", "[b", "(d") == 2
    assert err(r2, "ZCOUNT", "z", "x", "1") == "min or max is not a float"
    assert err(r2, "ZLEXCOUNT", "z", "x", "+") == "min or max not valid string range item"
    assert r2.zrem("z", "a", "x") == 1
    assert r2.zcard("nokey") == 0


def test_zrange_family_resp2(r2):
    r2.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    assert raw_cmd(r2, "ZRANGE", "z", "0", "1", "WITHSCORES") == ["a", "1", "b", "2"]
    assert raw_cmd(r2, "ZRANGE", "z", "5", "1", "BYSCORE", "REV", "LIMIT", "1", "2", "WITHSCORES") == ["d", "4", "c", "3"]
    assert raw_cmd(r2, "ZRANGE", "z", "[e", "[b", "BYLEX", "REV", "LIMIT", "1", "2") == ["d", "c"]
    assert raw_cmd(r2, "ZRANGEBYSCORE", "z", "(1", "3") == ["b", "c"]
    assert raw_cmd(r2, "ZREVRANGEBYSCORE", "z", "3", "1", "LIMIT", "1", "-1") == ["b", "a"]
    assert raw_cmd(r2, "ZRANGEBYLEX", "z", "-", "+", "LIMIT", "-1", "2") == []
    assert raw_cmd(r2, "ZREVRANGEBYLEX", "z", "+", "(c") == ["e", "d"]
    assert raw_cmd(r2, "ZREVRANGE", "z", "0", "1") == ["e", "d"]
    assert raw_cmd(r2, "ZRANGE", "z", "0", "-1", "LIMIT", "3", "-1") == ["a", "b", "c", "d", "e"]
    assert (
        err(r2, "ZRANGE", "z", "0", "-1", "LIMIT", "0", "1")
        == "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
    )
    assert (
        err(r2, "ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES")
        == "syntax error, WITHSCORES not supported in combination with BYLEX"
    )
    assert err(r2, "ZRANGE", "z", "0", "-1", "REV", "REV") == "syntax error"
    assert err(r2, "ZRANGE", "z", "a", "b") == "value is not an integer or out of range"
    assert raw_cmd(r2, "ZRANGE", "nokey", "0", "-1") == []


def test_zrange_withscores_resp3(r3):
    r3.zadd("z", {"a": 1, "b": 2.5})
    assert raw_cmd(r3, "ZRANGE", "z", "0", "-1", "WITHSCORES") == [["a", 1.0], ["b", 2.5]]
    assert raw_cmd(r3, "ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES") == [["a", 1.0], ["b", 2.5]]
    assert raw_cmd(r3, "ZSCORE", "z", "b") == 2.5
    assert raw_cmd(r3, "ZMSCORE", "z", "a", "x") == [1.0, None]
    assert raw_cmd(r3, "ZADD", "z", "XX", "INCR", "1", "x") is None
    assert raw_cmd(r3, "ZINCRBY", "z", "1", "b") == 3.5


def test_zrangestore_and_zremrange(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    assert raw_cmd(r, "ZRANGESTORE", "d", "z", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "0", "2") == 2
    assert r.zrange("d", 0, -1, withscores=True) == [("d", 4.0), ("e", 5.0)]
    assert raw_cmd(r, "ZRANGESTORE", "d", "z", "5", "1") == 0
    assert r.exists("d") == 0
    assert err(r, "ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES") == "syntax error"
    assert r.zremrangebyrank("z", 0, 0) == 1
    assert r.zremrangebyscore("z", "(2", 3) == 1
    assert r.zremrangebylex("z", "[e", "+") == 1
    assert r.zrange("z", 0, -1) == ["b", "d"]
    assert r.zremrangebyrank("z", 0, -1) == 2
    assert r.exists("z") == 0


def test_zaddex_ttl_expires_members(r):
    assert raw_cmd(r, "ZADDEX", "z", "PX", "150", "1", "a", "2", "b") == 2
    r.zadd("z", {"c": 3})
    assert r.zcard("z") == 3
    wait_until(lambda: r.zcard("z") == 1, timeout=5)
    assert r.zrange("z", 0, -1, withscores=True) == [("c", 3.0)]
    # The sweeper reclaims members nobody reads.
    assert raw_cmd(r, "ZADDEX", "y", "PX", "50", "1", "a") == 1
    wait_until(lambda: r.exists("y") == 0, timeout=5)


def test_zaddex_keepttl_cap_limit(r2):
    assert raw_cmd(r2, "ZADDEX", "h", "INCR", "KEEPTTL", "EX", "100", "1", "bucket") == "1"
    assert raw_cmd(r2, "ZADDEX", "h", "INCR", "KEEPTTL", "EX", "100", "1", "bucket") == "2"
    for t, page in [(1, "p1"), (2, "p2"), (3, "p3"), (4, "p4")]:
        assert raw_cmd(r2, "ZADDEX", "recent", "CAP", "3", "EX", "100", str(t), page) == 1
    assert r2.zrange("recent", 0, -1, desc=True) == ["p4", "p3", "p2"]
    assert raw_cmd(r2, "ZADDEX", "otp", "LIMIT", "2", "EX", "300", "1", "c1", "2", "c2") == 2
    assert raw_cmd(r2, "ZADDEX", "otp", "LIMIT", "2", "EX", "300", "3", "c3") == -1
    assert r2.zrange("otp", 0, -1) == ["c1", "c2"]


def test_zaddex_errors(r):
    assert err(r, "ZADDEX", "z", "NX", "XX", "EX", "1", "1", "a") == "XX and NX options at the same time are not compatible"
    assert err(r, "ZADDEX", "z", "1", "a") == "wrong number of arguments for 'zaddex' command"
    assert err(r, "ZADDEX", "z", "NX", "1", "a", "2", "b") == "syntax error, ZADDEX requires one of EX, PX, EXAT or PXAT"
    assert err(r, "ZADDEX", "z", "CAP", "1", "LIMIT", "1", "EX", "1", "1", "a") == "CAP and LIMIT options at the same time are not compatible"
    assert err(r, "ZADDEX", "z", "EX", "0", "1", "a") == "invalid expire time in 'zaddex' command"
    assert err(r, "ZADDEX", "z", "CAP", "-1", "EX", "1", "1", "a") == "value is out of range, must be positive"


def test_notifications(ebb, r):
    r.config_set("notify-keyspace-events", "KEzgS")
    p = ebb.client().pubsub()
    p.psubscribe("__keyevent@0__:*", "__subkeyspace@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    r.zadd("z", {"a": 1})
    raw_cmd(r, "ZADDEX", "z", "EX", "100", "2", "b", "3", "c")
    r.zrem("z", "a", "b", "c")
    got = events(p, 6)
    p.close()
    assert got == [
        ("__keyevent@0__:zadd", "z"),
        ("__keyevent@0__:zadd", "z"),
        ("__keyevent@0__:zexpire", "z"),
        ("__subkeyspace@0__:z", "zexpire|1:b,1:c"),
        ("__keyevent@0__:zrem", "z"),
        ("__keyevent@0__:del", "z"),
    ]


def test_watch_sees_changes_not_no_ops(ebb, r):
    r.zadd("z", {"a": 1})
    c = ebb.client()
    c.execute_command("WATCH", "z")
    r.zadd("z", {"a": 1})  # no change: EXEC still runs
    c.execute_command("MULTI")
    c.execute_command("ZCARD", "z")
    assert c.execute_command("EXEC") == [1]
    c.execute_command("WATCH", "z")
    r.zadd("z", {"a": 2})
    c.execute_command("MULTI")
    c.execute_command("ZCARD", "z")
    assert c.execute_command("EXEC") is None
    c.close()


def snapshot_of(r, key):
    members = r.zrange(key, 0, -1, withscores=True)
    names = [m for m, _ in members]
    times = r.execute_command("ZPEXPIRETIME", key, "MEMBERS", len(names), *names) if names else []
    return members, list(times)


def test_zaddex_replays_from_the_log_with_the_same_deadlines(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    r = s.client()
    r.zadd("z", {"plain": 0})
    raw_cmd(r, "ZADDEX", "z", "EX", "1000", "1", "a", "2", "b")
    raw_cmd(r, "ZADDEX", "z", "KEEPTTL", "PX", "5000000", "3", "a", "4", "c")
    raw_cmd(r, "ZADDEX", "z", "INCR", "EX", "2000", "0.5", "b")
    raw_cmd(r, "ZADDEX", "z", "CAP", "3", "EX", "3000", "5", "d")
    assert raw_cmd(r, "ZADDEX", "z", "LIMIT", "3", "EX", "10", "9", "e") == -1
    before = snapshot_of(r, "z")
    assert [m for m, _ in before[0]] == ["a", "c", "d"]
    assert before[1][0] < before[1][1] and -1 not in before[1]
    r.close()
    s.stop()
    s.start()
    r = s.client()
    assert snapshot_of(r, "z") == before
    # And through a snapshot round trip.
    r.execute_command("DEBUG", "RELOAD")
    assert snapshot_of(r, "z") == before
