//! Strings: GET, SET and its variants, MGET/MSET, GETEX/GETDEL, APPEND,
//! ranges, counters (`strings/counters.rs`) and LCS (`strings/lcs.rs`).
//! Bit operations live in `bits.rs`.

mod counters;
mod lcs;
pub mod long_double;
#[cfg(test)]
mod tests;

use bytes::{Bytes, BytesMut};

use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::{BulkList, Reply};
use crate::table::CommandSpec;
use crate::value::{StrValue, Value};

/// The string family's commands.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("get", 2, "readonly fast", (1, 1, 1), "string", "Get the value of a key", get),
    CommandSpec::core("set", -3, "write denyoom", (1, 1, 1), "string", "Set the string value of a key", set),
    CommandSpec::core("setnx", 3, "write denyoom fast", (1, 1, 1), "string", "Set the value of a key, only if the key does not exist", setnx),
    CommandSpec::core("setex", 4, "write denyoom", (1, 1, 1), "string", "Set the value and expiration of a key", setex),
    CommandSpec::core("psetex", 4, "write denyoom", (1, 1, 1), "string", "Set the value and expiration in milliseconds of a key", psetex),
    CommandSpec::core("getset", 3, "write denyoom fast", (1, 1, 1), "string", "Set the string value of a key and return its old value", getset),
    CommandSpec::core("getdel", 2, "write fast", (1, 1, 1), "string", "Get the value of a key and delete the key", getdel),
    CommandSpec::core("getex", -2, "write fast", (1, 1, 1), "string", "Get the value of a key and optionally set its expiration", getex),
    CommandSpec::core("mget", -2, "readonly fast", (1, -1, 1), "string", "Get the values of all the given keys", mget),
    CommandSpec::core("mset", -3, "write denyoom", (1, -1, 2), "string", "Set multiple keys to multiple values", mset),
    CommandSpec::core("msetnx", -3, "write denyoom", (1, -1, 2), "string", "Set multiple keys to multiple values, only if none of the keys exist", msetnx),
    CommandSpec::core("append", 3, "write denyoom fast", (1, 1, 1), "string", "Append a value to a key", append),
    CommandSpec::core("strlen", 2, "readonly fast", (1, 1, 1), "string", "Get the length of the value stored in a key", strlen),
    CommandSpec::core("getrange", 4, "readonly", (1, 1, 1), "string", "Get a substring of the string stored at a key", getrange),
    CommandSpec::core("substr", 4, "readonly", (1, 1, 1), "string", "Get a substring of the string stored at a key", getrange),
    CommandSpec::core("setrange", 4, "write denyoom", (1, 1, 1), "string", "Overwrite part of a string at key starting at the specified offset", setrange),
    CommandSpec::core("incr", 2, "write denyoom fast", (1, 1, 1), "string", "Increment the integer value of a key by one", counters::incr),
    CommandSpec::core("decr", 2, "write denyoom fast", (1, 1, 1), "string", "Decrement the integer value of a key by one", counters::decr),
    CommandSpec::core("incrby", 3, "write denyoom fast", (1, 1, 1), "string", "Increment the integer value of a key by the given amount", counters::incrby),
    CommandSpec::core("decrby", 3, "write denyoom fast", (1, 1, 1), "string", "Decrement the integer value of a key by the given number", counters::decrby),
    CommandSpec::core("incrbyfloat", 3, "write denyoom fast", (1, 1, 1), "string", "Increment the float value of a key by the given amount", counters::incrbyfloat),
    CommandSpec::core("lcs", -3, "readonly", (1, 2, 1), "string", "Find longest common substring", lcs::lcs),
];

/// Edits a stored string in place (see [`StrValue::edit`]).
pub(crate) fn edit_bytes<R>(b: &mut StrValue, f: impl FnOnce(&mut BytesMut) -> R) -> R {
    b.edit(f)
}

