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

/// Every allocator the server may be built with aligns a block to at
/// least 8 bytes (zmalloc's size prefix, when it keeps one, is 8 bytes).
/// Larger alignments (hash tables' 16-byte groups) are carved out of a
/// larger block, with the distance to the block's start stored just
/// before the address handed out.
const SERVER_ALIGN: usize = 8;

/// Alignments above this go to the system allocator (none in practice).
const MAX_CARVED_ALIGN: usize = 4096;

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

unsafe fn server_alloc(size: usize) -> *mut u8 {
    let f: AllocFn = std::mem::transmute(ALLOC.load(Ordering::Acquire));
    f(size) as *mut u8
}

unsafe fn server_free(p: *mut u8) {
    let f: FreeFn = std::mem::transmute(FREE.load(Ordering::Acquire));
    f(p as *mut c_void)
}

/// How a layout is served: the server's allocator as is, carved out of a
/// larger server block, or the system allocator.
enum Way {
    Plain,
    Carved,
    System,
}

fn way(layout: Layout) -> Way {
    if ALLOC.load(Ordering::Acquire).is_null() || layout.align() > MAX_CARVED_ALIGN {
        Way::System
    } else if layout.align() <= SERVER_ALIGN {
        Way::Plain
    } else {
        Way::Carved
    }
}

unsafe fn carve(layout: Layout) -> *mut u8 {
    let align = layout.align();
    let Some(total) = layout.size().checked_add(align + SERVER_ALIGN) else {
        return std::ptr::null_mut();
    };
    let raw = server_alloc(total);
    if raw.is_null() {
        return raw;
    }
    // At least 8 bytes after the block's start, for the distance.
    let addr = raw as usize + SERVER_ALIGN;
    let aligned = (addr + align - 1) & !(align - 1);
    let out = aligned as *mut u8;
    (out.sub(SERVER_ALIGN) as *mut usize).write_unaligned(aligned - raw as usize);
    out
}

unsafe fn uncarve(p: *mut u8) {
    let back = (p.sub(SERVER_ALIGN) as *const usize).read_unaligned();
    server_free(p.sub(back));
}

unsafe impl GlobalAlloc for ServerAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match way(layout) {
            Way::Plain => server_alloc(layout.size()),
            Way::Carved => carve(layout),
            Way::System => System.alloc(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match way(layout) {
            Way::Plain => server_free(ptr),
            Way::Carved => uncarve(ptr),
            Way::System => System.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match way(layout) {
            Way::Plain => {
                let f: ReallocFn = std::mem::transmute(REALLOC.load(Ordering::Acquire));
                f(ptr as *mut c_void, new_size) as *mut u8
            }
            Way::Carved => {
                let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                    return std::ptr::null_mut();
                };
                let out = carve(new_layout);
                if !out.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, out, layout.size().min(new_size));
                    uncarve(ptr);
                }
                out
            }
            Way::System => System.realloc(ptr, layout, new_size),
        }
    }
}
