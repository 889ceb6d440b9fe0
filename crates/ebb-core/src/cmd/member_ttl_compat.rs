//! Member expiration in the KeyDB and Dragonfly grammars, and the key-level
//! `TTL`, `PTTL` and `PERSIST` that KeyDB extends with a member argument:
//!
//! - KeyDB: `EXPIREMEMBER key member delay [s|ms]`, `EXPIREMEMBERAT key
//!   member unix-s`, `PEXPIREMEMBERAT key member unix-ms` → 1/0;
//!   `TTL|PTTL key [member]`, `PERSIST key [member]`.
//! - Dragonfly: `FIELDEXPIRE key seconds member…` → array of 1/-2;
//!   `FIELDTTL key member` → -2 no key, -3 no member, -1 no deadline, seconds.
//!
//! Every form works on sets, sorted sets and hashes alike; any other type
//! is WRONGTYPE. Changes are reported exactly as the `*EXPIRE` families in
//! `member_ttl.rs` report them (absolute `*PEXPIREAT` in the log,
//! `sexpire`/`zexpire`/`hexpire` events, deletions as `SREM`/`ZREM`/`HDEL`).

use crate::args::{parse_i64, parse_u64};
use crate::cmd::member_ttl::{
    ceil_secs, command_name, expire_members, member_deadlines, persist_members, Cond,
    MAX_DEADLINE_MS, NO_DEADLINE, NO_MEMBER, SET,
};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{HashValue, MemberKind, SetValue, ZSetValue};

/// The commands of this file.
#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core("ttl", -2, "readonly fast", (1, 1, 1), "generic", "Returns the expiration time in seconds of a key, or of one member of a set, sorted set or hash.", ttl).with_max_argc(3),
    CommandSpec::core("pttl", -2, "readonly fast", (1, 1, 1), "generic", "Returns the expiration time in milliseconds of a key, or of one member of a set, sorted set or hash.", pttl).with_max_argc(3),
    CommandSpec::core("persist", -2, "write fast", (1, 1, 1), "generic", "Removes the expiration time of a key, or of one member of a set, sorted set or hash.", persist).with_max_argc(3),
    CommandSpec::core("expiremember", -4, "write fast", (1, 1, 1), "generic", "Sets a relative expiration time on one member of a set, sorted set or hash.", expiremember),
    CommandSpec::core("expirememberat", 4, "write fast", (1, 1, 1), "generic", "Sets an absolute expiration time (Unix seconds) on one member of a set, sorted set or hash.", expirememberat),
    CommandSpec::core("pexpirememberat", 4, "write fast", (1, 1, 1), "generic", "Sets an absolute expiration time (Unix milliseconds) on one member of a set, sorted set or hash.", pexpirememberat),
    CommandSpec::core("fieldexpire", -4, "write denyoom fast", (1, 1, 1), "generic", "Sets a relative expiration time in seconds on members of a set, sorted set or hash.", fieldexpire),
    CommandSpec::core("fieldttl", 3, "readonly fast", (1, 1, 1), "generic", "Returns the remaining time to live in seconds of a member of a set, sorted set or hash.", fieldttl),
];

/// Calls `$f::<T>(args…)` with `T` the value type of `$kind`.
macro_rules! dispatch {
    ($kind:expr, $f:ident ( $($arg:expr),* )) => {
        match $kind {
            MemberKind::Hash => $f::<HashValue>($($arg),*),
            MemberKind::Set => $f::<SetValue>($($arg),*),
            MemberKind::ZSet => $f::<ZSetValue>($($arg),*),
        }
    };
}

/// Which member-carrying type `key` holds; None if it does not exist,
/// WRONGTYPE for strings and lists.
fn kind_of(ctx: &mut Ctx, key: &[u8]) -> CmdResult<Option<MemberKind>> {
    match ctx.value(key) {
        None => Ok(None),
        Some(v) => v.member_kind().map(Some).ok_or(Error::WrongType),
    }
}

