//! SPOP and SRANDMEMBER: random members of a set, removed or not.

use bytes::Bytes;
use rand::Rng;

use crate::args::{parse_i64, Args};
use crate::cmd::sets::{delete_emptied, log_cmd, member_replies};
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::SetValue;

/// SPOP and SRANDMEMBER.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "spop",
        -2,
        "write fast",
        (1, 1, 1),
        "set",
        "Remove and return one or multiple random members from a set",
        spop,
    ),
    CommandSpec::core(
        "srandmember",
        -2,
        "readonly",
        (1, 1, 1),
        "set",
        "Get one or multiple random members from a set",
        srandmember,
    ),
];

/// The largest number of members SRANDMEMBER returns for a negative count.
/// Redis streams such a reply into an unbounded output buffer; ebb builds it
/// in memory first, so a count like -10^18 must be refused, not attempted.
pub const RANDOM_REPEAT_MAX: i64 = 1 << 24;

/// `count` distinct members picked at random (`count < set.len()`).
fn sample_distinct(set: &SetValue, count: usize) -> Vec<Bytes> {
    let mut rng = rand::thread_rng();
    rand::seq::index::sample(&mut rng, set.len(), count.min(set.len()))
        .into_iter()
        .filter_map(|i| set.get_index(i).map(Bytes::copy_from_slice))
        .collect()
}

/// One member picked at random, if the set has any.
fn pick_one(set: &SetValue) -> Option<Bytes> {
    if set.is_empty() {
        return None;
    }
    let i = rand::thread_rng().gen_range(0..set.len());
    set.get_index(i).map(Bytes::copy_from_slice)
}

/// # Format
/// `SPOP key [count]` → without count, one random member removed from the
/// set (nil if no key); with count, up to `count` distinct random members
/// removed (a set reply, empty if no key). Logged as `SREM key member…`, or
/// as `DEL key` when the whole set was popped.
fn spop(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    if argv.len() > 3 {
        return Err(Error::Syntax);
    }
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let count = match a.next() {
        None => None,
        Some(c) => Some(
            parse_i64(c)
                .filter(|n| *n >= 0)
                .ok_or(Error::MustBePositive)? as u64,
        ),
    };
    let Some(set) = ctx.get_mut::<SetValue>(key)? else {
        ctx.rewrite_as(Vec::new());
        return Ok(if count.is_some() {
            Reply::Set(Vec::new())
        } else {
            Reply::Nil
        });
    };
    let Some(count) = count else {
        let Some(m) = pick_one(set) else {
            ctx.rewrite_as(Vec::new());
            return Ok(Reply::Nil);
        };
        set.remove(&m);
        let emptied = set.is_empty();
        ctx.modified(key);
        ctx.notify(b's', "spop", key);
        ctx.rewrite_as(vec![log_cmd(b"SREM", key, [&m])]);
        if emptied {
            delete_emptied(ctx, key);
        }
        return Ok(Reply::Bulk(m));
    };
    if count == 0 || set.is_empty() {
        ctx.rewrite_as(Vec::new());
        return Ok(Reply::Set(Vec::new()));
    }
    if count >= set.len() as u64 {
        let all = member_replies(set.iter());
        ctx.modified(key);
        ctx.notify(b's', "spop", key);
        ctx.rewrite_as(vec![log_cmd(b"DEL", key, [] as [&[u8]; 0])]);
        delete_emptied(ctx, key);
        return Ok(Reply::Set(all));
    }
    let popped = sample_distinct(set, count as usize);
    for m in &popped {
        set.remove(m);
    }
    ctx.modified(key);
    ctx.notify(b's', "spop", key);
    ctx.rewrite_as(vec![log_cmd(b"SREM", key, &popped)]);
    Ok(Reply::Set(member_replies(&popped)))
}

