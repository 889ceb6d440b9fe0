"""The keys family through the real binary: DEL/EXISTS/TYPE/TOUCH, RENAME,
COPY, MOVE, KEYS, SCAN, key TTLs, FLUSH*/SWAPDB, OBJECT, MEMORY and SORT,
in RESP2 and RESP3, with keyspace events, WATCH, blocked clients, the
append-only file, and member deadlines surviving every move."""

import threading
import time

import pytest
import redis

from conftest import events, raw_cmd, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
HOUR_MS = 3_600_000


@pytest.fixture(params=[2, 3])
def rr(request, ebb):
    """Runs a test once over RESP2 and once over RESP3."""
    c = ebb.client(protocol=request.param)
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


def err(client, *args):
    with pytest.raises(redis.ResponseError) as e:
        raw_cmd(client, *args)
    return str(e.value)


def member_pttl(c, key, member):
    return raw_cmd(c, "ZPTTL", key, "MEMBERS", 1, member)[0]


def test_del_exists_type_touch(rr):
    rr.set("a", "1")
    rr.set("b", "2")
    rr.rpush("l", "x")
    assert raw_cmd(rr, "EXISTS", "a", "a", "nope", "l") == 3
    assert raw_cmd(rr, "TOUCH", "a", "nope") == 1
    assert raw_cmd(rr, "TYPE", "a") == "string"
    assert raw_cmd(rr, "TYPE", "l") == "list"
    assert raw_cmd(rr, "TYPE", "nope") == "none"
    assert raw_cmd(rr, "DEL", "a", "nope", "a") == 1
    assert raw_cmd(rr, "UNLINK", "b", "l") == 2
    assert raw_cmd(rr, "DBSIZE") == 0
    assert err(rr, "DEL") == "wrong number of arguments for 'del' command"


def test_rename_and_renamenx(rr):
    assert err(rr, "RENAME", "nope", "x") == "no such key"
    assert err(rr, "RENAMENX", "nope", "nope") == "no such key"
    rr.set("a", "1")
    rr.pexpire("a", HOUR_MS)
    rr.set("b", "2")
    assert raw_cmd(rr, "RENAME", "a", "a") in (b"OK", "OK", True)
    assert raw_cmd(rr, "RENAMENX", "a", "b") == 0
    assert raw_cmd(rr, "RENAMENX", "a", "a") == 0
    assert rr.rename("a", "b")
    assert rr.get("b") == "1"
    assert 0 < rr.pttl("b") <= HOUR_MS
    assert rr.exists("a") == 0
    assert raw_cmd(rr, "RENAMENX", "b", "c") == 1


def test_moves_keep_ttl_and_member_deadlines(r2):
    raw_cmd(r2, "ZADDEX", "z", "PX", HOUR_MS, 1, "a", 2, "b")
    r2.zadd("z", {"c": 3})
    r2.pexpire("z", 2 * HOUR_MS)
    assert r2.rename("z", "z2")
    assert 0 < member_pttl(r2, "z2", "a") <= HOUR_MS
    assert member_pttl(r2, "z2", "c") == -1
    assert HOUR_MS < r2.pttl("z2") <= 2 * HOUR_MS
    assert r2.copy("z2", "z3") == 1
    assert 0 < member_pttl(r2, "z3", "b") <= HOUR_MS
    assert r2.copy("z2", "z3", destination_db=4) == 1
    assert r2.move("z2", 5) == 1
    assert r2.exists("z2") == 0
    for db, key in ((4, "z3"), (5, "z2")):
        c = r2.connection_pool.connection_kwargs.copy()
        other = redis.Redis(host=c["host"], port=c["port"], db=db, decode_responses=True, protocol=2)
        assert other.zrange(key, 0, -1) == ["a", "b", "c"]
        assert 0 < member_pttl(other, key, "a") <= HOUR_MS
        assert HOUR_MS < other.pttl(key) <= 2 * HOUR_MS
        other.close()
    assert raw_cmd(r2, "SWAPDB", 0, 4) in (True, "OK", b"OK")
    assert 0 < member_pttl(r2, "z3", "a") <= HOUR_MS


