//! Active expiry: reclaims keys and members whose deadline passed without
//! any client touching them, in bounded slices so no client waits long.

use ebb_core::Effects;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{now_ms, Shared};

/// Work units (keys or members) reclaimed per lock hold: small enough to
/// keep each hold well under a millisecond.
pub const SLICE: usize = 2000;

/// Runs forever: every 1000/hz ms, and back to back while work is due.
pub async fn run(shared: Arc<Shared>) {
    loop {
        let hz = shared.config.read().get_i64("hz").clamp(1, 500) as u64;
        tokio::time::sleep(Duration::from_millis(1000 / hz)).await;
        if !shared.active_expire.load(Ordering::Relaxed) {
            continue;
        }
        loop {
            let more = {
                let mut store = shared.store.lock();
                let now = now_ms();
                let mut fx = Effects::default();
                let work = store.sweep(now, SLICE, &mut fx);
                shared.log_propagated(&mut fx);
                shared.apply_effects(&mut store, &mut fx);
                shared.flush_aof();
                work >= SLICE && store.has_due(now)
            };
            if !more {
                break;
            }
            // Let waiting clients take the lock between slices.
            tokio::task::yield_now().await;
        }
    }
}
