"""Edge cases of ebb as a module for Redis 7 (crates/ebb-module, see
docs/module.md): the module's replies against ebb-server's for the same
commands, transactions, scripts, WATCH, eviction, lazy freeing, flushes,
the generic key commands on module keys, store commands across the two
worlds, member TTLs, scans and random picks that must skip due members,
binary-safe names, RESP3, and keys whose own TTL passes first. Where the
module's value stands in for one of Redis's types, Redis's own behaviour is
the reference, checked side by side in the same server."""

import re
import time

import pytest
import redis

from conftest import EbbServer, MODULE, module_server, Raw, raw_cmd, RedisServer, wait_until



start = module_server


@pytest.fixture
def other(mod):
    c = mod.client(protocol=2)
    yield c
    c.close()



def ebb(c, *args):
    return c.execute_command(f"ebb.{args[0]}", *args[1:])


# ---------------------------------------------------------------------------
# The same command lines against ebb-server and against the module (with the
# `ebb.` prefix): replies byte for byte, in RESP2 and RESP3.

SETUP = [
    "zadd z 1 a 2 b 3 c 4 d 5 e 0.1 f",
    "zadd zi -inf lo +inf hi 0 mid",
    "zadd zl 0 a 0 b 0 c 0 d 0 e",
    "sadd s a b c",
    "hset h f1 v1 f2 v2 n 10 fl 1.5",
    "!rpush lst a",
]

# Steps of one case are separated by "|"; a step starting with "!" is a
# generic command sent unprefixed to both servers.
CASES = [
    "zrange z -inf +inf BYSCORE",
    "zrange z (1 (5 BYSCORE WITHSCORES",
    "zrange z +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES",
    "zrange z 0 -1 REV WITHSCORES",
    "zrange zl [b (d BYLEX",
    "zrange zl + - BYLEX REV LIMIT 0 2",
    "zrange zl a c BYLEX",
    "zrange zl - + BYLEX WITHSCORES",
    "zrange z 0 -1 LIMIT 0 1",
    "zrange z 0 -1 BYSCORE BYLEX",
    "zrange z -9223372036854775808 9223372036854775807",
    "zrange z 0 99999999999999999999",
    "zrangebyscore z -inf +inf WITHSCORES LIMIT 0 -1",
    "zrangebyscore z (1 3 LIMIT 0 1",
    "zrangebyscore z 1 2 LIMIT 0 9223372036854775808",
    "zrangebyscore z ((1 3",
    "zrevrangebyscore z +inf (2",
    "zrevrangebylex zl (d -",
    "zrangebylex zl (a [c LIMIT 1 5",
    "zcount z (1 +inf|zcount zi -inf +inf|zlexcount zl [b +",
    "zrank z c|zrevrank z nosuch|zmscore z a nosuch f|zscore zi lo",
    "zincrby zi 1 hi|zincrby zi +inf lo",
    "zincrby z 1e308 e|zincrby z 1e308 e|zincrby z nan a",
    "zadd z 1e400 x|zadd z 0x10 x|zadd z 1 a 1|zadd z",
    "zadd z XX CH 10 a 20 nosuch|zadd z GT CH 0 a 9 b|zadd z LT INCR -1 a|zadd z NX INCR 1 a|zrange z 0 -1 WITHSCORES",
    "zinterstore out 2 z zl WEIGHTS 2 3 AGGREGATE MAX|zrange out 0 -1 WITHSCORES",
    "zunionstore out 2 z nosuch WEIGHTS 1|zunionstore out 1 z WEIGHTS nan|zunionstore out 0 z",
    "zunion 2 z zi AGGREGATE SUM WITHSCORES|zunion 2 zi zi WITHSCORES|zdiff 2 z zl WITHSCORES",
    "zpopmax z|zpopmax z 2|zpopmin z 0|zpopmin z -1|zmpop 2 nosuch z MAX COUNT 2|zmpop 1 z MIN COUNT -1",
    "zremrangebyscore z (1 3|zremrangebyrank z -2 -1|zremrangebylex zl [a (c|zrange z 0 -1",
    "zrandmember nosuch -5|zrandmember z 0|zrandmember z 9223372036854775807|zrandmember z -9223372036854775808",
    "zrangestore out z 0 -1 WITHSCORES|zrangestore out z +inf (2 BYSCORE REV LIMIT 0 2|zrange out 0 -1 WITHSCORES",
    "zrangestore z z 1 2|zrange z 0 -1 WITHSCORES|zrangestore out nosuch 0 -1|!exists out",
    "spop s 0|srandmember s 0|spop nosuch 3|spop s -1|srandmember s -9223372036854775808",
    "smismember s a x|sintercard 2 s nosuch LIMIT 0|sintercard 1 s LIMIT -1|sintercard 3 s z|sintercard 0 s",
    "smove s s2 a|smembers s2|smove s z a|sdiffstore out s z|sunionstore s s s|scard s",
    "hincrbyfloat h f1 1.5|hincrbyfloat h fl 1e308|hincrbyfloat h fl 1e308",
    "hincrby h n 9223372036854775797|hincrby h n 1|hincrby h n x",
    "hrandfield h 0|hrandfield nosuch -1|hrandfield h -9223372036854775808|hmget h f1 nosuch|hsetnx h f1 x|hstrlen h f1",
    "hset h f1|hget str f|zadd str 1 a|sismember str a|zcard|hgetall",
    "sunionstore str s|!ttl str|smembers str",
    "hexpire h 100 NX FIELDS 2 f1 nosuch|hexpire h 200 NX FIELDS 1 f1|hexpire h 50 GT FIELDS 1 f1"
    "|hexpire h 50 LT FIELDS 1 f1|hexpire h 50 XX FIELDS 1 f2|hexpire h 0 FIELDS 1 f2"
    "|hpersist h FIELDS 3 f1 f2 nosuch|hgetall h",
    "hexpire h 100 FIELDS 0|hexpire h 100 FIELDS 3 a b|hexpire h -1 FIELDS 1 f1|hexpire h 100 NX XX FIELDS 1 f1",
    "httl nosuch FIELDS 2 a b|httl h FIELDS 1 nosuch|hpexpireat h 1 FIELDS 1 f1|hexists h f1|hpersist nosuch FIELDS 1 a",
    "hsetex h FNX EX 100 FIELDS 1 f1 x|hsetex h FXX KEEPTTL FIELDS 1 f1 x|hgetex h PERSIST FIELDS 2 f1 nosuch"
    "|hgetdel h FIELDS 2 f2 nosuch|hgetall h",
    "expiremember z a 100|ttl z a|persist z a|ttl z a|ttl z nosuch|ttl nosuch a|expiremember z a 0|zscore z a",
    "fieldexpire s 100 a nosuch|fieldttl s a|fieldttl s a nosuch|persist s a|persist s",
    "saddex s LIMIT 3 100 x y|smembers s|saddex s LIMIT 5 100 x y|scard s|saddex s LIMIT -1 100 x|saddex s 0 x",
    "zaddex z CAP 2 EX 100 7 n1 8 n2|zrange z 0 -1|zaddex z EX 0 1 q|zaddex z INCR EX 100 1 a 2 b",
    "zexpire z 100 MEMBERS 2 a nosuch|zttl z MEMBERS 2 a b|zpersist z MEMBERS 2 a b|zttl nosuch MEMBERS 1 a",
    "sscan s 0 COUNT 100|hscan h 0 MATCH f* COUNT 100|zscan z 0 COUNT 100|zscan z 0 COUNT 0|sscan s x",
    "type z|type s|type h|type str|type nosuch",
    # The rate limiter keeps its state in one of the server's strings.
    "cl.throttle t 5 10 60|cl.throttle t 5 10 60 3|cl.throttle t 5 10 60 3|cl.throttle t 5 10 60 3"
    "|cl.throttle t 5 10 60 0|!type t|!ttl t|cl.throttle t 5 10 60 -2|!ttl t",
    "cl.throttle str 1 1 1|cl.throttle lst 1 1 1|cl.throttle z 1 1 1|!lrange lst 0 -1|!get str|type lst",
    "cl.throttle t x 1 1|cl.throttle t 1 0 1|cl.throttle t 1|cl.throttle t 1 1 1 1 1|cl.throttle t 1 1 0"
    "|cl.throttle t -1 1 1|cl.throttle t 9223372036854775807 1 1|cl.throttle t 1 1 1 9223372036854775807|!exists t",
]

