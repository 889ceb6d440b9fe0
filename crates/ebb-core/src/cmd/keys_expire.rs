//! Key TTLs: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX, GT, LT),
//! EXPIRETIME, PEXPIRETIME. A key's deadline is [`crate::Entry::expire_at`],
//! set through [`crate::Db::set_expire`] so the key-TTL index stays right.
//! (TTL, PTTL and PERSIST, which also have member forms, live with the
//! member-expiration commands.)

use bytes::Bytes;

use crate::args::parse_i64;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;

/// The key-TTL commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "expire",
        -3,
        "write fast",
        (1, 1, 1),
        "generic",
        "Sets the expiration time of a key in seconds.",
        expire,
    ),
    CommandSpec::core(
        "pexpire",
        -3,
        "write fast",
        (1, 1, 1),
        "generic",
        "Sets the expiration time of a key in milliseconds.",
        pexpire,
    ),
    CommandSpec::core(
        "expireat",
        -3,
        "write fast",
        (1, 1, 1),
        "generic",
        "Sets the expiration time of a key to a Unix timestamp.",
        expireat,
    ),
    CommandSpec::core(
        "pexpireat",
        -3,
        "write fast",
        (1, 1, 1),
        "generic",
        "Sets the expiration time of a key to a Unix milliseconds timestamp.",
        pexpireat,
    ),
    CommandSpec::core(
        "expiretime",
        2,
        "readonly fast",
        (1, 1, 1),
        "generic",
        "Returns the expiration time of a key as a Unix timestamp.",
        expiretime,
    ),
    CommandSpec::core(
        "pexpiretime",
        2,
        "readonly fast",
        (1, 1, 1),
        "generic",
        "Returns the expiration time of a key as a Unix milliseconds timestamp.",
        pexpiretime,
    ),
];

/// The NX/XX/GT/LT condition of an EXPIRE-style command.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExpireCondition {
    /// Only if there is no deadline yet.
    pub nx: bool,
    /// Only if there is a deadline already.
    pub xx: bool,
    /// Only if the new deadline is later (no deadline counts as infinite).
    pub gt: bool,
    /// Only if the new deadline is earlier (no deadline counts as infinite).
    pub lt: bool,
}

