"""Data brought over from Redis, checked against redis-server 7.0:

- Redis 7's AOF directory (an RDB base, `.base.rdb`, then an incremental
  file holding a DEL, an overwrite and an EXPIRE) loads with
  `appendonly yes`, key for key and TTL for TTL, and ebb carries on
  appending to it and rewriting it across restarts;
- the old single-file AOF, an RDB preamble followed by commands, loads
  and is moved into the AOF directory;
- a damaged Redis dump (wrong CRC-64, a damaged listpack under a good
  CRC-64, a truncated file) stops the start, with Redis's log lines, and
  the file is left as it was; DEBUG RELOAD NOSAVE of such a file answers
  an error and keeps the data in memory;
- empty collections in a Redis file are skipped with Redis's log lines;
- `DEBUG SET-SKIP-CHECKSUM-VALIDATION` lets RESTORE take payloads whose
  checksum is wrong, Redis's and ebb's own, as redis-server does;
- a RESTORE refused with `Bad data format` logs the reason Redis logs.

Skipped where redis-server is needed and not installed.
"""

import os
import shutil

import pytest

from conftest import BIN, EbbServer, RedisServer, redis_beside, wait_until
from test_redis_rdb import (BAD_FORMAT, OK, VERSION_OR_CHECKSUM, FAR, assert_same_keyspace,
                            both_servers,
                            cmd, crc64, keyspace, rdb_file, rdb_len, rdb_str, read_len,
                            seal, start_on, value, ziplist)

RELOAD_ERROR = b"-ERR Error trying to load the RDB dump\r\n"
TERMINATING = b"Terminating server after rdb file reading failure."


def aof_manifest(directory):
    path = os.path.join(directory, "appendonlydir", "appendonly.aof.manifest")
    with open(path) as f:
        return [line.split() for line in f.read().splitlines()]


def aof_file(directory, kind):
    """The name of the manifest's base (`b`) or last incremental (`i`) file."""
    names = [row[1] for row in aof_manifest(directory) if row[-1] == kind]
    return names[-1]


def rewrite_done(c):
    p = c.info("persistence")
    return p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0


def reseal(data):
    """An RDB file with its CRC-64 trailer recomputed."""
    return data[:-8] + crc64(data[:-8]).to_bytes(8, "little")


def ebb_log(tmp_path, *args):
    """An ebb-server in `tmp_path` logging to `tmp_path/ebb.log`."""
    return EbbServer("--dir", str(tmp_path), "--logfile", str(tmp_path / "ebb.log"),
                     *args, cwd=str(tmp_path))


def log_lines(path, containing):
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [line for line in f.read().splitlines() if containing in line]


# --- a Redis AOF directory ---

def write_base(c, c2):
    c.set("s:keep", "kept")
    c.set("s:over", "old")
    c.set("s:del", "deleted later")
    c.set("s:int", 12345)
    c.set("s:later", "expires later")
    c.set("s:ttl", "v", pxat=FAR)
    c.rpush("l", "a", "1", "-5", "x" * 100)
    c.sadd("set:int", 1, 2, 3, 70000)
    c.sadd("set:str", "a", "b", "c")
    c.zadd("z", {"m1": 1, "m2": 2.5, "m3": -3})
    c.hset("h", mapping={"f1": "v1", "f2": "2"})
    c.hset("h:ttl", mapping={"a": "1"})
    c.pexpireat("h:ttl", FAR + 1)
    c2.set("db2:s", "two")
    c2.zadd("db2:z", {"a": 1, "b": 2})
    c2.pexpireat("db2:z", FAR + 2)
    c2.hset("db2:h", mapping={"x": "y"})


def write_incr(c, c2):
    c.delete("s:del")
    c.set("s:over", "new")
    c.expire("s:later", 100_000)
    c.rpush("l", "tail")
    c.sadd("set:str", "d")
    c.hset("h", "f3", "v3")
    c.zadd("z", {"m1": 10})
    c.set("s:new", "incr", ex=50_000)
    c2.delete("db2:h")
    c2.rpush("db2:l", "p", "q")
    c2.pexpireat("db2:l", FAR + 3)


