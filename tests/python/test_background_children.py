"""One background child at a time, as in Redis: BGREWRITEAOF during a
BGSAVE is scheduled for when the snapshot ends, BGSAVE during a rewrite is
refused unless SCHEDULEd, and turning the AOF off stops a running rewrite.
`rdb-key-save-delay` (microseconds per key) holds a child running."""

import time

import redis

from conftest import raw_cmd


def wait_for(pred, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def persistence(c):
    return c.info("persistence")


def test_a_rewrite_asked_during_a_snapshot_waits_for_it(server_factory):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    c.set("a", "1")
    c.set("b", "2")
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0)
    c.config_set("rdb-key-save-delay", 500_000)  # 2 keys: a 1 s snapshot
    assert raw_cmd(c, "BGSAVE") == "Background saving started"
    assert raw_cmd(c, "BGREWRITEAOF") == "Background append only file rewriting scheduled"
    assert persistence(c)["aof_rewrite_scheduled"] == 1
    # Still one child: a second snapshot is refused, scheduled or not.
    for args in (["BGSAVE"], ["BGSAVE", "SCHEDULE"]):
        try:
            raw_cmd(c, *args)
            raise AssertionError("BGSAVE accepted during a BGSAVE")
        except redis.ResponseError as e:
            assert "Background save already in progress" in str(e)
    c.config_set("rdb-key-save-delay", 0)
    # The snapshot ends, then the rewrite runs and ends.
    assert wait_for(lambda: persistence(c)["aof_rewrite_scheduled"] == 0)
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0)
    assert persistence(c)["rdb_bgsave_in_progress"] == 0
    assert c.get("a") == "1"


def test_a_snapshot_during_a_rewrite_is_refused_unless_scheduled(server_factory, tmp_path):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    c.set("a", "1")
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0)
    c.config_set("rdb-key-save-delay", 1_000_000)
    assert raw_cmd(c, "BGREWRITEAOF") == "Background append only file rewriting started"
    try:
        raw_cmd(c, "BGSAVE")
        raise AssertionError("BGSAVE accepted during a rewrite")
    except redis.ResponseError as e:
        assert "Another child process is active (AOF?)" in str(e)
    assert raw_cmd(c, "BGSAVE", "SCHEDULE") == "Background saving scheduled"
    try:
        raw_cmd(c, "BGREWRITEAOF")
        raise AssertionError("a second rewrite accepted")
    except redis.ResponseError as e:
        assert "already in progress" in str(e)
    snapshot = tmp_path / "dump.ebb"
    assert not snapshot.exists()
    c.config_set("rdb-key-save-delay", 0)
    # The rewrite ends, then the scheduled snapshot is written.
    assert wait_for(lambda: snapshot.exists())
    assert wait_for(lambda: persistence(c)["rdb_bgsave_in_progress"] == 0)
    assert persistence(c)["aof_rewrite_in_progress"] == 0


def test_turning_the_aof_off_stops_a_running_rewrite(server_factory):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    c.set("k", "v")
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0)
    c.config_set("rdb-key-save-delay", 10_000_000)  # 10 s for one key
    c.execute_command("BGREWRITEAOF")
    assert persistence(c)["aof_rewrite_in_progress"] == 1
    c.config_set("appendonly", "no")
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0, timeout=3)
    c.config_set("rdb-key-save-delay", 0)
    assert c.get("k") == "v"


def test_background_work_asked_inside_a_transaction_is_scheduled(server_factory):
    s = server_factory("--appendonly", "yes")
    c = s.client()
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0)
    forks = c.info("stats")["total_forks"]
    assert raw_cmd(c, "MULTI") == "OK"
    assert raw_cmd(c, "SET", "foo", "bar") == "QUEUED"
    assert raw_cmd(c, "BGREWRITEAOF") == "QUEUED"
    assert raw_cmd(c, "BGSAVE") == "QUEUED"
    assert raw_cmd(c, "EXEC") == [
        "OK",
        "Background append only file rewriting scheduled",
        "Background saving scheduled",
    ]
    # Both run once the transaction is over, one after the other.
    assert wait_for(lambda: c.info("stats")["total_forks"] >= forks + 2)
    assert wait_for(lambda: persistence(c)["aof_rewrite_in_progress"] == 0
                    and persistence(c)["rdb_bgsave_in_progress"] == 0)


def _children(pid):
    out = []
    import os

    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def test_a_child_left_by_a_killed_server_does_not_hold_the_port(server_factory):
    # As Redis's children, ebb's close their copies of the listening
    # sockets: after a kill -9 of the server, a restart binds the port at
    # once although the save goes on.
    import os
    import signal
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = server_factory("--port", str(port), "--save", "")
    c = s.client()
    c.set("k", "v")
    c.config_set("rdb-key-save-delay", 20_000_000)  # 20 s for one key
    c.bgsave()
    assert wait_for(lambda: persistence(c)["rdb_bgsave_in_progress"] == 1)
    kids = _children(s.proc.pid)
    assert kids
    try:
        s.kill()
        s.start()
        assert s.port == port
        assert s.client().ping()
    finally:
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass
