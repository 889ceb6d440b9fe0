//! MIGRATE: moves keys to another server over a plain connection, as Redis
//! 7.0 does. The keyspace stays locked from the lookup of the keys to the
//! deletion of those the target took, so the server waits for the target
//! as Redis does; the talking happens off the runtime's scheduler
//! (`block_in_place`), bounded by the request's timeout on connect, on
//! each write and on each reply read.
//!
//! Connections are kept for reuse, one per `host:port` as given, and
//! closed after 10 seconds unused (the cron's turn) or on any socket
//! error; at most 64 are kept. A connection remembers the database it
//! last selected, so SELECT is sent again only when it changes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ebb_core::cmd::migrate::{self, Migrate, Outgoing};
use ebb_core::{Ctx, Reply};
use parking_lot::Mutex;

use crate::commands::{err, Guard};
use crate::server::Shared;

/// Connections kept at most (Redis's `MIGRATE_SOCKET_CACHE_ITEMS`).
const CACHE_ITEMS: usize = 64;
/// Unused for longer than this, a kept connection is closed.
const CACHE_TTL: Duration = Duration::from_secs(10);
/// The request is written in pieces of this size, each within the timeout.
const WRITE_CHUNK: usize = 64 * 1024;
/// A reply line longer than this is cut (Redis reads into 1 kB).
const LINE_MAX: usize = 1023;
/// The longest timeout honoured (a day): larger values mean "wait".
const TIMEOUT_CAP_MS: u64 = 86_400_000;

/// A kept connection to a target.
struct Target {
    stream: TcpStream,
    /// The database it last selected successfully, if known.
    last_db: Option<i64>,
    last_use: Instant,
    /// Bytes read past the last reply line.
    pending: Vec<u8>,
}

/// Kept connections by `host:port`, as written in the request.
static CACHE: Mutex<BTreeMap<Vec<u8>, Target>> = parking_lot::const_mutex(BTreeMap::new());

/// How many connections are kept (INFO's `migrate_cached_sockets`).
pub fn cached_count() -> usize {
    CACHE.lock().len()
}

/// Closes the kept connections unused for more than 10 seconds.
pub fn close_idle() {
    let mut cache = CACHE.lock();
    if !cache.is_empty() {
        cache.retain(|_, t| t.last_use.elapsed() <= CACHE_TTL);
    }
}

/// `MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
/// [AUTH password | AUTH2 username password] [KEYS key …]` in database
/// `db` at time `now`: OK, NOKEY when no key exists, an IOERR when the
/// target cannot be reached or answers too late, or the target's error
/// (`ERR Target instance replied with error: …`). The keys the target took
/// are deleted here unless COPY, and logged as one DEL.
pub fn migrate<'a>(
    shared: &'a Arc<Shared>,
    guard: &mut Guard<'a>,
    db: usize,
    now: u64,
    argv: &[&[u8]],
) -> Reply {
    let m = match migrate::parse(argv) {
        Ok(m) => m,
        Err(e) => return e.into(),
    };
    let store = guard.get_or_insert_with(|| shared.lock_store());
    let mut fx = shared.effects();
    let items = {
        let mut ctx = Ctx::new(store, db, now, &mut fx);
        let items = migrate::outgoing(&mut ctx, &m);
        ctx.finish();
        items
    };
    let reply = if items.is_empty() {
        Reply::Simple("NOKEY".into())
    } else {
        let (acked, reply) = off_runtime(|| transfer(&m, &items));
        if !m.copy && !acked.is_empty() {
            let keys: Vec<Bytes> = acked.iter().map(|&i| items[i].key.clone()).collect();
            let mut ctx = Ctx::new(store, db, now, &mut fx);
            migrate::remove_moved(&mut ctx, &keys);
            ctx.finish();
        }
        reply
    };
    // Lazy expiries met on the way, then the DEL of the moved keys (never
    // MIGRATE itself: a replay must not talk to the target again).
    shared.log_propagated(&mut fx);
    if let Some(cmds) = fx.rewrite.take() {
        for c in cmds {
            shared.log_raw(db, &c);
        }
    }
    shared.apply_effects(store, &mut fx);
    reply
}

