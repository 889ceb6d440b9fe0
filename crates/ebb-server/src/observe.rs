//! MONITOR (every command, as it runs, to the clients that asked) and
//! SLOWLOG (the commands that ran longer than `slowlog-log-slower-than`).
//! Both cost one atomic load per command while unused.

use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::UnboundedSender;

use ebb_core::table::flag;
use ebb_core::{CommandSpec, Reply};

use crate::server::{ClientEntry, Msg};

static MONITORS: Mutex<Vec<(u64, UnboundedSender<Msg>)>> = Mutex::new(Vec::new());
static MONITOR_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Starts feeding client `id` every command.
pub fn add_monitor(id: u64, tx: &UnboundedSender<Msg>) {
    let mut m = MONITORS.lock().unwrap_or_else(|e| e.into_inner());
    if !m.iter().any(|(i, _)| *i == id) {
        m.push((id, tx.clone()));
    }
    MONITOR_COUNT.store(m.len(), Ordering::Relaxed);
}

/// Stops feeding client `id` (when it disconnects or resets).
pub fn remove_monitor(id: u64) {
    if MONITOR_COUNT.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut m = MONITORS.lock().unwrap_or_else(|e| e.into_inner());
    m.retain(|(i, _)| *i != id);
    MONITOR_COUNT.store(m.len(), Ordering::Relaxed);
}

/// Whether anyone monitors.
pub fn monitoring() -> bool {
    MONITOR_COUNT.load(Ordering::Relaxed) > 0
}

