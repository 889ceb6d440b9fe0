"""Member expiration commands and CL.THROTTLE through the real binary,
RESP2 and RESP3. Tests that need SADD / HSET / ZADD to create members skip
until those commands exist in the build."""

import time

import pytest
import redis

from conftest import raw_cmd, wait_until

FAMILIES = [
    # (prefix, keyword, singular for errors)
    ("H", "FIELDS", "field"),
    ("Z", "MEMBERS", "member"),
    ("S", "MEMBERS", "member"),
]


def has_command(r, name):
    info = raw_cmd(r, "COMMAND", "INFO", name)
    return bool(info) and info[0] is not None


@pytest.fixture
def members(r):
    """Creates a set, a sorted set and a hash with members a, b, c."""
    for cmd in ("sadd", "zadd", "hset"):
        if not has_command(r, cmd):
            pytest.skip(f"{cmd.upper()} is not in this build yet")
    r.sadd("s", "a", "b", "c")
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    return {"H": "h", "Z": "z", "S": "s"}


# ---------------------------------------------------------------- no members


@pytest.mark.parametrize("prefix,kw,_", FAMILIES)
def test_missing_key_is_an_empty_collection(r, prefix, kw, _):
    assert raw_cmd(r, f"{prefix}EXPIRE", "nokey", "10", kw, "2", "a", "b") == [-2, -2]
    assert raw_cmd(r, f"{prefix}PEXPIREAT", "nokey", "10", "NX", kw, "1", "a") == [-2]
    for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"):
        assert raw_cmd(r, f"{prefix}{cmd}", "nokey", kw, "1", "a") == [-2]
    assert r.exists("nokey") == 0


@pytest.mark.parametrize("prefix,kw,_", FAMILIES)
def test_missing_key_resp3(r3, prefix, kw, _):
    assert r3.execute_command(f"{prefix}EXPIRE", "nokey", "10", kw, "1", "a") == [-2]
    assert r3.execute_command(f"{prefix}TTL", "nokey", kw, "1", "a") == [-2]


def test_hash_errors_match_redis_74(r):
    def e(*args):
        with pytest.raises(redis.ResponseError) as exc:
            raw_cmd(r, *args)
        return str(exc.value)

    assert e("HEXPIRE", "h", "x", "FIELDS", "1", "a") == "value is not an integer or out of range"
    assert e("HEXPIRE", "h", "-1", "FIELDS", "1", "a") == "invalid expire time, must be >= 0"
    assert e("HEXPIRE", "h", "70368744178", "FIELDS", "1", "a") == "invalid expire time in 'hexpire' command"
    assert (
        e("HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1")
        == "Mandatory argument FIELDS is missing or not at the right position"
    )
    assert e("HEXPIRE", "h", "10", "FIELDS", "0", "a") == "Parameter `numFields` should be greater than 0"
    assert (
        e("HEXPIRE", "h", "10", "FIELDS", "2", "a")
        == "The `numfields` parameter must match the number of arguments"
    )
    assert e("HTTL", "h", "FIELDS", "x", "a") == "Number of fields must be a positive integer"
    assert e("HPERSIST", "h", "FIELDS", "0", "a") == "Number of fields must be a positive integer"
    assert e("HTTL", "h", "FIELDS", "1") == "wrong number of arguments for 'httl' command"


@pytest.mark.parametrize("prefix", ["Z", "S"])
def test_member_family_errors(r, prefix):
    with pytest.raises(redis.ResponseError, match="Mandatory argument MEMBERS is missing"):
        raw_cmd(r, f"{prefix}EXPIRE", "k", "10", "FIELDS", "1", "a")
    with pytest.raises(redis.ResponseError, match="Parameter `numMembers` should be greater than 0"):
        raw_cmd(r, f"{prefix}EXPIRE", "k", "10", "MEMBERS", "0", "a")
    with pytest.raises(redis.ResponseError, match="Number of members must be a positive integer"):
        raw_cmd(r, f"{prefix}TTL", "k", "MEMBERS", "-1", "a")
    with pytest.raises(redis.ResponseError, match="`nummembers` parameter must match"):
        raw_cmd(r, f"{prefix}PERSIST", "k", "MEMBERS", "2", "a")


def test_wrong_type_first(r):
    r.set("str", "v")
    for args in (
        ("HEXPIRE", "str", "bad", "FIELDS", "1", "a"),
        ("ZTTL", "str", "MEMBERS", "1", "a"),
        ("SPERSIST", "str", "MEMBERS", "1", "a"),
        ("EXPIREMEMBER", "str", "a", "10"),
        ("TTL", "str", "a"),
        ("FIELDTTL", "str", "a"),
        ("FIELDEXPIRE", "str", "10", "a"),
    ):
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            raw_cmd(r, *args)


