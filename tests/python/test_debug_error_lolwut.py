"""DEBUG ERROR and LOLWUT, found missing by redis-py's test suite.

DEBUG ERROR <text> replies `-<text>` as given (no `ERR` prefix added, CR and
LF made spaces), which client test suites use to fake a server's errors
(redis-py's LOADING, READONLY, OOM and AUTH handling); like Redis's, it is
not counted in INFO errorstats nor as a failed call. LOLWUT answers Redis
7.0's version line, or with VERSION 5 or 6 that version's (random)
drawing.

The first part states the expected replies (run with AGAINST_REDIS=1 to
check them against redis-server); the second sends the same requests to
ebb-server and redis-server 7.0 and compares the raw replies, RESP2 and
RESP3 (skipped without redis-server).
"""


import pytest
import redis

from conftest import AGAINST_REDIS, Oracle, Raw, ebb_or_redis, redis_beside, typed_reply


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ebb_or_redis(AGAINST_REDIS, tmp_path_factory.mktemp("debug-error"))
    yield s
    s.stop()


def stats(raw, section):
    text = raw.cmd("INFO", section).decode()
    return dict(
        line.split(":", 1) for line in text.splitlines()[1:] if ":" in line
    )


def test_debug_error_is_written_as_given(server):
    raw = Raw(server.port, timeout=5.0)
    assert raw.cmd("DEBUG", "ERROR", "LOADING fake message") == b"-LOADING fake message\r\n"
    assert raw.cmd("DEBUG", "error", "ERR a\r\nb\nc") == b"-ERR a  b c\r\n"
    assert raw.cmd("DEBUG", "ERROR", "") == b"-\r\n"
    assert raw.cmd("DEBUG", "ERROR", b"\xff\xfe bytes") == b"-\xff\xfe bytes\r\n"
    assert raw.cmd("DEBUG", "ERROR", "a", "b").startswith(
        b"-ERR unknown subcommand or wrong number of arguments for 'ERROR'")
    raw.close()


def test_debug_error_is_not_counted(server):
    raw = Raw(server.port, timeout=5.0)
    assert raw.cmd("CONFIG", "RESETSTAT") == b"+OK\r\n"
    raw.cmd("DEBUG", "ERROR", "OOM fake")
    raw.cmd("DEBUG", "ERROR", "ERR fake")
    assert raw.cmd("MULTI") == b"+OK\r\n"
    assert raw.cmd("DEBUG", "ERROR", "READONLY fake") == b"+QUEUED\r\n"
    assert raw.cmd("EXEC") == b"*1\r\n-READONLY fake\r\n"
    assert stats(raw, "errorstats") == {}
    assert stats(raw, "stats")["total_error_replies"] == "0"
    debug = stats(raw, "commandstats")["cmdstat_debug"]
    assert "calls=3," in debug and "failed_calls=0" in debug
    raw.close()


@pytest.mark.parametrize("text, exc", [
    ("LOADING fake message", redis.BusyLoadingError),
    ("READONLY You can't write against a read only replica.", redis.ReadOnlyError),
    ("OOM command not allowed when used memory > 'maxmemory'.", redis.OutOfMemoryError),
    ("ERR AUTH <password> called without any password configured for the default user. "
     "Are you sure your configuration is correct?", redis.AuthenticationError),
])
def test_debug_error_through_redis_py(server, text, exc):
    c = server.client()
    with pytest.raises(exc):
        c.execute_command("DEBUG", "ERROR", text)
    c.close()


def test_lolwut_version_line(server):
    raw = Raw(server.port, timeout=5.0)
    line = b"Redis ver. 7.0.15\n"
    bulk = b"$%d\r\n%s\r\n" % (len(line), line)
    for args in ([], ["5", "6", "7", "8"], ["VERSION", "7"], ["version", "-1"],
                 ["VERSION", "4", "x"], ["VERSION"], ["version", "56"]):
        assert raw.cmd("LOLWUT", *args) == bulk, args
    assert raw.cmd("LOLWUT", "VERSION", "x") == b"-ERR value is not an integer or out of range\r\n"
    raw.close()
    r3 = Raw(server.port, resp3=True, timeout=5.0)
    assert r3.cmd("LOLWUT") == b"=%d\r\ntxt:%s\r\n" % (len(line) + 4, line)
    r3.close()


