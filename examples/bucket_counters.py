#!/usr/bin/env python3
"""Recipe 2: bounded timeboxes -- per-minute counters that keep only the
last N buckets, and the top buckets by count.

Redis 7.0 way: two sorted sets (bucket -> count, bucket -> creation time)
updated under WATCH/MULTI/EXEC with a retry loop, plus a trim of buckets
older than N minutes.
ebb way: ZADDEX key INCR KEEPTTL EX n*60 1 <bucket> -- a new bucket gets
the TTL, an existing one keeps its deadline, and the increment never loses
a race.

The example uses 100 ms "minutes" so that it runs quickly.
"""

import time

import redis

from common import connect, ebb, same

MINUTE_MS = 100
KEEP = 3


def incr_redis_way(r, bucket, now_ms):
    with r.pipeline() as p:
        while True:
            try:
                p.watch("cnt:redis", "cnt:redis:born")
                p.multi()
                p.zincrby("cnt:redis", 1, bucket)
                p.zadd("cnt:redis:born", {bucket: now_ms}, nx=True)
                old = r.zrangebyscore("cnt:redis:born", "-inf", now_ms - KEEP * MINUTE_MS)
                for b in old:
                    p.zrem("cnt:redis", b)
                    p.zrem("cnt:redis:born", b)
                p.execute()
                return
            except redis.WatchError:
                continue


def top_redis_way(r, now_ms):
    live = set(r.zrangebyscore("cnt:redis:born", f"({now_ms - KEEP * MINUTE_MS}", "+inf"))
    return [(b, int(s)) for b, s in r.zrevrange("cnt:redis", 0, -1, withscores=True) if b in live]


def incr_ebb_way(r, bucket):
    ebb(r, "ZADDEX", "cnt:ebb", "INCR", "KEEPTTL", "PX", KEEP * MINUTE_MS, 1, bucket)


def top_ebb_way(r):
    rows = ebb(r, "ZREVRANGE", "cnt:ebb", 0, -1, "WITHSCORES", withscores=True)
    return [(b, int(s)) for b, s in rows]


def main():
    r = connect()
    r.delete("cnt:redis", "cnt:redis:born", "cnt:ebb")
    start = time.time()
    hits = [1, 3, 2, 5, 1]  # events per bucket
    for i, n in enumerate(hits):
        # Stay inside bucket i.
        while (time.time() - start) * 1000 < i * MINUTE_MS + 10:
            time.sleep(0.002)
        bucket = f"minute:{i}"
        for _ in range(n):
            now = int(time.time() * 1000)
            incr_redis_way(r, bucket, now)
            incr_ebb_way(r, bucket)
    # Compare only buckets whose fate is settled (not within a few ms of expiring).
    now = int(time.time() * 1000)
    settled = lambda rows: [x for x in rows if x[0] in ("minute:3", "minute:4")]
    same("top live buckets", settled(top_redis_way(r, now)), settled(top_ebb_way(r)))
    time.sleep(KEEP * MINUTE_MS / 1000 + 0.1)
    now = int(time.time() * 1000)
    same("all buckets aged out", top_redis_way(r, now), top_ebb_way(r))


if __name__ == "__main__":
    main()
