//! Harness tests of the sorted-set commands, with replies checked against
//! Redis 7.0.

use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};

/// Runs a command written as whitespace-separated words.
pub(super) fn run(h: &mut Harness, cmd: &str) -> Reply {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    h.run(&words)
}

pub(super) fn int(n: i64) -> Reply {
    Reply::Int(n)
}

pub(super) fn dbl(d: f64) -> Reply {
    Reply::Double(d)
}

/// A RESP2 WITHSCORES reply: member, score, member, score, …
pub(super) fn flat(items: &[(&str, f64)]) -> Reply {
    let mut v = Vec::new();
    for (m, s) in items {
        v.push(bulk(m));
        v.push(dbl(*s));
    }
    Reply::Array(v)
}

pub(super) fn event_names(h: &Harness) -> Vec<String> {
    h.fx.events.iter().map(|e| e.name.to_string()).collect()
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_FLOAT: &str = "ERR value is not a valid float";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const SYNTAX: &str = "ERR syntax error";
const MINMAX_FLOAT: &str = "ERR min or max is not a float";
const MINMAX_LEX: &str = "ERR min or max not valid string range item";

fn abcde(h: &mut Harness) {
    assert_eq!(run(h, "ZADD z 1 a 2 b 3 c 4 d 5 e"), int(5));
}

#[test]
fn zadd_counts_and_flags() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z 1 a 2 b"), int(2));
    assert_eq!(event_names(&h), ["zadd"]);
    assert_eq!(h.fx.ready.len(), 1);
    assert_eq!(run(&mut h, "ZADD z 1 a 3 b 4 c"), int(1));
    assert_eq!(run(&mut h, "ZADD z CH 1 a 5 b 6 d"), int(2));
    assert_eq!(run(&mut h, "ZADD z 1 a"), int(0));
    assert!(h.fx.events.is_empty() && h.fx.touched.is_empty());
    assert_eq!(run(&mut h, "ZADD z NX 9 a 7 e"), int(1));
    assert_eq!(run(&mut h, "ZSCORE z a"), dbl(1.0));
    assert_eq!(run(&mut h, "ZADD z XX CH 9 a 8 f"), int(1));
    assert_eq!(run(&mut h, "ZSCORE z f"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADD z GT CH 5 a 1 b 10 g"), int(1));
    assert_eq!(run(&mut h, "ZSCORE z a"), dbl(9.0));
    assert_eq!(run(&mut h, "ZADD z LT CH 5 a 1 b"), int(2));
    let expect = flat(&[
        ("b", 1.0),
        ("c", 4.0),
        ("a", 5.0),
        ("d", 6.0),
        ("e", 7.0),
        ("g", 10.0),
    ]);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 WITHSCORES"), expect);
    // Case-insensitive flags; XX on a missing key creates nothing.
    assert_eq!(run(&mut h, "zadd nokey xx ch 1 a"), int(0));
    assert!(h.store.dbs[0].raw_get(b"nokey").is_none());
    assert_eq!(run(&mut h, "ZADD nokey XX INCR 1 a"), Reply::Nil);
    assert_eq!(h.store.dbs[0].len(), 1);
}

#[test]
fn zadd_errors_in_redis_order() {
    let mut h = Harness::new();
    let xxnx = "ERR XX and NX options at the same time are not compatible";
    let gtltnx = "ERR GT, LT, and/or NX options at the same time are not compatible";
    let incr = "ERR INCR option supports a single increment-element pair";
    assert_eq!(run(&mut h, "ZADD z NX XX 1 a"), err(xxnx));
    assert_eq!(run(&mut h, "ZADD z GT LT NX XX 1 a"), err(xxnx));
    assert_eq!(run(&mut h, "ZADD z GT LT 1 a"), err(gtltnx));
    assert_eq!(run(&mut h, "ZADD z NX GT 1 a"), err(gtltnx));
    assert_eq!(run(&mut h, "ZADD z LT NX 1 a"), err(gtltnx));
    assert_eq!(run(&mut h, "ZADD z INCR 1 a 2 b"), err(incr));
    assert_eq!(run(&mut h, "ZADD z INCR 1"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZADD z 1 a b"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZADD z NX XX 1"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZADD z 1 a NX"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZADD z 1 a NX 2"), err(NOT_FLOAT));
    assert_eq!(
        run(&mut h, "ZADD z"),
        err("ERR wrong number of arguments for 'zadd' command")
    );
    for bad in ["abc", "nan", "1e400", "1e-400", " 1", "1 ", ""] {
        assert_eq!(h.run(&["ZADD", "z", bad, "a"]), err(NOT_FLOAT), "{bad:?}");
    }
    // Scores are parsed before the key's type is checked.
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZADD s x a"), err(NOT_FLOAT));
    assert_eq!(run(&mut h, "ZADD s 1 a"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "ZADD s XX 1 a"), err(WRONGTYPE));
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
}

#[test]
fn zadd_scores_like_strtod() {
    let mut h = Harness::new();
    assert_eq!(
        run(&mut h, "ZADD z 0x10 a +inf b -INF c 1e3 d .5 e"),
        int(5)
    );
    assert_eq!(
        run(&mut h, "ZMSCORE z a b c d e"),
        Reply::Array(vec![
            dbl(16.0),
            dbl(f64::INFINITY),
            dbl(f64::NEG_INFINITY),
            dbl(1000.0),
            dbl(0.5),
        ])
    );
    // -0 is stored as 0, but INCR on a new member replies the raw -0.
    assert_eq!(run(&mut h, "ZADD z -0 m"), int(1));
    assert!(
        matches!(run(&mut h, "ZSCORE z m"), Reply::Double(s) if s == 0.0 && s.is_sign_positive())
    );
    assert!(
        matches!(run(&mut h, "ZADD z INCR -0 q"), Reply::Double(s) if s == 0.0 && s.is_sign_negative())
    );
    assert!(matches!(run(&mut h, "ZSCORE z q"), Reply::Double(s) if s.is_sign_positive()));
}

#[test]
fn zadd_incr_and_zincrby() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z INCR 1.5 a"), dbl(1.5));
    assert_eq!(event_names(&h), ["zincr"]);
    assert_eq!(run(&mut h, "ZADD z INCR 1 a"), dbl(2.5));
    assert_eq!(run(&mut h, "ZADD z NX INCR 1 a"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADD z XX INCR 1 nope"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADD z GT INCR -1 a"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADD z LT INCR 1 a"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADD z LT INCR -1 a"), dbl(1.5));
    assert_eq!(run(&mut h, "ZADD z CH INCR 1 a"), dbl(2.5));
    assert_eq!(run(&mut h, "ZADD z INCR 0 a"), dbl(2.5));
    assert!(h.fx.events.is_empty());
    assert_eq!(run(&mut h, "ZINCRBY z 2 a"), dbl(4.5));
    assert_eq!(event_names(&h), ["zincr"]);
    assert_eq!(run(&mut h, "ZINCRBY z -1 new"), dbl(-1.0));
    assert_eq!(run(&mut h, "ZINCRBY z abc a"), err(NOT_FLOAT));
    // ZINCRBY reads ZADD's flags too, which leaves one argument: syntax error.
    assert_eq!(run(&mut h, "ZINCRBY z nx a"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZINCRBY z 1 nx"), dbl(1.0));
    assert_eq!(run(&mut h, "ZADD z +inf i"), int(1));
    assert_eq!(
        run(&mut h, "ZINCRBY z -inf i"),
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(
        run(&mut h, "ZADD z INCR -inf i"),
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(run(&mut h, "ZSCORE z i"), dbl(f64::INFINITY));
    assert_eq!(
        run(&mut h, "ZINCRBY z 1 a b"),
        err("ERR wrong number of arguments for 'zincrby' command")
    );
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZINCRBY s 1 a"), err(WRONGTYPE));
}

#[test]
fn zrem_zcard_and_reads() {
    let mut h = Harness::new();
    abcde(&mut h);
    assert_eq!(run(&mut h, "ZCARD z"), int(5));
    assert_eq!(run(&mut h, "ZCARD nokey"), int(0));
    assert_eq!(run(&mut h, "ZSCORE z c"), dbl(3.0));
    assert_eq!(run(&mut h, "ZSCORE z x"), Reply::Nil);
    assert_eq!(run(&mut h, "ZSCORE nokey x"), Reply::Nil);
    assert_eq!(
        run(&mut h, "ZMSCORE z a x e"),
        Reply::Array(vec![dbl(1.0), Reply::Nil, dbl(5.0)])
    );
    assert_eq!(
        run(&mut h, "ZMSCORE nokey a b"),
        Reply::Array(vec![Reply::Nil, Reply::Nil])
    );
    assert_eq!(
        run(&mut h, "ZMSCORE z"),
        err("ERR wrong number of arguments for 'zmscore' command")
    );
    assert_eq!(run(&mut h, "ZRANK z a"), int(0));
    assert_eq!(run(&mut h, "ZRANK z e"), int(4));
    assert_eq!(run(&mut h, "ZREVRANK z a"), int(4));
    assert_eq!(run(&mut h, "ZRANK z x"), Reply::Nil);
    assert_eq!(run(&mut h, "ZREVRANK nokey x"), Reply::Nil);
    assert_eq!(
        run(&mut h, "ZRANK z a WITHSCORE"),
        err("ERR wrong number of arguments for 'zrank' command")
    );
    assert_eq!(run(&mut h, "ZREM z a x b"), int(2));
    assert_eq!(event_names(&h), ["zrem"]);
    assert_eq!(h.fx.touched.len(), 1);
    assert_eq!(run(&mut h, "ZREM z x"), int(0));
    assert!(h.fx.events.is_empty() && h.fx.dirty == 0);
    assert_eq!(run(&mut h, "ZREM nokey x"), int(0));
    assert_eq!(run(&mut h, "ZREM z c d e"), int(3));
    assert_eq!(event_names(&h), ["zrem", "del"]);
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    for cmd in [
        "ZCARD s",
        "ZSCORE s a",
        "ZMSCORE s a",
        "ZRANK s a",
        "ZREVRANK s a",
        "ZREM s a",
    ] {
        assert_eq!(run(&mut h, cmd), err(WRONGTYPE), "{cmd}");
    }
}

#[test]
fn zcount_and_zlexcount() {
    let mut h = Harness::new();
    abcde(&mut h);
    let cases = [
        ("2", "4", 3),
        ("(2", "4", 2),
        ("(2", "(4", 1),
        ("-inf", "+inf", 5),
        ("-inf", "(inf", 5),
        ("0x2", "3", 2),
        ("", "3", 3),
        ("(", "3", 3),
        (" 2", "3", 2),
        ("1e400", "3", 0),
        ("-1e400", "3", 3),
        ("3", "1", 0),
        ("(3", "3", 0),
        ("infinity", "3", 0),
        ("-INFINITY", "3", 3),
    ];
    for (min, max, n) in cases {
        assert_eq!(h.run(&["ZCOUNT", "z", min, max]), int(n), "{min:?} {max:?}");
    }
    for bad in ["2 ", "nan", "(nan", "+", "((2", " ", "x"] {
        assert_eq!(
            h.run(&["ZCOUNT", "z", bad, "3"]),
            err(MINMAX_FLOAT),
            "{bad:?}"
        );
    }
    assert_eq!(run(&mut h, "ZCOUNT nokey 1 2"), int(0));
    let lex = [
        ("-", "+", 5),
        ("+", "-", 0),
        ("[b", "(d", 2),
        ("-", "[c", 3),
        ("(", "+", 5),
        ("[", "+", 5),
        ("[", "(", 0),
        ("[a", "[a", 1),
        ("(a", "[a", 0),
    ];
    for (min, max, n) in lex {
        assert_eq!(
            h.run(&["ZLEXCOUNT", "z", min, max]),
            int(n),
            "{min:?} {max:?}"
        );
    }
    for bad in ["b", "", "++", "-a"] {
        assert_eq!(
            h.run(&["ZLEXCOUNT", "z", bad, "+"]),
            err(MINMAX_LEX),
            "{bad:?}"
        );
    }
    assert_eq!(run(&mut h, "ZLEXCOUNT nokey - +"), int(0));
    // The range is checked before the key's type.
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZCOUNT s a b"), err(MINMAX_FLOAT));
    assert_eq!(run(&mut h, "ZCOUNT s 1 2"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "ZLEXCOUNT s 1 2"), err(MINMAX_LEX));
    assert_eq!(run(&mut h, "ZLEXCOUNT s - +"), err(WRONGTYPE));
}

#[test]
fn zrange_by_rank() {
    let mut h = Harness::new();
    abcde(&mut h);
    assert_eq!(
        run(&mut h, "ZRANGE z 0 -1"),
        bulks(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z 1 2 WITHSCORES"),
        flat(&[("b", 2.0), ("c", 3.0)])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z -100 100"),
        bulks(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(run(&mut h, "ZRANGE z -2 -3"), bulks(&[]));
    assert_eq!(run(&mut h, "ZRANGE z 5 10"), bulks(&[]));
    assert_eq!(
        run(&mut h, "ZRANGE z 9223372036854775807 -9223372036854775808"),
        bulks(&[])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z -9223372036854775808 0"),
        bulks(&["a"])
    );
    assert_eq!(run(&mut h, "ZRANGE z 0 1 REV"), bulks(&["e", "d"]));
    assert_eq!(
        run(&mut h, "ZRANGE z -2 -1 REV WITHSCORES"),
        flat(&[("b", 2.0), ("a", 1.0)])
    );
    assert_eq!(
        run(&mut h, "ZREVRANGE z 0 -1"),
        bulks(&["e", "d", "c", "b", "a"])
    );
    assert_eq!(
        run(&mut h, "ZREVRANGE z 1 1 withscores withscores"),
        flat(&[("d", 4.0)])
    );
    // LIMIT 0 -1 (or any offset with count -1) reads as "no LIMIT".
    assert_eq!(
        run(&mut h, "ZRANGE z 0 -1 LIMIT 3 -1"),
        bulks(&["a", "b", "c", "d", "e"])
    );
    let limit =
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 LIMIT 0 1"), err(limit));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 LIMIT 3 -2"), err(limit));
    assert_eq!(run(&mut h, "ZREVRANGE z 0 -1 LIMIT 0 1"), err(limit));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 LIMIT 3"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 REV REV"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZREVRANGE z 0 -1 REV"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZREVRANGE z 0 -1 BYSCORE"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZRANGE z 1 -1 foo"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZRANGE z a b"), err(NOT_INT));
    assert_eq!(run(&mut h, "ZRANGE nokey a b"), err(NOT_INT));
    assert_eq!(run(&mut h, "ZRANGE nokey 0 -1"), bulks(&[]));
    assert_eq!(
        run(&mut h, "ZRANGE z 0"),
        err("ERR wrong number of arguments for 'zrange' command")
    );
}

#[test]
fn zrange_by_score() {
    let mut h = Harness::new();
    abcde(&mut h);
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z (1 3"), bulks(&["b", "c"]));
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT 1 2"),
        bulks(&["b", "c"])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT -1 2"),
        bulks(&[])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT 1 -5"),
        bulks(&["b", "c", "d", "e"])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT 1 0"),
        bulks(&[])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT 5 1"),
        bulks(&[])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT 4 1"),
        bulks(&["e"])
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z 2 3 WITHSCORES"),
        flat(&[("b", 2.0), ("c", 3.0)])
    );
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z 3 2"), bulks(&[]));
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z -inf +inf LIMIT x 1"),
        err(NOT_INT)
    );
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z a +inf LIMIT x 1"),
        err(NOT_INT)
    );
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z a +inf"), err(MINMAX_FLOAT));
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z 1 2 BYSCORE"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z 1 2 REV"), err(SYNTAX));
    assert_eq!(
        run(&mut h, "ZREVRANGEBYSCORE z 3 1"),
        bulks(&["c", "b", "a"])
    );
    assert_eq!(run(&mut h, "ZREVRANGEBYSCORE z 1 3"), bulks(&[]));
    assert_eq!(
        run(&mut h, "ZREVRANGEBYSCORE z +inf (3 WITHSCORES LIMIT 1 5"),
        flat(&[("d", 4.0)])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z 5 1 BYSCORE REV LIMIT 1 2 WITHSCORES"),
        flat(&[("d", 4.0), ("c", 3.0)])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z (1 5 BYSCORE LIMIT 0 2"),
        bulks(&["b", "c"])
    );
    // The last LIMIT wins.
    assert_eq!(
        run(&mut h, "ZRANGE z 1 5 BYSCORE LIMIT 0 1 LIMIT 1 1"),
        bulks(&["b"])
    );
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 BYSCORE"), bulks(&[]));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 BYSCORE BYLEX"), err(SYNTAX));
    assert_eq!(run(&mut h, "ZRANGE nokey 0 -1 BYSCORE"), bulks(&[]));
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZRANGEBYSCORE s a b"), err(MINMAX_FLOAT));
    assert_eq!(run(&mut h, "ZRANGEBYSCORE s 1 2"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "ZRANGE s 0 1"), err(WRONGTYPE));
}

