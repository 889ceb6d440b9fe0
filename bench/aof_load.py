#!/usr/bin/env python3
"""Time to load an append-only file of N keys: ebb against redis-server
loading the equivalent file, in the same run, as a ratio.

Usage: aof_load.py --ebb target/release/ebb-server [--keys 1000000]
"""

import argparse
import os
import shutil
import subprocess
import tempfile
import time

from compare import free_port, raw_reply


def write_aof(path, keys):
    with open(path, "wb") as f:
        f.write(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")
        buf = []
        for i in range(keys):
            k = f"key:{i:010d}".encode()
            v = f"value:{i}".encode()
            buf.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
            if len(buf) >= 10000:
                f.write(b"".join(buf))
                buf.clear()
        f.write(b"".join(buf))


def time_load(cmd, port, keys):
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while raw_reply(port, "DBSIZE") != b":%d\r\n" % keys:
        time.sleep(0.005)
        if time.time() - start > 300:
            raise RuntimeError("load did not finish")
    took = time.time() - start
    proc.terminate()
    proc.wait(30)
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ebb", required=True)
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="aofload-")
    src = os.path.join(base, "src.aof")
    write_aof(src, a.keys)
    times = {"redis": [], "ebb": []}
    for _ in range(a.rounds):
        for kind in ("redis", "ebb"):
            d = tempfile.mkdtemp(dir=base)
            shutil.copy(src, os.path.join(d, "appendonly.aof"))
            port = free_port()
            binary = a.redis if kind == "redis" else a.ebb
            cmd = [binary, "--port", str(port), "--dir", d, "--appendonly", "yes", "--save", ""]
            times[kind].append(time_load(cmd, port, a.keys))
            shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    r = sorted(times["redis"])[len(times["redis"]) // 2]
    e = sorted(times["ebb"])[len(times["ebb"]) // 2]
    print(f"AOF of {a.keys:,} SET commands: redis {r:.2f}s, ebb {e:.2f}s, ebb/redis time {e / r:.2f}x (median of {a.rounds})")


if __name__ == "__main__":
    main()
