"""DUMP and RESTORE: the value round trip, RESTORE's options and errors as
Redis 7.0 replies them, and (ebb's own) member deadlines carried through
a payload and RESTORE's TTL logged as an absolute time.

Run with AGAINST_REDIS=1 to check the Redis parts against redis-server.
"""

import time

import pytest

from conftest import AGAINST_REDIS, ebb_only, EbbServer, wait_until



@pytest.fixture
def r(srv):
    c = srv.client(decode_responses=False)
    yield c
    c.close()


def fill(r):
    r.set("s", "hello")
    r.rpush("l", 1, 2, 3)
    r.sadd("st", "a", "b", 7)
    r.zadd("z", {"a": 1.5, "b": 2})
    r.hset("h", mapping={"f": "v", "g": "w"})
    r.sadd("big", *range(500))


def test_round_trip_of_every_type(r):
    fill(r)
    before = {k: r.execute_command("DEBUG", "DIGEST-VALUE", k) for k in
              ["s", "l", "st", "z", "h", "big"]}
    for k in before:
        payload = r.dump(k)
        r.delete(k)
        assert r.restore(k, 0, payload) in (True, b"OK")
        assert r.execute_command("DEBUG", "DIGEST-VALUE", k) == before[k]
        if not AGAINST_REDIS:  # ebb's payloads are deterministic
            assert r.dump(k) == payload
    assert r.dump("missing") is None


