"""Pub/Sub of ebb-server and of a redis-server side by side, comparing the
raw reply bytes in RESP2 and in RESP3.

Each entry of SEQUENCES is a short script run on fresh connections of both
servers (after FLUSHALL, with every subscription of the previous script
gone): the SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE family and their UNSUBSCRIBE
counterparts (several channels at once, repeats, channels not subscribed,
no arguments, counts across channels, patterns and shard channels), the
commands a RESP2 connection may run in subscribed mode and the error the
others get, RESP3 subscribers running any command, delivery of
message / pmessage / smessage frames (binary names and payloads, empty
payloads, PUBLISH and SPUBLISH counts), PUBSUB CHANNELS / NUMSUB / NUMPAT /
SHARDCHANNELS / SHARDNUMSUB and their argument errors, RESET and SELECT
while subscribed, CLIENT KILL TYPE pubsub, subscribing inside MULTI, and
ACL channel rules (NOPERM errors, PSUBSCRIBE needing the exact pattern,
subscribers disconnected when ACL SETUSER takes their channels away).

A line is a command split with shell quoting rules, or a tuple (a prefix
string, then the arguments, which may be bytes). The prefix or the start
of the string may hold, in this order:
  `N:`   run on connection N (0 unless given; connections open on demand);
  `@N`   read N replies (0: none);
  `%N`   read N replies and compare them as a multiset (Redis answers
         UNSUBSCRIBE without arguments, and delivers the pmessages of a
         channel that matches several patterns, in hash table order);
  `~`    the reply is an array compared as a multiset (PUBSUB CHANNELS).
Two lines are not commands:
  `N:SYNC`   send PING with a fresh marker and read everything that
             connection is sent up to the marker's reply (the messages
             delivered to it so far, and nothing after them, without
             sleeping);
  `N:SYNC%`  the same, compared as a multiset.
A connection the server closed reads as `<connection closed>`.

Left out: PUBSUB HELP's text (only its form is compared); client ids and
CLIENT LIST / INFO lines (not deterministic).

Skipped when redis-server is not installed."""

import re
import shlex
import shutil
import socket
import time

import pytest

from conftest import EbbServer, Raw, RedisServer


BIN = b"ch\x00\xff\r\nx"
BINMSG = b"\x00\x01\r\n\xfe payload"

ACL_USER = "ACL SETUSER psuser on nopass resetchannels &allowed* +@all ~*"

