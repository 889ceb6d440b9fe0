"""The AOF directory (Redis 7.0's multi-part AOF): its layout and manifest,
rewrites switching files, restarts replaying base and incremental files,
the upgrade of an old single file, and crashes keeping acknowledged
writes."""

import os
import random
import signal
import subprocess
import time

import pytest

from conftest import BIN, EbbServer
from test_durability import Writer, lost_writes


def manifest(tmp_path, name="appendonly.aof"):
    return (tmp_path / "appendonlydir" / f"{name}.manifest").read_text().splitlines()


def files(tmp_path):
    return sorted(os.listdir(tmp_path / "appendonlydir"))


def wait_rewrite(c, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        p = c.info("persistence")
        if not p["aof_rewrite_in_progress"] and not p["aof_rewrite_scheduled"]:
            return p
        time.sleep(0.02)
    raise AssertionError("the rewrite did not end")


def wait_for(cond, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def resp(*cmds):
    out = b""
    for cmd in cmds:
        out += b"*%d\r\n" % len(cmd)
        for a in cmd:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def child_of(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return int(out.split()[0]) if out.split() else None


def fails_to_start(tmp_path, *args):
    """Starts the server expecting it to exit; returns its output."""
    p = subprocess.run([BIN, "--port", "0", "--dir", str(tmp_path), *args],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    return p.stdout


def test_layout_after_start(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    assert files(tmp_path) == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof",
                               "appendonly.aof.manifest"]
    assert manifest(tmp_path) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                  "file appendonly.aof.1.incr.aof seq 1 type i"]
    assert not (tmp_path / "appendonly.aof").exists()
    # Started empty: the base is an RDB file of no keys (Redis's default,
    # aof-use-rdb-preamble yes), the writes go to the incremental file.
    c.set("k", "v")
    d = tmp_path / "appendonlydir"
    base = (d / "appendonly.aof.1.base.rdb").read_bytes()
    assert base.startswith(b"REDIS0010") and b"aof-base" in base
    assert b"\xfe" not in base[:-8]  # no SELECTDB: no keys
    assert (d / "appendonly.aof.1.incr.aof").read_bytes() == resp(["SELECT", "0"], ["SET", "k", "v"])
    p = c.info("persistence")
    assert p["aof_enabled"] == 1
    assert p["aof_current_size"] == (d / "appendonly.aof.1.incr.aof").stat().st_size
    assert p["aof_base_size"] == 0


def test_a_command_logged_as_several_records_is_framed(server_factory, tmp_path):
    # As Redis frames several propagated commands: MULTI ... EXEC, so a
    # torn tail drops the whole command, never half of it.
    s = server_factory("--appendonly", "yes", "--aof-load-truncated", "yes")
    c = s.client()
    c.set("e", "old", px=1)
    time.sleep(0.05)
    c.lpush("e", "x")  # the expired key's DEL, then the push
    c.execute_command("ZADDEX", "z", "PXAT", 4102444800000, 1, "a")
    c.set("single", "1")
    d = tmp_path / "appendonlydir"
    log = (d / "appendonly.aof.1.incr.aof").read_bytes()
    framed = resp(["MULTI"], ["DEL", "e"], ["LPUSH", "e", "x"], ["EXEC"],
                  ["MULTI"], ["ZADD", "z", "1", "a"],
                  ["ZPEXPIREAT", "z", "4102444800000", "MEMBERS", "1", "a"], ["EXEC"],
                  ["SET", "single", "1"])
    assert log.endswith(framed)
    # Cut right after the ZADD: the ZADDEX is not replayed at all.
    cut = log[:log.index(b"ZPEXPIREAT") - len(b"*6\r\n$10\r\n")]
    assert cut.endswith(resp(["ZADD", "z", "1", "a"]))
    s.kill()
    (d / "appendonly.aof.1.incr.aof").write_bytes(cut)
    s.start()
    c = s.client()
    assert c.exists("z") == 0
    assert c.lrange("e", 0, -1) == ["x"]


def test_a_command_whose_only_change_is_an_expiry_is_not_logged(server_factory, tmp_path):
    # As Redis: the expiry is logged; the command that found it, changing
    # nothing itself, is not (here, in its relative form).
    s = server_factory("--appendonly", "yes")
    c = s.client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.zadd("z", {"a": 1})
    c.execute_command("ZPEXPIRE", "z", 1, "MEMBERS", 1, "a")
    c.set("gone", "1", px=1)
    time.sleep(0.05)
    assert c.execute_command("FIELDEXPIRE", "z", 3600, "b") == [-2]
    assert c.execute_command("LPUSHX", "gone", "x") == 0
    c.set("last", "1")
    log = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert log.endswith(resp(["ZREM", "z", "a"], ["DEL", "gone"], ["SET", "last", "1"]))
    assert b"FIELDEXPIRE" not in log and b"LPUSHX" not in log
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_a_rewrite_writes_what_was_live_at_its_fork(server_factory, preamble):
    # A member or key alive when the rewrite forks is in the new base even
    # if its deadline passes before the child writes it: the commands
    # logged after the fork (here, PERSIST) apply to it on replay.
    s = server_factory("--appendonly", "yes", "--appendfsync", "always",
                       "--aof-use-rdb-preamble", preamble)
    c = s.client()
    c.zadd("z", {"a": 1, "b": 2, "e": 3})
    c.execute_command("ZPEXPIRE", "z", 300, "MEMBERS", 2, "a", "b")
    c.sadd("k", "x")
    c.pexpire("k", 300)
    c.config_set("rdb-key-save-delay", 300_000)  # 2 keys: the child waits 0.6 s
    c.bgrewriteaof()
    assert c.execute_command("ZPERSIST", "z", "MEMBERS", 1, "a") == [1]
    assert c.persist("k")
    wait_rewrite(c)
    c.config_set("rdb-key-save-delay", 0)
    live = (c.zrange("z", 0, -1, withscores=True), c.smembers("k"), c.ttl("k"))
    assert live == ([("a", 1.0), ("e", 3.0)], {"x"}, -1)
    s.kill()
    s.start()
    c = s.client()
    assert (c.zrange("z", 0, -1, withscores=True), c.smembers("k"), c.ttl("k")) == live


def test_other_names_are_followed(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--appenddirname", "aofs",
                       "--appendfilename", "log.aof")
    s.client().set("k", "v")
    assert sorted(os.listdir(tmp_path / "aofs")) == [
        "log.aof.1.base.rdb", "log.aof.1.incr.aof", "log.aof.manifest"]
    s.kill()
    s.start()
    assert s.client().get("k") == "v"


def test_rewrite_switches_files(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    for i in range(100):
        c.set(f"k{i}", i)
    assert c.bgrewriteaof()
    p = wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                  "file appendonly.aof.2.incr.aof seq 2 type i"]
    # The replaced files are deleted; nothing temporary is left.
    assert files(tmp_path) == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof",
                               "appendonly.aof.manifest"]
    assert not [f for f in os.listdir(tmp_path) if f.startswith("temp-")]
    d = tmp_path / "appendonlydir"
    base = (d / "appendonly.aof.2.base.rdb").read_bytes()
    assert b"k99" in base and (d / "appendonly.aof.2.incr.aof").read_bytes() == b""
    assert p["aof_base_size"] == p["aof_current_size"] == len(base)
    c.set("after", "1")
    assert (d / "appendonly.aof.2.incr.aof").read_bytes() == resp(["SELECT", "0"], ["SET", "after", "1"])
    c.bgrewriteaof()
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.3.base.rdb seq 3 type b",
                                  "file appendonly.aof.3.incr.aof seq 3 type i"]


def test_rdb_preamble_off_writes_resp_bases(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    c = s.client()
    d = tmp_path / "appendonlydir"
    assert files(tmp_path) == ["appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof",
                               "appendonly.aof.manifest"]
    assert (d / "appendonly.aof.1.base.aof").read_bytes() == b""
    c.set("k", "v")
    c.execute_command("SADDEX", "s", 3600, "m")
    c.bgrewriteaof()
    wait_rewrite(c)
    base = (d / "appendonly.aof.2.base.aof").read_bytes()
    assert base.startswith(b"*") and resp(["SET", "k", "v"]) in base
    # Switched back on at run time: the next base is an RDB file, and a
    # restart reads the RESP base history and the new one alike.
    c.config_set("aof-use-rdb-preamble", "yes")
    c.set("k2", "v2")
    c.bgrewriteaof()
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.3.base.rdb seq 3 type b",
                                  "file appendonly.aof.3.incr.aof seq 3 type i"]
    assert (d / "appendonly.aof.3.base.rdb").read_bytes().startswith(b"REDIS")
    c.set("k3", "v3")
    s.kill()
    s.start()
    c = s.client()
    assert c.mget("k", "k2", "k3") == ["v", "v2", "v3"]
    assert 0 < c.execute_command("SPTTL", "s", "MEMBERS", 1, "m")[0] <= 3_600_000


def test_rdb_base_is_read_by_redis_tools(server_factory, tmp_path):
    """The RDB base and the directory pass redis-check-aof, and the RDB
    base file alone passes redis-check-rdb."""
    import shutil
    if not shutil.which("redis-check-aof"):
        pytest.skip("redis-check-aof not installed")
    s = server_factory("--appendonly", "yes")
    c = s.client()
    for i in range(50):
        c.hset(f"h{i}", mapping={"a": i, "b": "x" * i})
        c.execute_command("ZADDEX", f"z{i}", "PX", 60_000, i, "m")
    c.bgrewriteaof()
    wait_rewrite(c)
    c.set("after", "1")
    d = tmp_path / "appendonlydir"
    out = subprocess.run(["redis-check-aof", str(d / "appendonly.aof.manifest")],
                         capture_output=True, timeout=30)
    text = out.stdout.decode(errors="replace")
    assert out.returncode == 0, text
    assert "All AOF files and manifest are valid" in text
    out = subprocess.run(["redis-check-rdb", str(d / "appendonly.aof.2.base.rdb")],
                         capture_output=True, timeout=30)
    text = out.stdout.decode(errors="replace")
    assert out.returncode == 0 and "RDB looks OK" in text, text


def test_restart_loads_base_then_incremental_files(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = s.client()
    c.rpush("l", "a", "b")
    c.execute_command("ZADDEX", "z", "PX", 3_600_000, 1, "m")
    c.bgrewriteaof()
    wait_rewrite(c)
    c.rpush("l", "c")
    c.select(3)
    c.set("in3", "x")
    s.kill()
    s.start()
    c = s.client()
    assert c.lrange("l", 0, -1) == ["a", "b", "c"]
    assert 0 < c.execute_command("ZPTTL", "z", "MEMBERS", 1, "m")[0] <= 3_600_000
    c.select(3)
    assert c.get("in3") == "x"
    # The log goes on in the same incremental file.
    assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                  "file appendonly.aof.2.incr.aof seq 2 type i"]
    p = c.info("persistence")
    d = tmp_path / "appendonlydir"
    assert p["aof_base_size"] == (d / "appendonly.aof.2.base.rdb").stat().st_size
    assert p["aof_current_size"] == p["aof_base_size"] + (d / "appendonly.aof.2.incr.aof").stat().st_size


def test_failed_rewrites_leave_several_incremental_files(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always")
    c = s.client()
    c.set("k0", "0")
    c.config_set("rdb-key-save-delay", 10_000_000)
    for i in (1, 2):
        c.bgrewriteaof()
        assert wait_for(lambda: child_of(s.proc.pid) is not None)
        os.kill(child_of(s.proc.pid), signal.SIGKILL)
        wait_rewrite(c)
        c.set(f"k{i}", i)
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "err"
    assert manifest(tmp_path) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                  "file appendonly.aof.1.incr.aof seq 1 type i",
                                  "file appendonly.aof.2.incr.aof seq 2 type i",
                                  "file appendonly.aof.3.incr.aof seq 3 type i"]
    assert not [f for f in os.listdir(tmp_path) if f.startswith("temp-")]
    s.kill()
    s.start()
    c = s.client()
    assert c.mget("k0", "k1", "k2") == ["0", "1", "2"]
    c.bgrewriteaof()
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                  "file appendonly.aof.4.incr.aof seq 4 type i"]
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"


