//! The room under `maxmemory` the key tables may grow into.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes a key table may add to its slots when it grows, as the server
/// last measured them under `maxmemory` (`u64::MAX`: no limit). A full
/// table doubles its slots unless that would take more than this room;
/// then it grows by a few slots, as Redis refuses a dictionary
/// expansion that would pass the limit. The slots a table holds free are
/// not counted by eviction (new keys reuse them, and a removed key leaves
/// its slot free), so near the limit they must stay few or memory in use
/// would pass it by their room.
static GROWTH_ROOM: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the room key tables may grow into (see [`GROWTH_ROOM`]); the
/// server measures it before each write under a memory limit.
pub fn set_growth_room(bytes: u64) {
    if GROWTH_ROOM.load(Ordering::Relaxed) != bytes {
        GROWTH_ROOM.store(bytes, Ordering::Relaxed);
    }
}

/// The room last set (`u64::MAX`: no limit).
pub(crate) fn growth_room() -> u64 {
    GROWTH_ROOM.load(Ordering::Relaxed)
}