SEQUENCES = {
    # -------------------------------------------- subscribe / unsubscribe
    "subscribe-counts": [
        "@3 SUBSCRIBE a b a",
        "@2 SUBSCRIBE c c",
        "@1 SUBSCRIBE d",
        "@2 UNSUBSCRIBE a zz",
        "@1 UNSUBSCRIBE a",
        "%3 UNSUBSCRIBE",
        "@1 UNSUBSCRIBE",
        "@1 UNSUBSCRIBE nosuch",
        "PING",
    ],
    "unsubscribe-none-subscribed": [
        "@1 UNSUBSCRIBE",
        "@1 PUNSUBSCRIBE",
        "@1 SUNSUBSCRIBE",
        "@2 UNSUBSCRIBE x y",
        "@2 PUNSUBSCRIBE x* y*",
        "@2 SUNSUBSCRIBE x y",
        "PING",
        "GET k",
    ],
    "unsubscribe-one": [
        "@1 SUBSCRIBE only",
        "@1 UNSUBSCRIBE",
        "@1 PSUBSCRIBE only*",
        "@1 PUNSUBSCRIBE",
        "@1 SSUBSCRIBE sonly",
        "@1 SUNSUBSCRIBE",
        "GET k",
    ],
    "psubscribe-counts": [
        "@3 PSUBSCRIBE p* q? p*",
        "@1 PSUBSCRIBE [ab]*",
        "@2 PUNSUBSCRIBE q? nosuch*",
        "@1 PUNSUBSCRIBE q?",
        "%2 PUNSUBSCRIBE",
        "@1 PUNSUBSCRIBE",
        "GET k",
    ],
    "ssubscribe-counts": [
        "@3 SSUBSCRIBE s1 s2 s1",
        "@1 SSUBSCRIBE s3",
        "@2 SUNSUBSCRIBE s2 zz",
        "%2 SUNSUBSCRIBE",
        "@1 SUNSUBSCRIBE",
        "GET k",
    ],
    "mixed-counts": [
        "@1 SUBSCRIBE a",
        "@1 PSUBSCRIBE p*",
        "@1 SSUBSCRIBE s1",
        "@1 SUBSCRIBE b",
        "@1 SSUBSCRIBE s2",
        "@1 PSUBSCRIBE a",
        "@1 SUBSCRIBE p*",
        "@1 SUNSUBSCRIBE s1",
        "@1 UNSUBSCRIBE a",
        "@1 PUNSUBSCRIBE p*",
        "@1 PUNSUBSCRIBE",
        "%2 UNSUBSCRIBE",
        # Only a shard channel left.
        "GET k",
        "PING",
        "@1 SUNSUBSCRIBE",
        "GET k",
    ],
    "shard-only-then-unsubscribe-all": [
        "@1 SSUBSCRIBE s1",
        "@1 SUBSCRIBE a",
        "@1 UNSUBSCRIBE",
        "GET k",
        "@1 PUNSUBSCRIBE",
        "GET k",
        "@1 SUNSUBSCRIBE s1",
        "GET k",
    ],
    "subscribe-many": [
        "@100 SUBSCRIBE " + " ".join(f"ch{i}" for i in range(100)),
        "@50 PSUBSCRIBE " + " ".join(f"pa{i}*" for i in range(50)),
        "1:PUBSUB NUMPAT",
        "1:PUBSUB NUMSUB ch0 ch99 ch100",
        "1:PUBLISH ch7 m",
        "1:PUBLISH pa1x m",
        "SYNC%",
        "%100 UNSUBSCRIBE",
        "%50 PUNSUBSCRIBE",
        "GET k",
    ],
    "subscribe-arity": [
        "SUBSCRIBE",
        "PSUBSCRIBE",
        "SSUBSCRIBE",
        "PUBLISH a",
        "PUBLISH a b c",
        "SPUBLISH a",
        "@1 SUBSCRIBE a",
        "SUBSCRIBE",
        "PSUBSCRIBE",
        "SSUBSCRIBE",
        "@1 UNSUBSCRIBE",
    ],
    # -------------------------------------------------- subscribed mode
    "subscribed-mode-pattern-only": [
        "@1 PSUBSCRIBE p*",
        "GET k",
        "PING",
        "@1 PUNSUBSCRIBE p*",
        "PING",
    ],
    "subscribed-mode-shard-only": [
        "@1 SSUBSCRIBE s",
        "GET k",
        "PING",
        "@1 SUNSUBSCRIBE s",
        "PING",
    ],
    "subscribed-quit": [
        "@1 SUBSCRIBE a",
        "QUIT",
        "PING",
        "1:PUBSUB NUMSUB a",
    ],
    "subscribed-reset": [
        "@2 SUBSCRIBE a b",
        "@1 PSUBSCRIBE p*",
        "@1 SSUBSCRIBE s",
        "RESET",
        "GET k",
        "PING",
        "1:PUBSUB NUMSUB a b",
        "1:PUBSUB NUMPAT",
        "1:PUBSUB SHARDNUMSUB s",
        "1:PUBLISH a x",
        "SYNC",
    ],
    "subscribed-select": [
        "@1 SUBSCRIBE a",
        "SELECT 1",
        "SET k v",
        "1:PUBLISH a fromdb0",
        "SYNC",
        "GET k",
    ],
    # -------------------------------------------------------- delivery
    "deliver-channels": [
        "1:@2 SUBSCRIBE a b",
        "2:@1 SUBSCRIBE a",
        "PUBLISH a hello",
        "PUBLISH b world",
        "PUBLISH c nobody",
        "PUBLISH a ''",
        "1:SYNC",
        "2:SYNC",
        "1:@1 UNSUBSCRIBE a",
        "PUBLISH a again",
        "1:SYNC",
        "2:SYNC",
    ],
    "deliver-patterns": [
        "1:@1 PSUBSCRIBE news.*",
        "2:@1 SUBSCRIBE news.x",
        "2:@1 PSUBSCRIBE n*",
        "PUBLISH news.x m1",
        "PUBLISH news.y m2",
        "PUBLISH other m3",
        "1:SYNC",
        "2:SYNC",
        "PUBLISH n m4",
        "1:SYNC",
        "2:SYNC",
    ],
    "deliver-several-patterns": [
        "1:@3 PSUBSCRIBE a* *b ?x?",
        "1:@1 SUBSCRIBE axb",
        "PUBLISH axb m",
        "1:SYNC%",
        "PUBLISH ab m2",
        "1:SYNC%",
        "PUBLISH zzz none",
        "1:SYNC",
    ],
    "deliver-pattern-syntax": [
        r"1:@4 PSUBSCRIBE h[ae]llo h\?llo [^x]y *",
        "PUBLISH hello a",
        "1:SYNC%",
        "PUBLISH h?llo b",
        "1:SYNC%",
        "PUBLISH zy c",
        "1:SYNC%",
        "PUBLISH xy d",
        "1:SYNC%",
    ],
    "deliver-binary": [
        ("1:@1", "SUBSCRIBE", BIN),
        ("1:@1", "PSUBSCRIBE", b"ch\x00*"),
        ("", "PUBLISH", BIN, BINMSG),
        ("", "PUBLISH", BIN, b""),
        ("", "PUBLISH", b"ch\x00", b"x" * 300),
        "1:SYNC%",
        ("", "PUBSUB", "NUMSUB", BIN),
        ("", "PUBSUB", "CHANNELS", b"ch\x00*"),
        ("1:@1", "UNSUBSCRIBE", BIN),
        ("1:@1", "PUNSUBSCRIBE", b"ch\x00*"),
    ],
    "deliver-shard": [
        "1:@2 SSUBSCRIBE s1 s2",
        "2:@1 SSUBSCRIBE s1",
        "3:@1 SUBSCRIBE s1",
        "3:@1 PSUBSCRIBE s*",
        "SPUBLISH s1 m1",
        "SPUBLISH s2 ''",
        "SPUBLISH s3 none",
        "PUBLISH s1 plain",
        "1:SYNC",
        "2:SYNC",
        "3:SYNC",
        "1:@1 SUNSUBSCRIBE s1",
        "SPUBLISH s1 m2",
        "1:SYNC",
        "2:SYNC",
    ],
    "publish-counts": [
        "1:@1 SUBSCRIBE a",
        "2:@1 SUBSCRIBE a",
        "2:@2 PSUBSCRIBE a* *",
        "3:@1 PSUBSCRIBE a*",
        "PUBLISH a x",
        "PUBLISH ab x",
        "PUBLISH zz x",
        "SPUBLISH a x",
        "1:SYNC",
        "2:SYNC%",
        "3:SYNC",
    ],
    # ---------------------------------------------------------- PUBSUB
    "pubsub-introspection": [
        "PUBSUB CHANNELS",
        "PUBSUB NUMPAT",
        "PUBSUB SHARDCHANNELS",
        "PUBSUB NUMSUB",
        "PUBSUB SHARDNUMSUB",
        "1:@3 SUBSCRIBE a1 a2 b1",
        "2:@2 SUBSCRIBE a1 c",
        "2:@3 PSUBSCRIBE a* a* b*",
        "3:@1 PSUBSCRIBE a*",
        "3:@2 SSUBSCRIBE s1 t1",
        "1:@1 SSUBSCRIBE s1",
        "~PUBSUB CHANNELS",
        "~PUBSUB CHANNELS a*",
        "~PUBSUB CHANNELS a?",
        "PUBSUB CHANNELS zz*",
        "PUBSUB CHANNELS c",
        "~PUBSUB CHANNELS [ab]*",
        "PUBSUB CHANNELS *2",
        r"PUBSUB CHANNELS a\\1",
        "~PUBSUB CHANNELS [^a]*",
        "PUBSUB NUMSUB a1 a1 zz c b1",
        "PUBSUB NUMSUB s1",
        "PUBSUB NUMPAT",
        "~PUBSUB SHARDCHANNELS",
        "PUBSUB SHARDCHANNELS s*",
        "PUBSUB SHARDCHANNELS a*",
        "PUBSUB SHARDNUMSUB s1 s1 t1 zz a1",
        "pubsub channels a1",
        "PubSub NumSub a1",
    ],
    "pubsub-errors": [
        "PUBSUB",
        "PUBSUB FOO",
        "PUBSUB FOO bar",
        "PUBSUB CHANNELS a b",
        "PUBSUB SHARDCHANNELS a b",
        "PUBSUB NUMPAT x",
        "PUBSUB HELP x",
        "PUBSUB CHANNELS ''",
        "PUBSUB NUMSUB ''",
    ],
    # ------------------------------------------------------ CLIENT KILL
    "client-kill-pubsub": [
        "1:@1 SUBSCRIBE a",
        "2:@1 PSUBSCRIBE p*",
        "3:@1 SSUBSCRIBE s",
        "4:PING",
        "CLIENT KILL TYPE pubsub",
        "1:PING",
        "2:PING",
        "3:PING",
        "4:PING",
        "PUBSUB NUMSUB a",
        "PUBSUB NUMPAT",
        "PUBSUB SHARDNUMSUB s",
        "CLIENT KILL TYPE pubsub",
        "CLIENT KILL TYPE PUBSUB SKIPME no",
        "CLIENT KILL TYPE nosuch",
    ],
    "client-kill-after-unsubscribe": [
        "1:@1 SUBSCRIBE a",
        "1:@1 UNSUBSCRIBE a",
        "CLIENT KILL TYPE pubsub",
        "1:PING",
    ],
    # ----------------------------------------------------------- MULTI
    "multi-subscribe": [
        "MULTI",
        "SUBSCRIBE a b",
        "PSUBSCRIBE p*",
        "SET k v",
        "@0 EXEC",
        "SYNC",
        "1:PUBSUB NUMSUB a b",
        "1:PUBLISH a m",
        "SYNC",
    ],
    "multi-ssubscribe": [
        "MULTI",
        "SSUBSCRIBE s",
        "@0 EXEC",
        "SYNC",
        "1:PUBSUB SHARDNUMSUB s",
    ],
    "multi-unsubscribe": [
        "MULTI",
        "UNSUBSCRIBE",
        "PUNSUBSCRIBE x*",
        "SUNSUBSCRIBE",
        "@0 EXEC",
        "SYNC",
    ],
    "script-publish": [
        "1:@1 SUBSCRIBE a",
        "EVAL \"return redis.call('publish', 'a', 'x')\" 0",
        "EVAL \"return redis.call('subscribe', 'a')\" 0",
        "1:SYNC",
    ],
    "multi-subscribe-unsubscribe": [
        "MULTI",
        "SUBSCRIBE a",
        "UNSUBSCRIBE a",
        "GET k",
        "@0 EXEC",
        "SYNC",
        "GET k",
    ],
    # ------------------------------------------------------------- ACL
    "acl-channels": [
        ACL_USER,
        "1:AUTH psuser x",
        "1:PUBLISH allowed1 x",
        "1:PUBLISH denied x",
        "1:SPUBLISH allowedS x",
        "1:SPUBLISH denied x",
        "1:SUBSCRIBE denied",
        "1:SUBSCRIBE allowed1 denied",
        "1:PSUBSCRIBE allowed1*",
        "1:PSUBSCRIBE allowed",
        "1:PSUBSCRIBE *",
        "1:SSUBSCRIBE denied",
        "1:@2 SUBSCRIBE allowed1 allowed2",
        "1:@1 PSUBSCRIBE allowed*",
        "1:@1 SSUBSCRIBE allowedS",
        "1:SUBSCRIBE denied",
        "1:@1 UNSUBSCRIBE denied",
        "1:@1 PUNSUBSCRIBE nosuch*",
        "PUBLISH allowed1 m",
        "SPUBLISH allowedS m",
        "1:SYNC",
        "1:PING",
    ],
    "acl-channels-in-multi": [
        ACL_USER,
        "1:AUTH psuser x",
        "1:MULTI",
        "1:PUBLISH denied x",
        "1:SUBSCRIBE denied",
        "1:PUBLISH allowed1 x",
        "1:EXEC",
        "1:MULTI",
        "1:PUBLISH allowed1 x",
        "1:EXEC",
    ],
    "acl-setuser-kills-subscribers": [
        ACL_USER,
        "1:AUTH psuser x",
        "1:@1 SUBSCRIBE allowed1",
        "2:AUTH psuser x",
        "3:AUTH psuser x",
        "3:@1 PSUBSCRIBE allowed*",
        "4:AUTH psuser x",
        "4:@1 SSUBSCRIBE allowedS",
        # Still allowed: nobody is disconnected.
        "ACL SETUSER psuser &allowedX",
        "1:PING",
        "3:PING",
        "4:PING",
        # The channels are taken away.
        "ACL SETUSER psuser resetchannels &other",
        "1:PING",
        "2:PING",
        "3:PING",
        "4:PING",
        "PUBSUB NUMSUB allowed1",
        "PUBSUB NUMPAT",
        "PUBSUB SHARDNUMSUB allowedS",
    ],
    "acl-setuser-pattern-kept-exact": [
        ACL_USER,
        "1:AUTH psuser x",
        "1:@1 PSUBSCRIBE allowed*",
        "2:AUTH psuser x",
        "2:@1 SUBSCRIBE allowed9",
        # allowed9 is matched by the new rule; the pattern is not kept.
        "ACL SETUSER psuser resetchannels &allowed9",
        "1:PING",
        "2:PING",
        "ACL SETUSER psuser allchannels",
        "2:PING",
    ],
    "acl-setuser-other-rules-keep-subscribers": [
        ACL_USER,
        "1:AUTH psuser x",
        "1:@1 SUBSCRIBE allowed1",
        "ACL SETUSER psuser -get",
        "1:PING",
        "ACL SETUSER psuser resetchannels &allowed1",
        "1:PING",
        "ACL DELUSER psuser",
        "1:PING",
    ],
}

