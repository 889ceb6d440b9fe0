"""Connection buffers as CLIENT LIST shows them, Redis's way: a client's
read buffer (`qbuf` + `qbuf-free`) is kept while it is busy, freed after
two idle seconds, and gives back the room a long request grew; the reply
buffer (`rbs`) follows the peak of the replies. Runs against redis-server
too (AGAINST_REDIS=1)."""

import time

import pytest

from conftest import wait_until


def query_buffer(admin, name):
    """qbuf + qbuf-free of the client named `name`."""
    for c in admin.client_list():
        if c["name"] == name:
            return int(c["qbuf"]) + int(c["qbuf-free"])
    raise AssertionError(f"no client named {name}")


@pytest.fixture
def pair(srv):
    admin = srv.client()
    busy = srv.client(single_connection_client=True)
    busy.client_setname("buffers")
    yield admin, busy
    busy.close()
    admin.close()


def test_an_idle_client_lets_go_of_its_read_buffer(pair):
    admin, busy = pair
    room = query_buffer(admin, "buffers")
    assert 16384 <= room < 32768
    assert wait_until(lambda: query_buffer(admin, "buffers") == 0)
    idle = [c for c in admin.client_list() if c["name"] == "buffers"][0]
    assert int(idle["idle"]) >= 2
    # Freed, the connection still takes requests of any size.
    big = "v" * 300_000
    assert busy.set("k", big)
    assert busy.get("k") == big
    assert busy.ping()


def test_a_long_request_grows_the_buffer_and_it_shrinks_back(pair):
    admin, busy = pair
    busy.set("x", "A" * 400_000)
    grown = query_buffer(admin, "buffers")
    assert grown > 32768
    # Busy with small requests, the buffer goes back to a smaller room
    # (not to nothing: the client is not idle).
    assert wait_until(
        lambda: busy.set("x", "A" * 100) and query_buffer(admin, "buffers") < grown, 2.0
    )
    assert 0 < query_buffer(admin, "buffers") < grown


def test_a_pipeline_split_over_many_reads_after_the_buffer_was_freed(pair):
    admin, busy = pair
    assert wait_until(lambda: query_buffer(admin, "buffers") == 0)
    p = busy.pipeline(transaction=False)
    for i in range(2000):
        p.set(f"k{i}", str(i) * 20)
    p.get("k1999")
    out = p.execute()
    assert out[-1] == "1999" * 20
    assert all(out[:-1])


def test_a_client_blocked_past_the_idle_time_is_served_and_then_trimmed(pair):
    admin, busy = pair
    import threading

    got = {}
    t = threading.Thread(target=lambda: got.update(r=busy.blpop("q", 10)))
    t.start()
    assert wait_until(lambda: admin.info("clients")["blocked_clients"] == 1)
    time.sleep(2.5)
    admin.rpush("q", "x" * 50_000)
    t.join(5)
    assert got["r"] == ("q", "x" * 50_000)
    assert busy.ping()
    assert wait_until(lambda: query_buffer(admin, "buffers") == 0)


def test_info_clients_shows_buffers_and_timed_blocks(srv):
    admin = srv.client()
    info = admin.info("clients")
    for field in (
        "connected_clients",
        "cluster_connections",
        "maxclients",
        "client_recent_max_input_buffer",
        "client_recent_max_output_buffer",
        "blocked_clients",
        "tracking_clients",
        "clients_in_timeout_table",
    ):
        assert field in info, field
    assert info["clients_in_timeout_table"] == 0
    import threading

    forever = srv.client(single_connection_client=True)
    timed = srv.client(single_connection_client=True)
    threads = [
        threading.Thread(target=lambda: forever.blpop("a", 0)),
        threading.Thread(target=lambda: timed.blpop("b", 10)),
    ]
    for t in threads:
        t.start()
    assert wait_until(lambda: admin.info("clients")["blocked_clients"] == 2)
    # Only the client with a timeout is in the timeout table.
    assert admin.info("clients")["clients_in_timeout_table"] == 1
    admin.rpush("a", 1)
    admin.rpush("b", 1)
    for t in threads:
        t.join(5)
    assert wait_until(lambda: admin.info("clients")["clients_in_timeout_table"] == 0)
    admin.close()
    forever.close()
    timed.close()


def reply_buffer(admin, name):
    """CLIENT LIST's `rbs` (reply buffer size) of the client named `name`."""
    for c in admin.client_list():
        if c["name"] == name:
            return int(c["rbs"])
    raise AssertionError(f"no client named {name}")


def test_the_reply_buffer_follows_the_peak_of_the_replies(pair):
    """Redis 7.0's reply buffer resizing (unit/replybufsize): a client
    whose replies stay small keeps about 1 kB of reply buffer once its peak
    is reset; one that reads a 32 kB value gets the full 16 kB back, and
    keeps it while the peak is never reset. A long reply's extra room is
    given back as soon as it is written."""
    admin, busy = pair
    admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
    try:
        assert wait_until(lambda: 1024 <= reply_buffer(admin, "buffers") < 2046, timeout=3)
        admin.set("bigval", "x" * 32768)
        admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never")

        def grown():
            assert len(busy.get("bigval")) == 32768
            return 16384 <= reply_buffer(admin, "buffers") < 32768

        assert wait_until(grown, timeout=3, step=0.1)
        # Resizing off: the buffer stays as it is, even past a peak reset.
        admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0")
        admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
        time.sleep(1.2)
        assert 16384 <= reply_buffer(admin, "buffers") < 32768
    finally:
        admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "1")
        admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")


def test_debug_replybuffer_arguments(srv):
    c = srv.client()
    for arg in ("never", "reset", "250", "-1"):
        assert c.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", arg)
    with pytest.raises(Exception, match="value is not an integer or out of range"):
        c.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "soon")
    with pytest.raises(Exception, match="unknown subcommand or wrong number of arguments for 'REPLYBUFFER'"):
        c.execute_command("DEBUG", "REPLYBUFFER", "SIZE", "1")
    c.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")
