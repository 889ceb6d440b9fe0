//! The field-TTL write commands of Redis 7.4/8.0: HSETEX (Redis 8 grammar
//! and Dragonfly grammar), HGETEX, HGETDEL. Relative times are logged as
//! absolute deadlines; fields given a deadline in the past are deleted and
//! logged as HDEL.

use bytes::Bytes;

use super::{changed, owned, write_hash};
use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::value::HashValue;

/// Largest absolute deadline the field-TTL commands accept, in Unix ms
/// (Redis's `HFE_MAX_ABS_TIME_MSEC`, 2^46 - 1).
const MAX_ABS_MS: i64 = (1 << 46) - 1;
/// Largest TTL of the Dragonfly HSETEX form, in seconds.
const DRAGONFLY_MAX_TTL: i64 = 1 << 26;

fn kw(a: &[u8], k: &str) -> bool {
    a.eq_ignore_ascii_case(k.as_bytes())
}

fn static_bytes(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

/// Reads an expire time as Redis's hash-field commands do and returns the
/// absolute deadline: `base` is now for relative forms, 0 for absolute ones.
fn parse_expire_time(arg: &[u8], seconds: bool, base: u64, cmd: &str) -> CmdResult<u64> {
    let mut v = parse_i64(arg).ok_or(Error::NotInteger)?;
    if v < 0 {
        return Err(Error::msg("ERR invalid expire time, must be >= 0"));
    }
    if seconds {
        if v > MAX_ABS_MS / 1000 {
            return Err(Error::InvalidExpire(cmd.to_string()));
        }
        v *= 1000;
    }
    let base = i64::try_from(base).unwrap_or(i64::MAX);
    if v > MAX_ABS_MS.saturating_sub(base) {
        return Err(Error::InvalidExpire(cmd.to_string()));
    }
    Ok((v + base) as u64)
}

/// `[KEYWORD key] FIELDS n fields…` tail of a log command.
fn with_fields(mut cmd: Vec<Bytes>, fields: &[Bytes]) -> Vec<Bytes> {
    cmd.push(static_bytes("FIELDS"));
    cmd.push(Bytes::from(fields.len().to_string()));
    cmd.extend(fields.iter().cloned());
    cmd
}

/// # Format
/// Redis 8: `HSETEX key [FNX|FXX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] FIELDS n field value [field value ...]`
/// → 1 if the fields were set, 0 if FNX/FXX was not met. Without an
/// expiry option the fields lose their deadlines (as HSET); with KEEPTTL
/// they keep them; a time in the past deletes them.
///
/// Dragonfly: `HSETEX key [NX] [KEEPTTL] seconds field value [field value ...]`
/// → the number of fields created. NX skips fields that exist; KEEPTTL
/// keeps the deadline (or its absence) of existing fields; every other
/// field set expires in `seconds`. The grammar is chosen by what follows the
/// key and any NX/KEEPTTL: an integer means the Dragonfly form.
pub(super) fn hsetex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let mut i = 2;
    while i < argv.len() && (kw(argv[i], "NX") || kw(argv[i], "KEEPTTL")) {
        i += 1;
    }
    if argv.get(i).is_some_and(|a| parse_i64(a).is_some()) {
        hsetex_dragonfly(ctx, argv)
    } else {
        hsetex_redis(ctx, argv)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Condition {
    Always,
    NoneExist,
    AllExist,
}

#[derive(Clone, Copy, PartialEq)]
enum SetExpiry {
    /// Plain HSET semantics: deadlines are cleared.
    Clear,
    /// Existing fields keep their deadlines.
    Keep,
    /// Every field gets this absolute deadline.
    At(u64),
}

fn hsetex_redis(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    const ONE_EXPIRY: &str =
        "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
    let argc = argv.len();
    let mut cond = Condition::Always;
    let mut expiry = SetExpiry::Clear;
    let mut first = None;
    let mut i = 2;
    while i < argc {
        let a = &argv[i];
        if kw(a, "FIELDS") {
            if i + 3 >= argc {
                return Err(Error::WrongArity("hsetex".into()));
            }
            let n = parse_i64(argv[i + 1])
                .filter(|n| (1..=i32::MAX as i64).contains(n))
                .ok_or_else(|| Error::msg("ERR invalid number of fields"))?;
            let remaining = argc - i - 2;
            if !remaining.is_multiple_of(2) || n as usize != remaining / 2 {
                return Err(Error::WrongArity("hsetex".into()));
            }
            first = Some(i + 2);
            break;
        }
        let unit = if kw(a, "EX") {
            Some((true, true))
        } else if kw(a, "PX") {
            Some((false, true))
        } else if kw(a, "EXAT") {
            Some((true, false))
        } else if kw(a, "PXAT") {
            Some((false, false))
        } else {
            None
        };
        if let Some((seconds, relative)) = unit {
            if expiry != SetExpiry::Clear {
                return Err(Error::msg(ONE_EXPIRY));
            }
            if i + 1 >= argc {
                return Err(Error::msg("ERR missing expire time"));
            }
            let base = if relative { ctx.now } else { 0 };
            expiry = SetExpiry::At(parse_expire_time(argv[i + 1], seconds, base, "hsetex")?);
            i += 2;
            continue;
        }
        if kw(a, "KEEPTTL") {
            if expiry != SetExpiry::Clear {
                return Err(Error::msg(ONE_EXPIRY));
            }
            expiry = SetExpiry::Keep;
        } else if kw(a, "FXX") || kw(a, "FNX") {
            if cond != Condition::Always {
                return Err(Error::msg(
                    "ERR Only one of FXX or FNX arguments can be specified",
                ));
            }
            cond = if kw(a, "FXX") {
                Condition::AllExist
            } else {
                Condition::NoneExist
            };
        } else {
            let shown = a.split(|&c| c == 0).next().unwrap_or(&[]);
            return Err(Error::msg(format!(
                "ERR unknown argument: {}",
                String::from_utf8_lossy(shown)
            )));
        }
        i += 1;
    }
    let Some(first) = first else {
        return Err(Error::WrongArity("hsetex".into()));
    };
    let key = &argv[1];
    let pairs = &argv[first..];
    let met = match (ctx.get::<HashValue>(key)?, cond) {
        (_, Condition::Always) => true,
        (None, Condition::AllExist) => false,
        (None, Condition::NoneExist) => true,
        (Some(h), Condition::AllExist) => pairs.chunks_exact(2).all(|p| h.contains(p[0])),
        (Some(h), Condition::NoneExist) => !pairs.chunks_exact(2).any(|p| h.contains(p[0])),
    };
    if !met {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Int(0));
    }
    let now = ctx.deadline_floor();
    let mut set = Vec::with_capacity(pairs.len() / 2);
    let mut log_pairs = Vec::with_capacity(pairs.len());
    let mut deleted = Vec::new();
    let ((), emptied_new) = write_hash(ctx, key, |h| {
        for p in pairs.chunks_exact(2) {
            let (f, v) = (owned(p[0]), owned(p[1]));
            log_pairs.push(f.clone());
            log_pairs.push(v.clone());
            match expiry {
                SetExpiry::Clear => {
                    h.insert(f.clone(), v);
                }
                SetExpiry::Keep => {
                    h.insert_keep_deadline(f.clone(), v);
                }
                SetExpiry::At(t) => {
                    h.insert_keep_deadline(f.clone(), v);
                    if t <= now {
                        h.remove(&f);
                        deleted.push(f.clone());
                    } else {
                        h.set_deadline(&f, t);
                    }
                }
            }
            set.push(f);
        }
    })?;
    changed(ctx, key, set.len());
    ctx.notify_members(b'h', "hset", key, set.clone());
    let log = if !deleted.is_empty() {
        ctx.notify_members(b'h', "hdel", key, deleted.clone());
        if emptied_new {
            // Redis created the key, set and deleted the fields, then
            // deleted the emptied key.
            ctx.notify(b'g', "del", key);
        }
        let mut cmd = vec![static_bytes("HDEL"), owned(key)];
        cmd.extend(deleted);
        cmd
    } else {
        let mut cmd = vec![static_bytes("HSETEX"), owned(key)];
        match expiry {
            SetExpiry::At(t) => {
                ctx.notify_members(b'h', "hexpire", key, set);
                cmd.push(static_bytes("PXAT"));
                cmd.push(Bytes::from(t.to_string()));
            }
            SetExpiry::Keep => cmd.push(static_bytes("KEEPTTL")),
            SetExpiry::Clear => {}
        }
        cmd.push(static_bytes("FIELDS"));
        cmd.push(Bytes::from((log_pairs.len() / 2).to_string()));
        cmd.extend(log_pairs);
        cmd
    };
    ctx.rewrite_as(vec![log]);
    Ok(Reply::Int(1))
}

fn hsetex_dragonfly(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let (mut nx, mut keep_ttl) = (false, false);
    let mut i = 2;
    loop {
        let flag = if kw(argv[i], "NX") {
            &mut nx
        } else if kw(argv[i], "KEEPTTL") {
            &mut keep_ttl
        } else {
            break;
        };
        if *flag {
            return Err(Error::WrongArity("hsetex".into()));
        }
        *flag = true;
        i += 1;
    }
    let secs = parse_i64(argv[i])
        .filter(|s| (1..=DRAGONFLY_MAX_TTL).contains(s))
        .ok_or(Error::NotInteger)?;
    let pairs = &argv[i + 1..];
    if pairs.is_empty() || !pairs.len().is_multiple_of(2) {
        return Err(Error::WrongArity("hsetex".into()));
    }
    let key = &argv[1];
    let at = ctx.now + secs as u64 * 1000;
    let mut set = Vec::new();
    let mut timed = Vec::new();
    // Consecutive pairs logged the same way: (keeps its deadline, pairs).
    let mut runs: Vec<(bool, Vec<Bytes>)> = Vec::new();
    let (created, _) = write_hash(ctx, key, |h| {
        let mut created = 0;
        for p in pairs.chunks_exact(2) {
            let exists = h.contains(p[0]);
            if exists && nx {
                continue;
            }
            let (f, v) = (owned(p[0]), owned(p[1]));
            let keeps = exists && keep_ttl;
            h.insert_keep_deadline(f.clone(), v.clone());
            if !keeps {
                h.set_deadline(&f, at);
                timed.push(f.clone());
            }
            created += !exists as i64;
            match runs.last_mut() {
                Some((k, run)) if *k == keeps => run.extend([f.clone(), v]),
                _ => runs.push((keeps, vec![f.clone(), v])),
            }
            set.push(f);
        }
        created
    })?;
    if set.is_empty() {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Int(0));
    }
    changed(ctx, key, set.len());
    ctx.notify_members(b'h', "hset", key, set);
    if !timed.is_empty() {
        ctx.notify_members(b'h', "hexpire", key, timed);
    }
    let log = runs
        .into_iter()
        .map(|(keeps, run)| {
            let mut cmd = vec![static_bytes("HSETEX"), owned(key)];
            if keeps {
                cmd.push(static_bytes("KEEPTTL"));
            } else {
                cmd.push(static_bytes("PXAT"));
                cmd.push(Bytes::from(at.to_string()));
            }
            cmd.push(static_bytes("FIELDS"));
            cmd.push(Bytes::from((run.len() / 2).to_string()));
            cmd.extend(run);
            cmd
        })
        .collect();
    ctx.rewrite_as(log);
    Ok(Reply::Int(created))
}

