//! The hashes family: the Redis 7.0 hash commands, plus the Redis 7.4/8.0
//! field-TTL write commands HSETEX (Redis 8 and Dragonfly grammars), HGETEX
//! and HGETDEL. Fields may carry deadlines: HSET/HSETNX/HMSET of an existing
//! field clear its deadline, HINCRBY/HINCRBYFLOAT keep it, HDEL removes it.
//!
//! Keyspace events carry the field names (member events) so that Redis 8.8
//! style subkey notifications can name them.

use bytes::Bytes;

use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::{BulkList, Reply};
use crate::table::CommandSpec;
use crate::value::{HashValue, Value};

mod field_ttl;
mod random_scan;
#[cfg(test)]
mod tests_basic;
#[cfg(test)]
mod tests_ttl;

use crate::cmd::strings::long_double::LongDouble;

/// The hashes family's commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("hset", -4, "write denyoom fast", (1, 1, 1), "hash", "Set the string value of a hash field", hset),
    CommandSpec::core("hsetnx", 4, "write denyoom fast", (1, 1, 1), "hash", "Set the value of a hash field, only if the field does not exist", hsetnx),
    CommandSpec::core("hmset", -4, "write denyoom fast", (1, 1, 1), "hash", "Set multiple hash fields to multiple values", hmset),
    CommandSpec::core("hget", 3, "readonly fast", (1, 1, 1), "hash", "Get the value of a hash field", hget),
    CommandSpec::core("hmget", -3, "readonly fast", (1, 1, 1), "hash", "Get the values of all the given hash fields", hmget),
    CommandSpec::core("hgetall", 2, "readonly", (1, 1, 1), "hash", "Get all the fields and values in a hash", hgetall),
    CommandSpec::core("hdel", -3, "write fast", (1, 1, 1), "hash", "Delete one or more hash fields", hdel),
    CommandSpec::core("hlen", 2, "readonly fast", (1, 1, 1), "hash", "Get the number of fields in a hash", hlen),
    CommandSpec::core("hexists", 3, "readonly fast", (1, 1, 1), "hash", "Determine if a hash field exists", hexists),
    CommandSpec::core("hkeys", 2, "readonly", (1, 1, 1), "hash", "Get all the fields in a hash", hkeys),
    CommandSpec::core("hvals", 2, "readonly", (1, 1, 1), "hash", "Get all the values in a hash", hvals),
    CommandSpec::core("hincrby", 4, "write denyoom fast", (1, 1, 1), "hash", "Increment the integer value of a hash field by the given number", hincrby),
    CommandSpec::core("hincrbyfloat", 4, "write denyoom fast", (1, 1, 1), "hash", "Increment the float value of a hash field by the given amount", hincrbyfloat),
    CommandSpec::core("hstrlen", 3, "readonly fast", (1, 1, 1), "hash", "Get the length of the value of a hash field", hstrlen),
    CommandSpec::core("hrandfield", -2, "readonly", (1, 1, 1), "hash", "Get one or multiple random fields from a hash", random_scan::hrandfield),
    CommandSpec::core("hscan", -3, "readonly", (1, 1, 1), "hash", "Incrementally iterate hash fields and associated values", random_scan::hscan),
    CommandSpec::core("hsetex", -5, "write denyoom fast", (1, 1, 1), "hash", "Set the value of one or more fields of a hash and optionally their expiration time", field_ttl::hsetex),
    CommandSpec::core("hgetex", -5, "write fast", (1, 1, 1), "hash", "Get the value of one or more fields of a hash and optionally set or remove their expiration time", field_ttl::hgetex),
    CommandSpec::core("hgetdel", -5, "write fast", (1, 1, 1), "hash", "Get and delete the value of one or more fields of a hash", field_ttl::hgetdel),
];

/// A copy of argument bytes that does not pin the read buffer.
fn owned(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}

/// Runs `write` on the hash at `key`, creating the key when `write` leaves
/// a new hash non-empty. Returns what `write` returns and whether the key
/// was created and left empty (Redis then reports a `del` for it).
fn write_hash<R>(
    ctx: &mut Ctx,
    key: &[u8],
    write: impl FnOnce(&mut HashValue) -> R,
) -> CmdResult<(R, bool)> {
    if let Some(h) = ctx.get_mut::<HashValue>(key)? {
        return Ok((write(h), false));
    }
    let mut h = HashValue::new();
    let r = write(&mut h);
    if h.is_empty() {
        return Ok((r, true));
    }
    ctx.set_value(key, Value::from(h));
    Ok((r, false))
}

