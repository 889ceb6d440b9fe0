"""COMMAND DOCS: every command documents its arguments the way Redis 7.0
does, so redis-cli can show its grey hints while a person types.

When a redis-server is installed (CI installs Debian's 7.0), the argument
trees of every command both servers have are compared with it field by
field (name, type, key-spec index, token, flags, nesting); otherwise only
the shape checks run."""

import os
import pty
import select
import shutil
import socket
import struct
import subprocess
import time

import fcntl
import pytest
import redis
import termios

from conftest import raw_cmd

COMPARED = ("name", "type", "key_spec_index", "token", "flags", "arguments")


def norm(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, set):
        return sorted(norm(x) for x in v)
    if isinstance(v, dict):
        return {norm(k): norm(x) for k, x in v.items()}
    return v


def arg_shape(a):
    out = {k: a[k] for k in COMPARED if k in a}
    if "flags" in out:
        out["flags"] = sorted(out["flags"])
    if "arguments" in out:
        out["arguments"] = [arg_shape(x) for x in out["arguments"]]
    return out


def docs(client, *names):
    return norm(raw_cmd(client, "COMMAND", "DOCS", *names))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def oracle():
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    p = subprocess.Popen(
        [exe, "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    c = redis.Redis(port=port, protocol=3)
    end = time.time() + 10
    while True:
        try:
            c.ping()
            break
        except redis.ConnectionError:
            if time.time() > end:
                p.kill()
                raise
            time.sleep(0.05)
    yield c
    p.kill()
    p.wait()


def test_every_command_documents_its_arguments(r3):
    all_docs = docs(r3)
    # COMMAND LIST also names subcommands (`container|sub`); DOCS keys
    # only the top-level commands and nests the subcommands.
    names = [n for n in norm(raw_cmd(r3, "COMMAND", "LIST")) if "|" not in n]
    assert sorted(all_docs) == sorted(names)
    no_args = {
        "bgrewriteaof", "dbsize", "debug", "discard", "exec", "lastsave", "multi",
        "quit", "randomkey", "reset", "save", "time", "unwatch", "role",
        "client", "command", "config", "memory", "object", "pubsub", "monitor", "slowlog", "latency",
        "script", "function", "acl", "cluster", "readonly", "readwrite", "asking", "module",
    }
    for name, d in all_docs.items():
        assert d["summary"] and d["group"] and d["since"], name
        if name not in no_args:
            assert d.get("arguments"), f"{name} documents no arguments"


def test_containers_document_their_subcommands(r3):
    d = docs(r3, "client", "object")
    subs = d["client"]["subcommands"]
    assert "client|list" in subs and "client|kill" in subs
    assert subs["client|setname"]["arguments"] == [{"name": "connection-name", "type": "string"}]
    assert sorted(d["object"]["subcommands"]) == [
        "object|encoding", "object|freq", "object|help", "object|idletime", "object|refcount",
    ]


def test_a_subcommand_is_documented_by_its_full_name(r3):
    # As Redis: `container|sub`, any case, keyed by its lower-case name;
    # unknown names are left out.
    d = docs(r3, "CONFIG|GET", "nosuch", "config|nosuch", "get|x")
    assert list(d) == ["config|get"]
    assert d["config|get"]["group"] == "server"
    assert d["config|get"]["arguments"][0]["name"] == "parameter"
    assert docs(r3, "client|list")["client|list"] == docs(r3, "client")["client"]["subcommands"]["client|list"]


def test_member_ttl_commands_document_their_grammar(r3):
    d = docs(r3, "zaddex", "hexpire", "saddex")
    z = {a["name"]: a for a in d["zaddex"]["arguments"]}
    assert z["key"] == {"name": "key", "type": "key", "key_spec_index": 0}
    assert z["expiration"]["type"] == "oneof" and "flags" not in z["expiration"]
    assert [a["token"] for a in z["bound"]["arguments"]] == ["CAP", "LIMIT"]
    assert z["score_member"]["flags"] == ["multiple"]
    h = d["hexpire"]["arguments"][-1]
    assert h["token"] == "FIELDS" and h["type"] == "block"
    assert [a["name"] for a in h["arguments"]] == ["numfields", "field"]
    s = d["saddex"]["arguments"]
    assert [a["name"] for a in s] == ["key", "keepttl", "max", "seconds", "member"]


def test_arguments_match_redis_7(r3, oracle):
    ours = docs(r3)
    theirs = docs(oracle)
    compared = 0
    diffs = []
    for name, d in ours.items():
        if name not in theirs:
            continue
        want = [arg_shape(a) for a in theirs[name].get("arguments", [])]
        got = [arg_shape(a) for a in d.get("arguments", [])]
        if got != want:
            diffs.append(name)
        compared += 1
        for sub, sd in d.get("subcommands", {}).items():
            tsub = theirs[name].get("subcommands", {}).get(sub)
            if tsub is None:
                continue
            want = [arg_shape(a) for a in tsub.get("arguments", [])]
            got = [arg_shape(a) for a in sd.get("arguments", [])]
            if got != want:
                diffs.append(sub)
            compared += 1
        assert d["group"] == theirs[name]["group"], name
    assert compared > 200
    assert not diffs, f"argument docs differ from Redis 7.0: {diffs}"


def hint_for(port, typed):
    """Types `typed` into an interactive redis-cli on a terminal 200
    columns wide and returns the grey hint it displays last."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    env = {**os.environ, "HOME": "/nonexistent", "REDISCLI_HISTFILE": "/dev/null", "TERM": "xterm"}
    p = subprocess.Popen(
        ["redis-cli", "-p", str(port)], stdin=slave, stdout=slave, stderr=slave, close_fds=True, env=env
    )
    os.close(slave)
    buf = bytearray()

    def drain(t):
        end = time.time() + t
        while time.time() < end:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                buf.extend(chunk)
                if b"\x1b[6n" in chunk:  # the line editor asks where the cursor is
                    os.write(master, b"\x1b[1;1R")

    try:
        drain(1.0)
        buf.clear()
        os.write(master, typed.encode())
        drain(1.0)
    finally:
        p.kill()
        p.wait()
        os.close(master)
    start = buf.rfind(b"\x1b[0;90;49m")
    if start < 0:
        return None
    end = buf.find(b"\x1b[0m", start)
    return buf[start + len(b"\x1b[0;90;49m") : end].decode()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_redis_cli_shows_hints(ebb):
    assert hint_for(ebb.port, "SET ") == (
        "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds"
        "|PXAT unix-time-milliseconds|KEEPTTL]"
    )
    assert hint_for(ebb.port, "ZADDEX k ") == (
        "[NX|XX] [GT|LT] [CH] [INCR] [KEEPTTL] [CAP count|LIMIT max] EX seconds|PX milliseconds"
        "|EXAT unix-time-seconds|PXAT unix-time-milliseconds score member [score member ...]"
    )
    assert hint_for(ebb.port, "client list ") == "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]"


def test_command_info_matches_redis_7(r, oracle):
    """Arity, flags, key positions and ACL categories of every command both
    servers have. TTL, PTTL and PERSIST take an optional member in ebb
    (KeyDB's form), so their arity is -2 instead of 2."""
    port = oracle.connection_pool.connection_kwargs["port"]
    ours = {x[0]: x for x in norm(raw_cmd(r, "COMMAND", "INFO"))}
    theirs = {x[0]: x for x in norm(raw_cmd(redis.Redis(port=port), "COMMAND", "INFO"))}
    diffs = []
    for name, o in ours.items():
        t = theirs.get(name)
        if t is None:
            continue
        for i in range(1, 7):
            a, b = o[i], t[i]
            if isinstance(a, list):
                a, b = sorted(a), sorted(b)
            if a != b and not (i == 1 and name in ("ttl", "pttl", "persist") and a == -2):
                diffs.append((name, i, a, b))
    assert not diffs
