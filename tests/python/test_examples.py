"""Runs every recipe example (Redis 7.0 way and ebb way) against the binary."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = ["expiring_values.py", "bucket_counters.py", "dedup.py", "recently_viewed.py", "otp_limit.py"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_python_example(ebb, name):
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name), "--port", str(ebb.port)],
        capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MISMATCH" not in p.stdout


def test_rust_example(ebb):
    exe = os.path.join(ROOT, "target", "debug", "examples", "recipes")
    p = subprocess.run([exe, str(ebb.port)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all five recipes OK" in p.stdout
