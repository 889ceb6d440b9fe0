//! ZRANDMEMBER and ZSCAN.

use std::collections::HashSet;

use super::*;
use crate::testing::err;

fn abc(h: &mut Harness) {
    zset(h, "z", &[(1.0, "a"), (2.0, "b"), (3.0, "c")]);
}

fn names(r: &Reply) -> Vec<String> {
    match r {
        Reply::Array(v) => v
            .iter()
            .map(|x| match x {
                Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("not a bulk: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn zrandmember_without_count() {
    let mut h = Harness::new();
    abc(&mut h);
    for _ in 0..20 {
        let r = h.run(&["ZRANDMEMBER", "z"]);
        assert!([bulk("a"), bulk("b"), bulk("c")].contains(&r), "{r:?}");
    }
    assert_eq!(h.run(&["ZRANDMEMBER", "nokey"]), Reply::Nil);
    h.resp3 = true;
    assert_eq!(h.run(&["ZRANDMEMBER", "nokey"]), Reply::Nil);
}

#[test]
fn zrandmember_positive_count_is_distinct() {
    let mut h = Harness::new();
    let items: Vec<(f64, String)> = (0..50).map(|i| (f64::from(i), format!("m{i}"))).collect();
    let refs: Vec<(f64, &str)> = items.iter().map(|(s, m)| (*s, m.as_str())).collect();
    zset(&mut h, "big", &refs);
    for n in [1usize, 5, 20, 49] {
        let got = names(&h.run(&["ZRANDMEMBER", "big", &n.to_string()]));
        assert_eq!(got.len(), n);
        assert_eq!(got.iter().collect::<HashSet<_>>().len(), n);
    }
    // Asking for at least the whole set returns it by descending score.
    let want: Vec<String> = items.iter().rev().map(|(_, m)| m.clone()).collect();
    assert_eq!(names(&h.run(&["ZRANDMEMBER", "big", "50"])), want);
    assert_eq!(names(&h.run(&["ZRANDMEMBER", "big", "1000"])), want);
    abc(&mut h);
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "3", "WITHSCORES"]),
        flat(&[("c", 3.0), ("b", 2.0), ("a", 1.0)])
    );
    h.resp3 = true;
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "5", "withscores"]),
        pairs(&[("c", 3.0), ("b", 2.0), ("a", 1.0)])
    );
}

#[test]
fn zrandmember_negative_count_may_repeat() {
    let mut h = Harness::new();
    zset(&mut h, "one", &[(7.0, "x")]);
    assert_eq!(
        h.run(&["ZRANDMEMBER", "one", "-3"]),
        crate::testing::bulks(&["x", "x", "x"])
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "one", "-2", "WITHSCORES"]),
        flat(&[("x", 7.0), ("x", 7.0)])
    );
    h.resp3 = true;
    assert_eq!(
        h.run(&["ZRANDMEMBER", "one", "-2", "WITHSCORES"]),
        pairs(&[("x", 7.0), ("x", 7.0)])
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "one", "1", "WITHSCORES"]),
        pairs(&[("x", 7.0)])
    );
    h.resp3 = false;
    abc(&mut h);
    let got = names(&h.run(&["ZRANDMEMBER", "z", "-100"]));
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|m| ["a", "b", "c"].contains(&m.as_str())));
}

#[test]
fn zrandmember_empty_and_errors() {
    let mut h = Harness::new();
    abc(&mut h);
    h.run(&["SET", "str", "x"]);
    assert_eq!(h.run(&["ZRANDMEMBER", "z", "0"]), arr(vec![]));
    assert_eq!(h.run(&["ZRANDMEMBER", "nokey", "5"]), arr(vec![]));
    assert_eq!(
        h.run(&["ZRANDMEMBER", "nokey", "-5", "WITHSCORES"]),
        arr(vec![])
    );
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["ZRANDMEMBER", "str"]), wrongtype);
    assert_eq!(h.run(&["ZRANDMEMBER", "str", "1"]), wrongtype);
    let syntax = err("ERR syntax error");
    assert_eq!(h.run(&["ZRANDMEMBER", "z", "1", "foo"]), syntax);
    assert_eq!(h.run(&["ZRANDMEMBER", "str", "1", "foo"]), syntax);
    assert_eq!(h.run(&["ZRANDMEMBER", "z", "1", "WITHSCORES", "x"]), syntax);
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "1.5"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "nokey", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    let range = err("ERR value is out of range");
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"]),
        range
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"]),
        range
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"]),
        range
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "nokey", "4611686018427387904", "WITHSCORES"]),
        range
    );
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "4611686018427387903", "WITHSCORES"]),
        flat(&[("c", 3.0), ("b", 2.0), ("a", 1.0)])
    );
    // Refused instead of building a reply that cannot fit in memory.
    assert_eq!(h.run(&["ZRANDMEMBER", "z", "-9223372036854775807"]), range);
}

#[test]
fn zrandmember_skips_members_past_their_deadline() {
    let mut h = Harness::new();
    let now = h.now;
    zset_with_deadlines(&mut h, "z", &[(1.0, "a"), (2.0, "b")], &[("a", now + 1)]);
    h.advance(1);
    assert_eq!(
        h.run(&["ZRANDMEMBER", "z", "-5"]),
        crate::testing::bulks(&["b"; 5])
    );
    assert_eq!(h.run(&["ZRANDMEMBER", "z"]), bulk("b"));
}

fn scan(h: &mut Harness, args: &[&str]) -> (String, Vec<String>) {
    match h.run(args) {
        Reply::Array(v) if v.len() == 2 => {
            let cursor = match &v[0] {
                Reply::Bulk(c) => String::from_utf8_lossy(c).into_owned(),
                other => panic!("cursor {other:?}"),
            };
            (cursor, names(&v[1]))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn zscan_small_sets_come_back_whole_with_text_scores() {
    let mut h = Harness::new();
    zset(
        &mut h,
        "z",
        &[
            (1.0, "a"),
            (2.0, "b"),
            (3.0, "c"),
            (1e20, "big"),
            (0.1, "tenth"),
            (-0.0, "negz"),
        ],
    );
    // A small set reads -0 back as 0, as Redis's listpack does.
    let all = [
        "negz",
        "0",
        "tenth",
        "0.10000000000000001",
        "a",
        "1",
        "b",
        "2",
        "c",
        "3",
        "big",
        "1e+20",
    ];
    let (c, items) = scan(&mut h, &["ZSCAN", "z", "0"]);
    assert_eq!((c.as_str(), items), ("0", all.map(String::from).to_vec()));
    // Any cursor reads the whole small set; scores stay bulk strings in RESP3.
    h.resp3 = true;
    let (c, items) = scan(&mut h, &["ZSCAN", "z", "5", "COUNT", "1"]);
    assert_eq!((c.as_str(), items.len()), ("0", 12));
    let (_, items) = scan(
        &mut h,
        &[
            "ZSCAN", "z", "0", "MATCH", "b*", "COUNT", "1", "MATCH", "*e*",
        ],
    );
    assert_eq!(items, ["negz", "0", "tenth", "0.10000000000000001"]);
    let (c, items) = scan(&mut h, &["ZSCAN", "nokey", "0", "COUNT", "0"]);
    assert_eq!((c.as_str(), items.len()), ("0", 0));
}

#[test]
fn zscan_errors() {
    let mut h = Harness::new();
    abc(&mut h);
    h.run(&["SET", "str", "x"]);
    let cursor = err("ERR invalid cursor");
    for bad in ["abc", "18446744073709551616", " 1", "1.5", "-"] {
        assert_eq!(h.run(&["ZSCAN", "z", bad]), cursor, "{bad}");
    }
    assert_eq!(h.run(&["ZSCAN", "str", "abc"]), cursor);
    for ok in ["-1", "+1", "01", "", "18446744073709551615"] {
        assert_eq!(scan(&mut h, &["ZSCAN", "z", ok]).1.len(), 6, "{ok}");
    }
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["ZSCAN", "str", "0"]), wrongtype);
    assert_eq!(h.run(&["ZSCAN", "str", "0", "foo"]), wrongtype);
    let syntax = err("ERR syntax error");
    for args in [
        &["ZSCAN", "z", "0", "COUNT", "0"][..],
        &["ZSCAN", "z", "0", "COUNT", "-1"],
        &["ZSCAN", "z", "0", "COUNT"],
        &["ZSCAN", "z", "0", "MATCH"],
        &["ZSCAN", "z", "0", "TYPE", "string"],
        &["ZSCAN", "z", "0", "NOVALUES"],
    ] {
        assert_eq!(h.run(args), syntax, "{args:?}");
    }
    assert_eq!(
        h.run(&["ZSCAN", "z", "0", "COUNT", "abc"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["ZSCAN", "z"]),
        err("ERR wrong number of arguments for 'zscan' command")
    );
}

#[test]
fn zscan_large_sets_walk_with_a_cursor() {
    let mut h = Harness::new();
    let items: Vec<(f64, String)> = (0..300).map(|i| (f64::from(i), format!("m{i}"))).collect();
    let refs: Vec<(f64, &str)> = items.iter().map(|(s, m)| (*s, m.as_str())).collect();
    zset(&mut h, "z", &refs);
    let mut seen = HashSet::new();
    let mut removed = HashSet::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, got) = scan(&mut h, &["ZSCAN", "z", &cursor, "COUNT", "7"]);
        assert!(got.len() <= 14);
        for p in got.chunks(2) {
            let i: usize = p[0][1..].parse().expect("member");
            assert_eq!(p[1], i.to_string());
            seen.insert(i);
        }
        calls += 1;
        // Remove members already returned and add new ones while walking.
        if calls % 3 == 0 {
            // The lowest returned member not removed yet, never one of the
            // m29x the MATCH below counts on.
            let victim = *seen
                .iter()
                .filter(|&&i| !(290..300).contains(&i) && !removed.contains(&i))
                .min()
                .expect("some");
            removed.insert(victim);
            if let Some(Value::ZSet(z)) = h.store.dbs[0].peek_mut(b"z").map(|e| &mut e.value) {
                z.remove(format!("m{victim}").as_bytes());
                z.insert(b(&format!("new{calls}")), -1.0);
            }
        }
        if next == "0" {
            break;
        }
        cursor = next;
    }
    assert!(calls >= 300 / 7);
    assert!(
        (0..300).all(|i| seen.contains(&i)),
        "every original member was returned"
    );
    // MATCH filters what each step visits.
    let (_, got) = scan(
        &mut h,
        &["ZSCAN", "z", "0", "COUNT", "1000", "MATCH", "m29?"],
    );
    let mut got: Vec<_> = got.chunks(2).map(|p| p[0].clone()).collect();
    got.sort();
    let mut live: Vec<String> = members(&h, "z")
        .into_iter()
        .map(|(m, _)| m)
        .filter(|m| m.len() == 4 && m.starts_with("m29"))
        .collect();
    live.sort();
    assert_eq!(got, live);
    assert!(live.len() >= 8);
}

