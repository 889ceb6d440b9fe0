//! The lists family: pushes, pops, ranges, LINSERT/LREM/LTRIM/LPOS, LMOVE
//! and LMPOP. The blocking forms live in `lists_blocking.rs` and share the
//! helpers at the end of this file.

use bytes::Bytes;

use crate::args::{parse_i64, Args};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::list::{resolve_index, resolve_range, End, PosQuery};
use crate::value::{ListValue, Value};

/// The lists family's commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("lpush", -3, "write denyoom fast", (1, 1, 1), "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", lpush),
    CommandSpec::core("rpush", -3, "write denyoom fast", (1, 1, 1), "list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", rpush),
    CommandSpec::core("lpushx", -3, "write denyoom fast", (1, 1, 1), "list", "Prepends one or more elements to a list only when the list exists.", lpushx),
    CommandSpec::core("rpushx", -3, "write denyoom fast", (1, 1, 1), "list", "Appends an element to a list only when the list exists.", rpushx),
    CommandSpec::core("lpop", -2, "write fast", (1, 1, 1), "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", lpop),
    CommandSpec::core("rpop", -2, "write fast", (1, 1, 1), "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", rpop),
    CommandSpec::core("llen", 2, "readonly fast", (1, 1, 1), "list", "Returns the length of a list.", llen),
    CommandSpec::core("lrange", 4, "readonly", (1, 1, 1), "list", "Returns a range of elements from a list.", lrange),
    CommandSpec::core("lindex", 3, "readonly", (1, 1, 1), "list", "Returns an element from a list by its index.", lindex),
    CommandSpec::core("lset", 4, "write denyoom", (1, 1, 1), "list", "Sets the value of an element in a list by its index.", lset),
    CommandSpec::core("linsert", 5, "write denyoom", (1, 1, 1), "list", "Inserts an element before or after another element in a list.", linsert),
    CommandSpec::core("lrem", 4, "write", (1, 1, 1), "list", "Removes elements from a list. Deletes the list if the last element was removed.", lrem),
    CommandSpec::core("ltrim", 4, "write", (1, 1, 1), "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", ltrim),
    CommandSpec::core("lpos", -3, "readonly", (1, 1, 1), "list", "Returns the index of matching elements in a list.", lpos),
    CommandSpec::core("rpoplpush", 3, "write denyoom", (1, 2, 1), "list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", rpoplpush),
    CommandSpec::core("lmove", 5, "write denyoom", (1, 2, 1), "list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", lmove),
    CommandSpec::core("lmpop", -4, "write movablekeys", (0, 0, 0), "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", lmpop)
        .with_keys(lmpop_keys),
];

/// Records a change of `key` that counts `n` toward the dirty counter.
fn changed(ctx: &mut Ctx, key: &[u8], n: usize) {
    ctx.modified(key);
    ctx.fx.dirty += (n as u64).saturating_sub(1);
}

fn push(ctx: &mut Ctx, argv: &[&[u8]], end: End, only_existing: bool) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let items = a.rest();
    if only_existing && !ctx.check_type::<ListValue>(key)? {
        return Ok(Reply::Int(0));
    }
    let len = push_all(ctx, key, end, items)? as i64;
    changed(ctx, key, items.len());
    ctx.notify(b'l', end.push_name(), key);
    ctx.ready(key);
    Ok(Reply::Int(len))
}

/// # Format
/// `LPUSH key element [element ...]` → the length of the list after the
/// pushes; each element goes to the head in turn.
fn lpush(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    push(ctx, argv, End::Left, false)
}

/// # Format
/// `RPUSH key element [element ...]` → the length of the list after the
/// pushes to the tail.
fn rpush(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    push(ctx, argv, End::Right, false)
}

/// # Format
/// `LPUSHX key element [element ...]` → the new length, or 0 (and nothing
/// pushed) when the key does not exist.
fn lpushx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    push(ctx, argv, End::Left, true)
}

/// # Format
/// `RPUSHX key element [element ...]` → the new length, or 0 when the key
/// does not exist.
fn rpushx(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    push(ctx, argv, End::Right, true)
}

