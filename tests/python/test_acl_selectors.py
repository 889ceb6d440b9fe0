"""ACL selectors and key permissions by access type (Redis 7.0's "ACL v2"),
sent to ebb-server and to a redis-server side by side, comparing the raw
reply bytes in RESP2 and in RESP3.

Covered: ACL SETUSER with selectors (`(...)`, written in one argument or
spread over several, `clearselectors`, `reset`) and the errors of bad
ones; ACL GETUSER's `selectors` field and ACL LIST's parentheses; commands
permitted by the root permissions or by any one selector (command, keys
and channels within one selector), with the NOPERM texts and the ACL LOG
entries that name the refused command, key or channel; `%R~`, `%W~` and
`%RW~` patterns checked against each key's flags in its key
specification (SET with GET, BITFIELD, COPY, LMOVE, SORT ... STORE, EVAL
keys); ACL DRYRUN over many commands; SORT's BY and GET, which need read
access to every key; inside MULTI and scripts; Pub/Sub subscribers
disconnected when no selector keeps their channels; selectors in an ACL
file (loaded, saved, and the errors of a bad file), in `user` lines of the
configuration and in what CONFIG REWRITE writes back.

Commands ebb leaves out (MIGRATE, GEORADIUS, PFCOUNT, XLEN: README.md,
"Out of scope") are not sent. Skipped when redis-server is not installed."""

import os
import re
import shlex
import shutil
import subprocess
import time

import pytest

from conftest import BIN, EbbServer, RedisServer, _free_port
from test_admin_differential import (CLOSED, TIMEOUT, Conn, line_args, pairs,
                                     parse, reset_server, short)

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs redis-server")


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    d = tmp_path_factory.mktemp("selectors")
    ebb = EbbServer("--dir", str(d), "--save", "", "--appendonly", "no", cwd=str(d))
    red = RedisServer(str(d))
    yield ebb.port, red.port
    ebb.stop()
    red.stop()


# Single-command rules (`+get`, `-set`) come in ebb's command-table order
# where Redis uses its hash-table order (docs/operations.md): they are
# sorted within each selector (each stretch between parentheses) of a
# reply line before comparing.
SINGLE_RULE = re.compile(rb"^[+-][^@\s]")


def canon(raw):
    lines = raw.split(b"\r\n")
    for n, line in enumerate(lines):
        parts = re.split(rb"([()])", line)
        for p, part in enumerate(parts):
            toks = part.split(b" ")
            at = [i for i, t in enumerate(toks) if SINGLE_RULE.match(t)]
            for i, t in zip(at, sorted(toks[i] for i in at)):
                toks[i] = t
            parts[p] = b" ".join(toks)
        lines[n] = b"".join(parts)
    return b"\r\n".join(lines)


def run_line(conn, line):
    args, n = line_args(line)
    try:
        conn.send(*args)
    except OSError:
        return CLOSED
    out = b""
    for _ in range(n):
        got = conn.read()
        out += got
        if got.endswith((TIMEOUT, CLOSED)):
            break
    return canon(out)


def replay(ports, lines, resp3):
    """Runs `lines` on fresh connections to both servers (reset first);
    returns the mismatches as (line, ebb's reply, redis-server's reply)."""
    for port in ports:
        reset_server(port)
    conns = [Conn(p, resp3=resp3) for p in ports]
    bad = []
    try:
        for line in lines:
            e, r = (run_line(c, line) for c in conns)
            if e != r:
                bad.append((line, e, r))
                if e.endswith(CLOSED) or r.endswith(CLOSED):
                    break
    finally:
        for c in conns:
            c.close()
    return bad


def report(bad):
    return "\n".join(
        f"{short(line)}:\n  ebb:   {short(e)}\n  redis: {short(r)}" for line, e, r in bad)


# A user whose keys are read-only `read*`, write-only `write*`, both `rw*`.
RW_USER = "ACL SETUSER rwu on nopass +@all %R~read* %W~write* %RW~rw*"
AS_RWU = "AUTH rwu x"
AS_DEFAULT = "AUTH default x"

