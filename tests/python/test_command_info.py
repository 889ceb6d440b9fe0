"""COMMAND INFO and COMMAND GETKEYSANDFLAGS as Redis 7.0 answers them: ACL
categories in Redis's order, command tips, key specifications, and the
subcommands of container commands (each with its own arity, flags and
keys). The differential tests compare every command both servers have
against a redis-server; they are skipped without one."""

import shutil

import pytest

from conftest import EbbServer, RedisServer, raw_cmd

# Subcommands only one side has: Redis 7.0's Lua debugger, and CLIENT
# SETINFO (Redis 7.2, which clients send on connect).
NOT_IN_EBB = {"script|debug", "client|setinfo"}


def text(x):
    return x.decode() if isinstance(x, bytes) else x


def as_pairs(x):
    """A map reply (a flat list in RESP2) as a dict."""
    if isinstance(x, dict):
        return {text(k): v for k, v in x.items()}
    return {text(x[i]): x[i + 1] for i in range(0, len(x), 2)}


def norm_search(x):
    """A begin_search or find_keys map, with its inner spec map."""
    d = as_pairs(x)
    return {"type": text(d["type"]), "spec": {k: v for k, v in as_pairs(d["spec"]).items()}}


def norm_spec(spec):
    d = as_pairs(spec)
    keep = {"flags": lambda v: [text(f) for f in v], "notes": text}
    return {k: keep.get(k, norm_search)(v) for k, v in d.items()}


def norm_info(entry):
    name, arity, flags, first, last, step, cats, tips, specs, subs = entry
    return {
        "name": text(name), "arity": arity, "flags": [text(f) for f in flags],
        "keys": (first, last, step), "cats": [text(c) for c in cats],
        "tips": [text(t) for t in tips], "specs": [norm_spec(s) for s in specs],
        "subs": sorted((norm_info(s) for s in subs if text(s[0]) not in NOT_IN_EBB),
                       key=lambda s: s["name"]),
    }


def infos(client, *names):
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command("COMMAND", "INFO", *names)
        return conn.read_response()
    finally:
        client.connection_pool.release(conn)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    d = tmp_path_factory.mktemp("cmdinfo")
    ebb = EbbServer("--dir", str(d), cwd=str(d))
    red = RedisServer(cwd=str(d))
    yield ebb.client(decode_responses=False), red.client(decode_responses=False)
    ebb.stop()
    red.stop()


# ebb's TTL, PTTL and PERSIST also take a member (`TTL key member`).
ARITY_DIFFERS = {"ttl", "pttl", "persist"}


def test_command_info_matches_redis_for_every_shared_command(both):
    e, r = both
    ebb_all = {text(x[0]): x for x in infos(e)}
    red_all = {text(x[0]): x for x in infos(r)}
    shared = sorted(set(ebb_all) & set(red_all))
    assert len(shared) > 190
    diffs = []
    for name in shared:
        a, b = norm_info(ebb_all[name]), norm_info(red_all[name])
        if name in ARITY_DIFFERS:
            a["arity"] = b["arity"]
        if a != b:
            diffs.append((name, a, b))
    assert diffs == []


@pytest.mark.parametrize("line", [
    "set k v", "set k v GET", "mset a 1 b 2", "lmove a b left right",
    "sort k1 store k2", "sort k1 by x get y", "zunionstore d 2 a b weights 1 2",
    "eval x 2 a b", "eval x 0", "bitfield k get u8 0", "bitfield k incrby u8 0 1",
    "memory usage k", "object encoding k", "blmpop 0 2 a b left",
    "smove a b m", "rename a b", "copy a b", "georadius_ro", "get", "ping",
    "lcs a b", "zinterstore d 1 a", "sintercard 2 a b", "bitop and d a b",
    "getex k persist", "spublish ch m",
    "migrate h 1 k 0 5", "migrate h 1 x 0 5 keys a b", "restore-asking k 0 p",
])
def test_getkeysandflags_matches_redis(both, line):
    e, r = both

    def ask(client):
        try:
            return ("ok", client.execute_command("COMMAND", "GETKEYSANDFLAGS", *line.split()))
        except Exception as ex:  # the error text is compared too
            return ("err", str(ex))

    assert ask(e) == ask(r)


