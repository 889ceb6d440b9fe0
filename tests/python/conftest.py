"""Fixtures that start the built ebb-server binary on a free port."""

import os
import socket
import subprocess
import threading
import time

import pytest
import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("EBB_BIN", os.path.join(ROOT, "target", "debug", "ebb-server"))


def ready_port(proc):
    """Reads the server's standard output up to its ready line (the log,
    which Redis also writes there, comes first) and returns the port; the
    rest of the output is drained so a long log never fills the pipe."""
    seen = []
    for line in proc.stdout:
        if line.startswith("ebb-server ready port="):
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return int(line.strip().split("=")[1])
        seen.append(line)
    proc.kill()
    raise RuntimeError(f"server did not start: {''.join(seen)!r}")


class EbbServer:
    """A running ebb-server process."""

    def __init__(self, *args, cwd=None):
        # A config file, if any, must come first, as for redis-server.
        if args and not args[0].startswith("--"):
            self.args = [args[0], "--port", "0", *args[1:]]
        else:
            self.args = ["--port", "0", *args]
        self.cwd = cwd
        self.proc = None
        self.port = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [BIN, *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.cwd,
            text=True,
        )
        self.port = ready_port(self.proc)

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self, sig=None):
        if self.proc and self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def _free_port():
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not 7100 <= port <= 7110:
            return port


class RedisServer:
    """A redis-server process with the same interface as EbbServer."""

    def __init__(self, cwd, *extra):
        self.cwd = cwd
        self.proc = None
        for _ in range(5):
            self.port = _free_port()
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port),
                 "--save", "", "--appendonly", "no",
                 "--enable-debug-command", "yes", *extra],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
            )
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError("redis-server did not start")

    def _wait_ready(self):
        end = time.time() + 5
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def redis_beside(tmp_path_factory, name, *extra):
    """A redis-server for a side-by-side test, in a directory of its own;
    skips the test where redis-server is not installed."""
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    return RedisServer(str(tmp_path_factory.mktemp(name)), *extra)


def outside_ip():
    """An address of this machine that is not loopback, if it has one."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        ip = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if ip.startswith("127.") else ip


# ebb as a module for Redis (crates/ebb-module), as the workspace builds it.
MODULE = os.environ.get(
    "EBB_MODULE", os.path.join(ROOT, "target", "debug", "libebb_module.so"))


def module_server(tmp_path, *extra):
    """A redis-server in `tmp_path` with ebb's module loaded."""
    return RedisServer(str(tmp_path), "--loadmodule", MODULE, *extra)


@pytest.fixture
def mod(tmp_path):
    """A fresh redis-server with ebb's module."""
    s = module_server(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def m(mod):
    """A RESP2 client of `mod`."""
    c = mod.client(protocol=2)
    yield c
    c.close()


def ebb_or_redis(against_redis, tmp_path):
    """An ebb-server in `tmp_path`, or a redis-server when a test file is
    checked against Redis itself."""
    if against_redis:
        return RedisServer(cwd=str(tmp_path))
    return EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))


# Test files that check themselves against Redis (their expected replies are
# redis-server 7.0.15's): with AGAINST_REDIS=1 their `srv` is a redis-server
# and their tests of ebb's own behaviour (`ebb_only`) are skipped.
AGAINST_REDIS = os.environ.get("AGAINST_REDIS") == "1"
ebb_only = pytest.mark.skipif(AGAINST_REDIS, reason="ebb's own behaviour")


@pytest.fixture
def srv(tmp_path):
    """A fresh ebb-server (or redis-server with AGAINST_REDIS=1)."""
    s = ebb_or_redis(AGAINST_REDIS, tmp_path)
    yield s
    s.stop()


