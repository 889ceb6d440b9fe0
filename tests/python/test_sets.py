"""Sets through the real binary: Redis 7.0 replies and errors in RESP2 and
RESP3, member deadlines in every set command, SADDEX, notifications,
transactions and replay from the append-only file."""

import socket
import time

from conftest import err, events, raw_cmd, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def spttl(c, key, *members):
    return c.execute_command("SPTTL", key, "MEMBERS", len(members), *members)


def test_membership_resp2(r2):
    assert raw_cmd(r2, "SADD", "s", "a", "b", "a") == 2
    assert raw_cmd(r2, "SADD", "s", "a") == 0
    assert sorted(raw_cmd(r2, "SMEMBERS", "s")) == ["a", "b"]
    assert raw_cmd(r2, "SISMEMBER", "s", "a") == 1
    assert raw_cmd(r2, "SISMEMBER", "s", "z") == 0
    assert raw_cmd(r2, "SMISMEMBER", "s", "a", "z") == [1, 0]
    assert raw_cmd(r2, "SMISMEMBER", "nokey", "a") == [0]
    assert raw_cmd(r2, "SCARD", "s") == 2
    assert raw_cmd(r2, "SCARD", "nokey") == 0
    assert raw_cmd(r2, "SMEMBERS", "nokey") == []
    assert raw_cmd(r2, "SREM", "s", "a", "z") == 1
    assert raw_cmd(r2, "SREM", "s", "b") == 1
    assert r2.exists("s") == 0
    assert raw_cmd(r2, "SREM", "s", "b") == 0


def resp3_reply(port, *args):
    """The raw bytes of one reply over a RESP3 connection (a PING sent
    after the command marks where the reply ends)."""

    def encode(*cmd):
        out = b"*%d\r\n" % len(cmd)
        for a in cmd:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        return out

    def read_through_pong(sock):
        buf = b""
        while not buf.endswith(b"+PONG\r\n"):
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            buf += chunk
        return buf[: -len(b"+PONG\r\n")]

    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(encode("HELLO", "3") + encode("PING"))
        read_through_pong(sock)
        sock.sendall(encode(*args) + encode("PING"))
        return read_through_pong(sock)


def test_reply_shapes_resp3(ebb, r3):
    r3.sadd("s", "a")
    port = ebb.port
    assert resp3_reply(port, "SMEMBERS", "s") == b"~1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SMEMBERS", "nokey") == b"~0\r\n"
    assert resp3_reply(port, "SINTER", "s", "s") == b"~1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SUNION", "s", "nokey") == b"~1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SDIFF", "s", "nokey") == b"~1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SINTER", "s", "nokey") == b"~0\r\n"
    # SPOP with a count replies with a set, SRANDMEMBER with an array.
    assert resp3_reply(port, "SRANDMEMBER", "s", "2") == b"*1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SRANDMEMBER", "nokey", "2") == b"*0\r\n"
    assert resp3_reply(port, "SRANDMEMBER", "nokey") == b"_\r\n"
    assert resp3_reply(port, "SPOP", "nokey") == b"_\r\n"
    assert resp3_reply(port, "SPOP", "nokey", "2") == b"~0\r\n"
    assert resp3_reply(port, "SPOP", "s", "0") == b"~0\r\n"
    assert resp3_reply(port, "SSCAN", "s", "0") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n"
    assert resp3_reply(port, "SMISMEMBER", "s", "a", "b") == b"*2\r\n:1\r\n:0\r\n"
    assert resp3_reply(port, "SPOP", "s", "5") == b"~1\r\n$1\r\na\r\n"
    assert r3.exists("s") == 0
    # redis-py reads both shapes as lists.
    r3.sadd("s", "a", "b")
    assert sorted(raw_cmd(r3, "SMEMBERS", "s")) == ["a", "b"]


def test_spop_and_srandmember(r2):
    r2.sadd("s", *"abcde")
    one = raw_cmd(r2, "SPOP", "s")
    assert one in set("abcde") and r2.sismember("s", one) == 0
    two = raw_cmd(r2, "SPOP", "s", "2")
    assert len(set(two)) == 2 and one not in two
    assert r2.scard("s") == 2
    assert len(raw_cmd(r2, "SRANDMEMBER", "s", "-7")) == 7
    assert sorted(raw_cmd(r2, "SRANDMEMBER", "s", "10")) == sorted(set("abcde") - {one} - set(two))
    assert raw_cmd(r2, "SRANDMEMBER", "s", "0") == []
    rest = raw_cmd(r2, "SPOP", "s", "100")
    assert len(rest) == 2 and r2.exists("s") == 0
    assert raw_cmd(r2, "SPOP", "s") is None
    assert raw_cmd(r2, "SPOP", "s", "3") == []


