"""The string and bitmap families through the real binary: exact RESP2 and
RESP3 bytes of replies and errors, TTL handling, keyspace events, WATCH,
and replay of the logged forms from the append-only file.

Set STRINGS_ORACLE_PORT to the port of a redis-server 7.0 to run the same
assertions (except the ebb-only persistence checks) against Redis itself."""

import os
import socket
import time

import pytest

from conftest import Raw, wait_until

ORACLE = os.environ.get("STRINGS_ORACLE_PORT")
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
SYNTAX = b"-ERR syntax error\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
NOT_FLOAT = b"-ERR value is not a valid float\r\n"
OK = b"+OK\r\n"
NIL2 = b"$-1\r\n"
NIL3 = b"_\r\n"


def bulk(s):
    s = s if isinstance(s, bytes) else str(s).encode()
    return b"$%d\r\n%s\r\n" % (len(s), s)


def num(n):
    return b":%d\r\n" % n


def err(text):
    return b"-" + text.encode() + b"\r\n"


@pytest.fixture
def port(request):
    if ORACLE:
        return int(ORACLE)
    return request.getfixturevalue("ebb").port


@pytest.fixture
def c(port):
    conn = Raw(port)
    conn.cmd("FLUSHALL")
    conn.cmd("CONFIG", "SET", "notify-keyspace-events", "")
    conn.cmd("RPUSH", "list", "a")
    yield conn
    conn.close()


@pytest.fixture
def c3(c, port):
    conn = Raw(port, resp3=True)
    yield conn
    conn.close()


def check(c, cases):
    for args, want in cases:
        assert c.cmd(*args) == want, args


def test_get_set_and_wrong_type(c):
    check(c, [
        (["GET", "k"], NIL2),
        (["SET", "k", "v"], OK),
        (["GET", "k"], bulk("v")),
        (["SET", "k", b"bin\x00\r\nary"], OK),
        (["GET", "k"], bulk(b"bin\x00\r\nary")),
        (["GET", "list"], WRONGTYPE),
        (["GET"], err("ERR wrong number of arguments for 'get' command")),
        (["SET", "k"], err("ERR wrong number of arguments for 'set' command")),
    ])


def test_set_options_errors(c):
    invalid = err("ERR invalid expire time in 'set' command")
    check(c, [
        (["SET", "k", "v", "EX", "10", "PX", "10"], SYNTAX),
        (["SET", "k", "v", "NX", "XX"], SYNTAX),
        (["SET", "k", "v", "KEEPTTL", "EX", "1"], SYNTAX),
        (["SET", "k", "v", "EX", "10", "KEEPTTL"], SYNTAX),
        (["SET", "k", "v", "EX"], SYNTAX),
        (["SET", "k", "v", "PERSIST"], SYNTAX),
        (["SET", "k", "v", "ex", "abc", "NX", "XX"], SYNTAX),
        (["SET", "k", "v", "EX", "abc"], NOT_INT),
        (["SET", "k", "v", "EX", "0"], invalid),
        (["SET", "k", "v", "PX", "-1"], invalid),
        (["SET", "k", "v", "EX", "9223372036854775"], invalid),
        (["SET", "k", "v", "PX", "9223372036854775807"], invalid),
        (["SET", "list", "v", "EX", "0", "GET"], invalid),
        (["SET", "list", "v", "GET"], WRONGTYPE),
        (["SET", "list", "v", "NX", "GET"], WRONGTYPE),
        (["SET", "k", "v", "EX", "10", "EX", "20"], OK),
        (["TTL", "k"], num(20)),
        (["SET", "k", "v", "PXAT", "9223372036854775807"], OK),
        (["PEXPIRETIME", "k"], num(9223372036854775807)),
        (["SET", "k", "v", "EXAT", "1"], OK),
        (["GET", "k"], NIL2),
    ])


