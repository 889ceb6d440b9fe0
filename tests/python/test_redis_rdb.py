"""Redis's own RDB encoding read by ebb, checked against redis-server 7.0:

- a dump.rdb written by redis-server's SAVE (RDB version 10) holding every
  encoding Redis 7.0 writes (strings stored as integers, raw and LZF
  compressed; quicklists of listpacks, with plain and compressed nodes;
  intsets of each width and hash-table sets; listpack and skiplist sorted
  sets with special scores; listpack and hash-table hashes; TTLs; several
  databases; a function library) loads at start and through
  `DEBUG RELOAD NOSAVE`, and every key of every database reads back the
  same on both servers, TTLs (PEXPIRETIME) exactly; a key whose TTL passed
  after the save is not loaded;
- RESTORE of redis-server's DUMP payloads, with its options (TTL, ABSTTL,
  REPLACE, BUSYKEY), and its error texts for a wrong version, a wrong
  checksum and an undecodable body, each compared with what redis-server
  answers to the same bytes;
- payloads and a file in the RDB 9 encodings (ziplists, as Redis 6 writes
  them), built here byte by byte and accepted by redis-server first;
- mutated payloads (valid version and checksum, damaged body) never break
  the server: each gets OK or an error, and what loads can be read;
- a file holding a stream or a module value is refused at start.

The Redis CRC-64 (payload footer and file trailer) is computed here, and
checked against its check value and against redis-server's own output.
Skipped when redis-server is not installed.
"""

import random
import re
import struct
import subprocess
import time

import pytest

from conftest import BIN, EbbServer, Raw, raw_cmd, redis_beside, wait_until

VERSION_OR_CHECKSUM = b"-ERR DUMP payload version or checksum are wrong\r\n"
BAD_FORMAT = b"-ERR Bad data format\r\n"
OK = b"+OK\r\n"


# --- Redis's CRC-64 (Jones polynomial, reflected, init 0, no final xor) ---

def _crc64_table():
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 with its bits reversed
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc64_table()


def crc64(data, crc=0):
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def seal(body, version=10):
    """A DUMP payload: `body` (type byte and value), then the 2-byte RDB
    version and the CRC-64 of everything before it, both little-endian."""
    p = body + version.to_bytes(2, "little")
    return p + crc64(p).to_bytes(8, "little")


def rdb_file(body, version):
    """An RDB file: magic, `body` (opcodes and keys), EOF and checksum."""
    data = b"REDIS%04d" % version + body + b"\xff"
    return data + crc64(data).to_bytes(8, "little")


# --- RDB encoding pieces ---

def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + n.to_bytes(8, "big")


def rdb_str(b):
    return rdb_len(len(b)) + b


def lzf_compress(data):
    """A valid LZF stream for `data`: literal runs, and runs of a repeated
    byte as back references at distance 1 (enough for a loader to have to
    decompress it)."""
    out, lit, i = bytearray(), bytearray(), 0

    def flush():
        while lit:
            chunk = lit[:32]
            out.append(len(chunk) - 1)
            out.extend(chunk)
            del lit[:32]

    while i < len(data):
        if i and data[i] == data[i - 1]:
            n = 1
            while i + n < len(data) and data[i + n] == data[i - 1] and n < 264:
                n += 1
            if n >= 3:
                flush()
                ln = n - 2
                if ln < 7:
                    out.append(ln << 5)
                else:
                    out.extend([7 << 5, ln - 7])
                out.append(0)  # distance 1
                i += n
                continue
        lit.append(data[i])
        i += 1
    flush()
    return bytes(out)


def lzf_decompress(data, ulen):
    out, i = bytearray(), 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
        else:
            n = ctrl >> 5
            if n == 7:
                n += data[i]
                i += 1
            ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
            i += 1
            for _ in range(n + 2):
                out.append(out[ref])
                ref += 1
    assert len(out) == ulen
    return bytes(out)


def rdb_lzf_str(b):
    """`b` as an LZF-compressed RDB string."""
    c = lzf_compress(b)
    return b"\xc3" + rdb_len(len(c)) + rdb_len(len(b)) + c


def read_len(buf, pos):
    """An RDB length at `pos`: (value, next position, is a special encoding)."""
    b = buf[pos]
    if b >> 6 == 0:
        return b & 0x3F, pos + 1, False
    if b >> 6 == 1:
        return (b & 0x3F) << 8 | buf[pos + 1], pos + 2, False
    if b == 0x80:
        return int.from_bytes(buf[pos + 1:pos + 5], "big"), pos + 5, False
    if b == 0x81:
        return int.from_bytes(buf[pos + 1:pos + 9], "big"), pos + 9, False
    return b & 0x3F, pos + 1, True


def read_str(buf, pos):
    """An RDB string at `pos` (raw, integer or LZF): (bytes, next position)."""
    n, pos, special = read_len(buf, pos)
    if not special:
        return bytes(buf[pos:pos + n]), pos + n
    if n in (0, 1, 2):
        width = 1 << n
        v = int.from_bytes(buf[pos:pos + width], "little", signed=True)
        return str(v).encode(), pos + width
    assert n == 3, f"unknown string encoding {n}"
    clen, pos, _ = read_len(buf, pos)
    ulen, pos, _ = read_len(buf, pos)
    return lzf_decompress(buf[pos:pos + clen], ulen), pos + clen


def quicklist_containers(payload):
    """The container kinds (1 plain, 2 packed) of a quicklist payload's nodes."""
    assert payload[0] == 18
    nodes, pos, _ = read_len(payload, 1)
    kinds = []
    for _ in range(nodes):
        kind, pos, _ = read_len(payload, pos)
        kinds.append(kind)
        _, pos = read_str(payload, pos)
    return kinds


