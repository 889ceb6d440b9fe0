//! SORT tests; expected replies were taken from Redis 7.0.

use super::{limit_range, parse_weight, sort_keys};
use crate::cmd::keys::tests::{
    b, events, put_hash, put_list, put_set, put_zset, set_member_deadline,
};
use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};
use crate::value::Value;

fn fixture() -> Harness {
    let mut h = Harness::new();
    put_list(&mut h, "l", &["3", "1", "2", "10"]);
    put_set(&mut h, "s", &["c", "a", "b"]);
    put_zset(&mut h, "z", &[(3.0, "x"), (1.0, "y"), (2.0, "w")]);
    for (k, v) in [("w_1", "30"), ("w_2", "20"), ("w_3", "10"), ("w_10", "5")] {
        h.run(&["SET", k, v]);
    }
    put_hash(&mut h, "h_1", &[("f", "b")]);
    put_hash(&mut h, "h_3", &[("f", "a")]);
    h
}

fn list_at(h: &Harness, key: &str) -> Option<Vec<String>> {
    match &h.store.dbs[h.db].peek(key.as_bytes())?.value {
        Value::List(l) => Some(
            l.iter()
                .map(|x| String::from_utf8_lossy(x).into_owned())
                .collect(),
        ),
        _ => None,
    }
}

#[test]
fn numeric_alpha_and_direction() {
    let mut h = fixture();
    assert_eq!(h.run(&["SORT", "l"]), bulks(&["1", "2", "3", "10"]));
    assert_eq!(h.run(&["SORT", "l", "DESC"]), bulks(&["10", "3", "2", "1"]));
    assert_eq!(
        h.run(&["SORT", "l", "desc", "alpha"]),
        bulks(&["3", "2", "10", "1"])
    );
    assert_eq!(h.run(&["SORT", "s", "ALPHA"]), bulks(&["a", "b", "c"]));
    assert_eq!(
        h.run(&["SORT_RO", "s", "ALPHA", "DESC", "ASC"]),
        bulks(&["a", "b", "c"])
    );
    assert_eq!(
        h.run(&["SORT", "z"]),
        err("ERR One or more scores can't be converted into double")
    );
    assert_eq!(
        h.run(&["SORT", "s"]),
        err("ERR One or more scores can't be converted into double")
    );
    assert_eq!(h.run(&["SORT", "z", "ALPHA"]), bulks(&["w", "x", "y"]));
}

#[test]
fn by_patterns() {
    let mut h = fixture();
    assert_eq!(
        h.run(&["SORT", "l", "BY", "w_*"]),
        bulks(&["10", "3", "2", "1"])
    );
    // Missing weights count as 0 and ties fall back to the element.
    h.run(&["DEL", "w_2"]);
    assert_eq!(
        h.run(&["SORT", "l", "BY", "w_*"]),
        bulks(&["2", "10", "3", "1"])
    );
    assert_eq!(
        h.run(&["SORT", "l", "BY", "h_*->f", "ALPHA"]),
        bulks(&["2", "10", "3", "1"])
    );
    assert_eq!(
        h.run(&["SORT", "l", "BY", "h_*->f", "ALPHA", "DESC"]),
        bulks(&["1", "3", "2", "10"])
    );
    // A weight that is not a number fails the whole sort.
    h.run(&["SET", "w_1", "5 "]);
    assert_eq!(
        h.run(&["SORT", "l", "BY", "w_*"]),
        err("ERR One or more scores can't be converted into double")
    );
    h.run(&["SET", "w_1", " 0x10"]);
    assert_eq!(
        h.run(&["SORT", "l", "BY", "w_*", "DESC"]),
        bulks(&["1", "3", "10", "2"])
    );
}

