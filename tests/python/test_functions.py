"""Redis 7.0 functions: FUNCTION LOAD / DELETE / LIST / FLUSH / DUMP /
RESTORE / STATS / KILL / HELP and FCALL / FCALL_RO. Covers the library
shebang and its errors, redis.register_function (positional and named
arguments, flags), the environment a library is loaded in and the one its
functions run in, the error texts (with the function's name and line),
read-only and out-of-memory rules, busy functions, transactions, and the
libraries surviving a reload, the append-only file and a snapshot.

The expected replies are redis-server 7.0.15's, byte for byte; run with
AGAINST_REDIS=1 to check this file against it (tests of ebb's own files
are skipped then).
"""

import re
import time

import pytest
import redis

from conftest import AGAINST_REDIS, ebb_only, ebb_or_redis, EbbServer, Raw, raw_cmd


@pytest.fixture
def raw(srv):
    c = Raw(srv.port)
    yield c
    c.close()


@pytest.fixture(scope="module")
def shared_srv(tmp_path_factory):
    """One server for the long tables of cases (a fresh server for each
    case would make the file slow)."""
    s = ebb_or_redis(AGAINST_REDIS, tmp_path_factory.mktemp("functions"))
    yield s
    s.stop()


@pytest.fixture
def table(shared_srv):
    """A connection to the shared server, emptied of libraries and keys."""
    c = Raw(shared_srv.port)
    assert c.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert c.cmd("FLUSHALL") == b"+OK\r\n"
    yield c
    c.close()


def lib(name, body):
    """A library's code: the shebang line, then `body`."""
    return f"#!lua name={name}\n{body}"


def reg(fname, body="return 1"):
    """A one-line positional registration."""
    return f"redis.register_function('{fname}', function(keys, args) {body} end)"


def bulk(s):
    b = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(b), b)


def where(fname, line):
    return f" script: {fname}, on @user_function:{line}.\r\n".encode()


def stats(raw):
    return raw.cmd("FUNCTION", "STATS")


def stats_of(libs, funcs):
    return (b"*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n"
            b"*4\r\n$15\r\nlibraries_count\r\n:%d\r\n$15\r\nfunctions_count\r\n:%d\r\n"
            % (libs, funcs))


def payload_of(raw):
    """FUNCTION DUMP's payload, without the bulk framing."""
    reply = raw.cmd("FUNCTION", "DUMP")
    assert reply.startswith(b"$")
    return reply[reply.index(b"\r\n") + 2:-2]


BUSY_FUNCTION = (b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL "
                 b"or SHUTDOWN NOSAVE.\r\n")
BUSY_SCRIPT = (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL "
               b"or SHUTDOWN NOSAVE.\r\n")
UNKILLABLE = (b"-UNKILLABLE Sorry the script already executed write commands "
              b"against the dataset. You can either wait the script termination "
              b"or kill the server in a hard way using the SHUTDOWN NOSAVE "
              b"command.\r\n")
NOTBUSY = b"-NOTBUSY No scripts in execution right now.\r\n"
OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
NAME_RULE = (b"Library names can only contain letters, numbers, or underscores(_) "
             b"and must be at least one character long")


# ---------------------------------------------------------------- FUNCTION LOAD

def test_load_returns_the_library_name_and_fcall_runs_it(raw):
    code = lib("lib1", "redis.register_function('f1', function(keys, args) return {keys, args} end)")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$4\r\nlib1\r\n"
    # Keys and arguments are the callback's two parameters.
    assert raw.cmd("FCALL", "f1", "2", "k1", "k2", "a1") == (
        b"*2\r\n*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n*1\r\n$2\r\na1\r\n")
    assert raw.cmd("FCALL", "f1", "0") == b"*2\r\n*0\r\n*0\r\n"
    # Function names are case-insensitive when called.
    assert raw.cmd("FCALL", "F1", "1", "a", "b") == (
        b"*2\r\n*1\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n")


def test_load_replace(raw):
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return 1"))) == b"$4\r\nlib1\r\n"
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return 2"))) == (
        b"-ERR Library 'lib1' already exists\r\n")
    assert raw.cmd("FCALL", "f1", "0") == b":1\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "REPLACE", lib("lib1", reg("f1", "return 2"))) == b"$4\r\nlib1\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b":2\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "replace", lib("lib1", reg("f1", "return 3"))) == b"$4\r\nlib1\r\n"
    # REPLACE may be given more than once.
    assert raw.cmd("FUNCTION", "LOAD", "REPLACE", "REPLACE", lib("lib1", reg("f1", "return 4"))) == (
        b"$4\r\nlib1\r\n")
    assert raw.cmd("FCALL", "f1", "0") == b":4\r\n"
    # A replacement may drop functions and add others.
    assert raw.cmd("FUNCTION", "LOAD", "REPLACE", lib("lib1", reg("g1", "return 'g'"))) == b"$4\r\nlib1\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b"-ERR Function not found\r\n"
    assert raw.cmd("FCALL", "g1", "0") == b"$1\r\ng\r\n"
    assert stats(raw) == stats_of(1, 1)


def test_a_failed_replace_keeps_the_old_library(raw):
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return 'old'"))) == b"$4\r\nlib1\r\n"
    assert raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("f2"))) == b"$4\r\nlib2\r\n"
    failures = [
        (lib("lib1", reg("f1", "return 'new'") + " nosuch()"),
         b"-ERR Error registering functions: ERR user_function:2: Script attempted to "
         b"access nonexistent global variable 'nosuch'\r\n"),
        (lib("lib1", "return 1"), b"-ERR No functions registered\r\n"),
        (lib("lib1", "syntax error"),
         b"-ERR Error compiling function: user_function:2: '=' expected near 'error'\r\n"),
        (lib("lib1", reg("f1", "return 'new'") + "\n" + reg("f2")), b"-ERR Function f2 already exists\r\n"),
    ]
    for code, expected in failures:
        assert raw.cmd("FUNCTION", "LOAD", "REPLACE", code) == expected
        assert raw.cmd("FCALL", "f1", "0") == b"$3\r\nold\r\n"
        assert raw.cmd("FCALL", "f2", "0") == b":1\r\n"
        assert stats(raw) == stats_of(2, 2)
    assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "lib1") == (
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$4\r\nlib1\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
        b"$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$-1\r\n"
        b"$5\r\nflags\r\n*0\r\n")


def test_function_name_collisions(raw):
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1"))) == b"$4\r\nlib1\r\n"
    # Across libraries, function names collide whatever their case ...
    assert raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("f1"))) == b"-ERR Function f1 already exists\r\n"
    assert raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("g") + " " + reg("F1"))) == (
        b"-ERR Function F1 already exists\r\n")
    # ... and in one library too.
    assert raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("g") + "\n" + reg("g"))) == (
        b"-ERR Error registering functions: ERR Function already exists in the library\r\n")
    # Library names are case-sensitive.
    assert raw.cmd("FUNCTION", "LOAD", lib("LIB1", reg("h"))) == b"$4\r\nLIB1\r\n"
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("h2"))) == b"-ERR Library 'lib1' already exists\r\n"
    assert stats(raw) == stats_of(2, 2)


