//! Client eviction (`maxmemory-clients`), as Redis 7.0 has it.
//!
//! Every connection publishes what it holds (read and reply buffers,
//! queued transaction, watched keys, subscriptions, tracking prefixes:
//! see `conn::memory`) in its registry entry, and the change in a
//! server-wide sum; messages waiting in its mailbox count from the moment
//! they are queued until the connection takes them. When the sum reaches
//! the limit, clients are closed, the largest first, until it is below
//! again; clients with CLIENT NO-EVICT on are never chosen (their memory
//! still counts). The check is a load and a compare, made by each
//! connection after it has read and run a batch and published its
//! figures, and by CONFIG SET when the limit (or `maxmemory`) changes.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::server::{ClientEntry, Msg, Shared};

/// The limit in bytes (0: no client eviction).
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Clients evicted so far (INFO `evicted_clients`).
pub static EVICTED: AtomicU64 = AtomicU64::new(0);

/// What the connected clients hold, in bytes: the sum of their published
/// figures and of their mailboxes (INFO `mem_clients_normal`).
static TOTAL: AtomicUsize = AtomicUsize::new(0);

/// An eviction is being made (see [`evict`]).
static EVICTING: AtomicBool = AtomicBool::new(false);

/// Adds `n` bytes to the clients' memory.
#[inline]
pub fn grow(n: usize) {
    TOTAL.fetch_add(n, Ordering::Relaxed);
}

/// Takes `n` bytes off the clients' memory.
#[inline]
pub fn shrink(n: usize) {
    TOTAL.fetch_sub(n, Ordering::Relaxed);
}

/// What the connected clients hold, in bytes.
pub fn total() -> usize {
    TOTAL.load(Ordering::Relaxed)
}

/// Redis's floor under the limit, so that a tiny setting cannot cut every
/// connection off.
const FLOOR: u64 = 128 * 1024;

/// When the last "over the limit with nothing left to evict" warning was
/// logged (Unix seconds): at most one a second, where Redis logs one per
/// check.
static WARNED_AT: AtomicU64 = AtomicU64::new(0);

/// Reads `maxmemory-clients`: bytes, or a percentage of `maxmemory` (no
/// limit while `maxmemory` is 0), never less than 128 kB once set.
pub fn configure(cfg: &crate::config::Config) {
    LIMIT.store(effective_limit(cfg), Ordering::Relaxed);
}

