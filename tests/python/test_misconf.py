"""Writes refused while the data cannot be persisted (`-MISCONF`), as
Redis refuses them: after a failed background save (with save rules and
`stop-writes-on-bgsave-error yes`), and while the AOF cannot be written
(a full disk). Reads go on; writes, PING, transactions holding a write and
scripts that write are refused until a save succeeds or the disk has room
again; with `appendfsync always` a failed write ends the process.

The snapshot case makes a background save fail by removing the data
directory; each step runs against ebb and redis-server side by side and
the raw replies must be the same. The AOF cases need a small tmpfs (root
in the test machine); they are skipped where it cannot be mounted."""

import os
import shutil
import subprocess
import time

import pytest

from conftest import EbbServer, Raw, RedisServer, wait_until

RDB_MISCONF = (
    b"-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist "
    b"to disk. Commands that may modify the data set are disabled, because this instance is "
    b"configured to report errors during writes if RDB snapshotting fails "
    b"(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    b"RDB error.\r\n"
)
AOF_MISCONF = b"-MISCONF Errors writing to the AOF file: No space left on device\r\n"

SHEBANG_WRITE = "#!lua\nreturn redis.call('set', 'x', '1')"
SHEBANG_READ = "#!lua flags=no-writes\nreturn redis.call('get', 'a')"
PLAIN_WRITE = "return redis.call('set', 'x', '1')"
LIBRARY = "#!lua name=lib\nredis.register_function('f', function() return 1 end)"


def bgsave_fails(port, expected=b"+Background saving started\r\n"):
    r = Raw(port, timeout=5)
    assert r.cmd("BGSAVE") == expected
    assert wait_until(lambda: b"rdb_last_bgsave_status:err" in r.cmd("INFO", "persistence"))
    wait_until(lambda: b"rdb_bgsave_in_progress:0" in r.cmd("INFO", "persistence"))
    r.close()


def run(port, *lines):
    """The raw replies of `lines` (each a list of arguments) sent one
    after the other on one connection."""
    r = Raw(port, timeout=5)
    out = [r.cmd(*line) for line in lines]
    r.close()
    return out


