//! Tests of the non-blocking list commands.

use bytes::Bytes;

use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|&i| Reply::Int(i)).collect())
}

fn empty() -> Reply {
    Reply::Array(Vec::new())
}

fn events(h: &Harness) -> Vec<(String, String)> {
    h.fx.events
        .iter()
        .map(|e| {
            (
                e.name.to_string(),
                String::from_utf8_lossy(&e.key).into_owned(),
            )
        })
        .collect()
}

fn ev(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn range(h: &mut Harness, key: &str) -> Reply {
    h.run(&["LRANGE", key, "0", "-1"])
}

/// A harness with `s` holding a string and `l` the list `a b c`.
fn setup() -> Harness {
    let mut h = Harness::new();
    h.run(&["SET", "s", "v"]);
    h.run(&["RPUSH", "l", "a", "b", "c"]);
    h
}

#[test]
fn pushes() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["LPUSH", "k", "a", "b", "c"]), Reply::Int(3));
    assert_eq!(events(&h), ev(&[("lpush", "k")]));
    assert_eq!(h.fx.dirty, 3);
    assert_eq!(h.fx.ready, vec![(0, Bytes::from("k"))]);
    assert_eq!(h.fx.touched, vec![(0, Bytes::from("k"))]);
    assert_eq!(range(&mut h, "k"), bulks(&["c", "b", "a"]));
    assert_eq!(h.run(&["RPUSH", "k", "d", "e"]), Reply::Int(5));
    assert_eq!(events(&h), ev(&[("rpush", "k")]));
    assert_eq!(range(&mut h, "k"), bulks(&["c", "b", "a", "d", "e"]));
    assert_eq!(h.run(&["LPUSHX", "k", "x", "y"]), Reply::Int(7));
    assert_eq!(events(&h), ev(&[("lpush", "k")]));
    assert_eq!(h.run(&["RPUSHX", "k", "z"]), Reply::Int(8));
    assert_eq!(events(&h), ev(&[("rpush", "k")]));
    assert_eq!(
        range(&mut h, "k"),
        bulks(&["y", "x", "c", "b", "a", "d", "e", "z"])
    );
    assert_eq!(h.run(&["LPUSHX", "none", "x"]), Reply::Int(0));
    assert_eq!(h.run(&["RPUSHX", "none", "x"]), Reply::Int(0));
    assert!(h.fx.is_empty());
    assert_eq!(h.run(&["LLEN", "none"]), Reply::Int(0));
    h.run(&["SET", "s", "v"]);
    for c in ["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"] {
        assert_eq!(h.run(&[c, "s", "x"]), err(WRONGTYPE));
        assert_eq!(
            h.run(&[c, "k"]),
            err(&format!(
                "ERR wrong number of arguments for '{}' command",
                c.to_lowercase()
            ))
        );
    }
}

#[test]
fn pushes_are_binary_safe_copies() {
    let mut h = Harness::new();
    let v = Bytes::from_static(b"\x00\xff\r\n");
    let argv = vec![Bytes::from("RPUSH"), Bytes::from(""), v.clone()];
    assert_eq!(h.run_bytes(&argv), Reply::Int(1));
    assert_eq!(
        h.run_bytes(&[Bytes::from("LINDEX"), Bytes::from(""), Bytes::from("0")]),
        Reply::Bulk(v)
    );
}

#[test]
fn pop_single() {
    let mut h = setup();
    assert_eq!(h.run(&["LPOP", "l"]), bulk("a"));
    assert_eq!(events(&h), ev(&[("lpop", "l")]));
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(h.run(&["RPOP", "l"]), bulk("c"));
    assert_eq!(events(&h), ev(&[("rpop", "l")]));
    assert_eq!(h.run(&["RPOP", "l"]), bulk("b"));
    assert_eq!(events(&h), ev(&[("rpop", "l"), ("del", "l")]));
    assert_eq!(h.run(&["LLEN", "l"]), Reply::Int(0));
    assert!(h.store.dbs[0].raw_get(b"l").is_none());
    assert_eq!(h.run(&["LPOP", "l"]), Reply::Nil);
    assert_eq!(h.run(&["RPOP", "l"]), Reply::Nil);
    assert_eq!(h.run(&["LPOP", "s"]), err(WRONGTYPE));
}

