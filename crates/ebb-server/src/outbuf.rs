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

/// Whether a command's reply is certain to reach the `normal` class's hard
/// limit before it is built: SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a
/// negative count, which Redis answers pick by pick until the limit closes
/// the client. ebb builds a reply whole, so such a request closes the
/// client without building it (every pick is at least an empty bulk
/// string, 6 bytes; twice that with WITHVALUES/WITHSCORES in RESP2).
pub fn surely_over_hard(name: &str, argv: &[&[u8]]) -> bool {
    let hard = NORMAL_HARD.load(Ordering::Relaxed);
    if hard == 0 || argv.len() < 3 {
        return false;
    }
    if !matches!(name, "srandmember" | "hrandfield" | "zrandmember") {
        return false;
    }
    let Some(n) = ebb_core::args::parse_i64(argv[2]).filter(|&n| n < 0) else {
        return false;
    };
    let per = if argv.len() == 4 { 12 } else { 6 };
    n.unsigned_abs().saturating_mul(per) >= hard
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

/// Whether `size` more bytes may be queued for subscriber `c`, whose
/// output waiting (mailbox and unwritten replies) counts against the
/// `pubsub` class's limits; if not, the client is told to close and
/// nothing more is queued for it.
pub fn admit(c: &ClientEntry, size: usize) -> bool {
    if c.overflowed.load(Ordering::Relaxed) {
        return false;
    }
    let pending = c.output_waiting() as u64 + size as u64;
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
    let pending = c.output_waiting() as u64;
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

/// `client-output-buffer-limit` as Redis takes it: `<class> <hard> <soft>
/// <soft seconds>` groups changing those classes of `current`, every group
/// checked before any applies; the result names all three classes, in
/// Redis's order and form (`slave`, sizes in bytes).
pub fn merge_limits(current: &str, value: &str) -> Result<String, String> {
    const CLASSES: [&str; 3] = ["normal", "slave", "pubsub"];
    let mut limits: [[u64; 3]; 3] = [
        [0, 0, 0],
        [268435456, 67108864, 60],
        [33554432, 8388608, 60],
    ];
    let class_of = |name: &str| match name.to_ascii_lowercase().as_str() {
        "normal" => Some(0),
        "slave" | "replica" => Some(1),
        "pubsub" => Some(2),
        _ => None,
    };
    let read = |words: &[&str]| -> Result<(usize, [u64; 3]), String> {
        let class = class_of(words[0])
            .ok_or("Invalid client class specified in buffer limit configuration.")?;
        let bad = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        let hard = crate::config::parse_memory(words[1]).ok_or(bad)?;
        let soft = crate::config::parse_memory(words[2]).ok_or(bad)?;
        let secs: u64 = words[3].parse().map_err(|_| bad)?;
        Ok((class, [hard, soft, secs]))
    };
    let cur: Vec<&str> = current.split_whitespace().collect();
    for group in cur.chunks_exact(4) {
        if let Ok((class, l)) = read(group) {
            limits[class] = l;
        }
    }
    let words: Vec<&str> = value.split_whitespace().collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let groups = words
        .chunks_exact(4)
        .map(read)
        .collect::<Result<Vec<_>, _>>()?;
    for (class, l) in groups {
        limits[class] = l;
    }
    Ok(CLASSES
        .iter()
        .zip(limits)
        .map(|(c, [h, s, t])| format!("{c} {h} {s} {t}"))
        .collect::<Vec<_>>()
        .join(" "))
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn buffer_limits_change_only_the_classes_given() {
        let mut c = Config::default();
        let name = "client-output-buffer-limit";
        c.set(
            name,
            "normal 1mb 2mb 60 replica 3mb 4mb 70 pubsub 5mb 6mb 80",
        )
        .expect("valid");
        assert_eq!(
            c.get(name).as_deref(),
            Some("normal 1048576 2097152 60 slave 3145728 4194304 70 pubsub 5242880 6291456 80")
        );
        c.set(name, "PUBSUB 100000 0 0").expect("valid");
        assert_eq!(
            c.get(name).as_deref(),
            Some("normal 1048576 2097152 60 slave 3145728 4194304 70 pubsub 100000 0 0")
        );
        for (value, error) in [
            ("wrong number", "Wrong number of arguments"),
            ("invalid_class 10mb 10mb 60", "Invalid client class"),
            ("master 10mb 10mb 60", "Invalid client class"),
            (
                "normal 10mbs 10mb 60",
                "Error in hard, soft or soft_seconds",
            ),
            (
                "replica 10mb 10mbs 60",
                "Error in hard, soft or soft_seconds",
            ),
            (
                "pubsub 10mb 10mb 60s",
                "Error in hard, soft or soft_seconds",
            ),
            // A bad group refuses the whole value: the good one is not applied.
            (
                "normal 1 1 1 pubsub x 1 1",
                "Error in hard, soft or soft_seconds",
            ),
        ] {
            let e = c.set(name, value).expect_err(value);
            assert!(e.starts_with(error), "{value}: {e}");
        }
        assert!(c
            .get(name)
            .is_some_and(|v| v.starts_with("normal 1048576 ")));
    }
}