def test_set_nx_xx_get_keepttl(c):
    check(c, [
        (["SET", "k", "v", "XX"], NIL2),
        (["SET", "k", "v", "XX", "GET"], NIL2),
        (["SET", "k", "v", "NX"], OK),
        (["SET", "k", "w", "NX"], NIL2),
        (["SET", "k", "w", "NX", "GET"], bulk("v")),
        (["SET", "k", "w", "GET", "EX", "100"], bulk("v")),
        (["TTL", "k"], num(100)),
        (["SET", "k", "x", "KEEPTTL", "GET"], bulk("w")),
        (["TTL", "k"], num(100)),
        (["SET", "k", "y"], OK),
        (["TTL", "k"], num(-1)),
        (["SET", "list", "v"], OK),
        (["GET", "list"], bulk("v")),
    ])


def test_setnx_setex_psetex_getset_getdel(c):
    check(c, [
        (["SETNX", "k", "v"], num(1)),
        (["SETNX", "k", "w"], num(0)),
        (["SETNX", "list", "w"], num(0)),
        (["SETEX", "k", "100", "v"], OK),
        (["TTL", "k"], num(100)),
        (["PSETEX", "k", "100000", "v"], OK),
        (["TTL", "k"], num(100)),
        (["SETEX", "k", "0", "v"], err("ERR invalid expire time in 'setex' command")),
        (["PSETEX", "k", "-5", "v"], err("ERR invalid expire time in 'psetex' command")),
        (["SETEX", "k", "x", "v"], NOT_INT),
        (["GETSET", "k", "w"], bulk("v")),
        (["TTL", "k"], num(-1)),
        (["GETSET", "new", "w"], NIL2),
        (["GETSET", "list", "w"], WRONGTYPE),
        (["GETDEL", "k"], bulk("w")),
        (["GETDEL", "k"], NIL2),
        (["EXISTS", "k"], num(0)),
        (["GETDEL", "list"], WRONGTYPE),
    ])


def test_getex(c):
    invalid = err("ERR invalid expire time in 'getex' command")
    check(c, [
        (["GETEX", "k", "EX", "abc"], NIL2),
        (["GETEX", "k", "foo"], SYNTAX),
        (["SET", "k", "v"], OK),
        (["GETEX", "k", "EX", "10", "PX", "10"], SYNTAX),
        (["GETEX", "k", "PERSIST", "EX", "10"], SYNTAX),
        (["GETEX", "k", "KEEPTTL"], SYNTAX),
        (["GETEX", "k", "NX"], SYNTAX),
        (["GETEX", "k", "EX", "0"], invalid),
        (["GETEX", "k", "EX", "abc"], NOT_INT),
        (["GETEX", "list", "EX", "0"], WRONGTYPE),
        (["GETEX", "k"], bulk("v")),
        (["GETEX", "k", "EX", "100"], bulk("v")),
        (["TTL", "k"], num(100)),
        (["GETEX", "k", "PERSIST"], bulk("v")),
        (["TTL", "k"], num(-1)),
        (["GETEX", "k", "PXAT", "9223372036854775807"], bulk("v")),
        (["GETEX", "k", "EXAT", "1"], bulk("v")),
        (["EXISTS", "k"], num(0)),
    ])


def test_deadline_from_the_clients_clock_is_never_exceeded(c, port):
    """A deadline the client computes from its clock after a reply, then
    PTTL: never more time left than the client gave (the server must not
    reuse a clock reading older than its previous reply). A bare socket
    keeps each round trip short enough for a stale reading to show: a
    reading reused across requests for 100 us made about 0.5% of these
    PTTLs answer 10001 (this test caught it in 3 runs of 5)."""
    c.cmd("SET", "k", "v")
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pttl = b"*2\r\n$4\r\nPTTL\r\n$1\r\nk\r\n"
    try:
        for _ in range(20000):
            at = b"%d" % (int(time.time() * 1000) + 10000)
            s.sendall(b"*4\r\n$5\r\nGETEX\r\n$1\r\nk\r\n$4\r\nPXAT\r\n$%d\r\n%s\r\n" % (len(at), at))
            assert s.recv(64) == bulk("v")
            s.sendall(pttl)
            left = int(s.recv(64)[1:-2])
            assert 9000 <= left <= 10000, left
    finally:
        s.close()