#[test]
fn pop_with_count() {
    let mut h = setup();
    h.run(&["RPUSH", "l", "d", "e"]);
    assert_eq!(h.run(&["LPOP", "l", "2"]), bulks(&["a", "b"]));
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(h.run(&["RPOP", "l", "2"]), bulks(&["e", "d"]));
    assert_eq!(events(&h), ev(&[("rpop", "l")]));
    assert_eq!(h.run(&["LPOP", "l", "0"]), empty());
    assert!(h.fx.is_empty());
    assert_eq!(h.run(&["RPOP", "l", "9223372036854775807"]), bulks(&["c"]));
    assert_eq!(events(&h), ev(&[("rpop", "l"), ("del", "l")]));
    // Missing key: a null array with a count (even 0), a null bulk without.
    assert_eq!(h.run(&["LPOP", "l", "2"]), Reply::NilArray);
    assert_eq!(h.run(&["RPOP", "l", "0"]), Reply::NilArray);
    assert_eq!(h.run(&["LPOP", "l"]), Reply::Nil);
    // The count is checked before the key.
    for bad in ["-1", "abc", "01", "-0", "1.5", "9223372036854775808"] {
        assert_eq!(
            h.run(&["LPOP", "s", bad]),
            err("ERR value is out of range, must be positive")
        );
        assert_eq!(
            h.run(&["RPOP", "nokey", bad]),
            err("ERR value is out of range, must be positive")
        );
    }
    assert_eq!(h.run(&["LPOP", "s", "0"]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["LPOP", "l", "1", "2"]),
        err("ERR wrong number of arguments for 'lpop' command")
    );
    assert_eq!(
        h.run(&["RPOP", "l", "1", "2"]),
        err("ERR wrong number of arguments for 'rpop' command")
    );
    assert_eq!(
        h.run(&["LPOP"]),
        err("ERR wrong number of arguments for 'lpop' command")
    );
}

