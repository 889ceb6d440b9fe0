"""used_memory and maxmemory: INFO counts allocated bytes; above the limit
writes evict keys by maxmemory-policy (logged, notified, counted) or are
refused with Redis's OOM error, while reads and deletes keep working."""

import time

import pytest
import redis

# redis-py turns the "OOM" error code into OutOfMemoryError and keeps the rest.
OOM = "command not allowed when used memory > 'maxmemory'."


def used(c):
    return int(c.info("memory")["used_memory"])


def fill(c, prefix, n, size=100, **kw):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set(f"{prefix}:{i}", "x" * size, **kw)
    return p.execute(raise_on_error=False)


def test_used_memory_follows_the_data(r):
    base = used(r)
    fill(r, "k", 20_000)
    grown = used(r)
    assert grown - base > 20_000 * 100
    r.flushall()
    assert used(r) < base + (grown - base) // 4
    info = r.info("memory")
    assert info["used_memory_peak"] >= grown
    assert info["maxmemory"] == 0 and info["maxmemory_policy"] == "noeviction"


def test_noeviction_refuses_writes_but_serves_reads(r):
    fill(r, "keep", 100)
    r.config_set("maxmemory", used(r) + 2_000_000)
    try:
        replies = fill(r, "k", 50_000)
        errors = [e for e in replies if isinstance(e, redis.ResponseError)]
        assert errors and isinstance(errors[0], redis.exceptions.OutOfMemoryError)
        assert str(errors[0]) == OOM
        assert r.get("keep:1") == "x" * 100
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.lpush("list", "a")
        assert r.delete("keep:1") == 1
        assert r.info("stats")["evicted_keys"] == 0
    finally:
        r.config_set("maxmemory", 0)
    r.set("after", "ok")


@pytest.mark.parametrize("policy", ["allkeys-random", "allkeys-lru", "allkeys-lfu"])
def test_allkeys_policies_evict_instead_of_failing(r, policy):
    r.config_set("maxmemory-policy", policy)
    r.config_set("maxmemory", used(r) + 3_000_000)
    try:
        replies = fill(r, "k", 60_000)
        assert not [e for e in replies if isinstance(e, Exception)]
        assert r.info("stats")["evicted_keys"] > 0
        assert 0 < r.dbsize() < 60_000
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")


def test_volatile_ttl_evicts_keys_ending_first_and_spares_persistent_ones(r):
    fill(r, "persistent", 2_000)
    r.config_set("maxmemory-policy", "volatile-ttl")
    r.config_set("maxmemory", used(r) + 3_000_000)
    try:
        p = r.pipeline(transaction=False)
        for i in range(60_000):
            p.set(f"t:{i}", "x" * 100, ex=100_000 + i)
        replies = p.execute(raise_on_error=False)
        assert not [e for e in replies if isinstance(e, Exception)]
        assert r.info("stats")["evicted_keys"] > 0
        assert r.exists(*[f"persistent:{i}" for i in range(2_000)]) == 2_000
        # The keys ending first went first.
        assert r.exists("t:0") == 0 and r.exists("t:59999") == 1
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")


def test_volatile_policy_without_volatile_keys_refuses(r):
    fill(r, "persistent", 1_000)
    r.config_set("maxmemory-policy", "volatile-lru")
    r.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.set("more", "v")
        assert r.dbsize() == 1_000
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")


def test_evictions_are_notified(r, ebb):
    r.config_set("notify-keyspace-events", "Ee")
    sub = redis.Redis(port=ebb.port, decode_responses=True).pubsub()
    sub.subscribe("__keyevent@0__:evicted")
    assert sub.get_message(timeout=2)["type"] == "subscribe"
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", used(r) + 1_000_000)
    try:
        fill(r, "k", 30_000)
        msg = None
        end = time.time() + 5
        while msg is None and time.time() < end:
            msg = sub.get_message(timeout=0.5)
        assert msg and msg["data"].startswith("k:")
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")
        r.config_set("notify-keyspace-events", "")
        sub.close()


def test_exec_of_a_growing_transaction_over_the_limit_is_aborted(r, ebb):
    other = ebb.client()
    r.execute_command("MULTI")
    r.execute_command("SET", "x", "1")
    r.execute_command("GET", "x")
    other.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.ResponseError, match="^Transaction discarded because of: OOM command not allowed"):
            r.execute_command("EXEC")
        # Over the limit, even a read queued inside MULTI is refused (the
        # queue itself grows), as Redis does, and EXEC then aborts.
        r.execute_command("MULTI")
        with pytest.raises(redis.ResponseError, match="^command not allowed when used memory"):
            r.execute_command("GET", "x")
        with pytest.raises(redis.ResponseError, match="^Transaction discarded because of previous errors"):
            r.execute_command("EXEC")
        # A read-only transaction queued before the limit still runs.
        other.config_set("maxmemory", 0)
        r.execute_command("MULTI")
        r.execute_command("GET", "x")
        other.config_set("maxmemory", 1)
        assert r.execute_command("EXEC") == [None]
    finally:
        other.config_set("maxmemory", 0)


