//! Tests of the Redis 7.0 hash commands, with the fake clock.

use bytes::Bytes;

use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};
use crate::value::Value;

pub(super) fn int(n: i64) -> Reply {
    Reply::Int(n)
}

pub(super) fn deadline(h: &Harness, key: &str, field: &str) -> Option<u64> {
    match h.store.dbs[h.db].raw_get(key.as_bytes()).map(|e| &e.value) {
        Some(Value::Hash(v)) => v.deadline(field.as_bytes()),
        _ => None,
    }
}

pub(super) fn events(h: &Harness) -> Vec<(char, String, Vec<String>)> {
    h.fx.events
        .iter()
        .map(|e| {
            let members = e
                .members
                .iter()
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .collect();
            (e.class as char, e.name.to_string(), members)
        })
        .collect()
}

pub(super) fn ev(class: char, name: &str, members: &[&str]) -> (char, String, Vec<String>) {
    (
        class,
        name.to_string(),
        members.iter().map(|m| m.to_string()).collect(),
    )
}

pub(super) fn logged(h: &Harness) -> Option<Vec<String>> {
    h.fx.rewrite.as_ref().map(|cmds| {
        cmds.iter()
            .map(|c| {
                c.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    })
}

pub(super) fn map(pairs: &[(&str, &str)]) -> Reply {
    Reply::Map(pairs.iter().map(|(f, v)| (bulk(f), bulk(v))).collect())
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn hset_counts_new_fields_and_replaces_values() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HSET", "k", "a", "1", "b", "2"]), int(2));
    assert_eq!(events(&h), vec![ev('h', "hset", &["a", "b"])]);
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(h.run(&["HSET", "k", "a", "x", "c", "3"]), int(1));
    assert_eq!(
        h.run(&["HGETALL", "k"]),
        map(&[("a", "x"), ("b", "2"), ("c", "3")])
    );
    assert_eq!(
        h.run(&["HSET", "k", "a", "1", "b"]),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(
        h.run(&["HSET", "k", "a"]),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(
        h.run(&["HMSET", "k", "a", "1", "b"]),
        err("ERR wrong number of arguments for 'hmset' command")
    );
    assert_eq!(h.run(&["HMSET", "k", "a", "9", "d", "4"]), Reply::Ok);
    assert_eq!(
        h.run(&["HMGET", "k", "a", "d", "zz"]),
        Reply::Array(vec![bulk("9"), bulk("4"), Reply::Nil])
    );
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["HSET", "s", "a", "1"]), err(WRONGTYPE));
    assert_eq!(h.run(&["HMSET", "s", "a", "1"]), err(WRONGTYPE));
}

#[test]
fn hset_of_an_existing_field_clears_its_deadline() {
    let mut h = Harness::new();
    h.run(&[
        "HSETEX", "k", "PX", "100", "FIELDS", "2", "a", "1", "b", "2",
    ]);
    assert!(deadline(&h, "k", "a").is_some());
    h.run(&["HSET", "k", "a", "x"]);
    assert_eq!(deadline(&h, "k", "a"), None);
    h.run(&["HMSET", "k", "b", "y"]);
    assert_eq!(deadline(&h, "k", "b"), None);
    h.advance(200);
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("a", "x"), ("b", "y")]));
}

#[test]
fn hsetnx_sets_only_missing_fields() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HSETNX", "k", "a", "1"]), int(1));
    assert_eq!(events(&h), vec![ev('h', "hset", &["a"])]);
    assert_eq!(h.run(&["HSETNX", "k", "a", "2"]), int(0));
    assert!(h.fx.events.is_empty());
    assert_eq!(h.fx.dirty, 0);
    assert_eq!(h.run(&["HGET", "k", "a"]), bulk("1"));
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["HSETNX", "s", "a", "1"]), err(WRONGTYPE));
    // A field that expired is missing: HSETNX sets it, without a deadline.
    h.run(&["HSETEX", "k", "PX", "10", "FIELDS", "1", "b", "old"]);
    h.advance(10);
    assert_eq!(h.run(&["HSETNX", "k", "b", "new"]), int(1));
    assert_eq!(deadline(&h, "k", "b"), None);
}