def test_key_ttl_persist_like_redis_70(r):
    assert r.ttl("k") == -2
    assert r.pttl("k") == -2
    assert r.persist("k") is False
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    r.expire("k", 100)
    assert 99 <= r.ttl("k") <= 100
    assert 99_000 < r.pttl("k") <= 100_000
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'ttl' command"):
        r.execute_command("TTL", "a", "b", "c")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'persist' command"):
        r.execute_command("PERSIST", "a", "b", "c")
    # Refused when queued, as Redis refuses a wrong arity: EXEC then aborts.
    for cmd in (["TTL", "a", "b", "c"], ["PTTL", "a", "b", "c"], ["PERSIST", "a", "b", "c"]):
        assert raw_cmd(r, "MULTI") == "OK"
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            raw_cmd(r, *cmd)
        with pytest.raises(redis.ResponseError, match="Transaction discarded because of previous errors"):
            raw_cmd(r, "EXEC")


def test_persist_event(r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: p.get_message(timeout=0.1) is not None)
    r.set("k", "v")
    r.expire("k", 100)
    r.persist("k")
    channels = []

    def seen_persist():
        while (m := p.get_message(timeout=0.1)) is not None:
            channels.append(m["channel"])
        return "__keyevent@0__:persist" in channels

    wait_until(seen_persist)
    p.close()


def test_keydb_and_dragonfly_forms_without_members(r):
    assert r.execute_command("TTL", "nokey", "m") == -2
    assert r.execute_command("PTTL", "nokey", "m") == -2
    assert r.execute_command("PERSIST", "nokey", "m") == 0
    assert r.execute_command("EXPIREMEMBER", "nokey", "m", "10") == 0
    assert r.execute_command("EXPIREMEMBERAT", "nokey", "m", "10") == 0
    assert r.execute_command("PEXPIREMEMBERAT", "nokey", "m", "10") == 0
    assert r.execute_command("FIELDEXPIRE", "nokey", "10", "a", "b") == [-2, -2]
    assert r.execute_command("FIELDTTL", "nokey", "a") == -2
    with pytest.raises(redis.ResponseError, match="^Invalid unit arg"):
        r.execute_command("EXPIREMEMBER", "k", "m", "10", "h")
    with pytest.raises(redis.ResponseError, match="^Invalid number of arguments"):
        r.execute_command("EXPIREMEMBER", "k", "m", "10", "s", "x")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("FIELDEXPIRE", "k", "0", "a")


# ------------------------------------------------------------- with members


@pytest.mark.parametrize("prefix,kw,_", FAMILIES)
def test_expire_ttl_persist_codes(r, members, prefix, kw, _):
    key = members[prefix]
    assert raw_cmd(r, f"{prefix}EXPIRE", key, "100", kw, "3", "a", "b", "nope") == [1, 1, -2]
    assert raw_cmd(r, f"{prefix}EXPIRE", key, "50", "GT", kw, "2", "a", "c") == [0, 0]
    assert raw_cmd(r, f"{prefix}EXPIRE", key, "50", "LT", kw, "2", "a", "c") == [1, 1]
    ttl = raw_cmd(r, f"{prefix}TTL", key, kw, "3", "a", "b", "nope")
    assert 49 <= ttl[0] <= 50 and 99 <= ttl[1] <= 100 and ttl[2] == -2
    now_ms = int(time.time() * 1000)
    at = raw_cmd(r, f"{prefix}PEXPIRETIME", key, kw, "1", "b")[0]
    assert now_ms + 90_000 < at <= now_ms + 101_000
    assert raw_cmd(r, f"{prefix}PERSIST", key, kw, "3", "a", "a", "nope") == [1, -1, -2]
    assert raw_cmd(r, f"{prefix}PTTL", key, kw, "1", "a") == [-1]
    # Time 0 deletes; the key goes with its last member.
    assert raw_cmd(r, f"{prefix}EXPIRE", key, "0", kw, "3", "a", "b", "c") == [2, 2, 2]
    assert r.exists(key) == 0


@pytest.mark.parametrize("prefix,kw,_", FAMILIES)
def test_members_expire_on_their_own(r, members, prefix, kw, _):
    key = members[prefix]
    assert raw_cmd(r, f"{prefix}PEXPIRE", key, "50", kw, "2", "a", "b") == [1, 1]
    wait_until(lambda: raw_cmd(r, f"{prefix}PTTL", key, kw, "1", "a") == [-2])
    wait_until(lambda: r.dbsize() == 3 and r.exists(key) == 1)
    assert raw_cmd(r, f"{prefix}TTL", key, kw, "1", "c") == [-1]
    # The sweeper removes the last member without anyone touching the key.
    assert raw_cmd(r, f"{prefix}PEXPIRE", key, "30", kw, "1", "c") == [1]
    wait_until(lambda: r.dbsize() == 2)