# RESP2 only: which commands a connection in subscribed mode may run (in
# RESP3 it may run any, SEQUENCES_RESP3).
SEQUENCES_RESP2 = {
    "subscribed-mode-commands": [
        "@1 SUBSCRIBE a",
        "PING",
        "PING hello",
        "PING ''",
        "PING a b",
        "GET k",
        "SET k v",
        "PUBLISH a x",
        "SPUBLISH a x",
        "CLIENT GETNAME",
        "CLIENT SETNAME n",
        "SELECT 1",
        "ECHO hi",
        "MULTI",
        "HELLO",
        "HELLO 3",
        "AUTH default x",
        "PUBSUB NUMSUB a",
        "CONFIG GET maxmemory",
        "GET",
        "NOSUCHCOMMAND x",
        "@1 PSUBSCRIBE p*",
        "@1 SSUBSCRIBE s",
        "@1 PUNSUBSCRIBE",
        "@1 SUNSUBSCRIBE",
        "@1 UNSUBSCRIBE",
        "GET k",
        "SET k v",
    ],
}

# Sequences that only make sense in RESP3: a subscribed connection runs
# any command and gets its own messages.
SEQUENCES_RESP3 = {
    "resp3-subscribed-commands": [
        "@2 SUBSCRIBE a b",
        "GET k",
        "SET k v",
        "GET k",
        "PING",
        "PING hi",
        "ECHO e",
        "@2 PUBLISH a self",
        "PUBLISH zz nobody",
        "@1 PSUBSCRIBE p*",
        "@2 PUBLISH pq selfp",
        "@1 SSUBSCRIBE s",
        "@2 SPUBLISH s selfs",
        "SELECT 1",
        "@2 PUBLISH a fromdb1",
        "PUBSUB NUMSUB a b",
        "CLIENT KILL TYPE pubsub",
        "PING",
    ],
    "resp3-hello2-while-subscribed": [
        "@1 SUBSCRIBE a",
        "HELLO 2",
        "GET k",
        "PING",
        "1:PUBLISH a m",
        "SYNC",
        "@1 UNSUBSCRIBE",
        "GET k",
    ],
    # A message a connection's own command delivers to it comes before the
    # command's reply (Redis writes it at once): PUBLISH, SPUBLISH, from a
    # script and between EXEC's replies.
    "resp3-script-publish-self": [
        "@1 SUBSCRIBE a",
        "@1 SSUBSCRIBE s",
        "@0 EVAL \"return redis.call('publish', 'a', 'x')\" 0",
        "SYNC",
        "@0 EVAL \"return redis.call('spublish', 's', 'y')\" 1 s",
        "SYNC",
    ],
    "resp3-spublish-self": [
        "@1 SSUBSCRIBE s",
        "@2 SPUBLISH s m",
    ],
    "resp3-publish-self": [
        "@1 SUBSCRIBE a",
        "@1 PSUBSCRIBE a*",
        "@3 PUBLISH a m",
    ],
    "resp3-multi-publish-self": [
        "@1 SUBSCRIBE a",
        "MULTI",
        "PUBLISH a m1",
        "SUBSCRIBE b",
        "PUBLISH b m2",
        "@0 EXEC",
        "SYNC",
    ],
    "resp3-reset-back-to-resp2": [
        "@1 SUBSCRIBE a",
        "RESET",
        "PING",
        "@1 SUBSCRIBE a",
        "GET k",
        "1:PUBLISH a m",
        "SYNC",
    ],
}


