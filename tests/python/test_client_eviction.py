"""Client eviction (`maxmemory-clients`) and the per-client memory CLIENT
LIST reports (`tot-mem`, `qbuf`, `argv-mem`, `multi-mem`, `omem`), as
Redis 7.0 has them: a client's memory grows with what it sends, queues,
watches, subscribes to and leaves unread; when the clients together hold
the limit, the largest are closed (never one with CLIENT NO-EVICT on)
and INFO's `evicted_clients` counts them. Runs against redis-server too
(AGAINST_REDIS=1)."""

import socket
import time

import pytest
import redis

from conftest import EbbServer, ebb_only, wait_until

LIMIT = 3_000_000


@pytest.fixture
def admin(srv):
    """A client spared from eviction, as Redis's own tests keep theirs."""
    c = srv.client(single_connection_client=True)
    c.client_setname("admin")
    c.execute_command("CLIENT", "NO-EVICT", "on")
    yield c
    c.close()


def named(admin, name):
    """The CLIENT LIST fields of the client named `name`, or None."""
    for c in admin.client_list():
        if c.get("name") == name:
            return c
    return None


def field(admin, name, f):
    c = named(admin, name)
    assert c is not None, f"no client named {name}"
    return int(c[f])


def raw(srv, name, rcvbuf=None):
    s = socket.create_connection(("127.0.0.1", srv.port))
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.sendall(f"CLIENT SETNAME {name}\r\n".encode())
    assert s.recv(100) == b"+OK\r\n"
    return s


def send_quietly(s, data):
    """Sends what the server may cut short by closing the connection."""
    try:
        s.sendall(data)
    except OSError:
        pass


def big_argument(n):
    """A request of one argument of `n` bytes, all but its final CRLF."""
    return b"*1\r\n$%d\r\n" % n + b"v" * n


def closed(s):
    try:
        return s.recv(100) == b""
    except OSError:
        return True


def evicted(admin):
    return admin.info("stats")["evicted_clients"]


# Memory as CLIENT LIST shows it.


def test_an_incomplete_request_shows_in_qbuf_argv_mem_and_tot_mem(srv, admin):
    s = raw(srv, "partial")
    s.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nkey1\r\n$100000\r\n" + b"v" * 60000)
    # The arguments read so far have left the query buffer; a large one
    # being received has room for all of it at once.
    assert wait_until(lambda: field(admin, "partial", "qbuf") == 60000)
    assert field(admin, "partial", "argv-mem") == 7
    assert field(admin, "partial", "tot-mem") > 100000
    s.sendall(b"v" * 40000 + b"\r\n")
    assert s.recv(100) == b"+OK\r\n"
    assert wait_until(lambda: field(admin, "partial", "qbuf") == 0)
    assert field(admin, "partial", "argv-mem") == 0
    assert admin.strlen("key1") == 100000
    s.close()


def test_the_caller_sees_its_own_command_in_qbuf_and_argv_mem(srv, admin):
    me = named(admin, "admin")
    assert me["qbuf"] == "26"  # *2 $6 client $4 list
    assert me["argv-mem"] == "10"
    assert me["cmd"] == "client|list"
    assert int(me["tot-mem"]) > 0


def test_queued_commands_count_in_multi_mem(srv, admin):
    c = srv.client(single_connection_client=True)
    c.client_setname("tx")
    assert field(admin, "tx", "multi-mem") == 0
    c.execute_command("MULTI")
    for _ in range(3):
        c.execute_command("SET", "k", "x" * 100000)
    assert field(admin, "tx", "multi-mem") > 300000
    assert field(admin, "tx", "tot-mem") > 300000
    assert named(admin, "tx")["multi"] == "3"
    c.execute_command("DISCARD")
    assert wait_until(lambda: field(admin, "tx", "multi-mem") == 0)
    c.close()


def command(*words):
    """A request in RESP."""
    out = b"*%d\r\n" % len(words)
    for w in words:
        w = w.encode()
        out += b"$%d\r\n%s\r\n" % (len(w), w)
    return out