def test_lolwut_drawings(server):
    c = server.client()
    schotter = c.lolwut(5)
    lines = schotter.split("\n")
    # 66 columns of Braille, 132 x 196 pixels: 49 rows, each ending in a
    # newline, then the caption after one more.
    assert len(lines) == 52 and lines[49] == "" and lines[-1] == ""
    assert all(len(row) == 66 for row in lines[:49])
    assert all("\u2800" <= ch <= "\u28ff" for row in lines[:49] for ch in row)
    assert lines[50] == "Georg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15"
    skyline = c.execute_command("LOLWUT", "VERSION", "6", "12", "4")
    rows = skyline.split("\n")
    assert len(rows) == 7
    assert all(row.count("\x1b[0m") == 12 for row in rows[:4])
    assert rows[4] == "Dedicated to the 8 bit game developers of past and present."
    assert rows[5].endswith("Redis ver. 7.0.15")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        c.execute_command("LOLWUT", "VERSION", "6", "12", "x")
    c.close()


# -------------------------------------------------- side by side with Redis


@pytest.fixture(scope="module")
def oracle(server, tmp_path_factory):
    red = redis_beside(tmp_path_factory, "debug-error-redis")
    yield Oracle(server.port, red.port)
    red.stop()


SAME = [
    ["DEBUG", "ERROR", "LOADING fake"],
    ["DEBUG", "ERROR", "no kind\r\nat all"],
    ["DEBUG", "ERROR", ""],
    ["DEBUG", "ERROR"],
    ["DEBUG", "ERROR", "a", "b"],
    ["DEBUG", "LOG", "a marker"],
    ["DEBUG", "LOG"],
    ["DEBUG", "LOG", "a", "b"],
    ["LOLWUT"],
    ["LOLWUT", "5", "6", "7", "8"],
    ["LOLWUT", "VERSION", "7"],
    ["LOLWUT", "VERSION", "-5"],
    ["LOLWUT", "VERSION", "4294967303"],
    ["LOLWUT", "VERSION", "x"],
    ["LOLWUT", "VERSION", "5", "x"],
    ["LOLWUT", "VERSION", "5", "1", "2", "y"],
    ["LOLWUT", "VERSION", "6", "x"],
    ["LOLWUT", "VERSION", "6", "1", "y"],
    ["COMMAND", "INFO", "LOLWUT"],
    # (COMMAND DOCS: the summary is ebb's own text, as for every command;
    # test_command_docs.py compares the rest.)
    ["COMMAND", "GETKEYS", "LOLWUT"],
]


@pytest.mark.parametrize("resp3", [False, True])
@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a))
def test_same_reply_as_redis(oracle, args, resp3):
    mine, theirs = oracle.both(*args, resp3=resp3)
    assert typed_reply(mine) == typed_reply(theirs)


@pytest.mark.parametrize("args", [
    ["VERSION", "5"], ["VERSION", "5", "1", "1", "1"], ["VERSION", "5", "7", "300", "-3"],
    ["VERSION", "5", "20", "3", "5"],
    # Redis reads the version as a 32-bit unsigned number: 2^32 + 5 is 5.
    ["VERSION", "4294967301"],
])
def test_schotter_same_size_as_redis(oracle, args):
    # Random squares, but the same canvas: as many lines and bytes.
    mine, theirs = oracle.both("LOLWUT", *args)
    assert len(mine) == len(theirs)
    assert mine.count(b"\n") == theirs.count(b"\n")


@pytest.mark.parametrize("args", [["VERSION", "6"], ["VERSION", "6", "3", "2"],
                                  ["VERSION", "6", "0", "5000"]])
def test_skyline_same_size_as_redis(oracle, args):
    mine, theirs = oracle.both("LOLWUT", *args)
    assert mine.count(b"\n") == theirs.count(b"\n")
    assert mine.count(b"\x1b[0m") == theirs.count(b"\x1b[0m")
