"""MONITOR streams every command other clients run, in Redis's format;
SLOWLOG keeps the commands slower than slowlog-log-slower-than."""

import re
import socket
import time

import pytest
import redis

from conftest import Raw, raw_cmd


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


def test_credentials_show_redacted(ebb, r):
    """As Redis 7.0: AUTH, HELLO AUTH and MIGRATE AUTH/AUTH2 are shown in
    MONITOR and the slow log with their credentials as "(redacted)"."""
    r.config_set("slowlog-log-slower-than", 0)
    s = socket.create_connection(("127.0.0.1", ebb.port))
    try:
        s.sendall(b"MONITOR\r\n")
        assert read_lines(s, 1) == [b"+OK"]
        raw_cmd(r, "SLOWLOG", "RESET")  # admin: not shown, as in Redis
        c = Raw(ebb.port)
        calls = [
            ("AUTH", "not-real"),
            ("AUTH", "user", "pw"),
            ("HELLO", "2", "AUTH", "user", "pw", "SETNAME", "n"),
            ("MIGRATE", "127.0.0.1", ebb.port, "absent", "9", "500", "AUTH", "pw"),
            ("MIGRATE", "127.0.0.1", ebb.port, "absent", "9", "500", "AUTH2", "user", "pw"),
        ]
        for call in calls:
            c.cmd(*call)
        c.close()
        lines = read_lines(s, len(calls))
        tails = [l.split(b"] ", 1)[1] for l in lines]
        assert tails == [
            b'"AUTH" "(redacted)"',
            b'"AUTH" "(redacted)" "(redacted)"',
            b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n"',
            b'"MIGRATE" "127.0.0.1" "%d" "absent" "9" "500" "AUTH" "(redacted)"' % ebb.port,
            b'"MIGRATE" "127.0.0.1" "%d" "absent" "9" "500" "AUTH2" "(redacted)" "(redacted)"'
            % ebb.port,
        ]
        logged = [[a if isinstance(a, bytes) else a.encode() for a in e[3]]
                  for e in raw_cmd(r, "SLOWLOG", "GET", -1)]
        assert not any(b"pw" in a or b"user" in a or b"not-real" in a
                       for e in logged for a in e)
        assert sum(e.count(b"(redacted)") for e in logged) == 8
    finally:
        s.close()
        r.config_set("slowlog-log-slower-than", 10000)
        raw_cmd(r, "SLOWLOG", "RESET")


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
    # Redis's text for a known subcommand with the wrong arguments.
    with pytest.raises(redis.ResponseError,
                       match=r"unknown subcommand or wrong number of arguments for 'GET'\. Try SLOWLOG HELP\."):
        raw_cmd(r, "SLOWLOG", "GET", 1, 2)
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'nope'. Try SLOWLOG HELP."):
        raw_cmd(r, "SLOWLOG", "nope")
    assert raw_cmd(r, "SLOWLOG", "HELP")[0].startswith("SLOWLOG <subcommand>")


