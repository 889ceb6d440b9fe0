"""Random command sequences sent to ebb-server and, prefixed with `ebb.`, to
redis-server with the module: every reply must be the same. The module runs
core's commands on values it moves in and out of the server's keys, so any
difference is the glue's (a value, TTL or deletion not put back as core left
it). Deadlines are absolute and either far ahead or already past, so both
servers see the same members expire whatever their timing."""

import random

import redis

from conftest import EbbServer, module_server, raw_cmd

KEYS = ["a", "b", "c"]
MEMBERS = ["m1", "m2", "m3", "m4", "m5"]
FAR = "4102444800000"  # 2100, in ms
PAST = "1000"


def member(r):
    return r.choice(MEMBERS)


def some(r):
    return r.sample(MEMBERS, r.randint(1, 3))


def when(r):
    return r.choice([FAR, FAR, PAST])


def command(r):
    k = r.choice(KEYS)
    k2 = r.choice(KEYS)
    n = str(r.randint(-2, 6))
    ops = [
        lambda: ["SADD", k, *some(r)],
        lambda: ["SREM", k, *some(r)],
        lambda: ["SADDEX", k, "100000", *some(r)],
        lambda: ["SADDEX", k, "LIMIT", "3", "100000", *some(r)],
        lambda: ["SPEXPIREAT", k, when(r), "MEMBERS", "2", *r.sample(MEMBERS, 2)],
        lambda: ["SISMEMBER", k, member(r)],
        lambda: ["SCARD", k],
        lambda: ["SMEMBERS", k],
        lambda: ["SINTERSTORE", k, k2, r.choice(KEYS)],
        lambda: ["SUNIONSTORE", k, k2],
        lambda: ["SPEXPIRETIME", k, "MEMBERS", "1", member(r)],
        lambda: ["ZADD", k, str(r.randint(-3, 3)), member(r)],
        lambda: ["ZADDEX", k, "PXAT", when(r), str(r.randint(0, 9)), member(r)],
        lambda: ["ZADDEX", k, "CAP", "3", "PXAT", FAR, str(r.randint(0, 9)), member(r)],
        lambda: ["ZINCRBY", k, "1.5", member(r)],
        lambda: ["ZREM", k, *some(r)],
        lambda: ["ZRANGE", k, "0", "-1", "WITHSCORES"],
        lambda: ["ZRANGE", k, "(1", "+inf", "BYSCORE", "LIMIT", "0", n],
        lambda: ["ZCARD", k],
        lambda: ["ZPOPMIN", k],
        lambda: ["ZUNIONSTORE", k, "2", k2, r.choice(KEYS)],
        lambda: ["ZPEXPIREAT", k, when(r), "MEMBERS", "1", member(r)],
        lambda: ["ZPEXPIRETIME", k, "MEMBERS", "2", *r.sample(MEMBERS, 2)],
        lambda: ["HSET", k, member(r), str(r.randint(0, 99))],
        lambda: ["HDEL", k, *some(r)],
        lambda: ["HINCRBY", k, member(r), n],
        lambda: ["HGETALL", k],
        lambda: ["HPEXPIREAT", k, when(r), "FIELDS", "1", member(r)],
        lambda: ["HPEXPIRETIME", k, "FIELDS", "2", *r.sample(MEMBERS, 2)],
        lambda: ["HSETEX", k, "PXAT", when(r), "FIELDS", "1", member(r), "v"],
        lambda: ["HGETDEL", k, "FIELDS", "1", member(r)],
        lambda: ["TYPE", k],
        lambda: ["PERSIST", k],
        # Key-level commands are the server's own on both sides.
        lambda: ["!EXPIRE", k, "1000"],
        lambda: ["!TTL", k],
        lambda: ["!DEL", k],
        lambda: ["!RENAME", k, k2],
    ]
    return r.choice(ops)()


def reply(c, args):
    """The reply as the server sent it (no per-command conversion, which
    would differ between a command and its `ebb.` name)."""
    try:
        return raw_cmd(c, *args)
    except redis.ResponseError as e:
        return f"error: {e}"


def same(a, b):
    """Equal, but for deadlines set from a relative TTL (SADDEX), which
    each server computes from its own clock a moment apart."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, int) and isinstance(b, int) and min(a, b) > 10**12:
        return abs(a - b) <= 1000
    return a == b


def test_random_sequences_match_ebb_server(tmp_path):
    (tmp_path / "e").mkdir()
    (tmp_path / "r").mkdir()
    e = EbbServer("--dir", str(tmp_path / "e"), cwd=str(tmp_path / "e"))
    m = module_server(tmp_path / "r")
    ec, mc = e.client(protocol=2), m.client(protocol=2)
    try:
        for seed in range(12):
            r = random.Random(seed)
            ec.flushall()
            mc.flushall()
            for step in range(600):
                args = command(r)
                if args[0].startswith("!"):
                    args[0] = args[0][1:]
                    theirs = args
                else:
                    theirs = ["ebb." + args[0].lower(), *args[1:]]
                want = reply(ec, args)
                got = reply(mc, theirs)
                assert same(got, want), (seed, step, args, got, want)
                # The keys' TTLs (key-level) and existence agree as well.
                if step % 50 == 0:
                    for k in KEYS:
                        assert mc.exists(k) == ec.exists(k), (seed, step, k)
    finally:
        ec.close()
        mc.close()
        e.stop()
        m.stop()
