"""CLIENT TRACKING (client-side caching), checked against Redis 7.0's
behaviour: invalidations as RESP3 pushes or, redirected, as messages on
__redis__:invalidate; BCAST prefixes, NOLOOP, OPTIN/OPTOUT, flushes, the
table limit, and the CLIENT subcommands' replies and errors. Runs against
redis-server too with AGAINST_REDIS=1."""

import socket
import time

import pytest
import redis

from conftest import raw_cmd


@pytest.fixture
def r(srv):
    c = redis.Redis(port=srv.port, decode_responses=True)
    yield c
    c.close()


class Raw:
    """A connection read by hand, to see push messages where they come."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.settimeout(2)
        self.f = self.s.makefile("rb")

    def send(self, *args):
        out = f"*{len(args)}\r\n"
        for a in args:
            a = str(a)
            out += f"${len(a.encode())}\r\n{a}\r\n"
        self.s.sendall(out.encode())

    def read(self):
        line = self.f.readline()
        kind, rest = line[:1], line[1:-2].decode()
        if kind in (b"+", b"-"):
            return rest if kind == b"+" else ("ERR", rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            if rest == "-1":
                return None
            data = self.f.read(int(rest) + 2)[:-2]
            return data.decode()
        if kind == b"_":
            return None
        if kind in (b"*", b">", b"~"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return ("push", items) if kind == b">" else items
        if kind == b"%":
            return {self.read(): self.read() for _ in range(int(rest))}
        raise AssertionError(f"unexpected reply {line!r}")

    def call(self, *args):
        self.send(*args)
        return self.read()

    def nothing_waiting(self):
        self.s.settimeout(0.2)
        try:
            return self.s.recv(1, socket.MSG_PEEK) == b""
        except (socket.timeout, BlockingIOError):
            return True
        finally:
            self.s.settimeout(2)


def resp3(srv):
    c = Raw(srv.port)
    assert c.call("HELLO", "3")["proto"] == 3
    return c


def redirect_target(srv):
    t = Raw(srv.port)
    rid = t.call("CLIENT", "ID")
    assert t.call("SUBSCRIBE", "__redis__:invalidate") == ["subscribe", "__redis__:invalidate", 1]
    return t, rid


def test_a_read_key_is_invalidated_once_after_the_reply(srv, r):
    c = resp3(srv)
    assert c.call("CLIENT", "TRACKING", "on") == "OK"
    r.set("k", "1")
    assert c.call("GET", "k") == "1"
    r.set("k", "2")
    assert c.read() == ("push", ["invalidate", ["k"]])
    r.set("k", "3")  # no longer tracked until read again
    assert c.nothing_waiting()
    # The client's own write: the reply first, then the push.
    assert c.call("GET", "k") == "3"
    assert c.call("DEL", "k") == 1
    assert c.read() == ("push", ["invalidate", ["k"]])


def test_redirection_to_a_resp2_subscriber(srv, r):
    t, rid = redirect_target(srv)
    r.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", rid)
    r.set("a", 1)
    r.set("b", 1)
    r.get("a")
    r.incr("b")  # not read: no message
    r.incr("a")
    assert t.read() == ["message", "__redis__:invalidate", ["a"]]
    assert r.execute_command("CLIENT", "GETREDIR") == rid


def test_bcast_prefixes_send_one_message_per_prefix_per_command(srv, r):
    t, rid = redirect_target(srv)
    r.execute_command("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", rid, "PREFIX", "a:", "PREFIX", "b:")
    p = r.pipeline(transaction=True)
    p.incr("a:1").incr("a:2").incr("b:1").incr("c:1")
    p.execute()
    got = [t.read(), t.read()]
    assert sorted(sorted(m[2]) for m in got) == [["a:1", "a:2"], ["b:1"]]
    assert t.nothing_waiting()


def test_noloop_leaves_out_the_clients_own_changes(srv, r):
    t, rid = redirect_target(srv)
    other = redis.Redis(port=srv.port)
    r.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", rid, "NOLOOP")
    r.mget("mine", "theirs")
    r.set("mine", 1)
    other.set("theirs", 1)
    assert t.read() == ["message", "__redis__:invalidate", ["theirs"]]
    assert t.nothing_waiting()


def test_optin_tracks_only_after_caching_yes(srv, r):
    c = resp3(srv)
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN") == "OK"
    r.set("x", 1)
    r.set("y", 1)
    c.call("GET", "x")
    assert c.call("CLIENT", "CACHING", "yes") == "OK"
    c.call("GET", "y")
    r.set("x", 2)
    r.set("y", 2)
    assert c.read() == ("push", ["invalidate", ["y"]])
    assert c.nothing_waiting()


def test_flushall_invalidates_everything_with_a_null(srv, r):
    c = resp3(srv)
    c.call("CLIENT", "TRACKING", "on")
    c.call("GET", "k")
    r.flushall()
    assert c.read() == ("push", ["invalidate", None])


def test_swapdb_sends_no_invalidation_but_flushdb_does(srv, r):
    # Redis 7.0 tells tracking clients nothing of a SWAPDB.
    c = resp3(srv)
    c.call("CLIENT", "TRACKING", "on")
    r.set("k", "1")
    assert c.call("GET", "k") == "1"
    r.swapdb(0, 1)
    assert c.nothing_waiting()
    r.flushdb()
    assert c.read() == ("push", ["invalidate", None])


def test_expired_keys_are_invalidated(srv, r):
    c = resp3(srv)
    c.call("CLIENT", "TRACKING", "on")
    r.set("short", 1, px=50)
    c.call("GET", "short")
    time.sleep(0.5)
    assert c.read() == ("push", ["invalidate", ["short"]])


def test_the_table_limit_drops_keys_with_an_invalidation(srv, r):
    c = resp3(srv)
    c.call("CLIENT", "TRACKING", "on")
    c.call("MGET", "k1", "k2", "k3")
    assert r.info()["tracking_total_keys"] == 3
    r.config_set("tracking-table-max-keys", 1)
    try:
        got = [c.read()[1][1][0], c.read()[1][1][0]]
        assert len(set(got)) == 2 and set(got) <= {"k1", "k2", "k3"}
        assert r.info()["tracking_total_keys"] == 1
    finally:
        r.config_set("tracking-table-max-keys", 1000000)


def test_tracking_info_and_errors(srv, r):
    c = resp3(srv)
    info = c.call("CLIENT", "TRACKINGINFO")
    assert info == {"flags": ["off"], "redirect": -1, "prefixes": []}
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar", "NOLOOP")
    info = c.call("CLIENT", "TRACKINGINFO")
    assert sorted(info["flags"]) == ["bcast", "noloop", "on"]
    assert sorted(info["prefixes"]) == ["bar", "foo"]
    assert info["redirect"] == 0
    errors = [
        (["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "fo"], "ERR Prefix 'fo' overlaps with an existing prefix 'foo'"),
        (["CLIENT", "TRACKING", "on"], "ERR You can't switch BCAST mode on/off"),
        (["CLIENT", "CACHING", "yes"], "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."),
    ]
    for args, text in errors:
        kind, msg = c.call(*args)
        assert msg.startswith(text), msg
    c.call("CLIENT", "TRACKING", "off")
    for args, text in [
        (["CLIENT", "TRACKING", "on", "PREFIX", "a"], "ERR PREFIX option requires BCAST mode to be enabled"),
        (["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"], "ERR You can't specify both OPTIN mode and OPTOUT mode"),
        (["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"], "ERR OPTIN and OPTOUT are not compatible with BCAST"),
        (["CLIENT", "TRACKING", "on", "REDIRECT", "999999"], "ERR The client ID you want redirect to does not exist"),
        (["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"], "ERR Prefix 'ab' overlaps with another provided prefix 'a'"),
        (["CLIENT", "TRACKING", "maybe"], "ERR syntax error"),
        (["CLIENT", "CACHING", "yes"], "ERR CLIENT CACHING can be called only when the client is in tracking mode"),
    ]:
        kind, msg = c.call(*args)
        assert msg.startswith(text), msg
    assert c.call("CLIENT", "GETREDIR") == -1


def test_a_broken_redirection_is_reported(srv, r):
    t, rid = redirect_target(srv)
    c = resp3(srv)
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", rid)
    c.call("GET", "k")
    t.f.close()
    t.s.close()
    time.sleep(0.2)
    r.set("k", 1)
    assert c.read() == ("push", ["tracking-redir-broken", rid])
    assert "broken_redirect" in c.call("CLIENT", "TRACKINGINFO")["flags"]


def test_client_list_flags_show_tracking(srv, r):
    c = resp3(srv)
    c.call("CLIENT", "SETNAME", "tracker")

    def flags():
        for line in r.execute_command("CLIENT", "LIST").splitlines():
            if "name=tracker " in line:
                return line.split(" flags=")[1].split(" ")[0]

    assert flags() == "N"
    c.call("CLIENT", "TRACKING", "on")
    assert flags() == "t"
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    assert flags() == "tB"
    c.call("CLIENT", "TRACKING", "off")
    assert flags() == "N"


def test_reset_ends_tracking_in_client_info(ebb):
    """After RESET, CLIENT INFO shows redir=-1 (tracking off), as Redis's."""
    c = redis.Redis(port=ebb.port, protocol=3)
    try:
        c.execute_command("CLIENT", "TRACKING", "ON", "BCAST")
        assert b"redir=0" in c.execute_command("CLIENT", "INFO")
        c.execute_command("RESET")
        assert b" redir=-1 " in c.execute_command("CLIENT", "INFO")
    finally:
        c.close()