#[test]
fn reads_on_missing_and_wrong_keys() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HGET", "no", "a"]), Reply::Nil);
    assert_eq!(
        h.run(&["HMGET", "no", "a", "b"]),
        Reply::Array(vec![Reply::Nil, Reply::Nil])
    );
    assert_eq!(h.run(&["HGETALL", "no"]), Reply::Map(vec![]));
    assert_eq!(h.run(&["HKEYS", "no"]), Reply::Array(vec![]));
    assert_eq!(h.run(&["HVALS", "no"]), Reply::Array(vec![]));
    assert_eq!(h.run(&["HLEN", "no"]), int(0));
    assert_eq!(h.run(&["HEXISTS", "no", "a"]), int(0));
    assert_eq!(h.run(&["HSTRLEN", "no", "a"]), int(0));
    assert_eq!(h.run(&["HDEL", "no", "a"]), int(0));
    h.run(&["SET", "s", "v"]);
    for cmd in [
        vec!["HGET", "s", "a"],
        vec!["HMGET", "s", "a"],
        vec!["HGETALL", "s"],
        vec!["HKEYS", "s"],
        vec!["HVALS", "s"],
        vec!["HLEN", "s"],
        vec!["HEXISTS", "s", "a"],
        vec!["HSTRLEN", "s", "a"],
        vec!["HDEL", "s", "a"],
        vec!["HRANDFIELD", "s"],
        vec!["HRANDFIELD", "s", "1"],
        vec!["HSCAN", "s", "0"],
    ] {
        assert_eq!(h.run(&cmd), err(WRONGTYPE), "{cmd:?}");
    }
    assert_eq!(
        h.run(&["HGET", "s"]),
        err("ERR wrong number of arguments for 'hget' command")
    );
}

#[test]
fn reads_of_a_hash() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1", "b", "hello", "c", ""]);
    assert_eq!(h.run(&["HKEYS", "k"]), bulks(&["a", "b", "c"]));
    assert_eq!(h.run(&["HVALS", "k"]), bulks(&["1", "hello", ""]));
    assert_eq!(h.run(&["HLEN", "k"]), int(3));
    assert_eq!(h.run(&["HEXISTS", "k", "b"]), int(1));
    assert_eq!(h.run(&["HEXISTS", "k", "z"]), int(0));
    assert_eq!(h.run(&["HSTRLEN", "k", "b"]), int(5));
    assert_eq!(h.run(&["HSTRLEN", "k", "c"]), int(0));
    assert_eq!(h.run(&["HSTRLEN", "k", "z"]), int(0));
    // Binary-safe fields and values.
    let argv: Vec<Bytes> = [&b"HSET"[..], b"bin", b"f\x00\xff", b"v\r\n"]
        .iter()
        .map(|a| Bytes::copy_from_slice(a))
        .collect();
    assert_eq!(h.run_bytes(&argv), int(1));
    let get: Vec<Bytes> = [&b"HGET"[..], b"bin", b"f\x00\xff"]
        .iter()
        .map(|a| Bytes::copy_from_slice(a))
        .collect();
    assert_eq!(h.run_bytes(&get), Reply::Bulk(Bytes::from_static(b"v\r\n")));
}

#[test]
fn hdel_removes_fields_their_deadlines_and_the_emptied_key() {
    let mut h = Harness::new();
    h.run(&["HSETEX", "k", "PX", "1000", "FIELDS", "1", "a", "1"]);
    h.run(&["HSET", "k", "b", "2", "c", "3"]);
    assert_eq!(h.run(&["HDEL", "k", "a", "zz", "a"]), int(1));
    assert_eq!(events(&h), vec![ev('h', "hdel", &["a"])]);
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    // Re-added later, the field starts without a deadline.
    h.run(&["HSET", "k", "a", "again"]);
    assert_eq!(deadline(&h, "k", "a"), None);
    assert_eq!(h.run(&["HDEL", "k", "zz"]), int(0));
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["HDEL", "k", "a", "b", "c"]), int(3));
    assert_eq!(
        events(&h),
        vec![ev('h', "hdel", &["a", "b", "c"]), ev('g', "del", &[])]
    );
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
}

#[test]
fn expired_fields_do_not_exist_for_any_read() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "keep", "1"]);
    h.run(&["HSETEX", "k", "PX", "50", "FIELDS", "2", "a", "x", "b", "y"]);
    assert_eq!(h.run(&["HLEN", "k"]), int(3));
    h.advance(49);
    assert_eq!(h.run(&["HGET", "k", "a"]), bulk("x"));
    h.advance(1);
    assert_eq!(h.run(&["HGET", "k", "a"]), Reply::Nil);
    let ev_names: Vec<_> = events(&h);
    assert_eq!(ev_names, vec![ev('h', "hexpired", &["a", "b"])]);
    assert_eq!(
        h.fx.propagate,
        vec![(
            0,
            vec![
                Bytes::from("HDEL"),
                Bytes::from("k"),
                Bytes::from("a"),
                Bytes::from("b")
            ]
        )]
    );
    assert_eq!(h.run(&["HLEN", "k"]), int(1));
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("keep", "1")]));
    assert_eq!(h.run(&["HEXISTS", "k", "b"]), int(0));
    // The last field expiring deletes the key.
    h.run(&["HSETEX", "k2", "PX", "10", "FIELDS", "1", "a", "x"]);
    h.advance(10);
    assert_eq!(h.run(&["HLEN", "k2"]), int(0));
    assert!(h.store.dbs[0].raw_get(b"k2").is_none());
}