/// Runs blocking work without holding up the other tasks of this worker
/// thread (they move to another thread meanwhile).
fn off_runtime<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// How a socket operation failed.
#[derive(Debug, Clone, Copy)]
struct SocketError {
    timed_out: bool,
}

impl From<std::io::Error> for SocketError {
    fn from(e: std::io::Error) -> SocketError {
        use std::io::ErrorKind;
        SocketError {
            timed_out: matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        }
    }
}

/// What one exchange with the target came to.
enum Exchange {
    /// The request could not be written, or AUTH's or SELECT's reply not
    /// read: nothing is known to have happened there.
    Failed { writing: bool, e: SocketError },
    /// The RESTORE replies read: the keys acknowledged (by index), the
    /// first error the target replied (AUTH's, SELECT's or a RESTORE's),
    /// and, if a reply could not be read, at which key and how.
    Replied {
        acked: Vec<usize>,
        target_error: Option<Vec<u8>>,
        lost_at: Option<(usize, SocketError)>,
    },
}

/// Sends the keys to the target, retrying once on a fresh connection when
/// a kept one turns out closed (as Redis does: only when no reply was read
/// and the failure was not a timeout). The indexes of the keys the target
/// took, and MIGRATE's reply.
fn transfer(m: &Migrate, items: &[Outgoing]) -> (Vec<usize>, Reply) {
    let name = [m.host, b":", m.port].concat();
    let timeout = Duration::from_millis(m.timeout_ms.min(TIMEOUT_CAP_MS));
    let mut may_retry = true;
    loop {
        let failure = match target_for(&name, m.host, m.port, timeout) {
            Err(Connect::Unresolved) => {
                return (
                    Vec::new(),
                    err("IOERR error or timeout connecting to the client"),
                )
            }
            // Redis finds out that the connection failed when it writes.
            Err(Connect::Failed(e)) => (true, e),
            Ok(target) => match answer(&name, target, m, items, may_retry, timeout) {
                Ok(done) => return done,
                Err(failure) => failure,
            },
        };
        // The connection is dropped (closed) by now.
        let (writing, e) = failure;
        if !e.timed_out && may_retry {
            may_retry = false;
            continue;
        }
        let what = if writing { "writing" } else { "reading" };
        return (
            Vec::new(),
            err(format!("IOERR error or timeout {what} to target instance")),
        );
    }
}

/// One request on `target`: the keys the target took and MIGRATE's
/// reply, or, when the socket failed before anything was known to be
/// done, whether it failed writing and how (for the caller to retry or
/// to report).
fn answer(
    name: &[u8],
    mut target: Target,
    m: &Migrate,
    items: &[Outgoing],
    may_retry: bool,
    timeout: Duration,
) -> Result<(Vec<usize>, Reply), (bool, SocketError)> {
    let select = target.last_db != Some(m.db);
    match exchange(&mut target, m, select, items, timeout) {
        Exchange::Failed { writing, e } => Err((writing, e)),
        Exchange::Replied {
            acked,
            target_error,
            lost_at,
        } => match (target_error, lost_at) {
            // Nothing was read: a kept connection may have been closed by
            // the target; the caller tries a new one.
            (None, Some((0, e))) if may_retry && !e.timed_out => Err((false, e)),
            // Some keys moved before the connection failed.
            (None, Some(_)) => Ok((
                acked,
                err("IOERR error or timeout reading to target instance"),
            )),
            (None, None) => {
                target.last_db = Some(m.db);
                keep(name, target);
                Ok((acked, Reply::Ok))
            }
            (Some(text), lost_at) => {
                if lost_at.is_none() {
                    // The target's database is no longer known.
                    target.last_db = None;
                    keep(name, target);
                }
                let text = String::from_utf8_lossy(&text).into_owned();
                Ok((
                    acked,
                    err(format!("ERR Target instance replied with error: {text}")),
                ))
            }
        },
    }
}