/// Appends `arg` quoted and escaped the way Redis prints it.
pub(crate) fn repr(out: &mut String, arg: &[u8]) {
    out.push('"');
    for &b in arg {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
}

/// What a hidden argument shows as, in MONITOR and the slow log.
const REDACTED: &[u8] = b"(redacted)";

/// The arguments of `argv` that MONITOR and the slow log hide, as Redis
/// 7.0 hides them: credentials, as far as the command reads its arguments
/// before an error (AUTH of more than three arguments is refused before
/// anything is hidden).
fn redacted(spec: &CommandSpec, argv: &[&[u8]]) -> Vec<usize> {
    match spec.name {
        "migrate" => ebb_core::cmd::migrate::redacted_positions(argv),
        "auth" if argv.len() <= 3 => (1..argv.len()).collect(),
        "hello" => hello_redacted(argv),
        // Everything about the user an ACL SETUSER names.
        "acl" if argv.len() >= 3 && argv[1].eq_ignore_ascii_case(b"setuser") => {
            (2..argv.len()).collect()
        }
        // The values of the options Redis marks sensitive.
        "config" if argv.len() >= 4 && argv[1].eq_ignore_ascii_case(b"set") => (2..argv.len())
            .step_by(2)
            .filter(|&i| {
                i + 1 < argv.len()
                    && [&b"requirepass"[..], b"masterauth", b"masteruser"]
                        .iter()
                        .any(|n| argv[i].eq_ignore_ascii_case(n))
            })
            .map(|i| i + 1)
            .collect(),
        _ => Vec::new(),
    }
}

/// HELLO's AUTH user name and password, read as HELLO reads its options
/// (a protocol version that is not 2 or 3, an unknown option or an
/// invalid SETNAME stops it).
fn hello_redacted(argv: &[&[u8]]) -> Vec<usize> {
    let mut out = Vec::new();
    let proto_ok = argv
        .get(1)
        .is_none_or(|v| matches!(ebb_core::args::parse_i64(v), Some(2 | 3)));
    if !proto_ok {
        return out;
    }
    let mut j = 2;
    while j < argv.len() {
        let more = argv.len() - 1 - j;
        if argv[j].eq_ignore_ascii_case(b"auth") && more >= 2 {
            out.extend([j + 1, j + 2]);
            j += 2;
        } else if argv[j].eq_ignore_ascii_case(b"setname")
            && more >= 1
            && argv[j + 1].iter().all(|c| (b'!'..=b'~').contains(c))
        {
            j += 1;
        } else {
            break;
        }
        j += 1;
    }
    out
}

/// Sends `argv`, run by client `from` (`addr`, database `db`), to every
/// monitor but `from`. Like Redis 7.0, administrative commands are not
/// shown, and credentials (AUTH, HELLO, MIGRATE) show as `(redacted)`.
pub fn feed(from: u64, db: usize, addr: &str, spec: &'static CommandSpec, argv: &[&[u8]]) {
    // (A subcommand by its own flag: ACL SETUSER, CLIENT LIST, ….)
    if spec.has(flag::ADMIN)
        || matches!(spec.name, "monitor" | "config")
        || crate::cmdstats::slot_of(spec, argv).is_some_and(crate::cmdstats::admin)
    {
        return;
    }
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    let mut line = format!("{}.{:06} [{db} {addr}]", t.as_secs(), t.subsec_micros());
    let hidden = redacted(spec, argv);
    for (i, a) in argv.iter().enumerate() {
        line.push(' ');
        match hidden.contains(&i) {
            true => repr(&mut line, REDACTED),
            false => repr(&mut line, a),
        }
    }
    let m = MONITORS.lock().unwrap_or_else(|e| e.into_inner());
    for (id, tx) in m.iter() {
        if *id != from {
            let _ = tx.send(Msg::Unblocked(Reply::Simple(line.clone().into())));
        }
    }
}

/// One SLOWLOG entry.
struct Slow {
    id: u64,
    at: u64,
    micros: u64,
    argv: Vec<Bytes>,
    addr: String,
    name: Bytes,
}

static SLOWLOG: Mutex<VecDeque<Slow>> = Mutex::new(VecDeque::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static THRESHOLD: AtomicI64 = AtomicI64::new(10_000);
static MAX_LEN: AtomicUsize = AtomicUsize::new(128);

/// Reads `slowlog-log-slower-than` and `slowlog-max-len`.
pub fn configure(cfg: &crate::config::Config) {
    THRESHOLD.store(cfg.get_i64("slowlog-log-slower-than"), Ordering::Relaxed);
    let max = cfg.get_i64("slowlog-max-len").max(0) as usize;
    MAX_LEN.store(max, Ordering::Relaxed);
    let mut log = SLOWLOG.lock().unwrap_or_else(|e| e.into_inner());
    log.truncate(max);
}

/// Whether commands flagged `fast` (constant time) may be timed in runs
/// rather than one by one: unless the threshold is 0 (log every command),
/// such a command never takes as long as the slow log's threshold.
pub fn runs_allowed() -> bool {
    THRESHOLD.load(Ordering::Relaxed) != 0
}

/// Records a command `client` ran that took `took`, if that is over the
/// threshold.
pub fn record(took: Duration, spec: &CommandSpec, argv: &[&[u8]], client: &ClientEntry) {
    crate::latency::command(took, spec);
    let threshold = THRESHOLD.load(Ordering::Relaxed);
    let micros = took.as_micros() as u64;
    if threshold < 0 || micros < threshold as u64 || spec.has(flag::SKIP_SLOWLOG) {
        return;
    }
    let max = MAX_LEN.load(Ordering::Relaxed);
    if max == 0 {
        return;
    }
    const MAX_ARGS: usize = 32;
    const MAX_STRING: usize = 128;
    let hidden = redacted(spec, argv);
    let mut args = Vec::with_capacity(argv.len().min(MAX_ARGS));
    for (i, a) in argv.iter().enumerate() {
        if i == MAX_ARGS - 1 && argv.len() > MAX_ARGS {
            args.push(Bytes::from(format!(
                "... ({} more arguments)",
                argv.len() - MAX_ARGS + 1
            )));
            break;
        }
        if hidden.contains(&i) {
            args.push(Bytes::from_static(REDACTED));
        } else if a.len() > MAX_STRING {
            let mut s = a[..MAX_STRING].to_vec();
            s.extend_from_slice(format!("... ({} more bytes)", a.len() - MAX_STRING).as_bytes());
            args.push(Bytes::from(s));
        } else {
            args.push(Bytes::copy_from_slice(a));
        }
    }
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let entry = Slow {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        at,
        micros,
        argv: args,
        addr: client.addr.clone(),
        name: client.name.lock().clone().unwrap_or_default(),
    };
    let mut log = SLOWLOG.lock().unwrap_or_else(|e| e.into_inner());
    log.push_front(entry);
    log.truncate(max);
}

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

/// SLOWLOG GET [count] | LEN | RESET | HELP.
pub fn slowlog(argv: &[&[u8]]) -> Reply {
    let sub = argv[1].to_ascii_lowercase();
    let log = || SLOWLOG.lock().unwrap_or_else(|e| e.into_inner());
    match (&sub[..], argv.len()) {
        (b"get", 2 | 3) => {
            let count = match argv.get(2) {
                None => 10,
                Some(c) => match ebb_core::args::parse_i64(c) {
                    Some(n) if n >= -1 => n,
                    _ => {
                        return Reply::Error(
                            "ERR count should be greater than or equal to -1".into(),
                        )
                    }
                },
            };
            let log = log();
            let n = if count < 0 {
                log.len()
            } else {
                (count as usize).min(log.len())
            };
            Reply::Array(
                log.iter()
                    .take(n)
                    .map(|e| {
                        Reply::Array(vec![
                            Reply::Int(e.id as i64),
                            Reply::Int(e.at as i64),
                            Reply::Int(e.micros as i64),
                            Reply::bulks(e.argv.iter().cloned()),
                            Reply::text(e.addr.as_str()),
                            Reply::Bulk(e.name.clone()),
                        ])
                    })
                    .collect(),
            )
        }
        (b"len", 2) => Reply::Int(log().len() as i64),
        (b"reset", 2) => {
            log().clear();
            Reply::Ok
        }
        (b"help", 2) => Reply::help(SLOWLOG_HELP),
        (b"get" | b"len" | b"reset" | b"help", _) => {
            ebb_core::error::subcommand_syntax(argv[1], "slowlog").into()
        }
        _ => ebb_core::error::unknown_subcommand(argv[1], "slowlog").into(),
    }
}