/// Whether a string of `len + extra` bytes would pass `proto-max-bulk-len`
/// (Redis's `checkStringLength`, overflow included).
pub(crate) fn exceeds_max_len(ctx: &Ctx, len: u64, extra: u64) -> bool {
    match len.checked_add(extra) {
        Some(total) => total > ctx.store.cfg.proto_max_bulk_len,
        None => true,
    }
}

/// Replaces the value of string `key` keeping its TTL, or creates it.
pub(crate) fn store_keep_ttl(ctx: &mut Ctx, key: &[u8], v: StrValue) -> CmdResult<()> {
    match ctx.get_mut::<StrValue>(key)? {
        Some(b) => *b = v,
        None => ctx.set_value(key, Value::Str(v)),
    }
    Ok(())
}

fn bulk_or_nil(v: Option<&StrValue>) -> Reply {
    match v {
        Some(v) => Reply::Bulk(v.to_bytes()),
        None => Reply::Nil,
    }
}

/// # Format
/// `GET key` → the value, or nil.
fn get(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    Ok(bulk_or_nil(ctx.get::<StrValue>(key)?))
}

/// The unit of an `EX`/`PX`/`EXAT`/`PXAT` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpireUnit {
    Ex,
    Px,
    ExAt,
    PxAt,
}

/// Options shared by SET and GETEX (Redis's `parseExtendedStringArguments`).
#[derive(Default)]
struct ExtOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    expire: Option<(ExpireUnit, &'a [u8])>,
}

/// Parses SET's (`for_set`) or GETEX's options. Repeating an option is
/// allowed; combining conflicting ones is a syntax error.
fn parse_ext_options<'a>(rest: &'a [&'a [u8]], for_set: bool) -> CmdResult<ExtOptions<'a>> {
    let mut o = ExtOptions::default();
    let mut i = 0;
    while i < rest.len() {
        let opt = rest[i];
        let is = |kw: &str| opt.eq_ignore_ascii_case(kw.as_bytes());
        let unit = if is("EX") {
            Some(ExpireUnit::Ex)
        } else if is("PX") {
            Some(ExpireUnit::Px)
        } else if is("EXAT") {
            Some(ExpireUnit::ExAt)
        } else if is("PXAT") {
            Some(ExpireUnit::PxAt)
        } else {
            None
        };
        if is("NX") && for_set && !o.xx {
            o.nx = true;
        } else if is("XX") && for_set && !o.nx {
            o.xx = true;
        } else if is("GET") && for_set {
            o.get = true;
        } else if is("KEEPTTL") && for_set && !o.persist && o.expire.is_none() {
            o.keepttl = true;
        } else if is("PERSIST") && !for_set && !o.keepttl && o.expire.is_none() {
            o.persist = true;
        } else if let (Some(u), Some(value)) = (unit, rest.get(i + 1)) {
            let clash = o.keepttl || o.persist || o.expire.is_some_and(|(e, _)| e != u);
            if clash {
                return Err(Error::Syntax);
            }
            o.expire = Some((u, &value[..]));
            i += 1;
        } else {
            return Err(Error::Syntax);
        }
        i += 1;
    }
    Ok(o)
}

/// The absolute deadline (Unix ms) an expire option asks for, validated as
/// Redis does: positive, no overflow once converted and made absolute.
fn deadline(now: u64, unit: ExpireUnit, raw: &[u8], cmd: &str) -> CmdResult<u64> {
    let v = parse_i64(raw).ok_or(Error::NotInteger)?;
    let invalid = || Error::InvalidExpire(cmd.to_string());
    let seconds = matches!(unit, ExpireUnit::Ex | ExpireUnit::ExAt);
    if v <= 0 || (seconds && v > i64::MAX / 1000) {
        return Err(invalid());
    }
    let mut ms = if seconds { v * 1000 } else { v };
    if matches!(unit, ExpireUnit::Ex | ExpireUnit::Px) {
        ms = ms.checked_add(now as i64).ok_or_else(invalid)?;
    }
    Ok(ms as u64)
}

/// What a SET-like command does once parsed.
struct SetRequest<'a> {
    key: &'a [u8],
    value: &'a [u8],
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    deadline: Option<u64>,
}

