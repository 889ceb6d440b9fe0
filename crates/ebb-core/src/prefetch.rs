//! A hint to the processor to start loading memory that is about to be
//! read (the next pipelined command's key slot).

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
