//! The ZRANGE family (by rank, score and lexicographic range, forward and
//! reverse, with LIMIT and WITHSCORES), ZRANGESTORE and the ZREMRANGEBY*
//! removals, following Redis 7.0's zrangeGenericCommand and
//! zremrangeGenericCommand argument by argument.

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::{BulkList, Reply};
use crate::value::zset::{LexRange, ScoreRange};
use crate::value::{Value, ZSetValue};

use super::range::{parse_lex_range, parse_score_range};
use super::scored_reply;

/// How a range is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RangeKind {
    /// By 0-based rank (negative counts from the end).
    Rank,
    /// By score.
    Score,
    /// By member, lexicographically.
    Lex,
}

/// The bounds of a parsed range.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bounds {
    /// Start and end ranks, both included.
    Rank(i64, i64),
    /// A score interval.
    Score(ScoreRange),
    /// A lexicographic interval.
    Lex(LexRange),
}

/// A parsed ZRANGE-style request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RangeRequest {
    /// The bounds.
    pub bounds: Bounds,
    /// Highest first.
    pub rev: bool,
    /// WITHSCORES was given.
    pub withscores: bool,
    /// LIMIT offset (0 without LIMIT).
    pub offset: i64,
    /// LIMIT count (-1, meaning all, without LIMIT).
    pub count: i64,
}

fn long(arg: &[u8]) -> CmdResult<i64> {
    parse_i64(arg).ok_or(Error::NotInteger)
}

