//! A hint to the processor to start loading memory that is about to be
//! read (what the pipelined requests waiting behind a command will look
//! up: index groups, key slots, member nodes).

/// Bytes of key slots or member nodes below which nothing is prefetched:
/// a table that size mostly stays in the processor's cache anyway (this
/// much is a typical core's share of cache), and a prefetch would only
/// repeat the lookup's hashing. Measured with the earlier index (whose
/// probe the prefetch had to walk): sets of 100,000 short members (2.4 MB
/// of nodes) got slower with prefetching, hashes of 100,000 fields
/// (4.8 MB) and 100,000 keys (6.4 MB) faster; with 1 MB here, SADD and
/// ZADDEX on 100,000 members lost 2–5%. With the id table's probe-free
/// prefetch, ZADDEX on 100,000 members (48 bytes of node, index and
/// deadline each) gains 7–10%, and SADD on them still gains nothing at
/// 1 MB.
const MIN_BYTES: usize = 4 << 20;

/// Whether `n` items of type `T` are worth prefetching from.
pub fn worth<T>(n: usize) -> bool {
    worth_bytes(n.saturating_mul(size_of::<T>()))
}

/// Whether a structure of `bytes` is worth prefetching from.
pub fn worth_bytes(bytes: usize) -> bool {
    bytes >= MIN_BYTES
}

/// Asks the processor to bring the cache lines of `value` into the cache.
/// Only a hint: nothing is read, and on other architectures it does
/// nothing.
#[inline]
pub fn prefetch_value<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = (value as *const T).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        // SAFETY: a prefetch never faults and changes no memory; both
        // addresses lie within `value`, a live reference.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