CLOSED = b"<connection closed>"
TIMEOUT = b"<no reply>"


def Conn(port, resp3=False):
    """A Raw connection that gives up after a few seconds instead of
    waiting for a reply that never comes."""
    return Raw(port, resp3=resp3, timeout=3)


HEAD = re.compile(r"^(?:(\d+):)?(~)?(?:([@%])(\d+))?\s*(.*)$", re.S)


def parse(line):
    """(connection, replies to read, multiset?, array multiset?, args)."""
    text = line[0] if isinstance(line, tuple) else line
    conn, arrset, mode, n, rest = HEAD.match(text).groups()
    args = list(line[1:]) if isinstance(line, tuple) else shlex.split(rest)
    return (int(conn or 0), int(n) if n else 1, mode == "%", bool(arrset), args)


COUNT = re.compile(rb"^(.*):(\d+)\r\n$", re.S)
ID = re.compile(rb"\$2\r\nid\r\n:\d+\r\n")


def as_multiset(frames):
    """Frames in sorted order. A subscribe-family reply's count stays in
    arrival order: it falls by one per reply whichever channel comes first."""
    bodies, counts = [], []
    for f in frames:
        m = COUNT.match(f)
        if m and b"subscribe\r\n" in f[:40]:
            bodies.append(m.group(1))
            counts.append(m.group(2))
        else:
            bodies.append(f)
    return b"".join(sorted(bodies)) + b" counts " + b",".join(counts)