#[test]
fn zscan_treats_long_members_as_a_large_set() {
    let mut h = Harness::new();
    let long = "x".repeat(65);
    zset(&mut h, "z", &[(1.0, "a"), (2.0, &long), (3.0, "c")]);
    let (c, got) = scan(&mut h, &["ZSCAN", "z", "0", "COUNT", "1"]);
    assert_ne!(c, "0");
    assert_eq!(got.len(), 2);
}

#[test]
fn zscan_of_a_small_set_over_a_lowered_listpack_limit_misses_nothing() {
    // With zset-max-listpack-entries below the set's size the set is walked
    // with a cursor; members added below the cursor must not push members
    // not yet visited past it.
    let mut h = Harness::new();
    h.store.cfg.zset_max_listpack_entries = 4;
    let items: Vec<(f64, String)> = (0..10).map(|i| (f64::from(i), format!("m{i}"))).collect();
    let refs: Vec<(f64, &str)> = items.iter().map(|(s, m)| (*s, m.as_str())).collect();
    zset(&mut h, "z", &refs);
    let mut seen = HashSet::new();
    let mut cursor = "0".to_string();
    for n in 0.. {
        let (next, got) = scan(&mut h, &["ZSCAN", "z", &cursor, "COUNT", "3"]);
        seen.extend(got.chunks(2).map(|p| p[0].clone()));
        h.run(&["ZADD", "z", &(-100 - n).to_string(), &format!("new{n}")]);
        if next == "0" {
            break;
        }
        cursor = next;
    }
    let missing: Vec<String> = (0..10)
        .map(|i| format!("m{i}"))
        .filter(|m| !seen.contains(m))
        .collect();
    assert!(missing.is_empty(), "never returned: {missing:?}");
}