/// Why no connection could be had.
enum Connect {
    /// The name or port does not resolve to an address (Redis's
    /// "connecting" error).
    Unresolved,
    /// The address refused or did not answer in time. Redis does not see
    /// this until it writes, so it is reported as a write failure.
    Failed(SocketError),
}

/// The kept connection to `name`, or a new one.
fn target_for(name: &[u8], host: &[u8], port: &[u8], timeout: Duration) -> Result<Target, Connect> {
    {
        let mut cache = CACHE.lock();
        if let Some(mut t) = cache.remove(name) {
            t.last_use = Instant::now();
            return Ok(t);
        }
        if cache.len() >= CACHE_ITEMS {
            // Full: the least recently used one goes.
            let oldest = cache
                .iter()
                .min_by_key(|(_, t)| t.last_use)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                cache.remove(&k);
            }
        }
    }
    let stream = connect(host, port, timeout)?;
    let _ = stream.set_nodelay(true);
    Ok(Target {
        stream,
        last_db: None,
        last_use: Instant::now(),
        pending: Vec::new(),
    })
}

/// Keeps a connection for the next MIGRATE to the same target.
fn keep(name: &[u8], mut t: Target) {
    t.last_use = Instant::now();
    let mut cache = CACHE.lock();
    if cache.len() < CACHE_ITEMS || cache.contains_key(name) {
        cache.insert(name.to_vec(), t);
    }
}