/// Parses `key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
/// [WITHSCORES]` starting at `argv[key_pos]`. `kind`/`rev` fixed by the
/// command (ZRANGEBYSCORE, ZREVRANGE, …) disable the matching keywords;
/// `store` (ZRANGESTORE) disables WITHSCORES.
pub(crate) fn parse_range_request(
    argv: &[&[u8]],
    key_pos: usize,
    store: bool,
    kind: Option<RangeKind>,
    rev: Option<bool>,
) -> CmdResult<RangeRequest> {
    let (mut kind, mut rev) = (kind, rev);
    let mut withscores = false;
    let (mut offset, mut count) = (0i64, -1i64);
    let mut j = key_pos + 3;
    while j < argv.len() {
        let arg = &argv[j];
        let left = argv.len() - j - 1;
        if !store && arg.eq_ignore_ascii_case(b"withscores") {
            withscores = true;
        } else if arg.eq_ignore_ascii_case(b"limit") && left >= 2 {
            offset = long(argv[j + 1])?;
            count = long(argv[j + 2])?;
            j += 2;
        } else if rev.is_none() && arg.eq_ignore_ascii_case(b"rev") {
            rev = Some(true);
        } else if kind.is_none() && arg.eq_ignore_ascii_case(b"bylex") {
            kind = Some(RangeKind::Lex);
        } else if kind.is_none() && arg.eq_ignore_ascii_case(b"byscore") {
            kind = Some(RangeKind::Score);
        } else {
            return Err(Error::Syntax);
        }
        j += 1;
    }
    let rev = rev.unwrap_or(false);
    let kind = kind.unwrap_or(RangeKind::Rank);
    // LIMIT 0 -1 is what "no LIMIT" looks like, so Redis accepts it here.
    if count != -1 && kind == RangeKind::Rank {
        return Err(Error::msg(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && kind == RangeKind::Lex {
        return Err(Error::msg(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    let (mut lo, mut hi) = (&argv[key_pos + 1], &argv[key_pos + 2]);
    if rev && kind != RangeKind::Rank {
        // Reverse score and lex ranges are written max first.
        std::mem::swap(&mut lo, &mut hi);
    }
    let bounds = match kind {
        RangeKind::Rank => Bounds::Rank(long(lo)?, long(hi)?),
        RangeKind::Score => Bounds::Score(parse_score_range(lo, hi)?),
        RangeKind::Lex => Bounds::Lex(parse_lex_range(lo, hi)?),
    };
    Ok(RangeRequest {
        bounds,
        rev,
        withscores,
        offset,
        count,
    })
}

/// Turns ZRANGE-style start/end ranks (negative from the end) into an
/// ascending rank span `lo..hi`, empty when out of range.
pub(crate) fn rank_span(len: usize, start: i64, end: i64) -> (usize, usize) {
    let n = len as i64;
    let mut start = if start < 0 {
        n.saturating_add(start)
    } else {
        start
    };
    let end = if end < 0 { n.saturating_add(end) } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= n {
        return (0, 0);
    }
    let end = end.min(n - 1);
    (start as usize, (end + 1) as usize)
}

/// Owned copies of (member, score) pairs, the members in one buffer.
fn owned<'a>(items: impl Iterator<Item = (&'a [u8], f64)> + Clone) -> Vec<(Bytes, f64)> {
    let total = items.clone().map(|(m, _)| m.len()).sum();
    let mut buf = bytes::BytesMut::with_capacity(total);
    for (m, _) in items.clone() {
        buf.extend_from_slice(m);
    }
    let buf = buf.freeze();
    let mut at = 0;
    items
        .map(|(m, s)| {
            at += m.len();
            (buf.slice(at - m.len()..at), s)
        })
        .collect()
}

/// Walks from rank `start` (downwards with `rev`), skips `offset` members,
/// then takes up to `count` (all if negative) while `keep` holds, as
/// Redis's range loops do.
fn walk<'a>(
    z: &'a ZSetValue,
    start: Option<usize>,
    rev: bool,
    offset: i64,
    count: i64,
    keep: impl Fn(&[u8], f64) -> bool,
) -> Vec<(&'a [u8], f64)> {
    let Some(start) = start else {
        return Vec::new();
    };
    let Ok(offset) = usize::try_from(offset) else {
        return Vec::new();
    };
    let max = usize::try_from(count).unwrap_or(usize::MAX);
    let take = |it: &mut dyn Iterator<Item = (&'a [u8], f64)>| {
        it.take(max)
            .take_while(|(m, s)| keep(m, *s))
            .collect::<Vec<_>>()
    };
    if rev {
        match start.checked_sub(offset) {
            Some(pos) => take(&mut z.range_by_rank(0, pos + 1).rev()),
            None => Vec::new(),
        }
    } else {
        match start.checked_add(offset) {
            Some(pos) if pos < z.len() => take(&mut z.range_by_rank(pos, z.len())),
            _ => Vec::new(),
        }
    }
}

/// The members (with scores) a range request selects, in reply order.
pub(crate) fn select<'a>(z: &'a ZSetValue, q: &RangeRequest) -> Vec<(&'a [u8], f64)> {
    match &q.bounds {
        Bounds::Rank(start, end) => {
            let (lo, hi) = rank_span(z.len(), *start, *end);
            if q.rev {
                // Reverse ranks count from the highest member.
                let n = z.len();
                z.range_by_rank(n - hi.min(n), n - lo.min(n))
                    .rev()
                    .collect()
            } else {
                z.range_by_rank(lo, hi).collect()
            }
        }
        Bounds::Score(r) if !q.rev && z.is_packed() => {
            // One pass over the packed entries (finding the first in range
            // and then walking from its rank would walk the buffer twice).
            let Ok(offset) = usize::try_from(q.offset) else {
                return Vec::new();
            };
            let max = usize::try_from(q.count).unwrap_or(usize::MAX);
            z.iter()
                .skip_while(|&(_, s)| !r.above_min(s))
                .take_while(|&(_, s)| r.below_max(s))
                .skip(offset)
                .take(max)
                .collect()
        }
        Bounds::Score(r) => {
            if q.rev {
                walk(z, z.score_last(r), true, q.offset, q.count, |_, s| {
                    r.above_min(s)
                })
            } else {
                walk(z, z.score_first(r), false, q.offset, q.count, |_, s| {
                    r.below_max(s)
                })
            }
        }
        Bounds::Lex(r) => {
            if q.rev {
                walk(z, z.lex_last(r), true, q.offset, q.count, |m, _| {
                    r.above_min(m)
                })
            } else {
                walk(z, z.lex_first(r), false, q.offset, q.count, |m, _| {
                    r.below_max(m)
                })
            }
        }
    }
}

fn range_generic(
    ctx: &mut Ctx,
    argv: &[&[u8]],
    kind: Option<RangeKind>,
    rev: Option<bool>,
) -> CmdResult<Reply> {
    let q = parse_range_request(argv, 1, false, kind, rev)?;
    let resp3 = ctx.resp3;
    let Some(z) = ctx.get::<ZSetValue>(argv[1])? else {
        return Ok(scored_reply(resp3, q.withscores, Vec::new()));
    };
    let items = select(z, &q);
    if !q.withscores {
        // Members only: copied once, back to back.
        let bytes = items.iter().map(|(m, _)| m.len()).sum();
        let mut list = BulkList::with_capacity(items.len(), bytes);
        for (m, _) in &items {
            list.push(m);
        }
        return Ok(Reply::Bulks(list));
    }
    Ok(scored_reply(resp3, true, owned(items.into_iter())))
}

/// # Format
/// `ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count]
/// [WITHSCORES]` → the members in the range (with WITHSCORES, each
/// followed by its score in RESP2, as [member, score] pairs in RESP3).
pub(crate) fn zrange(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, None, None)
}

/// # Format
/// `ZREVRANGE key start stop [WITHSCORES]` → the members by rank, highest
/// score first.
pub(crate) fn zrevrange(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, Some(RangeKind::Rank), Some(true))
}

