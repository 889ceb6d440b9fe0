"""Many clients hammering one key at once.

The native recipe commands stay exact under contention: LIMIT admits exactly
max (never more, never fewer when enough clients tried), all-or-nothing;
CAP never lets a reader see more than n members; INCR + KEEPTTL loses no
increment and keeps the deadline of the call that created the member. The
Redis 7.0 forms of the same recipes (MULTI/EXEC, WATCH retry loops) keep
their guarantees too.
"""

import math
import threading
import time

import pytest
import redis

from conftest import EbbServer, raw_cmd, wait_until

CLIENTS = 10


@pytest.fixture(scope="module", params=[1, 4], ids=["io-threads=1", "io-threads=4"])
def ebb(request, tmp_path_factory):
    """Every test here runs against one connection thread (the default) and
    against four, where clients are served on several threads at once."""
    d = tmp_path_factory.mktemp("ebb-concurrency")
    s = EbbServer("--io-threads", str(request.param), "--dir", str(d), cwd=str(d))
    yield s
    s.stop()

TRIES = 30


def hammer(ebb, fn, clients=CLIENTS, tries=TRIES):
    """Runs fn(client, thread, i) tries times in each of `clients` threads,
    all released at once; returns every result, per thread in call order."""
    start = threading.Barrier(clients)
    results = [None] * clients
    errors = []

    def worker(t):
        c = ebb.client()
        try:
            start.wait(10)
            results[t] = [fn(c, t, i) for i in range(tries)]
        except Exception as e:  # noqa: BLE001 - surfaced below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "a client hung"
    assert not errors, errors
    return results


def flat(results):
    return [x for per_thread in results for x in per_thread]


class Watcher:
    """A reader thread sampling f(client) until stopped."""

    def __init__(self, ebb, f):
        self.samples = []
        self.stop = threading.Event()
        self.errors = []

        def run():
            c = ebb.client()
            try:
                while not self.stop.is_set():
                    self.samples.append(f(c))
            except Exception as e:  # noqa: BLE001 - surfaced in finish()
                self.errors.append(e)
            finally:
                c.close()

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def finish(self):
        self.stop.set()
        self.thread.join(30)
        assert not self.errors, self.errors
        assert len(self.samples) > 10, "the reader took too few samples"
        return self.samples


# ------------------------------------------------------------------ LIMIT


def test_saddex_limit_admits_exactly_max(ebb, r):
    w = Watcher(ebb, lambda c: c.scard("otp"))
    res = flat(hammer(ebb, lambda c, t, i: c.execute_command("SADDEX", "otp", "LIMIT", 5, 60, f"{t}:{i}")))
    seen = w.finish()
    assert res.count(1) == 5 and res.count(-1) == len(res) - 5, res
    assert max(seen) <= 5
    assert r.scard("otp") == 5
    members = sorted(r.smembers("otp"))
    ttls = raw_cmd(r, "STTL", "otp", "MEMBERS", 5, *members)
    assert all(0 < x <= 60 for x in ttls), ttls


def test_zaddex_limit_admits_exactly_max(ebb, r):
    w = Watcher(ebb, lambda c: c.zcard("z"))
    res = flat(
        hammer(ebb, lambda c, t, i: c.execute_command("ZADDEX", "z", "LIMIT", 5, "EX", 60, t * 100 + i, f"{t}:{i}"))
    )
    seen = w.finish()
    assert res.count(1) == 5 and res.count(-1) == len(res) - 5, res
    assert max(seen) <= 5
    assert r.zcard("z") == 5
    members = r.zrange("z", 0, -1)
    ttls = raw_cmd(r, "ZTTL", "z", "MEMBERS", 5, *members)
    assert all(0 < x <= 60 for x in ttls), ttls


def test_saddex_limit_is_all_or_nothing_under_contention(ebb, r):
    """Pairs of members against LIMIT 5: two pairs fit, the third never
    half-fits."""
    res = flat(hammer(ebb, lambda c, t, i: c.execute_command("SADDEX", "k", "LIMIT", 5, 60, f"{t}:{i}:a", f"{t}:{i}:b")))
    assert res.count(2) == 2 and res.count(-1) == len(res) - 2, res
    members = r.smembers("k")
    pairs = {m[:-2] for m in members}
    # Both members of each admitted pair, nothing else.
    assert len(pairs) == 2 and members == {p + s for p in pairs for s in (":a", ":b")}


@pytest.mark.parametrize("typ", ["set", "zset"])
def test_limit_admits_again_exactly_max_once_members_expired(ebb, r, typ):
    if typ == "set":
        add = lambda c, t, i, p: c.execute_command("SADDEX", "k", "LIMIT", 5, 60, f"{p}{t}:{i}")  # noqa: E731
        members = lambda: sorted(r.smembers("k"))  # noqa: E731
        expire = "SPEXPIRE"
    else:
        add = lambda c, t, i, p: c.execute_command(  # noqa: E731
            "ZADDEX", "k", "LIMIT", 5, "EX", 60, i, f"{p}{t}:{i}"
        )
        members = lambda: sorted(r.zrange("k", 0, -1))  # noqa: E731
        expire = "ZPEXPIRE"
    first = flat(hammer(ebb, lambda c, t, i: add(c, t, i, "one:")))
    assert first.count(1) == 5
    live = members()
    assert raw_cmd(r, expire, "k", 100, "MEMBERS", 5, *live) == [1] * 5
    wait_until(lambda: r.exists("k") == 0)
    second = flat(hammer(ebb, lambda c, t, i: add(c, t, i, "two:")))
    assert second.count(1) == 5 and second.count(-1) == len(second) - 5
    again = members()
    assert len(again) == 5 and all(m.startswith("two:") for m in again)