#[test]
fn zrange_by_lex() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z 0 a 0 b 0 c 0 d 0 e"), int(5));
    assert_eq!(
        run(&mut h, "ZRANGEBYLEX z - +"),
        bulks(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(run(&mut h, "ZRANGEBYLEX z [b (d"), bulks(&["b", "c"]));
    assert_eq!(
        run(&mut h, "ZRANGEBYLEX z - + LIMIT 1 2"),
        bulks(&["b", "c"])
    );
    assert_eq!(run(&mut h, "ZRANGEBYLEX z - + LIMIT -1 2"), bulks(&[]));
    assert_eq!(
        run(&mut h, "ZREVRANGEBYLEX z + -"),
        bulks(&["e", "d", "c", "b", "a"])
    );
    assert_eq!(
        run(&mut h, "ZREVRANGEBYLEX z (d - LIMIT 1 10"),
        bulks(&["b", "a"])
    );
    assert_eq!(
        run(&mut h, "ZRANGE z [e [b BYLEX REV LIMIT 1 2"),
        bulks(&["d", "c"])
    );
    assert_eq!(run(&mut h, "ZRANGE z + - BYLEX"), bulks(&[]));
    let ws = "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
    assert_eq!(run(&mut h, "ZRANGE z - + BYLEX WITHSCORES"), err(ws));
    assert_eq!(run(&mut h, "ZRANGEBYLEX z - + WITHSCORES"), err(ws));
    assert_eq!(run(&mut h, "ZRANGE z 0 1 LIMIT 0 1 BYLEX"), err(MINMAX_LEX));
    assert_eq!(run(&mut h, "ZRANGEBYLEX z a +"), err(MINMAX_LEX));
    // With different scores the walk is the one Redis's compact encoding does.
    assert_eq!(run(&mut h, "ZADD m 1 b 2 a 3 c"), int(3));
    assert_eq!(run(&mut h, "ZRANGEBYLEX m [a [b"), bulks(&["b", "a"]));
    assert_eq!(run(&mut h, "ZREVRANGEBYLEX m [b [a"), bulks(&["a", "b"]));
    assert_eq!(run(&mut h, "ZLEXCOUNT m [a [b"), int(2));
}

#[test]
fn withscores_in_resp3_are_pairs_of_member_and_double() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z 1 a 2.5 b"), int(2));
    h.resp3 = true;
    let pairs = Reply::Array(vec![
        Reply::Array(vec![bulk("a"), dbl(1.0)]),
        Reply::Array(vec![bulk("b"), dbl(2.5)]),
    ]);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1 WITHSCORES"), pairs);
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z 0 5 WITHSCORES"), pairs);
    let rev = Reply::Array(vec![Reply::Array(vec![bulk("b"), dbl(2.5)])]);
    assert_eq!(run(&mut h, "ZREVRANGE z 0 0 WITHSCORES"), rev);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["a", "b"]));
}

