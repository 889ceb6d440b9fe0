//! Black-box tests of the built binary through the Rust `redis` crate.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    port: u16,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let dir =
            std::env::temp_dir().join(format!("ebb-bb-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Server::start_in(dir, extra)
    }

    fn start_in(dir: std::path::PathBuf, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ebb-server"))
            .args(["--port", "0", "--dir"])
            .arg(&dir)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ebb-server");
        let port = ready_port(child.stdout.take().expect("stdout"));
        Server {
            child,
            port,
            _dir: TempDir(dir),
        }
    }

    fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))
            .expect("client")
            .get_connection()
            .expect("connect")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[test]
fn ping_set_get_and_pipeline() {
    let s = Server::start(&[]);
    let mut c = s.client();
    let pong: String = redis::cmd("PING").query(&mut c).expect("ping");
    assert_eq!(pong, "PONG");
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(b"v\x00\xff".as_slice())
        .query(&mut c)
        .expect("set");
    let v: Vec<u8> = redis::cmd("GET").arg("k").query(&mut c).expect("get");
    assert_eq!(v, b"v\x00\xff");
    let mut p = redis::pipe();
    for i in 0..100 {
        p.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    p.cmd("GET").arg("k99");
    let (last,): (String,) = p.query(&mut c).expect("pipeline");
    assert_eq!(last, "99");
}

#[test]
fn errors_keep_connection_open() {
    let s = Server::start(&[]);
    let mut c = s.client();
    let e = redis::cmd("NOSUCHCMD")
        .arg("x")
        .query::<String>(&mut c)
        .expect_err("unknown");
    assert!(e.to_string().contains("unknown command 'NOSUCHCMD'"), "{e}");
    let e = redis::cmd("GET")
        .query::<String>(&mut c)
        .expect_err("arity");
    assert!(
        e.to_string()
            .contains("wrong number of arguments for 'get' command"),
        "{e}"
    );
    let pong: String = redis::cmd("PING").query(&mut c).expect("still alive");
    assert_eq!(pong, "PONG");
}

#[test]
fn transaction_and_watch() {
    let s = Server::start(&[]);
    let mut a = s.client();
    let mut b = s.client();
    let _: () = redis::cmd("SET")
        .arg("w")
        .arg("1")
        .query(&mut a)
        .expect("set");
    let _: () = redis::cmd("WATCH").arg("w").query(&mut a).expect("watch");
    let _: () = redis::cmd("SET")
        .arg("w")
        .arg("2")
        .query(&mut b)
        .expect("set");
    let r: Option<(String,)> = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("w")
        .arg("3")
        .query(&mut a)
        .expect("exec");
    assert!(r.is_none(), "EXEC must abort after a watched key changed");
    let v: String = redis::cmd("GET").arg("w").query(&mut a).expect("get");
    assert_eq!(v, "2");
}

#[test]
fn aof_survives_kill() {
    let mut s = Server::start(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = s.client();
    for i in 0..50 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut c)
            .expect("set");
    }
    let _ = s.child.kill();
    let _ = s.child.wait();
    let dir = std::mem::replace(&mut s._dir, TempDir(std::path::PathBuf::new()));
    drop(s);
    let s = Server::start_in(dir.0.clone(), &["--appendonly", "yes"]);
    let mut c = s.client();
    let v: String = redis::cmd("GET")
        .arg("k49")
        .query(&mut c)
        .expect("get after restart");
    assert_eq!(v, "49");
    drop(dir);
}

/// Reads the server's standard output up to its ready line (its log, which
/// goes to standard output as Redis's does, comes first) and keeps draining
/// the rest so the log never fills the pipe.
fn ready_port(out: std::process::ChildStdout) -> u16 {
    let mut lines = BufReader::new(out).lines();
    let port = loop {
        let line = lines.next().expect("ready line").expect("read stdout");
        if let Some(p) = line.trim().strip_prefix("ebb-server ready port=") {
            break p.parse().expect("port");
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    port
}
