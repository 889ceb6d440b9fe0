"""Connection, protocol and server commands through the real binary."""

import os
import socket
import threading
import time

import pytest
import redis

from conftest import EbbServer, Raw, outside_ip, raw_cmd, wait_until


def raw(port, data, read=4096, wait=0.2):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    time.sleep(wait)
    s.settimeout(1)
    out = b""
    try:
        while True:
            chunk = s.recv(read)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    s.close()
    return out


def raw_ping_msg(r):
    return raw_cmd(r, "PING", "x")


def test_ping_echo(r):
    assert r.ping() is True
    assert r.echo("hi") == "hi"
    assert raw_ping_msg(r) == "x"
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'echo' command"):
        r.execute_command("ECHO")


def test_unknown_command_text(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("NOSUCH", "a", "b")
    assert str(e.value) == "unknown command 'NOSUCH', with args beginning with: 'a' 'b' "


def test_inline_and_pipelined_raw(ebb):
    out = raw(ebb.port, b"PING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
    assert out == b"+PONG\r\n+OK\r\n$1\r\nv\r\n"


def test_protocol_errors_close_connection(ebb):
    assert raw(ebb.port, b"*1\r\n+x\r\n") == b"-ERR Protocol error: expected '$', got '+'\r\n"
    assert raw(ebb.port, b"*abc\r\n") == b"-ERR Protocol error: invalid multibulk length\r\n"
    assert raw(ebb.port, b"*1\r\n$-7\r\n") == b"-ERR Protocol error: invalid bulk length\r\n"
    assert raw(ebb.port, b'SET "a b\r\n') == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    # The server is still alive for others.
    assert raw(ebb.port, b"PING\r\n") == b"+PONG\r\n"


def test_binary_safe(rb):
    key = b"k\x00\xff\r\n"
    val = bytes(range(256))
    rb.set(key, val)
    assert rb.get(key) == val


def test_select_and_errors(r):
    r.set("a", "0")
    r.execute_command("SELECT", "1")
    assert r.get("a") is None
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        r.execute_command("SELECT", "16")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("SELECT", "x")


def test_hello_resp3(r3):
    assert r3.ping() is True
    info = r3.execute_command("HELLO", "3")
    assert info[b"proto"] if b"proto" in info else info["proto"] == 3


def test_hello_errors(r):
    with pytest.raises(redis.ResponseError, match="NOPROTO"):
        r.execute_command("HELLO", "4")


def test_multi_exec_discard(r):
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.get("a")
    assert p.execute() == [True, "1"]
    with pytest.raises(redis.ResponseError, match="EXEC without MULTI"):
        r.execute_command("EXEC")
    with pytest.raises(redis.ResponseError, match="DISCARD without MULTI"):
        r.execute_command("DISCARD")


def test_exec_abort_after_queue_error(ebb):
    c = ebb.client()
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError):
        c.execute_command("NOSUCH")
    with pytest.raises(redis.exceptions.ExecAbortError):
        c.execute_command("EXEC")


def test_watch_aborts_on_change(ebb, r):
    r.set("w", "1")
    c = ebb.client()
    c.execute_command("WATCH", "w")
    r.set("w", "2")
    c.execute_command("MULTI")
    c.execute_command("SET", "w", "3")
    assert c.execute_command("EXEC") is None
    assert r.get("w") == "2"


def test_pubsub_and_keyspace_events(ebb, r):
    p = ebb.client().pubsub()
    p.subscribe("ch")
    p.psubscribe("__keyspace@0__:*")
    wait_until(lambda: r.execute_command("PUBSUB", "NUMSUB", "ch")[1] == 1)
    assert r.publish("ch", "hello") == 1
    r.config_set("notify-keyspace-events", "KA")
    r.set("k", "v")
    got = []
    end = time.time() + 3
    while time.time() < end and len(got) < 2:
        m = p.get_message(timeout=0.2)
        if m and m["type"] in ("message", "pmessage"):
            got.append((m["channel"], m["data"]))
    assert ("ch", "hello") in got
    assert ("__keyspace@0__:k", "set") in got
    p.close()


def test_subscribed_context_rejects_commands(ebb):
    out = raw(ebb.port, b"SUBSCRIBE c\r\nGET x\r\nCONFIG GET x\r\n")
    assert b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n" in out
    # A subcommand is named in full, as Redis does.
    assert b"-ERR Can't execute 'config|get': only" in out


def test_checks_before_a_command_run_in_redis_order(ebb, r):
    # Over maxmemory, a subscribed client's write is refused for memory
    # first; a command not allowed in MULTI is refused as such first.
    r.config_set("maxmemory", 1)
    try:
        out = raw(ebb.port, b"SUBSCRIBE c\r\nSET a b\r\n")
        assert b"-OOM command not allowed when used memory > 'maxmemory'.\r\n" in out
        out = raw(ebb.port, b"MULTI\r\nSHUTDOWN\r\nEXEC\r\n")
        assert out.endswith(b"-ERR Command not allowed inside a transaction\r\n"
                            b"-EXECABORT Transaction discarded because of previous errors.\r\n")
    finally:
        r.config_set("maxmemory", 0)


def test_client_commands(ebb, r):
    assert r.client_setname("me") is True
    assert r.client_getname() == "me"
    cid = r.client_id()
    assert any(c["id"] == str(cid) and c["name"] == "me" for c in r.client_list())
    with pytest.raises(redis.ResponseError, match="Client names cannot contain spaces"):
        r.client_setname("a b")
    other = ebb.client()
    other.ping()
    oid = other.client_id()
    assert r.client_kill_filter(_id=oid) == 1


def test_config_get_set(r):
    assert r.config_get("port")["port"]
    r.config_set("hash-max-ziplist-entries", "64")
    assert r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"] == "64"
    r.config_set("hash-max-listpack-entries", "512")  # the default again
    with pytest.raises(redis.ResponseError, match="Unknown option"):
        r.config_set("no-such-option", "1")
    assert r.config_get("save") is not None


def test_command_introspection(r):
    assert raw_cmd(r, "COMMAND", "COUNT") > 20
    info = raw_cmd(r, "COMMAND", "INFO", "get")
    assert info[0][0] == "get" and info[0][1] == 2
    assert raw_cmd(r, "COMMAND", "GETKEYS", "SET", "k", "v") == ["k"]
    with pytest.raises(redis.ResponseError, match="Invalid command specified"):
        raw_cmd(r, "COMMAND", "GETKEYS", "NOPE", "x")


def test_info_and_time(r):
    info = r.info()
    assert "redis_version" in info
    t = r.time()
    assert t[0] > 1600000000


def test_info_keyspace_avg_ttl(r):
    r.set("plain", 1)
    assert r.info("keyspace")["db0"]["avg_ttl"] == 0
    r.set("a", 1, px=100_000)
    r.set("b", 1, px=300_000)
    ks = r.info("keyspace")["db0"]
    assert ks["keys"] == 3 and ks["expires"] == 2
    # The average time left: about 200 seconds.
    assert 195_000 <= ks["avg_ttl"] <= 200_000
    r.persist("b")
    assert 95_000 <= r.info("keyspace")["db0"]["avg_ttl"] <= 100_000
    r.delete("a")
    assert r.info("keyspace")["db0"]["avg_ttl"] == 0


def test_many_clients_and_stalled_client(ebb):
    stalled = socket.create_connection(("127.0.0.1", ebb.port))
    stalled.sendall(b"*2\r\n$3\r\nGET\r\n$100\r\nabc")  # incomplete request
    results = []

    def worker(i):
        c = ebb.client()
        for j in range(50):
            c.set(f"k{i}:{j}", j)
        results.append(c.get(f"k{i}:49"))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert results == ["49"] * 20
    stalled.close()


def test_auth(server_factory):
    s = server_factory("--requirepass", "secret")
    c = s.client()
    with pytest.raises(redis.AuthenticationError):
        c.ping()
    c2 = s.client(password="secret")
    assert c2.ping() is True
    with pytest.raises(redis.AuthenticationError, match="invalid username-password pair"):
        c2.execute_command("AUTH", "bad")


def test_config_file_with_redis_options(server_factory, tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text(
        "# a redis 7.0 style config\n"
        "bind 127.0.0.1\n"
        "save 900 1\nsave 300 10\n"
        "zset-max-listpack-entries 64\n"
        "set-max-intset-entries 256\n"
        "list-max-ziplist-size -2\n"
        "maxmemory 100mb\n"
        "maxmemory-policy allkeys-lru\n"
        "appendfsync everysec\n"
    )
    s = server_factory(str(conf))
    c = s.client()
    assert c.config_get("zset-max-listpack-entries")["zset-max-listpack-entries"] == "64"
    assert c.config_get("maxmemory")["maxmemory"] == str(100 * 1024 * 1024)
    assert c.config_get("save")["save"] == "900 1 300 10"


def test_shutdown_command(server_factory):
    s = server_factory()
    c = s.client()
    c.shutdown(nosave=True)
    s.proc.wait(5)
    assert s.proc.returncode == 0


def test_shutdown_nosave_and_save(server_factory):
    # NOSAVE: nothing is written, though the default save rules would.
    s = server_factory()
    c = s.client()
    c.set("lost", "1")
    assert str(raw_or_error(c, "SHUTDOWN", "SAVE", "NOSAVE")) == "syntax error"
    c.shutdown(nosave=True)
    s.proc.wait(5)
    # SAVE: a snapshot is written, though no save rule asks for one.
    s = server_factory("--save", "")
    c = s.client()
    assert c.get("lost") is None
    c.set("kept", "1")
    c.shutdown(save=True)
    s.proc.wait(5)
    c = server_factory().client()
    assert c.get("kept") == "1"
    assert c.get("lost") is None


def raw_or_error(c, *args):
    try:
        return c.execute_command(*args)
    except redis.ResponseError as e:
        return e


def test_random_garbage_never_kills_the_server(ebb):
    import random

    rng = random.Random(1)
    frames = [
        b"*3\r\n$3\r\nSET\r\n$-1\r\n",
        b"*99999999999999999999\r\n",
        b"*2\r\n$999999999999\r\n",
        b"$5\r\nhello\r\n",
        b'"' * 1000 + b"\r\n",
        b"*1\r\n$4\r\nPIN",
        b"\x00\xff\r\n\r\n*0\r\n*-1\r\n",
        b"x" * (70 * 1024),
    ]
    for i in range(60):
        s = socket.create_connection(("127.0.0.1", ebb.port))
        if i < len(frames):
            data = frames[i]
        else:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 400)))
        try:
            s.sendall(data)
            s.settimeout(0.05)
            s.recv(4096)
        except (socket.timeout, ConnectionError, OSError):
            pass
        s.close()
    c = ebb.client()
    assert c.ping() is True