def ziplist(items):
    """A ziplist (Redis 6's packed encoding) of `items` (bytes or ints)."""
    entries, prev = [], 0
    for v in items:
        head = bytes([prev]) if prev < 254 else b"\xfe" + prev.to_bytes(4, "little")
        if isinstance(v, int):
            if 0 <= v <= 12:
                enc = bytes([0xF1 + v])
            elif -128 <= v < 128:
                enc = b"\xfe" + v.to_bytes(1, "little", signed=True)
            elif -(1 << 15) <= v < 1 << 15:
                enc = b"\xc0" + v.to_bytes(2, "little", signed=True)
            elif -(1 << 23) <= v < 1 << 23:
                enc = b"\xf0" + v.to_bytes(3, "little", signed=True)
            elif -(1 << 31) <= v < 1 << 31:
                enc = b"\xd0" + v.to_bytes(4, "little", signed=True)
            else:
                enc = b"\xe0" + v.to_bytes(8, "little", signed=True)
        else:
            n = len(v)
            if n < 64:
                enc = bytes([n]) + v
            elif n < 16384:
                enc = bytes([0x40 | n >> 8, n & 0xFF]) + v
            else:
                enc = b"\x80" + n.to_bytes(4, "big") + v
        entries.append(head + enc)
        prev = len(head + enc)
    body = b"".join(entries)
    tail = 10 + len(body) - (len(entries[-1]) if entries else 0)
    total = 10 + len(body) + 1
    return (total.to_bytes(4, "little") + tail.to_bytes(4, "little")
            + min(len(entries), 0xFFFF).to_bytes(2, "little") + body + b"\xff")


def intset(values, width):
    return (width.to_bytes(4, "little") + len(values).to_bytes(4, "little")
            + b"".join(v.to_bytes(width, "little", signed=True) for v in sorted(values)))


# --- reading a whole keyspace ---

def value(c, key):
    """A key's type and full content, comparable across servers."""
    kind = c.type(key)
    if kind == b"string":
        return kind, c.get(key)
    if kind == b"list":
        return kind, c.lrange(key, 0, -1)
    if kind == b"set":
        return kind, sorted(c.smembers(key))
    if kind == b"zset":
        # The reply's exact bytes: scores formatted as Redis formats them.
        return kind, raw_cmd(c, "ZRANGE", key, 0, -1, "WITHSCORES")
    if kind == b"hash":
        flat = raw_cmd(c, "HGETALL", key)
        return kind, dict(zip(flat[::2], flat[1::2]))
    return kind, None


def keyspace(server, dbs=range(16)):
    """{(db, key): (type, content, PEXPIRETIME)} for every key."""
    out = {}
    for db in dbs:
        c = server.client(db=db, protocol=2, decode_responses=False)
        try:
            for k in c.keys("*"):
                out[(db, k)] = value(c, k) + (c.execute_command("PEXPIRETIME", k),)
        finally:
            c.close()
    return out


def assert_same_keyspace(got, want):
    assert sorted(got) == sorted(want)
    for k in sorted(want):
        assert got[k] == want[k], f"key {k} differs"


def ebb_on_file(directory, data):
    """An ebb-server started on `data` as its snapshot file."""
    directory.mkdir(exist_ok=True)
    (directory / "dump.rdb").write_bytes(data)
    return EbbServer("--dir", str(directory), "--dbfilename", "dump.rdb",
                     cwd=str(directory))


def cmd(server, *args):
    """One command on a fresh raw connection: its reply's exact bytes."""
    c = Raw(server.port, timeout=10)
    try:
        return c.cmd(*args)
    finally:
        c.close()


# --- the Redis dataset ---

FAR = int(time.time() * 1000) + 3 * 86_400_000 + 777
SPECIAL_SCORES = ["1", "0.1", "1e-300", "-2.5", "inf", "-inf",
                  "1.7976931348623157e308", "0", "-0", "5000000000", "-3",
                  "2.5e-5", "123456789.125"]
LIBRARY = ("#!lua name=mylib\n"
           "redis.register_function('myfunc', function(keys, args) return args[1] end)")

# (db, key, OBJECT ENCODING, what its DUMP payload starts with)
ENCODINGS = [
    (0, "str:short", b"embstr", b"\x00\x05hello"),
    (0, "str:int", b"int", b"\x00\xc1"),            # 16-bit integer
    (0, "str:neg", b"int", b"\x00\xc0"),            # 8-bit integer
    (0, "str:int32", b"int", b"\x00\xc2"),          # 32-bit integer
    (0, "str:big", b"int", b"\x00\x0a5000000000"),  # past 32 bits: raw
    (0, "str:huge", b"int", b"\x00\x139223372036854775807"),
    (0, "str:notint", b"embstr", b"\x00\x03007"),
    (0, "str:lzf", b"raw", b"\x00\xc3"),
    (0, "str:lzf2", b"raw", b"\x00\xc3"),
    (0, "str:random", b"raw", b"\x00\x80"),         # 32-bit length, raw
    (0, "str:binary", b"embstr", b"\x00\x07a\r\nb\x00c\xff"),
    (0, "str:empty", b"embstr", b"\x00\x00"),
    (0, "list:small", b"quicklist", b"\x12\x01\x02"),  # one packed node
    (0, "list:big", b"quicklist", b"\x12"),
    (0, "list:compressed", b"quicklist", b"\x12"),
    (0, "list:plain", b"quicklist", b"\x12"),
    (0, "set:int16", b"intset", b"\x0b"),
    (0, "set:int32", b"intset", b"\x0b"),
    (0, "set:int64", b"intset", b"\x0b"),
    (0, "set:strings", b"hashtable", b"\x02"),
    (0, "set:ints-table", b"hashtable", b"\x02"),
    (0, "set:binary", b"hashtable", b"\x02"),
    (0, "zset:lp", b"listpack", b"\x11"),
    (0, "zset:skip", b"skiplist", b"\x05"),
    (0, "zset:longmember", b"skiplist", b"\x05"),
    (0, "hash:lp", b"listpack", b"\x10"),
    (0, "hash:table", b"hashtable", b"\x04"),
    (0, "hash:longval", b"hashtable", b"\x04"),
    (0, "hash:forced", b"hashtable", b"\x04"),
    (0, "ttl:seconds", b"embstr", b"\x00"),
    (0, "ttl:string", b"embstr", b"\x00"),
    (0, "ttl:list", b"quicklist", b"\x12"),
    (0, "ttl:hash", b"listpack", b"\x10"),
    (0, "ttl:zset", b"listpack", b"\x11"),
    (0, "ttl:set", b"intset", b"\x0b"),
    (3, "db3:str", b"embstr", b"\x00"),
    (3, "db3:hash", b"listpack", b"\x10"),
    (3, "db3:list", b"quicklist", b"\x12"),
    (15, "db15:set", b"hashtable", b"\x02"),
    (15, "db15:zset", b"skiplist", b"\x05"),
    (15, "db15:str", b"int", b"\x00"),
]