def test_aclcat_lists_match_redis(both):
    e, r = both
    ebb_names = {text(x) for x in raw_cmd(e, "COMMAND", "LIST")}
    for cat in ["read", "write", "scripting", "admin", "dangerous", "connection",
                "slow", "fast", "keyspace", "pubsub"]:
        got = {text(x) for x in raw_cmd(e, "COMMAND", "LIST", "FILTERBY", "ACLCAT", cat)}
        want = {text(x) for x in raw_cmd(r, "COMMAND", "LIST", "FILTERBY", "ACLCAT", cat)}
        # The same names, among those both servers have.
        assert got & want == want & ebb_names, cat
        assert not (got - want) & {text(x) for x in raw_cmd(r, "COMMAND", "LIST")}, cat


def test_categories_in_redis_order(r):
    info = raw_cmd(r, "COMMAND", "INFO", "get", "flushall", "auth")
    cats = [[text(c) for c in entry[6]] for entry in info]
    assert cats == [["@read", "@string", "@fast"],
                    ["@keyspace", "@write", "@slow", "@dangerous"],
                    ["@fast", "@connection"]]


def test_subcommand_info(r):
    sub, missing, bad = raw_cmd(r, "COMMAND", "INFO", "config|get", "config|nope", "get|key")
    assert [text(sub[0]), sub[1], [text(f) for f in sub[2]]] == \
        ["config|get", -3, ["admin", "noscript", "loading", "stale"]]
    assert [text(c) for c in sub[6]] == ["@admin", "@slow", "@dangerous"]
    assert missing is None and bad is None
    (container,) = raw_cmd(r, "COMMAND", "INFO", "object")
    names = sorted(text(s[0]) for s in container[9])
    assert names == ["object|encoding", "object|freq", "object|help",
                     "object|idletime", "object|refcount"]
    enc = next(s for s in container[9] if text(s[0]) == "object|encoding")
    (spec,) = enc[8]
    assert norm_spec(spec)["begin_search"] == {"type": "index", "spec": {"index": 2}}


def spec_of(r, name):
    (entry,) = raw_cmd(r, "COMMAND", "INFO", name)
    return [norm_spec(s) for s in entry[8]]


@pytest.mark.parametrize("name,flags", [
    ("hexpire", ["RW", "update"]), ("httl", ["RO", "access"]),
    ("hpersist", ["RW", "update"]), ("hgetex", ["RW", "access", "update"]),
    ("hgetdel", ["RW", "access", "delete"]), ("hsetex", ["RW", "update"]),
    ("saddex", ["RW", "insert"]), ("zaddex", ["RW", "update"]),
    ("zttl", ["RO", "access"]), ("expiremember", ["RW", "update"]),
    ("cl.throttle", ["RW", "access", "update"]),
])
def test_member_expiry_commands_describe_their_key(r, name, flags):
    (spec,) = spec_of(r, name)
    assert spec["flags"] == flags
    assert spec["begin_search"] == {"type": "index", "spec": {"index": 1}}
    assert spec["find_keys"] == {"type": "range", "spec": {"lastkey": 0, "keystep": 1, "limit": 0}}


def test_getkeysandflags_of_member_expiry_commands(r):
    got = raw_cmd(r, "COMMAND", "GETKEYSANDFLAGS", "ZADDEX", "k", "PX", "100", "1", "m")
    assert [[text(k), [text(f) for f in fl]] for k, fl in got] == [["k", ["RW", "update"]]]
    got = raw_cmd(r, "COMMAND", "GETKEYSANDFLAGS", "SADDEX", "k", "LIMIT", "3", "60", "c")
    assert [[text(k), [text(f) for f in fl]] for k, fl in got] == [["k", ["RW", "insert"]]]


def test_getkeysandflags_errors(r):
    for args, msg in [
        (["nosuch", "a"], "Invalid command specified"),
        (["get", "a", "b"], "Invalid number of arguments"),
        (["get"], "wrong number of arguments for 'command|getkeysandflags'"),
        (["ping", "x"], "has no key arguments"),
        ([], "wrong number of arguments for 'command|getkeysandflags'"),
    ]:
        with pytest.raises(Exception, match=msg):
            raw_cmd(r, "COMMAND", "GETKEYSANDFLAGS", *args)
    help_lines = [text(x) for x in raw_cmd(r, "COMMAND", "HELP")]
    assert "GETKEYSANDFLAGS <full-command>" in help_lines
