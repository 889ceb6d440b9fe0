//! `client-output-buffer-limit` for pub/sub clients: messages published to
//! a subscriber wait in its mailbox until its connection writes them; a
//! subscriber that does not read would make that mailbox grow without end.
//! As in Redis, a subscriber whose backlog passes the hard limit, or stays
//! above the soft limit for the configured seconds, is disconnected (and
//! the messages over the limit are dropped).
//! The `normal` and `replica` classes need nothing: replies to ordinary
//! clients are written before their next requests are read.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::server::ClientEntry;

static HARD: AtomicU64 = AtomicU64::new(32 << 20);
static SOFT: AtomicU64 = AtomicU64::new(8 << 20);
static SOFT_SECS: AtomicU64 = AtomicU64::new(60);

/// Reads the `pubsub` class of `client-output-buffer-limit`.
pub fn configure(cfg: &crate::config::Config) {
    let v = cfg.get("client-output-buffer-limit").unwrap_or_default();
    let words: Vec<&str> = v.split_whitespace().collect();
    for w in words.chunks(4) {
        if let [class, hard, soft, secs] = w {
            if class.eq_ignore_ascii_case("pubsub") {
                let mem = |s: &str| crate::config::parse_memory(s).unwrap_or(0);
                HARD.store(mem(hard), Ordering::Relaxed);
                SOFT.store(mem(soft), Ordering::Relaxed);
                SOFT_SECS.store(secs.parse().unwrap_or(0), Ordering::Relaxed);
            }
        }
    }
}

/// The bytes a message of these parts takes in a mailbox (approximately
/// what it takes on the wire).
pub fn size(items: &[bytes::Bytes]) -> usize {
    items.iter().map(|i| i.len() + 16).sum::<usize>() + 8
}

/// Whether `size` more bytes may be queued for `c`; if not, the client is
/// told to close and nothing more is queued for it.
pub fn admit(c: &ClientEntry, size: usize) -> bool {
    if c.overflowed.load(Ordering::Relaxed) {
        return false;
    }
    let pending = c.pending.load(Ordering::Relaxed) as u64 + size as u64;
    let hard = HARD.load(Ordering::Relaxed);
    let soft = SOFT.load(Ordering::Relaxed);
    let mut over = hard > 0 && pending > hard;
    if !over && soft > 0 && pending > soft {
        let since = c.soft_since.load(Ordering::Relaxed);
        let now_ms = crate::server::now_ms();
        if since == 0 {
            c.soft_since.store(now_ms.max(1), Ordering::Relaxed);
        } else if now_ms.saturating_sub(since) >= SOFT_SECS.load(Ordering::Relaxed) * 1000 {
            over = true;
        }
    } else if !over {
        c.soft_since.store(0, Ordering::Relaxed);
    }
    if over {
        c.overflowed.store(true, Ordering::Relaxed);
        tracing::warn!(
            client = c.id,
            addr = %c.addr,
            pending,
            "closing pub/sub client over client-output-buffer-limit"
        );
        c.kill.notify_one();
        return false;
    }
    c.pending.fetch_add(size, Ordering::Relaxed);
    true
}