#[test]
fn zrangestore() {
    let mut h = Harness::new();
    abcde(&mut h);
    assert_eq!(run(&mut h, "ZRANGESTORE d z 0 1"), int(2));
    assert_eq!(event_names(&h), ["zrangestore"]);
    assert_eq!(
        run(&mut h, "ZRANGE d 0 -1 WITHSCORES"),
        flat(&[("a", 1.0), ("b", 2.0)])
    );
    assert_eq!(
        run(&mut h, "ZRANGESTORE d z +inf (1 BYSCORE REV LIMIT 0 2"),
        int(2)
    );
    assert_eq!(
        run(&mut h, "ZRANGE d 0 -1 WITHSCORES"),
        flat(&[("d", 4.0), ("e", 5.0)])
    );
    assert_eq!(run(&mut h, "ZRANGESTORE d z [b [c BYLEX"), int(2));
    assert_eq!(run(&mut h, "ZRANGE d 0 -1"), bulks(&["b", "c"]));
    // A string destination is replaced, and its TTL dropped.
    assert_eq!(run(&mut h, "SET d x"), Reply::Ok);
    h.store.dbs[0].set_expire(b"d", Some(h.now + 100_000));
    assert_eq!(run(&mut h, "ZRANGESTORE d z 0 0"), int(1));
    assert_eq!(
        h.store.dbs[0].raw_get(b"d").map(|e| e.expire_at()),
        Some(None)
    );
    // An empty result deletes the destination.
    assert_eq!(run(&mut h, "ZRANGESTORE d z 5 1"), int(0));
    assert_eq!(event_names(&h), ["del"]);
    assert!(h.store.dbs[0].raw_get(b"d").is_none());
    assert_eq!(run(&mut h, "ZRANGESTORE d nokey 0 -1"), int(0));
    assert!(h.fx.events.is_empty());
    assert_eq!(run(&mut h, "ZRANGESTORE d z 0 -1 WITHSCORES"), err(SYNTAX));
    let limit =
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
    assert_eq!(run(&mut h, "ZRANGESTORE d z 0 -1 LIMIT 0 1"), err(limit));
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "SET d x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZRANGESTORE d s 0 -1"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "GET d"), bulk("x"));
    // Source and destination may be the same key.
    assert_eq!(run(&mut h, "ZRANGESTORE z z 1 2"), int(2));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["b", "c"]));
    assert_eq!(
        run(&mut h, "ZRANGESTORE d z"),
        err("ERR wrong number of arguments for 'zrangestore' command")
    );
}

