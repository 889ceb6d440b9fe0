#!/usr/bin/env python3
"""Mass member expiry: one sorted set of N members sharing one deadline.

Measures (a) the time from the deadline until the members are reclaimed by
the active-expiry sweeper (no client touches the key: progress is read from
INFO keyspace, which does not purge), and (b) the latency of PING/GET from
another client while it happens (p50, p99, max).

Usage: mass_expiry.py --port PORT [--members 1000000] [--ttl-ms 3000]
"""

import argparse
import statistics
import threading
import time

import redis


def info_keys(c):
    ks = c.info("keyspace")
    db = ks.get("db0")
    return db["keys"] if db else 0


def rss(c):
    return int(c.info("memory").get("used_memory_rss", 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--members", type=int, default=1_000_000)
    ap.add_argument("--ttl-ms", type=int, default=3000)
    ap.add_argument("--spread-ms", type=int, default=0,
                    help="spread deadlines over this many ms (0: all share one deadline)")
    args = ap.parse_args()
    c = redis.Redis(port=args.port)
    c.flushall()
    c.set("probe", "x")
    n = args.members
    chunk = 10_000
    load_start = time.time()
    deadline_ms = None
    for i in range(0, n, chunk):
        p = c.pipeline(transaction=False)
        flat = []
        for j in range(i, min(n, i + chunk)):
            flat += [j, f"member:{j:012d}"]
        p.execute_command("ZADD", "big", *flat)
        p.execute()
    # Every member gets the same absolute deadline.
    deadline_ms = int(time.time() * 1000) + args.ttl_ms
    spread = max(1, args.spread_ms)
    for i in range(0, n, chunk):
        groups = {}
        for j in range(i, min(n, i + chunk)):
            groups.setdefault(deadline_ms + (j % spread if args.spread_ms else 0), []).append(f"member:{j:012d}")
        p = c.pipeline(transaction=False)
        for at, members in groups.items():
            p.execute_command("ZPEXPIREAT", "big", at, "MEMBERS", len(members), *members)
        p.execute()
    loaded = time.time() - load_start
    rss_loaded = rss(c)
    if time.time() * 1000 >= deadline_ms:
        print(f"warning: loading took {loaded:.1f}s, longer than the TTL; raise --ttl-ms")

    lat = []
    stop = threading.Event()

    def prober():
        pc = redis.Redis(port=args.port)
        while not stop.is_set():
            t0 = time.perf_counter()
            pc.ping()
            pc.get("probe")
            lat.append((time.perf_counter() - t0) * 1000 / 2)

    t = threading.Thread(target=prober)
    t.start()
    deadline_ms += args.spread_ms
    while time.time() * 1000 < deadline_ms - args.spread_ms:
        time.sleep(0.001)
    lat.clear()
    start = time.time()
    reclaimed = None
    while time.time() - start < 30:
        if info_keys(c) == 1:  # only "probe" is left
            reclaimed = time.time() - start
            break
        time.sleep(0.005)
    time.sleep(0.2)
    stop.set()
    t.join()
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    print(f"members={n} load_s={loaded:.1f} rss_loaded_mb={rss_loaded/1e6:.1f} rss_after_mb={rss(c)/1e6:.1f}")
    print(f"reclaim_s={reclaimed if reclaimed is None else round(reclaimed, 3)}")
    print(f"probe_requests={len(lat)} p50_ms={p(0.5):.3f} p99_ms={p(0.99):.3f} max_ms={max(lat) if lat else float('nan'):.3f} mean_ms={statistics.mean(lat) if lat else float('nan'):.3f}")


if __name__ == "__main__":
    main()
