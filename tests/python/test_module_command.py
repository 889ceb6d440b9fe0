"""MODULE, as a Redis 7.0 with no module loaded answers it.

ebb-server cannot load Redis modules (its own module, crates/ebb-module,
is one for redis-server). MODULE LIST is empty; MODULE LOAD and LOADEX
fail as a load fails in Redis (`ERR Error loading the extension. Please
check the server logs.`, and a warning in the log naming the path);
MODULE UNLOAD finds no module of that name. `enable-module-command`
(default `no`) guards LOAD, LOADEX and UNLOAD, not HELP and LIST, after
the arity and unknown-subcommand checks, as in Redis 7.0.

The first part states the expected replies (run with AGAINST_REDIS=1 to
check them against redis-server); the second sends the same requests to
ebb-server and redis-server 7.0 and compares the raw replies, RESP2 and
RESP3 (skipped without redis-server).
"""

import os
import shutil
import socket
import subprocess

import pytest
import redis

from conftest import (AGAINST_REDIS, BIN, EbbServer, Oracle, Raw, RedisServer, ebb_only,
                      outside_ip, raw_cmd, redis_beside, typed_reply, wait_until)

LOAD_FAILED = b"-ERR Error loading the extension. Please check the server logs.\r\n"
NO_SUCH_MODULE = b"-ERR Error unloading module: no such module with that name\r\n"
NOT_ALLOWED = (
    b'-ERR MODULE command not allowed. If the enable-module-command option is set to "local", '
    b"you can run it from a local connection, otherwise you need to set this option in the "
    b"configuration file, and then restart the server.\r\n")

HELP = [
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and "
    "optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
]

# Redis 7.0's arity of each subcommand (counting MODULE and the name).
ARITY = {"help": 2, "list": 2, "load": -3, "loadex": -3, "unload": 3}
PROTECTED = {"load", "loadex", "unload"}


