"""Random set and hash traffic against ebb and redis-server side by side,
across ebb's packed and table forms (members and values around 64 bytes,
sizes around 128, integer-only sets): every reply whose order Redis fixes
must be the same; replies Redis orders by its hash table (SMEMBERS,
HGETALL, SPOP, ...) are compared as sets. Skipped when redis-server is not
installed."""

import random

import pytest


# Replies whose element order is Redis's hash-table order: compared sorted.
UNORDERED = {"SMEMBERS", "SINTER", "SUNION", "SDIFF", "HKEYS", "HVALS"}


def member(rng):
    kind = rng.random()
    if kind < 0.4:
        return str(rng.randrange(-50, 400))
    if kind < 0.8:
        return f"s{rng.randrange(300)}"
    return "w" * rng.choice([63, 64, 65, 100])


def set_command(rng):
    key = rng.choice(["s1", "s2"])
    op = rng.random()
    if op < 0.35:
        return ["SADD", key, *[member(rng) for _ in range(rng.choice([1, 5, 80]))]]
    if op < 0.50:
        return ["SREM", key, *[member(rng) for _ in range(rng.choice([1, 20]))]]
    if op < 0.60:
        return ["SISMEMBER", key, member(rng)]
    if op < 0.65:
        return ["SMISMEMBER", key, member(rng), member(rng)]
    if op < 0.72:
        return ["SCARD", key]
    if op < 0.80:
        return ["SMEMBERS", key]
    if op < 0.88:
        return [rng.choice(["SINTER", "SUNION", "SDIFF"]), "s1", "s2"]
    if op < 0.94:
        return [rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), "s3", "s1", "s2"]
    return ["SMOVE", key, "s2" if key == "s1" else "s1", member(rng)]


def hash_command(rng):
    op = rng.random()
    field = member(rng)
    if op < 0.35:
        pairs = []
        for _ in range(rng.choice([1, 4, 60])):
            pairs += [member(rng), member(rng)]
        return [rng.choice(["HSET", "HMSET"]), "h", *pairs]
    if op < 0.45:
        return ["HDEL", "h", *[member(rng) for _ in range(rng.choice([1, 15]))]]
    if op < 0.55:
        return [rng.choice(["HGET", "HEXISTS", "HSTRLEN"]), "h", field]
    if op < 0.62:
        return ["HMGET", "h", field, member(rng)]
    if op < 0.68:
        return ["HSETNX", "h", field, member(rng)]
    if op < 0.76:
        return ["HINCRBY", "h", f"n{rng.randrange(20)}", rng.randrange(-5, 5)]
    if op < 0.82:
        return ["HLEN", "h"]
    if op < 0.90:
        return [rng.choice(["HKEYS", "HVALS"]), "h"]
    return ["HGETALL", "h"]


def normalise(args, reply):
    if isinstance(reply, Exception):
        return ("error", str(reply))
    if args[0] in UNORDERED and isinstance(reply, (list, set)):
        return sorted(reply)
    if args[0] == "HGETALL" and isinstance(reply, dict):
        return sorted(reply.items())
    if args[0] == "HGETALL" and isinstance(reply, list):
        return sorted(zip(reply[::2], reply[1::2]))
    return reply


def run(client, args):
    try:
        return client.execute_command(*args)
    except Exception as e:  # noqa: BLE001 - the error text is compared
        return e


@pytest.mark.parametrize("seed", [1, 2])
def test_random_set_and_hash_traffic_matches_redis(side_by_side, seed):
    a, b = side_by_side
    rng = random.Random(seed)
    for step in range(2000):
        args = set_command(rng) if rng.random() < 0.5 else hash_command(rng)
        got, want = normalise(args, run(a, args)), normalise(args, run(b, args))
        assert got == want, f"step {step}: {args[:5]}"
    for k in ("s1", "s2", "s3"):
        assert a.smembers(k) == b.smembers(k)
    assert a.hgetall("h") == b.hgetall("h")
    assert max(b.scard("s1"), b.scard("s2")) > 128 and b.hlen("h") > 128
