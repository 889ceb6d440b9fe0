"""A script that runs past `busy-reply-threshold` (`lua-time-limit`), as
Redis 7.0 handles it: other clients get BUSY, SCRIPT KILL stops a script
that has not written (even one that catches errors with pcall), a script
that wrote can only be ended by SHUTDOWN NOSAVE, and the commands Redis
allows meanwhile (MULTI, WATCH, AUTH, HELLO, ...) still answer.

The expected replies are redis-server 7.0.15's, byte for byte; run with
AGAINST_REDIS=1 to check this file against it (tests of ebb's own
files are skipped then).
"""

import time

import pytest

from conftest import ebb_only, EbbServer, Raw, sha


BUSY = (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL "
        b"or SHUTDOWN NOSAVE.\r\n")
UNKILLABLE = (b"-UNKILLABLE Sorry the script already executed write commands "
              b"against the dataset. You can either wait the script termination "
              b"or kill the server in a hard way using the SHUTDOWN NOSAVE "
              b"command.\r\n")
NOTBUSY = b"-NOTBUSY No scripts in execution right now.\r\n"


def killed(script, line=1):
    return (b"-ERR Script killed by user with SCRIPT KILL... script: "
            + f"{sha(script)}, on @user_script:{line}.\r\n".encode())


@pytest.fixture
def srv(srv):
    c = Raw(srv.port)
    assert c.cmd("CONFIG", "SET", "lua-time-limit", "20") == b"+OK\r\n"
    c.close()
    return srv


@pytest.fixture
def other(srv):
    c = Raw(srv.port)
    yield c
    c.close()


def wait_busy(conn):
    """Waits until the server answers `conn` with BUSY."""
    deadline = time.time() + 10
    while conn.cmd("PING") != BUSY:
        assert time.time() < deadline, "the script never became busy"
        time.sleep(0.005)


def start(srv, script, *args):
    """Sends EVAL on a connection of its own; returns it once the server
    answers other clients with BUSY."""
    c = Raw(srv.port)
    c.send("EVAL", script, *args)
    probe = Raw(srv.port)
    wait_busy(probe)
    probe.close()
    return c


def wait_pong(c):
    deadline = time.time() + 10
    while (r := c.cmd("PING")) != b"+PONG\r\n":
        assert r == BUSY, r
        assert time.time() < deadline, "the server stayed busy"
        time.sleep(0.01)


def test_lua_time_limit_is_busy_reply_threshold(other):
    assert other.cmd("CONFIG", "GET", "busy-reply-threshold") == (
        b"*2\r\n$20\r\nbusy-reply-threshold\r\n$2\r\n20\r\n")
    other.cmd("CONFIG", "SET", "busy-reply-threshold", "30")
    assert other.cmd("CONFIG", "GET", "lua-time-limit") == (
        b"*2\r\n$14\r\nlua-time-limit\r\n$2\r\n30\r\n")


def test_script_kill_stops_a_busy_read_only_script(srv, other):
    script = "while true do end"
    c = start(srv, script, 0)
    assert other.cmd("GET", "x") == BUSY
    assert other.cmd("INFO") == BUSY
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert c.read() == killed(script)
    wait_pong(other)
    # The connection that ran it is usable again.
    assert c.cmd("PING") == b"+PONG\r\n"
    assert other.cmd("SCRIPT", "KILL") == NOTBUSY
    c.close()


def test_pcall_cannot_catch_script_kill(srv, other):
    script = ("local f = function() while 1 do redis.call('ping') end end "
              "while 1 do pcall(f) end")
    c = start(srv, script, 0)
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    reply = c.read()
    assert reply.startswith(b"-ERR Script killed by user with SCRIPT KILL... script: ")
    wait_pong(other)
    c.close()


def test_killed_script_then_pipelined_command(srv, other):
    script = "while 1 do redis.call('ping') end"
    c = Raw(srv.port)
    c.send("EVAL", script, 0)
    c.send("PING")
    wait_busy(other)
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert c.read() == killed(script)
    assert c.read() == b"+PONG\r\n"
    wait_pong(other)
    c.close()


def test_a_slow_script_that_ends_replies_and_frees_the_server(srv, other):
    # Runs past the threshold (others get BUSY meanwhile), then returns.
    c = Raw(srv.port)
    script = ("for i = 1, 200000 do redis.call('ping') end "
              "redis.call('set', KEYS[1], 'done') return 'ok'")
    c.send("EVAL", script, 1, "k")
    saw_busy = False
    deadline = time.time() + 60
    while True:
        r = other.cmd("GET", "k")
        if r == BUSY:
            saw_busy = True
        elif r == b"$4\r\ndone\r\n":
            break
        assert time.time() < deadline
        time.sleep(0.005)
    assert saw_busy
    assert c.read() == b"$2\r\nok\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"
    c.close()