SEQUENCES = {
    "selectors-basic": [
        "ACL SETUSER s1 on nopass -@all resetkeys",
        "ACL SETUSER s1 (+@write ~write::*) (+@read ~read::*)",
        "ACL GETUSER s1",
        "ACL LIST",
        "AUTH s1 x",
        "PING",
        "SET write::foo bar",
        "GET read::foo",
        "GET write::foo",
        "SET read::foo bar",
        "MSET write::a 1 write::b 2",
        "MSET write::a 1 read::b 2",
        AS_DEFAULT,
        "ACL SETUSER s1 clearselectors",
        "ACL GETUSER s1",
        "AUTH s1 x",
        "SET write::foo bar",
    ],
    "selectors-shapes": [
        "ACL SETUSER d1 reset ()",
        "ACL GETUSER d1",
        "ACL SETUSER d2 on (~added-selector)",
        "ACL GETUSER d2",
        "ACL SETUSER d2 clearselectors",
        "ACL GETUSER d2",
        ("ACL", "SETUSER", "d3", "(~key1 +get )", "( ~key2 +get )", "( ~key3 +get)",
         "(~key4 +get)"),
        "ACL SETUSER d3 (~key5 +get ) ( ~key6 +get ) ( ~key7 +get) (~key8 +get)",
        "ACL GETUSER d3",
        "ACL LIST",
        "ACL SETUSER d4 on >pw ~a %R~b &c +get (%W~x &y -@all +set +@list) (~* &* +@all)",
        "ACL GETUSER d4",
        "ACL SETUSER d4 reset",
        "ACL GETUSER d4",
        "ACL SETUSER d5 (+select|0 +debug|object ~k)",
        "ACL GETUSER d5",
        "ACL SETUSER d6 (allkeys allchannels allcommands) (resetkeys resetchannels nocommands)",
        "ACL GETUSER d6",
        "ACL SETUSER d7 (%RW~* %R~r) (~a ~a %R~a %W~b %R~b)",
        "ACL GETUSER d7",
        ("ACL", "SETUSER", "d8", "(~'q k' +get)"),
        ("ACL", "SETUSER", "d9", '(~"unbalanced +get)'),
        "ACL GETUSER d9",
        # Categories whose commands differ between the servers (ebb's own
        # commands, the families it leaves out) are not mixed here.
        ("ACL", "SETUSER", "d10", "(+GET ~K +@BITMAP -BitOp -@Set)"),
        "ACL GETUSER d10",
        "ACL SETUSER d11 (+config|get +client -client|kill)",
        "ACL GETUSER d11",
        "ACL LIST",
    ],
    "selectors-errors": [
        "ACL SETUSER e1 on (this-is-invalid)",
        "ACL SETUSER e1 on (&* &fail)",
        "ACL SETUSER e1 on (~* ~fail)",
        "ACL GETUSER e1",
        ("ACL", "SETUSER", "e2", " () "),
        "ACL SETUSER e2 (",
        "ACL SETUSER e2 )",
        "ACL SETUSER e2 on (+get ~a",
        "ACL SETUSER e2 (+get) (+set",
        "ACL SETUSER e2 (+get) ( +set ~x",
        "ACL SETUSER e2 ((+get))",
        "ACL SETUSER e2 (on)",
        "ACL SETUSER e2 (>pw)",
        "ACL SETUSER e2 (nopass)",
        "ACL SETUSER e2 (reset)",
        "ACL SETUSER e2 (clearselectors)",
        "ACL SETUSER e2 (+nosuchcommand)",
        "ACL SETUSER e2 (+@nosuchcategory)",
        "ACL SETUSER e2 (+config|nosuch)",
        "ACL SETUSER e2 (+config|get|x)",
        "ACL SETUSER e2 (-select|0)",
        "ACL SETUSER e2 (+select|)",
        "ACL SETUSER e2 (%X~k)",
        "ACL SETUSER e2 (%~k)",
        "ACL SETUSER e2 (%)",
        "ACL SETUSER e2 on >pw (+get) (+set ~a b) ~c",
        "ACL GETUSER e2",
        ("ACL", "SETUSER", "e3", "(~a\r\nb)"),
        ("ACL", "SETUSER", "e4", "(~a\x00b +get)"),
        "ACL GETUSER e4",
        ("ACL", "SETUSER", "e5", "(+get", "", ")", "()", "( )"),
        "ACL GETUSER e5",
        ("ACL", "SETUSER", "e6", "(+get", "~a)extra"),
        ("ACL", "SETUSER", "e6", ")("),
        ("ACL", "SETUSER", "e6", "(a)b)"),
        "ACL USERS",
    ],
    "percent-patterns": [
        "ACL SETUSER p1 %R~foo %W~foo %RW~bar",
        "ACL GETUSER p1",
        "ACL SETUSER p2 %RW~* ~more",
        "ACL GETUSER p2",
        "ACL SETUSER p3 %R~* %W~w*",
        "ACL GETUSER p3",
        "ACL SETUSER p4 %RW~ %R",
        "ACL GETUSER p4",
        "ACL SETUSER p5 %~",
        "ACL SETUSER p5 %",
        "ACL SETUSER p5 %r~lower %w~lower2",
        "ACL GETUSER p5",
        "ACL LIST",
    ],
    "percent-checks": [
        "SET readstr bar",
        "ACL SETUSER r1 on nopass %R~read* +@all",
        "AUTH r1 x",
        "PING",
        "GET readstr",
        "SET readstr bar",
        "GET notread",
        "SET readstr bar GET",
        "SET readstr bar EX 100",
        "SET readstr bar KEEPTTL NX",
        "BITFIELD readstr GET u4 0",
        "BITFIELD readstr SET u4 0 1",
        "BITFIELD readstr GET u4 0 SET u4 0 1",
        "BITFIELD readstr INCRBY u4 0 1",
        "BITFIELD readstr OVERFLOW WRAP GET u4 0",
        "BITFIELD readstr BOGUS",
        "BITFIELD_RO readstr GET u4 0",
        "STRLEN readstr",
        "EXISTS readstr",
        "DEL readstr",
        AS_DEFAULT,
        "ACL SETUSER w1 on nopass %W~write* +@all",
        "AUTH w1 x",
        "LPUSH writelist 10",
        "GET writestr",
        "LPUSH notwrite 10",
        "SET writestr bar",
        "SET writestr get",
        "SET get writestr",
        "SET writestr bar get",
        "SET writestr bar get ex 100",
        "SET writestr bar ex get",
        "BITFIELD writestr GET u4 0",
        "BITFIELD writestr SET u4 0 1",
        "DEL writestr",
        "EXISTS writestr",
        "TYPE writestr",
        AS_DEFAULT,
        "SET read bar",
        "ACL SETUSER rw1 on nopass %R~read* %W~write* +@all",
        "AUTH rw1 x",
        "COPY read write",
        "COPY write read",
        "LMOVE read write LEFT RIGHT",
        "RENAME read write",
        "SORT read STORE write",
        "SORT write STORE read",
        "SINTERSTORE write read",
        "SINTERSTORE read write",
        "ZUNIONSTORE write 1 read",
        AS_DEFAULT,
        "ACL SETUSER rw2 on nopass (%R~read* +@all) (%W~write* +@all)",
        "AUTH rw2 x",
        "LPUSH writelist 10",
        "GET writestr",
        "GET read",
        "SET read x",
        "COPY read write",
        "COPY write read",
        AS_DEFAULT,
        "ACL SETUSER rw3 on nopass %RW~ +@all",
        "AUTH rw3 x",
        "SET x 5",
        "GET ''",
    ],
    "selector-refusals": [
        "ACL SETUSER lg on nopass +mget ~key (+mget ~key ~otherkey)",
        "AUTH lg x",
        "GET key",
        "MGET key",
        "MGET otherkey",
        "MGET otherkey someotherkey",
        "MGET key otherkey someotherkey",
        AS_DEFAULT,
        "ACL SETUSER ch on nopass +unsubscribe (+publish &a*) (+publish +subscribe &b*) (+get ~k)",
        "AUTH ch x",
        "PUBLISH a1 m",
        "PUBLISH b1 m",
        "PUBLISH c1 m",
        "GET k",
        "GET j",
        "SUBSCRIBE a1",
        "@2 SUBSCRIBE b1 b2",
        "@2 UNSUBSCRIBE b1 b2",
        AS_DEFAULT,
        "ACL SETUSER mix on nopass +get ~a &x (+set ~b) (+publish &y)",
        "AUTH mix x",
        "GET a",
        "GET b",
        "SET b 1",
        "SET a 1",
        "PUBLISH y m",
        "PUBLISH x m",
        "DEL a",
        AS_DEFAULT,
        "ACL SETUSER noauth on nopass -@all (-@all)",
        "AUTH noauth x",
        "PING",
        "AUTH noauth x",
    ],
    "selectors-multi-and-scripts": [
        "ACL SETUSER ms on nopass +multi +exec +eval +evalsha (+get ~g*) (+set ~s*)",
        "AUTH ms x",
        "MULTI",
        "GET g1",
        "SET s1 v",
        "GET s1",
        "SET g1 v",
        "EXEC",
        "EVAL 'return redis.call(\"set\", \"s2\", \"v\")' 0",
        "EVAL 'return redis.call(\"get\", \"s2\")' 0",
        "EVAL 'return redis.pcall(\"get\", \"x\")' 0",
        "EVAL 'return redis.call(\"set\", \"g1\", \"v\")' 0",
        "EVAL 'return {redis.acl_check_cmd(\"get\", \"g1\"), "
        "redis.acl_check_cmd(\"get\", \"s1\"), redis.acl_check_cmd(\"set\", \"s1\", \"v\")}' 0",
        "EVAL 'return 1' 1 g1",
        AS_DEFAULT,
        "ACL SETUSER ms2 on nopass +multi +exec (+set ~a)",
        "AUTH ms2 x",
        "MULTI",
        "SET a 1",
        "SET b 1",
        "EXEC",
        "MULTI",
        "SET a 1",
        "EXEC",
    ],
    "sort-patterns": [
        "SET v1 1",
        "LPUSH mylist 1",
        "ACL SETUSER so on nopass (+sort ~mylist)",
        "AUTH so x",
        "SORT mylist BY v*",
        "SORT mylist GET v*",
        "SORT mylist BY nosort",
        "SORT mylist GET #",
        "SORT mylist LIMIT x y BY v*",
        "SORT mylist BY v* LIMIT x y",
        AS_DEFAULT,
        "ACL SETUSER so (+sort ~mylist ~v*)",
        "AUTH so x",
        "SORT mylist BY v*",
        "SORT mylist GET v*",
        AS_DEFAULT,
        "ACL SETUSER so (+sort ~mylist %W~*)",
        "AUTH so x",
        "SORT mylist BY v*",
        "SORT mylist GET v*",
        AS_DEFAULT,
        "ACL SETUSER so (+sort +sort_ro ~mylist %R~*)",
        "AUTH so x",
        "SORT mylist BY v*",
        "SORT mylist BY v* GET v* GET #",
        "SORT_RO mylist BY v*",
        AS_DEFAULT,
        "ACL SETUSER so2 on nopass +sort_ro +sort %R~*",
        "AUTH so2 x",
        "SORT_RO mylist BY v*",
        "SORT mylist BY v* STORE dst",
        AS_DEFAULT,
        "ACL SETUSER so3 on nopass +sort +eval ~*",
        "AUTH so3 x",
        "SORT mylist BY v*",
        "EVAL 'return redis.call(\"sort\", \"mylist\", \"by\", \"v*\")' 0",
        AS_DEFAULT,
        "ACL SETUSER so4 on nopass +sort +eval ~mylist",
        "AUTH so4 x",
        "EVAL 'return redis.pcall(\"sort\", \"mylist\", \"by\", \"v*\")' 0",
        "EVAL 'return redis.pcall(\"sort\", \"mylist\", \"get\", \"#\")' 0",
    ],
    "dryrun-basics": [
        RW_USER,
        "ACL DRYRUN rwu GET read",
        "ACL DRYRUN not-a-user GET read",
        "ACL DRYRUN rwu not-a-command read",
        "ACL SETUSER nocmd -@all",
        "ACL DRYRUN nocmd set somekey somevalue",
        "ACL DRYRUN nocmd get somekey",
        "ACL DRYRUN nocmd auth a b",
        "ACL DRYRUN nocmd ping",
        "ACL DRYRUN nocmd config get hz",
        "ACL DRYRUN nocmd config",
        "ACL DRYRUN nocmd config nosuch",
        "ACL DRYRUN nocmd CLIENT ID",
        "ACL DRYRUN nocmd memory usage",
        "ACL DRYRUN nocmd memory usage k",
        "ACL DRYRUN nocmd client nosuch",
        "ACL SETUSER fa (+select|0) (+select|1 -select)",
        "ACL DRYRUN fa select 0",
        "ACL DRYRUN fa select 1",
        "ACL SETUSER dr +@all ~v*",
        "ACL DRYRUN dr SET v v",
        "ACL DRYRUN dr SET v",
        "ACL DRYRUN dr SET",
        "ACL DRYRUN dr GET a b",
        "ACL SETUSER test-channels +@all resetchannels &channel",
        "ACL DRYRUN test-channels spublish channel foo",
        "ACL DRYRUN test-channels ssubscribe channel",
        "ACL DRYRUN test-channels sunsubscribe",
        "ACL DRYRUN test-channels sunsubscribe channel",
        "ACL DRYRUN test-channels sunsubscribe otherchannel",
        "ACL DRYRUN test-channels spublish otherchannel foo",
        "ACL DRYRUN test-channels ssubscribe otherchannel foo",
        "ACL DRYRUN test-channels ssubscribe channel otherchannel",
        "ACL DRYRUN test-channels psubscribe channel",
        "ACL DRYRUN test-channels psubscribe chan*",
        "ACL DRYRUN test-channels unsubscribe other",
        "ACL DRYRUN test-channels punsubscribe other",
        "ACL SETUSER sel-dry (+get ~a) (+set ~b &c +publish)",
        "ACL DRYRUN sel-dry get a",
        "ACL DRYRUN sel-dry get b",
        "ACL DRYRUN sel-dry set b v",
        "ACL DRYRUN sel-dry set a v",
        "ACL DRYRUN sel-dry publish c m",
        "ACL DRYRUN sel-dry publish d m",
        "ACL DRYRUN sel-dry del a",
    ],
}

