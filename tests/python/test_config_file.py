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


def test_user_lines_define_acl_users(tmp_path):
    s = start(tmp_path, "user default on nopass ~* &* +@all\n"
                        "user alice on >pw ~app:* +get +set\n"
                        "user bob off >x +@all\n")
    try:
        c = s.client()
        assert sorted(c.acl_users()) == ["alice", "bob", "default"]
        a = s.client(username="alice", password="pw")
        a.set("app:1", "v")
        with pytest.raises(redis.exceptions.NoPermissionError):
            a.set("other", "v")
        with pytest.raises(redis.AuthenticationError):
            s.client(username="bob", password="x").ping()
    finally:
        s.stop()


def test_requirepass_is_the_default_users_password(tmp_path):
    s = start(tmp_path, "requirepass s3cret\n")
    try:
        with pytest.raises(redis.AuthenticationError):
            s.client().ping()
        assert s.client(password="s3cret").ping()
        assert s.client(username="default", password="s3cret").ping()
    finally:
        s.stop()


@pytest.mark.parametrize("text, error", [
    ("user alice on ~* ~a\n", "Error in user declaration 'alice'"),
    ("user alice bogus\n", "Syntax error"),
    ("aclfile {dir}/missing.acl\n", "Error loading ACLs"),
    ("aclfile {dir}/users.acl\nuser alice on\n", "either an ACL file or declare users"),
])
def test_bad_user_declarations_stop_the_start(tmp_path, text, error):
    conf = tmp_path / "acl.conf"
    conf.write_text(text.format(dir=tmp_path))
    (tmp_path / "users.acl").write_text("user carol on nopass ~* +@all\n")
    p = subprocess.run([BIN, str(conf), "--port", "0"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert error in p.stderr


def test_aclfile_is_loaded_saved_and_reloaded(tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user carol on >pw ~c:* +@read\n")
    s = start(tmp_path, f"aclfile {acl}\n")
    try:
        c = s.client()
        assert sorted(c.acl_users()) == ["carol", "default"]
        c.acl_setuser("dave", enabled=True, nopass=True, commands=["+ping"])
        assert c.acl_save()
        text = acl.read_text()
        assert "user dave on nopass resetchannels -@all +ping" in text
        acl.write_text("user erin on nopass ~* +@all\n")
        assert c.acl_load()
        assert sorted(c.acl_users()) == ["default", "erin"]
    finally:
        s.stop()