def test_member_deadlines_fire_after_rename(r2):
    raw_cmd(r2, "ZADDEX", "z", "PX", 100, 1, "a")
    r2.zadd("z", {"b": 2})
    r2.rename("z", "y")
    wait_until(lambda: r2.zcard("y") == 1)
    assert r2.zrange("y", 0, -1) == ["b"]
    raw_cmd(r2, "ZADDEX", "x", "PX", 100, 1, "a")
    r2.rename("x", "w")
    wait_until(lambda: r2.exists("w") == 0)


def test_copy_and_move_errors(r2):
    r2.set("a", "1")
    r2.set("b", "2")
    same = "source and destination objects are the same"
    assert err(r2, "COPY", "a", "a") == same
    assert err(r2, "COPY", "a", "b", "DB") == "syntax error"
    assert err(r2, "COPY", "a", "b", "DB", "x") == "value is not an integer or out of range"
    assert err(r2, "COPY", "a", "b", "DB", "16") == "DB index is out of range"
    assert err(r2, "COPY", "a", "b", "DB", "99999999999") == (
        "value is out of range, value must between -2147483648 and 2147483647"
    )
    assert raw_cmd(r2, "COPY", "a", "b") == 0
    assert raw_cmd(r2, "COPY", "a", "b", "REPLACE") == 1
    assert r2.get("b") == "1"
    assert err(r2, "MOVE", "a", "0") == same
    assert err(r2, "MOVE", "a", "16") == "DB index is out of range"
    assert raw_cmd(r2, "MOVE", "nope", "1") == 0


def test_keys_and_randomkey(r2):
    assert r2.randomkey() is None
    for k in ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", ""]:
        r2.set(k, "1")
    assert sorted(r2.keys("h?llo")) == ["h*llo", "hallo", "hello", "hxllo"]
    assert sorted(r2.keys("h[ae]llo")) == ["hallo", "hello"]
    assert sorted(r2.keys("h[^e]llo")) == ["h*llo", "hallo", "hxllo"]
    assert sorted(r2.keys("h[a-b]llo")) == ["hallo"]
    assert r2.keys("h\\*llo") == ["h*llo"]
    assert len(r2.keys("*")) == 7
    assert len(r2.keys("**")) == 6
    assert r2.randomkey() in r2.keys("*")
    r2.set("t", "1")
    r2.pexpire("t", 50)
    time.sleep(0.1)
    assert "t" not in r2.keys("*")


def test_scan(rr):
    for i in range(200):
        rr.set(f"key:{i}", "v")
    rr.rpush("list", "x")
    seen = []
    cursor = 0
    while True:
        reply = raw_cmd(rr, "SCAN", cursor, "COUNT", 17)
        cursor = int(reply[0])
        seen.extend(k.decode() if isinstance(k, bytes) else k for k in reply[1])
        if cursor == 0:
            break
    assert sorted(seen) == sorted([f"key:{i}" for i in range(200)] + ["list"])
    assert sorted(rr.scan_iter(match="key:1?")) == sorted(f"key:{i}" for i in range(10, 20))
    assert list(rr.scan_iter(_type="LIST")) == ["list"]
    assert err(rr, "SCAN", "x") == "invalid cursor"
    assert err(rr, "SCAN", "0", "COUNT", "0") == "syntax error"
    assert err(rr, "SCAN", "0", "COUNT", "x") == "value is not an integer or out of range"
    assert err(rr, "SCAN", "0", "MATCH") == "syntax error"
    reply = raw_cmd(rr, "SCAN", "-1")
    assert int(reply[0]) == 0 and reply[1] == []


