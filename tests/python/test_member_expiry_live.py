"""Real millisecond deadlines through the binary: a member whose deadline
passed is invisible to every read command of its type, at once, and the
cardinality is exact at every instant."""

import time

from conftest import raw_cmd, wait_until

TTL_MS = 300


def after_deadline(start):
    time.sleep(max(0, start + TTL_MS / 1000 + 0.02 - time.time()))


def test_set_reads(r):
    r.sadd("s", "keep", "gone")
    r.sadd("o", "gone", "x")
    start = time.time()
    r.execute_command("SPEXPIRE", "s", TTL_MS, "MEMBERS", 1, "gone")
    assert r.scard("s") == 2
    after_deadline(start)
    assert r.smembers("s") == {"keep"}
    assert r.sismember("s", "gone") == 0
    assert r.smismember("s", ["gone", "keep"]) == [0, 1]
    assert r.scard("s") == 1
    assert r.srandmember("s", 10) == ["keep"]
    assert r.sscan("s")[1] == ["keep"]
    assert r.sinter("s", "o") == set()
    assert r.sunion("s", "o") == {"keep", "gone", "x"}
    assert r.sdiff("s", "o") == {"keep"}
    assert r.execute_command("SINTERCARD", 2, "s", "o") == 0
    assert r.sunionstore("dst", ["s"]) == 1
    assert r.sort("s", alpha=True) == ["keep"]
    assert r.execute_command("STTL", "s", "MEMBERS", 1, "gone") == [-2]
    assert r.spop("s") == "keep"
    assert r.exists("s") == 0


def test_zset_reads(r):
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    r.zadd("o", {"b": 5})
    start = time.time()
    r.execute_command("ZPEXPIRE", "z", TTL_MS, "MEMBERS", 1, "b")
    assert r.zcard("z") == 3
    after_deadline(start)
    assert r.zrange("z", 0, -1) == ["a", "c"]
    assert r.zrevrange("z", 0, -1) == ["c", "a"]
    assert r.zrangebyscore("z", "-inf", "+inf") == ["a", "c"]
    assert r.zrange("z", "-", "+", bylex=True) == ["a", "c"]
    assert r.zrank("z", "c") == 1 and r.zrevrank("z", "a") == 1
    assert r.zrank("z", "b") is None
    assert r.zscore("z", "b") is None
    assert r.zmscore("z", ["a", "b"]) == [1.0, None]
    assert r.zcard("z") == 2 and r.zcount("z", "-inf", "+inf") == 2
    assert r.zlexcount("z", "-", "+") == 2
    assert sorted(r.zrandmember("z", 10)) == ["a", "c"]
    assert [m for m, _ in r.zscan("z")[1]] == ["a", "c"]
    assert r.zunion(["z", "o"]) == ["a", "c", "b"]
    assert r.zinter(["z", "o"]) == []
    assert r.zdiff(["z", "o"]) == ["a", "c"]
    assert r.zrangestore("dst", "z", 0, -1) == 2
    assert raw_cmd(r, "ZPTTL", "z", "MEMBERS", 1, "b") == [-2]
    assert r.zpopmin("z") == [("a", 1.0)]


def test_hash_reads(r):
    r.hset("h", mapping={"keep": "1", "gone": "22"})
    start = time.time()
    r.execute_command("HPEXPIRE", "h", TTL_MS, "FIELDS", 1, "gone")
    assert r.hlen("h") == 2
    after_deadline(start)
    assert r.hget("h", "gone") is None
    assert r.hmget("h", ["keep", "gone"]) == ["1", None]
    assert r.hgetall("h") == {"keep": "1"}
    assert r.hkeys("h") == ["keep"] and r.hvals("h") == ["1"]
    assert r.hlen("h") == 1 and r.hexists("h", "gone") == 0
    assert r.hstrlen("h", "gone") == 0
    assert r.hrandfield("h", 10) == ["keep"]
    assert r.hscan("h")[1] == {"keep": "1"}


import pytest


@pytest.mark.parametrize("kind", ["set", "zset", "hash"])
def test_cardinality_exact_at_every_instant(r, kind):
    n = 8
    members = [f"m{i}" for i in range(n)]
    if kind == "set":
        r.sadd("s", *members)
        expire, card_of = "SPEXPIREAT", lambda: r.scard("s")
    elif kind == "zset":
        r.zadd("s", {m: i for i, m in enumerate(members)})
        expire, card_of = "ZPEXPIREAT", lambda: r.zcard("s")
    else:
        r.hset("s", mapping={m: "v" for m in members})
        expire, card_of = "HPEXPIREAT", lambda: r.hlen("s")
    word = "FIELDS" if kind == "hash" else "MEMBERS"
    base = int(time.time() * 1000) + 200
    deadlines = {m: base + 40 * i for i, m in enumerate(members)}
    for m, t in deadlines.items():
        r.execute_command(expire, "s", t, word, 1, m)
    while True:
        before = int(time.time() * 1000)
        card = card_of()
        after = int(time.time() * 1000)
        # Live members at some instant within [before, after].
        most = sum(1 for t in deadlines.values() if t > before)
        least = sum(1 for t in deadlines.values() if t > after)
        assert least <= card <= most, (before, after, card)
        if card == 0:
            break
    assert r.exists("s") == 0


def test_sweeper_reclaims_without_reads(r):
    r.zadd("z", {f"m{i}": i for i in range(1000)})
    r.execute_command("ZPEXPIRE", "z", 100, "MEMBERS", 1000, *[f"m{i}" for i in range(1000)])
    # DBSIZE does not purge: only the sweeper can make the key go.
    wait_until(lambda: r.dbsize() == 0, timeout=3)