def read_frame(c):
    try:
        got = c.read()
    except socket.timeout:
        return TIMEOUT
    except OSError:
        return CLOSED
    return got or CLOSED


def read_array_set(c):
    """An array reply whose elements are compared in sorted order."""
    try:
        line = c.f.readline()
    except (socket.timeout, OSError):
        return TIMEOUT
    if not line:
        return CLOSED
    if line[:1] not in (b"*", b"~"):
        return line
    items = sorted(c.read() for _ in range(int(line[1:-2])))
    return line + b"".join(items)


class Runner:
    """The connections of one server for one sequence."""

    def __init__(self, port, resp3):
        self.port, self.resp3 = port, resp3
        self.conns = {}
        self.marks = 0

    def conn(self, n):
        if n not in self.conns:
            self.conns[n] = Conn(self.port, resp3=self.resp3)
        return self.conns[n]

    def sync(self, c, multiset):
        self.marks += 1
        mark = b"sync-mark-%d" % self.marks
        try:
            c.send(b"PING", mark)
        except OSError:
            return CLOSED
        frames = []
        while True:
            f = read_frame(c)
            if f in (CLOSED, TIMEOUT):
                frames.append(f)
                break
            if mark in f:
                break
            frames.append(f)
        if multiset:
            return as_multiset(frames)
        return b"".join(frames)

    def run(self, line):
        if isinstance(line, str) and line.split(":", 1)[-1] in ("SYNC", "SYNC%"):
            n = int(line.split(":")[0]) if ":" in line else 0
            return self.sync(self.conn(n), line.endswith("%"))
        which, n, multiset, arrset, args = parse(line)
        c = self.conn(which)
        try:
            c.send(*args)
        except OSError:
            return CLOSED
        if arrset:
            return read_array_set(c)
        frames = []
        for _ in range(n):
            f = read_frame(c)
            frames.append(f)
            if f in (CLOSED, TIMEOUT):
                break
        if multiset:
            return as_multiset(frames)
        return b"".join(frames)

    def close(self):
        for c in self.conns.values():
            c.close()


