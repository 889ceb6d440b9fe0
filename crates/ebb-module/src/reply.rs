//! Core replies written through the module API. The server encodes them
//! for the client's protocol (a map is a flat array in RESP2, a double a
//! bulk string, …), as it does its own replies.

use std::ffi::{c_long, CString};

use ebb_core::Reply;

use crate::ffi::{api, Ctx};

/// Writes `r` as the reply of the command running in `ctx`.
///
/// # Safety
/// `ctx` must be the context of a running command.
pub unsafe fn send(ctx: *mut Ctx, r: &Reply) {
    let a = api();
    match r {
        Reply::Ok => {
            (a.ReplyWithSimpleString)(ctx, c"OK".as_ptr());
        }
        Reply::Simple(s) => {
            let s = text(s);
            (a.ReplyWithSimpleString)(ctx, s.as_ptr());
        }
        Reply::Error(e) => error(ctx, e),
        Reply::Int(n) => {
            (a.ReplyWithLongLong)(ctx, *n);
        }
        Reply::Bulk(b) => bulk(ctx, b),
        Reply::Nil => {
            (a.ReplyWithNull)(ctx);
        }
        Reply::NilArray => {
            (a.ReplyWithNullArray)(ctx);
        }
        Reply::Array(items) => {
            (a.ReplyWithArray)(ctx, items.len() as c_long);
            for i in items {
                send(ctx, i);
            }
        }
        Reply::Set(items) => {
            (a.ReplyWithSet)(ctx, items.len() as c_long);
            for i in items {
                send(ctx, i);
            }
        }
        Reply::Map(pairs) => {
            (a.ReplyWithMap)(ctx, pairs.len() as c_long);
            for (k, v) in pairs {
                send(ctx, k);
                send(ctx, v);
            }
        }
        Reply::Double(d) => {
            (a.ReplyWithDouble)(ctx, *d);
        }
        Reply::Bool(b) => {
            (a.ReplyWithBool)(ctx, *b as i32);
        }
        Reply::BigNumber(b) => {
            (a.ReplyWithBigNumber)(ctx, b.as_ptr() as *const _, b.len());
        }
        // (Only a script makes another format; scripts here are Redis's.)
        Reply::Verbatim(b) | Reply::VerbatimAs(_, b) => {
            (a.ReplyWithVerbatimString)(ctx, b.as_ptr() as *const _, b.len());
        }
        Reply::Bulks(list) if list.is_pairs() => {
            (a.ReplyWithMap)(ctx, (list.len() / 2) as c_long);
            for b in list.iter() {
                bulk(ctx, b);
            }
        }
        Reply::Bulks(list) => {
            (a.ReplyWithArray)(ctx, list.len() as c_long);
            for b in list.iter_opt() {
                match b {
                    Some(b) => bulk(ctx, b),
                    None => {
                        (a.ReplyWithNull)(ctx);
                    }
                }
            }
        }
    }
}

unsafe fn bulk(ctx: *mut Ctx, b: &[u8]) {
    (api().ReplyWithStringBuffer)(ctx, b.as_ptr() as *const _, b.len());
}

/// Replies with an error text that carries its code (`ERR …`,
/// `WRONGTYPE …`), as core's errors do.
///
/// # Safety
/// `ctx` must be the context of a running command.
pub unsafe fn error(ctx: *mut Ctx, e: &str) {
    let e = text(e);
    (api().ReplyWithError)(ctx, e.as_ptr());
}

/// A C string of `s`; a NUL inside (which no core text holds) ends it.
fn text(s: &str) -> CString {
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}
