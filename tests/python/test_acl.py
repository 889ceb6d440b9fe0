"""Redis 7.0 ACL users: ACL SETUSER / GETUSER / DELUSER / LIST / USERS /
WHOAMI / CAT / GENPASS / DRYRUN / LOG / LOAD / SAVE / HELP, AUTH with a user
name, HELLO AUTH and CONFIG SET requirepass. Covers the default user, every
kind of SETUSER rule (flags, passwords and hashes, key patterns with %R~ and
%W~, channel patterns, commands, subcommands and categories) and the error
texts of bad rules; the NOPERM refusals of commands, subcommands, keys and
channels at top level, in MULTI and in scripts; the ACL log (its fields,
contexts, grouping, count and reset); and the connections of a deleted or
killed user.

The expected replies are redis-server 7.0.15's, byte for byte; run with
AGAINST_REDIS=1 to check this file against it. Not tested, as ebb differs on
purpose: the order of single-command rules in a user's description (Redis
follows its command table's hash order), selectors and whole category
listings (ebb has commands of its own in some categories).
"""

import hashlib
import socket

import pytest

from conftest import Raw, raw_cmd, sha


@pytest.fixture
def raw(srv):
    c = Raw(srv.port)
    yield c
    c.close()


@pytest.fixture
def admin(srv):
    """A RESP3 client of the default user (maps come back as dicts)."""
    c = srv.client(protocol=3)
    yield c
    c.close()


@pytest.fixture
def connect(srv):
    """Opens raw connections (authenticated when a user is given); all are
    closed after the test."""
    opened = []

    def make(user=None, password="pw"):
        c = Raw(srv.port)
        c.s.settimeout(5)
        opened.append(c)
        if user is not None:
            assert c.cmd("AUTH", user, password) == b"+OK\r\n"
        return c

    yield make
    for c in opened:
        c.close()


def q(client, *args):
    """A command's parsed reply, without redis-py's reply callbacks."""
    return raw_cmd(client, *args)


def bulk(s):
    b = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(b), b)


def array(*items):
    return b"*%d\r\n" % len(items) + b"".join(bulk(i) for i in items)


def error(text):
    return b"-" + text.encode() + b"\r\n"


def bad_rule(rule, why):
    return error(f"ERR Error in ACL SETUSER modifier '{rule}': {why}")


def sha256(password):
    return hashlib.sha256(password.encode()).hexdigest()


def user_of(admin, name):
    """ACL GETUSER as a dict (None for a missing user)."""
    return q(admin, "ACL", "GETUSER", name)


def acl_list(raw):
    return raw.cmd("ACL", "LIST")


def line_of(admin, name):
    """The user's line of ACL LIST."""
    for line in q(admin, "ACL", "LIST"):
        if line.startswith(f"user {name} "):
            return line
    return None


def is_closed(c):
    """Whether the server has closed raw connection `c`."""
    try:
        return c.cmd("PING") == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def log_of(admin, *args):
    """ACL LOG entries without their time and client fields."""
    return [
        {k: v for k, v in e.items() if k not in ("age-seconds", "client-info")}
        for e in q(admin, "ACL", "LOG", *args)
    ]


def entry(reason, context, obj, username, count=1):
    return {"count": count, "reason": reason, "context": context,
            "object": obj, "username": username}


NOPERM_KEYS = error("NOPERM this user has no permissions to access one of the keys used as arguments")
NOPERM_CHANNELS = error("NOPERM this user has no permissions to access one of the channels used as arguments")
WRONGPASS = error("WRONGPASS invalid username-password pair or user is disabled.")
NOAUTH = error("NOAUTH Authentication required.")
NO_ACLFILE = error(
    "ERR This Redis instance is not configured to use an ACL file. You may want to "
    "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
    "(assuming you have a Redis configuration file set) in order to store users in "
    "the Redis configuration.")
BAD_HASH = ("The password hash must be exactly 64 characters and contain only "
            "lowercase hexadecimal characters")
NO_SUCH_PASSWORD = "The password you are trying to remove from the user does not exist"
UNKNOWN_NAME = "Unknown command or category name in ACL"
KEY_AFTER_STAR = (
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
    "not have any effect. Try 'resetkeys' to start with an empty list of patterns")
CHANNEL_AFTER_STAR = (
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
    "does not have any effect. Try 'resetchannels' to start with an empty list of channels")
GENPASS_RANGE = error(
    "ERR ACL GENPASS argument must be the number of bits for the output password, "
    "a positive number up to 4096")


def noperm_cmd(name):
    return error(f"NOPERM this user has no permissions to run the '{name}' command")


def dry_cmd(name):
    return bulk(f"This user has no permissions to run the '{name}' command")


def dry_key(key):
    return bulk(f"This user has no permissions to access the '{key}' key")


def dry_channel(channel):
    return bulk(f"This user has no permissions to access the '{channel}' channel")


# ---------------------------------------------------------------- the default user

def test_default_user(raw):
    assert raw.cmd("ACL", "WHOAMI") == bulk("default")
    assert raw.cmd("ACL", "USERS") == array("default")
    assert acl_list(raw) == array("user default on nopass ~* &* +@all")
    assert raw.cmd("ACL", "GETUSER", "default") == (
        b"*12\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$6\r\nnopass\r\n"
        b"$9\r\npasswords\r\n*0\r\n$8\r\ncommands\r\n$5\r\n+@all\r\n"
        b"$4\r\nkeys\r\n$2\r\n~*\r\n$8\r\nchannels\r\n$2\r\n&*\r\n"
        b"$9\r\nselectors\r\n*0\r\n")


def test_a_new_user_is_off_with_no_permissions(raw):
    assert raw.cmd("ACL", "SETUSER", "alice") == b"+OK\r\n"
    assert raw.cmd("ACL", "GETUSER", "alice") == (
        b"*12\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n"
        b"$9\r\npasswords\r\n*0\r\n$8\r\ncommands\r\n$5\r\n-@all\r\n"
        b"$4\r\nkeys\r\n$0\r\n\r\n$8\r\nchannels\r\n$0\r\n\r\n"
        b"$9\r\nselectors\r\n*0\r\n")
    assert acl_list(raw) == array("user alice off resetchannels -@all",
                                  "user default on nopass ~* &* +@all")


def test_getuser_of_a_missing_user_is_nil(raw):
    assert raw.cmd("ACL", "GETUSER", "nobody") == b"$-1\r\n"


def test_users_and_list_are_sorted_by_name(raw, admin):
    for name in ("zed", "alice", "Bob", "_x"):
        assert raw.cmd("ACL", "SETUSER", name) == b"+OK\r\n"
    assert raw.cmd("ACL", "USERS") == array("Bob", "_x", "alice", "default", "zed")
    assert [line.split()[1] for line in q(admin, "ACL", "LIST")] == [
        "Bob", "_x", "alice", "default", "zed"]