def test_expire_family(rr):
    rr.set("k", "v")
    assert raw_cmd(rr, "EXPIRE", "k", 100, "XX") == 0
    assert raw_cmd(rr, "EXPIRE", "k", 100, "GT") == 0
    assert raw_cmd(rr, "EXPIRE", "k", 100) == 1
    assert 99 <= rr.ttl("k") <= 100
    assert raw_cmd(rr, "EXPIRE", "k", 50, "GT") == 0
    assert raw_cmd(rr, "EXPIRE", "k", 50, "LT") == 1
    assert raw_cmd(rr, "PEXPIREAT", "k", 4102444800123) == 1
    assert raw_cmd(rr, "PEXPIRETIME", "k") == 4102444800123
    assert raw_cmd(rr, "EXPIRETIME", "k") == 4102444800
    assert raw_cmd(rr, "EXPIREAT", "k", 4102444801) == 1
    assert raw_cmd(rr, "PEXPIRETIME", "k") == 4102444801000
    assert raw_cmd(rr, "EXPIRETIME", "nope") == -2
    rr.set("p", "v")
    assert raw_cmd(rr, "EXPIRETIME", "p") == -1
    assert raw_cmd(rr, "EXPIRE", "p", -1) == 1
    assert rr.exists("p") == 0
    assert raw_cmd(rr, "EXPIRE", "nope", 10) == 0
    assert err(rr, "EXPIRE", "k", 10, "NX", "XX") == (
        "NX and XX, GT or LT options at the same time are not compatible"
    )
    assert err(rr, "EXPIRE", "k", 10, "GT", "LT") == "GT and LT options at the same time are not compatible"
    assert err(rr, "EXPIRE", "k", 10, "FOO") == "Unsupported option FOO"
    # An error text drops the newlines at its end, and those inside become
    # spaces (Redis's rule).
    assert err(rr, "EXPIRE", "k", 10, b"FOO\r\n") == "Unsupported option FOO"
    assert err(rr, "EXPIRE", "k", 10, b"F\r\nOO") == "Unsupported option F  OO"
    assert err(rr, "EXPIRE", "k", "x") == "value is not an integer or out of range"
    assert err(rr, "EXPIRE", "k", 9223372036854775807) == "invalid expire time in 'expire' command"
    assert err(rr, "PEXPIRE", "k", 9223372036854775807) == "invalid expire time in 'pexpire' command"


def test_flush_and_dbsize(r2, ebb):
    r2.set("a", "1")
    other = ebb.client(db=3)
    other.set("b", "1")
    assert r2.dbsize() == 1
    assert err(r2, "FLUSHDB", "NOW") == "syntax error"
    assert raw_cmd(r2, "FLUSHDB", "ASYNC")
    assert r2.dbsize() == 0
    assert other.dbsize() == 1
    assert raw_cmd(r2, "FLUSHALL", "SYNC")
    assert other.dbsize() == 0
    other.close()


def test_swapdb(r2, ebb):
    r2.set("in0", "x")
    other = ebb.client(db=1)
    other.set("in1", "y")
    assert err(r2, "SWAPDB", "a", "1") == "invalid first DB index"
    assert err(r2, "SWAPDB", "1", "a") == "invalid second DB index"
    assert err(r2, "SWAPDB", "0", "16") == "DB index is out of range"
    assert r2.swapdb(0, 1)
    assert r2.get("in1") == "y" and r2.get("in0") is None
    assert other.get("in0") == "x"
    other.close()


def test_watch_aborts_on_flush_swap_rename_and_move(r2, ebb):
    for change in (
        lambda c: c.flushdb(),
        lambda c: c.flushall(),
        lambda c: c.swapdb(0, 2),
        lambda c: c.rename("w", "w2"),
        lambda c: c.move("w", 3),
        lambda c: c.expire("w", 100),
        lambda c: c.delete("w"),
    ):
        r2.flushall()
        r2.set("w", "1")
        p = r2.pipeline()
        p.watch("w")
        other = ebb.client()
        change(other)
        other.close()
        p.multi()
        p.set("after", "1")
        with pytest.raises(redis.WatchError):
            p.execute()
        p.reset()


def test_rename_and_sort_store_wake_blocked_clients(r2, ebb):
    def blpop(out):
        c = ebb.client()
        out.append(c.blpop("dst", timeout=5))
        c.close()

    for action in (
        lambda: r2.rename("src", "dst"),
        lambda: r2.sort("src", alpha=True, store="dst"),
        lambda: r2.copy("src", "dst"),
    ):
        r2.flushall()
        r2.rpush("src", "v")
        out = []
        t = threading.Thread(target=blpop, args=(out,))
        t.start()
        wait_until(lambda: r2.info("clients")["blocked_clients"] == 1)
        action()
        t.join()
        assert out == [("dst", "v")]


