#!/usr/bin/env python3
"""SAVE and load of the same data on ebb and redis-server, in the same run:
1,000,000 string keys and 1,000 each of sorted sets, sets, hashes and lists
(300 members apiece, shared out). Both snapshots are RDB files; each server
also loads the other's file (ebb reads Redis's, Redis reads ebb's).

Each load is timed --rounds times (default 3), the four cases taking
turns, and the median printed.

Usage: snapshot.py --ebb target/release/ebb-server [--keys 1000000] [--members 300000] [--rounds 3]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import redis

from compare import free_port, raw_reply


FILL = """
for i = 1, tonumber(ARGV[1]) do
  redis.call('set', 'key:' .. i, 'value:' .. i)
end
for i = 1, tonumber(ARGV[2]) do
  local k = i % 1000
  redis.call('zadd', 'z' .. k, i, 'm' .. i)
  redis.call('sadd', 's' .. k, 'x' .. i)
  redis.call('hset', 'h' .. k, 'f' .. i, i)
  redis.call('rpush', 'l' .. k, i)
end
return 1
"""


def start(cmd, port):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.time()
    while not (raw_reply(port, "PING") or b"").startswith(b"+PONG"):
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited")
        time.sleep(0.005)
    took = time.time() - start
    return proc, redis.Redis(port=port, socket_timeout=60), took


def command(binary, d, port):
    """Both servers take the same options."""
    return [binary, "--port", str(port), "--dir", d, "--dbfilename", "dump.rdb", "--save", ""]


def stop(proc):
    proc.terminate()
    proc.wait(60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ebb", required=True)
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--members", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    binaries = {"redis": a.redis, "ebb": os.path.abspath(a.ebb)}
    root = tempfile.mkdtemp(prefix="ebb-snapshot-bench-")
    files = {}
    try:
        print(f"# {a.keys} string keys, {a.members} members in each of 4 types over 1,000 keys each")
        for kind in ("redis", "ebb"):
            d = os.path.join(root, kind)
            os.makedirs(d)
            port = free_port()
            proc, c, _ = start(command(binaries[kind], d, port), port)
            c.eval(FILL, 0, a.keys, a.members)
            used = c.info("memory")["used_memory"]
            t0 = time.time()
            c.save()
            took = time.time() - t0
            stop(proc)
            files[kind] = os.path.join(d, "dump.rdb")
            size = os.path.getsize(files[kind])
            print(f"{kind:5} SAVE {took:6.2f} s  file {size / 1e6:6.1f} MB  used_memory {used / 1e6:6.1f} MB")
        cases = [(kind, source) for kind in ("redis", "ebb") for source in ("redis", "ebb")]
        times = {case: [] for case in cases}
        keys = {}
        for kind, source in cases:
            d = os.path.join(root, f"{kind}-loads-{source}")
            os.makedirs(d)
            shutil.copy(files[source], os.path.join(d, "dump.rdb"))
        for _ in range(a.rounds):
            for kind, source in cases:
                d = os.path.join(root, f"{kind}-loads-{source}")
                port = free_port()
                proc, c, took = start(command(binaries[kind], d, port), port)
                keys[(kind, source)] = c.dbsize()
                stop(proc)
                times[(kind, source)].append(took)
        for kind, source in cases:
            took = statistics.median(times[(kind, source)])
            print(f"{kind:5} loads {source:5}'s file: {took:6.2f} s (median of {a.rounds}), "
                  f"{keys[(kind, source)]} keys")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
