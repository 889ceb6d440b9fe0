"""CLUSTER, READONLY, READWRITE, ASKING and WAIT, as a Redis 7.0 without
cluster support and without replicas answers them.

Every CLUSTER subcommand, and READONLY, READWRITE and ASKING, reply
`-ERR This instance has cluster support disabled` once the arity and
subcommand checks pass. WAIT replies 0: at once when no replica is asked
for or inside MULTI, otherwise when its timeout ends, the client counting
as blocked meanwhile (INFO, CLIENT LIST, CLIENT UNBLOCK).

The first part states the expected replies (run with AGAINST_REDIS=1 to
check them against redis-server); the second sends the same requests to
ebb-server and redis-server 7.0 and compares the raw replies, RESP2 and
RESP3 (skipped without redis-server).
"""

import time

import pytest
import redis

from conftest import (AGAINST_REDIS, Oracle, Raw, ebb_only, ebb_or_redis, raw_cmd, redis_beside,
                      sha, typed_reply)

DISABLED = b"-ERR This instance has cluster support disabled\r\n"

# Each subcommand with arguments its arity accepts.
SUBCOMMANDS = {
    "addslots": ["1", "2"],
    "addslotsrange": ["1", "5"],
    "bumpepoch": [],
    "count-failure-reports": ["abc"],
    "countkeysinslot": ["7"],
    "delslots": ["1"],
    "delslotsrange": ["1", "5", "7", "9"],
    "failover": ["force"],
    "flushslots": [],
    "forget": ["abc"],
    "getkeysinslot": ["7", "10"],
    "help": [],
    "info": [],
    "keyslot": ["somekey"],
    "links": [],
    "meet": ["127.0.0.1", "7000"],
    "myid": [],
    "nodes": [],
    "replicas": ["abc"],
    "replicate": ["abc"],
    "reset": ["hard"],
    "saveconfig": [],
    "set-config-epoch": ["1"],
    "setslot": ["1", "node", "abc"],
    "shards": [],
    "slaves": ["abc"],
    "slots": [],
}

# Redis 7.0's arity of each subcommand (counting CLUSTER and the
# subcommand's name).
ARITY = {
    "addslots": -3, "addslotsrange": -4, "bumpepoch": 2, "count-failure-reports": 3,
    "countkeysinslot": 3, "delslots": -3, "delslotsrange": -4, "failover": -2,
    "flushslots": 2, "forget": 3, "getkeysinslot": 4, "help": 2, "info": 2,
    "keyslot": 3, "links": 2, "meet": -4, "myid": 2, "nodes": 2, "replicas": 3,
    "replicate": 3, "reset": -2, "saveconfig": 2, "set-config-epoch": 3,
    "setslot": -4, "shards": 2, "slaves": 3, "slots": 2,
}

