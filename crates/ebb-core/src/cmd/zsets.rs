//! Sorted sets: adds and increments, removals, scores, ranks, counts, the
//! ZRANGE family (in `ranges`) and ZADDEX, ZADD with a per-member TTL (in
//! `zaddex`).
//!
//! Pops, blocking pops, algebra, random members and scans live in
//! `zsets_more`; the helpers here marked `pub(crate)` (score and range
//! parsing, WITHSCORES replies, the ZADD core) are meant to be shared.

pub(crate) mod range;
pub(crate) mod ranges;
mod zaddex;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zaddex_tests;

use bytes::Bytes;

use crate::args::Args;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{MemberRef, Value, ZSetValue};

use range::{parse_lex_range, parse_score, parse_score_range};

const G: &str = "sorted-set";

/// The sorted-set commands of this file and its submodules.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "zadd",
        -4,
        "write denyoom fast",
        (1, 1, 1),
        G,
        "Adds members with scores, or updates their scores.",
        zadd,
    ),
    CommandSpec::core(
        "zincrby",
        4,
        "write denyoom fast",
        (1, 1, 1),
        G,
        "Adds an increment to the score of a member.",
        zincrby,
    ),
    CommandSpec::core(
        "zrem",
        -3,
        "write fast",
        (1, 1, 1),
        G,
        "Removes members.",
        zrem,
    ),
    CommandSpec::core(
        "zcard",
        2,
        "readonly fast",
        (1, 1, 1),
        G,
        "Returns the number of members.",
        zcard,
    ),
    CommandSpec::core(
        "zscore",
        3,
        "readonly fast",
        (1, 1, 1),
        G,
        "Returns the score of a member.",
        zscore,
    ),
    CommandSpec::core(
        "zmscore",
        -3,
        "readonly fast",
        (1, 1, 1),
        G,
        "Returns the scores of several members.",
        zmscore,
    ),
    CommandSpec::core(
        "zrank",
        3,
        "readonly fast",
        (1, 1, 1),
        G,
        "Returns the position of a member, lowest score first.",
        zrank,
    ),
    CommandSpec::core(
        "zrevrank",
        3,
        "readonly fast",
        (1, 1, 1),
        G,
        "Returns the position of a member, highest score first.",
        zrevrank,
    ),
    CommandSpec::core(
        "zcount",
        4,
        "readonly fast",
        (1, 1, 1),
        G,
        "Counts the members with a score in a range.",
        zcount,
    ),
    CommandSpec::core(
        "zlexcount",
        4,
        "readonly fast",
        (1, 1, 1),
        G,
        "Counts the members in a lexicographic range.",
        zlexcount,
    ),
    CommandSpec::core(
        "zrange",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members by rank, score or lexicographic range.",
        ranges::zrange,
    ),
    CommandSpec::core(
        "zrangebyscore",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members with a score in a range.",
        ranges::zrangebyscore,
    ),
    CommandSpec::core(
        "zrevrangebyscore",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members with a score in a range, highest first.",
        ranges::zrevrangebyscore,
    ),
    CommandSpec::core(
        "zrangebylex",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members in a lexicographic range.",
        ranges::zrangebylex,
    ),
    CommandSpec::core(
        "zrevrangebylex",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members in a lexicographic range, highest first.",
        ranges::zrevrangebylex,
    ),
    CommandSpec::core(
        "zrevrange",
        -4,
        "readonly",
        (1, 1, 1),
        G,
        "Returns members by rank, highest score first.",
        ranges::zrevrange,
    ),
    CommandSpec::core(
        "zrangestore",
        -5,
        "write denyoom",
        (1, 2, 1),
        G,
        "Stores a range of members in another key.",
        ranges::zrangestore,
    ),
    CommandSpec::core(
        "zremrangebyrank",
        4,
        "write",
        (1, 1, 1),
        G,
        "Removes the members in a rank range.",
        ranges::zremrangebyrank,
    ),
    CommandSpec::core(
        "zremrangebyscore",
        4,
        "write",
        (1, 1, 1),
        G,
        "Removes the members with a score in a range.",
        ranges::zremrangebyscore,
    ),
    CommandSpec::core(
        "zremrangebylex",
        4,
        "write",
        (1, 1, 1),
        G,
        "Removes the members in a lexicographic range.",
        ranges::zremrangebylex,
    ),
    CommandSpec::core(
        "zaddex",
        -6,
        "write denyoom fast",
        (1, 1, 1),
        G,
        "Adds members with scores and a time to live for each.",
        zaddex::zaddex,
    ),
];

