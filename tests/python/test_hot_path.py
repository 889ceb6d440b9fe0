"""The request hot path skips work no one looks at (keyspace events with
notifications off, WATCH bookkeeping with no watcher, wake-ups with no
blocked client, AOF logging with the AOF off) and publishes statistics once
per pipelined batch. These tests check that every observer still sees
exactly what it would see without those shortcuts, including observers
that appear while pipelines run."""

import socket
import threading
import time

import redis

from conftest import wait_until


def pipeline(client, cmds):
    p = client.pipeline(transaction=False)
    for c in cmds:
        p.execute_command(*c)
    return p.execute()


def test_statistics_count_every_pipelined_command_and_change(ebb):
    c = ebb.client()
    c.config_resetstat()
    before = int(c.info("stats")["total_commands_processed"])
    pipeline(c, [("SET", f"hp:{i}", "v") for i in range(50)])
    info = c.info("stats")
    # Each INFO is counted after it runs, as in Redis: the first one and
    # the 50 pipelined commands show in the second.
    assert int(info["total_commands_processed"]) == before + 51
    c.delete(*[f"hp:{i}" for i in range(50)])


def test_changes_since_save_follow_pipelined_writes(ebb):
    c = ebb.client()
    c.save()
    assert int(c.info("persistence")["rdb_changes_since_last_save"]) == 0
    pipeline(c, [("SET", "hp:a", "1"), ("INCR", "hp:a"), ("MSET", "hp:b", "1", "hp:c", "2"), ("GET", "hp:a")])
    assert int(c.info("persistence")["rdb_changes_since_last_save"]) == 4
    c.delete("hp:a", "hp:b", "hp:c")


def test_expired_keys_counted_with_notifications_off(r):
    r.config_resetstat()
    r.set("hp:e1", "v", px=20)
    r.set("hp:e2", "v", px=20)
    time.sleep(0.05)
    assert r.get("hp:e1") is None
    wait_until(lambda: int(r.info("stats")["expired_keys"]) == 2)


def test_notifications_turned_on_at_run_time_are_delivered(r, ebb):
    sub = ebb.client()
    ps = sub.pubsub()
    ps.psubscribe("__keyevent@0__:*")
    ps.get_message(timeout=1)
    r.config_set("notify-keyspace-events", "E$l")
    try:
        pipeline(r, [("SET", "hp:n", "v"), ("INCR", "hp:c"), ("LPUSH", "hp:l", "x")])
        got = []
        deadline = time.time() + 5
        while len(got) < 3 and time.time() < deadline:
            m = ps.get_message(timeout=0.5)
            if m and m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        assert got == [
            ("__keyevent@0__:set", "hp:n"),
            ("__keyevent@0__:incrby", "hp:c"),
            ("__keyevent@0__:lpush", "hp:l"),
        ]
        r.config_set("notify-keyspace-events", "")
        r.set("hp:n", "w")
        r.set("hp:marker", "1")
        assert ps.get_message(timeout=0.3) is None
    finally:
        r.config_set("notify-keyspace-events", "")
        ps.close()
        sub.close()


def test_watch_sees_writes_from_another_clients_pipeline(r, ebb):
    other = ebb.client()
    for cmds in (
        [("SET", "hp:w", "1")],
        [("INCR", "hp:w")],
        [("MSET", "hp:x", "1", "hp:w", "2")],
        [("LPUSH", "hp:wl", "a")],
    ):
        key = "hp:wl" if cmds[0][0] == "LPUSH" else "hp:w"
        with r.pipeline() as p:
            p.watch(key)
            pipeline(other, [("PING",), *cmds, ("PING",)])
            p.multi()
            p.set("hp:result", "x")
            try:
                p.execute()
                raise AssertionError(f"EXEC should abort after {cmds}")
            except redis.WatchError:
                pass
    # With the watcher gone, writes are not tracked and EXEC runs.
    with r.pipeline() as p:
        p.watch("hp:w")
        p.multi()
        p.set("hp:result", "y")
        assert p.execute() == [True]
    other.close()


def test_blocked_client_woken_by_pipelined_push(r, ebb):
    other = ebb.client()
    out = {}

    def block():
        c = ebb.client()
        out["r"] = c.blpop("hp:q", timeout=5)
        c.close()

    t = threading.Thread(target=block)
    t.start()
    wait_until(lambda: int(r.info("clients")["blocked_clients"]) == 1)
    pipeline(other, [("SET", "hp:z", "1"), ("RPUSH", "hp:q", "a", "b"), ("INCR", "hp:z")])
    t.join(6)
    assert out["r"] == ("hp:q", "a")
    assert r.lrange("hp:q", 0, -1) == ["b"]
    other.close()


def test_client_list_shows_the_last_command_of_a_batch(ebb):
    c = ebb.client()
    s = socket.create_connection(("127.0.0.1", ebb.port))
    try:
        s.sendall(b"CLIENT SETNAME hp\r\nSET hp:k v\r\nINCR hp:n\r\nLPUSH hp:l x\r\n")
        buf = b""
        while buf.count(b"\r\n") < 4:
            buf += s.recv(4096)
        line = [l for l in c.client_list() if l["name"] == "hp"][0]
        assert line["cmd"] == "lpush"
    finally:
        s.close()
        c.delete("hp:k", "hp:n", "hp:l")
        c.close()