/// Reads `FIELDS n field…` starting at `pos` (the FIELDS keyword) and
/// returns the fields, with the errors of HGETEX/HGETDEL.
fn fields_at<'a>(argv: &'a [&'a [u8]], pos: usize, cmd: &str) -> CmdResult<&'a [&'a [u8]]> {
    if !argv.get(pos).is_some_and(|a| kw(a, "FIELDS")) {
        return Err(Error::msg(
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ));
    }
    let Some(n) = argv.get(pos + 1) else {
        return Err(Error::WrongArity(cmd.to_string()));
    };
    let n = parse_i64(n)
        .filter(|&n| n >= 1)
        .ok_or_else(|| Error::msg("ERR Number of fields must be a positive integer"))?;
    let fields = &argv[pos + 2..];
    if n as u64 != fields.len() as u64 {
        return Err(Error::msg(
            "ERR The `numfields` parameter must match the number of arguments",
        ));
    }
    Ok(fields)
}

/// What HGETEX does to the deadlines of the fields it finds.
#[derive(Clone, Copy, PartialEq)]
enum GetExpiry {
    Leave,
    Persist,
    At(u64),
}

/// # Format
/// `HGETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] FIELDS n field [field ...]`
/// → the values (nil for missing fields). Existing fields get the new
/// deadline (deleted if it is in the past) or, with PERSIST, lose theirs.
pub(super) fn hgetex(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    ctx.check_type::<HashValue>(key)?;
    let opt = &argv[2];
    let unit = if kw(opt, "EX") {
        Some((true, true))
    } else if kw(opt, "PX") {
        Some((false, true))
    } else if kw(opt, "EXAT") {
        Some((true, false))
    } else if kw(opt, "PXAT") {
        Some((false, false))
    } else {
        None
    };
    let (expiry, pos) = if let Some((seconds, relative)) = unit {
        let base = if relative { ctx.now } else { 0 };
        (
            GetExpiry::At(parse_expire_time(argv[3], seconds, base, "hgetex")?),
            4,
        )
    } else if kw(opt, "PERSIST") {
        (GetExpiry::Persist, 3)
    } else {
        (GetExpiry::Leave, 2)
    };
    let fields = fields_at(argv, pos, "hgetex")?;
    let now = ctx.deadline_floor();
    let Some(h) = ctx.get_mut::<HashValue>(key)? else {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Array(vec![Reply::Nil; fields.len()]));
    };
    let mut out = Vec::with_capacity(fields.len());
    let (mut updated, mut deleted) = (Vec::new(), Vec::new());
    for f in fields {
        let Some(v) = h.get(f) else {
            out.push(Reply::Nil);
            continue;
        };
        out.push(Reply::Bulk(Bytes::copy_from_slice(v)));
        match expiry {
            GetExpiry::Leave => {}
            GetExpiry::Persist => {
                if h.clear_deadline(f).is_some() {
                    updated.push(owned(f));
                }
            }
            GetExpiry::At(t) if t <= now => {
                h.remove(f);
                deleted.push(owned(f));
            }
            GetExpiry::At(t) => {
                h.set_deadline(f, t);
                updated.push(owned(f));
            }
        }
    }
    let n = updated.len() + deleted.len();
    if n == 0 {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Array(out));
    }
    changed(ctx, key, n);
    let log = match expiry {
        GetExpiry::Persist => {
            ctx.notify_members(b'h', "hpersist", key, updated.clone());
            with_fields(vec![static_bytes("HPERSIST"), owned(key)], &updated)
        }
        GetExpiry::At(t) if deleted.is_empty() => {
            ctx.notify_members(b'h', "hexpire", key, updated.clone());
            with_fields(
                vec![
                    static_bytes("HPEXPIREAT"),
                    owned(key),
                    Bytes::from(t.to_string()),
                ],
                &updated,
            )
        }
        _ => {
            ctx.notify_members(b'h', "hdel", key, deleted.clone());
            let mut cmd = vec![static_bytes("HDEL"), owned(key)];
            cmd.extend(deleted);
            cmd
        }
    };
    ctx.rewrite_as(vec![log]);
    Ok(Reply::Array(out))
}

/// # Format
/// `HGETDEL key FIELDS n field [field ...]` → the values (nil for missing
/// fields); the fields found are deleted, and the key when it empties.
pub(super) fn hgetdel(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = &argv[1];
    ctx.check_type::<HashValue>(key)?;
    let fields = fields_at(argv, 2, "hgetdel")?;
    let Some(h) = ctx.get_mut::<HashValue>(key)? else {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Array(vec![Reply::Nil; fields.len()]));
    };
    let mut out = Vec::with_capacity(fields.len());
    let mut deleted = Vec::new();
    for f in fields {
        match h.remove(f) {
            Some(v) => {
                out.push(Reply::Bulk(v));
                deleted.push(owned(f));
            }
            None => out.push(Reply::Nil),
        }
    }
    if deleted.is_empty() {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Array(out));
    }
    changed(ctx, key, deleted.len());
    ctx.notify_members(b'h', "hdel", key, deleted.clone());
    let mut cmd = vec![static_bytes("HDEL"), owned(key)];
    cmd.extend(deleted);
    ctx.rewrite_as(vec![cmd]);
    Ok(Reply::Array(out))
}
