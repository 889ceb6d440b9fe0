"""Sharded pub/sub (Redis 7.0): SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH and
PUBSUB SHARDCHANNELS / SHARDNUMSUB, byte for byte; and subscriptions queued
in a transaction, which Redis 7.0 runs at EXEC.

Checked against redis-server 7.0.15 too: `AGAINST_REDIS=1 pytest
tests/python/test_pubsub_shard.py`.
"""

import time

import pytest

from conftest import Raw


def arr(*items):
    """RESP2 array of bulk strings / integers (ints as `:n`)."""
    out = b"*%d\r\n" % len(items)
    for i in items:
        if isinstance(i, int):
            out += b":%d\r\n" % i
        elif i is None:
            out += b"$-1\r\n"
        else:
            i = i.encode() if isinstance(i, str) else i
            out += b"$%d\r\n%s\r\n" % (len(i), i)
    return out


@pytest.fixture
def conns(srv):
    opened = []

    def make(resp3=False):
        c = Raw(srv.port, resp3=resp3)
        c.s.settimeout(5)
        opened.append(c)
        return c

    yield make
    for c in opened:
        c.close()


def test_ssubscribe_spublish_basics(conns):
    sub, pub = conns(), conns()
    sub.send("SSUBSCRIBE", "ch1", "ch2")
    assert sub.read() == arr("ssubscribe", "ch1", 1)
    assert sub.read() == arr("ssubscribe", "ch2", 2)
    assert pub.cmd("SPUBLISH", "ch1", "hello") == b":1\r\n"
    assert sub.read() == arr("smessage", "ch1", "hello")
    assert pub.cmd("SPUBLISH", "ch2", "world") == b":1\r\n"
    assert sub.read() == arr("smessage", "ch2", "world")
    assert pub.cmd("SPUBLISH", "nobody", "x") == b":0\r\n"
    sub.send("SUNSUBSCRIBE", "ch1")
    assert sub.read() == arr("sunsubscribe", "ch1", 1)
    assert pub.cmd("SPUBLISH", "ch1", "gone") == b":0\r\n"
    sub.send("SUNSUBSCRIBE")
    assert sub.read() == arr("sunsubscribe", "ch2", 0)
    # Out of subscribed mode again: ordinary commands run.
    assert sub.cmd("PING") == b"+PONG\r\n"


def test_sunsubscribe_without_subscriptions(conns):
    c = conns()
    c.send("SUNSUBSCRIBE")
    assert c.read() == arr("sunsubscribe", None, 0)
    c.send("SUNSUBSCRIBE", "a", "b")
    assert c.read() == arr("sunsubscribe", "a", 0)
    assert c.read() == arr("sunsubscribe", "b", 0)


def test_shard_and_global_namespaces_are_separate(conns):
    shard, glob, pat, pub = conns(), conns(), conns(), conns()
    shard.send("SSUBSCRIBE", "news")
    assert shard.read() == arr("ssubscribe", "news", 1)
    glob.send("SUBSCRIBE", "news")
    assert glob.read() == arr("subscribe", "news", 1)
    pat.send("PSUBSCRIBE", "n*")
    assert pat.read() == arr("psubscribe", "n*", 1)
    # PUBLISH reaches the channel and the pattern, not the shard channel.
    assert pub.cmd("PUBLISH", "news", "a") == b":2\r\n"
    assert glob.read() == arr("message", "news", "a")
    assert pat.read() == arr("pmessage", "n*", "news", "a")
    # SPUBLISH reaches only the shard channel: patterns never match it.
    assert pub.cmd("SPUBLISH", "news", "b") == b":1\r\n"
    assert shard.read() == arr("smessage", "news", "b")
    assert glob.cmd("PING") == arr("pong", "")
    assert pat.cmd("PING") == arr("pong", "")