#[test]
fn zscan_match_follows_redis_glob_rules() {
    // Expected sets were produced by redis-server 7.0 (ZSCAN … MATCH).
    let mut h = Harness::new();
    let mut z = ZSetValue::new();
    for m in MEMBERS {
        z.insert(Bytes::copy_from_slice(m), 0.0);
    }
    h.store.dbs[0].set(b("g"), Value::from(z));
    for (pattern, want) in EXPECT {
        let argv = [
            b("ZSCAN"),
            b("g"),
            b("0"),
            b("MATCH"),
            Bytes::copy_from_slice(pattern),
            b("COUNT"),
            b("1000"),
        ];
        let got: Vec<Bytes> = match h.run_bytes(&argv) {
            Reply::Array(v) => match &v[1] {
                Reply::Array(items) => items
                    .chunks(2)
                    .map(|p| match &p[0] {
                        Reply::Bulk(m) => m.clone(),
                        other => panic!("{other:?}"),
                    })
                    .collect(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let want: Vec<Bytes> = want.iter().map(|m| Bytes::copy_from_slice(m)).collect();
        assert_eq!(got, want, "pattern {:?}", String::from_utf8_lossy(pattern));
    }
}

const MEMBERS: &[&[u8]] = &[
    b"", b"a", b"ab", b"abc", b"b", b"]", b"[", b"*", b"?", b"\x5c", b"a\x5c", b"-", b"^",
    b"hello", b"hallo", b"hxllo", b"a]", b"ba", b"\x80", b"\xff", b"aaa", b"x-y", b"[a]", b"a*b",
    b"A",
];
const EXPECT: &[(&[u8], &[&[u8]])] = &[
    (
        b"*",
        &[
            b"", b"*", b"-", b"?", b"A", b"[", b"[a]", b"\x5c", b"]", b"^", b"a", b"a*b", b"a\x5c",
            b"a]", b"aaa", b"ab", b"abc", b"b", b"ba", b"hallo", b"hello", b"hxllo", b"x-y",
            b"\x80", b"\xff",
        ],
    ),
    (
        b"**",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a]", b"\x5c", b"]", b"^", b"a", b"a*b", b"a\x5c",
            b"a]", b"aaa", b"ab", b"abc", b"b", b"ba", b"hallo", b"hello", b"hxllo", b"x-y",
            b"\x80", b"\xff",
        ],
    ),
    (b"", &[b""]),
    (
        b"a*",
        &[b"a", b"a*b", b"a\x5c", b"a]", b"aaa", b"ab", b"abc"],
    ),
    (b"*a", &[b"a", b"aaa", b"ba"]),
    (b"a?", &[b"a\x5c", b"a]", b"ab"]),
    (
        b"?",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"a", b"b", b"\x80", b"\xff",
        ],
    ),
    (b"[ab]", &[b"a", b"b"]),
    (
        b"[^ab]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"\x80", b"\xff",
        ],
    ),
    (b"[a-b]", &[b"a", b"b"]),
    (b"[b-a]", &[b"a", b"b"]),
    (b"[", &[]),
    (
        b"[^",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"a", b"b", b"\x80", b"\xff",
        ],
    ),
    (b"[ab", &[b"a", b"b"]),
    (b"[a-]", &[b"]", b"^", b"a"]),
    (b"[\x5c]]", &[b"]"]),
    (b"\x5c*", &[b"*"]),
    (b"\x5c", &[b"\x5c"]),
    (b"a\x5c", &[b"a\x5c"]),
    (b"h[ae]llo", &[b"hallo", b"hello"]),
    (b"h[^e]llo", &[b"hallo", b"hxllo"]),
    (b"*[", &[]),
    (b"[]]", &[]),
    (b"[]", &[]),
    (b"[!a]", &[b"a"]),
    (b"[a-b-c]", &[b"-", b"a", b"b"]),
    (b"[\x5c", &[b"\x5c"]),
    (b"\x5c[a]", &[b"[a]"]),
    (
        b"*?*",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a]", b"\x5c", b"]", b"^", b"a", b"a*b", b"a\x5c",
            b"a]", b"aaa", b"ab", b"abc", b"b", b"ba", b"hallo", b"hello", b"hxllo", b"x-y",
            b"\x80", b"\xff",
        ],
    ),
    (
        b"?*",
        &[
            b"*", b"-", b"?", b"A", b"[", b"[a]", b"\x5c", b"]", b"^", b"a", b"a*b", b"a\x5c",
            b"a]", b"aaa", b"ab", b"abc", b"b", b"ba", b"hallo", b"hello", b"hxllo", b"x-y",
            b"\x80", b"\xff",
        ],
    ),
    (
        b"[\x80-a]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"a", b"\x80", b"\xff",
        ],
    ),
    (
        b"[a-\x80]",
        &[
            b"*", b"-", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"a", b"\x80", b"\xff",
        ],
    ),
    (b"[\x80-\xff]", &[b"\x80", b"\xff"]),
    (b"a*b*", &[b"a*b", b"ab", b"abc"]),
    (b"*b", &[b"a*b", b"ab", b"b"]),
    (b"[*]", &[b"*"]),
    (b"[?]", &[b"?"]),
    (b"[-]", &[b"-"]),
    (
        b"[^-]",
        &[
            b"*", b"?", b"A", b"[", b"\x5c", b"]", b"^", b"a", b"b", b"\x80", b"\xff",
        ],
    ),
    (b"x[-]y", &[b"x-y"]),
    (
        b"[a-c]*",
        &[
            b"a", b"a*b", b"a\x5c", b"a]", b"aaa", b"ab", b"abc", b"b", b"ba",
        ],
    ),
    (b"**a", &[b"a", b"aaa", b"ba"]),
];
