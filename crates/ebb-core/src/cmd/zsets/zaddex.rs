//! ZADDEX: ZADD where every member written gets a time to live, with an
//! optional cap (keep the N highest-scored members) or an all-or-nothing
//! limit on the number of live members.

use bytes::Bytes;
use indexmap::{IndexMap, IndexSet};

use crate::args::{parse_i64, Args};
use crate::cmd::member_ttl::MAX_DEADLINE_MS;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::{format_double, Reply};
use crate::value::ZSetValue;

use super::{add_member_at, parse_pairs, with_zset, AddFlags, AddOutcome, AddTally, Pairs};

/// How the TTL was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TtlUnit {
    /// EX: relative seconds.
    Ex,
    /// PX: relative milliseconds.
    Px,
    /// EXAT: absolute Unix seconds.
    ExAt,
    /// PXAT: absolute Unix milliseconds.
    PxAt,
}

/// CAP n or LIMIT max.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// Trim the lowest-scored members down to n after the add.
    Cap(usize),
    /// Refuse (reply -1) when more than max live members would result.
    Limit(usize),
}

/// A parsed ZADDEX.
struct ZaddEx<'a> {
    key: &'a [u8],
    flags: AddFlags,
    keep_ttl: bool,
    bound: Option<Bound>,
    /// Absolute deadline in Unix ms.
    deadline: u64,
    pairs: Pairs<'a>,
}

fn count_arg(a: &mut Args) -> CmdResult<usize> {
    let v = parse_i64(a.bytes()?).ok_or(Error::NotInteger)?;
    usize::try_from(v).map_err(|_| Error::MustBePositive)
}

/// The absolute deadline for `value` given with `unit`, validated as SET
/// validates its EX/PX/EXAT/PXAT argument.
fn deadline_of(unit: TtlUnit, value: i64, now: u64) -> CmdResult<u64> {
    let invalid = || Error::InvalidExpire("zaddex".into());
    if value <= 0 {
        return Err(invalid());
    }
    let ms = match unit {
        TtlUnit::Ex | TtlUnit::ExAt => value.checked_mul(1000).ok_or_else(invalid)?,
        TtlUnit::Px | TtlUnit::PxAt => value,
    };
    let at = match unit {
        TtlUnit::Ex | TtlUnit::Px => ms.checked_add(now as i64).ok_or_else(invalid)?,
        TtlUnit::ExAt | TtlUnit::PxAt => ms,
    };
    // Past the member TTL commands' largest deadline it could not be
    // logged and replayed (ZPEXPIREAT refuses it).
    if at as u64 > MAX_DEADLINE_MS {
        return Err(invalid());
    }
    Ok(at as u64)
}

fn parse<'a>(argv: &'a [&'a [u8]], now: u64) -> CmdResult<ZaddEx<'a>> {
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let mut flags = AddFlags::default();
    let mut keep_ttl = false;
    let (mut cap, mut limit) = (None, None);
    let mut ttl: Option<(TtlUnit, i64)> = None;
    loop {
        if flags.eat(&mut a) {
            continue;
        }
        if a.eat("KEEPTTL") {
            keep_ttl = true;
        } else if a.eat("CAP") {
            cap = Some(count_arg(&mut a)?);
        } else if a.eat("LIMIT") {
            limit = Some(count_arg(&mut a)?);
        } else {
            let unit = match a.peek() {
                Some(t) if t.eq_ignore_ascii_case(b"EX") => TtlUnit::Ex,
                Some(t) if t.eq_ignore_ascii_case(b"PX") => TtlUnit::Px,
                Some(t) if t.eq_ignore_ascii_case(b"EXAT") => TtlUnit::ExAt,
                Some(t) if t.eq_ignore_ascii_case(b"PXAT") => TtlUnit::PxAt,
                _ => break,
            };
            a.next();
            // One TTL option only, as SET allows.
            if ttl.is_some() {
                return Err(Error::Syntax);
            }
            ttl = Some((unit, a.i64()?));
        }
    }
    let rest = a.rest();
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(Error::Syntax);
    }
    flags.validate(rest.len() / 2)?;
    let bound = match (cap, limit) {
        (Some(_), Some(_)) => {
            return Err(Error::msg(
                "ERR CAP and LIMIT options at the same time are not compatible",
            ))
        }
        (Some(n), None) => Some(Bound::Cap(n)),
        (None, Some(n)) => Some(Bound::Limit(n)),
        (None, None) => None,
    };
    let Some((unit, value)) = ttl else {
        return Err(Error::msg(
            "ERR syntax error, ZADDEX requires one of EX, PX, EXAT or PXAT",
        ));
    };
    let deadline = deadline_of(unit, value, now)?;
    let pairs = parse_pairs(rest)?;
    Ok(ZaddEx {
        key,
        flags,
        keep_ttl,
        bound,
        deadline,
        pairs,
    })
}