fn pop(ctx: &mut Ctx, argv: &[&[u8]], end: End) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let count = match a.remaining() {
        0 => None,
        1 => Some(positive(a.bytes()?, Error::MustBePositive)?),
        _ => return Err(Error::WrongArity(end.pop_name().into())),
    };
    let Some(list) = ctx.get_mut::<ListValue>(key)? else {
        return Ok(if count.is_some() {
            Reply::NilArray
        } else {
            Reply::Nil
        });
    };
    let reply = match count {
        Some(0) => return Ok(Reply::Array(Vec::new())),
        Some(n) => Reply::bulks(list.pop_many(end, clamp(n))),
        None => match list.pop_at(end) {
            Some(v) => Reply::Bulk(v),
            None => return Ok(Reply::Nil),
        },
    };
    let n = match &reply {
        Reply::Array(items) => items.len(),
        _ => 1,
    };
    popped(ctx, key, end, n);
    Ok(reply)
}

/// # Format
/// `LPOP key [count]` → without count the head element, or nil when the key
/// does not exist; with count an array of up to count elements, a null
/// array when the key does not exist.
fn lpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    pop(ctx, argv, End::Left)
}

/// # Format
/// `RPOP key [count]` → as LPOP, from the tail.
fn rpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    pop(ctx, argv, End::Right)
}

/// # Format
/// `LLEN key` → the length of the list, 0 when the key does not exist.
fn llen(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    Ok(Reply::Int(
        ctx.get::<ListValue>(key)?.map_or(0, |l| l.len() as i64),
    ))
}

/// # Format
/// `LRANGE key start stop` → the elements from start to stop inclusive
/// (negative indexes count from the tail), an empty array when none.
fn lrange(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let start = a.i64()?;
    let stop = a.i64()?;
    let Some(list) = ctx.get::<ListValue>(key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    Ok(match resolve_range(list.len(), start, stop) {
        None => Reply::Array(Vec::new()),
        Some((s, e)) => Reply::Bulks(list.range(s, e)),
    })
}

/// # Format
/// `LINDEX key index` → the element at index (negative from the tail), or
/// nil when out of range or the key does not exist.
fn lindex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let raw = a.bytes()?;
    // Redis looks the key up before it parses the index.
    let Some(list) = ctx.get::<ListValue>(key)? else {
        return Ok(Reply::Nil);
    };
    let index = parse_i64(raw).ok_or(Error::NotInteger)?;
    Ok(match resolve_index(list.len(), index) {
        Some(i) => list.get(i).map_or(Reply::Nil, Reply::Bulk),
        None => Reply::Nil,
    })
}

/// # Format
/// `LSET key index element` → OK; `ERR no such key` when the key does not
/// exist, `ERR index out of range` when index is outside the list.
fn lset(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let raw = a.bytes()?;
    let value = a.owned()?;
    let Some(list) = ctx.get_mut::<ListValue>(key)? else {
        return Err(Error::NoSuchKey);
    };
    let index = parse_i64(raw).ok_or(Error::NotInteger)?;
    let i = resolve_index(list.len(), index).ok_or(Error::IndexOutOfRange)?;
    list.set(i, value);
    changed(ctx, key, 1);
    ctx.notify(b'l', "lset", key);
    Ok(Reply::Ok)
}

/// # Format
/// `LINSERT key BEFORE|AFTER pivot element` → the new length, -1 when the
/// pivot is not found, 0 when the key does not exist.
fn linsert(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let after = if a.eat("AFTER") {
        true
    } else if a.eat("BEFORE") {
        false
    } else {
        return Err(Error::Syntax);
    };
    let pivot = a.bytes()?;
    let value = a.owned()?;
    let Some(list) = ctx.get_mut::<ListValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    if !list.insert_at_pivot(pivot, value, after) {
        return Ok(Reply::Int(-1));
    }
    let len = list.len() as i64;
    changed(ctx, key, 1);
    ctx.notify(b'l', "linsert", key);
    Ok(Reply::Int(len))
}

/// # Format
/// `LREM key count element` → the number of elements equal to element
/// removed: the first count from the head if count > 0, from the tail if
/// count < 0, all if 0.
fn lrem(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let count = a.i64()?;
    let value = a.bytes()?;
    let Some(list) = ctx.get_mut::<ListValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    let removed = list.remove_matching(value, count);
    if removed > 0 {
        changed(ctx, key, removed);
        ctx.notify(b'l', "lrem", key);
    }
    Ok(Reply::Int(removed as i64))
}

/// # Format
/// `LTRIM key start stop` → OK; keeps only the elements from start to stop
/// inclusive, deleting the key when none remain.
fn ltrim(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let start = a.i64()?;
    let stop = a.i64()?;
    let Some(list) = ctx.get_mut::<ListValue>(key)? else {
        return Ok(Reply::Ok);
    };
    let removed = list.trim_to(start, stop);
    // Redis signals and notifies even when nothing was trimmed, but only
    // counts removed elements as changes.
    ctx.fx.touched.push((ctx.db, Bytes::copy_from_slice(key)));
    ctx.fx.dirty += removed as u64;
    ctx.notify(b'l', "ltrim", key);
    Ok(Reply::Ok)
}

