"""ebb as a module for Redis 7 (crates/ebb-module): Debian's redis-server
loads the built library, and the member-expiring types work there under the
`ebb.` prefix, with persistence, replication, events, active expiry and
cluster key checks coming from Redis itself."""

import glob
import threading
import time

import pytest
import redis

from conftest import MODULE, module_server, raw_cmd, RedisServer, wait_until



start = module_server



def test_module_loads_and_names_its_commands(m):
    mods = raw_cmd(m, "MODULE", "LIST")
    assert mods[0][0] == "name" and mods[0][1] == "ebb"
    info = raw_cmd(m, "COMMAND", "INFO", "ebb.zaddex", "ebb.saddex", "ebb.hexpire", "ebb.zrange", "ebb.get")
    assert info[0] is not None and info[1] is not None and info[2] is not None and info[3] is not None
    assert info[4] is None  # strings stay the server's own
    with pytest.raises(redis.ResponseError, match="unknown command"):
        m.execute_command("ebb.blpop", "k", 0)  # lists stay Redis's own


def test_command_info_has_arity_and_key_specs(m):
    info = raw_cmd(m, "COMMAND", "INFO", "ebb.zaddex", "ebb.zunionstore", "ebb.zrange")
    zaddex, zunionstore, zrange = info
    assert zaddex[1] == -6 and zunionstore[1] == -4 and zrange[1] == -4
    specs = zunionstore[8]
    assert specs[0][1] == ["OW", "update"] and specs[1][1] == ["RO", "access"]
    assert zrange[8][0][1] == ["RO", "access"]
    docs = raw_cmd(m, "COMMAND", "DOCS", "ebb.saddex")
    assert docs[0] == "ebb.saddex" and "summary" in docs[1]
    # Keys of a movable-key command, with what the command does to them.
    assert raw_cmd(m, "COMMAND", "GETKEYSANDFLAGS", "ebb.zunionstore", "d", 2, "a", "b") == [
        ["d", ["OW", "update"]], ["a", ["RO", "access"]], ["b", ["RO", "access"]]]


def test_five_recipes(m):
    now = int(time.time() * 1000)
    # Expiring push: members live 150 ms.
    assert m.execute_command("ebb.zaddex", "ts", "PX", 150, now, "a", now + 1, "b") == 2
    assert m.execute_command("ebb.zcard", "ts") == 2
    # Bucket counter: INCR keeps the deadline of an existing bucket.
    assert m.execute_command("ebb.zaddex", "cnt", "INCR", "KEEPTTL", "EX", 3600, 1, "m1") == "1"
    assert m.execute_command("ebb.zaddex", "cnt", "INCR", "KEEPTTL", "EX", 3600, 1, "m1") == "2"
    assert 3590 <= m.execute_command("ebb.zttl", "cnt", "MEMBERS", 1, "m1")[0] <= 3600
    # Dedup.
    assert m.execute_command("ebb.saddex", "seen", 5184000, "id1") == 1
    assert m.execute_command("ebb.saddex", "seen", 5184000, "id1") == 0
    assert m.execute_command("ebb.sismember", "seen", "id1") == 1
    # Capped recency: newest 3 kept.
    for i in range(5):
        m.execute_command("ebb.zaddex", "recent", "CAP", 3, "EX", 3600, now + i, f"p{i}")
    assert m.execute_command("ebb.zrevrange", "recent", 0, -1) == ["p4", "p3", "p2"]
    # Limit admission: at most 3 live codes.
    assert m.execute_command("ebb.saddex", "otp", "LIMIT", 3, 300, "c1", "c2") == 2
    assert m.execute_command("ebb.saddex", "otp", "LIMIT", 3, 300, "c3") == 1
    assert m.execute_command("ebb.saddex", "otp", "LIMIT", 3, 300, "c4") == -1
    assert m.execute_command("ebb.scard", "otp") == 3
    # The expiring push's members are gone after their deadline.
    time.sleep(0.2)
    assert m.execute_command("ebb.zrange", "ts", 0, -1) == []