def test_history_kept_without_auto_gc(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--aof-disable-auto-gc", "yes")
    c = s.client()
    c.set("k", "v")
    c.bgrewriteaof()
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                  "file appendonly.aof.1.incr.aof seq 1 type h",
                                  "file appendonly.aof.1.base.rdb seq 1 type h",
                                  "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert len(files(tmp_path)) == 5
    c.config_set("aof-disable-auto-gc", "no")
    assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                  "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert files(tmp_path) == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof",
                               "appendonly.aof.manifest"]


def test_turned_on_at_run_time(server_factory, tmp_path):
    s = server_factory("--appendonly", "no", "--save", "")
    c = s.client()
    c.set("before", "1")
    assert not (tmp_path / "appendonlydir").exists()
    c.config_set("appendonly", "yes")
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                  "file appendonly.aof.1.incr.aof seq 1 type i"]
    assert b"before" in (tmp_path / "appendonlydir" / "appendonly.aof.1.base.rdb").read_bytes()
    c.set("after", "2")
    s.kill()
    s.start()
    assert s.client().info("persistence")["aof_enabled"] == 0  # the command line says no
    s.stop()
    s.args += ["--appendonly", "yes"]
    s.start()
    assert s.client().mget("before", "after") == ["1", "2"]


