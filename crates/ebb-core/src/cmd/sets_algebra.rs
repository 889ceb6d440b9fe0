//! Set algebra: SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE,
//! SDIFF and SDIFFSTORE. The algebra runs over live members only (lazy
//! expiry purges every source key first); a STORE result is a new set whose
//! members carry no deadline, replacing the destination and its TTL.

use bytes::Bytes;
use indexmap::IndexSet;

use crate::args::{parse_i64, Args};
use crate::cmd::sets::member_replies;
use crate::ctx::Ctx;
use crate::error::{CmdResult, Error};
use crate::reply::Reply;
use crate::table::CommandSpec;
use crate::value::{SetValue, Value};

/// The set-algebra commands.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::core(
        "sinter",
        -2,
        "readonly",
        (1, -1, 1),
        "set",
        "Intersect multiple sets",
        sinter,
    ),
    CommandSpec::core(
        "sintercard",
        -3,
        "readonly movablekeys",
        (0, 0, 0),
        "set",
        "Intersect multiple sets and return the cardinality of the result",
        sintercard,
    )
    .with_keys(sintercard_keys),
    CommandSpec::core(
        "sinterstore",
        -3,
        "write denyoom",
        (1, -1, 1),
        "set",
        "Intersect multiple sets and store the resulting set in a key",
        sinterstore,
    ),
    CommandSpec::core(
        "sunion",
        -2,
        "readonly",
        (1, -1, 1),
        "set",
        "Add multiple sets",
        sunion,
    ),
    CommandSpec::core(
        "sunionstore",
        -3,
        "write denyoom",
        (1, -1, 1),
        "set",
        "Add multiple sets and store the resulting set in a key",
        sunionstore,
    ),
    CommandSpec::core(
        "sdiff",
        -2,
        "readonly",
        (1, -1, 1),
        "set",
        "Subtract multiple sets",
        sdiff,
    ),
    CommandSpec::core(
        "sdiffstore",
        -3,
        "write denyoom",
        (1, -1, 1),
        "set",
        "Subtract multiple sets and store the resulting set in a key",
        sdiffstore,
    ),
];

/// A set operation over a list of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetOp {
    /// Members of every key (a missing key is empty, so the result is too).
    Inter,
    /// Members of any key.
    Union,
    /// Members of the first key that are in none of the others.
    Diff,
}

/// Expires and type-checks every key in order (stopping at the first that
/// holds another type, as Redis does), then borrows the live sets; a
/// missing key is `None`.
fn live_sets<'c>(ctx: &'c mut Ctx, keys: &[&[u8]]) -> CmdResult<Vec<Option<&'c SetValue>>> {
    for k in keys {
        // Reads: each counts as a hit or a miss.
        ctx.get::<SetValue>(k)?;
    }
    let db = &ctx.store.dbs[ctx.db];
    Ok(keys
        .iter()
        .map(|k| match db.peek(k).map(|e| &e.value) {
            Some(Value::Set(s)) => Some(s),
            _ => None,
        })
        .collect())
}

/// The distinct members of the intersection, at most `limit` (0: all).
fn intersect(sets: &[Option<&SetValue>], limit: usize) -> Vec<Bytes> {
    let Some(mut sets) = sets.iter().copied().collect::<Option<Vec<&SetValue>>>() else {
        return Vec::new();
    };
    sets.sort_by_key(|s| s.len());
    let Some((smallest, others)) = sets.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in smallest.iter() {
        if others.iter().all(|s| s.contains(m)) {
            out.push(Bytes::copy_from_slice(m));
            if limit != 0 && out.len() >= limit {
                break;
            }
        }
    }
    out
}

/// The result of `op` over `sets`, each member once.
fn compute(sets: &[Option<&SetValue>], op: SetOp) -> Vec<Bytes> {
    match op {
        SetOp::Inter => intersect(sets, 0),
        SetOp::Union => {
            let mut acc: IndexSet<&[u8], ahash::RandomState> = IndexSet::default();
            for s in sets.iter().flatten() {
                acc.extend(s.iter());
            }
            acc.into_iter().map(Bytes::copy_from_slice).collect()
        }
        SetOp::Diff => {
            let Some(Some(first)) = sets.first() else {
                return Vec::new();
            };
            let others: Vec<&SetValue> = sets[1..].iter().flatten().copied().collect();
            first
                .iter()
                .filter(|m| !others.iter().any(|s| s.contains(m)))
                .map(Bytes::copy_from_slice)
                .collect()
        }
    }
}

/// Runs `op` over the keys of a read command: `CMD key [key …]`.
fn read_op(ctx: &mut Ctx, argv: &[&[u8]], op: SetOp) -> CmdResult<Reply> {
    let keys = &argv[1..];
    let sets = live_sets(ctx, keys)?;
    Ok(Reply::Set(member_replies(compute(&sets, op))))
}