def test_restore_options_and_errors(r):
    r.set("s", "v")
    d = r.dump("s")

    def err(*args):
        with pytest.raises(Exception) as e:
            r.execute_command("RESTORE", *args)
        return str(e.value)

    assert err("s", 0, d).endswith("Target key name already exists.")
    assert err("s", -1, d, "REPLACE") == "Invalid TTL value, must be >= 0"
    assert err("s", 0, b"garbage", "REPLACE") == "DUMP payload version or checksum are wrong"
    assert err("s", 0, d, "REPLACE", "IDLETIME", -1) == "Invalid IDLETIME value, must be >= 0"
    assert err("s", 0, d, "REPLACE", "FREQ", 300) == "Invalid FREQ value, must be >= 0 and <= 255"
    assert err("s", 0, d, "REPLACE", "BAD") == "syntax error"
    assert err("s", "x", d, "REPLACE") == "value is not an integer or out of range"
    assert err("n", 0, d, "IDLETIME", 1, "FREQ", 1) == "syntax error"
    # A damaged payload is refused.
    bad = bytearray(d)
    bad[len(bad) // 2] ^= 1
    assert err("n", 0, bytes(bad)) == "DUMP payload version or checksum are wrong"

    r.restore("t", 5000, d)
    assert 4900 < r.pttl("t") <= 5000
    r.execute_command("RESTORE", "u", int(time.time() * 1000) + 5000, d, "ABSTTL")
    assert 4000 < r.pttl("u") <= 5000
    # Already expired: nothing is created, and REPLACE removes the old key.
    r.execute_command("RESTORE", "v", 1, d, "ABSTTL")
    assert r.exists("v") == 0
    r.execute_command("RESTORE", "s", 1, d, "ABSTTL", "REPLACE")
    assert r.exists("s") == 0
    r.execute_command("RESTORE", "w", 0, d, "IDLETIME", 1000)
    assert r.object("idletime", "w") >= 1000
    # Redis's access clock counts seconds in 24 bits: a longer idle time wraps.
    r.execute_command("RESTORE", "w2", 0, d, "IDLETIME", 20_000_000)
    assert 3_222_784 <= r.object("idletime", "w2") <= 3_222_786
    # A relative TTL past the largest time wraps, in Redis, to a time long
    # gone: the key is not created.
    assert r.execute_command("RESTORE", "x", 9223372036854775807, d) in (True, b"OK", "OK")
    assert r.exists("x") == 0
    r.execute_command("RESTORE", "x", 9223372036854775807 - int(time.time() * 1000) - 10**9, d)
    assert r.pttl("x") > 10**12


def test_restore_notifies_restore(srv, r):
    r.config_set("notify-keyspace-events", "KEA")
    p = srv.client().pubsub()
    p.psubscribe("__keyevent@0__:*")
    p.get_message(timeout=1)
    r.set("s", "v")
    d = r.dump("s")
    r.restore("s2", 0, d)
    seen = []
    deadline = time.time() + 2
    while time.time() < deadline and "__keyevent@0__:restore" not in seen:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            seen.append(m["channel"])
    assert "__keyevent@0__:restore" in seen
    p.close()


@ebb_only
def test_member_deadlines_travel_in_the_payload(r):
    r.execute_command("SADDEX", "s", 1, "short")
    r.sadd("s", "forever")
    r.execute_command("ZADDEX", "z", "EX", 100, 1, "m")
    d = r.dump("s")
    dz = r.dump("z")
    r.delete("s", "z")
    r.restore("s", 0, d)
    r.restore("z", 0, dz)
    assert sorted(r.smembers("s")) == [b"forever", b"short"]
    assert 90_000 < r.execute_command("PTTL", "z", "m") <= 100_000
    wait_until(lambda: r.smembers("s") == {b"forever"})
    # Members already past their deadline are not in a payload.
    assert r.restore("s3", 0, r.dump("s")) in (True, b"OK")
    assert r.smembers("s3") == {b"forever"}


@ebb_only
def test_a_payload_only_rebuilds_its_own_value(r):
    # A payload runs in a scratch keyspace: only the value it builds for its
    # own (empty) name comes out, whatever else it holds.
    r.set("s", "v")
    d = r.dump("s")
    assert r.restore("copy", 0, d) in (True, b"OK")
    assert r.keys("*") in ([b"s", b"copy"], [b"copy", b"s"])


@ebb_only
def test_restore_ttl_is_logged_as_an_absolute_time(tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        r = s.client(decode_responses=False)
        r.set("s", "v")
        d = r.dump("s")
        r.restore("t", 60_000, d)
        ttl = r.pttl("t")
        time.sleep(1.1)
        s.stop()
        s.start()
        r = s.client(decode_responses=False)
        assert r.get("t") == b"v"
        # Replayed as the same deadline, not 60 s from the restart.
        assert r.pttl("t") <= ttl - 1000
    finally:
        s.stop()


def _payload(*cmds):
    """An ebb DUMP payload holding `cmds` (lists of bytes), with a valid
    checksum: what a forger can build."""
    def varint(n):
        out = b""
        while True:
            b = n & 0x7F
            n >>= 7
            if n == 0:
                return out + bytes([b])
            out += bytes([b | 0x80])
    body = b"EBBDUMP1"
    for cmd in cmds:
        body += varint(len(cmd))
        for a in cmd:
            body += varint(len(a)) + a
    h = 0xCBF29CE484222325
    for c in body:
        h ^= c
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return body + h.to_bytes(8, "little")


@ebb_only
def test_a_forged_payload_only_builds_a_value(r):
    good = _payload([b"SADD", b"", b"a", b"b"])
    assert r.restore("ok", 0, good) in (True, b"OK")
    assert sorted(r.smembers("ok")) == [b"a", b"b"]
    bad = [
        _payload([b"SETRANGE", b"", b"200000000", b"x"]),   # not a rebuild command
        _payload([b"SET", b"other", b"v"]),                  # not its own key
        _payload([b"RESTORE", b"", b"0", good]),             # no nesting
        _payload([b"FLUSHALL", b""]),
        _payload([b"GET", b""]),
        _payload(),                                          # builds nothing
        _payload([b"SET"]),
    ]
    for p in bad:
        with pytest.raises(Exception) as e:
            r.restore("x", 0, p)
        assert str(e.value) == "Bad data format"
    assert r.exists("x", "other") == 0
    assert sorted(r.smembers("ok")) == [b"a", b"b"]


@ebb_only
def test_a_payload_whose_members_all_expired_restores_nothing(r):
    """Like a key whose TTL has passed: RESTORE answers OK and creates
    nothing (with REPLACE the old key goes)."""
    r.execute_command("SADDEX", "s", 1, "a", "b")
    d = r.dump("s")
    wait_until(lambda: not r.exists("s"))
    assert r.restore("s", 0, d) in (True, b"OK")
    assert r.exists("s") == 0
    r.set("old", "v")
    assert r.restore("old", 0, d, replace=True) in (True, b"OK")
    assert r.exists("old") == 0


@ebb_only
def test_replayed_restore_keeps_members_whose_deadline_passed_meanwhile(tmp_path):
    """A RESTORE in the log rebuilds its value as the log's own commands
    are replayed: a member deadline that passed while the server was down
    is set, and the commands after it (here an HPERSIST) still find it."""
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        r = s.client(decode_responses=False)
        r.hset("h", mapping={"f1": "v1", "f2": "v2"})
        r.execute_command("HPEXPIRE", "h", 1500, "FIELDS", 1, "f1")
        d = r.dump("h")
        r.delete("h")
        r.restore("h", 0, d)
        assert r.execute_command("HPERSIST", "h", "FIELDS", 1, "f1") == [1]
        time.sleep(1.7)
        assert r.hgetall("h") == {b"f1": b"v1", b"f2": b"v2"}
        assert r.execute_command("DEBUG", "LOADAOF") in (True, b"OK")
        assert r.hgetall("h") == {b"f1": b"v1", b"f2": b"v2"}
        s.stop()
        s.start()
        r = s.client(decode_responses=False)
        assert r.hgetall("h") == {b"f1": b"v1", b"f2": b"v2"}
    finally:
        s.stop()
