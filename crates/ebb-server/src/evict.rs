//! `maxmemory`: before a command that may grow memory (flag `denyoom`) runs
//! while `used_memory` is above the limit, keys are evicted following
//! `maxmemory-policy` until it is below, or the command is refused with
//! Redis's OOM error.
//!
//! Policies: `noeviction`; `allkeys-random` and `volatile-random`;
//! `allkeys-lru` and `volatile-lru` (sampling `maxmemory-samples` keys and
//! evicting the one idle longest, by the access time OBJECT IDLETIME
//! reports); `allkeys-lfu` and `volatile-lfu` (the same sampling, evicting
//! the key with the lowest access counter, Redis's logarithmic one with
//! `lfu-log-factor` and `lfu-decay-time`); `volatile-ttl` (the key whose
//! TTL ends first, exactly). Every eviction is logged to the AOF as `DEL` and published
//! as an `evicted` keyspace event, like Redis. Memory in use is INFO's
//! `used_memory` less the free slots of the key tables (see [`counted`]).

use bytes::Bytes;
use rand::Rng;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use ebb_core::{Error, Store};

use crate::config::Config;
use crate::server::Shared;

static MAXMEMORY: AtomicU64 = AtomicU64::new(0);
static POLICY: AtomicU8 = AtomicU8::new(0);
static SAMPLES: AtomicU64 = AtomicU64::new(5);
/// Keys evicted since start (INFO `evicted_keys`).
pub static EVICTED: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    NoEviction,
    AllKeysRandom,
    VolatileRandom,
    AllKeysLru,
    VolatileLru,
    VolatileTtl,
}

