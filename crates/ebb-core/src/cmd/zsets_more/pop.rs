//! ZPOPMIN, ZPOPMAX, BZPOPMIN, BZPOPMAX, ZMPOP and BZMPOP.

use bytes::Bytes;

use crate::args::{parse_i64, Args};
use crate::cmd::timeout::parse_timeout;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::ZSetValue;

/// Which end of the sorted set a pop takes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum End {
    Min,
    Max,
}

impl End {
    fn is_max(self) -> bool {
        self == End::Max
    }

    fn event(self) -> &'static str {
        match self {
            End::Min => "zpopmin",
            End::Max => "zpopmax",
        }
    }

    fn plain_command(self) -> &'static [u8] {
        match self {
            End::Min => b"ZPOPMIN",
            End::Max => b"ZPOPMAX",
        }
    }
}

/// How a pop's result is shaped.
#[derive(Clone, Copy)]
enum Shape {
    /// `member score …` flat (ZPOP* in RESP2, or without COUNT).
    Flat,
    /// `[member score] …` (ZPOP* with COUNT in RESP3).
    Pairs,
    /// `key member score` (BZPOP*).
    KeyFlat,
    /// `key [[member score] …]` (ZMPOP, BZMPOP).
    KeyPairs,
}

/// Pops up to `count` members of `key` (which must hold a non-empty sorted
/// set), reporting the change. Returns the members and scores.
fn pop_members(ctx: &mut Ctx, key: &[u8], end: End, count: usize) -> CmdResult<Vec<(Bytes, f64)>> {
    let mut out = Vec::new();
    if let Some(z) = ctx.get_mut::<ZSetValue>(key)? {
        while out.len() < count {
            match z.pop(end.is_max()) {
                Some(e) => out.push(e),
                None => break,
            }
        }
    }
    if !out.is_empty() {
        ctx.notify(b'z', end.event(), key);
        ctx.modified(key);
        ctx.fx.dirty += out.len() as u64 - 1;
    }
    Ok(out)
}

fn pair(m: Bytes, s: f64) -> Reply {
    Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)])
}

fn shape_reply(key: &[u8], popped: Vec<(Bytes, f64)>, shape: Shape) -> Reply {
    match shape {
        Shape::Flat | Shape::KeyFlat => {
            let mut v = Vec::with_capacity(popped.len() * 2 + 1);
            if matches!(shape, Shape::KeyFlat) {
                v.push(Reply::bulk(key));
            }
            for (m, s) in popped {
                v.push(Reply::Bulk(m));
                v.push(Reply::Double(s));
            }
            Reply::Array(v)
        }
        Shape::Pairs => Reply::Array(popped.into_iter().map(|(m, s)| pair(m, s)).collect()),
        Shape::KeyPairs => Reply::Array(vec![
            Reply::bulk(key),
            Reply::Array(popped.into_iter().map(|(m, s)| pair(m, s)).collect()),
        ]),
    }
}

/// The first key holding a sorted set; WRONGTYPE stops the search at the
/// first key of another type, as Redis checks each key in turn.
fn first_nonempty(ctx: &mut Ctx, keys: &[&[u8]]) -> CmdResult<Option<Bytes>> {
    for k in keys {
        if ctx.get::<ZSetValue>(k)?.is_some_and(|z| !z.is_empty()) {
            return Ok(Some(Bytes::copy_from_slice(k)));
        }
    }
    Ok(None)
}

/// Reads ZPOP*'s optional count: Redis uses one message for both a
/// non-number and a negative number.
fn parse_pop_count(arg: &[u8]) -> CmdResult<usize> {
    match parse_i64(arg) {
        Some(n) if n >= 0 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => Err(Error::MustBePositive),
    }
}

/// # Format
/// `ZPOPMIN key [count]` → without count, `[member, score]` (empty array
/// when the key is missing); with count, up to count members with their
/// scores: flat in RESP2, `[member, score]` pairs in RESP3.
pub(super) fn zpopmin(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    zpop(ctx, argv, End::Min)
}

/// # Format
/// `ZPOPMAX key [count]` → as ZPOPMIN, taking the highest scores first.
pub(super) fn zpopmax(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    zpop(ctx, argv, End::Max)
}

fn zpop(ctx: &mut Ctx, argv: &[&[u8]], end: End) -> CmdResult<Reply> {
    if argv.len() > 3 {
        return Err(Error::Syntax);
    }
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let count = match a.next() {
        Some(c) => Some(parse_pop_count(c)?),
        None => None,
    };
    if !ctx.check_type::<ZSetValue>(key)? || count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let shape = if ctx.resp3 && count.is_some() {
        Shape::Pairs
    } else {
        Shape::Flat
    };
    let popped = pop_members(ctx, key, end, count.unwrap_or(1))?;
    Ok(shape_reply(key, popped, shape))
}

