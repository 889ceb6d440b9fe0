//! The connection limits that CONFIG SET changes for connections already
//! open, as in Redis: `proto-max-bulk-len` applies to the next bulk header
//! any connection reads, `client-query-buffer-limit` to the next read, and
//! `timeout` to the next wait for a request.

use std::sync::atomic::{AtomicU64, Ordering};

static MAX_BULK_LEN: AtomicU64 = AtomicU64::new(512 * 1024 * 1024);
static QUERY_BUFFER_LIMIT: AtomicU64 = AtomicU64::new(1024 * 1024 * 1024);
static TIMEOUT_SECS: AtomicU64 = AtomicU64::new(0);

/// Takes the options' current values.
pub fn configure(cfg: &crate::config::Config) {
    let bulk = cfg.get_i64("proto-max-bulk-len").max(1) as u64;
    let query = cfg.get_i64("client-query-buffer-limit").max(1024) as u64;
    let timeout = cfg.get_i64("timeout").max(0) as u64;
    MAX_BULK_LEN.store(bulk, Ordering::Relaxed);
    QUERY_BUFFER_LIMIT.store(query, Ordering::Relaxed);
    TIMEOUT_SECS.store(timeout, Ordering::Relaxed);
}

/// `proto-max-bulk-len`.
pub(super) fn max_bulk_len() -> u64 {
    MAX_BULK_LEN.load(Ordering::Relaxed)
}

/// `client-query-buffer-limit`, in bytes.
pub(super) fn query_buffer_limit() -> usize {
    QUERY_BUFFER_LIMIT.load(Ordering::Relaxed) as usize
}

/// `timeout`, in seconds (0: never).
pub(super) fn idle_timeout_secs() -> u64 {
    TIMEOUT_SECS.load(Ordering::Relaxed)
}
