"""Member deadlines against the real binary and the real clock.

Members of a set, a sorted set and a hash get a deadline ~150 ms ahead; every
read command of the type is checked once before and once after it, each on a
key of its own so that every command meets the due members itself (active
expiry is off for those checks). Then: exact cardinalities at every instant,
the key going with its last member, MEMORY USAGE, WATCH, RENAME/COPY/MOVE/
SWAPDB, the sweeper working alone, and key and member notifications.

Timing is made deterministic by bounds, not by sleeps: the "before" checks
count only if the client saw the server finish them before the earliest
possible deadline (else the round is redone with a longer TTL), and the
"after" checks start only once the latest possible deadline has passed.
"""

import math
import time

import pytest
import redis

from conftest import raw_cmd, wait_until

TTL_MS = 150
# Upper bound for any TTL a round may use (TTLs grow when the machine is slow).
MAX_TTL_MS = 30_000


def now_ms():
    return time.time() * 1000.0


def sleep_until(ms):
    while True:
        left = ms - now_ms()
        if left <= 0:
            return
        time.sleep(min(left, 50) / 1000.0)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rc(request, ebb):
    """A client per protocol, on a flushed server with events off."""
    c = ebb.client(protocol=request.param)
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    yield c
    c.close()


@pytest.fixture(autouse=True)
def leave_server_as_found(ebb):
    """Whatever a test changed (events, active expiry), the next test starts
    from the defaults."""
    yield
    c = ebb.client()
    c.config_set("notify-keyspace-events", "")
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    c.close()


@pytest.fixture
def lazy_only(ebb):
    """Active expiry off: due members are met by the commands themselves."""
    c = ebb.client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    c.close()


# ------------------------------------------------------------- normalizers


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def srt(v):
    return sorted(s(m) for m in v)


def num(v):
    """A score or count as a float (RESP2 bulk string or RESP3 double)."""
    if v is None:
        return None
    return float(s(v))


def val(v):
    v = s(v)
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)
    except ValueError:
        return v


def opairs(v):
    """(member, value) pairs in reply order, from a flat RESP2 array, an
    array of RESP3 pairs, or a RESP3 map."""
    if isinstance(v, dict):
        items = list(v.items())
    elif v and isinstance(v[0], (list, tuple)):
        items = [tuple(p) for p in v]
    else:
        items = list(zip(v[0::2], v[1::2]))
    return [(s(m), val(x)) for m, x in items]


def pairs(v):
    return sorted(opairs(v))


def full_scan(x, cmd, key, *opts):
    cursor, out = "0", []
    while True:
        cursor, batch = x(cmd, key, cursor, *opts, "COUNT", 3)
        out.extend(batch)
        cursor = s(cursor)
        if cursor == "0":
            return out


# ------------------------------------------------------------------ data

# Logical keys: (type, [(member, score or value, timed?)]).
SET_DATA = {
    "s": [("a", None, True), ("b", None, True), ("c", None, True), ("x", None, False), ("y", None, False)],
    "t": [("a", None, False), ("x", None, False), ("z", None, False)],
}
ZSET_DATA = {
    "z": [("a", 1, True), ("x", 1.5, False), ("b", 2, True), ("c", 3, True), ("y", 4, False)],
    "zl": [("a", 0, True), ("b", 0, True), ("c", 0, True), ("x", 0, False), ("y", 0, False)],
    "z2": [("a", 10, False), ("x", 20, False), ("z", 30, False)],
}
HASH_DATA = {
    "h": [
        ("a", "va", True),
        ("b", "vbb", True),
        ("c", "vccc", True),
        ("n", "10", True),
        ("x", "vx", False),
        ("y", "vyy", False),
    ],
}


def populate(p, typ, key, members, with_timed):
    for m, v, timed in members:
        if timed and not with_timed:
            continue
        if typ == "set":
            p.execute_command("SADD", key, m)
        elif typ == "zset":
            p.execute_command("ZADD", key, v, m)
        else:
            p.execute_command("HSET", key, m, v)