@pytest.fixture
def pair(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    dirs = []
    servers = []
    for name in ("ebb", "redis"):
        d = tmp_path / name / "data"
        d.mkdir(parents=True)
        dirs.append(d)
    servers.append(EbbServer("--dir", str(dirs[0]), "--save", "3600 1", cwd=str(tmp_path)))
    servers.append(RedisServer(str(tmp_path), "--dir", str(dirs[1]), "--save", "3600 1"))
    yield servers, dirs
    for s in servers:
        s.stop()


def test_a_failed_background_save_refuses_writes_as_redis(pair):
    servers, dirs = pair
    ports = [s.port for s in servers]
    for p in ports:
        assert run(p, ["SET", "a", "1"], ["SET", "b", "1"]) == [b"+OK\r\n"] * 2
    for d in dirs:
        shutil.rmtree(d)
    for p in ports:
        bgsave_fails(p)
    lines = [
        ["SET", "a", "2"],
        ["PING"],
        ["GET", "a"],
        ["DEL", "b"],
        ["EXISTS", "b"],
        ["EVAL", PLAIN_WRITE, "0"],
        ["EVAL", SHEBANG_WRITE, "0"],
        ["EVAL", SHEBANG_READ, "0"],
        ["EVAL", "return redis.call('get', 'a')", "0"],
        ["FUNCTION", "LOAD", LIBRARY],
        ["FUNCTION", "LIST"],
        ["MULTI"],
        ["SET", "a", "3"],
        ["GET", "a"],
        ["EXEC"],
        ["MULTI"],
        ["GET", "a"],
        ["EXEC"],
        ["PUBLISH", "c", "m"],
        ["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"],
        ["SET", "a", "4"],
        ["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"],
        ["INCR", "n"],
        ["CONFIG", "SET", "save", ""],
        ["INCR", "n"],
        ["CONFIG", "SET", "save", "3600 1"],
        ["INCR", "n"],
    ]
    replies = [run(p, *lines) for p in ports]
    for line, mine, theirs in zip(lines, *replies):
        assert mine == theirs, line
    assert replies[0][0] == RDB_MISCONF and replies[0][1] == RDB_MISCONF
    assert replies[0][2] == b"$1\r\n1\r\n"
    assert replies[0][-1] == RDB_MISCONF
    # A save that succeeds lets writes in again.
    r = Raw(ports[0], timeout=5)
    dirs[0].mkdir(parents=True)
    assert r.cmd("SAVE") == b"+OK\r\n"
    assert r.cmd("SET", "a", "5") == b"+OK\r\n"
    assert r.cmd("PING") == b"+PONG\r\n"
    r.close()


def test_a_script_that_declares_writes_is_refused_inside_exec(tmp_path):
    """A write that reaches a script past the command checks (queued
    before the save failed) is refused by the script's own check."""
    d = tmp_path / "data"
    d.mkdir()
    s = EbbServer("--dir", str(d), "--save", "3600 1", cwd=str(tmp_path))
    try:
        r = Raw(s.port, timeout=5)
        assert r.cmd("MULTI") == b"+OK\r\n"
        assert r.cmd("EVAL", SHEBANG_WRITE, "0") == b"+QUEUED\r\n"
        assert r.cmd("EVAL", PLAIN_WRITE, "0") == b"+QUEUED\r\n"
        shutil.rmtree(d)
        bgsave_fails(s.port)
        reply = r.cmd("EXEC")
        assert reply.startswith(b"-EXECABORT") and b"MISCONF" in reply
        r.close()
    finally:
        s.stop()


def mount_tmpfs(path, size):
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")


def umount(path):
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    disk = tmp_path / "disk"
    mount_tmpfs(disk, "256k")
    yield disk
    umount(disk)


def test_a_full_disk_refuses_writes_until_the_aof_writes_again(small_disk):
    s = EbbServer("--dir", str(small_disk), "--appendonly", "yes", "--save", "",
                  cwd=str(small_disk.parent))
    try:
        r = Raw(s.port, timeout=5)
        # The log a rewrite opens (each one after the first start's) is
        # the one written to: a cut-off write must leave no hole in it.
        assert r.cmd("SET", "first", "1") == b"+OK\r\n"
        assert r.cmd("BGREWRITEAOF").startswith(b"+")
        assert wait_until(lambda: b"aof_rewrite_in_progress:0" in r.cmd("INFO", "persistence"))
        value = "x" * 50_000
        # The write that finds the disk full is answered (its reply was
        # computed before the log was written, as in Redis); the next
        # ones are refused.
        for i in range(6):
            assert r.cmd("SET", f"k{i}", value) == b"+OK\r\n"
        assert r.cmd("SET", "more", "1") == AOF_MISCONF
        assert r.cmd("PING") == AOF_MISCONF
        assert r.cmd("STRLEN", "k0") == b":50000\r\n"
        info = r.cmd("INFO", "persistence")
        assert b"aof_last_write_status:err" in info
        assert b"aof_buffer_length:0\r\n" not in info
        # Room again: the pending commands are written within a second,
        # without any client writing, and writes are accepted again.
        subprocess.run(["mount", "-o", "remount,size=1m", str(small_disk)], check=True)
        assert wait_until(lambda: b"aof_last_write_status:ok" in r.cmd("INFO", "persistence"), 5)
        assert r.cmd("SET", "more", "1") == b"+OK\r\n"
        assert r.cmd("PING") == b"+PONG\r\n"
        r.close()
        s.stop()
        s.start()
        c = s.client()
        assert c.dbsize() == 8
        assert c.strlen("k5") == 50_000
    finally:
        s.stop()


def test_with_appendfsync_always_a_failed_write_ends_the_process(small_disk):
    s = EbbServer("--dir", str(small_disk), "--appendonly", "yes", "--appendfsync", "always",
                  "--save", "", cwd=str(small_disk.parent))
    try:
        r = Raw(s.port, timeout=5)
        value = "x" * 50_000
        answered = 0
        try:
            for i in range(8):
                if r.cmd("SET", f"k{i}", value) == b"+OK\r\n":
                    answered += 1
        except (ConnectionError, OSError, IndexError, ValueError):
            pass
        assert s.proc.wait(10) == 1
        # Every acknowledged write is in the log.
        subprocess.run(["mount", "-o", "remount,size=1m", str(small_disk)], check=True)
        s.start()
        assert s.client().dbsize() == answered
    finally:
        s.stop()


def test_a_save_that_fails_for_room_leaves_no_partial_file(small_disk):
    # As Redis: the temp file of a failed SAVE or BGSAVE is removed, so the
    # room it took is free for the next save.
    log = small_disk.parent / "save.log"
    s = EbbServer("--dir", str(small_disk), "--save", "", "--logfile", str(log),
                  cwd=str(small_disk.parent))
    try:
        r = Raw(s.port, timeout=5)
        for i in range(8):
            assert r.cmd("SET", f"k{i}", "x" * 40_000) == b"+OK\r\n"
        assert r.cmd("SAVE").startswith(b"-ERR")
        assert r.cmd("BGSAVE").startswith(b"+")
        assert wait_until(lambda: b"rdb_bgsave_in_progress:0" in r.cmd("INFO", "persistence"))
        assert b"rdb_last_bgsave_status:err" in r.cmd("INFO", "persistence")
        assert [f for f in os.listdir(small_disk) if f.startswith("temp-")] == []
        # The log says why, for the foreground save and the child's.
        text = log.read_text()
        assert "Write error saving DB on disk: No space left on device" in text
        assert "saving process failed: No space left on device" in text
        # With the keys gone, a save fits again.
        assert r.cmd("FLUSHALL") == b"+OK\r\n"
        assert r.cmd("SAVE") == b"+OK\r\n"
        r.close()
    finally:
        s.stop()