/// Remaining TTL of the key itself, as Redis 7.0's TTL/PTTL reply.
fn key_ttl(ctx: &mut Ctx, key: &[u8], ms: bool) -> i64 {
    let now = ctx.clock;
    match ctx.entry(key) {
        None => -2,
        Some(e) => match e.expire_at() {
            None => -1,
            Some(at) => {
                let left = at.saturating_sub(now) as i64;
                if ms {
                    left
                } else {
                    (left + 500) / 1000
                }
            }
        },
    }
}

/// Remaining TTL of one member; in seconds rounded up, like HTTL (the
/// member TTL commands' rule), so a live member never reads 0.
fn member_ttl(ctx: &mut Ctx, key: &[u8], member: &&[u8], ms: bool) -> CmdResult<i64> {
    let Some(kind) = kind_of(ctx, key)? else {
        return Ok(NO_MEMBER);
    };
    let now = ctx.now;
    let d = dispatch!(
        kind,
        member_deadlines(ctx, key, std::slice::from_ref(member))
    )?;
    Ok(match d.into_iter().next() {
        Some(Ok(Some(at))) => {
            let left = at.saturating_sub(now) as i64;
            if ms {
                left
            } else {
                (left + 999) / 1000
            }
        }
        Some(Ok(None)) => NO_DEADLINE,
        _ => NO_MEMBER,
    })
}

fn ttl_generic(ctx: &mut Ctx, argv: &[&[u8]], ms: bool) -> CmdResult<Reply> {
    // Reading a TTL is not an access (OBJECT IDLETIME), as in Redis.
    ctx.no_touch = true;
    let key = argv.get(1).ok_or(Error::Syntax)?;
    match argv.len() {
        2 => Ok(Reply::Int(key_ttl(ctx, key, ms))),
        3 => Ok(Reply::Int(member_ttl(ctx, key, &argv[2], ms)?)),
        _ => Err(Error::WrongArity(command_name(argv))),
    }
}

/// # Format
/// `TTL key` → -2 no key, -1 no TTL, else seconds left (rounded to nearest).
/// `TTL key member` → -2 no key or no such member, -1 member without
/// deadline, else seconds left (rounded up, like HTTL).
fn ttl(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, argv, false)
}

/// # Format
/// `PTTL key [member]` → as TTL, in milliseconds.
fn pttl(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, argv, true)
}

/// # Format
/// `PERSIST key` → 1 if the key's TTL was removed, else 0.
/// `PERSIST key member` → 1 if the member's deadline was removed, else 0
/// (no key, no such member, or no deadline).
fn persist(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let key = argv.get(1).ok_or(Error::Syntax)?;
    match argv.len() {
        2 => {
            let had_ttl = matches!(ctx.entry_for_write(key), Some(e) if e.expire_at().is_some());
            if !had_ttl {
                return Ok(Reply::Int(0));
            }
            ctx.db().set_expire(key, None);
            ctx.modified(key);
            ctx.notify(b'g', "persist", key);
            Ok(Reply::Int(1))
        }
        3 => {
            let Some(kind) = kind_of(ctx, key)? else {
                return Ok(Reply::Int(0));
            };
            let codes = dispatch!(kind, persist_members(ctx, key, &argv[2..3]))?;
            Ok(Reply::Int(i64::from(codes.first() == Some(&SET))))
        }
        _ => Err(Error::WrongArity(command_name(argv))),
    }
}

/// Sets one member's deadline for the KeyDB commands; `at` may be in the
/// past (the member is deleted). Replies 1 if the member existed.
fn expire_one_member(ctx: &mut Ctx, key: &[u8], member: &&[u8], at: i128) -> CmdResult<Reply> {
    if at > MAX_DEADLINE_MS as i128 {
        return Err(Error::InvalidExpire(String::new()));
    }
    let at = at.max(0) as u64;
    let Some(kind) = kind_of(ctx, key)? else {
        return Ok(Reply::Int(0));
    };
    let members = std::slice::from_ref(member);
    let codes = dispatch!(kind, expire_members(ctx, key, at, Cond::Always, members))?;
    Ok(Reply::Int(i64::from(
        codes.first().is_some_and(|c| *c != NO_MEMBER),
    )))
}

