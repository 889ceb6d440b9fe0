"""INFO's fields as monitoring tools read them: every field redis-server
7.0 prints, in its order, with ebb's own figures where it has them (the
sampled rates, read and write calls, save and rewrite history, the last
load) and the idle values of what ebb does not have (replication, defrag).

Expectations are redis-server 7.0.15's; with AGAINST_REDIS=1 the `srv`
fixture is a redis-server and the file checks itself against it."""

import shutil
import time

import pytest

from conftest import AGAINST_REDIS, EbbServer, RedisServer, wait_until

# Fields ebb adds to Redis's.
EBB_ONLY = {"ebb_version", "pubsub_clients", "expired_members"}
# Per-command, per-error and per-database lines depend on what ran.
VARYING = ("cmdstat_", "errorstat_", "latency_percentiles_usec_", "db")


def names(c, *sections):
    # The reply's text, without redis-py's parsing into a dict.
    c.connection.send_command("INFO", *sections)
    text = c.connection.read_response()
    if isinstance(text, bytes):
        text = text.decode()
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            name = line.split(":", 1)[0]
            if not name.startswith(VARYING):
                out.append(name)
    return out


def values(c, section):
    return c.info(section)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
@pytest.mark.parametrize("aof", [False, True])
def test_every_field_of_redis_in_its_order(tmp_path, aof):
    extra = ("--appendonly", "yes") if aof else ()
    (tmp_path / "e").mkdir()
    (tmp_path / "r").mkdir()
    e = EbbServer("--dir", str(tmp_path / "e"), *extra, cwd=str(tmp_path / "e"))
    r = RedisServer(str(tmp_path / "r"), *extra)
    try:
        ec = e.client(single_connection_client=True)
        rc = r.client(single_connection_client=True)
        for c in (ec, rc):
            c.set("k", "v")
        want = names(rc, "everything")
        got = [n for n in names(ec, "everything") if n not in EBB_ONLY]
        assert got == want
    finally:
        e.stop()
        r.stop()


@pytest.fixture
def srv(tmp_path):
    s = RedisServer(str(tmp_path)) if AGAINST_REDIS else EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    yield s
    s.stop()


def test_instantaneous_rates_follow_the_traffic(srv):
    c = srv.client()
    pipe = c.pipeline(transaction=False)
    busy = {}

    def sampled():
        for _ in range(200):
            pipe.set("k", "x" * 100)
        pipe.execute()
        busy.update(values(c, "stats"))
        return busy["instantaneous_ops_per_sec"] > 1000

    assert wait_until(sampled, 5, 0)
    assert busy["instantaneous_input_kbps"] > 1.0
    assert busy["instantaneous_output_kbps"] > 0.1
    assert busy["instantaneous_input_repl_kbps"] == 0
    # Idle, the rates fall back (16 samples of 100 ms).
    assert wait_until(lambda: values(c, "stats")["instantaneous_ops_per_sec"] < 50, 5, 0.2)


def test_reads_and_writes_are_counted(srv):
    c = srv.client(single_connection_client=True)
    c.ping()
    before = values(c, "stats")
    for i in range(20):
        c.set(f"k{i}", i)
    after = values(c, "stats")
    # One read and one write per request at least (the INFO itself too).
    assert after["total_reads_processed"] - before["total_reads_processed"] >= 20
    assert after["total_writes_processed"] - before["total_writes_processed"] >= 20