# (FUNCTION LOAD arguments, error) on an empty server.
LOAD_ERRORS = [
    (["FOO", lib("x", reg("f"))], b"-ERR Unknown option given: FOO\r\n"),
    (["FOO", "REPLACE", lib("x", reg("f"))], b"-ERR Unknown option given: FOO\r\n"),
    # The code is taken for an option when something follows it (and the
    # error text has its newline turned into a space).
    ([lib("x", reg("f")), "extra"],
     b"-ERR Unknown option given: #!lua name=x " + reg("f").encode() + b"\r\n"),
    ([], b"-ERR wrong number of arguments for 'function|load' command\r\n"),
    ([lib("bad-name", reg("f"))], b"-ERR " + NAME_RULE + b"\r\n"),
    ([lib("", reg("f"))], b"-ERR " + NAME_RULE + b"\r\n"),
    (["#!foo name=x\n" + reg("f")], b"-ERR Engine 'foo' not found\r\n"),
    (["#! name=x\n" + reg("f")], b"-ERR Engine '' not found\r\n"),
    ([reg("f")], b"-ERR Missing library metadata\r\n"),
    (["  #!lua name=x\n" + reg("f")], b"-ERR Missing library metadata\r\n"),
    (["#!lua name=x"], b"-ERR Invalid library metadata\r\n"),
    (["#!"], b"-ERR Invalid library metadata\r\n"),
    (["#!lua name=\"x\n" + reg("f")], b"-ERR Invalid library metadata\r\n"),
    (["#!lua\n" + reg("f")], b"-ERR Library name was not given\r\n"),
    (["#!\n" + reg("f")], b"-ERR Library name was not given\r\n"),
    (["#!lua name=a name=b\n" + reg("f")],
     b"-ERR Invalid metadata value, name argument was given multiple times\r\n"),
    (["#!lua name=a foo=bar\n" + reg("f")], b"-ERR Invalid metadata value given: foo=bar\r\n"),
    ([lib("x", "retur 1")], b"-ERR Error compiling function: user_function:2: '=' expected near '1'\r\n"),
    ([lib("x", "return 1")], b"-ERR No functions registered\r\n"),
    ([lib("x", "")], b"-ERR No functions registered\r\n"),
    ([lib("x", "redis.register_function('bad-name', function() end)")],
     b"-ERR Error registering functions: ERR " + NAME_RULE + b"\r\n"),
    ([lib("x", "redis.register_function('', function() end)")],
     b"-ERR Error registering functions: ERR " + NAME_RULE + b"\r\n"),
    # Registration with positional arguments.
    ([lib("x", "redis.register_function()")],
     b"-ERR Error registering functions: ERR wrong number of arguments to redis.register_function\r\n"),
    ([lib("x", "redis.register_function('a', function() end, 'c')")],
     b"-ERR Error registering functions: ERR wrong number of arguments to redis.register_function\r\n"),
    ([lib("x", "redis.register_function({}, function() end)")],
     b"-ERR Error registering functions: ERR first argument to redis.register_function must be a string\r\n"),
    ([lib("x", "redis.register_function(nil, function() end)")],
     b"-ERR Error registering functions: ERR first argument to redis.register_function must be a string\r\n"),
    ([lib("x", "redis.register_function('a', 'b')")],
     b"-ERR Error registering functions: ERR second argument to redis.register_function "
     b"must be a function\r\n"),
    ([lib("x", "redis.register_function('a')")],
     b"-ERR Error registering functions: ERR calling redis.register_function with a single argument is "
     b"only applicable to Lua table (representing named arguments).\r\n"),
    # Registration with named arguments.
    ([lib("x", "redis.register_function{function_name={}, callback=function() end}")],
     b"-ERR Error registering functions: ERR function_name argument given to redis.register_function "
     b"must be a string\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback='x'}")],
     b"-ERR Error registering functions: ERR callback argument given to redis.register_function "
     b"must be a function\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback=function() end, description={}}")],
     b"-ERR Error registering functions: ERR description argument given to redis.register_function "
     b"must be a string\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback=function() end, foo='x'}")],
     b"-ERR Error registering functions: ERR unknown argument given to redis.register_function\r\n"),
    ([lib("x", "redis.register_function{[1]='a', callback=function() end}")],
     b"-ERR Error registering functions: ERR unknown argument given to redis.register_function\r\n"),
    ([lib("x", "redis.register_function{callback=function() end}")],
     b"-ERR Error registering functions: ERR redis.register_function must get a function name argument\r\n"),
    ([lib("x", "redis.register_function{}")],
     b"-ERR Error registering functions: ERR redis.register_function must get a function name argument\r\n"),
    ([lib("x", "redis.register_function{function_name='a'}")],
     b"-ERR Error registering functions: ERR redis.register_function must get a callback argument\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback=function() end, flags='no-writes'}")],
     b"-ERR Error registering functions: ERR flags argument to redis.register_function must be a table "
     b"representing function flags\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback=function() end, flags={'bad'}}")],
     b"-ERR Error registering functions: ERR unknown flag given\r\n"),
    ([lib("x", "redis.register_function{function_name='a', callback=function() end, flags={{}}}")],
     b"-ERR Error registering functions: ERR unknown flag given\r\n"),
    # At load time only `redis` (register_function, log, versions) is
    # reachable, and nothing may be assigned.
    ([lib("x", "return math.random()")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'math'\r\n"),
    ([lib("x", "return redis.call('ping')")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'call'\r\n"),
    ([lib("x", "redis.setresp(3)")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'setresp'\r\n"),
    ([lib("x", "return redis.set_repl(redis.REPL_NONE)")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'set_repl'\r\n"),
    ([lib("x", "local mt = getmetatable(_G)")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'getmetatable'\r\n"),
    ([lib("x", "error('boom')")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'error'\r\n"),
    ([lib("x", "return ARGV")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'ARGV'\r\n"),
    ([lib("x", "redis.math.random()")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable 'math'\r\n"),
    ([lib("x", "_G.x = 1")],
     b"-ERR Error registering functions: ERR user_function:2: Script attempted to access "
     b"nonexistent global variable '_G'\r\n"),
    ([lib("x", "x = 1")],
     b"-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n"),
    ([lib("x", "redis.x = 1")],
     b"-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n"),
    ([lib("x", "\n\nlocal r = redis; r.register_function = nil")],
     b"-ERR Error registering functions: ERR user_function:4: Attempt to modify a readonly table\r\n"),
]


@pytest.mark.parametrize("args,expected", LOAD_ERRORS,
                         ids=[repr(" ".join(a))[:60] for a, _ in LOAD_ERRORS])
def test_load_errors(table, args, expected):
    assert table.cmd("FUNCTION", "LOAD", *args) == expected
    assert stats(table) == stats_of(0, 0)


def test_load_times_out_after_half_a_second(raw):
    start = time.time()
    assert raw.cmd("FUNCTION", "LOAD", lib("x", "while true do end")) == (
        b"-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n")
    assert time.time() - start < 5
    assert raw.cmd("PING") == b"+PONG\r\n"


def test_metadata_forms_accepted(raw):
    # Quoted names are unquoted; `name=` and the engine are case-insensitive;
    # spaces and a CR before the newline are fine.
    assert raw.cmd("FUNCTION", "LOAD", '#!lua name="foo"\n' + reg("f1")) == b"$3\r\nfoo\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "#!lua name='bar'\n" + reg("f2")) == b"$3\r\nbar\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "#!lua NAME=up\n" + reg("f3")) == b"$2\r\nup\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "#!LUA name=up2\n" + reg("f4")) == b"$3\r\nup2\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "#!lua  name=sp  \n" + reg("f5")) == b"$2\r\nsp\r\n"
    code = "#!lua name=crlf\r\n" + reg("f6")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$4\r\ncrlf\r\n"
    assert raw.cmd("FCALL", "f6", "0") == b":1\r\n"
    assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "crlf", "WITHCODE").endswith(
        b"$12\r\nlibrary_code\r\n" + bulk(code))
    assert stats(raw) == stats_of(6, 6)


def test_numbers_are_taken_as_names_and_descriptions(raw):
    code = lib("nums", "redis.register_function{function_name=5, callback=function() return 'five' end, "
                       "description=12}")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$4\r\nnums\r\n"
    assert raw.cmd("FCALL", "5", "0") == b"$4\r\nfive\r\n"
    assert raw.cmd("FUNCTION", "LIST") == (
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$4\r\nnums\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
        b"$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$1\r\n5\r\n$11\r\ndescription\r\n$2\r\n12\r\n"
        b"$5\r\nflags\r\n*0\r\n")


def test_library_code_is_shared_by_its_functions(srv):
    r = srv.client()
    r.function_load(lib("shared", "local function add1(a) return a + 1 end\n"
                                  "local count = 0\n"
                                  + reg("f1", "return add1(1)") + "\n"
                                  + reg("f2", "return add1(2)") + "\n"
                                  + reg("ping", "return {redis.call('ping'), add1(0)}") + "\n"
                                  + reg("log", "return redis.log(redis.LOG_WARNING, 'from a function')")))
    assert r.fcall("f1", 0) == 2
    assert r.fcall("f2", 0) == 3
    assert r.fcall("ping", 0) == ["PONG", 1]
    assert r.fcall("log", 0) is None


def test_redis_version_at_load_and_at_run_time(raw):
    code = lib("ver", "local v, n = redis.REDIS_VERSION, redis.REDIS_VERSION_NUM\n"
                      "local lib = redis\n"
                      "redis.log(redis.LOG_NOTICE, 'loading')\n"
                      + reg("at_load", "return {v, n}") + "\n"
                      + reg("at_run", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM, "
                                      "lib.REDIS_VERSION, lib.REDIS_VERSION_NUM}") + "\n"
                      + reg("levels", "return {lib.LOG_DEBUG, lib.LOG_VERBOSE, lib.LOG_NOTICE, "
                                      "lib.LOG_WARNING}"))
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$3\r\nver\r\n"
    assert raw.cmd("FCALL", "at_load", "0") == b"*2\r\n$6\r\n7.0.15\r\n:458767\r\n"
    assert raw.cmd("FCALL", "at_run", "0") == (
        b"*4\r\n$6\r\n7.0.15\r\n:458767\r\n$6\r\n7.0.15\r\n:458767\r\n")
    assert raw.cmd("FCALL", "levels", "0") == b"*4\r\n:0\r\n:1\r\n:2\r\n:3\r\n"


# ------------------------------------------------------------- FCALL / FCALL_RO

FCALL_ERRORS = [
    (["FCALL", "nope", "0"], b"-ERR Function not found\r\n"),
    (["FCALL", "f", "x"], b"-ERR Bad number of keys provided\r\n"),
    (["FCALL", "f", "1.5"], b"-ERR Bad number of keys provided\r\n"),
    (["FCALL", "f", "1"], b"-ERR Number of keys can't be greater than number of args\r\n"),
    (["FCALL", "f", "3", "a", "b"], b"-ERR Number of keys can't be greater than number of args\r\n"),
    (["FCALL", "f", "-1"], b"-ERR Number of keys can't be negative\r\n"),
    (["FCALL", "f"], b"-ERR wrong number of arguments for 'fcall' command\r\n"),
    (["FCALL"], b"-ERR wrong number of arguments for 'fcall' command\r\n"),
    (["FCALL_RO", "nope", "0"], b"-ERR Function not found\r\n"),
    (["FCALL_RO", "f", "x"], b"-ERR Bad number of keys provided\r\n"),
    (["FCALL_RO", "f"], b"-ERR wrong number of arguments for 'fcall_ro' command\r\n"),
    (["FCALL_RO", "f", "0"], b"-ERR Can not execute a script with write flag using *_ro command.\r\n"),
]


@pytest.mark.parametrize("argv,expected", FCALL_ERRORS, ids=[" ".join(a) for a, _ in FCALL_ERRORS])
def test_fcall_argument_errors(table, argv, expected):
    assert table.cmd("FUNCTION", "LOAD", lib("l", reg("f"))) == b"$1\r\nl\r\n"
    assert table.cmd(*argv) == expected


# One function a line (line 1 is the shebang, line 2 `local lib = redis`):
# (name, body, error with {line} for the function's line).
RUNTIME_ERRORS = [
    ("boom", "error('boom')", "-ERR user_function:{line}: boom"),
    ("errnum", "error(42)", "-ERR user_function:{line}: 42"),
    ("nilidx", "local t = nil; return t.x",
     "-ERR user_function:{line}: attempt to index local 't' (a nil value)"),
    ("errtab", "error({err='CUSTOM thing'})", "-CUSTOM thing"),
    ("incr", "return redis.call('incr', keys[1])", "-ERR value is not an integer or out of range"),
    ("nocmd", "return redis.call('nosuch')", "-ERR Unknown Redis command called from script"),
    ("badexp", "return redis.call('set', 'k', 'v', 'ex', '-1')",
     "-ERR invalid expire time in 'set' command"),
    ("nested", "return redis.call('fcall', 'boom', 0)", "-ERR This Redis command is not allowed from script"),
    ("evalin", "return redis.call('eval', 'return 1', 0)",
     "-ERR This Redis command is not allowed from script"),
    ("fn", "return redis.call('function', 'list')", "-ERR This Redis command is not allowed from script"),
    ("reg", "redis.register_function('z', function() end)",
     "-ERR user_function:{line}: attempt to call field 'register_function' (a nil value)"),
    ("reg2", "lib.register_function('z', function() end)",
     "-ERR redis.register_function can only be called on FUNCTION LOAD command"),
    ("mod", "lib.foo = 1", "-ERR user_function:{line}: Attempt to modify a readonly table"),
    ("glob", "x = 1", "-ERR user_function:{line}: Attempt to modify a readonly table"),
    ("gmod", "_G.x = 1", "-ERR user_function:{line}: Attempt to modify a readonly table"),
    ("keysg", "return KEYS",
     "-ERR user_function:{line}: Script attempted to access nonexistent global variable 'KEYS'"),
    ("argvg", "return ARGV",
     "-ERR user_function:{line}: Script attempted to access nonexistent global variable 'ARGV'"),
    ("os", "return os.time()",
     "-ERR user_function:{line}: Script attempted to access nonexistent global variable 'os'"),
    ("Mixed", "error('x')", "-ERR user_function:{line}: x"),
]
RT_LIB = lib("rt", "local lib = redis\n" + "\n".join(reg(n, b) for n, b, _ in RUNTIME_ERRORS))


@pytest.mark.parametrize("n", range(len(RUNTIME_ERRORS)), ids=[e[0] for e in RUNTIME_ERRORS])
def test_runtime_errors_name_the_function_and_line(table, n):
    name, _, text = RUNTIME_ERRORS[n]
    line = n + 3
    assert table.cmd("FUNCTION", "LOAD", RT_LIB) == b"$2\r\nrt\r\n"
    table.cmd("SET", "s", "abc")
    # Called by another case: the error names the function as registered.
    reply = table.cmd("FCALL", name.upper(), "1", "s")
    assert reply == text.format(line=line).encode() + where(name, line)


def test_runtime_error_lines_inside_a_function(raw):
    code = lib("deep", "\n\nredis.register_function('f', function(keys, args)\n"
                       "  local x = 1\n"
                       "  error('deep')\n"
                       "end)")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$4\r\ndeep\r\n"
    assert raw.cmd("FCALL", "f", "0") == b"-ERR user_function:6: deep" + where("f", 6)


def test_errors_that_are_not_raised(raw):
    code = lib("p", reg("pincr", "return redis.pcall('incr', keys[1])") + "\n"
                    + reg("caught", "local ok, e = pcall(function() redis.call('incr', keys[1]) end) "
                                    "return {tostring(ok), e}") + "\n"
                    + reg("er", "return redis.error_reply('MY bad')"))
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$1\r\np\r\n"
    raw.cmd("SET", "s", "abc")
    assert raw.cmd("FCALL", "pincr", "1", "s") == b"-ERR value is not an integer or out of range\r\n"
    assert raw.cmd("FCALL", "caught", "1", "s") == (
        b"*2\r\n$5\r\nfalse\r\n$43\r\nERR value is not an integer or out of range\r\n")
    assert raw.cmd("FCALL", "er", "0") == b"-MY bad\r\n"


def test_a_function_cannot_change_the_global_environment(raw):
    code = lib("trick", "redis.register_function('f1', function()\n"
                        "  local mt = getmetatable(_G)\n"
                        "  local original_globals = mt.__index\n"
                        "  original_globals['redis'] = function() return 1 end\n"
                        "end)\n"
                        + reg("f2", "return redis.call('ping')"))
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$5\r\ntrick\r\n"
    reply = raw.cmd("FCALL", "f1", "0")
    assert reply.startswith(b"-ERR user_function:5: ") and reply.endswith(where("f1", 5))
    assert raw.cmd("FCALL", "f2", "0") == b"+PONG\r\n"


CONVERSIONS = [
    ("return 42", b":42\r\n"),
    ("return 3.99", b":3\r\n"),
    ("return 'x'", b"$1\r\nx\r\n"),
    ("return {1, 'two', {3}}", b"*3\r\n:1\r\n$3\r\ntwo\r\n*1\r\n:3\r\n"),
    ("return {true, false}", b"*2\r\n:1\r\n$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return redis.status_reply('FINE')", b"+FINE\r\n"),
    ("return {ok='good'}", b"+good\r\n"),
    ("return {err='OOPS bad'}", b"-OOPS bad\r\n"),
    ("return redis.error_reply('oops')", b"-ERR oops\r\n"),
    ("return redis.sha1hex('')", b"$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"),
    ("return math.floor(2.5)", b":2\r\n"),
    ("return type(getmetatable('x'))", b"$5\r\ntable\r\n"),
    ("return type(_G)", b"$5\r\ntable\r\n"),
    ("return cjson.encode({1})", b"$3\r\n[1]\r\n"),
    ("return type(redis.call('get', 'nokey'))", b"$7\r\nboolean\r\n"),
    ("redis.setresp(3) return type(redis.call('get', 'nokey'))", b"$3\r\nnil\r\n"),
    ("redis.setresp(3) return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("redis.setresp(3) return {double=1.5}", b"$3\r\n1.5\r\n"),
    ("redis.setresp(3) return redis.call('hgetall', 'h')", b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
]


@pytest.mark.parametrize("body,expected", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_reply_conversions(table, body, expected):
    assert table.cmd("FUNCTION", "LOAD", lib("c", reg("f", body))) == b"$1\r\nc\r\n"
    table.cmd("HSET", "h", "f", "v")
    assert table.cmd("FCALL", "f", "0") == expected


def test_resp3_replies_from_a_function(srv):
    c = Raw(srv.port, resp3=True)
    code = lib("r3", reg("map", "redis.setresp(3) return redis.call('hgetall', 'h')") + "\n"
                     + reg("tbl", "redis.setresp(3) return {map={a=1}}") + "\n"
                     + reg("dbl", "redis.setresp(3) return {double=1.5}") + "\n"
                     + reg("bools", "return {true, false}"))
    assert c.cmd("FUNCTION", "LOAD", code) == b"$2\r\nr3\r\n"
    c.cmd("HSET", "h", "f", "v")
    assert c.cmd("FCALL", "map", "0") == b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert c.cmd("FCALL", "tbl", "0") == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert c.cmd("FCALL", "dbl", "0") == b",1.5\r\n"
    assert c.cmd("FCALL", "bools", "0") == b"*2\r\n:1\r\n_\r\n"
    c.close()


def test_fcall_ro_and_the_no_writes_flag(raw):
    code = lib("ro", reg("w", "return redis.call('set', keys[1], 'v')") + "\n"
                     "redis.register_function{function_name='ro', callback=function(keys) "
                     "return redis.call('set', keys[1], 'v') end, flags={'no-writes'}}\n"
                     "redis.register_function{function_name='get', callback=function(keys) "
                     "return redis.call('get', keys[1]) end, flags={'no-writes'}}")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$2\r\nro\r\n"
    assert raw.cmd("FCALL_RO", "w", "1", "k") == (
        b"-ERR Can not execute a script with write flag using *_ro command.\r\n")
    assert raw.cmd("FCALL_RO", "ro", "1", "k") == (
        b"-ERR Write commands are not allowed from read-only scripts." + where("ro", 3))
    assert raw.cmd("FCALL", "ro", "1", "k") == (
        b"-ERR Write commands are not allowed from read-only scripts." + where("ro", 3))
    assert raw.cmd("EXISTS", "k") == b":0\r\n"
    assert raw.cmd("FCALL", "w", "1", "k") == b"+OK\r\n"
    assert raw.cmd("FCALL_RO", "get", "1", "k") == b"$1\r\nv\r\n"
    assert raw.cmd("FCALL", "get", "1", "k") == b"$1\r\nv\r\n"


# ---------------------------------------------------------------- FUNCTION LIST

FLAGS_LIB = lib("fl", "redis.register_function{function_name='allf', callback=function() end, "
                      "flags={'no-cluster','allow-oom','allow-stale','no-writes','allow-cross-slot-keys'}}")


def test_list_structure_resp2(raw):
    assert raw.cmd("FUNCTION", "LIST") == b"*0\r\n"
    code = lib("d", "redis.register_function{function_name='dd', callback=function() return 1 end, "
                    "flags={'no-writes', 'NO-WRITES'}, description='desc'}")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$1\r\nd\r\n"
    entry = (b"*6\r\n$12\r\nlibrary_name\r\n$1\r\nd\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
             b"$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\ndd\r\n$11\r\ndescription\r\n"
             b"$4\r\ndesc\r\n$5\r\nflags\r\n*1\r\n+no-writes\r\n")
    assert raw.cmd("FUNCTION", "LIST") == b"*1\r\n" + entry
    # WITHCODE adds the whole code, shebang line included.
    with_code = b"*8" + entry[2:] + b"$12\r\nlibrary_code\r\n" + bulk(code)
    assert raw.cmd("FUNCTION", "LIST", "WITHCODE") == b"*1\r\n" + with_code
    assert raw.cmd("FUNCTION", "LIST", "withcode", "libraryname", "d") == b"*1\r\n" + with_code
    assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "d", "WITHCODE") == b"*1\r\n" + with_code
    # Flags come in Redis's own order, whatever order they were given in.
    assert raw.cmd("FUNCTION", "LOAD", FLAGS_LIB) == b"$2\r\nfl\r\n"
    assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "fl") == (
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$2\r\nfl\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
        b"$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$4\r\nallf\r\n$11\r\ndescription\r\n$-1\r\n"
        b"$5\r\nflags\r\n*5\r\n+no-writes\r\n+allow-oom\r\n+allow-stale\r\n+no-cluster\r\n"
        b"+allow-cross-slot-keys\r\n")


def test_list_structure_resp3(srv):
    c = Raw(srv.port, resp3=True)
    code = lib("d", "redis.register_function{function_name='dd', callback=function() return 1 end, "
                    "flags={'no-writes','allow-oom'}, description='desc'}\n" + reg("plain"))
    assert c.cmd("FUNCTION", "LOAD", code) == b"$1\r\nd\r\n"
    c.cmd("FUNCTION", "LOAD", lib("e", reg("e1")))
    reply = c.cmd("FUNCTION", "LIST", "LIBRARYNAME", "e", "WITHCODE")
    assert reply == (
        b"*1\r\n%4\r\n$12\r\nlibrary_name\r\n$1\r\ne\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
        b"$9\r\nfunctions\r\n*1\r\n%3\r\n$4\r\nname\r\n$2\r\ne1\r\n$11\r\ndescription\r\n_\r\n"
        b"$5\r\nflags\r\n~0\r\n$12\r\nlibrary_code\r\n" + bulk(lib("e", reg("e1"))))
    c.close()
    r = srv.client(protocol=3)
    got = sorted(r.function_list(), key=lambda x: x["library_name"])
    assert [x["library_name"] for x in got] == ["d", "e"]
    assert got[0]["engine"] == "LUA"
    funcs = sorted(got[0]["functions"], key=lambda f: f["name"])
    assert [f["name"] for f in funcs] == ["dd", "plain"]
    assert funcs[0]["description"] == "desc" and funcs[1]["description"] is None
    assert set(funcs[0]["flags"]) == {"no-writes", "allow-oom"} and len(funcs[1]["flags"]) == 0
    assert r.function_list(library="d", withcode=True)[0]["library_code"] == code


def test_list_library_name_patterns(srv):
    r = srv.client(protocol=3)
    for name in ["m1", "m2", "M3", "other"]:
        r.function_load(lib(name, reg("f_" + name)))

    def names(pattern):
        return sorted(x["library_name"] for x in r.function_list(library=pattern))

    assert names("m2") == ["m2"]
    assert names("m[12]") == ["m1", "m2"]
    # The pattern ignores case.
    assert names("m*") == ["M3", "m1", "m2"]
    assert names("M1") == ["m1"]
    assert names("nothing*") == []
    assert names("*") == ["M3", "m1", "m2", "other"]
    assert len(r.function_list()) == 4


LIST_ERRORS = [
    (["foo"], b"-ERR Unknown argument foo\r\n"),
    (["LIBRARYNAME"], b"-ERR library name argument was not given\r\n"),
    (["withcode", "libraryname"], b"-ERR library name argument was not given\r\n"),
    (["WITHCODE", "WITHCODE"], b"-ERR Unknown argument WITHCODE\r\n"),
    (["LIBRARYNAME", "a", "LIBRARYNAME", "b"], b"-ERR Unknown argument LIBRARYNAME\r\n"),
    (["X\r\n+INJECTED"], b"-ERR Unknown argument X  +INJECTED\r\n"),
]


@pytest.mark.parametrize("args,expected", LIST_ERRORS, ids=[repr(a) for a, _ in LIST_ERRORS])
def test_list_errors(table, args, expected):
    assert table.cmd("FUNCTION", "LIST", *args) == expected


def test_list_libraryname_takes_the_next_word_whatever_it_is(raw):
    raw.cmd("FUNCTION", "LOAD", lib("withcode", reg("f")))
    assert raw.cmd("FUNCTION", "LIST", "libraryname", "withcode").startswith(
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$8\r\nwithcode\r\n")


# ------------------------------------------------- DELETE / FLUSH / DUMP / RESTORE

def test_delete(raw):
    raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1") + " " + reg("f2")))
    raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("f3")))
    assert raw.cmd("FUNCTION", "DELETE", "LIB1") == b"-ERR Library not found\r\n"
    assert raw.cmd("FUNCTION", "DELETE", "lib1") == b"+OK\r\n"
    assert raw.cmd("FUNCTION", "DELETE", "lib1") == b"-ERR Library not found\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b"-ERR Function not found\r\n"
    assert raw.cmd("FCALL", "f2", "0") == b"-ERR Function not found\r\n"
    assert raw.cmd("FCALL", "f3", "0") == b":1\r\n"
    assert stats(raw) == stats_of(1, 1)
    # The names are free again.
    assert raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1"))) == b"$4\r\nlib1\r\n"
    assert raw.cmd("FUNCTION", "DELETE") == (
        b"-ERR wrong number of arguments for 'function|delete' command\r\n")
    assert raw.cmd("FUNCTION", "DELETE", "a", "b") == (
        b"-ERR wrong number of arguments for 'function|delete' command\r\n")


def test_flush(raw):
    for args in [[], ["ASYNC"], ["SYNC"], ["sync"], ["async"]]:
        raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1")))
        assert stats(raw) == stats_of(1, 1)
        assert raw.cmd("FUNCTION", "FLUSH", *args) == b"+OK\r\n"
        assert stats(raw) == stats_of(0, 0)
        assert raw.cmd("FUNCTION", "LIST") == b"*0\r\n"
        assert raw.cmd("FCALL", "f1", "0") == b"-ERR Function not found\r\n"
    assert raw.cmd("FUNCTION", "FLUSH", "bad") == b"-ERR FUNCTION FLUSH only supports SYNC|ASYNC option\r\n"
    assert raw.cmd("FUNCTION", "FLUSH", "SYNC", "x") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.\r\n")
    assert raw.cmd("function", "flush", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.\r\n")


def test_flushall_and_flushdb_keep_functions(raw):
    raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return redis.call('set', 'x', '1')")))
    raw.cmd("SET", "k", "v")
    assert raw.cmd("FLUSHALL") == b"+OK\r\n"
    assert raw.cmd("FLUSHDB") == b"+OK\r\n"
    assert raw.cmd("DBSIZE") == b":0\r\n"
    assert stats(raw) == stats_of(1, 1)
    assert raw.cmd("FCALL", "f1", "0") == b"+OK\r\n"


def test_dump_and_restore(raw):
    empty = payload_of(raw)
    raw.cmd("FUNCTION", "LOAD", lib("l1", reg("f1", "return 1")))
    one = payload_of(raw)
    raw.cmd("FUNCTION", "LOAD", lib("l2", reg("f2", "return 2")))
    both = payload_of(raw)
    # APPEND (the default) refuses a library that exists.
    assert raw.cmd("FUNCTION", "RESTORE", one) == b"-ERR Library l1 already exists\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", one, "APPEND") == b"-ERR Library l1 already exists\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", one, "append") == b"-ERR Library l1 already exists\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", both, "REPLACE") == b"+OK\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", both, "replace") == b"+OK\r\n"
    assert stats(raw) == stats_of(2, 2)
    # FLUSH drops what is not in the payload.
    raw.cmd("FUNCTION", "LOAD", lib("l3", reg("f3", "return 3")))
    assert raw.cmd("FUNCTION", "RESTORE", one, "FLUSH") == b"+OK\r\n"
    assert stats(raw) == stats_of(1, 1)
    assert raw.cmd("FCALL", "f3", "0") == b"-ERR Function not found\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b":1\r\n"
    # Into an empty server, and the code comes back whole.
    assert raw.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", both) == b"+OK\r\n"
    assert raw.cmd("FCALL", "f2", "0") == b":2\r\n"
    assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "l2", "WITHCODE").endswith(
        b"$12\r\nlibrary_code\r\n" + bulk(lib("l2", reg("f2", "return 2"))))
    # An empty dump restores nothing, or flushes everything.
    assert raw.cmd("FUNCTION", "RESTORE", empty) == b"+OK\r\n"
    assert stats(raw) == stats_of(2, 2)
    assert raw.cmd("FUNCTION", "RESTORE", empty, "FLUSH") == b"+OK\r\n"
    assert stats(raw) == stats_of(0, 0)


def test_restore_errors(raw):
    raw.cmd("FUNCTION", "LOAD", lib("l1", reg("f1")))
    good = payload_of(raw)
    bad = b"-ERR DUMP payload version or checksum are wrong\r\n"
    assert raw.cmd("FUNCTION", "RESTORE", good[:-1] + bytes([good[-1] ^ 1])) == bad
    assert raw.cmd("FUNCTION", "RESTORE", good[:-1]) == bad
    assert raw.cmd("FUNCTION", "RESTORE", b"") == bad
    assert raw.cmd("FUNCTION", "RESTORE", "a", "FLUSH") == bad
    # The policy is checked first.
    assert raw.cmd("FUNCTION", "RESTORE", "a", "b") == (
        b"-ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.\r\n")
    assert raw.cmd("FUNCTION", "RESTORE", good, "bad") == (
        b"-ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.\r\n")
    assert raw.cmd("FUNCTION", "RESTORE") == (
        b"-ERR wrong number of arguments for 'function|restore' command\r\n")
    assert raw.cmd("FUNCTION", "RESTORE", good, "FLUSH", "x") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP.\r\n")
    assert raw.cmd("function", "restore", "a", "b", "c") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.\r\n")
    # Nothing was dropped by the failures (not even by FLUSH).
    assert stats(raw) == stats_of(1, 1)
    assert raw.cmd("FCALL", "f1", "0") == b":1\r\n"


def test_restore_function_name_collision_changes_nothing(raw):
    raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return 'lib1'")))
    raw.cmd("FUNCTION", "LOAD", lib("lib2", reg("f2", "return 'lib2'") + " " + reg("f3", "return 'lib2'")))
    payload = payload_of(raw)
    raw.cmd("FUNCTION", "FLUSH")
    raw.cmd("FUNCTION", "LOAD", lib("lib1", reg("f1", "return 'new1'")))
    raw.cmd("FUNCTION", "LOAD", lib("lib3", reg("f3", "return 'lib3'")))
    before = raw.cmd("FUNCTION", "LIST", "WITHCODE")
    # lib1 may be replaced, but f3 belongs to lib3, not to a library the
    # payload replaces.
    assert raw.cmd("FUNCTION", "RESTORE", payload, "REPLACE") == b"-ERR Function f3 already exists\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b"$4\r\nnew1\r\n"
    assert raw.cmd("FCALL", "f3", "0") == b"$4\r\nlib3\r\n"
    assert raw.cmd("FCALL", "f2", "0") == b"-ERR Function not found\r\n"
    assert stats(raw) == stats_of(2, 2)
    assert sorted_list(raw.cmd("FUNCTION", "LIST", "WITHCODE")) == sorted_list(before)
    # FLUSH takes the payload as it is.
    assert raw.cmd("FUNCTION", "RESTORE", payload, "FLUSH") == b"+OK\r\n"
    assert raw.cmd("FCALL", "f3", "0") == b"$4\r\nlib2\r\n"
    assert raw.cmd("FCALL", "f1", "0") == b"$4\r\nlib1\r\n"


def sorted_list(reply):
    """A RESP2 FUNCTION LIST reply's libraries, in a stable order."""
    head, *libs = re.split(rb"\*[68]\r\n\$12\r\nlibrary_name\r\n", reply)
    return [head] + sorted(libs)


# ---------------------------------------------------- STATS / KILL / HELP / arity

def test_stats(raw):
    assert stats(raw) == stats_of(0, 0)
    raw.cmd("FUNCTION", "LOAD", lib("test1", reg("f1") + " " + reg("f2")))
    raw.cmd("FUNCTION", "LOAD", lib("test2", reg("f3")))
    assert stats(raw) == stats_of(2, 3)
    assert raw.cmd("FUNCTION", "LOAD", lib("test1", reg("f4"))) == b"-ERR Library 'test1' already exists\r\n"
    assert raw.cmd("FUNCTION", "LOAD", lib("test3", "return 1")) == b"-ERR No functions registered\r\n"
    assert stats(raw) == stats_of(2, 3)
    assert raw.cmd("FUNCTION", "DELETE", "test1") == b"+OK\r\n"
    assert stats(raw) == stats_of(1, 1)
    assert raw.cmd("FUNCTION", "FLUSH") == b"+OK\r\n"
    assert stats(raw) == stats_of(0, 0)


def test_stats_resp3(srv):
    c = Raw(srv.port, resp3=True)
    c.cmd("FUNCTION", "LOAD", lib("l", reg("f")))
    assert c.cmd("FUNCTION", "STATS") == (
        b"%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n"
        b"%2\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:1\r\n")
    c.close()
    assert srv.client(protocol=3).function_stats() == {
        "running_script": None, "engines": {"LUA": {"libraries_count": 1, "functions_count": 1}}}


SUBCOMMAND_ERRORS = [
    (["FUNCTION", "KILL"], NOTBUSY),
    (["FUNCTION", "NOPE"], b"-ERR unknown subcommand 'NOPE'. Try FUNCTION HELP.\r\n"),
    (["FUNCTION", "nope", "x"], b"-ERR unknown subcommand 'nope'. Try FUNCTION HELP.\r\n"),
    (["FUNCTION"], b"-ERR wrong number of arguments for 'function' command\r\n"),
    (["FUNCTION", "LOAD"], b"-ERR wrong number of arguments for 'function|load' command\r\n"),
    (["FUNCTION", "DELETE"], b"-ERR wrong number of arguments for 'function|delete' command\r\n"),
    (["FUNCTION", "KILL", "x"], b"-ERR wrong number of arguments for 'function|kill' command\r\n"),
    (["FUNCTION", "STATS", "x"], b"-ERR wrong number of arguments for 'function|stats' command\r\n"),
    (["FUNCTION", "DUMP", "x"], b"-ERR wrong number of arguments for 'function|dump' command\r\n"),
    (["FUNCTION", "HELP", "x"], b"-ERR wrong number of arguments for 'function|help' command\r\n"),
]


@pytest.mark.parametrize("argv,expected", SUBCOMMAND_ERRORS, ids=[" ".join(a) for a, _ in SUBCOMMAND_ERRORS])
def test_subcommand_errors(table, argv, expected):
    assert table.cmd(*argv) == expected


def test_help(srv):
    lines = srv.client().execute_command("FUNCTION", "HELP")
    assert lines[0] == "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "LOAD [REPLACE] <FUNCTION CODE>" in lines
    assert lines[-2:] == ["HELP", "    Prints this help."]


# ------------------------------------------------------------------ busy scripts

LOOP_LIB = lib("busy", "redis.register_function('loop', function(keys, args)\n"
                       "  while true do end\n"
                       "end)\n"
                       "redis.register_function('wloop', function(keys, args)\n"
                       "  redis.call('set', keys[1], 'v')\n"
                       "  while true do end\n"
                       "end)")


def wait_reply(conn, want, timeout=10):
    """Sends PING on `conn` until the server answers `want`."""
    deadline = time.time() + timeout
    while (got := conn.cmd("PING")) != want:
        assert time.time() < deadline, got
        time.sleep(0.005)


def busy_server(srv):
    c = Raw(srv.port)
    assert c.cmd("CONFIG", "SET", "busy-reply-threshold", "10") == b"+OK\r\n"
    assert c.cmd("FUNCTION", "LOAD", LOOP_LIB) == b"$4\r\nbusy\r\n"
    return c


def test_busy_function_and_function_kill(srv):
    other = busy_server(srv)
    caller = Raw(srv.port)
    caller.send("fcall", "LOOP", "1", "k", "arg")
    wait_reply(other, BUSY_FUNCTION)
    assert other.cmd("GET", "k") == BUSY_FUNCTION
    assert other.cmd("FUNCTION", "LIST") == BUSY_FUNCTION
    # SCRIPT KILL does not stop a function.
    assert other.cmd("SCRIPT", "KILL") == BUSY_FUNCTION
    # The running function as registered, the command as sent.
    reply = other.cmd("FUNCTION", "STATS")
    head = (b"*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nloop\r\n$7\r\ncommand\r\n"
            b"*5\r\n$5\r\nfcall\r\n$4\r\nLOOP\r\n$1\r\n1\r\n$1\r\nk\r\n$3\r\narg\r\n"
            b"$11\r\nduration_ms\r\n:")
    assert reply.startswith(head)
    duration, tail = reply[len(head):].split(b"\r\n", 1)
    assert int(duration) >= 0
    assert tail == (b"$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n"
                    b"$15\r\nfunctions_count\r\n:2\r\n")
    assert other.cmd("FUNCTION", "KILL") == b"+OK\r\n"
    assert caller.read() == (b"-ERR Script killed by user with SCRIPT KILL... script: loop, "
                             b"on @user_function:3.\r\n")
    wait_reply(other, b"+PONG\r\n")
    assert caller.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("FUNCTION", "KILL") == NOTBUSY
    assert other.cmd("FUNCTION", "STATS") == stats_of(1, 2)
    caller.close()
    other.close()


def test_busy_eval_is_not_killed_by_function_kill(srv):
    other = busy_server(srv)
    caller = Raw(srv.port)
    caller.send("EVAL", "while true do end", "0")
    wait_reply(other, BUSY_SCRIPT)
    assert other.cmd("FUNCTION", "KILL") == BUSY_SCRIPT
    assert other.cmd("FUNCTION", "STATS") == BUSY_SCRIPT
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert caller.read().startswith(b"-ERR Script killed by user with SCRIPT KILL... script: ")
    wait_reply(other, b"+PONG\r\n")
    caller.close()
    other.close()


def test_busy_function_that_wrote_cannot_be_killed(srv):
    other = busy_server(srv)
    caller = Raw(srv.port)
    caller.send("FCALL", "wloop", "1", "x")
    wait_reply(other, BUSY_FUNCTION)
    assert other.cmd("FUNCTION", "KILL") == UNKILLABLE
    assert other.cmd("PING") == BUSY_FUNCTION
    other.send("SHUTDOWN", "NOSAVE")
    assert other.read() == b""
    deadline = time.time() + 10
    while srv.proc.poll() is None:
        assert time.time() < deadline, "the server did not exit"
        time.sleep(0.01)
    caller.close()
    other.close()


# -------------------------------------------------------------------- maxmemory

def test_maxmemory(raw):
    code = lib("mm", reg("w") + "\n"
                     "redis.register_function{function_name='nw', callback=function(keys) "
                     "return redis.call('get', keys[1]) end, flags={'no-writes'}}\n"
                     "redis.register_function{function_name='ao', callback=function() return 2 end, "
                     "flags={'allow-oom'}}\n"
                     "redis.register_function{function_name='aow', callback=function(keys) "
                     "return redis.call('set', keys[1], 'v') end, flags={'allow-oom'}}")
    assert raw.cmd("FUNCTION", "LOAD", code) == b"$2\r\nmm\r\n"
    payload = payload_of(raw)
    raw.cmd("SET", "x", "123")
    assert raw.cmd("CONFIG", "SET", "maxmemory", "1") == b"+OK\r\n"
    try:
        assert raw.cmd("FUNCTION", "LOAD", lib("mm2", reg("w2"))) == OOM
        assert raw.cmd("FUNCTION", "LOAD", "REPLACE", code) == OOM
        assert raw.cmd("FUNCTION", "RESTORE", payload, "REPLACE") == OOM
        assert raw.cmd("FUNCTION", "RESTORE", payload, "bad") == OOM
        # A function that may write is refused before anything else.
        assert raw.cmd("FCALL", "w", "0") == OOM
        assert raw.cmd("FCALL", "w", "x") == OOM
        assert raw.cmd("FCALL_RO", "w", "0") == OOM
        assert raw.cmd("FCALL", "nope", "0") == b"-ERR Function not found\r\n"
        # no-writes and allow-oom functions run.
        assert raw.cmd("FCALL", "nw", "1", "x") == b"$3\r\n123\r\n"
        assert raw.cmd("FCALL_RO", "nw", "1", "x") == b"$3\r\n123\r\n"
        assert raw.cmd("FCALL", "ao", "0") == b":2\r\n"
        assert raw.cmd("FCALL", "aow", "1", "y") == b"+OK\r\n"
        # Commands that only drop or read functions are allowed.
        assert raw.cmd("FUNCTION", "LIST", "LIBRARYNAME", "zz") == b"*0\r\n"
        assert raw.cmd("FUNCTION", "STATS") == stats_of(1, 4)
        assert raw.cmd("FUNCTION", "DELETE", "nope") == b"-ERR Library not found\r\n"
    finally:
        assert raw.cmd("CONFIG", "SET", "maxmemory", "0") == b"+OK\r\n"
    assert raw.cmd("GET", "y") == b"$1\r\nv\r\n"
    assert raw.cmd("FCALL", "w", "0") == b":1\r\n"


# --------------------------------------------------- COMMAND, MULTI, DEBUG RELOAD

def test_command_getkeys_and_info(srv):
    r = srv.client()
    assert raw_cmd(r, "COMMAND", "GETKEYS", "fcall", "f", "1", "x", "foo") == ["x"]
    assert raw_cmd(r, "COMMAND", "GETKEYS", "fcall_ro", "f", "2", "a", "b", "c") == ["a", "b"]
    assert raw_cmd(r, "COMMAND", "GETKEYS", "fcall", "f", "0", "foo") == []
    info = raw_cmd(r, "COMMAND", "INFO", "fcall", "fcall_ro")
    assert [i[:2] for i in info] == [["fcall", -3], ["fcall_ro", -3]]
    assert [i[3:6] for i in info] == [[0, 0, 0], [0, 0, 0]]


def test_function_load_and_fcall_in_multi(raw):
    assert raw.cmd("MULTI") == b"+OK\r\n"
    code = lib("tx", reg("inc", "return redis.call('incr', keys[1])"))
    assert raw.cmd("FUNCTION", "LOAD", code) == b"+QUEUED\r\n"
    assert raw.cmd("FCALL", "inc", "1", "n") == b"+QUEUED\r\n"
    assert raw.cmd("FCALL", "inc", "1", "n") == b"+QUEUED\r\n"
    assert raw.cmd("FCALL", "nope", "0") == b"+QUEUED\r\n"
    assert raw.cmd("FUNCTION", "LOAD", "bad") == b"+QUEUED\r\n"
    assert raw.cmd("EXEC") == (b"*5\r\n$2\r\ntx\r\n:1\r\n:2\r\n-ERR Function not found\r\n"
                               b"-ERR Missing library metadata\r\n")
    assert raw.cmd("MULTI") == b"+OK\r\n"
    assert raw.cmd("FCALL", "inc") == b"-ERR wrong number of arguments for 'fcall' command\r\n"
    assert raw.cmd("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    assert raw.cmd("GET", "n") == b"$1\r\n2\r\n"


def test_functions_survive_debug_reload(raw):
    raw.cmd("FUNCTION", "LOAD", lib("test1", reg("f1", "return 'one'") + " " + reg("f2")))
    raw.cmd("FUNCTION", "LOAD", FLAGS_LIB)
    before = raw.cmd("FUNCTION", "LIST", "WITHCODE")
    assert raw.cmd("DEBUG", "RELOAD") == b"+OK\r\n"
    assert stats(raw) == stats_of(2, 3)
    assert sorted_list(raw.cmd("FUNCTION", "LIST", "WITHCODE")) == sorted_list(before)
    assert raw.cmd("FCALL", "f1", "0") == b"$3\r\none\r\n"


# ------------------------------------------------------ ebb's files (ebb only)

def _library_names(r):
    return sorted(x["library_name"] for x in r.function_list())


def _libraries(r):
    """FUNCTION LIST WITHCODE (from a RESP3 client), in a stable order."""
    out = []
    for x in sorted(r.function_list(withcode=True), key=lambda x: x["library_name"]):
        funcs = sorted(((f["name"], f["description"], tuple(sorted(f["flags"])))
                        for f in x["functions"]))
        out.append((x["library_name"], x["engine"], funcs, x["library_code"]))
    return out


@ebb_only
def test_functions_survive_an_aof_restart(tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", "--appendfsync", "always",
                  cwd=str(tmp_path))
    try:
        r = s.client(protocol=3)
        rb = s.client(decode_responses=False)
        r.function_load(lib("gone", reg("fg")))
        r.function_flush()
        r.function_load(lib("a", reg("fa", "return 'a1'")))
        r.function_load(lib("b", reg("fb")))
        r.function_load(lib("c", "redis.register_function{function_name='fc', "
                                 "callback=function() return 'c' end, flags={'no-writes'}, "
                                 "description='see'}"))
        r.function_delete("b")
        payload = rb.function_dump()
        r.function_flush("SYNC")
        r.function_load(lib("d", reg("fd", "return 'd'")))
        r.execute_command("FUNCTION", "RESTORE", payload)
        r.function_load(lib("a", reg("fa", "return 'a2'")), replace=True)
        r.function_load(lib("e", reg("fe")))
        r.execute_command("FUNCTION", "RESTORE", payload, "REPLACE")  # a back to a1
        r.function_delete("e")
        before = _libraries(r)
        s.kill()
        s.start()
        r = s.client(protocol=3)
        assert _library_names(r) == ["a", "c", "d"]
        assert _libraries(r) == before
        assert r.fcall("fa", 0) == "a1"
        assert r.execute_command("FCALL_RO", "fc", 0) == "c"
        assert r.fcall("fd", 0) == "d"
        for gone in ["fb", "fe", "fg"]:
            with pytest.raises(redis.ResponseError, match="Function not found"):
                r.fcall(gone, 0)
        # Restarted again, after a flush.
        r.function_flush()
        s.kill()
        s.start()
        assert s.client().function_list() == []
    finally:
        s.stop()


@ebb_only
def test_functions_survive_an_aof_rewrite(tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes", "--appendfsync", "always",
                  cwd=str(tmp_path))
    try:
        r = s.client(protocol=3)
        r.function_load(lib("before", "redis.register_function{function_name='fb', "
                                      "callback=function() return 'b' end, flags={'allow-oom'}}"))
        r.function_load(lib("dropped", reg("fx")))
        r.function_delete("dropped")
        r.set("k", "v")
        r.bgrewriteaof()
        deadline = time.time() + 10
        while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
            time.sleep(0.05)
        r.function_load(lib("after", reg("fa", "return 'a'")))
        before = _libraries(r)
        s.kill()
        s.start()
        r = s.client(protocol=3)
        assert _library_names(r) == ["after", "before"]
        assert _libraries(r) == before
        assert r.fcall("fb", 0) == "b"
        assert r.fcall("fa", 0) == "a"
        assert r.get("k") == "v"
    finally:
        s.stop()


@ebb_only
def test_functions_survive_a_snapshot(tmp_path):
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "no", cwd=str(tmp_path))
    try:
        r = s.client(protocol=3)
        r.function_load(lib("snap", reg("f1", "return 'one'") + " " + FLAGS_LIB.split("\n", 1)[1]))
        r.function_load(lib("other", reg("f2", "return 'two'")))
        before = _libraries(r)
        assert r.save() is True
        s.kill()
        s.start()
        r = s.client(protocol=3)
        assert _library_names(r) == ["other", "snap"]
        assert _libraries(r) == before
        assert r.fcall("f1", 0) == "one"
        assert r.function_stats()["engines"] == {"LUA": {"libraries_count": 2, "functions_count": 3}}
        # A snapshot taken with no libraries brings none back.
        r.function_flush()
        assert r.save() is True
        s.kill()
        s.start()
        assert s.client().function_list() == []
    finally:
        s.stop()


def test_client_pause_write_holds_only_scripts_that_may_write(srv):
    """CLIENT PAUSE WRITE holds EVAL/EVALSHA/FCALL unless the script or
    function declares no-writes (then they run at once)."""
    import select
    c = srv.client()
    c.set("x", "y")
    c.function_load(
        "#!lua name=pl\n"
        "redis.register_function{function_name='ro', callback=function() return 'hello' end, flags={'no-writes'}}\n"
        "redis.register_function('rw', function() return 'w' end)", replace=True)
    ro_sha = c.script_load("#!lua flags=no-writes\nreturn 2")
    c.execute_command("CLIENT", "PAUSE", 60000, "WRITE")
    held = []
    try:
        other = srv.client(socket_timeout=2)
        assert other.eval("#!lua flags=no-writes\nreturn 'unique'", 0) == "unique"
        assert other.evalsha(ro_sha, 0) == 2
        assert other.fcall("ro", 0) == "hello"
        assert other.eval_ro("return redis.call('get', KEYS[1])", 1, "x") == "y"
        other.close()
        for args in (("FCALL", "rw", 0), ("EVAL", "return 1", 0), ("EVAL", "#!lua\nreturn 1", 0)):
            r = Raw(srv.port)
            r.send(*args)
            held.append(r)
        ready, _, _ = select.select([r.s for r in held], [], [], 0.3)
        assert ready == []
    finally:
        c.execute_command("CLIENT", "UNPAUSE")
    assert [r.read() for r in held] == [b"$1\r\nw\r\n", b":1\r\n", b":1\r\n"]
    for r in held:
        r.close()