def test_first_rewrite_failing_leaves_no_manifest(server_factory, tmp_path):
    s = server_factory("--appendonly", "no", "--save", "")
    c = s.client()
    c.set("k", "v")
    c.config_set("rdb-key-save-delay", 10_000_000)
    c.config_set("appendonly", "yes")
    assert c.info("persistence")["aof_rewrite_in_progress"] == 1
    # What is logged meanwhile goes to a temporary file, not yet listed.
    c.set("k2", "v2")
    temp = tmp_path / "appendonlydir" / "temp-appendonly.aof.incr"
    assert b"k2" in temp.read_bytes()
    os.kill(child_of(s.proc.pid), signal.SIGKILL)
    assert wait_for(lambda: not temp.exists())
    assert not (tmp_path / "appendonlydir" / "appendonly.aof.manifest").exists()
    # Another rewrite is scheduled and, once let through, writes the base.
    c.config_set("rdb-key-save-delay", 0)
    pid = child_of(s.proc.pid)
    if pid:  # a second try started before the delay went: it fails too
        os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: (tmp_path / "appendonlydir" / "appendonly.aof.manifest").exists()
                    and c.info("persistence")["aof_rewrite_in_progress"] == 0, 30)
    assert manifest(tmp_path) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                  "file appendonly.aof.1.incr.aof seq 1 type i"]
    s.kill()
    s.args += ["--appendonly", "yes"]
    s.start()
    assert s.client().mget("k", "k2") == ["v", "v2"]