# ACL DRYRUN of commands against `rwu`'s keys: each template with every
# combination of a read-only, a write-only, a read-write and an unknown
# key (Redis goes by the flags of each key's specification).
KEYS = ["read", "write", "rw", "nothing"]
ONE_KEY = [
    "GET {0}", "SET {0} v", "SET {0} v GET", "SET {0} get", "GETDEL {0}", "GETEX {0}",
    "APPEND {0} x", "INCR {0}", "STRLEN {0}", "SETRANGE {0} 0 x", "GETRANGE {0} 0 1",
    "EXISTS {0}", "TOUCH {0}", "TYPE {0}", "DEL {0}", "UNLINK {0}", "EXPIRE {0} 10",
    "TTL {0}", "PERSIST {0}", "OBJECT ENCODING {0}", "MEMORY USAGE {0}", "DUMP {0}",
    "RESTORE {0} 0 x", "HEXISTS {0} f", "HSTRLEN {0} f", "HGET {0} f", "HSET {0} f v",
    "HLEN {0}", "HDEL {0} f", "LLEN {0}", "LPUSH {0} v", "LPOP {0}", "LRANGE {0} 0 1",
    "LPOS {0} v", "SCARD {0}", "SISMEMBER {0} m", "SMEMBERS {0}", "SADD {0} m",
    "ZCARD {0}", "ZCOUNT {0} 0 1", "ZSCORE {0} m", "ZADD {0} 1 m", "ZINCRBY {0} 1 m",
    "BITCOUNT {0}", "SETBIT {0} 1 1", "GETBIT {0} 1", "BITFIELD {0} GET u4 0",
    "BITFIELD {0} SET u4 0 1", "BITFIELD_RO {0} GET u4 0", "SORT {0}", "SORT_RO {0}",
    "EVAL '' 1 {0}", "EVAL_RO '' 1 {0}", "FCALL f 1 {0}", "FCALL_RO f 1 {0}",
    "WATCH {0}", "BLPOP {0} 0", "OBJECT FREQ {0}", "PEXPIRETIME {0}", "RANDOMKEY",
    "EVAL '' 0 {0}", "EVAL '' -1 {0}", "EVAL '' 3 {0} {0}",
]
TWO_KEYS = [
    "COPY {0} {1}", "RENAME {0} {1}", "RENAMENX {0} {1}", "LMOVE {0} {1} LEFT LEFT",
    "RPOPLPUSH {0} {1}", "SMOVE {0} {1} m", "SORT {0} STORE {1}", "SINTERSTORE {0} {1}",
    "SUNIONSTORE {1} {0}", "SDIFFSTORE {1} {0} {0}", "ZUNIONSTORE {0} 1 {1}",
    "ZRANGESTORE {0} {1} 0 1", "BITOP AND {0} {1}", "MSET {0} 1 {1} 2", "MGET {0} {1}",
    "SINTERCARD 2 {0} {1}", "ZINTERCARD 2 {0} {1}", "ZDIFF 2 {0} {1}", "SINTER {0} {1}",
    "BLMOVE {0} {1} LEFT RIGHT 0", "EVAL '' 2 {0} {1}", "DEL {0} {1}", "EXISTS {0} {1}",
    "LCS {0} {1}", "ZDIFFSTORE {0} 1 {1}",
]