def test_keyspace_events(r2, ebb):
    r2.config_set("notify-keyspace-events", "KEA")
    p = ebb.client().pubsub()
    p.psubscribe("__keyevent@*__:*")
    p.get_message(timeout=1)
    r2.set("a", "1")
    r2.rename("a", "b")
    r2.copy("b", "c", destination_db=2)
    r2.move("b", 3)
    r2.set("e", "1")
    r2.expire("e", 100)
    r2.expire("e", -1)
    r2.rpush("l", "1")
    r2.sort("l", store="s")
    got = events(p, 11)
    names = [(ch.split(":", 1)[0], ch.split(":", 1)[1], key) for ch, key in got]
    assert names == [
        ("__keyevent@0__", "set", "a"),
        ("__keyevent@0__", "rename_from", "a"),
        ("__keyevent@0__", "rename_to", "b"),
        ("__keyevent@2__", "copy_to", "c"),
        ("__keyevent@0__", "move_from", "b"),
        ("__keyevent@3__", "move_to", "b"),
        ("__keyevent@0__", "set", "e"),
        ("__keyevent@0__", "expire", "e"),
        ("__keyevent@0__", "del", "e"),
        ("__keyevent@0__", "rpush", "l"),
        ("__keyevent@0__", "sortstore", "s"),
    ]
    p.close()


def test_object(rr):
    rr.set("i", "12")
    rr.set("e", "x" * 44)
    rr.set("raw", "x" * 45)
    rr.rpush("l", "a")
    rr.zadd("z", {"a": 1})
    rr.zadd("big", {"x" * 65: 1})
    enc = lambda k: raw_cmd(rr, "OBJECT", "ENCODING", k)
    assert [enc(k) for k in ("i", "e", "raw", "l", "z", "big")] == [
        "int", "embstr", "raw", "quicklist", "listpack", "skiplist",
    ]
    assert enc("nope") is None
    assert raw_cmd(rr, "OBJECT", "REFCOUNT", "i") == 2147483647
    assert raw_cmd(rr, "OBJECT", "REFCOUNT", "l") == 1
    assert raw_cmd(rr, "OBJECT", "FREQ", "nope") is None
    assert err(rr, "OBJECT", "FREQ", "i").startswith("An LFU maxmemory policy is not selected")
    help_lines = raw_cmd(rr, "OBJECT", "HELP")
    assert help_lines[0] == "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert err(rr, "OBJECT", "FOO", "x") == "unknown subcommand 'FOO'. Try OBJECT HELP."
    assert err(rr, "OBJECT", "ENCODING") == "wrong number of arguments for 'object|encoding' command"


def test_memory(rr):
    rr.set("small", "v")
    rr.set("big", "v" * 10_000)
    small = raw_cmd(rr, "MEMORY", "USAGE", "small")
    big = raw_cmd(rr, "MEMORY", "USAGE", "big")
    assert 0 < small < big and big - small >= 9_900
    assert raw_cmd(rr, "MEMORY", "USAGE", "nope") is None
    assert raw_cmd(rr, "MEMORY", "USAGE", "big", "SAMPLES", 0) == big
    assert err(rr, "MEMORY", "USAGE", "big", "SAMPLES", -1) == "syntax error"
    assert err(rr, "MEMORY", "USAGE") == "wrong number of arguments for 'memory|usage' command"
    # Expired members are not counted.
    raw_cmd(rr, "ZADDEX", "z", "PX", 100, *[x for i in range(50) for x in (i, f"m{i:03}")])
    rr.zadd("z", {"keep": 1})
    full = raw_cmd(rr, "MEMORY", "USAGE", "z", "SAMPLES", 0)
    rr.zadd("y", {"keep": 1})
    one = raw_cmd(rr, "MEMORY", "USAGE", "y", "SAMPLES", 0)
    assert full > one + 50 * 8
    wait_until(lambda: rr.zcard("z") == 1)
    # Down to about what a one-member set costs (the buffer keeps a little slack).
    assert raw_cmd(rr, "MEMORY", "USAGE", "z", "SAMPLES", 0) <= one + 32