def start(tmp, *args):
    """ebb-server (or redis-server with AGAINST_REDIS=1) with `args`."""
    if AGAINST_REDIS:
        return RedisServer(str(tmp), *args)
    return EbbServer("--dir", str(tmp), *args, cwd=str(tmp))


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A server that allows MODULE to everyone and logs to a file."""
    d = tmp_path_factory.mktemp("module-cmd")
    log = d / "server.log"
    s = start(d, "--enable-module-command", "yes", "--logfile", str(log))
    s.log = log
    s.dir = d
    yield s
    s.stop()


def conn(server, resp3=False):
    return Raw(server.port, resp3=resp3, timeout=5.0)


def log_text(server):
    return server.log.read_text(errors="replace")


def raw_at(host, port, *args):
    c = socket.create_connection((host, port), timeout=5)
    try:
        f = c.makefile("rb")
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        c.sendall(out)
        return f.readline()
    finally:
        c.close()


# ------------------------------------------------- enable-module-command


def test_default_refuses_load_loadex_and_unload_even_locally(tmp_path):
    s = start(tmp_path)
    try:
        r = conn(s)
        assert s.client().config_get("enable-module-command") == {"enable-module-command": "no"}
        for args in (["LOAD", "/no/such.so"], ["load", "/x", "a", "b"], ["LOADEX", "/x"],
                     ["LOADEX", "/x", "CONFIG", "a"], ["UNLOAD", "m"], ["Unload", "m"]):
            assert r.cmd("MODULE", *args) == NOT_ALLOWED, args
        # HELP and LIST are not guarded.
        assert r.cmd("MODULE", "LIST") == b"*0\r\n"
        assert r.cmd("MODULE", "HELP").startswith(b"*11\r\n+MODULE <subcommand>")
        # Arity and unknown subcommands are checked first.
        assert r.cmd("MODULE", "LOAD") == (
            b"-ERR wrong number of arguments for 'module|load' command\r\n")
        assert r.cmd("MODULE", "UNLOAD", "a", "b") == (
            b"-ERR wrong number of arguments for 'module|unload' command\r\n")
        assert r.cmd("MODULE", "LOADX", "/x") == (
            b"-ERR unknown subcommand 'LOADX'. Try MODULE HELP.\r\n")
        # Refused before a transaction queues it.
        assert r.cmd("MULTI") == b"+OK\r\n"
        assert r.cmd("MODULE", "LIST") == b"+QUEUED\r\n"
        assert r.cmd("MODULE", "LOAD", "/x") == NOT_ALLOWED
        assert r.cmd("EXEC") == (
            b"-EXECABORT Transaction discarded because of previous errors.\r\n")
        stats = s.client().info("commandstats")
        assert stats["cmdstat_module|load"]["calls"] == 0
        assert stats["cmdstat_module|load"]["rejected_calls"] == 4
        assert stats["cmdstat_module|unload"]["rejected_calls"] == 3
        r.close()
    finally:
        s.stop()


@pytest.mark.parametrize("value", ["local", "LOCAL"])
def test_local_allows_loopback_clients_only(tmp_path, value):
    ip = outside_ip()
    s = start(tmp_path, "--enable-module-command", value,
              "--bind", "0.0.0.0", "--protected-mode", "no")
    try:
        assert s.client().config_get("enable-module-command") == {
            "enable-module-command": "local"}
        assert raw_at("127.0.0.1", s.port, "MODULE", "LOAD", "/no/such.so") == LOAD_FAILED
        assert raw_at("127.0.0.1", s.port, "MODULE", "UNLOAD", "m") == NO_SUCH_MODULE
        if ip is None:
            pytest.skip("no non-loopback address")
        assert raw_at(ip, s.port, "MODULE", "LOAD", "/no/such.so") == NOT_ALLOWED
        assert raw_at(ip, s.port, "MODULE", "UNLOAD", "m") == NOT_ALLOWED
        assert raw_at(ip, s.port, "MODULE", "LIST") == b"*0\r\n"
    finally:
        s.stop()


def test_yes_allows_every_client(tmp_path):
    ip = outside_ip()
    if ip is None:
        pytest.skip("no non-loopback address")
    s = start(tmp_path, "--enable-module-command", "yes",
              "--bind", "0.0.0.0", "--protected-mode", "no")
    try:
        assert raw_at(ip, s.port, "MODULE", "LOAD", "/no/such.so") == LOAD_FAILED
        assert raw_at(ip, s.port, "MODULE", "LOADEX", "/no/such.so") == LOAD_FAILED
        assert raw_at(ip, s.port, "MODULE", "UNLOAD", "m") == NO_SUCH_MODULE
    finally:
        s.stop()


@ebb_only
def test_option_takes_redis_values_and_is_immutable(tmp_path, logged):
    p = subprocess.run([BIN, "--port", "0", "--enable-module-command", "maybe"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert "argument(s) must be one of the following: no, yes, local" in p.stdout + p.stderr
    c = logged.client()
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("enable-module-command", "no")
    assert c.config_get("enable-module-command") == {"enable-module-command": "yes"}
    # Acted on, so not logged as an option without effect.
    assert "enable-module-command" not in log_text(logged)


# ------------------------------------------------------------ the replies


@pytest.mark.parametrize("resp3", [False, True])
def test_list_is_empty(logged, resp3):
    r = conn(logged, resp3)
    assert r.cmd("MODULE", "LIST") == b"*0\r\n"
    assert r.cmd("module", "list") == b"*0\r\n"
    r.close()


def test_load_of_a_missing_file_fails_and_logs_the_path(logged):
    r = conn(logged)
    path = str(logged.dir / "missing.so")
    assert r.cmd("MODULE", "LOAD", path) == LOAD_FAILED
    assert r.cmd("MODULE", "LOAD", path, "arg1", "arg2") == LOAD_FAILED
    wait_until(lambda: f"Module {path} failed to load" in log_text(logged))
    assert r.cmd("MODULE", "LIST") == b"*0\r\n"
    r.close()


@pytest.mark.parametrize("executable", [True, False])
def test_load_of_a_file_that_is_no_module_fails(logged, executable):
    path = logged.dir / f"not-a-module-{executable}.so"
    path.write_text("hello\n")
    os.chmod(path, 0o755 if executable else 0o644)
    r = conn(logged)
    assert r.cmd("MODULE", "LOAD", str(path)) == LOAD_FAILED
    assert r.cmd("MODULE", "LOADEX", str(path), "ARGS", "x") == LOAD_FAILED
    wait_until(lambda: log_text(logged).count(f"Module {path} failed to load") == 2)
    assert r.cmd("MODULE", "LIST") == b"*0\r\n"
    r.close()


@ebb_only
def test_the_warning_says_ebb_loads_no_redis_module(logged):
    r = conn(logged)
    path = str(logged.dir / "some-module.so")
    assert r.cmd("MODULE", "LOAD", path) == LOAD_FAILED
    wait_until(lambda: f"Module {path} failed to load: ebb-server does not load Redis modules"
               in log_text(logged))
    line = next(x for x in log_text(logged).splitlines() if path in x)
    assert "WARN" in line
    # A path cannot forge a log line of its own.
    assert r.cmd("MODULE", "LOAD", "/x\nforged line") == LOAD_FAILED
    wait_until(lambda: "Module /x\\nforged line failed" in log_text(logged))
    assert not any(x.startswith("forged line") for x in log_text(logged).splitlines())
    r.close()


# (arguments after the path, the notice Redis logs, or None: no syntax error)
LOADEX_CASES = [
    ([], None),
    (["CONFIG", "name", "value"], None),
    (["config", "a", "1", "Config", "b", "2", "ARGS", "x", "y"], None),
    (["ARGS"], None),
    (["ARGS", "CONFIG", "junk"], None),
    (["CONFIG"], "CONFIG specified without name value pair"),
    (["CONFIG", "name"], "CONFIG specified without name value pair"),
    (["CONFIG", "a", "1", "CONFIG", "b"], "CONFIG specified without name value pair"),
    (["foo"], "Syntax Error from arguments to loadex around foo."),
    (["CONFIG", "a", "1", "bar", "ARGS"], "Syntax Error from arguments to loadex around bar."),
]


@pytest.mark.parametrize("case", range(len(LOADEX_CASES)))
def test_loadex_reads_its_arguments_before_loading(logged, case):
    rest, notice = LOADEX_CASES[case]
    path = str(logged.dir / f"loadex-{case}.so")
    r = conn(logged)
    assert r.cmd("MODULE", "LOADEX", path, *rest) == LOAD_FAILED
    r.close()
    if notice is None:
        wait_until(lambda: f"Module {path} failed to load" in log_text(logged))
    else:
        # A syntax error is logged, and no load is tried.
        wait_until(lambda: notice in log_text(logged))
        assert f"Module {path} failed" not in log_text(logged)


@pytest.mark.parametrize("name", ["m", "ebb", "/tmp/x.so", ""])
def test_unload_finds_no_module(logged, name):
    r = conn(logged)
    assert r.cmd("MODULE", "UNLOAD", name) == NO_SUCH_MODULE
    r.close()


@pytest.mark.parametrize("resp3", [False, True])
def test_help(logged, resp3):
    c = logged.client(protocol=3 if resp3 else 2)
    assert c.execute_command("MODULE", "HELP") == HELP
    r = conn(logged, resp3)
    raw = r.cmd("module", "help")
    assert raw == b"*11\r\n" + b"".join(b"+%s\r\n" % line.encode() for line in HELP)
    r.close()


@pytest.mark.parametrize("sub", sorted(ARITY))
def test_subcommand_arity(logged, sub):
    r = conn(logged)
    arity = ARITY[sub]
    wrong = b"-ERR wrong number of arguments for 'module|%s' command\r\n" % sub.encode()
    args = ["x"] * (abs(arity) - 2)
    if arity > 0:
        assert r.cmd("MODULE", sub, *args, "extra") == wrong
    if abs(arity) > 2:
        assert r.cmd("MODULE", sub, *args[:-1]) == wrong
    assert not r.cmd("MODULE", sub.upper(), *args).startswith(b"-ERR wrong number")
    r.close()


def test_module_alone_and_unknown_subcommands(logged):
    r = conn(logged)
    assert r.cmd("MODULE") == b"-ERR wrong number of arguments for 'module' command\r\n"
    assert r.cmd("MODULE", "foo") == b"-ERR unknown subcommand 'foo'. Try MODULE HELP.\r\n"
    assert r.cmd("MODULE", "Foo", "bar") == b"-ERR unknown subcommand 'Foo'. Try MODULE HELP.\r\n"
    assert r.cmd("MODULE", "lists") == b"-ERR unknown subcommand 'lists'. Try MODULE HELP.\r\n"
    r.close()


def test_module_in_transactions_and_scripts(logged):
    r = conn(logged)
    assert r.cmd("MULTI") == b"+OK\r\n"
    for args in (["LIST"], ["LOAD", "/x"], ["UNLOAD", "m"]):
        assert r.cmd("MODULE", *args) == b"+QUEUED\r\n"
    assert r.cmd("EXEC") == b"*3\r\n*0\r\n" + LOAD_FAILED + NO_SUCH_MODULE
    c = logged.client()
    assert c.eval("return redis.call('module', 'help')", 0) == HELP
    for sub in ("list", "load", "loadex", "unload"):
        args = ", '/x'" if sub != "list" else ""
        with pytest.raises(redis.ResponseError, match="not allowed from script"):
            c.eval(f"return redis.call('module', '{sub}'{args})", 0)
    r.close()


# ------------------------------------------------------------------- INFO


def test_info_has_an_empty_modules_section(logged):
    r = conn(logged)
    assert r.cmd("INFO", "modules") == b"$11\r\n# Modules\r\n\r\n"
    for section in ([], ["default"], ["all"], ["everything"]):
        text = r.cmd("INFO", *section).decode()
        headers = [x for x in text.split("\r\n") if x.startswith("#")]
        assert "# Modules\r\n\r\n#" in text, section
        assert headers.index("# Modules") == headers.index("# CPU") + 1, section
    r.close()


# ----------------------------------------------------- tables and ACL


def test_command_info_entries(logged):
    c = logged.client()
    [module] = raw_cmd(c, "COMMAND", "INFO", "module")
    assert module[:8] == ["module", -2, [], 0, 0, 0, ["@slow"], []]
    subs = {s[0]: s for s in module[9]}
    assert sorted(subs) == sorted(f"module|{s}" for s in ARITY)
    for name, arity in ARITY.items():
        s = subs[f"module|{name}"]
        assert s[1] == arity and s[3:6] == [0, 0, 0], name
        assert s[8] == [] and s[9] == [], name
    admin = ["admin", "noscript", "no_async_loading"]
    assert [subs[f"module|{n}"][2] for n in ("load", "loadex", "unload")] == [admin] * 3
    assert subs["module|list"][2] == ["admin", "noscript"]
    assert subs["module|help"][2] == ["loading", "stale"]
    for name in ("list", "load", "loadex", "unload"):
        assert subs[f"module|{name}"][6] == ["@admin", "@slow", "@dangerous"], name
    assert subs["module|help"][6] == ["@slow"]
    assert subs["module|list"][7] == ["nondeterministic_output_order"]
    assert all(subs[f"module|{n}"][7] == [] for n in ("help", "load", "loadex", "unload"))
    # `protected` is not shown, as in Redis.
    assert not any("protected" in s[2] for s in subs.values())


def as_dict(v):
    return v if isinstance(v, dict) else dict(zip(v[::2], v[1::2]))


def test_command_docs_entries(logged):
    docs = as_dict(raw_cmd(logged.client(), "COMMAND", "DOCS", "module"))
    module = as_dict(docs["module"])
    assert (module["summary"], module["since"], module["group"]) == (
        "A container for module commands", "4.0.0", "server")
    subs = {k: as_dict(v) for k, v in as_dict(module["subcommands"]).items()}
    assert sorted(subs) == sorted(f"module|{s}" for s in ARITY)
    assert [subs[f"module|{s}"]["since"] for s in ("help", "list", "load", "loadex", "unload")] == [
        "5.0.0", "4.0.0", "4.0.0", "7.0.0", "4.0.0"]
    assert subs["module|loadex"]["summary"] == "Load a module with extended parameters"
    load = [as_dict(a) for a in subs["module|load"]["arguments"]]
    assert load == [{"name": "path", "type": "string"},
                    {"name": "arg", "type": "string", "flags": ["optional", "multiple"]}]
    path, configs, args = (as_dict(a) for a in subs["module|loadex"]["arguments"])
    assert path == {"name": "path", "type": "string"}
    assert (configs["type"], configs["token"], configs["flags"]) == (
        "block", "CONFIG", ["optional", "multiple", "multiple_token"])
    assert [as_dict(a)["name"] for a in configs["arguments"]] == ["name", "value"]
    assert (args["type"], args["token"], args["flags"]) == ("block", "ARGS", ["optional", "multiple"])
    assert [as_dict(a) for a in args["arguments"]] == [{"name": "arg", "type": "string"}]
    assert [as_dict(a) for a in subs["module|unload"]["arguments"]] == [
        {"name": "name", "type": "string"}]
    assert "arguments" not in subs["module|list"] and "arguments" not in subs["module|help"]


def test_acl_categories(logged):
    c = logged.client()

    def cat(name):
        return {n for n in c.execute_command("ACL", "CAT", name) if n.startswith("module")}

    every = {"module"} | {f"module|{s}" for s in ARITY}
    guarded = {f"module|{s}" for s in ("list", "load", "loadex", "unload")}
    assert cat("slow") == every
    assert cat("admin") == guarded
    assert cat("dangerous") == guarded
    assert cat("fast") == set() and cat("connection") == set() and cat("keyspace") == set()


def test_acl_rules_on_module_subcommands(logged):
    c = logged.client()
    c.execute_command("ACL", "SETUSER", "mod", "on", "nopass", "+module|list", "+module|help")
    try:
        u = logged.client()
        u.execute_command("AUTH", "mod", "x")
        assert raw_cmd(u, "MODULE", "LIST") == []
        with pytest.raises(redis.exceptions.NoPermissionError, match="'module\\|load' command"):
            u.execute_command("MODULE", "LOAD", "/x")
        u.close()
        assert c.execute_command("ACL", "DRYRUN", "mod", "MODULE", "LIST") == "OK"
        assert "no permissions" in c.execute_command("ACL", "DRYRUN", "mod", "MODULE", "UNLOAD", "m")
        c.execute_command("ACL", "SETUSER", "mod", "+@admin")
        assert c.execute_command("ACL", "DRYRUN", "mod", "MODULE", "UNLOAD", "m") == "OK"
    finally:
        c.execute_command("ACL", "DELUSER", "mod")


@ebb_only
def test_command_count_and_list(logged):
    c = logged.client()
    names = raw_cmd(c, "COMMAND", "LIST")
    top = [n for n in names if "|" not in n]
    assert "module" in top
    assert raw_cmd(c, "COMMAND", "COUNT") == len(top)
    assert sorted(raw_cmd(c, "COMMAND", "LIST", "FILTERBY", "PATTERN", "module|*")) == sorted(
        f"module|{s}" for s in ARITY)
    assert "module|loadex" in raw_cmd(c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "dangerous")
    assert "module|help" not in raw_cmd(c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "admin")


def test_commandstats(logged):
    c = logged.client()
    c.config_resetstat()
    for args in (["MODULE", "LOAD", "/x"], ["MODULE", "LIST", "x"], ["MODULE", "UNLOAD", "m"]):
        with pytest.raises(redis.ResponseError):
            c.execute_command(*args)
    assert raw_cmd(c, "MODULE", "LIST") == []
    stats = c.info("commandstats")
    assert stats["cmdstat_module|load"]["calls"] == 1
    assert stats["cmdstat_module|load"]["failed_calls"] == 1
    assert stats["cmdstat_module|list"]["calls"] == 1
    assert stats["cmdstat_module|list"]["rejected_calls"] == 1
    assert stats["cmdstat_module|unload"]["failed_calls"] == 1
    assert c.info("errorstats")["errorstat_ERR"]["count"] == 3


# -------------------------------------------------- side by side with Redis


def _needs_redis():
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")


@pytest.fixture(scope="module")
def oracle(logged, tmp_path_factory):
    """ebb and redis-server, both with `enable-module-command yes`."""
    red = redis_beside(tmp_path_factory, "module-cmd-redis", "--enable-module-command", "yes")
    yield Oracle(logged.port, red.port)
    red.stop()


@pytest.fixture(scope="module")
def refusing(tmp_path_factory):
    """ebb and redis-server, both with the default `enable-module-command no`."""
    _needs_redis()
    d = tmp_path_factory.mktemp("module-cmd-default")
    ebb = EbbServer("--dir", str(d), cwd=str(d))
    red = RedisServer(str(d))
    yield Oracle(ebb.port, red.port)
    ebb.stop()
    red.stop()


DETERMINISTIC = [
    ["MODULE"], ["MODULE", "foo"], ["MODULE", "Foo", "bar"], ["MODULE", ""],
    ["MODULE", "HELP"], ["module", "help"], ["MODULE", "HELP", "x"],
    ["MODULE", "LIST"], ["MODULE", "LIST", "x"],
    ["MODULE", "LOAD"], ["MODULE", "LOAD", "/no/such/module.so"],
    ["MODULE", "LOAD", "/no/such/module.so", "a", "b"], ["MODULE", "LOAD", "/etc/hostname"],
    ["MODULE", "LOADEX"], ["MODULE", "LOADEX", "/no/such.so"],
    ["MODULE", "LOADEX", "/no/such.so", "CONFIG", "a", "b", "ARGS", "x"],
    ["MODULE", "LOADEX", "/no/such.so", "CONFIG", "a"],
    ["MODULE", "LOADEX", "/no/such.so", "foo"],
    ["MODULE", "LOADEX", "/no/such.so", "ARGS"],
    ["MODULE", "UNLOAD"], ["MODULE", "UNLOAD", "m"], ["MODULE", "UNLOAD", "m", "n"],
    ["COMMAND", "INFO", "module|help", "module|list", "module|load", "module|loadex",
     "module|unload", "module|nope"],
    ["COMMAND", "GETKEYS", "module", "list"],
    ["COMMAND", "GETKEYS", "module", "load", "/x"],
    ["COMMAND", "GETKEYS", "module", "nope"],
    ["COMMAND", "GETKEYSANDFLAGS", "module", "unload", "m"],
    ["EVAL", "return redis.call('module', 'help')", "0"],
    ["EVAL", "return redis.pcall('module', 'list')", "0"],
    ["EVAL", "return redis.pcall('module', 'load', '/x')", "0"],
    ["EVAL", "return redis.pcall('module', 'unload', 'm')", "0"],
    ["EVAL", "return redis.pcall('module')", "0"],
    ["EVAL", "return redis.pcall('module', 'nope')", "0"],
    ["INFO", "modules"],
    ["CONFIG", "GET", "enable-module-command"],
    ["CONFIG", "SET", "enable-module-command", "yes"],
]


@pytest.mark.parametrize("resp3", [False, True])
@pytest.mark.parametrize("which", ["allowed", "refused"])
def test_replies_match_redis(request, which, resp3):
    pair = request.getfixturevalue("oracle" if which == "allowed" else "refusing")
    diffs = []
    for args in DETERMINISTIC:
        ours, theirs = pair.both(*args, resp3=resp3)
        if ours != theirs:
            diffs.append((args, ours, theirs))
    assert not diffs


def _sequence(port, resp3):
    r = Raw(port, resp3=resp3, timeout=5.0)
    out = [r.cmd("CONFIG", "RESETSTAT")]
    for args in (["MULTI"], ["MODULE", "LIST"], ["MODULE", "LOAD", "/x"],
                 ["MODULE", "UNLOAD", "m"], ["MODULE", "HELP"], ["EXEC"],
                 ["MULTI"], ["MODULE", "LOAD"], ["EXEC"],
                 ["MULTI"], ["MODULE", "NOPE"], ["EXEC"],
                 ["MODULE", "LOADEX", "/y", "foo"], ["MODULE", "LIST", "x"]):
        out.append(r.cmd(*args))
    # Statistics without their times, in name order (Redis lists them in
    # its hash table's order).
    stats = r.cmd("INFO", "commandstats").decode().split("\r\n")
    out.append(sorted(
        (line.split(":")[0], [f for f in line.split(":")[1].split(",")
                              if not f.startswith("usec")])
        for line in stats if line.startswith("cmdstat_module")))
    errors = r.cmd("INFO", "errorstats").decode().split("\r\n")
    out.append(sorted(line for line in errors if line.startswith("errorstat")))
    r.close()
    return out


@pytest.mark.parametrize("resp3", [False, True])
@pytest.mark.parametrize("which", ["allowed", "refused"])
def test_transactions_and_statistics_match_redis(request, which, resp3):
    pair = request.getfixturevalue("oracle" if which == "allowed" else "refusing")
    ours, theirs = pair.each(lambda port: _sequence(port, resp3))
    assert ours == theirs


@pytest.mark.parametrize("resp3", [False, True])
def test_command_info_of_module_matches_redis(oracle, resp3):
    ours, theirs = (typed_reply(x) for x in oracle.both("COMMAND", "INFO", "module", resp3=resp3))
    # The subcommands come in Redis's hash-table order: compared sorted.
    for reply in (ours, theirs):
        entry = reply[1][0][1]
        entry[9] = (entry[9][0], sorted(entry[9][1], key=repr))
    assert ours == theirs


def _docs_without_complexity(reply):
    """COMMAND DOCS (RESP3) without the complexity, which ebb reports for
    no command."""

    def clean(v):
        kind, items = v
        if kind == b"%":
            return (kind, [(k, clean(x)) for k, x in items if k[1] != b"complexity"])
        if kind in (b"*", b"~"):
            return (kind, [clean(x) for x in items])
        return v

    return clean(reply)


def test_command_docs_match_redis(oracle):
    ours, theirs = (_docs_without_complexity(typed_reply(x))
                    for x in oracle.both("COMMAND", "DOCS", "module", resp3=True))
    assert ours == theirs


def test_acl_cat_membership_matches_redis(oracle):
    for cat in ("slow", "fast", "admin", "dangerous", "connection", "keyspace"):
        got = []
        for port in oracle.ports:
            r = redis.Redis(port=port, decode_responses=True)
            got.append({n for n in r.execute_command("ACL", "CAT", cat) if n.startswith("module")})
            r.close()
        assert got[0] == got[1], cat


def test_info_sections_match_redis(oracle):
    def headers(port, *section):
        r = Raw(port, timeout=5.0)
        text = r.cmd("INFO", *section).decode()
        r.close()
        return [x for x in text.split("\r\n") if x.startswith("#")]

    for section in ([], ["all"], ["everything"], ["modules"], ["modules", "cpu"]):
        ours, theirs = oracle.each(lambda port: headers(port, *section))
        assert ours == theirs, section
