//! The commands of Redis Cluster and of replication, as a standalone
//! server answers them. ebb has neither cluster support nor replicas, so
//! CLUSTER (every subcommand, HELP included), READONLY, READWRITE and
//! ASKING reply what a Redis 7.0 started without `cluster-enabled`
//! replies, and WAIT behaves as on a Redis master that no replica ever
//! acknowledges: it answers 0, at once when 0 replicas were asked for or
//! inside a transaction, otherwise once its timeout ends.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ebb_core::args::parse_i64;
use ebb_core::cmd::timeout::parse_timeout_ms;
use ebb_core::{Error, Reply};

use crate::commands::Guard;
use crate::conn::{Flow, Session};
use crate::server::Shared;

/// Redis's reply to a cluster command (after its arity and subcommand
/// checks) when cluster support is off.
pub fn disabled() -> Reply {
    Reply::Error("ERR This instance has cluster support disabled".into())
}

/// Replicas that acknowledged a client's writes: there are none.
const ACKNOWLEDGED: i64 = 0;

/// WAIT's arguments.
struct Wait {
    /// Replicas asked for.
    replicas: i64,
    /// Milliseconds to wait, 0 for ever.
    timeout_ms: u64,
}

/// Reads `WAIT numreplicas timeout` in Redis's order and with its errors:
/// the count as any integer argument, then the timeout as a blocking
/// command's timeout in milliseconds.
fn parse(argv: &[&[u8]]) -> Result<Wait, Reply> {
    let replicas = parse_i64(argv[1]).ok_or(Error::NotInteger)?;
    let timeout_ms = parse_timeout_ms(argv[2])?;
    Ok(Wait {
        replicas,
        timeout_ms,
    })
}

/// # Format
/// `WAIT numreplicas timeout` where it cannot block (queued in a
/// transaction, or called by a script allowed to) → the number of replicas
/// that acknowledged (0), at once.
pub fn wait_now(argv: &[&[u8]]) -> Reply {
    match parse(argv) {
        Ok(_) => Reply::Int(ACKNOWLEDGED),
        Err(e) => e,
    }
}

/// # Format
/// `WAIT numreplicas timeout` → 0: at once when at most 0 replicas are
/// asked for; otherwise the client is parked (a blocked client for INFO,
/// CLIENT LIST and CLIENT UNBLOCK) until the timeout in milliseconds ends
/// (0: for ever).
pub fn wait<'a>(
    s: &mut Session,
    shared: &'a Shared,
    guard: &mut Guard<'a>,
    argv: &[&[u8]],
    out: &mut BytesMut,
) -> Flow {
    let w = match parse(argv) {
        Ok(w) => w,
        Err(e) => {
            s.reply(&e, out);
            return Flow::Continue;
        }
    };
    // Redis keeps the count a waiting client asks for in a C int: one
    // that wraps to 0 or below is met at once.
    if ACKNOWLEDGED >= w.replicas || ACKNOWLEDGED >= i64::from(w.replicas as i32) {
        s.reply(&Reply::Int(ACKNOWLEDGED), out);
        return Flow::Continue;
    }
    // Parked on no key: only its timeout or CLIENT UNBLOCK ends it. The
    // waiter is named `wait` whatever the command was renamed to, so that
    // its timeout reply is WAIT's.
    let mut parked: Vec<Bytes> = ebb_core::args::to_owned(argv);
    parked[0] = Bytes::from_static(b"wait");
    let id = shared.block(s.id, s.db, parked, s.resp3, Vec::new(), s.tx.clone());
    *guard = None;
    // A timeout too far off to represent waits for ever, as in Redis,
    // whose deadline then lies beyond any clock reading.
    let deadline = (w.timeout_ms > 0)
        .then(|| Instant::now().checked_add(Duration::from_millis(w.timeout_ms)))
        .flatten();
    Flow::Block(id, deadline)
}
