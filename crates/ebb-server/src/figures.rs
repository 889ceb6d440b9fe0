//! Figures INFO reports that no other part of the server keeps: the
//! persistence history (saves, rewrites, forks), the expiry cycle's cost,
//! read and write calls, the rates sampled every 100 ms
//! (`instantaneous_ops_per_sec` and its kin), and facts about the host.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::server::{now_ms, Shared};

/// Saves started: SAVE, BGSAVE and the automatic ones (`rdb_saves`).
pub static RDB_SAVES: AtomicU64 = AtomicU64::new(0);
/// When the running background save started (Unix s; 0: none).
pub static RDB_STARTED: AtomicU64 = AtomicU64::new(0);
/// How long the last background save took, in seconds (-1: none yet).
pub static RDB_LAST_SECS: AtomicI64 = AtomicI64::new(-1);
/// Background AOF rewrites started (`aof_rewrites`).
pub static AOF_REWRITES: AtomicU64 = AtomicU64::new(0);
/// When the running rewrite started (Unix s; 0: none).
pub static AOF_STARTED: AtomicU64 = AtomicU64::new(0);
/// How long the last rewrite took, in seconds (-1: none yet).
pub static AOF_LAST_SECS: AtomicI64 = AtomicI64::new(-1);
/// Whether the last rewrite succeeded (`aof_last_bgrewrite_status`).
pub static AOF_REWRITE_OK: AtomicBool = AtomicBool::new(true);
/// Rewrites that failed since the last that succeeded.
pub static AOF_REWRITE_FAILURES: AtomicU64 = AtomicU64::new(0);
/// How long the last fork took, in microseconds (`latest_fork_usec`).
pub static LATEST_FORK_USEC: AtomicU64 = AtomicU64::new(0);
/// Keys loaded, and keys dropped as expired, by the last load at start.
pub static LOAD_KEYS_LOADED: AtomicU64 = AtomicU64::new(0);
pub static LOAD_KEYS_EXPIRED: AtomicU64 = AtomicU64::new(0);
/// Read calls on client connections (`total_reads_processed`).
pub static READS: AtomicU64 = AtomicU64::new(0);
/// Reply writes to client connections (`total_writes_processed`).
pub static WRITES: AtomicU64 = AtomicU64::new(0);
/// Time spent in active-expiry slices, in microseconds.
pub static EXPIRE_CYCLE_US: AtomicU64 = AtomicU64::new(0);
/// Expiry slices that stopped at their bound with more work due.
pub static EXPIRE_CAPPED: AtomicU64 = AtomicU64::new(0);

/// The counters CONFIG RESETSTAT zeroes, as Redis's resetServerStats.
pub fn reset() {
    for c in [
        &RDB_SAVES,
        &AOF_REWRITES,
        &LATEST_FORK_USEC,
        &READS,
        &WRITES,
        &EXPIRE_CYCLE_US,
        &EXPIRE_CAPPED,
    ] {
        c.store(0, Ordering::Relaxed);
    }
    AOF_REWRITE_FAILURES.store(0, Ordering::Relaxed);
    *RATES.lock() = Rates::default();
}

/// Unix time in whole seconds.
pub fn unix_secs() -> u64 {
    now_ms() / 1000
}

/// Marks the start of a background job (`RDB_STARTED`, `AOF_STARTED`).
pub fn started(at: &AtomicU64) {
    at.store(unix_secs().max(1), Ordering::Relaxed);
}

/// Marks the end of a background job: its duration goes to `last`.
pub fn finished(at: &AtomicU64, last: &AtomicI64) {
    let start = at.swap(0, Ordering::Relaxed);
    if start > 0 {
        last.store(unix_secs().saturating_sub(start) as i64, Ordering::Relaxed);
    }
}

/// Seconds the background job has run (-1 when none runs), as Redis's
/// `*_current_*_time_sec`.
pub fn running_secs(at: &AtomicU64) -> i64 {
    match at.load(Ordering::Relaxed) {
        0 => -1,
        s => unix_secs().saturating_sub(s) as i64,
    }
}

/// A rewrite ended: its status and the run of failures.
pub fn rewrite_result(ok: bool) {
    AOF_REWRITE_OK.store(ok, Ordering::Relaxed);
    if ok {
        AOF_REWRITE_FAILURES.store(0, Ordering::Relaxed);
    } else {
        AOF_REWRITE_FAILURES.fetch_add(1, Ordering::Relaxed);
    }
}

/// Samples kept per rate, one per 100 ms (Redis keeps 16).
const SAMPLES: usize = 16;

/// The sampled rates: commands, and bytes in and out, per second.
#[derive(Default)]
struct Rates {
    last: Option<(Instant, [u64; 3])>,
    samples: [[u64; SAMPLES]; 3],
    next: usize,
}

static RATES: Mutex<Rates> = parking_lot::const_mutex(Rates {
    last: None,
    samples: [[0; SAMPLES]; 3],
    next: 0,
});

/// Takes one sample of each rate.
fn sample(shared: &Shared) {
    let now = Instant::now();
    let st = &shared.stats;
    let totals = [
        st.commands.load(Ordering::Relaxed),
        st.net_in.load(Ordering::Relaxed),
        st.net_out.load(Ordering::Relaxed),
    ];
    let mut r = RATES.lock();
    if let Some((then, before)) = r.last {
        let ms = now.duration_since(then).as_millis().max(1) as u64;
        let slot = r.next;
        for (i, (t, b)) in totals.iter().zip(before).enumerate() {
            r.samples[i][slot] = t.saturating_sub(b).saturating_mul(1000) / ms;
        }
        r.next = (slot + 1) % SAMPLES;
    }
    r.last = Some((now, totals));
}

/// The rates as INFO reports them: commands per second, and kilobytes
/// per second in and out, each the mean of the last 16 samples.
pub fn rates() -> (u64, f64, f64) {
    let r = RATES.lock();
    let mean = |i: usize| r.samples[i].iter().sum::<u64>() / SAMPLES as u64;
    (mean(0), mean(1) as f64 / 1024.0, mean(2) as f64 / 1024.0)
}

/// Samples the rates every 100 ms, forever.
pub async fn run(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        sample(&shared);
    }
}

/// `uname`'s system name, release and machine, as Redis prints its `os`.
pub fn os() -> String {
    // SAFETY: uname only writes into the zeroed struct we pass.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return std::env::consts::OS.to_string();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.machine)
    )
}

/// The host's physical memory in bytes (`total_system_memory`).
pub fn total_system_memory() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || size <= 0 {
        return 0;
    }
    pages as u64 * size as u64
}

/// Redis's LRU clock: seconds, modulo 2^24 (`lru_clock`).
pub fn lru_clock() -> u64 {
    unix_secs() & ((1 << 24) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_of_background_jobs() {
        let at = AtomicU64::new(0);
        let last = AtomicI64::new(-1);
        assert_eq!(running_secs(&at), -1);
        at.store(unix_secs() - 3, Ordering::Relaxed);
        assert_eq!(running_secs(&at), 3);
        finished(&at, &last);
        assert_eq!(last.load(Ordering::Relaxed), 3);
        assert_eq!(running_secs(&at), -1);
        // Finishing what never started changes nothing.
        finished(&at, &last);
        assert_eq!(last.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn host_facts() {
        assert!(os().starts_with("Linux "));
        assert!(total_system_memory() > 0);
        assert!(lru_clock() < 1 << 24);
    }
}
