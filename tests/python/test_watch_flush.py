"""WATCH against whole-database changes (FLUSHDB, FLUSHALL, SWAPDB): the
transaction aborts only if a watched key logically changed, i.e. it existed
when watched or exists afterwards; missing or already-expired keys that stay
so do not abort EXEC, as in Redis 7.0."""

import time

import pytest


@pytest.fixture
def srv(server_factory):
    return server_factory()


@pytest.fixture
def r(srv):
    c = srv.client()
    yield c
    c.close()


def exec_ping(r, *watch, action):
    """WATCHes keys on a dedicated connection of r (in r's database), runs
    action(), then returns the EXEC reply of MULTI PING (None when
    aborted)."""
    p = r.pipeline(transaction=True)
    p.watch(*watch)
    action()
    p.multi()
    p.ping()
    try:
        return p.execute()
    except Exception as e:  # redis-py raises WatchError on abort
        if type(e).__name__ == "WatchError":
            return None
        raise
    finally:
        p.reset()


def test_flushall_aborts_only_if_the_watched_key_existed(r):
    r.set("x", "30")
    assert exec_ping(r, "x", action=r.flushall) is None
    assert exec_ping(r, "x", action=r.flushall) == [True]


def test_flushdb_aborts_only_if_the_watched_key_existed(r):
    r.set("x", "30")
    assert exec_ping(r, "x", action=r.flushdb) is None
    assert exec_ping(r, "x", action=r.flushdb) == [True]


def test_flushdb_with_a_stale_watched_key_does_not_abort(r):
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.set("x", "foo", px=1)
    time.sleep(0.01)
    assert exec_ping(r, "x", action=r.flushdb) == [True]


def test_swapdb_aborts_when_the_key_exists_on_either_side(srv):
    a = srv.client(db=0)
    b = srv.client(db=1)
    a.set("x", "30")
    assert exec_ping(a, "x", action=lambda: a.swapdb(0, 1)) is None
    a.flushall()
    b.set("x", "30")
    assert exec_ping(a, "x", action=lambda: a.swapdb(0, 1)) is None
    a.flushall()
    assert exec_ping(a, "x", action=lambda: a.swapdb(0, 1)) == [True]


def test_swapdb_with_stale_keys_on_both_sides_does_not_abort(srv):
    a = srv.client(db=0)
    b = srv.client(db=1)
    a.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    b.set("x", "foo", px=1)
    a.set("x", "bar", px=1)
    time.sleep(0.01)
    assert exec_ping(b, "x", action=lambda: b.swapdb(0, 1)) == [True]
    a.flushall()
    a.set("x", "foo", px=1)
    time.sleep(0.01)
    assert exec_ping(b, "x", action=lambda: b.swapdb(0, 1)) == [True]