PREFIXED_WRONG_ARITY = re.compile(rb"(wrong number of arguments for ')ebb\.")


def _norm(reply):
    return PREFIXED_WRONG_ARITY.sub(rb"\1", reply)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """ebb-server and redis-server with the module, shared by the
    differential cases (each case starts from FLUSHALL)."""
    d = tmp_path_factory.mktemp("edges-pair")
    e = EbbServer("--dir", str(d), cwd=str(d))
    r = RedisServer(str(d), "--loadmodule", MODULE)
    conns = {}
    yield e, r, conns
    for pair_ in conns.values():
        for c in pair_:
            c.close()
    e.stop()
    r.stop()


def _send(conn, prefix, line):
    args = line.split()
    if args[0].startswith("!"):
        args[0] = args[0][1:]
    else:
        args[0] = prefix + args[0]
    return _norm(conn.cmd(*args))


@pytest.mark.parametrize("resp", [2, 3])
@pytest.mark.parametrize("case", CASES)
def test_replies_match_ebb_server(pair, case, resp):
    e, r, conns = pair
    if resp not in conns:
        conns[resp] = (Raw(r.port, resp3=resp == 3), Raw(e.port, resp3=resp == 3))
    mc, ec = conns[resp]
    for conn, prefix in ((mc, "ebb."), (ec, "")):
        assert conn.cmd("FLUSHALL") == b"+OK\r\n"
        assert conn.cmd("SET", "str", "v", "EX", "1000") == b"+OK\r\n"
        for line in SETUP:
            assert not _send(conn, prefix, line).startswith(b"-")
    for step in case.split("|"):
        got, want = _send(mc, "ebb.", step), _send(ec, "", step)
        assert got == want, step


def test_error_texts_with_newlines_are_formatted_as_redis_does(m):
    # Redis trims trailing CR/LF from an error text and turns inner ones into
    # spaces; the module's errors go through the same formatting.
    m.set("k", "v")
    assert raw_cmd_error(m, "EXPIRE", "k", 10, b"BAD\r\n") == "Unsupported option BAD"
    assert raw_cmd_error(m, "ebb.hsetex", "h", b"BAD\r\n", "FIELDS", 1, "f", "v") == "unknown argument: BAD"
    assert raw_cmd_error(m, "ebb.hsetex", "h", b"B\r\nAD", "FIELDS", 1, "f", "v") == "unknown argument: B  AD"


def test_error_texts_with_trailing_newlines_match_ebb_server(pair):
    e, r, conns = pair
    if 2 not in conns:
        conns[2] = (Raw(r.port), Raw(e.port))
    mc, ec = conns[2]
    for arg in (b"BAD\r\n", b"BAD\n"):
        assert mc.cmd("ebb.hsetex", "h", arg, "FIELDS", 1, "f", "v") == \
            ec.cmd("hsetex", "h", arg, "FIELDS", 1, "f", "v")


