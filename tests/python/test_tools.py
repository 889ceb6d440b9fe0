"""redis-benchmark and redis-cli against ebb."""

import shutil
import subprocess

import pytest

DEFAULT_TESTS = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
                 "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LRANGE_100", "LRANGE_300", "LRANGE_500",
                 "LRANGE_600", "MSET"]


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark not installed")
def test_redis_benchmark_default_tests(ebb):
    p = subprocess.run(["redis-benchmark", "-p", str(ebb.port), "-q", "-n", "2000", "-c", "10", "--csv"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "ERR" not in p.stdout + p.stderr
    names = [line.split(",")[0].strip('"') for line in p.stdout.splitlines()[1:]]
    for t in DEFAULT_TESTS:
        assert any(n.startswith(t) for n in names), f"{t} missing from {names}"


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_redis_cli(ebb, tmp_path):
    run = lambda *a, **kw: subprocess.run(["redis-cli", "-p", str(ebb.port), *a], capture_output=True,
                                          text=True, timeout=30, **kw).stdout
    assert run("SET", "cli:a", "1").strip() == "OK"
    assert run("INCR", "cli:a").strip() == "2"
    assert run("--no-raw", "GET", "cli:a").strip() == '"2"'
    cmds = tmp_path / "cmds"
    cmds.write_text("SADDEX cli:s 60 x y\nSCARD cli:s\nSTTL cli:s MEMBERS 1 x\n")
    out = run(input=cmds.read_text()).split()
    assert out[0] == "2" and out[1] == "2" and 0 < int(out[2]) <= 60
    assert "cli:a" in run("--scan", "--pattern", "cli:*")
    assert run("-3", "HGETALL", "nohash").strip() == ""
    assert "ERR unknown command" in run("NOSUCH")