def dryrun_lines():
    lines = [RW_USER]
    for t in ONE_KEY:
        for k in KEYS:
            lines.append("ACL DRYRUN rwu " + t.format(k))
    for t in TWO_KEYS:
        for a in KEYS:
            for b in KEYS:
                lines.append("ACL DRYRUN rwu " + t.format(a, b))
    return lines


SEQUENCES["dryrun-key-flags"] = dryrun_lines()

CASES = [(name, resp3) for resp3 in (False, True) for name in SEQUENCES]


@pytest.mark.parametrize("name,resp3", CASES,
                         ids=[f"{n}-{'resp3' if r else 'resp2'}" for n, r in CASES])
def test_replies_match_redis(servers, name, resp3):
    bad = replay(servers, SEQUENCES[name], resp3)
    assert not bad, report(bad)


def log_entries(conn):
    """The ACL LOG's deterministic fields (not ages or client details)."""
    out = []
    for entry in parse(conn.cmd("ACL", "LOG")):
        fields = dict(pairs(entry))
        out.append(tuple(fields[k] for k in ("count", "reason", "context", "object",
                                             "username")))
    return out


def test_acl_log_names_what_no_selector_permits(servers):
    lines = [
        "ACL SETUSER lg on nopass +mget +multi +exec +eval ~key (+mget ~key ~otherkey) "
        "(+publish &ch) (+get ~g)",
        "AUTH lg x",
        "GET key",
        "MGET otherkey someotherkey",
        "MGET key otherkey someotherkey",
        "PUBLISH other m",
        "GET key",
        "MULTI",
        "GET h",
        "EXEC",
        "EVAL 'return redis.pcall(\"mget\", \"key\", \"nope\")' 0",
        "EVAL 'return redis.pcall(\"publish\", \"nope\", \"m\")' 0",
        AS_DEFAULT,
    ]
    got = []
    for port in servers:
        reset_server(port)
        c = Conn(port)
        try:
            for line in lines:
                run_line(c, line)
            got.append(log_entries(c))
        finally:
            c.close()
    assert len(got[1]) >= 6, got[1]
    assert got[0] == got[1], f"ebb:   {got[0]}\nredis: {got[1]}"


