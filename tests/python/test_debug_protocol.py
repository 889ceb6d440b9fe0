"""DEBUG PROTOCOL, DEBUG DIGEST/DIGEST-VALUE and PING in RESP2 subscribed
mode, byte for byte as Redis 7.0 answers them (clients' own test suites
use DEBUG PROTOCOL to exercise every RESP3 type)."""

import socket
import time

import pytest

from conftest import raw_cmd


class Raw:
    """A bare connection returning whatever bytes the server sent."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.settimeout(5)

    def cmd(self, line, expect):
        self.s.sendall(line + b"\r\n")
        buf = b""
        while len(buf) < len(expect):
            chunk = self.s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf


RESP2 = [
    (b"string", b"$11\r\nHello World\r\n"),
    (b"integer", b":12345\r\n"),
    (b"double", b"$5\r\n3.141\r\n"),
    (b"bignum", b"$37\r\n1234567999999999999999999999999999999\r\n"),
    (b"null", b"$-1\r\n"),
    (b"array", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    (b"set", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    (b"map", b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n"),
    (b"attrib", b"$39\r\nSome real reply following the attribute\r\n"),
    (b"push", b"-ERR RESP2 is not supported by this command\r\n"),
    (b"true", b":1\r\n"),
    (b"false", b":0\r\n"),
    (b"verbatim", b"$25\r\nThis is a verbatim\nstring\r\n"),
    (b"nope", b"-ERR Wrong protocol type name. Please use one of the following: "
              b"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n"),
]

RESP3 = [
    (b"double", b",3.141\r\n"),
    (b"bignum", b"(1234567999999999999999999999999999999\r\n"),
    (b"null", b"_\r\n"),
    (b"set", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    (b"map", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    (b"attrib", b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
                b"$39\r\nSome real reply following the attribute\r\n"),
    (b"push", b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
              b"$40\r\nSome real reply following the push reply\r\n"),
    (b"true", b"#t\r\n"),
    (b"verbatim", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
]


@pytest.mark.parametrize("kind,want", RESP2)
def test_debug_protocol_resp2(ebb, kind, want):
    c = Raw(ebb.port)
    assert c.cmd(b"DEBUG PROTOCOL " + kind, want) == want


@pytest.mark.parametrize("kind,want", RESP3)
def test_debug_protocol_resp3(ebb, kind, want):
    c = Raw(ebb.port)
    c.s.sendall(b"HELLO 3\r\n")
    time.sleep(0.05)
    c.s.recv(65536)
    assert c.cmd(b"DEBUG PROTOCOL " + kind, want) == want


def test_ping_in_resp2_subscribed_mode_is_a_pong_array(ebb):
    c = Raw(ebb.port)
    c.cmd(b"SUBSCRIBE ch", b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
    assert c.cmd(b"PING", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    want = b"*2\r\n$4\r\npong\r\n$3\r\nfoo\r\n"
    assert c.cmd(b"PING foo", want) == want
    c.cmd(b"UNSUBSCRIBE ch", b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n")
    assert c.cmd(b"PING", b"+PONG\r\n") == b"+PONG\r\n"


def test_debug_digest_value_matches_a_copy(r):
    r.sadd("s", "a", "b", "c")
    r.copy("s", "s2")
    d = r.execute_command("DEBUG", "DIGEST-VALUE", "s", "s2", "missing")
    assert d[0] == d[1] and len(d[0]) == 40
    assert d[2] == "0" * 40
    full = r.execute_command("DEBUG", "DIGEST")
    r.sadd("s2", "d")
    assert r.execute_command("DEBUG", "DIGEST") != full
    r.flushall()
    assert r.execute_command("DEBUG", "DIGEST") == "0" * 40


def test_info_cpu_reports_process_cpu_times(r):
    cpu = r.info("cpu")
    for f in ("used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children"):
        assert isinstance(cpu[f], float) and cpu[f] >= 0
    assert "used_cpu_user" in r.info()
    raw = raw_cmd(r, "INFO", "cpu")
    raw = raw.decode() if isinstance(raw, bytes) else raw
    assert raw.startswith("# CPU\r\n") and "used_cpu_user:" in raw and "used_memory" not in raw


def test_debug_quicklist_packed_threshold_checks_its_argument(r):
    for ok in ("1b", "5b", "100b", "0", "1gb", "4294967295"):
        assert raw_cmd(r, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", ok) in (b"OK", "OK")
    for bad in ("4gb", "abc", "-1"):
        with pytest.raises(Exception) as e:
            r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", bad)
        assert "argument must be a memory value bigger than 1 and smaller than 4gb" in str(e.value)
    # Lists with large elements behave the same whatever the threshold.
    r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b")
    r.rpush("l", "a" * 100, "bb", "c" * 50)
    assert r.lrange("l", 0, -1) == ["a" * 100, "bb", "c" * 50]
    r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")


def test_bgrewriteaof_without_aof_then_debug_loadaof(server_factory):
    s = server_factory()
    r = s.client(decode_responses=True)
    r.set("x", "10")
    r.expire("x", 1000)
    r.sadd("s", "a", "b")
    r.zadd("z", {"m": 1.5})
    before = r.execute_command("DEBUG", "DIGEST")
    assert r.bgrewriteaof()
    wait = 0
    while r.info("persistence")["aof_rewrite_in_progress"] and wait < 100:
        time.sleep(0.05)
        wait += 1
    r.set("later", "1")  # not in the rewritten file
    assert r.execute_command("DEBUG", "LOADAOF") in (True, "OK")
    assert r.exists("later") == 0
    assert r.execute_command("DEBUG", "DIGEST") == before
    assert 900 < r.ttl("x") <= 1000
    # With the AOF on, LOADAOF replays what was logged since.
    r.config_set("appendonly", "yes")
    while r.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)
    r.set("y", "1")
    assert r.execute_command("DEBUG", "LOADAOF") in (True, "OK")
    assert r.get("y") == "1" and r.smembers("s") == {"a", "b"}
    r.config_set("appendonly", "no")


def test_debug_pause_cron_stops_active_expiry_until_resumed(r):
    """DEBUG PAUSE-CRON 1 holds the periodic work: a key past its TTL stays
    in the table (DBSIZE counts it) until the cron resumes."""
    # Read as C's atoi, as Redis reads it: "x" is 0, switched off.
    for switch in ("PAUSE-CRON", "SET-ACTIVE-EXPIRE"):
        assert r.execute_command("DEBUG", switch, "x") in ("OK", b"OK", True)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    assert r.execute_command("DEBUG", "PAUSE-CRON", "1") in ("OK", b"OK", True)
    try:
        r.set("soon", 1, px=20)
        time.sleep(0.4)
        assert r.dbsize() == 1
    finally:
        r.execute_command("DEBUG", "PAUSE-CRON", "0")
    end = time.time() + 3
    while r.dbsize() and time.time() < end:
        time.sleep(0.05)
    assert r.dbsize() == 0


def test_debug_sleep_and_switches_read_their_argument_as_c_does(r):
    # DEBUG SLEEP reads a leading number (strtod); the switches read atoi.
    import time

    start = time.time()
    assert r.execute_command("DEBUG", "SLEEP", ".2abc") in (b"OK", "OK", True)
    assert time.time() - start >= 0.19
    for arg in ("abc", "", "+1", "01", "1"):
        assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", arg) in (b"OK", "OK", True)
