"""CLIENT PAUSE keeps the dataset static: keys past their TTL read as gone
but are not deleted (no `expired_keys`, no `expired` event) until the pause
ends, and the active expiry cycle rests.

Checked against redis-server 7.0.15 too: `AGAINST_REDIS=1 pytest
tests/python/test_pause_expiry.py`.
"""

import time

from conftest import ebb_only


def expired(c):
    return c.info("stats")["expired_keys"]


def wait_until(cond, timeout=3.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_keys_expire_logically_but_stay_during_a_pause(srv):
    c = srv.client()
    before = expired(c)
    p = c.pipeline(transaction=True)
    p.set("foo", "bar", px=10)
    p.set("bar", "foo", px=10)
    p.execute_command("CLIENT", "PAUSE", "50000", "WRITE")
    p.execute()
    time.sleep(0.3)  # several active-expiry cycles
    assert c.get("foo") is None and c.get("bar") is None
    assert c.exists("foo", "bar") == 0
    assert c.ttl("foo") == -2
    assert c.keys("*") == []
    # Nothing was deleted: the keys still count in DBSIZE, as in Redis.
    assert expired(c) == before
    assert c.dbsize() == 2
    c.execute_command("CLIENT", "UNPAUSE")
    c.get("foo")
    c.get("bar")
    assert expired(c) == before + 2
    assert c.dbsize() == 0


def test_active_expiry_resumes_after_the_pause(srv):
    c = srv.client()
    before = expired(c)
    c.set("k", "v", px=10)
    c.execute_command("CLIENT", "PAUSE", "400", "WRITE")
    time.sleep(0.2)
    assert expired(c) == before
    # The pause times out by itself; the cycle then reclaims the key
    # without any client touching it.
    assert wait_until(lambda: expired(c) == before + 1)
    assert c.dbsize() == 0


@ebb_only
def test_randomkey_terminates_when_every_key_is_logically_expired(srv):
    # Redis 7.0 loops forever here (fixed in later versions); ebb answers.
    c = srv.client()
    for i in range(50):
        c.set(f"k{i}", "v", px=5)
    c.set("alive", "1")
    time.sleep(0.05)
    c.execute_command("CLIENT", "PAUSE", "50000", "WRITE")
    assert c.randomkey() == "alive"
    assert c.dbsize() == 51
    c.execute_command("CLIENT", "UNPAUSE")


@ebb_only
def test_member_deadlines_still_hide_due_members_during_a_pause(srv):
    # A due member never shows (ebb's contract), pause or not.
    c = srv.client()
    c.sadd("s", "a", "b")
    c.execute_command("SPEXPIRE", "s", "10", "MEMBERS", "1", "a")
    time.sleep(0.05)
    c.execute_command("CLIENT", "PAUSE", "50000", "WRITE")
    assert c.smembers("s") == {"b"}
    assert c.scard("s") == 1
    c.execute_command("CLIENT", "UNPAUSE")


def test_a_pause_of_all_commands_holds_every_command(srv):
    # PING, INFO, CLIENT and CONFIG wait too (CLIENT UNPAUSE as well, even
    # from the client that paused), as in Redis 7.0; only the pause's end
    # lets them through.
    c = srv.client()
    other = srv.client()
    other.ping()
    for call in (lambda o: o.ping(), lambda o: o.info("server"),
                 lambda o: o.client_id(), lambda o: o.config_get("hz"),
                 lambda o: o.execute_command("CLIENT", "UNPAUSE")):
        c.execute_command("CLIENT", "PAUSE", "300", "ALL")
        start = time.time()
        call(other)
        assert time.time() - start > 0.1
    c.execute_command("CLIENT", "PAUSE", "300", "ALL")
    start = time.time()
    c.execute_command("CLIENT", "UNPAUSE")
    assert time.time() - start > 0.1


def test_a_write_pause_holds_spublish_and_function_changes(srv):
    # As Redis: what writes or may replicate waits (SPUBLISH, FUNCTION
    # LOAD/DELETE/FLUSH/RESTORE); reads and FUNCTION LIST answer at once.
    c = srv.client()
    other = srv.client()
    other.ping()
    for args, held in ((("GET", "k"), False), (("FUNCTION", "LIST"), False),
                       (("SPUBLISH", "ch", "m"), True), (("FUNCTION", "FLUSH"), True),
                       (("FUNCTION", "DELETE", "nolib"), True)):
        c.execute_command("CLIENT", "PAUSE", "300", "WRITE")
        start = time.time()
        try:
            other.execute_command(*args)
        except Exception:
            pass  # FUNCTION DELETE of a missing library: the error comes late or early
        assert (time.time() - start > 0.1) == held, args
        c.execute_command("CLIENT", "UNPAUSE")


def test_inside_exec_ttls_read_the_clock_while_expiry_waits(srv):
    # As Redis: expiry is checked against the time EXEC started, but PTTL
    # and relative times read the clock.
    c = srv.client()
    c.set("e", "v", px=150)
    p = c.pipeline(transaction=True)
    p.execute_command("DEBUG", "SLEEP", "0.3")
    p.pttl("e")
    p.get("e")
    p.set("z", "v", px=100_000)
    p.execute_command("PEXPIRETIME", "z")
    _, left, value, _, at = p.execute()
    assert left == 0 and value == "v"
    assert at - int(time.time() * 1000) > 99_950