def test_smove(r2):
    r2.sadd("src", "a", "b")
    r2.sadd("dst", "x")
    assert raw_cmd(r2, "SMOVE", "src", "dst", "a") == 1
    assert raw_cmd(r2, "SMOVE", "src", "dst", "zz") == 0
    assert raw_cmd(r2, "SMOVE", "nokey", "dst", "a") == 0
    assert raw_cmd(r2, "SMOVE", "src", "src", "b") == 1
    assert raw_cmd(r2, "SMOVE", "src", "new", "b") == 1
    assert r2.exists("src") == 0
    assert r2.smembers("dst") == {"a", "x"}
    assert r2.smembers("new") == {"b"}


def test_algebra_and_stores(r2):
    r2.sadd("a", "1", "2", "3", "4")
    r2.sadd("b", "3", "4", "5")
    r2.sadd("c", "4", "5", "6")
    assert sorted(raw_cmd(r2, "SINTER", "a", "b", "c")) == ["4"]
    assert sorted(raw_cmd(r2, "SUNION", "a", "b")) == ["1", "2", "3", "4", "5"]
    assert sorted(raw_cmd(r2, "SDIFF", "a", "b", "c")) == ["1", "2"]
    assert raw_cmd(r2, "SINTERCARD", "2", "a", "b") == 2
    assert raw_cmd(r2, "SINTERCARD", "1", "a", "LIMIT", "3") == 3
    assert raw_cmd(r2, "SINTERCARD", "1", "a", "LIMIT", "0") == 4
    assert raw_cmd(r2, "SINTERSTORE", "d", "a", "b") == 2
    assert r2.smembers("d") == {"3", "4"}
    r2.set("str", "x")
    r2.expire("str", 100)
    assert raw_cmd(r2, "SUNIONSTORE", "str", "a", "c") == 6
    assert r2.type("str") == "set" and r2.ttl("str") == -1
    assert raw_cmd(r2, "SDIFFSTORE", "d", "a", "a") == 0
    assert r2.exists("d") == 0
    assert raw_cmd(r2, "SINTERSTORE", "d", "a", "nokey") == 0