def test_counts_are_per_kind(conns):
    c = conns()
    c.send("SUBSCRIBE", "a")
    assert c.read() == arr("subscribe", "a", 1)
    c.send("SSUBSCRIBE", "s1", "s2")
    assert c.read() == arr("ssubscribe", "s1", 1)
    assert c.read() == arr("ssubscribe", "s2", 2)
    c.send("PSUBSCRIBE", "p*")
    assert c.read() == arr("psubscribe", "p*", 2)
    c.send("SUNSUBSCRIBE", "s1")
    assert c.read() == arr("sunsubscribe", "s1", 1)
    c.send("UNSUBSCRIBE")
    assert c.read() == arr("unsubscribe", "a", 1)
    c.send("SUNSUBSCRIBE")
    assert c.read() == arr("sunsubscribe", "s2", 0)
    # Still subscribed to a pattern: subscribed mode goes on.
    assert c.cmd("GET", "x").startswith(b"-ERR Can't execute 'get'")
    c.send("PUNSUBSCRIBE")
    assert c.read() == arr("punsubscribe", "p*", 0)
    assert c.cmd("GET", "x") == b"$-1\r\n"


def test_subscribed_mode_refusal_and_allowed(conns):
    c = conns()
    c.send("SSUBSCRIBE", "x")
    c.read()
    assert c.cmd("SET", "k", "v") == (
        b"-ERR Can't execute 'set': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE "
        b"/ PING / QUIT / RESET are allowed in this context\r\n"
    )
    # SPUBLISH is not among the allowed commands either.
    assert c.cmd("SPUBLISH", "x", "y").startswith(b"-ERR Can't execute 'spublish'")
    c.send("SSUBSCRIBE", "y")
    assert c.read() == arr("ssubscribe", "y", 2)
    assert c.cmd("PING", "hi") == arr("pong", "hi")
    assert c.cmd("RESET") == b"+RESET\r\n"
    assert c.cmd("SET", "k", "v") == b"+OK\r\n"


def test_resp3_push_and_commands_while_subscribed(conns):
    sub, pub = conns(resp3=True), conns()
    sub.send("SSUBSCRIBE", "c")
    assert sub.read() == b">3\r\n$10\r\nssubscribe\r\n$1\r\nc\r\n:1\r\n"
    # RESP3 has no subscribed mode.
    assert sub.cmd("SET", "k", "v") == b"+OK\r\n"
    assert pub.cmd("SPUBLISH", "c", "m") == b":1\r\n"
    assert sub.read() == b">3\r\n$8\r\nsmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"
    sub.send("SUNSUBSCRIBE")
    assert sub.read() == b">3\r\n$12\r\nsunsubscribe\r\n$1\r\nc\r\n:0\r\n"


def test_pubsub_shardchannels_and_shardnumsub(conns):
    a, b, q = conns(), conns(), conns()
    a.send("SSUBSCRIBE", "abc", "abd", "x")
    for _ in range(3):
        a.read()
    b.send("SSUBSCRIBE", "abc")
    b.read()
    b.send("SUBSCRIBE", "global")
    b.read()
    got = q.cmd("PUBSUB", "SHARDCHANNELS")
    assert got.startswith(b"*3\r\n")
    for ch in (b"abc", b"abd", b"x"):
        assert b"$%d\r\n%s\r\n" % (len(ch), ch) in got
    got = q.cmd("PUBSUB", "SHARDCHANNELS", "ab*")
    assert got.startswith(b"*2\r\n") and b"abc" in got and b"abd" in got
    assert q.cmd("PUBSUB", "SHARDCHANNELS", "zz*") == b"*0\r\n"
    assert q.cmd("PUBSUB", "SHARDNUMSUB", "abc", "x", "none") == arr("abc", 2, "x", 1, "none", 0)
    assert q.cmd("PUBSUB", "SHARDNUMSUB") == b"*0\r\n"
    # Shard channels are not channels, and the other way round.
    assert q.cmd("PUBSUB", "CHANNELS") == arr("global")
    assert q.cmd("PUBSUB", "NUMSUB", "abc") == arr("abc", 0)
    assert q.cmd("PUBSUB", "SHARDNUMSUB", "global") == arr("global", 0)
    assert q.cmd("PUBSUB", "SHARDCHANNELS", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. "
        b"Try PUBSUB HELP.\r\n"
    )
    # A closed connection leaves no subscription behind.
    for c in (a, b):
        c.f.close()
        c.close()
    for _ in range(100):
        if q.cmd("PUBSUB", "SHARDCHANNELS") == b"*0\r\n":
            break
        time.sleep(0.01)
    assert q.cmd("PUBSUB", "SHARDCHANNELS") == b"*0\r\n"