def set_limits(c):
    """Redis 7.0's compiled-in encoding limits (a packaged redis-server may
    start with others)."""
    for name, v in [("hash-max-listpack-entries", 128), ("hash-max-listpack-value", 64),
                    ("zset-max-listpack-entries", 128), ("zset-max-listpack-value", 64),
                    ("set-max-intset-entries", 512), ("list-max-listpack-size", -2),
                    ("list-compress-depth", 0), ("rdbcompression", "yes")]:
        c.config_set(name, v)


def build_dataset(server):
    rng = random.Random(7)
    r = server.client(protocol=2, decode_responses=False)
    r3 = server.client(db=3, protocol=2, decode_responses=False)
    r15 = server.client(db=15, protocol=2, decode_responses=False)
    set_limits(r)

    r.set("str:short", "hello")
    r.set("str:int", "12345")
    r.set("str:neg", "-7")
    r.set("str:int32", "-2147483648")
    r.set("str:big", "5000000000")
    r.set("str:huge", "9223372036854775807")
    r.set("str:notint", "007")
    r.set("str:lzf", "a" * 500)
    r.set("str:lzf2", "abcdefgh" * 2000)
    r.set("str:random", rng.randbytes(70000))
    r.set("str:binary", b"a\r\nb\x00c\xff")
    r.set("str:empty", "")

    r.rpush("list:small", "a", "1", "-1", "300", "70000", "5000000000",
            "x" * 70, "", "3.14", b"\x00\r\n")
    r.config_set("list-max-listpack-size", 128)
    items = []
    for i in range(4000):
        items.append([str(i), str(-i * 1000003), f"s{i}", "L" * (60 + i % 200),
                      str(2**40 + i)][i % 5])
    p = r.pipeline(transaction=False)
    for i in range(0, len(items), 500):
        p.rpush("list:big", *items[i:i + 500])
    p.execute()
    r.config_set("list-compress-depth", 1)
    r.config_set("list-max-listpack-size", 16)
    r.rpush("list:compressed", *[f"item-{i:05d}-" + "abc" * 10 for i in range(200)])
    r.config_set("list-compress-depth", 0)
    r.config_set("list-max-listpack-size", -2)
    r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 100)
    r.rpush("list:plain", "a", "x" * 200, "b", "c", "y" * 300, "7")
    r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 1 << 30)

    r.sadd("set:int16", 1, 2, 3, -4, 100)
    r.sadd("set:int32", 70000, -70000, 1)
    r.sadd("set:int64", 1, 70000, 5000000000, -5000000000, *range(-200, 200))
    r.sadd("set:strings", "a", "b", "hello", "x" * 100, "1")
    r.config_set("set-max-intset-entries", 16)
    r.sadd("set:ints-table", *range(100))
    r.config_set("set-max-intset-entries", 512)
    r.sadd("set:binary", b"\x00", b"\r\n", b"\xff\xfe", b"")

    pairs = []
    for i, s in enumerate(SPECIAL_SCORES):
        pairs += [s, f"m{i}"]
    r.execute_command("ZADD", "zset:lp", *pairs)
    more = []
    for i in range(200):
        more += [repr(i / 7), f"n{i}"]
    r.execute_command("ZADD", "zset:skip", *pairs, *more)
    r.execute_command("ZADD", "zset:longmember", 1, "m" * 100, 2, "short", 2, "also")

    r.hset("hash:lp", mapping={"f": "v", "1": "2", "-3": "5000000000", "empty": "",
                               b"bin\x00": b"\r\n", "neg": "-7", "float": "3.14"})
    r.hset("hash:table", mapping={f"f{i}": (i if i % 2 else "v" * (i % 50))
                                  for i in range(300)})
    r.hset("hash:longval", mapping={"f": "v" * 100, "g": "1"})
    r.config_set("hash-max-listpack-entries", 4)
    r.hset("hash:forced", mapping={f"k{i}": i for i in range(6)})
    r.config_set("hash-max-listpack-entries", 128)

    r.set("ttl:seconds", "s")
    r.expire("ttl:seconds", 100_000)
    r.set("ttl:string", "v")
    r.rpush("ttl:list", "a", "b")
    r.hset("ttl:hash", "f", "v")
    r.zadd("ttl:zset", {"a": 1})
    r.sadd("ttl:set", 1, 2)
    for k in ("ttl:string", "ttl:list", "ttl:hash", "ttl:zset", "ttl:set"):
        r.pexpireat(k, FAR)

    r3.set("db3:str", "three")
    r3.hset("db3:hash", mapping={"a": "1", "b": "2"})
    r3.pexpireat("db3:hash", FAR + 1)
    r3.rpush("db3:list", *range(10))
    r15.sadd("db15:set", "x", "y", "z")
    r15.execute_command("ZADD", "db15:zset", *pairs, *more)
    r15.set("db15:str", "15")
    r15.pexpireat("db15:str", FAR + 2)

    r.execute_command("FUNCTION", "LOAD", LIBRARY)

    # Saved while its TTL still runs; gone by the time anything reads the file.
    r.set("gone:soon", "x")
    r.pexpire("gone:soon", 300)
    r.save()
    for c in (r, r3, r15):
        c.close()


class RedisData:
    def __init__(self, server, rdb):
        self.server = server
        self.rdb = rdb

    def client(self, db=0):
        return self.server.client(db=db, protocol=2, decode_responses=False)

    def dump(self, key, db=0):
        c = self.client(db)
        try:
            return c.dump(key)
        finally:
            c.close()


@pytest.fixture(scope="module")
def redis_data(tmp_path_factory):
    """A redis-server holding the dataset, and the dump.rdb it saved."""
    server = redis_beside(tmp_path_factory, "redis-rdb")
    try:
        build_dataset(server)
        with open(f"{server.cwd}/dump.rdb", "rb") as f:
            rdb = f.read()
        assert b"gone:soon" in rdb
        c = server.client()
        wait_until(lambda: c.pttl("gone:soon") == -2)
        c.close()
        yield RedisData(server, rdb)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def ebb_loaded(redis_data, tmp_path_factory):
    """An ebb-server started on the Redis dump.rdb."""
    s = ebb_on_file(tmp_path_factory.mktemp("ebb-rdb"), redis_data.rdb)
    yield s
    s.stop()