#[test]
fn zremrange_by_rank_score_and_lex() {
    let mut h = Harness::new();
    abcde(&mut h);
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK z 1 1"), int(1));
    assert_eq!(event_names(&h), ["zremrangebyrank"]);
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK z 5 10"), int(0));
    assert!(h.fx.events.is_empty());
    assert_eq!(run(&mut h, "ZREMRANGEBYSCORE z (1 3"), int(1));
    assert_eq!(event_names(&h), ["zremrangebyscore"]);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["a", "d", "e"]));
    assert_eq!(run(&mut h, "ZREMRANGEBYLEX z [e +"), int(1));
    assert_eq!(event_names(&h), ["zremrangebylex"]);
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK z -2 -1"), int(2));
    assert_eq!(event_names(&h), ["zremrangebyrank", "del"]);
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK z a 1"), err(NOT_INT));
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK nokey 0 1"), int(0));
    assert_eq!(run(&mut h, "ZREMRANGEBYSCORE nokey x 1"), err(MINMAX_FLOAT));
    assert_eq!(run(&mut h, "ZREMRANGEBYLEX nokey x 1"), err(MINMAX_LEX));
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(run(&mut h, "ZREMRANGEBYSCORE s 1 2"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "ZREMRANGEBYLEX s - +"), err(WRONGTYPE));
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK s 0 1"), err(WRONGTYPE));
}

