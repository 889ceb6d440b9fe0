//! Rate limiting: `CL.THROTTLE`, the generic cell rate algorithm (GCRA) as
//! redis-cell implements it, with its replies and error texts.
//!
//! State is one string key per limiter holding the theoretical arrival time
//! (TAT) in Unix nanoseconds, with a key TTL that ends when the limiter is
//! back to full capacity, exactly as redis-cell stores it, so a client may
//! inspect or delete it with ordinary commands. The arithmetic mirrors
//! redis-cell's (64-bit nanoseconds, wrapping where a release build of
//! redis-cell wraps) but never panics.

use bytes::Bytes;

use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{StrValue, Value};

/// The limits family's commands.
pub const COMMANDS: &[CommandSpec] = &[CommandSpec::core(
    "cl.throttle",
    -1,
    "write denyoom",
    (1, 1, 1),
    "generic",
    "Applies a GCRA rate limit (redis-cell): replies [limited, limit, remaining, retry_after, reset_after].",
    throttle,
)];

const NS_PER_SEC: i128 = 1_000_000_000;
const NS_PER_MS: i128 = 1_000_000;
const NS_PER_US: i128 = 1_000;

/// An error as redis-cell reports its own failures.
fn cell_error(msg: impl std::fmt::Display) -> Error {
    Error::msg(format!("Cell error: {msg}"))
}

/// An error raised by redis-cell's store layer (argument and rate errors).
fn store_error(msg: impl std::fmt::Display) -> Error {
    cell_error(format!("Store error: {msg}"))
}

/// Parses an argument as redis-cell does (Rust's `i64` parsing: an optional
/// sign, decimal digits).
fn parse_arg(arg: &[u8]) -> CmdResult<i64> {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| {
            store_error(format!(
                "Couldn't parse as integer: {}",
                String::from_utf8_lossy(arg)
            ))
        })
}

/// The limiter's parameters, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Time between two requests at exactly the sustained rate.
    pub emission: i64,
    /// Delay variation tolerance: how far ahead of schedule requests may run.
    pub dvt: i64,
    /// `max_burst + 1`, reported as the limit.
    pub limit: i64,
}

impl Quota {
    /// `count` requests per `period` seconds, bursts of `max_burst` more.
    pub fn new(max_burst: i64, count: i64, period: i64) -> Quota {
        let period_ns = (period as i128 * NS_PER_SEC) as i64;
        let emission = if count == 0 || period_ns == 0 {
            0
        } else {
            (period_ns as f64 / count as f64) as i64
        };
        let limit = max_burst.wrapping_add(1);
        Quota {
            emission,
            dvt: emission.wrapping_mul(limit),
            limit,
        }
    }
}

/// The outcome of one rate-limit check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is refused.
    pub limited: bool,
    /// `max_burst + 1`.
    pub limit: i64,
    /// Requests still allowed right now.
    pub remaining: i64,
    /// When refused, the time until a retry can succeed (ns); -1 s otherwise.
    pub retry_after: i128,
    /// The time until the limiter is back to full capacity (ns).
    pub reset_after: i128,
    /// When allowed, the new TAT to store (ns).
    pub new_tat: Option<i64>,
}

/// One GCRA step at `now` (Unix ns) for `quantity` requests, given the
/// stored TAT (if any).
pub fn decide(q: &Quota, stored_tat: Option<i64>, now: i128, quantity: i64) -> CmdResult<Decision> {
    if q.emission == 0 {
        return Err(store_error("Zero rates are not supported"));
    }
    let emission = q.emission as i128;
    let dvt = q.dvt as i128;
    let increment = q.emission.wrapping_mul(quantity) as i128;
    // redis-cell reads a missing key as -1.
    let tat = match stored_tat {
        None | Some(-1) => now,
        Some(t) => t as i128,
    };
    let new_tat = now.max(tat) + increment;
    let diff = now - (new_tat - dvt);
    let mut d = Decision {
        limited: diff < 0,
        limit: q.limit,
        remaining: 0,
        retry_after: -NS_PER_SEC,
        reset_after: 0,
        new_tat: None,
    };
    let ttl = if d.limited {
        if increment <= dvt {
            d.retry_after = -diff;
        }
        tat - now
    } else {
        d.new_tat = Some(new_tat as i64);
        new_tat - now
    };
    let next = dvt - ttl;
    if next > -emission {
        d.remaining = ((next / NS_PER_US) as f64 / (emission / NS_PER_US) as f64) as i64;
    }
    d.reset_after = ttl;
    Ok(d)
}

