"""How the process starts as operators configure redis-server:
`daemonize yes` detaches, `pidfile` holds the process id until a clean
exit, and `logfile` receives the log (an unusable one stops the start)."""

import os
import socket
import subprocess
import time

import pytest
import redis

from conftest import BIN, EbbServer, _free_port, wait_until


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_daemonize_pidfile_and_logfile(tmp_path):
    port = _free_port()
    pidfile, logfile = tmp_path / "ebb.pid", tmp_path / "ebb.log"
    conf = tmp_path / "redis.conf"
    conf.write_text(f"port {port}\ndaemonize yes\npidfile {pidfile}\nlogfile {logfile}\n"
                    f"dir {tmp_path}\nsave \"\"\n")
    # The command returns once the server has detached.
    p = subprocess.run([BIN, str(conf)], capture_output=True, text=True, timeout=10)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    wait_until(lambda: pidfile.exists() and pidfile.read_text().strip())
    pid = int(pidfile.read_text())
    try:
        assert alive(pid)
        c = redis.Redis(port=port, decode_responses=True)
        wait_until(lambda: c.ping())
        assert c.config_get("daemonize") == {"daemonize": "yes"}
        log = logfile.read_text()
        assert f"PID: {pid}" in log and "Ready to accept connections" in log
        assert "\x1b[" not in log  # no terminal colours in a file
        try:
            c.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        wait_until(lambda: not alive(pid))
        assert not pidfile.exists()
        assert "bye bye" in logfile.read_text()
    finally:
        if alive(pid):
            os.kill(pid, 9)


def test_pidfile_without_daemonize(tmp_path):
    pidfile = tmp_path / "ebb.pid"
    s = EbbServer("--dir", str(tmp_path), "--pidfile", str(pidfile), cwd=str(tmp_path))
    assert int(pidfile.read_text()) == s.proc.pid
    s.stop()
    assert not pidfile.exists()