def test_active_expiry_deletes_the_key_without_access(mod, m):
    m.config_set("notify-keyspace-events", "KEA")
    sub = mod.client().pubsub()
    sub.psubscribe("__keyevent@0__:*")
    sub.get_message(timeout=1)
    m.execute_command("ebb.saddex", "s", 1, "x")
    m.execute_command("ebb.sadd", "s", "keep")
    m.execute_command("ebb.hsetex", "h", "PX", 100, "FIELDS", 1, "f", "v")
    assert m.exists("s", "h") == 2
    # Nobody touches "h": the module's timer removes its field, then the key.
    assert wait_until(lambda: m.exists("h") == 0, 2)
    events = []
    while True:
        msg = sub.get_message(timeout=0.5)
        if msg is None:
            break
        events.append((msg["channel"], msg["data"]))
    assert ("__keyevent@0__:hexpired", "h") in events
    assert ("__keyevent@0__:del", "h") in events
    assert wait_until(lambda: m.execute_command("ebb.smembers", "s") == ["keep"], 2)
    sub.close()


def test_resp3_replies(mod):
    c = mod.client(protocol=3)
    c.execute_command("ebb.zadd", "z", 1.5, "a")
    assert c.execute_command("ebb.zscore", "z", "a") == 1.5
    c.execute_command("ebb.hset", "h", "f", "v")
    assert c.execute_command("ebb.hgetall", "h") == {"f": "v"}
    assert c.execute_command("ebb.zrange", "z", 0, -1, "WITHSCORES") == [["a", 1.5]]
    c.close()


def test_types_do_not_mix_and_type_names_the_collection(m):
    m.sadd("native", "a")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        m.execute_command("ebb.sadd", "native", "b")
    m.execute_command("ebb.zadd", "z", 1, "a")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        m.sadd("z", "b")
    assert m.type("z") == "ebb-value"
    assert m.execute_command("ebb.type", "z") == "zset"
    assert m.execute_command("ebb.type", "native") == "set"
    assert m.execute_command("ebb.type", "nothing") == "none"
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'ebb.zadd'"):
        m.execute_command("ebb.zadd", "z")
    with pytest.raises(redis.ResponseError, match="not a valid float"):
        m.execute_command("ebb.zadd", "z", "x", "a")
    # A store command overwrites a key of any type, as in Redis.
    m.execute_command("ebb.sadd", "s1", "x", "y")
    m.set("dest", "string")
    assert m.execute_command("ebb.sunionstore", "dest", "s1") == 2
    assert m.execute_command("ebb.smembers", "dest") == ["x", "y"] or sorted(
        m.execute_command("ebb.smembers", "dest")) == ["x", "y"]
    # An empty result deletes the destination.
    assert m.execute_command("ebb.sinterstore", "dest", "s1", "nothing") == 0
    assert m.exists("dest") == 0


def test_key_ttl_is_the_servers(m):
    m.execute_command("ebb.zadd", "z", 1, "a")
    assert m.expire("z", 100)
    assert m.execute_command("ebb.ttl", "z") == 100
    assert m.execute_command("ebb.zadd", "z", 2, "b") == 1
    assert m.ttl("z") == 100  # a write keeps the key's TTL
    assert m.execute_command("ebb.persist", "z") == 1
    assert m.ttl("z") == -1
    m.expire("z", 100)
    m.execute_command("ebb.zadd", "src", 5, "q")
    m.execute_command("ebb.zunionstore", "z", 1, "src")
    assert m.ttl("z") == -1  # a store replaces the key and its TTL
    m.pexpire("z", 50)
    assert wait_until(lambda: m.exists("z") == 0, 2)