#[test]
fn nosort_keeps_collection_order() {
    let mut h = fixture();
    assert_eq!(
        h.run(&["SORT", "l", "BY", "nosort"]),
        bulks(&["3", "1", "2", "10"])
    );
    assert_eq!(
        h.run(&["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"]),
        bulks(&["2", "1"])
    );
    assert_eq!(
        h.run(&["SORT", "z", "BY", "nosort", "DESC"]),
        bulks(&["x", "w", "y"])
    );
    assert_eq!(
        h.run(&["SORT", "z", "BY", "nosort"]),
        bulks(&["y", "w", "x"])
    );
    // A `*` after a NUL does not count: Redis reads the pattern as a C string.
    let argv = [
        b("SORT"),
        b("l"),
        b("BY"),
        bytes::Bytes::from_static(b"no\0*"),
    ];
    assert_eq!(h.run_bytes(&argv), bulks(&["3", "1", "2", "10"]));
    // A set stored without sorting is sorted ALPHA so the result is stable.
    assert_eq!(
        h.run(&["SORT", "s", "BY", "nosort", "STORE", "dst"]),
        Reply::Int(3)
    );
    assert_eq!(
        list_at(&h, "dst"),
        Some(vec!["a".into(), "b".into(), "c".into()])
    );
}

#[test]
fn get_patterns() {
    let mut h = fixture();
    let r = h.run(&["SORT", "l", "GET", "#", "GET", "w_*", "GET", "h_*->f"]);
    let want = Reply::Array(vec![
        bulk("1"),
        bulk("30"),
        bulk("b"),
        bulk("2"),
        bulk("20"),
        Reply::Nil,
        bulk("3"),
        bulk("10"),
        bulk("a"),
        bulk("10"),
        bulk("5"),
        Reply::Nil,
    ]);
    assert_eq!(r, want);
    // `->` with nothing after it is part of the key name; no `*` finds nothing.
    assert_eq!(
        h.run(&["SORT", "l", "GET", "w_*->", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(
        h.run(&["SORT", "l", "GET", "w_1", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
    // Wrong types read as missing.
    assert_eq!(
        h.run(&["SORT", "l", "GET", "h_*", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(
        h.run(&["SORT", "l", "GET", "w_*->f", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
}

#[test]
fn limits() {
    let mut h = fixture();
    assert_eq!(h.run(&["SORT", "l", "LIMIT", "0", "0"]), bulks(&[]));
    assert_eq!(
        h.run(&["SORT", "l", "LIMIT", "2", "-1"]),
        bulks(&["3", "10"])
    );
    assert_eq!(h.run(&["SORT", "l", "LIMIT", "4", "1"]), bulks(&[]));
    assert_eq!(h.run(&["SORT", "l", "LIMIT", "3", "5"]), bulks(&["10"]));
    assert_eq!(
        h.run(&["SORT", "l", "LIMIT", "-5", "2"]),
        bulks(&["1", "2"])
    );
    assert_eq!(
        h.run(&["SORT", "l", "LIMIT", "1", "-1", "DESC"]),
        bulks(&["3", "2", "1"])
    );
    assert_eq!(
        h.run(&[
            "SORT",
            "l",
            "LIMIT",
            "9223372036854775807",
            "9223372036854775807"
        ]),
        bulks(&[])
    );
    assert_eq!(
        h.run(&["SORT", "l", "LIMIT", "1", "9223372036854775807"]),
        bulks(&["2", "3", "10"])
    );
    assert_eq!(limit_range(None, 0), (None, None));
    assert_eq!(limit_range(Some((0, 1)), 0), (None, None));
}

#[test]
fn store_writes_a_list() {
    let mut h = fixture();
    h.run(&["SET", "dst", "old"]);
    let ttl = h.now + 1_000;
    h.store.dbs[0].set_expire(b"dst", Some(ttl));
    assert_eq!(
        h.run(&["SORT", "l", "BY", "w_*", "LIMIT", "0", "2", "STORE", "dst"]),
        Reply::Int(2)
    );
    assert_eq!(list_at(&h, "dst"), Some(vec!["10".into(), "3".into()]));
    assert_eq!(
        h.store.dbs[0].peek(b"dst").and_then(|e| e.expire_at()),
        None
    );
    assert_eq!(
        events(&h),
        vec![('l', "sortstore".to_string(), 0, "dst".to_string())]
    );
    assert_eq!(h.fx.ready, vec![(0, b("dst"))]);
    assert_eq!(h.fx.touched, vec![(0, b("dst"))]);
    // GET values are stored, missing ones as empty strings.
    assert_eq!(
        h.run(&["SORT", "l", "GET", "h_*->f", "STORE", "dst"]),
        Reply::Int(4)
    );
    assert_eq!(
        list_at(&h, "dst"),
        Some(vec!["b".into(), "".into(), "a".into(), "".into()])
    );
    // An empty result deletes the destination.
    assert_eq!(h.run(&["SORT", "nokey", "STORE", "dst"]), Reply::Int(0));
    assert_eq!(
        events(&h),
        vec![('g', "del".to_string(), 0, "dst".to_string())]
    );
    assert_eq!(h.run(&["EXISTS", "dst"]), Reply::Int(0));
    assert_eq!(h.run(&["SORT", "nokey", "STORE", "dst"]), Reply::Int(0));
    assert!(h.fx.events.is_empty());
    // The last STORE wins.
    assert_eq!(
        h.run(&["SORT", "l", "STORE", "a", "STORE", "b"]),
        Reply::Int(4)
    );
    assert_eq!(list_at(&h, "a"), None);
    assert_eq!(list_at(&h, "b").map(|l| l.len()), Some(4));
    // Sorting a list into itself.
    assert_eq!(h.run(&["SORT", "l", "STORE", "l"]), Reply::Int(4));
    assert_eq!(
        list_at(&h, "l"),
        Some(vec!["1".into(), "2".into(), "3".into(), "10".into()])
    );
}

#[test]
fn errors() {
    let mut h = fixture();
    h.run(&["SET", "str", "x"]);
    let wrong = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["SORT", "str"]), wrong);
    assert_eq!(h.run(&["SORT", "h_1"]), wrong);
    assert_eq!(h.run(&["SORT", "nokey"]), bulks(&[]));
    assert_eq!(h.run(&["SORT", "l", "LIMIT", "0"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["SORT", "l", "LIMIT", "a", "b"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(h.run(&["SORT", "l", "foo"]), err("ERR syntax error"));
    assert_eq!(h.run(&["SORT", "l", "STORE"]), err("ERR syntax error"));
    assert_eq!(h.run(&["SORT", "l", "GET"]), err("ERR syntax error"));
    assert_eq!(h.run(&["SORT", "l", "BY"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["SORT_RO", "l", "STORE", "x"]),
        err("ERR syntax error")
    );
    // Syntax errors come before the type check.
    assert_eq!(h.run(&["SORT", "str", "foo"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["SORT"]),
        err("ERR wrong number of arguments for 'sort' command")
    );
}

#[test]
fn expired_members_are_not_sorted() {
    let mut h = fixture();
    let t = h.now + 10;
    set_member_deadline(&mut h, 0, "s", "b", t);
    set_member_deadline(&mut h, 0, "z", "x", t);
    h.advance(10);
    assert_eq!(h.run(&["SORT", "s", "ALPHA"]), bulks(&["a", "c"]));
    assert_eq!(h.run(&["SORT", "z", "BY", "nosort"]), bulks(&["y", "w"]));
    // Hash fields looked up by BY/GET expire too.
    let t = h.now + 10;
    set_member_deadline(&mut h, 0, "h_1", "f", t);
    h.advance(10);
    assert_eq!(
        h.run(&["SORT", "l", "GET", "h_*->f", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
}

#[test]
fn key_positions() {
    let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
    assert_eq!(sort_keys(&argv(&["SORT", "k"])), vec![1]);
    assert_eq!(sort_keys(&argv(&["SORT", "k", "STORE", "d"])), vec![1, 3]);
    assert_eq!(
        sort_keys(&argv(&[
            "SORT", "k", "STORE", "d", "LIMIT", "0", "1", "store", "e"
        ])),
        vec![1, 8]
    );
    assert_eq!(
        sort_keys(&argv(&["SORT", "k", "GET", "store", "BY", "store"])),
        vec![1]
    );
    assert_eq!(
        sort_keys(&argv(&["SORT", "k", "LIMIT", "store", "x"])),
        vec![1]
    );
    assert_eq!(sort_keys(&argv(&["SORT", "k", "STORE"])), vec![1]);
    let spec = crate::table::lookup(b"sort").expect("registered");
    assert_eq!(
        spec.key_positions(&argv(&["SORT", "k", "STORE", "d"])),
        vec![1, 3]
    );
    let spec = crate::table::lookup(b"sort_ro").expect("registered");
    assert_eq!(
        spec.key_positions(&argv(&["SORT_RO", "k", "BY", "x"])),
        vec![1]
    );
}

#[test]
fn weights_parse_like_strtod() {
    assert_eq!(parse_weight(b"5"), Some(5.0));
    assert_eq!(parse_weight(b" 5"), Some(5.0));
    assert_eq!(parse_weight(b"\t-2.5e1"), Some(-25.0));
    assert_eq!(parse_weight(b"+.5"), Some(0.5));
    assert_eq!(parse_weight(b"5."), Some(5.0));
    assert_eq!(parse_weight(b"1e"), None);
    assert_eq!(parse_weight(b""), Some(0.0));
    assert_eq!(parse_weight(b" "), None);
    assert_eq!(parse_weight(b"-"), None);
    assert_eq!(parse_weight(b"5 "), None);
    assert_eq!(parse_weight(b"abc"), None);
    assert_eq!(parse_weight(b"0x10"), Some(16.0));
    assert_eq!(parse_weight(b"-0X1.8p1"), Some(-3.0));
    assert_eq!(parse_weight(b"0x"), None);
    assert_eq!(parse_weight(b"inf"), Some(f64::INFINITY));
    assert_eq!(parse_weight(b"-Infinity"), Some(f64::NEG_INFINITY));
    assert_eq!(parse_weight(b"infx"), None);
    assert_eq!(parse_weight(b"nan"), None);
    assert_eq!(parse_weight(b"1e400"), None);
    assert_eq!(parse_weight(b"1e-400"), None);
    assert_eq!(parse_weight(b"1e-310"), None);
    assert_eq!(parse_weight(b"0e-400"), Some(0.0));
    assert_eq!(
        parse_weight(b"2.2250738585072014e-308"),
        Some(f64::MIN_POSITIVE)
    );
    assert_eq!(parse_weight(b"0x1p-1080"), None);
    assert_eq!(parse_weight(b"0x1p2000"), None);
}

#[test]
fn sort_converts_a_packed_sorted_set_as_redis_does() {
    let mut h = Harness::new();
    h.run(&["ZADD", "z", "1", "a", "2", "b"]);
    assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("listpack"));
    // Even when the SORT itself fails (scores that are not numbers).
    assert_eq!(
        h.run(&["SORT_RO", "z"]),
        err("ERR One or more scores can't be converted into double")
    );
    assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    assert_eq!(h.run(&["SORT", "z", "ALPHA"]), bulks(&["a", "b"]));
    // For good: a later write does not pack it again.
    h.run(&["ZADD", "z", "3", "c"]);
    assert_eq!(h.run(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    // A syntax error stops before the conversion.
    h.run(&["ZADD", "y", "1", "a"]);
    assert_eq!(h.run(&["SORT", "y", "FOO"]), err("ERR syntax error"));
    assert_eq!(h.run(&["OBJECT", "ENCODING", "y"]), bulk("listpack"));
}