class RedisAof:
    def __init__(self, directory, want):
        self.dir = directory
        self.want = want
        self.base = aof_file(directory, "b")
        self.incr = aof_file(directory, "i")

    def read(self, name):
        with open(os.path.join(self.dir, "appendonlydir", name), "rb") as f:
            return f.read()


@pytest.fixture(scope="module")
def redis_aof(tmp_path_factory):
    """The AOF directory of a redis-server (RDB preamble on) after a
    rewrite and more writes, and every key it held when it stopped."""
    red = redis_beside(tmp_path_factory, "redis-aof", "--appendonly", "yes",
                       "--aof-use-rdb-preamble", "yes")
    try:
        red_dir = red.cwd
        c = red.client(protocol=2)
        c2 = red.client(db=2, protocol=2)
        wait_until(lambda: rewrite_done(c))
        write_base(c, c2)
        before = aof_file(red_dir, "b")
        c.bgrewriteaof()
        wait_until(lambda: rewrite_done(c) and aof_file(red_dir, "b") != before, 10)
        write_incr(c, c2)
        want = keyspace(red)
        c.close()
        c2.close()
    finally:
        red.stop()
    return RedisAof(red_dir, want)


def test_the_redis_aof_directory_is_what_it_should_be(redis_aof):
    """The directory has an RDB base holding the first writes and an
    incremental file holding the later ones."""
    assert redis_aof.base.endswith(".base.rdb")
    assert redis_aof.incr.endswith(".incr.aof")
    base, incr = redis_aof.read(redis_aof.base), redis_aof.read(redis_aof.incr)
    assert base.startswith(b"REDIS") and b"s:del" in base
    for word in (b"DEL", b"s:del", b"PEXPIREAT", b"s:later", b"db2:l"):
        assert word in incr, word
    want = redis_aof.want
    assert (0, b"s:del") not in want and (2, b"db2:h") not in want
    assert want[(0, b"s:over")][1] == b"new"
    assert want[(0, b"s:later")][2] > 0 and want[(0, b"s:new")][2] > 0
    assert {db for db, _ in want} == {0, 2}


def test_a_redis_aof_directory_loads_and_stays_writable(redis_aof, tmp_path):
    shutil.copytree(os.path.join(redis_aof.dir, "appendonlydir"),
                    tmp_path / "appendonlydir")
    s = ebb_log(tmp_path, "--appendonly", "yes")
    try:
        assert_same_keyspace(keyspace(s), redis_aof.want)
        log = tmp_path / "ebb.log"
        assert log_lines(log, "DB loaded from base file " + redis_aof.base)
        assert log_lines(log, "DB loaded from incr file " + redis_aof.incr)
        c = s.client(protocol=2)
        c.set("after", "ebb")
        c.execute_command("SELECT", 2)
        c.delete("db2:s")
        c.close()
    finally:
        s.stop()
    want = dict(redis_aof.want)
    want[(0, b"after")] = (b"string", b"ebb", -1)
    del want[(2, b"db2:s")]

    s = ebb_log(tmp_path, "--appendonly", "yes")
    try:
        assert_same_keyspace(keyspace(s), want)
        c = s.client()
        c.bgrewriteaof()
        wait_until(lambda: rewrite_done(c) and aof_file(tmp_path, "b") != redis_aof.base)
        c.set("after2", "ebb")
        c.close()
    finally:
        s.stop()
    # ebb's rewrite wrote an RDB base, as Redis does by default.
    assert aof_file(tmp_path, "b").endswith(".base.rdb")
    want[(0, b"after2")] = (b"string", b"ebb", -1)
    s = ebb_log(tmp_path, "--appendonly", "yes")
    try:
        assert_same_keyspace(keyspace(s), want)
    finally:
        s.stop()
    # And the directory goes back to redis-server as it is.
    back = tmp_path / "back"
    back.mkdir()
    shutil.copytree(tmp_path / "appendonlydir", back / "appendonlydir")
    red = RedisServer(str(back), "--appendonly", "yes")
    try:
        assert_same_keyspace(keyspace(red), want)
    finally:
        red.stop()


