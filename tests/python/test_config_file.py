"""Configuration-file directives operators use to harden a server:
`rename-command` (a new name, or none) and `include`."""

import subprocess

import pytest
import redis

from conftest import BIN, EbbServer


def start(tmp_path, text, extra=None):
    conf = tmp_path / "ebb.conf"
    conf.write_text(text)
    return EbbServer(str(conf), "--dir", str(tmp_path), *(extra or []))


def test_renamed_and_removed_commands(tmp_path):
    s = start(tmp_path, 'rename-command FLUSHALL ""\nrename-command config MyConfig\n')
    try:
        c = s.client()
        c.set("k", "v")
        with pytest.raises(redis.ResponseError, match="unknown command 'FLUSHALL'"):
            c.execute_command("FLUSHALL")
        with pytest.raises(redis.ResponseError, match="unknown command 'CONFIG'"):
            c.execute_command("CONFIG", "GET", "port")
        assert c.execute_command("MYCONFIG", "GET", "maxclients") in (["maxclients", "10000"], {"maxclients": "10000"})
        # Scripts and transactions see the same names.
        with pytest.raises(redis.ResponseError, match="Unknown Redis command called from script"):
            c.eval("return redis.call('flushall')", 0)
        p = c.pipeline(transaction=True)
        p.execute_command("FLUSHALL")
        with pytest.raises(redis.ResponseError):
            p.execute()
        assert c.get("k") == "v"
        # A pipeline repeating the old name is refused every time.
        p = c.pipeline(transaction=False)
        for _ in range(3):
            p.execute_command("CONFIG", "GET", "port")
        assert all(isinstance(r, redis.ResponseError) for r in p.execute(raise_on_error=False))
    finally:
        s.stop()


@pytest.mark.parametrize("line, error", [
    ("rename-command nosuch other", "No such command in rename-command: nosuch"),
    ("rename-command get set", "Target command name already exists: set"),
    ("rename-command get", "wrong number of arguments"),
])
def test_bad_renames_stop_the_server(tmp_path, line, error):
    conf = tmp_path / "bad.conf"
    conf.write_text(line + "\n")
    p = subprocess.run([BIN, str(conf), "--port", "0"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert error in p.stderr


def test_include_reads_another_file(tmp_path):
    (tmp_path / "more.conf").write_text("maxclients 77\n")
    s = start(tmp_path, f"include {tmp_path / 'more.conf'}\n")
    try:
        assert s.client().config_get("maxclients") == {"maxclients": "77"}
    finally:
        s.stop()


def test_include_loop_is_refused(tmp_path):
    conf = tmp_path / "loop.conf"
    conf.write_text(f"include {conf}\n")
    p = subprocess.run([BIN, str(conf), "--port", "0"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert "include loop" in p.stderr


@pytest.mark.parametrize("line", [
    "user default on nopass ~* &* +@all",
    "user default on nopass allkeys allchannels allcommands",
])
def test_a_user_line_describing_the_default_user_is_accepted(tmp_path, line):
    s = start(tmp_path, line + "\n")
    try:
        assert s.client().ping()
    finally:
        s.stop()


@pytest.mark.parametrize("line", [
    "user default off",
    "user default on >secret ~* +@all",
    "user alice on >pw ~* +@all",
    "user default on nopass ~cache:* +@all",
    "aclfile /etc/redis/users.acl",
])
def test_acl_users_are_refused_rather_than_ignored(tmp_path, line):
    """Dropping such a line would leave the server more open than its
    configuration says."""
    conf = tmp_path / "acl.conf"
    conf.write_text(line + "\n")
    p = subprocess.run([BIN, str(conf), "--port", "0"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert "ACL users are not supported" in p.stderr