def test_protected_mode_refuses_outside_clients_without_a_password(server_factory):
    import socket

    ip = outside_ip()
    if ip is None:
        pytest.skip("no non-loopback address")
    s = server_factory("--bind", "0.0.0.0")

    def first_line(host):
        c = socket.create_connection((host, s.port), timeout=5)
        try:
            c.sendall(b"PING\r\n")
            return c.recv(4096).split(b"\r\n")[0]
        finally:
            c.close()

    assert first_line(ip).startswith(b"-DENIED ")
    assert first_line("127.0.0.1") == b"+PONG"
    s.client().config_set("protected-mode", "no")
    assert first_line(ip) == b"+PONG"
    c = s.client()
    c.config_set("protected-mode", "yes")
    c.config_set("requirepass", "secret")
    assert first_line(ip).startswith(b"-NOAUTH")


def _worker_threads(pid):
    names = []
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/comm") as f:
            names.append(f.read().strip())
    return names.count("tokio-rt-worker")


def test_io_threads_sets_the_connection_threads(server_factory, tmp_path):
    # Redis's default: one thread serves every connection.
    s = server_factory()
    c = s.client()
    assert c.config_get("io-threads") == {"io-threads": "1"}
    # Threads start in the background: give them a moment.
    time.sleep(0.2)
    assert _worker_threads(s.proc.pid) == 1
    # Fixed at startup, as in Redis.
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("io-threads", "2")
    s3 = server_factory("--io-threads", "3")
    c3 = s3.client()
    assert c3.config_get("io-threads") == {"io-threads": "3"}
    assert wait_until(lambda: _worker_threads(s3.proc.pid) == 3)
    # Every connection is served whatever the thread count.
    clients = [s3.client() for _ in range(8)]
    for i, x in enumerate(clients):
        x.set(f"k{i}", i)
    assert [int(x.get(f"k{i}")) for i, x in enumerate(clients)] == list(range(8))
    for bad in ("0", "129"):
        conf = tmp_path / f"bad{bad}.conf"
        conf.write_text(f"io-threads {bad}\n")
        with pytest.raises(RuntimeError, match="did not start"):
            server_factory(str(conf))