/// # Format
/// `BZPOPMIN key [key …] timeout` → `[key, member, score]` from the first
/// non-empty sorted set, blocking up to `timeout` seconds (0 = forever)
/// while all are empty; a null array on timeout. Logged as `ZPOPMIN key`.
pub(super) fn bzpopmin(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bzpop(ctx, argv, End::Min)
}

/// # Format
/// `BZPOPMAX key [key …] timeout` → as BZPOPMIN, taking the highest score.
/// Logged as `ZPOPMAX key`.
pub(super) fn bzpopmax(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    bzpop(ctx, argv, End::Max)
}

fn bzpop(ctx: &mut Ctx, argv: &[&[u8]], end: End) -> CmdResult<Reply> {
    let (keys, last) = argv[1..].split_at(argv.len().saturating_sub(2));
    let timeout_ms = parse_timeout(last.first().ok_or(Error::Syntax)?)?;
    let Some(key) = first_nonempty(ctx, keys)? else {
        return block_or_nil(ctx, keys, timeout_ms);
    };
    let popped = pop_members(ctx, &key, end, 1)?;
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(end.plain_command()),
        key.clone(),
    ]]);
    Ok(shape_reply(&key, popped, Shape::KeyFlat))
}

/// Parks the client when allowed, else answers as a timeout would.
fn block_or_nil(ctx: &mut Ctx, keys: &[&[u8]], timeout_ms: u64) -> CmdResult<Reply> {
    if !ctx.may_block {
        // Nothing popped: nothing to log (a blocking pop is never logged
        // as itself), though due members it removed are.
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::NilArray);
    }
    let mut unique: Vec<Bytes> = Vec::with_capacity(keys.len());
    for k in keys {
        if !unique.iter().any(|u| u[..] == k[..]) {
            unique.push(Bytes::copy_from_slice(k));
        }
    }
    Err(Error::WouldBlock {
        keys: unique,
        timeout_ms,
    })
}

/// ZMPOP/BZMPOP arguments after the timeout: `numkeys key… MIN|MAX [COUNT n]`.
struct MultiPop<'a> {
    keys: &'a [&'a [u8]],
    end: End,
    count: usize,
}

/// Parses from `argv[numkeys_at]` on, with Redis's checks in Redis's order.
fn parse_multi_pop<'a>(argv: &'a [&'a [u8]], numkeys_at: usize) -> CmdResult<MultiPop<'a>> {
    let numkeys_err = || Error::msg("ERR numkeys should be greater than 0");
    let numkeys = parse_i64(argv[numkeys_at])
        .filter(|&n| n >= 1)
        .ok_or_else(numkeys_err)?;
    let first = numkeys_at + 1;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| first.checked_add(n))
        .filter(|&w| w < argv.len())
        .ok_or(Error::Syntax)?;
    let end = if argv[where_at].eq_ignore_ascii_case(b"MIN") {
        End::Min
    } else if argv[where_at].eq_ignore_ascii_case(b"MAX") {
        End::Max
    } else {
        return Err(Error::Syntax);
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < argv.len() {
        if count.is_none() && argv[j].eq_ignore_ascii_case(b"COUNT") && j + 1 < argv.len() {
            let n = parse_i64(argv[j + 1])
                .filter(|&n| n >= 1)
                .ok_or_else(|| Error::msg("ERR count should be greater than 0"))?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            j += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(MultiPop {
        keys: &argv[first..where_at],
        end,
        count: count.unwrap_or(1),
    })
}

/// Pops from the first non-empty key of `mp`; None when all are empty.
fn multi_pop(ctx: &mut Ctx, mp: &MultiPop) -> CmdResult<Option<Reply>> {
    let Some(key) = first_nonempty(ctx, mp.keys)? else {
        return Ok(None);
    };
    let popped = pop_members(ctx, &key, mp.end, mp.count)?;
    let n = Bytes::from(popped.len().to_string());
    ctx.rewrite_as(vec![vec![
        Bytes::from_static(mp.end.plain_command()),
        key.clone(),
        n,
    ]]);
    Ok(Some(shape_reply(&key, popped, Shape::KeyPairs)))
}

/// # Format
/// `ZMPOP numkeys key [key …] MIN|MAX [COUNT count]` → `[key, [[member,
/// score], …]]` from the first non-empty sorted set, or a null array when
/// all are empty. Logged as `ZPOPMIN|ZPOPMAX key n`.
pub(super) fn zmpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mp = parse_multi_pop(argv, 1)?;
    Ok(multi_pop(ctx, &mp)?.unwrap_or(Reply::NilArray))
}

/// # Format
/// `BZMPOP timeout numkeys key [key …] MIN|MAX [COUNT count]` → as ZMPOP,
/// blocking up to `timeout` seconds (0 = forever) while all keys are
/// empty; a null array on timeout.
pub(super) fn bzmpop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mp = parse_multi_pop(argv, 2)?;
    let timeout_ms = parse_timeout(argv[1])?;
    match multi_pop(ctx, &mp)? {
        Some(r) => Ok(r),
        None => block_or_nil(ctx, mp.keys, timeout_ms),
    }
}