ADMIN = {
    "addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "delslots",
    "delslotsrange", "failover", "flushslots", "forget", "meet", "replicas", "replicate",
    "reset", "saveconfig", "set-config-epoch", "setslot", "slaves",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module (ebb-server, or redis-server with
    AGAINST_REDIS=1); every test leaves it as it found it."""
    s = ebb_or_redis(AGAINST_REDIS, tmp_path_factory.mktemp("cluster-wait"))
    yield s
    s.stop()


@pytest.fixture
def c(server):
    cl = server.client()
    yield cl
    cl.close()


def conn(server, resp3=False, timeout=5.0):
    return Raw(server.port, resp3=resp3, timeout=timeout)


def client_id(raw):
    return int(raw.cmd("CLIENT", "ID")[1:-2])


def info_clients(raw):
    text = raw.cmd("INFO", "clients").decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def wait_for(pred, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


def blocked_count(raw):
    return int(info_clients(raw)["blocked_clients"])


# ------------------------------------------------------------- CLUSTER


@pytest.mark.parametrize("resp3", [False, True])
@pytest.mark.parametrize("sub", sorted(SUBCOMMANDS))
def test_every_cluster_subcommand_is_disabled(server, sub, resp3):
    r = conn(server, resp3)
    assert r.cmd("CLUSTER", sub, *SUBCOMMANDS[sub]) == DISABLED
    # The subcommand's name is not case-sensitive.
    assert r.cmd("CLUSTER", sub.upper(), *SUBCOMMANDS[sub]) == DISABLED
    r.close()


@pytest.mark.parametrize("sub", sorted(SUBCOMMANDS))
def test_cluster_subcommand_arity(server, sub):
    r = conn(server)
    arity = ARITY[sub]
    wrong = b"-ERR wrong number of arguments for 'cluster|%s' command\r\n" % sub.encode()
    args = ["x"] * (abs(arity) - 2)
    if arity > 0:
        assert r.cmd("CLUSTER", sub, *args, "extra") == wrong
    if abs(arity) > 2:
        assert r.cmd("CLUSTER", sub, *args[:-1]) == wrong
    assert r.cmd("CLUSTER", sub, *args) == DISABLED
    r.close()


def test_cluster_alone_and_unknown_subcommands(server):
    r = conn(server)
    assert r.cmd("CLUSTER") == b"-ERR wrong number of arguments for 'cluster' command\r\n"
    assert r.cmd("CLUSTER", "foo") == b"-ERR unknown subcommand 'foo'. Try CLUSTER HELP.\r\n"
    assert r.cmd("CLUSTER", "FoO", "a", "b") == (
        b"-ERR unknown subcommand 'FoO'. Try CLUSTER HELP.\r\n")
    assert r.cmd("cluster", "HELP") == DISABLED
    assert r.cmd("PING") == b"+PONG\r\n"
    r.close()


@pytest.mark.parametrize("resp3", [False, True])
@pytest.mark.parametrize("name", ["READONLY", "READWRITE", "ASKING", "readonly", "Asking"])
def test_readonly_readwrite_asking(server, name, resp3):
    r = conn(server, resp3)
    assert r.cmd(name) == DISABLED
    assert r.cmd(name, "x") == (
        b"-ERR wrong number of arguments for '%s' command\r\n" % name.lower().encode())
    r.close()


def test_cluster_commands_queue_in_multi_and_fail_at_exec(server):
    r = conn(server)
    assert r.cmd("MULTI") == b"+OK\r\n"
    assert r.cmd("CLUSTER", "INFO") == b"+QUEUED\r\n"
    assert r.cmd("READONLY") == b"+QUEUED\r\n"
    assert r.cmd("EXEC") == b"*2\r\n" + DISABLED * 2
    # An arity error while queuing aborts the transaction, as for any command.
    r.cmd("MULTI")
    assert r.cmd("CLUSTER", "INFO", "x").startswith(b"-ERR wrong number of arguments")
    assert r.cmd("EXEC").startswith(b"-EXECABORT")
    r.close()


def test_cluster_commands_in_scripts(c):
    script = "return redis.call('cluster', 'info')"
    with pytest.raises(redis.ResponseError) as e:
        c.eval(script, 0)
    assert str(e.value) == (
        f"This instance has cluster support disabled script: {sha(script)}, on @user_script:1.")
    # CLUSTER RESET is the one subcommand flagged noscript.
    script = "return redis.call('cluster', 'reset')"
    with pytest.raises(redis.ResponseError) as e:
        c.eval(script, 0)
    assert str(e.value) == (
        f"This Redis command is not allowed from script script: {sha(script)}, on @user_script:1.")
    assert c.eval("return redis.pcall('readonly')['err']", 0) == (
        "ERR This instance has cluster support disabled")
    assert c.eval("return redis.pcall('cluster', 'reset')['err']", 0) == (
        "ERR This Redis command is not allowed from script")
    assert c.eval("return redis.pcall('cluster', 'nope')['err']", 0) == (
        "ERR Unknown Redis command called from script")
    assert c.eval("return redis.pcall('asking', 'x')['err']", 0) == (
        "ERR Wrong number of args calling Redis command from script")


# ---------------------------------------------------------------- WAIT


@pytest.mark.parametrize("resp3", [False, True])
# (A count that wraps to 0 or below as a C int is met at once, as in Redis.)
@pytest.mark.parametrize("args", [["0", "0"], ["0", "100000"], ["-1", "0"], ["-5", "7"],
                                  ["2147483648", "300"], ["4294967296", "300"],
                                  ["9223372036854775807", "300"]])
def test_wait_for_no_replica_answers_at_once(server, args, resp3):
    r = conn(server, resp3, timeout=1.0)
    start = time.time()
    assert r.cmd("WAIT", *args) == b":0\r\n"
    assert time.time() - start < 0.5
    r.close()


def test_wait_blocks_until_its_timeout(server):
    r = conn(server)
    start = time.time()
    assert r.cmd("WAIT", "1", "100") == b":0\r\n"
    took = time.time() - start
    # Redis checks timeouts in its cron (up to 100 ms late at hz 10).
    assert 0.095 <= took < 1.5, took
    assert r.cmd("PING") == b"+PONG\r\n"
    r.close()


@pytest.mark.parametrize("args, error", [
    (["x", "0"], "ERR value is not an integer or out of range"),
    (["1.0", "0"], "ERR value is not an integer or out of range"),
    (["99999999999999999999", "0"], "ERR value is not an integer or out of range"),
    (["x", "-1"], "ERR value is not an integer or out of range"),
    (["1", "-1"], "ERR timeout is negative"),
    (["0", "-1"], "ERR timeout is negative"),
    (["1", "1.5"], "ERR timeout is not an integer or out of range"),
    (["1", "abc"], "ERR timeout is not an integer or out of range"),
    (["0", "-0"], "ERR timeout is not an integer or out of range"),
    (["0", "+5"], "ERR timeout is not an integer or out of range"),
    (["0", "99999999999999999999"], "ERR timeout is not an integer or out of range"),
])
def test_wait_bad_arguments(server, args, error):
    r = conn(server, timeout=1.0)
    assert r.cmd("WAIT", *args) == b"-" + error.encode() + b"\r\n"
    r.close()


def test_wait_arity(server):
    r = conn(server)
    for args in ([], ["1"], ["1", "2", "3"]):
        assert r.cmd("WAIT", *args) == b"-ERR wrong number of arguments for 'wait' command\r\n"
    r.close()


def test_wait_inside_multi_answers_at_once(server):
    r = conn(server, timeout=1.0)
    assert r.cmd("MULTI") == b"+OK\r\n"
    assert r.cmd("WAIT", "5", "0") == b"+QUEUED\r\n"
    assert r.cmd("WAIT", "x", "0") == b"+QUEUED\r\n"
    assert r.cmd("WAIT", "1", "-1") == b"+QUEUED\r\n"
    start = time.time()
    assert r.cmd("EXEC") == (
        b"*3\r\n:0\r\n-ERR value is not an integer or out of range\r\n"
        b"-ERR timeout is negative\r\n")
    assert time.time() - start < 0.5
    r.close()


def test_wait_inside_eval_is_refused(c):
    script = "return redis.call('wait', '0', '0')"
    with pytest.raises(redis.ResponseError) as e:
        c.eval(script, 0)
    assert str(e.value) == (
        f"This Redis command is not allowed from script script: {sha(script)}, on @user_script:1.")
    assert c.eval("return redis.pcall('wait', '1', '0')['err']", 0) == (
        "ERR This Redis command is not allowed from script")


def test_blocked_wait_counts_as_blocked_and_client_unblock_ends_it(server):
    waiter = conn(server)
    other = conn(server)
    wid = client_id(waiter)
    assert other.cmd("CLIENT", "UNBLOCK", wid) == b":0\r\n"  # not blocked yet
    waiter.send("WAIT", "1", "0")
    wait_for(lambda: blocked_count(other) == 1)
    fields = info_clients(other)
    assert fields["clients_in_timeout_table"] == "0"  # no timeout: waits for ever
    line = next(x for x in other.cmd("CLIENT", "LIST").decode().split("\n") if f"id={wid} " in x)
    assert " flags=b " in line and " cmd=wait " in line
    # TIMEOUT (the default): WAIT's reply on timeout, the count of replicas.
    assert other.cmd("CLIENT", "UNBLOCK", wid) == b":1\r\n"
    assert waiter.read() == b":0\r\n"
    assert blocked_count(other) == 0
    waiter.send("WAIT", "2", "0")
    wait_for(lambda: blocked_count(other) == 1)
    assert other.cmd("CLIENT", "UNBLOCK", wid, "TIMEOUT") == b":1\r\n"
    assert waiter.read() == b":0\r\n"
    waiter.send("WAIT", "1", "100000")
    wait_for(lambda: blocked_count(other) == 1)
    assert info_clients(other)["clients_in_timeout_table"] == "1"
    assert other.cmd("CLIENT", "UNBLOCK", wid, "ERROR") == b":1\r\n"
    assert waiter.read() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    assert info_clients(other)["clients_in_timeout_table"] == "0"
    assert other.cmd("CLIENT", "UNBLOCK", wid) == b":0\r\n"
    assert other.cmd("CLIENT", "UNBLOCK", wid, "nope") == (
        b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n")
    assert other.cmd("CLIENT", "UNBLOCK", "abc", "nope") == (
        b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n")
    # The connection goes on as before.
    assert waiter.cmd("PING") == b"+PONG\r\n"
    assert blocked_count(other) == 0
    waiter.close()
    other.close()


def test_requests_sent_behind_a_blocked_wait_run_after_it(server):
    r = conn(server)
    other = conn(server)
    rid = client_id(r)
    r.send("WAIT", "1", "0")
    r.send("PING")
    r.send("ECHO", "after")
    wait_for(lambda: blocked_count(other) == 1)
    other.cmd("CLIENT", "UNBLOCK", rid)
    assert r.read() == b":0\r\n"
    assert r.read() == b"+PONG\r\n"
    assert r.read() == b"$5\r\nafter\r\n"
    # A pipeline: the timed WAIT answers, then what follows it.
    r.s.sendall(b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$2\r\n50\r\n*1\r\n$4\r\nPING\r\n")
    assert r.read() == b":0\r\n"
    assert r.read() == b"+PONG\r\n"
    r.close()
    other.close()


def test_a_blocked_wait_client_going_away_is_no_longer_blocked(server):
    other = conn(server)
    gone = conn(server)
    gone.send("WAIT", "1", "0")
    wait_for(lambda: blocked_count(other) == 1)
    # (Raw reads through a file object, which keeps the socket open.)
    gone.f.close()
    gone.close()
    wait_for(lambda: blocked_count(other) == 0)
    killed = conn(server)
    kid = client_id(killed)
    killed.send("WAIT", "3", "0")
    wait_for(lambda: blocked_count(other) == 1)
    assert other.cmd("CLIENT", "KILL", "ID", kid) == b":1\r\n"
    wait_for(lambda: blocked_count(other) == 0)
    killed.close()
    other.close()


def test_many_clients_wait_at_once(server):
    other = conn(server)
    waiters = [conn(server) for _ in range(5)]
    start = time.time()
    for w in waiters:
        w.send("WAIT", "1", "200")
    replies = [w.read() for w in waiters]
    assert replies == [b":0\r\n"] * 5
    assert time.time() - start < 2.0
    assert blocked_count(other) == 0
    for w in waiters + [other]:
        w.close()


# ----------------------------------------------------- tables and ACL


def test_command_info_entries(c):
    info = {x[0]: x for x in raw_cmd(c, "COMMAND", "INFO", "readonly", "readwrite", "asking", "wait")}
    assert info["readonly"][1:7] == [1, ["loading", "stale", "fast"], 0, 0, 0, ["@fast", "@connection"]]
    assert info["readwrite"][1:7] == [1, ["loading", "stale", "fast"], 0, 0, 0, ["@fast", "@connection"]]
    assert info["asking"][1:7] == [1, ["fast"], 0, 0, 0, ["@fast", "@connection"]]
    assert info["wait"][1:8] == [
        3, ["noscript"], 0, 0, 0, ["@slow", "@connection"],
        ["request_policy:all_shards", "response_policy:agg_min"]]
    [cluster] = raw_cmd(c, "COMMAND", "INFO", "cluster")
    assert cluster[1:8] == [-2, [], 0, 0, 0, ["@slow"], []]
    subs = {s[0]: s for s in cluster[9]}
    assert sorted(subs) == sorted(f"cluster|{s}" for s in SUBCOMMANDS)
    for name, sub in SUBCOMMANDS.items():
        s = subs[f"cluster|{name}"]
        assert s[1] == ARITY[name], name
        if name in ADMIN:
            assert "admin" in s[2] and s[6] == ["@admin", "@slow", "@dangerous"], name
        else:
            assert "admin" not in s[2] and s[6] == ["@slow"], name
    assert subs["cluster|reset"][2] == ["admin", "noscript", "stale"]
    assert subs["cluster|help"][2] == ["loading", "stale"]
    assert subs["cluster|addslots"][2] == ["admin", "stale", "no_async_loading"]
    assert subs["cluster|nodes"][7] == ["nondeterministic_output"]


def as_dict(v):
    """A map reply as a dict, whether it came as a RESP3 map or a RESP2
    flat array."""
    return v if isinstance(v, dict) else dict(zip(v[::2], v[1::2]))


def test_command_docs_entries(c):
    docs = as_dict(raw_cmd(c, "COMMAND", "DOCS", "cluster", "wait", "asking"))
    wait = as_dict(docs["wait"])
    assert (wait["since"], wait["group"]) == ("3.0.0", "generic")
    assert [as_dict(a) for a in wait["arguments"]] == [
        {"name": "numreplicas", "type": "integer"}, {"name": "timeout", "type": "integer"}]
    assert as_dict(docs["asking"]) == {
        "summary": "Sent by cluster clients after an -ASK redirect", "since": "3.0.0",
        "group": "cluster"} | ({"complexity": "O(1)"} if AGAINST_REDIS else {})
    cluster = as_dict(docs["cluster"])
    assert (cluster["summary"], cluster["group"]) == ("A container for cluster commands", "cluster")
    subs = as_dict(cluster["subcommands"])
    assert sorted(subs) == sorted(f"cluster|{s}" for s in SUBCOMMANDS)
    setslot = as_dict(subs["cluster|setslot"])
    choice = as_dict(setslot["arguments"][1])
    assert choice["name"] == "subcommand" and choice["type"] == "oneof"
    tokens = [as_dict(a)["token"] for a in choice["arguments"]]
    assert tokens == ["IMPORTING", "MIGRATING", "NODE", "STABLE"]
    ranges = as_dict(as_dict(subs["cluster|addslotsrange"])["arguments"][0])
    assert (ranges["name"], ranges["type"]) == ("start-slot_end-slot", "block")
    assert as_dict(subs["cluster|info"])["since"] == "3.0.0"
    assert as_dict(subs["cluster|shards"])["since"] == "7.0.0"


def test_acl_categories(c):
    def cat(name):
        return set(c.execute_command("ACL", "CAT", name))

    assert {"asking", "readonly", "readwrite", "wait"} <= cat("connection")
    assert not any(n.startswith("cluster") for n in cat("connection"))
    assert {"asking", "readonly", "readwrite"} <= cat("fast")
    slow = cat("slow")
    assert {"wait", "cluster"} <= slow
    assert {f"cluster|{s}" for s in SUBCOMMANDS} <= slow
    assert {n for n in cat("admin") if n.startswith("cluster|")} == {f"cluster|{s}" for s in ADMIN}
    assert {n for n in cat("dangerous") if n.startswith("cluster|")} == {
        f"cluster|{s}" for s in ADMIN}
    assert "wait" not in cat("keyspace")


def test_acl_rules_on_cluster_subcommands(server, c):
    c.execute_command("ACL", "SETUSER", "clu", "on", "nopass", "+cluster|info", "+wait")
    try:
        u = server.client()
        u.execute_command("AUTH", "clu", "x")
        with pytest.raises(redis.ResponseError, match="cluster support disabled"):
            u.execute_command("CLUSTER", "INFO")
        with pytest.raises(redis.exceptions.NoPermissionError, match="'cluster\\|nodes' command"):
            u.execute_command("CLUSTER", "NODES")
        with pytest.raises(redis.exceptions.NoPermissionError, match="'readonly' command"):
            u.execute_command("READONLY")
        assert u.execute_command("WAIT", "0", "0") == 0
        u.close()
        assert c.execute_command("ACL", "DRYRUN", "clu", "CLUSTER", "INFO") == "OK"
        assert "no permissions" in c.execute_command("ACL", "DRYRUN", "clu", "ASKING")
    finally:
        c.execute_command("ACL", "DELUSER", "clu")


@ebb_only
def test_command_count_and_list(c):
    names = raw_cmd(c, "COMMAND", "LIST")
    top = [n for n in names if "|" not in n]
    assert raw_cmd(c, "COMMAND", "COUNT") == len(top)
    assert {"cluster", "readonly", "readwrite", "asking", "wait"} <= set(top)
    assert sorted(raw_cmd(c, "COMMAND", "LIST", "FILTERBY", "PATTERN", "cluster|*")) == sorted(
        f"cluster|{s}" for s in SUBCOMMANDS)
    assert "cluster|getkeysinslot" in raw_cmd(c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "slow")


def test_commandstats_of_cluster_and_wait(c):
    c.config_resetstat()
    for args in (["CLUSTER", "INFO"], ["CLUSTER", "INFO", "x"], ["WAIT", "x", "0"]):
        with pytest.raises(redis.ResponseError):
            c.execute_command(*args)
    assert c.execute_command("WAIT", "0", "0") == 0
    stats = c.info("commandstats")
    # Refused for its arity: a rejected call of the subcommand, not a call.
    assert stats["cmdstat_cluster|info"]["calls"] == 1
    assert stats["cmdstat_cluster|info"]["failed_calls"] == 1
    assert stats["cmdstat_cluster|info"]["rejected_calls"] == 1
    assert stats["cmdstat_wait"]["calls"] == 2
    assert stats["cmdstat_wait"]["failed_calls"] == 1


# -------------------------------------------------- side by side with Redis


@pytest.fixture(scope="module")
def oracle(server, tmp_path_factory):
    red = redis_beside(tmp_path_factory, "cluster-wait-redis")
    yield Oracle(server.port, red.port)
    red.stop()


DETERMINISTIC = [
    ["CLUSTER"],
    ["CLUSTER", "foo"],
    ["CLUSTER", "Foo", "bar"],
    ["READONLY"], ["READONLY", "x"], ["READWRITE"], ["READWRITE", "x", "y"],
    ["ASKING"], ["ASKING", "x"],
    ["WAIT"], ["WAIT", "1"], ["WAIT", "0", "0"], ["WAIT", "-3", "10"],
    ["WAIT", "x", "-1"], ["WAIT", "1", "-1"], ["WAIT", "1", "1.5"], ["WAIT", "1", "0x10"],
    ["WAIT", "1", "100"],
    ["COMMAND", "INFO", "readonly", "readwrite", "asking", "wait", "cluster|nope"],
    ["COMMAND", "GETKEYS", "cluster", "info"],
    ["COMMAND", "GETKEYS", "cluster", "keyslot", "k"],
    ["COMMAND", "GETKEYS", "cluster", "nope"],
    ["COMMAND", "GETKEYS", "wait", "0", "0"],
    ["COMMAND", "GETKEYSANDFLAGS", "asking"],
    ["EVAL", "return redis.call('wait', '0', '0')", "0"],
    ["EVAL", "return redis.pcall('wait', '0', '0')", "0"],
    ["EVAL", "return redis.call('cluster', 'info')", "0"],
    ["EVAL", "return redis.call('cluster', 'reset')", "0"],
    ["EVAL", "return redis.pcall('cluster', 'help')", "0"],
    ["EVAL", "return redis.pcall('readwrite')", "0"],
    ["EVAL", "return redis.pcall('cluster')", "0"],
    ["CLIENT", "UNBLOCK", "abc", "nope"],
    ["CLIENT", "UNBLOCK", "abc"],
    ["CLIENT", "UNBLOCK", "123456", "error"],
]
for _sub, _args in SUBCOMMANDS.items():
    DETERMINISTIC.append(["CLUSTER", _sub, *_args])
    DETERMINISTIC.append(["CLUSTER", _sub] + ["x"] * (abs(ARITY[_sub]) - 2) + ["y"] * 30)
    DETERMINISTIC.append(["COMMAND", "INFO", f"cluster|{_sub}"])
    if abs(ARITY[_sub]) > 2:
        DETERMINISTIC.append(["CLUSTER", _sub] + ["x"] * (abs(ARITY[_sub]) - 3))


@pytest.mark.parametrize("resp3", [False, True])
def test_replies_match_redis(oracle, resp3):
    diffs = []
    for args in DETERMINISTIC:
        ours, theirs = oracle.both(*args, resp3=resp3)
        if ours != theirs:
            diffs.append((args, ours, theirs))
    assert not diffs


@pytest.mark.parametrize("resp3", [False, True])
def test_transactions_match_redis(oracle, resp3):
    for port_replies in zip(*[_multi(port, resp3) for port in oracle.ports]):
        assert port_replies[0] == port_replies[1]


def _multi(port, resp3):
    r = Raw(port, resp3=resp3, timeout=5.0)
    out = [r.cmd("MULTI")]
    for args in (["WAIT", "3", "0"], ["WAIT", "x", "0"], ["CLUSTER", "INFO"], ["ASKING"]):
        out.append(r.cmd(*args))
    out.append(r.cmd("EXEC"))
    out.append(r.cmd("MULTI"))
    out.append(r.cmd("CLUSTER", "MYID", "x"))
    out.append(r.cmd("EXEC"))
    r.close()
    return out


def _unblock_sequence(port, resp3):
    waiter = Raw(port, resp3=resp3, timeout=5.0)
    other = Raw(port, timeout=5.0)
    wid = client_id(waiter)
    out = []
    for reason in ([], ["TIMEOUT"], ["error"]):
        waiter.send("WAIT", "1", "0")
        wait_for(lambda: blocked_count(other) == 1)
        out.append(other.cmd("CLIENT", "UNBLOCK", wid, *reason))
        out.append(waiter.read())
        out.append(blocked_count(other))
    out.append(other.cmd("CLIENT", "UNBLOCK", wid))
    out.append(waiter.cmd("PING"))
    waiter.close()
    other.close()
    return out


@pytest.mark.parametrize("resp3", [False, True])
def test_client_unblock_of_wait_matches_redis(oracle, resp3):
    ebb_port, redis_port = oracle.ports
    assert _unblock_sequence(ebb_port, resp3) == _unblock_sequence(redis_port, resp3)


@pytest.mark.parametrize("resp3", [False, True])
def test_command_info_of_cluster_matches_redis(oracle, resp3):
    ours, theirs = (typed_reply(x) for x in oracle.both("COMMAND", "INFO", "cluster", resp3=resp3))
    # The container's subcommands, in Redis's hash-table order: compared sorted.
    for reply in (ours, theirs):
        entry = reply[1][0][1]
        entry[9] = (entry[9][0], sorted(entry[9][1], key=repr))
    assert ours == theirs


def _docs_without(reply):
    """COMMAND DOCS (RESP3) without what ebb does not report for any
    command: complexity, history, doc flags, deprecation, and the version
    that introduced an argument."""
    drop = {b"complexity", b"history", b"doc_flags", b"deprecated_since", b"replaced_by"}

    def clean(v, in_args=False):
        kind, items = v
        if kind == b"%":
            return (kind, [
                (k, clean(x, in_args or k[1] == b"arguments"))
                for k, x in items
                if k[1] not in drop and not (in_args and k[1] == b"since")
            ])
        if kind in (b"*", b"~"):
            return (kind, [clean(x, in_args) for x in items])
        return v

    return clean(reply)


def test_command_docs_match_redis(oracle):
    for names in (["cluster"], ["wait", "readonly", "readwrite", "asking"]):
        ours, theirs = (_docs_without(typed_reply(x))
                        for x in oracle.both("COMMAND", "DOCS", *names, resp3=True))
        assert ours == theirs, names


def test_acl_cat_membership_matches_redis(oracle):
    ebb_port, redis_port = oracle.ports
    ours_all = set(raw_cmd(redis.Redis(port=ebb_port, decode_responses=True), "COMMAND", "LIST"))
    for cat in ("connection", "slow", "fast", "admin", "dangerous", "keyspace"):
        got = {}
        for port in (ebb_port, redis_port):
            r = redis.Redis(port=port, decode_responses=True)
            names = set(r.execute_command("ACL", "CAT", cat))
            got[port] = {n for n in names if n in ours_all and (
                n.startswith("cluster") or n in ("readonly", "readwrite", "asking", "wait"))}
            r.close()
        assert got[ebb_port] == got[redis_port], cat


def test_blocked_wait_info_and_client_list_match_redis(oracle):
    seen = []
    for port in oracle.ports:
        waiter = Raw(port, timeout=5.0)
        other = Raw(port, timeout=5.0)
        wid = client_id(waiter)
        waiter.send("WAIT", "1", "60000")
        wait_for(lambda: blocked_count(other) == 1)
        fields = info_clients(other)
        line = next(x for x in other.cmd("CLIENT", "LIST").decode().split("\n")
                    if f"id={wid} " in x)
        kept = [f for f in line.split() if f.split("=")[0] in ("flags", "cmd", "db", "multi")]
        other.cmd("CLIENT", "UNBLOCK", wid)
        seen.append((fields["blocked_clients"], fields["clients_in_timeout_table"], kept,
                     waiter.read()))
        waiter.close()
        other.close()
    assert seen[0] == seen[1]