/// # Format
/// `SRANDMEMBER key [count]` → without count, one random member (nil if no
/// key); with a positive count, up to `count` distinct members; with a
/// negative count, exactly `-count` members that may repeat (an array,
/// empty if no key). `count` below `-16777216` is refused (see
/// [`RANDOM_REPEAT_MAX`]).
fn srandmember(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    if argv.len() > 3 {
        return Err(Error::Syntax);
    }
    let mut a = Args::new(argv);
    let key = a.bytes()?;
    let count = match a.next() {
        None => None,
        Some(c) => {
            let n = parse_i64(c).ok_or(Error::NotInteger)?;
            if n == i64::MIN {
                return Err(Error::msg(
                    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                ));
            }
            if n < -RANDOM_REPEAT_MAX {
                return Err(Error::msg(
                    "ERR value is out of range, value must between -16777216 and 9223372036854775807",
                ));
            }
            Some(n)
        }
    };
    let set = ctx.get::<SetValue>(key)?;
    let Some(count) = count else {
        return Ok(set.and_then(pick_one).map_or(Reply::Nil, Reply::Bulk));
    };
    let Some(set) = set else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == 0 || set.is_empty() {
        return Ok(Reply::Array(Vec::new()));
    }
    if count < 0 {
        let mut rng = rand::thread_rng();
        let n = count.unsigned_abs() as usize;
        // A packed set finds a position by walking: walk it once.
        let packed: Option<Vec<&[u8]>> = set.is_packed().then(|| set.iter().collect());
        let picks = (0..n).filter_map(|_| {
            let i = rng.gen_range(0..set.len());
            match &packed {
                Some(all) => all.get(i).copied(),
                None => set.get_index(i),
            }
        });
        return Ok(Reply::Array(member_replies(picks)));
    }
    if count as u64 >= set.len() as u64 {
        return Ok(Reply::Array(member_replies(set.iter())));
    }
    Ok(Reply::Array(member_replies(sample_distinct(
        set,
        count as usize,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sets::test_util::*;
    use crate::testing::{bulk, err, Harness};

    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

    fn setup() -> Harness {
        let mut h = Harness::new();
        h.run(&["SET", "str", "x"]);
        h
    }

    #[test]
    fn spop_single() {
        let mut h = setup();
        assert_eq!(h.run(&["SPOP", "nokey"]), Reply::Nil);
        assert_eq!(logged(&h), Some(vec![]));
        h.run(&["SADD", "s", "a", "b"]);
        let Reply::Bulk(m) = h.run(&["SPOP", "s"]) else {
            panic!("bulk expected")
        };
        let m = String::from_utf8_lossy(&m).into_owned();
        assert_eq!(events(&h), ["spop:s"]);
        assert_eq!(
            logged(&h),
            Some(vec![vec!["SREM".into(), "s".into(), m.clone()]])
        );
        assert_eq!(h.run(&["SISMEMBER", "s", &m]), Reply::Int(0));
        assert!(matches!(h.run(&["SPOP", "s"]), Reply::Bulk(_)));
        assert_eq!(events(&h), ["spop:s", "del:s"]);
        assert!(raw_set(&h, "s").is_none());
        assert_eq!(h.run(&["SPOP", "str"]), err(WRONGTYPE));
    }

    #[test]
    fn spop_with_count() {
        let mut h = setup();
        assert_eq!(h.run(&["SPOP", "nokey", "3"]), Reply::Set(vec![]));
        h.run(&["SADD", "s", "a", "b", "c", "d", "e"]);
        assert_eq!(h.run(&["SPOP", "s", "0"]), Reply::Set(vec![]));
        assert!(h.fx.events.is_empty());
        let r = h.run(&["SPOP", "s", "2"]);
        assert!(matches!(r, Reply::Set(_)));
        let popped = sorted(&r);
        assert_eq!(popped.len(), 2);
        assert_ne!(popped[0], popped[1]);
        let log = logged(&h).unwrap_or_default();
        assert_eq!(log.len(), 1);
        assert_eq!(log[0][..2], ["SREM".to_string(), "s".to_string()]);
        let mut logged_members = log[0][2..].to_vec();
        logged_members.sort();
        assert_eq!(logged_members, popped);
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(3));
        let rest = sorted(&h.run(&["SPOP", "s", "3"]));
        assert_eq!(rest.len(), 3);
        assert_eq!(events(&h), ["spop:s", "del:s"]);
        assert_eq!(
            logged(&h),
            Some(vec![vec!["DEL".to_string(), "s".to_string()]])
        );
        let mut all = [popped, rest].concat();
        all.sort();
        assert_eq!(all, ["a", "b", "c", "d", "e"]);
        h.run(&["SADD", "s", "a"]);
        assert_eq!(sorted(&h.run(&["SPOP", "s", "100"])), ["a"]);
    }

    #[test]
    fn spop_errors() {
        let mut h = setup();
        h.run(&["SADD", "s", "a"]);
        let positive = err("ERR value is out of range, must be positive");
        assert_eq!(h.run(&["SPOP", "s", "-1"]), positive);
        assert_eq!(h.run(&["SPOP", "s", "abc"]), positive);
        assert_eq!(h.run(&["SPOP", "str", "abc"]), positive);
        assert_eq!(h.run(&["SPOP", "s", "1", "2"]), err("ERR syntax error"));
        assert_eq!(h.run(&["SPOP", "str", "0"]), err(WRONGTYPE));
        assert_eq!(
            h.run(&["SPOP"]),
            err("ERR wrong number of arguments for 'spop' command")
        );
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(1));
    }

    #[test]
    fn spop_never_returns_expired_members() {
        let mut h = setup();
        h.run(&["SADD", "s", "a", "b", "c"]);
        expire_in(&mut h, "s", "a", 5);
        expire_in(&mut h, "s", "b", 5);
        h.advance(5);
        assert_eq!(sorted(&h.run(&["SPOP", "s", "10"])), ["c"]);
        assert!(h.fx.propagate.iter().any(|(_, c)| &c[0][..] == b"SREM"));
    }

    #[test]
    fn srandmember_shapes() {
        let mut h = setup();
        assert_eq!(h.run(&["SRANDMEMBER", "nokey"]), Reply::Nil);
        assert_eq!(h.run(&["SRANDMEMBER", "nokey", "3"]), Reply::Array(vec![]));
        assert_eq!(h.run(&["SRANDMEMBER", "nokey", "-3"]), Reply::Array(vec![]));
        h.run(&["SADD", "s", "a", "b", "c"]);
        let one = h.run(&["SRANDMEMBER", "s"]);
        assert!([bulk("a"), bulk("b"), bulk("c")].contains(&one));
        assert_eq!(h.run(&["SRANDMEMBER", "s", "0"]), Reply::Array(vec![]));
        assert_eq!(sorted(&h.run(&["SRANDMEMBER", "s", "3"])), ["a", "b", "c"]);
        assert_eq!(
            sorted(&h.run(&["SRANDMEMBER", "s", "100"])),
            ["a", "b", "c"]
        );
        let two = sorted(&h.run(&["SRANDMEMBER", "s", "2"]));
        assert_eq!(two.len(), 2);
        assert_ne!(two[0], two[1]);
        let r = h.run(&["SRANDMEMBER", "s", "-10"]);
        assert!(matches!(r, Reply::Array(_)));
        let many = sorted(&r);
        assert_eq!(many.len(), 10);
        assert!(many.iter().all(|m| ["a", "b", "c"].contains(&m.as_str())));
        assert_eq!(h.run(&["SCARD", "s"]), Reply::Int(3));
        assert!(h.fx.touched.is_empty());
    }

    #[test]
    fn srandmember_errors() {
        let mut h = setup();
        h.run(&["SADD", "s", "a"]);
        assert_eq!(
            h.run(&["SRANDMEMBER", "s", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["SRANDMEMBER", "s", "9223372036854775808"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            h.run(&["SRANDMEMBER", "s", "-9223372036854775808"]),
            err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
        );
        assert_eq!(
            h.run(&["SRANDMEMBER", "s", "-16777217"]),
            err("ERR value is out of range, value must between -16777216 and 9223372036854775807")
        );
        assert_eq!(
            sorted(&h.run(&["SRANDMEMBER", "s", "9223372036854775807"])),
            ["a"]
        );
        assert_eq!(
            h.run(&["SRANDMEMBER", "s", "1", "2"]),
            err("ERR syntax error")
        );
        assert_eq!(h.run(&["SRANDMEMBER", "str"]), err(WRONGTYPE));
        assert_eq!(h.run(&["SRANDMEMBER", "str", "0"]), err(WRONGTYPE));
    }
}