#[test]
fn llen_lrange_lindex() {
    let mut h = setup();
    assert_eq!(h.run(&["LLEN", "l"]), Reply::Int(3));
    assert_eq!(h.run(&["LLEN", "s"]), err(WRONGTYPE));
    assert_eq!(h.run(&["LRANGE", "l", "0", "-1"]), bulks(&["a", "b", "c"]));
    assert_eq!(h.run(&["LRANGE", "l", "1", "1"]), bulks(&["b"]));
    assert_eq!(h.run(&["LRANGE", "l", "-2", "100"]), bulks(&["b", "c"]));
    assert_eq!(h.run(&["LRANGE", "l", "-100", "0"]), bulks(&["a"]));
    assert_eq!(h.run(&["LRANGE", "l", "2", "1"]), empty());
    assert_eq!(h.run(&["LRANGE", "l", "3", "10"]), empty());
    assert_eq!(h.run(&["LRANGE", "l", "0", "-4"]), empty());
    assert_eq!(
        h.run(&["LRANGE", "l", "-9223372036854775808", "9223372036854775807"]),
        bulks(&["a", "b", "c"])
    );
    assert_eq!(h.run(&["LRANGE", "nokey", "0", "-1"]), empty());
    assert_eq!(h.run(&["LRANGE", "s", "0", "-1"]), err(WRONGTYPE));
    // Indexes are parsed before the key is looked up.
    assert_eq!(
        h.run(&["LRANGE", "s", "a", "1"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["LRANGE", "nokey", "0", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(h.run(&["LINDEX", "l", "0"]), bulk("a"));
    assert_eq!(h.run(&["LINDEX", "l", "-1"]), bulk("c"));
    assert_eq!(h.run(&["LINDEX", "l", "-3"]), bulk("a"));
    assert_eq!(h.run(&["LINDEX", "l", "3"]), Reply::Nil);
    assert_eq!(h.run(&["LINDEX", "l", "-4"]), Reply::Nil);
    assert_eq!(h.run(&["LINDEX", "l", "-9223372036854775808"]), Reply::Nil);
    assert_eq!(
        h.run(&["LINDEX", "l", "x"]),
        err("ERR value is not an integer or out of range")
    );
    // LINDEX looks the key up first.
    assert_eq!(h.run(&["LINDEX", "nokey", "x"]), Reply::Nil);
    assert_eq!(h.run(&["LINDEX", "s", "x"]), err(WRONGTYPE));
    assert!(h.fx.is_empty());
}

#[test]
fn lset() {
    let mut h = setup();
    assert_eq!(h.run(&["LSET", "l", "0", "A"]), Reply::Ok);
    assert_eq!(events(&h), ev(&[("lset", "l")]));
    assert_eq!(h.fx.touched, vec![(0, Bytes::from("l"))]);
    assert_eq!(h.run(&["LSET", "l", "-1", "C"]), Reply::Ok);
    assert_eq!(range(&mut h, "l"), bulks(&["A", "b", "C"]));
    assert_eq!(
        h.run(&["LSET", "l", "3", "x"]),
        err("ERR index out of range")
    );
    assert_eq!(
        h.run(&["LSET", "l", "-4", "x"]),
        err("ERR index out of range")
    );
    assert!(h.fx.is_empty());
    assert_eq!(
        h.run(&["LSET", "l", "x", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(h.run(&["LSET", "nokey", "0", "x"]), err("ERR no such key"));
    assert_eq!(h.run(&["LSET", "nokey", "x", "x"]), err("ERR no such key"));
    assert_eq!(h.run(&["LSET", "s", "x", "x"]), err(WRONGTYPE));
}

#[test]
fn linsert() {
    let mut h = setup();
    assert_eq!(h.run(&["LINSERT", "l", "BEFORE", "b", "x"]), Reply::Int(4));
    assert_eq!(events(&h), ev(&[("linsert", "l")]));
    assert_eq!(h.run(&["LINSERT", "l", "after", "c", "y"]), Reply::Int(5));
    assert_eq!(h.run(&["LINSERT", "l", "After", "a", "z"]), Reply::Int(6));
    assert_eq!(range(&mut h, "l"), bulks(&["a", "z", "x", "b", "c", "y"]));
    assert_eq!(
        h.run(&["LINSERT", "l", "BEFORE", "nope", "x"]),
        Reply::Int(-1)
    );
    assert!(h.fx.is_empty());
    assert_eq!(
        h.run(&["LINSERT", "nokey", "BEFORE", "a", "x"]),
        Reply::Int(0)
    );
    assert_eq!(h.run(&["LINSERT", "s", "BEFORE", "a", "x"]), err(WRONGTYPE));
    // The position keyword is checked first.
    assert_eq!(
        h.run(&["LINSERT", "s", "MIDDLE", "a", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["LINSERT", "nokey", "MIDDLE", "a", "x"]),
        err("ERR syntax error")
    );
    // Only the first pivot from the head counts.
    h.run(&["RPUSH", "d", "p", "p"]);
    assert_eq!(h.run(&["LINSERT", "d", "AFTER", "p", "q"]), Reply::Int(3));
    assert_eq!(range(&mut h, "d"), bulks(&["p", "q", "p"]));
}

#[test]
fn lrem() {
    let mut h = Harness::new();
    h.run(&["RPUSH", "l", "a", "x", "a", "y", "a", "z", "a"]);
    assert_eq!(h.run(&["LREM", "l", "2", "a"]), Reply::Int(2));
    assert_eq!(events(&h), ev(&[("lrem", "l")]));
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(range(&mut h, "l"), bulks(&["x", "y", "a", "z", "a"]));
    assert_eq!(h.run(&["LREM", "l", "-1", "a"]), Reply::Int(1));
    assert_eq!(range(&mut h, "l"), bulks(&["x", "y", "a", "z"]));
    assert_eq!(h.run(&["LREM", "l", "0", "nope"]), Reply::Int(0));
    assert!(h.fx.is_empty());
    assert_eq!(h.run(&["LREM", "l", "0", "a"]), Reply::Int(1));
    assert_eq!(
        h.run(&["LREM", "l", "-9223372036854775808", "x"]),
        Reply::Int(1)
    );
    assert_eq!(
        h.run(&["LREM", "l", "9223372036854775807", "y"]),
        Reply::Int(1)
    );
    assert_eq!(h.run(&["LREM", "l", "0", "z"]), Reply::Int(1));
    assert_eq!(events(&h), ev(&[("lrem", "l"), ("del", "l")]));
    assert_eq!(h.run(&["LREM", "l", "0", "z"]), Reply::Int(0));
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["LREM", "s", "0", "z"]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["LREM", "s", "x", "z"]),
        err("ERR value is not an integer or out of range")
    );
}

#[test]
fn ltrim() {
    let mut h = Harness::new();
    h.run(&["RPUSH", "l", "a", "b", "c", "d", "e"]);
    assert_eq!(h.run(&["LTRIM", "l", "1", "-2"]), Reply::Ok);
    assert_eq!(events(&h), ev(&[("ltrim", "l")]));
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(range(&mut h, "l"), bulks(&["b", "c", "d"]));
    // Nothing trimmed: still signalled and notified, but no change counted.
    assert_eq!(h.run(&["LTRIM", "l", "0", "-1"]), Reply::Ok);
    assert_eq!(events(&h), ev(&[("ltrim", "l")]));
    assert_eq!(h.fx.touched, vec![(0, Bytes::from("l"))]);
    assert_eq!(h.fx.dirty, 0);
    assert_eq!(h.run(&["LTRIM", "l", "-100", "100"]), Reply::Ok);
    assert_eq!(range(&mut h, "l"), bulks(&["b", "c", "d"]));
    assert_eq!(h.run(&["LTRIM", "l", "5", "2"]), Reply::Ok);
    assert_eq!(events(&h), ev(&[("ltrim", "l"), ("del", "l")]));
    assert_eq!(h.run(&["LLEN", "l"]), Reply::Int(0));
    assert_eq!(h.run(&["LTRIM", "nokey", "0", "1"]), Reply::Ok);
    assert!(h.fx.is_empty());
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["LTRIM", "s", "0", "1"]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["LTRIM", "s", "x", "1"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["LTRIM", "nokey", "0", "x"]),
        err("ERR value is not an integer or out of range")
    );
}

#[test]
fn lpos() {
    let mut h = Harness::new();
    h.run(&["RPUSH", "l", "a", "b", "a", "c", "a", "d", "a"]);
    assert_eq!(h.run(&["LPOS", "l", "a"]), Reply::Int(0));
    assert_eq!(h.run(&["LPOS", "l", "d"]), Reply::Int(5));
    assert_eq!(h.run(&["LPOS", "l", "zz"]), Reply::Nil);
    assert_eq!(h.run(&["LPOS", "l", "zz", "COUNT", "0"]), empty());
    assert_eq!(h.run(&["LPOS", "l", "a", "RANK", "2"]), Reply::Int(2));
    assert_eq!(h.run(&["LPOS", "l", "a", "RANK", "-1"]), Reply::Int(6));
    assert_eq!(
        h.run(&["LPOS", "l", "a", "RANK", "-2", "COUNT", "2"]),
        ints(&[4, 2])
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "rank", "2", "count", "0", "maxlen", "5"]),
        ints(&[2, 4])
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "COUNT", "0", "MAXLEN", "1"]),
        ints(&[0])
    );
    assert_eq!(h.run(&["LPOS", "l", "d", "MAXLEN", "5"]), Reply::Nil);
    assert_eq!(
        h.run(&["LPOS", "l", "a", "RANK", "1", "RANK", "3"]),
        Reply::Int(4)
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "COUNT", "1", "COUNT", "2"]),
        ints(&[0, 2])
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "RANK", "9223372036854775807"]),
        Reply::Nil
    );
    assert_eq!(
        h.run(&[
            "LPOS",
            "l",
            "a",
            "RANK",
            "-9223372036854775807",
            "COUNT",
            "1"
        ]),
        empty()
    );
    // RANK i64::MIN negates to itself in Redis: every match from the tail.
    assert_eq!(
        h.run(&[
            "LPOS",
            "l",
            "a",
            "RANK",
            "-9223372036854775808",
            "COUNT",
            "1"
        ]),
        ints(&[6, 4, 2, 0])
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "RANK", "-9223372036854775808"]),
        Reply::Int(6)
    );
    assert_eq!(h.run(&["LPOS", "nokey", "a"]), Reply::Nil);
    assert_eq!(h.run(&["LPOS", "nokey", "a", "COUNT", "0"]), empty());
    let rank0 = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
    assert_eq!(h.run(&["LPOS", "l", "a", "RANK", "0"]), err(rank0));
    assert_eq!(h.run(&["LPOS", "nokey", "a", "RANK", "0"]), err(rank0));
    assert_eq!(
        h.run(&["LPOS", "l", "a", "RANK", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "COUNT", "-1"]),
        err("ERR COUNT can't be negative")
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "COUNT", "x"]),
        err("ERR COUNT can't be negative")
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "MAXLEN", "-1"]),
        err("ERR MAXLEN can't be negative")
    );
    assert_eq!(
        h.run(&["LPOS", "l", "a", "MAXLEN", "x"]),
        err("ERR MAXLEN can't be negative")
    );
    assert_eq!(h.run(&["LPOS", "l", "a", "FOO"]), err("ERR syntax error"));
    assert_eq!(h.run(&["LPOS", "l", "a", "RANK"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["LPOS", "l", "a", "COUNT", "1", "MAXLEN"]),
        err("ERR syntax error")
    );
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["LPOS", "s", "a"]), err(WRONGTYPE));
    assert_eq!(h.run(&["LPOS", "s", "a", "RANK", "0"]), err(rank0));
    assert!(h.fx.is_empty());
}

