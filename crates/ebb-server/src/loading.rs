//! Loading the dataset at start, as Redis does it: the ports are open
//! while the data loads, commands without the `loading` flag are refused
//! with `-LOADING`, and INFO reports the progress (`loading:1` and the
//! `loading_*` fields).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);
/// When loading started (Unix seconds).
static STARTED: AtomicU64 = AtomicU64::new(0);
/// Bytes of the files to load.
static TOTAL: AtomicU64 = AtomicU64::new(0);
/// Bytes loaded so far.
static LOADED: AtomicU64 = AtomicU64::new(0);

/// `key-load-delay` (microseconds) as loading started.
static KEY_DELAY: AtomicI64 = AtomicI64::new(0);

/// Redis's refusal of a command while the dataset loads.
pub const REFUSAL: &str = "LOADING Redis is loading the dataset in memory";

/// Whether the dataset is loading.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// `key-load-delay` for the load at start (read when it begins).
pub fn set_key_load_delay(us: i64) {
    KEY_DELAY.store(us, Ordering::Relaxed);
}

/// After each command the load at start replays: `key-load-delay`, as
/// Redis applies it after each key (a test setting that makes a load
/// last). Positive: that many microseconds; negative `-n`: one
/// microsecond, one time in `n`.
pub fn pace() {
    let us = KEY_DELAY.load(Ordering::Relaxed);
    if us == 0 || !active() {
        return;
    }
    let us = if us < 0 {
        u64::from(rand::random::<u64>().is_multiple_of(us.unsigned_abs()))
    } else {
        us as u64
    };
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// Loading starts (figures from zero).
pub fn begin() {
    STARTED.store(crate::server::now_ms() / 1000, Ordering::Relaxed);
    TOTAL.store(0, Ordering::Relaxed);
    LOADED.store(0, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::SeqCst);
}

/// Loading is over.
pub fn end() {
    ACTIVE.store(false, Ordering::SeqCst);
}

/// The files to load hold `bytes` (all of them: one source is loaded,
/// the AOF's files or the snapshot).
pub fn set_total(bytes: u64) {
    TOTAL.store(bytes, Ordering::Relaxed);
}

/// Marks the dataset as loading while DEBUG RELOAD or DEBUG LOADAOF loads
/// it (the keyspace locked meanwhile): other clients get `-LOADING`, as
/// Redis answers them while it loads, instead of waiting unanswered, and
/// INFO shows the progress. Loading is over when the mark is dropped.
pub struct Mark(());

impl Mark {
    /// Loading starts, `key-load-delay` (see [`pace`]) as now set.
    pub fn new(shared: &crate::server::Shared) -> Mark {
        set_key_load_delay(shared.config.read().get_i64("key-load-delay"));
        begin();
        Mark(())
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        end();
    }
}

/// `bytes` more were loaded.
pub fn advance(bytes: u64) {
    LOADED.fetch_add(bytes, Ordering::Relaxed);
}

/// INFO persistence's `loading_*` lines (only while loading, as Redis).
pub fn info_lines(out: &mut String) {
    if !active() {
        return;
    }
    let total = TOTAL.load(Ordering::Relaxed);
    let loaded = LOADED.load(Ordering::Relaxed).min(total);
    let started = STARTED.load(Ordering::Relaxed);
    let (perc, remaining) = if total > 0 {
        (loaded as f64 * 100.0 / total as f64, total - loaded)
    } else {
        (0.0, 1)
    };
    let elapsed = (crate::server::now_ms() / 1000).saturating_sub(started);
    let eta = if elapsed == 0 {
        1
    } else {
        elapsed.saturating_mul(remaining) / (loaded + 1)
    };
    out.push_str(&format!(
        "loading_start_time:{started}\r\nloading_total_bytes:{total}\r\n\
         loading_rdb_used_mem:0\r\nloading_loaded_bytes:{loaded}\r\n\
         loading_loaded_perc:{perc:.2}\r\nloading_eta_seconds:{eta}\r\n"
    ));
}