# ---------------------------------------------------------------- SETUSER rules

def test_on_off(admin):
    assert q(admin, "ACL", "SETUSER", "u", "on") == "OK"
    assert user_of(admin, "u")["flags"] == ["on"]
    assert q(admin, "ACL", "SETUSER", "u", "off") == "OK"
    assert user_of(admin, "u")["flags"] == ["off"]
    assert line_of(admin, "u") == "user u off resetchannels -@all"


def test_passwords_and_hashes(admin):
    assert q(admin, "ACL", "SETUSER", "u", "on", ">p1", ">p2") == "OK"
    assert user_of(admin, "u")["passwords"] == [sha256("p1"), sha256("p2")]
    assert line_of(admin, "u") == (
        f"user u on #{sha256('p1')} #{sha256('p2')} resetchannels -@all")
    # Adding a password again keeps one copy.
    assert q(admin, "ACL", "SETUSER", "u", ">p1") == "OK"
    assert user_of(admin, "u")["passwords"] == [sha256("p1"), sha256("p2")]
    assert q(admin, "ACL", "SETUSER", "u", "<p1") == "OK"
    assert user_of(admin, "u")["passwords"] == [sha256("p2")]
    # A hash is stored as given.
    h = sha256("hashed")
    assert q(admin, "ACL", "SETUSER", "u", "#" + h) == "OK"
    assert user_of(admin, "u")["passwords"] == [sha256("p2"), h]
    assert q(admin, "ACL", "SETUSER", "u", "!" + sha256("p2")) == "OK"
    assert user_of(admin, "u")["passwords"] == [h]
    assert q(admin, "ACL", "SETUSER", "u", ">a", ">b", "resetpass") == "OK"
    assert user_of(admin, "u")["passwords"] == []
    assert user_of(admin, "u")["flags"] == ["on"]


def test_nopass_forgets_the_passwords_and_a_password_ends_nopass(admin):
    assert q(admin, "ACL", "SETUSER", "u", "on", ">pw", "nopass") == "OK"
    u = user_of(admin, "u")
    assert (u["flags"], u["passwords"]) == (["on", "nopass"], [])
    assert line_of(admin, "u") == "user u on nopass resetchannels -@all"
    assert q(admin, "ACL", "SETUSER", "u", ">pw2") == "OK"
    u = user_of(admin, "u")
    assert (u["flags"], u["passwords"]) == (["on"], [sha256("pw2")])
    assert q(admin, "ACL", "SETUSER", "u", "nopass", "resetpass") == "OK"
    u = user_of(admin, "u")
    assert (u["flags"], u["passwords"]) == (["on"], [])


def test_a_hashed_password_authenticates(admin, connect):
    assert q(admin, "ACL", "SETUSER", "u", "on", "#" + sha256("secret"), "+@all") == "OK"
    c = connect()
    assert c.cmd("AUTH", "u", "pw") == WRONGPASS
    assert c.cmd("AUTH", "u", "secret") == b"+OK\r\n"
    assert c.cmd("ACL", "WHOAMI") == bulk("u")


def test_password_rule_errors(raw):
    good = sha256("x")
    assert raw.cmd("ACL", "SETUSER", "u", "#abc") == bad_rule("#abc", BAD_HASH)
    assert raw.cmd("ACL", "SETUSER", "u", "!abc") == bad_rule("!abc", BAD_HASH)
    assert raw.cmd("ACL", "SETUSER", "u", "#" + good[:63]) == bad_rule("#" + good[:63], BAD_HASH)
    assert raw.cmd("ACL", "SETUSER", "u", "#" + good.upper()) == bad_rule("#" + good.upper(), BAD_HASH)
    assert raw.cmd("ACL", "SETUSER", "u", "#" + good[:63] + "g") == (
        bad_rule("#" + good[:63] + "g", BAD_HASH))
    assert raw.cmd("ACL", "SETUSER", "u", "<nopw") == bad_rule("<nopw", NO_SUCH_PASSWORD)
    assert raw.cmd("ACL", "SETUSER", "u", "!" + good) == bad_rule("!" + good, NO_SUCH_PASSWORD)
    # None of these created the user.
    assert raw.cmd("ACL", "GETUSER", "u") == b"$-1\r\n"


def test_key_patterns(admin):
    assert q(admin, "ACL", "SETUSER", "u", "~k*", "%R~r*", "%W~w*", "%RW~rw*") == "OK"
    # %RW~ is the same as ~.
    assert user_of(admin, "u")["keys"] == "~k* %R~r* %W~w* ~rw*"
    assert line_of(admin, "u") == "user u off ~k* %R~r* %W~w* ~rw* resetchannels -@all"
    assert q(admin, "ACL", "SETUSER", "u", "resetkeys", "~a*", "%R~a*") == "OK"
    # Read access to a pattern already readable and writable changes nothing.
    assert user_of(admin, "u")["keys"] == "~a*"
    assert q(admin, "ACL", "SETUSER", "u", "resetkeys", "%r~x", "%w~y") == "OK"
    assert user_of(admin, "u")["keys"] == "%R~x %W~y"
    assert q(admin, "ACL", "SETUSER", "u", "allkeys") == "OK"
    assert user_of(admin, "u")["keys"] == "~*"
    assert q(admin, "ACL", "SETUSER", "u", "resetkeys") == "OK"
    assert user_of(admin, "u")["keys"] == ""
    assert q(admin, "ACL", "SETUSER", "u", "~*") == "OK"
    assert line_of(admin, "u") == "user u off ~* resetchannels -@all"


def test_channel_patterns(admin):
    assert q(admin, "ACL", "SETUSER", "u", "&c1", "&c2*") == "OK"
    assert user_of(admin, "u")["channels"] == "&c1 &c2*"
    assert line_of(admin, "u") == "user u off resetchannels &c1 &c2* -@all"
    assert q(admin, "ACL", "SETUSER", "u", "resetchannels", "&z") == "OK"
    assert user_of(admin, "u")["channels"] == "&z"
    assert q(admin, "ACL", "SETUSER", "u", "allchannels") == "OK"
    assert user_of(admin, "u")["channels"] == "&*"
    assert line_of(admin, "u") == "user u off &* -@all"
    assert q(admin, "ACL", "SETUSER", "u", "resetchannels") == "OK"
    assert user_of(admin, "u")["channels"] == ""


def test_pattern_after_star_errors(raw):
    assert raw.cmd("ACL", "SETUSER", "u", "~*", "~a") == bad_rule("~a", KEY_AFTER_STAR)
    assert raw.cmd("ACL", "SETUSER", "u", "allkeys", "~a") == bad_rule("~a", KEY_AFTER_STAR)
    assert raw.cmd("ACL", "SETUSER", "u", "allkeys", "%R~a") == bad_rule("%R~a", KEY_AFTER_STAR)
    assert raw.cmd("ACL", "SETUSER", "u", "&*", "&a") == bad_rule("&a", CHANNEL_AFTER_STAR)
    assert raw.cmd("ACL", "SETUSER", "u", "allchannels", "&a") == bad_rule("&a", CHANNEL_AFTER_STAR)
    # After a reset the pattern is accepted.
    assert raw.cmd("ACL", "SETUSER", "u", "allkeys", "resetkeys", "~a",
                   "allchannels", "resetchannels", "&a") == b"+OK\r\n"


