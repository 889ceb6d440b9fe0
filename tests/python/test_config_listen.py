"""CONFIG SET port / bind rebind the listening sockets, as Redis 7.0 does:
the new ones are bound first, so a port or address that cannot be had is
an error that changes nothing (other options in the same CONFIG SET
included) and the server keeps listening where it was.

Checked against redis-server 7.0.15 too: `AGAINST_REDIS=1 pytest
tests/python/test_config_listen.py`.
"""

import os
import socket
import stat

import pytest
import redis

from conftest import EbbServer, _free_port


def test_config_set_port_moves_the_listener(srv):
    c = srv.client()
    new = _free_port()
    assert c.config_set("port", new) is True
    moved = redis.Redis(port=new)
    assert moved.ping() is True
    assert moved.config_get("port") == {"port": str(new)}
    assert moved.info("server")["tcp_port"] == new
    # The old port is closed for new clients; the connection that asked
    # keeps working.
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=srv.port, socket_connect_timeout=1).ping()
    assert c.ping() is True
    moved.close()


def test_a_port_in_use_changes_nothing(srv):
    c = srv.client()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    used = taken.getsockname()[1]
    before = c.config_get("maxmemory")["maxmemory"]
    try:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("CONFIG", "SET", "maxmemory", "10000001", "port", used)
        assert str(e.value).startswith(
            "CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port")
    finally:
        taken.close()
    # Rolled back: the other option too, and still on the first port.
    assert c.config_get("maxmemory")["maxmemory"] == before
    fresh = redis.Redis(port=srv.port)
    assert fresh.ping() is True
    assert fresh.config_get("port") == {"port": str(srv.port)}
    fresh.close()


def test_a_bad_bind_address_changes_nothing(srv):
    c = srv.client()
    before = c.config_get("bind")["bind"]
    with pytest.raises(redis.ResponseError, match="Failed to bind to specified addresses"):
        c.config_set("bind", "999.999.999.999")
    assert c.config_get("bind")["bind"] == before
    fresh = redis.Redis(port=srv.port)
    assert fresh.ping() is True
    fresh.close()


def test_bind_on_the_same_port_keeps_the_listening_address(srv):
    c = srv.client()
    # Same port, an extra optional address: the loopback socket stays.
    assert c.config_set("bind", "127.0.0.1 -::1") is True
    fresh = redis.Redis(port=srv.port)
    assert fresh.ping() is True
    assert c.config_set("bind", "127.0.0.1") is True
    assert fresh.ping() is True
    again = redis.Redis(port=srv.port)
    assert again.ping() is True
    fresh.close()
    again.close()


def test_bind_star_and_empty(srv):
    c = srv.client()
    new = _free_port()
    # Every IPv4 interface, on a new port in the same CONFIG SET.
    assert c.execute_command("CONFIG", "SET", "bind", "*", "port", new) in (True, "OK", b"OK")
    moved = redis.Redis(port=new)
    assert moved.ping() is True
    # An empty bind listens nowhere (as in Redis); this connection stays.
    assert moved.config_set("bind", "") is True
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=new, socket_connect_timeout=1).ping()
    assert moved.ping() is True
    assert moved.config_set("bind", "127.0.0.1") is True
    again = redis.Redis(port=new)
    assert again.ping() is True
    again.close()
    moved.close()


def test_widening_bind_on_the_same_port(srv):
    # `*` overlaps the loopback socket on the same port: the sockets close
    # and the new ones are bound, as Redis does; then back again.
    c = srv.client()
    assert c.config_set("bind", "* -::*") is True
    fresh = redis.Redis(port=srv.port)
    assert fresh.ping() is True
    assert c.config_set("bind", "127.0.0.1 -::1") is True
    again = redis.Redis(port=srv.port)
    assert again.ping() is True
    assert c.config_get("bind") == {"bind": "127.0.0.1 -::1"}
    fresh.close()
    again.close()


def _server_side_timer(server_port, client_port):
    """The kernel timer of the server's end of a loopback connection, from
    /proc/net/tcp: (kind, jiffies left); kind 2 is the keepalive timer."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
                kind, left = fields[5].split(":")
                return int(kind, 16), int(left, 16)
    return None


def test_tcp_keepalive_probes_idle_connections(srv):
    """`tcp-keepalive` (default 300 s, as in Redis) arms the kernel's
    keepalive timer on every accepted connection; 0 leaves it off. A
    CONFIG SET applies to connections accepted afterwards."""
    c = srv.client()
    assert c.config_get("tcp-keepalive") == {"tcp-keepalive": "300"}
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"PING\r\n")
    assert s.recv(16) == b"+PONG\r\n"
    timer = _server_side_timer(srv.port, s.getsockname()[1])
    assert timer is not None and timer[0] == 2, timer
    c.config_set("tcp-keepalive", 0)
    t = socket.create_connection(("127.0.0.1", srv.port))
    t.sendall(b"PING\r\n")
    assert t.recv(16) == b"+PONG\r\n"
    assert _server_side_timer(srv.port, t.getsockname()[1]) == (0, 0)
    s.close()
    t.close()


def test_unixsocket_serves_clients_as_local(tmp_path):
    # `unixsocket` / `unixsocketperm` as redis-server has them: a stale
    # file is replaced, the mode is set, the clients show flag U and
    # `<path>:0` addresses, count as local, and the file goes at exit.
    path = tmp_path / "ebb.sock"
    path.write_text("stale")
    s = EbbServer("--dir", str(tmp_path), "--unixsocket", str(path), "--unixsocketperm", "700",
                  "--enable-debug-command", "local")
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
        u = redis.Redis(unix_socket_path=str(path), decode_responses=True)
        assert u.set("k", "v") is True
        assert s.client().get("k") == "v"
        me = u.client_info()
        assert me["addr"] == f"{path}:0" and me["laddr"] == f"{path}:0"
        assert me["flags"] == "U"
        assert u.execute_command("DEBUG", "SLEEP", "0") in (True, "OK")
        assert u.config_get("unixsocket") == {"unixsocket": str(path)}
        assert u.config_get("unixsocketperm") == {"unixsocketperm": "700"}
        u.close()
    finally:
        s.stop()
    assert not path.exists()
