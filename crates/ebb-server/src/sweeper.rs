//! Active expiry: reclaims keys and members whose deadline passed without
//! any client touching them, in bounded slices so no client waits long.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{now_ms, Shared};

/// Work units (keys or members) reclaimed per lock hold: small enough to
/// keep each hold well under a millisecond.
pub const SLICE: usize = 100;

/// Runs forever: every 1000/hz ms, and back to back while work is due.
pub async fn run(shared: Arc<Shared>) {
    loop {
        let hz = shared.config.read().get_i64("hz").clamp(1, 500) as u64;
        tokio::time::sleep(Duration::from_millis(1000 / hz)).await;
        if !shared.active_expire.load(Ordering::Relaxed)
            || shared.cron_paused.load(Ordering::Relaxed)
        {
            continue;
        }
        if now_ms() < shared.paused_until.load(Ordering::Relaxed) {
            // CLIENT PAUSE keeps the dataset as it is (Redis too skips its
            // expiry cycle while clients are paused).
            continue;
        }
        let mut burst = 0usize;
        loop {
            let more = {
                let Some(mut store) = shared.store_unless_busy() else {
                    break;
                };
                let held = std::time::Instant::now();
                let now = now_ms();
                let mut fx = shared.effects();
                let work = store.sweep(now, SLICE, &mut fx);
                shared.log_propagated(&mut fx);
                shared.apply_effects(&mut store, &mut fx);
                shared.flush_aof();
                burst += work;
                let more = work >= SLICE && store.has_due(now);
                // Hand the lock to a waiting client, if any, before the next slice.
                parking_lot::MutexGuard::unlock_fair(store);
                // The latency monitor's `expire-cycle`: how long a slice
                // kept clients waiting.
                let spent = held.elapsed();
                crate::latency::sample("expire-cycle", spent);
                crate::figures::EXPIRE_CYCLE_US
                    .fetch_add(spent.as_micros() as u64, Ordering::Relaxed);
                if more {
                    crate::figures::EXPIRE_CAPPED.fetch_add(1, Ordering::Relaxed);
                }
                more
            };
            if !more {
                if burst > 100_000 {
                    trim_heap();
                }
                break;
            }
            // Let waiting clients take the lock between slices.
            tokio::task::yield_now().await;
        }
    }
}

/// Returns freed heap pages to the OS after a large reclaim.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tokio::task::spawn_blocking(|| {
        // SAFETY: malloc_trim only releases free heap memory.
        unsafe {
            libc::malloc_trim(0);
        }
    });
}