def test_errors(r):
    r.set("str", "x")
    r.sadd("s", "a")
    for args in [
        ("SADD", "str", "a"),
        ("SREM", "str", "a"),
        ("SMEMBERS", "str"),
        ("SISMEMBER", "str", "a"),
        ("SMISMEMBER", "str", "a"),
        ("SCARD", "str"),
        ("SPOP", "str"),
        ("SPOP", "str", "0"),
        ("SRANDMEMBER", "str"),
        ("SMOVE", "s", "str", "a"),
        ("SMOVE", "str", "s", "a"),
        ("SINTER", "nokey", "str"),
        ("SUNION", "s", "str"),
        ("SDIFF", "nokey", "str"),
        ("SINTERSTORE", "d", "nokey", "str"),
        ("SINTERCARD", "2", "nokey", "str"),
        ("SSCAN", "str", "0"),
        ("SADDEX", "str", "10", "a"),
    ]:
        assert err(r, *args) == WRONGTYPE, args
    assert err(r, "SPOP", "s", "-1") == "value is out of range, must be positive"
    assert err(r, "SPOP", "s", "abc") == "value is out of range, must be positive"
    assert err(r, "SPOP", "s", "1", "2") == "syntax error"
    assert err(r, "SRANDMEMBER", "s", "abc") == "value is not an integer or out of range"
    assert (
        err(r, "SRANDMEMBER", "s", "-9223372036854775808")
        == "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    )
    assert err(r, "SRANDMEMBER", "s", "1", "2") == "syntax error"
    assert err(r, "SINTERCARD", "0", "s") == "numkeys should be greater than 0"
    assert err(r, "SINTERCARD", "abc", "s") == "numkeys should be greater than 0"
    assert err(r, "SINTERCARD", "2", "s") == "Number of keys can't be greater than number of args"
    assert err(r, "SINTERCARD", "1", "s", "LIMIT", "-1") == "LIMIT can't be negative"
    assert err(r, "SINTERCARD", "1", "s", "LIMIT") == "syntax error"
    assert err(r, "SSCAN", "s", "abc") == "invalid cursor"
    assert err(r, "SSCAN", "s", "0", "COUNT", "0") == "syntax error"
    assert err(r, "SSCAN", "s", "0", "COUNT", "x") == "value is not an integer or out of range"
    assert err(r, "SSCAN", "s", "0", "TYPE", "set") == "syntax error"
    assert err(r, "SADD", "s") == "wrong number of arguments for 'sadd' command"
    assert err(r, "SMOVE", "s", "d") == "wrong number of arguments for 'smove' command"


def test_sscan(r2):
    r2.sadd("small", "a", "b", "c")
    assert raw_cmd(r2, "SSCAN", "small", "0", "COUNT", "1") == ["0", raw_cmd(r2, "SSCAN", "small", "0")[1]]
    assert sorted(raw_cmd(r2, "SSCAN", "small", "0", "MATCH", "[ab]")[1]) == ["a", "b"]
    assert raw_cmd(r2, "SSCAN", "nokey", "0", "COUNT", "x") == ["0", []]
    members = [f"m{i}" for i in range(1000)]
    r2.sadd("big", *members)
    seen, cursor, calls = set(), "0", 0
    while True:
        cursor, found = raw_cmd(r2, "SSCAN", "big", cursor, "COUNT", "25")
        seen.update(found)
        calls += 1
        if cursor == "0":
            break
    assert seen == set(members) and calls > 1
    assert set(r2.sscan_iter("big", match="m1?")) == {f"m{i}" for i in range(10, 20)}


def test_member_deadlines_in_set_commands(r):
    r.sadd("s", "a", "b", "c")
    assert spttl(r, "s", "a") == [-1]
    r.execute_command("SPEXPIRE", "s", 200, "MEMBERS", 2, "a", "b")
    # SADD of an existing member keeps its deadline.
    assert r.sadd("s", "a") == 0
    assert 0 < spttl(r, "s", "a")[0] <= 200
    # SREM forgets it: a member added again has none.
    r.srem("s", "b")
    r.sadd("s", "b")
    assert spttl(r, "s", "b") == [-1]
    wait_until(lambda: r.scard("s") == 2)
    assert r.smembers("s") == {"b", "c"}
    assert r.sismember("s", "a") == 0


def test_smove_and_stores_drop_deadlines(r):
    r.sadd("src", "a", "b")
    r.execute_command("SPEXPIRE", "src", 100_000, "MEMBERS", 2, "a", "b")
    assert r.smove("src", "dst", "a") == 1
    assert spttl(r, "dst", "a") == [-1]
    assert r.sunionstore("copy", "src") == 1
    assert spttl(r, "copy", "b") == [-1]
    assert 0 < spttl(r, "src", "b")[0] <= 100_000


def test_last_member_expiring_deletes_key(r):
    r.sadd("s", "a")
    r.execute_command("SPEXPIRE", "s", 50, "MEMBERS", 1, "a")
    # The sweeper reclaims it without anyone reading the key.
    wait_until(lambda: r.exists("s") == 0)


def test_saddex(r2):
    assert raw_cmd(r2, "SADDEX", "s", "100", "a", "b", "a") == 2
    ttl = spttl(r2, "s", "a", "b")
    assert all(99_000 < t <= 100_000 for t in ttl)
    r2.sadd("s", "plain")
    assert raw_cmd(r2, "SADDEX", "s", "KEEPTTL", "5", "plain", "a", "new") == 1
    assert spttl(r2, "s", "plain")[0] == -1
    assert spttl(r2, "s", "a")[0] > 5_000
    assert 0 < spttl(r2, "s", "new")[0] <= 5_000
    assert raw_cmd(r2, "SADDEX", "s", "7", "plain") == 0
    assert 0 < spttl(r2, "s", "plain")[0] <= 7_000
    assert raw_cmd(r2, "SADDEX", "t", "1", "x") == 1
    r2.sadd("t", "y")
    wait_until(lambda: r2.smembers("t") == {"y"}, timeout=5)


def test_saddex_limit(r2):
    for code in ["1", "2", "3"]:
        assert raw_cmd(r2, "SADDEX", "otp", "LIMIT", "3", "300", code) == 1
    assert raw_cmd(r2, "SADDEX", "otp", "LIMIT", "3", "300", "4") == -1
    assert raw_cmd(r2, "SADDEX", "otp", "LIMIT", "3", "300", "1", "2") == 0
    assert raw_cmd(r2, "SADDEX", "fresh", "LIMIT", "1", "300", "a", "b") == -1
    assert r2.exists("fresh") == 0
    assert r2.smembers("otp") == {"1", "2", "3"}


def test_saddex_errors(r):
    assert err(r, "SADDEX", "s", "0", "a") == "invalid expire time in 'saddex' command"
    assert err(r, "SADDEX", "s", "-1", "a") == "invalid expire time in 'saddex' command"
    assert err(r, "SADDEX", "s", "9223372036854775807", "a") == "invalid expire time in 'saddex' command"
    assert err(r, "SADDEX", "s", "1.5", "a") == "value is not an integer or out of range"
    assert err(r, "SADDEX", "s", "LIMIT", "-1", "10", "a") == "LIMIT can't be negative"
    assert err(r, "SADDEX", "s", "LIMIT", "x", "10", "a") == "value is not an integer or out of range"
    assert err(r, "SADDEX", "s", "KEEPTTL", "10") == "syntax error"
    assert err(r, "SADDEX", "s", "10") == "wrong number of arguments for 'saddex' command"


def test_notifications(ebb, r):
    r.config_set("notify-keyspace-events", "KEsgS")
    p = ebb.client().pubsub()
    p.psubscribe("__keyevent@0__:*", "__subkeyspace@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMPAT") >= 1)
    r.sadd("s", "a")
    r.smove("s", "d", "a")
    r.execute_command("SADDEX", "d", "100", "b", "c")
    r.execute_command("SPOP", "d", "10")
    r.sadd("x", "1")
    r.sinterstore("y", "x")
    r.sinterstore("y", "nokey")
    got = events(p, 11)
    p.close()
    assert got == [
        ("__keyevent@0__:sadd", "s"),
        ("__keyevent@0__:srem", "s"),
        ("__keyevent@0__:del", "s"),
        ("__keyevent@0__:sadd", "d"),
        ("__keyevent@0__:sadd", "d"),
        ("__keyevent@0__:sexpire", "d"),
        ("__subkeyspace@0__:d", "sexpire|1:b,1:c"),
        ("__keyevent@0__:spop", "d"),
        ("__keyevent@0__:del", "d"),
        ("__keyevent@0__:sadd", "x"),
        ("__keyevent@0__:sinterstore", "y"),
    ]