def test_subscribers_dropped_when_no_selector_keeps_their_channels(servers):
    outcomes = []
    for port in servers:
        reset_server(port)
        admin = Conn(port)
        admin.cmd(*shlex.split(
            "ACL SETUSER sub on nopass +subscribe +psubscribe +ping (&a* &b) (&c)"))
        subs = {}
        for name, cmd in [("a", ["SUBSCRIBE", "a1"]), ("b", ["SUBSCRIBE", "b"]),
                          ("c", ["SUBSCRIBE", "c"]), ("p", ["PSUBSCRIBE", "a*"])]:
            s = Conn(port, timeout=1.0)
            s.cmd("AUTH", "sub", "x")
            s.cmd(*cmd)
            subs[name] = s
        steps = []
        for rule in ["(&a* &b &c)", "clearselectors", "(&a*)"]:
            admin.cmd("ACL", "SETUSER", "sub", *shlex.split(rule))
            time.sleep(0.1)
            steps.append((rule, sorted(n for n, s in subs.items()
                                       if s.cmd("PING").endswith(CLOSED))))
        outcomes.append(steps)
        for s in subs.values():
            s.close()
        admin.close()
    assert outcomes[0] == outcomes[1], f"ebb:   {outcomes[0]}\nredis: {outcomes[1]}"


