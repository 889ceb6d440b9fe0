"""client-output-buffer-limit for ordinary clients (the `normal` class) and
its CONFIG SET form, as Redis 7.0 has them: a client whose replies pass the
hard limit is closed with none of its batch's replies sent."""

import re
import socket
import time

import pytest
import redis

from conftest import ebb_only

DEFAULT = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


@pytest.fixture
def ebb(srv):
    """A fresh server per test: ebb, or redis-server with AGAINST_REDIS=1."""
    return srv


@pytest.fixture
def r(srv):
    c = redis.Redis(port=srv.port, decode_responses=True)
    yield c
    c.close()


@pytest.fixture
def limited(r):
    r.config_set("client-output-buffer-limit", "normal 100000 0 0")
    yield r
    r.config_set("client-output-buffer-limit", DEFAULT)


def _names(r):
    return [c.get("name") for c in r.client_list()]


def _raw(ebb, name):
    s = socket.create_connection(("127.0.0.1", ebb.port))
    s.settimeout(5)
    s.sendall(f"CLIENT SETNAME {name}\r\n".encode())
    assert s.recv(100) == b"+OK\r\n"
    return s


def _read_all(s):
    """Everything the server sends until it closes the connection."""
    got = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return got
        got += chunk


def test_a_reply_over_the_hard_limit_closes_the_client_unanswered(ebb, limited):
    r = limited
    for _ in range(150):
        r.lpush("biglist", "x" * 1000)
    s = _raw(ebb, "biglist")
    s.sendall(b"LRANGE biglist 0 -1\r\n")
    assert _read_all(s) == b""
    assert "biglist" not in _names(r)
    assert r.ping()


def test_a_pipeline_over_the_limit_gets_no_reply_at_all(ebb, limited):
    r = limited
    r.set("bigkey", "x" * 10000)
    s = _raw(ebb, "pipeline")
    batch = b"SET first 1\r\n" + b"".join(
        f"SET k{i} {i}\r\nGET k{i}\r\nDEL k{i}\r\nGET bigkey\r\n".encode() for i in range(15)
    )
    s.sendall(batch + b"SET after 1\r\n")
    assert _read_all(s) == b""
    assert "pipeline" not in _names(r)
    # The commands before the limit ran; the ones after it did not.
    assert r.exists("first") == 1
    assert r.exists("after") == 0


def test_a_transaction_runs_whole_before_its_client_is_closed(ebb, limited):
    r = limited
    for _ in range(150):
        r.lpush("list2", "y" * 1000)
    c = redis.Redis(port=ebb.port)
    c.client_setname("tx")
    c.set("k1", "v1")
    p = c.pipeline(transaction=True)
    p.set("k2", "v2").get("k2").lrange("list2", 0, -1).set("k3", "v3").delete("k1")
    with pytest.raises(redis.ConnectionError):
        p.execute()
    assert "tx" not in _names(r)
    assert r.get("k1") is None
    assert r.get("k2") == "v2"
    assert r.get("k3") == "v3"


def test_replies_under_the_limit_are_untouched(ebb, limited):
    r = limited
    r.set("small", "z" * 1000)
    c = redis.Redis(port=ebb.port)
    p = c.pipeline(transaction=False)
    for _ in range(50):
        p.get("small")
    assert p.execute() == [b"z" * 1000] * 50
    assert c.ping()


def test_the_soft_limit_closes_a_client_that_stays_over_it(ebb, r):
    r.config_set("client-output-buffer-limit", "normal 0 100000 1")
    try:
        r.set("v", "q" * 100000)
        s = socket.create_connection(("127.0.0.1", ebb.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"CLIENT SETNAME soft\r\n" + b"GET v\r\n" * 200)
        time.sleep(0.5)
        assert "soft" in _names(r), "over the soft limit for less than its second"
        end = time.time() + 8
        while "soft" in _names(r) and time.time() < end:
            time.sleep(0.1)
        assert "soft" not in _names(r)
        s.close()
        # A client that reads its replies is not cut off.
        c = redis.Redis(port=ebb.port)
        p = c.pipeline(transaction=False)
        for _ in range(20):
            p.get("v")
        assert len(p.execute()) == 20
    finally:
        r.config_set("client-output-buffer-limit", DEFAULT)


def test_config_set_checks_and_shows_the_limits_as_redis(r):
    name = "client-output-buffer-limit"
    for value, words in [
        ("wrong number", "Wrong number of arguments"),
        ("invalid_class 10mb 10mb 60", "Invalid client class"),
        ("master 10mb 10mb 60", "Invalid client class"),
        ("normal 10mbs 10mb 60", "Error in hard, soft or soft_seconds"),
        ("replica 10mb 10mbs 60", "Error in hard, soft or soft_seconds"),
        ("pubsub 10mb 10mb 60s", "Error in hard, soft or soft_seconds"),
    ]:
        with pytest.raises(redis.ResponseError) as e:
            r.config_set(name, value)
        assert words in str(e.value), value
    try:
        r.config_set(name, "normal 1mb 2mb 60 replica 3mb 4mb 70 pubsub 5mb 6mb 80")
        assert r.config_get(name)[name] == (
            "normal 1048576 2097152 60 slave 3145728 4194304 70 pubsub 5242880 6291456 80"
        )
        r.config_set(name, "pubsub 100000 0 0")
        assert r.config_get(name)[name] == (
            "normal 1048576 2097152 60 slave 3145728 4194304 70 pubsub 100000 0 0"
        )
    finally:
        r.config_set(name, DEFAULT)


def test_client_list_shows_a_stalled_subscribers_backlog(ebb, r):
    s = socket.create_connection(("127.0.0.1", ebb.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"CLIENT SETNAME stalled\r\nSUBSCRIBE feed\r\n")
    time.sleep(0.2)
    try:
        msg = "m" * 10000
        omem = 0
        end = time.time() + 20
        while omem < 100000 and time.time() < end:
            for _ in range(20):
                r.publish("feed", msg)
            for c in r.client_list():
                if c.get("name") == "stalled":
                    omem = int(c["omem"])
        assert omem >= 100000
    finally:
        s.close()


@pytest.mark.parametrize("setup,cmd", [
    (("SADD", "k", "a"), "SRANDMEMBER k -999999999"),
    (("HSET", "k", "a", "b"), "HRANDFIELD k -999999999"),
    (("HSET", "k", "a", "b"), "HRANDFIELD k -99999999 WITHVALUES"),
    (("ZADD", "k", "1", "a"), "ZRANDMEMBER k -999999999"),
])
def test_a_huge_negative_random_count_meets_the_limit(ebb, limited, setup, cmd):
    # Redis answers pick by pick until the limit closes the client: the
    # client is closed, never answered with an error, and the server lives.
    limited.execute_command(*setup)
    s = _raw(ebb, "picker")
    s.sendall(cmd.encode() + b"\r\nPING\r\n")
    assert _read_all(s) == b""
    assert "picker" not in _names(limited)
    # Under the limit the picks come back, repeated.
    small = re.sub(r"-9+", "-9", cmd).split()
    assert len(limited.execute_command(*small)) == 9