def test_syntax_errors(raw):
    for rule in ("bogus", "%X~a", "%~a", "%RX~a", "allkey"):
        assert raw.cmd("ACL", "SETUSER", "u", rule) == bad_rule(rule, "Syntax error"), rule
    assert raw.cmd("ACL", "GETUSER", "u") == b"$-1\r\n"


def test_username_with_a_space(raw):
    assert raw.cmd("ACL", "SETUSER", "a b") == (
        error("ERR Usernames can't contain spaces or null characters"))
    assert raw.cmd("ACL", "SETUSER", "a b", "on") == (
        error("ERR Usernames can't contain spaces or null characters"))
    assert raw.cmd("ACL", "USERS") == array("default")


def test_command_rules(admin):
    def commands(*rules):
        assert q(admin, "ACL", "SETUSER", "u", "reset", *rules) == "OK"
        return user_of(admin, "u")["commands"]

    assert commands() == "-@all"
    assert commands("+get") == "-@all +get"
    assert commands("allcommands") == "+@all"
    assert commands("+@all") == "+@all"
    assert commands("allcommands", "nocommands") == "-@all"
    assert commands("+@all", "-@all") == "-@all"
    assert commands("+@all", "-@dangerous") == "+@all -@dangerous"
    assert commands("+@all", "-@keyspace", "+del") == "+@all -@keyspace +del"
    assert commands("+@all", "-flushall") == "+@all -flushall"
    assert commands("+@hash", "-hset") == "-@all +@hash -hset"
    assert commands("+@pubsub", "-publish") == "-@all +@pubsub -publish"
    assert commands("+get", "-get") == "-@all"
    # Subcommands.
    assert commands("+acl|whoami") == "-@all +acl|whoami"
    assert commands("+acl|whoami", "+acl") == "-@all +acl"
    assert commands("+config|get", "-config") == "-@all"
    assert commands("+config", "-config|set") == "-@all +config -config|set"
    assert commands("+@all", "-config|set") == "+@all -config|set"
    assert line_of(admin, "u") == "user u off sanitize-payload resetchannels +@all -config|set"


def test_rules_are_case_insensitive(admin):
    assert q(admin, "ACL", "SETUSER", "u", "ON", "NOPASS", "AllKeys", "AllChannels",
             "-@ALL", "+@String") == "OK"
    u = user_of(admin, "u")
    assert (u["flags"], u["commands"], u["keys"], u["channels"]) == (
        ["on", "nopass"], "-@all +@string", "~*", "&*")
    assert q(admin, "ACL", "SETUSER", "u", "NoCommands", "+GET") == "OK"
    assert user_of(admin, "u")["commands"] == "-@all +get"


def test_unknown_command_or_category(raw):
    for rule in ("+nosuch", "-nosuch", "+@nosuch", "-@nosuch", "+", "-", "+@"):
        assert raw.cmd("ACL", "SETUSER", "u", rule) == bad_rule(rule, UNKNOWN_NAME), rule
    assert raw.cmd("ACL", "GETUSER", "u") == b"$-1\r\n"


def test_a_failed_setuser_changes_nothing(admin, raw):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "~k") == b"+OK\r\n"
    before = user_of(admin, "u")
    assert raw.cmd("ACL", "SETUSER", "u", "off", ">other", "resetkeys", "+nosuch") == (
        bad_rule("+nosuch", UNKNOWN_NAME))
    assert user_of(admin, "u") == before


def test_reset(admin):
    assert q(admin, "ACL", "SETUSER", "u", "on", ">pw", "~*", "&*", "+@all") == "OK"
    assert q(admin, "ACL", "SETUSER", "u", "reset") == "OK"
    u = user_of(admin, "u")
    assert (u["flags"], u["passwords"], u["commands"], u["keys"], u["channels"]) == (
        ["off", "sanitize-payload"], [], "-@all", "", "")
    assert line_of(admin, "u") == "user u off sanitize-payload resetchannels -@all"


def test_setuser_and_getuser_arity(raw):
    assert raw.cmd("ACL", "SETUSER") == (
        error("ERR wrong number of arguments for 'acl|setuser' command"))
    assert raw.cmd("ACL", "GETUSER") == (
        error("ERR wrong number of arguments for 'acl|getuser' command"))
    assert raw.cmd("ACL", "GETUSER", "a", "b") == (
        error("ERR wrong number of arguments for 'acl|getuser' command"))


# ---------------------------------------------------------------- DELUSER

def test_deluser(raw):
    for name in ("a", "b"):
        assert raw.cmd("ACL", "SETUSER", name) == b"+OK\r\n"
    assert raw.cmd("ACL", "DELUSER", "a", "nobody", "b", "a") == b":2\r\n"
    assert raw.cmd("ACL", "DELUSER", "a") == b":0\r\n"
    assert raw.cmd("ACL", "USERS") == array("default")
    assert raw.cmd("ACL", "DELUSER", "default") == (
        error("ERR The 'default' user cannot be removed"))
    assert raw.cmd("ACL", "DELUSER") == (
        error("ERR wrong number of arguments for 'acl|deluser' command"))


