#!/usr/bin/env python3
"""Latency of writes while the key table grows: fills a fresh server with
DEBUG POPULATE, then times single SETs of new keys on one connection (the
key table's index doubles somewhere in that run) and prints p50, p99.9 and
the worst. Runs ebb and, when given, redis-server the same way.

  python3 bench/key_growth.py --ebb target/release/ebb-server \
      [--redis redis-server] [--keys 7000000] [--sets 400000]
"""

import argparse
import subprocess
import time

import redis

from compare import free_port


def run(binary, keys, sets):
    port = free_port()
    cmd = [binary, "--port", str(port), "--save", "", "--appendonly", "no"]
    if "redis" in binary:
        cmd += ["--enable-debug-command", "yes"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = redis.Redis(port=port, socket_timeout=600)
        for _ in range(200):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        c.execute_command("DEBUG", "POPULATE", keys)
        lat = []
        for i in range(sets):
            t = time.perf_counter()
            c.set(f"grow:{i}", "v")
            lat.append(time.perf_counter() - t)
        lat.sort()
        p = lambda q: lat[min(len(lat) - 1, int(len(lat) * q))] * 1e3
        print(f"{binary}: {sets} SETs after {keys} keys: p50 {p(0.5):.3f} ms, "
              f"p99.9 {p(0.999):.3f} ms, max {lat[-1] * 1e3:.1f} ms")
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ebb", required=True)
    ap.add_argument("--redis")
    ap.add_argument("--keys", type=int, default=7_000_000)
    ap.add_argument("--sets", type=int, default=400_000)
    a = ap.parse_args()
    for b in [a.ebb] + ([a.redis] if a.redis else []):
        run(b, a.keys, a.sets)


if __name__ == "__main__":
    main()