def settle(port):
    """Waits until the subscriptions of earlier sequences are gone, then
    clears data and users."""
    c = Conn(port)
    try:
        end = time.time() + 3
        while time.time() < end:
            if (c.cmd("PUBSUB", "NUMPAT") == b":0\r\n"
                    and c.cmd("PUBSUB", "CHANNELS") == b"*0\r\n"
                    and c.cmd("PUBSUB", "SHARDCHANNELS") == b"*0\r\n"):
                break
            time.sleep(0.01)
        c.cmd("FLUSHALL")
        c.cmd("ACL", "DELUSER", "psuser")
    finally:
        c.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    d = tmp_path_factory.mktemp("pubsub")
    ebb = EbbServer("--dir", str(d), "--save", "", "--appendonly", "no", cwd=str(d))
    red = RedisServer(cwd=str(d))
    yield ebb.port, red.port
    ebb.stop()
    red.stop()


def replay(ports, lines, resp3):
    """Runs `lines` on both servers; returns the mismatches as (line, ebb's
    reply, redis-server's reply)."""
    for p in ports:
        settle(p)
    runners = [Runner(p, resp3) for p in ports]
    bad = []
    try:
        for line in lines:
            # Client ids (HELLO) differ between the servers.
            e, r = (ID.sub(b"$2\r\nid\r\n:ID\r\n", x.run(line)) for x in runners)
            if e != r or TIMEOUT in r:
                bad.append((line, e, r))
                if TIMEOUT in e or TIMEOUT in r:
                    break
    finally:
        for x in runners:
            x.close()
    return bad