def test_deluser_closes_the_users_connections(raw, connect):
    for name in ("u", "v"):
        assert raw.cmd("ACL", "SETUSER", name, "on", ">pw", "+@all") == b"+OK\r\n"
    cu1, cu2, cv = connect("u"), connect("u"), connect("v")
    assert raw.cmd("ACL", "DELUSER", "u") == b":1\r\n"
    assert is_closed(cu1) and is_closed(cu2)
    assert cv.cmd("PING") == b"+PONG\r\n"
    assert raw.cmd("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------- CAT

def test_cat_lists_the_categories(raw):
    assert raw.cmd("ACL", "CAT") == array(
        "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
        "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
        "blocking", "dangerous", "connection", "transaction", "scripting")


CATEGORY_MEMBERS = [
    ("string", ["get", "set", "incr", "mget", "append"], ["hset", "del", "lpush"]),
    ("hash", ["hset", "hget", "hgetall", "hdel"], ["get", "sadd"]),
    # ebb's member TTL commands are in their type's category.
    ("hash", ["hexpire", "httl", "hsetex", "hgetex"], ["zexpire"]),
    ("set", ["sexpire", "sttl", "saddex", "spersist"], ["hexpire"]),
    ("sortedset", ["zexpire", "zpexpireat", "zttl", "zpersist", "zaddex"], ["sexpire"]),
    ("keyspace", ["del", "expire", "flushall", "object|encoding", "scan"], ["get", "hset"]),
    ("read", ["get", "hget", "lrange", "exists"], ["set", "del", "flushall"]),
    ("write", ["set", "del", "lpush", "flushall"], ["get", "ping"]),
    ("admin", ["config|set", "config|get", "acl|setuser", "client|kill", "debug"],
     ["acl|whoami", "acl|cat", "get", "flushall"]),
    ("dangerous", ["flushall", "keys", "config|set", "acl|setuser"], ["get", "acl|whoami"]),
    ("pubsub", ["publish", "subscribe", "psubscribe", "pubsub|channels"], ["get"]),
    ("scripting", ["eval", "evalsha", "fcall", "script|load", "function|load"], ["get"]),
    ("transaction", ["multi", "exec", "discard", "watch", "unwatch"], ["get"]),
    ("connection", ["auth", "hello", "ping", "client|setname", "echo"], ["get", "acl|whoami"]),
    ("blocking", ["blpop", "brpop", "bzpopmin"], ["lpop"]),
    ("fast", ["get", "incr", "hget", "ping"], ["set", "keys", "flushall"]),
    ("slow", ["set", "keys", "flushall", "acl|whoami"], ["get"]),
]


def test_cat_of_a_category(admin):
    for category, members, others in CATEGORY_MEMBERS:
        got = set(q(admin, "ACL", "CAT", category))
        assert set(members) <= got, category
        assert not set(others) & got, category
        assert set(q(admin, "ACL", "CAT", category.upper())) == got, category


def test_cat_errors(raw):
    assert raw.cmd("ACL", "CAT", "nosuch") == error("ERR Unknown category 'nosuch'")
    assert raw.cmd("ACL", "CAT", "string", "extra") == error(
        "ERR unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP.")


# ---------------------------------------------------------------- GENPASS

def test_genpass(admin):
    p = q(admin, "ACL", "GENPASS")
    assert len(p) == 64 and all(ch in "0123456789abcdef" for ch in p)
    assert q(admin, "ACL", "GENPASS") != p
    for bits, length in ((1, 1), (4, 1), (5, 2), (8, 2), (128, 32), (255, 64), (4096, 1024)):
        got = q(admin, "ACL", "GENPASS", bits)
        assert len(got) == length, bits
        assert all(ch in "0123456789abcdef" for ch in got)


def test_genpass_errors(raw):
    for bits in ("0", "-1", "4097", "5000"):
        assert raw.cmd("ACL", "GENPASS", bits) == GENPASS_RANGE, bits
    assert raw.cmd("ACL", "GENPASS", "x") == error("ERR value is not an integer or out of range")


# ---------------------------------------------------------------- DRYRUN

@pytest.fixture
def limited(raw):
    """User `u`: every command but FLUSHALL and CONFIG SET, keys k* (read and
    write), r* (read), w* (write), channel ch."""
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "~k*", "%R~r*", "%W~w*", "&ch",
                   "+@all", "-flushall") == b"+OK\r\n"
    assert raw.cmd("ACL", "SETUSER", "u", "-config|set") == b"+OK\r\n"
    return "u"


def test_dryrun(raw, limited):
    def dry(*args):
        return raw.cmd("ACL", "DRYRUN", "u", *args)

    assert dry("get", "k1") == b"+OK\r\n"
    assert dry("set", "k1", "v") == b"+OK\r\n"
    assert dry("get", "r1") == b"+OK\r\n"
    assert dry("set", "w1", "v") == b"+OK\r\n"
    assert dry("config", "get", "maxmemory") == b"+OK\r\n"
    assert dry("publish", "ch", "m") == b"+OK\r\n"
    assert dry("flushall") == dry_cmd("flushall")
    assert dry("config", "set", "maxmemory", "0") == dry_cmd("config|set")
    assert dry("get", "x") == dry_key("x")
    assert dry("set", "r1", "v") == dry_key("r1")
    assert dry("get", "w1") == dry_key("w1")
    assert dry("mset", "k1", "v", "w1", "v", "r1", "v") == dry_key("r1")
    assert dry("mget", "k1", "r1", "w1") == dry_key("w1")
    assert dry("publish", "zz", "m") == dry_channel("zz")
    assert dry("subscribe", "ch", "zz") == dry_channel("zz")
    # PSUBSCRIBE patterns are matched literally against the channel rules.
    assert dry("psubscribe", "c*") == dry_channel("c*")
    assert dry("psubscribe", "ch") == b"+OK\r\n"


def test_dryrun_errors(raw, limited):
    assert raw.cmd("ACL", "DRYRUN", "nosuch", "get", "x") == error("ERR User 'nosuch' not found")
    assert raw.cmd("ACL", "DRYRUN", "u", "nosuchcmd") == error("ERR Command 'nosuchcmd' not found")
    assert raw.cmd("ACL", "DRYRUN", "u", "get") == (
        error("ERR wrong number of arguments for 'get' command"))
    assert raw.cmd("ACL", "DRYRUN", "u", "get", "a", "b") == (
        error("ERR wrong number of arguments for 'get' command"))
    assert raw.cmd("ACL", "DRYRUN", "u") == (
        error("ERR wrong number of arguments for 'acl|dryrun' command"))


def test_dryrun_of_an_unknown_subcommand(raw, limited):
    assert raw.cmd("ACL", "DRYRUN", "u", "config", "nosuch") == (
        error("ERR Command 'config' not found"))


# ---------------------------------------------------------------- AUTH and HELLO

