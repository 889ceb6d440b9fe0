"""Runs every recipe example (Redis 7.0 way and ebb way) against the binary,
and against redis-server with ebb's module loaded (`--module`)."""

import os
import subprocess
import sys

import pytest

from conftest import MODULE, RedisServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["expiring_values.py", "bucket_counters.py", "dedup.py", "recently_viewed.py", "otp_limit.py"]


@pytest.fixture(scope="module")
def redis_with_module(tmp_path_factory):
    s = RedisServer(str(tmp_path_factory.mktemp("redis-module")), "--loadmodule", MODULE)
    yield s
    s.stop()


def run_example(name, port, *extra):
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name), "--port", str(port), *extra],
        capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MISMATCH" not in p.stdout


@pytest.mark.parametrize("name", EXAMPLES)
def test_python_example(ebb, name):
    run_example(name, ebb.port)


@pytest.mark.parametrize("name", EXAMPLES)
def test_python_example_on_module(redis_with_module, name):
    run_example(name, redis_with_module.port, "--module")


def test_rust_example(ebb):
    exe = os.path.join(ROOT, "target", "debug", "examples", "recipes")
    p = subprocess.run([exe, str(ebb.port)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all five recipes OK" in p.stdout
