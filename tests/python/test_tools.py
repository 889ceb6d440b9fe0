"""redis-benchmark and redis-cli, unchanged, against ebb.

Every expected output below is what the same redis-cli / redis-benchmark
prints against redis-server 7.0 (for the commands both servers have)."""

import os
import pty
import re
import select
import shutil
import subprocess
import time

import pytest

from conftest import raw_cmd

needs_benchmark = pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark not installed")
needs_cli = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")

# redis-benchmark 7.0's default tests, as it names them in its report.
DEFAULT_TESTS = [
    "PING_INLINE",
    "PING_MBULK",
    "SET",
    "GET",
    "INCR",
    "LPUSH",
    "RPUSH",
    "LPOP",
    "RPOP",
    "SADD",
    "HSET",
    "SPOP",
    "ZADD",
    "ZPOPMIN",
    "LPUSH (needed to benchmark LRANGE)",
    "LRANGE_100 (first 100 elements)",
    "LRANGE_300 (first 300 elements)",
    "LRANGE_500 (first 500 elements)",
    "LRANGE_600 (first 600 elements)",
    "MSET (10 keys)",
]
DEFAULT_T = "ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange,mset"

RATE = re.compile(r"^(.+?): ([0-9.]+) requests per second")


def benchmark(port, *args):
    p = subprocess.run(
        ["redis-benchmark", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # -q rewrites a progress line with \r; the final line of each test
    # carries its rate.
    lines = [ln.strip() for ln in re.split(r"[\r\n]", p.stdout + p.stderr) if ln.strip()]
    rates = {}
    for ln in lines:
        m = RATE.match(ln)
        if m:
            rates[m.group(1)] = float(m.group(2))
    errors = [ln for ln in lines if "ERR" in ln or "error" in ln.lower()]
    return p.returncode, rates, errors, lines


def benchmark_version():
    out = subprocess.run(["redis-benchmark", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@needs_benchmark
def test_redis_benchmark_default_tests(ebb, r):
    # Later redis-benchmark versions add tests of features ebb leaves out
    # (streams): name 7.0's defaults explicitly there.
    extra = [] if benchmark_version() == (7, 0) else ["-t", DEFAULT_T]
    rc, rates, errors, lines = benchmark(ebb.port, "-q", "-n", "2000", "-c", "10", *extra)
    assert rc == 0, lines
    assert not errors, errors
    assert sorted(rates) == sorted(DEFAULT_TESTS), lines
    assert all(v > 0 for v in rates.values()), rates
    # What the tests left behind is what they did.
    assert r.get("key:__rand_int__") is not None
    assert r.type("myset") in ("set", "none")
    assert r.llen("mylist") > 0


@needs_benchmark
def test_redis_benchmark_pipelined_resp3(ebb, r):
    rc, rates, errors, lines = benchmark(ebb.port, "-3", "-q", "-n", "2000", "-c", "10", "-P", "16", "-t", "set,get,sadd,hset,zadd")
    assert rc == 0 and not errors, lines
    assert sorted(rates) == ["GET", "HSET", "SADD", "SET", "ZADD"], lines


@needs_benchmark
def test_redis_benchmark_member_ttl_commands(ebb, r):
    """Custom commands with random members: SADDEX, ZADDEX, HSETEX."""
    for cmd in (
        ["SADDEX", "b:set", "60", "m:__rand_int__"],
        ["ZADDEX", "b:zset", "EX", "60", "1", "m:__rand_int__"],
        ["HSETEX", "b:hash", "EX", "60", "FIELDS", "1", "f:__rand_int__", "v"],
    ):
        rc, rates, errors, lines = benchmark(ebb.port, "-q", "-n", "2000", "-c", "10", "-r", "1000", *cmd)
        assert rc == 0 and not errors, lines
        assert len(rates) == 1 and list(rates.values())[0] > 0, lines
    for key, card in (("b:set", r.scard), ("b:zset", r.zcard), ("b:hash", r.hlen)):
        n = card(key)
        assert 0 < n <= 1000
    assert 0 < raw_cmd(r, "SPTTL", "b:set", "MEMBERS", 1, r.srandmember("b:set"))[0] <= 60_000


# --------------------------------------------------------------- redis-cli


@pytest.fixture
def cli(ebb, r, tmp_path):
    """Runs redis-cli against ebb; returns (stdout, returncode)."""
    env = {**os.environ, "HOME": str(tmp_path), "REDISCLI_HISTFILE": "/dev/null"}

    def run(*args, input=None):
        p = subprocess.run(
            ["redis-cli", "-p", str(ebb.port), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        return p.stdout, p.returncode

    return run


def out(cli, *args, **kw):
    stdout, rc = cli(*args, **kw)
    assert rc == 0, stdout
    return stdout


@needs_cli
def test_redis_cli_commands(cli, r):
    assert out(cli, "SET", "cli:a", "1") == "OK\n"
    assert out(cli, "INCR", "cli:a") == "2\n"
    assert out(cli, "GET", "cli:a") == "2\n"
    assert out(cli, "GET", "nokey") == "\n"
    assert out(cli, "SADDEX", "cli:s", "60", "x", "y") == "2\n"
    assert out(cli, "STTL", "cli:s", "MEMBERS", "2", "x", "nope") == "60\n-2\n"
    assert out(cli, "ZADDEX", "cli:z", "EX", "60", "1.5", "a") == "1\n"
    assert out(cli, "NOSUCH", "x") == "ERR unknown command 'NOSUCH', with args beginning with: 'x' \n\n"
    assert out(cli, "-n", "2", "SET", "x", "1") == "OK\n"
    assert out(cli, "-n", "2", "DBSIZE") == "1\n"
    assert out(cli, "-x", "SET", "cli:in", input="from stdin") == "OK\n"
    assert r.get("cli:in") == "from stdin"
    assert out(cli, "-r", "3", "-i", "0.01", "INCR", "cli:c") == "1\n2\n3\n"
    r.rpush("cli:l", 1, 2, 3)
    assert out(cli, "--csv", "LRANGE", "cli:l", "0", "-1") == '"1","2","3"\n'


@needs_cli
def test_redis_cli_no_raw(cli, r):
    r.set("k", "hello world")
    r.zadd("z", {"a": 1.5, "b": 2})
    assert out(cli, "--no-raw", "GET", "k") == '"hello world"\n'
    assert out(cli, "--no-raw", "GET", "nokey") == "(nil)\n"
    assert out(cli, "--no-raw", "INCR", "n") == "(integer) 1\n"
    assert out(cli, "--no-raw", "LRANGE", "nol", "0", "-1") == "(empty array)\n"
    assert out(cli, "--no-raw", "ZRANGE", "z", "0", "-1", "WITHSCORES") == '1) "a"\n2) "1.5"\n3) "b"\n4) "2"\n'
    assert out(cli, "--no-raw", "ZPTTL", "z", "MEMBERS", "1", "a") == "1) (integer) -1\n"
    assert (
        out(cli, "--no-raw", "NOSUCH")
        == "(error) ERR unknown command 'NOSUCH', with args beginning with: \n"
    )
    assert out(cli, "--no-raw", "SADDEX", "s", "LIMIT", "1", "60", "a", "b") == "(integer) -1\n"


@needs_cli
def test_redis_cli_reads_commands_from_stdin(cli, tmp_path, r):
    cmds = tmp_path / "cmds"
    cmds.write_text(
        "SET cli:p 1\n"
        "INCR cli:p\n"
        'SET cli:q "hello world"\n'
        "GET cli:q\n"
        "SADDEX cli:s 60 x y\n"
        "SCARD cli:s\n"
        "HSETEX cli:h PX 60000 FIELDS 1 f v\n"
        "HPTTL cli:h FIELDS 1 f\n"
        "NOSUCH\n"
        "PING\n"
    )
    with open(cmds) as f:
        stdout = out(cli, input=f.read())
    lines = stdout.split("\n")
    assert lines[:6] == ["OK", "2", "OK", "hello world", "2", "2"], lines
    assert lines[6] == "1" and 59_000 < int(lines[7]) <= 60_000, lines
    assert lines[8:] == ["ERR unknown command 'NOSUCH', with args beginning with: ", "", "PONG", ""], lines
    assert r.get("cli:q") == "hello world"


@needs_cli
def test_redis_cli_pipe_mode(cli, r):
    def resp(*args):
        return "".join([f"*{len(args)}\r\n"] + [f"${len(a.encode())}\r\n{a}\r\n" for a in args])

    n = 300
    data = "".join(resp("SADDEX", "p:set", "60", f"m{i}") + resp("ZADDEX", "p:z", "PX", "60000", str(i), f"m{i}") for i in range(n))
    stdout = out(cli, "--pipe", input=data)
    assert f"errors: 0, replies: {2 * n}" in stdout, stdout
    assert r.scard("p:set") == n and r.zcard("p:z") == n


@needs_cli
def test_redis_cli_scan_pattern(cli, r):
    p = r.pipeline(transaction=False)
    for i in range(250):
        p.set(f"scan:hit:{i}", 1)
    for i in range(50):
        p.sadd(f"scan:miss:{i}", "m")
    p.execute()
    keys = out(cli, "--scan", "--pattern", "scan:hit:*").split()
    assert sorted(keys) == sorted(f"scan:hit:{i}" for i in range(250))
    assert len(out(cli, "--scan").split()) == 300
    assert out(cli, "--scan", "--pattern", "nothing:*") == ""


@needs_cli
def test_redis_cli_resp3(cli, r):
    r.hset("h", "f", "v")
    r.zadd("z", {"a": 1.5})
    r.sadd("s", "a")
    assert out(cli, "-3", "--no-raw", "HGETALL", "h") == '1# "f" => "v"\n'
    assert out(cli, "-3", "--no-raw", "HGETALL", "nohash") == "(empty hash)\n"
    assert out(cli, "-3", "--no-raw", "SMEMBERS", "s") == '1~ "a"\n'
    assert out(cli, "-3", "--no-raw", "ZSCORE", "z", "a") == "(double) 1.5\n"
    assert out(cli, "-3", "--no-raw", "ZRANGE", "z", "0", "-1", "WITHSCORES") == '1) 1) "a"\n   2) (double) 1.5\n'
    assert out(cli, "-3", "ZSCORE", "z", "a") == "1.5\n"
    assert out(cli, "-3", "HGETALL", "h") == "f v\n"
    hello = out(cli, "-3", "--no-raw", "HELLO", "3")
    assert '"proto" => (integer) 3' in hello, hello


@needs_cli
def test_redis_cli_bigkeys_and_memkeys(cli, r):
    r.sadd("s", "a", "b")
    r.zadd("z", {"a": 1})
    r.hset("h", "f", "v")
    r.set("str", "hello")
    r.rpush("l", 1, 2, 3)
    big = out(cli, "--bigkeys")
    for line in (
        "Biggest   list found '\"l\"' has 3 items",
        "Biggest   hash found '\"h\"' has 1 fields",
        "Biggest string found '\"str\"' has 5 bytes",
        "Biggest    set found '\"s\"' has 2 members",
        "Biggest   zset found '\"z\"' has 1 members",
        "1 sets with 2 members (20.00% of keys, avg size 2.00)",
    ):
        assert line in big, big
    mem = out(cli, "--memkeys")
    assert re.search(r"1 zsets with \d+ bytes \(20\.00% of keys", mem), mem
    assert "error" not in (big + mem).lower()


@needs_cli
def test_redis_cli_interactive_session(ebb, r, tmp_path):
    """A person at a terminal: prompt, a command, its reply, quit."""
    master, slave = pty.openpty()
    env = {**os.environ, "HOME": str(tmp_path), "REDISCLI_HISTFILE": "/dev/null", "TERM": "dumb"}
    p = subprocess.Popen(
        ["redis-cli", "-p", str(ebb.port)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        env=env,
    )
    os.close(slave)
    prompt = f"127.0.0.1:{ebb.port}> ".encode()
    buf = bytearray()

    def expect(token, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            i = buf.find(token)
            if i >= 0:
                seen = bytes(buf[: i + len(token)])
                del buf[: i + len(token)]
                return seen
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf.extend(chunk)
        raise AssertionError(f"{token!r} not seen; got {bytes(buf)!r}")

    try:
        expect(prompt)
        os.write(master, b"SET greeting hi\r")
        assert b"OK" in expect(prompt)
        os.write(master, b"GET greeting\r")
        assert b'"hi"' in expect(prompt)
        os.write(master, b"SADDEX seen 60 id1 id2\r")
        assert b"(integer) 2" in expect(prompt)
        os.write(master, b"SISMEMBER seen id1\r")
        assert b"(integer) 1" in expect(prompt)
        os.write(master, b"NOSUCH\r")
        assert b"(error) ERR unknown command 'NOSUCH'" in expect(prompt)
        os.write(master, b"SELECT 3\r")
        assert b"OK" in expect(f"127.0.0.1:{ebb.port}[3]> ".encode())
        os.write(master, b"quit\r")
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    assert r.get("greeting") == "hi"