impl ExpireCondition {
    /// Parses the trailing options with Redis's errors:
    /// `ERR Unsupported option <opt>` for anything else, and the two
    /// incompatibility errors.
    pub fn parse(opts: &[&[u8]]) -> CmdResult<ExpireCondition> {
        let mut c = ExpireCondition::default();
        for o in opts {
            if o.eq_ignore_ascii_case(b"nx") {
                c.nx = true;
            } else if o.eq_ignore_ascii_case(b"xx") {
                c.xx = true;
            } else if o.eq_ignore_ascii_case(b"gt") {
                c.gt = true;
            } else if o.eq_ignore_ascii_case(b"lt") {
                c.lt = true;
            } else {
                // Redis prints the option as a C string.
                let end = o.iter().position(|&b| b == 0).unwrap_or(o.len());
                let shown = String::from_utf8_lossy(&o[..end]);
                return Err(Error::msg(format!("ERR Unsupported option {shown}")));
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(Error::msg(
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            ));
        }
        if c.gt && c.lt {
            return Err(Error::msg(
                "ERR GT and LT options at the same time are not compatible",
            ));
        }
        Ok(c)
    }

    /// Whether the new deadline `when` may replace `current` (None = no
    /// deadline, which counts as infinite for GT and LT).
    pub fn allows(&self, current: Option<i64>, when: i64) -> bool {
        if self.nx && current.is_some() {
            return false;
        }
        if self.xx && current.is_none() {
            return false;
        }
        if self.gt && current.is_none_or(|c| when <= c) {
            return false;
        }
        if self.lt && current.is_some_and(|c| when >= c) {
            return false;
        }
        true
    }
}

/// How an EXPIRE-style command reads its time argument.
#[derive(Clone, Copy)]
struct TimeArg {
    /// Relative to now (EXPIRE, PEXPIRE) rather than absolute.
    relative: bool,
    /// In seconds (EXPIRE, EXPIREAT) rather than milliseconds.
    seconds: bool,
    /// The command name, lower case, for the overflow error.
    name: &'static str,
}

/// Converts the time argument to an absolute deadline in Unix ms,
/// rejecting overflow exactly where Redis does.
fn absolute_ms(arg: &[u8], t: TimeArg, now: u64) -> CmdResult<i64> {
    let mut when = parse_i64(arg).ok_or(Error::NotInteger)?;
    let invalid = || Error::InvalidExpire(t.name.to_string());
    if t.seconds {
        when = when.checked_mul(1000).ok_or_else(invalid)?;
    }
    let base = if t.relative {
        i64::try_from(now).unwrap_or(i64::MAX)
    } else {
        0
    };
    if when > i64::MAX - base {
        return Err(invalid());
    }
    Ok(when + base)
}

/// # Format
/// `EXPIRE key seconds [NX|XX|GT|LT]` → 1 if the TTL was set (or the key
/// deleted because the time is not in the future), 0 if the key does not
/// exist or the condition was not met.
fn expire(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(
        ctx,
        argv,
        TimeArg {
            relative: true,
            seconds: true,
            name: "expire",
        },
    )
}

/// # Format
/// `PEXPIRE key milliseconds [NX|XX|GT|LT]` → as EXPIRE.
fn pexpire(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(
        ctx,
        argv,
        TimeArg {
            relative: true,
            seconds: false,
            name: "pexpire",
        },
    )
}

/// # Format
/// `EXPIREAT key unix-time-seconds [NX|XX|GT|LT]` → as EXPIRE.
fn expireat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(
        ctx,
        argv,
        TimeArg {
            relative: false,
            seconds: true,
            name: "expireat",
        },
    )
}

/// # Format
/// `PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]` → as EXPIRE.
fn pexpireat(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(
        ctx,
        argv,
        TimeArg {
            relative: false,
            seconds: false,
            name: "pexpireat",
        },
    )
}

fn expire_generic(ctx: &mut Ctx, argv: &[&[u8]], t: TimeArg) -> CmdResult<Reply> {
    let key = &argv[1];
    let cond = ExpireCondition::parse(&argv[3..])?;
    let when = absolute_ms(argv[2], t, ctx.clock)?;
    if !ctx.exists(key) {
        return Ok(Reply::Int(0));
    }
    let current = ctx
        .db()
        .peek(key)
        .and_then(|e| e.expire_at())
        .map(|c| c.min(i64::MAX as u64) as i64);
    if !cond.allows(current, when) {
        return Ok(Reply::Int(0));
    }
    if when <= ctx.clock as i64 && !ctx.store.loading {
        ctx.delete(key);
        ctx.rewrite_as(vec![vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key),
        ]]);
        ctx.modified(key);
        ctx.notify(b'g', "del", key);
        return Ok(Reply::Int(1));
    }
    ctx.db().set_expire(key, Some(when as u64));
    if t.relative || t.seconds {
        // Logged as an absolute deadline so replay gives the same instant.
        let mut cmd = Vec::with_capacity(argv.len());
        cmd.push(Bytes::from_static(b"PEXPIREAT"));
        cmd.push(Bytes::copy_from_slice(key));
        cmd.push(Bytes::from(when.to_string()));
        cmd.extend(argv[3..].iter().map(|o| Bytes::copy_from_slice(o)));
        ctx.rewrite_as(vec![cmd]);
    }
    ctx.modified(key);
    ctx.notify(b'g', "expire", key);
    Ok(Reply::Int(1))
}

/// # Format
/// `EXPIRETIME key` → the absolute Unix time (seconds, rounded to the
/// nearest) at which the key expires; -1 if it has no TTL, -2 if it does
/// not exist.
fn expiretime(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expiretime_generic(ctx, argv[1], false)
}