def test_save_and_rewrite_history(srv):
    c = srv.client()
    p = values(c, "persistence")
    assert p["rdb_saves"] == 0 and p["aof_rewrites"] == 0
    assert p["rdb_last_bgsave_time_sec"] == -1 and p["rdb_current_bgsave_time_sec"] == -1
    assert p["aof_last_rewrite_time_sec"] == -1 and p["aof_current_rewrite_time_sec"] == -1
    assert p["aof_last_bgrewrite_status"] == "ok"
    c.set("k", "v")
    c.save()
    assert values(c, "persistence")["rdb_saves"] == 1
    c.bgsave()
    assert wait_until(lambda: values(c, "persistence")["rdb_bgsave_in_progress"] == 0, 10)
    p = values(c, "persistence")
    assert p["rdb_saves"] == 2 and p["rdb_last_bgsave_time_sec"] >= 0
    assert values(c, "stats")["latest_fork_usec"] > 0
    c.bgrewriteaof()
    assert wait_until(lambda: values(c, "persistence")["aof_rewrite_in_progress"] == 0, 10)
    p = values(c, "persistence")
    assert p["aof_rewrites"] == 1 and p["aof_last_rewrite_time_sec"] >= 0
    assert p["aof_last_bgrewrite_status"] == "ok" and p["aof_rewrites_consecutive_failures"] == 0
    c.config_resetstat()
    p = values(c, "persistence")
    assert p["rdb_saves"] == 0 and p["aof_rewrites"] == 0


def test_the_last_snapshot_load_counts_its_keys(tmp_path):
    args = ("--dir", str(tmp_path))
    s = RedisServer(str(tmp_path)) if AGAINST_REDIS else EbbServer(*args, cwd=str(tmp_path))
    c = s.client()
    for i in range(5):
        c.set(f"k{i}", i)
    c.set("short", 1, px=300)
    c.save()
    s.stop()
    time.sleep(0.4)
    s = RedisServer(str(tmp_path)) if AGAINST_REDIS else EbbServer(*args, cwd=str(tmp_path))
    try:
        p = values(s.client(), "persistence")
        assert p["rdb_last_load_keys_loaded"] == 5
        assert p["rdb_last_load_keys_expired"] == 1
    finally:
        s.stop()


def test_keys_expired_before_the_save_are_saved_and_counted_at_load(tmp_path):
    """As Redis: a snapshot holds keys whose TTL passed but that were not
    reclaimed yet, and the load that reads it counts them as expired."""
    args = ("--dir", str(tmp_path))
    s = RedisServer(str(tmp_path)) if AGAINST_REDIS else EbbServer(*args, cwd=str(tmp_path))
    c = s.client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    for i in range(3):
        c.set(f"k{i}", i)
    for i in range(4):
        c.set(f"gone{i}", i, px=10)
    time.sleep(0.05)
    c.save()
    s.stop()
    s = RedisServer(str(tmp_path)) if AGAINST_REDIS else EbbServer(*args, cwd=str(tmp_path))
    try:
        c = s.client()
        p = values(c, "persistence")
        assert p["rdb_last_load_keys_loaded"] == 3
        assert p["rdb_last_load_keys_expired"] == 4
        assert c.dbsize() == 3
    finally:
        s.stop()


def test_server_section_describes_the_host(srv):
    f = values(srv.client(), "server")
    assert f["os"].startswith("Linux ")
    assert f["arch_bits"] == 64
    assert f["configured_hz"] == f["hz"]
    assert 0 <= f["lru_clock"] < 1 << 24
    assert values(srv.client(), "memory")["total_system_memory"] > 0


def test_keyspace_hits_and_misses_count_reads_only(srv):
    c = srv.client(single_connection_client=True)
    c.set("a", "1")
    c.config_resetstat()
    c.get("a")                    # hit
    c.get("nokey")                # miss
    c.mget("a", "b")              # a hit, a miss
    c.append("a", "x")            # a write's lookup: neither
    c.hincrby("h", "f", 1)        # neither
    c.exists("a", "nokey")        # a hit, a miss
    c.sunion("h2", "nokey")       # two misses
    s = values(c, "stats")
    assert (s["keyspace_hits"], s["keyspace_misses"]) == (3, 5)
    # SET KEEPTTL and GETEX PERSIST read the TTL as a write does: neither.
    c.config_resetstat()
    c.set("a", "1", ex=100)
    c.set("a", "2", keepttl=True)  # neither
    c.set("nokey2", "2", keepttl=True)  # neither
    c.getex("a", persist=True)  # the GET's hit only
    s = values(c, "stats")
    assert (s["keyspace_hits"], s["keyspace_misses"]) == (1, 0)