def test_encoding_follows_how_a_string_was_written(c):
    def enc():
        return c.cmd("OBJECT", "ENCODING", "k")
    check(c, [
        (["SET", "k", "1234"], OK),
        (["SETRANGE", "k", "0", ""], num(4)),
        (["OBJECT", "ENCODING", "k"], bulk("int")),
        (["SETRANGE", "k", "1", "3"], num(4)),
        (["OBJECT", "ENCODING", "k"], bulk("raw")),
        (["GET", "k"], bulk("1334")),
        (["INCR", "k"], num(1335)),
        (["OBJECT", "ENCODING", "k"], bulk("int")),
        (["SETBIT", "k", "2", "1"], num(1)),
        (["OBJECT", "ENCODING", "k"], bulk("raw")),
        (["SET", "k", "1.5"], OK),
        (["INCRBYFLOAT", "k", "1.5"], bulk("3")),
        (["OBJECT", "ENCODING", "k"], bulk("embstr")),
        (["APPEND", "k", ""], num(1)),
        (["OBJECT", "ENCODING", "k"], bulk("raw")),
    ])
    assert enc() == bulk("raw")


def test_mget_mset_msetnx(c):
    check(c, [
        (["MSET", "a", "1", "b", "2"], OK),
        (["MGET", "a", "nokey", "list", "b"], b"*4\r\n" + bulk("1") + NIL2 + NIL2 + bulk("2")),
        (["MSET", "a", "1", "b"], err("ERR wrong number of arguments for 'mset' command")),
        (["MSETNX", "a", "1", "b"], err("ERR wrong number of arguments for 'msetnx' command")),
        (["MSETNX", "list", "1", "c", "2"], num(0)),
        (["EXISTS", "c"], num(0)),
        (["MSETNX", "c", "1", "c", "2"], num(1)),
        (["GET", "c"], bulk("2")),
    ])