/// The port as Redis reads it: C's `atoi` (blanks, a sign, the digits up
/// to the first other character; out of range saturates, then keeps the
/// low 32 bits), then the resolver's 16 bits. A negative number does not
/// resolve.
fn port_number(port: &[u8]) -> Option<u16> {
    let s = port.trim_ascii_start();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for &c in digits.iter().take_while(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    let n = if neg { n.saturating_neg() } else { n } as i32;
    u32::try_from(n).ok().map(|p| (p & 0xffff) as u16)
}

/// A connection to `host:port` within `timeout` (each address the name
/// resolves to is tried in turn while time is left).
fn connect(host: &[u8], port: &[u8], timeout: Duration) -> Result<TcpStream, Connect> {
    let host = std::str::from_utf8(host).map_err(|_| Connect::Unresolved)?;
    let port = port_number(port).ok_or(Connect::Unresolved)?;
    let addrs: Vec<_> = match (host, port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(_) => return Err(Connect::Unresolved),
    };
    if addrs.is_empty() {
        return Err(Connect::Unresolved);
    }
    let deadline = Instant::now() + timeout;
    let mut failure = SocketError { timed_out: false };
    for addr in addrs {
        let wait = left(deadline).map_err(Connect::Failed)?;
        match TcpStream::connect_timeout(&addr, wait) {
            Ok(s) => return Ok(s),
            Err(e) => failure = e.into(),
        }
    }
    Err(Connect::Failed(failure))
}

/// Writes the request (AUTH, SELECT, the RESTOREs) and reads the replies.
fn exchange(
    t: &mut Target,
    m: &Migrate,
    select: bool,
    items: &[Outgoing],
    timeout: Duration,
) -> Exchange {
    let mut wire = Vec::new();
    for cmd in migrate::target_commands(m, select, items) {
        encode(&cmd, &mut wire);
    }
    for chunk in wire.chunks(WRITE_CHUNK) {
        if let Err(e) = write_within(&mut t.stream, chunk, Instant::now() + timeout) {
            return Exchange::Failed { writing: true, e };
        }
    }
    drop(wire);
    let auth_reply = match m.auth.is_some() {
        true => match read_line(t, timeout) {
            Ok(l) => Some(l),
            Err(e) => return Exchange::Failed { writing: false, e },
        },
        false => None,
    };
    let select_reply = match select {
        true => match read_line(t, timeout) {
            Ok(l) => Some(l),
            Err(e) => return Exchange::Failed { writing: false, e },
        },
        false => None,
    };
    let is_error = |l: &Option<Vec<u8>>| l.as_ref().is_some_and(|l| l.first() == Some(&b'-'));
    let mut acked = Vec::new();
    let mut target_error = None;
    for j in 0..items.len() {
        let line = match read_line(t, timeout) {
            Ok(l) => l,
            Err(e) => {
                return Exchange::Replied {
                    acked,
                    target_error,
                    lost_at: Some((j, e)),
                }
            }
        };
        // An AUTH or SELECT that failed fails every key, as in Redis.
        let failed = if is_error(&auth_reply) {
            auth_reply.as_deref()
        } else if is_error(&select_reply) {
            select_reply.as_deref()
        } else if line.first() == Some(&b'-') {
            Some(&line[..])
        } else {
            None
        };
        match failed {
            Some(text) => {
                if target_error.is_none() {
                    target_error = Some(text[1..].to_vec());
                }
            }
            None => acked.push(j),
        }
    }
    Exchange::Replied {
        acked,
        target_error,
        lost_at: None,
    }
}

/// A command as RESP: an array of bulk strings.
fn encode(cmd: &[Bytes], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", cmd.len()).as_bytes());
    for a in cmd {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// The time left until `deadline`, or a timeout error.
fn left(deadline: Instant) -> Result<Duration, SocketError> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(SocketError { timed_out: true }),
    }
}

/// Writes all of `data` by `deadline`.
fn write_within(s: &mut TcpStream, mut data: &[u8], deadline: Instant) -> Result<(), SocketError> {
    while !data.is_empty() {
        s.set_write_timeout(Some(left(deadline)?))?;
        match s.write(data) {
            Ok(0) => return Err(SocketError { timed_out: false }),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// One reply line (without its line end), read within `timeout`; cut to
/// [`LINE_MAX`] bytes. An empty line counts as a failure, as in Redis.
fn read_line(t: &mut Target, timeout: Duration) -> Result<Vec<u8>, SocketError> {
    let deadline = Instant::now() + timeout;
    let mut line = Vec::new();
    loop {
        if let Some(at) = t.pending.iter().position(|&c| c == b'\n') {
            let rest = t.pending.split_off(at + 1);
            let mut got = std::mem::replace(&mut t.pending, rest);
            got.truncate(at);
            line.extend_from_slice(&got[..got.len().min(LINE_MAX.saturating_sub(line.len()))]);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                return Err(SocketError { timed_out: false });
            }
            return Ok(line);
        }
        // No line end yet: keep what fits, read more.
        let room = LINE_MAX.saturating_sub(line.len());
        line.extend_from_slice(&t.pending[..t.pending.len().min(room)]);
        t.pending.clear();
        t.stream.set_read_timeout(Some(left(deadline)?))?;
        let mut buf = [0u8; 4096];
        match t.stream.read(&mut buf) {
            Ok(0) => return Err(SocketError { timed_out: false }),
            Ok(n) => t.pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_read_as_atoi_reads_them() {
        assert_eq!(port_number(b"6379"), Some(6379));
        assert_eq!(port_number(b" 6379abc"), Some(6379));
        assert_eq!(port_number(b"+80"), Some(80));
        assert_eq!(port_number(b"abc"), Some(0));
        assert_eq!(port_number(b"-1"), None);
        assert_eq!(port_number(b"70000"), Some(4464));
        assert_eq!(port_number(b"99999999999999999999999"), None);
    }

    #[test]
    fn commands_are_encoded_as_bulk_arrays() {
        let mut out = Vec::new();
        encode(&[Bytes::from("SELECT"), Bytes::from("9")], &mut out);
        assert_eq!(out, b"*2\r\n$6\r\nSELECT\r\n$1\r\n9\r\n");
    }
}