/// A member's state before the command, to undo it when LIMIT refuses.
type Undo<'a> = (&'a [u8], Option<(f64, Option<u64>)>);

fn undo_all(z: &mut ZSetValue, undo: Vec<Undo<'_>>) {
    for (m, before) in undo.into_iter().rev() {
        match before {
            None => {
                z.remove(m);
            }
            Some((score, deadline)) => {
                z.insert(m, score);
                match deadline {
                    Some(t) => {
                        z.set_deadline(m, t);
                    }
                    None => {
                        z.clear_deadline(m);
                    }
                }
            }
        }
    }
}

/// The hasher of [`Applied`]'s maps: fixed keys, so that a command does not
/// draw a new random seed each time (they only hold the command's own
/// arguments).
fn arg_hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5851_f42d, 0x4c95_7f2d, 0x14057b7e, 0xf767_814f)
}

impl Default for Applied<'_> {
    fn default() -> Self {
        Applied {
            tally: AddTally::default(),
            written_count: 0,
            written: IndexMap::with_hasher(arg_hasher()),
            timed: IndexSet::with_hasher(arg_hasher()),
            expired: Vec::new(),
            trimmed: Vec::new(),
            live: 0,
        }
    }
}

/// What one ZADDEX did, for events and the log.
struct Applied<'a> {
    tally: AddTally,
    /// Members written (not skipped by NX/XX/GT/LT), counting repeats.
    written_count: usize,
    /// Members written, with their final scores (filled only when the
    /// command is logged or notified).
    written: IndexMap<&'a [u8], f64, ahash::RandomState>,
    /// Members that received the deadline.
    timed: IndexSet<&'a [u8], ahash::RandomState>,
    /// Members whose (past) deadline removed them at once.
    expired: Vec<Bytes>,
    /// Members removed by CAP.
    trimmed: Vec<Bytes>,
    /// Members left afterwards.
    live: usize,
}

/// # Format
/// `ZADDEX key [NX|XX] [GT|LT] [CH] [INCR] [KEEPTTL] [CAP n | LIMIT max]
/// (EX s | PX ms | EXAT s | PXAT ms) score member [score member …]` → as
/// ZADD: the number of members added (added + changed with CH), or with
/// INCR the new score or nil; -1 when LIMIT refuses the whole command.
/// Every member written (added, or updated — including to the same score)
/// gets the deadline; with KEEPTTL members that existed keep theirs.
pub(crate) fn zaddex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let cmd = parse(argv, ctx.now)?;
    // Only XX needs to know beforehand whether the key exists.
    if cmd.flags.xx && !ctx.check_type::<ZSetValue>(cmd.key)? {
        ctx.rewrite_as(Vec::new());
        return Ok(AddTally::default().reply(&cmd.flags));
    }
    let now = ctx.deadline_floor();
    let track = ctx.logs() || ctx.notifies();
    match with_zset(ctx, cmd.key, |z| apply(z, &cmd, now, track))? {
        Ok(Some(done)) => report(ctx, &cmd, done),
        Ok(None) => {
            ctx.rewrite_as(Vec::new());
            Ok(Reply::Int(-1))
        }
        Err(e) => Err(e),
    }
}