def test_append_strlen_ranges(c):
    check(c, [
        (["APPEND", "k", ""], num(0)),
        (["EXISTS", "k"], num(1)),
        (["APPEND", "k", "Hello "], num(6)),
        (["APPEND", "k", "World"], num(11)),
        (["STRLEN", "k"], num(11)),
        (["STRLEN", "nokey"], num(0)),
        (["STRLEN", "list"], WRONGTYPE),
        (["APPEND", "list", "x"], WRONGTYPE),
        (["GETRANGE", "k", "0", "4"], bulk("Hello")),
        (["GETRANGE", "k", "-5", "-1"], bulk("World")),
        (["GETRANGE", "k", "-1", "-5"], bulk("")),
        (["GETRANGE", "k", "5", "1000"], bulk(" World")),
        (["SUBSTR", "k", "0", "0"], bulk("H")),
        (["GETRANGE", "nokey", "0", "-1"], bulk("")),
        (["GETRANGE", "k", "a", "1"], NOT_INT),
        (["GETRANGE", "list", "0", "1"], WRONGTYPE),
        (["SETRANGE", "k", "6", "Redis"], num(11)),
        (["GET", "k"], bulk("Hello Redis")),
        (["SETRANGE", "p", "3", "x"], num(4)),
        (["GET", "p"], bulk(b"\x00\x00\x00x")),
        (["SETRANGE", "q", "3", ""], num(0)),
        (["EXISTS", "q"], num(0)),
        (["SETRANGE", "k", "-1", "x"], err("ERR offset is out of range")),
        (["SETRANGE", "list", "0", ""], WRONGTYPE),
        (["SETRANGE", "k", "536870912", "x"],
         err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")),
    ])


def test_counters(c):
    check(c, [
        (["INCR", "n"], num(1)),
        (["INCRBY", "n", "10"], num(11)),
        (["DECR", "n"], num(10)),
        (["DECRBY", "n", "20"], num(-10)),
        (["INCRBY", "n", "x"], NOT_INT),
        (["DECRBY", "n", "-9223372036854775808"], err("ERR decrement would overflow")),
        (["SET", "n", "9223372036854775807"], OK),
        (["INCR", "n"], err("ERR increment or decrement would overflow")),
        (["SET", "n", " 1"], OK),
        (["INCR", "n"], NOT_INT),
        (["INCR", "list"], WRONGTYPE),
        (["SET", "t", "5", "EX", "100"], OK),
        (["INCR", "t"], num(6)),
        (["TTL", "t"], num(100)),
    ])


def test_incrbyfloat_formats_like_redis(c, c3):
    check(c, [
        (["SET", "f", "10.50"], OK),
        (["INCRBYFLOAT", "f", "0.1"], bulk("10.6")),
        (["INCRBYFLOAT", "f", "-5"], bulk("5.6")),
        (["SET", "f", "5.0e3"], OK),
        (["INCRBYFLOAT", "f", "2.0e2"], bulk("5200")),
        (["INCRBYFLOAT", "g", "0.1"], bulk("0.1")),
        (["INCRBYFLOAT", "g", "0.2"], bulk("0.3")),
        (["INCRBYFLOAT", "h", "1.23456789012345678901234"], bulk("1.23456789012345679")),
        (["INCRBYFLOAT", "h", "1e17"], bulk("100000000000000001.234375")),
        (["INCRBYFLOAT", "i", "0.000003814697265625"], bulk("0.00000381469726562")),
        (["INCRBYFLOAT", "j", "0x10"], bulk("16")),
        (["INCRBYFLOAT", "j", "inf"], err("ERR increment would produce NaN or Infinity")),
        (["INCRBYFLOAT", "j", "nan"], NOT_FLOAT),
        (["INCRBYFLOAT", "j", "1e5000"], NOT_FLOAT),
        (["INCRBYFLOAT", "j", " 1"], NOT_FLOAT),
        (["INCRBYFLOAT", "list", "1"], WRONGTYPE),
        (["SET", "s", "abc"], OK),
        (["INCRBYFLOAT", "s", "1"], NOT_FLOAT),
        (["SET", "t", "1", "EX", "100"], OK),
        (["INCRBYFLOAT", "t", "1.5"], bulk("2.5")),
        (["TTL", "t"], num(100)),
    ])
    # A bulk string in RESP3 too.
    assert c3.cmd("INCRBYFLOAT", "t", "1") == bulk("3.5")


def test_bit_commands(c):
    check(c, [
        (["SET", "s", "foobar"], OK),
        (["SETBIT", "b", "7", "1"], num(0)),
        (["SETBIT", "b", "7", "0"], num(1)),
        (["GETBIT", "s", "1"], num(1)),
        (["GETBIT", "nokey", "9"], num(0)),
        (["SETBIT", "b", "-1", "1"], err("ERR bit offset is not an integer or out of range")),
        (["SETBIT", "b", "4294967296", "1"], err("ERR bit offset is not an integer or out of range")),
        (["SETBIT", "b", "0", "2"], err("ERR bit is not an integer or out of range")),
        (["SETBIT", "list", "0", "1"], WRONGTYPE),
        (["BITCOUNT", "s"], num(26)),
        (["BITCOUNT", "s", "1", "1"], num(6)),
        (["BITCOUNT", "s", "5", "30", "BIT"], num(17)),
        (["BITCOUNT", "s", "0"], SYNTAX),
        (["BITCOUNT", "s", "0", "1", "FOO"], SYNTAX),
        (["BITCOUNT", "nokey", "0"], num(0)),
        (["BITPOS", "s", "1"], num(1)),
        (["BITPOS", "s", "1", "2"], num(17)),
        (["BITPOS", "s", "0", "7", "7", "BIT"], num(7)),
        (["BITPOS", "nokey", "0"], num(0)),
        (["BITPOS", "nokey", "1"], num(-1)),
        (["BITPOS", "s", "2"], err("ERR The bit argument must be 1 or 0.")),
        (["BITOP", "AND", "dest", "s", "nokey"], num(6)),
        (["GET", "dest"], bulk(b"\x00" * 6)),
        (["BITOP", "NOT", "dest", "s", "s"], err("ERR BITOP NOT must be called with a single source key.")),
        (["BITOP", "NAND", "dest", "s"], SYNTAX),
        (["BITOP", "OR", "dest", "s", "list"], WRONGTYPE),
        (["BITOP", "XOR", "dest", "nokey"], num(0)),
        (["EXISTS", "dest"], num(0)),
    ])


def test_bitfield(c, c3):
    check(c, [
        (["BITFIELD", "k", "SET", "i8", "0", "100", "INCRBY", "i8", "0", "100", "GET", "u4", "0"],
         b"*3\r\n" + num(0) + num(-56) + num(12)),
        (["BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u2", "100", "9", "OVERFLOW", "FAIL", "INCRBY", "u2", "102", "9"],
         b"*2\r\n" + num(3) + NIL2),
        (["BITFIELD", "k", "GET", "u64", "0"],
         err("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")),
        (["BITFIELD", "k", "OVERFLOW", "MAYBE"], err("ERR Invalid OVERFLOW type specified")),
        (["BITFIELD", "k", "GET", "u8"], SYNTAX),
        (["BITFIELD", "list", "GET", "u8", "0"], WRONGTYPE),
        (["BITFIELD_RO", "k", "GET", "i8", "#0"], b"*1\r\n" + num(-56)),
        (["BITFIELD_RO", "k", "SET", "u8", "0", "1"], err("ERR BITFIELD_RO only supports the GET subcommand")),
    ])
    assert c3.cmd("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "102", "9") == b"*1\r\n" + NIL3


def test_lcs(c, c3):
    check(c, [
        (["MSET", "key1", "ohmytext", "key2", "mynewtext"], OK),
        (["LCS", "key1", "key2"], bulk("mytext")),
        (["LCS", "key1", "key2", "LEN"], num(6)),
        (["LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"],
         b"*4\r\n" + bulk("matches") + b"*1\r\n*3\r\n*2\r\n" + num(4) + num(7) + b"*2\r\n" + num(5) + num(8) + num(4)
         + bulk("len") + num(6)),
        (["LCS", "key1", "key2", "IDX", "LEN"],
         err("ERR If you want both the length and indexes, please just use IDX.")),
        (["LCS", "key1", "list"], err("ERR The specified keys must contain string values")),
        (["LCS", "key1", "key2", "MINMATCHLEN"], SYNTAX),
    ])
    assert c3.cmd("LCS", "key1", "key2", "IDX") == (
        b"%2\r\n" + bulk("matches") + b"*2\r\n"
        + b"*2\r\n*2\r\n" + num(4) + num(7) + b"*2\r\n" + num(5) + num(8)
        + b"*2\r\n*2\r\n" + num(2) + num(3) + b"*2\r\n" + num(0) + num(1)
        + bulk("len") + num(6)
    )
    assert c3.cmd("GET", "nokey") == NIL3
    assert c3.cmd("SET", "key1", "v", "XX", "GET") == bulk("ohmytext")


def collect(sub, n, timeout=5.0):
    got = []
    end = time.time() + timeout
    while len(got) < n and time.time() < end:
        m = sub.get_message(timeout=0.1)
        if m and m["type"] == "pmessage":
            got.append((m["channel"].split(":", 1)[1], m["data"]))
    return got


def test_keyspace_events(c, port):
    import redis

    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    sub = redis.Redis(port=port, decode_responses=True).pubsub()
    sub.psubscribe("__keyevent@0__:*")
    wait_until(lambda: int(c.cmd("PUBSUB", "NUMPAT")[1:-2]) >= 1)
    for args in [
        ["SET", "k", "v", "EX", "100"],
        ["SET", "k", "v", "NX"],  # no change: no event
        ["GETEX", "k", "PERSIST"],
        ["APPEND", "k", "x"],
        ["SETRANGE", "k", "0", "y"],
        ["INCR", "n"],
        ["INCRBYFLOAT", "n", "1.5"],
        ["SETBIT", "b", "0", "1"],
        ["SETBIT", "b", "0", "1"],  # unchanged bit: no event
        ["BITFIELD", "b", "SET", "u8", "0", "1"],
        ["BITOP", "OR", "d", "b"],
        ["GETDEL", "k"],
        ["MSET", "x", "1", "y", "2"],
    ]:
        c.cmd(*args)
    got = collect(sub, 14)
    sub.close()
    assert got == [
        ("set", "k"), ("expire", "k"),
        ("persist", "k"),
        ("append", "k"),
        ("setrange", "k"),
        ("incrby", "n"),
        ("incrbyfloat", "n"),
        ("setbit", "b"),
        ("setbit", "b"),
        ("set", "d"),
        ("del", "k"),
        ("set", "x"), ("set", "y"),
    ]


def test_watch(c, port):
    w = Raw(port)
    c.cmd("SET", "k", "v")
    w.cmd("WATCH", "k")
    c.cmd("SET", "k", "w", "NX")  # refused: the key did not change
    w.cmd("MULTI")
    w.cmd("GET", "k")
    assert w.cmd("EXEC") == b"*1\r\n" + bulk("v")
    w.cmd("WATCH", "k")
    c.cmd("INCRBYFLOAT", "f", "1")
    c.cmd("APPEND", "k", "!")
    w.cmd("MULTI")
    w.cmd("GET", "k")
    assert w.cmd("EXEC") == b"*-1\r\n"
    w.close()


@pytest.mark.skipif(bool(ORACLE), reason="ebb persistence")
def test_logged_forms_replay_from_aof(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = Raw(s.port)
    hour = 3_600_000
    for args in [
        ["SET", "a", "1", "PX", hour],
        ["SETEX", "b", "3600", "2"],
        ["SET", "c", "3", "GET"],
        ["SET", "d", "4"],
        ["GETEX", "d", "PX", hour],
        ["SET", "e", "5", "EX", "3600"],
        ["GETEX", "e", "PERSIST"],
        ["SET", "f", "0.1", "PX", hour],
        ["INCRBYFLOAT", "f", "0.2"],
        ["SET", "g", "x"],
        ["GETDEL", "g"],
        ["SET", "h", "x"],
        ["GETEX", "h", "PXAT", "1"],
        ["BITFIELD", "i", "SET", "u8", "0", "65"],
        ["SETRANGE", "j", "2", "z"],
    ]:
        c.cmd(*args)
    c.close()
    aof = b"".join(p.read_bytes() for p in tmp_path.rglob("*.aof*") if p.is_file())
    # Relative TTLs are logged as absolute deadlines, GET never reaches the log.
    assert b"PXAT" in aof and b"PEXPIREAT" in aof
    assert b"SETEX" not in aof and b"GETEX" not in aof and b"INCRBYFLOAT" not in aof
    s.kill()
    s.start()
    c = Raw(s.port)
    for key, value in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "5"), ("f", "0.3"), ("i", "A"), ("j", b"\x00\x00z")]:
        assert c.cmd("GET", key) == bulk(value), key
    for key in ["a", "b", "d", "f"]:
        ttl = int(c.cmd("PTTL", key)[1:-2])
        assert 0 < ttl <= hour, key
    assert c.cmd("PTTL", "e") == num(-1)
    assert c.cmd("EXISTS", "g") == num(0)
    assert c.cmd("EXISTS", "h") == num(0)
    c.close()