/// Replies with members, and with `withscores` their scores: a flat array
/// of member, score, … in RESP2 and an array of [member, score] pairs in
/// RESP3, as Redis 7.0 does.
pub(crate) fn scored_reply(resp3: bool, withscores: bool, items: Vec<(Bytes, f64)>) -> Reply {
    if !withscores {
        return Reply::Array(items.into_iter().map(|(m, _)| Reply::Bulk(m)).collect());
    }
    if resp3 {
        let pairs = items
            .into_iter()
            .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]));
        return Reply::Array(pairs.collect());
    }
    let mut flat = Vec::with_capacity(items.len() * 2);
    for (m, s) in items {
        flat.push(Reply::Bulk(m));
        flat.push(Reply::Double(s));
    }
    Reply::Array(flat)
}

/// The ZADD options NX XX GT LT CH INCR.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing members.
    pub xx: bool,
    /// Only update when the new score is greater.
    pub gt: bool,
    /// Only update when the new score is less.
    pub lt: bool,
    /// Reply with added + updated instead of added.
    pub ch: bool,
    /// The score is an increment; reply with the new score.
    pub incr: bool,
}

impl AddFlags {
    /// Consumes the next argument if it is one of the flags.
    pub fn eat(&mut self, a: &mut Args) -> bool {
        let flag = match a.peek() {
            Some(f) if f.eq_ignore_ascii_case(b"nx") => &mut self.nx,
            Some(f) if f.eq_ignore_ascii_case(b"xx") => &mut self.xx,
            Some(f) if f.eq_ignore_ascii_case(b"gt") => &mut self.gt,
            Some(f) if f.eq_ignore_ascii_case(b"lt") => &mut self.lt,
            Some(f) if f.eq_ignore_ascii_case(b"ch") => &mut self.ch,
            Some(f) if f.eq_ignore_ascii_case(b"incr") => &mut self.incr,
            _ => return false,
        };
        *flag = true;
        a.next();
        true
    }

    /// Rejects the combinations ZADD rejects, with its texts.
    pub fn validate(&self, pairs: usize) -> CmdResult<()> {
        if self.nx && self.xx {
            return Err(Error::msg(
                "ERR XX and NX options at the same time are not compatible",
            ));
        }
        if (self.gt || self.lt) && (self.nx || (self.gt && self.lt)) {
            return Err(Error::msg(
                "ERR GT, LT, and/or NX options at the same time are not compatible",
            ));
        }
        if self.incr && pairs > 1 {
            return Err(Error::msg(
                "ERR INCR option supports a single increment-element pair",
            ));
        }
        Ok(())
    }
}

/// What [`add_member`] did to one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddOutcome {
    /// The member is new.
    Added,
    /// The member's score changed.
    Updated,
    /// The member was processed but kept its score.
    Unchanged,
    /// NX/XX/GT/LT skipped the member.
    Skipped,
}