def test_aof_turned_on_at_run_time_logs_pipelined_writes(server_factory):
    s = server_factory("--appendonly", "no")
    c = s.client()
    c.set("before", "1")
    c.config_set("appendonly", "yes")
    wait_until(lambda: int(c.info("persistence")["aof_rewrite_in_progress"]) == 0)
    pipeline(c, [("SET", "a", "1"), ("INCR", "n"), ("MSET", "b", "2", "c", "3"), ("RPUSH", "l", "x")])
    c.close()
    s.kill()
    # The AOF alone holds what was written (no snapshot was saved).
    c = server_factory("--appendonly", "yes").client()
    assert c.mget("before", "a", "n", "b", "c") == ["1", "1", "1", "2", "3"]
    assert c.lrange("l", 0, -1) == ["x"]
    c.close()


def test_client_list_idle_times(ebb):
    busy = ebb.client()
    idle = ebb.client()
    busy.client_setname("hp-busy")
    idle.client_setname("hp-idle")
    idle.set("hp:idle", "1")
    busy.set("hp:busy", "1")
    time.sleep(1.2)
    lines = {l["name"]: l for l in busy.client_list()}
    # CLIENT LIST is the busy client's own last command.
    assert int(lines["hp-busy"]["idle"]) == 0
    assert lines["hp-busy"]["cmd"] == "client|list"  # the subcommand, as Redis 7.0 shows it
    assert int(lines["hp-idle"]["idle"]) >= 1
    assert lines["hp-idle"]["cmd"] == "set"
    busy.delete("hp:idle", "hp:busy")
    busy.close()
    idle.close()


def test_a_paused_write_sees_the_time_it_runs_at(r, ebb):
    other = ebb.client()
    r.set("hp:p", "v", px=300)
    other.execute_command("CLIENT", "PAUSE", "500", "WRITE")
    start = time.time()
    # Runs once the pause ends, when the key's TTL has passed.
    assert r.set("hp:p", "w", nx=True) is True
    assert time.time() - start >= 0.4
    other.close()


def test_pipelines_over_large_collections_answer_as_without_lookahead(ebb):
    """A pipeline's waiting requests are looked at ahead and what they
    will read is loaded early (keys of a large keyspace, members of large
    sets, sorted sets and hashes). Only a hint: every reply is what the
    commands give one at a time, for present and absent members, wrong
    types, odd and empty arguments and requests cut across reads."""
    c = ebb.client()
    n = 120_000
    for start in range(0, n, 10_000):
        p = c.pipeline(transaction=False)
        p.execute_command("ZADDEX", "la:z", "PX", "600000",
                          *[x for i in range(start, start + 10_000) for x in ("1.5", f"m:{i}")])
        p.execute_command("SADDEX", "la:s", "600", *[f"m:{i}" for i in range(start, start + 10_000)])
        p.hset("la:h", mapping={f"m:{i}": str(i) for i in range(start, start + 10_000)})
        p.execute()
    c.set("la:str", "x")
    # Runs of requests on one key, so the look-ahead loads their members,
    # broken by other keys, wrong types and empty members now and then.
    cmds, want = [], []
    for i in range(0, 2 * n, 997):
        m, present = f"m:{i}", i < n
        cmds.append(("ZSCORE", "la:z", m))
        want.append(1.5 if present else None)
        if i % 7 == 0:
            cmds += [("SISMEMBER", "la:str", m), ("HGET", "la:h", ""), ("ZSCORE", "la:absent", m)]
            want += ["WRONGTYPE", None, None]
    for i in range(0, 2 * n, 997):
        m, present = f"m:{i}", i < n
        cmds += [("ZADDEX", "la:z", "XX", "PX", "600000", "2", m), ("SISMEMBER", "la:s", m)]
        want += [0, 1 if present else 0]
    for i in range(0, 2 * n, 997):
        cmds.append(("HGET", "la:h", f"m:{i}"))
        want.append(str(i) if i < n else None)
    p = c.pipeline(transaction=False)
    for cmd in cmds:
        p.execute_command(*cmd)
    got = p.execute(raise_on_error=False)
    assert len(got) == len(want)
    for cmd, g, w in zip(cmds, got, want):
        if w == "WRONGTYPE":
            assert isinstance(g, redis.ResponseError) and str(g).startswith("WRONGTYPE"), cmd
        else:
            assert g == w, cmd
    assert c.zscore("la:z", "m:0") == 2.0
    assert c.zcard("la:z") == n and c.scard("la:s") == n and c.hlen("la:h") == n
    # The same traffic written in pieces that cut requests in two.
    s = socket.create_connection(("127.0.0.1", ebb.port))
    try:
        raw = b"".join(
            b"*3\r\n$9\r\nSISMEMBER\r\n$4\r\nla:s\r\n$%d\r\n%s\r\n" % (len(m), m)
            for m in (f"m:{i}".encode() for i in range(0, 2 * n, 499)))
        count = len(range(0, 2 * n, 499))
        for at in range(0, len(raw), 1000):
            s.sendall(raw[at:at + 1000])
        data = b""
        while data.count(b"\r\n") < count:
            data += s.recv(65536)
        expected = b"".join(b":1\r\n" if i < n else b":0\r\n" for i in range(0, 2 * n, 499))
        assert data == expected
    finally:
        s.close()
    c.delete("la:z", "la:s", "la:h", "la:str")
