"""Per-command statistics as Redis 7.0 reports them through INFO:
commandstats (calls, rejected_calls, failed_calls), errorstats,
latencystats, the section selection of INFO, and the replication fields
monitoring tools read.

Every expectation here is what redis-server 7.0 does; to check the file
against it, run with AGAINST_REDIS=1 (the `srv` fixture then starts
redis-server instead of ebb-server).
"""

import re

import pytest
import redis

from conftest import Raw, wait_until


OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"

CMDSTAT = re.compile(
    r"^cmdstat_(?P<name>[a-z0-9_|-]+):calls=(?P<calls>\d+),usec=(?P<usec>\d+),"
    r"usec_per_call=(?P<per>\d+\.\d\d),rejected_calls=(?P<rejected>\d+),"
    r"failed_calls=(?P<failed>\d+)$"
)
ERRORSTAT = re.compile(r"^errorstat_(?P<code>[^:]+):count=(?P<count>\d+)$")
LATENCY = re.compile(r"^latency_percentiles_usec_(?P<name>[a-z0-9_|-]+):(?P<rest>.*)$")
NUM3 = r"\d+\.\d{3}"

ALL_SECTIONS = [
    "Server", "Clients", "Memory", "Persistence", "Stats", "Replication",
    "CPU", "Modules", "Commandstats", "Errorstats", "Latencystats",
    "Cluster", "Keyspace",
]


# ---------------------------------------------------------------- servers


@pytest.fixture
def c(srv):
    """A redis-py client on a single connection, connected (and its
    handshake done) before the statistics are reset."""
    cl = srv.client(single_connection_client=True)
    cl.ping()
    yield cl
    cl.close()


@pytest.fixture
def raw(srv):
    """Opens bare RESP2 connections (exact reply bytes, no handshake)."""
    opened = []

    def make():
        conn = Raw(srv.port)
        opened.append(conn)
        return conn

    yield make
    for conn in opened:
        conn.close()


# ---------------------------------------------------------------- helpers


def info_text(c, *sections):
    """The INFO reply text, without redis-py's parsing."""
    c.connection.send_command("INFO", *sections)
    return c.connection.read_response()


def fields(c, section):
    out = {}
    for line in info_text(c, section).splitlines():
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def headers(text):
    return [l[2:] for l in text.splitlines() if l.startswith("# ")]


def cmdstat_lines(c):
    text = info_text(c, "commandstats")
    lines = [l for l in text.splitlines() if l]
    assert lines[0] == "# Commandstats"
    for line in lines[1:]:
        assert CMDSTAT.match(line), line
    return lines[1:]


def counts(c):
    """{command: (calls, rejected_calls, failed_calls)} from INFO commandstats."""
    out = {}
    for line in cmdstat_lines(c):
        m = CMDSTAT.match(line)
        out[m["name"]] = (int(m["calls"]), int(m["rejected"]), int(m["failed"]))
    return out


def errorstats(c):
    """{error code: count} from INFO errorstats, in the order listed."""
    text = info_text(c, "errorstats")
    lines = [l for l in text.splitlines() if l]
    assert lines[0] == "# Errorstats"
    out = {}
    for line in lines[1:]:
        m = ERRORSTAT.match(line)
        assert m, line
        out[m["code"]] = int(m["count"])
    return out


def total_errors(c):
    return int(fields(c, "stats")["total_error_replies"])


def latency(c):
    """{command: "pX=..,pY=.."} from INFO latencystats."""
    text = info_text(c, "latencystats")
    lines = [l for l in text.splitlines() if l]
    assert lines[0] == "# Latencystats"
    out = {}
    for line in lines[1:]:
        m = LATENCY.match(line)
        assert m, line
        out[m["name"]] = m["rest"]
    return out


