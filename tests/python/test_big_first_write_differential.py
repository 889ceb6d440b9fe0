"""A first write of many members at once (more than a packed collection
holds) takes the large form directly; the replies, the order of members
and OBJECT ENCODING must be those of redis-server, including when most of
the members given are repeats, and including the writes after it.
Skipped when redis-server is not installed."""

import random

import pytest


def both(a, b, *args):
    ra, rb = a.execute_command(*args), b.execute_command(*args)
    assert ra == rb, (args[:6], ra, rb)
    return ra


def check_key(a, b, key):
    kind = both(a, b, "TYPE", key)
    both(a, b, "OBJECT", "ENCODING", key)
    if kind == b"zset":
        both(a, b, "ZRANGE", key, 0, -1, "WITHSCORES")
        both(a, b, "ZCARD", key)
    elif kind == b"hash":
        both(a, b, "HLEN", key)
        assert sorted(a.hgetall(key).items()) == sorted(b.hgetall(key).items())
    elif kind == b"set":
        both(a, b, "SCARD", key)
        assert a.smembers(key) == b.smembers(key)
        if a.object("encoding", key) == b"intset":
            # An intset's members come in numeric order.
            both(a, b, "SMEMBERS", key)
            both(a, b, "SSCAN", key, 0)


@pytest.mark.parametrize("distinct", [1, 50, 128, 129, 200, 400])
@pytest.mark.parametrize("given", [129, 300, 1000])
def test_sorted_sets(side_by_side, distinct, given):
    a, b = side_by_side
    rng = random.Random(distinct * 7 + given)
    args = []
    for _ in range(given):
        args += [rng.choice([rng.randrange(100), rng.random()]), f"m{rng.randrange(distinct)}"]
    both(a, b, "ZADD", "z", *args)
    check_key(a, b, "z")
    # The writes after it see the same set.
    both(a, b, "ZADD", "z", 5, "late")
    both(a, b, "ZREM", "z", "m0", "m1")
    check_key(a, b, "z")
    both(a, b, "DEL", "z")
    # NX, GT and CH on the first write; XX on a new key adds nothing.
    both(a, b, "ZADD", "z2", "XX", *args)
    both(a, b, "EXISTS", "z2")
    both(a, b, "ZADD", "z2", "NX", "CH", *args)
    check_key(a, b, "z2")
    both(a, b, "DEL", "z2")


@pytest.mark.parametrize("distinct", [1, 128, 129, 300])
def test_sorted_set_with_a_long_member_and_few_distinct(side_by_side, distinct):
    a, b = side_by_side
    args = []
    for i in range(200):
        args += [i, "x" * 70 if i == 0 else f"m{i % distinct}"]
    both(a, b, "ZADD", "z", *args)
    check_key(a, b, "z")
    both(a, b, "DEL", "z")


@pytest.mark.parametrize("distinct", [1, 100, 128, 129, 300])
def test_hashes(side_by_side, distinct):
    a, b = side_by_side
    args = []
    for i in range(300):
        args += [f"f{i % distinct}", f"v{i}"]
    both(a, b, "HSET", "h", *args)
    check_key(a, b, "h")
    both(a, b, "HDEL", "h", "f0")
    both(a, b, "HSET", "h", "new", "1")
    check_key(a, b, "h")
    both(a, b, "DEL", "h")


@pytest.mark.parametrize("ints", [True, False])
@pytest.mark.parametrize("distinct", [1, 128, 129, 300, 600])
def test_sets(side_by_side, ints, distinct):
    a, b = side_by_side
    members = [(i % distinct) if ints else f"m{i % distinct}" for i in range(700)]
    both(a, b, "SADD", "s", *members)
    check_key(a, b, "s")
    both(a, b, "SREM", "s", members[0])
    both(a, b, "SADD", "s", 10**6)
    check_key(a, b, "s")
    both(a, b, "DEL", "s")