/// Parses `score member …` pairs (`rest` is already checked to be a
/// non-empty even-length list); scores first, as ZADD does.
pub(crate) fn parse_pairs<'a>(rest: &'a [&'a [u8]]) -> CmdResult<Pairs<'a>> {
    if let [score, member] = rest {
        return Ok(Pairs::One([(parse_score(score)?, *member)]));
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for p in rest.chunks_exact(2) {
        pairs.push((parse_score(p[0])?, p[1]));
    }
    Ok(Pairs::Many(pairs))
}

/// A command's score-member pairs (one without an allocation).
pub(crate) type Pairs<'a> = crate::cmd::OneOrMany<(f64, &'a [u8])>;

/// ZADD's per-member step (Redis's zsetAdd): returns what happened and the
/// resulting score (the increment result with INCR, before storing, so a
/// new member added with INCR -0 reports -0 as Redis does).
pub(crate) fn add_member(
    z: &mut ZSetValue,
    f: &AddFlags,
    score: f64,
    member: &[u8],
) -> CmdResult<(AddOutcome, f64)> {
    let found = z.lookup(member);
    add_member_at(z, f, score, member, found).map(|(o, s, _)| (o, s))
}

/// [`add_member`] for a member already looked up (`found`: its handle and
/// score); also returns the member's handle unless it was skipped as absent.
pub(crate) fn add_member_at(
    z: &mut ZSetValue,
    f: &AddFlags,
    score: f64,
    member: &[u8],
    found: Option<(MemberRef, f64)>,
) -> CmdResult<(AddOutcome, f64, Option<MemberRef>)> {
    match found {
        Some((r, cur)) => {
            if f.nx {
                return Ok((AddOutcome::Skipped, cur, Some(r)));
            }
            let new = if f.incr { cur + score } else { score };
            if new.is_nan() {
                return Err(Error::ScoreNaN);
            }
            if (f.lt && new >= cur) || (f.gt && new <= cur) {
                return Ok((AddOutcome::Skipped, cur, Some(r)));
            }
            if new != cur {
                let r = z.set_score_at(r, new);
                Ok((AddOutcome::Updated, new, Some(r)))
            } else {
                Ok((AddOutcome::Unchanged, new, Some(r)))
            }
        }
        None => {
            if f.xx {
                return Ok((AddOutcome::Skipped, score, None));
            }
            Ok((AddOutcome::Added, score, Some(z.insert_new(member, score))))
        }
    }
}

/// Tally of one ZADD, for its reply.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AddTally {
    /// New members.
    pub added: usize,
    /// Members whose score changed.
    pub updated: usize,
    /// Members not skipped by NX/XX/GT/LT.
    pub processed: usize,
    /// The last resulting score (the INCR reply).
    pub score: f64,
}

impl AddTally {
    /// Counts one outcome.
    pub fn count(&mut self, outcome: AddOutcome, score: f64) {
        match outcome {
            AddOutcome::Added => self.added += 1,
            AddOutcome::Updated => self.updated += 1,
            _ => {}
        }
        if outcome != AddOutcome::Skipped {
            self.processed += 1;
        }
        self.score = score;
    }

    /// ZADD's reply: the new score (or nil) with INCR, else the count.
    pub fn reply(&self, f: &AddFlags) -> Reply {
        if f.incr {
            if self.processed > 0 {
                Reply::Double(self.score)
            } else {
                Reply::Nil
            }
        } else if f.ch {
            Reply::Int((self.added + self.updated) as i64)
        } else {
            Reply::Int(self.added as i64)
        }
    }
}

/// Runs `f` on the sorted set at `key`; when the key is absent, on a new
/// one that is stored only if `f` leaves it non-empty.
pub(crate) fn with_zset<R>(
    ctx: &mut Ctx,
    key: &[u8],
    f: impl FnOnce(&mut ZSetValue) -> R,
) -> CmdResult<R> {
    if let Some(z) = ctx.get_mut::<ZSetValue>(key)? {
        return Ok(f(z));
    }
    let mut z = ZSetValue::new();
    let r = f(&mut z);
    if !z.is_empty() {
        ctx.set_value(key, Value::from(z));
    }
    Ok(r)
}