def sha(text):
    """A script's SHA1 digest, as EVALSHA names it."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture(scope="session")
def ebb(tmp_path_factory):
    d = tmp_path_factory.mktemp("ebb-main")
    s = EbbServer("--dir", str(d), cwd=str(d))
    yield s
    s.stop()


@pytest.fixture
def r(ebb):
    c = ebb.client()
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


@pytest.fixture
def rb(ebb):
    """A client without response decoding (bytes)."""
    c = ebb.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def r3(ebb):
    """A RESP3 client."""
    c = ebb.client(protocol=3)
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


@pytest.fixture
def r2(ebb):
    """A RESP2 client (redis-py defaults to RESP3)."""
    c = ebb.client(protocol=2)
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


@pytest.fixture
def server_factory(tmp_path):
    """Starts extra servers with their own options; stopped after the test."""
    started = []

    def make(*args):
        s = EbbServer(*args, "--dir", str(tmp_path), cwd=str(tmp_path))
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def raw_cmd(client, *args):
    """Sends a command and returns the parsed reply without redis-py's
    per-command response callbacks."""
    try:
        conn = client.connection_pool.get_connection()
    except TypeError:  # redis-py before 5.3 wants the command name
        conn = client.connection_pool.get_connection(args[0])
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        client.connection_pool.release(conn)


def err(client, *args):
    """The error text a command gets (after redis-py's parsing)."""
    with pytest.raises(redis.ResponseError) as e:
        client.execute_command(*args)
    return str(e.value)


def events(p, n, timeout=3.0):
    """Up to `n` (channel, data) pairs from pub/sub connection `p`."""
    got = []
    end = time.time() + timeout
    while time.time() < end and len(got) < n:
        m = p.get_message(timeout=0.1)
        if m and m["type"] in ("message", "pmessage"):
            got.append((m["channel"], m["data"]))
    return got


def wait_until(pred, timeout=5.0, step=0.01):
    """Polls pred() until true; fails the test after timeout seconds."""
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    raise AssertionError("condition not met in time")


class Raw:
    """A bare RESP connection returning each reply as its raw bytes; with a
    `timeout` (seconds), a read that waits longer raises socket.timeout
    instead of waiting for a reply that never comes."""

    def __init__(self, port, resp3=False, timeout=None):
        self.s = socket.create_connection(("127.0.0.1", port))
        if timeout is not None:
            self.s.settimeout(timeout)
        self.f = self.s.makefile("rb")
        if resp3:
            self.cmd("HELLO", "3")

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def read(self):
        line = self.f.readline()
        t = line[:1]
        if t in (b"$", b"=", b"!"):
            n = int(line[1:-2])
            return line if n < 0 else line + self.f.read(n + 2)
        if t in (b"*", b"%", b"~", b">"):
            n = int(line[1:-2])
            per = 2 if t == b"%" else 1
            for _ in range(max(n, 0) * per):
                line += self.read()
            return line
        return line

    def cmd(self, *args):
        self.send(*args)
        return self.read()

    def close(self):
        self.s.close()


class Oracle:
    """ebb-server and redis-server side by side: each request goes to both
    on a fresh raw connection, and both raw replies come back."""

    def __init__(self, ebb_port, redis_port):
        self.ports = (ebb_port, redis_port)

    def both(self, *args, resp3=False):
        out = []
        for port in self.ports:
            r = Raw(port, resp3=resp3, timeout=5.0)
            out.append(r.cmd(*args))
            r.close()
        return out

    def each(self, fn):
        return [fn(port) for port in self.ports]


def typed_reply(raw):
    """A raw reply parsed with its types kept (simple and bulk strings
    differ), and sets and maps in a canonical order, for comparing two
    servers' replies."""

    def one(pos):
        end = raw.index(b"\r\n", pos)
        kind, body, nxt = raw[pos:pos + 1], raw[pos + 1:end], end + 2
        if kind in (b"$", b"=", b"!"):
            n = int(body)
            if n < 0:
                return ("$", None), nxt
            return ("$", raw[nxt:nxt + n]), nxt + n + 2
        if kind in (b"*", b"~", b"%", b">"):
            n = int(body) * (2 if kind == b"%" else 1)
            items = []
            for _ in range(max(n, 0)):
                v, nxt = one(nxt)
                items.append(v)
            if kind == b"%":
                items = sorted(zip(items[::2], items[1::2]), key=repr)
            elif kind == b"~":
                items = sorted(items, key=repr)
            return (kind, items), nxt
        return (kind, body), nxt

    return one(0)[0]


@pytest.fixture
def side_by_side(tmp_path):
    """Raw (bytes) clients of a fresh ebb-server and a fresh redis-server,
    for tests that send both the same traffic; skipped without
    redis-server."""
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    ebb = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    red = RedisServer(cwd=str(tmp_path))
    yield ebb.client(decode_responses=False), red.client(decode_responses=False)
    ebb.stop()
    red.stop()
