"""Eight or more clients hammering one key: the native recipe commands stay
exact under contention (LIMIT admits exactly max, CAP never leaves more than
n, INCR+KEEPTTL never loses an increment), and the Redis 7.0 MULTI/EXEC form
of a "unique push" leaves exactly one member."""

import threading

import redis

CLIENTS = 10
TRIES = 40


def hammer(ebb, fn):
    results = []
    lock = threading.Lock()

    def worker(t):
        c = ebb.client()
        local = [fn(c, t, i) for i in range(TRIES)]
        with lock:
            results.extend(local)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(CLIENTS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return results


def test_saddex_limit_admits_exactly_max(ebb, r):
    res = hammer(ebb, lambda c, t, i: c.execute_command("SADDEX", "otp", "LIMIT", 5, 60, f"{t}:{i}"))
    assert res.count(1) == 5
    assert res.count(-1) == CLIENTS * TRIES - 5
    assert r.scard("otp") == 5


def test_zaddex_limit_admits_exactly_max(ebb, r):
    res = hammer(ebb, lambda c, t, i: c.execute_command("ZADDEX", "z", "LIMIT", 5, "EX", 60, i, f"{t}:{i}"))
    assert res.count(1) == 5
    assert r.zcard("z") == 5


def test_zaddex_cap_never_exceeds(ebb, r):
    seen = []
    stop = threading.Event()

    def reader():
        c = ebb.client()
        while not stop.is_set():
            seen.append(c.zcard("recent"))

    rt = threading.Thread(target=reader)
    rt.start()
    hammer(ebb, lambda c, t, i: c.execute_command("ZADDEX", "recent", "CAP", 10, "EX", 60, t * 1000 + i, f"{t}:{i}"))
    stop.set()
    rt.join(10)
    assert seen and max(seen) <= 10
    assert r.zcard("recent") == 10
    # The survivors are the highest scores.
    top = r.zrange("recent", 0, -1, withscores=True)
    assert [s for _, s in top] == sorted(t * 1000 + i for t in range(CLIENTS - 1, CLIENTS) for i in range(TRIES - 10, TRIES))


def test_zaddex_incr_keepttl_loses_nothing(ebb, r):
    r.execute_command("ZADDEX", "cnt", "INCR", "KEEPTTL", "EX", 60, 1, "bucket")
    first = r.execute_command("ZPTTL", "cnt", "MEMBERS", 1, "bucket")[0]
    hammer(ebb, lambda c, t, i: c.execute_command("ZADDEX", "cnt", "INCR", "KEEPTTL", "EX", 3600, 1, "bucket"))
    assert float(r.zscore("cnt", "bucket")) == 1 + CLIENTS * TRIES
    # KEEPTTL: the deadline is still the one the first increment set.
    assert 0 < r.execute_command("ZPTTL", "cnt", "MEMBERS", 1, "bucket")[0] <= first


def test_redis_way_unique_push_with_watch_leaves_one(ebb, r):
    """Two clients push the same 'unique' member with the same score through
    the WATCH retry loop: exactly one member remains."""

    def push(c, t, i):
        with c.pipeline() as p:
            while True:
                try:
                    p.watch("ts")
                    if p.zscore("ts", "v") is not None:
                        p.unwatch()
                        return 0
                    p.multi()
                    p.zadd("ts", {"v": 100})
                    p.zremrangebyscore("ts", "-inf", 0)
                    p.execute()
                    return 1
                except redis.WatchError:
                    continue

    res = hammer(ebb, push)
    assert res.count(1) == 1
    assert r.zrange("ts", 0, -1, withscores=True) == [("v", 100.0)]