/// Applies the command to `z`; None when LIMIT refused it (and `z` is as before).
fn apply<'a>(
    z: &mut ZSetValue,
    cmd: &ZaddEx<'a>,
    now: u64,
    track: bool,
) -> CmdResult<Option<Applied<'a>>> {
    let mut done = Applied::default();
    let mut undo: Vec<Undo<'a>> = Vec::new();
    let limited = matches!(cmd.bound, Some(Bound::Limit(_)));
    for &(score, member) in cmd.pairs.iter() {
        let found = z.lookup(member);
        // What LIMIT restores if the call is refused.
        let before = found
            .filter(|_| limited)
            .map(|(r, s)| (s, z.deadline_at(r)));
        // Only INCR can fail (NaN), and it has a single pair: nothing changed yet.
        let (outcome, new_score, at) = add_member_at(z, &cmd.flags, score, member, found)?;
        done.tally.count(outcome, new_score);
        let Some(at) = at.filter(|_| outcome != AddOutcome::Skipped) else {
            continue;
        };
        if limited {
            undo.push((member, before));
        }
        done.written_count += 1;
        let timed = outcome == AddOutcome::Added || !cmd.keep_ttl;
        if timed {
            z.set_deadline_at(at, cmd.deadline);
        }
        if track {
            // The log and the events name each member once.
            if timed {
                done.timed.insert(member);
            }
            done.written.insert(member, z.as_stored(new_score));
        }
    }
    if let Some(Bound::Limit(max)) = cmd.bound {
        if z.len() - z.due_count(now) > max {
            undo_all(z, undo);
            return Ok(None);
        }
    }
    // A deadline already past (EXAT/PXAT) removes what it was given to.
    while let Some(m) = z.pop_due(now) {
        done.expired.push(m);
    }
    if let Some(Bound::Cap(cap)) = cmd.bound {
        if z.len() > cap {
            let excess = z.len() - cap;
            done.trimmed = z
                .remove_rank_range(0, excess)
                .into_iter()
                .map(|(m, _)| m)
                .collect();
        }
    }
    done.live = z.len();
    Ok(Some(done))
}

fn report(ctx: &mut Ctx, cmd: &ZaddEx, done: Applied<'_>) -> CmdResult<Reply> {
    let key = cmd.key;
    let t = done.tally;
    let changed = done.written_count > 0 || !done.trimmed.is_empty();
    if changed {
        ctx.modified(key);
    }
    if t.added + t.updated > 0 {
        ctx.notify(b'z', if cmd.flags.incr { "zincr" } else { "zadd" }, key);
    }
    if !done.timed.is_empty() && ctx.notifies() {
        ctx.notify_members(
            b'z',
            "zexpire",
            key,
            done.timed
                .iter()
                .map(|m| Bytes::copy_from_slice(m))
                .collect(),
        );
    }
    if !done.expired.is_empty() {
        ctx.notify_members(b'z', "zexpired", key, done.expired.clone());
    }
    if !done.trimmed.is_empty() {
        ctx.notify(b'z', "zremrangebyrank", key);
    }
    if t.added > 0 && done.live > 0 {
        ctx.ready(key);
    }
    // Logged as what it did: absolute scores, an absolute deadline, and the
    // members CAP removed, so replaying never depends on the clock. Nothing
    // is built when no log will be written.
    if !ctx.logs() {
        return Ok(t.reply(&cmd.flags));
    }
    let mut log = Vec::new();
    if !done.written.is_empty() {
        let mut zadd = vec![Bytes::from_static(b"ZADD"), Bytes::copy_from_slice(key)];
        for (m, s) in &done.written {
            zadd.push(Bytes::from(format_double(*s)));
            zadd.push(Bytes::copy_from_slice(m));
        }
        log.push(zadd);
    }
    if !done.timed.is_empty() {
        let mut exp = vec![
            Bytes::from_static(b"ZPEXPIREAT"),
            Bytes::copy_from_slice(key),
            Bytes::from(cmd.deadline.to_string()),
            Bytes::from_static(b"MEMBERS"),
            Bytes::from(done.timed.len().to_string()),
        ];
        exp.extend(done.timed.iter().map(|m| Bytes::copy_from_slice(m)));
        log.push(exp);
    }
    // Members a deadline already past removed, then those CAP removed: a
    // replay (where nothing expires while the file loads) must not keep
    // them for the commands after this one.
    if !done.expired.is_empty() || !done.trimmed.is_empty() {
        let mut zrem = vec![Bytes::from_static(b"ZREM"), Bytes::copy_from_slice(key)];
        zrem.extend(done.expired.iter().cloned());
        zrem.extend(done.trimmed.iter().cloned());
        log.push(zrem);
    }
    ctx.rewrite_as(log);
    Ok(t.reply(&cmd.flags))
}