def test_unauthenticated_clients_send_only_short_requests(tmp_path):
    # Before AUTH (when one is required) a request may have at most 10
    # arguments of at most 16 KB: longer ones are refused with Redis's
    # texts and the connection closes, so no one can make the server
    # buffer a huge request without the password.
    s = EbbServer("--dir", str(tmp_path), "--requirepass", "pw", cwd=str(tmp_path))
    try:
        for request, text in [
            (b"*100\r\n", b"-ERR Protocol error: unauthenticated multibulk length\r\n"),
            (b"*1\r\n$100000000\r\n", b"-ERR Protocol error: unauthenticated bulk length\r\n"),
        ]:
            c = socket.create_connection(("127.0.0.1", s.port))
            c.settimeout(5)
            c.sendall(request)
            assert c.recv(200) == text
            assert c.recv(10) == b""
            c.close()
        # Refused commands whose replies go unread: past 1 KB of waiting
        # replies the connection is closed.
        c = socket.create_connection(("127.0.0.1", s.port))
        c.settimeout(5)
        c.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n5\r\n" * 200)
        time.sleep(0.3)
        got = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
        assert len(got) <= 1024
        c.close()
        # Once authenticated, the same sizes are fine.
        c = Raw(s.port)
        assert c.cmd("AUTH", "pw") == b"+OK\r\n"
        assert c.cmd("SET", "k", "x" * 100_000) == b"+OK\r\n"
        assert c.cmd("DEL", *[f"k{i}" for i in range(20)]) == b":0\r\n"
        c.close()
    finally:
        s.stop()


