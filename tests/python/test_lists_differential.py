"""Random list traffic against ebb and redis-server side by side: every
reply must be the same. The elements cross the sizes where ebb changes a
list's form (64-byte elements, 128 elements, 4 KB nodes, elements longer
than a node), so both of its list forms and the moves between them meet
Redis's behaviour. Skipped when redis-server is not installed."""

import random

import pytest
import redis


KEYS = ["l1", "l2", "l3"]


def element(rng):
    kind = rng.random()
    if kind < 0.55:
        return f"e{rng.randrange(12)}"
    if kind < 0.75:
        return "m" * rng.choice([63, 64, 65, 66])
    if kind < 0.93:
        return f"v{rng.randrange(1000)}:" + "x" * rng.randrange(200)
    return "L" * rng.choice([4000, 4095, 4096, 9000])


def index(rng, n):
    return rng.choice([0, -1, rng.randrange(-n - 3, n + 3) if n else rng.randrange(-3, 3), n, -n - 1])


def command(rng, sizes):
    key = rng.choice(KEYS)
    n = sizes.get(key, 0)
    op = rng.random()
    if op < 0.28:
        cmd = rng.choice(["LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"])
        count = rng.choice([1, 1, 3, 40, 150])
        return [cmd, key, *[element(rng) for _ in range(count)]]
    if op < 0.40:
        cmd = rng.choice(["LPOP", "RPOP"])
        return [cmd, key] if rng.random() < 0.6 else [cmd, key, rng.choice([0, 1, 5, 70, 1000])]
    if op < 0.48:
        return ["LINDEX", key, index(rng, n)]
    if op < 0.55:
        return ["LSET", key, index(rng, n), element(rng)]
    if op < 0.61:
        return ["LINSERT", key, rng.choice(["BEFORE", "AFTER"]), f"e{rng.randrange(12)}", element(rng)]
    if op < 0.67:
        return ["LREM", key, rng.choice([0, 1, 2, -1, -3]), f"e{rng.randrange(12)}"]
    if op < 0.72:
        return ["LTRIM", key, index(rng, n), index(rng, n)]
    if op < 0.82:
        return ["LRANGE", key, index(rng, n), index(rng, n)]
    if op < 0.88:
        args = ["LPOS", key, f"e{rng.randrange(12)}"]
        if rng.random() < 0.5:
            args += ["RANK", rng.choice([1, 2, -1, -2])]
        if rng.random() < 0.5:
            args += ["COUNT", rng.choice([0, 1, 3])]
        if rng.random() < 0.3:
            args += ["MAXLEN", rng.choice([0, 5, 100])]
        return args
    if op < 0.93:
        return ["LMOVE", key, rng.choice(KEYS), rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])]
    if op < 0.96:
        return ["LMPOP", 2, key, rng.choice(KEYS), rng.choice(["LEFT", "RIGHT"]), "COUNT", rng.choice([1, 7, 300])]
    return ["LLEN", key]


def run(client, args):
    try:
        return client.execute_command(*args)
    except redis.ResponseError as e:
        return ("error", str(e))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_list_traffic_matches_redis(side_by_side, seed):
    a, b = side_by_side
    rng = random.Random(seed)
    sizes = {}
    peak = 0
    for step in range(1500):
        args = command(rng, sizes)
        got, want = run(a, args), run(b, args)
        assert got == want, f"step {step}: {args[:6]}"
        if step % 50 == 0 or args[0] in ("LTRIM", "LMOVE", "LMPOP"):
            sizes = {k: b.llen(k) for k in KEYS}
            peak = max(peak, *sizes.values())
    # The traffic did reach lists past the packed form's 128 elements.
    assert peak > 300
    for k in KEYS:
        assert a.lrange(k, 0, -1) == b.lrange(k, 0, -1)
        assert a.exists(k) == b.exists(k)