def raw_cmd_error(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        raw_cmd(c, *args)
    return str(e.value)


# Keys some of whose members passed their deadline (100 ms), read or written
# once the deadlines passed, whether or not active expiry got there first.
DUE_SETUP = [
    "sadd k x", "spexpire k 100 MEMBERS 1 x", "!expire k 100",
    "zaddex z PX 100 1 a 2 b", "zadd z 3 c",
    "hsetex h PX 100 FIELDS 2 f 1 g 2", "hset h keep v",
    "sadd s d1 d2 live", "spexpire s 100 MEMBERS 2 d1 d2",
    "zaddex zall PX 100 1 q", "!expire zall 100",
]

DUE_CASES = [
    "sadd k y|!ttl k|smembers k",
    "zrangestore out z 0 -1|zrange out 0 -1 WITHSCORES",
    "sunionstore out s|smembers out",
    "smove s t d1|smove s t live|smembers t",
    "zincrby z 5 a|zrange z 0 -1 WITHSCORES|zttl z MEMBERS 1 a",
    "hincrby h f 1|httl h FIELDS 1 f",
    "zadd z XX 9 a|zadd z NX 9 b|zrange z 0 -1 WITHSCORES",
    "saddex s 100 d1|scard s",
    "zadd zall 5 r|!ttl zall",
    "zscore z a|zrank z c|zcount z -inf +inf|zrandmember z 5|zrandmember z -3",
    "hgetall h|hlen h|hrandfield h 10|hrandfield h -2 WITHVALUES",
    "spop s 10|scard s|!exists s",
    "zpopmin z 5|!exists z",
    "zinterstore out 2 z z|zrange out 0 -1",
    "sintercard 1 s|sismember s d1|smismember s d1 live",
    "hgetdel h FIELDS 2 f keep|!exists h",
    "type zall|persist k|!ttl k",
    "ttl z a|persist z a|expiremember z a 100|zmscore z a b c",
    "sscan s 0|zscan z 0|hscan h 0",
]


@pytest.mark.parametrize("case", DUE_CASES)
def test_replies_after_deadlines_match_ebb_server(pair, case):
    e, r, conns = pair
    if 2 not in conns:
        conns[2] = (Raw(r.port), Raw(e.port))
    mc, ec = conns[2]
    for conn, prefix in ((mc, "ebb."), (ec, "")):
        assert conn.cmd("FLUSHALL") == b"+OK\r\n"
        for line in DUE_SETUP:
            assert not _send(conn, prefix, line).startswith(b"-"), line
    time.sleep(0.15)
    for step in case.split("|"):
        got, want = _send(mc, "ebb.", step), _send(ec, "", step)
        assert got == want, step


# ---------------------------------------------------------------------------
# Transactions, WATCH and scripts.


def test_multi_exec_mixes_module_and_native_commands(m):
    p = m.pipeline(transaction=True)
    p.set("str", "v")
    p.execute_command("ebb.saddex", "s", 100, "a", "b")
    p.sadd("nat", "x")
    p.execute_command("ebb.scard", "s")
    p.execute_command("ebb.sadd", "str", "q")  # WRONGTYPE, the rest still runs
    p.execute_command("ebb.sadd", "nat", "q")  # WRONGTYPE too
    p.sadd("s", "q")  # Redis's SADD on a module key: WRONGTYPE
    p.scard("nat")
    p.execute_command("ebb.type", "s")
    p.type("s")
    out = p.execute(raise_on_error=False)
    assert out[:4] == [True, 2, 1, 2]
    for e in out[4:7]:
        assert isinstance(e, redis.ResponseError) and "WRONGTYPE" in str(e)
    assert out[7:] == [1, "set", "ebb-value"]
    # DISCARD leaves nothing behind.
    p = m.pipeline(transaction=False)
    p.execute_command("MULTI")
    p.execute_command("ebb.sadd", "never", "x")
    p.execute_command("DISCARD")
    p.execute()
    assert m.exists("never") == 0
    # A syntax error found at queueing time aborts the whole transaction.
    with pytest.raises(redis.ResponseError):
        p = m.pipeline(transaction=True)
        p.execute_command("ebb.sadd", "never", "x")
        p.execute_command("NOSUCHCOMMAND")
        p.execute()
    assert m.exists("never") == 0


def _watch_outcome(m, watched, action):
    with m.pipeline() as p:
        p.watch(watched)
        action()
        p.multi()
        p.ping()
        try:
            p.execute()
            return "exec"
        except redis.WatchError:
            return "aborted"


def test_watch_on_a_module_key_and_key_level_commands_of_another_client(m, other):
    ebb(m, "zadd", "w", 1, "a")
    # Redis's key TTL commands on the module key count as modifications.
    assert _watch_outcome(m, "w", lambda: other.expire("w", 100)) == "aborted"
    assert _watch_outcome(m, "w", lambda: other.persist("w")) == "aborted"
    assert _watch_outcome(m, "w", lambda: ebb(other, "zincrby", "w", 1, "a")) == "aborted"
    # Reads that find nothing due do not.
    assert _watch_outcome(m, "w", lambda: (ebb(other, "zrange", "w", 0, -1),
                                           ebb(other, "zscore", "w", "a"),
                                           ebb(other, "ttl", "w"))) == "exec"
    # The key expiring on its own (Redis's TTL) aborts too.
    other.pexpire("w", 30)
    assert _watch_outcome(m, "w", lambda: time.sleep(0.1)) == "aborted"
    assert m.exists("w") == 0


# Writes that change nothing in the keys watched: Redis's own commands leave
# a WATCH alone, and so must the module's (docs/module.md: writes count as
# modifications).
NOOP_WRITES = {
    "store-source": ([("sadd", "src", "a")], ("sunionstore", "dst", "src"), "src"),
    "zstore-source": ([("zadd", "a", 1, "x"), ("zadd", "b", 1, "x")],
                      ("zinterstore", "d", 2, "a", "b"), "b"),
    "srem-absent-member": ([("sadd", "k", "a")], ("srem", "k", "nosuch"), "k"),
    "srem-missing-key": ([], ("srem", "k", "x"), "k"),
    "zadd-xx-absent": ([("zadd", "k", 1, "a")], ("zadd", "k", "XX", 5, "nosuch"), "k"),
    "hdel-absent": ([("hset", "h", "f", "v")], ("hdel", "h", "nosuch"), "h"),
    "wrongtype-on-string": ([], ("sadd", "str", "x"), "str"),
}



@pytest.mark.parametrize("world", [
    "redis",
    "ebb",
])
@pytest.mark.parametrize("case", sorted(NOOP_WRITES))
def test_watch_survives_writes_that_change_nothing(m, other, case, world):
    setup, cmd, watched = NOOP_WRITES[case]
    prefix = "ebb." if world == "ebb" else ""
    m.set("str", "v")
    for s in setup:
        m.execute_command(prefix + s[0], *s[1:])

    def act():
        try:
            other.execute_command(prefix + cmd[0], *cmd[1:])
        except redis.ResponseError as e:
            assert "WRONGTYPE" in str(e)

    assert _watch_outcome(m, watched, act) == "exec"


def _invalidated(raw):
    """Whether an invalidation push is waiting before the next reply."""
    raw.send("PING")
    first = raw.read()
    if first.startswith(b">"):
        assert raw.read() == b"+PONG\r\n"
        return True
    assert first == b"+PONG\r\n"
    return False


@pytest.mark.parametrize("world", [
    "redis",
    "ebb",
])
def test_client_tracking_invalidates_written_keys_only(mod, m, world):
    prefix = "ebb." if world == "ebb" else ""
    m.execute_command(prefix + "zadd", "z", 1, "a")
    m.execute_command(prefix + "sadd", "src", "x")
    raw = Raw(mod.port, resp3=True)
    try:
        assert raw.cmd("CLIENT", "TRACKING", "on") == b"+OK\r\n"
        raw.cmd(prefix + "zrange", "z", 0, -1)
        raw.cmd(prefix + "smembers", "src")
        # A write to a key read: invalidated.
        m.execute_command(prefix + "zadd", "z", 2, "b")
        assert _invalidated(raw)
        raw.cmd(prefix + "zrange", "z", 0, -1)
        # Another client's read invalidates nothing.
        m.execute_command(prefix + "smembers", "src")
        assert not _invalidated(raw)
        # A store command reading the key as its source leaves it valid.
        m.execute_command(prefix + "sunionstore", "dst", "src")
        assert not _invalidated(raw)
    finally:
        raw.close()




@pytest.mark.parametrize("world", [
    "redis",
    "ebb",
])
def test_key_ttl_is_frozen_during_a_transaction(m, world):
    prefix = "ebb." if world == "ebb" else ""
    p = m.pipeline(transaction=True)
    p.execute_command(prefix + "sadd", "k", "a")
    p.pexpire("k", 50)
    p.execute_command("DEBUG", "SLEEP", "0.1")
    p.execute_command(prefix + "scard", "k")
    p.exists("k")
    p.execute_command(prefix + "sadd", "k", "b")
    out = p.execute()
    # Redis checks key TTLs against the time EXEC started.
    assert out[3:] == [1, 1, 1]
    # Afterwards the key has expired: the write inside did not make it
    # immortal.
    assert m.exists("k") == 0


SLOW_SCRIPT = """
redis.call(ARGV[1], KEYS[1], 'a')
redis.call('pexpire', KEYS[1], 30)
local t0 = redis.call('time')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('time')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start > 100000 then break end
end
return {redis.call(ARGV[2], KEYS[1]), redis.call('exists', KEYS[1])}
"""


@pytest.mark.parametrize("world", [
    "redis",
    "ebb",
])
def test_key_ttl_is_frozen_during_a_script(m, world):
    prefix = "ebb." if world == "ebb" else ""
    assert m.eval(SLOW_SCRIPT, 1, "k", prefix + "sadd", prefix + "scard") == [1, 1]


def test_read_only_scripts_and_functions_read_module_keys(mod, m):
    ebb(m, "zaddex", "z", "PX", 100, 1, "soon")
    ebb(m, "zadd", "z", 2, "stays")
    ebb(m, "saddex", "gone", 1, "x")  # every member due by the time we read
    m.expire("gone", 1000)
    time.sleep(1.05)
    assert m.execute_command(
        "EVAL_RO", "return redis.call('ebb.zrange', KEYS[1], 0, -1)", 1, "z") == ["stays"]
    assert m.execute_command(
        "EVAL_RO", "return {redis.call('ebb.scard', KEYS[1]), redis.call('ebb.smembers', KEYS[1])}",
        1, "gone") == [0, []]
    assert m.exists("gone") == 0
    with pytest.raises(redis.ResponseError, match="Write commands are not allowed from read-only scripts"):
        m.execute_command("EVAL_RO", "return redis.call('ebb.zadd', KEYS[1], 3, 'x')", 1, "z")
    lib = """#!lua name=edges
redis.register_function{function_name='rd', flags={'no-writes'},
  callback=function(keys, args) return redis.call('ebb.zrange', keys[1], 0, -1, 'WITHSCORES') end}
redis.register_function{function_name='wr',
  callback=function(keys, args) return redis.call('ebb.zadd', keys[1], args[1], args[2]) end}
"""
    assert m.function_load(lib) == "edges"
    assert m.execute_command("FCALL_RO", "rd", 1, "z") == ["stays", "2"]
    with pytest.raises(redis.ResponseError, match="write flag"):
        m.execute_command("FCALL_RO", "wr", 1, "z", 3, "x")
    assert m.execute_command("FCALL", "wr", 1, "z", 3, "x") == 1
    assert m.execute_command("FCALL_RO", "rd", 1, "z") == ["stays", "2", "x", "3"]


def test_scripts_get_the_module_errors_through_pcall(m):
    ebb(m, "sadd", "s", "a")
    m.set("str", "v")
    err = lambda body, *keys: m.eval(f"return redis.pcall({body})['err']", len(keys), *keys)
    # The arity is declared, so the server checks it first, as for its own
    # commands called from a script.
    assert err("'ebb.sadd', KEYS[1]", "s") == "ERR Wrong number of args calling Redis command from script"
    assert err("'ebb.zadd', KEYS[1], 1, 'a'", "s").startswith("WRONGTYPE")
    assert err("'ebb.zcard', KEYS[1]", "str").startswith("WRONGTYPE")
    assert err("'sadd', KEYS[1], 'x'", "s").startswith("WRONGTYPE")
    assert err("'ebb.zrange', KEYS[1], 0, 'x'", "s") == "ERR value is not an integer or out of range"
    assert err("'ebb.get', 'k'") == "ERR Unknown Redis command called from script"
    # redis.call raises it, naming the script.
    with pytest.raises(redis.ResponseError, match="WRONGTYPE.*script"):
        m.eval("return redis.call('ebb.scard', KEYS[1])", 1, "str")
    # Nothing was changed by the failed calls.
    assert ebb(m, "smembers", "s") == ["a"] and m.get("str") == "v"


# ---------------------------------------------------------------------------
# Memory: eviction, OOM, lazy freeing, flushes.


def test_allkeys_lru_evicts_module_keys(m):
    base = m.info("memory")["used_memory"]
    m.config_set("maxmemory", base + 2_000_000)
    m.config_set("maxmemory-policy", "allkeys-lru")
    members = [x for j in range(200) for x in (j, f"member-{j}")]
    for i in range(200):
        # Half with member deadlines, so that evicted keys sit in the index.
        if i % 2:
            assert ebb(m, "zaddex", f"k{i}", "PX", 300, *members) == 200
        else:
            assert ebb(m, "zadd", f"k{i}", *members) == 200
    assert m.info("stats")["evicted_keys"] > 0
    assert m.dbsize() < 200
    assert m.info("memory")["used_memory"] <= base + 2_000_000 + 200_000
    m.config_set("maxmemory", 0)
    # What was not evicted is whole, and the module keeps working.
    kept = [k for k in m.keys("k*") if int(k[1:]) % 2 == 0]
    assert kept and all(ebb(m, "zcard", k) == 200 for k in kept)
    assert ebb(m, "zadd", "after", 1, "x") == 1
    # The surviving keys with deadlines are still reclaimed on their own.
    assert wait_until(lambda: not any(k.startswith("k") and int(k[1:]) % 2
                                      for k in m.keys("k*")), 3)
    assert ebb(m, "zrange", "after", 0, -1) == ["x"]


def test_noeviction_refuses_module_writes_that_grow_memory(m):
    ebb(m, "zadd", "z", 1, "a", 2, "b")
    ebb(m, "hset", "h", "f", "v")
    m.config_set("maxmemory", 1)
    try:
        for cmd in (("zadd", "z", 3, "c"), ("saddex", "s", 10, "x"),
                    ("zaddex", "z", "EX", 10, 1, "q"), ("hsetex", "h", "EX", 10, "FIELDS", 1, "f", "v"),
                    ("sunionstore", "d", "z")):
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                ebb(m, *cmd)
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            m.set("x", "y")  # as Redis's own
        # Reads and removals still run.
        assert ebb(m, "zcard", "z") == 2
        assert ebb(m, "zrem", "z", "a") == 1
        assert ebb(m, "hdel", "h", "f") == 1
        assert m.exists("h") == 0
    finally:
        m.config_set("maxmemory", 0)
    assert ebb(m, "zadd", "z", 3, "c") == 1


def test_unlink_frees_a_large_module_value_in_the_background(m):
    ebb(m, "sadd", "big", *range(200_000))
    ebb(m, "zadd", "keep", 1, "a")
    before = m.info("memory")["used_memory"]
    freed_before = m.info("memory")["lazyfreed_objects"]
    assert m.unlink("big") == 1
    assert ebb(m, "scard", "big") == 0 and m.exists("big") == 0
    # As Redis does for its own large values: freed by the lazy-free thread.
    assert wait_until(lambda: m.info("memory")["lazyfreed_objects"] > freed_before, 3)
    assert wait_until(lambda: m.info("memory")["used_memory"] < before - 3_000_000, 3)
    assert ebb(m, "zrange", "keep", 0, -1) == ["a"]
    assert ebb(m, "sadd", "big", "x") == 1


def test_the_timer_drops_a_large_key_whose_members_all_came_due(m):
    ebb(m, "saddex", "huge", 1, *range(200_000))
    ebb(m, "sadd", "small", "x")
    before = m.info("memory")["used_memory"]
    time.sleep(1.0)
    # Nobody reads it: the timer takes it whole.
    assert wait_until(lambda: m.exists("huge") == 0, 3)
    assert wait_until(lambda: m.info("memory")["used_memory"] < before - 3_000_000, 3)
    t0 = time.time()
    assert m.ping()
    assert time.time() - t0 < 0.5
    assert ebb(m, "smembers", "small") == ["x"]


def test_flushall_async_then_immediate_reuse(m):
    for db in (0, 1):
        m.execute_command("SELECT", db)
        for i in range(20):
            ebb(m, "saddex", f"k{i}", 100, *range(300))
            ebb(m, "zaddex", f"z{i}", "PX", 200, *[x for j in range(300) for x in (j, f"m{j}")])
    m.execute_command("SELECT", 0)
    assert m.flushall(asynchronous=True)
    # The same names at once, with new values and deadlines.
    assert ebb(m, "saddex", "k1", 1, "fresh") == 1
    assert ebb(m, "zaddex", "z1", "PX", 150, 1, "fresh") == 1
    ebb(m, "zadd", "z2", 1, "stays")
    assert ebb(m, "smembers", "k1") == ["fresh"]
    assert ebb(m, "zrange", "z1", 0, -1) == ["fresh"]
    assert m.dbsize() == 3
    m.execute_command("SELECT", 1)
    assert m.dbsize() == 0
    m.execute_command("SELECT", 0)
    # The new keys' deadlines are followed, the old ones forgotten.
    assert wait_until(lambda: m.exists("z1") == 0, 2)
    assert wait_until(lambda: m.exists("k1") == 0, 3)
    assert ebb(m, "zrange", "z2", 0, -1) == ["stays"]
    assert m.ping()


# ---------------------------------------------------------------------------
# Redis's generic key commands on module keys.


def test_rename_copy_move_onto_existing_keys(m):
    ebb(m, "zadd", "src", 1, "a")
    m.set("dst", "string", ex=1000)
    assert m.rename("src", "dst")
    assert m.ttl("dst") == -1 and m.type("dst") == "ebb-value"
    assert ebb(m, "zrange", "dst", 0, -1) == ["a"]
    assert m.exists("src") == 0
    # RENAMENX onto an existing key refuses.
    ebb(m, "sadd", "other", "x")
    assert m.renamenx("other", "dst") is False
    # COPY: without REPLACE onto an existing key, nothing; with it, a copy
    # independent of the original.
    assert m.copy("dst", "other") is False
    assert ebb(m, "smembers", "other") == ["x"]
    assert m.copy("dst", "other", replace=True) is True
    ebb(m, "zadd", "other", 2, "b")
    assert ebb(m, "zrange", "dst", 0, -1) == ["a"]
    assert ebb(m, "zrange", "other", 0, -1) == ["a", "b"]
    # MOVE onto a database where the key exists: 0, nothing moves.
    ebb(m, "saddex", "mv", 1, "here")
    m.execute_command("SELECT", 2)
    ebb(m, "sadd", "mv", "there")
    m.execute_command("SELECT", 0)
    assert m.move("mv", 2) is False
    assert ebb(m, "smembers", "mv") == ["here"]
    # The key that stayed is still reclaimed where it is, the other kept.
    assert wait_until(lambda: m.exists("mv") == 0, 5)
    m.execute_command("SELECT", 2)
    assert ebb(m, "smembers", "mv") == ["there"]
    # COPY into another database: reclaimed there too.
    m.execute_command("SELECT", 0)
    ebb(m, "zaddex", "cp", "PX", 200, 1, "x")
    assert m.copy("cp", "cp", destination_db=3)
    m.execute_command("SELECT", 3)
    assert ebb(m, "zrange", "cp", 0, -1) == ["x"]
    assert wait_until(lambda: m.exists("cp") == 0, 5)


def test_swapdb_and_flushdb_move_the_index_with_the_keys(m):
    ebb(m, "saddex", "a", 1, "x")  # db 0, will be in db 1
    m.execute_command("SELECT", 1)
    ebb(m, "saddex", "b", 1, "y")  # db 1, will be in db 0 and flushed
    m.execute_command("SELECT", 0)
    assert m.swapdb(0, 1)
    assert m.exists("b") == 1 and m.exists("a") == 0
    assert m.flushdb()
    ebb(m, "sadd", "b", "new")  # the name reused, without deadlines
    m.execute_command("SELECT", 1)
    assert ebb(m, "smembers", "a") == ["x"]
    # Not read again: the timer finds it in its new database.
    assert wait_until(lambda: m.exists("a") == 0, 3)
    m.execute_command("SELECT", 0)
    assert ebb(m, "smembers", "b") == ["new"]
    assert m.ping()


def test_restore_replace_over_a_native_key_and_active_expiry(m):
    ebb(m, "zaddex", "z", "PX", 300, 1, "soon")
    ebb(m, "zadd", "z", 2, "stays")
    payload = m.dump("z")
    m.sadd("nat", "q")
    m.expire("nat", 1000)
    with pytest.raises(redis.ResponseError, match="BUSYKEY"):
        m.restore("nat", 0, payload)
    assert m.restore("nat", 0, payload, replace=True)
    assert m.ttl("nat") == -1 and m.type("nat") == "ebb-value"
    assert ebb(m, "zrange", "nat", 0, -1, "WITHSCORES") == ["soon", "1", "stays", "2"]
    # With a key TTL, relative and absolute.
    assert m.restore("r1", 100_000, payload)
    assert 99_000 < m.pttl("r1") <= 100_000
    at = int(time.time() * 1000) + 50_000
    assert m.restore("r2", at, payload, absttl=True)
    assert 49_000 < m.pttl("r2") <= 50_000
    # The restored keys' members are reclaimed without anyone reading them.
    ebb(m, "zrem", "z", "stays")
    m.restore("r3", 0, m.dump("z"))
    assert wait_until(lambda: m.exists("r3") == 0 and m.exists("z") == 0, 3)
    assert ebb(m, "zrange", "nat", 0, -1) == ["stays"]
    assert ebb(m, "zrange", "r1", 0, -1) == ["stays"]
    # A native payload restored over a module key: Redis's set again.
    m.sadd("plain", "p")
    assert m.restore("r2", 0, m.dump("plain"), replace=True)
    assert m.type("r2") == "set" and m.smembers("r2") == {"p"}
    assert ebb(m, "type", "r2") == "set"
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        ebb(m, "scard", "r2")


def test_object_scan_type_and_randomkey(m):
    ebb(m, "zadd", "z", 1, "a")
    assert isinstance(m.object("encoding", "z"), str)
    assert m.object("refcount", "z") == 1
    assert m.object("idletime", "z") >= 0
    with pytest.raises(redis.ResponseError, match="LFU"):
        m.object("freq", "z")
    assert m.randomkey() == "z"
    m.sadd("nat", "x")
    ebb(m, "sadd", "es", "x")
    ebb(m, "hset", "eh", "f", "v")
    m.set("str", "v")
    assert sorted(m.scan_iter(_type="ebb-value", count=2)) == ["eh", "es", "z"]
    assert list(m.scan_iter(_type="set")) == ["nat"]
    assert m.type("eh") == "ebb-value" and ebb(m, "type", "eh") == "hash"
    # Redis's own type-specific commands refuse the module's values.
    for cmd in (("SORT", "es"), ("GETDEL", "es"), ("LPUSH", "es", 1), ("SCARD", "es"), ("HGETALL", "eh")):
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            m.execute_command(*cmd)
    m.config_set("maxmemory-policy", "allkeys-lfu")
    ebb(m, "zadd", "fresh", 1, "a")
    for _ in range(5):
        ebb(m, "zscore", "fresh", "a")
    assert m.object("freq", "fresh") >= 1
    with pytest.raises(redis.ResponseError, match="LFU"):
        m.object("idletime", "fresh")
    # MEMORY USAGE samples as asked, and the full count is not below a
    # sampled one by more than rounding.
    ebb(m, "sadd", "big", *[f"member-{i:06d}" for i in range(5000)])
    full = m.memory_usage("big", samples=0)
    assert full > 5000 * 10
    assert abs(m.memory_usage("big", samples=5) - full) < full // 2


def test_command_getkeys_for_moving_key_positions(m):
    getkeys = lambda *a: raw_cmd(m, "COMMAND", "GETKEYS", *a)
    assert getkeys("ebb.zunionstore", "d", 2, "a", "b", "WEIGHTS", 1, 2) == ["d", "a", "b"]
    assert getkeys("ebb.zinter", 2, "a", "b") == ["a", "b"]
    assert getkeys("ebb.zmpop", 2, "a", "b", "MIN") == ["a", "b"]
    assert getkeys("ebb.sintercard", 3, "a", "b", "c", "LIMIT", 1) == ["a", "b", "c"]
    assert getkeys("ebb.sunionstore", "d", "a", "b") == ["d", "a", "b"]
    assert getkeys("ebb.zrangestore", "d", "s", 0, -1) == ["d", "s"]
    assert getkeys("ebb.hsetex", "h", "EX", 1, "FIELDS", 1, "f", "v") == ["h"]


def test_acl_key_patterns_cover_module_keys(mod, m):
    m.execute_command("ACL", "SETUSER", "u", "on", ">pw", "~ok*", "+@all")
    u = mod.client(protocol=2, username="u", password="pw")
    try:
        assert ebb(u, "zadd", "ok1", 1, "a") == 1
        for cmd in (("zadd", "no1", 1, "a"), ("zunionstore", "ok2", 2, "ok1", "no1"),
                    ("sunionstore", "ok3", "no"), ("zmpop", 2, "ok1", "no", "MIN"),
                    ("zrangestore", "no", "ok1", 0, -1)):
            with pytest.raises(redis.exceptions.NoPermissionError):
                ebb(u, *cmd)
        assert ebb(u, "zunionstore", "ok2", 1, "ok1") == 1
    finally:
        u.close()


def test_read_only_key_pattern_allows_module_reads(mod, m):
    ebb(m, "zadd", "z", 1, "a")
    m.zadd("nz", {"a": 1})
    m.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "%R~*", "+@all")
    u = mod.client(protocol=2, username="reader", password="pw")
    try:
        assert u.zrange("nz", 0, -1) == ["a"]  # Redis's own read
        with pytest.raises(redis.exceptions.NoPermissionError):
            u.zadd("nz", {"b": 2})
        with pytest.raises(redis.exceptions.NoPermissionError):
            ebb(u, "zadd", "z", 2, "b")
        assert ebb(u, "zrange", "z", 0, -1) == ["a"]
        # Keys found through the key callback carry their flags too: the
        # destination of a store is written, its sources only read.
        m.execute_command("ACL", "SETUSER", "reader", "%R~*", "%W~dst*")
        assert ebb(u, "zunionstore", "dst1", 1, "z") == 1
        with pytest.raises(redis.exceptions.NoPermissionError):
            ebb(u, "zunionstore", "z", 1, "dst1")
    finally:
        u.close()