/// Runs `op` and stores the result: `CMD destination key [key …]`. An empty
/// result deletes the destination.
fn store_op(ctx: &mut Ctx, argv: &[&[u8]], op: SetOp, event: &'static str) -> CmdResult<Reply> {
    let mut a = Args::new(argv);
    let dst = a.bytes()?;
    let keys = a.rest();
    let result = {
        let sets = live_sets(ctx, keys)?;
        compute(&sets, op)
    };
    let n = result.len() as i64;
    if n > 0 {
        ctx.set_value(dst, Value::from(result.into_iter().collect::<SetValue>()));
        ctx.modified(dst);
        ctx.notify(b's', event, dst);
    } else if ctx.delete_stored(dst) {
        ctx.modified(dst);
        ctx.notify(b'g', "del", dst);
    }
    Ok(Reply::Int(n))
}

/// # Format
/// `SINTER key [key …]` → the members present in every key (a set reply;
/// empty if any key is missing).
fn sinter(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    read_op(ctx, argv, SetOp::Inter)
}

/// # Format
/// `SUNION key [key …]` → the members present in any key (a set reply).
fn sunion(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    read_op(ctx, argv, SetOp::Union)
}

/// # Format
/// `SDIFF key [key …]` → the members of the first key that are in none of
/// the others (a set reply).
fn sdiff(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    read_op(ctx, argv, SetOp::Diff)
}

/// # Format
/// `SINTERSTORE destination key [key …]` → the size of the intersection,
/// now stored in `destination` (deleted if the result is empty).
fn sinterstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    store_op(ctx, argv, SetOp::Inter, "sinterstore")
}

/// # Format
/// `SUNIONSTORE destination key [key …]` → the size of the union, now
/// stored in `destination` (deleted if the result is empty).
fn sunionstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    store_op(ctx, argv, SetOp::Union, "sunionstore")
}

/// # Format
/// `SDIFFSTORE destination key [key …]` → the size of the difference, now
/// stored in `destination` (deleted if the result is empty).
fn sdiffstore(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    store_op(ctx, argv, SetOp::Diff, "sdiffstore")
}