impl Policy {
    fn from_u8(v: u8) -> Policy {
        match v {
            1 => Policy::AllKeysRandom,
            2 => Policy::VolatileRandom,
            3 => Policy::AllKeysLru,
            4 => Policy::VolatileLru,
            5 => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    fn parse(s: &str) -> Policy {
        match s.to_ascii_lowercase().as_str() {
            "allkeys-random" => Policy::AllKeysRandom,
            "volatile-random" => Policy::VolatileRandom,
            "allkeys-lru" | "allkeys-lfu" => Policy::AllKeysLru,
            "volatile-lru" | "volatile-lfu" => Policy::VolatileLru,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    fn volatile(self) -> bool {
        matches!(
            self,
            Policy::VolatileRandom | Policy::VolatileLru | Policy::VolatileTtl
        )
    }
}

/// Reads `maxmemory`, `maxmemory-policy` and `maxmemory-samples` (at start
/// and after CONFIG SET).
pub fn configure(cfg: &Config) {
    let max = cfg.get_i64("maxmemory").max(0) as u64;
    MAXMEMORY.store(max, Ordering::Relaxed);
    if max == 0 {
        ebb_core::set_growth_room(u64::MAX);
    }
    let p = Policy::parse(&cfg.get("maxmemory-policy").unwrap_or_default());
    POLICY.store(p as u8, Ordering::Relaxed);
    SAMPLES.store(
        cfg.get_i64("maxmemory-samples").clamp(1, 64) as u64,
        Ordering::Relaxed,
    );
}

/// Whether a memory limit is set.
pub fn limited() -> bool {
    MAXMEMORY.load(Ordering::Relaxed) != 0
}

/// Memory in use as eviction counts it. Free slots of the key tables are
/// not counted: new keys reuse them without allocating, and counting them
/// would make one table growth evict far more keys than it takes to pay
/// for it.
fn counted(store: &Store) -> u64 {
    (crate::alloc::allocated() as u64).saturating_sub(not_counted(store))
}

/// Memory eviction does not count: the key tables' free slots (INFO's
/// `mem_not_counted_for_evict`).
pub fn not_counted(store: &Store) -> u64 {
    store.dbs.iter().map(|d| d.spare_bytes() as u64).sum()
}

/// The error Redis gives a command refused for lack of memory.
pub fn oom() -> Error {
    Error::msg("OOM command not allowed when used memory > 'maxmemory'.")
}

/// Makes room for a `denyoom` command: Ok if it may run. Cheap when no
/// limit is set (one atomic load).
pub fn make_room(shared: &Shared, store: &mut Store) -> Result<(), Error> {
    let max = MAXMEMORY.load(Ordering::Relaxed);
    if max == 0 {
        return Ok(());
    }
    // Key tables grow only into the room under the limit, counted with
    // their free slots: eviction does not count those, so their room
    // must not take the dataset past the limit (see `ebb_core::set_growth_room`).
    let allocated = crate::alloc::allocated() as u64;
    ebb_core::set_growth_room(max.saturating_sub(allocated));
    if allocated.saturating_sub(not_counted(store)) <= max {
        return Ok(());
    }
    if store.expiry_paused(crate::server::now_ms()) {
        // CLIENT PAUSE keeps the dataset static: no eviction (as Redis).
        return Ok(());
    }
    let policy = Policy::from_u8(POLICY.load(Ordering::Relaxed));
    if policy == Policy::NoEviction {
        return Err(oom());
    }
    let samples = SAMPLES.load(Ordering::Relaxed) as usize;
    let mut fx = shared.effects();
    let now = crate::server::now_ms();
    // Bounded work per command, like Redis's eviction tenacity: when the
    // budget runs out with memory still above the limit, the command runs
    // anyway and the next write goes on evicting. Only a server with
    // nothing left to evict refuses writes.
    //
    // The victims' names stay allocated until the pass is over (for their
    // events, log lines and invalidation messages): like Redis, which
    // counts only what each deletion frees, they are not counted against
    // the limit, or a dataset of long names and short values would be
    // drained to pay for its own evictions.
    let mut held = 0u64;
    let mut evicted = 0;
    while evicted < 2_000 && counted(store).saturating_sub(held) > max {
        let Some((db, key)) = victim(store, policy, samples, now) else {
            break;
        };
        held += key.len() as u64;
        // Freed here (not on the background dropper) so the count drops now.
        drop(store.dbs[db].remove(&key));
        evicted += 1;
        fx.propagate
            .push((db, vec![Bytes::from_static(b"DEL"), key.clone()]));
        fx.touch(db, key.clone());
        fx.event(b'e', "evicted", db, key);
    }
    if evicted > 0 {
        // The evicted keys' slots go back too: memory in use comes down to
        // the limit, not to the limit plus their room.
        for db in store.dbs.iter_mut() {
            db.trim_spare();
        }
    }
    EVICTED.fetch_add(evicted, Ordering::Relaxed);
    shared.log_propagated(&mut fx);
    shared.apply_effects(store, &mut fx);
    if evicted == 0 {
        Err(oom())
    } else {
        Ok(())
    }
}

/// Picks the key to evict, over all databases.
fn victim(store: &Store, policy: Policy, samples: usize, now: u64) -> Option<(usize, Bytes)> {
    if policy == Policy::VolatileTtl {
        return soonest_ttl(store);
    }
    let dbs: Vec<usize> = (0..store.dbs.len())
        .filter(|&i| {
            let d = &store.dbs[i];
            if policy.volatile() {
                d.stats().expires > 0
            } else {
                !d.is_empty()
            }
        })
        .collect();
    if dbs.is_empty() {
        return None;
    }
    let mut rng = rand::thread_rng();
    let want = if matches!(policy, Policy::AllKeysLru | Policy::VolatileLru) {
        samples
    } else {
        1
    };
    // (idle time, database, key) of the best candidate so far.
    let mut best: Option<(u64, usize, &[u8])> = None;
    let mut found = 0;
    for _ in 0..want * 16 {
        if found >= want {
            break;
        }
        let db = dbs[rng.gen_range(0..dbs.len())];
        let Some((k, e)) = store.dbs[db].random_entry() else {
            continue;
        };
        if policy.volatile() && e.expire_at().is_none() {
            continue;
        }
        found += 1;
        // Under an -lfu policy the least used key goes, as in Redis.
        let idle = if store.cfg.lfu.on {
            255 - store.cfg.lfu.counter(e.last_access, now) as u64
        } else {
            now.saturating_sub(e.last_access)
        };
        if best.is_none_or(|b| idle > b.0) {
            best = Some((idle, db, k));
        }
    }
    match best {
        Some((_, db, k)) => Some((db, Bytes::copy_from_slice(k))),
        // Few keys carry a TTL: take the one ending first.
        None if policy.volatile() => soonest_ttl(store),
        None => None,
    }
}

/// The key whose TTL ends first, over all databases.
fn soonest_ttl(store: &Store) -> Option<(usize, Bytes)> {
    store
        .dbs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.next_key_deadline().map(|(t, k)| (t, i, k)))
        .min_by_key(|(t, _, _)| *t)
        .map(|(_, i, k)| (i, k))
}
