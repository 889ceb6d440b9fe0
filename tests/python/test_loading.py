"""Loading the dataset at start, as Redis does it: the server accepts
connections while its data loads, refuses the commands without the
`loading` flag with `-LOADING Redis is loading the dataset in memory`,
reports the progress in INFO persistence, and a SHUTDOWN meanwhile saves
nothing (the files on disk must not be replaced by half the data).
`key-load-delay` (microseconds after each loaded command, Redis's testing
option) makes the load last long enough to look at."""

import os
import socket
import subprocess
import threading
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import BIN, EbbServer, Raw, _free_port

LOADING = "LOADING Redis is loading the dataset in memory"
KEYS = 1000


def make_data(tmp_path, *extra):
    """A data directory holding KEYS string keys (a snapshot, or the AOF
    with `--appendonly yes`), with a TTL far off on one of them."""
    s = EbbServer("--dir", str(tmp_path), *extra, cwd=str(tmp_path))
    c = s.client()
    p = c.pipeline(transaction=False)
    for i in range(KEYS):
        p.set(f"key:{i}", f"value:{i}")
    p.execute()
    c.expire("key:1", 100_000)
    c.save()
    s.stop()


class Loading:
    """An ebb-server started on data that takes about 2 seconds to load;
    `wait_ready` waits for its ready line."""

    def __init__(self, tmp_path, *extra):
        self.port = _free_port()
        self.ready = threading.Event()
        self.proc = subprocess.Popen(
            [BIN, "--port", str(self.port), "--dir", str(tmp_path),
             "--key-load-delay", str(2_000_000 // KEYS), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            cwd=str(tmp_path))
        threading.Thread(target=self._read, daemon=True).start()
        end = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                assert time.time() < end and self.proc.poll() is None, "no listener"
                time.sleep(0.01)

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("ebb-server ready port="):
                self.ready.set()

    def client(self):
        # No retries: redis-py retries a LOADING reply after a pause.
        return redis.Redis(port=self.port, decode_responses=True,
                           retry=Retry(NoBackoff(), 0))

    def wait_ready(self):
        assert self.ready.wait(20)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def progress(c):
    """INFO persistence: the files to read are sized before the first
    connection is served, so `loading_total_bytes` is right at once."""
    return c.info("persistence")


@pytest.fixture
def snapshot(tmp_path):
    make_data(tmp_path)
    return tmp_path


def test_commands_are_refused_with_loading_until_the_data_is_in(snapshot):
    srv = Loading(snapshot)
    try:
        c = srv.client()
        info = progress(c)
        assert info["loading"] == 1 and info["async_loading"] == 0
        total = os.path.getsize(snapshot / "dump.ebb")
        assert info["loading_total_bytes"] == total
        assert 0 <= info["loading_loaded_bytes"] <= total
        assert 0 <= info["loading_loaded_perc"] <= 100
        assert info["loading_start_time"] <= time.time() + 1
        for cmd in (["PING"], ["GET", "key:1"], ["DBSIZE"], ["SET", "k", "v"],
                    ["FLUSHALL"], ["EVAL", "return 1", "0"], ["DEBUG", "RELOAD"],
                    ["DEBUG", "POPULATE", "10"],
                    ["CONFIG", "SET", "dir", "/tmp"],
                    ["CONFIG", "SET", "maxmemory", "1", "appendonly", "yes"]):
            with pytest.raises(redis.exceptions.BusyLoadingError, match=LOADING[8:]):
                c.execute_command(*cmd)
        # The commands Redis flags `loading` run.
        assert c.execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
        assert c.execute_command("CLIENT", "SETNAME", "early")
        assert c.execute_command("SELECT", 0)
        assert c.execute_command("DEBUG", "SLEEP", "0")
        assert c.time()
        # A transaction with a refused command is discarded at EXEC.
        # (Raw: redis-py drops a connection that answered LOADING.)
        t = Raw(srv.port)
        assert t.cmd("MULTI") == b"+OK\r\n"
        assert t.cmd("SET", "k", "v") == b"-" + LOADING.encode() + b"\r\n"
        assert t.cmd("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
        t.close()
        srv.wait_ready()
        assert c.dbsize() == KEYS
        assert c.ping()
        assert 99_000 < c.ttl("key:1") <= 100_000
        info = c.info("persistence")
        assert info["loading"] == 0 and "loading_total_bytes" not in info
        # What CONFIG SET changed while loading stays.
        assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
        assert c.client_getname() == "early"
    finally:
        srv.stop()


def test_the_loading_figures_grow_while_a_snapshot_loads(snapshot):
    srv = Loading(snapshot)
    try:
        c = srv.client()
        total = os.path.getsize(snapshot / "dump.ebb")
        seen = []
        while True:
            info = progress(c)
            if info["loading"] == 0:
                break
            seen.append(info["loading_loaded_bytes"])
            time.sleep(0.1)
        assert any(0 < b < total for b in seen), seen
        assert seen == sorted(seen)
        srv.wait_ready()
    finally:
        srv.stop()


def test_shutdown_while_loading_saves_nothing(snapshot):
    before = (snapshot / "dump.ebb").read_bytes()
    srv = Loading(snapshot)
    try:
        c = srv.client()
        assert c.info("persistence")["loading"] == 1
        c.shutdown(save=True)  # the connection closes: no reply
        assert srv.proc.wait(10) == 0
        assert not srv.ready.is_set()
    finally:
        srv.stop()
    assert (snapshot / "dump.ebb").read_bytes() == before
    s = EbbServer("--dir", str(snapshot), cwd=str(snapshot))
    try:
        assert s.client().dbsize() == KEYS
    finally:
        s.stop()


def test_an_append_only_file_loads_the_same_way(tmp_path):
    make_data(tmp_path, "--appendonly", "yes")
    aof = tmp_path / "appendonlydir"
    total = sum(f.stat().st_size for f in aof.iterdir() if not f.name.endswith(".manifest"))
    srv = Loading(tmp_path, "--appendonly", "yes")
    try:
        c = srv.client()
        info = progress(c)
        assert info["loading"] == 1 and info["loading_total_bytes"] == total
        with pytest.raises(redis.exceptions.BusyLoadingError):
            c.incr("counter")
        srv.wait_ready()
        assert c.incr("counter") == 1
        assert c.dbsize() == KEYS + 1
    finally:
        srv.stop()
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        assert s.client().get("counter") == "1"
    finally:
        s.stop()


@pytest.mark.parametrize("sub", ["RELOAD", "LOADAOF"])
def test_debug_reload_answers_other_clients_loading(tmp_path, sub):
    """DEBUG RELOAD and DEBUG LOADAOF load with the keyspace locked; as in
    Redis, other clients are answered -LOADING meanwhile (not left
    waiting), and INFO-free commands run again once the data is in."""
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", cwd=str(tmp_path))
    try:
        c = s.client()
        p = c.pipeline(transaction=False)
        for i in range(KEYS):
            p.set(f"key:{i}", f"value:{i}")
        p.execute()
        c.config_set("key-load-delay", 3_000_000 // KEYS)
        done = []
        t = threading.Thread(target=lambda: done.append(c.execute_command("DEBUG", sub)))
        other = Raw(s.port, timeout=10)
        t.start()
        # A command that comes before DEBUG has started waits for it, as
        # it would wait for any command before it: come once it has.
        time.sleep(0.5)
        seen = None
        end = time.time() + 5
        while time.time() < end and not done:
            seen = other.cmd("GET", "key:1")
            if seen.startswith(b"-LOADING"):
                break
            time.sleep(0.01)
        assert seen == b"-" + LOADING.encode() + b"\r\n"
        # INFO answers meanwhile (with the figures of an empty keyspace).
        assert b"\r\nloading:1\r\n" in other.cmd("INFO", "persistence")
        # Commands allowed while loading that need the keyspace wait for
        # it, but do not hold up the other clients' answers.
        waiting = [Raw(s.port, timeout=10) for _ in range(3)]
        for w, cmd in zip(waiting, (["WATCH", "x"], ["CONFIG", "SET", "maxmemory", "0"],
                                    ["DEBUG", "DIGEST"])):
            w.send(*cmd)
        time.sleep(0.2)
        quick = Raw(s.port, timeout=1)
        assert quick.cmd("PING") == b"-" + LOADING.encode() + b"\r\n"
        quick.close()
        t.join(10)
        assert done == ["OK"]
        assert other.cmd("GET", "key:1") == b"$7\r\nvalue:1\r\n"
        other.close()
        assert [w.read()[:1] for w in waiting] == [b"+", b"+", b"+"]
        for w in waiting:
            w.close()
        c.config_set("key-load-delay", 0)
        assert c.dbsize() == KEYS
        assert c.info("persistence")["loading"] == 0
    finally:
        s.stop()