/// # Format
/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member …]` →
/// the number of members added (added + changed with CH); with INCR the
/// member's new score, or nil when NX/XX/GT/LT stopped it.
fn zadd(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    zadd_generic(ctx, argv, AddFlags::default())
}

/// # Format
/// `ZINCRBY key increment member` → the member's new score (a double).
fn zincrby(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    zadd_generic(
        ctx,
        argv,
        AddFlags {
            incr: true,
            ..AddFlags::default()
        },
    )
}

fn zadd_generic(ctx: &mut Ctx, argv: &[&[u8]], mut f: AddFlags) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    while f.eat(&mut a) {}
    let rest = a.rest();
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(Error::Syntax);
    }
    f.validate(rest.len() / 2)?;
    let pairs = parse_pairs(rest)?;
    let mut t = AddTally::default();
    // Only XX needs to know beforehand whether the key exists (the write
    // below looks the key up anyway, type check included).
    if f.xx && !ctx.check_type::<ZSetValue>(key)? {
        return Ok(t.reply(&f));
    }
    let plain = !(f.nx || f.xx || f.gt || f.lt || f.ch || f.incr);
    let failed = with_zset(ctx, key, |z| {
        // Several pairs into a new set: built in one buffer (up to as many
        // pairs as the packed form holds members: more take the large
        // form's hash lookups, see `expect`).
        if plain && pairs.len() > 1 && pairs.len() <= crate::value::zpack::MAX_LEN {
            if let Some(n) = z.fill_packed(&pairs) {
                t.added = n;
                return None;
            }
        }
        let early = !f.xx && z.expect(pairs.len());
        let mut failed = None;
        for &(score, member) in pairs.iter() {
            match add_member(z, &f, score, member) {
                Ok((outcome, s)) => t.count(outcome, s),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if early {
            z.settle();
        }
        failed
    })?;
    if t.added + t.updated > 0 {
        ctx.modified(key);
        ctx.notify(b'z', if f.incr { "zincr" } else { "zadd" }, key);
    }
    if t.added > 0 {
        ctx.ready(key);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(t.reply(&f)),
    }
}

/// # Format
/// `ZREM key member [member …]` → the number of members removed.
fn zrem(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let members = a.rest();
    let Some(z) = ctx.get_mut::<ZSetValue>(key)? else {
        return Ok(Reply::Int(0));
    };
    let removed = members.iter().filter(|m| z.remove(m).is_some()).count();
    if removed > 0 {
        ctx.modified(key);
        ctx.notify(b'z', "zrem", key);
    }
    Ok(Reply::Int(removed as i64))
}

/// # Format
/// `ZCARD key` → the number of (live) members, 0 if the key is absent.
fn zcard(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let z = ctx.get::<ZSetValue>(argv[1])?;
    Ok(Reply::Int(z.map_or(0, |z| z.len()) as i64))
}

/// # Format
/// `ZSCORE key member` → the score (a double), or nil.
fn zscore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let z = ctx.get::<ZSetValue>(argv[1])?;
    Ok(match z.and_then(|z| z.score(argv[2])) {
        Some(s) => Reply::Double(s),
        None => Reply::Nil,
    })
}

/// # Format
/// `ZMSCORE key member [member …]` → an array with each member's score (a
/// double) or nil.
fn zmscore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let z = ctx.get::<ZSetValue>(argv[1])?;
    let scores = argv[2..].iter().map(|m| match z.and_then(|z| z.score(m)) {
        Some(s) => Reply::Double(s),
        None => Reply::Nil,
    });
    Ok(Reply::Array(scores.collect()))
}

/// # Format
/// `ZRANK key member` → the member's 0-based rank by ascending score, or nil.
fn zrank(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    rank_generic(ctx, argv, false)
}

/// # Format
/// `ZREVRANK key member` → the member's 0-based rank by descending score, or nil.
fn zrevrank(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    rank_generic(ctx, argv, true)
}

fn rank_generic(ctx: &mut Ctx, argv: &[&[u8]], rev: bool) -> CmdResult<Reply> {
    let z = ctx.get::<ZSetValue>(argv[1])?;
    Ok(match z.and_then(|z| z.rank(argv[2], rev)) {
        Some(r) => Reply::Int(r as i64),
        None => Reply::Nil,
    })
}

/// # Format
/// `ZCOUNT key min max` → the number of members with a score in
/// [min, max] (`(` excludes an end; `-inf`/`+inf`).
fn zcount(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let range = parse_score_range(argv[2], argv[3])?;
    let z = ctx.get::<ZSetValue>(argv[1])?;
    Ok(Reply::Int(
        z.map_or(0, |z| z.count_in_score_range(&range)) as i64
    ))
}

/// # Format
/// `ZLEXCOUNT key min max` → the number of members between min and max
/// (`[m` inclusive, `(m` exclusive, `-`, `+`).
fn zlexcount(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let range = parse_lex_range(argv[2], argv[3])?;
    let z = ctx.get::<ZSetValue>(argv[1])?;
    Ok(Reply::Int(
        z.map_or(0, |z| z.count_in_lex_range(&range)) as i64
    ))
}