def test_pubsub_help_lists_shard_subcommands(conns):
    got = conns().cmd("PUBSUB", "HELP")
    assert b"SHARDCHANNELS [<pattern>]" in got
    assert b"SHARDNUMSUB [<shardchannel> ...]" in got


def test_arity_errors(conns):
    c = conns()
    assert c.cmd("SSUBSCRIBE") == (
        b"-ERR wrong number of arguments for 'ssubscribe' command\r\n"
    )
    assert c.cmd("SPUBLISH", "a") == (
        b"-ERR wrong number of arguments for 'spublish' command\r\n"
    )
    assert c.cmd("SPUBLISH", "a", "b", "c") == (
        b"-ERR wrong number of arguments for 'spublish' command\r\n"
    )


def test_client_list_counts_shard_subscriptions(conns):
    c, q = conns(), conns()
    c.send("CLIENT", "SETNAME", "shardsub")
    c.read()
    c.send("SSUBSCRIBE", "a", "b")
    c.read()
    c.read()
    line = [l for l in q.cmd("CLIENT", "LIST").decode().split("\n") if "name=shardsub" in l][0]
    assert " flags=P " in line
    assert " sub=0 psub=0 ssub=2 " in line
    got = q.cmd("CLIENT", "LIST", "TYPE", "pubsub").decode()
    assert "name=shardsub" in got
    assert "name=shardsub" not in q.cmd("CLIENT", "LIST", "TYPE", "normal").decode()


def test_info_counts_shard_channels(conns, srv):
    c = conns()
    c.send("SSUBSCRIBE", "a", "b")
    c.read()
    c.read()
    info = srv.client().info("stats")
    assert info["pubsubshard_channels"] == 2
    assert info["pubsub_channels"] == 0


def test_ssubscribe_inside_multi_is_refused_at_exec(conns):
    c = conns()
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SSUBSCRIBE", "a") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == (
        b"*1\r\n-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n"
    )
    assert c.cmd("PING") == b"+PONG\r\n"
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SPUBLISH", "a", "b") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == b"*1\r\n:0\r\n"


def test_scripts_cannot_ssubscribe_but_can_spublish(conns):
    sub, c = conns(), conns()
    sub.send("SSUBSCRIBE", "a")
    sub.read()
    got = c.cmd("EVAL", "return redis.call('ssubscribe', 'x')", "0")
    assert got.startswith(b"-ERR This Redis command is not allowed from script")
    assert c.cmd("EVAL", "return redis.call('spublish', 'a', 'from-lua')", "0") == b":1\r\n"
    assert sub.read() == arr("smessage", "a", "from-lua")


def test_acl_channel_rules_apply_to_shard_channels(conns):
    admin, c = conns(), conns()
    assert admin.cmd(
        "ACL", "SETUSER", "shard", "on", ">pw", "+@all", "~*", "resetchannels", "&ok*"
    ) == b"+OK\r\n"
    assert c.cmd("AUTH", "shard", "pw") == b"+OK\r\n"
    assert c.cmd("SPUBLISH", "nope", "m") == (
        b"-NOPERM this user has no permissions to access one of the channels "
        b"used as arguments\r\n"
    )
    assert c.cmd("SPUBLISH", "ok1", "m") == b":0\r\n"
    assert c.cmd("SSUBSCRIBE", "ok1", "nope") == (
        b"-NOPERM this user has no permissions to access one of the channels "
        b"used as arguments\r\n"
    )
    c.send("SSUBSCRIBE", "ok1")
    assert c.read() == arr("ssubscribe", "ok1", 1)
    # Losing the channel disconnects the subscriber, as for SUBSCRIBE.
    assert admin.cmd("ACL", "SETUSER", "shard", "resetchannels") == b"+OK\r\n"
    c.s.settimeout(5)
    assert c.f.readline() == b""