def test_watch_sees_changes_not_no_ops(ebb, r):
    r.sadd("s", "a")
    c = ebb.client()
    c.execute_command("WATCH", "s")
    r.sadd("s", "a")  # no change: EXEC still runs
    r.srem("s", "zz")
    c.execute_command("MULTI")
    c.execute_command("SCARD", "s")
    assert c.execute_command("EXEC") == [1]
    c.execute_command("WATCH", "s")
    r.execute_command("SADDEX", "s", "100", "a")  # a new deadline is a change
    c.execute_command("MULTI")
    c.execute_command("SCARD", "s")
    assert c.execute_command("EXEC") is None
    c.close()


def test_replay_from_aof(server_factory):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = s.client()
    c.execute_command("SADDEX", "s", "3600", "a", "b", "c")
    c.sadd("s", "d", "e", "f")
    c.execute_command("SADDEX", "s", "KEEPTTL", "60", "a", "g")
    popped = c.execute_command("SPOP", "s", "2")
    one = c.execute_command("SPOP", "s")
    c.smove("s", "t", "f")
    c.sadd("u", "1", "2")
    c.sadd("v", "2")
    c.sdiffstore("w", "u", "v")
    before = {
        k: (c.smembers(k), c.execute_command("SPEXPIRETIME", k, "MEMBERS", 7, *"abcdefg"))
        for k in ["s", "t", "w"]
    }
    assert len(popped) == 2 and one not in popped
    s.kill()
    time.sleep(0.2)
    s.start()
    c = s.client()
    after = {
        k: (c.smembers(k), c.execute_command("SPEXPIRETIME", k, "MEMBERS", 7, *"abcdefg"))
        for k in ["s", "t", "w"]
    }
    assert after == before