def test_an_unusable_logfile_stops_the_start(tmp_path):
    p = subprocess.run([BIN, "--port", "0", "--logfile", str(tmp_path / "no" / "such" / "x.log")],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1
    assert "Can't open the log file" in p.stderr


def test_logfile_appends(tmp_path):
    logfile = tmp_path / "ebb.log"
    logfile.write_text("earlier line\n")
    s = EbbServer("--dir", str(tmp_path), "--logfile", str(logfile), cwd=str(tmp_path))
    wait_until(lambda: "Ready to accept connections" in logfile.read_text())
    assert s.client().execute_command("DEBUG", "LOG", "### a marker") == "OK"
    s.stop()
    text = logfile.read_text()
    assert text.startswith("earlier line\n") and "bye bye" in text
    assert "DEBUG LOG: ### a marker" in text


def test_a_log_on_a_pipe_is_plain_text(tmp_path):
    # Without a logfile the log goes to standard output, as Redis's does
    # (nothing of it on stderr); when that is a pipe (docker, systemd, a
    # supervisor) its lines carry no terminal colour codes.
    p = subprocess.Popen([BIN, "--port", "0", "--dir", str(tmp_path)], cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in p.stdout:
            lines.append(line)
            if "Ready to accept connections" in line:
                break
        first = "".join(lines)
    finally:
        p.terminate()
        p.wait(timeout=10)
        rest, err = p.stdout.read(), p.stderr.read()
    assert "started, PID:" in first
    assert "\x1b[" not in first + rest
    assert "bye bye" in rest
    assert err == ""


def test_sigterm_right_after_start_is_a_clean_shutdown(tmp_path):
    # The signal handlers are in place before the ready line: a stop sent
    # at once still exits cleanly (status 0, pid file removed), never by
    # the signal's default action.
    for i in range(5):
        pidfile = tmp_path / f"ebb{i}.pid"
        s = EbbServer("--dir", str(tmp_path), "--pidfile", str(pidfile), cwd=str(tmp_path))
        s.proc.terminate()
        assert s.proc.wait(10) == 0
        assert not pidfile.exists()


def test_shutdown_with_a_failing_save_keeps_the_server_up(tmp_path):
    # A directory where the snapshot goes makes the final save fail: the
    # server stays up for SHUTDOWN and for SIGTERM alike, as Redis does,
    # until told NOSAVE or FORCE.
    (tmp_path / "dump.ebb").mkdir()
    s = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    c = s.client()
    c.set("a", "1")
    with pytest.raises(redis.ResponseError, match="Errors trying to SHUTDOWN. Check logs."):
        c.shutdown()
    assert c.ping()
    s.proc.terminate()
    time.sleep(0.3)
    assert s.proc.poll() is None and c.ping()
    try:
        c.shutdown(force=True)
    except redis.ConnectionError:
        pass
    assert s.proc.wait(10) == 0


def test_shutdown_stops_a_running_bgsave(tmp_path):
    # A BGSAVE still writing when SHUTDOWN saves is stopped, so its older
    # snapshot cannot land over the final one. (The child usually ends
    # first on this data; the test holds the outcome, not the race.)
    s = EbbServer("--dir", str(tmp_path), "--save", "", cwd=str(tmp_path))
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(300_000):
        pipe.set(f"k{i}", "x" * 20)
    pipe.execute()
    c.bgsave()
    c.set("marker", "after-bgsave")
    try:
        c.shutdown(save=True)
    except redis.ConnectionError:
        pass
    assert s.proc.wait(20) == 0
    time.sleep(1.0)  # a surviving child would land its file by now
    s = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    try:
        c = s.client()
        assert c.get("marker") == "after-bgsave"
        assert c.dbsize() == 300_001
        assert not [p for p in os.listdir(tmp_path) if p.startswith("temp-")]
    finally:
        s.stop()


def test_shutdown_abort_cancels_a_signalled_shutdown_held_by_the_cron(tmp_path):
    # As in Redis a signal's shutdown runs from the cron: DEBUG PAUSE-CRON
    # holds it and SHUTDOWN ABORT cancels it; with nothing pending ABORT
    # is an error.
    s = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    try:
        c = s.client()
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            c.execute_command("SHUTDOWN", "ABORT")
        c.execute_command("DEBUG", "PAUSE-CRON", "1")
        s.proc.terminate()
        time.sleep(0.2)
        assert c.execute_command("SHUTDOWN", "ABORT") in (True, "OK")
        c.execute_command("DEBUG", "PAUSE-CRON", "0")
        time.sleep(0.2)
        assert c.ping() is True and s.proc.poll() is None
        s.proc.terminate()
        assert s.proc.wait(10) == 0
    finally:
        s.stop()


def test_a_running_bgsave_shows_its_temp_file(tmp_path):
    # `temp-<child pid>.rdb` exists while a held BGSAVE runs and is gone
    # once it lands.
    s = EbbServer("--dir", str(tmp_path), cwd=str(tmp_path))
    try:
        c = s.client()
        for i in range(10):
            c.set(i, i)
        c.config_set("rdb-key-save-delay", 100_000)
        c.bgsave()
        time.sleep(0.3)
        temps = [p for p in os.listdir(tmp_path) if p.startswith("temp-") and p.endswith(".rdb")]
        assert len(temps) == 1 and temps[0] != f"temp-{s.proc.pid}.rdb"
        wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10)
        assert not [p for p in os.listdir(tmp_path) if p.startswith("temp-")]
    finally:
        s.stop()


def test_a_second_sigint_during_the_final_save_exits_at_once(tmp_path):
    """Redis's "You insist": the shutdown's save is held by
    rdb-key-save-delay (its temp file shows), and a second SIGINT exits
    with status 1, the temp file removed and the old snapshot kept."""
    import signal as sig

    s = EbbServer("--dir", str(tmp_path), "--save", "3600 1", cwd=str(tmp_path))
    c = s.client()
    for i in range(20):
        c.set(i, i)
    c.config_set("rdb-key-save-delay", 100_000)  # 2 s for 20 keys
    pid = s.proc.pid
    temp = tmp_path / f"temp-{pid}.rdb"
    s.proc.send_signal(sig.SIGINT)
    assert wait_until(temp.exists, timeout=5)
    s.proc.send_signal(sig.SIGINT)
    assert s.proc.wait(5) == 1
    assert not temp.exists()
    assert not (tmp_path / "dump.ebb").exists()


def _start_with_files_limit(tmp_path, soft, hard, *args):
    """ebb-server under an open-files limit (RLIMIT_NOFILE), logging to a
    file; returns the server and its log."""
    import resource

    log = tmp_path / "ebb.log"

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    proc = subprocess.Popen(
        [BIN, "--port", "0", "--dir", str(tmp_path), "--logfile", str(log), *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(tmp_path),
        preexec_fn=limit)
    from conftest import ready_port

    port = ready_port(proc)
    return proc, port, log


def _may_raise_the_hard_limit():
    """Whether this process may raise its hard open-files limit (a root
    with CAP_SYS_RESOURCE): the server then raises it too, and nothing is
    lowered."""
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))\n")
    return subprocess.run(["python3", "-c", code], capture_output=True).returncode == 0