#[test]
fn hincrby() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HINCRBY", "k", "n", "5"]), int(5));
    assert_eq!(events(&h), vec![ev('h', "hincrby", &["n"])]);
    assert_eq!(h.fx.rewrite, None);
    assert_eq!(h.run(&["HINCRBY", "k", "n", "-7"]), int(-2));
    assert_eq!(h.run(&["HGET", "k", "n"]), bulk("-2"));
    assert_eq!(
        h.run(&["HINCRBY", "k", "n", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["HINCRBY", "k", "n", "1.5"]),
        err("ERR value is not an integer or out of range")
    );
    h.run(&[
        "HSET",
        "k",
        "s",
        "abc",
        "sp",
        " 1",
        "big",
        "9223372036854775807",
    ]);
    assert_eq!(
        h.run(&["HINCRBY", "k", "s", "1"]),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        h.run(&["HINCRBY", "k", "sp", "1"]),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        h.run(&["HINCRBY", "k", "big", "1"]),
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(h.run(&["HINCRBY", "k", "big", "-1"]), int(i64::MAX - 1));
    h.run(&["HSET", "k", "min", "-9223372036854775808"]);
    assert_eq!(
        h.run(&["HINCRBY", "k", "min", "-1"]),
        err("ERR increment or decrement would overflow")
    );
    h.run(&["SET", "str", "v"]);
    // The increment is checked before the type, as in Redis.
    assert_eq!(
        h.run(&["HINCRBY", "str", "a", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(h.run(&["HINCRBY", "str", "a", "1"]), err(WRONGTYPE));
    // An error on a missing key leaves no key behind and no event.
    assert_eq!(
        h.run(&["HINCRBY", "none", "a", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert!(h.fx.events.is_empty());
}

#[test]
fn hincrby_keeps_the_field_deadline() {
    let mut h = Harness::new();
    h.run(&["HSETEX", "k", "PX", "100", "FIELDS", "1", "n", "1"]);
    let d = deadline(&h, "k", "n");
    assert!(d.is_some());
    assert_eq!(h.run(&["HINCRBY", "k", "n", "1"]), int(2));
    assert_eq!(deadline(&h, "k", "n"), d);
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "n", "0.5"]), bulk("2.5"));
    assert_eq!(deadline(&h, "k", "n"), d);
    h.advance(100);
    // Expired: the counter starts again from zero, without a deadline.
    assert_eq!(h.run(&["HINCRBY", "k", "n", "1"]), int(1));
    assert_eq!(deadline(&h, "k", "n"), None);
}

#[test]
fn hincrbyfloat() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "f", "10.50"]);
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "f", "0.1"]), bulk("10.6"));
    assert_eq!(events(&h), vec![ev('h', "hincrbyfloat", &["f"])]);
    assert_eq!(
        logged(&h),
        Some(vec!["HSETEX k KEEPTTL FIELDS 1 f 10.6".to_string()])
    );
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "f", "-5"]), bulk("5.6"));
    h.run(&["HSET", "k", "f", "5.0e3"]);
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "f", "2.0e2"]), bulk("5200"));
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "g", "0.1"]), bulk("0.1"));
    assert_eq!(h.run(&["HINCRBYFLOAT", "k", "g", "0.2"]), bulk("0.3"));
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "g", "abc"]),
        err("ERR value is not a valid float")
    );
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "g", "inf"]),
        err("ERR value is NaN or Infinity")
    );
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "g", "nan"]),
        err("ERR value is not a valid float")
    );
    h.run(&["HSET", "k", "s", "abc", "i", "inf", "sp", " 1"]);
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "s", "1"]),
        err("ERR hash value is not a float")
    );
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "sp", "1"]),
        err("ERR hash value is not a float")
    );
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "k", "i", "1"]),
        err("ERR increment would produce NaN or Infinity")
    );
    h.run(&["SET", "str", "v"]);
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "str", "a", "inf"]),
        err("ERR value is NaN or Infinity")
    );
    assert_eq!(h.run(&["HINCRBYFLOAT", "str", "a", "1"]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "none", "a", "1e4933"]),
        err("ERR value is not a valid float")
    );
    assert!(h.store.dbs[0].raw_get(b"none").is_none());
}