/// Applies a SET. Returns whether it was written (NX/XX may prevent it)
/// and, when `get` was asked, the previous value (nil otherwise).
fn apply_set(ctx: &mut Ctx, r: &SetRequest) -> CmdResult<(bool, Reply)> {
    let old = if r.get {
        bulk_or_nil(ctx.get::<StrValue>(r.key)?)
    } else {
        Reply::Nil
    };
    let refused = (r.nx || r.xx) && ctx.exists(r.key) == r.nx;
    if refused {
        return Ok((false, old));
    }
    // (Looked up for writing: no read hit or miss, as in Redis.)
    let keep = if r.keepttl {
        ctx.entry_for_write(r.key).and_then(|e| e.expire_at())
    } else {
        None
    };
    ctx.set_value(r.key, Value::Str(StrValue::new(r.value)));
    if keep.is_some() {
        ctx.db().set_expire(r.key, keep);
    }
    ctx.modified(r.key);
    ctx.notify(b'$', "set", r.key);
    if let Some(at) = r.deadline {
        ctx.db().set_expire(r.key, Some(at));
        ctx.notify(b'g', "expire", r.key);
        if ctx.logs() {
            ctx.rewrite_as(vec![set_pxat(r.key, r.value, at)]);
        }
    }
    Ok((true, old))
}

/// `SET key value PXAT at`, how every SET with a TTL is logged.
fn set_pxat(key: &[u8], value: &[u8], at: u64) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"SET"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(value),
        Bytes::from_static(b"PXAT"),
        Bytes::from(at.to_string()),
    ]
}