#[test]
fn large_sets_rank_and_range_in_order() {
    let mut h = Harness::new();
    let mut args: Vec<String> = vec!["ZADD".into(), "z".into()];
    for i in 0..2000 {
        args.push(((i * 37) % 2000).to_string());
        args.push(format!("m{:04}", (i * 37) % 2000));
    }
    let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    assert_eq!(h.run(&refs), int(2000));
    assert_eq!(run(&mut h, "ZRANK z m1234"), int(1234));
    assert_eq!(run(&mut h, "ZREVRANK z m1234"), int(765));
    assert_eq!(
        run(&mut h, "ZRANGE z 1000 1002"),
        bulks(&["m1000", "m1001", "m1002"])
    );
    assert_eq!(run(&mut h, "ZRANGE z 1 2 REV"), bulks(&["m1998", "m1997"]));
    assert_eq!(run(&mut h, "ZCOUNT z (100 200"), int(100));
    assert_eq!(run(&mut h, "ZLEXCOUNT z [m0100 (m0200"), int(100));
    assert_eq!(
        run(&mut h, "ZRANGEBYSCORE z 1500 +inf LIMIT 10 2"),
        bulks(&["m1510", "m1511"])
    );
    assert_eq!(run(&mut h, "ZREMRANGEBYSCORE z 0 999"), int(1000));
    assert_eq!(run(&mut h, "ZRANK z m1234"), int(234));
    assert_eq!(run(&mut h, "ZREMRANGEBYLEX z [m1000 [m1099"), int(100));
    assert_eq!(run(&mut h, "ZREMRANGEBYRANK z 0 99"), int(100));
    assert_eq!(run(&mut h, "ZRANGE z 0 0"), bulks(&["m1200"]));
    assert_eq!(run(&mut h, "ZCARD z"), int(800));
}