# ---------------------------------------------------------------------------
# Store commands across the two worlds, against Redis's own store commands.

STORES = {
    # name: (setup, store command, destination)
    "sources-missing-dest-string-with-ttl": ([("sadd", "a", "x")], ("sunionstore", "dst", "nosuch1", "nosuch2"), "dst"),
    "sinter-empty-deletes-dest": ([("sadd", "a", "x")], ("sinterstore", "dst", "a", "nosuch"), "dst"),
    "sunion-dest-is-source-with-ttl": ([("sadd", "a", "x"), ("sadd", "b", "y"), ("expire", "a", 1000)],
                                       ("sunionstore", "a", "a", "b"), "a"),
    "sdiff-dest-string-with-ttl": ([("sadd", "a", "x", "y"), ("sadd", "b", "y")], ("sdiffstore", "dst", "a", "b"), "dst"),
    "sunion-source-string": ([("sadd", "a", "x")], ("sunionstore", "dst", "a", "str"), "dst"),
    "zrangestore-source-missing": ([("del", "dst"), ("zadd", "dst", 1, "old")], ("zrangestore", "dst", "nosuch", 0, -1), "dst"),
    "zrangestore-dest-is-source": ([("zadd", "a", 1, "x", 2, "y", 3, "w"), ("expire", "a", 1000)],
                                   ("zrangestore", "a", "a", 1, -1), "a"),
    "zrangestore-dest-string-with-ttl": ([("zadd", "a", 1, "x")], ("zrangestore", "dst", "a", 0, -1), "dst"),
    "zrangestore-source-string": ([], ("zrangestore", "dst", "str", 0, -1), "dst"),
    "zunion-dest-is-source": ([("zadd", "a", 1, "x"), ("zadd", "b", 2, "x", 3, "y"), ("expire", "a", 1000)],
                              ("zunionstore", "a", 2, "a", "b", "WEIGHTS", 2, 1), "a"),
    "zunion-source-string": ([("zadd", "a", 1, "x")], ("zunionstore", "dst", 2, "a", "str"), "dst"),
    "zunion-sources-missing": ([], ("zunionstore", "dst", 2, "n1", "n2"), "dst"),
    "zinter-same-source-twice": ([("zadd", "a", 1, "x", 2, "y")],
                                 ("zinterstore", "dst", 2, "a", "a", "AGGREGATE", "SUM"), "dst"),
    "zdiff-dest-string-with-ttl": ([("zadd", "a", 1, "x", 2, "y"), ("zadd", "b", 1, "y")],
                                   ("zdiffstore", "dst", 2, "a", "b"), "dst"),
    "smove-to-string": ([("sadd", "a", "x")], ("smove", "a", "str", "x"), "str"),
}