# ------------------------------------------------------------ files

ACL_FILE = "user alice on (+get ~rw*)\nuser bob on (+set %W~w*) (+get %R~r*)\n"


def pair_with_aclfile(tmp_path, text):
    """ebb and redis-server, each with its own copy of an ACL file."""
    out = []
    for name in ("ebb", "redis"):
        d = tmp_path / name
        d.mkdir()
        (d / "users.acl").write_text(text)
        path = str(d / "users.acl")
        if name == "ebb":
            out.append((EbbServer("--dir", str(d), "--aclfile", path, cwd=str(d)), path))
        else:
            out.append((RedisServer(str(d), "--dir", str(d), "--aclfile", path), path))
    return out


def file_lines(path):
    return sorted(canon(line.encode()) for line in open(path).read().splitlines())


def test_aclfile_selectors_load_save_and_errors(tmp_path):
    pair = pair_with_aclfile(tmp_path, ACL_FILE)
    try:
        lines = [
            "ACL LIST",
            "ACL GETUSER alice",
            "ACL GETUSER bob",
            "ACL SETUSER carol on nopass %R~x (+@read &ch %W~y) (-@all +ping)",
            "ACL SAVE",
            "ACL LOAD",
            "ACL LIST",
            "ACL GETUSER carol",
        ]
        conns = [Conn(s.port) for s, _ in pair]
        for line in lines:
            e, r = (run_line(c, line) for c in conns)
            assert e == r, report([(line, e, r)])
        saved = [file_lines(p) for _, p in pair]
        assert saved[0] == saved[1], f"ebb:   {saved[0]}\nredis: {saved[1]}"
        for text in [
            "user dave on (+get ~a\n",
            "user dave (+get ~a\n",
            "user dave on (+nosuch ~a) (bad) (&* &x)\n",
            "user dave on (~a b)\n",
        ]:
            for _, p in pair:
                open(p, "w").write(text.replace("\n", " ").rstrip() + "\n")
            # Redis 7.0 crashes on a line with rules before an unclosed
            # selector: only the error texts of the others are compared.
            if text.startswith("user dave on (+get"):
                continue
            e, r = (run_line(c, "ACL LOAD").replace(p.encode(), b"<file>")
                    for c, (_, p) in zip(conns, pair))
            assert e == r, report([(text, e, r)])
        for c in conns:
            c.close()
    finally:
        for s, _ in pair:
            s.stop()