def _stalled_subscriber(ebb, channel):
    """A subscriber that never reads what it is sent."""
    s = socket.create_connection(("127.0.0.1", ebb.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"CLIENT SETNAME stalled\r\nSUBSCRIBE " + channel + b"\r\n")
    time.sleep(0.2)
    return s


def _names(r):
    return [c.get("name") for c in r.client_list()]


def test_subscriber_over_the_hard_output_limit_is_disconnected(ebb, r):
    r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 60")
    s = _stalled_subscriber(ebb, b"news")
    try:
        assert "stalled" in _names(r)
        msg = "x" * 65536
        end = time.time() + 20
        while "stalled" in _names(r) and time.time() < end:
            for _ in range(16):
                r.publish("news", msg)
        assert "stalled" not in _names(r)
        assert r.publish("news", "after") == 0
    finally:
        s.close()
        r.config_set("client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60")


def test_subscriber_over_the_soft_limit_for_too_long_is_disconnected(ebb, r):
    r.config_set("client-output-buffer-limit", "pubsub 0 256kb 1")
    s = _stalled_subscriber(ebb, b"slow")
    try:
        msg = "y" * 65536
        for _ in range(200):  # well past the soft limit, kernel buffers included
            r.publish("slow", msg)
        assert "stalled" in _names(r)  # over the soft limit for less than 1 s
        time.sleep(1.2)
        r.publish("slow", msg)
        time.sleep(0.2)
        assert "stalled" not in _names(r)
    finally:
        s.close()
        r.config_set("client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60")


def test_reading_subscribers_are_never_cut_off(ebb, r):
    r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 60")
    try:
        sub = redis.Redis(port=ebb.port).pubsub()
        sub.subscribe("busy")
        sub.get_message(timeout=2)
        got = 0
        for i in range(200):
            r.publish("busy", "z" * 32768)
            while (m := sub.get_message(timeout=0.01)) is not None:
                got += m["type"] == "message"
        while (m := sub.get_message(timeout=0.5)) is not None:
            got += m["type"] == "message"
        assert got == 200
        sub.close()
    finally:
        r.config_set("client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60")


def test_new_key_events_precede_the_command_event(ebb, r):
    """Class `n` (not part of `A`): a `new` event when a command creates a
    key, before the command's own event; none when nothing was created."""
    r.config_set("notify-keyspace-events", "KEAn")
    p = redis.Redis(port=ebb.port, decode_responses=True).pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    try:
        r.set("a", 1)
        r.set("a", 2)
        r.lpush("l", "x")
        r.incr("c")
        r.sadd("s", "m")
        r.hset("h", "f", "v")
        r.zadd("z", {"m": 1})
        r.execute_command("SADDEX", "full", "LIMIT", "0", "60", "x")  # refused: nothing created
        r.execute_command("ZADDEX", "zx", "EX", "60", "1", "m")
        out = []
        while (m := p.get_message(timeout=0.3)) is not None:
            if m["type"] == "pmessage":
                out.append((m["channel"].split(":", 1)[1], m["data"]))
        assert out == [
            ("new", "a"), ("set", "a"), ("set", "a"),
            ("new", "l"), ("lpush", "l"),
            ("new", "c"), ("incrby", "c"),
            ("new", "s"), ("sadd", "s"),
            ("new", "h"), ("hset", "h"),
            ("new", "z"), ("zadd", "z"),
            ("new", "zx"), ("zadd", "zx"), ("zexpire", "zx"),
        ]
        r.config_set("notify-keyspace-events", "KEA")
        r.set("b", 1)
        m = p.get_message(timeout=0.5)
        while m is not None and m["type"] != "pmessage":
            m = p.get_message(timeout=0.5)
        assert m is not None and m["channel"].endswith(":set")
    finally:
        r.config_set("notify-keyspace-events", "")
        p.close()


def test_monitor_errors(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'monitor' command"):
        raw_cmd(r, "MONITOR", "extra")
    assert r.ping()


def test_commands_in_a_batch_see_the_time_move(r, r2):
    # One pipeline: a key with a TTL, then slow fast-flagged commands (each
    # PUBLISH matches thousands of patterns), then PTTL. The TTL must have
    # run down by the time that passed, and SLOWLOG must not charge the
    # PUBLISHes to the next timed command.
    p = r2.pubsub()
    p.psubscribe(*[f"nomatch{i}*" for i in range(5000)])
    try:
        raw_cmd(r, "SLOWLOG", "RESET")
        pipe = r.pipeline(transaction=False)
        pipe.set("moving", "x", px=100_000)
        pipe.time()
        for _ in range(200):
            pipe.publish("ch", "m")
        pipe.time()
        pipe.pttl("moving")
        pipe.set("after", "y")
        out = pipe.execute()
        (s0, u0), (s1, u1), pttl = out[1], out[-3], out[-2]
        elapsed_ms = (s1 - s0) * 1000 + (u1 - u0) / 1000
        assert pttl <= 100_000 - elapsed_ms + 2, (pttl, elapsed_ms)
        slow = [e for e in raw_cmd(r, "SLOWLOG", "GET", -1) if e[3][:2] == ["SET", "after"]]
        assert slow == [], slow
    finally:
        p.close()


def test_admin_subcommands_hidden_and_secrets_redacted(ebb, r):
    """As Redis 7.0: MONITOR does not show subcommands flagged admin (ACL
    SETUSER, CLIENT LIST, SLOWLOG LEN, …); the slow log shows ACL
    SETUSER's arguments and the values of CONFIG SET's sensitive options
    as "(redacted)"."""
    r.config_set("slowlog-log-slower-than", 0)
    s = socket.create_connection(("127.0.0.1", ebb.port))
    try:
        s.sendall(b"MONITOR\r\n")
        assert read_lines(s, 1) == [b"+OK"]
        raw_cmd(r, "SLOWLOG", "RESET")
        raw_cmd(r, "ACL", "SETUSER", "zz", ">pw", "on")
        raw_cmd(r, "CLIENT", "LIST")
        raw_cmd(r, "SLOWLOG", "LEN")
        raw_cmd(r, "ACL", "WHOAMI")
        raw_cmd(r, "CLIENT", "ID")
        raw_cmd(r, "CONFIG", "SET", "masterauth", "secret", "hz", "10")
        raw_cmd(r, "ECHO", "end")
        lines = read_lines(s, 3)
        assert [l.split(b"] ", 1)[1] for l in lines] == [
            b'"ACL" "WHOAMI"', b'"CLIENT" "ID"', b'"ECHO" "end"']
        logged = [[x if isinstance(x, str) else x.decode() for x in e[3]]
                  for e in raw_cmd(r, "SLOWLOG", "GET", -1)]
        assert ["ACL", "SETUSER", "(redacted)", "(redacted)", "(redacted)"] in logged
        assert ["CONFIG", "SET", "masterauth", "(redacted)", "hz", "10"] in logged
    finally:
        s.close()
        raw_cmd(r, "ACL", "DELUSER", "zz")
        r.config_set("masterauth", "")
        r.config_set("slowlog-log-slower-than", 10000)