GENERIC = {"expire", "del"}


def _store_outcome(m, prefix, setup, cmd, dst):
    m.flushall()
    m.set("str", "v", ex=1000)
    m.set("dst", "old", ex=1000)
    for s in setup:
        name = s[0] if s[0] in GENERIC else prefix + s[0]
        m.execute_command(name, *s[1:])
    try:
        reply = m.execute_command(prefix + cmd[0], *cmd[1:])
    except redis.ResponseError as e:
        reply = str(e).split()[0]
    t = m.type(dst)
    if t in ("set", "ebb-value") and (prefix == "" or ebb(m, "type", dst) == "set"):
        content = sorted(m.execute_command(prefix + "smembers", dst))
    elif t in ("zset", "ebb-value"):
        content = m.execute_command(prefix + "zrange", dst, 0, -1, "WITHSCORES")
    else:
        content = m.get(dst) if t == "string" else None
    ttl = m.ttl(dst)
    return reply, bool(m.exists(dst)), ttl if ttl < 0 else "ttl", content, m.ttl("str") > 0


@pytest.mark.parametrize("case", sorted(STORES))
def test_store_commands_behave_as_redis_own(m, case):
    setup, cmd, dst = STORES[case]
    want = _store_outcome(m, "", setup, cmd, dst)
    got = _store_outcome(m, "ebb.", setup, cmd, dst)
    assert got == want