def test_maxclients_is_fitted_to_the_open_files_limit(tmp_path):
    """As Redis at start: the open-files limit is raised for maxclients
    plus 32 descriptors; when it cannot be (here the hard limit is 64),
    maxclients is lowered to what fits, with Redis's warnings, so that the
    clients past it get `max number of clients reached` instead of hanging
    unaccepted. CONFIG SET maxclients past the limit is refused."""
    if _may_raise_the_hard_limit():
        pytest.skip("this process may raise its hard open-files limit")
    proc, port, log = _start_with_files_limit(tmp_path, 64, 64)
    try:
        c = redis.Redis(port=port, decode_responses=True)
        assert c.config_get("maxclients") == {"maxclients": "32"}
        with pytest.raises(redis.ResponseError, match=(
                "CONFIG SET failed \\(possibly related to argument 'maxclients'\\) - The "
                "operating system is not able to handle the specified number of clients, "
                "try with 32")):
            c.config_set("maxclients", 1000)
        assert c.config_set("maxclients", 10)
        socks = []
        replies = []
        for _ in range(15):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"PING\r\n")
            replies.append(s.recv(100))
            socks.append(s)
        assert replies.count(b"+PONG\r\n") == 9  # c holds one of the ten
        assert replies.count(b"-ERR max number of clients reached\r\n") == 6
        for s in socks:
            s.close()
    finally:
        proc.terminate()
        proc.wait(10)
    text = log.read_text()
    assert "You requested maxclients of 10000 requiring at least 10032 max file descriptors." in text
    assert "Server can't set maximum open files to 10032 because of OS error" in text
    assert ("Current maximum open files is 64. maxclients has been reduced to 32 to compensate "
            "for low ulimit. If you need higher maxclients increase 'ulimit -n'.") in text


def test_the_open_files_limit_is_raised_up_to_the_hard_limit(tmp_path):
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 10032:
        pytest.skip("needs a hard open-files limit of at least 10032")
    proc, port, log = _start_with_files_limit(tmp_path, 256, hard)
    try:
        c = redis.Redis(port=port, decode_responses=True)
        assert c.config_get("maxclients") == {"maxclients": "10000"}
        with open(f"/proc/{proc.pid}/limits") as f:
            line = next(x for x in f if x.startswith("Max open files"))
        assert line.split()[3] == "10032"
    finally:
        proc.terminate()
        proc.wait(10)
    assert ("Increased maximum number of open files to 10032 (it was originally set to 256)."
            in log.read_text())


def test_a_limit_too_low_for_any_client_stops_the_start(tmp_path):
    import resource

    if _may_raise_the_hard_limit():
        pytest.skip("this process may raise its hard open-files limit")

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20))

    r = subprocess.run([BIN, "--port", "0", "--dir", str(tmp_path)], capture_output=True,
                       text=True, timeout=10, preexec_fn=limit, cwd=str(tmp_path))
    assert r.returncode == 1
    assert ("Your current 'ulimit -n' of 20 is not enough for the server to start. Please "
            "increase your open file limit to at least 10032. Exiting.") in r.stderr


def test_no_connection_is_accepted_once_shutdown_closed_the_client(tmp_path):
    """As Redis closes its listening sockets before it exits: once SHUTDOWN
    NOSAVE has closed the client's connection (here while a script is
    busy, where the exit is immediate), a new connection is refused, not
    accepted by the kernel and then dropped."""
    s = EbbServer("--dir", str(tmp_path), "--busy-reply-threshold", "100", cwd=str(tmp_path))
    busy = socket.create_connection(("127.0.0.1", s.port))
    busy.sendall(b"*3\r\n$4\r\nEVAL\r\n$17\r\nwhile true do end\r\n$1\r\n0\r\n")
    time.sleep(0.3)
    c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    c.sendall(b"SHUTDOWN NOSAVE\r\n")
    assert c.recv(100) == b""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", s.port), timeout=5)
    assert s.proc.wait(5) == 0


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().rstrip(b"\0").replace(b"\0", b" ").decode()


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="needs /proc")
def test_the_process_title_follows_the_template(tmp_path):
    conf = tmp_path / "ebb.conf"
    conf.write_text('save ""\n')
    s = EbbServer(str(conf), "--dir", str(tmp_path), cwd=str(tmp_path))
    try:
        pid = s.proc.pid
        # Redis's default template: "{title} {listen-addr} {server-mode}".
        assert cmdline(pid) == f"{BIN} 127.0.0.1:{s.port}"
        c = s.client()
        template = "TEST {title} {listen-addr} {port} {tls-port} {unixsocket} {config-file}"
        assert c.config_set("proc-title-template", template)
        words = cmdline(pid).split()
        assert words == ["TEST", BIN, f"127.0.0.1:{s.port}", str(s.port), "0", str(conf)]
        for bad in ("{invalid-var}", "{title", "abc {", "{title}", ""):
            with pytest.raises(redis.ResponseError, match="template format is invalid"):
                c.config_set("proc-title-template", bad)
        assert c.config_get("proc-title-template") == {"proc-title-template": template}
        # A background save's child shows its job.
        c.config_set("rdb-key-save-delay", 2_000_000)
        c.set("k", "v")
        c.bgsave()
        child = wait_until(lambda: subprocess.run(
            ["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split())
        assert child
        kid = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                             text=True).stdout.split()[0]
        assert cmdline(kid).split()[:2] == ["TEST", "ebb-rdb-bgsave"]
    finally:
        s.stop()


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="needs /proc")
def test_set_proc_title_no_leaves_the_command_line(tmp_path):
    s = EbbServer("--set-proc-title", "no", "--appendonly", "no", cwd=str(tmp_path))
    try:
        assert cmdline(s.proc.pid) == " ".join([BIN, *s.args])
    finally:
        s.stop()
