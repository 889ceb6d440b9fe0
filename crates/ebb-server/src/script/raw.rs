//! `redis.call` and `redis.pcall` written against Lua's C API: the
//! arguments are read from the Lua stack and the reply is pushed onto it,
//! with no binding handles, locks or intermediate values. This is the
//! path every command a script runs takes.
//!
//! Lua reports errors with `longjmp`, which skips Rust frames without
//! running their destructors. Two rules keep that harmless here:
//!
//! - the only calls that raise on purpose (`lua_error`) are made once
//!   every Rust value of the call has been dropped;
//! - while the reply is pushed (where a failed allocation would raise),
//!   the reply is owned by the run ([`Call::reply`]), not by a frame that
//!   could be skipped, and the pushing code keeps only references and
//!   plain values on its frames.

use ebb_core::Reply;
use mlua::ffi;
use std::ffi::CStr;
use std::os::raw::c_int;

use super::call::with_call;
use super::err;

/// The registry key of the table where raised values wait (`S` in
/// prelude.lua).
pub(super) const STATE_KEY: &CStr = c"ebb.state";

/// Nesting past this depth is pushed as an error (a reply is never this
/// deep; the limit keeps the C stack bounded).
const MAX_DEPTH: usize = 1000;

/// `redis.call`: a failing command raises its error.
pub(super) unsafe extern "C-unwind" fn call(l: *mut ffi::lua_State) -> c_int {
    if run_from_stack(l) {
        // [… error table] → S.pending = error table; raise an opaque
        // value that the error handler and pcall lift (prelude.lua).
        ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, STATE_KEY.as_ptr());
        ffi::lua_pushvalue(l, -2);
        ffi::lua_setfield(l, -2, c"pending".as_ptr());
        ffi::lua_pushlightuserdata(l, std::ptr::null_mut());
        ffi::lua_error(l);
    }
    1
}

/// `redis.pcall`: a failing command's error table is its result.
pub(super) unsafe extern "C-unwind" fn pcall(l: *mut ffi::lua_State) -> c_int {
    run_from_stack(l);
    1
}

/// A command argument from the Lua value at `i`: strings as they are
/// (read in place: the string stays on the stack while the command runs),
/// numbers as `num`, their `%.17g` text (as Redis formats them, not Lua's
/// `%.14g`).
unsafe fn arg_at(l: *mut ffi::lua_State, i: c_int, num: Option<&str>) -> Option<&[u8]> {
    match ffi::lua_type(l, i) {
        ffi::LUA_TSTRING => {
            let mut len = 0usize;
            let p = ffi::lua_tolstring(l, i, &mut len);
            if p.is_null() {
                return None;
            }
            Some(std::slice::from_raw_parts(p as *const u8, len))
        }
        ffi::LUA_TNUMBER => num.map(str::as_bytes),
        _ => None,
    }
}

/// Runs the command whose arguments are on the stack and pushes its reply
/// (a Lua value, or an error table); true if the command failed.
unsafe fn run_from_stack(l: *mut ffi::lua_State) -> bool {
    let n = ffi::lua_gettop(l);
    // Everything with a destructor lives in this block, which ends before
    // any Lua call that can raise.
    let outcome = {
        // Numbers get their text first, so that every argument can then
        // be borrowed (strings from the stack, numbers from here).
        let numbers = (1..=n).any(|i| ffi::lua_type(l, i) == ffi::LUA_TNUMBER);
        let texts: Vec<Option<String>> = match numbers {
            false => Vec::new(),
            true => (1..=n)
                .map(|i| {
                    (ffi::lua_type(l, i) == ffi::LUA_TNUMBER)
                        .then(|| super::convert::g17(ffi::lua_tonumber(l, i)))
                })
                .collect(),
        };
        let argv: Option<Vec<&[u8]>> = (1..=n)
            .map(|i| {
                let num = texts.get(i as usize - 1).and_then(|t| t.as_deref());
                arg_at(l, i, num)
            })
            .collect();
        with_call(|c| {
            c.reply = match &argv {
                _ if n == 0 => {
                    err("ERR Please specify at least one argument for this redis lib call")
                }
                None => err("ERR Lua redis lib command arguments must be strings or integers"),
                Some(argv) => c.run(c.resp, argv),
            };
            (
                &c.reply as *const Reply,
                c.resp,
                matches!(c.reply, Reply::Error(_)),
            )
        })
    };
    // The command is over: the arguments' stack slots go, leaving room for
    // the reply however many arguments there were.
    ffi::lua_settop(l, 0);
    let Some((reply, resp, failed)) = outcome else {
        push_error(l, b"ERR no script is running");
        return true;
    };
    // SAFETY: the reply is owned by the current run, which outlives this
    // call, and nothing else touches it until the next command.
    push(l, &*reply, resp == 3, 0);
    failed
}