# ---------------------------------------------------------------------------
# Member deadlines through the module.


def test_saddex_limit_is_all_or_nothing(m):
    assert ebb(m, "saddex", "otp", "LIMIT", 3, 300, "c1", "c2") == 2
    # One new member would fit, two do not: nothing is added.
    assert ebb(m, "saddex", "otp", "LIMIT", 3, 300, "c1", "c3", "c4") == -1
    assert sorted(ebb(m, "smembers", "otp")) == ["c1", "c2"]
    # Members already there do not count against the limit.
    assert ebb(m, "saddex", "otp", "LIMIT", 3, 300, "c1", "c2", "c3") == 1
    assert ebb(m, "scard", "otp") == 3
    # Due members free their places.
    assert ebb(m, "saddex", "lim", "LIMIT", 2, 1, "a", "b") == 2
    assert ebb(m, "saddex", "lim", "LIMIT", 2, 100, "c") == -1
    time.sleep(1.05)
    assert ebb(m, "saddex", "lim", "LIMIT", 2, 100, "c", "d") == 2
    assert sorted(ebb(m, "smembers", "lim")) == ["c", "d"]
    # A limit on a missing key creates nothing when refused.
    assert ebb(m, "saddex", "none", "LIMIT", 1, 100, "a", "b") == -1
    assert m.exists("none") == 0