MEMORY_STATS_FIELDS = [
    "peak.allocated", "total.allocated", "startup.allocated",
    "replication.backlog", "clients.slaves", "clients.normal", "cluster.links",
    "aof.buffer", "lua.caches", "functions.caches",
]
MEMORY_STATS_TAIL = [
    "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes",
    "dataset.percentage", "peak.percentage", "allocator.allocated",
    "allocator.active", "allocator.resident", "allocator-fragmentation.ratio",
    "allocator-fragmentation.bytes", "allocator-rss.ratio",
    "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes",
    "fragmentation", "fragmentation.bytes",
]


def test_memory_stats(rr):
    # Redis 7.0's fields in its order, with a map per database that holds
    # keys (between functions.caches and overhead.total).
    rr.set("a", "1")
    rr.set("b", "2", ex=100)
    rr.execute_command("SELECT", 3)
    rr.set("c", "3")
    rr.execute_command("SELECT", 0)
    reply = raw_cmd(rr, "MEMORY", "STATS")
    pairs = list(reply.items()) if isinstance(reply, dict) else list(zip(reply[::2], reply[1::2]))
    names = [k.decode() if isinstance(k, bytes) else k for k, _ in pairs]
    assert names == MEMORY_STATS_FIELDS + ["db.0", "db.3"] + MEMORY_STATS_TAIL
    stats = dict(zip(names, (v for _, v in pairs)))
    assert stats["keys.count"] == 3
    assert 0 < stats["startup.allocated"] < stats["total.allocated"] <= stats["peak.allocated"]
    db0 = stats["db.0"]
    db0 = dict(db0.items()) if isinstance(db0, dict) else dict(zip(db0[::2], db0[1::2]))
    db0 = {(k.decode() if isinstance(k, bytes) else k): v for k, v in db0.items()}
    assert list(db0) == ["overhead.hashtable.main", "overhead.hashtable.expires",
                         "overhead.hashtable.slot-to-keys"]
    assert db0["overhead.hashtable.main"] > 0 and 0 < db0["overhead.hashtable.expires"] < 1024
    db3 = stats["db.3"]
    db3 = dict(db3.items()) if isinstance(db3, dict) else dict(zip(db3[::2], db3[1::2]))
    db3 = {(k.decode() if isinstance(k, bytes) else k): v for k, v in db3.items()}
    # No key with a TTL there: no deadline index.
    assert db3["overhead.hashtable.expires"] == 0
    assert float(stats["dataset.percentage"]) > 0
    assert err(rr, "MEMORY", "STATS", "x") == "wrong number of arguments for 'memory|stats' command"


def test_memory_doctor_and_help(rr):
    text = raw_cmd(rr, "MEMORY", "DOCTOR")
    text = text.decode() if isinstance(text, bytes) else str(text)
    assert text.startswith("Hi Sam, this instance is empty or is using very little memory")
    assert err(rr, "MEMORY", "DOCTOR", "x") == "wrong number of arguments for 'memory|doctor' command"
    lines = [x.decode() if isinstance(x, bytes) else x for x in raw_cmd(rr, "MEMORY", "HELP")]
    assert [x for x in lines if not x.startswith(" ")][1:] == [
        "DOCTOR", "MALLOC-STATS", "PURGE", "STATS", "USAGE <key> [SAMPLES <count>]", "HELP"]