@pytest.fixture
def fresh_ebb(tmp_path):
    s = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    yield s
    s.stop()


def both_servers(tmp_path_factory, start_ebb, *redis_extra):
    """A fresh redis-server (with `redis_extra`) and the ebb-server
    `start_ebb()` starts, stopped after the test."""
    red = redis_beside(tmp_path_factory, "pair-redis", *redis_extra)
    try:
        ebb = start_ebb()
    except Exception:
        red.stop()
        raise
    yield ebb, red
    ebb.stop()
    red.stop()


@pytest.fixture
def pair(tmp_path_factory):
    """A fresh ebb-server and a fresh redis-server."""
    d = tmp_path_factory.mktemp("pair-ebb")
    yield from both_servers(tmp_path_factory, lambda: EbbServer("--dir", str(d), cwd=str(d)))


# --- the checksum ---

def test_crc64_check_value():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    assert crc64(b"") == 0
    # Incremental use gives the same as one pass.
    assert crc64(b"6789", crc64(b"12345")) == 0xE9C6D914C4B8D9CA


def test_crc64_matches_redis_payloads_and_file(redis_data):
    c = redis_data.client()
    for _, key, _, _ in [e for e in ENCODINGS if e[0] == 0]:
        p = c.dump(key)
        assert p[-10:-8] == b"\x0a\x00", key  # RDB version 10
        assert p[-8:] == crc64(p[:-8]).to_bytes(8, "little"), key
        assert seal(p[:-10]) == p
    c.close()
    rdb = redis_data.rdb
    assert rdb.startswith(b"REDIS0010")
    assert rdb[-9] == 0xFF  # EOF, then the checksum of all before it
    assert rdb[-8:] == crc64(rdb[:-8]).to_bytes(8, "little")


def test_lzf_and_ziplist_builders_are_what_redis_reads(tmp_path_factory):
    red = redis_beside(tmp_path_factory, "redis-builders")
    try:
        check_builders(red)
    finally:
        red.stop()


def check_builders(red):
    data = b"abc" + b"z" * 1000 + bytes(range(100)) + b"q" * 40
    assert lzf_decompress(lzf_compress(data), len(data)) == data
    assert cmd(red, "RESTORE", "s", 0, seal(b"\x00" + rdb_lzf_str(data))) == OK
    c = red.client(protocol=2, decode_responses=False)
    assert c.get("s") == data
    zl = ziplist([b"a", 5, -100, 1000, 70000, 1 << 40, b"x" * 300, b"b"])
    assert cmd(red, "RESTORE", "l", 0, seal(b"\x0e\x01" + rdb_str(zl), 9)) == OK
    assert c.lrange("l", 0, -1) == [b"a", b"5", b"-100", b"1000", b"70000",
                                    str(1 << 40).encode(), b"x" * 300, b"b"]
    c.close()


# --- the Redis dataset and its file ---

def test_the_redis_dataset_has_every_encoding(redis_data):
    """Checks the dataset itself: each key has the encoding it is there
    for, on redis-server and in its DUMP payload."""
    for db, key, encoding, prefix in ENCODINGS:
        c = redis_data.client(db)
        assert c.object("encoding", key) == encoding, key
        p = c.dump(key)
        assert p.startswith(prefix), key
        c.close()
    c = redis_data.client()

    def debug(key):
        return raw_cmd(c, "DEBUG", "OBJECT", key)

    def field(key, name):
        return int(re.search(rb"%s:(\d+)" % name.encode(), debug(key)).group(1))

    assert field("list:small", "ql_nodes") == 1
    assert field("list:big", "ql_nodes") > 10
    assert field("list:compressed", "ql_nodes") >= 3
    assert field("list:compressed", "ql_compressed") == 1
    kinds = quicklist_containers(c.dump("list:plain"))
    assert 1 in kinds and 2 in kinds  # plain and packed nodes
    assert set(quicklist_containers(c.dump("list:big"))) == {2}
    for key, width in [("set:int16", 2), ("set:int32", 4), ("set:int64", 8)]:
        blob, _ = read_str(c.dump(key), 1)
        assert int.from_bytes(blob[:4], "little") == width, key
    assert c.pexpiretime("ttl:string") == FAR
    assert c.execute_command("FCALL", "myfunc", 0, "hi") == b"hi"
    c.close()


def test_a_redis_snapshot_loads_at_start(redis_data, ebb_loaded):
    want = keyspace(redis_data.server)
    assert {db for db, _ in want} == {0, 3, 15}
    assert_same_keyspace(keyspace(ebb_loaded), want)


def test_ttls_in_the_file_are_kept_exactly(redis_data, ebb_loaded):
    e = ebb_loaded.client(protocol=2, decode_responses=False)
    for key in ("ttl:string", "ttl:list", "ttl:hash", "ttl:zset", "ttl:set"):
        assert e.execute_command("PEXPIRETIME", key) == FAR, key
    red = redis_data.client()
    assert (e.execute_command("PEXPIRETIME", "ttl:seconds")
            == red.execute_command("PEXPIRETIME", "ttl:seconds") > 0)
    assert 99_000_000 < e.pttl("ttl:seconds") <= 100_000_000
    assert e.execute_command("PEXPIRETIME", "str:short") == -1
    red.close()
    e.close()


def test_a_key_whose_ttl_passed_is_not_loaded(redis_data, ebb_loaded):
    assert b"gone:soon" in redis_data.rdb
    e = ebb_loaded.client(protocol=2, decode_responses=False)
    assert e.exists("gone:soon") == 0
    assert e.exists("str:short", "ttl:string") == 2
    red = redis_data.client()
    assert e.dbsize() == red.dbsize()
    red.close()
    e.close()


def test_the_function_library_in_the_file_is_loaded(redis_data, ebb_loaded):
    e = ebb_loaded.client(protocol=2, decode_responses=False)
    assert e.execute_command("FCALL", "myfunc", 0, "hello") == b"hello"
    libs = raw_cmd(e, "FUNCTION", "LIST", "WITHCODE")
    flat = dict(zip(libs[0][::2], libs[0][1::2]))
    assert flat[b"library_name"] == b"mylib"
    assert flat[b"library_code"] == LIBRARY.encode()
    e.close()