/// The `numkeys` of SINTERCARD, if valid for this argv.
fn numkeys(argv: &[&[u8]]) -> CmdResult<usize> {
    let n = argv
        .get(1)
        .and_then(|a| parse_i64(a))
        .filter(|n| *n >= 1)
        .ok_or(Error::msg("ERR numkeys should be greater than 0"))?;
    if n as u64 > argv.len().saturating_sub(2) as u64 {
        return Err(Error::msg(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    Ok(n as usize)
}

/// Key positions of SINTERCARD: the `numkeys` arguments after `numkeys`.
fn sintercard_keys(argv: &[&[u8]]) -> Vec<usize> {
    match numkeys(argv) {
        Ok(n) => (2..2 + n).collect(),
        Err(_) => Vec::new(),
    }
}

/// # Format
/// `SINTERCARD numkeys key [key …] [LIMIT limit]` → the size of the
/// intersection, counting at most `limit` members (0: no limit).
fn sintercard(ctx: &mut Ctx, argv: &[&[u8]]) -> CmdResult<Reply> {
    let n = numkeys(argv)?;
    let keys = &argv[2..2 + n];
    let mut a = Args::new(&argv[1 + n..]);
    let mut limit = 0usize;
    while let Some(opt) = a.next() {
        if opt.eq_ignore_ascii_case(b"LIMIT") && !a.is_done() {
            let l = a.next().and_then(parse_i64).filter(|l| *l >= 0);
            limit = l.ok_or(Error::msg("ERR LIMIT can't be negative"))? as usize;
        } else {
            return Err(Error::Syntax);
        }
    }
    let sets = live_sets(ctx, keys)?;
    Ok(Reply::Int(intersect(&sets, limit).len() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sets::test_util::*;
    use crate::testing::{err, Harness};

    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

    fn setup() -> Harness {
        let mut h = Harness::new();
        h.run(&["SET", "str", "x"]);
        h.run(&["SADD", "a", "1", "2", "3", "4"]);
        h.run(&["SADD", "b", "3", "4", "5"]);
        h.run(&["SADD", "c", "4", "5", "6"]);
        h
    }

    #[test]
    fn inter_union_diff() {
        let mut h = setup();
        assert_eq!(sorted(&h.run(&["SINTER", "a", "b"])), ["3", "4"]);
        assert_eq!(sorted(&h.run(&["SINTER", "a", "b", "c"])), ["4"]);
        assert_eq!(sorted(&h.run(&["SINTER", "a"])), ["1", "2", "3", "4"]);
        assert_eq!(h.run(&["SINTER", "a", "nokey"]), Reply::Set(vec![]));
        assert_eq!(
            sorted(&h.run(&["SUNION", "a", "b", "nokey"])),
            ["1", "2", "3", "4", "5"]
        );
        assert_eq!(h.run(&["SUNION", "nokey"]), Reply::Set(vec![]));
        assert_eq!(sorted(&h.run(&["SDIFF", "a", "b"])), ["1", "2"]);
        assert_eq!(sorted(&h.run(&["SDIFF", "a", "b", "c"])), ["1", "2"]);
        assert_eq!(
            sorted(&h.run(&["SDIFF", "a", "nokey"])),
            ["1", "2", "3", "4"]
        );
        assert_eq!(h.run(&["SDIFF", "a", "a"]), Reply::Set(vec![]));
        assert_eq!(h.run(&["SDIFF", "nokey", "a"]), Reply::Set(vec![]));
        assert!(matches!(h.run(&["SUNION", "a"]), Reply::Set(_)));
        assert!(h.fx.touched.is_empty());
    }

    #[test]
    fn wrong_type_anywhere_is_an_error() {
        let mut h = setup();
        for cmd in ["SINTER", "SUNION", "SDIFF"] {
            assert_eq!(h.run(&[cmd, "nokey", "str"]), err(WRONGTYPE));
            assert_eq!(h.run(&[cmd, "a", "str"]), err(WRONGTYPE));
        }
        for cmd in ["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"] {
            assert_eq!(h.run(&[cmd, "d", "nokey", "str"]), err(WRONGTYPE));
            assert!(raw_set(&h, "d").is_none());
        }
        assert_eq!(h.run(&["SINTERCARD", "2", "nokey", "str"]), err(WRONGTYPE));
        assert_eq!(
            h.run(&["SINTER"]),
            err("ERR wrong number of arguments for 'sinter' command")
        );
        assert_eq!(
            h.run(&["SUNIONSTORE", "d"]),
            err("ERR wrong number of arguments for 'sunionstore' command")
        );
    }

    #[test]
    fn algebra_sees_live_members_only() {
        let mut h = setup();
        expire_in(&mut h, "a", "3", 10);
        expire_in(&mut h, "b", "5", 10);
        assert_eq!(sorted(&h.run(&["SINTER", "a", "b"])), ["3", "4"]);
        h.advance(10);
        assert_eq!(sorted(&h.run(&["SINTER", "a", "b"])), ["4"]);
        assert_eq!(sorted(&h.run(&["SUNION", "a", "b"])), ["1", "2", "3", "4"]);
        assert_eq!(sorted(&h.run(&["SDIFF", "c", "b"])), ["5", "6"]);
        assert_eq!(h.run(&["SINTERCARD", "2", "a", "b"]), Reply::Int(1));
    }

    #[test]
    fn stores_overwrite_without_deadlines() {
        let mut h = setup();
        expire_in(&mut h, "a", "3", 1000);
        h.run(&["SADD", "d", "old"]);
        assert_eq!(h.run(&["SINTERSTORE", "d", "a", "b"]), Reply::Int(2));
        assert_eq!(events(&h), ["sinterstore:d"]);
        assert_eq!(sorted(&h.run(&["SMEMBERS", "d"])), ["3", "4"]);
        assert_eq!(deadline(&h, "d", "3"), None);
        assert!(raw_set(&h, "d").is_some_and(|s| s.deadlines().is_empty()));
        assert_eq!(h.run(&["SUNIONSTORE", "str", "a", "b"]), Reply::Int(5));
        assert_eq!(events(&h), ["sunionstore:str"]);
        assert_eq!(h.run(&["SDIFFSTORE", "d", "a", "b"]), Reply::Int(2));
        assert_eq!(events(&h), ["sdiffstore:d"]);
        assert_eq!(sorted(&h.run(&["SMEMBERS", "d"])), ["1", "2"]);
        h.advance(1000);
        assert_eq!(
            sorted(&h.run(&["SMEMBERS", "str"])),
            ["1", "2", "3", "4", "5"]
        );
    }

    #[test]
    fn store_into_a_source_key() {
        let mut h = setup();
        assert_eq!(h.run(&["SUNIONSTORE", "a", "a", "c"]), Reply::Int(6));
        assert_eq!(
            sorted(&h.run(&["SMEMBERS", "a"])),
            ["1", "2", "3", "4", "5", "6"]
        );
        assert_eq!(h.run(&["SDIFFSTORE", "a", "a", "a"]), Reply::Int(0));
        assert_eq!(events(&h), ["del:a"]);
        assert!(raw_set(&h, "a").is_none());
    }

    #[test]
    fn store_drops_destination_ttl() {
        let mut h = setup();
        h.run(&["SADD", "d", "x"]);
        let at = h.now + 5000;
        h.store.dbs[0].set_expire(b"d", Some(at));
        h.run(&["SUNIONSTORE", "d", "a"]);
        assert_eq!(
            h.store.dbs[0].raw_get(b"d").and_then(|e| e.expire_at()),
            None
        );
    }

    #[test]
    fn empty_store_result_deletes_destination() {
        let mut h = setup();
        h.run(&["SADD", "d", "x"]);
        assert_eq!(h.run(&["SINTERSTORE", "d", "a", "nokey"]), Reply::Int(0));
        assert_eq!(events(&h), ["del:d"]);
        assert_eq!(h.fx.touched.len(), 1);
        assert!(raw_set(&h, "d").is_none());
        assert_eq!(h.run(&["SINTERSTORE", "d", "a", "nokey"]), Reply::Int(0));
        assert!(h.fx.events.is_empty());
        assert!(h.fx.touched.is_empty());
        assert_eq!(h.run(&["SDIFFSTORE", "str", "a", "a"]), Reply::Int(0));
        assert_eq!(events(&h), ["del:str"]);
        assert_eq!(h.run(&["SUNIONSTORE", "d", "nokey"]), Reply::Int(0));
    }

    #[test]
    fn sintercard_counts_with_limit() {
        let mut h = setup();
        assert_eq!(h.run(&["SINTERCARD", "2", "a", "b"]), Reply::Int(2));
        assert_eq!(h.run(&["SINTERCARD", "1", "a"]), Reply::Int(4));
        assert_eq!(
            h.run(&["SINTERCARD", "1", "a", "LIMIT", "2"]),
            Reply::Int(2)
        );
        assert_eq!(
            h.run(&["SINTERCARD", "1", "a", "limit", "0"]),
            Reply::Int(4)
        );
        assert_eq!(
            h.run(&["SINTERCARD", "1", "a", "LIMIT", "1", "LIMIT", "3"]),
            Reply::Int(3)
        );
        assert_eq!(h.run(&["SINTERCARD", "2", "a", "nokey"]), Reply::Int(0));
        assert_eq!(
            h.run(&["SINTERCARD", "1", "nokey", "LIMIT", "5"]),
            Reply::Int(0)
        );
    }

    #[test]
    fn sintercard_errors() {
        let mut h = setup();
        let numkeys = err("ERR numkeys should be greater than 0");
        assert_eq!(h.run(&["SINTERCARD", "0", "a"]), numkeys);
        assert_eq!(h.run(&["SINTERCARD", "-1", "a"]), numkeys);
        assert_eq!(h.run(&["SINTERCARD", "abc", "a"]), numkeys);
        let too_many = err("ERR Number of keys can't be greater than number of args");
        assert_eq!(h.run(&["SINTERCARD", "2", "a"]), too_many);
        assert_eq!(h.run(&["SINTERCARD", "9223372036854775807", "a"]), too_many);
        let negative = err("ERR LIMIT can't be negative");
        assert_eq!(h.run(&["SINTERCARD", "1", "a", "LIMIT", "-1"]), negative);
        assert_eq!(h.run(&["SINTERCARD", "1", "a", "LIMIT", "abc"]), negative);
        assert_eq!(
            h.run(&["SINTERCARD", "1", "a", "LIMIT"]),
            err("ERR syntax error")
        );
        assert_eq!(
            h.run(&["SINTERCARD", "1", "a", "FOO"]),
            err("ERR syntax error")
        );
        assert_eq!(h.run(&["SINTERCARD", "1", "str", "LIMIT", "-1"]), negative);
        assert_eq!(h.run(&["SINTERCARD", "1", "str"]), err(WRONGTYPE));
        assert_eq!(
            h.run(&["SINTERCARD", "1"]),
            err("ERR wrong number of arguments for 'sintercard' command")
        );
    }

    #[test]
    fn sintercard_key_positions() {
        let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
        let spec = crate::table::lookup(b"sintercard")
            .map(|s| s.key_positions(&argv(&["SINTERCARD", "2", "a", "b", "LIMIT", "1"])));
        assert_eq!(spec, Some(vec![2, 3]));
        assert_eq!(
            sintercard_keys(&argv(&["SINTERCARD", "3", "a"])),
            Vec::<usize>::new()
        );
        assert_eq!(
            sintercard_keys(&argv(&["SINTERCARD", "x", "a"])),
            Vec::<usize>::new()
        );
    }
}