#[test]
fn zadd_keeps_and_zrem_clears_member_deadlines() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADDEX z PX 1000 1 a 2 b"), int(2));
    assert_eq!(run(&mut h, "ZADD z 5 a 3 c"), int(1));
    assert_eq!(run(&mut h, "ZINCRBY z 1 b"), dbl(3.0));
    assert_eq!(run(&mut h, "ZREM z b"), int(1));
    assert_eq!(run(&mut h, "ZADD z 2 b"), int(1));
    h.advance(1000);
    // a kept its deadline through ZADD; b lost it through ZREM.
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["b", "c"]));
}

#[test]
fn expired_members_are_invisible_to_every_read() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z 1 a 2 b 3 c 4 d"), int(4));
    assert_eq!(run(&mut h, "ZADDEX z XX PX 100 2 b 4 d"), int(0));
    h.advance(99);
    assert_eq!(run(&mut h, "ZCARD z"), int(4));
    h.advance(1);
    assert_eq!(run(&mut h, "ZCARD z"), int(2));
    assert_eq!(run(&mut h, "ZSCORE z b"), Reply::Nil);
    assert_eq!(run(&mut h, "ZRANK z c"), int(1));
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["a", "c"]));
    assert_eq!(run(&mut h, "ZCOUNT z -inf +inf"), int(2));
    assert_eq!(run(&mut h, "ZADDEX z PX 10 9 a 9 c"), int(0));
    h.advance(10);
    assert_eq!(run(&mut h, "ZRANGEBYSCORE z -inf +inf"), bulks(&[]));
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
}