def test_commands_allowed_while_busy(srv, other):
    script = "while true do end"
    c = start(srv, script, 0)
    # Transactions may be opened, but what they queue is refused, and so
    # is EXEC (which discards the transaction).
    assert other.cmd("MULTI") == b"+OK\r\n"
    assert other.cmd("SET", "a", "1") == BUSY
    assert other.cmd("EXEC") == (
        b"-EXECABORT Transaction discarded because of: " + BUSY[1:])
    assert other.cmd("WATCH", "a") == b"+OK\r\n"
    assert other.cmd("UNWATCH") == b"+OK\r\n"
    assert other.cmd("MULTI") == b"+OK\r\n"
    assert other.cmd("DISCARD") == b"+OK\r\n"
    assert other.cmd("AUTH", "pw") == (
        b"-ERR AUTH <password> called without any password configured for "
        b"the default user. Are you sure your configuration is correct?\r\n")
    assert other.cmd("HELLO", "2").startswith(b"*14\r\n")
    assert other.cmd("SCRIPT", "LOAD", "return 1") == BUSY
    assert other.cmd("EVAL", "return 1", 0) == BUSY
    assert other.cmd("SHUTDOWN") == BUSY
    assert other.cmd("SCRIPT", "KILL") == b"+OK\r\n"
    assert c.read() == killed(script)
    wait_pong(other)
    c.close()


def test_watch_during_busy_script_sees_its_writes(srv, other):
    c = Raw(srv.port)
    script = ("for i = 1, 200000 do redis.call('ping') end "
              "redis.call('set', KEYS[1], 'by-script') return 1")
    c.send("EVAL", script, 1, "w")
    wait_busy(other)
    assert other.cmd("WATCH", "w") == b"+OK\r\n"
    assert c.read() == b":1\r\n"
    assert other.cmd("MULTI") == b"+OK\r\n"
    assert other.cmd("SET", "w", "mine") == b"+QUEUED\r\n"
    assert other.cmd("EXEC") == b"*-1\r\n"
    assert other.cmd("GET", "w") == b"$9\r\nby-script\r\n"
    c.close()


def test_a_script_that_wrote_cannot_be_killed(srv, other):
    script = "redis.call('set', KEYS[1], 'y') while true do end"
    c = start(srv, script, 1, "x")
    assert other.cmd("SCRIPT", "KILL") == UNKILLABLE
    assert other.cmd("PING") == BUSY
    # Only SHUTDOWN NOSAVE ends it: the server exits.
    other.send("SHUTDOWN", "NOSAVE")
    assert other.read() == b""
    deadline = time.time() + 10
    while srv.proc.poll() is None:
        assert time.time() < deadline, "the server did not exit"
        time.sleep(0.01)
    c.close()


@ebb_only
def test_shutdown_nosave_drops_the_busy_scripts_writes(tmp_path):
    # aof-load-truncated no: the log must hold no part of the script at all.
    s = EbbServer("--dir", str(tmp_path), "--appendonly", "yes",
                  "--aof-load-truncated", "no",
                  "--lua-time-limit", "20", cwd=str(tmp_path))
    try:
        o = Raw(s.port)
        assert o.cmd("SET", "before", "1") == b"+OK\r\n"
        c = start(s, "redis.call('set', KEYS[1], 'y') while true do end", 1, "x")
        # Other clients' batches (answered BUSY) must not write the
        # script's half-done block to the log either.
        for _ in range(5):
            assert o.cmd("SET", "z", "1") == BUSY
        o.send("SHUTDOWN", "NOSAVE")
        assert o.read() == b""
        s.proc.wait(10)
        c.close()
        s.start()
        r = Raw(s.port)
        assert r.cmd("GET", "before") == b"$1\r\n1\r\n"
        assert r.cmd("EXISTS", "x") == b":0\r\n"
        r.close()
    finally:
        s.stop()


def test_exec_refused_before_it_runs_is_execabort(other):
    assert other.cmd("EXEC", "x") == (
        b"-EXECABORT Transaction discarded because of: wrong number of "
        b"arguments for 'exec' command\r\n")
    assert other.cmd("MULTI") == b"+OK\r\n"
    assert other.cmd("SET", "a", "1") == b"+QUEUED\r\n"
    assert other.cmd("EXEC", "x").startswith(b"-EXECABORT")
    # The transaction is gone.
    assert other.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert other.cmd("EXISTS", "a") == b":0\r\n"