def test_upgrade_from_an_old_single_file(tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(
        resp(["SET", "a", "1"], ["RPUSH", "l", "x", "y"], ["SELECT", "2"], ["SET", "b", "2"]))
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        c = s.client()
        assert c.get("a") == "1" and c.lrange("l", 0, -1) == ["x", "y"]
        assert not (tmp_path / "appendonly.aof").exists()
        assert (tmp_path / "appendonlydir" / "appendonly.aof").exists()
        assert manifest(tmp_path) == ["file appendonly.aof seq 1 type b",
                                      "file appendonly.aof.1.incr.aof seq 1 type i"]
        c.set("c", "3")
        s.kill()
        s.start()
        c = s.client()
        assert c.mget("a", "c") == ["1", "3"]
        c.select(2)
        assert c.get("b") == "2"
        c.bgrewriteaof()
        wait_rewrite(c)
        assert manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                      "file appendonly.aof.2.incr.aof seq 2 type i"]
        assert not (tmp_path / "appendonlydir" / "appendonly.aof").exists()
    finally:
        s.stop()


def test_an_interrupted_upgrade_is_finished(tmp_path):
    # A crash after the manifest was written but before the file moved.
    (tmp_path / "appendonly.aof").write_bytes(resp(["SET", "a", "1"]))
    (tmp_path / "appendonlydir").mkdir()
    (tmp_path / "appendonlydir" / "appendonly.aof.manifest").write_text(
        "file appendonly.aof seq 1 type b\n")
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        assert s.client().get("a") == "1"
        assert not (tmp_path / "appendonly.aof").exists()
        assert manifest(tmp_path) == ["file appendonly.aof seq 1 type b",
                                      "file appendonly.aof.1.incr.aof seq 1 type i"]
    finally:
        s.stop()


def test_old_file_left_alone_with_the_aof_off(tmp_path):
    (tmp_path / "appendonly.aof").write_bytes(resp(["SET", "a", "1"]))
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "no", cwd=str(tmp_path))
    try:
        assert s.client().get("a") is None
        assert (tmp_path / "appendonly.aof").exists()
        assert not (tmp_path / "appendonlydir").exists()
    finally:
        s.stop()