/// # Format
/// `LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]` → the
/// index of the first match (nil when none); with COUNT an array of up to
/// num-matches indexes (0 = all). A negative RANK searches from the tail.
fn lpos(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let value = a.bytes()?;
    let mut q = PosQuery {
        rank: 1,
        count: None,
        maxlen: 0,
    };
    while let Some(opt) = a.next() {
        let has_arg = !a.is_done();
        if opt.eq_ignore_ascii_case(b"RANK") && has_arg {
            q.rank = a.i64()?;
            if q.rank == 0 {
                return Err(Error::msg(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the \
                     second ... or use negative to start from the end of the list",
                ));
            }
        } else if opt.eq_ignore_ascii_case(b"COUNT") && has_arg {
            q.count = Some(positive(
                a.bytes()?,
                Error::msg("ERR COUNT can't be negative"),
            )?);
        } else if opt.eq_ignore_ascii_case(b"MAXLEN") && has_arg {
            q.maxlen = positive(a.bytes()?, Error::msg("ERR MAXLEN can't be negative"))?;
        } else {
            return Err(Error::Syntax);
        }
    }
    let Some(list) = ctx.get::<ListValue>(key)? else {
        return Ok(if q.count.is_some() {
            Reply::Array(Vec::new())
        } else {
            Reply::Nil
        });
    };
    let found = list.positions(value, q);
    Ok(match q.count {
        Some(_) => Reply::Array(found.into_iter().map(|i| Reply::Int(i as i64)).collect()),
        None => found.first().map_or(Reply::Nil, |&i| Reply::Int(i as i64)),
    })
}

/// # Format
/// `RPOPLPUSH source destination` → the element moved from the tail of
/// source to the head of destination, or nil when source does not exist.
fn rpoplpush(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let src = a.bytes()?;
    let dst = a.bytes()?;
    move_element(ctx, src, dst, End::Right, End::Left)
}

/// # Format
/// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT` → the element popped
/// from the given end of source and pushed at the given end of
/// destination, or nil when source does not exist.
fn lmove(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let src = a.bytes()?;
    let dst = a.bytes()?;
    let from = parse_end(a.bytes()?)?;
    let to = parse_end(a.bytes()?)?;
    move_element(ctx, src, dst, from, to)
}

/// # Format
/// `LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]` → `[key, [element
/// ...]]` for the first key holding a non-empty list, popping up to count
/// (default 1) elements; a null array when every key is missing.
fn lmpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let req = parse_mpop(argv, 1)?;
    Ok(mpop(ctx, req.keys, req.end, req.count)?.unwrap_or(Reply::NilArray))
}

/// Key positions of LMPOP.
fn lmpop_keys(argv: &[&[u8]]) -> Vec<usize> {
    numkeys_positions(argv, 1)
}

// ---------------------------------------------------------------------------
// Helpers shared with the blocking forms.

/// Pushes `items` at `end` of the list at `key`, creating it when absent;
/// returns the new length. A new list is built before it is stored, as the
/// keyspace drops empty collections as soon as they are stored.
fn push_all(ctx: &mut Ctx, key: &[u8], end: End, items: &[&[u8]]) -> CmdResult<usize> {
    if let Some(list) = ctx.get_mut::<ListValue>(key)? {
        items.iter().for_each(|v| list.push_slice(end, v));
        return Ok(list.len());
    }
    // A new list is built in one go.
    let list = ListValue::from_pushes(items, end);
    let len = list.len();
    ctx.set_value(key, Value::from(list));
    Ok(len)
}

/// Parses a count that must be `>= 0`; non-integers get the same error.
fn positive(arg: &[u8], err: Error) -> CmdResult<i64> {
    match parse_i64(arg) {
        Some(n) if n >= 0 => Ok(n),
        _ => Err(err),
    }
}

