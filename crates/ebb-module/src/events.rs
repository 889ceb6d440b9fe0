//! Member ("subkey") notifications: the channels of SPEC §2.7 that name the
//! members an event concerns (`__subkeyspace@<db>__:<key>` and the other
//! three), which ebb-server turns on with the letters `S`, `T`, `I`, `V` in
//! `notify-keyspace-events`. Redis rejects those letters, so the module
//! takes them in a configuration of its own, `ebb.subkey-events`; the event
//! classes (`s`, `h`, `z`, `x`, …) stay Redis's `notify-keyspace-events`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

use ebb_core::notify::{parse_flags, Flags};

use crate::ffi::{self, api, Ctx, RString};

/// The channel kinds on, one bit per letter of [`LETTERS`].
static KINDS: AtomicU8 = AtomicU8::new(0);
const LETTERS: &[u8; 4] = b"STIV";

/// The string last handed to the server by [`get`] (the server copies it).
static SHOWN: AtomicPtr<RString> = AtomicPtr::new(std::ptr::null_mut());

fn kinds_of(s: &[u8]) -> Option<u8> {
    let mut bits = 0u8;
    for c in s {
        let i = LETTERS.iter().position(|l| l == c)?;
        bits |= 1 << i;
    }
    Some(bits)
}

fn letters(bits: u8) -> Vec<u8> {
    LETTERS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, &c)| c)
        .collect()
}

/// Whether member events must carry member names.
pub fn wanted() -> bool {
    KINDS.load(Ordering::Relaxed) != 0
}

/// The flags to publish member events with: Redis's classes (from its
/// `notify-keyspace-events` bits) and the module's channel kinds; `None`
/// when no channel kind is on.
pub fn flags(redis_mask: c_int) -> Option<Flags> {
    let kinds = KINDS.load(Ordering::Relaxed);
    if kinds == 0 {
        return None;
    }
    const CLASSES: [(c_int, u8); 11] = [
        (ffi::NOTIFY_GENERIC, b'g'),
        (ffi::NOTIFY_STRING, b'$'),
        (ffi::NOTIFY_LIST, b'l'),
        (ffi::NOTIFY_SET, b's'),
        (ffi::NOTIFY_HASH, b'h'),
        (ffi::NOTIFY_ZSET, b'z'),
        (ffi::NOTIFY_EXPIRED, b'x'),
        (ffi::NOTIFY_EVICTED, b'e'),
        (1 << 10, b't'),
        (1 << 11, b'm'),
        (1 << 14, b'n'),
    ];
    let mut s: Vec<u8> = CLASSES
        .iter()
        .filter(|(bit, _)| redis_mask & bit != 0)
        .map(|&(_, c)| c)
        .collect();
    s.extend(letters(kinds));
    parse_flags(std::str::from_utf8(&s).ok()?)
}

/// Publishes the member channels of one event.
///
/// # Safety
/// `ctx` must be a live context.
pub unsafe fn publish(ctx: *mut Ctx, flags: &Flags, ev: &ebb_core::Event) {
    let a = api();
    for (chan, msg) in flags.messages(ev) {
        let c = (a.CreateString)(ctx, chan.as_ptr() as *const c_char, chan.len());
        let m = (a.CreateString)(ctx, msg.as_ptr() as *const c_char, msg.len());
        (a.PublishMessage)(ctx, c, m);
        (a.FreeString)(ctx, c);
        (a.FreeString)(ctx, m);
    }
}

unsafe extern "C" fn get(_name: *const c_char, _data: *mut c_void) -> *mut RString {
    let a = api();
    let text = letters(KINDS.load(Ordering::Relaxed));
    let s = (a.CreateString)(
        std::ptr::null_mut(),
        text.as_ptr() as *const c_char,
        text.len(),
    );
    let old = SHOWN.swap(s, Ordering::Relaxed);
    if !old.is_null() {
        (a.FreeString)(std::ptr::null_mut(), old);
    }
    s
}

unsafe extern "C" fn set(
    _name: *const c_char,
    val: *mut RString,
    _data: *mut c_void,
    err: *mut *mut RString,
) -> c_int {
    match kinds_of(ffi::bytes(val)) {
        Some(bits) => {
            KINDS.store(bits, Ordering::Relaxed);
            ffi::OK
        }
        None => {
            if !err.is_null() {
                let msg = b"the subkey channels are S, T, I and V";
                *err = (api().CreateString)(
                    std::ptr::null_mut(),
                    msg.as_ptr() as *const c_char,
                    msg.len(),
                );
            }
            ffi::ERR
        }
    }
}

/// Registers `ebb.subkey-events` (empty by default).
///
/// # Safety
/// `ctx` must be the module's load context.
pub unsafe fn register(ctx: *mut Ctx) -> bool {
    (api().RegisterStringConfig)(
        ctx,
        c"subkey-events".as_ptr(),
        c"".as_ptr(),
        0,
        get,
        set,
        None,
        std::ptr::null_mut(),
    ) == ffi::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_round_trip() {
        assert_eq!(kinds_of(b"TS"), Some(0b11));
        assert_eq!(letters(0b1010), b"TV".to_vec());
        assert_eq!(kinds_of(b"SX"), None);
        assert_eq!(kinds_of(b""), Some(0));
    }
}