@pytest.mark.parametrize("pairs", [
    [("f", "v")],
    [("a", "1"), ("b", "2"), ("a", "3"), ("c", ""), ("b", "4")],
    [(f"f{i}", f"v{i}") for i in range(128)],
    [(f"f{i}", f"v{i}") for i in range(129)],
    [(f"f{i % 7}", f"v{i}") for i in range(200)],
    [("f", "x" * 64), ("g", "y")],
    [("f", "x" * 65), ("g", "y")],
    [("x" * 65, "v")],
])
def test_first_hset_of_a_small_hash(side_by_side, pairs):
    """A new hash that packs is built in one go: the reply, the order of
    HGETALL and the encoding are Redis's."""
    a, b = side_by_side
    flat = [x for p in pairs for x in p]
    both(a, b, "HSET", "h", *flat)
    both(a, b, "OBJECT", "ENCODING", "h")
    both(a, b, "HGETALL", "h")
    both(a, b, "HSET", "h", "later", "1", pairs[0][0], "changed")
    both(a, b, "HGETALL", "h")
    both(a, b, "OBJECT", "ENCODING", "h")
    both(a, b, "HMSET", "h2", *flat)
    both(a, b, "HGETALL", "h2")


def test_repeated_integers_keep_the_intset_order(side_by_side):
    a, b = side_by_side
    both(a, b, "SADD", "s", *([3, 2, 1] * 43))
    check_key(a, b, "s")
    both(a, b, "SMEMBERS", "s")


@pytest.mark.parametrize("cmd", [
    ["SADD", "k"] + ["a"] * 200_000,
    ["HSET", "k", "g", "x" * 65] + ["f", "v"] * 100_000,
    ["ZADD", "k", 1, "x" * 65] + [1, "m"] * 100_000,
    ["HSET", "k"] + ["f", "v"] * 100_000,
    ["ZADD", "k"] + [1, "m"] * 100_000,
])
def test_repeated_arguments_take_no_room(side_by_side, cmd):
    """A first write of many repeats of a few members keeps no room for
    the repeats: it ends about the size Redis's is."""
    a, b = side_by_side
    both(a, b, *cmd)
    check_key(a, b, "k")
    ours, theirs = a.memory_usage("k"), b.memory_usage("k")
    assert ours < max(4 * theirs, 2048), (ours, theirs)


@pytest.mark.parametrize("members", [
    [3, 1, 2],
    [3, 1, 2, 3, 1, -7, 0],
    [3, 1, "x", 2],
    ["-5", "10", "3", "9223372036854775807", "-9223372036854775808"],
    ["01", "1", "+1", " 1"],
    list(range(128, 0, -1)),
    list(range(129, 0, -1)),
    ["x" * 65, 1, 2],
])
def test_first_sadd_of_a_small_set(side_by_side, members):
    """A new set that packs is built in one go: the reply, the encoding
    and an intset's order are Redis's, and so are the writes after it."""
    a, b = side_by_side
    both(a, b, "SADD", "s", *members)
    check_key(a, b, "s")
    both(a, b, "SADD", "s", 5, 4)
    check_key(a, b, "s")
    both(a, b, "SREM", "s", members[0])
    check_key(a, b, "s")


@pytest.mark.parametrize("pairs", [
    [(1, "a"), (2, "b")],
    [(5, "a"), (7, "a"), (1, "b")],
    [(1.5, "a"), (3, "a"), (2, "b"), (2, "a")],
    [(0, "b"), ("-0", "a"), (0, "c"), ("-0", "b")],
    [("-inf", "x"), ("+inf", "y"), (0, "z"), ("inf", "x")],
    [(9007199254740993, "big"), (-9007199254740993, "small"), (1e300, "huge")],
    [(i % 5, f"m{i % 40}") for i in range(200)],
    [(i, f"m{i}") for i in range(128)],
    [(i, f"m{i}") for i in range(129)],
    [(1, "x" * 64), (2, "y")],
    [(1, "x" * 65), (2, "y")],
    [(3, "10"), (2, "-5"), (1, "7")],
])
def test_first_zadd_of_a_small_sorted_set(side_by_side, pairs):
    """A new sorted set that packs is built in one go from a plain ZADD:
    the reply, the order, the scores and the encoding are Redis's, and so
    are the writes after it."""
    a, b = side_by_side
    flat = [x for p in pairs for x in p]
    both(a, b, "ZADD", "z", *flat)
    check_key(a, b, "z")
    both(a, b, "ZSCORE", "z", pairs[0][1])
    both(a, b, "ZADD", "z", 4, "late", 2.5, pairs[0][1])
    check_key(a, b, "z")
    both(a, b, "ZREM", "z", pairs[-1][1])
    check_key(a, b, "z")
    both(a, b, "ZRANGEBYSCORE", "z", "(1", "+inf", "WITHSCORES")
    # Flags take the member-by-member path; the result is the same.
    both(a, b, "ZADD", "z2", "CH", *flat)
    check_key(a, b, "z2")
    both(a, b, "ZADD", "z3", "GT", *flat)
    check_key(a, b, "z3")