def short(x, n=600):
    text = repr(x)
    return text if len(text) <= n else text[:n] + f"... ({len(x)} long)"


CASES = ([(name, False) for name in SEQUENCES] + [(name, True) for name in SEQUENCES]
         + [(name, False) for name in SEQUENCES_RESP2]
         + [(name, True) for name in SEQUENCES_RESP3])


@pytest.mark.parametrize("name,resp3", CASES,
                         ids=[f"{n}-{'resp3' if r else 'resp2'}" for n, r in CASES])
def test_pubsub_matches_redis(servers, name, resp3):
    lines = SEQUENCES.get(name) or SEQUENCES_RESP2.get(name) or SEQUENCES_RESP3[name]
    bad = replay(servers, lines, resp3)
    assert not bad, "\n".join(
        f"{short(line)}:\n  ebb:   {short(e)}\n  redis: {short(r)}" for line, e, r in bad)


@pytest.mark.parametrize("resp3", [False, True])
def test_pubsub_help_form(servers, resp3):
    # PUBSUB HELP's text is each server's own; the form is compared: an
    # array of status lines naming the command first, every subcommand
    # Redis lists listed by ebb too.
    replies = []
    for port in servers:
        c = Conn(port, resp3=resp3)
        try:
            replies.append(c.cmd("PUBSUB", "HELP"))
        finally:
            c.close()
    names = []
    for raw in replies:
        head, *lines = raw.split(b"\r\n")[:-1]
        assert head.startswith(b"*") and int(head[1:]) == len(lines)
        assert all(l.startswith(b"+") for l in lines)
        assert lines[0].startswith(b"+PUBSUB <subcommand>")
        names.append({l[1:].split()[0] for l in lines[1:] if not l.startswith(b"+ ")})
    assert names[1] <= names[0], names[1] - names[0]
