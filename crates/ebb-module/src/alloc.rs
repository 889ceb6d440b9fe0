//! Memory comes from the server's allocator (`RedisModule_Alloc`), so
//! that `used_memory`, `maxmemory` and MEMORY STATS count what the module
//! holds, as they count the server's own values.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::ffi::{GetApi, OK};

static ALLOC: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static REALLOC: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static FREE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

type AllocFn = unsafe extern "C" fn(usize) -> *mut c_void;
type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);

/// The server's allocator aligns every block to 16 bytes; larger
/// alignments (rare) go to the system allocator, and are freed there too,
/// since the layout is the same on both calls.
const SERVER_ALIGN: usize = 16;

/// Fetches the server's allocator. Called first thing at load, before
/// anything is allocated.
///
/// # Safety
/// `get` must be the server's `RedisModule_GetApi`.
pub unsafe fn init(get: GetApi) -> bool {
    let mut ok = true;
    for (name, slot) in [
        ("RedisModule_Alloc\0", &ALLOC),
        ("RedisModule_Realloc\0", &REALLOC),
        ("RedisModule_Free\0", &FREE),
    ] {
        let mut p: *mut c_void = std::ptr::null_mut();
        let r: c_int = get(
            name.as_ptr() as *const c_char,
            &mut p as *mut *mut c_void as *mut c_void,
        );
        if r != OK || p.is_null() {
            ok = false;
        }
        slot.store(p, Ordering::Release);
    }
    ok
}

/// The module's global allocator.
pub struct ServerAlloc;

unsafe impl GlobalAlloc for ServerAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let f = ALLOC.load(Ordering::Acquire);
        if layout.align() > SERVER_ALIGN || f.is_null() {
            return System.alloc(layout);
        }
        let f: AllocFn = std::mem::transmute(f);
        f(layout.size()) as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let f = FREE.load(Ordering::Acquire);
        if layout.align() > SERVER_ALIGN || f.is_null() {
            return System.dealloc(ptr, layout);
        }
        let f: FreeFn = std::mem::transmute(f);
        f(ptr as *mut c_void)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let f = REALLOC.load(Ordering::Acquire);
        if layout.align() > SERVER_ALIGN || f.is_null() {
            return System.realloc(ptr, layout, new_size);
        }
        let f: ReallocFn = std::mem::transmute(f);
        f(ptr as *mut c_void, new_size) as *mut u8
    }
}
