"""MONITOR streams every command other clients run, in Redis's format;
SLOWLOG keeps the commands slower than slowlog-log-slower-than."""

import re
import socket
import time

import pytest
import redis

from conftest import raw_cmd


def read_lines(sock, n, timeout=5):
    sock.settimeout(timeout)
    buf = b""
    while buf.count(b"\r\n") < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.split(b"\r\n")[:n]


def test_monitor_streams_commands_with_redis_quoting(ebb, r):
    s = socket.create_connection(("127.0.0.1", ebb.port))
    try:
        s.sendall(b"MONITOR\r\n")
        assert read_lines(s, 1) == [b"+OK"]
        r.set("a b", 'x"y\n\x01')
        r.execute_command("SELECT", 3)
        r.execute_command("PING")
        r.execute_command("CONFIG", "GET", "port")  # not shown, as in Redis
        r.execute_command("SELECT", 0)
        lines = read_lines(s, 4)
        pat = rb'^\+\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\] (.*)$'
        got = [re.match(pat, l) for l in lines]
        assert all(got), lines
        assert got[0].group(2) == rb'"SET" "a b" "x\"y\n\x01"'
        assert got[1].group(2) == b'"SELECT" "3"'
        assert (got[2].group(1), got[2].group(2)) == (b"3", b'"PING"')
        assert got[3].group(2) == b'"SELECT" "0"'
    finally:
        s.close()
    # The monitor is gone with its connection; the server carries on.
    assert r.set("after", "1")


def test_slowlog_records_commands_over_the_threshold(r):
    r.config_set("slowlog-log-slower-than", 0)
    try:
        assert raw_cmd(r, "SLOWLOG", "RESET") in ("OK", b"OK")
        r.set("k", "v" * 200)
        r.execute_command("CLIENT", "SETNAME", "me")
        r.get("k")
        entries = raw_cmd(r, "SLOWLOG", "GET", -1)
        ids = [e[0] for e in entries]
        assert ids == sorted(ids, reverse=True)
        get = next(e for e in entries if e[3][0] in ("GET", b"GET"))
        assert len(get) == 6 and get[2] >= 0 and abs(get[1] - time.time()) < 60
        assert get[4].startswith("127.0.0.1:") and get[5] == "me"
        st = next(e for e in entries if e[3][0] == "SET")
        assert st[3][2] == "v" * 128 + "... (72 more bytes)"
        assert raw_cmd(r, "SLOWLOG", "LEN") >= 3
        assert len(raw_cmd(r, "SLOWLOG", "GET", 1)) == 1
        r.config_set("slowlog-max-len", 2)
        assert raw_cmd(r, "SLOWLOG", "LEN") <= 2
        r.config_set("slowlog-log-slower-than", -1)
        raw_cmd(r, "SLOWLOG", "RESET")
        r.get("k")
        assert raw_cmd(r, "SLOWLOG", "LEN") == 0
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        r.config_set("slowlog-max-len", 128)


def test_slowlog_keeps_slow_commands_by_default(r):
    raw_cmd(r, "SLOWLOG", "RESET")
    r.execute_command("DEBUG", "SLEEP", "0.02")
    r.get("fast")
    entries = raw_cmd(r, "SLOWLOG", "GET")
    assert [e[3][:2] for e in entries] == [["DEBUG", "SLEEP"]]
    assert entries[0][2] >= 20_000


def test_slowlog_errors(r):
    with pytest.raises(redis.ResponseError, match="count should be greater than or equal to -1"):
        raw_cmd(r, "SLOWLOG", "GET", -2)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'slowlog|get' command"):
        raw_cmd(r, "SLOWLOG", "GET", 1, 2)
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'nope'. Try SLOWLOG HELP."):
        raw_cmd(r, "SLOWLOG", "nope")
    assert raw_cmd(r, "SLOWLOG", "HELP")[0].startswith("SLOWLOG <subcommand>")