/// Records a change of `n` fields of `key` (WATCH, dirty counter).
fn changed(ctx: &mut Ctx, key: &[u8], n: usize) {
    ctx.modified(key);
    ctx.fx.dirty += n.saturating_sub(1) as u64;
}

/// # Format
/// `HSET key field value [field value ...]` → the number of fields created.
fn hset(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let created = set_pairs(ctx, argv, "hset")?;
    Ok(Reply::Int(created))
}

/// # Format
/// `HMSET key field value [field value ...]` → OK.
fn hmset(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    set_pairs(ctx, argv, "hmset")?;
    Ok(Reply::Ok)
}

/// Sets the field/value pairs of HSET and HMSET (clearing the deadlines of
/// existing fields); returns how many fields were created.
fn set_pairs(ctx: &mut Ctx, argv: &[&[u8]], name: &str) -> CmdResult<i64> {
    if argv.len() % 2 == 1 {
        return Err(Error::WrongArity(name.to_string()));
    }
    let key = &argv[1];
    let pairs = &argv[2..];
    let (created, _) = write_hash(ctx, key, |h| {
        if let Some(n) = h.fill_packed(pairs) {
            return n as i64;
        }
        h.expect(pairs.len() / 2);
        let mut created = 0;
        for p in pairs.chunks_exact(2) {
            if h.insert(p[0], p[1]) {
                created += 1;
            }
        }
        created
    })?;
    changed(ctx, key, pairs.len() / 2);
    if ctx.notifies() {
        let fields = pairs.iter().step_by(2).map(|f| Bytes::copy_from_slice(f));
        ctx.notify_members(b'h', "hset", key, fields.collect());
    }
    Ok(created)
}

/// # Format
/// `HSETNX key field value` → 1 if the field was set, 0 if it existed.
fn hsetnx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let (key, field, value) = (&argv[1], &argv[2], &argv[3]);
    if ctx
        .get_for_write::<HashValue>(key)?
        .is_some_and(|h| h.contains(field))
    {
        return Ok(Reply::Int(0));
    }
    write_hash(ctx, key, |h| h.insert(owned(field), owned(value)))?;
    changed(ctx, key, 1);
    ctx.notify_members(b'h', "hset", key, vec![owned(field)]);
    Ok(Reply::Int(1))
}

/// # Format
/// `HGET key field` → the value, or nil.
fn hget(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let (key, field) = (&argv[1], &argv[2]);
    Ok(
        match ctx.get::<HashValue>(key)?.and_then(|h| h.get(field)) {
            Some(v) => Reply::Bulk(Bytes::copy_from_slice(v)),
            None => Reply::Nil,
        },
    )
}

/// # Format
/// `HMGET key field [field ...]` → an array of values (nil for missing
/// fields, all nil for a missing key).
fn hmget(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let h = ctx.get::<HashValue>(argv[1])?;
    let mut out = BulkList::with_capacity(argv.len() - 2, 0);
    for f in &argv[2..] {
        match h.and_then(|h| h.get(f)) {
            Some(v) => out.push(v),
            None => out.push_nil(),
        }
    }
    Ok(Reply::Bulks(out))
}

/// # Format
/// `HGETALL key` → a map of fields to values (a flat array in RESP2).
fn hgetall(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    // One buffer for every field and value: no allocation or reference
    // count per element.
    let h = ctx.get::<HashValue>(argv[1])?;
    let mut out = BulkList::pairs_with_capacity(h.map_or(0, HashValue::len), 0);
    for (f, v) in h.into_iter().flat_map(HashValue::iter) {
        out.push(f);
        out.push(v);
    }
    Ok(Reply::Bulks(out))
}

/// # Format
/// `HKEYS key` → an array of the fields.
fn hkeys(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    hash_column(ctx, argv, |(f, _)| f)
}

/// # Format
/// `HVALS key` → an array of the values.
fn hvals(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    hash_column(ctx, argv, |(_, v)| v)
}

