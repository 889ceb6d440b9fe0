//! Black-box robustness: the built binary is fed protocol garbage (random
//! bytes, absurd and negative lengths, deep inline quoting, a 2 MB inline
//! line, frames cut off by a close) and thousands of random commands from
//! the command table with random arguments, over many connections. It must
//! keep serving: a fresh connection gets PONG, the process is alive, the
//! keyspace survives a snapshot round trip, and no thread ever panicked.
//!
//! The random stream is reproducible: the seed is printed on failure and
//! `EBB_GARBAGE_SEED` replays it.

use ebb_core::testing::COMMAND_WORDS;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start() -> Server {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("ebb-garbage-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let log = File::create(dir.join("stderr.log")).expect("log file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ebb-server"))
            .args(["--port", "0", "--dir"])
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn ebb-server");
        let port = ready_port(child.stdout.take().expect("stdout"));
        Server { child, port, dir }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(200))).ok();
        s.set_write_timeout(Some(Duration::from_millis(500))).ok();
        s.set_nodelay(true).ok();
        s
    }

    /// Fails the test if the process died, stopped answering, or any of its
    /// threads panicked (a panicking connection task would not kill it).
    fn assert_healthy(&mut self, when: &str, seed: u64) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("seed {seed}: the server exited ({status}) {when}");
        }
        let mut c = self.connect();
        c.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let reply = request(&mut c, b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n".len());
        assert_eq!(reply, b"+PONG\r\n", "seed {seed}: no PONG {when}");
        let log = std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default();
        assert!(
            !log.contains("panicked"),
            "seed {seed}: a server thread panicked {when}:\n{log}"
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sends `req` and reads until `want` bytes arrived, the peer closed, or
/// the read timed out.
fn request(c: &mut TcpStream, req: &[u8], want: usize) -> Vec<u8> {
    let _ = c.write_all(req);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < want {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// Reads whatever the server sends until it closes or goes quiet.
fn drain(c: &mut TcpStream, budget: Duration) -> Vec<u8> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 16384];
    while start.elapsed() < budget {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// Reads until `end` arrives, the server closes, or it goes quiet.
fn read_until(c: &mut TcpStream, end: &[u8], budget: Duration) -> Vec<u8> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 16384];
    while start.elapsed() < budget && !out.ends_with(end) {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// Sends `data` (ignoring a server that already hung up), optionally
/// closes the sending side, and returns what came back.
fn exchange(s: &Server, data: &[u8], half_close: bool) -> Vec<u8> {
    let mut c = s.connect();
    let _ = c.write_all(data);
    if half_close {
        let _ = c.shutdown(Shutdown::Write);
    }
    drain(&mut c, Duration::from_millis(400))
}

/// [`exchange`] on one connection per item, all open at once, so the
/// quiet waits overlap.
fn exchange_all(s: &Server, items: &[(Vec<u8>, bool)]) -> Vec<Vec<u8>> {
    let mut conns: Vec<TcpStream> = items.iter().map(|_| s.connect()).collect();
    for (c, (data, half_close)) in conns.iter_mut().zip(items) {
        let _ = c.write_all(data);
        if *half_close {
            let _ = c.shutdown(Shutdown::Write);
        }
    }
    std::thread::sleep(Duration::from_millis(250));
    conns
        .iter_mut()
        .map(|c| {
            c.set_read_timeout(Some(Duration::from_millis(20))).ok();
            drain(c, Duration::from_millis(200))
        })
        .collect()
}

fn seed() -> u64 {
    std::env::var("EBB_GARBAGE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen())
}

fn multibulk(args: &[Vec<u8>]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        v.extend_from_slice(a);
        v.extend_from_slice(b"\r\n");
    }
    v
}

#[test]
fn protocol_errors_get_redis_texts_and_close_only_that_connection() {
    let mut s = Server::start();
    let mut keep = s.connect();
    assert_eq!(request(&mut keep, b"SET alive 1\r\n", 5), b"+OK\r\n");
    let cases: &[(&[u8], &str)] = &[
        (
            b"*1\r\n$-5\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$-1\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$536870913\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$99999999999999999999\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*2\r\n$4\r\nPING\r\n$04\r\n",
            "-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*99999999999999999999\r\n",
            "-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*12\n$4\r\nPING\r\n",
            "-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*x\r\n",
            "-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1\r\n+a\r\n",
            "-ERR Protocol error: expected '$', got '+'\r\n",
        ),
        (
            b"SET \"a\"b c\r\n",
            "-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
        (
            b"'\r\n",
            "-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
    ];
    for (data, want) in cases {
        let got = exchange(&s, data, false);
        assert_eq!(
            String::from_utf8_lossy(&got),
            *want,
            "for {:?}",
            String::from_utf8_lossy(data)
        );
    }
    // Empty requests are skipped, as in Redis.
    let got = exchange(&s, b"*0\r\n*-1\r\n\r\n  \r\nPING\r\n", false);
    assert_eq!(got, b"+PONG\r\n");
    // A 2 MB inline line without a newline is refused once past 64 KB.
    let got = exchange(&s, &vec![b'A'; 2 << 20], false);
    assert!(
        got.starts_with(b"-ERR Protocol error: too big inline request\r\n"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    let mut big = vec![b'*'];
    big.extend(std::iter::repeat_n(b'9', 70 * 1024));
    let got = exchange(&s, &big, false);
    assert_eq!(got, b"-ERR Protocol error: too big mbulk count string\r\n");
    // The untouched connection still works.
    assert_eq!(request(&mut keep, b"GET alive\r\n", 7), b"$1\r\n1\r\n");
    s.assert_healthy("after protocol errors", 0);
}

/// Protocol garbage of every kind, each on its own connection.
fn garbage(rng: &mut StdRng) -> (Vec<u8>, bool) {
    let half_close = rng.gen_bool(0.5);
    let data = match rng.gen_range(0..12) {
        0 => (0..rng.gen_range(1..2000)).map(|_| rng.gen()).collect(),
        // Random bytes after a valid-looking start.
        1 => {
            let mut v = b"*3\r\n$3\r\nSET\r\n".to_vec();
            v.extend((0..rng.gen_range(0..300)).map(|_| rng.gen::<u8>()));
            v
        }
        // Absurd, negative and overflowing lengths.
        2 => {
            let n = [
                "-1",
                "-5",
                "-9223372036854775808",
                "9223372036854775807",
                "99999999999999999999",
                "536870912",
                "1048576",
                "1048577",
                "0",
                "",
            ];
            let a = n[rng.gen_range(0..n.len())];
            let b = n[rng.gen_range(0..n.len())];
            format!("*{a}\r\n${b}\r\nPING\r\n").into_bytes()
        }
        // Deep quoting and escapes on an inline line.
        3 => {
            let unit: &[u8] = match rng.gen_range(0..5) {
                0 => b"\"",
                1 => b"\\\"",
                2 => b"\\x4",
                3 => b"'\\''",
                _ => b"\"\\x41\" ",
            };
            let mut v = b"SET k ".to_vec();
            for _ in 0..rng.gen_range(1..12_000) {
                v.extend_from_slice(unit);
            }
            v.extend_from_slice(b"\r\n");
            v
        }
        // A big bulk announced, some of it sent, then the close.
        4 => {
            let mut v = b"*2\r\n$3\r\nGET\r\n$100000000\r\n".to_vec();
            v.extend(std::iter::repeat_n(b'x', rng.gen_range(0..200_000)));
            v
        }
        // Many arguments announced, a few sent.
        5 => {
            let mut v = b"*1000000\r\n".to_vec();
            for _ in 0..rng.gen_range(0..5000) {
                v.extend_from_slice(b"$1\r\na\r\n");
            }
            v
        }
        // A valid request cut at a random byte.
        6 => {
            let v = multibulk(&[b"SET".to_vec(), b"k".to_vec(), vec![b'v'; 300]]);
            let cut = rng.gen_range(0..v.len());
            v[..cut].to_vec()
        }
        // A 2 MB inline line, with or without its newline.
        7 => {
            let mut v = b"ECHO ".to_vec();
            v.extend(std::iter::repeat_n(b'y', 2 << 20));
            if rng.gen() {
                v.extend_from_slice(b"\r\n");
            }
            v
        }
        // Bare line ends and NULs.
        8 => (0..rng.gen_range(1..500))
            .map(|_| [b'\r', b'\n', 0, b' ', b'*', b'$'][rng.gen_range(0..6)])
            .collect(),
        // Valid requests, then garbage in the middle of a pipeline.
        9 => {
            let mut v = b"PING\r\n*1\r\n$4\r\nPING\r\n".to_vec();
            v.extend_from_slice(b"*2\r\n$4\r\nECHO\r\n$-3\r\nPING\r\n");
            v
        }
        // RESP3 handshake, then a RESP type the server never accepts.
        10 => b"HELLO 3\r\n%1\r\n+a\r\n+b\r\n".to_vec(),
        _ => {
            let mut v = Vec::new();
            for _ in 0..rng.gen_range(1..200) {
                v.extend_from_slice(b"*1\r\n");
            }
            v
        }
    };
    (data, half_close)
}

#[test]
fn random_garbage_never_hurts_the_server() {
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut s = Server::start();
    let mut keep = s.connect();
    assert_eq!(request(&mut keep, b"SET alive 1\r\n", 5), b"+OK\r\n");
    let start = Instant::now();
    let mut done = 0;
    while done < 160 && start.elapsed() < Duration::from_secs(8) {
        let batch: Vec<_> = (0..16).map(|_| garbage(&mut rng)).collect();
        exchange_all(&s, &batch);
        done += batch.len();
        s.assert_healthy(&format!("after {done} garbage connections"), seed);
    }
    assert_eq!(
        request(&mut keep, b"GET alive\r\n", 7),
        b"$1\r\n1\r\n",
        "seed {seed}"
    );
    s.assert_healthy("after the garbage", seed);
}

const KEYS: &[&str] = &["a", "b", "s", "h", "z", "l", "k", "str"];

/// Server-command words, next to the shared data-command keywords.
const WORDS: &[&str] = &[
    "LIST",
    "INFO",
    "DOCS",
    "GETKEYS",
    "SETNAME",
    "GETNAME",
    "ID",
    "REPLY",
    "ON",
    "OFF",
    "SKIP",
    "UNBLOCK",
    "NO-EVICT",
    "RESETSTAT",
    "OBJECT",
    "RELOAD",
    "SET-ACTIVE-EXPIRE",
    "NUMSUB",
    "CHANNELS",
    "NUMPAT",
    "SETINFO",
    "keyspace",
    "server",
    "all",
    "*",
    "m1",
    "f1",
    "x",
    "",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "10",
    "100",
    "0.5",
    "-0",
    "1e400",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "(1",
    "[a",
    "-",
    "+",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "0x10",
    "1.5",
];

/// Parameters CONFIG SET may change without locking the test out (no
/// password, port, client limits or bulk-length limits).
const CONFIG_SAFE: &[&str] = &[
    "notify-keyspace-events",
    "hz",
    "save",
    "appendonly",
    "appendfsync",
    "hash-max-listpack-entries",
    "set-max-intset-entries",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
];

fn arg(rng: &mut StdRng) -> Vec<u8> {
    let pick = |rng: &mut StdRng, l: &[&str]| l[rng.gen_range(0..l.len())].as_bytes().to_vec();
    match rng.gen_range(0..10) {
        0..=2 => pick(rng, KEYS),
        3 | 4 => pick(rng, COMMAND_WORDS),
        5 => pick(rng, WORDS),
        6..=8 => pick(rng, NUMBERS),
        _ => (0..rng.gen_range(0..10)).map(|_| rng.gen()).collect(),
    }
}

/// A request for a random command of the table with random arguments,
/// except the few that would stop the server or lock clients out.
fn random_request(rng: &mut StdRng) -> Vec<Vec<u8>> {
    let table = ebb_core::table::all();
    loop {
        let spec = &table[rng.gen_range(0..table.len())];
        let n = if rng.gen_bool(0.8) {
            let min = spec.arity.unsigned_abs() as usize;
            if spec.arity >= 0 {
                min
            } else {
                min + rng.gen_range(0..5)
            }
        } else {
            rng.gen_range(1..8)
        };
        let mut argv = vec![spec.name.to_ascii_uppercase().into_bytes()];
        argv.extend((1..n).map(|_| arg(rng)));
        if spec.first_key > 0 && rng.gen_bool(0.7) {
            if let Some(k) = argv.get_mut(spec.first_key as usize) {
                *k = KEYS[rng.gen_range(0..KEYS.len())].as_bytes().to_vec();
            }
        }
        let sub = argv
            .get(1)
            .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
            .unwrap_or_default();
        match (spec.name, sub.as_str()) {
            ("shutdown", _) | ("debug", "sleep") | ("client", "pause") => continue,
            ("config", "set") => {
                if argv.len() < 4 {
                    continue;
                }
                argv.truncate(4);
                argv[2] = CONFIG_SAFE[rng.gen_range(0..CONFIG_SAFE.len())]
                    .as_bytes()
                    .to_vec();
            }
            _ => {}
        }
        return argv;
    }
}

/// Values of every type for the random commands to collide with.
const SETUP: &[&str] = &[
    "SET str 12",
    "SET k abc",
    "RPUSH l a b 1 2",
    "HSET h f1 1 f2 x m1 y",
    "SADD s m1 m2 1 x",
    "ZADD z 1 m1 2 m2 inf x",
    "HPEXPIRE h 300 FIELDS 1 f2",
    "SPEXPIRE s 200 MEMBERS 1 m1",
    "ZPEXPIRE z 100 MEMBERS 1 m2",
    "SADD a x y",
    "ZADD b 1 x",
];

#[test]
fn thousands_of_random_commands_never_hurt_the_server() {
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut s = Server::start();
    let start = Instant::now();
    let mut sent = 0;
    let mut rounds = 0;
    while sent < 4000 && start.elapsed() < Duration::from_secs(10) {
        // A few connections at a time, each with a pipeline ending in a
        // marker; a blocking command, QUIT or CLIENT REPLY OFF may keep the
        // marker from coming back: move on after a quiet moment, closing
        // the connection with whatever it holds.
        let mut conns = Vec::new();
        for _ in 0..4 {
            let mut c = s.connect();
            let mut batch = Vec::new();
            if rng.gen_bool(0.3) {
                batch.extend_from_slice(b"HELLO 3\r\n");
            }
            for line in SETUP {
                batch.extend_from_slice(line.as_bytes());
                batch.extend_from_slice(b"\r\n");
            }
            for _ in 0..rng.gen_range(20..120) {
                batch.extend(multibulk(&random_request(&mut rng)));
                sent += 1;
            }
            batch.extend_from_slice(b"ECHO end-of-batch\r\n");
            let _ = c.write_all(&batch);
            conns.push(c);
        }
        for c in &mut conns {
            read_until(c, b"end-of-batch\r\n", Duration::from_millis(300));
        }
        rounds += 1;
        if rounds % 4 == 0 {
            s.assert_healthy(&format!("after {sent} random commands"), seed);
        }
    }
    assert!(
        sent >= 1000,
        "seed {seed}: only {sent} commands in the time given"
    );
    s.assert_healthy(&format!("after {sent} random commands"), seed);
    // Whatever state they left must survive a snapshot round trip.
    let mut c = s.connect();
    c.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let reply = request(&mut c, b"DEBUG RELOAD\r\n", 5);
    assert_eq!(reply, b"+OK\r\n", "seed {seed}");
    s.assert_healthy("after DEBUG RELOAD", seed);
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
