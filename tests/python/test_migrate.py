"""MIGRATE and RESTORE-ASKING between two ebb servers: every option, every
type with key TTLs and member deadlines, the target's errors passed back,
AUTH / AUTH2, timeouts, the connection kept for reuse, what the source
logs and notifies, MULTI, scripts, ACL and MONITOR / SLOWLOG redaction.
The argument errors are compared with a redis-server's when one is
installed."""

import os
import shutil
import socket
import threading
import time

import pytest
import redis

from conftest import EbbServer, RedisServer, err, events, raw_cmd, wait_until


@pytest.fixture
def pair(tmp_path):
    """Two ebb servers, each in a directory of its own: (source, target)."""
    started = []

    def make(name, *args):
        d = tmp_path / name
        d.mkdir()
        s = EbbServer(*args, "--dir", str(d), cwd=str(d))
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def st(pair):
    src, dst = pair("src"), pair("dst")
    return src, dst, src.client(), dst.client()


def migrate(c, port, key, db=0, timeout=5000, *opts):
    return c.execute_command("MIGRATE", "127.0.0.1", port, key, db, timeout, *opts)


def closed_port():
    """A port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_moves_a_string_with_its_ttl(st):
    src, dst, a, b = st
    a.set("k", "v", ex=100)
    assert migrate(a, dst.port, "k") == "OK"
    assert a.exists("k") == 0
    assert b.get("k") == "v"
    assert 95 <= b.ttl("k") <= 100
    a.set("p", "persistent")
    assert migrate(a, dst.port, "p") == "OK"
    assert b.ttl("p") == -1


def test_every_type_and_member_deadlines_travel(st):
    src, dst, a, b = st
    a.rpush("l", *[str(i) for i in range(10)])
    a.hset("h", mapping={"f1": "a", "f2": "b", "f3": "c"})
    a.execute_command("HPEXPIRE", "h", 600000, "FIELDS", 2, "f1", "f2")
    a.sadd("s", "x", "y", "z")
    a.execute_command("SPEXPIRE", "s", 700000, "MEMBERS", 1, "y")
    a.zadd("z", {"m1": 1, "m2": 2.5, "m3": -3})
    a.execute_command("ZPEXPIRE", "z", 800000, "MEMBERS", 2, "m1", "m3")
    a.expire("z", 1000)
    want = {
        "h": a.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "f1", "f2", "f3"),
        "s": a.execute_command("SPEXPIRETIME", "s", "MEMBERS", 3, "x", "y", "z"),
        "z": a.execute_command("ZPEXPIRETIME", "z", "MEMBERS", 3, "m1", "m2", "m3"),
    }
    lst, hsh = a.lrange("l", 0, -1), a.hgetall("h")
    sset, zset = a.smembers("s"), a.zrange("z", 0, -1, withscores=True)
    assert migrate(a, dst.port, "", 0, 5000, "KEYS", "l", "h", "s", "z") == "OK"
    assert a.exists("l", "h", "s", "z") == 0
    assert b.lrange("l", 0, -1) == lst
    assert b.hgetall("h") == hsh
    assert b.smembers("s") == sset
    assert b.zrange("z", 0, -1, withscores=True) == zset
    assert b.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "f1", "f2", "f3") == want["h"]
    assert b.execute_command("SPEXPIRETIME", "s", "MEMBERS", 3, "x", "y", "z") == want["s"]
    assert b.execute_command("ZPEXPIRETIME", "z", "MEMBERS", 3, "m1", "m2", "m3") == want["z"]
    assert 990 <= b.ttl("z") <= 1000
    assert b.ttl("h") == -1


def test_expiring_members_still_expire_on_the_target(st):
    src, dst, a, b = st
    a.sadd("s", "stay", "go")
    a.execute_command("SPEXPIRE", "s", 300, "MEMBERS", 1, "go")
    assert migrate(a, dst.port, "s") == "OK"
    assert b.scard("s") == 2
    wait_until(lambda: b.scard("s") == 1, timeout=3)
    assert b.smembers("s") == {"stay"}


def test_copy_keeps_the_source(st):
    src, dst, a, b = st
    a.rpush("list", "a", "b", "c", "d")
    assert migrate(a, dst.port, "list", 0, 5000, "COPY") == "OK"
    assert a.lrange("list", 0, -1) == b.lrange("list", 0, -1) == ["a", "b", "c", "d"]


def test_busykey_without_replace(st):
    src, dst, a, b = st
    a.set("k", "new")
    b.set("k", "old")
    assert err(a, "MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000) == (
        "Target instance replied with error: BUSYKEY Target key name already exists.")
    assert a.get("k") == "new" and b.get("k") == "old"
    assert migrate(a, dst.port, "k", 0, 5000, "COPY", "REPLACE") == "OK"
    assert a.get("k") == "new" and b.get("k") == "new"
    assert migrate(a, dst.port, "k", 0, 5000, "REPLACE") == "OK"
    assert a.exists("k") == 0


def test_keys_form_skips_missing_keys_and_nokey(st):
    src, dst, a, b = st
    assert migrate(a, dst.port, "", 0, 5000, "KEYS", "n1", "n2") == "NOKEY"
    assert migrate(a, dst.port, "missing") == "NOKEY"
    a.mset({"k1": "v1", "k2": "v2", "k3": "v3"})
    assert migrate(a, dst.port, "", 0, 5000, "KEYS", "n1", "k1", "n2", "k2", "k3") == "OK"
    assert a.dbsize() == 0
    assert b.mget("k1", "k2", "k3") == ["v1", "v2", "v3"]


def test_only_acknowledged_keys_are_deleted(st):
    src, dst, a, b = st
    a.mset({c: c for c in "abcdefgh"})
    b.mset({"c": "_", "d": "_"})
    with pytest.raises(redis.ResponseError, match="BUSYKEY"):
        migrate(a, dst.port, "", 0, 5000, "KEYS", *"abcdefgh")
    assert sorted(a.keys()) == ["c", "d"]
    assert b.dbsize() == 8
    assert b.get("c") == "_"


def test_destination_db_and_its_errors(st):
    src, dst, a, b = st
    a.set("k", "v")
    assert migrate(a, dst.port, "k", 9) == "OK"
    assert b.exists("k") == 0
    assert dst.client(db=9).get("k") == "v"
    a.set("k", "v")
    assert err(a, "MIGRATE", "127.0.0.1", dst.port, "k", 99, 5000) == (
        "Target instance replied with error: ERR DB index is out of range")
    assert a.get("k") == "v"
    # SELECT is sent again after an error (the connection's database is no
    # longer known), and the key moves to the right database.
    assert migrate(a, dst.port, "k", 3) == "OK"
    assert dst.client(db=3).get("k") == "v"


def test_auth_with_requirepass(pair):
    src, dst = pair("src"), pair("dst", "--requirepass", "foobar")
    a = src.client()
    b = dst.client(password="foobar")
    a.rpush("list", "a", "b")
    e = err(a, "MIGRATE", "127.0.0.1", dst.port, "list", 0, 5000)
    assert e == "Target instance replied with error: NOAUTH Authentication required."
    e = err(a, "MIGRATE", "127.0.0.1", dst.port, "list", 0, 5000, "AUTH", "nope")
    assert e.startswith("Target instance replied with error: WRONGPASS")
    assert a.exists("list") == 1 and b.exists("list") == 0
    assert migrate(a, dst.port, "list", 0, 5000, "AUTH", "foobar") == "OK"
    assert b.lrange("list", 0, -1) == ["a", "b"]
    # A failed AUTH fails the whole request, even where RESTORE succeeded
    # (the kept connection is still authenticated), as in Redis.
    a.rpush("list2", "c")
    e = err(a, "MIGRATE", "127.0.0.1", dst.port, "list2", 0, 5000, "AUTH", "nope")
    assert e.startswith("Target instance replied with error: WRONGPASS")
    assert a.exists("list2") == 1 and b.exists("list2") == 1


def test_auth2_with_an_acl_user(st):
    src, dst, a, b = st
    b.execute_command("ACL", "SETUSER", "mover", "on", ">secret", "~*", "+@all")
    a.set("k", "v")
    assert migrate(a, dst.port, "k", 0, 5000, "AUTH2", "mover", "secret") == "OK"
    assert b.get("k") == "v"
    b.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+auth", "+select")
    a.set("k2", "v")
    e = err(a, "MIGRATE", "127.0.0.1", dst.port, "k2", 0, 5000, "AUTH2", "reader", "pw")
    assert e.startswith("Target instance replied with error: NOPERM")
    assert a.exists("k2") == 1


def test_connection_refused_and_timeouts(st):
    src, dst, a, b = st
    a.set("k", "v")
    port = closed_port()
    # As Redis: a name or port that does not resolve fails "connecting"; a
    # refused connection shows when the request is written.
    assert err(a, "MIGRATE", "no.such.host.invalid", port, "k", 0, 1000) == (
        "IOERR error or timeout connecting to the client")
    assert err(a, "MIGRATE", "127.0.0.1", "-1", "k", 0, 1000) == (
        "IOERR error or timeout connecting to the client")
    assert err(a, "MIGRATE", "127.0.0.1", port, "k", 0, 1000) == (
        "IOERR error or timeout writing to target instance")
    assert err(a, "MIGRATE", "127.0.0.1", "notaport", "k", 0, 1000) == (
        "IOERR error or timeout writing to target instance")
    # A listener that never answers: the read times out, with no retry.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        t0 = time.time()
        assert err(a, "MIGRATE", "127.0.0.1", silent.getsockname()[1], "k", 0, 300) == (
            "IOERR error or timeout reading to target instance")
        assert time.time() - t0 < 2.5
    assert a.get("k") == "v"
    assert a.info("stats")["migrate_cached_sockets"] == 0
    # A target busy for longer than the timeout.
    busy = threading.Thread(target=lambda: dst.client().execute_command("DEBUG", "SLEEP", 1.5))
    busy.start()
    time.sleep(0.2)
    with pytest.raises(redis.ResponseError, match="^IOERR"):
        migrate(a, dst.port, "k", 0, 300)
    busy.join()
    # The key stays; the target ran the RESTORE once awake (as with Redis).
    assert a.get("k") == "v"
    wait_until(lambda: b.exists("k") == 1)
    assert migrate(a, dst.port, "k", 0, 5000, "REPLACE") == "OK"
    assert a.exists("k") == 0


def test_server_stays_responsive_while_waiting(st):
    """The calling server waits for the target (as Redis does), but within
    the timeout, and serves everyone again afterwards."""
    src, dst, a, b = st
    a.set("k", "v")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        out = {}

        def run():
            try:
                migrate(src.client(), silent.getsockname()[1], "k", 0, 800)
            except redis.ResponseError as e:
                out["e"] = str(e)

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.2)
        t0 = time.time()
        assert a.get("k") == "v"
        waited = time.time() - t0
        t.join()
    assert out["e"].startswith("IOERR")
    assert waited < 2.0


def test_connection_is_cached_and_replaced_when_closed(st):
    src, dst, a, b = st
    info = lambda: a.info("stats")["migrate_cached_sockets"]
    assert info() == 0
    clients = lambda: len(b.client_list())
    base = clients()
    a.set("k1", "v")
    assert migrate(a, dst.port, "k1", 0) == "OK"
    assert info() == 1
    assert clients() == base + 1
    a.set("k2", "v")
    assert migrate(a, dst.port, "k2", 0) == "OK"
    assert info() == 1 and clients() == base + 1
    # The target drops the connection: the next MIGRATE reconnects once.
    me = b.client_id()
    for c in b.client_list():
        if int(c["id"]) != me:
            b.client_kill_filter(_id=c["id"])
    a.set("k3", "v")
    assert migrate(a, dst.port, "k3", 0) == "OK"
    assert b.get("k3") == "v"
    assert info() == 1


def test_cached_connection_closed_after_ten_seconds(st):
    src, dst, a, b = st
    a.set("k", "v")
    assert migrate(a, dst.port, "k") == "OK"
    assert a.info("stats")["migrate_cached_sockets"] == 1
    wait_until(lambda: a.info("stats")["migrate_cached_sockets"] == 0, timeout=14)


def test_large_values_cross_in_pieces(st):
    src, dst, a, b = st
    for i in range(0, 40000, 1000):
        a.rpush("big", *[f"item {j}" for j in range(i, i + 1000)])
    a.hset("bh", mapping={f"f{j}": "x" * 50 for j in range(5000)})
    assert len(raw_cmd(src.client(decode_responses=False), "DUMP", "big")) > 64 * 1024
    assert migrate(a, dst.port, "", 0, 10000, "KEYS", "big", "bh") == "OK"
    assert b.llen("big") == 40000 and b.hlen("bh") == 5000
    assert b.lindex("big", 39999) == "item 39999"
    assert a.exists("big", "bh") == 0


def test_source_notifies_and_invalidates_watch(st):
    src, dst, a, b = st
    a.config_set("notify-keyspace-events", "KEg")
    p = a.pubsub()
    p.psubscribe("__key*__:*")
    p.get_message(timeout=1)
    a.set("k", "v")
    w = src.client()
    pipe = w.pipeline()
    pipe.watch("k")
    assert migrate(a, dst.port, "k") == "OK"
    pipe.multi()
    pipe.set("other", 1)
    with pytest.raises(redis.WatchError):
        pipe.execute()
    got = events(p, 2)
    assert ("__keyspace@0__:k", "del") in got
    assert ("__keyevent@0__:del", "k") in got
    # COPY deletes nothing, notifies nothing.
    a.set("c", "v")
    events(p, 10, timeout=0.3)
    assert migrate(a, dst.port, "c", 0, 5000, "COPY", "REPLACE") == "OK"
    assert events(p, 1, timeout=0.3) == []
    p.close()


def test_logged_as_del_and_survives_restart(pair):
    src = pair("src", "--appendonly", "yes")
    dst = pair("dst")
    a = src.client()
    a.mset({"a": 1, "b": 2, "c": 3})
    assert migrate(a, dst.port, "", 0, 5000, "KEYS", "a", "b") == "OK"
    d = os.path.join(src.cwd, "appendonlydir")
    log = b"".join(open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))
                   if f.endswith(".incr.aof"))
    assert b"MIGRATE" not in log.upper()
    assert b"$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n" in log
    src.stop()
    src.start()
    a = src.client()
    assert sorted(a.keys()) == ["c"]
    assert a.info("stats")["migrate_cached_sockets"] == 0


def test_inside_multi_and_scripts(st):
    src, dst, a, b = st
    a.set("m", "1")
    pipe = a.pipeline(transaction=True)
    pipe.execute_command("MIGRATE", "127.0.0.1", dst.port, "m", 0, 5000)
    pipe.get("m")
    assert pipe.execute() == ["OK", None]
    assert b.get("m") == "1"
    a.set("s", "2")
    # A script's database is its own (SELECT inside it).
    script = "redis.call('select', 1); return redis.call('migrate', ARGV[1], ARGV[2], KEYS[1], 4, 5000)"
    a1 = src.client(db=1)
    a1.set("s", "in-db-1")
    assert a.eval(script, 1, "s", "127.0.0.1", dst.port) == "OK"
    assert a1.exists("s") == 0 and a.get("s") == "2"
    assert dst.client(db=4).get("s") == "in-db-1"
    # Read-only scripts may not (MIGRATE writes).
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed"):
        a.eval_ro("return redis.call('migrate', ARGV[1], ARGV[2], KEYS[1], 0, 5000)",
                  1, "s", "127.0.0.1", dst.port)


def test_acl_needs_write_and_read_on_every_key(st):
    src, dst, a, b = st
    a.execute_command("ACL", "SETUSER", "u", "on", ">p", "~a*", "+migrate", "+set")
    u = src.client(username="u", password="p")
    u.set("a1", "v")
    a.set("b1", "v")
    assert migrate(u, dst.port, "a1") == "OK"
    e = err(u, "MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", "a2", "b1")
    assert "no permissions to access one of the keys" in e
    a.execute_command("ACL", "SETUSER", "r", "on", ">p", "%R~*", "+migrate")
    r = src.client(username="r", password="p")
    assert "no permissions to access one of the keys" in err(
        r, "MIGRATE", "127.0.0.1", dst.port, "b1", 0, 5000)
    assert a.exists("b1") == 1


def test_credentials_are_redacted_in_slowlog_and_monitor(st):
    src, dst, a, b = st
    a.config_set("slowlog-log-slower-than", 0)
    a.slowlog_reset()
    m = src.client()
    with m.monitor() as mon:
        a.execute_command("MIGRATE", "127.0.0.1", dst.port, "none", 0, 100,
                          "AUTH", "secret1", "AUTH2", "user2", "secret2")
        line = mon.next_command()["command"]
    assert "secret" not in line and "user2" not in line
    assert line.count("(redacted)") == 3
    entries = a.slowlog_get(10)
    mig = [e for e in entries if b"MIGRATE" in e["command"].upper()
           or "MIGRATE" in str(e["command"]).upper()]
    assert mig
    text = str(mig[0]["command"])
    assert "secret" not in text and "(redacted)" in text


def test_restore_asking_is_restore(st):
    src, dst, a, b = st
    a.zadd("z", {"x": 1, "y": 2})
    a.execute_command("ZPEXPIRE", "z", 600000, "MEMBERS", 1, "x")
    payload = raw_cmd(src.client(decode_responses=False), "DUMP", "z")
    assert b.execute_command("RESTORE-ASKING", "z", 5000, payload) == "OK"
    assert b.zrange("z", 0, -1) == ["x", "y"]
    assert 4000 < b.pttl("z") <= 5000
    assert b.execute_command("ZPEXPIRETIME", "z", "MEMBERS", 1, "x") == \
        a.execute_command("ZPEXPIRETIME", "z", "MEMBERS", 1, "x")
    for cmd in ("RESTORE", "RESTORE-ASKING"):
        assert err(b, cmd, "z", 0, payload) == "BUSYKEY Target key name already exists."
        assert err(b, cmd, "q", 0, b"garbage") == "DUMP payload version or checksum are wrong"
        assert err(b, cmd, "q", -1, payload) == "Invalid TTL value, must be >= 0"
        assert err(b, cmd, "q", 0, payload, "bogus") == "syntax error"
        assert err(b, cmd, "q") == f"wrong number of arguments for '{cmd.lower()}' command"
    assert b.execute_command("RESTORE-ASKING", "z", 0, payload, "REPLACE") == "OK"
    assert b.ttl("z") == -1


ARG_ERRORS = [
    ["MIGRATE", "h", "1", "k", "0"],
    ["MIGRATE", "h", "1", "k", "0", "5", "bogus"],
    ["MIGRATE", "h", "1", "k", "x", "y", "bogus"],
    ["MIGRATE", "h", "1", "k", "0", "5", "KEYS", "a", "b"],
    ["MIGRATE", "h", "1", "k", "x", "y", "KEYS", "a"],
    ["MIGRATE", "h", "1", "k", "0", "5", "AUTH"],
    ["MIGRATE", "h", "1", "k", "0", "5", "AUTH2", "u"],
    ["MIGRATE", "h", "1", "k", "0", "5", "COPY", "REPLACE", "AUTH2"],
    ["MIGRATE", "h", "1", "k", "0", "notanumber"],
    ["MIGRATE", "h", "1", "k", "notanumber", "5"],
    ["MIGRATE", "h", "1", "k", "0", "99999999999999999999"],
    ["MIGRATE", "h", "1", "k", "1.5", "5", "COPY"],
    ["MIGRATE", "h", "1", "", "0", "5", "KEYS"],
    ["MIGRATE", "h", "1", "absent", "0", "5", "COPY", "REPLACE", "AUTH", "p"],
    ["MIGRATE", "h", "1", "", "0", "-5", "AUTH2", "u", "p", "KEYS", "x", "y"],
    ["RESTORE-ASKING", "k", "0"],
    ["RESTORE-ASKING", "k", "x", "payload"],
]


def reply_of(client, argv):
    try:
        return ("ok", raw_cmd(client, *argv))
    except redis.ResponseError as e:
        return ("err", str(e))


def test_argument_errors(st):
    src, dst, a, b = st
    got = [reply_of(a, argv) for argv in ARG_ERRORS]
    assert got[0] == ("err", "wrong number of arguments for 'migrate' command")
    assert got[1] == ("err", "syntax error")
    assert got[3] == ("err", "When using MIGRATE KEYS option, the key argument must be set "
                             "to the empty string")
    assert got[8] == ("err", "value is not an integer or out of range")
    assert got[12] == ("ok", "NOKEY")


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_argument_errors_match_redis(st, tmp_path):
    src, dst, a, b = st
    red = RedisServer(str(tmp_path))
    try:
        rc = red.client()
        for argv in ARG_ERRORS:
            if argv[0] == "RESTORE-ASKING" and argv[2] == "x":
                continue  # the payload is checked differently (formats differ)
            assert reply_of(a, argv) == reply_of(rc, argv), argv
        for line in (["MIGRATE", "h", "1", "", "0", "5", "COPY", "AUTH2", "u", "p", "KEYS", "a", "b"],
                     ["MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a"],
                     ["MIGRATE", "h", "1", "", "0", "5"]):
            q = ["COMMAND", "GETKEYSANDFLAGS", *line]
            assert reply_of(a, q) == reply_of(rc, q), line
        # Both fail to reach a closed port or a bad name the same way.
        port = closed_port()
        rc.set("k", "v")
        a.set("k", "v")
        for host, p in (("127.0.0.1", port), ("127.0.0.1", "abc"), ("127.0.0.1", "-1"),
                        ("no.such.host.invalid", port)):
            line = ["MIGRATE", host, p, "k", 0, 500]
            assert reply_of(a, line) == reply_of(rc, line), line
        # A value Redis can hold goes to a redis-server target (DUMP writes
        # Redis's payload form for it) ...
        a.set("to-redis", "v")
        a.zadd("z-to-redis", {"m": 1.5, "n": -2})
        assert a.execute_command("MIGRATE", "127.0.0.1", red.port, "", 0, 5000,
                                 "KEYS", "to-redis", "z-to-redis") == "OK"
        assert rc.get("to-redis") == "v" and a.exists("to-redis") == 0
        assert rc.zrange("z-to-redis", 0, -1, withscores=True) == [("n", -2.0), ("m", 1.5)]
        # ... one whose members carry deadlines cannot: Redis refuses ebb's
        # own payload form, and the error is passed back as Redis passes
        # back any target error.
        a.execute_command("SADDEX", "ttl-to-redis", 1000, "m")
        e = err(a, "MIGRATE", "127.0.0.1", red.port, "ttl-to-redis", 0, 5000)
        assert e == "Target instance replied with error: ERR DUMP payload version or checksum are wrong"
        assert a.smembers("ttl-to-redis") == {"m"} and rc.exists("ttl-to-redis") == 0
    finally:
        red.stop()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_redis_target_errors_read_like_ebb_target_errors(st, tmp_path):
    """The same failing MIGRATE from redis-server to redis-server and from
    ebb to ebb replies the same text."""
    src, dst, a, b = st
    r1, r2 = RedisServer(str(tmp_path)), RedisServer(str(tmp_path))
    try:
        c1, c2 = r1.client(), r2.client()
        for src_c, dst_c, port in ((a, b, dst.port), (c1, c2, r2.port)):
            src_c.set("k", "v")
            dst_c.set("k", "old")
        lines = [
            ["k", 0, 5000],
            ["k", 99, 5000],
            ["k", 0, 5000, "AUTH", "pw"],
            ["k", 0, 5000, "AUTH2", "nobody", "pw"],
        ]
        for tail in lines:
            ours = reply_of(a, ["MIGRATE", "127.0.0.1", dst.port, *tail])
            theirs = reply_of(c1, ["MIGRATE", "127.0.0.1", r2.port, *tail])
            assert ours == theirs, tail
    finally:
        r1.stop()
        r2.stop()