def test_debug_populate(rr):
    assert raw_cmd(rr, "DEBUG", "POPULATE", 3) == "OK"
    assert rr.mget("key:0", "key:2", "key:3") == ["value:0", "value:2", None]
    rr.set("p:1", "mine")
    raw_cmd(rr, "DEBUG", "POPULATE", 3, "p", 10)
    assert rr.get("p:0") == "value:0\0\0\0"
    assert rr.get("p:1") == "mine"  # existing keys are left alone
    raw_cmd(rr, "DEBUG", "POPULATE", 2, "q", 3)
    assert rr.get("q:1") == "val"
    assert rr.dbsize() == 3 + 3 + 2
    raw_cmd(rr, "DEBUG", "POPULATE", 0)
    for bad in (["-1"], ["x"], ["2", "p", "-5"]):
        assert err(rr, "DEBUG", "POPULATE", *bad) == "value is out of range, must be positive"
    assert err(rr, "DEBUG", "POPULATE") == (
        "unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.")
    assert err(rr, "DEBUG", "POPULATE", 1, "a", 1, 1) == (
        "unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.")
    assert err(rr, "DEBUG", "nope") == (
        "unknown subcommand or wrong number of arguments for 'nope'. Try DEBUG HELP.")


def test_sort(rr):
    rr.rpush("l", 3, 1, 2, 10)
    rr.zadd("z", {"x": 3, "y": 1, "w": 2})
    for k, v in (("w_1", 30), ("w_2", 20), ("w_3", 10), ("w_10", 5)):
        rr.set(k, v)
    s = lambda *a: [x.decode() if isinstance(x, bytes) else x for x in raw_cmd(rr, "SORT", *a)]
    assert s("l") == ["1", "2", "3", "10"]
    assert s("l", "DESC", "ALPHA") == ["3", "2", "10", "1"]
    assert s("l", "BY", "w_*") == ["10", "3", "2", "1"]
    assert s("l", "BY", "nosort", "DESC", "LIMIT", 1, 2) == ["2", "1"]
    assert s("z", "BY", "nosort", "DESC") == ["x", "w", "y"]
    assert s("l", "LIMIT", 0, 1, "GET", "#", "GET", "w_*", "GET", "nope_*") == ["1", "30", None]
    assert raw_cmd(rr, "SORT_RO", "l", "LIMIT", 1, 1) in (["2"], [b"2"])
    assert raw_cmd(rr, "SORT", "l", "BY", "w_*", "STORE", "dst") == 4
    assert rr.lrange("dst", 0, -1) == ["10", "3", "2", "1"]
    assert raw_cmd(rr, "SORT", "nope", "STORE", "dst") == 0
    assert rr.exists("dst") == 0
    assert err(rr, "SORT", "z") == "One or more scores can't be converted into double"
    rr.set("str", "x")
    assert err(rr, "SORT", "str") == WRONGTYPE
    assert err(rr, "SORT", "l", "LIMIT", 0) == "syntax error"
    assert err(rr, "SORT", "l", "LIMIT", "a", "b") == "value is not an integer or out of range"
    assert err(rr, "SORT_RO", "l", "STORE", "x") == "syntax error"
    info = raw_cmd(rr, "COMMAND", "GETKEYS", "SORT", "l", "STORE", "dst")
    assert [k.decode() if isinstance(k, bytes) else k for k in info] == ["l", "dst"]