# -------------------------------------------------------------------- CAP


def test_zaddex_cap_never_exceeds_n(ebb, r):
    w = Watcher(ebb, lambda c: c.zcard("recent"))
    res = flat(
        hammer(
            ebb,
            lambda c, t, i: c.execute_command("ZADDEX", "recent", "CAP", 10, "EX", 60, t * 1000 + i, f"{t}:{i}"),
        )
    )
    seen = w.finish()
    assert set(res) <= {0, 1}, res
    assert max(seen) <= 10, max(seen)
    assert r.zcard("recent") == 10
    # Whatever the interleaving, the survivors are the ten highest scores.
    everything = sorted(t * 1000 + i for t in range(CLIENTS) for i in range(TRIES))
    assert [s for _, s in r.zrange("recent", 0, -1, withscores=True)] == everything[-10:]


def test_zaddex_cap_with_pipelines_never_exceeds_n(ebb, r):
    """Same, each client sending its commands ten at a time."""
    w = Watcher(ebb, lambda c: c.zcard("recent"))

    def batch(c, t, i):
        p = c.pipeline(transaction=False)
        for j in range(10):
            p.execute_command("ZADDEX", "recent", "CAP", 10, "PX", 60_000, (t * 100 + i) * 10 + j, f"{t}:{i}:{j}")
        return p.execute()

    hammer(ebb, batch, tries=10)
    seen = w.finish()
    assert max(seen) <= 10
    assert r.zcard("recent") == 10


# ---------------------------------------------------------- INCR + KEEPTTL


def test_zaddex_incr_keepttl_loses_no_increment_and_keeps_first_deadline(ebb, r):
    def incr(c, t, i):
        ttl = 60 + t * TRIES + i  # each call asks for a different TTL
        t0 = time.time() * 1000
        score = c.execute_command("ZADDEX", "cnt", "INCR", "KEEPTTL", "EX", ttl, 1, "bucket")
        t1 = time.time() * 1000
        return float(score), ttl, t0, t1

    calls = flat(hammer(ebb, incr))
    n = len(calls)
    # Every increment was applied, one at a time.
    assert sorted(s for s, _, _, _ in calls) == [float(i) for i in range(1, n + 1)]
    assert float(r.zscore("cnt", "bucket")) == n
    # The deadline is the one the creating call (the one that got 1) set.
    _, ttl, t0, t1 = next(c for c in calls if c[0] == 1.0)
    deadline = raw_cmd(r, "ZPEXPIRETIME", "cnt", "MEMBERS", 1, "bucket")[0]
    assert math.floor(t0) + ttl * 1000 - 1 <= deadline <= math.ceil(t1) + ttl * 1000 + 1, (deadline, t0, t1, ttl)
    left = raw_cmd(r, "ZPTTL", "cnt", "MEMBERS", 1, "bucket")[0]
    assert 0 < left <= ttl * 1000


def test_zaddex_incr_keepttl_many_buckets(ebb, r):
    """Per-minute buckets: each thread spreads its increments over 3 buckets;
    every bucket ends with the exact count and a deadline."""
    hammer(ebb, lambda c, t, i: c.execute_command("ZADDEX", "tb", "INCR", "KEEPTTL", "EX", 180, 1, f"m{i % 3}"))
    scores = dict(r.zrange("tb", 0, -1, withscores=True))
    assert scores == {f"m{b}": float(CLIENTS * TRIES // 3) for b in range(3)}
    ttls = raw_cmd(r, "ZTTL", "tb", "MEMBERS", 3, "m0", "m1", "m2")
    assert all(0 < x <= 180 for x in ttls)


# ------------------------------------------------ the Redis 7.0 way of it


def test_redis_way_unique_score_push_with_multi_leaves_one_per_score(ebb, r):
    """ZREMRANGEBYSCORE s s + ZADD s member in MULTI/EXEC: however the
    clients interleave, each score ends with exactly one member."""
    scores = 20

    def push(c, t, i):
        p = c.pipeline(transaction=True)
        p.zremrangebyscore("ts", i, i)
        p.zadd("ts", {f"{t}:{i}": i})
        return p.execute()

    hammer(ebb, push, tries=scores)
    assert r.zcard("ts") == scores
    for s in range(scores):
        assert r.zcount("ts", s, s) == 1


def test_redis_way_unique_push_with_watch_retry_has_one_winner(ebb, r):
    """WATCH, check, MULTI/ZADD/EXEC, retry on abort: for each score exactly
    one client wins and the others see it taken."""
    scores = 15

    def push(c, t, i):
        with c.pipeline() as p:
            while True:
                try:
                    p.watch("ts")
                    if p.zcount("ts", i, i) > 0:
                        p.unwatch()
                        return i, 0
                    p.multi()
                    p.zadd("ts", {f"{t}:{i}": i})
                    p.execute()
                    return i, 1
                except redis.WatchError:
                    continue

    res = flat(hammer(ebb, push, tries=scores))
    for s in range(scores):
        assert sum(won for sc, won in res if sc == s) == 1
    assert r.zcard("ts") == scores


def test_redis_way_capped_recent_list_never_exceeds_n(ebb, r):
    """ZADD + ZREMRANGEBYRANK 0 -(N+1) + EXPIRE in MULTI/EXEC."""
    w = Watcher(ebb, lambda c: c.zcard("rv"))

    def view(c, t, i):
        p = c.pipeline(transaction=True)
        p.zadd("rv", {f"{t}:{i}": t * 1000 + i})
        p.zremrangebyrank("rv", 0, -11)
        p.expire("rv", 60)
        return p.execute()

    hammer(ebb, view)
    seen = w.finish()
    assert max(seen) <= 10
    assert r.zcard("rv") == 10