#[test]
fn lmove_and_rpoplpush() {
    let mut h = setup();
    assert_eq!(h.run(&["RPOPLPUSH", "l", "d"]), bulk("c"));
    assert_eq!(events(&h), ev(&[("lpush", "d"), ("rpop", "l")]));
    assert_eq!(h.fx.ready, vec![(0, Bytes::from("d"))]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(
        h.fx.touched,
        vec![(0, Bytes::from("d")), (0, Bytes::from("l"))]
    );
    assert_eq!(h.run(&["LMOVE", "l", "d", "LEFT", "RIGHT"]), bulk("a"));
    assert_eq!(events(&h), ev(&[("rpush", "d"), ("lpop", "l")]));
    assert_eq!(range(&mut h, "d"), bulks(&["c", "a"]));
    assert_eq!(h.run(&["LMOVE", "l", "d", "right", "left"]), bulk("b"));
    assert_eq!(
        events(&h),
        ev(&[("lpush", "d"), ("rpop", "l"), ("del", "l")])
    );
    assert_eq!(range(&mut h, "d"), bulks(&["b", "c", "a"]));
    // Rotation on one key.
    assert_eq!(h.run(&["LMOVE", "d", "d", "LEFT", "RIGHT"]), bulk("b"));
    assert_eq!(range(&mut h, "d"), bulks(&["c", "a", "b"]));
    assert_eq!(h.run(&["RPOPLPUSH", "d", "d"]), bulk("b"));
    assert_eq!(range(&mut h, "d"), bulks(&["b", "c", "a"]));
    h.run(&["RPUSH", "one", "x"]);
    assert_eq!(h.run(&["RPOPLPUSH", "one", "one"]), bulk("x"));
    assert_eq!(events(&h), ev(&[("lpush", "one"), ("rpop", "one")]));
    assert_eq!(range(&mut h, "one"), bulks(&["x"]));
    // Missing source: nil, whatever the destination holds.
    assert_eq!(h.run(&["LMOVE", "nokey", "s", "LEFT", "LEFT"]), Reply::Nil);
    assert_eq!(h.run(&["RPOPLPUSH", "nokey", "s"]), Reply::Nil);
    assert!(h.fx.is_empty());
    assert_eq!(h.run(&["LMOVE", "s", "d", "LEFT", "LEFT"]), err(WRONGTYPE));
    assert_eq!(h.run(&["LMOVE", "d", "s", "LEFT", "LEFT"]), err(WRONGTYPE));
    assert_eq!(h.run(&["RPOPLPUSH", "d", "s"]), err(WRONGTYPE));
    assert_eq!(range(&mut h, "d"), bulks(&["b", "c", "a"]));
    assert_eq!(
        h.run(&["LMOVE", "d", "e", "UP", "LEFT"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["LMOVE", "nokey", "e", "LEFT", "DOWN"]),
        err("ERR syntax error")
    );
}

#[test]
fn lmove_keeps_destination_ttl() {
    let mut h = setup();
    h.run(&["RPUSH", "d", "x"]);
    let at = h.now + 10_000;
    h.store.dbs[0].set_expire(b"d", Some(at));
    assert_eq!(h.run(&["LMOVE", "l", "d", "LEFT", "LEFT"]), bulk("a"));
    assert_eq!(
        h.store.dbs[0].raw_get(b"d").and_then(|e| e.expire_at()),
        Some(at)
    );
    h.advance(10_000);
    assert_eq!(h.run(&["LLEN", "d"]), Reply::Int(0));
    assert_eq!(events(&h), ev(&[("expired", "d")]));
    assert_eq!(h.run(&["RPOPLPUSH", "d", "l"]), Reply::Nil);
}

#[test]
fn lmpop() {
    let mut h = setup();
    h.run(&["RPUSH", "m", "1", "2", "3"]);
    assert_eq!(
        h.run(&["LMPOP", "2", "nokey", "l", "LEFT"]),
        Reply::Array(vec![bulk("l"), bulks(&["a"])])
    );
    assert_eq!(events(&h), ev(&[("lpop", "l")]));
    assert_eq!(
        h.fx.rewrite,
        Some(vec![vec![
            Bytes::from("LPOP"),
            Bytes::from("l"),
            Bytes::from("1")
        ]])
    );
    assert_eq!(
        h.run(&["LMPOP", "2", "l", "m", "right", "COUNT", "10"]),
        Reply::Array(vec![bulk("l"), bulks(&["c", "b"])])
    );
    assert_eq!(events(&h), ev(&[("rpop", "l"), ("del", "l")]));
    assert_eq!(
        h.fx.rewrite,
        Some(vec![vec![
            Bytes::from("RPOP"),
            Bytes::from("l"),
            Bytes::from("2")
        ]])
    );
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(
        h.run(&["LMPOP", "2", "l", "m", "LEFT", "count", "2"]),
        Reply::Array(vec![bulk("m"), bulks(&["1", "2"])])
    );
    assert_eq!(h.run(&["LMPOP", "1", "nokey", "LEFT"]), Reply::NilArray);
    assert!(h.fx.is_empty());
    // The first key that is not a list fails only when reached.
    assert_eq!(h.run(&["LMPOP", "2", "nokey", "s", "LEFT"]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["LMPOP", "2", "m", "s", "LEFT"]),
        Reply::Array(vec![bulk("m"), bulks(&["3"])])
    );
    let numkeys = err("ERR numkeys should be greater than 0");
    for bad in ["0", "-1", "x", "1.0"] {
        assert_eq!(h.run(&["LMPOP", bad, "l", "LEFT"]), numkeys);
    }
    let syntax = err("ERR syntax error");
    assert_eq!(h.run(&["LMPOP", "2", "l", "LEFT"]), syntax);
    assert_eq!(h.run(&["LMPOP", "100", "l", "LEFT"]), syntax);
    assert_eq!(
        h.run(&["LMPOP", "9223372036854775807", "l", "LEFT"]),
        syntax
    );
    assert_eq!(h.run(&["LMPOP", "1", "l", "MIDDLE"]), syntax);
    assert_eq!(h.run(&["LMPOP", "1", "l", "LEFT", "FOO"]), syntax);
    assert_eq!(h.run(&["LMPOP", "1", "l", "LEFT", "COUNT"]), syntax);
    assert_eq!(
        h.run(&["LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"]),
        syntax
    );
    let count = err("ERR count should be greater than 0");
    for bad in ["0", "-1", "x"] {
        assert_eq!(h.run(&["LMPOP", "1", "nokey", "LEFT", "COUNT", bad]), count);
    }
    assert_eq!(
        h.run(&["LMPOP", "1", "l"]),
        err("ERR wrong number of arguments for 'lmpop' command")
    );
}

#[test]
fn lmpop_key_positions() {
    let spec = crate::table::lookup(b"lmpop").expect("lmpop");
    let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
    assert_eq!(
        spec.key_positions(&argv(&["LMPOP", "2", "a", "b", "LEFT"])),
        vec![2, 3]
    );
    assert_eq!(
        spec.key_positions(&argv(&["LMPOP", "1", "a", "LEFT", "COUNT", "2"])),
        vec![2]
    );
    assert_eq!(
        spec.key_positions(&argv(&["LMPOP", "3", "a", "LEFT"])),
        Vec::<usize>::new()
    );
    assert_eq!(
        spec.key_positions(&argv(&["LMPOP", "0", "a", "LEFT"])),
        Vec::<usize>::new()
    );
}

#[test]
fn expired_lists_do_not_exist() {
    let mut h = setup();
    h.store.dbs[0].set_expire(b"l", Some(h.now + 5));
    assert_eq!(h.run(&["LLEN", "l"]), Reply::Int(3));
    h.advance(5);
    assert_eq!(h.run(&["LPUSHX", "l", "x"]), Reply::Int(0));
    assert_eq!(events(&h), ev(&[("expired", "l")]));
    assert_eq!(h.run(&["LPUSH", "l", "x"]), Reply::Int(1));
    assert_eq!(
        h.store.dbs[0].raw_get(b"l").and_then(|e| e.expire_at()),
        None
    );
}

#[test]
fn command_table_entries() {
    let spec = |n: &[u8]| crate::table::lookup(n).expect("command");
    assert_eq!(spec(b"lpush").arity, -3);
    assert!(spec(b"lpush").has_flag("denyoom") && spec(b"lpush").has_flag("fast"));
    assert!(spec(b"lrange").has_flag("readonly"));
    assert_eq!(spec(b"lmove").last_key, 2);
    assert!(spec(b"lmpop").has_flag("movablekeys"));
    assert!(spec(b"blpop").has_flag("blocking"));
    assert_eq!(spec(b"blpop").last_key, -2);
}