def test_auth(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    assert raw.cmd("ACL", "SETUSER", "d", "off", ">pw", "+@all") == b"+OK\r\n"
    c = connect()
    assert c.cmd("AUTH", "u", "bad") == WRONGPASS
    assert c.cmd("AUTH", "d", "pw") == WRONGPASS
    assert c.cmd("AUTH", "nosuch", "pw") == WRONGPASS
    assert c.cmd("ACL", "WHOAMI") == bulk("default")
    assert c.cmd("AUTH", "u", "pw") == b"+OK\r\n"
    assert c.cmd("ACL", "WHOAMI") == bulk("u")
    assert c.cmd("AUTH", "u", "pw", "extra") == error("ERR syntax error")
    # The nopass default user takes any password.
    assert c.cmd("AUTH", "default", "anything") == b"+OK\r\n"
    assert c.cmd("ACL", "WHOAMI") == bulk("default")


def test_auth_with_only_a_password_and_a_nopass_default_user(raw):
    assert raw.cmd("AUTH", "foo") == error(
        "ERR AUTH <password> called without any password configured for the default "
        "user. Are you sure your configuration is correct?")


def test_hello_auth(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    assert raw.cmd("ACL", "SETUSER", "d", "off", ">pw", "+@all") == b"+OK\r\n"
    c = connect()
    assert c.cmd("HELLO", "3", "AUTH", "u", "bad") == WRONGPASS
    assert c.cmd("HELLO", "2", "AUTH", "d", "pw") == WRONGPASS
    assert c.cmd("HELLO", "2", "AUTH", "nosuch", "pw") == WRONGPASS
    assert c.cmd("HELLO", "2", "AUTH", "u") == error("ERR Syntax error in HELLO option 'AUTH'")
    assert c.cmd("ACL", "WHOAMI") == bulk("default")
    assert c.cmd("HELLO", "3", "AUTH", "u", "pw").startswith(
        b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
        b"$5\r\nproto\r\n:3\r\n")
    assert c.cmd("ACL", "WHOAMI") == bulk("u")
    c2 = connect()
    assert c2.cmd("HELLO", "2", "SETNAME", "x", "AUTH", "u", "pw").startswith(b"*14\r\n")
    assert c2.cmd("CLIENT", "GETNAME") == bulk("x")
    assert c2.cmd("ACL", "WHOAMI") == bulk("u")


def test_default_user_without_a_password_needs_auth(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    assert raw.cmd("ACL", "SETUSER", "default", "resetpass") == b"+OK\r\n"
    # Connections already authenticated stay so.
    assert raw.cmd("PING") == b"+PONG\r\n"
    c = connect()
    assert c.cmd("PING") == NOAUTH
    assert c.cmd("AUTH", "x") == WRONGPASS
    assert c.cmd("AUTH", "default", "x") == WRONGPASS
    assert c.cmd("HELLO", "3") == error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise "
        "the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time")
    assert c.cmd("HELLO", "2", "AUTH", "u", "pw").startswith(b"*14\r\n")
    assert c.cmd("ACL", "WHOAMI") == bulk("u")
    assert raw.cmd("ACL", "SETUSER", "default", "nopass") == b"+OK\r\n"
    assert connect().cmd("PING") == b"+PONG\r\n"


def test_default_user_off(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    assert raw.cmd("ACL", "SETUSER", "default", "off") == b"+OK\r\n"
    assert raw.cmd("PING") == b"+PONG\r\n"
    c = connect()
    assert c.cmd("PING") == NOAUTH
    assert c.cmd("AUTH", "default", "x") == WRONGPASS
    assert c.cmd("AUTH", "u", "pw") == b"+OK\r\n"
    assert c.cmd("PING") == b"+PONG\r\n"


def test_config_set_requirepass_sets_the_default_users_password(raw, admin, connect):
    assert q(admin, "PING")  # connected before the password is set
    assert raw.cmd("CONFIG", "SET", "requirepass", "secret") == b"+OK\r\n"
    assert line_of(admin, "default") == f"user default on #{sha256('secret')} ~* &* +@all"
    u = user_of(admin, "default")
    assert (u["flags"], u["passwords"]) == (["on"], [sha256("secret")])
    assert raw.cmd("CONFIG", "GET", "requirepass") == array("requirepass", "secret")
    c = connect()
    assert c.cmd("PING") == NOAUTH
    assert c.cmd("AUTH", "bad") == WRONGPASS
    assert c.cmd("AUTH", "secret") == b"+OK\r\n"
    assert c.cmd("AUTH", "default", "secret") == b"+OK\r\n"
    assert raw.cmd("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"
    assert line_of(admin, "default") == "user default on nopass ~* &* +@all"
    assert connect().cmd("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------- NOPERM

def test_noperm_commands_and_subcommands(raw, limited, connect):
    c = connect("u")
    assert c.cmd("FLUSHALL") == noperm_cmd("flushall")
    assert c.cmd("CONFIG", "SET", "maxmemory", "0") == noperm_cmd("config|set")
    assert c.cmd("CONFIG", "GET", "maxmemory") == array("maxmemory", "0")
    assert raw.cmd("ACL", "SETUSER", "n", "on", ">pw", "nocommands", "+config|get") == b"+OK\r\n"
    n = connect("n")
    assert n.cmd("PING") == noperm_cmd("ping")
    assert n.cmd("ACL", "WHOAMI") == noperm_cmd("acl|whoami")
    assert n.cmd("CONFIG", "GET", "maxmemory") == array("maxmemory", "0")
    assert n.cmd("CONFIG", "SET", "maxmemory", "0") == noperm_cmd("config|set")
    # Unknown commands and wrong arities are reported as such.
    assert n.cmd("NOSUCH") == error("ERR unknown command 'NOSUCH', with args beginning with: ")
    assert n.cmd("CONFIG") == error("ERR wrong number of arguments for 'config' command")


def test_auth_hello_quit_and_reset_need_no_permission(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "n", "on", ">pw", "nocommands") == b"+OK\r\n"
    c = connect("n")
    assert c.cmd("PING") == noperm_cmd("ping")
    assert c.cmd("AUTH", "n", "pw") == b"+OK\r\n"
    assert c.cmd("HELLO", "2").startswith(b"*14\r\n")
    assert c.cmd("RESET") == b"+RESET\r\n"
    # RESET authenticates the connection as the default user again.
    assert c.cmd("ACL", "WHOAMI") == bulk("default")
    c2 = connect("n")
    assert c2.cmd("QUIT") == b"+OK\r\n"


def test_setuser_applies_to_connected_clients(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all", "~*") == b"+OK\r\n"
    c = connect("u")
    assert c.cmd("PING") == b"+PONG\r\n"
    assert raw.cmd("ACL", "SETUSER", "u", "-ping", "resetkeys", "~a") == b"+OK\r\n"
    assert c.cmd("PING") == noperm_cmd("ping")
    assert c.cmd("GET", "b") == NOPERM_KEYS
    assert c.cmd("GET", "a") == b"$-1\r\n"
    # Changing the passwords keeps the connection.
    assert raw.cmd("ACL", "SETUSER", "u", "resetpass", ">new") == b"+OK\r\n"
    assert c.cmd("GET", "a") == b"$-1\r\n"


def test_noperm_keys(limited, connect):
    c = connect("u")
    assert c.cmd("GET", "k1") == b"$-1\r\n"
    assert c.cmd("SET", "k1", "v") == b"+OK\r\n"
    assert c.cmd("GET", "r1") == b"$-1\r\n"
    assert c.cmd("SET", "r1", "v") == NOPERM_KEYS
    assert c.cmd("DEL", "r1") == NOPERM_KEYS
    assert c.cmd("SET", "w1", "v") == b"+OK\r\n"
    assert c.cmd("GET", "w1") == NOPERM_KEYS
    assert c.cmd("GET", "x") == NOPERM_KEYS
    assert c.cmd("SET", "x", "v") == NOPERM_KEYS
    assert c.cmd("MSET", "k1", "v", "w2", "v") == b"+OK\r\n"
    assert c.cmd("MSET", "k1", "v", "r2", "v") == NOPERM_KEYS
    assert c.cmd("MGET", "k1", "r1") == b"*2\r\n$1\r\nv\r\n$-1\r\n"
    assert c.cmd("MGET", "k1", "w1") == NOPERM_KEYS
    assert c.cmd("EXISTS", "k1", "r1") == b":1\r\n"
    assert c.cmd("DEL", "k1", "w1", "w2") == b":3\r\n"


def test_noperm_channels(raw, limited, connect):
    c = connect("u")
    assert c.cmd("PUBLISH", "ch", "m") == b":0\r\n"
    assert c.cmd("PUBLISH", "other", "m") == NOPERM_CHANNELS
    # One channel refused refuses the whole command.
    assert c.cmd("SUBSCRIBE", "ch", "zz") == NOPERM_CHANNELS
    assert c.cmd("PSUBSCRIBE", "c*") == NOPERM_CHANNELS
    assert raw.cmd("PUBSUB", "NUMSUB", "ch") == b"*2\r\n$2\r\nch\r\n:0\r\n"
    assert c.cmd("PSUBSCRIBE", "ch") == b"*3\r\n$10\r\npsubscribe\r\n$2\r\nch\r\n:1\r\n"
    assert c.cmd("SUBSCRIBE", "ch") == b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:2\r\n"


def test_psubscribe_needs_a_literal_pattern_rule(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "p", "on", ">pw", "+@all", "&c*") == b"+OK\r\n"
    c = connect("p")
    assert c.cmd("PSUBSCRIBE", "ca*") == NOPERM_CHANNELS
    assert c.cmd("PSUBSCRIBE", "d*") == NOPERM_CHANNELS
    assert c.cmd("PSUBSCRIBE", "c*") == b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:1\r\n"


def test_a_subscriber_losing_its_channel_is_disconnected(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all", "&a") == b"+OK\r\n"
    c = connect("u")
    assert c.cmd("SUBSCRIBE", "a") == b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    other = connect("u")
    assert raw.cmd("ACL", "SETUSER", "u", "resetchannels", "&b") == b"+OK\r\n"
    assert is_closed(c)
    # A connection of the user with no subscription stays.
    assert other.cmd("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------- MULTI

def test_multi_with_a_denied_command(limited, connect):
    c = connect("u")
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SET", "k1", "v") == b"+QUEUED\r\n"
    assert c.cmd("FLUSHALL") == noperm_cmd("flushall")
    assert c.cmd("GET", "x") == NOPERM_KEYS
    assert c.cmd("PUBLISH", "zz", "m") == NOPERM_CHANNELS
    assert c.cmd("EXEC") == error("EXECABORT Transaction discarded because of previous errors.")
    assert c.cmd("GET", "k1") == b"$-1\r\n"
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SET", "k1", "v") == b"+QUEUED\r\n"
    assert c.cmd("GET", "k1") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == b"*2\r\n+OK\r\n$1\r\nv\r\n"


def test_exec_without_permission_to_multi(raw, connect):
    assert raw.cmd("ACL", "SETUSER", "n", "on", ">pw", "nocommands") == b"+OK\r\n"
    c = connect("n")
    assert c.cmd("MULTI") == noperm_cmd("multi")
    assert c.cmd("EXEC") == error(
        "EXECABORT Transaction discarded because of: NOPERM this user has no "
        "permissions to run the 'exec' command")


def test_exec_checks_the_rules_again(raw, admin, connect):
    assert raw.cmd("ACL", "SETUSER", "m", "on", ">pw", "+@all", "~*", "&*") == b"+OK\r\n"
    c = connect("m")
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("SET", "a", "1") == b"+QUEUED\r\n"
    assert c.cmd("GET", "a") == b"+QUEUED\r\n"
    assert c.cmd("PUBLISH", "q", "1") == b"+QUEUED\r\n"
    assert raw.cmd("ACL", "SETUSER", "m", "-set", "resetchannels") == b"+OK\r\n"
    changed = ("NOPERM ACLs rules changed between the moment the transaction was "
               "accumulated and the EXEC call. This command is no longer allowed for "
               "the following reason: ")
    assert c.cmd("EXEC") == (
        b"*3\r\n" + error(changed + "no permission to execute the command or subcommand")
        + b"$-1\r\n" + error(changed + "no permission to access one of the channels used "
                                      "as arguments"))
    assert log_of(admin) == [entry("channel", "multi", "q", "m"),
                             entry("command", "multi", "set", "m")]


# ---------------------------------------------------------------- scripts

def test_scripts_calling_denied_commands(limited, connect):
    c = connect("u")

    def run(body):
        return c.cmd("EVAL", body, "0")

    def failed(body, why):
        return error(f"ERR The user executing the script {why} script: {sha(body)}, "
                     f"on @user_script:1.")

    body = "return redis.call('flushall')"
    assert run(body) == failed(body, "can't run this command or subcommand")
    keys = "can't access at least one of the keys mentioned in the command arguments"
    body = "return redis.call('get', 'x')"
    assert run(body) == failed(body, keys)
    body = "return redis.call('set', 'r1', 'v')"
    assert run(body) == failed(body, keys)
    body = "return redis.call('get', 'w1')"
    assert run(body) == failed(body, keys)
    body = "return redis.call('publish', 'zz', 'v')"
    assert run(body) == failed(body, "can't publish to the channel mentioned in the command")
    # redis.pcall returns the error without the script's name.
    assert run("return redis.pcall('flushall')") == error(
        "ERR The user executing the script can't run this command or subcommand")
    assert run("return redis.pcall('get', 'zz')") == error("ERR The user executing the "
                                                           "script " + keys)
    assert run("local ok, e = pcall(redis.call, 'flushall') return e") == bulk(
        "ERR The user executing the script can't run this command or subcommand")
    # Allowed calls run.
    assert run("return redis.call('set', 'k1', 'v')") == b"+OK\r\n"
    assert run("return redis.call('get', 'k1')") == b"$1\r\nv\r\n"
    assert run("return redis.call('get', 'r1')") == b"$-1\r\n"
    # In a transaction the error is EVAL's reply.
    body = "return redis.call('flushall')"
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("EVAL", body, "0") == b"+QUEUED\r\n"
    assert c.cmd("EXEC") == b"*1\r\n" + failed(body, "can't run this command or subcommand")


def test_functions_calling_denied_commands(raw, limited, connect):
    code = ("#!lua name=l\n"
            "redis.register_function('ff', function(k, a)\n"
            "  return redis.call('flushall') end)")
    assert raw.cmd("FUNCTION", "LOAD", code) == bulk("l")
    c = connect("u")
    assert c.cmd("FCALL", "ff", "0") == error(
        "ERR The user executing the script can't run this command or subcommand "
        "script: ff, on @user_function:3.")


def test_acl_check_cmd_in_scripts(limited, connect):
    c = connect("u")

    def run(body):
        return c.cmd("EVAL", body, "0")

    assert run("return redis.acl_check_cmd('get', 'k1')") == b":1\r\n"
    assert run("return redis.acl_check_cmd('set', 'w1', 'v')") == b":1\r\n"
    assert run("return redis.acl_check_cmd('get')") == b":1\r\n"
    assert run("return redis.acl_check_cmd('get', 'zz')") == b"$-1\r\n"
    assert run("return redis.acl_check_cmd('set', 'r1', 'v')") == b"$-1\r\n"
    assert run("return redis.acl_check_cmd('flushall')") == b"$-1\r\n"
    assert run("return redis.acl_check_cmd('publish', 'zz', 'm')") == b"$-1\r\n"
    body = "return redis.acl_check_cmd('nosuch')"
    assert run(body) == error(f"ERR Invalid command passed to redis.acl_check_cmd() "
                              f"script: {sha(body)}, on @user_script:1.")


# ---------------------------------------------------------------- ACL LOG

@pytest.fixture
def g(raw):
    """User `g`: GET and PUBLISH only, on key a and channel c."""
    assert raw.cmd("ACL", "SETUSER", "g", "on", ">pw", "-@all", "+get", "+publish",
                   "~a", "&c") == b"+OK\r\n"
    return "g"


def test_acl_log_entries(admin, g, connect):
    assert q(admin, "ACL", "LOG") == []
    c = connect("g")
    assert c.cmd("SET", "a", "1") == noperm_cmd("set")
    assert c.cmd("GET", "b") == NOPERM_KEYS
    assert c.cmd("PUBLISH", "d", "m") == NOPERM_CHANNELS
    got = q(admin, "ACL", "LOG")
    assert [sorted(e) for e in got] == [sorted(
        ["count", "reason", "context", "object", "username", "age-seconds",
         "client-info"])] * 3
    # Newest first.
    assert log_of(admin) == [entry("channel", "toplevel", "d", "g"),
                             entry("key", "toplevel", "b", "g"),
                             entry("command", "toplevel", "set", "g")]
    for e in got:
        assert 0 <= e["age-seconds"] < 5
        assert " user=g " in e["client-info"]


def test_acl_log_client_info_names_the_denied_command(admin, g, connect):
    c = connect("g")
    assert c.cmd("GET", "a") == b"$-1\r\n"
    assert c.cmd("SET", "a", "1") == noperm_cmd("set")
    assert c.cmd("GET", "b") == NOPERM_KEYS
    got = q(admin, "ACL", "LOG")
    assert [e["object"] for e in got] == ["b", "set"]
    assert " cmd=get " in got[0]["client-info"]
    assert " cmd=set " in got[1]["client-info"]


def test_acl_log_groups_identical_entries(admin, g, connect):
    c = connect("g")
    assert c.cmd("SET", "a", "1") == noperm_cmd("set")
    assert c.cmd("GET", "b") == NOPERM_KEYS
    assert c.cmd("SET", "a", "2") == noperm_cmd("set")
    assert log_of(admin) == [entry("command", "toplevel", "set", "g", count=2),
                             entry("key", "toplevel", "b", "g")]
    # A repeated entry moves to the front.
    assert c.cmd("GET", "c") == NOPERM_KEYS
    assert c.cmd("SET", "x", "1") == noperm_cmd("set")
    assert log_of(admin) == [entry("command", "toplevel", "set", "g", count=3),
                             entry("key", "toplevel", "c", "g"),
                             entry("key", "toplevel", "b", "g")]


def test_acl_log_multi_and_lua_contexts(raw, admin, connect):
    assert raw.cmd("ACL", "SETUSER", "s", "on", ">pw", "+@all", "-flushall", "~a*",
                   "&c") == b"+OK\r\n"
    c = connect("s")
    assert c.cmd("MULTI") == b"+OK\r\n"
    assert c.cmd("FLUSHALL") == noperm_cmd("flushall")
    assert c.cmd("GET", "x") == NOPERM_KEYS
    assert c.cmd("PUBLISH", "d", "m") == NOPERM_CHANNELS
    assert c.cmd("DISCARD") == b"+OK\r\n"
    assert log_of(admin) == [entry("channel", "multi", "d", "s"),
                             entry("key", "multi", "x", "s"),
                             entry("command", "multi", "flushall", "s")]
    assert q(admin, "ACL", "LOG", "RESET") == "OK"
    c.cmd("EVAL", "return redis.call('flushall')", "0")
    c.cmd("EVAL", "return redis.pcall('flushall')", "0")
    c.cmd("EVAL", "return redis.call('get', 'x')", "0")
    c.cmd("EVAL", "return redis.call('publish', 'd', 'm')", "0")
    assert log_of(admin) == [entry("channel", "lua", "d", "s"),
                             entry("key", "lua", "x", "s"),
                             entry("command", "lua", "flushall", "s", count=2)]
    got = q(admin, "ACL", "LOG")
    assert all(" cmd=eval " in e["client-info"] for e in got)


def test_acl_log_auth_failures(raw, admin, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    c = connect()
    assert c.cmd("AUTH", "u", "wrong") == WRONGPASS
    assert c.cmd("AUTH", "nosuch", "x") == WRONGPASS
    assert c.cmd("HELLO", "2", "AUTH", "u", "wrong") == WRONGPASS
    assert log_of(admin) == [entry("auth", "toplevel", "HELLO", "u"),
                             entry("auth", "toplevel", "AUTH", "nosuch"),
                             entry("auth", "toplevel", "AUTH", "u")]
    assert q(admin, "ACL", "LOG", "RESET") == "OK"
    # The object is the command's name as it was sent.
    assert c.cmd("auth", "u", "wrong") == WRONGPASS
    assert c.cmd("AUTH", "u", "wrong") == WRONGPASS
    assert c.cmd("AUTH", "u", "wrong") == WRONGPASS
    assert log_of(admin) == [entry("auth", "toplevel", "AUTH", "u", count=2),
                             entry("auth", "toplevel", "auth", "u")]


def test_acl_log_count_and_reset(raw, admin, g, connect):
    c = connect("g")
    for key in ("b1", "b2", "b3"):
        assert c.cmd("GET", key) == NOPERM_KEYS
    assert [e["object"] for e in log_of(admin)] == ["b3", "b2", "b1"]
    assert [e["object"] for e in log_of(admin, 2)] == ["b3", "b2"]
    assert [e["object"] for e in log_of(admin, 10)] == ["b3", "b2", "b1"]
    assert raw.cmd("ACL", "LOG", "0") == b"*0\r\n"
    assert raw.cmd("ACL", "LOG", "reset") == b"+OK\r\n"
    assert raw.cmd("ACL", "LOG") == b"*0\r\n"


def test_acl_log_argument_errors(raw):
    assert raw.cmd("ACL", "LOG", "-1") == b"*0\r\n"
    assert raw.cmd("ACL", "LOG", "x") == error("ERR value is not an integer or out of range")
    usage = error("ERR unknown subcommand or wrong number of arguments for 'LOG'. "
                  "Try ACL HELP.")
    assert raw.cmd("ACL", "LOG", "1", "2") == usage
    assert raw.cmd("ACL", "LOG", "RESET", "extra") == usage


def test_acllog_max_len(raw, admin, g, connect):
    assert raw.cmd("CONFIG", "GET", "acllog-max-len") == array("acllog-max-len", "128")
    c = connect("g")
    for key in ("b1", "b2", "b3"):
        assert c.cmd("GET", key) == NOPERM_KEYS
    assert raw.cmd("CONFIG", "SET", "acllog-max-len", "2") == b"+OK\r\n"
    # The log is trimmed when the next entry comes.
    assert len(log_of(admin)) == 3
    assert c.cmd("GET", "b4") == NOPERM_KEYS
    assert [e["object"] for e in log_of(admin)] == ["b4", "b3"]


# ---------------------------------------------------------------- the rest

def test_load_and_save_without_an_acl_file(raw):
    assert raw.cmd("ACL", "LOAD") == NO_ACLFILE
    assert raw.cmd("ACL", "SAVE") == NO_ACLFILE


def test_client_list_shows_the_user(raw, admin, connect):
    assert raw.cmd("ACL", "SETUSER", "u", "on", ">pw", "+@all") == b"+OK\r\n"
    c = connect("u")
    assert c.cmd("CLIENT", "SETNAME", "cu") == b"+OK\r\n"
    assert b" user=u " in c.cmd("CLIENT", "INFO")
    users = {}
    for line in q(admin, "CLIENT", "LIST").splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" "))
        users[fields["name"]] = fields["user"]
    assert users["cu"] == "u"
    assert set(users.values()) == {"u", "default"}


def test_client_kill_user(raw, connect):
    for name in ("u", "v"):
        assert raw.cmd("ACL", "SETUSER", name, "on", ">pw", "+@all") == b"+OK\r\n"
    cu1, cu2, cv = connect("u"), connect("u"), connect("v")
    assert raw.cmd("CLIENT", "KILL", "USER", "u") == b":2\r\n"
    assert is_closed(cu1) and is_closed(cu2)
    assert cv.cmd("PING") == b"+PONG\r\n"
    assert raw.cmd("CLIENT", "KILL", "USER", "u") == b":0\r\n"
    assert raw.cmd("CLIENT", "KILL", "USER", "nosuch") == error("ERR No such user 'nosuch'")


def test_acl_help_and_errors(raw):
    assert raw.cmd("ACL", "HELP") == b"*29\r\n" + b"".join(
        b"+" + line.encode() + b"\r\n" for line in [
            "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
            "HELP",
            "    Prints this help.",
        ])
    assert raw.cmd("ACL", "NOSUCH") == error("ERR unknown subcommand 'NOSUCH'. Try ACL HELP.")
    assert raw.cmd("ACL") == error("ERR wrong number of arguments for 'acl' command")
    for sub in ("WHOAMI", "USERS", "LIST"):
        assert raw.cmd("ACL", sub, "x") == error(
            f"ERR wrong number of arguments for 'acl|{sub.lower()}' command")


def test_first_argument_rules(raw, admin, connect):
    # Redis's deprecated `+select|0`: a command otherwise blocked opens for
    # one first argument (any case); GETUSER shows the rule back.
    assert raw.cmd("ACL", "SETUSER", "fa", "on", ">pw", "-@all", "+acl", "+select|0",
                   "+debug|OBJECT", "~*") == b"+OK\r\n"
    commands = admin.acl_getuser("fa")["commands"]
    assert "+select|0" in commands and "+debug|OBJECT" in commands
    c = connect("fa")
    assert c.cmd("SELECT", "0") == b"+OK\r\n"
    assert c.cmd("SELECT", "1").startswith(b"-NOPERM")
    assert c.cmd("DEBUG", "object", "nokey").startswith(b"-ERR no such key")
    assert c.cmd("DEBUG", "SLEEP", "0").startswith(b"-NOPERM")
    # A rule naming the command again drops its first arguments.
    assert raw.cmd("ACL", "SETUSER", "fa", "-select") == b"+OK\r\n"
    assert "+select|0" not in admin.acl_getuser("fa")["commands"]
    assert c.cmd("SELECT", "0").startswith(b"-NOPERM")


@pytest.mark.parametrize("rule, text", [
    ("+config|get|appendonly", "Allowing first-arg of a subcommand is not supported"),
    ("-config|get|appendonly", "Unknown command or category name in ACL"),
    ("-select|0", "Unknown command or category name in ACL"),
    ("+config|nosuch", "Unknown command or category name in ACL"),
    ("+select|", "Syntax error"),
])
def test_first_argument_rule_errors(raw, rule, text):
    assert raw.cmd("ACL", "SETUSER", "fe", rule) == error(
        f"ERR Error in ACL SETUSER modifier '{rule}': {text}")


def test_star_patterns_after_all(raw, admin):
    # `~*` and `&*` are `allkeys` and `allchannels`, even when already so.
    assert raw.cmd("ACL", "SETUSER", "st", "allkeys", "~*", "allchannels", "&*") == b"+OK\r\n"
    u = admin.acl_getuser("st")
    assert u["keys"] in ("~*", ["~*"]) and u["channels"] in ("&*", ["&*"])


def test_key_permissions_follow_each_keys_flags(raw, connect):
    # Read permission for what a command reads, write permission for what
    # it changes, any matching pattern for what it only checks.
    assert raw.cmd("ACL", "SETUSER", "kp", "on", ">pw", "+@all",
                   "%R~src*", "%W~dst*", "%RW~both*") == b"+OK\r\n"
    assert raw.cmd("SET", "src1", "v") == b"+OK\r\n"
    c = connect("kp")
    assert c.cmd("COPY", "src1", "dst1") == b":1\r\n"
    assert c.cmd("COPY", "dst1", "src2").startswith(b"-NOPERM")
    assert c.cmd("SET", "dst2", "v") == b"+OK\r\n"
    assert c.cmd("SET", "dst2", "w", "GET").startswith(b"-NOPERM")
    assert c.cmd("SET", "both1", "w", "GET") == b"$-1\r\n"
    assert c.cmd("GET", "dst2").startswith(b"-NOPERM")
    assert c.cmd("GET", "src1") == b"$1\r\nv\r\n"
    assert c.cmd("EXISTS", "src1", "dst2") == b":2\r\n"
    assert c.cmd("GETDEL", "dst2").startswith(b"-NOPERM")
    assert c.cmd("GETDEL", "both1") == b"$1\r\nw\r\n"
    assert c.cmd("LPUSH", "dst3", "a") == b":1\r\n"
    assert c.cmd("SINTERCARD", "1", "dst3").startswith(b"-NOPERM")
