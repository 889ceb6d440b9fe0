//! The process allocator: the system's malloc, counting the bytes it hands
//! out (`malloc_usable_size`, so size-class rounding counts as Redis's
//! `used_memory` does). INFO's `used_memory` and `maxmemory` read the count.
//!
//! Each thread adds to its own cache-line-sized counter, so counting costs
//! no shared-cache-line traffic on the allocation path.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// The counting allocator.
pub struct Counting;

const SHARDS: usize = 32;

#[repr(align(64))]
struct Shard(AtomicIsize);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Shard = Shard(AtomicIsize::new(0));
static COUNTS: [Shard; SHARDS] = [ZERO; SHARDS];
static NEXT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn shard() -> &'static AtomicIsize {
    let i = SLOT
        .try_with(|s| {
            let mut i = s.get();
            if i == usize::MAX {
                i = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
                s.set(i);
            }
            i
        })
        .unwrap_or(0);
    &COUNTS[i].0
}

fn usable(p: *mut u8) -> usize {
    if p.is_null() {
        0
    } else {
        // SAFETY: `p` was returned by the system allocator and is live.
        unsafe { libc::malloc_usable_size(p.cast()) }
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        shard().fetch_add(usable(p) as isize, Ordering::Relaxed);
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        shard().fetch_add(usable(p) as isize, Ordering::Relaxed);
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        shard().fetch_sub(usable(p) as isize, Ordering::Relaxed);
        System.dealloc(p, layout);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = usable(p);
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            shard().fetch_add(usable(q) as isize - before as isize, Ordering::Relaxed);
        }
        q
    }
}

/// Bytes currently allocated by the process (Rust allocations only).
pub fn allocated() -> usize {
    let n: isize = COUNTS.iter().map(|s| s.0.load(Ordering::Relaxed)).sum();
    let n = n.max(0) as usize;
    PEAK.fetch_max(n, Ordering::Relaxed);
    n
}

/// The highest [`allocated`] value observed so far.
pub fn peak() -> usize {
    let now = allocated();
    PEAK.load(Ordering::Relaxed).max(now)
}