def test_transactions_scripts_and_watch(mod, m):
    p = m.pipeline(transaction=True)
    p.execute_command("ebb.saddex", "t", 100, "a")
    p.execute_command("ebb.scard", "t")
    assert p.execute() == [1, 1]
    assert m.eval("return redis.call('ebb.zaddex', KEYS[1], 'EX', 100, 1, 'm')", 1, "lz") == 1
    assert m.execute_command("ebb.zscore", "lz", "m") == "1"
    # Another client's write aborts a WATCH on the key.
    other = mod.client()
    with m.pipeline() as p:
        p.watch("t")
        other.execute_command("ebb.sadd", "t", "b")
        p.multi()
        p.execute_command("ebb.scard", "t")
        with pytest.raises(redis.WatchError):
            p.execute()
    # So does a member removed by expiry.
    m.execute_command("ebb.zaddex", "w", "PX", 100, 1, "gone")
    m.execute_command("ebb.zadd", "w", 2, "stays")
    with m.pipeline() as p:
        p.watch("w")
        time.sleep(0.3)
        p.multi()
        p.execute_command("ebb.zcard", "w")
        with pytest.raises(redis.WatchError):
            p.execute()
    other.close()


def test_snapshot_keeps_members_and_deadlines(tmp_path):
    s = start(tmp_path)
    m = s.client(protocol=2)
    m.execute_command("ebb.zaddex", "z", "PX", 100000, 1, "a", 2, "b")
    m.execute_command("ebb.zadd", "z", 3, "c")
    m.execute_command("ebb.hsetex", "h", "PX", 100000, "FIELDS", 1, "f", "v")
    m.execute_command("ebb.sadd", "s", *[str(i) for i in range(1000)])
    m.execute_command("ebb.saddex", "soon", "1", "x")
    m.expire("s", 500)
    assert m.execute_command("DEBUG", "RELOAD") == "OK"
    assert m.execute_command("ebb.zrange", "z", 0, -1, "WITHSCORES") == ["a", "1", "b", "2", "c", "3"]
    ttls = m.execute_command("ebb.zpttl", "z", "MEMBERS", 3, "a", "b", "c")
    assert 90000 < ttls[0] <= 100000 and ttls[2] == -1
    assert m.execute_command("ebb.hgetall", "h") == ["f", "v"]
    assert m.execute_command("ebb.scard", "s") == 1000
    assert 490 < m.ttl("s") <= 500
    # A key loaded from the snapshot is still reclaimed on its own.
    assert wait_until(lambda: m.exists("soon") == 0, 3)
    # DUMP and RESTORE carry the module's values too.
    payload = m.dump("z")
    m.restore("z2", 0, payload)
    assert m.execute_command("ebb.zrange", "z2", 0, -1) == ["a", "b", "c"]
    m.close()
    s.stop()