/// # Format
/// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]` → the
/// members with a score in the range, lowest first.
pub(crate) fn zrangebyscore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, Some(RangeKind::Score), Some(false))
}

/// # Format
/// `ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]` → the
/// members with a score in the range, highest first.
pub(crate) fn zrevrangebyscore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, Some(RangeKind::Score), Some(true))
}

/// # Format
/// `ZRANGEBYLEX key min max [LIMIT offset count]` → the members between
/// min and max, in order.
pub(crate) fn zrangebylex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, Some(RangeKind::Lex), Some(false))
}

/// # Format
/// `ZREVRANGEBYLEX key max min [LIMIT offset count]` → the members between
/// min and max, in reverse order.
pub(crate) fn zrevrangebylex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    range_generic(ctx, argv, Some(RangeKind::Lex), Some(true))
}

/// # Format
/// `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]`
/// → the number of members stored in `dst` (replacing it; deleting it when
/// the range is empty). The stored members carry no deadline.
pub(crate) fn zrangestore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let q = parse_range_request(argv, 2, true, None, None)?;
    let dst = &argv[1];
    let items = match ctx.get::<ZSetValue>(argv[2])? {
        Some(z) => owned(select(z, &q).into_iter()),
        None => Vec::new(),
    };
    if items.is_empty() {
        if ctx.delete_stored(dst) {
            ctx.modified(dst);
            ctx.notify(b'g', "del", dst);
        }
        return Ok(Reply::Int(0));
    }
    let n = items.len();
    let mut z = ZSetValue::new();
    for (m, s) in items {
        z.insert(m, s);
    }
    ctx.set_value(dst, Value::from(z));
    ctx.modified(dst);
    ctx.notify(b'z', "zrangestore", dst);
    // Clients blocked on `dst` (BZPOPMIN and the like) may now be served.
    ctx.ready(dst);
    Ok(Reply::Int(n as i64))
}

fn remrange_generic(ctx: &mut Ctx, argv: &[&[u8]], kind: RangeKind) -> CmdResult<Reply> {
    let key = &argv[1];
    let bounds = match kind {
        RangeKind::Rank => Bounds::Rank(long(argv[2])?, long(argv[3])?),
        RangeKind::Score => Bounds::Score(parse_score_range(argv[2], argv[3])?),
        RangeKind::Lex => Bounds::Lex(parse_lex_range(argv[2], argv[3])?),
    };
    let Some(z) = ctx.get_mut::<ZSetValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    let (lo, hi) = match &bounds {
        Bounds::Rank(start, end) => rank_span(z.len(), *start, *end),
        Bounds::Score(r) => z.score_span(r),
        Bounds::Lex(r) => match z.lex_first(r) {
            Some(first) => (first, first + z.count_in_lex_range(r)),
            None => (0, 0),
        },
    };
    let removed = z.remove_rank_range(lo, hi).len();
    if removed > 0 {
        let event = match kind {
            RangeKind::Rank => "zremrangebyrank",
            RangeKind::Score => "zremrangebyscore",
            RangeKind::Lex => "zremrangebylex",
        };
        ctx.modified(key);
        ctx.notify(b'z', event, key);
    }
    Ok(Reply::Int(removed as i64))
}

/// # Format
/// `ZREMRANGEBYRANK key start stop` → the number of members removed.
pub(crate) fn zremrangebyrank(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    remrange_generic(ctx, argv, RangeKind::Rank)
}

/// # Format
/// `ZREMRANGEBYSCORE key min max` → the number of members removed.
pub(crate) fn zremrangebyscore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    remrange_generic(ctx, argv, RangeKind::Score)
}

/// # Format
/// `ZREMRANGEBYLEX key min max` → the number of members removed.
pub(crate) fn zremrangebylex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    remrange_generic(ctx, argv, RangeKind::Lex)
}