@pytest.mark.parametrize("grow,undo", [
    (["WATCH", *(f"key:{i}" for i in range(1000))], ["UNWATCH"]),
    (["SUBSCRIBE", *(f"chan:{i}" for i in range(1000))], ["UNSUBSCRIBE"]),
    (["PSUBSCRIBE", *(f"pat:{i}:*" for i in range(1000))], ["PUNSUBSCRIBE"]),
    (["CLIENT", "TRACKING", "on", "BCAST", *(w for i in range(1000) for w in ("PREFIX", f"p{i:04}:"))],
     ["CLIENT", "TRACKING", "off"]),
], ids=["watch", "subscribe", "psubscribe", "tracking-prefixes"])
def test_watches_subscriptions_and_prefixes_grow_tot_mem(srv, admin, grow, undo):
    s = raw(srv, "lists")
    base = field(admin, "lists", "tot-mem")
    s.sendall(command(*grow))
    assert wait_until(lambda: field(admin, "lists", "tot-mem") > base + 20000)
    s.sendall(command(*undo))
    assert wait_until(lambda: field(admin, "lists", "tot-mem") < base + 20000)
    s.close()


def test_replies_a_client_leaves_unread_count_in_omem_and_tot_mem(srv, admin):
    admin.setrange("big", 200000, "v")
    s = raw(srv, "slow")
    s.sendall(b"GET big\r\n" * 100)
    # The server goes on reading and answering while replies wait: much
    # of the 20 MB stays with the server, more than the sockets hold.
    assert wait_until(lambda: field(admin, "slow", "omem") > 5_000_000)
    c = named(admin, "slow")
    assert int(c["tot-mem"]) >= int(c["omem"])
    # The client is still served once it reads.
    got = 0
    while got < 100 * 200008:
        chunk = s.recv(1 << 20)
        assert chunk
        got += len(chunk)
    assert wait_until(lambda: field(admin, "slow", "omem") == 0)
    s.close()


def test_info_counts_the_clients_memory(srv, admin):
    s = raw(srv, "holder")
    s.sendall(big_argument(1_000_000)[:-10])
    assert wait_until(lambda: field(admin, "holder", "qbuf") > 900_000)
    # Redis refreshes this figure in its cron.
    assert wait_until(lambda: admin.info("memory")["mem_clients_normal"] > 1_000_000, 3)
    s.close()


# Eviction.


def test_a_client_over_the_limit_is_evicted_and_counted(srv, admin):
    admin.config_set("maxmemory-clients", LIMIT)
    assert evicted(admin) == 0
    s = raw(srv, "hog")
    send_quietly(s, big_argument(LIMIT))
    assert wait_until(lambda: named(admin, "hog") is None)
    assert closed(s)
    assert evicted(admin) == 1
    admin.config_resetstat()
    assert evicted(admin) == 0
    # The others go on.
    assert admin.ping()
    c = srv.client()
    assert c.ping()
    c.close()


