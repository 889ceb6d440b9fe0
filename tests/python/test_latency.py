"""LATENCY: the latency monitor (LATEST, HISTORY, RESET, GRAPH, DOCTOR)
with `latency-monitor-threshold`, and LATENCY HISTOGRAM from the
per-command latency tracking, with Redis 7.0's replies and errors.

Run with AGAINST_REDIS=1 to check this file against redis-server (the
tests of ebb's own report texts are skipped then).
"""

import time

import pytest

from conftest import ebb_only, Raw



@pytest.fixture
def r(srv):
    c = srv.client()
    c.config_set("latency-monitor-threshold", 100)
    c.execute_command("LATENCY", "RESET")
    yield c
    c.close()


def histogram(r, *names):
    flat = r.execute_command("LATENCY", "HISTOGRAM", *names)
    if isinstance(flat, dict):
        return flat
    return dict(zip(flat[::2], flat[1::2]))


def fields(entry):
    if isinstance(entry, dict):
        return entry
    return dict(zip(entry[::2], entry[1::2]))


def test_histogram_lists_commands_with_calls(r):
    r.config_resetstat()
    r.set("a", "b")
    r.set("c", "d")
    r.get("a")
    r.execute_command("CLIENT", "ID")
    h = histogram(r)
    assert set(h) == {"config|resetstat", "set", "get", "client|id"}
    assert fields(h["set"])["calls"] == 2
    buckets = fields(h["set"])["histogram_usec"]
    counts = list(fields(buckets).values()) if not isinstance(buckets, dict) else list(buckets.values())
    assert counts == sorted(counts) and counts[-1] == 2  # cumulative
    # Named commands, a container's subcommands, unknown names skipped.
    assert set(histogram(r, "set", "blabla", "client")) == {"set", "client|id"}
    assert set(histogram(r, "client|id")) == {"client|id"}
    assert histogram(r, "blabla") == {}
    assert histogram(r, "zadd") == {}


def test_monitor_records_slow_commands(r):
    r.execute_command("DEBUG", "SLEEP", "0.2")
    latest = r.execute_command("LATENCY", "LATEST")
    assert len(latest) == 1
    name, at, last, peak = latest[0]
    assert name == "command" and 190 <= last <= 400 and peak == last
    assert abs(at - time.time()) < 5
    history = r.execute_command("LATENCY", "HISTORY", "command")
    assert history == [[at, last]]
    assert r.execute_command("LATENCY", "HISTORY", "blabla") == []
    assert r.execute_command("LATENCY", "RESET", "blabla") == 0
    assert r.execute_command("LATENCY", "RESET", "command") == 1
    assert r.execute_command("LATENCY", "LATEST") == []


def test_monitor_off_records_nothing(r):
    r.config_set("latency-monitor-threshold", 0)
    r.execute_command("DEBUG", "SLEEP", "0.15")
    assert r.execute_command("LATENCY", "LATEST") == []


def test_samples_of_one_second_keep_the_largest(r):
    r.execute_command("DEBUG", "SLEEP", "0.12")
    r.execute_command("DEBUG", "SLEEP", "0.25")
    history = r.execute_command("LATENCY", "HISTORY", "command")
    # Both in the same second (usually): one sample, the larger.
    assert len(history) in (1, 2)
    assert max(ms for _, ms in history) >= 240


def test_errors(srv):
    c = Raw(srv.port)
    assert c.cmd("LATENCY", "HELP", "x") == (
        b"-ERR wrong number of arguments for 'latency|help' command\r\n")
    assert c.cmd("LATENCY", "HISTORY") == (
        b"-ERR wrong number of arguments for 'latency|history' command\r\n")
    assert c.cmd("LATENCY", "NOPE") == (
        b"-ERR unknown subcommand 'NOPE'. Try LATENCY HELP.\r\n")
    assert c.cmd("LATENCY", "GRAPH", "nope") == (
        b"-ERR No samples available for event 'nope'\r\n")
    assert c.cmd("LATENCY", "HELP").startswith(b"*")
    c.close()


@ebb_only
def test_graph_and_doctor_report(r):
    assert r.execute_command("LATENCY", "DOCTOR").startswith("No latency spike")
    r.execute_command("DEBUG", "SLEEP", "0.15")
    graph = r.execute_command("LATENCY", "GRAPH", "command")
    assert graph.startswith("command - high ")
    doctor = r.execute_command("LATENCY", "DOCTOR")
    assert "command:" in doctor and "all time high" in doctor