def test_an_old_single_file_aof_with_an_rdb_preamble_loads(redis_aof, tmp_path):
    """The old layout's single file is the base's RDB followed by the
    commands logged since: loaded, then moved into the directory."""
    single = redis_aof.read(redis_aof.base) + redis_aof.read(redis_aof.incr)
    (tmp_path / "appendonly.aof").write_bytes(single)
    s = ebb_log(tmp_path, "--appendonly", "yes")
    try:
        assert_same_keyspace(keyspace(s), redis_aof.want)
        assert aof_manifest(tmp_path)[0] == ["file", "appendonly.aof", "seq", "1", "type", "b"]
        assert (tmp_path / "appendonlydir" / "appendonly.aof").read_bytes() == single
        assert not (tmp_path / "appendonly.aof").exists()
        s.client().set("after", "1")
    finally:
        s.stop()
    s = ebb_log(tmp_path, "--appendonly", "yes")
    try:
        got = keyspace(s)
        assert got.pop((0, b"after")) == (b"string", b"1", -1)
        assert_same_keyspace(got, redis_aof.want)
    finally:
        s.stop()


# --- damaged Redis dump files ---

class RedisDump:
    def __init__(self, data, want):
        self.data = data
        self.want = want

    def listpack_at(self, key):
        """Where the listpack of hash `key` starts in the file."""
        at = self.data.index(b"\x10" + rdb_str(key)) + 1 + len(rdb_str(key))
        _, start, special = read_len(self.data, at)
        assert not special  # stored raw, not LZF compressed
        return start


@pytest.fixture(scope="module")
def redis_dump(tmp_path_factory):
    """A dump.rdb saved by redis-server (no compression, so its listpacks
    lie in it as they are), and the keys it holds."""
    red = redis_beside(tmp_path_factory, "redis-dump", "--rdbcompression", "no")
    try:
        c = red.client(protocol=2)
        c.hset("h:lp", mapping={"field1": "value1", "field2": "value2"})
        c.zadd("z", {"m1": 1, "m2": 2})
        c.rpush("l", "a", "b")
        c.sadd("i", 1, 2, 3)
        c.set("s", "v", pxat=FAR)
        c1 = red.client(db=1, protocol=2)
        c1.set("db1", "one")
        c.save()
        want = keyspace(red)
        c.close()
        c1.close()
        with open(os.path.join(red.cwd, "dump.rdb"), "rb") as f:
            return RedisDump(f.read(), want)
    finally:
        red.stop()