#[test]
fn hrandfield_without_count() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HRANDFIELD", "no"]), Reply::Nil);
    h.run(&["HSET", "k", "a", "1"]);
    assert_eq!(h.run(&["HRANDFIELD", "k"]), bulk("a"));
}

#[test]
fn hrandfield_with_count() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(h.run(&["HRANDFIELD", "no", "3"]), Reply::Array(vec![]));
    assert_eq!(
        h.run(&["HRANDFIELD", "no", "-3", "WITHVALUES"]),
        Reply::Array(vec![])
    );
    assert_eq!(h.run(&["HRANDFIELD", "k", "0"]), Reply::Array(vec![]));
    assert_eq!(h.run(&["HRANDFIELD", "k", "10"]), bulks(&["a", "b", "c"]));
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "5", "withvalues"]),
        bulks(&["a", "1", "b", "2", "c", "3"])
    );
    let Reply::Array(two) = h.run(&["HRANDFIELD", "k", "2"]) else {
        panic!()
    };
    assert_eq!(two.len(), 2);
    assert_ne!(two[0], two[1]);
    let Reply::Array(many) = h.run(&["HRANDFIELD", "k", "-10"]) else {
        panic!()
    };
    assert_eq!(many.len(), 10);
    assert!(many
        .iter()
        .all(|r| [bulk("a"), bulk("b"), bulk("c")].contains(r)));
    let Reply::Array(flat) = h.run(&["HRANDFIELD", "k", "-4", "WITHVALUES"]) else {
        panic!()
    };
    assert_eq!(flat.len(), 8);
    h.resp3 = true;
    let Reply::Array(pairs) = h.run(&["HRANDFIELD", "k", "-4", "WITHVALUES"]) else {
        panic!()
    };
    assert_eq!(pairs.len(), 4);
    assert!(pairs
        .iter()
        .all(|p| matches!(p, Reply::Array(kv) if kv.len() == 2)));
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "3", "WITHVALUES"]),
        Reply::Array(vec![
            bulks(&["a", "1"]),
            bulks(&["b", "2"]),
            bulks(&["c", "3"])
        ])
    );
    assert_eq!(h.run(&["HRANDFIELD", "k", "3"]), bulks(&["a", "b", "c"]));
}

#[test]
fn hrandfield_errors() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1"]);
    h.run(&["SET", "s", "v"]);
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "abc"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "1", "withvalue"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "1", "withvalues", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "-4611686018427387904", "withvalues"]),
        err("ERR value is out of range")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "4611686018427387904", "withvalues"]),
        err("ERR value is out of range")
    );
    // Count errors come before the type check.
    assert_eq!(
        h.run(&["HRANDFIELD", "s", "abc"]),
        err("ERR value is not an integer or out of range")
    );
    // A count whose reply could not be built is refused rather than exhausting memory.
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "-4611686018427387903", "withvalues"]),
        err("ERR value is out of range")
    );
    assert_eq!(
        h.run(&["HRANDFIELD", "k", "4611686018427387903", "withvalues"]),
        bulks(&["a", "1"])
    );
}