/// Runs [`expire_one_member`] on `argv[1]` (key) and `argv[2]` (member),
/// naming the command in an invalid-expire error.
fn one_member(ctx: &mut Ctx, argv: &[&[u8]], at: i128) -> CmdResult<Reply> {
    let (Some(key), Some(member)) = (argv.get(1), argv.get(2)) else {
        return Err(Error::WrongArity(command_name(argv)));
    };
    expire_one_member(ctx, key, member, at).map_err(|e| match e {
        Error::InvalidExpire(_) => Error::InvalidExpire(command_name(argv)),
        other => other,
    })
}

/// # Format
/// `EXPIREMEMBER key member delay [s|ms]` → 1 if the member exists (its
/// deadline is now + delay, or it is deleted if delay <= 0), 0 if the key
/// or the member does not exist. The unit defaults to seconds.
fn expiremember(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let delay = argv
        .get(3)
        .and_then(|a| parse_i64(a))
        .ok_or(Error::NotInteger)?;
    if argv.len() > 5 {
        return Err(Error::msg("ERR Invalid number of arguments"));
    }
    let unit: i128 = match argv.get(4) {
        None => 1000,
        Some(u) if u.eq_ignore_ascii_case(b"s") => 1000,
        Some(u) if u.eq_ignore_ascii_case(b"ms") => 1,
        Some(_) => return Err(Error::msg("ERR Invalid unit arg")),
    };
    let at = delay as i128 * unit + ctx.now as i128;
    one_member(ctx, argv, at)
}

/// # Format
/// `EXPIREMEMBERAT key member unix-seconds` → 1 if the member exists, else 0.
fn expirememberat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let t = argv
        .get(3)
        .and_then(|a| parse_i64(a))
        .ok_or(Error::NotInteger)?;
    one_member(ctx, argv, t as i128 * 1000)
}

/// # Format
/// `PEXPIREMEMBERAT key member unix-ms` → 1 if the member exists, else 0.
fn pexpirememberat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let t = argv
        .get(3)
        .and_then(|a| parse_i64(a))
        .ok_or(Error::NotInteger)?;
    one_member(ctx, argv, t as i128)
}

/// Dragonfly's largest FIELDEXPIRE TTL, in seconds.
const FIELDEXPIRE_MAX_SECS: u64 = 1 << 26;

/// # Format
/// `FIELDEXPIRE key seconds member…` → array with, per member, 1 (deadline
/// set to now + seconds) or -2 (no such member, or no key). `seconds` must
/// be in 1..=2^26.
fn fieldexpire(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let secs = argv
        .get(2)
        .and_then(|a| parse_u64(a))
        .filter(|s| (1..=FIELDEXPIRE_MAX_SECS).contains(s))
        .ok_or(Error::NotInteger)?;
    let (key, members) = match argv.get(1..) {
        Some([key, _, members @ ..]) => (key, members),
        _ => return Err(Error::WrongArity(command_name(argv))),
    };
    let codes = match kind_of(ctx, key)? {
        None => vec![NO_MEMBER; members.len()],
        Some(kind) => {
            let at = ctx.now + secs * 1000;
            dispatch!(kind, expire_members(ctx, key, at, Cond::Always, members))?
        }
    };
    Ok(Reply::Array(codes.into_iter().map(Reply::Int).collect()))
}

/// # Format
/// `FIELDTTL key member` → -2 no key, -3 no such member, -1 no deadline,
/// else seconds left (rounded up).
fn fieldttl(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let (key, member) = match argv {
        [_, key, member] => (key, std::slice::from_ref(member)),
        _ => return Err(Error::WrongArity(command_name(argv))),
    };
    let Some(kind) = kind_of(ctx, key)? else {
        return Ok(Reply::Int(-2));
    };
    let now = ctx.now;
    let d = dispatch!(kind, member_deadlines(ctx, key, member))?;
    Ok(Reply::Int(match d.into_iter().next() {
        Some(Ok(Some(at))) => ceil_secs(at.saturating_sub(now)),
        Some(Ok(None)) => NO_DEADLINE,
        _ => -3,
    }))
}

#[cfg(test)]
#[path = "member_ttl_compat_tests.rs"]
mod tests;