def test_member_ttl_commands_reach_the_key(m):
    ebb(m, "hset", "h", "f1", "v1", "f2", "v2")
    assert ebb(m, "hexpire", "h", 100, "FIELDS", 2, "f1", "nosuch") == [1, -2]
    assert ebb(m, "httl", "h", "FIELDS", 3, "f1", "f2", "nosuch") == [100, -1, -2]
    assert ebb(m, "httl", "nokey", "FIELDS", 1, "f1") == [-2]
    assert ebb(m, "hpersist", "h", "FIELDS", 3, "f1", "f2", "nosuch") == [1, -1, -2]
    # A deadline in the past deletes the field (2), the last field the key.
    assert ebb(m, "hexpire", "h", 0, "FIELDS", 1, "f1") == [2]
    assert ebb(m, "hpexpireat", "h", 1, "FIELDS", 1, "f2") == [2]
    assert m.exists("h") == 0
    # Member TTL commands of any collection; key TTL untouched.
    ebb(m, "zadd", "z", 1, "a", 2, "b")
    m.expire("z", 1000)
    assert ebb(m, "expiremember", "z", "a", 100) == 1
    assert ebb(m, "ttl", "z", "a") == 100
    assert ebb(m, "ttl", "z", "b") == -1
    assert ebb(m, "ttl", "z") == 1000
    assert ebb(m, "persist", "z", "a") == 1
    assert ebb(m, "ttl", "z", "a") == -1 and m.ttl("z") == 1000
    assert ebb(m, "fieldexpire", "z", 50, "a", "nosuch") == [1, -2]
    assert ebb(m, "fieldttl", "z", "a") == 50
    assert ebb(m, "pexpirememberat", "z", "b", int(time.time() * 1000) + 100) == 1
    assert ebb(m, "zrange", "z", 0, -1) == ["a", "b"]
    assert wait_until(lambda: ebb(m, "zrange", "z", 0, -1) == ["a"], 2)
    assert m.ttl("z") > 990


def _mixed(m, n=600):
    """Keys with n members each, every other one due within 50 ms."""
    short = [f"m{i:04d}" for i in range(0, n, 2)]
    long_ = [f"m{i:04d}" for i in range(1, n, 2)]
    ebb(m, "saddex", "s", 1, *short)
    ebb(m, "sadd", "s", *long_)
    ebb(m, "zaddex", "z", "PX", 50, *[x for i, mm in enumerate(short) for x in (i, mm)])
    ebb(m, "zadd", "z", *[x for i, mm in enumerate(long_) for x in (i, mm)])
    ebb(m, "hsetex", "h", "PX", 50, "FIELDS", len(short), *[x for mm in short for x in (mm, "v")])
    ebb(m, "hset", "h", *[x for mm in long_ for x in (mm, "v")])
    return set(short), set(long_)


@pytest.mark.parametrize("paused", [False, True])
def test_scans_never_return_due_members(m, paused):
    # Paused: the timer is kept out of the way and the data stays in place,
    # so the reads must hide due members themselves (on copies).
    short, live = _mixed(m)
    if paused:
        m.execute_command("CLIENT", "PAUSE", 3000, "WRITE")
    try:
        time.sleep(1.05)
        for cmd, step in (("sscan", 1), ("zscan", 2), ("hscan", 2)):
            key = cmd[0]
            seen, cursor, calls = [], "0", 0
            while True:
                cursor, items = ebb(m, cmd, key, cursor, "COUNT", 7)
                seen += items[::step]
                calls += 1
                if cursor == "0":
                    break
            assert set(seen) == live, cmd
            assert calls > 1
        # MATCH filters on top.
        _, items = ebb(m, "sscan", "s", 0, "MATCH", "m000*", "COUNT", 10_000)
        assert sorted(items) == sorted(x for x in live if x.startswith("m000"))
    finally:
        m.execute_command("CLIENT", "UNPAUSE")


@pytest.mark.parametrize("paused", [False, True])
def test_random_picks_with_negative_counts_skip_due_members(m, paused):
    short, live = _mixed(m, 40)
    if paused:
        m.execute_command("CLIENT", "PAUSE", 3000, "WRITE")
    try:
        time.sleep(1.05)
        picks = ebb(m, "srandmember", "s", -200)
        assert len(picks) == 200 and set(picks) <= live
        picks = ebb(m, "zrandmember", "z", -200, "WITHSCORES")
        assert len(picks) == 400 and set(picks[::2]) <= live
        picks = ebb(m, "hrandfield", "h", -200, "WITHVALUES")
        assert len(picks) == 400 and set(picks[::2]) <= live and set(picks[1::2]) == {"v"}
        # Positive counts: distinct, at most the live members.
        assert sorted(ebb(m, "srandmember", "s", 1000)) == sorted(live)
        assert sorted(ebb(m, "zrandmember", "z", 1000)) == sorted(live)
        assert ebb(m, "scard", "s") == ebb(m, "zcard", "z") == ebb(m, "hlen", "h") == len(live)
    finally:
        m.execute_command("CLIENT", "UNPAUSE")