/// # Format
/// `PEXPIRETIME key` → as EXPIRETIME, in milliseconds.
fn pexpiretime(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    expiretime_generic(ctx, argv[1], true)
}

fn expiretime_generic(ctx: &mut Ctx, key: &[u8], ms: bool) -> CmdResult<Reply> {
    // Reading a TTL is not an access (OBJECT IDLETIME), as in Redis.
    ctx.no_touch = true;
    let Some(e) = ctx.entry(key) else {
        return Ok(Reply::Int(-2));
    };
    Ok(Reply::Int(match e.expire_at() {
        None => -1,
        Some(t) if ms => t.min(i64::MAX as u64) as i64,
        Some(t) => ((t as i128 + 500) / 1000) as i64,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::keys::tests::{b, events, put_set, set_member_deadline, set_members};
    use crate::testing::{err, Harness};

    fn ttl_of(h: &Harness, key: &str) -> Option<u64> {
        h.store.dbs[h.db]
            .peek(key.as_bytes())
            .and_then(|e| e.expire_at())
    }

    fn logged(h: &Harness) -> Vec<Vec<String>> {
        h.fx.rewrite
            .as_ref()
            .map(|cmds| {
                cmds.iter()
                    .map(|c| {
                        c.iter()
                            .map(|a| String::from_utf8_lossy(a).into_owned())
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn expire_sets_deadline_and_logs_absolute() {
        let mut h = Harness::new();
        let now = h.now;
        h.run(&["SET", "k", "v"]);
        assert_eq!(h.run(&["EXPIRE", "k", "10"]), Reply::Int(1));
        assert_eq!(ttl_of(&h, "k"), Some(now + 10_000));
        assert_eq!(
            events(&h),
            vec![('g', "expire".to_string(), 0, "k".to_string())]
        );
        assert_eq!(h.fx.touched, vec![(0, b("k"))]);
        let at = (now + 10_000).to_string();
        assert_eq!(
            logged(&h),
            vec![vec!["PEXPIREAT".to_string(), "k".to_string(), at]]
        );
        assert_eq!(h.run(&["PEXPIRE", "k", "1500", "xx"]), Reply::Int(1));
        assert_eq!(ttl_of(&h, "k"), Some(now + 1_500));
        let at = (now + 1_500).to_string();
        let want: Vec<String> = ["PEXPIREAT", "k", &at, "xx"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(logged(&h), vec![want]);
        assert_eq!(h.run(&["EXPIREAT", "k", "2000000000"]), Reply::Int(1));
        assert_eq!(ttl_of(&h, "k"), Some(2_000_000_000_000));
        assert_eq!(logged(&h)[0][2], "2000000000000");
        assert_eq!(h.run(&["PEXPIREAT", "k", "2000000000001"]), Reply::Int(1));
        assert_eq!(ttl_of(&h, "k"), Some(2_000_000_000_001));
        assert!(h.fx.rewrite.is_none());
        assert_eq!(h.run(&["EXPIRETIME", "k"]), Reply::Int(2_000_000_000));
        assert_eq!(h.run(&["PEXPIRETIME", "k"]), Reply::Int(2_000_000_000_001));
        h.run(&["PEXPIREAT", "k", "2000000000500"]);
        assert_eq!(h.run(&["EXPIRETIME", "k"]), Reply::Int(2_000_000_001));
        h.run(&["PEXPIREAT", "k", "2000000000499"]);
        assert_eq!(h.run(&["EXPIRETIME", "k"]), Reply::Int(2_000_000_000));
        // The key is gone once the deadline passes.
        h.advance(2_000_000_000_499 - now);
        assert_eq!(h.run(&["EXPIRETIME", "k"]), Reply::Int(-2));
    }

    #[test]
    fn expire_missing_key_and_times() {
        let mut h = Harness::new();
        assert_eq!(h.run(&["EXPIRE", "nope", "10"]), Reply::Int(0));
        assert!(h.fx.events.is_empty());
        assert_eq!(h.run(&["EXPIRETIME", "nope"]), Reply::Int(-2));
        assert_eq!(h.run(&["PEXPIRETIME", "nope"]), Reply::Int(-2));
        h.run(&["SET", "k", "v"]);
        assert_eq!(h.run(&["EXPIRETIME", "k"]), Reply::Int(-1));
        assert_eq!(h.run(&["PEXPIRETIME", "k"]), Reply::Int(-1));
        assert_eq!(
            h.run(&["PEXPIREAT", "k", "9223372036854775807"]),
            Reply::Int(1)
        );
        assert_eq!(h.run(&["PEXPIRETIME", "k"]), Reply::Int(i64::MAX));
        assert_eq!(
            h.run(&["EXPIRETIME", "k"]),
            Reply::Int(9_223_372_036_854_776)
        );
    }

    #[test]
    fn while_loading_a_past_deadline_is_set_and_nothing_expires() {
        let mut h = Harness::new();
        h.store.loading = true;
        h.run(&["RPUSH", "l", "a"]);
        assert_eq!(h.run(&["PEXPIREAT", "l", "1000"]), Reply::Int(1));
        assert_eq!(h.run(&["RPUSH", "l", "b"]), Reply::Int(2));
        assert_eq!(h.run(&["PEXPIRETIME", "l"]), Reply::Int(1000));
        h.store.loading = false;
        assert_eq!(h.run(&["EXISTS", "l"]), Reply::Int(0));
    }

    #[test]
    fn past_deadline_deletes_and_logs_del() {
        let mut h = Harness::new();
        for (cmd, t) in [
            ("EXPIRE", "0"),
            ("EXPIRE", "-5"),
            ("PEXPIRE", "0"),
            ("EXPIREAT", "1"),
            ("PEXPIREAT", "-9"),
        ] {
            h.run(&["SET", "k", "v"]);
            assert_eq!(h.run(&[cmd, "k", t]), Reply::Int(1), "{cmd} {t}");
            assert_eq!(
                events(&h),
                vec![('g', "del".to_string(), 0, "k".to_string())]
            );
            assert_eq!(logged(&h), vec![vec!["DEL".to_string(), "k".to_string()]]);
            assert_eq!(h.run(&["EXISTS", "k"]), Reply::Int(0));
        }
        // Exactly now counts as past.
        h.run(&["SET", "k", "v"]);
        let now = h.now.to_string();
        assert_eq!(h.run(&["PEXPIREAT", "k", &now]), Reply::Int(1));
        assert_eq!(h.run(&["EXISTS", "k"]), Reply::Int(0));
    }

    #[test]
    fn conditions() {
        let mut h = Harness::new();
        h.run(&["SET", "k", "v"]);
        assert_eq!(h.run(&["EXPIRE", "k", "100", "XX"]), Reply::Int(0));
        assert_eq!(h.run(&["EXPIRE", "k", "100", "GT"]), Reply::Int(0));
        assert_eq!(h.run(&["EXPIRE", "k", "100", "LT"]), Reply::Int(1));
        assert_eq!(h.run(&["EXPIRE", "k", "200", "NX"]), Reply::Int(0));
        assert_eq!(h.run(&["EXPIRE", "k", "200", "LT"]), Reply::Int(0));
        assert_eq!(h.run(&["EXPIRE", "k", "100", "GT"]), Reply::Int(0));
        assert_eq!(h.run(&["EXPIRE", "k", "200", "GT"]), Reply::Int(1));
        assert_eq!(h.run(&["EXPIRE", "k", "300", "XX", "GT"]), Reply::Int(1));
        assert_eq!(h.run(&["EXPIRE", "k", "50", "xx", "lt"]), Reply::Int(1));
        assert!(h.fx.touched.len() == 1);
        h.run(&["SET", "n", "v"]);
        assert_eq!(h.run(&["EXPIRE", "n", "50", "nx"]), Reply::Int(1));
        // A condition that fails does not delete even with a past time.
        h.run(&["SET", "p", "v"]);
        assert_eq!(h.run(&["EXPIRE", "p", "-1", "XX"]), Reply::Int(0));
        assert_eq!(h.run(&["EXISTS", "p"]), Reply::Int(1));
        assert_eq!(h.run(&["EXPIRE", "p", "-1", "LT"]), Reply::Int(1));
        assert_eq!(h.run(&["EXISTS", "p"]), Reply::Int(0));
    }

    #[test]
    fn option_and_number_errors() {
        let mut h = Harness::new();
        h.run(&["SET", "k", "v"]);
        let nx = err("ERR NX and XX, GT or LT options at the same time are not compatible");
        assert_eq!(h.run(&["EXPIRE", "k", "10", "nx", "xx"]), nx);
        assert_eq!(h.run(&["EXPIRE", "k", "10", "nx", "gt"]), nx);
        assert_eq!(h.run(&["EXPIRE", "k", "10", "lt", "nx"]), nx);
        assert_eq!(
            h.run(&["EXPIRE", "k", "10", "gt", "lt"]),
            err("ERR GT and LT options at the same time are not compatible")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "10", "foo"]),
            err("ERR Unsupported option foo")
        );
        // Options are checked before the number.
        assert_eq!(
            h.run(&["EXPIRE", "k", "abc", "foo"]),
            err("ERR Unsupported option foo")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "1.5"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "9223372036854775807"]),
            err("ERR invalid expire time in 'expire' command")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "9223372036854775"]),
            err("ERR invalid expire time in 'expire' command")
        );
        assert_eq!(
            h.run(&["EXPIRE", "k", "-9223372036854775808"]),
            err("ERR invalid expire time in 'expire' command")
        );
        assert_eq!(
            h.run(&["PEXPIRE", "k", "9223372036854775807"]),
            err("ERR invalid expire time in 'pexpire' command")
        );
        assert_eq!(
            h.run(&["EXPIREAT", "k", "9223372036854776"]),
            err("ERR invalid expire time in 'expireat' command")
        );
        assert_eq!(h.run(&["EXPIREAT", "k", "9223372036854775"]), Reply::Int(1));
        assert_eq!(
            h.run(&["EXPIRE", "k"]),
            err("ERR wrong number of arguments for 'expire' command")
        );
        // Errors even for a missing key.
        assert_eq!(
            h.run(&["EXPIRE", "nope", "x"]),
            err("ERR value is not an integer or out of range")
        );
    }

    #[test]
    fn key_ttl_leaves_member_deadlines_alone() {
        let mut h = Harness::new();
        put_set(&mut h, "s", &["a", "b"]);
        let t = h.now + 1_000;
        set_member_deadline(&mut h, 0, "s", "a", t);
        assert_eq!(h.run(&["EXPIRE", "s", "10"]), Reply::Int(1));
        h.advance(1_000);
        assert_eq!(
            h.run(&["EXPIRETIME", "s"]),
            Reply::Int(((h.now - 1_000 + 10_000 + 500) / 1000) as i64)
        );
        assert_eq!(set_members(&h, 0, "s"), vec!["b"]);
        h.advance(9_000);
        assert_eq!(h.run(&["PEXPIRETIME", "s"]), Reply::Int(-2));
    }

    #[test]
    fn expire_on_key_whose_members_all_expired() {
        let mut h = Harness::new();
        put_set(&mut h, "s", &["a"]);
        let t = h.now + 10;
        set_member_deadline(&mut h, 0, "s", "a", t);
        h.advance(10);
        assert_eq!(h.run(&["EXPIRE", "s", "100"]), Reply::Int(0));
        assert_eq!(h.store.dbs[0].len(), 0);
    }
}
