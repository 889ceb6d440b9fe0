#!/usr/bin/env python3
"""Recipe 1: an expiring set of time-stamped values ("the last N seconds of
server stats").

Redis 7.0 way: ZADD with score=timestamp, and on every push a
ZREMRANGEBYSCORE -inf now-ttl in the same MULTI; readers must also filter by
score, because nothing removes old values between pushes.
ebb way: ZADDEX key PX ttl score member -- each value expires by itself, and
reads never show expired values.
"""

import time

from common import connect, ebb, same

TTL_MS = 400


def push_redis_way(r, key, value, now_ms):
    p = r.pipeline(transaction=True)
    p.zadd(key, {value: now_ms})
    p.zremrangebyscore(key, "-inf", now_ms - TTL_MS)
    p.execute()


def read_redis_way(r, key, now_ms):
    return sorted(r.zrangebyscore(key, f"({now_ms - TTL_MS}", "+inf"))


def push_ebb_way(r, key, value, now_ms):
    ebb(r, "ZADDEX", key, "PX", TTL_MS, now_ms, value)


def read_ebb_way(r, key):
    return sorted(ebb(r, "ZRANGE", key, 0, -1))


def main():
    r = connect()
    r.delete("stats:redis", "stats:ebb")
    for i in range(6):
        now = int(time.time() * 1000)
        value = f"cpu={40 + i}%@{now}"
        push_redis_way(r, "stats:redis", value, now)
        push_ebb_way(r, "stats:ebb", value, now)
        time.sleep(0.12)
    now = int(time.time() * 1000)
    same("live values", read_redis_way(r, "stats:redis", now), read_ebb_way(r, "stats:ebb"))
    # After the TTL nothing is left in ebb, without any cleanup command.
    time.sleep(TTL_MS / 1000 + 0.05)
    now = int(time.time() * 1000)
    same("after ttl", read_redis_way(r, "stats:redis", now), read_ebb_way(r, "stats:ebb"))
    same("key gone", 0, r.exists("stats:ebb"))


if __name__ == "__main__":
    main()