def fails(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def blocked_clients(c):
    return int(fields(c, "clients")["blocked_clients"])


# ------------------------------------------------------------ commandstats


def test_commandstats_lines_name_commands_and_subcommands(c):
    c.config_resetstat()
    c.execute_command("SET", "k", "v")
    c.execute_command("get", "k")
    c.execute_command("CONFIG", "Get", "maxmemory")
    c.execute_command("CLIENT", "ID")
    c.execute_command("client", "id")
    assert counts(c) == {
        "config|resetstat": (1, 0, 0),
        "set": (1, 0, 0),
        "get": (1, 0, 0),
        "config|get": (1, 0, 0),
        "client|id": (2, 0, 0),
    }


def test_resetstat_clears_everything_and_info_counts_after_replying(c):
    c.execute_command("SET", "k", "v")
    fails(c, "LPUSH", "k", "x")
    fails(c, "GET")
    fails(c, "NOSUCHCOMMAND")
    assert total_errors(c) > 0
    c.config_resetstat()
    # Only CONFIG RESETSTAT itself, counted after it ran; INFO is counted
    # once it has replied, so the first INFO does not list itself.
    assert counts(c) == {"config|resetstat": (1, 0, 0)}
    assert counts(c) == {"config|resetstat": (1, 0, 0), "info": (1, 0, 0)}
    assert errorstats(c) == {}
    assert total_errors(c) == 0


def test_failed_calls_are_commands_that_ran_and_replied_an_error(c, raw):
    r = raw()
    c.execute_command("SET", "k", "v")
    c.config_resetstat()
    assert r.cmd("INCR", "k") == b"-ERR value is not an integer or out of range\r\n"
    assert r.cmd("LPUSH", "k", "x").startswith(b"-WRONGTYPE ")
    assert r.cmd("BLPOP", "k", "0").startswith(b"-WRONGTYPE ")
    assert r.cmd("ZADD", "z", "notnum", "m") == b"-ERR value is not a valid float\r\n"
    assert r.cmd("SET", "k", "v", "XX", "NX") == b"-ERR syntax error\r\n"
    assert r.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert r.cmd("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    assert r.cmd("SET", "k", "w") == b"+OK\r\n"
    got = counts(c)
    assert got["incr"] == (1, 0, 1)
    assert got["lpush"] == (1, 0, 1)
    assert got["blpop"] == (1, 0, 1)
    assert got["zadd"] == (1, 0, 1)
    assert got["set"] == (2, 0, 1)
    assert got["exec"] == (1, 0, 1)
    assert got["discard"] == (1, 0, 1)
    assert errorstats(c) == {"ERR": 5, "WRONGTYPE": 2}
    assert total_errors(c) == 7


def test_rejected_calls_wrong_arity(c, raw):
    r = raw()
    c.config_resetstat()
    assert r.cmd("SET", "k") == b"-ERR wrong number of arguments for 'set' command\r\n"
    # A command only ever rejected still gets a line, with zero calls.
    line = "cmdstat_set:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"
    assert line in cmdstat_lines(c)
    r.cmd("SET", "k1", "v1")
    r.cmd("SET", "k2", "v2")
    assert r.cmd("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert r.cmd("CONFIG", "GET") == b"-ERR wrong number of arguments for 'config|get' command\r\n"
    assert r.cmd("CLIENT") == b"-ERR wrong number of arguments for 'client' command\r\n"
    got = counts(c)
    assert got["set"] == (2, 1, 0)
    assert got["get"] == (0, 1, 0)
    assert got["config|get"] == (0, 1, 0)
    assert got["client"] == (0, 1, 0)
    assert errorstats(c) == {"ERR": 4}
    assert total_errors(c) == 4


def test_unknown_command_or_subcommand_counts_only_as_an_error(c, raw):
    r = raw()
    c.config_resetstat()
    assert r.cmd("NOSUCHCMD", "x") == (
        b"-ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' \r\n"
    )
    assert r.cmd("CONFIG", "NOSUCH") == (
        b"-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.\r\n"
    )
    assert r.cmd("CLIENT", "NOSUCH") == (
        b"-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.\r\n"
    )
    st = fields(c, "stats")
    assert st["total_error_replies"] == "3"
    # Refused commands are not processed commands: only CONFIG RESETSTAT.
    assert st["total_commands_processed"] == "1"
    # No line for the unknown command, nor for the CONFIG/CLIENT parents.
    assert counts(c) == {"config|resetstat": (1, 0, 0), "info": (1, 0, 0)}
    assert errorstats(c) == {"ERR": 3}


def test_oom_rejects_write_commands_only(srv, c, raw):
    r = raw()
    c.config_set("maxmemory", "1")
    c.config_resetstat()
    assert r.cmd("SET", "a", "b") == OOM
    assert r.cmd("INCR", "a") == OOM
    assert r.cmd("GET", "a") == b"$-1\r\n"
    got = counts(c)
    assert got["set"] == (0, 1, 0)
    assert got["incr"] == (0, 1, 0)
    assert got["get"] == (1, 0, 0)
    assert errorstats(c) == {"OOM": 2}
    assert total_errors(c) == 2


def test_errorstats_are_listed_by_error_code_in_order(c, raw):
    r = raw()
    r.cmd("SET", "s", "x")
    c.config_set("maxmemory", "1")
    c.config_resetstat()
    assert r.cmd("LLEN", "s").startswith(b"-WRONGTYPE ")
    assert r.cmd("SET", "s", "y") == OOM
    assert r.cmd("EXEC") == b"-ERR EXEC without MULTI\r\n"
    text = info_text(c, "errorstats")
    assert text.split("\r\n")[:4] == [
        "# Errorstats",
        "errorstat_ERR:count=1",
        "errorstat_OOM:count=1",
        "errorstat_WRONGTYPE:count=1",
    ]


# -------------------------------------------------------------- MULTI/EXEC


def test_queued_commands_are_counted_when_exec_runs_them(c, raw):
    r = raw()
    c.config_resetstat()
    assert r.cmd("MULTI") == b"+OK\r\n"
    assert r.cmd("SET", "a", "1") == b"+QUEUED\r\n"
    assert r.cmd("GET", "a") == b"+QUEUED\r\n"
    got = counts(c)
    assert got["multi"] == (1, 0, 0)
    assert "set" not in got and "get" not in got and "exec" not in got
    assert r.cmd("EXEC") == b"*2\r\n+OK\r\n$1\r\n1\r\n"
    got = counts(c)
    assert got["set"] == (1, 0, 0)
    assert got["get"] == (1, 0, 0)
    assert got["exec"] == (1, 0, 0)


def test_discarded_commands_are_not_counted(c, raw):
    r = raw()
    c.config_resetstat()
    r.cmd("MULTI")
    r.cmd("SET", "a", "1")
    assert r.cmd("DISCARD") == b"+OK\r\n"
    assert counts(c) == {
        "config|resetstat": (1, 0, 0),
        "multi": (1, 0, 0),
        "discard": (1, 0, 0),
    }


def test_errors_inside_exec_count_to_the_inner_command(c, raw):
    r = raw()
    r.cmd("SET", "a", "b")
    c.config_resetstat()
    r.cmd("MULTI")
    r.cmd("INCR", "a")
    r.cmd("LPUSH", "a", "x")
    r.cmd("GET", "a")
    reply = r.cmd("EXEC")
    assert reply.startswith(b"*3\r\n-ERR value is not an integer or out of range\r\n-WRONGTYPE ")
    assert reply.endswith(b"$1\r\nb\r\n")
    got = counts(c)
    assert got["incr"] == (1, 0, 1)
    assert got["lpush"] == (1, 0, 1)
    assert got["get"] == (1, 0, 0)
    assert got["multi"] == (1, 0, 0)
    assert got["exec"] == (1, 0, 0)
    assert errorstats(c) == {"ERR": 1, "WRONGTYPE": 1}
    assert total_errors(c) == 2


def test_wrong_arity_inside_multi_is_rejected_and_exec_aborts(c, raw):
    r = raw()
    c.config_resetstat()
    r.cmd("MULTI")
    assert r.cmd("SET", "a") == b"-ERR wrong number of arguments for 'set' command\r\n"
    assert r.cmd("GET", "a") == b"+QUEUED\r\n"
    assert r.cmd("EXEC") == EXECABORT
    got = counts(c)
    assert got["set"] == (0, 1, 0)
    assert "get" not in got
    assert got["multi"] == (1, 0, 0)
    assert got["exec"] == (1, 0, 1)
    assert errorstats(c) == {"ERR": 1, "EXECABORT": 1}
    assert total_errors(c) == 2


def test_unknown_command_inside_multi_aborts_exec(c, raw):
    r = raw()
    c.config_resetstat()
    r.cmd("MULTI")
    assert r.cmd("NOSUCH", "a").startswith(b"-ERR unknown command 'NOSUCH'")
    assert r.cmd("CONFIG", "NOSUCH").startswith(b"-ERR unknown subcommand 'NOSUCH'")
    assert r.cmd("GET", "a") == b"+QUEUED\r\n"
    assert r.cmd("EXEC") == EXECABORT
    assert counts(c) == {
        "config|resetstat": (1, 0, 0),
        "multi": (1, 0, 0),
        "exec": (1, 0, 1),
    }
    assert errorstats(c) == {"ERR": 2, "EXECABORT": 1}


def test_nested_multi_and_watch_inside_multi_fail_without_aborting(c, raw):
    r = raw()
    c.config_resetstat()
    r.cmd("MULTI")
    assert r.cmd("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert r.cmd("WATCH", "k") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    assert r.cmd("GET", "k") == b"+QUEUED\r\n"
    assert r.cmd("EXEC") == b"*1\r\n$-1\r\n"
    got = counts(c)
    assert got["multi"] == (2, 0, 1)
    assert got["watch"] == (1, 0, 1)
    assert got["get"] == (1, 0, 0)
    assert got["exec"] == (1, 0, 0)
    assert errorstats(c) == {"ERR": 2}


def test_oom_inside_multi_rejects_every_queued_command(c, raw):
    r = raw()
    c.config_set("maxmemory", "1")
    c.config_resetstat()
    assert r.cmd("MULTI") == b"+OK\r\n"
    assert r.cmd("SET", "a", "1") == OOM
    # Inside MULTI even a read-only command is refused when over maxmemory.
    assert r.cmd("GET", "a") == OOM
    assert r.cmd("EXEC") == EXECABORT
    got = counts(c)
    assert got["multi"] == (1, 0, 0)
    assert got["set"] == (0, 1, 0)
    assert got["get"] == (0, 1, 0)
    assert got["exec"] == (1, 0, 1)
    assert errorstats(c) == {"EXECABORT": 1, "OOM": 2}
    assert total_errors(c) == 3


def test_exec_of_a_write_transaction_over_maxmemory_is_rejected(c, raw):
    r, ro = raw(), raw()
    c.config_resetstat()
    r.cmd("MULTI")
    assert r.cmd("SET", "a", "1") == b"+QUEUED\r\n"
    assert r.cmd("GET", "a") == b"+QUEUED\r\n"
    ro.cmd("MULTI")
    assert ro.cmd("GET", "a") == b"+QUEUED\r\n"
    # Memory goes over the limit after the commands were queued.
    c.config_set("maxmemory", "1")
    assert r.cmd("EXEC") == (
        b"-EXECABORT Transaction discarded because of: "
        b"OOM command not allowed when used memory > 'maxmemory'.\r\n"
    )
    got = counts(c)
    assert got["exec"] == (0, 1, 0)
    assert "set" not in got and "get" not in got
    assert errorstats(c) == {"EXECABORT": 1}
    # A transaction of read-only commands still runs.
    assert ro.cmd("EXEC") == b"*1\r\n$-1\r\n"
    got = counts(c)
    assert got["exec"] == (1, 1, 0)
    assert got["get"] == (1, 0, 0)


# ------------------------------------------------------- blocking commands


def test_blpop_that_times_out_counts_one_call(c, raw):
    r = raw()
    c.config_resetstat()
    assert r.cmd("BLPOP", "nolist", "0.1") == b"*-1\r\n"
    assert counts(c)["blpop"] == (1, 0, 0)
    assert total_errors(c) == 0


def test_blpop_served_by_a_later_lpush_counts_one_call(c, raw):
    a, b = raw(), raw()
    c.config_resetstat()
    a.send("BLPOP", "l", "0")
    wait_until(lambda: blocked_clients(c) == 1)
    assert b.cmd("LPUSH", "l", "x") == b":1\r\n"
    assert a.read() == b"*2\r\n$1\r\nl\r\n$1\r\nx\r\n"
    got = counts(c)
    assert got["blpop"] == (1, 0, 0)
    assert got["lpush"] == (1, 0, 0)
    assert re.fullmatch(f"p50={NUM3},p99={NUM3},p99.9={NUM3}", latency(c)["blpop"])


def test_blpop_unblocked_with_an_error_is_a_failed_call(c, raw):
    a, b = raw(), raw()
    aid = a.cmd("CLIENT", "ID")[1:-2].decode()
    c.config_resetstat()
    a.send("BLPOP", "l", "0")
    wait_until(lambda: blocked_clients(c) == 1)
    assert b.cmd("CLIENT", "UNBLOCK", aid, "ERROR") == b":1\r\n"
    assert a.read() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert counts(c)["blpop"] == (1, 0, 1)
    assert errorstats(c) == {"UNBLOCKED": 1}
    assert total_errors(c) == 1


# -------------------------------------------------------- INFO sections


@pytest.mark.parametrize("args", [(), ("default",), ("DEFAULT",)])
def test_default_info_has_no_commandstats_or_latencystats(c, args):
    c.execute_command("SET", "k", "v")
    text = info_text(c, *args)
    assert "rejected_calls" not in text
    assert "latency_percentiles_usec" not in text
    hs = headers(text)
    assert "Commandstats" not in hs and "Latencystats" not in hs
    assert "Errorstats" in hs and "Stats" in hs and "Replication" in hs


@pytest.mark.parametrize("args", [("all",), ("everything",), ("ALL",), ("cpu", "all")])
def test_all_and_everything_list_every_section_once(c, args):
    c.execute_command("SET", "k", "v")
    text = info_text(c, *args)
    assert headers(text) == ALL_SECTIONS
    assert "cmdstat_set:calls=1," in text
    assert "rejected_calls" in text
    assert "latency_percentiles_usec_set:" in text
    assert text.count("used_cpu_user_children:") == 1


@pytest.mark.parametrize("name", ["commandstats", "commandSTATS", "COMMANDSTATS"])
def test_commandstats_section_alone_any_case(c, name):
    c.execute_command("SET", "k", "v")
    text = info_text(c, name)
    assert headers(text) == ["Commandstats"]
    assert "rejected_calls" in text
    assert "used_memory" not in text


def test_cpu_default_and_named_sections_come_once_in_server_order(c):
    text = info_text(c, "cpu", "default")
    assert headers(text) == [
        "Server", "Clients", "Memory", "Persistence", "Stats", "Replication",
        "CPU", "Modules", "Errorstats", "Cluster", "Keyspace",
    ]
    assert "rejected_calls" not in text
    assert text.count("used_cpu_user_children:") == 1
    text = info_text(c, "latencystats", "commandstats", "errorstats")
    assert headers(text) == ["Commandstats", "Errorstats", "Latencystats"]


# ------------------------------------------------------------ latencystats


def test_latencystats_lines_for_commands_that_ran(c, raw):
    r = raw()
    r.cmd("SET", "s", "x")
    c.config_resetstat()
    r.cmd("SET", "a", "b")
    r.cmd("GET", "a")
    r.cmd("CLIENT", "ID")
    assert r.cmd("LPUSH", "s", "x").startswith(b"-WRONGTYPE ")
    assert r.cmd("RPUSH", "s").startswith(b"-ERR wrong number of arguments")
    lat = latency(c)
    default = f"p50={NUM3},p99={NUM3},p99.9={NUM3}"
    for name in ["config|resetstat", "set", "get", "client|id", "lpush"]:
        assert re.fullmatch(default, lat[name]), (name, lat[name])
    # A rejected command never ran: no latency line.
    assert "rpush" not in lat
    assert counts(c)["rpush"] == (0, 1, 0)


def test_latency_tracking_off_records_nothing_new(c, raw):
    r = raw()
    c.config_set("latency-tracking", "no")
    c.config_resetstat()
    r.cmd("SET", "a", "b")
    assert info_text(c, "latencystats").split("\r\n")[:2] == ["# Latencystats", ""]
    assert counts(c)["set"] == (1, 0, 0)
    c.config_set("latency-tracking", "yes")
    r.cmd("SET", "a", "b")
    assert re.fullmatch(f"p50={NUM3},p99={NUM3},p99.9={NUM3}", latency(c)["set"])
    c.config_resetstat()
    assert "set" not in latency(c)


def test_latency_percentiles_setting_changes_the_keys(c, raw):
    r = raw()
    assert c.config_get("latency-tracking-info-percentiles") == {
        "latency-tracking-info-percentiles": "50 99 99.9"
    }
    c.config_set("latency-tracking-info-percentiles", "0 50 100")
    assert c.config_get("latency-tracking-info-percentiles") == {
        "latency-tracking-info-percentiles": "0 50 100"
    }
    r.cmd("SET", "a", "b")
    r.cmd("GET", "a")
    lat = latency(c)
    for name in ["set", "get"]:
        assert re.fullmatch(f"p0={NUM3},p50={NUM3},p100={NUM3}", lat[name])
    c.config_set("latency-tracking-info-percentiles", "0.0 50.0 100.0")
    assert c.config_get("latency-tracking-info-percentiles") == {
        "latency-tracking-info-percentiles": "0 50 100"
    }


def test_invalid_latency_percentiles_are_refused_and_keep_the_setting(c, raw):
    r = raw()
    c.config_resetstat()
    for bad in ["10 50 a", "101", "-1"]:
        reply = r.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", bad)
        assert reply.startswith(b"-ERR CONFIG SET failed"), (bad, reply)
        assert c.config_get("latency-tracking-info-percentiles") == {
            "latency-tracking-info-percentiles": "50 99 99.9"
        }
    assert total_errors(c) == 3
    assert errorstats(c) == {"ERR": 3}
    assert counts(c)["config|set"] == (3, 0, 3)
    c.config_resetstat()
    assert errorstats(c) == {}


# ------------------------------------------------------------- replication


def test_replication_fields_for_a_master_without_replicas(c):
    for i in range(10):
        c.set(f"k{i}", "v")
    for text in [info_text(c, "replication"), info_text(c)]:
        f = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                f[k] = v
        assert f["role"] == "master"
        assert f["connected_slaves"] == "0"
        assert f["master_repl_offset"] == "0"
