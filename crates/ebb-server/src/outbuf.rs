//! `client-output-buffer-limit`.
//!
//! Pub/sub clients: messages published to a subscriber wait in its mailbox
//! until its connection writes them; a subscriber that does not read would
//! make that mailbox grow without end. As in Redis, a subscriber whose
//! backlog passes the hard limit, or stays above the soft limit for the
//! configured seconds, is disconnected (and the messages over the limit
//! are dropped).
//!
//! Ordinary clients (the `normal` class, no limit by default as in Redis):
//! the replies of a batch of pipelined requests wait in the connection's
//! reply buffer until the batch ends. A client whose replies pass the hard
//! limit, or stay above the soft limit for the configured seconds, is
//! closed at once, with none of the batch's replies sent and none of its
//! later requests run, as Redis closes such a client. The `replica` class
//! is accepted and has no effect (there are no replicas).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::server::ClientEntry;

static HARD: AtomicU64 = AtomicU64::new(32 << 20);
static SOFT: AtomicU64 = AtomicU64::new(8 << 20);
static SOFT_SECS: AtomicU64 = AtomicU64::new(60);
static NORMAL_HARD: AtomicU64 = AtomicU64::new(0);
static NORMAL_SOFT: AtomicU64 = AtomicU64::new(0);
static NORMAL_SOFT_SECS: AtomicU64 = AtomicU64::new(0);

/// Reads the `pubsub` and `normal` classes of `client-output-buffer-limit`.
pub fn configure(cfg: &crate::config::Config) {
    let v = cfg.get("client-output-buffer-limit").unwrap_or_default();
    let words: Vec<&str> = v.split_whitespace().collect();
    for w in words.chunks(4) {
        if let [class, hard, soft, secs] = w {
            let targets = if class.eq_ignore_ascii_case("pubsub") {
                [&HARD, &SOFT, &SOFT_SECS]
            } else if class.eq_ignore_ascii_case("normal") {
                [&NORMAL_HARD, &NORMAL_SOFT, &NORMAL_SOFT_SECS]
            } else {
                continue;
            };
            let mem = |s: &str| crate::config::parse_memory(s).unwrap_or(0);
            targets[0].store(mem(hard), Ordering::Relaxed);
            targets[1].store(mem(soft), Ordering::Relaxed);
            targets[2].store(secs.parse().unwrap_or(0), Ordering::Relaxed);
        }
    }
}

/// Whether an ordinary client with `pending` bytes of replies waiting is
/// over the `normal` class's limit: at or over the hard limit, or over the
/// soft limit for longer than its seconds (Redis's rule: the first time
/// replies are seen over it only starts the clock). `soft_since` is the
/// client's own record of when that was (0: not over it).
pub fn normal_over(pending: usize, soft_since: &mut u64) -> bool {
    let hard = NORMAL_HARD.load(Ordering::Relaxed);
    let soft = NORMAL_SOFT.load(Ordering::Relaxed);
    if hard == 0 && soft == 0 {
        return false;
    }
    let pending = pending as u64;
    if hard > 0 && pending >= hard {
        return true;
    }
    if soft > 0 && pending >= soft {
        let now = crate::server::now_ms();
        if *soft_since == 0 {
            *soft_since = now.max(1);
            return false;
        }
        return now.saturating_sub(*soft_since) > NORMAL_SOFT_SECS.load(Ordering::Relaxed) * 1000;
    }
    *soft_since = 0;
    false
}

/// The `normal` class's soft limit, if set: its bytes, and how long
/// replies may stay over them (Redis closes the client at the first check
/// after that many whole seconds have passed, so one more second).
pub fn normal_soft() -> Option<(usize, std::time::Duration)> {
    let soft = NORMAL_SOFT.load(Ordering::Relaxed);
    (soft > 0).then(|| {
        let secs = NORMAL_SOFT_SECS.load(Ordering::Relaxed);
        (soft as usize, std::time::Duration::from_secs(secs + 1))
    })
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
        close(c, pending);
        return false;
    }
    c.pending.fetch_add(size, Ordering::Relaxed);
    true
}

fn close(c: &ClientEntry, pending: u64) {
    c.overflowed.store(true, Ordering::Relaxed);
    tracing::warn!(
        client = c.id,
        addr = %c.addr,
        pending,
        "closing pub/sub client over client-output-buffer-limit"
    );
    c.kill.notify_one();
}

/// The client cron's check (as Redis's): a subscriber whose backlog has
/// stayed above the soft limit for the configured seconds is closed even
/// when no new message comes to find it so.
pub fn check_soft(c: &ClientEntry, now_ms: u64) {
    let since = c.soft_since.load(Ordering::Relaxed);
    if since == 0 || c.overflowed.load(Ordering::Relaxed) {
        return;
    }
    let pending = c.pending.load(Ordering::Relaxed) as u64;
    let soft = SOFT.load(Ordering::Relaxed);
    if soft == 0 || pending <= soft {
        // Drained below the limit since: the clock starts again.
        c.soft_since.store(0, Ordering::Relaxed);
        return;
    }
    if now_ms.saturating_sub(since) >= SOFT_SECS.load(Ordering::Relaxed) * 1000 {
        close(c, pending);
    }
}