/// The limit `cfg` sets, in bytes (0: none).
fn effective_limit(cfg: &crate::config::Config) -> usize {
    let v = cfg.get("maxmemory-clients").unwrap_or_default();
    let v = v.trim();
    let bytes = match v.strip_suffix('%') {
        Some(pct) => {
            let pct: u64 = pct.trim().parse().unwrap_or(0);
            let maxmemory = cfg.get_i64("maxmemory").max(0) as u64;
            maxmemory.saturating_mul(pct) / 100
        }
        None => crate::config::parse_memory(v).unwrap_or(0),
    };
    let limit = if bytes == 0 { 0 } else { bytes.max(FLOOR) };
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The limit in force (0: none).
pub fn limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// The check each connection makes after publishing its figures: evicts
/// clients if the sum is at or over the limit. Returns false when `me`
/// itself was evicted (now or by another connection), and must close.
#[inline]
pub fn check(shared: &Shared, me: &ClientEntry) -> bool {
    if me.evicted.load(Ordering::Relaxed) {
        return false;
    }
    let limit = limit();
    if limit == 0 || total() < limit {
        return true;
    }
    evict(shared);
    !me.evicted.load(Ordering::Relaxed)
}

/// Closes clients, the largest first, until the clients' memory is under
/// the limit (or no client may be evicted). Returns how many were.
pub fn evict(shared: &Shared) -> usize {
    let limit = limit();
    if limit == 0 {
        return 0;
    }
    if total() < limit {
        return 0;
    }
    // One eviction at a time: a second connection finding the sum over
    // meanwhile would pick victims from figures about to change.
    struct Turn;
    impl Drop for Turn {
        fn drop(&mut self) {
            EVICTING.store(false, Ordering::Release);
        }
    }
    if EVICTING.swap(true, Ordering::Acquire) {
        return 0;
    }
    let _turn = Turn;
    let mut total = total();
    let mut candidates: Vec<(usize, Arc<ClientEntry>)> = shared
        .clients
        .lock()
        .values()
        .filter(|c| !c.no_evict.load(Ordering::Relaxed) && !c.evicted.load(Ordering::Relaxed))
        .map(|c| (c.memory(), c.clone()))
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    let mut evicted = 0;
    for (mem, c) in candidates {
        if total < limit {
            break;
        }
        tracing::info!("Evicting client: {}", crate::client::describe(&c, None));
        close(shared, &c);
        EVICTED.fetch_add(1, Ordering::Relaxed);
        evicted += 1;
        total = total.saturating_sub(mem);
    }
    if total >= limit {
        let now = crate::server::now_ms() / 1000;
        if WARNED_AT.swap(now, Ordering::Relaxed) != now {
            tracing::warn!("Over client maxmemory after evicting all evictable clients");
        }
    }
    evicted
}

/// Takes an evicted client out at once (out of CLIENT LIST and of the
/// sum; its connection closes on its own task), as Redis frees it.
fn close(shared: &Shared, c: &ClientEntry) {
    c.evicted.store(true, Ordering::Relaxed);
    shared.clients.lock().remove(&c.id);
    shrink(c.own_memory.swap(0, Ordering::Relaxed));
    c.close_mailbox();
    let _ = c.tx.send(Msg::Kill);
    c.kill.notify_one();
}

/// DEBUG CLIENT-EVICTION: the evictable clients grouped by memory, in
/// the power-of-two ranges Redis groups them by (up to 32 kB, then each
/// range twice the last, the last one open), with each group's total;
/// None while there is no limit.
pub fn buckets(shared: &Shared) -> Option<String> {
    const LOW: u32 = 15;
    const HIGH: u32 = 33;
    if limit() == 0 {
        return None;
    }
    let mut groups = [(0usize, 0usize); (HIGH - LOW + 1) as usize];
    for c in shared.clients.lock().values() {
        if c.no_evict.load(Ordering::Relaxed) || c.evicted.load(Ordering::Relaxed) {
            continue;
        }
        let mem = c.memory();
        let bits = usize::BITS - mem.leading_zeros();
        let i = (bits.clamp(LOW, HIGH) - LOW) as usize;
        groups[i].0 += mem;
        groups[i].1 += 1;
    }
    let mut text = String::new();
    for (i, (mem, n)) in groups.iter().enumerate() {
        let low = if i == 0 {
            0
        } else {
            1u64 << (i as u32 + LOW - 1)
        };
        let range = if i + 1 == groups.len() {
            format!("{low:>10}+            ")
        } else {
            format!("{low:>10} - {:>10}", (1u64 << (i as u32 + LOW)) - 1)
        };
        text.push_str(&format!(
            "bucket {range}: tot-mem: {mem:>10}, clients: {n}\n"
        ));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_limit_is_bytes_or_a_share_of_maxmemory_with_a_floor() {
        let mut c = Config::default();
        assert_eq!(effective_limit(&c), 0);
        c.set("maxmemory-clients", "3000000").expect("valid");
        assert_eq!(effective_limit(&c), 3_000_000);
        c.set("maxmemory-clients", "1").expect("valid");
        assert_eq!(effective_limit(&c), 128 * 1024);
        c.set("maxmemory-clients", "7%").expect("valid");
        assert_eq!(
            effective_limit(&c),
            0,
            "a share of no maxmemory is no limit"
        );
        c.set("maxmemory", "6mb").expect("valid");
        assert_eq!(effective_limit(&c), 6 * 1024 * 1024 * 7 / 100);
        c.set("maxmemory-clients", "0").expect("valid");
        assert_eq!(effective_limit(&c), 0);
    }
}