# Arming: the command that gives one key's timed members their deadline.
def arm_cmd(method, key, members, ttl, deadline):
    timed = [(m, v) for m, v, t in members if t]
    names = [m for m, _ in timed]
    if method == "SPEXPIRE":
        return ["SPEXPIRE", key, ttl, "MEMBERS", len(names), *names]
    if method == "SADDEX":
        return ["SADDEX", key, ttl // 1000, *names]
    if method == "SPEXPIREAT":
        return ["SPEXPIREAT", key, deadline, "MEMBERS", len(names), *names]
    if method == "ZPEXPIRE":
        return ["ZPEXPIRE", key, ttl, "MEMBERS", len(names), *names]
    if method == "ZADDEX":
        flat = [a for m, v in timed for a in (v, m)]
        return ["ZADDEX", key, "PX", ttl, *flat]
    if method == "HPEXPIRE":
        return ["HPEXPIRE", key, ttl, "FIELDS", len(names), *names]
    if method == "HSETEX":
        flat = [a for m, v in timed for a in (m, v)]
        return ["HSETEX", key, "PX", ttl, "FIELDS", len(names), *flat]
    raise AssertionError(method)


ABSOLUTE = {"SPEXPIREAT"}
# Methods whose arming command adds the timed members itself.
ADDS_MEMBERS = {"SADDEX", "ZADDEX", "HSETEX"}


def check_phase(c, cases, phase, which):
    """Runs every case on its own keys; returns the list of mismatches."""
    bad = []
    for i, (name, fn, before, after) in enumerate(cases):
        want = before if which == "before" else after

        def k(logical, i=i):
            return f"{i}{phase}:{logical}"

        def x(*args):
            return raw_cmd(c, *args)

        try:
            got = fn(x, k)
        except Exception as e:  # noqa: BLE001 - report every failing command at once
            bad.append(f"{which} {name}: raised {e!r}")
            continue
        ok = want(got) if callable(want) else got == want
        if not ok:
            bad.append(f"{which} {name}: got {got!r}, want {want if not callable(want) else 'predicate'}")
    return bad


def run_before_after(c, typ, data, method, cases, ttl=TTL_MS):
    """Sets up every case twice (keys for the before and the after phase),
    arms the deadlines, checks before, waits past the deadline, checks after."""
    for _ in range(5):
        c.flushall()
        p = c.pipeline(transaction=False)
        for i in range(len(cases)):
            for phase in "ba":
                for logical, members in data.items():
                    populate(p, typ, f"{i}{phase}:{logical}", members, with_timed=method not in ADDS_MEMBERS)
        p.execute()
        t0 = now_ms()
        deadline = math.floor(t0) + ttl
        p = c.pipeline(transaction=False)
        for i in range(len(cases)):
            for phase in "ba":
                for logical, members in data.items():
                    if any(t for _, _, t in members):
                        cmd = arm_cmd(method, f"{i}{phase}:{logical}", members, ttl, deadline)
                        p.execute_command(*cmd)
        armed = p.execute()
        t1 = now_ms()
        for rep in armed:
            if isinstance(rep, list):
                assert rep == [1] * len(rep), armed
        lo, hi = (deadline, deadline) if method in ABSOLUTE else (math.floor(t0) + ttl, math.floor(t1) + ttl)
        bad = check_phase(c, cases, "b", "before")
        if now_ms() < lo - 1:
            break
        ttl *= 3  # The machine was too slow for this TTL: redo, longer.
    else:
        pytest.fail("could not finish the before checks ahead of the deadline")
    assert not bad, "\n".join(bad)
    sleep_until(hi + 2)
    bad = check_phase(c, cases, "a", "after")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------ sets

SB = {"a", "b", "c", "x", "y"}
SA = {"x", "y"}


def subset_of(live, n=None):
    return lambda v: set(srt(v)) <= live and (n is None or len(v) == n)


SET_CASES = [
    ("SMEMBERS", lambda x, k: srt(x("SMEMBERS", k("s"))), ["a", "b", "c", "x", "y"], ["x", "y"]),
    ("SISMEMBER", lambda x, k: [x("SISMEMBER", k("s"), m) for m in "axq"], [1, 1, 0], [0, 1, 0]),
    ("SMISMEMBER", lambda x, k: x("SMISMEMBER", k("s"), "a", "x", "q"), [1, 1, 0], [0, 1, 0]),
    ("SCARD", lambda x, k: x("SCARD", k("s")), 5, 2),
    (
        "SRANDMEMBER",
        lambda x, k: [s(x("SRANDMEMBER", k("s"))) for _ in range(20)],
        subset_of(SB),
        subset_of(SA),
    ),
    ("SRANDMEMBER 10", lambda x, k: srt(x("SRANDMEMBER", k("s"), 10)), sorted(SB), sorted(SA)),
    ("SRANDMEMBER 2", lambda x, k: x("SRANDMEMBER", k("s"), 2), subset_of(SB, 2), subset_of(SA, 2)),
    ("SRANDMEMBER -30", lambda x, k: x("SRANDMEMBER", k("s"), -30), subset_of(SB, 30), subset_of(SA, 30)),
    ("SSCAN", lambda x, k: srt(full_scan(x, "SSCAN", k("s"))), sorted(SB), sorted(SA)),
    ("SSCAN MATCH", lambda x, k: srt(full_scan(x, "SSCAN", k("s"), "MATCH", "[abx]")), ["a", "b", "x"], ["x"]),
    ("SINTER", lambda x, k: srt(x("SINTER", k("s"), k("t"))), ["a", "x"], ["x"]),
    ("SINTER t s", lambda x, k: srt(x("SINTER", k("t"), k("s"))), ["a", "x"], ["x"]),
    ("SUNION", lambda x, k: srt(x("SUNION", k("s"), k("t"))), ["a", "b", "c", "x", "y", "z"], ["a", "x", "y", "z"]),
    ("SDIFF", lambda x, k: srt(x("SDIFF", k("s"), k("t"))), ["b", "c", "y"], ["y"]),
    ("SDIFF t s", lambda x, k: srt(x("SDIFF", k("t"), k("s"))), ["z"], ["a", "z"]),
    ("SINTERCARD", lambda x, k: x("SINTERCARD", 2, k("s"), k("t")), 2, 1),
    ("SINTERCARD LIMIT", lambda x, k: x("SINTERCARD", 2, k("t"), k("s"), "LIMIT", 5), 2, 1),
    (
        "SINTERSTORE",
        lambda x, k: (x("SINTERSTORE", k("d"), k("s"), k("t")), srt(x("SMEMBERS", k("d")))),
        (2, ["a", "x"]),
        (1, ["x"]),
    ),
    (
        "SUNIONSTORE",
        lambda x, k: (x("SUNIONSTORE", k("d"), k("s"), k("t")), x("SCARD", k("d"))),
        (6, 6),
        (4, 4),
    ),
    (
        "SDIFFSTORE",
        lambda x, k: (x("SDIFFSTORE", k("d"), k("s"), k("t")), srt(x("SMEMBERS", k("d")))),
        (3, ["b", "c", "y"]),
        (1, ["y"]),
    ),
    (
        "SDIFFSTORE t s",
        lambda x, k: (x("SDIFFSTORE", k("d"), k("t"), k("s")), srt(x("SMEMBERS", k("d")))),
        (1, ["z"]),
        (2, ["a", "z"]),
    ),
    ("SORT ALPHA", lambda x, k: x("SORT", k("s"), "ALPHA"), ["a", "b", "c", "x", "y"], ["x", "y"]),
    ("SORT ALPHA DESC LIMIT", lambda x, k: x("SORT", k("s"), "ALPHA", "DESC", "LIMIT", 1, 2), ["x", "c"], ["x"]),
    ("SORT_RO", lambda x, k: x("SORT_RO", k("s"), "ALPHA"), ["a", "b", "c", "x", "y"], ["x", "y"]),
    ("SORT BY nosort", lambda x, k: srt(x("SORT", k("s"), "BY", "nosort")), sorted(SB), sorted(SA)),
    (
        "SORT STORE",
        lambda x, k: (x("SORT", k("s"), "ALPHA", "STORE", k("d")), x("LRANGE", k("d"), 0, -1)),
        (5, ["a", "b", "c", "x", "y"]),
        (2, ["x", "y"]),
    ),
    ("SPOP 10", lambda x, k: (srt(x("SPOP", k("s"), 10)), x("EXISTS", k("s"))), (sorted(SB), 0), (sorted(SA), 0)),
    (
        "SPOP",
        lambda x, k: (s(x("SPOP", k("s"))), x("SCARD", k("s"))),
        lambda v: v[0] in SB and v[1] == 4,
        lambda v: v[0] in SA and v[1] == 1,
    ),
    (
        "SMOVE",
        lambda x, k: (x("SMOVE", k("s"), k("d"), "a"), x("SMOVE", k("s"), k("d"), "x"), srt(x("SMEMBERS", k("d")))),
        (1, 1, ["a", "x"]),
        (0, 1, ["x"]),
    ),
    ("SREM", lambda x, k: (x("SREM", k("s"), "a", "x"), x("SCARD", k("s"))), (2, 3), (1, 1)),
    (
        "SADD again",
        lambda x, k: (x("SADD", k("s"), "a", "q"), x("SPTTL", k("s"), "MEMBERS", 1, "a")[0]),
        lambda v: v[0] == 1 and 0 < v[1] <= MAX_TTL_MS,
        (2, -1),
    ),
    (
        "SPTTL",
        lambda x, k: x("SPTTL", k("s"), "MEMBERS", 2, "a", "x"),
        lambda v: 0 < v[0] <= MAX_TTL_MS and v[1] == -1,
        [-2, -1],
    ),
    ("SEXPIRE", lambda x, k: x("SEXPIRE", k("s"), 100, "MEMBERS", 2, "a", "x"), [1, 1], [-2, 1]),
    ("SPERSIST", lambda x, k: x("SPERSIST", k("s"), "MEMBERS", 2, "a", "x"), [1, -1], [-2, -1]),
    ("FIELDTTL", lambda x, k: x("FIELDTTL", k("s"), "a"), lambda v: v >= 0, -3),
    ("TYPE EXISTS", lambda x, k: (s(x("TYPE", k("s"))), x("EXISTS", k("s"))), ("set", 1), ("set", 1)),
]


@pytest.mark.parametrize("method", ["SPEXPIRE", "SPEXPIREAT"])
def test_every_set_read_before_and_after(rc, lazy_only, method):
    run_before_after(rc, "set", SET_DATA, method, SET_CASES)


def test_every_set_read_before_and_after_saddex(r, lazy_only):
    """SADDEX takes whole seconds: one run, at one second."""
    run_before_after(r, "set", SET_DATA, "SADDEX", SET_CASES, ttl=1000)


# ---------------------------------------------------------------- zsets

ZB = [("a", 1.0), ("x", 1.5), ("b", 2.0), ("c", 3.0), ("y", 4.0)]
ZA = [("x", 1.5), ("y", 4.0)]
ZBN = [m for m, _ in ZB]
ZAN = [m for m, _ in ZA]


def zsubset(live, n=None):
    names = {m for m, _ in live}
    return lambda v: set(srt(v)) <= names and (n is None or len(v) == n)


ZSET_CASES = [
    ("ZRANGE", lambda x, k: x("ZRANGE", k("z"), 0, -1), ZBN, ZAN),
    ("ZRANGE WITHSCORES", lambda x, k: opairs(x("ZRANGE", k("z"), 0, -1, "WITHSCORES")), ZB, ZA),
    ("ZRANGE 0 1", lambda x, k: x("ZRANGE", k("z"), 0, 1), ["a", "x"], ["x", "y"]),
    ("ZRANGE -2 -1", lambda x, k: x("ZRANGE", k("z"), -2, -1), ["c", "y"], ["x", "y"]),
    ("ZRANGE REV", lambda x, k: x("ZRANGE", k("z"), 0, 2, "REV"), ["y", "c", "b"], ["y", "x"]),
    ("ZRANGE BYSCORE", lambda x, k: x("ZRANGE", k("z"), 1, 3, "BYSCORE"), ["a", "x", "b", "c"], ["x"]),
    (
        "ZRANGE BYSCORE LIMIT",
        lambda x, k: x("ZRANGE", k("z"), "(1", "+inf", "BYSCORE", "LIMIT", 1, 2),
        ["b", "c"],
        ["y"],
    ),
    (
        "ZRANGE BYSCORE REV",
        lambda x, k: opairs(x("ZRANGE", k("z"), "+inf", "-inf", "BYSCORE", "REV", "WITHSCORES")),
        ZB[::-1],
        ZA[::-1],
    ),
    ("ZRANGE BYLEX", lambda x, k: x("ZRANGE", k("zl"), "[b", "+", "BYLEX"), ["b", "c", "x", "y"], ["x", "y"]),
    (
        "ZRANGE BYLEX REV LIMIT",
        lambda x, k: x("ZRANGE", k("zl"), "+", "-", "BYLEX", "REV", "LIMIT", 2, 2),
        ["c", "b"],
        [],
    ),
    ("ZRANGEBYSCORE", lambda x, k: x("ZRANGEBYSCORE", k("z"), 2, 4), ["b", "c", "y"], ["y"]),
    (
        "ZRANGEBYSCORE WITHSCORES LIMIT",
        lambda x, k: opairs(x("ZRANGEBYSCORE", k("z"), "-inf", "+inf", "WITHSCORES", "LIMIT", 0, 1)),
        [("a", 1.0)],
        [("x", 1.5)],
    ),
    (
        "ZREVRANGEBYSCORE",
        lambda x, k: x("ZREVRANGEBYSCORE", k("z"), "+inf", "-inf", "LIMIT", 1, 1),
        ["c"],
        ["x"],
    ),
    ("ZRANGEBYLEX", lambda x, k: x("ZRANGEBYLEX", k("zl"), "-", "+"), ["a", "b", "c", "x", "y"], ["x", "y"]),
    ("ZRANGEBYLEX range", lambda x, k: x("ZRANGEBYLEX", k("zl"), "[a", "(x"), ["a", "b", "c"], []),
    ("ZREVRANGEBYLEX", lambda x, k: x("ZREVRANGEBYLEX", k("zl"), "+", "-", "LIMIT", 0, 3), ["y", "x", "c"], ["y", "x"]),
    ("ZREVRANGE", lambda x, k: x("ZREVRANGE", k("z"), 0, -1), ZBN[::-1], ZAN[::-1]),
    ("ZREVRANGE 1 1", lambda x, k: opairs(x("ZREVRANGE", k("z"), 1, 1, "WITHSCORES")), [("c", 3.0)], [("x", 1.5)]),
    ("ZRANK", lambda x, k: [x("ZRANK", k("z"), m) for m in "ayq"], [0, 4, None], [None, 1, None]),
    ("ZREVRANK", lambda x, k: [x("ZREVRANK", k("z"), m) for m in "cxq"], [1, 3, None], [None, 1, None]),
    ("ZSCORE", lambda x, k: [num(x("ZSCORE", k("z"), m)) for m in "axq"], [1.0, 1.5, None], [None, 1.5, None]),
    ("ZMSCORE", lambda x, k: [num(v) for v in x("ZMSCORE", k("z"), "a", "x", "q")], [1.0, 1.5, None], [None, 1.5, None]),
    ("ZCARD", lambda x, k: x("ZCARD", k("z")), 5, 2),
    ("ZCOUNT", lambda x, k: (x("ZCOUNT", k("z"), "-inf", "+inf"), x("ZCOUNT", k("z"), "(1", 3)), (5, 3), (2, 1)),
    ("ZLEXCOUNT", lambda x, k: (x("ZLEXCOUNT", k("zl"), "-", "+"), x("ZLEXCOUNT", k("zl"), "[a", "[c")), (5, 3), (2, 0)),
    (
        "ZRANDMEMBER",
        lambda x, k: [s(x("ZRANDMEMBER", k("z"))) for _ in range(20)],
        zsubset(ZB),
        zsubset(ZA),
    ),
    ("ZRANDMEMBER 10", lambda x, k: srt(x("ZRANDMEMBER", k("z"), 10)), sorted(ZBN), sorted(ZAN)),
    ("ZRANDMEMBER 2", lambda x, k: x("ZRANDMEMBER", k("z"), 2), zsubset(ZB, 2), zsubset(ZA, 2)),
    ("ZRANDMEMBER -30", lambda x, k: x("ZRANDMEMBER", k("z"), -30), zsubset(ZB, 30), zsubset(ZA, 30)),
    (
        "ZRANDMEMBER WITHSCORES",
        lambda x, k: pairs(x("ZRANDMEMBER", k("z"), 10, "WITHSCORES")),
        sorted(ZB),
        sorted(ZA),
    ),
    ("ZSCAN", lambda x, k: pairs(full_scan(x, "ZSCAN", k("z"))), sorted(ZB), sorted(ZA)),
    ("ZSCAN MATCH", lambda x, k: pairs(full_scan(x, "ZSCAN", k("z"), "MATCH", "[abx]")), sorted(ZB[:3]), [("x", 1.5)]),
    (
        "ZUNION",
        lambda x, k: opairs(x("ZUNION", 2, k("z"), k("z2"), "WITHSCORES")),
        [("b", 2.0), ("c", 3.0), ("y", 4.0), ("a", 11.0), ("x", 21.5), ("z", 30.0)],
        [("y", 4.0), ("a", 10.0), ("x", 21.5), ("z", 30.0)],
    ),
    (
        "ZINTER",
        lambda x, k: opairs(x("ZINTER", 2, k("z2"), k("z"), "WITHSCORES")),
        [("a", 11.0), ("x", 21.5)],
        [("x", 21.5)],
    ),
    ("ZDIFF", lambda x, k: x("ZDIFF", 2, k("z"), k("z2")), ["b", "c", "y"], ["y"]),
    ("ZDIFF z2 z", lambda x, k: x("ZDIFF", 2, k("z2"), k("z")), ["z"], ["a", "z"]),
    ("ZINTERCARD", lambda x, k: x("ZINTERCARD", 2, k("z"), k("z2")), 2, 1),
    (
        "ZUNIONSTORE",
        lambda x, k: (x("ZUNIONSTORE", k("d"), 2, k("z"), k("z2")), x("ZRANGE", k("d"), 0, -1)),
        (6, ["b", "c", "y", "a", "x", "z"]),
        (4, ["y", "a", "x", "z"]),
    ),
    (
        "ZINTERSTORE",
        lambda x, k: (
            x("ZINTERSTORE", k("d"), 2, k("z"), k("z2"), "WEIGHTS", 1, 0),
            opairs(x("ZRANGE", k("d"), 0, -1, "WITHSCORES")),
        ),
        (2, [("a", 1.0), ("x", 1.5)]),
        (1, [("x", 1.5)]),
    ),
    (
        "ZDIFFSTORE",
        lambda x, k: (x("ZDIFFSTORE", k("d"), 2, k("z"), k("z2")), x("ZRANGE", k("d"), 0, -1)),
        (3, ["b", "c", "y"]),
        (1, ["y"]),
    ),
    (
        "ZRANGESTORE",
        lambda x, k: (x("ZRANGESTORE", k("d"), k("z"), 0, -1), opairs(x("ZRANGE", k("d"), 0, -1, "WITHSCORES"))),
        (5, ZB),
        (2, ZA),
    ),
    (
        "ZRANGESTORE 0 0",
        lambda x, k: (x("ZRANGESTORE", k("d"), k("z"), 0, 0), x("ZRANGE", k("d"), 0, -1)),
        (1, ["a"]),
        (1, ["x"]),
    ),
    (
        "ZRANGESTORE BYLEX",
        lambda x, k: (
            x("ZRANGESTORE", k("d"), k("zl"), "[b", "+", "BYLEX", "LIMIT", 0, 2),
            x("ZRANGE", k("d"), 0, -1),
        ),
        (2, ["b", "c"]),
        (2, ["x", "y"]),
    ),
    ("ZPOPMIN", lambda x, k: opairs(x("ZPOPMIN", k("z"))), [("a", 1.0)], [("x", 1.5)]),
    ("ZPOPMIN 10", lambda x, k: (opairs(x("ZPOPMIN", k("z"), 10)), x("EXISTS", k("z"))), (ZB, 0), (ZA, 0)),
    ("ZPOPMAX 2", lambda x, k: opairs(x("ZPOPMAX", k("z"), 2)), [("y", 4.0), ("c", 3.0)], [("y", 4.0), ("x", 1.5)]),
    (
        "ZMPOP",
        lambda x, k: (lambda v: (s(v[0]) == k("z"), opairs(v[1])))(x("ZMPOP", 1, k("z"), "MIN", "COUNT", 2)),
        (True, ZB[:2]),
        (True, ZA),
    ),
    (
        "BZPOPMIN",
        lambda x, k: (lambda v: (s(v[1]), num(v[2])))(x("BZPOPMIN", k("z"), 1)),
        ("a", 1.0),
        ("x", 1.5),
    ),
    ("ZREMRANGEBYRANK", lambda x, k: (x("ZREMRANGEBYRANK", k("z"), 0, 0), x("ZRANGE", k("z"), 0, -1)), (1, ZBN[1:]), (1, ["y"])),
    ("ZREMRANGEBYSCORE", lambda x, k: x("ZREMRANGEBYSCORE", k("z"), "-inf", 2), 3, 1),
    ("ZREMRANGEBYLEX", lambda x, k: x("ZREMRANGEBYLEX", k("zl"), "-", "[c"), 3, 0),
    ("ZREM", lambda x, k: x("ZREM", k("z"), "a", "x"), 2, 1),
    (
        "ZADD again",
        lambda x, k: (x("ZADD", k("z"), 5, "a"), x("ZPTTL", k("z"), "MEMBERS", 1, "a")[0]),
        lambda v: v[0] == 0 and 0 < v[1] <= MAX_TTL_MS,
        (1, -1),
    ),
    ("ZINCRBY", lambda x, k: num(x("ZINCRBY", k("z"), 1, "a")), 2.0, 1.0),
    ("ZADD XX CH", lambda x, k: (x("ZADD", k("z"), "XX", "CH", 9, "a"), num(x("ZSCORE", k("z"), "a"))), (1, 9.0), (0, None)),
    ("SORT ALPHA", lambda x, k: x("SORT", k("z"), "ALPHA"), ["a", "b", "c", "x", "y"], ["x", "y"]),
    ("SORT BY nosort", lambda x, k: x("SORT", k("z"), "BY", "nosort"), ZBN, ZAN),
    ("SORT BY nosort LIMIT", lambda x, k: x("SORT", k("z"), "BY", "nosort", "LIMIT", 1, 2), ["x", "b"], ["y"]),
    (
        "ZPTTL",
        lambda x, k: x("ZPTTL", k("z"), "MEMBERS", 2, "a", "x"),
        lambda v: 0 < v[0] <= MAX_TTL_MS and v[1] == -1,
        [-2, -1],
    ),
    ("ZEXPIRE", lambda x, k: x("ZEXPIRE", k("z"), 100, "MEMBERS", 2, "a", "x"), [1, 1], [-2, 1]),
    ("ZPERSIST", lambda x, k: x("ZPERSIST", k("z"), "MEMBERS", 2, "a", "x"), [1, -1], [-2, -1]),
    ("TYPE EXISTS", lambda x, k: (s(x("TYPE", k("z"))), x("EXISTS", k("z"))), ("zset", 1), ("zset", 1)),
]


@pytest.mark.parametrize("method", ["ZPEXPIRE", "ZADDEX"])
def test_every_zset_read_before_and_after(rc, lazy_only, method):
    run_before_after(rc, "zset", ZSET_DATA, method, ZSET_CASES)


# --------------------------------------------------------------- hashes

HB = [("a", "va"), ("b", "vbb"), ("c", "vccc"), ("n", 10.0), ("x", "vx"), ("y", "vyy")]
HA = [("x", "vx"), ("y", "vyy")]


def hsubset(live, n=None):
    names = {m for m, _ in live}
    return lambda v: set(srt(v)) <= names and (n is None or len(v) == n)


HASH_CASES = [
    ("HGET", lambda x, k: [x("HGET", k("h"), f) for f in "axq"], ["va", "vx", None], [None, "vx", None]),
    ("HMGET", lambda x, k: x("HMGET", k("h"), "a", "x", "q"), ["va", "vx", None], [None, "vx", None]),
    ("HGETALL", lambda x, k: pairs(x("HGETALL", k("h"))), HB, HA),
    ("HKEYS", lambda x, k: srt(x("HKEYS", k("h"))), ["a", "b", "c", "n", "x", "y"], ["x", "y"]),
    ("HVALS", lambda x, k: srt(x("HVALS", k("h"))), sorted(["va", "vbb", "vccc", "10", "vx", "vyy"]), ["vx", "vyy"]),
    ("HLEN", lambda x, k: x("HLEN", k("h")), 6, 2),
    ("HEXISTS", lambda x, k: [x("HEXISTS", k("h"), f) for f in "axq"], [1, 1, 0], [0, 1, 0]),
    ("HSTRLEN", lambda x, k: [x("HSTRLEN", k("h"), f) for f in "cy"], [4, 3], [0, 3]),
    (
        "HRANDFIELD",
        lambda x, k: [s(x("HRANDFIELD", k("h"))) for _ in range(20)],
        hsubset(HB),
        hsubset(HA),
    ),
    ("HRANDFIELD 10", lambda x, k: srt(x("HRANDFIELD", k("h"), 10)), sorted(m for m, _ in HB), ["x", "y"]),
    ("HRANDFIELD 2", lambda x, k: x("HRANDFIELD", k("h"), 2), hsubset(HB, 2), hsubset(HA, 2)),
    ("HRANDFIELD -30", lambda x, k: x("HRANDFIELD", k("h"), -30), hsubset(HB, 30), hsubset(HA, 30)),
    ("HRANDFIELD WITHVALUES", lambda x, k: pairs(x("HRANDFIELD", k("h"), 10, "WITHVALUES")), HB, HA),
    ("HSCAN", lambda x, k: pairs(full_scan(x, "HSCAN", k("h"))), HB, HA),
    ("HSCAN MATCH", lambda x, k: pairs(full_scan(x, "HSCAN", k("h"), "MATCH", "[abx]")), HB[:2] + [HB[4]], [HA[0]]),
    ("HINCRBY", lambda x, k: x("HINCRBY", k("h"), "n", 1), 11, 1),
    ("HINCRBYFLOAT", lambda x, k: num(x("HINCRBYFLOAT", k("h"), "n", "0.5")), 10.5, 0.5),
    ("HSETNX", lambda x, k: (x("HSETNX", k("h"), "a", "new"), x("HGET", k("h"), "a")), (0, "va"), (1, "new")),
    ("HDEL", lambda x, k: (x("HDEL", k("h"), "a", "x"), x("HLEN", k("h"))), (2, 4), (1, 1)),
    (
        "HSET again",
        lambda x, k: (x("HSET", k("h"), "a", "new"), x("HPTTL", k("h"), "FIELDS", 1, "a")),
        (0, [-1]),
        (1, [-1]),
    ),
    ("HGETDEL", lambda x, k: x("HGETDEL", k("h"), "FIELDS", 2, "a", "x"), ["va", "vx"], [None, "vx"]),
    ("HGETEX PERSIST", lambda x, k: x("HGETEX", k("h"), "PERSIST", "FIELDS", 2, "a", "x"), ["va", "vx"], [None, "vx"]),
    (
        "HPTTL",
        lambda x, k: x("HPTTL", k("h"), "FIELDS", 2, "a", "x"),
        lambda v: 0 < v[0] <= MAX_TTL_MS and v[1] == -1,
        [-2, -1],
    ),
    ("HEXPIRE", lambda x, k: x("HEXPIRE", k("h"), 100, "FIELDS", 2, "a", "x"), [1, 1], [-2, 1]),
    ("HPERSIST", lambda x, k: x("HPERSIST", k("h"), "FIELDS", 2, "a", "x"), [1, -1], [-2, -1]),
    ("TYPE EXISTS", lambda x, k: (s(x("TYPE", k("h"))), x("EXISTS", k("h"))), ("hash", 1), ("hash", 1)),
]


@pytest.mark.parametrize("method", ["HPEXPIRE", "HSETEX"])
def test_every_hash_read_before_and_after(rc, lazy_only, method):
    run_before_after(rc, "hash", HASH_DATA, method, HASH_CASES)


# ------------------------------------------------- per-type helpers, generic

TYPES = {
    # type: (prefix of the member-TTL commands, their keyword, cardinality command)
    "set": ("S", "MEMBERS", "SCARD"),
    "zset": ("Z", "MEMBERS", "ZCARD"),
    "hash": ("H", "FIELDS", "HLEN"),
}
EVENT = {"set": "s", "zset": "z", "hash": "h"}


def add(c, typ, key, members):
    """Adds members (no deadline) to a collection of the given type."""
    for i in range(0, len(members), 500):
        chunk = members[i : i + 500]
        if typ == "set":
            c.execute_command("SADD", key, *chunk)
        elif typ == "zset":
            c.execute_command("ZADD", key, *[a for j, m in enumerate(chunk, i) for a in (j, m)])
        else:
            c.execute_command("HSET", key, *[a for m in chunk for a in (m, "v" + m)])


def pexpireat(c, typ, key, at, members):
    p, kw, _ = TYPES[typ]
    return raw_cmd(c, f"{p}PEXPIREAT", key, int(at), kw, len(members), *members)


def card(c, typ, key):
    return raw_cmd(c, TYPES[typ][2], key)


def live_members(c, typ, key):
    if typ == "set":
        return srt(raw_cmd(c, "SMEMBERS", key))
    if typ == "zset":
        return srt(raw_cmd(c, "ZRANGE", key, 0, -1))
    return srt(raw_cmd(c, "HKEYS", key))


def member_deadlines(c, typ, key, members):
    p, kw, _ = TYPES[typ]
    return raw_cmd(c, f"{p}PEXPIRETIME", key, kw, len(members), *members)


def ahead(attempt):
    """Runs attempt(ttl) -> (earliest deadline, ...) until the attempt got
    its "before" observations done ahead of that deadline, growing the TTL
    when the machine was too slow."""
    ttl = TTL_MS
    for _ in range(5):
        res = attempt(ttl)
        if now_ms() < res[0] - 1:
            return res
        ttl *= 3
    pytest.fail("could not observe the state before the deadline")


def set_active_expiry(ebb, on):
    c = ebb.client()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1" if on else "0")
    c.close()


def info_field(c, section, field):
    return c.info(section).get(field)


def keyspace_db0(c):
    """INFO keyspace's db0 line as a dict (empty when the db is empty)."""
    return c.info("keyspace").get("db0", {})


class Events:
    """A pattern subscriber collecting (channel, payload) pairs in order."""

    def __init__(self, ebb, *patterns):
        self.c = ebb.client()
        self.p = self.c.pubsub()
        self.got = []
        for pat in patterns:
            self.p.psubscribe(pat)
        n = 0
        while n < len(patterns):
            m = self.p.get_message(timeout=1.0)
            assert m is not None, "psubscribe not confirmed"
            if m["type"] == "psubscribe":
                n += 1

    def drain(self, timeout=0.05):
        while (m := self.p.get_message(timeout=timeout)) is not None:
            if m["type"] == "pmessage":
                self.got.append((m["channel"], m["data"]))

    def wait_for(self, pred, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            self.drain()
            if pred(self.got):
                return self.got
        raise AssertionError(f"events not seen in time; got {self.got!r}")

    def close(self):
        self.p.close()
        self.c.close()


# --------------------------------------------------- last member -> key gone


@pytest.mark.parametrize("typ", list(TYPES))
@pytest.mark.parametrize("mode", ["lazy", "active"])
def test_last_member_expiring_deletes_the_key(ebb, r, typ, mode):
    ev = Events(ebb, "__keyspace@0__:*", "__keyevent@0__:*")
    set_active_expiry(ebb, mode == "active")
    try:

        def attempt(ttl):
            r.config_set("notify-keyspace-events", "")
            r.flushall()
            add(r, typ, "k", ["a", "b"])
            add(r, typ, "other", ["a"])
            ev.drain()
            ev.got.clear()
            r.config_set("notify-keyspace-events", "KEA")
            dl = math.floor(now_ms()) + ttl
            assert pexpireat(r, typ, "k", dl, ["a", "b"]) == [1, 1]
            seen = (r.exists("k"), r.type("k"), r.dbsize())
            return dl, seen

        dl, seen = ahead(attempt)
        assert seen == (1, typ, 2)
        sleep_until(dl + 2)
        if mode == "lazy":
            assert r.exists("k") == 0
        else:
            # Nobody touches the key: the sweeper deletes it.
            wait_until(lambda: r.dbsize() == 1, timeout=3)
            assert r.exists("k") == 0
        assert r.type("k") == "none"
        assert r.dbsize() == 1 and r.exists("other") == 1
        t = EVENT[typ]
        got = ev.wait_for(lambda g: ("__keyevent@0__:del", "k") in g)
        space = [d for ch, d in got if ch == "__keyspace@0__:k"]
        assert space == [f"{t}expire", f"{t}expired", "del"], got
        keyev = [ch for ch, d in got if ch.startswith("__keyevent@0__:") and d == "k"]
        assert keyev == [f"__keyevent@0__:{t}expire", f"__keyevent@0__:{t}expired", "__keyevent@0__:del"], got
    finally:
        set_active_expiry(ebb, True)
        ev.close()


GONE_KEY_CASES = [
    ("EXISTS", lambda x, k: x("EXISTS", k), 0),
    ("TYPE", lambda x, k: s(x("TYPE", k)), "none"),
    ("PTTL", lambda x, k: x("PTTL", k), -2),
    ("TTL", lambda x, k: x("TTL", k), -2),
    ("EXPIRETIME", lambda x, k: x("EXPIRETIME", k), -2),
    ("KEYS", lambda x, k: x("KEYS", k), []),
    ("SCAN", lambda x, k: scan_keys(x, k), []),
    ("RENAME", lambda x, k: x("RENAME", k, k + ":to"), "ERR no such key"),
    ("COPY", lambda x, k: (x("COPY", k, k + ":to"), x("EXISTS", k + ":to")), (0, 0)),
    ("MOVE", lambda x, k: x("MOVE", k, 1), 0),
    ("OBJECT ENCODING", lambda x, k: x("OBJECT", "ENCODING", k), None),
    ("TOUCH", lambda x, k: x("TOUCH", k), 0),
    ("DEL", lambda x, k: x("DEL", k), 0),
    ("UNLINK", lambda x, k: x("UNLINK", k), 0),
    ("EXPIRE", lambda x, k: x("EXPIRE", k, 100), 0),
    ("PERSIST", lambda x, k: x("PERSIST", k), 0),
    ("SORT", lambda x, k: x("SORT", k, "ALPHA"), []),
    ("MEMORY USAGE", lambda x, k: x("MEMORY", "USAGE", k), None),
]


def scan_keys(x, pattern):
    cursor, out = "0", []
    while True:
        cursor, batch = x("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
        out.extend(s(b) for b in batch)
        if s(cursor) == "0":
            return out


RANDOM_CASES = {
    "set": [("SRANDMEMBER", None), ("SRANDMEMBER 3", []), ("SPOP", None), ("SPOP 3", [])],
    "zset": [("ZRANDMEMBER", None), ("ZRANDMEMBER 3", []), ("ZPOPMIN", []), ("ZPOPMAX 3", [])],
    "hash": [("HRANDFIELD", None), ("HRANDFIELD 3", []), ("HGETALL", {}), ("HKEYS", [])],
}


@pytest.mark.parametrize("typ", list(TYPES))
def test_generic_commands_see_no_key_once_every_member_expired(ebb, r, lazy_only, typ):
    """Every command here is the first to meet its own key after the last
    member's deadline: each must behave as on a missing key."""
    db2 = ebb.client(db=2)
    cases = GONE_KEY_CASES + [(name, None, want) for name, want in RANDOM_CASES[typ]]
    try:

        def attempt(ttl):
            r.flushall()
            for i in range(len(cases)):
                add(r, typ, f"g{i}", ["a", "b"])
            add(db2, typ, "only1", ["a"])
            add(db2, typ, "only2", ["a"])
            dl = math.floor(now_ms()) + ttl
            for i in range(len(cases)):
                pexpireat(r, typ, f"g{i}", dl, ["a", "b"])
            pexpireat(db2, typ, "only1", dl, ["a"])
            pexpireat(db2, typ, "only2", dl, ["a"])
            return dl, r.dbsize(), db2.dbsize()

        dl, n0, n2 = ahead(attempt)
        assert (n0, n2) == (len(cases), 2)
        sleep_until(dl + 2)
        bad = []
        for i, (name, fn, want) in enumerate(cases):
            k = f"g{i}"
            try:
                if fn is None:
                    got = raw_cmd(r, *name.split()[:1], k, *name.split()[1:])
                    if typ == "hash" and name == "HGETALL" and got == []:
                        got = {}
                else:
                    got = fn(lambda *a: raw_cmd(r, *a), k)
            except redis.ResponseError as e:
                got = str(e) if str(e).startswith("ERR") else "ERR " + str(e)
            if got != want:
                bad.append(f"{name}: got {got!r}, want {want!r}")
        assert not bad, "\n".join(bad)
        assert raw_cmd(db2, "RANDOMKEY") is None
        assert r.dbsize() == 0 and db2.dbsize() == 0
    finally:
        db2.close()


# ----------------------------------------------------------- MEMORY USAGE


@pytest.mark.parametrize("typ", list(TYPES))
def test_memory_usage_shrinks_when_members_expire(r, lazy_only, typ):
    big = [f"member-{i:04d}-" + "x" * 40 for i in range(200)]

    def attempt(ttl):
        r.flushall()
        add(r, typ, "k", big + ["keep1", "keep2"])
        dl = math.floor(now_ms()) + ttl
        pexpireat(r, typ, "k", dl, big)
        return dl, r.memory_usage("k")

    dl, before = ahead(attempt)
    assert before > 200 * 40
    sleep_until(dl + 2)
    # MEMORY USAGE is the first command to meet the due members.
    after = r.memory_usage("k")
    assert after < before - 200 * 40, (before, after)
    assert card(r, typ, "k") == 2
    assert r.memory_usage("k") == after


# ------------------------------------------------ exact cardinality, polled


@pytest.mark.parametrize("typ", list(TYPES))
def test_cardinality_is_exact_at_every_instant(r, typ):
    n, plain, step = 25, ["p1", "p2", "p3"], 8
    timed = [f"m{i:02d}" for i in range(n)]
    add(r, typ, "k", timed + plain)
    base = math.floor(now_ms()) + TTL_MS
    deadlines = [base + step * i for i in range(n)]
    p = r.pipeline(transaction=False)
    for m, d in zip(timed, deadlines):
        p.execute_command(f"{TYPES[typ][0]}PEXPIREAT", "k", d, TYPES[typ][1], 1, m)
    # A deadline already past when it arrives deletes the member (2): the
    # bounds below hold either way.
    assert all(rep[0] in (1, 2) for rep in p.execute())

    def live_at(ms):
        return len(plain) + sum(1 for d in deadlines if d > ms)

    end = deadlines[-1] + 30
    samples = 0
    while now_ms() < end:
        t0 = now_ms()
        got = card(r, typ, "k")
        t1 = now_ms()
        # The server read its clock somewhere in [t0, t1]; one boundary
        # millisecond is allowed either side.
        hi, lo = live_at(math.floor(t0) - 1), live_at(math.floor(t1) + 1)
        assert lo <= got <= hi, (t0, t1, got, lo, hi)
        samples += 1
    assert samples > 50
    assert card(r, typ, "k") == len(plain)
    assert live_members(r, typ, "k") == plain


# ------------------------------------------------------------------ WATCH


@pytest.mark.parametrize("typ", list(TYPES))
@pytest.mark.parametrize("how", ["read-by-other", "sweeper", "untouched"])
def test_member_expiry_aborts_watching_exec(ebb, r, typ, how):
    c2 = ebb.client()
    if how == "untouched":
        set_active_expiry(ebb, False)
    try:

        def attempt(ttl):
            r.flushall()
            add(r, typ, "k", ["a", "x"])
            dl = math.floor(now_ms()) + ttl
            pexpireat(r, typ, "k", dl, ["a"])
            p = c2.pipeline()
            p.watch("k")
            return dl, p

        dl, p = ahead(attempt)
        sleep_until(dl + 2)
        if how == "read-by-other":
            assert card(r, typ, "k") == 1
        elif how == "sweeper":
            wait_until(lambda: keyspace_db0(r).get("member_expiry_keys", 0) == 0, timeout=3)
        p.multi()
        p.set("side", 1)
        with pytest.raises(redis.WatchError):
            p.execute()
        assert r.exists("side") == 0
        assert card(r, typ, "k") == 1
    finally:
        set_active_expiry(ebb, True)
        c2.close()


@pytest.mark.parametrize("typ", list(TYPES))
def test_watch_is_not_aborted_by_another_keys_member_expiry(ebb, r, typ):
    c2 = ebb.client()

    def attempt(ttl):
        r.flushall()
        add(r, typ, "k", ["a", "x"])
        add(r, typ, "other", ["a", "x"])
        dl = math.floor(now_ms()) + ttl
        pexpireat(r, typ, "other", dl, ["a"])
        pexpireat(r, typ, "k", dl + 3_600_000, ["a"])
        p = c2.pipeline()
        p.watch("k")
        return dl, p

    dl, p = ahead(attempt)
    sleep_until(dl + 2)
    assert card(r, typ, "other") == 1
    p.multi()
    p.set("side", 1)
    assert p.execute() == [True]
    c2.close()


@pytest.mark.parametrize("typ", list(TYPES))
def test_member_already_due_at_watch_time_does_not_abort(ebb, r, lazy_only, typ):
    """As for a key whose TTL had already passed when WATCH ran (Redis 7.0):
    the member was already gone for every command, so its later reclaim is
    no change."""
    c2 = ebb.client()
    try:
        add(r, typ, "k", ["a", "x"])
        dl = math.floor(now_ms()) + 100
        pexpireat(r, typ, "k", dl, ["a"])
        sleep_until(dl + 2)
        p = c2.pipeline()
        p.watch("k")
        assert card(r, typ, "k") == 1  # another client's read reclaims it
        p.multi()
        p.set("side", 1)
        assert p.execute() == [True]
    finally:
        c2.close()


# ------------------------------------------- RENAME / COPY / MOVE / SWAPDB


@pytest.mark.parametrize("typ", list(TYPES))
@pytest.mark.parametrize("move", ["RENAME", "COPY", "MOVE", "SWAPDB"])
def test_moves_keep_member_deadlines(ebb, r, typ, move):
    db1 = ebb.client(db=1)
    try:

        def attempt(ttl):
            r.flushall()
            add(r, typ, "k", ["a", "b", "x"])
            dl = math.floor(now_ms()) + ttl
            pexpireat(r, typ, "k", dl, ["a", "b"])
            if move == "RENAME":
                assert r.rename("k", "k2")
                targets = [(r, "k2")]
            elif move == "COPY":
                assert r.copy("k", "k2")
                targets = [(r, "k"), (r, "k2")]
            elif move == "MOVE":
                assert r.move("k", 1)
                targets = [(db1, "k")]
            else:
                assert r.swapdb(0, 1)
                targets = [(db1, "k")]
            seen = [(member_deadlines(c, typ, key, ["a", "b", "x"]), card(c, typ, key)) for c, key in targets]
            return dl, targets, seen

        dl, targets, seen = ahead(attempt)
        for got in seen:
            assert got == ([dl, dl, -1], 3)
        if move != "COPY":
            assert r.exists("k") == 0
        sleep_until(dl + 2)
        for c, key in targets:
            assert live_members(c, typ, key) == ["x"]
            assert card(c, typ, key) == 1
            assert member_deadlines(c, typ, key, ["a", "x"]) == [-2, -1]
    finally:
        if move == "SWAPDB":
            r.swapdb(0, 1)
        db1.close()


# ------------------------------------------------ the sweeper, untouched


def test_sweeper_reclaims_members_nobody_reads(ebb, r):
    r.config_set("notify-keyspace-events", "")
    timed = [f"t{i:03d}" for i in range(300)]
    whole = [f"w{i:02d}" for i in range(50)]

    def attempt(ttl):
        r.flushall()
        for typ in TYPES:
            add(r, typ, f"part:{typ}", timed + ["keep"])
            add(r, typ, f"all:{typ}", whole)
        dl = math.floor(now_ms()) + ttl
        for typ in TYPES:
            pexpireat(r, typ, f"part:{typ}", dl, timed)
            pexpireat(r, typ, f"all:{typ}", dl, whole)
        seen = (
            r.dbsize(),
            keyspace_db0(r).get("member_expiry_keys"),
            int(info_field(r, "stats", "expired_members")),
        )
        return dl, seen

    dl, (keys, with_deadlines, expired0) = ahead(attempt)
    assert (keys, with_deadlines) == (6, 6)
    sleep_until(dl + 2)
    # DBSIZE and INFO do not purge: only the sweeper can make these move.
    wait_until(lambda: r.dbsize() == 3, timeout=3)
    wait_until(lambda: keyspace_db0(r).get("member_expiry_keys") == 0, timeout=3)
    assert keyspace_db0(r).get("keys") == 3
    assert int(info_field(r, "stats", "expired_members")) - expired0 == 3 * (300 + 50)
    for typ in TYPES:
        assert card(r, typ, f"part:{typ}") == 1
        assert r.exists(f"all:{typ}") == 0


def test_sweeper_counts_expired_members_once_with_member_events_on(ebb, r):
    r.config_set("notify-keyspace-events", "KEAST")
    timed = [f"t{i:02d}" for i in range(20)]

    def attempt(ttl):
        r.flushall()
        for typ in TYPES:
            add(r, typ, f"part:{typ}", timed + ["keep"])
        dl = math.floor(now_ms()) + ttl
        for typ in TYPES:
            pexpireat(r, typ, f"part:{typ}", dl, timed)
        return dl, int(info_field(r, "stats", "expired_members"))

    dl, expired0 = ahead(attempt)
    sleep_until(dl + 2)
    wait_until(lambda: keyspace_db0(r).get("member_expiry_keys") == 0, timeout=3)
    assert int(info_field(r, "stats", "expired_members")) - expired0 == 3 * 20


# ---------------------------------------------------------- notifications


def parse_members(payload):
    """Parses `<len>:<member>[,<len>:<member>…]` strictly."""
    out, i = [], 0
    while True:
        j = payload.index(":", i)
        n = int(payload[i:j])
        assert payload[i:j] == str(n), payload
        out.append(payload[j + 1 : j + 1 + n])
        i = j + 1 + n
        if i == len(payload):
            return out
        assert payload[i] == ",", payload
        i += 1


def member_events(got, key, event):
    """Members named by each of the four member-event channels for one
    (key, event), as sorted lists; key events as a count."""
    k = f"{len(key)}:{key}|"
    res = {"S": [], "T": [], "I": [], "V": [], "keyspace": 0, "keyevent": 0}
    for ch, d in got:
        if ch == f"__subkeyspace@0__:{key}" and d.startswith(event + "|"):
            res["S"] += parse_members(d[len(event) + 1 :])
        elif ch == f"__subkeyevent@0__:{event}" and d.startswith(k):
            res["T"] += parse_members(d[len(k) :])
        elif ch.startswith(f"__subkeyspaceitem@0__:{key}\n") and d == event:
            res["I"].append(ch[len(f"__subkeyspaceitem@0__:{key}\n") :])
        elif ch == f"__subkeyspaceevent@0__:{event}|{key}":
            res["V"] += parse_members(d)
        elif ch == f"__keyspace@0__:{key}" and d == event:
            res["keyspace"] += 1
        elif ch == f"__keyevent@0__:{event}" and d == key:
            res["keyevent"] += 1
    for c in "STIV":
        res[c] = sorted(res[c])
    return res


@pytest.mark.parametrize("typ", list(TYPES))
@pytest.mark.parametrize("mode", ["sweeper", "read"])
def test_key_and_member_notifications(ebb, r, typ, mode):
    key = "key|1"
    timed = ["a", "b,c:|d", "q"]
    ev = Events(ebb, "__key*@0__:*", "__subkey*")
    set_active_expiry(ebb, mode == "sweeper")
    t = EVENT[typ]
    p, kw, _ = TYPES[typ]
    try:

        def attempt(ttl):
            r.config_set("notify-keyspace-events", "")
            r.flushall()
            add(r, typ, key, timed + ["x"])
            ev.drain()
            ev.got.clear()
            r.config_set("notify-keyspace-events", "KEASTIV")
            dl = math.floor(now_ms()) + ttl
            assert raw_cmd(r, f"{p}PEXPIREAT", key, dl, kw, 3, *timed) == [1, 1, 1]
            assert raw_cmd(r, f"{p}PERSIST", key, kw, 2, "q", "x") == [1, -1]
            return (dl,)

        (dl,) = ahead(attempt)
        both = sorted(["a", "b,c:|d"])
        got = ev.wait_for(lambda g: member_events(g, key, f"{t}persist")["V"] == ["q"])
        set_ev = member_events(got, key, f"{t}expire")
        assert {c: set_ev[c] for c in "STIV"} == {c: sorted(timed) for c in "STIV"}, got
        assert (set_ev["keyspace"], set_ev["keyevent"]) == (1, 1), got
        pers = member_events(got, key, f"{t}persist")
        assert {c: pers[c] for c in "STIV"} == {c: ["q"] for c in "STIV"}, got
        assert (pers["keyspace"], pers["keyevent"]) == (1, 1), got
        ev.got.clear()
        sleep_until(dl + 2)
        if mode == "read":
            assert card(r, typ, key) == 2
        got = ev.wait_for(lambda g: member_events(g, key, f"{t}expired")["S"] == both, timeout=3)
        ev.drain(timeout=0.1)
        gone = member_events(ev.got, key, f"{t}expired")
        assert {c: gone[c] for c in "STIV"} == {c: both for c in "STIV"}, ev.got
        # One key event per batch of members removed together.
        assert gone["keyspace"] == gone["keyevent"] >= 1, ev.got
        assert not any(d == "del" for _, d in ev.got), ev.got
        assert live_members(r, typ, key) == ["q", "x"]
    finally:
        set_active_expiry(ebb, True)
        ev.close()


def test_member_events_off_unless_asked(ebb, r):
    """K and E alone publish key events only; S/T/I/V each add their channel."""
    ev = Events(ebb, "__key*@0__:*", "__subkey*")
    try:
        for flags, want in [
            ("KEA", {"__keyspace@0__:s", "__keyevent@0__:sexpire"}),
            ("As", set()),
            ("AS", {"__subkeyspace@0__:s"}),
            ("AT", {"__subkeyevent@0__:sexpire"}),
            ("AI", {"__subkeyspaceitem@0__:s\na"}),
            ("AV", {"__subkeyspaceevent@0__:sexpire|s"}),
            ("KEhzSTIV", set()),
        ]:
            r.config_set("notify-keyspace-events", "")
            r.sadd("s", "a")
            ev.drain()
            ev.got.clear()
            r.config_set("notify-keyspace-events", flags)
            assert raw_cmd(r, "SEXPIRE", "s", 100, "MEMBERS", 1, "a") == [1]
            r.publish("fence", "x")  # anything published before it has arrived
            if want:
                ev.wait_for(lambda g, want=want: {ch for ch, _ in g} >= want)
            ev.drain(timeout=0.1)
            assert {ch for ch, _ in ev.got} == want, (flags, ev.got)
    finally:
        ev.close()


# ------------------------------------------------- scans across a deadline


def fill(c, typ, key, members):
    p = c.pipeline(transaction=False)
    for i in range(0, len(members), 500):
        chunk = members[i : i + 500]
        if typ == "set":
            p.execute_command("SADD", key, *chunk)
        elif typ == "zset":
            p.execute_command("ZADD", key, *[a for j, m in enumerate(chunk, i) for a in (j, m)])
        else:
            p.execute_command("HSET", key, *[a for m in chunk for a in (m, "v")])
    p.execute()


def scan_in_two_halves(r, cmd, key, dl, between, count, first_calls):
    """Runs `first_calls` steps of a SCAN-family iteration, waits past the
    deadline and runs `between()`, then finishes the iteration. Returns
    (every name returned, names returned by calls made after the deadline)."""
    args = [cmd] if key is None else [cmd, key]
    cursor, seen, late, calls = "0", set(), [], 0
    while True:
        if calls == first_calls:
            sleep_until(dl + 2)
            between()
        t0 = now_ms()
        cursor, batch = raw_cmd(r, *args, cursor, "COUNT", count)
        calls += 1
        names = [s(m) for m in (batch if cmd in ("SCAN", "SSCAN") else batch[0::2])]
        if t0 > dl + 1:
            late += names
        seen.update(names)
        if s(cursor) == "0":
            break
    assert calls > first_calls, "the iteration ended in its first half"
    return seen, late


@pytest.mark.parametrize("typ", list(TYPES))
@pytest.mark.parametrize("active", [True, False], ids=["sweeper", "lazy"])
def test_member_scan_spanning_the_deadline(ebb, r, typ, active):
    """An SSCAN/ZSCAN/HSCAN iteration during which half the members expire
    (reclaimed by the sweeper between two calls, or by the next call itself)
    still returns every member that lived throughout, and no call made after
    the deadline returns an expired member."""
    import random

    rnd = random.Random(7)
    plain = [f"p{i}" for i in range(1500)]
    timed = [f"t{i}" for i in range(1500)]
    members = plain + timed
    rnd.shuffle(members)
    set_active_expiry(ebb, active)
    try:
        fill(r, typ, "k", members)
        dl = math.floor(now_ms()) + TTL_MS
        assert set(pexpireat(r, typ, "k", dl, timed)) <= {1, 2}

        def between():
            if active:  # the sweeper alone, nobody touching the key
                wait_until(lambda: keyspace_db0(r).get("member_expiry_keys", 0) == 0, timeout=3)

        cmd = {"set": "SSCAN", "zset": "ZSCAN", "hash": "HSCAN"}[typ]
        seen, late = scan_in_two_halves(r, cmd, "k", dl, between, 20, 75)
        assert not [m for m in late if m.startswith("t")]
        missing = set(plain) - seen
        assert not missing, (len(missing), sorted(missing)[:10])
        assert card(r, typ, "k") == len(plain)
    finally:
        set_active_expiry(ebb, True)


def _fill_keys(r, gone_how):
    """300 keys that stay and 300 that will go, interleaved."""
    p = r.pipeline(transaction=False)
    for i in range(300):
        p.sadd(f"keep:{i}", "m")
        typ = list(TYPES)[i % 3]
        if typ == "set":
            p.sadd(f"gone:{i}", "a", "b")
        elif typ == "zset":
            p.zadd(f"gone:{i}", {"a": 1, "b": 2})
        else:
            p.hset(f"gone:{i}", mapping={"a": 1, "b": 2})
    p.execute()
    dl = math.floor(now_ms()) + TTL_MS
    p = r.pipeline(transaction=False)
    for i in range(300):
        if gone_how == "member-expiry":
            pfx, kw, _ = TYPES[list(TYPES)[i % 3]]
            p.execute_command(f"{pfx}PEXPIREAT", f"gone:{i}", dl, kw, 2, "a", "b")
        elif gone_how == "key-ttl":
            p.pexpireat(f"gone:{i}", dl)
    p.execute()
    return dl


def test_key_scan_spanning_the_deadline_lazy(ebb, r):
    """SCAN across the moment keys lose their last member, with nothing but
    SCAN itself meeting them: every other key is returned, and no call made
    after the deadline returns a gone key."""
    set_active_expiry(ebb, False)
    try:
        dl = _fill_keys(r, "member-expiry")
        seen, late = scan_in_two_halves(r, "SCAN", None, dl, lambda: None, 5, 60)
        assert not [k for k in late if k.startswith("gone:")]
        missing = {f"keep:{i}" for i in range(300)} - seen
        assert not missing, (len(missing), sorted(missing)[:10])
        assert r.keys("gone:*") == [] and r.dbsize() == 300
    finally:
        set_active_expiry(ebb, True)


@pytest.mark.parametrize("gone_how", ["member-expiry", "key-ttl", "del-by-other-client"])
def test_key_scan_returns_every_key_present_throughout(ebb, r, gone_how):
    """Half an iteration, then half the keys go (the sweeper reclaims them, or
    another client deletes them), then the rest: Redis's SCAN guarantee is
    that every key present from start to end is returned."""
    dl = _fill_keys(r, gone_how)

    def between():
        if gone_how == "del-by-other-client":
            r.delete(*[f"gone:{i}" for i in range(300)])
        wait_until(lambda: r.dbsize() == 300, timeout=3)

    seen, late = scan_in_two_halves(r, "SCAN", None, dl, between, 5, 60)
    assert not [k for k in late if k.startswith("gone:")]
    missing = {f"keep:{i}" for i in range(300)} - seen
    assert not missing, (len(missing), sorted(missing)[:10])


# ----------------------------- a key rewritten forgets its old deadlines


def _src(r, typ):
    add(r, typ, "src", ["a", "b"])


OVERWRITES = {
    "DEL then add": ("set", lambda r, db1: (r.delete("d"), add(r, "set", "d", ["a", "b"]))),
    "SET, DEL, add": ("set", lambda r, db1: (r.set("d", "x"), r.delete("d"), add(r, "set", "d", ["a", "b"]))),
    "RENAME over": ("set", lambda r, db1: (_src(r, "set"), r.rename("src", "d"))),
    "COPY REPLACE": ("set", lambda r, db1: (_src(r, "set"), r.copy("src", "d", replace=True))),
    "SUNIONSTORE": ("set", lambda r, db1: (_src(r, "set"), r.sunionstore("d", "src"))),
    "SREM then SADD": ("set", lambda r, db1: (r.srem("d", "a", "b"), r.sadd("d", "a", "b"))),
    "SPOP then SADD": ("set", lambda r, db1: (r.spop("d", 2), r.sadd("d", "a", "b"))),
    "EXPIRE 0 then add": ("set", lambda r, db1: (r.expire("d", 0), r.sadd("d", "a", "b"))),
    "FLUSHDB then add": ("set", lambda r, db1: (r.flushdb(), r.sadd("d", "a", "b"))),
    "MOVE in": ("set", lambda r, db1: (r.delete("d"), db1.sadd("d", "a", "b"), db1.move("d", 0))),
    "ZRANGESTORE": ("zset", lambda r, db1: (_src(r, "zset"), r.zrangestore("d", "src", 0, -1))),
    "ZUNIONSTORE": ("zset", lambda r, db1: (_src(r, "zset"), r.zunionstore("d", ["src"]))),
    "ZREM then ZADD": ("zset", lambda r, db1: (r.zrem("d", "a", "b"), r.zadd("d", {"a": 1, "b": 2}))),
    "ZPOPMIN then ZADD": ("zset", lambda r, db1: (r.zpopmin("d", 2), r.zadd("d", {"a": 1, "b": 2}))),
    "HDEL then HSET": ("hash", lambda r, db1: (r.hdel("d", "a", "b"), r.hset("d", mapping={"a": 1, "b": 2}))),
    "HSET over": ("hash", lambda r, db1: r.hset("d", mapping={"a": 1, "b": 2})),
    "HGETDEL then HSET": (
        "hash",
        lambda r, db1: (raw_cmd(r, "HGETDEL", "d", "FIELDS", 2, "a", "b"), r.hset("d", mapping={"a": 1, "b": 2})),
    ),
}


@pytest.mark.parametrize("op", list(OVERWRITES))
def test_rewritten_members_do_not_inherit_old_deadlines(ebb, r, op):
    """Members of `d` get a deadline, then `d` is rewritten so that the same
    names live again without one: once the old deadline has passed and the
    sweeper has been past it, they are all still there."""
    typ, rewrite = OVERWRITES[op]
    db1 = ebb.client(db=1)
    try:
        add(r, typ, "d", ["a", "b"])
        add(r, "set", "canary", ["c"])
        dl = math.floor(now_ms()) + TTL_MS
        assert pexpireat(r, typ, "d", dl, ["a", "b"]) == [1, 1]
        # The canary's later deadline: once it is reclaimed, the sweeper has
        # handled everything due at dl.
        assert pexpireat(r, "set", "canary", dl + 20, ["c"]) == [1]
        rewrite(r, db1)
        assert member_deadlines(r, typ, "d", ["a", "b"]) == [-1, -1]
        sleep_until(dl + 22)
        wait_until(lambda: keyspace_db0(r).get("member_expiry_keys", 0) == 0, timeout=3)
        assert r.exists("canary") == 0
        assert live_members(r, typ, "d") == ["a", "b"]
    finally:
        db1.close()
