"""Lua scripting as Redis 7.0 does it: EVAL / EVALSHA / EVAL_RO /
EVALSHA_RO and SCRIPT, the conversions between replies and Lua values, the
error texts (with the script's position), the read-only globals, the
`redis`, `bit` and `cjson` libraries, and how scripts meet transactions,
WATCH, blocking clients, keyspace events and the append-only file.

The expected replies are redis-server 7.0.15's, byte for byte; run with
AGAINST_REDIS=1 to check this file against it (tests of ebb's own
commands and of its files are skipped then).
"""

import threading
import time

import pytest
import redis

from conftest import AGAINST_REDIS, ebb_only, EbbServer, Raw, sha, wait_until



@pytest.fixture
def raw(srv):
    c = Raw(srv.port)
    yield c
    c.close()


def where(script, line=1):
    return f" script: {sha(script)}, on @user_script:{line}.\r\n".encode()


# (script, expected reply) for EVAL <script> 0 on an empty database.
CONVERSIONS = [
    ("return 1", b":1\r\n"),
    ("return 1.9", b":1\r\n"),
    ("return -3.7", b":-3\r\n"),
    ("return 3000000000", b":3000000000\r\n"),
    ("return 1e30", b":-9223372036854775808\r\n"),
    ("return 'x'", b"$1\r\nx\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return", b"$-1\r\n"),
    ("return {1,2,3,nil,4}", b"*3\r\n:1\r\n:2\r\n:3\r\n"),
    ("return {1,'a',{2,3},true,false}",
     b"*5\r\n:1\r\n$1\r\na\r\n*2\r\n:2\r\n:3\r\n:1\r\n$-1\r\n"),
    ("return {ok='fine'}", b"+fine\r\n"),
    ("return {err='My Error'}", b"-My Error\r\n"),
    ("return {err='multi\\nline'}", b"-multi line\r\n"),
    ("return {1, 2, err='x'}", b"-x\r\n"),
    ("return {err=3}", b"*0\r\n"),
    ("return redis.error_reply('My Error')", b"-My Error\r\n"),
    ("return redis.error_reply('oops')", b"-ERR oops\r\n"),
    ("return redis.error_reply('-oops')", b"-ERR oops\r\n"),
    ("return redis.error_reply(5)", b"-ERR wrong number or type of arguments\r\n"),
    ("return redis.status_reply('yo')", b"+yo\r\n"),
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {big_number='123'}", b"$3\r\n123\r\n"),
    ("redis.setresp(3) return true", b":1\r\n"),
    ("redis.setresp(3) return false", b":0\r\n"),
    ("return {1, {2, {3, {4}}}}", b"*2\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n*1\r\n:4\r\n"),
    ("local a = {} ; a[1]=1; a[3]=3 ; return a", b"*1\r\n:1\r\n"),
    ("return 'a\\r\\nb'", b"$4\r\na\r\nb\r\n"),
    ("return unpack({1,2})", b":1\r\n"),
    ("return type(redis.call('get','nokey'))", b"$7\r\nboolean\r\n"),
    ("redis.setresp(3) return type(redis.call('get','nokey'))", b"$3\r\nnil\r\n"),
    ("return redis.call('ping')", b"+PONG\r\n"),
    ("return redis.call('type','nokey')['ok']", b"$4\r\nnone\r\n"),
    ("return redis.call('echo', 12)", b"$2\r\n12\r\n"),
    ("return redis.call('echo', 1.5)", b"$3\r\n1.5\r\n"),
    ("return redis.call('echo', 0.1)", b"$19\r\n0.10000000000000001\r\n"),
    ("return redis.call('echo', 1e20)", b"$5\r\n1e+20\r\n"),
    ("return redis.call('echo', 123456789012345678)", b"$22\r\n1.2345678901234568e+17\r\n"),
    ("return redis.call('echo', 1/0)", b"$3\r\ninf\r\n"),
    ("return redis.sha1hex('')", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return redis.sha1hex(12)", b"$40\r\n7b52009b64fd0a2a49e6d8a939753077792b0554\r\n"),
    ("return redis.REDIS_VERSION_NUM > 0", b":1\r\n"),
    ("return redis.replicate_commands()", b":1\r\n"),
    ("return redis.breakpoint()", b"$-1\r\n"),
    ("return redis.set_repl(redis.REPL_ALL)", b"$-1\r\n"),
    ("return redis.log(redis.LOG_WARNING, 'from a script')", b"$-1\r\n"),
    ("return redis.acl_check_cmd('get','x')", b":1\r\n"),
    ("return loadstring('return 1')()", b":1\r\n"),
    ("return table.concat({1,2},',')", b"$3\r\n1,2\r\n"),
    ("return string.format('%5.2f', 3.14159)", b"$5\r\n 3.14\r\n"),
    ("return tonumber('0x10')", b":16\r\n"),
    ("return coroutine.wrap(function() coroutine.yield(redis.call('ping')) end)()", b"+PONG\r\n"),
    ("return cjson.encode({1,2,{a=1}})", b"$13\r\n[1,2,{\"a\":1}]\r\n"),
    ("return cjson.encode({})", b"$2\r\n{}\r\n"),
    ("return cjson.encode(cjson.null)", b"$4\r\nnull\r\n"),
    ("return cjson.encode({1,2,3,nil,5})", b"$14\r\n[1,2,3,null,5]\r\n"),
    ("return cjson.encode(0.1)", b"$3\r\n0.1\r\n"),
    ("return cjson.encode(1e20)", b"$5\r\n1e+20\r\n"),
    ("return cjson.encode(3.14159265358979)", b"$15\r\n3.1415926535898\r\n"),
    ("return cjson.encode('a\"b/\\n')", b"$10\r\n\"a\\\"b\\/\\n\"\r\n"),
    ("return cjson.decode('[1,2,{\"a\":1}]')[3]['a']", b":1\r\n"),
    ("return cjson.decode('{\"a\":[1,2,null,true]}')['a'][3] == cjson.null", b":1\r\n"),
    ("return cjson.encode(cjson.decode('[1.5e300, 12345678901234]'))",
     b"$25\r\n[1.5e+300,12345678901234]\r\n"),
    ("return bit.band(12,10)", b":8\r\n"),
    ("return bit.tohex(255)", b"$8\r\n000000ff\r\n"),
    ("return bit.tohex(-1, -4)", b"$4\r\nFFFF\r\n"),
    ("return bit.lshift(1, 40)", b":256\r\n"),
    ("return bit.tobit(2^32+5)", b":5\r\n"),
    ("math.randomseed(7) return {math.random(100), math.random(100)}", b"*2\r\n:27\r\n:69\r\n"),
    ("local ok, e = pcall(error, 'x'); return e", b"$1\r\nx\r\n"),
    ("return pcall(function() redis.call('incr','s') end)", b":1\r\n"),
    ("return redis.pcall('nosuch')", b"-ERR Unknown Redis command called from script\r\n"),
    ("return redis.pcall()", b"-ERR Please specify at least one argument for this redis lib call\r\n"),
    ("return redis.pcall('set','a',{})",
     b"-ERR Lua redis lib command arguments must be strings or integers\r\n"),
    ("return type(redis.pcall('multi'))", b"$5\r\ntable\r\n"),
]


@pytest.mark.parametrize("script,expected", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_replies_and_conversions(raw, script, expected):
    assert raw.cmd("EVAL", script, "0") == expected


# Scripts that fail: the error text, then " script: <sha>, on
# @user_script:<line>." where Redis adds it.
FAILURES = [
    ("return redis.call('nosuch')", "-ERR Unknown Redis command called from script", 1),
    ("return redis.call()", "-ERR Please specify at least one argument for this redis lib call", 1),
    ("return redis.call('get', {})", "-ERR Lua redis lib command arguments must be strings or integers", 1),
    ("return redis.call('set','a',true)", "-ERR Lua redis lib command arguments must be strings or integers", 1),
    ("return redis.call('get')", "-ERR Wrong number of args calling Redis command from script", 1),
    ("return redis.call('multi')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('eval','return 1','0')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('blpop','nolist','0')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('config','get','maxmemory')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('client','id')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('hello','3')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('save')", "-ERR This Redis command is not allowed from script", 1),
    ("return redis.call('select','100')", "-ERR DB index is out of range", 1),
    ("return redis.call('set','k','v','ex','-5')", "-ERR invalid expire time in 'set' command", 1),
    ("redis.call('set','s','x') return redis.call('lpush','s','x')",
     "-WRONGTYPE Operation against a key holding the wrong kind of value", 1),
    ("redis.call('set','s','x')\n\nlocal function f() redis.call('incr','s') end\n\nf()",
     "-ERR value is not an integer or out of range", 3),
    ("return redis.sha1hex()", "-ERR wrong number of arguments", 1),
    ("return redis.setresp(4)", "-ERR RESP version must be 2 or 3.", 1),
    ("return redis.log(99, 'hello')", "-ERR Invalid debug level.", 1),
    ("return redis.acl_check_cmd('nosuch')", "-ERR Invalid command passed to redis.acl_check_cmd()", 1),
    ("return x", "-ERR user_script:1: Script attempted to access nonexistent global variable 'x'", 1),
    ("return _G.x", "-ERR user_script:1: Script attempted to access nonexistent global variable 'x'", 1),
    ("return type(os)", "-ERR user_script:1: Script attempted to access nonexistent global variable 'os'", 1),
    ("return type(print)", "-ERR user_script:1: Script attempted to access nonexistent global variable 'print'", 1),
    ("return type(debug)", "-ERR user_script:1: Script attempted to access nonexistent global variable 'debug'", 1),
    ("x = 5", "-ERR user_script:1: Attempt to modify a readonly table", 1),
    ("_G.x = 1", "-ERR user_script:1: Attempt to modify a readonly table", 1),
    ("redis.call = nil", "-ERR user_script:1: Attempt to modify a readonly table", 1),
    ("string.foo = 1", "-ERR user_script:1: Attempt to modify a readonly table", 1),
    ("local t = {} ; setmetatable(_G, nil)", "-ERR Attempt to modify a readonly table", 1),
    ("return nil + 1", "-ERR user_script:1: attempt to perform arithmetic on a nil value", 1),
    ("error('boom')", "-ERR user_script:1: boom", 1),
    ("error(42)", "-ERR user_script:1: 42", 1),
    ("error(nil)", "-ERR nil", 1),
    ("error({err='TABLEERR boom'})", "-TABLEERR boom", 1),
    ("local function f() error('deep') end\n\nf()", "-ERR user_script:1: deep", 1),
    ("local t = redis.pcall('incr','nokey'); return t['err']",
     "-ERR user_script:1: attempt to index local 't' (a number value)", 1),
    ("return cjson.decode('bad')",
     "-ERR user_script:1: Expected value but found invalid token at character 1", 1),
    ("return cjson.decode('[1,2')",
     "-ERR user_script:1: Expected comma or array end but found T_END at character 5", 1),
    ("return cjson.decode('{\"a\":}')",
     "-ERR user_script:1: Expected value but found T_OBJ_END at character 6", 1),
    ("return cjson.encode(function() end)",
     "-ERR user_script:1: Cannot serialise function: type not supported", 1),
    ("return cjson.encode({[1]=1,[20]=2})",
     "-ERR user_script:1: Cannot serialise table: excessively sparse array", 1),
    ("return bit.band('x', 1)",
     "-ERR user_script:1: bad argument #1 to 'band' (number expected, got string)", 1),
    ("#!lua\nerror('x')", "-ERR user_script:2: x", 2),
    ("#!lua flags=no-writes\nreturn redis.call('set','a','b')",
     "-ERR Write commands are not allowed from read-only scripts.", 2),
]


@pytest.mark.parametrize("script,text,line", FAILURES, ids=[f[0] for f in FAILURES])
def test_error_texts_name_the_script_and_line(raw, script, text, line):
    assert raw.cmd("EVAL", script, "0") == text.encode() + where(script, line)


def test_pcall_returns_the_failed_commands_error_text(raw):
    raw.cmd("SET", "s", "abc")
    script = "local ok, e = pcall(function() redis.call('incr','s') end) return {tostring(ok), e}"
    assert raw.cmd("EVAL", script, "0") == (
        b"*2\r\n$5\r\nfalse\r\n$43\r\nERR value is not an integer or out of range\r\n"
    )
    # redis.pcall hands the error back as a table; returned, it is the
    # error reply, with no position.
    assert raw.cmd("EVAL", "return redis.pcall('incr','s')", "0") == (
        b"-ERR value is not an integer or out of range\r\n"
    )


ARG_ERRORS = [
    (["EVAL", "return 1", "2", "k"], b"-ERR Number of keys can't be greater than number of args\r\n"),
    (["EVAL", "return 1", "-1"], b"-ERR Number of keys can't be negative\r\n"),
    (["EVAL", "return 1", "x"], b"-ERR value is not an integer or out of range\r\n"),
    (["EVAL", "return 1"], b"-ERR wrong number of arguments for 'eval' command\r\n"),
    (["EVALSHA", "0" * 40, "0"], b"-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    (["EVALSHA", "abc", "0"], b"-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    (["EVAL", "retur 1", "0"],
     b"-ERR Error compiling script (new function): user_script:1: '=' expected near '1'\r\n"),
    (["SCRIPT", "LOAD", "retur"],
     b"-ERR Error compiling script (new function): user_script:1: '=' expected near '<eof>'\r\n"),
    (["EVAL", "#!lua flags=bogus\nreturn 2", "0"], b"-ERR Unexpected flag in script shebang: bogus\r\n"),
    (["EVAL", "#!python\nreturn 2", "0"], b"-ERR Unexpected engine in script shebang: #!python\r\n"),
    (["EVAL", "#!lua name=x\nreturn 2", "0"], b"-ERR Unknown lua shebang option: name=x\r\n"),
    (["EVAL", "#!lua", "0"], b"-ERR Invalid script shebang\r\n"),
    (["SCRIPT", "EXISTS"], b"-ERR wrong number of arguments for 'script|exists' command\r\n"),
    (["SCRIPT", "FLUSH", "bad"], b"-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"),
    (["SCRIPT", "FLUSH", "SYNC", "x"], b"-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"),
    (["SCRIPT", "KILL"], b"-NOTBUSY No scripts in execution right now.\r\n"),
    (["SCRIPT", "NOPE"], b"-ERR unknown subcommand 'NOPE'. Try SCRIPT HELP.\r\n"),
]


@pytest.mark.parametrize("argv,expected", ARG_ERRORS, ids=[" ".join(a[0]) for a in ARG_ERRORS])
def test_argument_errors(raw, argv, expected):
    assert raw.cmd(*argv) == expected


def test_keys_argv_and_the_script_cache(srv):
    r = srv.client()
    assert r.eval("return KEYS[1]..ARGV[1]", 1, "k", "a") == "ka"
    assert r.eval("return #KEYS + #ARGV", 2, "a", "b", "c") == 3
    digest = r.script_load("return 'hi'")
    assert digest == sha("return 'hi'")
    assert r.evalsha(digest, 0) == "hi"
    assert r.evalsha(digest.upper(), 0) == "hi"
    assert r.execute_command("EVALSHA_RO", digest, 0) == "hi"
    # EVAL caches what it ran.
    r.eval("return 7", 0)
    assert r.script_exists(sha("return 7"), digest.upper(), "0" * 40) == [True, True, False]
    assert r.script_flush() is True
    assert r.script_exists(digest) == [False]
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha(digest, 0)
    assert r.execute_command("SCRIPT", "FLUSH", "ASYNC") == "OK"
    help_lines = r.execute_command("SCRIPT", "HELP")
    assert help_lines[0].startswith("SCRIPT <subcommand>")
    assert "LOAD <script>" in help_lines


def test_read_only_forms_refuse_writes(raw):
    assert raw.cmd("EVAL_RO", "return redis.call('get','a')", "0") == b"$-1\r\n"
    script = "return redis.call('set','a','b')"
    assert raw.cmd("EVAL_RO", script, "0") == (
        b"-ERR Write commands are not allowed from read-only scripts." + where(script)
    )
    assert raw.cmd("EXISTS", "a") == b":0\r\n"


def test_resp3_replies_inside_and_out(srv):
    raw = Raw(srv.port, resp3=True)
    try:
        raw.cmd("HSET", "hh", "f", "v")
        raw.cmd("ZADD", "zz", "1.5", "m")
        # The script's protocol decides what it sees; the caller's decides
        # how the result is sent.
        assert raw.cmd("EVAL", "redis.setresp(3); return redis.call('zscore','zz','m')", "0") == b",1.5\r\n"
        assert raw.cmd("EVAL", "return redis.call('zscore','zz','m')", "0") == b"$3\r\n1.5\r\n"
        assert raw.cmd("EVAL", "redis.setresp(3); return redis.call('hgetall','hh')", "0") == (
            b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
        )
        assert raw.cmd("EVAL", "redis.setresp(3) local t = redis.call('hgetall','hh'); return type(t['map'])", "0") == (
            b"$5\r\ntable\r\n"
        )
        assert raw.cmd("EVAL", "redis.setresp(3) return true", "0") == b"#t\r\n"
        assert raw.cmd("EVAL", "return false", "0") == b"_\r\n"
        assert raw.cmd("EVAL", "return {double=3.5}", "0") == b",3.5\r\n"
        assert raw.cmd("EVAL", "redis.setresp(3) return {set={a=true}}", "0") == b"~1\r\n$1\r\na\r\n"
        raw.cmd("SADD", "s1", "a")
        # A set member is true in RESP3, and true goes out as RESP3 true.
        assert raw.cmd("EVAL", "redis.setresp(3) local s = redis.call('smembers','s1') return s['set']['a']", "0") == (
            b"#t\r\n"
        )
    finally:
        raw.close()


def test_random_numbers_follow_redis_sequence(srv):
    # A fresh server: the first draws of math.random are Redis's.
    raw = Raw(srv.port)
    try:
        assert raw.cmd("EVAL", "return {math.random(100), math.random(100), math.random(100)}", "0") == (
            b"*3\r\n:40\r\n:85\r\n:36\r\n"
        )
    finally:
        raw.close()


def test_libraries_and_globals_listed(srv):
    r = srv.client()
    names = r.eval(
        "local t = {} for k,v in pairs(_G) do t[#t+1] = k end table.sort(t) return t", 0
    )
    for n in ["ARGV", "KEYS", "_G", "bit", "cjson", "redis", "math", "string", "table",
              "pcall", "pairs", "loadstring", "tonumber", "unpack", "xpcall"]:
        assert n in names
    for n in ["os", "io", "print", "dofile", "require", "debug", "setfenv", "getfenv"]:
        assert n not in names
    rnames = r.eval("local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t", 0)
    assert {"call", "pcall", "error_reply", "status_reply", "sha1hex", "log", "setresp",
            "set_repl", "replicate_commands", "REPL_ALL", "LOG_WARNING"} <= set(rnames)


def test_select_inside_a_script_is_the_scripts_own(srv):
    r = srv.client()
    r.set("k", "db0")
    assert r.eval("redis.call('select', 1) redis.call('set', 'k', 'db1') return redis.call('get','k')", 0) == "db1"
    # The caller stays in its database.
    assert r.get("k") == "db0"
    r.execute_command("SELECT", 1)
    assert r.get("k") == "db1"


def test_scripts_in_transactions_and_watch(srv):
    r = srv.client()
    p = r.pipeline(transaction=True)
    p.eval("return redis.call('incr', KEYS[1])", 1, "n")
    p.eval("return redis.call('incr', KEYS[1])", 1, "n")
    assert p.execute() == [1, 2]
    # A script's write aborts another client's WATCH.
    w = srv.client()
    with w.pipeline() as pipe:
        pipe.watch("n")
        r.eval("redis.call('set', KEYS[1], 'changed')", 1, "n")
        pipe.multi()
        pipe.set("n", "mine")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("n") == "changed"


def test_a_script_wakes_blocked_clients_when_it_ends(srv):
    r = srv.client()
    got = {}

    def pop():
        got["v"] = srv.client().blpop("q", timeout=5)

    t = threading.Thread(target=pop)
    t.start()
    wait_until(lambda: r.info("clients")["blocked_clients"] == 1)
    # Pushed and trimmed again by the same script: the woken client sees
    # the final state.
    r.eval("redis.call('rpush', 'q', 'a', 'b') redis.call('lpop', 'q')", 0)
    t.join(5)
    assert got["v"] == ("q", "b")


def test_keyspace_events_from_scripts(srv):
    r = srv.client()
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:*")
    p.get_message(timeout=1)
    r.eval("redis.call('set', 'k', 'v') redis.call('expire', 'k', 100)", 0)
    seen = []
    end = time.time() + 3
    while time.time() < end and len(seen) < 2:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            seen.append(m["data"])
    assert seen == ["set", "expire"]
    p.close()


def test_commands_called_by_scripts_are_counted(srv):
    r = srv.client()
    r.config_resetstat()
    r.eval("redis.call('set','a','1') redis.call('set','b','2') return redis.call('get','a')", 0)
    stats = r.info("commandstats")
    assert stats["cmdstat_eval"]["calls"] == 1
    assert stats["cmdstat_set"]["calls"] == 2
    assert stats["cmdstat_get"]["calls"] == 1
    info = r.info("memory")
    assert info["number_of_cached_scripts"] == 1


def test_rate_limiter_script(srv):
    """A sliding-window limiter as rate-limiter libraries ship it."""
    r = srv.client()
    limiter = r.register_script(
        """
        local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
        redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
        if redis.call('ZCARD', key) >= limit then return 0 end
        redis.call('ZADD', key, now, ARGV[4])
        redis.call('PEXPIRE', key, window)
        return 1
        """
    )
    now = int(time.time() * 1000)
    got = [limiter(keys=["rl:u1"], args=[now + i, 1000, 3, f"req{i}"]) for i in range(5)]
    assert got == [1, 1, 1, 0, 0]
    # Later than the window: admitted again.
    assert limiter(keys=["rl:u1"], args=[now + 2000, 1000, 3, "late"]) == 1
    assert 0 < r.pttl("rl:u1") <= 1000


@ebb_only
def test_scripts_use_member_expiry_commands(srv):
    r = srv.client()
    got = r.eval(
        "redis.call('ZADDEX', KEYS[1], 'PX', 100000, 1, 'a') "
        "return {redis.call('ZCARD', KEYS[1]), redis.call('ZPTTL', KEYS[1], 'MEMBERS', 1, 'a')[1] > 0}",
        1,
        "z",
    )
    assert got == [1, 1]


@ebb_only
def test_script_writes_survive_a_restart(tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", "--appendfsync", "always",
                  cwd=str(tmp_path))
    try:
        r = s.client()
        r.eval(
            "redis.call('set', KEYS[1], 'v') redis.call('incrby', KEYS[2], 5) "
            "redis.call('select', 2) redis.call('sadd', 's', 'm')",
            2, "a", "n",
        )
        r.eval("return redis.call('get', 'a')", 0)  # read-only: nothing logged
        s.kill()
        s.start()
        r = s.client()
        assert r.get("a") == "v"
        assert r.get("n") == "5"
        r.execute_command("SELECT", 2)
        assert r.smembers("s") == {"m"}
        with open(tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof", "rb") as f:
            log = f.read()
        assert log.count(b"MULTI") == 1 and log.count(b"EXEC") == 1
    finally:
        s.stop()


def test_every_client_error_leaves_the_server_serving(srv):
    # (redis-server 7.0.15 crashes on error({}) and error(): not sent there.)
    r = srv.client()
    scripts = ["error({})", "error()"] if not AGAINST_REDIS else []
    for script in scripts + ["return {err={}}", "local t = {}; t[1] = t; return t",
                   "return string.rep('x', 10)", "while false do end"]:
        try:
            r.eval(script, 0)
        except (redis.ResponseError, RecursionError):
            pass
    assert r.ping()


def test_client_pause_write_holds_eval_not_eval_ro(srv):
    r = srv.client()
    r.set("k", "v")
    r.execute_command("CLIENT", "PAUSE", 500, "WRITE")
    start = time.time()
    assert r.execute_command("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k") == "v"
    assert time.time() - start < 0.3
    assert r.eval("return redis.call('get', KEYS[1])", 1, "k") == "v"
    assert time.time() - start >= 0.4


# DEBUG PROTOCOL from a script, with the script on RESP2 or RESP3 and the
# client on RESP2 or RESP3: the reply arrives in the weaker of the two.
PROTOCOL_FROM_SCRIPT = [
    ("bignum", b"$37\r\n1234567999999999999999999999999999999\r\n",
     b"(1234567999999999999999999999999999999\r\n"),
    ("double", b"$5\r\n3.141\r\n", b",3.141\r\n"),
    ("map", b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
     b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    ("set", b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    ("verbatim", b"$25\r\nThis is a verbatim\nstring\r\n",
     b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    ("true", b":1\r\n", b"#t\r\n"),
    ("false", b":0\r\n", b"#f\r\n"),
]


@pytest.mark.parametrize("kind,resp2,resp3", PROTOCOL_FROM_SCRIPT)
@pytest.mark.parametrize("script_resp", [2, 3])
@pytest.mark.parametrize("client_resp", [2, 3])
def test_debug_protocol_from_a_script(srv, kind, resp2, resp3, script_resp, client_resp):
    c = Raw(srv.port, resp3=client_resp == 3)
    # DEBUG is refused to scripts unless allowed, as Redis's tests do.
    assert c.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") == b"+OK\r\n"
    want = resp3 if script_resp == 3 and client_resp == 3 else resp2
    if kind == "map" and script_resp == 3:
        # A map or set comes back from a Lua table, in Lua's order of its keys.
        want = (b"*6\r\n:1\r\n:1\r\n:2\r\n:0\r\n:0\r\n:0\r\n" if client_resp == 2
                else b"%3\r\n:1\r\n#t\r\n:2\r\n#f\r\n:0\r\n#f\r\n")
    if kind == "set" and script_resp == 3:
        want = b"*3\r\n:1\r\n:2\r\n:0\r\n" if client_resp == 2 else b"~3\r\n:1\r\n:2\r\n:0\r\n"
    script = f"redis.setresp({script_resp}); return redis.call('debug', 'protocol', '{kind}')"
    assert c.cmd("EVAL", script, 0) == want
    c.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    c.close()


@pytest.mark.parametrize("client_resp", [2, 3])
def test_big_number_returned_by_a_script(srv, client_resp):
    c = Raw(srv.port, resp3=client_resp == 3)
    want = b"$8\r\n123  123\r\n" if client_resp == 2 else b"(123  123\r\n"
    assert c.cmd("EVAL", "return {big_number='123\\r\\n123'}", 0) == want
    c.close()


def test_debug_set_disable_deny_scripts(raw):
    script = "return redis.call('client', 'id') > 0"
    assert raw.cmd("EVAL", script, 0) == (
        b"-ERR This Redis command is not allowed from script script: "
        + sha(script).encode() + b", on @user_script:1.\r\n")
    assert raw.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") == b"+OK\r\n"
    assert raw.cmd("EVAL", script, 0) == b":1\r\n"
    assert raw.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0") == b"+OK\r\n"
    assert raw.cmd("EVAL", script, 0).startswith(b"-ERR This Redis command is not allowed")


def test_debug_object_sees_an_expired_key_a_script_then_deletes(raw):
    assert raw.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
    raw.cmd("SET", "key", "value", "PX", "1")
    time.sleep(0.01)
    assert raw.cmd("DEBUG", "OBJECT", "key").startswith(b"+Value at:")
    assert raw.cmd("EVAL", "return redis.call('EXISTS', 'key')", 0) == b":0\r\n"
    assert raw.cmd("DEBUG", "OBJECT", "key") == b"-ERR no such key\r\n"
    raw.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_declared_write_script_over_maxmemory_and_with_ro(raw):
    raw.cmd("SET", "x", "123")
    assert raw.cmd("CONFIG", "SET", "maxmemory", "1") == b"+OK\r\n"
    try:
        oom = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
        assert raw.cmd("EVAL", "#!lua\nreturn 1", 0) == oom
        assert raw.cmd("EVAL", "#!lua flags=allow-oom\nreturn 1", 0) == b":1\r\n"
        assert raw.cmd("EVAL", "#!lua flags=no-writes\nreturn 1", 0) == b":1\r\n"
        # Without a shebang, only the commands the script runs are checked.
        assert raw.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, "x") == b"$3\r\n123\r\n"
    finally:
        raw.cmd("CONFIG", "SET", "maxmemory", "0")
    assert raw.cmd("EVAL_RO", "#!lua\nreturn 1", 0) == (
        b"-ERR Can not execute a script with write flag using *_ro command.\r\n")
    assert raw.cmd("EVAL_RO", "#!lua flags=no-writes\nreturn 1", 0) == b":1\r\n"


def _stat(raw, section, name):
    info = raw.cmd("INFO", section).decode()
    for line in info.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return None


def test_script_errors_are_counted_once_where_they_happen(raw):
    raw.cmd("CONFIG", "RESETSTAT")
    raw.cmd("CONFIG", "SET", "maxmemory", "1")
    try:
        r = raw.cmd("EVAL", "return redis.call('set','x','y')", 1, "x")
        assert r.startswith(b"-OOM command not allowed")
        assert _stat(raw, "errorstats", "errorstat_OOM") == "count=1"
        assert _stat(raw, "stats", "total_error_replies") == "1"
        assert _stat(raw, "commandstats", "cmdstat_set").startswith("calls=0,")
        assert "rejected_calls=1,failed_calls=0" in _stat(raw, "commandstats", "cmdstat_set")
        assert "rejected_calls=0,failed_calls=1" in _stat(raw, "commandstats", "cmdstat_eval")
        # A pcall that swallows the error: counted once, EVAL did not fail.
        raw.cmd("CONFIG", "RESETSTAT")
        script = "local t = redis.pcall('set','x','y') return t['err']"
        assert raw.cmd("EVAL", script, 1, "x") == (
            b"$55\r\nOOM command not allowed when used memory > 'maxmemory'.\r\n")
        assert _stat(raw, "errorstats", "errorstat_OOM") == "count=1"
        assert "rejected_calls=0,failed_calls=0" in _stat(raw, "commandstats", "cmdstat_eval")
        # Returning the error table: still counted once; EVAL failed.
        raw.cmd("CONFIG", "RESETSTAT")
        assert raw.cmd("EVAL", "return redis.pcall('set','x','y')", 1, "x").startswith(b"-OOM")
        assert _stat(raw, "errorstats", "errorstat_OOM") == "count=1"
        assert _stat(raw, "stats", "total_error_replies") == "1"
        assert "failed_calls=1" in _stat(raw, "commandstats", "cmdstat_eval")
    finally:
        raw.cmd("CONFIG", "SET", "maxmemory", "0")
    # A command's own failure counts for it, once.
    raw.cmd("CONFIG", "RESETSTAT")
    assert raw.cmd("EVAL", "return redis.call('select', 99)", 0).startswith(
        b"-ERR DB index is out of range")
    assert _stat(raw, "errorstats", "errorstat_ERR") == "count=1"
    assert "calls=1," in _stat(raw, "commandstats", "cmdstat_select")
    assert "failed_calls=1" in _stat(raw, "commandstats", "cmdstat_select")
    # An error the script makes itself is counted at its reply.
    raw.cmd("CONFIG", "RESETSTAT")
    assert raw.cmd("EVAL", "return redis.error_reply('MY err')", 0) == b"-MY err\r\n"
    assert _stat(raw, "errorstats", "errorstat_MY") == "count=1"


def test_sort_by_constant_inside_a_script_sorts_a_set(raw):
    members = "a b c d e f g h i l m n o p q r s t u v z aa aaa azz".split()
    raw.cmd("SADD", "myset", *members)
    r = raw.cmd("EVAL", "return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset")
    got = [x for x in r.split(b"\r\n")[2::2]]
    assert got == [m.encode() for m in sorted(members)]


CJSON_SETTINGS = [
    ("return cjson.encode_max_depth()", b":1000\r\n"),
    ("cjson.encode_max_depth(1); local ok, e = pcall(cjson.encode, {{1}}); "
     "cjson.encode_max_depth(1000); return e",
     b"$39\r\nCannot serialise, excessive nesting (2)\r\n"),
    ("cjson.decode_max_depth(1); local ok, e = pcall(cjson.decode, '[[1]]'); "
     "cjson.decode_max_depth(1000); return e",
     b"$56\r\nFound too many nested data structures (2) at character 2\r\n"),
    ("cjson.encode_invalid_numbers(true); local r = cjson.encode({0/0, 1/0, -1/0}); "
     "cjson.encode_invalid_numbers(false); return r", b"$14\r\n[nan,inf,-inf]\r\n"),
    ("cjson.encode_invalid_numbers('null'); local r = cjson.encode({0/0}); "
     "cjson.encode_invalid_numbers(false); return r", b"$6\r\n[null]\r\n"),
    ("return cjson.encode_max_depth('7') + cjson.encode_max_depth(1000)", b":1007\r\n"),
]


@pytest.mark.parametrize("script,want", CJSON_SETTINGS)
def test_cjson_settings(raw, script, want):
    assert raw.cmd("EVAL", script, 0) == want


@pytest.mark.parametrize("script,text", [
    ("return cjson.encode_max_depth(0)",
     "bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)"),
    ("return cjson.encode_max_depth({})",
     "bad argument #1 to 'encode_max_depth' (number expected, got table)"),
    ("return cjson.encode_invalid_numbers('x')",
     "bad argument #1 to 'encode_invalid_numbers' (invalid option 'x')"),
    ("return cjson.encode_invalid_numbers({})",
     "bad argument #1 to 'encode_invalid_numbers' (string expected, got table)"),
])
def test_cjson_setting_errors(raw, script, text):
    assert raw.cmd("EVAL", script, 0) == (
        b"-ERR user_script:1: " + text.encode() + where(script))


HEX = ('local function hex(s) local h = "" for i = 1, #s do '
       'h = h .. string.format("%02x", string.byte(s, i)) end return h end ')

CMSGPACK = [
    ("return hex(cmsgpack.pack(0.1))", b"$18\r\ncb3fb999999999999a\r\n"),
    ("return hex(cmsgpack.pack(-1099511627776))", b"$18\r\nd3ffffff0000000000\r\n"),
    ("return hex(cmsgpack.pack(1, -1, -33, 200, -200, 70000, -70000, 5000000000, 1.5, "
     "'abc', true, false, nil))",
     b"$80\r\n01ffd0dfccc8d1ff38ce00011170d2fffeee90cf000000012a05f200ca3fc00000"
     b"a3616263c3c2c0\r\n"),
    ("return hex(cmsgpack.pack(string.rep('x', 40)))",
     b"$84\r\nd928" + b"78" * 40 + b"\r\n"),
    ("return hex(cmsgpack.pack({1,2,3}, {}, {a=1}, {[2]=1}))", b"$24\r\n930102039081a16101810201\r\n"),
    ("return hex(cmsgpack.pack(0/0, 1/0, -1/0, 2^63, -2^63))",
     b"$66\r\ncbfff8000000000000ca7f800000caff800000ca5f000000d38000000000000000\r\n"),
    ("local t = {} for i=1,20 do t[i]=i end return hex(cmsgpack.pack(t))",
     b"$46\r\ndc00140102030405060708090a0b0c0d0e0f1011121314\r\n"),
    ("local a = {x=nil,y=5} local b = {x=a} a['x'] = b return hex(cmsgpack.pack(a))",
     b"$146\r\n" + b"82a17905a17881a178" * 7
     + b"82a17905a17881a178c0\r\n"),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1,2}))}",
     b"*3\r\n:1\r\n$1\r\na\r\n*2\r\n:1\r\n:2\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", b"*2\r\n:1\r\n:1\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", b"*2\r\n:-1\r\n:3\r\n"),
    ("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", b"*3\r\n:2\r\n:1\r\n:2\r\n"),
    ("return tostring(cmsgpack.unpack(string.char(0xca, 0x3f, 0xc0, 0, 0)))", b"$3\r\n1.5\r\n"),
    ("return {cmsgpack.unpack('')}", b"*0\r\n"),
]


@pytest.mark.parametrize("script,want", CMSGPACK)
def test_cmsgpack(raw, script, want):
    assert raw.cmd("EVAL", HEX + script, 0) == want


@pytest.mark.parametrize("script,text,positioned", [
    ("return cmsgpack.pack()",
     "bad argument #0 to 'pack' (MessagePack pack needs input.)", True),
    ("return cmsgpack.unpack(string.char(0xc1))", "Bad data format in input.", True),
    ("return cmsgpack.unpack(string.char(0xcd, 1))", "Missing bytes in input.", True),
    ("return cmsgpack.unpack_one('abc', 9)", "Start offset 9 greater than input length 3.", True),
    ("return cmsgpack.unpack_one('abc', -1)",
     "Invalid request to unpack with offset of -1 and limit of 3.", True),
    ("return cmsgpack.unpack({})",
     "bad argument #1 to 'unpack' (string expected, got table)", True),
    ("return cmsgpack.unpack_limit('a')",
     "bad argument #2 to 'unpack_limit' (number expected, got no value)", True),
    ("return {cmsgpack.unpack(string.char(0x81, 0xc0, 1))}", "table index is nil", False),
])
def test_cmsgpack_errors(raw, script, text, positioned):
    prefix = b"-ERR user_script:1: " if positioned else b"-ERR "
    assert raw.cmd("EVAL", script, 0) == prefix + text.encode() + where(script)


def test_cmsgpack_table_is_read_only(raw):
    script = "cmsgpack.pack = function() end"
    assert raw.cmd("EVAL", script, 0).startswith(
        b"-ERR user_script:1: Attempt to modify a readonly table")


STRUCT = [
    ("return hex(struct.pack('>bBhHlLTiIi3I16fdxc3sc0', -1, 255, -300, 65000, -5, 7, 9, "
     "-70000, 70000, -2, 3, 1.5, 0.1, 'abcdef', 'zz', 'qq'))",
     "fffffed4fde8fffffffffffffffb00000000000000070000000000000009fffeee9000011170fffffe"
     "000000000000000000000000000000033fc000003fb999999999999a006162637a7a007171"),
    ("return {struct.unpack('bc0', string.char(3) .. 'abcdef')}", ["abc", 5]),
    ("return {struct.unpack('<i2', struct.pack('<i2', -2))}", [-2, 3]),
    ("return hex(struct.pack('!4bi!8bd', 1, 2, 3, 4))",
     "01000000020000000300000000000000" + "0000000000001040"),
    ("return {struct.unpack('i', struct.pack('i', 1) .. 'xyz', 2)}", [0x78000000, 6]),
    ("return struct.size('<i2>i8!4bi')", 16),
    ("return struct.size('!8bd')", 16),
    ("return {struct.unpack('<I4', string.char(255,255,255,255))}", [4294967295, 5]),
    ("return {struct.unpack('<i4', string.char(255,255,255,255))}", [-1, 5]),
]


@pytest.mark.parametrize("script,want", STRUCT)
def test_struct(srv, script, want):
    assert srv.client().eval(HEX + script, 0) == want


@pytest.mark.parametrize("script,text", [
    ("return struct.size('s')", "bad argument #1 to 'size' (option 's' has no fixed size)"),
    ("return struct.size('=i')", "bad argument #1 to 'size' (invalid format option '=')"),
    ("return struct.size('!3i')", "alignment 3 is not a power of 2"),
    ("return struct.size('i33')", "integral size 33 is larger than limit of 32"),
    ("return struct.pack('c5', 'ab')", "bad argument #3 to 'pack' (string too short)"),
    ("return struct.pack('i', 'x')", "bad argument #2 to 'pack' (number expected, got string)"),
    ("return struct.unpack('i', 'ab')", "bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.unpack('i', 'abcd', 0)",
     "bad argument #3 to 'unpack' (offset must be 1 or greater)"),
    ("return struct.unpack('s', 'abc')", "unfinished string in data"),
    ("return struct.unpack('c0', 'abc')", "format 'c0' needs a previous size"),
    ("return struct.size('i99999999999')", "integral size overflow"),
])
def test_struct_errors(raw, script, text):
    assert raw.cmd("EVAL", script, 0) == (
        b"-ERR user_script:1: " + text.encode() + where(script))


def test_monitor_shows_a_scripts_commands_as_lua(srv, raw):
    mon = Raw(srv.port)
    assert mon.cmd("MONITOR") == b"+OK\r\n"
    raw.cmd("SELECT", "3")
    raw.cmd("EVAL", "redis.call('set', KEYS[1], ARGV[1])", 1, "foo", "bar")
    assert mon.read().endswith(b'"SELECT" "3"\r\n')
    first = mon.read()
    assert b'[3 127.0.0.1:' in first and b'"EVAL"' in first
    second = mon.read()
    assert second.endswith(b'[3 lua] "set" "foo" "bar"\r\n')
    mon.close()
    raw.cmd("SELECT", "0")


def test_cmsgpack_packs_and_unpacks_big_tables(raw):
    script = ("local m = {} for i = 1, 100000 do m[tostring(i)] = i end "
              "local a = {} for i = 1, 100000 do a[i] = i end "
              "local d = cmsgpack.unpack(cmsgpack.pack({m = m, a = a, s = string.rep('x', 100000)})) "
              "local n = 0 for _ in pairs(d.m) do n = n + 1 end "
              "return {n, #d.a, d.m['77'], #d.s}")
    assert raw.cmd("EVAL", script, 0) == b"*4\r\n:100000\r\n:100000\r\n:77\r\n:100000\r\n"


def test_deeply_nested_input_is_refused_not_a_crash(raw):
    # Nesting deeper than 1000 levels is refused (it would overflow the
    # stack); 1000 levels decode.
    deep = "return cmsgpack.unpack(string.rep(string.char(0x81, 1), 7990) .. string.char(0xc0))"
    assert raw.cmd("EVAL", deep, 0).startswith(b"-ERR user_script:1: stack overflow")
    ok = ("local t = cmsgpack.unpack(string.rep(string.char(0x91), 999) .. string.char(1)) "
          "local n = 0 while type(t) == 'table' do t = t[1] n = n + 1 end return n")
    assert raw.cmd("EVAL", ok, 0) == b":999\r\n"
    assert raw.cmd("PING") == b"+PONG\r\n"


@ebb_only
def test_cjson_nesting_stops_at_1000_whatever_the_setting(raw):
    # ebb's own limit (Redis's C recursion goes deeper): the settings accept
    # up to 2^31 - 1, but recursion stops at 1000 levels.
    script = ("cjson.decode_max_depth(2147483647) "
              "local ok, e = pcall(cjson.decode, string.rep('[', 5000)) "
              "cjson.decode_max_depth(1000) return e")
    assert b"Found too many nested data structures (1001)" in raw.cmd("EVAL", script, 0)
    script = ("cjson.encode_max_depth(2147483647) local t = {} t[1] = t "
              "local ok, e = pcall(cjson.encode, t) cjson.encode_max_depth(1000) return e")
    assert b"excessive nesting" in raw.cmd("EVAL", script, 0)
    assert raw.cmd("PING") == b"+PONG\r\n"


@ebb_only
def test_scripts_never_reach_scripts_even_with_the_debug_bypass(raw):
    raw.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    try:
        for cmd in ["redis.call('script', 'flush')", "redis.call('eval', 'return 1', 0)"]:
            r = raw.cmd("EVAL", "return " + cmd, 0)
            assert r.startswith(b"-ERR This Redis command is not allowed from script")
    finally:
        raw.cmd("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    assert raw.cmd("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("script, reply", [
    ("return {unpack({1,2,3}, -2, 2147483647)}", "-ERR user_script:1: too many results to unpack"),
    ("return {unpack({1,2,3}, 0, 2147483647)}", "-ERR user_script:1: too many results to unpack"),
    ("return {unpack({1,2,3}, -2147483648, -2)}", "-ERR user_script:1: too many results to unpack"),
    ("local t = {} for i=1,8100 do t[i]=i end return #({unpack(t)})",
     "-ERR user_script:1: too many results to unpack"),
    ("return {unpack({1,2,3}, -1, -2)}", "*0"),
    ("return {unpack({1,2,3}, '2', 3.7)}", "*2\r\n:2\r\n:3"),
    ("return {unpack()}", "-ERR user_script:1: bad argument #1 to 'unpack' (table expected, got no value)"),
    ("return {unpack({1,2,3}, 'x')}", "-ERR user_script:1: bad argument #2 to 'unpack' (number expected, got string)"),
    ("return {unpack({1,2,3}, 1, {})}", "-ERR user_script:1: bad argument #3 to 'unpack' (number expected, got table)"),
    ("local t = {} for i=1,7990 do t[i]=i end return #({unpack(t)})", ":7990"),
])
def test_unpack_refuses_ranges_it_cannot_hold(raw, script, reply):
    """Lua 5.1's unpack overflowed on extreme bounds (and could crash the
    server); ranges too long for the stack are refused, as in Redis."""
    got = raw.cmd("EVAL", script, 0)
    if reply.startswith("-"):
        assert got.startswith(reply.encode())
        assert got.endswith(where(script))
    else:
        assert got == reply.encode() + b"\r\n"
    assert raw.cmd("PING") == b"+PONG\r\n"


def test_a_command_with_thousands_of_arguments_and_its_long_reply(raw):
    # 7,999 arguments fill most of the Lua stack the call starts with;
    # the reply still has room (Redis's own scripting test).
    script = ("local a = {} for i = 1, 7999 do a[i] = i end "
              "return redis.call('rpush', 'big', unpack(a))")
    assert raw.cmd("EVAL", script, "0") == b":7999\r\n"
    script = "local t = redis.call('lrange', 'big', 0, -1) return {#t, t[1], t[7999]}"
    assert raw.cmd("EVAL", script, "0") == b"*3\r\n:7999\r\n$1\r\n1\r\n$4\r\n7999\r\n"
    # Numbers go to commands as Redis formats them (17 digits).
    assert raw.cmd("EVAL", "redis.call('set', 'n', 0.1) return redis.call('get', 'n')", "0") == (
        b"$19\r\n0.10000000000000001\r\n")


def test_many_scripts_keep_the_lua_state_small(r):
    # Redis's scripting test: 10,000 calls leave used_memory_lua under
    # 100 kB (a collection starts at 1.5 times what the last one left).
    r.set("x", 0)
    for _ in range(5):
        pipe = r.pipeline(transaction=False)
        for _ in range(2000):
            pipe.eval("return redis.call('incr', KEYS[1])", 1, "x")
        pipe.execute()
        assert r.info("memory")["used_memory_lua"] < 100 * 1024
    assert r.get("x") == "10000"


@pytest.mark.parametrize("enabled", [False, True])
def test_lua_enable_deprecated_api(tmp_path, enabled):
    # A start-time option: getfenv, setfenv and newproxy exist only with it.
    args = ["--dir", str(tmp_path)] + (["--lua-enable-deprecated-api", "yes"] if enabled else [])
    s = EbbServer(*args)
    try:
        c = s.client()
        for name, script in [
            ("setfenv", "local f = function() return 1 end setfenv(f, {}) return 0"),
            ("getfenv", "local f = function() return 1 end getfenv(f) return 0"),
            ("newproxy", "getmetatable(newproxy(true)).__gc = function() return 1 end return 0"),
        ]:
            if enabled:
                assert c.eval(script, 0) == 0
            else:
                with pytest.raises(redis.ResponseError,
                                   match=f"nonexistent global variable '{name}'"):
                    c.eval(script, 0)
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            c.config_set("lua-enable-deprecated-api", "yes")
    finally:
        s.stop()


def test_precompiled_chunks_are_never_loaded(raw):
    """Lua bytecode can break out of the sandbox: Redis's Lua reads every
    chunk as text, so a script, a library or a chunk a script loads that
    starts as bytecode is refused with the text parser's error."""
    dumped = raw.cmd("EVAL", "return string.dump(function() return 42 end)", "0")
    bc = dumped.split(b"\r\n", 1)[1][:-2]
    assert bc.startswith(b"\x1bLua")
    refused = b"-ERR Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'\r\n"
    assert raw.cmd("EVAL", bc, "0") == refused
    assert raw.cmd("SCRIPT", "LOAD", bc) == refused
    assert raw.cmd("EVAL", b"\x1bLua", "0") == refused
    assert raw.cmd("FUNCTION", "LOAD", b"#!lua name=bc\n\x1bLua") == (
        b"-ERR Error compiling function: user_function:2: unexpected symbol near 'char(27)'\r\n")
    got = raw.cmd("EVAL", "local f, e = loadstring(string.dump(function() return 42 end)) "
                  "return {tostring(f), e}", "0")
    assert got.startswith(b"*2\r\n$3\r\nnil\r\n") and got.endswith(b"]:1: unexpected symbol near 'char(27)'\r\n")
    got = raw.cmd("EVAL", "local bc, done = string.dump(function() return 42 end), false "
                  "local f, e = load(function() if done then return nil end done = true return bc end) "
                  "return {tostring(f), e}", "0")
    assert got == b"*2\r\n$3\r\nnil\r\n$43\r\n(load):1: unexpected symbol near 'char(27)'\r\n"
