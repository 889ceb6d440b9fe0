//! ZUNION, ZINTER, ZDIFF, their STORE forms, and ZINTERCARD. Sets are
//! accepted as inputs, each member with score 1.

use bytes::Bytes;
use indexmap::map::Entry as MapEntry;
use indexmap::IndexMap;

use crate::args::parse_i64;
use crate::cmd::zsets::range::parse_score;
use crate::cmd::zsets::scored_reply;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::{Score, SetValue, Value, ZSetValue};

/// The set operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

/// How scores of a member found in several inputs combine.
#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's rule, NaN included: a sum of +inf and -inf is 0, and a NaN
    /// weighted score never wins a MIN or MAX comparison.
    fn apply(self, target: &mut f64, v: f64) {
        match self {
            Aggregate::Sum => {
                *target += v;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if v < *target {
                    *target = v;
                }
            }
            Aggregate::Max => {
                if v > *target {
                    *target = v;
                }
            }
        }
    }
}

/// Which command is running, for its option set and error texts.
#[derive(Clone, Copy)]
struct Kind {
    name: &'static str,
    op: Op,
    store: bool,
    card_only: bool,
}

/// Options after the keys.
struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    limit: u64,
}

/// One input: a live sorted set or set, or nothing for a missing key.
#[derive(Clone, Copy)]
enum Source<'a> {
    Missing,
    Set(&'a SetValue),
    ZSet(&'a ZSetValue),
}

impl<'a> Source<'a> {
    fn len(&self) -> usize {
        match self {
            Source::Missing => 0,
            Source::Set(s) => s.len(),
            Source::ZSet(z) => z.len(),
        }
    }

    fn score(&self, m: &[u8]) -> Option<f64> {
        match self {
            Source::Missing => None,
            Source::Set(s) => s.contains(m).then_some(1.0),
            Source::ZSet(z) => z.score(m),
        }
    }

    fn members(&self) -> Box<dyn Iterator<Item = (&'a [u8], f64)> + 'a> {
        match *self {
            Source::Missing => Box::new(std::iter::empty()),
            Source::Set(s) => Box::new(s.iter().map(|m| (m, 1.0))),
            Source::ZSet(z) => Box::new(z.iter()),
        }
    }
}

fn numkeys_count(argv: &[&[u8]], at: usize, kind: Kind) -> CmdResult<usize> {
    let n = parse_i64(argv[at]).ok_or(Error::NotInteger)?;
    if n < 1 {
        return Err(Error::msg(format!(
            "ERR at least 1 input key is needed for '{}' command",
            kind.name
        )));
    }
    let available = argv.len() - (at + 1);
    match usize::try_from(n) {
        Ok(n) if n <= available => Ok(n),
        _ => Err(Error::Syntax),
    }
}

fn parse_options(rest: &[&[u8]], nkeys: usize, kind: Kind) -> CmdResult<Options> {
    let mut o = Options {
        weights: vec![1.0; nkeys],
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let algebra = kind.op != Op::Diff && !kind.card_only;
    let mut j = 0;
    while j < rest.len() {
        let left = rest.len() - j;
        let word = &rest[j];
        if algebra && left > nkeys && word.eq_ignore_ascii_case(b"WEIGHTS") {
            for (w, arg) in o.weights.iter_mut().zip(&rest[j + 1..]) {
                *w = parse_score(arg).map_err(|_| Error::msg("ERR weight value is not a float"))?;
            }
            j += 1 + nkeys;
        } else if algebra && left >= 2 && word.eq_ignore_ascii_case(b"AGGREGATE") {
            let a = &rest[j + 1];
            o.aggregate = if a.eq_ignore_ascii_case(b"SUM") {
                Aggregate::Sum
            } else if a.eq_ignore_ascii_case(b"MIN") {
                Aggregate::Min
            } else if a.eq_ignore_ascii_case(b"MAX") {
                Aggregate::Max
            } else {
                return Err(Error::Syntax);
            };
            j += 2;
        } else if !kind.store && !kind.card_only && word.eq_ignore_ascii_case(b"WITHSCORES") {
            o.withscores = true;
            j += 1;
        } else if kind.card_only && left >= 2 && word.eq_ignore_ascii_case(b"LIMIT") {
            let n = parse_i64(rest[j + 1])
                .filter(|&n| n >= 0)
                .ok_or_else(|| Error::msg("ERR LIMIT can't be negative"))?;
            o.limit = n as u64;
            j += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(o)
}

/// What the operation produced: distinct members with their scores (in
/// no particular order), or just how many.
enum Outcome {
    Members(Vec<(Bytes, f64)>),
    Cardinality(u64),
}

fn compute(sources: &[Source], o: &Options, kind: Kind) -> Outcome {
    // Inputs with their weights; union and intersection take the smallest
    // first (stable, like the merge sort glibc's qsort uses), which also
    // fixes the order in which scores are summed.
    let mut srcs: Vec<(Source, f64)> = sources
        .iter()
        .copied()
        .zip(o.weights.iter().copied())
        .collect();
    if kind.op != Op::Diff {
        srcs.sort_by_key(|(s, _)| s.len());
    }
    let mut out: Vec<(Bytes, f64)> = Vec::new();
    match kind.op {
        Op::Inter => {
            let mut card = 0u64;
            let (first, w0) = srcs[0];
            'members: for (m, s) in first.members() {
                let mut score = w0 * s;
                if score.is_nan() {
                    score = 0.0;
                }
                for (src, w) in &srcs[1..] {
                    match src.score(m) {
                        Some(v) => o.aggregate.apply(&mut score, v * w),
                        None => continue 'members,
                    }
                }
                if kind.card_only {
                    card += 1;
                    if o.limit != 0 && card >= o.limit {
                        break;
                    }
                } else {
                    out.push((Bytes::copy_from_slice(m), score));
                }
            }
            if kind.card_only {
                return Outcome::Cardinality(card);
            }
        }
        Op::Union => {
            let mut acc: IndexMap<&[u8], f64, ahash::RandomState> = IndexMap::default();
            for (src, w) in &srcs {
                for (m, s) in src.members() {
                    let mut score = w * s;
                    if score.is_nan() {
                        score = 0.0;
                    }
                    match acc.entry(m) {
                        MapEntry::Vacant(e) => {
                            e.insert(score);
                        }
                        MapEntry::Occupied(mut e) => o.aggregate.apply(e.get_mut(), score),
                    }
                }
            }
            out = acc
                .into_iter()
                .map(|(m, s)| (Bytes::copy_from_slice(m), s))
                .collect();
        }
        Op::Diff => {
            let (first, _) = srcs[0];
            for (m, s) in first.members() {
                if !srcs[1..].iter().any(|(src, _)| src.score(m).is_some()) {
                    out.push((Bytes::copy_from_slice(m), s));
                }
            }
        }
    }
    Outcome::Members(out)
}

fn run(ctx: &mut Ctx, argv: &[&[u8]], kind: Kind) -> CmdResult<Reply> {
    let at = if kind.store { 2 } else { 1 };
    let nkeys = numkeys_count(argv, at, kind)?;
    let keys = &argv[at + 1..at + 1 + nkeys];
    // Redis checks the inputs' types before it reads the options.
    for k in keys {
        match ctx.value(k) {
            None | Some(Value::Set(_)) | Some(Value::ZSet(_)) => {}
            Some(_) => return Err(Error::WrongType),
        }
    }
    let o = parse_options(&argv[at + 1 + nkeys..], nkeys, kind)?;
    let outcome = {
        let db = &ctx.store.dbs[ctx.db];
        let sources: Vec<Source> = keys
            .iter()
            .map(|k| match db.peek(k).map(|e| &e.value) {
                Some(Value::Set(s)) => Source::Set(s),
                Some(Value::ZSet(z)) => Source::ZSet(z),
                _ => Source::Missing,
            })
            .collect();
        compute(&sources, &o, kind)
    };
    let mut result = match outcome {
        Outcome::Cardinality(n) => return Ok(Reply::Int(n as i64)),
        Outcome::Members(v) => v,
    };
    if kind.store {
        return Ok(store(ctx, argv[1], result, kind.op));
    }
    // Sorted as the result set would be, keeping a -0 score as computed.
    result.sort_by(|(m1, s1), (m2, s2)| Score(*s1).cmp(&Score(*s2)).then_with(|| m1.cmp(m2)));
    Ok(scored_reply(ctx.resp3, o.withscores, result))
}

/// Writes a STORE result: replaces `dst` (whatever it held, TTL included),
/// or deletes it when the result is empty.
fn store(ctx: &mut Ctx, dst: &[u8], members: Vec<(Bytes, f64)>, op: Op) -> Reply {
    // Built fresh: no member carries a deadline. Redis builds the result
    // in its large form and packs it only if it fits, so a -0 score
    // survives in a result that does not.
    let mut result = ZSetValue::new();
    if !ZSetValue::would_pack(members.len(), members.iter().map(|(m, _)| m.len())) {
        result.unpack();
    }
    for (m, s) in members {
        result.insert(m, s);
    }
    let n = result.len();
    if n == 0 {
        if ctx.delete_stored(dst) {
            ctx.modified(dst);
            ctx.notify(b'g', "del", dst);
        }
        return Reply::Int(0);
    }
    ctx.set_value(dst, Value::from(result));
    ctx.modified(dst);
    let event = match op {
        Op::Union => "zunionstore",
        Op::Inter => "zinterstore",
        Op::Diff => "zdiffstore",
    };
    ctx.notify(b'z', event, dst);
    ctx.ready(dst);
    Reply::Int(n as i64)
}

const fn kind(name: &'static str, op: Op, store: bool, card_only: bool) -> Kind {
    Kind {
        name,
        op,
        store,
        card_only,
    }
}

/// # Format
/// `ZUNION numkeys key [key …] [WEIGHTS weight …] [AGGREGATE SUM|MIN|MAX]
/// [WITHSCORES]` → the union's members by score (with their scores: flat in
/// RESP2, `[member, score]` pairs in RESP3).
pub(super) fn zunion(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zunion", Op::Union, false, false))
}

/// # Format
/// `ZINTER numkeys key [key …] [WEIGHTS weight …] [AGGREGATE SUM|MIN|MAX]
/// [WITHSCORES]` → the intersection, shaped as ZUNION's reply.
pub(super) fn zinter(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zinter", Op::Inter, false, false))
}

/// # Format
/// `ZDIFF numkeys key [key …] [WITHSCORES]` → members of the first input
/// found in no other, with their first-input scores, shaped as ZUNION's reply.
pub(super) fn zdiff(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zdiff", Op::Diff, false, false))
}

/// # Format
/// `ZUNIONSTORE destination numkeys key [key …] [WEIGHTS weight …]
/// [AGGREGATE SUM|MIN|MAX]` → the number of members stored in destination
/// (0 deletes it).
pub(super) fn zunionstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zunionstore", Op::Union, true, false))
}

/// # Format
/// `ZINTERSTORE destination numkeys key [key …] [WEIGHTS weight …]
/// [AGGREGATE SUM|MIN|MAX]` → the number of members stored (0 deletes it).
pub(super) fn zinterstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zinterstore", Op::Inter, true, false))
}

/// # Format
/// `ZDIFFSTORE destination numkeys key [key …]` → the number of members
/// stored (0 deletes it).
pub(super) fn zdiffstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zdiffstore", Op::Diff, true, false))
}

/// # Format
/// `ZINTERCARD numkeys key [key …] [LIMIT limit]` → the size of the
/// intersection, counting stopped at `limit` when it is not 0.
pub(super) fn zintercard(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, argv, kind("zintercard", Op::Inter, false, true))
}

/// Key positions of `CMD numkeys key…` (`numkeys_at` = 1) and of
/// `CMD destination numkeys key…` (2, destination included).
pub(super) fn positions(argv: &[&[u8]], numkeys_at: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (1..numkeys_at).filter(|&i| i < argv.len()).collect();
    let n = argv.get(numkeys_at).and_then(|a| parse_i64(a)).unwrap_or(0);
    let n = usize::try_from(n).unwrap_or(0);
    out.extend((numkeys_at + 1..argv.len()).take(n));
    out
}