# ---------------------------------------------------------------------------
# Names, protocols, key TTLs.


def test_binary_safe_keys_and_members(mod):
    c = mod.client(protocol=2, decode_responses=False)
    try:
        key = b"k\x00\r\n\xff{x}"
        mem = [b"\x00", b"a\r\nb", b"\xff\xfe", b""]
        assert ebb(c, "zaddex", key, "PX", 600, 1, mem[0]) == 1
        assert ebb(c, "zadd", key, 2, mem[1], 3, mem[2], 4, mem[3]) == 3
        assert ebb(c, "zrange", key, 0, -1) == mem
        assert ebb(c, "zscore", key, mem[1]) == b"2"
        hk = b"h\x00"
        assert ebb(c, "hsetex", hk, "EX", 100, "FIELDS", 2, mem[1], mem[0], mem[3], mem[2]) == 1
        assert ebb(c, "hgetall", hk) == [mem[1], mem[0], mem[3], mem[2]]
        sk = b"\r\n"
        assert ebb(c, "saddex", sk, 100, *mem) == 4
        assert sorted(ebb(c, "smembers", sk)) == sorted(mem)
        assert sorted(c.scan_iter(_type="ebb-value")) == sorted([key, hk, sk])
        # DUMP/RESTORE and a reload keep the bytes.
        c.restore(b"copy\x00", 0, c.dump(key))
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
        assert ebb(c, "zrange", b"copy\x00", 0, -1, "WITHSCORES") == [
            mem[0], b"1", mem[1], b"2", mem[2], b"3", mem[3], b"4"]
        assert ebb(c, "hmget", hk, mem[1], mem[3]) == [mem[0], mem[2]]
        # The timer finds both keys under their binary names (the copy
        # filed by the reload) and removes the due member unread, with its
        # event on the right key.
        c.config_set("notify-keyspace-events", "Ez")
        sub = c.pubsub()
        sub.subscribe("__keyevent@0__:zexpired")
        got = set()
        end = time.time() + 3
        while time.time() < end and len(got) < 2:
            msg = sub.get_message(timeout=0.1)
            if msg and msg["type"] == "message":
                got.add(msg["data"])
        sub.close()
        assert got == {key, b"copy\x00"}
        assert ebb(c, "zrange", key, 0, -1) == mem[1:]
        ebb(c, "zrem", key, *mem[1:])
        assert c.exists(key) == 0
    finally:
        c.close()


def test_resp3_replies_of_maps_doubles_and_sets(mod):
    c = mod.client(protocol=3)
    try:
        ebb(c, "zadd", "z", 1.5, "a", "-inf", "lo", 0.1, "b")
        ebb(c, "hset", "h", "f", "v", "g", "w")
        ebb(c, "sadd", "s", "x", "y")
        assert ebb(c, "zscore", "z", "lo") == float("-inf")
        assert ebb(c, "zscore", "z", "b") == 0.1
        assert ebb(c, "zscore", "z", "nosuch") is None
        assert ebb(c, "zmscore", "z", "a", "nosuch") == [1.5, None]
        assert ebb(c, "hgetall", "h") == {"f": "v", "g": "w"}
        assert sorted(ebb(c, "smembers", "s")) == ["x", "y"]
        raw = Raw(mod.port, resp3=True)
        assert raw.cmd("ebb.smembers", "nosuch") == b"~0\r\n"
        assert raw.cmd("ebb.hgetall", "nosuch") == b"%0\r\n"
        assert raw.cmd("ebb.zscore", "z", "a") == b",1.5\r\n"
        assert raw.cmd("ebb.sismember", "s", "x") == b":1\r\n"
        raw.close()
        assert ebb(c, "zrange", "z", 0, -1, "WITHSCORES") == [["lo", float("-inf")], ["b", 0.1], ["a", 1.5]]
        assert ebb(c, "zpopmax", "z") == ["a", 1.5]  # no count: one flat pair
        assert ebb(c, "zpopmin", "z", 1) == [["lo", float("-inf")]]
        assert ebb(c, "zincrby", "z", 1, "b") == 1.1
        assert ebb(c, "hrandfield", "h", 5, "WITHVALUES") in (
            [["f", "v"], ["g", "w"]], [["g", "w"], ["f", "v"]])
    finally:
        c.close()


def test_a_key_ttl_that_passes_first_and_stale_index_entries(m):
    # The key's own TTL ends before its members' deadlines.
    ebb(m, "zaddex", "k", "PX", 300, 1, "a")
    m.pexpire("k", 50)
    assert wait_until(lambda: m.exists("k") == 0, 2)
    # The name reused without deadlines, before the old deadline.
    ebb(m, "zadd", "k", 2, "b")
    # A module key overwritten by Redis's SET: its index entry stays.
    ebb(m, "saddex", "st", 1, "x")
    m.set("st", "string")
    # An index entry whose key became a native set.
    ebb(m, "saddex", "ns", 1, "x")
    m.delete("ns")
    m.sadd("ns", "native")
    ebb(m, "zaddex", "marker", "PX", 1100, 1, "m")
    # Every old deadline passes; the timer visits stale entries.
    assert wait_until(lambda: m.exists("marker") == 0, 3)
    assert m.ping()
    assert ebb(m, "zrange", "k", 0, -1) == ["b"] and m.ttl("k") == -1
    assert m.get("st") == "string"
    assert m.smembers("ns") == {"native"}
    # A key TTL and a member deadline at about the same time.
    ebb(m, "zaddex", "both", "PX", 100, 1, "a")
    m.pexpire("both", 100)
    assert wait_until(lambda: m.exists("both") == 0, 2)
    assert ebb(m, "zadd", "both", 1, "again") == 1
    time.sleep(0.05)
    assert ebb(m, "zrange", "both", 0, -1) == ["again"]




def test_module_writes_count_as_changes_for_save_points(tmp_path):
    s = start(tmp_path, "--save", "1 1")
    c = s.client(protocol=2)
    try:
        assert c.info("persistence")["rdb_changes_since_last_save"] == 0
        ebb(c, "sadd", "s", "a", "b")
        ebb(c, "zaddex", "z", "EX", 100, 1, "m")
        assert c.info("persistence")["rdb_changes_since_last_save"] >= 2
        # The save point ("1 1") snapshots them.
        assert wait_until(lambda: (tmp_path / "dump.rdb").exists(), 4)
    finally:
        c.close()
        s.stop()


def test_native_writes_fire_save_points(tmp_path):
    s = start(tmp_path, "--save", "1 1")
    c = s.client(protocol=2)
    try:
        c.sadd("s", "a", "b")
        assert c.info("persistence")["rdb_changes_since_last_save"] >= 1
        assert wait_until(lambda: (tmp_path / "dump.rdb").exists(), 4)
    finally:
        c.close()
        s.stop()