/// HKEYS/HVALS: one part of every pair, copied back to back into one
/// reply buffer.
fn hash_column(
    ctx: &mut Ctx,
    argv: &[&[u8]],
    part: impl for<'a> Fn((&'a [u8], &'a [u8])) -> &'a [u8],
) -> CmdResult<Reply> {
    let h = ctx.get::<HashValue>(argv[1])?;
    let mut out = BulkList::with_capacity(h.map_or(0, HashValue::len), 0);
    for pair in h.into_iter().flat_map(HashValue::iter) {
        out.push(part(pair));
    }
    Ok(Reply::Bulks(out))
}

/// # Format
/// `HDEL key field [field ...]` → the number of fields removed (with their
/// deadlines); the key is deleted when its last field goes.
fn hdel(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    let Some(h) = ctx.get_mut::<HashValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    let mut deleted = Vec::new();
    for f in &argv[2..] {
        if h.remove(f).is_some() {
            deleted.push(owned(f));
            if h.is_empty() {
                break;
            }
        }
    }
    let n = deleted.len();
    if n > 0 {
        changed(ctx, key, n);
        ctx.notify_members(b'h', "hdel", key, deleted);
    }
    Ok(Reply::Int(n as i64))
}

/// # Format
/// `HLEN key` → the number of fields (0 for a missing key).
fn hlen(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let n = ctx.get::<HashValue>(argv[1])?.map_or(0, |h| h.len());
    Ok(Reply::Int(n as i64))
}

/// # Format
/// `HEXISTS key field` → 1 if the field exists, else 0.
fn hexists(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let found = ctx
        .get::<HashValue>(argv[1])?
        .is_some_and(|h| h.contains(argv[2]));
    Ok(Reply::Int(found as i64))
}

/// # Format
/// `HSTRLEN key field` → the length of the value, 0 if there is none.
fn hstrlen(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let n = ctx
        .get::<HashValue>(argv[1])?
        .and_then(|h| h.get(argv[2]))
        .map_or(0, |v| v.len());
    Ok(Reply::Int(n as i64))
}

/// # Format
/// `HINCRBY key field increment` → the new value. The field keeps its
/// deadline. Errors: `ERR hash value is not an integer`, overflow.
fn hincrby(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let field = a.bytes()?;
    let incr = a.i64()?;
    let old = match ctx
        .get_for_write::<HashValue>(key)?
        .and_then(|h| h.get(field))
    {
        Some(v) => parse_i64(v).ok_or_else(|| Error::msg("ERR hash value is not an integer"))?,
        None => 0,
    };
    let new = old.checked_add(incr).ok_or(Error::Overflow)?;
    write_hash(ctx, key, |h| {
        h.insert_keep_deadline(owned(field), Bytes::from(new.to_string()))
    })?;
    changed(ctx, key, 1);
    ctx.notify_members(b'h', "hincrby", key, vec![owned(field)]);
    Ok(Reply::Int(new))
}

/// # Format
/// `HINCRBYFLOAT key field increment` → the new value as a bulk string,
/// computed in extended precision like Redis. The field keeps its deadline;
/// logged as `HSETEX key KEEPTTL FIELDS 1 field value` so that replay
/// reproduces the value and keeps the deadline.
fn hincrbyfloat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let (key, field) = (&argv[1], &argv[2]);
    let incr = LongDouble::parse(argv[3]).ok_or(Error::NotFloat)?;
    if matches!(incr, LongDouble::Inf { .. }) {
        return Err(Error::msg("ERR value is NaN or Infinity"));
    }
    let old = match ctx
        .get_for_write::<HashValue>(key)?
        .and_then(|h| h.get(field))
    {
        Some(v) => {
            LongDouble::parse(v).ok_or_else(|| Error::msg("ERR hash value is not a float"))?
        }
        None => LongDouble::ZERO,
    };
    let new = old
        .checked_add(incr)
        .ok_or_else(|| Error::msg("ERR increment would produce NaN or Infinity"))?;
    let text = Bytes::from(new.to_human_string());
    write_hash(ctx, key, |h| {
        h.insert_keep_deadline(owned(field), text.clone())
    })?;
    changed(ctx, key, 1);
    ctx.notify_members(b'h', "hincrbyfloat", key, vec![owned(field)]);
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(b"HSETEX"),
        owned(key),
        Bytes::from_static(b"KEEPTTL"),
        Bytes::from_static(b"FIELDS"),
        Bytes::from_static(b"1"),
        owned(field),
        text.clone(),
    ]]);
    Ok(Reply::Bulk(text))
}