def redis_with_config(d, path):
    """A redis-server started with a configuration file (which must come
    first on its command line)."""
    s = RedisServer.__new__(RedisServer)
    s.cwd = str(d)
    s.port = _free_port()
    s.proc = subprocess.Popen(
        ["redis-server", path, "--port", str(s.port), "--save", "", "--appendonly", "no",
         "--dir", str(d)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(d))
    assert s._wait_ready(), "redis-server did not start"
    return s


def test_config_user_lines_with_selectors_and_rewrite(tmp_path):
    conf = ("user alice on nopass (+get ~rw*) (+set %W~w* &ch)\n"
            "user bob on >pw %R~r* (+@read ~x*)\n")
    servers = []
    for name in ("ebb", "redis"):
        d = tmp_path / name
        d.mkdir()
        (d / "redis.conf").write_text(conf)
        path = str(d / "redis.conf")
        if name == "ebb":
            s = EbbServer(path, "--dir", str(d), cwd=str(d))
        else:
            s = redis_with_config(d, path)
        servers.append((s, path))
    try:
        conns = [Conn(s.port) for s, _ in servers]
        for line in ["ACL LIST", "ACL GETUSER alice", "ACL GETUSER bob",
                     "ACL SETUSER carol (~c +get) (&d +publish)", "CONFIG REWRITE"]:
            e, r = (run_line(c, line) for c in conns)
            assert e == r, report([(line, e, r)])
        users = [[ln for ln in file_lines(p) if ln.startswith(b"user ")] for _, p in servers]
        assert users[0] == users[1], f"ebb:   {users[0]}\nredis: {users[1]}"
        for c in conns:
            c.close()
    finally:
        for s, _ in servers:
            s.stop()


def test_config_user_line_with_an_unclosed_selector_stops_the_start(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("user alice on (+get ~a\n")
    p = subprocess.run([BIN, str(conf), "--port", "0"], capture_output=True, text=True,
                       timeout=10)
    assert p.returncode != 0
    assert "Unmatched parenthesis in acl selector starting at '(+get'" in p.stderr