unsafe fn push_bytes(l: *mut ffi::lua_State, b: &[u8]) {
    ffi::lua_pushlstring(l, b.as_ptr() as *const _, b.len());
}

/// `{field = <top of stack>}`, replacing the top.
unsafe fn wrap_top(l: *mut ffi::lua_State, field: &CStr) {
    ffi::lua_createtable(l, 0, 0);
    ffi::lua_insert(l, -2);
    ffi::lua_setfield(l, -2, field.as_ptr());
}

/// The error table of a failed command: its text, and the mark that keeps
/// the script's own error reply from being counted again (Redis's field).
unsafe fn push_error(l: *mut ffi::lua_State, text: &[u8]) {
    ffi::lua_createtable(l, 0, 0);
    push_bytes(l, text);
    ffi::lua_setfield(l, -2, c"err".as_ptr());
    ffi::lua_pushboolean(l, 1);
    ffi::lua_setfield(l, -2, c"ignore_error_stats_update".as_ptr());
}

unsafe fn push_nil(l: *mut ffi::lua_State, resp3: bool) {
    if resp3 {
        ffi::lua_pushnil(l);
    } else {
        ffi::lua_pushboolean(l, 0);
    }
}

/// An array of `items`, each pushed by `each`.
/// Tables start empty and grow, as Redis makes them, so that their layout,
/// and what `pairs` and `#` see (arrays may hold nils), are Redis's;
/// `prealloc` sizes the array part up front where no element is nil.
unsafe fn push_array<T>(
    l: *mut ffi::lua_State,
    prealloc: usize,
    items: impl Iterator<Item = T>,
    mut each: impl FnMut(T),
) {
    ffi::lua_createtable(l, prealloc.min(1 << 20) as c_int, 0);
    for (i, item) in items.enumerate() {
        each(item);
        ffi::lua_rawseti(l, -2, (i + 1) as _);
    }
}

/// A reply as the script sees it (Redis 7.0's conversions for RESP2 and
/// RESP3).
unsafe fn push(l: *mut ffi::lua_State, r: &Reply, resp3: bool, depth: usize) {
    if depth >= MAX_DEPTH || ffi::lua_checkstack(l, 4) == 0 {
        push_error(l, b"ERR reached lua stack limit");
        return;
    }
    let nested = |item: &Reply| push(l, item, resp3, depth + 1);
    match r {
        Reply::Ok => {
            push_bytes(l, b"OK");
            wrap_top(l, c"ok");
        }
        Reply::Simple(s) => {
            push_bytes(l, s.as_bytes());
            wrap_top(l, c"ok");
        }
        Reply::Error(e) => push_error(l, e.as_bytes()),
        Reply::Int(i) => ffi::lua_pushnumber(l, *i as f64),
        Reply::Bulk(b) => push_bytes(l, b),
        Reply::Nil | Reply::NilArray => push_nil(l, resp3),
        Reply::Array(items) => push_array(l, 0, items.iter(), nested),
        Reply::Set(items) if resp3 => {
            ffi::lua_createtable(l, 0, 0);
            for m in items {
                nested(m);
                ffi::lua_pushboolean(l, 1);
                ffi::lua_rawset(l, -3);
            }
            wrap_top(l, c"set");
        }
        Reply::Set(items) => push_array(l, 0, items.iter(), nested),
        Reply::Map(pairs) if resp3 => {
            ffi::lua_createtable(l, 0, 0);
            for (k, v) in pairs {
                nested(k);
                nested(v);
                ffi::lua_rawset(l, -3);
            }
            wrap_top(l, c"map");
        }
        Reply::Map(pairs) => push_array(
            l,
            0,
            (0..pairs.len() * 2).map(|i| {
                let (k, v) = &pairs[i / 2];
                if i % 2 == 0 {
                    k
                } else {
                    v
                }
            }),
            nested,
        ),
        Reply::Bulks(list) if resp3 && list.is_pairs() => {
            ffi::lua_createtable(l, 0, 0);
            let mut it = list.iter_opt();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                match k {
                    Some(k) => push_bytes(l, k),
                    None => push_nil(l, true),
                }
                match v {
                    Some(v) => push_bytes(l, v),
                    None => push_nil(l, true),
                }
                // A nil key cannot be stored (no command replies one).
                if ffi::lua_isnil(l, -2) != 0 {
                    ffi::lua_settop(l, -3);
                } else {
                    ffi::lua_rawset(l, -3);
                }
            }
            wrap_top(l, c"map");
        }
        Reply::Bulks(list) => push_array(l, 0, list.iter_opt(), |b| match b {
            Some(b) => push_bytes(l, b),
            None => push_nil(l, resp3),
        }),
        Reply::Double(d) if resp3 => {
            ffi::lua_pushnumber(l, *d);
            wrap_top(l, c"double");
        }
        Reply::Double(d) => {
            let mut buf = [0u8; 64];
            push_bytes(l, format_double_into(*d, &mut buf));
        }
        Reply::Bool(b) if resp3 => ffi::lua_pushboolean(l, *b as c_int),
        Reply::Bool(b) => ffi::lua_pushnumber(l, *b as i64 as f64),
        Reply::Verbatim(b) if resp3 => push_verbatim(l, b"txt", b),
        Reply::VerbatimAs(format, b) if resp3 => push_verbatim(l, format, b),
        Reply::Verbatim(b) | Reply::VerbatimAs(_, b) => push_bytes(l, b),
        Reply::BigNumber(n) if resp3 => {
            push_bytes(l, n);
            wrap_top(l, c"big_number");
        }
        Reply::BigNumber(n) => push_bytes(l, n),
    }
}