@pytest.mark.parametrize("text, reason", [
    ("", "Found an empty AOF manifest"),
    ("file appendonly.aof.1.incr.aof seq 1 type i\n\n", "Invalid AOF manifest file format"),
    ("file appendonly.aof.2.incr.aof seq 2 type i\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
     "Found a non-monotonic sequence number"),
    ("file appendonly.aof.1.incr.aof seq 1 type x\n", "Unknown AOF file type"),
    ("file appendonly.aof.9.incr.aof seq 9 type i\n",
     "Unable to obtain the AOF file appendonly.aof.9.incr.aof length. stat: No such file or directory"),
])
def test_a_bad_manifest_stops_startup(tmp_path, text, reason):
    d = tmp_path / "appendonlydir"
    d.mkdir()
    for n in (1, 2):
        (d / f"appendonly.aof.{n}.incr.aof").write_bytes(resp(["SET", f"k{n}", "v"]))
    (d / "appendonly.aof.manifest").write_text(text)
    out = fails_to_start(tmp_path, "--appendonly", "yes")
    assert reason in out


def test_torn_tail_only_cut_from_the_last_file(tmp_path):
    d = tmp_path / "appendonlydir"
    d.mkdir()
    torn = resp(["SET", "a", "1"]) + b"*3\r\n$3\r\nSET\r\n$1\r\nb"
    (d / "appendonly.aof.1.base.aof").write_bytes(torn)
    (d / "appendonly.aof.1.incr.aof").write_bytes(resp(["SET", "c", "3"]))
    (d / "appendonly.aof.manifest").write_text(
        "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
    out = fails_to_start(tmp_path, "--appendonly", "yes")
    assert "the truncated file is not the last file" in out
    # In the last file it is cut (aof-load-truncated yes, the default).
    (d / "appendonly.aof.1.base.aof").write_bytes(resp(["SET", "a", "1"]))
    (d / "appendonly.aof.1.incr.aof").write_bytes(torn.replace(b"$1\r\na", b"$1\r\nc"))
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        assert s.client().mget("a", "c", "b") == ["1", "1", None]
        assert (d / "appendonly.aof.1.incr.aof").read_bytes() == resp(["SET", "c", "1"])
    finally:
        s.stop()


def test_debug_loadaof_reads_the_directory(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    c.set("a", "1")
    c.bgrewriteaof()
    wait_rewrite(c)
    c.set("b", "2")
    digest = c.execute_command("DEBUG", "DIGEST")
    assert c.execute_command("DEBUG", "LOADAOF") == "OK"
    assert c.execute_command("DEBUG", "DIGEST") == digest
    # With the AOF off, a rewrite still writes a base, and only a base.
    c.config_set("appendonly", "no")
    c.set("c", "3")
    c.bgrewriteaof()
    wait_rewrite(c)
    assert manifest(tmp_path) == ["file appendonly.aof.3.base.rdb seq 3 type b"]
    assert c.execute_command("DEBUG", "LOADAOF") == "OK"
    assert c.mget("a", "b", "c") == ["1", "2", "3"]


def test_crash_under_writes_and_rewrites_keeps_acknowledged_writes(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes", "--appendfsync", "always",
                       "--rdb-key-save-delay", "300")
    rng = random.Random(11)
    lost = []
    mid_rewrite = 0
    for cycle in range(8):
        writers = [Writer(s.port, f"c{cycle}w{n}") for n in range(3)]
        for w in writers:
            w.start()
        time.sleep(rng.uniform(0.05, 0.2))
        # A rewrite (or two) under way, finished or not, when the kill comes.
        s.client().bgrewriteaof()
        time.sleep(rng.uniform(0.0, 0.3))
        if cycle % 2:
            try:
                s.client().bgrewriteaof()
            except Exception:
                pass  # still running
            time.sleep(rng.uniform(0.0, 0.1))
        child = child_of(s.proc.pid)
        mid_rewrite += child is not None
        s.kill()
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for w in writers:
            w.join(10)
        s.start()
        c = s.client()
        for w in writers:
            lost += lost_writes(c, w)
        names = [line.split()[1] for line in manifest(tmp_path)]
        assert all((tmp_path / "appendonlydir" / n).exists() for n in names)
    assert lost == [], f"{len(lost)} acknowledged writes lost"
    assert mid_rewrite > 0  # some kills came while a rewrite was running