def test_redis_py_sharded_pubsub(srv):
    r = srv.client()
    p = r.pubsub()
    p.ssubscribe("orders")
    msg = p.get_sharded_message(timeout=2)
    assert msg["type"] == "ssubscribe" and msg["channel"] == "orders"
    assert r.spublish("orders", "o-1") == 1
    msg = p.get_sharded_message(timeout=2)
    assert msg == {"type": "smessage", "pattern": None, "channel": "orders", "data": "o-1"}
    assert r.pubsub_shardnumsub("orders") == [("orders", 1)]
    p.sunsubscribe("orders")
    p.close()


def test_shard_channels_are_not_keys(conns):
    c = conns()
    for args in (("SPUBLISH", "ch", "m"), ("SSUBSCRIBE", "a", "b"), ("SUNSUBSCRIBE", "a")):
        assert c.cmd("COMMAND", "GETKEYS", *args) == b"-ERR The command has no key arguments\r\n"
    # COMMAND INFO shows the channel positions, as Redis does.
    info = c.cmd("COMMAND", "INFO", "SPUBLISH")
    assert b"$8\r\nspublish\r\n:3\r\n" in info
    assert b":1\r\n:1\r\n:1\r\n" in info


def test_subscribe_inside_multi_runs_at_exec(conns):
    # Redis 7.0 runs SUBSCRIBE/PSUBSCRIBE queued in a transaction: their
    # replies sit inside EXEC's, and the client leaves EXEC subscribed.
    sub, pub = conns(), conns()
    assert sub.cmd("MULTI") == b"+OK\r\n"
    assert sub.cmd("SUBSCRIBE", "a") == b"+QUEUED\r\n"
    assert sub.cmd("PSUBSCRIBE", "b*") == b"+QUEUED\r\n"
    assert sub.cmd("SET", "k", "v") == b"+QUEUED\r\n"
    sub.send("EXEC")
    assert sub.f.readline() == b"*3\r\n"
    assert sub.read() == arr("subscribe", "a", 1)
    assert sub.read() == arr("psubscribe", "b*", 2)
    assert sub.read() == b"+OK\r\n"
    assert pub.cmd("PUBLISH", "a", "hi") == b":1\r\n"
    assert sub.read() == arr("message", "a", "hi")
    assert pub.cmd("PUBLISH", "bx", "yo") == b":1\r\n"
    assert sub.read() == arr("pmessage", "b*", "bx", "yo")
    # Subscribed mode (RESP2): PING answers as a message, GET is refused.
    assert sub.cmd("PING") == arr("pong", "")
    assert sub.cmd("GET", "k").startswith(b"-ERR Can't execute 'get'")


def test_subscribe_to_several_channels_inside_multi(conns):
    # EXEC counts one element per queued command while SUBSCRIBE writes one
    # reply per channel: Redis 7.0 writes exactly this.
    c = conns()
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SUBSCRIBE", "x", "y") == b"+QUEUED\r\n"
    c.send("EXEC")
    assert c.f.readline() == b"*1\r\n"
    assert c.read() == arr("subscribe", "x", 1)
    assert c.read() == arr("subscribe", "y", 2)
    assert c.cmd("MULTI").startswith(b"-ERR Can't execute 'multi'")


def test_unsubscribe_inside_multi(conns):
    c = conns()
    c.send("SUBSCRIBE", "x")
    assert c.read() == arr("subscribe", "x", 1)
    c.send("UNSUBSCRIBE", "x")
    assert c.read() == arr("unsubscribe", "x", 0)
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SUNSUBSCRIBE") == b"+QUEUED\r\n"
    assert c.cmd("PUNSUBSCRIBE", "p") == b"+QUEUED\r\n"
    assert c.cmd("UNSUBSCRIBE") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == (
        b"*3\r\n" + arr("sunsubscribe", None, 0) + arr("punsubscribe", "p", 0)
        + arr("unsubscribe", None, 0)
    )
    assert c.cmd("PING") == b"+PONG\r\n"


def test_subscribe_inside_multi_resp3(conns):
    c = conns(resp3=True)
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SUBSCRIBE", "a") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == b"*1\r\n>3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    # RESP3 clients keep running commands while subscribed.
    assert c.cmd("PING") == b"+PONG\r\n"
