//! Harness tests for the commands of this module, with shared fixtures.

use bytes::Bytes;

use crate::ctx::Ctx;
use crate::effects::Effects;
use crate::error::CmdResult;
use crate::reply::Reply;
use crate::testing::{bulk, Harness};
use crate::value::{SetValue, Value, ZSetValue};

mod algebra_tests;
mod pop_tests;
mod random_tests;

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Stores a sorted set directly (ZADD lives in another file).
fn zset(h: &mut Harness, key: &str, items: &[(f64, &str)]) {
    zset_with_deadlines(h, key, items, &[]);
}

/// Stores a sorted set whose listed members carry deadlines.
fn zset_with_deadlines(
    h: &mut Harness,
    key: &str,
    items: &[(f64, &str)],
    deadlines: &[(&str, u64)],
) {
    let mut z = ZSetValue::new();
    for (s, m) in items {
        z.insert(b(m), *s);
    }
    for (m, at) in deadlines {
        assert!(z.set_deadline(m.as_bytes(), *at));
    }
    h.store.dbs[h.db].set(b(key), Value::from(z));
}

/// Stores a set directly.
fn set(h: &mut Harness, key: &str, members: &[&str]) {
    let mut s = SetValue::new();
    for m in members {
        s.insert(b(m));
    }
    h.store.dbs[h.db].set(b(key), Value::from(s));
}

/// The members and scores of a stored sorted set, ascending.
fn members(h: &Harness, key: &str) -> Vec<(String, f64)> {
    match h.store.dbs[h.db].peek(key.as_bytes()).map(|e| &e.value) {
        Some(Value::ZSet(z)) => z
            .iter()
            .map(|(m, s)| (String::from_utf8_lossy(m).into_owned(), s))
            .collect(),
        Some(other) => panic!("{key} holds a {}", other.type_name()),
        None => Vec::new(),
    }
}

fn exists(h: &Harness, key: &str) -> bool {
    h.store.dbs[h.db].peek(key.as_bytes()).is_some()
}

fn dbl(x: f64) -> Reply {
    Reply::Double(x)
}

fn arr(items: Vec<Reply>) -> Reply {
    Reply::Array(items)
}

fn pair(m: &str, s: f64) -> Reply {
    arr(vec![bulk(m), dbl(s)])
}

/// `member score …` flat, as RESP2 replies carry scores.
fn flat(items: &[(&str, f64)]) -> Reply {
    arr(items.iter().flat_map(|(m, s)| [bulk(m), dbl(*s)]).collect())
}

/// `[member, score] …`, as RESP3 replies carry scores.
fn pairs(items: &[(&str, f64)]) -> Reply {
    arr(items.iter().map(|(m, s)| pair(m, *s)).collect())
}

/// Event names of the last command, as `class:name:key`.
fn events(h: &Harness) -> Vec<String> {
    h.fx.events
        .iter()
        .map(|e| {
            format!(
                "{}:{}:{}",
                e.class as char,
                e.name,
                String::from_utf8_lossy(&e.key)
            )
        })
        .collect()
}

/// The command the last one is logged as, if rewritten.
fn rewrite(h: &Harness) -> Option<Vec<String>> {
    h.fx.rewrite.as_ref().map(|cmds| {
        assert_eq!(cmds.len(), 1);
        cmds[0]
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    })
}

/// Runs a handler directly on a context that may block, as the server does
/// for a client outside MULTI.
fn run_blocking(
    h: &mut Harness,
    handler: crate::table::Handler,
    args: &[&str],
) -> CmdResult<Reply> {
    let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut fx = Effects::default();
    let mut ctx = Ctx::new(&mut h.store, h.db, h.now, &mut fx);
    ctx.may_block = true;
    let r = handler(&mut ctx, &argv);
    ctx.finish();
    r
}