/// # Format
/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT unix-s|PXAT unix-ms|KEEPTTL]`
/// → `OK`; nil when NX/XX prevented the write; with `GET`, the previous
/// value (or nil) instead. Logged with an absolute `PXAT` deadline.
fn set(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let value = a.bytes()?;
    let o = parse_ext_options(a.rest(), true)?;
    let deadline = match o.expire {
        Some((unit, raw)) => Some(deadline(ctx.clock, unit, raw, "set")?),
        None => None,
    };
    let req = SetRequest {
        key,
        value,
        nx: o.nx,
        xx: o.xx,
        get: o.get,
        keepttl: o.keepttl,
        deadline,
    };
    let (done, old) = apply_set(ctx, &req)?;
    if o.get {
        if done && deadline.is_none() && ctx.logs() {
            // Replicas and the log must not see GET (it replies, it does not write).
            let kept = argv
                .iter()
                .enumerate()
                .filter(|(i, arg)| *i < 3 || !arg.eq_ignore_ascii_case(b"GET"))
                .map(|(_, arg)| Bytes::copy_from_slice(arg))
                .collect();
            ctx.rewrite_as(vec![kept]);
        }
        return Ok(old);
    }
    Ok(if done { Reply::Ok } else { Reply::Nil })
}

/// # Format
/// `SETNX key value` → 1 if the key was set, 0 if it already existed.
fn setnx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let value = a.bytes()?;
    let req = SetRequest {
        key,
        value,
        nx: true,
        xx: false,
        get: false,
        keepttl: false,
        deadline: None,
    };
    let (done, _) = apply_set(ctx, &req)?;
    Ok(Reply::Int(done as i64))
}

fn set_with_ttl(ctx: &mut Ctx, argv: &[&[u8]], unit: ExpireUnit, cmd: &str) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let ttl = a.bytes()?;
    let value = a.bytes()?;
    let at = deadline(ctx.clock, unit, ttl, cmd)?;
    let req = SetRequest {
        key,
        value,
        nx: false,
        xx: false,
        get: false,
        keepttl: false,
        deadline: Some(at),
    };
    apply_set(ctx, &req)?;
    Ok(Reply::Ok)
}

/// # Format
/// `SETEX key seconds value` → `OK`. Logged as `SET key value PXAT at`.
fn setex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    set_with_ttl(ctx, argv, ExpireUnit::Ex, "setex")
}

/// # Format
/// `PSETEX key milliseconds value` → `OK`. Logged as `SET key value PXAT at`.
fn psetex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    set_with_ttl(ctx, argv, ExpireUnit::Px, "psetex")
}

/// # Format
/// `GETSET key value` → the previous value, or nil. Clears the TTL.
fn getset(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let value = a.bytes()?;
    let old = bulk_or_nil(ctx.get::<StrValue>(key)?);
    ctx.set_value(key, Value::Str(StrValue::new(value)));
    ctx.modified(key);
    ctx.notify(b'$', "set", key);
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(b"SET"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(value),
    ]]);
    Ok(old)
}

/// # Format
/// `GETDEL key` → the value, or nil; the key is deleted. Logged as `DEL key`.
fn getdel(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let Some(v) = ctx.get::<StrValue>(key)?.map(StrValue::to_bytes) else {
        return Ok(Reply::Nil);
    };
    ctx.delete(key);
    ctx.modified(key);
    ctx.notify(b'g', "del", key);
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(b"DEL"),
        Bytes::copy_from_slice(key),
    ]]);
    Ok(Reply::Bulk(v))
}

/// # Format
/// `GETEX key [EX s|PX ms|EXAT unix-s|PXAT unix-ms|PERSIST]` → the value,
/// or nil; sets or removes the TTL. A deadline already past deletes the
/// key. Logged as `PEXPIREAT`, `DEL` or `PERSIST`.
fn getex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let o = parse_ext_options(a.rest(), false)?;
    let Some(v) = ctx.get::<StrValue>(key)?.map(StrValue::to_bytes) else {
        return Ok(Reply::Nil);
    };
    let deadline = match o.expire {
        Some((unit, raw)) => Some((unit, deadline(ctx.clock, unit, raw, "getex")?)),
        None => None,
    };
    let k = Bytes::copy_from_slice(key);
    match deadline {
        Some((ExpireUnit::ExAt | ExpireUnit::PxAt, at)) if at <= ctx.clock => {
            ctx.delete(key);
            ctx.modified(key);
            ctx.notify(b'g', "del", key);
            ctx.rewrite_as(vec![vec![Bytes::from_static(b"DEL"), k]]);
        }
        Some((_, at)) => {
            ctx.db().set_expire(key, Some(at));
            ctx.modified(key);
            ctx.notify(b'g', "expire", key);
            let at = Bytes::from(at.to_string());
            ctx.rewrite_as(vec![vec![Bytes::from_static(b"PEXPIREAT"), k, at]]);
        }
        None if o.persist => {
            let had_ttl = ctx
                .entry_for_write(key)
                .is_some_and(|e| e.expire_at().is_some());
            if had_ttl {
                ctx.db().set_expire(key, None);
                ctx.modified(key);
                ctx.notify(b'g', "persist", key);
                ctx.rewrite_as(vec![vec![Bytes::from_static(b"PERSIST"), k]]);
            }
        }
        None => {}
    }
    Ok(Reply::Bulk(v))
}

/// # Format
/// `MGET key [key ...]` → an array with each value, nil for missing keys
/// and keys of another type.
fn mget(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    // One buffer for every value: no allocation per element.
    let mut out = BulkList::with_capacity(argv.len() - 1, 0);
    for key in &argv[1..] {
        match ctx.value(key) {
            Some(Value::Str(v)) => out.push(v),
            _ => out.push_nil(),
        }
    }
    Ok(Reply::Bulks(out))
}

fn check_pairs(argv: &[&[u8]], cmd: &str) -> CmdResult<()> {
    if argv.len().is_multiple_of(2) {
        return Err(Error::WrongArity(cmd.to_string()));
    }
    Ok(())
}

fn set_pairs(ctx: &mut Ctx, argv: &[&[u8]]) {
    for pair in argv[1..].chunks_exact(2) {
        ctx.set_value(pair[0], Value::Str(StrValue::new(pair[1])));
        ctx.modified(pair[0]);
        ctx.notify(b'$', "set", pair[0]);
    }
}

/// # Format
/// `MSET key value [key value ...]` → `OK`. Clears the TTL of each key.
fn mset(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    check_pairs(argv, "mset")?;
    set_pairs(ctx, argv);
    Ok(Reply::Ok)
}

/// # Format
/// `MSETNX key value [key value ...]` → 1 if all keys were set, 0 (and
/// nothing set) if any of them exists.
fn msetnx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    check_pairs(argv, "msetnx")?;
    for pair in argv[1..].chunks_exact(2) {
        if ctx.exists(pair[0]) {
            return Ok(Reply::Int(0));
        }
    }
    set_pairs(ctx, argv);
    Ok(Reply::Int(1))
}

/// # Format
/// `APPEND key value` → the length after appending (creating the key if
/// needed, even with an empty value). Keeps the TTL.
fn append(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let value = a.bytes()?;
    let len = match ctx.get_for_write::<StrValue>(key)?.map(|v| v.len()) {
        None => {
            ctx.set_value(key, Value::Str(StrValue::new(value)));
            value.len()
        }
        Some(old) => {
            if exceeds_max_len(ctx, old as u64, value.len() as u64) {
                return Err(Error::StringTooLong);
            }
            let b = ctx.get_mut::<StrValue>(key)?.ok_or(Error::NoSuchKey)?;
            edit_bytes(b, |m| {
                m.extend_from_slice(value);
                m.len()
            })
        }
    };
    ctx.modified(key);
    ctx.notify(b'$', "append", key);
    Ok(Reply::Int(len as i64))
}

/// # Format
/// `STRLEN key` → the length of the value, 0 for a missing key.
fn strlen(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    Ok(Reply::Int(
        ctx.get::<StrValue>(key)?.map_or(0, |v| v.len() as i64),
    ))
}

/// # Format
/// `GETRANGE key start end` (and its old name `SUBSTR`) → the bytes from
/// `start` to `end` inclusive, negative offsets counting from the end;
/// an empty string when the range is empty or the key missing.
fn getrange(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let mut start = a.i64()?;
    let mut end = a.i64()?;
    let Some(v) = ctx.get::<StrValue>(key)? else {
        return Ok(Reply::Bulk(Bytes::new()));
    };
    let len = v.len() as i64;
    if start < 0 && end < 0 && start > end {
        return Ok(Reply::Bulk(Bytes::new()));
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0).min(len - 1);
    if start > end || len == 0 {
        return Ok(Reply::Bulk(Bytes::new()));
    }
    Ok(Reply::Bulk(v.slice(start as usize..=end as usize)))
}

/// # Format
/// `SETRANGE key offset value` → the length after writing `value` at
/// `offset` (zero-padding as needed). Keeps the TTL.
fn setrange(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let offset = a.i64()?;
    let value = a.bytes()?;
    if offset < 0 {
        return Err(Error::msg("ERR offset is out of range"));
    }
    let offset = offset as u64;
    let old_len = ctx.get_for_write::<StrValue>(key)?.map(|v| v.len());
    if value.is_empty() {
        return Ok(Reply::Int(old_len.unwrap_or(0) as i64));
    }
    if exceeds_max_len(ctx, offset, value.len() as u64) {
        return Err(Error::StringTooLong);
    }
    let (offset, end) = (offset as usize, offset as usize + value.len());
    if old_len.is_none() {
        ctx.set_value(key, Value::Str(StrValue::default()));
    }
    let b = ctx.get_mut::<StrValue>(key)?.ok_or(Error::NoSuchKey)?;
    let len = edit_bytes(b, |m| {
        if m.len() < end {
            m.resize(end, 0);
        }
        m[offset..end].copy_from_slice(value);
        m.len()
    });
    ctx.modified(key);
    ctx.notify(b'$', "setrange", key);
    Ok(Reply::Int(len as i64))
}