/// Clamps a non-negative count to `usize`.
fn clamp(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Parses `LEFT`/`RIGHT` or fails with a syntax error.
pub(crate) fn parse_end(arg: &[u8]) -> CmdResult<End> {
    End::parse(arg).ok_or(Error::Syntax)
}

/// Reports `n` elements popped from `end` of `key`: change, event. Emptied
/// lists are deleted (with their `del` event) when the command finishes.
pub(crate) fn popped(ctx: &mut Ctx, key: &[u8], end: End, n: usize) {
    ctx.notify(b'l', end.pop_name(), key);
    changed(ctx, key, n);
}

/// LMOVE's core: pops from `from` of `src` and pushes at `to` of `dst`.
/// Nil when `src` does not exist; WRONGTYPE when either key holds another
/// type (the destination is only checked when there is something to move).
pub(crate) fn move_element(
    ctx: &mut Ctx,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
) -> CmdResult<Reply> {
    let v = if src == dst {
        // A rotation: one lookup, the element moves within the list.
        let Some(list) = ctx.get_mut::<ListValue>(src)? else {
            return Ok(Reply::Nil);
        };
        let Some(v) = list.pop_at(from) else {
            return Ok(Reply::Nil);
        };
        list.push_slice(to, &v);
        v
    } else {
        if !ctx.check_type::<ListValue>(src)? {
            return Ok(Reply::Nil);
        }
        ctx.check_type::<ListValue>(dst)?;
        let Some(v) = ctx.get_mut::<ListValue>(src)?.and_then(|l| l.pop_at(from)) else {
            return Ok(Reply::Nil);
        };
        push_all(ctx, dst, to, &[&v[..]])?;
        v
    };
    // One element moved: one change in the dirty count, two keys touched.
    ctx.fx.touched.push((ctx.db, Bytes::copy_from_slice(dst)));
    ctx.notify(b'l', to.push_name(), dst);
    ctx.ready(dst);
    ctx.notify(b'l', from.pop_name(), src);
    ctx.modified(src);
    Ok(Reply::Bulk(v))
}

/// A parsed LMPOP/BLMPOP request.
pub(crate) struct MpopRequest<'a> {
    /// The keys, in order.
    pub keys: &'a [&'a [u8]],
    /// The end to pop from.
    pub end: End,
    /// How many elements to pop at most (>= 1).
    pub count: i64,
}

/// Parses `numkeys key... LEFT|RIGHT [COUNT n]` with numkeys at `at`.
pub(crate) fn parse_mpop<'a>(argv: &'a [&'a [u8]], at: usize) -> CmdResult<MpopRequest<'a>> {
    let numkeys = match argv.get(at).and_then(|n| parse_i64(n)) {
        Some(n) if n > 0 => n as u64,
        _ => return Err(Error::msg("ERR numkeys should be greater than 0")),
    };
    let first = at + 1;
    let where_at = (first as u64).saturating_add(numkeys);
    if where_at >= argv.len() as u64 {
        return Err(Error::Syntax);
    }
    let where_at = where_at as usize;
    let end = parse_end(argv[where_at])?;
    let mut count = None;
    let mut i = where_at + 1;
    while i < argv.len() {
        if count.is_none() && argv[i].eq_ignore_ascii_case(b"COUNT") && i + 1 < argv.len() {
            match parse_i64(argv[i + 1]) {
                Some(n) if n > 0 => count = Some(n),
                _ => return Err(Error::msg("ERR count should be greater than 0")),
            }
            i += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(MpopRequest {
        keys: &argv[first..where_at],
        end,
        count: count.unwrap_or(1),
    })
}

/// Pops up to `count` elements from the first key holding a list; `None`
/// when no key does. Logged as `LPOP|RPOP key n` so replay is exact.
pub(crate) fn mpop(
    ctx: &mut Ctx,
    keys: &[&[u8]],
    end: End,
    count: i64,
) -> CmdResult<Option<Reply>> {
    for key in keys {
        let Some(list) = ctx.get_mut::<ListValue>(key)? else {
            continue;
        };
        let items = list.pop_many(end, clamp(count));
        if items.is_empty() {
            continue;
        }
        let n = items.len();
        popped(ctx, key, end, n);
        ctx.rewrite_as(vec![vec![
            Bytes::from_static(if end == End::Left { b"LPOP" } else { b"RPOP" }),
            Bytes::copy_from_slice(key),
            Bytes::from(n.to_string()),
        ]]);
        return Ok(Some(Reply::Array(vec![
            Reply::bulk(key),
            Reply::bulks(items),
        ])));
    }
    Ok(None)
}

/// Key positions for `numkeys key... LEFT|RIGHT` with numkeys at `at`;
/// none when numkeys is invalid or leaves no room for the direction.
pub(crate) fn numkeys_positions(argv: &[&[u8]], at: usize) -> Vec<usize> {
    match argv.get(at).and_then(|n| parse_i64(n)) {
        Some(n) if n > 0 && (n as u64) < (argv.len() - at) as u64 - 1 => {
            (at + 1..=at + n as usize).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