def test_a_large_transaction_gets_its_client_evicted(srv, admin):
    admin.config_set("maxmemory-clients", LIMIT)
    s = raw(srv, "tx")
    s.sendall(b"MULTI\r\n")
    assert s.recv(100) == b"+OK\r\n"
    for _ in range(8):
        send_quietly(s, command("SET", "k", "v" * (LIMIT // 4)))
        if closed(s):
            break
    assert named(admin, "tx") is None
    assert evicted(admin) == 1


def test_a_stalled_subscriber_is_evicted_by_its_backlog(srv, admin):
    admin.config_set("maxmemory-clients", LIMIT)
    s = raw(srv, "stalled", rcvbuf=4096)
    s.sendall(b"SUBSCRIBE feed\r\n")
    assert wait_until(lambda: named(admin, "stalled")["sub"] == "1")
    msg = "m" * 100000
    end = time.time() + 20
    while named(admin, "stalled") is not None and time.time() < end:
        for _ in range(10):
            admin.publish("feed", msg)
    assert named(admin, "stalled") is None
    assert evicted(admin) == 1
    s.close()


def test_no_evict_spares_a_client_over_the_limit(srv, admin):
    admin.config_set("maxmemory-clients", LIMIT)
    s = raw(srv, "spared")
    s.sendall(b"CLIENT NO-EVICT on\r\n")
    assert s.recv(100) == b"+OK\r\n"
    assert "e" in named(admin, "spared")["flags"]
    s.sendall(big_argument(LIMIT + 1))
    assert wait_until(lambda: field(admin, "spared", "qbuf") == LIMIT + 1)
    assert field(admin, "spared", "tot-mem") > LIMIT
    assert evicted(admin) == 0
    s.close()


def test_lowering_the_limit_evicts_the_largest_clients_first(srv, admin):
    sizes = {"small": 150_000, "medium": 600_000, "large": 2_400_000}
    socks = []
    for name, size in sizes.items():
        s = raw(srv, name)
        s.sendall(big_argument(size))
        socks.append(s)
        assert wait_until(lambda: field(admin, name, "qbuf") == size)
    mem = {name: field(admin, name, "tot-mem") for name in sizes}
    control = field(admin, "admin", "tot-mem")
    margin = 50_000
    admin.config_set("maxmemory-clients", mem["small"] + mem["medium"] + control + margin)
    names = {c["name"] for c in admin.client_list()}
    assert "large" not in names and {"small", "medium"} <= names
    admin.config_set("maxmemory-clients", mem["small"] + control + margin)
    names = {c["name"] for c in admin.client_list()}
    assert "medium" not in names and "small" in names
    assert evicted(admin) == 2
    for s in socks:
        s.close()


def test_the_limit_may_be_a_share_of_maxmemory(srv, admin):
    maxmemory = 6 * 1024 * 1024
    admin.config_set("maxmemory", maxmemory)
    admin.config_set("maxmemory-clients", "7%")
    try:
        limit = maxmemory * 7 // 100
        s = raw(srv, "half")
        s.sendall(big_argument(limit // 2))
        assert wait_until(lambda: field(admin, "half", "qbuf") == limit // 2)
        assert limit // 2 <= field(admin, "half", "tot-mem") < limit
        s.close()
        assert wait_until(lambda: named(admin, "half") is None)
        s = raw(srv, "whole")
        send_quietly(s, big_argument(limit))
        assert wait_until(lambda: named(admin, "whole") is None)
        assert evicted(admin) == 1
        s.close()
    finally:
        admin.config_set("maxmemory-clients", "0")
        admin.config_set("maxmemory", "0")


def test_the_limit_is_never_under_128_kb(srv, admin):
    admin.config_set("maxmemory-clients", "1")
    assert admin.config_get("maxmemory-clients") == {"maxmemory-clients": "1"}
    # Clients of a few kB live on.
    c = srv.client()
    c.client_setname("small")
    assert c.ping()
    assert named(admin, "small") is not None
    c.close()


def test_debug_client_eviction_and_replybuffer(srv, admin):
    with pytest.raises(redis.ResponseError, match="maxmemory-clients is disabled"):
        admin.execute_command("DEBUG", "CLIENT-EVICTION")
    admin.config_set("maxmemory-clients", LIMIT)
    assert "bucket" in admin.execute_command("DEBUG", "CLIENT-EVICTION")
    assert admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0") == "OK"
    assert admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "1") == "OK"
    assert admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == "OK"
    assert admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset") == "OK"
    with pytest.raises(redis.ResponseError, match="not an integer"):
        admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "soon")


@ebb_only
def test_each_eviction_is_logged_as_redis_logs_it(tmp_path):
    log = tmp_path / "ebb.log"
    srv = EbbServer("--dir", str(tmp_path), "--logfile", str(log), cwd=str(tmp_path))
    try:
        admin = srv.client(single_connection_client=True)
        admin.execute_command("CLIENT", "NO-EVICT", "on")
        admin.config_set("maxmemory-clients", LIMIT)
        s = raw(srv, "logged")
        send_quietly(s, big_argument(LIMIT))
        assert wait_until(lambda: named(admin, "logged") is None)
        assert wait_until(lambda: "Evicting client: id=" in log.read_text())
        line = [l for l in log.read_text().splitlines() if "Evicting client:" in l][0]
        assert " name=logged " in line and " tot-mem=" in line
        s.close()
        admin.close()
    finally:
        srv.stop()
