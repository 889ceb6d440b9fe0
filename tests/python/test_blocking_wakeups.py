"""When blocked clients wake up: only after a whole MULTI/EXEC, so they see
its final state, and after SWAPDB brings data into their database, as in
Redis 7.0."""

import socket
import threading

import pytest

from conftest import wait_until


def read_reply(f):
    """Reads one RESP2 reply from a file object, returned as raw bytes."""
    line = f.readline()
    out = line
    kind = line[:1]
    if kind == b"$":
        n = int(line[1:-2])
        if n >= 0:
            out += f.read(n + 2)
    elif kind == b"*":
        n = int(line[1:-2])
        for _ in range(max(n, 0)):
            out += read_reply(f)
    return out


def blocked(port, *args, db=0):
    """Starts a blocking command on its own connection (in database db);
    returns a thread whose .result holds the raw reply once it arrives."""
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")

    def send(*a):
        out = b"*%d\r\n" % len(a)
        for x in a:
            x = x if isinstance(x, bytes) else str(x).encode()
            out += b"$%d\r\n%s\r\n" % (len(x), x)
        s.sendall(out)

    if db:
        send("SELECT", db)
        read_reply(f)

    def run():
        send(*args)
        t.result = read_reply(f)

    t = threading.Thread(target=run, daemon=True)
    t.result = None
    t.sock = s
    t.start()
    return t


@pytest.fixture(params=[1, 4], ids=["io-threads=1", "io-threads=4"])
def srv(request, server_factory):
    """A fresh server with one connection thread (the default), and with
    four, where the blocked and the waking client may run on different
    threads."""
    return server_factory("--io-threads", str(request.param))


@pytest.fixture
def r(srv):
    c = srv.client()
    yield c
    c.close()


def blocked_count(r):
    return r.info("clients")["blocked_clients"]


@pytest.mark.parametrize("pop", [["BLPOP", "list", 0], ["BLMPOP", 0, 1, "list", "LEFT"]])
def test_push_then_delete_in_one_exec_wakes_nobody(srv, r, pop):
    t = blocked(srv.port, *pop)
    wait_until(lambda: blocked_count(r) == 1)
    p = r.pipeline(transaction=True)
    p.lpush("list", "a")
    p.delete("list")
    assert p.execute() == [1, 1]
    assert blocked_count(r) == 1
    r.lpush("list", "b")
    t.join(5)
    if pop[0] == "BLPOP":
        assert t.result == b"*2\r\n$4\r\nlist\r\n$1\r\nb\r\n"
    else:
        assert t.result == b"*2\r\n$4\r\nlist\r\n*1\r\n$1\r\nb\r\n"


def test_woken_client_sees_the_state_after_exec(srv, r):
    t = blocked(srv.port, "BLPOP", "list", 0)
    wait_until(lambda: blocked_count(r) == 1)
    p = r.pipeline(transaction=True)
    p.lpush("list", "a", "b", "c")
    p.lpop("list")
    p.rpop("list")
    p.execute()
    t.join(5)
    assert t.result == b"*2\r\n$4\r\nlist\r\n$1\r\nb\r\n"


def test_zadd_then_delete_in_one_exec_wakes_nobody(srv, r):
    t = blocked(srv.port, "BZPOPMIN", "z", 0)
    wait_until(lambda: blocked_count(r) == 1)
    p = r.pipeline(transaction=True)
    p.zadd("z", {"foo": 0})
    p.delete("z")
    p.execute()
    assert blocked_count(r) == 1
    r.zadd("z", {"bar": 1})
    t.join(5)
    assert t.result == b"*3\r\n$1\r\nz\r\n$3\r\nbar\r\n$1\r\n1\r\n"


def test_swapdb_wakes_a_client_blocked_in_either_database(srv, r):
    r.execute_command("SELECT", 1)
    r.rpush("k", "hello")
    t = blocked(srv.port, "BRPOP", "k", 5, db=9)
    wait_until(lambda: blocked_count(r) == 1)
    assert r.swapdb(1, 9)
    t.join(5)
    assert t.result == b"*2\r\n$1\r\nk\r\n$5\r\nhello\r\n"
    r.execute_command("SELECT", 9)
    assert r.exists("k") == 0


def test_swapdb_without_data_keeps_the_client_blocked(srv, r):
    t = blocked(srv.port, "BRPOP", "k", 0, db=9)
    wait_until(lambda: blocked_count(r) == 1)
    assert r.swapdb(1, 9)
    assert blocked_count(r) == 1
    r.execute_command("SELECT", 9)
    r.rpush("k", "x")
    t.join(5)
    assert t.result == b"*2\r\n$1\r\nk\r\n$1\r\nx\r\n"


@pytest.mark.parametrize("pop", [["BLPOP", "list", 0], ["BLMPOP", 0, 1, "list", "LEFT"]])
def test_key_of_another_type_keeps_the_client_blocked(srv, r, pop):
    t = blocked(srv.port, *pop)
    wait_until(lambda: blocked_count(r) == 1)
    p = r.pipeline(transaction=True)
    p.lpush("list", "a")
    p.delete("list")
    p.set("list", "foo")
    p.execute()
    assert blocked_count(r) == 1
    r.delete("list")
    r.lpush("list", "b")
    t.join(5)
    assert t.result is not None and t.result.endswith(b"$1\r\nb\r\n")


def test_blmove_to_a_wrong_type_destination_gets_wrongtype(srv, r):
    r.set("target", "nolist")
    t = blocked(srv.port, "BRPOPLPUSH", "blist", "target", 0)
    wait_until(lambda: blocked_count(r) == 1)
    r.rpush("blist", "foo")
    t.join(5)
    assert t.result is not None and t.result.startswith(b"-WRONGTYPE")
    assert r.lrange("blist", 0, -1) == [b"foo"] or r.lrange("blist", 0, -1) == ["foo"]
    assert blocked_count(r) == 0


def test_exec_sent_first_runs_before_a_later_push(server_factory):
    """A client's EXEC that reaches the server before another client's LPUSH
    runs first (one connection thread, the default): the push then wakes a
    BRPOPLPUSH whose write to the WATCHed destination comes after the EXEC,
    so the transaction is not aborted. Redis's own list tests rely on this
    order; the last-woken connection used to be served first."""
    srv = server_factory()

    def conn():
        s = socket.create_connection(("127.0.0.1", srv.port))
        return s, s.makefile("rb")

    def cmd(*a):
        out = b"*%d\r\n" % len(a)
        for x in a:
            x = x.encode()
            out += b"$%d\r\n%s\r\n" % (len(x), x)
        return out

    r, rf = conn()
    r.sendall(cmd("SET", "k", "v"))
    assert read_reply(rf) == b"+OK\r\n"
    admin = srv.client()
    aborted = 0
    for _ in range(10):
        t = blocked(srv.port, "BRPOPLPUSH", "src", "dst", 0)
        wait_until(lambda: blocked_count(admin) == 1)
        w, wf = conn()
        for c in (cmd("WATCH", "dst"), cmd("MULTI"), cmd("GET", "k")):
            w.sendall(c)
            read_reply(wf)
        w.sendall(cmd("EXEC"))
        r.sendall(cmd("LPUSH", "src", "e"))
        assert read_reply(rf) == b":1\r\n"
        if read_reply(wf) != b"*1\r\n$1\r\nv\r\n":
            aborted += 1
        t.join(5)
        assert t.result == b"$1\r\ne\r\n"
        t.sock.close()
        w.close()
        r.sendall(cmd("DEL", "dst"))
        read_reply(rf)
    assert aborted == 0