/// Whole seconds of a duration, plus one if it has a positive millisecond
/// part (so that a fast client does not retry too early).
pub fn reply_secs(ns: i128) -> i64 {
    let secs = ns / NS_PER_SEC;
    let sub_ms = (ns % NS_PER_SEC) / NS_PER_MS;
    (secs + i128::from(sub_ms > 0)) as i64
}

/// The stored TAT of `key`, with redis-cell's errors for unreadable values.
fn stored_tat(ctx: &mut Ctx, key: &[u8]) -> CmdResult<Option<i64>> {
    let Some(v) = ctx.get::<StrValue>(key)? else {
        return Ok(None);
    };
    let s = String::from_utf8(v.to_vec()).map_err(cell_error)?;
    s.parse::<i64>().map(Some).map_err(cell_error)
}

/// # Format
/// `CL.THROTTLE key max_burst count_per_period period [quantity]` → array
/// `[limited (0/1), limit (max_burst + 1), remaining, retry_after (seconds,
/// -1 when allowed), reset_after (seconds)]`. `quantity` (default 1) is the
/// cost of this request; 0 only looks at the state.
fn throttle(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    if argv.len() != 5 && argv.len() != 6 {
        return Err(store_error(
            "Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]",
        ));
    }
    let key = &argv[1];
    let max_burst = parse_arg(argv[2])?;
    let count = parse_arg(argv[3])?;
    let period = parse_arg(argv[4])?;
    let quantity = match argv.get(5) {
        Some(q) => parse_arg(q)?,
        None => 1,
    };
    let quota = Quota::new(max_burst, count, period);
    if quota.emission == 0 {
        return Err(store_error("Zero rates are not supported"));
    }
    let now_ns = ctx.now as i128 * NS_PER_MS;
    let d = decide(&quota, stored_tat(ctx, key)?, now_ns, quantity)?;
    let mut log = Vec::new();
    if let Some(tat) = d.new_tat {
        store(ctx, key, tat, d.reset_after, &mut log)?;
    }
    ctx.rewrite_as(log);
    Ok(Reply::Array(vec![
        Reply::Int(i64::from(d.limited)),
        Reply::Int(d.limit),
        Reply::Int(d.remaining),
        Reply::Int(reply_secs(d.retry_after)),
        Reply::Int(reply_secs(d.reset_after)),
    ]))
}

/// Stores the new TAT with a key TTL of `ttl` (truncated to ms) as
/// redis-cell's module-API calls do: a TTL of 0 ms expires the key at once,
/// -1 ms means no TTL, and a lower one is an error after the write.
fn store(
    ctx: &mut Ctx,
    key: &[u8],
    tat: i64,
    ttl: i128,
    log: &mut Vec<Vec<Bytes>>,
) -> CmdResult<()> {
    let ttl_ms = (ttl / NS_PER_MS) as i64;
    let k = Bytes::copy_from_slice(key);
    let val = Bytes::from(tat.to_string());
    if ttl_ms == 0 {
        if ctx.delete(key) {
            ctx.modified(key);
            log.push(vec![Bytes::from_static(b"DEL"), k]);
        }
        return Ok(());
    }
    ctx.set_value(key, Value::Str(StrValue::new(&val)));
    ctx.modified(key);
    if ttl_ms < 0 {
        log.push(vec![Bytes::from_static(b"SET"), k, val]);
        if ttl_ms == -1 {
            return Ok(());
        }
        ctx.rewrite_as(std::mem::take(log));
        return Err(store_error("Error while setting key expire"));
    }
    let at = ctx.now.saturating_add(ttl_ms as u64);
    ctx.db().set_expire(key, Some(at));
    log.push(vec![
        Bytes::from_static(b"SET"),
        k,
        val,
        Bytes::from_static(b"PXAT"),
        Bytes::from(at.to_string()),
    ]);
    Ok(())
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
