//! The module's data type: one core value (a set, sorted set or hash whose
//! members may carry deadlines) per key. Snapshots hold a value as core's
//! DUMP payload; an AOF rewrite writes the module commands that rebuild it,
//! member deadlines included.

use std::ffi::{c_char, c_int, c_void};

use bytes::Bytes;
use ebb_core::cmd::keys_object::value_usage;
use ebb_core::cmd::restore;
use ebb_core::Value;

use crate::ffi::{self, api, Io, RString, TypeMethods};
use crate::names;

/// The type's name as the server shows it (TYPE, OBJECT): nine characters.
pub const NAME: &str = "ebb-value\0";
/// Encoding version of the snapshot form.
pub const ENCODING: c_int = 1;

fn now() -> u64 {
    // SAFETY: the entry points are loaded before any type callback runs.
    unsafe { (api().Milliseconds)().max(0) as u64 }
}

unsafe extern "C" fn rdb_load(io: *mut Io, encver: c_int) -> *mut c_void {
    if encver != ENCODING {
        return std::ptr::null_mut();
    }
    let a = api();
    let mut len = 0usize;
    let buf = (a.LoadStringBuffer)(io, &mut len);
    if buf.is_null() {
        return std::ptr::null_mut();
    }
    // Rebuilt as of time 0, so that every member comes back, those whose
    // deadline passed while the file waited included: the expiry timer
    // (or, on a replica, the primary) removes them as it would have. A
    // key whose members were all due must not fail the whole load.
    let value = restore::value_of_payload(std::slice::from_raw_parts(buf as *const u8, len), 0);
    (a.Free)(buf as *mut c_void);
    match value {
        Some(v) => Box::into_raw(Box::new(v)) as *mut c_void,
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn rdb_save(io: *mut Io, value: *mut c_void) {
    let v = &*(value as *const Value);
    let data = restore::payload(v, now());
    (api().SaveStringBuffer)(io, data.as_ptr() as *const c_char, data.len());
}

unsafe extern "C" fn aof_rewrite(io: *mut Io, key: *mut RString, value: *mut c_void) {
    let a = api();
    let v = &*(value as *const Value);
    let key = Bytes::copy_from_slice(ffi::bytes(key));
    ebb_core::dump::value_commands(&key, v, now(), &mut |cmd| {
        let Some((name, rest)) = cmd.split_first() else {
            return;
        };
        let Some(cname) = names::logged_name(name) else {
            return;
        };
        let strs: Vec<*mut RString> = rest
            .iter()
            .map(|b| (a.CreateString)(std::ptr::null_mut(), b.as_ptr() as *const c_char, b.len()))
            .collect();
        (a.EmitAOF)(io, cname.as_ptr(), c"v".as_ptr(), strs.as_ptr(), strs.len());
        for s in strs {
            (a.FreeString)(std::ptr::null_mut(), s);
        }
    });
}

/// Bytes the value holds, estimated from `samples` members as MEMORY
/// USAGE asks (0: all of them).
unsafe extern "C" fn mem_usage2(_ctx: *mut c_void, value: *const c_void, samples: usize) -> usize {
    let v = &*(value as *const Value);
    let samples = if samples == 0 { usize::MAX } else { samples };
    std::mem::size_of::<Value>() + value_usage(v, samples)
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    mem_usage2(std::ptr::null_mut(), value, 5)
}

/// DEBUG DIGEST: one sequence per member (its name, score or value, and
/// deadline), which the server combines regardless of order, so that equal
/// contents give equal digests whatever order they were built in (a
/// primary and its replica, a value and its reloaded copy).
unsafe extern "C" fn digest(md: *mut c_void, value: *mut c_void) {
    let a = api();
    let add = |b: &[u8]| (a.DigestAddStringBuffer)(md, b.as_ptr() as *const c_char, b.len());
    let deadline = |t: Option<u64>| {
        if let Some(t) = t {
            add(t.to_string().as_bytes());
        }
    };
    match &*(value as *const Value) {
        Value::Set(s) => {
            let d = s.deadlines();
            for m in s.iter() {
                add(m);
                deadline(d.get(m));
                (a.DigestEndSequence)(md);
            }
        }
        Value::Hash(h) => {
            let d = h.deadlines();
            for (f, v) in h.iter() {
                add(f);
                add(v);
                deadline(d.get(f));
                (a.DigestEndSequence)(md);
            }
        }
        Value::ZSet(z) => {
            let d = z.deadlines();
            for (m, score) in z.iter() {
                add(m);
                add(ebb_core::reply::format_double(score).as_bytes());
                deadline(d.get(m));
                (a.DigestEndSequence)(md);
            }
        }
        Value::Str(_) | Value::List(_) => {}
    }
}

unsafe extern "C" fn free(value: *mut c_void) {
    if !value.is_null() {
        drop(Box::from_raw(value as *mut Value));
    }
}

unsafe extern "C" fn free_effort(_key: *mut RString, value: *const c_void) -> usize {
    (*(value as *const Value)).member_count()
}

unsafe extern "C" fn copy(
    _from: *mut RString,
    _to: *mut RString,
    value: *const c_void,
) -> *mut c_void {
    let v = &*(value as *const Value);
    Box::into_raw(Box::new(v.clone())) as *mut c_void
}

/// The callbacks to register.
pub fn methods() -> TypeMethods {
    TypeMethods {
        version: ffi::TYPE_METHOD_VERSION,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort),
        unlink: None,
        copy: Some(copy),
        defrag: None,
        mem_usage2: Some(mem_usage2),
        free_effort2: None,
        unlink2: None,
        copy2: None,
    }
}