def test_debug_reload_nosave_loads_a_redis_file(redis_data, tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--dbfilename", "dump.rdb", cwd=str(tmp_path))
    try:
        e = s.client(protocol=2, decode_responses=False)
        e.set("stale", "1")
        e5 = s.client(db=5, protocol=2, decode_responses=False)
        e5.set("stale", "5")
        e5.close()
        (tmp_path / "dump.rdb").write_bytes(redis_data.rdb)
        assert cmd(s, "DEBUG", "RELOAD", "NOSAVE") == OK
        assert_same_keyspace(keyspace(s), keyspace(redis_data.server))
        assert e.execute_command("FCALL", "myfunc", 0, "ok") == b"ok"
        e.close()
    finally:
        s.stop()


# --- RESTORE of redis-server's payloads ---

def test_restore_of_every_redis_payload(redis_data, fresh_ebb):
    red = redis_data.client()
    e = fresh_ebb.client(protocol=2, decode_responses=False)
    for _, key, _, _ in [x for x in ENCODINGS if x[0] == 0]:
        payload = red.dump(key)
        assert cmd(fresh_ebb, "RESTORE", key, 0, payload) == OK, key
        assert value(e, key) == value(red, key), key
        assert e.execute_command("PEXPIRETIME", key) == -1, key
        # ebb's DUMP of it is a Redis payload again, and restores the same
        # value on ebb.
        own = e.dump(key)
        assert not own.startswith(b"EBBDUMP1")
        assert cmd(fresh_ebb, "RESTORE", "copy", 0, own, "REPLACE") == OK
        assert value(e, "copy") == value(red, key), key
    red.close()
    e.close()


def test_ebb_dumps_are_payloads_redis_restores(redis_data, pair):
    """ebb's DUMP of a value Redis can hold (no member deadline) is Redis's
    payload form, version 9 with a good CRC-64: redis-server RESTOREs it
    to the very value, so MIGRATE from ebb to Redis works. A value with a
    member deadline keeps ebb's own form, which Redis refuses."""
    ebb, red = pair
    src = redis_data.client()
    e = ebb.client(protocol=2, decode_responses=False)
    r = red.client(protocol=2, decode_responses=False)
    for _, key, _, _ in [x for x in ENCODINGS if x[0] == 0]:
        assert cmd(ebb, "RESTORE", key, 0, src.dump(key)) == OK, key
        own = e.dump(key)
        assert own[-10:-8] == b"\x09\x00", key
        assert crc64(own[:-8]) == int.from_bytes(own[-8:], "little"), key
        assert cmd(red, "RESTORE", key, 0, own) == OK, key
        assert value(r, key) == value(src, key), key
    e.execute_command("SADDEX", "ttl", 1000, "m")
    own = e.dump("ttl")
    assert own.startswith(b"EBBDUMP1")
    assert cmd(red, "RESTORE", "ttl", 0, own) == VERSION_OR_CHECKSUM
    # Once the member deadline is gone, so is the reason for ebb's form.
    e.execute_command("SPERSIST", "ttl", "MEMBERS", 1, "m")
    assert cmd(red, "RESTORE", "ttl", 0, e.dump("ttl")) == OK
    assert r.smembers("ttl") == {b"m"}
    for c in (src, e, r):
        c.close()


def test_restore_options_match_redis(redis_data, pair):
    ebb, red = pair
    p = redis_data.dump("hash:lp")
    s = redis_data.dump("str:lzf")

    def both(*args):
        got, want = cmd(ebb, *args), cmd(red, *args)
        assert got == want, args[:2]
        return want

    assert both("RESTORE", "k", 0, p) == OK
    assert both("RESTORE", "k", 0, p) == b"-BUSYKEY Target key name already exists.\r\n"
    assert both("RESTORE", "k", 0, s, "IDLETIME", 10) == \
        b"-BUSYKEY Target key name already exists.\r\n"
    both("SET", "other", "x")
    assert both("RESTORE", "other", 0, p, "REPLACE") == OK
    assert both("TYPE", "other") == b"+hash\r\n"
    assert both("RESTORE", "k", 0, s, "REPLACE") == OK
    assert both("GET", "k").endswith(b"a" * 500 + b"\r\n")

    assert both("RESTORE", "t", 5000, s) == OK
    for srv in (ebb, red):
        assert 4000 < int(cmd(srv, "PTTL", "t")[1:]) <= 5000
    at = int(time.time() * 1000) + 3_600_123
    assert both("RESTORE", "a", at, p, "ABSTTL") == OK
    assert both("PEXPIRETIME", "a") == b":%d\r\n" % at
    # Already past: nothing is created, and REPLACE removes the old key.
    assert both("RESTORE", "past", 1, p, "ABSTTL") == OK
    assert both("EXISTS", "past") == b":0\r\n"
    assert both("RESTORE", "k", 1, p, "ABSTTL", "REPLACE") == OK
    assert both("EXISTS", "k") == b":0\r\n"
    assert both("RESTORE", "i", 0, p, "IDLETIME", 1000, "FREQ", 5) == b"-ERR syntax error\r\n"
    assert both("RESTORE", "i", 0, p, "IDLETIME", 1000) == OK
    assert both("DBSIZE") == b":4\r\n"


def test_restore_error_texts_match_redis(redis_data, pair):
    """Each payload gets the reply redis-server gives it, byte for byte."""
    ebb, red = pair
    good = redis_data.dump("hash:lp")
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x10
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    cases = [
        ("version 11", seal(good[:-10], 11), VERSION_OR_CHECKSUM),
        ("version 65535", seal(good[:-10], 0xFFFF), VERSION_OR_CHECKSUM),
        ("flipped body byte", bytes(flipped), VERSION_OR_CHECKSUM),
        ("flipped checksum byte", bytes(bad_crc), VERSION_OR_CHECKSUM),
        ("one byte", b"\x00", VERSION_OR_CHECKSUM),
        ("empty", b"", VERSION_OR_CHECKSUM),
        ("nine bytes", good[-9:], VERSION_OR_CHECKSUM),
        ("string running past the end", seal(b"\x00" + rdb_len(1000) + b"abc"), BAD_FORMAT),
        ("unknown type 200", seal(b"\xc8\x03abc"), BAD_FORMAT),
        ("type byte only", seal(b"\x04"), BAD_FORMAT),
        ("empty set", seal(b"\x02\x00"), BAD_FORMAT),
        ("empty hash", seal(b"\x04\x00"), BAD_FORMAT),
        ("intset of width 3", seal(b"\x0b" + rdb_str(b"\x03\x00\x00\x00\x01\x00\x00\x00abc")),
         BAD_FORMAT),
        ("set member past the end", seal(b"\x02\x02" + rdb_str(b"a") + rdb_len(5000)),
         BAD_FORMAT),
        ("LZF shorter than its length", seal(b"\x00\xc3" + rdb_len(6) + rdb_len(100)
                                             + b"\x01ab\x01cd"), BAD_FORMAT),
        ("version 9 string", seal(b"\x00\x05hello", 9), OK),
        ("version 10 string", seal(b"\x00\x05hello", 10), OK),
    ]
    for name, payload, expected in cases:
        want = cmd(red, "RESTORE", "k", 0, payload, "REPLACE")
        assert want == expected, f"redis-server on {name}: {want!r}"
        got = cmd(ebb, "RESTORE", "k", 0, payload, "REPLACE")
        assert got == want, name
        assert cmd(ebb, "TYPE", "k") == cmd(red, "TYPE", "k"), name
    assert cmd(ebb, "PING") == b"+PONG\r\n"


# --- the RDB 9 encodings (Redis 6) ---

ZSET_ZL = [b"d", b"-inf", b"e", b"0.1", b"a", b"1.5", b"b", 2, b"g", 2,
           b"f", 5000000000, b"c", b"inf"]
HASH_ZL = [b"f", b"v", b"1", 2, b"n", -5000000000, b"long", b"q" * 300,
           b"empty", b"", b"i24", 1 << 20, b"i8", -100]


def old_payload_bodies():
    """(key, body) in the encodings Redis 6 writes, RDB 9."""
    node1 = ziplist([b"a", 1, -1, 300, 70000, 5000000000, b"x" * 70, b"", 12, 13,
                     -200, (1 << 23) - 1, -(1 << 31), b"3.14"])
    node2 = ziplist([b"y" * 300, b"z", b"w" * 20000])
    node3 = ziplist([f"e{i}".encode() for i in range(50)])
    big_zset = []
    for i in range(150):
        big_zset += [f"m{i:03d}".encode(), i]
    big_hash = []
    for i in range(200):
        big_hash += [f"h{i}".encode(), i * 3]
    return [
        ("old:list", b"\x0e\x03" + rdb_str(node1) + rdb_lzf_str(node2) + rdb_str(node3)),
        ("old:zset", b"\x0c" + rdb_str(ziplist(ZSET_ZL))),
        ("old:zset-big", b"\x0c" + rdb_lzf_str(ziplist(big_zset))),  # over 128: a skiplist
        ("old:hash", b"\x0d" + rdb_str(ziplist(HASH_ZL))),
        ("old:hash-big", b"\x0d" + rdb_lzf_str(ziplist(big_hash))),
        ("old:intset", b"\x0b" + rdb_str(intset([1, -2, 70000], 4))),
        ("old:set", b"\x02\x03" + rdb_str(b"a") + b"\xc0\x07" + rdb_str(b"b" * 100)),
        ("old:zset2", b"\x05\x03" + rdb_str(b"p") + struct.pack("<d", 1.5)
         + rdb_str(b"q") + struct.pack("<d", float("-inf"))
         + rdb_str(b"r") + struct.pack("<d", 1e-300)),
        ("old:hashtable", b"\x04\x02" + rdb_str(b"f") + rdb_lzf_str(b"v" * 200)
         + b"\xc1\x39\x30" + b"\xc2\x00\x00\x00\x80"),
        ("old:int8", b"\x00\xc0\xf9"),
        ("old:int16", b"\x00\xc1\x39\x30"),
        ("old:int32", b"\x00\xc2\x00\x00\x00\x80"),
        ("old:lzf", b"\x00" + rdb_lzf_str(b"k" * 1000)),
    ]


def test_rdb9_ziplist_payloads_restore_like_redis(pair):
    ebb, red = pair
    e = ebb.client(protocol=2, decode_responses=False)
    r = red.client(protocol=2, decode_responses=False)
    set_limits(r)
    for key, body in old_payload_bodies():
        payload = seal(body, 9)
        assert cmd(red, "RESTORE", key, 0, payload) == OK, key
        assert cmd(ebb, "RESTORE", key, 0, payload) == OK, key
        assert value(e, key) == value(r, key), key
    # Sanity of the builders: the contents are what was meant.
    assert r.zrange("old:zset", 0, -1) == [b"d", b"e", b"a", b"b", b"g", b"f", b"c"]
    assert r.hget("old:hash", "n") == b"-5000000000"
    assert r.object("encoding", "old:zset-big") == b"skiplist"
    assert r.object("encoding", "old:hash-big") == b"hashtable"
    e.close()
    r.close()


def test_an_rdb9_file_loads_like_redis(tmp_path_factory):
    """A file as Redis 6 writes it (aux fields, RESIZEDB, millisecond
    expiries, LRU and LFU opcodes, ziplists, LZF): redis-server loads it
    with DEBUG RELOAD NOSAVE, ebb at start, and both hold the same keys."""
    now = int(time.time() * 1000)
    aux = b"".join(b"\xfa" + rdb_str(k) + v for k, v in [
        (b"redis-ver", rdb_str(b"6.2.14")), (b"redis-bits", b"\xc0\x40"),
        (b"ctime", b"\xc2" + (now // 1000).to_bytes(4, "little")),
        (b"used-mem", b"\xc2\x00\x00\x10\x00"), (b"aof-preamble", b"\xc0\x00")])
    body = aux + b"\xfe\x00\xfb" + rdb_len(20) + rdb_len(2)
    for key, kv in old_payload_bodies():
        body += kv[:1] + rdb_str(key.encode()) + kv[1:]

    def expires(ms):
        return b"\xfc" + ms.to_bytes(8, "little")

    def string(key):
        return b"\x00" + rdb_str(key) + rdb_str(b"v")

    body += expires(now + 7_200_000) + string(b"ttl:ahead")
    body += expires(now - 1000) + string(b"ttl:past")  # not loaded
    body += b"\xf8" + rdb_len(1000) + string(b"idle")  # LRU idle time
    body += b"\xf9\x07" + string(b"freq")  # LFU counter
    body += b"\xfe\x02\xfb\x01\x01"
    body += expires(now + 9_000_000) + b"\x0d" + rdb_str(b"db2:hash") + rdb_str(ziplist([b"a", 1]))
    data = rdb_file(body, 9)

    red = redis_beside(tmp_path_factory, "redis-rdb9")
    try:
        with open(f"{red.cwd}/dump.rdb", "wb") as f:
            f.write(data)
        c = red.client()
        set_limits(c)
        c.close()
        assert cmd(red, "DEBUG", "RELOAD", "NOSAVE") == OK
        want = keyspace(red)
        assert (0, b"ttl:past") not in want and (0, b"ttl:ahead") in want
        assert want[(2, b"db2:hash")][2] == now + 9_000_000
        assert len(want) == len(old_payload_bodies()) + 4
        s = ebb_on_file(tmp_path_factory.mktemp("ebb-rdb9"), data)
        try:
            assert_same_keyspace(keyspace(s), want)
        finally:
            s.stop()
    finally:
        red.stop()


# --- robustness ---

def mutate(rng, body):
    b = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randrange(len(b)) if b else 0
        if op < 0.35 and b:
            b[pos] ^= 1 << rng.randrange(8)
        elif op < 0.55 and b:
            b[pos] = rng.randrange(256)
        elif op < 0.75:
            b[pos:pos] = bytes([rng.randrange(256)])
        elif op < 0.9 and b:
            del b[pos]
        else:
            del b[rng.randrange(len(b) + 1):]
    return bytes(b)


READERS = {
    b"+string\r\n": ("GET",),
    b"+list\r\n": ("LRANGE", 0, -1),
    b"+set\r\n": ("SMEMBERS",),
    b"+zset\r\n": ("ZRANGE", 0, -1, "WITHSCORES"),
    b"+hash\r\n": ("HGETALL",),
}


def test_mutated_payloads_never_break_the_server(tmp_path_factory):
    """Damaged bodies under a valid version and checksum: each RESTORE gets
    OK or an error, what loads can be read whole, and the server lives."""
    red = redis_beside(tmp_path_factory, "redis-sources")
    try:
        r = red.client(protocol=2, decode_responses=False)
        r.hset("h", mapping={f"f{i}": (i if i % 2 else f"v{i}") for i in range(20)})
        r.execute_command("ZADD", "z", *[x for i in range(20) for x in (i / 3, f"m{i}")])
        r.rpush("l", *[(i if i % 2 else "s" * (i % 40)) for i in range(100)])
        r.sadd("i", *range(-20, 40), 70000)
        r.set("s", "abcdefghij" * 60)
        sources = {k: r.dump(k) for k in ("h", "z", "l", "i", "s")}
        r.close()
    finally:
        red.stop()
    assert [p[0] for p in sources.values()] == [16, 17, 18, 11, 0]
    d = tmp_path_factory.mktemp("ebb-mutated")
    s = EbbServer("--dir", str(d), cwd=str(d))
    conn = Raw(s.port, timeout=10)
    rng = random.Random(2024)
    seen = {}
    try:
        for name, payload in sources.items():
            for i in range(200):
                p = seal(mutate(rng, payload[:-10]))
                reply = conn.cmd("RESTORE", "k", 0, p, "REPLACE")
                assert reply in (OK, BAD_FORMAT, VERSION_OR_CHECKSUM), (name, i, reply)
                seen[reply] = seen.get(reply, 0) + 1
                if reply == OK:
                    kind = conn.cmd("TYPE", "k")
                    if kind in READERS:
                        verb, *rest = READERS[kind]
                        got = conn.cmd(verb, "k", *rest)
                        assert not got.startswith(b"-"), (name, i, got)
                assert conn.cmd("PING") == b"+PONG\r\n", (name, i)
                assert s.proc.poll() is None
        assert OK in seen and BAD_FORMAT in seen
    finally:
        conn.close()
        s.stop()


# --- values ebb does not hold ---

def module_rdb():
    """An RDB 10 file whose second key holds a value of module "ebbtestmd"."""
    charset = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    mid = 0
    for ch in b"ebbtestmd":
        mid = mid << 6 | charset.index(ch)
    mid = mid << 10 | 1
    body = (b"\xfe\x00" + b"\x00" + rdb_str(b"plain") + rdb_str(b"v")
            + b"\x07" + rdb_str(b"m") + b"\x81" + mid.to_bytes(8, "big")
            + b"\x02\x05" + b"\x00")  # one unsigned 5, then the module's EOF
    return rdb_file(body, 10)


def start_on(argv, directory, data):
    """Runs a server on `data` as dump.rdb: (exit status or None when it is
    still running after 10 s, its output)."""
    (directory / "dump.rdb").write_bytes(data)
    proc = subprocess.Popen(argv + ["--dir", str(directory), "--dbfilename", "dump.rdb"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=str(directory))
    try:
        out, _ = proc.communicate(timeout=10)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, out


def stream_rdb(tmp_path_factory):
    red = redis_beside(tmp_path_factory, "redis-stream")
    try:
        c = red.client()
        c.set("plain", "v")
        c.xadd("s", {"a": "1"})
        c.save()
        c.close()
        with open(f"{red.cwd}/dump.rdb", "rb") as f:
            return f.read()
    finally:
        red.stop()


def test_redis_itself_refuses_the_module_file(tmp_path_factory):
    redis_beside(tmp_path_factory, "redis-needed").stop()
    d = tmp_path_factory.mktemp("redis-module")
    status, out = start_on(["redis-server", "--port", "0", "--unixsocket", str(d / "s.sock"),
                            "--save", ""], d, module_rdb())
    # It stops (its exit status is redis-check-rdb's, which it runs then),
    # naming the module, and finds the file otherwise sound.
    assert status is not None
    assert b"no matching module type 'ebbtestmd'" in out, out[-2000:]
    assert b"Checksum OK" in out


@pytest.mark.parametrize("kind", ["stream", "module"])
def test_a_file_with_a_value_ebb_cannot_hold_is_refused(kind, tmp_path_factory):
    """The server exits non-zero before it is ready, naming what it found,
    rather than start with part of the data."""
    if kind == "stream":
        data = stream_rdb(tmp_path_factory)
    else:
        redis_beside(tmp_path_factory, "redis-needed").stop()
        data = module_rdb()
    directory = tmp_path_factory.mktemp("ebb-refuse")
    status, out = start_on([BIN, "--port", "0"], directory, data)
    out = out.replace(str(directory).encode(), b"")  # its path names neither
    assert status is not None, f"still running with a {kind} in its file"
    assert status != 0
    assert b"ebb-server ready" not in out
    assert kind.encode() in out.lower(), out[-2000:]


LIB = ("#!lua name=movelib\n"
       "redis.register_function('echo_arg', function(keys, args) return args[1] end)\n"
       "redis.register_function{function_name='ro_len', callback=function(keys, args) "
       "return #args end, flags={'no-writes'}}")


def test_function_dumps_move_both_ways(pair):
    """FUNCTION DUMP writes Redis's payload form (function records, version
    10, CRC-64) on both servers, so each one's FUNCTION RESTORE takes the
    other's (Redis compresses the code with LZF; ebb reads that too); the
    refusals read the same on both."""
    ebb, red = pair
    e = ebb.client(protocol=2, decode_responses=False)
    r = red.client(protocol=2, decode_responses=False)
    r.function_load(LIB)
    from_redis = r.function_dump()
    assert cmd(ebb, "FUNCTION", "RESTORE", from_redis) == OK
    assert e.fcall("echo_arg", 0, "hi") == b"hi"
    assert e.fcall_ro("ro_len", 0, "a", "b") == 2
    from_ebb = e.function_dump()
    assert from_ebb[-10:-8] == b"\x0a\x00"
    assert crc64(from_ebb[:-8]) == int.from_bytes(from_ebb[-8:], "little")
    r.function_flush()
    assert cmd(red, "FUNCTION", "RESTORE", from_ebb) == OK
    assert r.fcall("echo_arg", 0, "back") == b"back"
    # The same refusals, byte for byte.
    r.set("s", "hello")
    key_payload = r.dump("s")
    newer = from_redis[:-10] + b"\x0b\x00"
    newer += crc64(newer).to_bytes(8, "little")
    for payload, policy in ((from_redis, None), (from_redis, "APPEND"), (key_payload, None),
                            (newer, None), (from_redis[:-1], None), (b"", None),
                            (from_redis, "BAD")):
        args = ["FUNCTION", "RESTORE", payload] + ([policy] if policy else [])
        assert cmd(ebb, *args) == cmd(red, *args), (payload[:8], policy)
    assert cmd(ebb, "FUNCTION", "RESTORE", from_redis, "REPLACE") == OK
    assert cmd(ebb, "FUNCTION", "RESTORE", from_redis, "FLUSH") == OK
    assert e.fcall("echo_arg", 0, "again") == b"again"
    for c in (e, r):
        c.close()


def test_ebb_snapshots_are_rdb_files_redis_loads(tmp_path_factory):
    """ebb's snapshot is a Redis RDB file: redis-check-rdb finds it sound,
    redis-server 7 loads it (every key, TTLs and functions; members keep
    no deadline there, Redis having no such thing), and ebb loads it back
    with every member deadline, which rides in an AUX field Redis skips."""
    import shutil
    d = tmp_path_factory.mktemp("ebb-snapshot")
    ebb = EbbServer("--dir", str(d), "--dbfilename", "dump.rdb", cwd=str(d))
    far = int(time.time() * 1000) + 3_600_000
    try:
        e = ebb.client(protocol=2, decode_responses=False)
        e.set("s", "hello")
        e.set("n", "-70000")
        e.rpush("l", "a", "1", "x" * 300)
        e.execute_command("SADDEX", "set", 1000, "x", "y")
        e.sadd("set", "z")
        e.execute_command("ZADDEX", "z", "PXAT", far, 1.5, "m")
        e.zadd("z", {"n": -2.25})
        e.hset("h", mapping={"f": "v", "g": "w"})
        e.execute_command("HPEXPIREAT", "h", far, "FIELDS", 1, "f")
        e.select(4)
        e.set("other", "1", pxat=far)
        e.function_load(LIB)
        before = {k: e.execute_command("TYPE", k) for k in (b"other",)}
        assert e.save()
        e.close()
    finally:
        ebb.stop()
    data = (d / "dump.rdb").read_bytes()
    assert data.startswith(b"REDIS0010")
    if shutil.which("redis-check-rdb"):
        out = subprocess.run(["redis-check-rdb", str(d / "dump.rdb")],
                             capture_output=True, timeout=30).stdout
        assert b"RDB looks OK" in out, out
    red = redis_beside(tmp_path_factory, "from-ebb", "--dir", str(d), "--dbfilename", "dump.rdb")
    try:
        r = red.client(protocol=2, decode_responses=False)
        assert r.get("s") == b"hello" and r.get("n") == b"-70000"
        assert r.lrange("l", 0, -1) == [b"a", b"1", b"x" * 300]
        assert r.smembers("set") == {b"x", b"y", b"z"}
        assert r.zrange("z", 0, -1, withscores=True) == [(b"n", -2.25), (b"m", 1.5)]
        assert r.hgetall("h") == {b"f": b"v", b"g": b"w"}
        r.select(4)
        assert r.pexpiretime("other") == far and before[b"other"] == b"string"
        assert r.fcall("echo_arg", 0, "hi") == b"hi"
        r.close()
    finally:
        red.stop()
    ebb = EbbServer("--dir", str(d), "--dbfilename", "dump.rdb", cwd=str(d))
    try:
        e = ebb.client(protocol=2, decode_responses=False)
        assert e.execute_command("SPEXPIRETIME", "set", "MEMBERS", 3, "x", "y", "z")[2] == -1
        ttl = e.execute_command("STTL", "set", "MEMBERS", 2, "x", "y")
        assert all(990 <= t <= 1000 for t in ttl), ttl
        assert e.execute_command("ZPEXPIRETIME", "z", "MEMBERS", 2, "m", "n") == [far, -1]
        assert e.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "f", "g") == [far, -1]
        e.select(4)
        assert e.pexpiretime("other") == far
        assert e.fcall("echo_arg", 0, "back") == b"back"
        e.close()
    finally:
        ebb.stop()