def test_expire_and_moves_are_replayed_from_aof(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = s.client()
    c.set("rel", "v")
    c.expire("rel", 3600)
    deadline = c.execute_command("PEXPIRETIME", "rel")
    c.set("gone", "v")
    c.expire("gone", -1)
    raw_cmd(c, "ZADDEX", "z", "PX", HOUR_MS, 1, "a")
    c.zadd("z", {"b": 2})
    c.rename("z", "z1")
    c.copy("z1", "z2", destination_db=1)
    c.move("z1", 2)
    c.swapdb(1, 3)
    c.rpush("l", 2, 1)
    c.sort("l", store="sorted")
    s.kill()
    time.sleep(0.2)
    s.start()
    c = s.client()
    assert c.execute_command("PEXPIRETIME", "rel") == deadline
    assert c.exists("gone", "z", "z1") == 0
    assert c.lrange("sorted", 0, -1) == ["1", "2"]
    for db, key in ((2, "z1"), (3, "z2")):
        other = s.client(db=db)
        assert other.zrange(key, 0, -1) == ["a", "b"]
        assert 0 < member_pttl(other, key, "a") <= HOUR_MS
        other.close()


def test_big_values_are_freed_in_the_background_and_counted(r):
    r.config_resetstat()
    r.sadd("myset", *range(100000))
    before = r.info("memory")["used_memory"]
    assert r.unlink("myset") == 1
    wait_until(lambda: r.info("memory")["lazyfree_pending_objects"] == 0)
    assert r.info("memory")["lazyfreed_objects"] >= 1
    # The set is gone, and the read buffer the 100,000-member request grew
    # goes back on the next client-buffer cron pass.
    wait_until(lambda: r.info("memory")["used_memory"] < before / 2)
    r.config_resetstat()
    assert r.info("memory")["lazyfreed_objects"] == 0


def test_an_idle_connection_gives_back_what_a_huge_request_took(r):
    base = r.info("memory")["used_memory"]
    r.sadd("s", *range(100000))
    r.delete("s")
    wait_until(lambda: r.info("memory")["lazyfree_pending_objects"] == 0)
    # The request's 100,000 arguments and its read buffer are let go (the
    # buffer on the next client-buffer cron pass, as Redis resizes query
    # buffers in its cron).
    wait_until(lambda: r.info("memory")["used_memory"] < base + 300_000)


def test_flushall_async_frees_in_the_background(r):
    r.config_resetstat()
    r.sadd("a", *range(1000))
    r.set("b", "x")
    r.execute_command("SELECT", 2)
    r.set("c", "y")
    r.execute_command("SELECT", 0)
    assert r.execute_command("FLUSHALL", "ASYNC") in (True, "OK")
    assert r.dbsize() == 0
    wait_until(lambda: r.info("memory")["lazyfree_pending_objects"] == 0)
    assert r.info("memory")["lazyfreed_objects"] == 3
    # SYNC and no argument free in place.
    r.set("d", "z")
    r.execute_command("FLUSHDB", "SYNC")
    assert r.info("memory")["lazyfreed_objects"] == 3
    # UNLINK of a small value frees it in place too.
    r.sadd("small", 1, 2, 3)
    r.unlink("small")
    assert r.info("memory")["lazyfreed_objects"] == 3


def test_role_is_a_master_without_replicas(rr):
    assert raw_cmd(rr, "ROLE") == ["master", 0, []]
    assert err(rr, "ROLE", "x") == "wrong number of arguments for 'role' command"


def test_lfu_policy_counts_accesses(r):
    r.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        r.set("a", "b")
        assert r.object("freq", "a") == 5  # a new key's counter, as in Redis
        for _ in range(50):
            r.get("a")
        hot = r.object("freq", "a")
        assert 6 <= hot <= 30  # logarithmic: rises slowly
        assert r.object("freq", "a") == hot  # OBJECT itself is no access
        for _ in range(20):
            r.object("encoding", "a")
        assert r.object("freq", "a") == hot
        with pytest.raises(redis.ResponseError) as e:
            r.object("idletime", "a")
        assert str(e.value).startswith("An LFU maxmemory policy is selected, idle time not tracked.")
        # RESTORE FREQ sets the counter.
        d = r.dump("a")
        r.execute_command("RESTORE", "b", 0, d, "FREQ", 100)
        assert r.object("freq", "b") == 100
        # Eviction takes the least used keys.
        for i in range(1000):
            r.set(f"cold{i}", "x" * 1000)
        r.execute_command("RESTORE", "hot", 0, d, "FREQ", 200)
        used = r.info("memory")["used_memory"]
        r.config_set("maxmemory-samples", 64)
        r.config_set("maxmemory", used - 100_000)
        r.set("new", "y")
        assert r.info("stats")["evicted_keys"] > 0
        assert r.exists("hot") == 1 and r.exists("b") == 1
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")
        r.config_set("maxmemory-samples", 5)
        r.config_resetstat()  # the server is shared: no evictions left counted
    with pytest.raises(redis.ResponseError) as e:
        r.object("freq", "a")
    assert str(e.value).startswith("An LFU maxmemory policy is not selected")