def damaged(dump, how):
    data = bytearray(dump.data)
    if how == "checksum":
        data[-1] ^= 0x01
        return bytes(data)
    if how == "listpack":
        at = dump.listpack_at(b"h:lp") + 6  # the first entry's encoding byte
        assert data[at] == 0x80 | len("field1")
        data[at] ^= 0x01
        return reseal(bytes(data))
    assert how == "truncated"
    return bytes(data[:len(data) // 2])


REASONS = {
    "checksum": [b"Wrong RDB checksum"],
    "listpack": [b"Internal error in RDB reading offset", b"integrity check failed"],
    "truncated": [],
}


@pytest.mark.parametrize("how", ["checksum", "listpack", "truncated"])
def test_a_damaged_redis_dump_stops_the_start(how, redis_dump, tmp_path):
    data = damaged(redis_dump, how)
    assert data != redis_dump.data
    status, out = start_on([BIN, "--port", "0"], tmp_path, data)
    assert status is not None, "still running on a damaged file"
    assert status != 0
    assert b"ebb-server ready" not in out
    assert TERMINATING in out, out[-2000:]
    for reason in REASONS[how]:
        assert reason in out, (reason, out[-2000:])
    assert (tmp_path / "dump.rdb").read_bytes() == data


def test_the_undamaged_dump_loads(redis_dump, tmp_path):
    """The damage, not the file, is what stops the start above."""
    (tmp_path / "dump.rdb").write_bytes(redis_dump.data)
    s = EbbServer("--dir", str(tmp_path), "--dbfilename", "dump.rdb", cwd=str(tmp_path))
    try:
        assert_same_keyspace(keyspace(s), redis_dump.want)
    finally:
        s.stop()


@pytest.mark.parametrize("how", ["checksum", "listpack"])
def test_debug_reload_of_a_damaged_redis_dump_keeps_the_data(how, redis_dump, tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--dbfilename", "dump.rdb", cwd=str(tmp_path))
    try:
        c = s.client(protocol=2)
        c.set("mine", "1")
        c.hset("h:lp", "only", "here")
        c3 = s.client(db=3, protocol=2)
        c3.set("db3", "3", px=600_000)
        c3.close()
        before = keyspace(s)
        data = damaged(redis_dump, how)
        (tmp_path / "dump.rdb").write_bytes(data)
        assert cmd(s, "DEBUG", "RELOAD", "NOSAVE") == RELOAD_ERROR
        assert keyspace(s) == before
        assert (tmp_path / "dump.rdb").read_bytes() == data
        # The same file undamaged replaces the data.
        (tmp_path / "dump.rdb").write_bytes(redis_dump.data)
        assert cmd(s, "DEBUG", "RELOAD", "NOSAVE") == OK
        assert_same_keyspace(keyspace(s), redis_dump.want)
        c.close()
    finally:
        s.stop()


# --- empty keys ---

EMPTY_LISTPACK = (7).to_bytes(4, "little") + (0).to_bytes(2, "little") + b"\xff"

EMPTY_KEYS = [
    (b"\x02", b"empty:set", rdb_len(0)),
    (b"\x04", b"empty:hash", rdb_len(0)),
    (b"\x03", b"empty:zset", rdb_len(0)),
    (b"\x05", b"empty:zset2", rdb_len(0)),
    (b"\x01", b"empty:list", rdb_len(0)),
    (b"\x10", b"empty:hashlp", rdb_str(EMPTY_LISTPACK)),
    # One packed node holding an empty listpack.
    (b"\x12", b"empty:quicklist", rdb_len(1) + rdb_len(2) + rdb_str(EMPTY_LISTPACK)),
]


def empty_keys_rdb():
    body = b"\xfe\x00" + b"\x00" + rdb_str(b"str") + rdb_str(b"v")
    for kind, key, val in EMPTY_KEYS:
        body += kind + rdb_str(key) + val
    body += b"\x02" + rdb_str(b"set") + rdb_len(2) + rdb_str(b"a") + rdb_str(b"b")
    body += b"\xfe\x01" + b"\x00" + rdb_str(b"db1") + rdb_str(b"one")
    return rdb_file(body, 10)


def test_empty_keys_in_a_redis_file_are_skipped(tmp_path):
    data = empty_keys_rdb()
    (tmp_path / "dump.rdb").write_bytes(data)
    s = ebb_log(tmp_path, "--dbfilename", "dump.rdb")
    try:
        got = keyspace(s)
        assert got == {(0, b"str"): (b"string", b"v", -1),
                       (0, b"set"): (b"set", [b"a", b"b"], -1),
                       (1, b"db1"): (b"string", b"one", -1)}
        log = tmp_path / "ebb.log"
        for _, key, _ in EMPTY_KEYS:
            assert log_lines(log, "rdbLoadObject skipping empty key: " + key.decode()), key
        assert log_lines(log, "empty keys skipped: %d" % len(EMPTY_KEYS))
    finally:
        s.stop()


def test_redis_skips_the_same_empty_keys(tmp_path_factory):
    """The file above, loaded by redis-server: the same keys, the same
    log lines."""
    red = redis_beside(tmp_path_factory, "redis-empty", "--logfile", "redis.log")
    try:
        with open(os.path.join(red.cwd, "dump.rdb"), "wb") as f:
            f.write(empty_keys_rdb())
        assert cmd(red, "DEBUG", "RELOAD", "NOSAVE") == OK
        assert sorted(keyspace(red)) == [(0, b"set"), (0, b"str"), (1, b"db1")]
        log = os.path.join(red.cwd, "redis.log")
        for _, key, _ in EMPTY_KEYS:
            assert log_lines(log, "rdbLoadObject skipping empty key: " + key.decode()), key
        assert log_lines(log, "empty keys skipped: %d" % len(EMPTY_KEYS))
    finally:
        red.stop()


# --- DEBUG SET-SKIP-CHECKSUM-VALIDATION ---

@pytest.fixture
def pair(tmp_path_factory, tmp_path):
    """A fresh ebb-server (logging to `tmp_path/ebb.log`) and a fresh
    redis-server (logging verbosely to `redis.log` in its directory)."""
    yield from both_servers(tmp_path_factory, lambda: ebb_log(tmp_path),
                            "--loglevel", "verbose", "--logfile", "redis.log")


def skip_checksums(server, flag):
    return cmd(server, "DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", flag)


def test_skip_checksum_validation_side_by_side(pair):
    ebb, red = pair
    r = red.client(protocol=2, decode_responses=False)
    r.hset("h", mapping={"a": "1", "b": "two"})
    payload = r.dump("h")
    zeroed = payload[:-8] + bytes(8)
    assert zeroed != payload

    def both(*args):
        got, want = cmd(ebb, *args), cmd(red, *args)
        assert got == want, args[:2]
        return want

    assert both("RESTORE", "k1", 0, zeroed) == VERSION_OR_CHECKSUM
    assert both("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 1) == OK
    assert both("RESTORE", "k1", 0, zeroed) == OK
    assert both("HGETALL", "k1") == cmd(red, "HGETALL", "h")
    assert both("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 0) == OK
    assert both("RESTORE", "k2", 0, zeroed) == VERSION_OR_CHECKSUM
    assert both("EXISTS", "k2") == b":0\r\n"
    r.close()


def test_skip_checksum_validation_covers_ebb_payloads(tmp_path):
    ebb = ebb_log(tmp_path)
    try:
        check_ebb_payload_checksum(ebb)
    finally:
        ebb.stop()


def check_ebb_payload_checksum(ebb):
    e = ebb.client(protocol=2, decode_responses=False)
    # A member deadline keeps the value in ebb's own payload form.
    e.execute_command("SADDEX", "l", 100000, "x", "y", "z")
    own = e.dump("l")
    assert own.startswith(b"EBBDUMP1")
    bad = own[:-1] + bytes([own[-1] ^ 0x01])
    assert cmd(ebb, "RESTORE", "k1", 0, bad) == VERSION_OR_CHECKSUM
    assert skip_checksums(ebb, 1) == OK
    assert cmd(ebb, "RESTORE", "k1", 0, bad) == OK
    assert value(e, "k1") == value(e, "l")
    assert skip_checksums(ebb, 0) == OK
    assert cmd(ebb, "RESTORE", "k2", 0, bad) == VERSION_OR_CHECKSUM
    assert e.exists("k2") == 0
    e.close()


def test_skip_checksum_validation_argument_as_redis_reads_it(pair):
    """Redis reads the flag with atoi: a number's leading digits, and 0 for
    what does not start with one; both servers then take or refuse the
    same payload."""
    ebb, red = pair
    r = red.client(protocol=2, decode_responses=False)
    r.set("s", "x" * 30)
    zeroed = r.dump("s")[:-8] + bytes(8)
    r.close()
    for flag in ("notanumber", "1x", "", "0"):
        for server in (ebb, red):
            assert skip_checksums(server, 1) == OK
        assert skip_checksums(ebb, flag) == skip_checksums(red, flag), flag
        got = cmd(ebb, "RESTORE", "k", 0, zeroed, "REPLACE")
        assert got == cmd(red, "RESTORE", "k", 0, zeroed, "REPLACE"), flag
    args = ("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION")
    assert cmd(ebb, *args) == cmd(red, *args)


# --- the log line of a refused payload ---

REFUSED = {
    # RDB 9: a sorted set as a ziplist, member "a" twice.
    "zset ziplist": seal(b"\x0c" + rdb_str(ziplist([b"a", 1, b"b", 2, b"a", 3])), 9),
    # A hash-table set holding "x" twice.
    "set": seal(b"\x02\x02" + rdb_str(b"x") + rdb_str(b"x")),
}


def redis_reason(red):
    """The reason in redis-server's last RDB reading error."""
    lines = log_lines(os.path.join(red.cwd, "redis.log"), "Internal error in RDB reading")
    return lines[-1].split(" -> ", 1)[1].rstrip(".") if lines else None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_payload_logs_the_reason_redis_gives(name, pair, tmp_path):
    ebb, red = pair
    payload = REFUSED[name]
    assert cmd(red, "RESTORE", "k", 0, payload) == BAD_FORMAT
    assert cmd(ebb, "RESTORE", "k", 0, payload) == BAD_FORMAT
    wait_until(lambda: redis_reason(red) is not None)
    reason = redis_reason(red)
    log = tmp_path / "ebb.log"
    wait_until(lambda: log_lines(log, "payload refused:"))
    line = log_lines(log, "payload refused:")[-1]
    assert line.split("payload refused: ", 1)[1].rstrip(".") == reason, (line, reason)
    assert cmd(ebb, "EXISTS", "k") == b":0\r\n"


# --- keys met twice, and RESIZEDB hints ---

def dup_keys_rdb(second):
    """db 0 holds `k` as a string, then `second` (type byte and value)
    under the same name; db 1 holds `k` too, which is allowed."""
    body = (b"\xfe\x00" + b"\x00" + rdb_str(b"k") + rdb_str(b"first") + second
            + b"\xfe\x01" + b"\x00" + rdb_str(b"k") + rdb_str(b"other db"))
    return rdb_file(body, 10)


@pytest.mark.parametrize("second", [
    b"\x00" + rdb_str(b"k") + rdb_str(b"again"),             # a string again
    b"\x02" + rdb_str(b"k") + rdb_len(1) + rdb_str(b"m"),  # a set
])
def test_a_key_met_twice_stops_the_start(second, tmp_path):
    data = dup_keys_rdb(second)
    status, out = start_on([BIN, "--port", "0"], tmp_path, data)
    assert status not in (None, 0)
    assert b"duplicated key" in out and TERMINATING in out, out[-2000:]
    assert b"ebb-server ready" not in out


def test_redis_refuses_a_key_met_twice_too(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    data = dup_keys_rdb(b"\x00" + rdb_str(b"k") + rdb_str(b"again"))
    status, out = start_on(["redis-server", "--port", "0", "--unixsocket",
                            str(tmp_path / "s.sock")], tmp_path, data)
    assert status not in (None, 0)
    assert b"duplicated key" in out, out[-2000:]


def test_an_empty_key_then_the_same_name_loads(tmp_path):
    """An empty value is skipped before the duplicate check, as in Redis:
    the name is free for the key after it."""
    body = (b"\xfe\x00" + b"\x02" + rdb_str(b"k") + rdb_len(0)
            + b"\x00" + rdb_str(b"k") + rdb_str(b"v"))
    (tmp_path / "dump.rdb").write_bytes(rdb_file(body, 10))
    s = ebb_log(tmp_path, "--dbfilename", "dump.rdb")
    try:
        assert keyspace(s) == {(0, b"k"): (b"string", b"v", -1)}
    finally:
        s.stop()


@pytest.mark.parametrize("claimed", [0, 3, 1 << 40])
def test_a_resizedb_hint_of_any_size_loads(claimed, tmp_path):
    """RESIZEDB only sizes the key table: a file claiming none, too few or
    2^40 keys loads the keys it has."""
    keys = b"".join(b"\x00" + rdb_str(b"k%d" % i) + rdb_str(b"v%d" % i) for i in range(5000))
    body = b"\xfe\x00\xfb" + rdb_len(claimed) + rdb_len(0) + keys
    (tmp_path / "dump.rdb").write_bytes(rdb_file(body, 10))
    s = ebb_log(tmp_path, "--dbfilename", "dump.rdb")
    try:
        c = s.client()
        assert c.dbsize() == 5000
        assert c.get("k4999") == "v4999" and c.get("k0") == "v0"
        c.set("after", "1")
        assert c.dbsize() == 5001
    finally:
        s.stop()


def test_lying_resizedb_hints_reserve_little(tmp_path):
    """Every database claiming 2^40 keys, in a 3 MB file of one key: the
    hints together reserve room for at most one key per 16 bytes of the
    file, and what the file did not fill is given back."""
    body = b"".join(b"\xfe" + rdb_len(db) + b"\xfb" + rdb_len(1 << 40) + rdb_len(0)
                    for db in range(16))
    body += b"\x00" + rdb_str(b"big") + rdb_str(b"x" * 3_000_000)
    (tmp_path / "dump.rdb").write_bytes(rdb_file(body, 10))
    s = ebb_log(tmp_path, "--dbfilename", "dump.rdb")
    try:
        c = s.client()
        c.select(15)
        assert c.strlen("big") == 3_000_000
        used = c.info("memory")["used_memory"]
        assert used < 12_000_000, used
    finally:
        s.stop()