def test_limit_changes_reach_open_connections(tmp_path):
    """CONFIG SET of proto-max-bulk-len and client-query-buffer-limit
    applies to connections opened before it, as in Redis."""
    srv = EbbServer("--dir", str(tmp_path))
    try:
        old = socket.create_connection(("127.0.0.1", srv.port))
        old.settimeout(2)
        old.sendall(b"PING\r\n")
        assert old.recv(64) == b"+PONG\r\n"
        admin = srv.client()
        admin.config_set("proto-max-bulk-len", "1mb")
        old.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2097153\r\n")
        assert old.recv(256) == b"-ERR Protocol error: invalid bulk length\r\n"
        old.close()

        old = socket.create_connection(("127.0.0.1", srv.port))
        old.settimeout(2)
        old.sendall(b"PING\r\n")
        assert old.recv(64) == b"+PONG\r\n"
        # Bulk lengths allowed again: only the query buffer limit applies.
        admin.config_set("proto-max-bulk-len", "512mb")
        admin.config_set("client-query-buffer-limit", "1mb")
        # A request that never completes, past the new limit: closed.
        got = b""
        try:
            old.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"x" * 1_500_000)
            while True:
                chunk = old.recv(4096)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        assert got == b""
        assert admin.ping()
    finally:
        srv.stop()


def test_a_new_connection_counts_before_the_next_command(srv):
    # As in Redis, a connection whose connect() returned is a client for
    # every command sent after it: INFO, CLIENT LIST, CLIENT KILL.
    import re
    import socket

    def call(s, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(out)
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        if data.startswith(b"$"):
            head, _, _ = data.partition(b"\r\n")
            while len(data) < len(head) + 2 + int(head[1:]) + 2:
                data += s.recv(65536)
        return data

    main = socket.create_connection(("127.0.0.1", srv.port))
    for _ in range(40):
        fresh = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(3)]
        info = call(main, "INFO", "clients")
        assert re.search(rb"connected_clients:(\d+)", info).group(1) == b"4"
        assert call(main, "CLIENT", "LIST").count(b"id=") == 4
        port = fresh[0].getsockname()[1]
        assert call(main, "CLIENT", "KILL", f"127.0.0.1:{port}") == b"+OK\r\n"
        for s in fresh:
            s.close()
        # Closed connections are gone once the server has read the close.
        deadline = time.time() + 5
        while b"connected_clients:1\r\n" not in call(main, "INFO", "clients"):
            assert time.time() < deadline
            time.sleep(0.005)
    main.close()