fn scan_page(r: Reply) -> (String, Vec<String>) {
    let Reply::Array(parts) = r else {
        panic!("{r:?}")
    };
    let Reply::Bulk(c) = &parts[0] else { panic!() };
    let Reply::Array(items) = &parts[1] else {
        panic!()
    };
    let items = items
        .iter()
        .map(|i| match i {
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    (String::from_utf8_lossy(c).into_owned(), items)
}

#[test]
fn hscan_small_hash_returns_everything() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1", "b", "2", "ab", "3"]);
    assert_eq!(
        scan_page(h.run(&["HSCAN", "k", "0"])),
        (
            "0".into(),
            vec!["a", "1", "b", "2", "ab", "3"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
    assert_eq!(
        scan_page(h.run(&["HSCAN", "k", "123", "COUNT", "1"]))
            .1
            .len(),
        6
    );
    assert_eq!(
        scan_page(h.run(&["HSCAN", "k", "0", "MATCH", "a*"])).1,
        vec!["a", "1", "ab", "3"]
    );
    assert_eq!(
        scan_page(h.run(&["HSCAN", "k", "0", "MATCH", "*"])).1.len(),
        6
    );
    assert_eq!(
        scan_page(h.run(&["HSCAN", "k", "0", "NOVALUES"])).1,
        vec!["a", "b", "ab"]
    );
    assert_eq!(scan_page(h.run(&["HSCAN", "k", "-1"])).0, "0");
    assert_eq!(scan_page(h.run(&["HSCAN", "k", ""])).0, "0");
}

#[test]
fn hscan_errors() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1"]);
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["HSCAN", "k", "abc"]), err("ERR invalid cursor"));
    assert_eq!(h.run(&["HSCAN", "k", " 1"]), err("ERR invalid cursor"));
    assert_eq!(
        h.run(&["HSCAN", "k", "18446744073709551616"]),
        err("ERR invalid cursor")
    );
    assert_eq!(
        h.run(&["HSCAN", "k", "0", "COUNT", "0"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["HSCAN", "k", "0", "COUNT", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["HSCAN", "k", "0", "MATCH"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["HSCAN", "k", "0", "TYPE", "string"]),
        err("ERR syntax error")
    );
    // The cursor is checked first, then the key, then the options.
    assert_eq!(h.run(&["HSCAN", "s", "x"]), err("ERR invalid cursor"));
    assert_eq!(h.run(&["HSCAN", "s", "0", "COUNT", "0"]), err(WRONGTYPE));
    assert_eq!(
        scan_page(h.run(&["HSCAN", "no", "0", "COUNT", "0"])),
        ("0".into(), vec![])
    );
}

/// Walks a hash of `n` fields (one with a long value, so the walk uses a
/// cursor) removing every third field it has seen: none may be missed.
fn walk_removing(n: usize, count: &str) {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "long", &"v".repeat(100)]);
    for i in 1..n {
        h.run(&["HSET", "k", &format!("f{i}"), &i.to_string()]);
    }
    let mut seen = std::collections::HashSet::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, items) = scan_page(h.run(&["HSCAN", "k", &cursor, "COUNT", count, "NOVALUES"]));
        calls += 1;
        for f in &items {
            if seen.insert(f.clone()) && seen.len() % 3 == 0 {
                h.run(&["HDEL", "k", f]);
            }
        }
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), n);
    assert!(calls > 10);
}

#[test]
fn hscan_large_hash_walks_with_a_cursor() {
    walk_removing(300, "20");
    walk_removing(100, "7");
    let mut h = Harness::new();
    for i in 0..300 {
        h.run(&["HSET", "k", &format!("f{i}"), &i.to_string()]);
    }
    let (_, items) = scan_page(h.run(&["HSCAN", "k", "0", "COUNT", "1000", "MATCH", "f1?"]));
    assert_eq!(items.len(), 20);
    assert!(items
        .chunks(2)
        .all(|p| p[0].starts_with("f1") && p[0].len() == 3));
}

#[test]
fn hscan_large_values_use_the_cursor_walk() {
    let mut h = Harness::new();
    let long = "x".repeat(65);
    h.run(&["HSET", "k", "a", &long, "b", "1", "c", "2"]);
    let (next, items) = scan_page(h.run(&["HSCAN", "k", "0", "COUNT", "1"]));
    assert_eq!(items.len(), 2);
    assert_ne!(next, "0");
    // Shrinking back does not make the hash compact again (as in Redis).
    h.run(&["HDEL", "k", "a"]);
    let (next, _) = scan_page(h.run(&["HSCAN", "k", "0", "COUNT", "1"]));
    assert_ne!(next, "0");
}

#[test]
fn small_hashes_keep_insertion_order_like_a_listpack() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1", "b", "2", "c", "3", "d", "4"]);
    h.run(&["HDEL", "k", "a"]);
    h.run(&["HSET", "k", "b", "x", "e", "5"]);
    assert_eq!(h.run(&["HKEYS", "k"]), bulks(&["b", "c", "d", "e"]));
    assert_eq!(h.run(&["HVALS", "k"]), bulks(&["x", "3", "4", "5"]));
    h.run(&["HGETDEL", "k", "FIELDS", "1", "c"]);
    assert_eq!(h.run(&["HKEYS", "k"]), bulks(&["b", "d", "e"]));
}

#[test]
fn hincrbyfloat_refuses_a_value_with_an_embedded_nul() {
    let mut h = Harness::new();
    h.run(&["HSET", "h", "f", "1\x002"]);
    assert_eq!(
        h.run(&["HINCRBYFLOAT", "h", "f", "1"]),
        err("ERR hash value is not a float")
    );
    assert_eq!(h.run(&["HGET", "h", "f"]), bulk("1\x002"));
}