def test_config_resetstat_clears_evicted_keys(r):
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", used(r) + 1_000_000)
    try:
        fill(r, "k", 30_000)
        assert r.info("stats")["evicted_keys"] > 0
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")
    r.config_resetstat()
    assert r.info("stats")["evicted_keys"] == 0


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
def test_the_limit_holds_as_volatile_keys_replace_each_other(ebb, policy):
    """Redis's own check: fill to just under the limit with half the keys
    volatile, add as many volatile keys again, and memory in use must stay
    within 4 KB of the limit (key tables near the limit grow only into the
    room left, and give back the slots of evicted keys) while every
    persistent key survives."""
    c = redis.Redis(port=ebb.port, decode_responses=True)
    c.flushall()
    c.config_set("latency-tracking", "no")
    limit = used(c) + 100 * 1024
    c.config_set("maxmemory", limit)
    c.config_set("maxmemory-policy", policy)
    try:
        n = 0
        while True:
            if n % 2:
                c.set(f"key:{n}", "x", ex=10000)
            else:
                c.set(f"key:{n}", "x")
            if used(c) + 4096 > limit:
                break
            n += 1
        assert n > 10
        for j in range(n):
            c.set(f"foo:{j}", "x", ex=10000)
        assert used(c) < limit + 4096
        assert all(c.exists(f"key:{j}") for j in range(0, n, 2))
    finally:
        c.config_set("maxmemory", 0)
        c.config_set("maxmemory-policy", "noeviction")
        c.config_set("latency-tracking", "yes")


def test_an_index_split_waits_for_room_under_the_limit(ebb):
    """4,096 keys is where a key table's index would split into segments
    (about 100 kB): with 10 kB left under the limit the split waits, and
    the next writes evict nothing (Redis's "don't rehash" check)."""
    c = redis.Redis(port=ebb.port, decode_responses=True)
    c.flushall()
    c.config_set("latency-tracking", "no")
    c.config_set("maxmemory-policy", "allkeys-random")
    fill(c, "key", 4096, size=1)
    c.config_resetstat()
    c.config_set("maxmemory", used(c) + 10 * 1024)
    try:
        c.set("k1", "v1")
        c.set("k2", "v2")
        assert c.dbsize() == 4098
        assert c.info("stats")["evicted_keys"] == 0
    finally:
        c.config_set("maxmemory", 0)
        c.config_set("maxmemory-policy", "noeviction")
        c.config_set("latency-tracking", "yes")


def test_small_integers_are_not_shared_under_an_lru_or_lfu_limit(r):
    """OBJECT REFCOUNT as Redis reports it: small integers are shared
    (INT_MAX) unless maxmemory is set with an LRU or LFU policy. (ebb
    judges this when asked; Redis when the value is stored, so a value
    stored before the policy changed can differ.)"""
    r.set("a", 1)
    assert r.object("refcount", "a") == 2147483647
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", 1 << 30)
    try:
        assert r.object("refcount", "a") == 2147483647
        for policy in ("allkeys-lru", "volatile-lfu"):
            r.config_set("maxmemory-policy", policy)
            r.set("b", 1)
            assert r.object("refcount", "b") == 1
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", "noeviction")


def test_eviction_counts_what_each_removal_frees(srv):
    """Redis's eviction pass works out how much to free when it starts and
    counts what each removal gives back, so what eviction itself creates
    (the evicted key's name, held for its notifications, its DEL in the
    log, invalidation messages to ten tracking clients) does not make it
    evict more. Long key names and tiny values (Redis's "client tracking
    don't cause eviction feedback loop"): 40 kB under the memory in use
    takes a few dozen keys, not the database. On a server of its own: a
    client left subscribed to keyspace events by another test would be
    sent every evicted name too. Runs against redis-server too
    (AGAINST_REDIS=1)."""
    c = srv.client()
    c.config_set("latency-tracking", "no")
    c.config_set("maxmemory-policy", "allkeys-lru")
    c.config_set("maxmemory-eviction-tenacity", 100)
    trackers = []
    for _ in range(10):
        t = redis.Redis(port=srv.port, protocol=3)
        t.execute_command("CLIENT", "TRACKING", "on")
        trackers.append(t)
    try:
        for j in range(300):
            key = f"{j}" + "x" * 1000
            c.set(key, "x")
            for t in trackers:
                t.get(key)
        c.config_resetstat()
        c.config_set("maxmemory", used(c) - 40_000)
        evicted = c.info("stats")["evicted_keys"]
        assert 200 <= c.dbsize() <= 300
        assert 10 <= evicted <= 50
    finally:
        c.config_set("maxmemory", 0)
        c.config_set("maxmemory-policy", "noeviction")
        c.config_set("latency-tracking", "yes")
        for t in trackers:
            t.close()