/// Pushes a RESP3 verbatim string as Lua sees it: `{verbatim_string=
/// {format=..., string=...}}`.
///
/// # Safety
/// `l` is a live Lua state with room on its stack.
unsafe fn push_verbatim(l: *mut ffi::lua_State, format: &[u8], text: &[u8]) {
    ffi::lua_createtable(l, 0, 0);
    push_bytes(l, format);
    ffi::lua_setfield(l, -2, c"format".as_ptr());
    push_bytes(l, text);
    ffi::lua_setfield(l, -2, c"string".as_ptr());
    wrap_top(l, c"verbatim_string");
}

/// `native.script_args()`: the running script's keys and arguments, as
/// two Lua arrays of strings (EVAL's KEYS and ARGV, FCALL's two
/// arguments). Called inside the run's protected call, so a failed
/// allocation is a script error; only references sit on these frames.
pub(super) unsafe extern "C-unwind" fn script_args(l: *mut ffi::lua_State) -> c_int {
    // Pointers and lengths: the slices' own lifetime ends with the closure.
    let lists = with_call(|c| {
        let raw = |v: &[&[u8]]| (v.as_ptr().cast::<&'static [u8]>(), v.len());
        (raw(c.keys), raw(c.args))
    });
    match lists {
        Some((keys, args)) => {
            for (ptr, len) in [keys, args] {
                // SAFETY: the slices belong to the request being run, which
                // outlives the run.
                let items = std::slice::from_raw_parts(ptr, len);
                push_array(l, items.len(), items.iter(), |b| push_bytes(l, b));
            }
        }
        None => {
            ffi::lua_createtable(l, 0, 0);
            ffi::lua_createtable(l, 0, 0);
        }
    }
    2
}

/// The base library's `unpack(t [, i [, j]])`: `t[i]` to `t[j]` (from 1
/// to `#t` by default). Bounds are C `int`s as in Lua 5.1, but counted
/// without overflow: a range longer than the stack can take is refused
/// with Lua's error, raised (with the caller's position) before anything
/// is pushed. Nothing on this frame has a destructor.
pub(super) unsafe extern "C-unwind" fn unpack(l: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
    let first = ffi::luaL_optinteger(l, 2, 1) as c_int;
    let last = if ffi::lua_isnoneornil(l, 3) != 0 {
        ffi::lua_objlen(l, 1) as c_int
    } else {
        ffi::luaL_checkinteger(l, 3) as c_int
    };
    if first > last {
        return 0;
    }
    let n = last as i64 - first as i64 + 1;
    if n > c_int::MAX as i64 || ffi::lua_checkstack(l, n as c_int) == 0 {
        return ffi::luaL_error(l, c"too many results to unpack".as_ptr());
    }
    for k in 0..n {
        ffi::lua_rawgeti_(l, 1, (first as i64 + k) as c_int);
    }
    n as c_int
}

/// A double as a RESP2 reply writes it, into `buf` (no allocation that a
/// raised error could leak).
fn format_double_into(d: f64, buf: &mut [u8; 64]) -> &[u8] {
    let text = super::convert::g17(d);
    let n = text.len().min(buf.len());
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    &buf[..n]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::convert::to_reply;
    use bytes::Bytes;
    use mlua::{Lua, Value};

    /// The Lua value a reply becomes, read back as the reply a script
    /// returning it would give.
    fn through_lua(r: &Reply, resp: u8) -> Reply {
        let lua = Lua::new();
        // SAFETY: `push` leaves exactly one value on the stack.
        let v: Value = unsafe { lua.exec_raw((), |l| push(l, r, resp == 3, 0)) }.unwrap();
        to_reply(&v, resp, resp == 3)
    }

    #[test]
    fn replies_round_trip_through_lua() {
        let arr = Reply::Array(vec![Reply::Int(3), Reply::bulk(b"x"), Reply::Nil]);
        // The nil became false, which ends nothing: three elements back.
        assert_eq!(through_lua(&arr, 2), arr);
        assert_eq!(through_lua(&Reply::Double(1.5), 2), Reply::bulk(b"1.5"));
        assert_eq!(through_lua(&Reply::Double(1.5), 3), Reply::Double(1.5));
        assert_eq!(
            through_lua(&Reply::Error("ERR x\ny".into()), 2),
            Reply::Error("ERR x y".into())
        );
        assert_eq!(through_lua(&Reply::Ok, 2), Reply::Simple("OK".into()));
        assert_eq!(through_lua(&Reply::Bool(true), 2), Reply::Int(1));
        assert_eq!(through_lua(&Reply::Bool(true), 3), Reply::Bool(true));
        assert_eq!(through_lua(&Reply::Int(-7), 2), Reply::Int(-7));
        assert_eq!(
            through_lua(&Reply::BigNumber(Bytes::from("123")), 3),
            Reply::BigNumber(Bytes::from("123"))
        );
        assert_eq!(
            through_lua(&Reply::Verbatim(Bytes::from("v")), 3),
            Reply::Verbatim(Bytes::from("v"))
        );
        assert_eq!(
            through_lua(&Reply::Verbatim(Bytes::from("v")), 2),
            Reply::bulk(b"v")
        );
    }

    #[test]
    fn maps_sets_and_bulk_lists() {
        let map = Reply::Map(vec![(Reply::bulk(b"a"), Reply::Int(1))]);
        assert_eq!(
            through_lua(&map, 2),
            Reply::Array(vec![Reply::bulk(b"a"), Reply::Int(1)])
        );
        assert_eq!(through_lua(&map, 3), map);
        let set = Reply::Set(vec![Reply::bulk(b"m")]);
        assert_eq!(through_lua(&set, 3), set);
        assert_eq!(through_lua(&set, 2), Reply::Array(vec![Reply::bulk(b"m")]));
        let mut list = ebb_core::reply::BulkList::default();
        list.push(b"a");
        list.push_nil();
        list.push(b"c");
        assert_eq!(
            through_lua(&Reply::Bulks(list), 2),
            Reply::Array(vec![Reply::bulk(b"a"), Reply::Nil, Reply::bulk(b"c")])
        );
    }

    /// Nesting deeper than the limit turns into an error value, not a
    /// crash.
    #[test]
    fn deep_nesting_is_an_error_value() {
        let mut r = Reply::Int(1);
        for _ in 0..(MAX_DEPTH + 5) {
            r = Reply::Array(vec![r]);
        }
        let lua = Lua::new();
        let v: Value = unsafe { lua.exec_raw((), |l| push(l, &r, false, 0)) }.unwrap();
        let mut t = v;
        for _ in 0..MAX_DEPTH {
            t = match t {
                Value::Table(t) => t.raw_get(1).unwrap(),
                other => panic!("{other:?}"),
            };
        }
        let Value::Table(e) = t else { panic!() };
        assert_eq!(
            e.raw_get::<String>("err").unwrap(),
            "ERR reached lua stack limit"
        );
    }
}