def test_aof_logs_absolute_deadlines_and_expiry_removals(tmp_path):
    s = start(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    m = s.client(protocol=2)
    m.execute_command("ebb.zaddex", "z", "PX", 100000, 1, "a")
    m.execute_command("ebb.zaddex", "z", "PX", 100, 2, "short")
    m.execute_command("ebb.saddex", "s", 100000, "m")
    assert wait_until(lambda: m.execute_command("ebb.zcard", "z") == 1)
    time.sleep(0.1)
    log = b"".join(open(f, "rb").read() for f in glob.glob(str(tmp_path / "appendonlydir" / "*.incr.aof")))
    assert b"ebb.zpexpireat" in log  # relative TTLs logged as deadlines
    assert b"ebb.zrem" in log  # the member that expired, removed explicitly
    assert b" PX" not in log
    # A rewrite writes the module's commands, and a restart replays them.
    m.bgrewriteaof()
    assert wait_until(lambda: m.info("persistence")["aof_rewrite_in_progress"] == 0, 10)
    time.sleep(0.2)
    base = b"".join(open(f, "rb").read() for f in glob.glob(str(tmp_path / "appendonlydir" / "*.base.aof")))
    assert b"ebb.zadd" in base and b"ebb.zpexpireat" in base
    m.execute_command("ebb.hsetex", "h", "EX", 1000, "FIELDS", 1, "f", "v")
    m.close()
    s.stop()
    s = start(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    m = s.client(protocol=2)
    assert m.execute_command("ebb.zrange", "z", 0, -1) == ["a"]
    assert 90000 < m.execute_command("ebb.zpttl", "z", "MEMBERS", 1, "a")[0] <= 100000
    assert m.execute_command("ebb.sismember", "s", "m") == 1
    assert m.execute_command("ebb.httl", "h", "FIELDS", 1, "f")[0] > 900
    m.close()
    s.stop()


def test_rename_move_copy_swapdb_keep_active_expiry(m):
    for name in ("r", "mv", "cp", "sw"):
        m.execute_command("ebb.saddex", name, 1, "x")
    m.rename("r", "r2")
    m.move("mv", 3)
    m.copy("cp", "cp2")
    m.swapdb(0, 5)
    # Nobody reads them: each is reclaimed where it went.
    m.execute_command("SELECT", 5)
    assert wait_until(lambda: m.exists("r2", "cp", "cp2", "sw") == 0, 3)
    m.execute_command("SELECT", 3)
    assert wait_until(lambda: m.exists("mv") == 0, 3)


def test_replica_receives_writes_and_expiry_removals(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    primary = start(tmp_path / "p")
    replica = start(tmp_path / "r")
    p, r = primary.client(protocol=2), replica.client(protocol=2)
    try:
        r.replicaof("127.0.0.1", primary.port)
        p.execute_command("ebb.zaddex", "z", "PX", 300, 1, "soon")
        p.execute_command("ebb.zadd", "z", 2, "stays")
        assert wait_until(lambda: r.info("replication").get("master_link_status") == "up", 10)
        assert wait_until(lambda: r.exists("z") == 1, 5)
        # Writes after the synchronisation reach the replica, relative TTLs
        # as deadlines.
        p.execute_command("ebb.saddex", "s", 1, "x")
        assert wait_until(lambda: r.exists("s") == 1, 5)
        assert 0 < r.execute_command("ebb.spttl", "s", "MEMBERS", 1, "x")[0] <= 1000
        # The primary's timer removes expired members and replicates the
        # removals: the replica's keys go without anyone reading them there.
        assert wait_until(lambda: r.exists("s") == 0, 5)
        assert wait_until(lambda: p.execute_command("ebb.zrange", "z", 0, -1) == ["stays"], 5)
        assert r.execute_command("ebb.zrange", "z", 0, -1) == ["stays"]
        assert r.info("replication")["master_repl_offset"] > 0
        assert wait_until(lambda: r.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST"), 5)
    finally:
        p.close()
        r.close()
        replica.stop()
        primary.stop()


def test_rate_limiter_state_is_a_server_string_logged_and_replicated(tmp_path):
    # ebb.cl.throttle keeps its state as redis-cell does: one of the
    # server's own strings with a key TTL. The AOF and the replica get the
    # absolute form (SET ... PXAT), never the command, so a replay does not
    # depend on the time it runs at.
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    aof = ("--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always")
    primary = start(tmp_path / "p", *aof)
    replica = start(tmp_path / "r")
    p, r = primary.client(protocol=2), replica.client(protocol=2)
    try:
        r.replicaof("127.0.0.1", primary.port)
        assert wait_until(lambda: r.info("replication").get("master_link_status") == "up", 10)
        # 3 per minute, bursts of 2 more: 3 allowed at once, then refused.
        got = [p.execute_command("ebb.cl.throttle", "otp:1", 2, 3, 60) for _ in range(4)]
        assert [g[0] for g in got] == [0, 0, 0, 1]
        assert [g[2] for g in got] == [2, 1, 0, 0]
        assert got[3][1] == 3 and 19 <= got[3][3] <= 20 and 59 <= got[3][4] <= 60
        assert p.type("otp:1") == "string"
        assert 59000 < p.pttl("otp:1") <= 60000
        tat = p.get("otp:1")
        assert wait_until(lambda: r.get("otp:1") == tat, 5)
        assert 59000 < r.pttl("otp:1") <= 60000
        log = b"".join(open(f, "rb").read() for f in glob.glob(str(tmp_path / "p" / "appendonlydir" / "*.incr.aof")))
        # Three allowed requests wrote the state; the refused one did not.
        assert log.count(b"PXAT") == 3 and b"throttle" not in log
        # Quantity 0 costs nothing: as in redis-cell, it stores the same
        # state again, with the same deadline.
        assert p.execute_command("ebb.cl.throttle", "otp:1", 2, 3, 60, 0)[:3] == [0, 3, 0]
        assert p.get("otp:1") == tat
        # Redis's other types are refused; a string that is not a number is
        # redis-cell's error.
        p.rpush("l", "x")
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            p.execute_command("ebb.cl.throttle", "l", 1, 1, 1)
        assert p.lrange("l", 0, -1) == ["x"]
        p.set("s", "abc")
        with pytest.raises(redis.ResponseError, match="Cell error"):
            p.execute_command("ebb.cl.throttle", "s", 1, 1, 1)
        p.close()
        primary.stop()
        # A restart replays the absolute form: the limiter is still full.
        primary = start(tmp_path / "p", *aof)
        p = primary.client(protocol=2)
        assert p.get("otp:1") == tat
        assert p.execute_command("ebb.cl.throttle", "otp:1", 2, 3, 60)[0] == 1
    finally:
        p.close()
        r.close()
        replica.stop()
        primary.stop()


def test_cluster_checks_slots_of_module_keys(tmp_path):
    s = start(tmp_path, "--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf"))
    c = s.client(protocol=2)
    try:
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        assert wait_until(lambda: c.execute_command("CLUSTER", "INFO").find("cluster_state:ok") >= 0, 10)
        assert c.execute_command("ebb.saddex", "{u1}a", 100, "x") == 1
        with pytest.raises(redis.ResponseError, match="hash to the same slot"):
            c.execute_command("ebb.sunionstore", "{u1}dest", "{u2}b")
        # Keys found through the key-finder too (numkeys form).
        with pytest.raises(redis.ResponseError, match="hash to the same slot"):
            c.execute_command("ebb.zunionstore", "{u1}d", 2, "{u1}a", "{u3}c")
        assert c.execute_command("ebb.sunionstore", "{u1}dest", "{u1}a") == 1
    finally:
        c.close()
        s.stop()


def test_memory_is_counted_by_the_server(m):
    before = m.info("memory")["used_memory"]
    for i in range(20):
        m.execute_command("ebb.zaddex", f"k{i}", "EX", 1000,
                          *[x for j in range(500) for x in (j, f"member-{j}")])
    after = m.info("memory")["used_memory"]
    assert after - before > 300_000
    usage = m.memory_usage("k0")
    assert usage and usage > 5000
    m.flushall()
    assert m.info("memory")["used_memory"] < after - 250_000


def test_snapshot_with_members_past_their_deadline_loads(tmp_path):
    s = start(tmp_path)
    m = s.client(protocol=2)
    m.execute_command("ebb.saddex", "gone", 1, "m1", "m2")
    m.execute_command("ebb.zaddex", "part", "PX", 1000, 1, "old")
    m.execute_command("ebb.zadd", "part", 2, "new")
    m.save()
    m.close()
    s.stop()
    time.sleep(1.2)
    # Every member of "gone" is past its deadline in the file: the server
    # still starts, and the module's timer removes them.
    s = start(tmp_path)
    m = s.client(protocol=2)
    try:
        assert m.execute_command("ebb.zrange", "part", 0, -1) == ["new"]
        assert wait_until(lambda: m.exists("gone") == 0, 3)
    finally:
        m.close()
        s.stop()


def test_nothing_is_removed_while_clients_are_paused(tmp_path):
    s = start(tmp_path, "--appendonly", "yes")
    m = s.client(protocol=2)
    try:
        m.execute_command("ebb.saddex", "p", 1, "x")
        m.execute_command("ebb.sadd", "p", "keep")
        m.execute_command("CLIENT", "PAUSE", 2500, "WRITE")
        time.sleep(1.3)
        # Due, so hidden; but a failover must find the data as it was.
        assert m.execute_command("ebb.smembers", "p") == ["keep"]
        assert m.execute_command("ebb.scard", "p") == 1
        assert m.ping()
        m.execute_command("CLIENT", "UNPAUSE")
        assert m.execute_command("ebb.smembers", "p") == ["keep"]
        log = b"".join(open(f, "rb").read() for f in glob.glob(str(tmp_path / "appendonlydir" / "*.incr.aof")))
        assert b"ebb.srem" in log
    finally:
        m.close()
        s.stop()


def test_persist_and_ttl_of_a_server_key(m):
    m.set("s", "v", ex=100)
    assert m.execute_command("ebb.ttl", "s") == 100
    assert m.execute_command("ebb.persist", "s") == 1
    assert m.ttl("s") == -1
    assert m.get("s") == "v"


def test_digest_ignores_build_order(m):
    m.execute_command("ebb.zadd", "a", 1, "x", 2, "y")
    m.execute_command("ebb.zadd", "b", 2, "y", 1, "x")
    m.execute_command("ebb.sadd", "s1", *range(300))
    m.execute_command("ebb.sadd", "s2", *reversed(range(300)))
    digest = lambda k: m.execute_command("DEBUG", "DIGEST-VALUE", k)[0]
    assert digest("a") == digest("b")
    assert digest("s1") == digest("s2")
    m.execute_command("ebb.zpexpireat", "b", 9999999999999, "MEMBERS", 1, "x")
    assert digest("a") != digest("b")
    m.execute_command("ebb.zadd", "a", 3, "x")
    m.execute_command("ebb.zadd", "b", 1, "x")
    assert digest("a") != digest("b")


def waiting(server, *args):
    """Sends a (blocking) command from a client of its own, in a thread,
    and gives it 0.2 s to park. Returns the thread and a dict that receives
    the reply under "r"."""
    got = {}

    def run():
        c = server.client(protocol=2)
        try:
            got["r"] = c.execute_command(*args)
        finally:
            c.close()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    return t, got


def test_blocking_pops_wait_for_module_writes(mod, m):
    t1, one = waiting(mod, "ebb.bzpopmin", "q", 5)
    t2, two = waiting(mod, "ebb.bzpopmin", "q", 1)
    assert m.execute_command("CLIENT", "LIST").count("cmd=ebb.bzpopmin") == 2
    m.execute_command("ebb.zadd", "q", 7, "job")
    t1.join(5)
    t2.join(5)
    # The first to wait gets the member; the other times out.
    assert one["r"] == ["q", "job", "7"]
    assert two["r"] is None
    # BZMPOP too, and a TTL'd member added by ebb.zaddex.
    t, got = waiting(mod, "ebb.bzmpop", 0, 2, "x", "q", "MAX", "COUNT", 2)
    m.execute_command("ebb.zaddex", "q", "EX", 100, 1, "a", 2, "b", 3, "c")
    t.join(5)
    assert got["r"] == ["q", [["c", "3"], ["b", "2"]]]
    # Inside MULTI nothing blocks: a null reply at once, as in Redis.
    p = m.pipeline(transaction=True)
    p.execute_command("ebb.bzpopmin", "empty", 0)
    assert p.execute() == [None]
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        m.execute_command("ebb.bzpopmin", "q", -1)


def test_a_served_blocking_pop_is_logged_as_a_pop(tmp_path):
    s = start(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    m = s.client(protocol=2)
    try:
        t, got = waiting(s, "ebb.bzpopmax", "q", 5)
        m.execute_command("ebb.zadd", "q", 1, "a", 2, "b")
        t.join(5)
        assert got["r"] == ["q", "b", "2"]
        time.sleep(0.1)
        log = b"".join(open(f, "rb").read() for f in glob.glob(str(tmp_path / "appendonlydir" / "*.incr.aof")))
        assert b"ebb.zpopmax" in log and b"bzpopmax" not in log
    finally:
        m.close()
        s.stop()
    s = start(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    m = s.client(protocol=2)
    assert m.execute_command("ebb.zrange", "q", 0, -1) == ["a"]
    m.close()
    s.stop()


def test_member_channels_name_the_members(tmp_path):
    # Set at start-up like any option, or later with CONFIG SET.
    s = start(tmp_path, "--ebb.subkey-events", "ST", "--notify-keyspace-events", "Ksz")
    m = s.client(protocol=2)
    try:
        assert m.config_get("ebb.subkey-events") == {"ebb.subkey-events": "ST"}
        with pytest.raises(redis.ResponseError, match="S, T, I and V"):
            m.config_set("ebb.subkey-events", "SX")
        sub = s.client(protocol=2).pubsub()
        sub.psubscribe("__subkey*")
        sub.get_message(timeout=1)
        m.execute_command("ebb.saddex", "s", 1, "a", "bb")
        got = []
        end = time.time() + 3
        while time.time() < end and len(got) < 4:
            msg = sub.get_message(timeout=0.2)
            if msg and msg["type"] == "pmessage":
                got.append((msg["channel"], msg["data"]))
        assert got == [
            ("__subkeyspace@0__:s", "sexpire|1:a,2:bb"),
            ("__subkeyevent@0__:sexpire", "1:s|1:a,2:bb"),
            ("__subkeyspace@0__:s", "sexpired|1:a,2:bb"),
            ("__subkeyevent@0__:sexpired", "1:s|1:a,2:bb"),
        ]
        # Off again: no member channels.
        m.config_set("ebb.subkey-events", "")
        m.execute_command("ebb.saddex", "s2", 100, "x")
        assert sub.get_message(timeout=0.3) is None
        sub.close()
    finally:
        m.close()
        s.stop()


def test_a_retry_that_finds_only_due_members_keeps_waiting(tmp_path):
    s = start(tmp_path, "--appendonly", "yes")
    m = s.client(protocol=2)
    try:
        t, got = waiting(s, "ebb.bzpopmin", "k", 1)
        # The member is due before the parked client is retried.
        p = m.pipeline(transaction=True)
        p.execute_command("ebb.zaddex", "k", "PX", 1, 1, "a")
        p.execute_command("DEBUG", "SLEEP", 0.01)
        p.execute()
        t.join(5)
        assert got["r"] is None  # timed out: nothing live ever came
        assert m.ping()
        # A parked client on a key named like the command is woken too.
        t, got = waiting(s, "ebb.bzpopmin", "bzpopmin", 5)
        m.execute_command("ebb.zadd", "bzpopmin", 1, "x")
        t.join(5)
        assert got["r"] == ["bzpopmin", "x", "1"]
    finally:
        m.close()
        s.stop()


def test_a_refused_option_fails_the_load_cleanly(tmp_path):
    s = RedisServer(str(tmp_path), "--enable-module-command", "yes")
    m = s.client(protocol=2)
    try:
        with pytest.raises(redis.ResponseError):
            m.execute_command("MODULE", "LOADEX", MODULE, "CONFIG", "ebb.subkey-events", "XYZ")
        # Nothing of the module is left behind to call into.
        m.set("a", 1)
        m.delete("a")
        m.execute_command("SWAPDB", 0, 1)
        assert m.ping()
        m.execute_command("MODULE", "LOADEX", MODULE, "CONFIG", "ebb.subkey-events", "S")
        assert m.execute_command("ebb.sadd", "s", "x") == 1
    finally:
        m.close()
        s.stop()