def test_member_events(r, members):
    r.config_set("notify-keyspace-events", "KEAST")
    p = r.pubsub()
    p.psubscribe("__sub*")
    p.psubscribe("__keyevent@0__:*")
    wait_until(lambda: p.get_message(timeout=0.1) is not None)
    raw_cmd(r, "SEXPIRE", "s", "60", "MEMBERS", "2", "a", "b")
    raw_cmd(r, "SPERSIST", "s", "MEMBERS", "1", "a")
    raw_cmd(r, "SPEXPIRE", "s", "40", "MEMBERS", "1", "c")
    got = []

    def seen(channel, data):
        while (m := p.get_message(timeout=0.1)) is not None:
            if m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        return (channel, data) in got

    wait_until(lambda: seen("__subkeyspace@0__:s", "sexpire|1:a,1:b"))
    wait_until(lambda: seen("__subkeyspace@0__:s", "spersist|1:a"))
    wait_until(lambda: seen("__subkeyevent@0__:sexpired", "1:s|1:c"))
    wait_until(lambda: seen("__keyevent@0__:sexpired", "s"))
    p.close()


def test_keydb_member_forms(r, members):
    assert r.execute_command("EXPIREMEMBER", "s", "a", "1500", "ms") == 1
    assert 1400 < r.execute_command("PTTL", "s", "a") <= 1500
    assert r.execute_command("TTL", "s", "a") in (1, 2)
    assert r.execute_command("TTL", "s", "nope") == -2
    assert raw_cmd(r, "SPTTL", "s", "MEMBERS", "1", "a")[0] > 1400
    assert r.execute_command("PERSIST", "s", "a") == 1
    assert r.execute_command("PERSIST", "s", "a") == 0
    assert r.execute_command("EXPIREMEMBER", "h", "a", "-1") == 1
    assert r.hexists("h", "a") is False
    at = int(time.time()) + 100
    assert r.execute_command("EXPIREMEMBERAT", "z", "a", at) == 1
    assert raw_cmd(r, "ZEXPIRETIME", "z", "MEMBERS", "1", "a") == [at]


def test_dragonfly_forms(r, members):
    assert r.execute_command("FIELDEXPIRE", "s", "10", "a", "nope") == [1, -2]
    assert r.execute_command("FIELDTTL", "s", "a") == 10
    assert r.execute_command("FIELDTTL", "s", "nope") == -3
    assert r.execute_command("FIELDTTL", "s", "b") == -1
    assert r.execute_command("FIELDEXPIRE", "h", "5", "a") == [1]
    assert raw_cmd(r, "HTTL", "h", "FIELDS", "1", "a") == [5]


def test_deadlines_survive_restart(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    if not has_command(c, "sadd"):
        pytest.skip("SADD is not in this build yet")
    c.sadd("s", "a", "b")
    c.hset("h", mapping={"f": "1", "g": "2"})
    assert raw_cmd(c, "SEXPIRE", "s", "1000", "MEMBERS", "1", "a") == [1]
    assert raw_cmd(c, "HPEXPIRE", "h", "100", "FIELDS", "1", "f") == [1]
    at = raw_cmd(c, "SPEXPIRETIME", "s", "MEMBERS", "1", "a")[0]
    time.sleep(0.2)
    s.stop()
    s.start()
    c = s.client()
    assert raw_cmd(c, "SPEXPIRETIME", "s", "MEMBERS", "2", "a", "b") == [at, -1]
    assert c.hgetall("h") == {"g": "2"}


# --------------------------------------------------------------- CL.THROTTLE


def test_throttle_readme_example(r):
    assert r.execute_command("CL.THROTTLE", "user123", 15, 30, 60) == [0, 16, 15, -1, 2]
    assert r.execute_command("CL.THROTTLE", "user123", 15, 30, 60, 1) == [0, 16, 14, -1, 4]


def test_throttle_refuses_then_state_is_a_string(r):
    assert r.execute_command("CL.THROTTLE", "k", 0, 1, 2) == [0, 1, 0, -1, 2]
    assert r.execute_command("CL.THROTTLE", "k", 0, 1, 2) == [1, 1, 0, 2, 2]
    assert r.type("k") == "string"
    assert int(r.get("k")) > time.time() * 1e9
    assert 1500 < r.pttl("k") <= 2000
    r.delete("k")
    assert r.execute_command("CL.THROTTLE", "k", 0, 1, 2) == [0, 1, 0, -1, 2]


def test_throttle_resp3(r3):
    assert r3.execute_command("CL.THROTTLE", "k3", 4, 1, 1) == [0, 5, 4, -1, 1]


def test_throttle_errors(r):
    def e(*args):
        with pytest.raises(redis.ResponseError) as exc:
            r.execute_command("CL.THROTTLE", *args)
        return str(exc.value)

    usage = "Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
    assert e("k", 1, 2) == usage
    assert e("k", 1, 2, 3, 4, 5) == usage
    assert e("k", "x", 2, 3) == "Cell error: Store error: Couldn't parse as integer: x"
    assert e("k", 1, 0, 3) == "Cell error: Store error: Zero rates are not supported"
    r.set("bad", "abc")
    assert e("bad", 1, 1, 1) == "Cell error: invalid digit found in string"
