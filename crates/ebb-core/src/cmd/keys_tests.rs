//! Tests of the keys family, plus value-building helpers shared with the
//! tests of `keys_expire.rs`, `keys_object.rs` and `sort.rs` (they build
//! values directly so they do not depend on other families' commands).

use bytes::Bytes;

use super::parse_cursor;
use crate::effects::Event;
use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};
use crate::value::{HashValue, ListValue, SetValue, Value, ZSetValue};

pub(crate) fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Stores a set in the selected database.
pub(crate) fn put_set(h: &mut Harness, key: &str, members: &[&str]) {
    let mut s = SetValue::new();
    for m in members {
        s.insert(b(m));
    }
    h.store.dbs[h.db].set(b(key), Value::from(s));
}

/// Stores a list in the selected database.
pub(crate) fn put_list(h: &mut Harness, key: &str, items: &[&str]) {
    let l: ListValue = items.iter().map(|s| b(s)).collect();
    h.store.dbs[h.db].set(b(key), Value::from(l));
}

/// Stores a sorted set in the selected database.
pub(crate) fn put_zset(h: &mut Harness, key: &str, items: &[(f64, &str)]) {
    let mut z = ZSetValue::new();
    for (s, m) in items {
        z.insert(b(m), *s);
    }
    h.store.dbs[h.db].set(b(key), Value::from(z));
}

/// Stores a hash in the selected database.
pub(crate) fn put_hash(h: &mut Harness, key: &str, pairs: &[(&str, &str)]) {
    let mut v = HashValue::new();
    for (f, x) in pairs {
        v.insert(b(f), b(x));
    }
    h.store.dbs[h.db].set(b(key), Value::from(v));
}

/// Gives member `m` of the set, sorted set or hash at `key` (database `db`)
/// the deadline `at`, keeping the member index right.
pub(crate) fn set_member_deadline(h: &mut Harness, db: usize, key: &str, m: &str, at: u64) {
    let e = h.store.dbs[db]
        .peek_mut(key.as_bytes())
        .expect("key exists");
    let ok = match &mut e.value {
        Value::Set(s) => s.set_deadline(m.as_bytes(), at),
        Value::ZSet(z) => z.set_deadline(m.as_bytes(), at),
        Value::Hash(v) => v.set_deadline(m.as_bytes(), at),
        _ => false,
    };
    assert!(ok, "member exists");
    h.store.dbs[db].refresh_member_index(key.as_bytes());
}

/// The deadline of member `m` at `key` in database `db`.
pub(crate) fn member_deadline(h: &Harness, db: usize, key: &str, m: &str) -> Option<u64> {
    let e = h.store.dbs[db].peek(key.as_bytes())?;
    match &e.value {
        Value::Set(s) => s.deadlines().get(m.as_bytes()),
        Value::ZSet(z) => z.deadlines().get(m.as_bytes()),
        Value::Hash(v) => v.deadlines().get(m.as_bytes()),
        _ => None,
    }
}

/// The set members at `key` in database `db`, sorted.
pub(crate) fn set_members(h: &Harness, db: usize, key: &str) -> Vec<String> {
    let Some(e) = h.store.dbs[db].peek(key.as_bytes()) else {
        return vec![];
    };
    let Value::Set(s) = &e.value else {
        panic!("not a set")
    };
    let mut v: Vec<String> = s
        .iter()
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .collect();
    v.sort();
    v
}

/// The key events of the last command, as (class, name, db, key).
pub(crate) fn events(h: &Harness) -> Vec<(char, String, usize, String)> {
    h.fx.events
        .iter()
        .map(
            |Event {
                 class,
                 name,
                 db,
                 key,
                 ..
             }| {
                (
                    *class as char,
                    name.to_string(),
                    *db,
                    String::from_utf8_lossy(key).into_owned(),
                )
            },
        )
        .collect()
}

fn ev(class: char, name: &str, db: usize, key: &str) -> (char, String, usize, String) {
    (class, name.to_string(), db, key.to_string())
}

fn sorted(r: Reply) -> Reply {
    match r {
        Reply::Array(mut v) => {
            v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            Reply::Array(v)
        }
        other => other,
    }
}

fn touched(h: &Harness) -> Vec<(usize, String)> {
    h.fx.touched
        .iter()
        .map(|(d, k)| (*d, String::from_utf8_lossy(k).into_owned()))
        .collect()
}

#[test]
fn del_unlink_exists_touch_type() {
    let mut h = Harness::new();
    h.run(&["SET", "a", "1"]);
    h.run(&["SET", "b", "2"]);
    put_list(&mut h, "l", &["x"]);
    assert_eq!(h.run(&["EXISTS", "a", "a", "nope", "l"]), Reply::Int(3));
    assert_eq!(h.run(&["TOUCH", "a", "nope", "b"]), Reply::Int(2));
    assert_eq!(h.run(&["TYPE", "a"]), Reply::simple("string"));
    assert_eq!(h.run(&["TYPE", "l"]), Reply::simple("list"));
    assert_eq!(h.run(&["TYPE", "nope"]), Reply::simple("none"));
    assert_eq!(h.run(&["DEL", "a", "nope", "a"]), Reply::Int(1));
    assert_eq!(events(&h), vec![ev('g', "del", 0, "a")]);
    assert_eq!(touched(&h), vec![(0, "a".to_string())]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(h.run(&["UNLINK", "b", "l"]), Reply::Int(2));
    assert_eq!(h.run(&["EXISTS", "a", "b", "l"]), Reply::Int(0));
    assert_eq!(
        h.run(&["DEL"]),
        err("ERR wrong number of arguments for 'del' command")
    );
    assert_eq!(
        h.run(&["TYPE"]),
        err("ERR wrong number of arguments for 'type' command")
    );
}

#[test]
fn expired_keys_do_not_exist() {
    let mut h = Harness::new();
    h.run(&["SET", "a", "1"]);
    let at = h.now + 100;
    h.store.dbs[0].set_expire(b"a", Some(at));
    h.advance(100);
    assert_eq!(h.run(&["EXISTS", "a"]), Reply::Int(0));
    assert_eq!(events(&h), vec![ev('x', "expired", 0, "a")]);
    assert_eq!(h.run(&["DEL", "a"]), Reply::Int(0));
    // A collection whose last member expired is gone too.
    put_set(&mut h, "s", &["m"]);
    let t = h.now + 5;
    set_member_deadline(&mut h, 0, "s", "m", t);
    assert_eq!(h.run(&["TYPE", "s"]), Reply::simple("set"));
    h.advance(5);
    assert_eq!(h.run(&["TYPE", "s"]), Reply::simple("none"));
}

#[test]
fn rename_moves_value_ttl_and_member_deadlines() {
    let mut h = Harness::new();
    put_set(&mut h, "s", &["a", "b", "c"]);
    let t = h.now + 10_000;
    set_member_deadline(&mut h, 0, "s", "a", t);
    let ttl = h.now + 50_000;
    h.store.dbs[0].set_expire(b"s", Some(ttl));
    h.run(&["SET", "dst", "old"]);
    assert_eq!(h.run(&["RENAME", "s", "dst"]), Reply::Ok);
    assert_eq!(
        events(&h),
        vec![
            ev('g', "rename_from", 0, "s"),
            ev('g', "rename_to", 0, "dst")
        ]
    );
    assert_eq!(
        touched(&h),
        vec![(0, "s".to_string()), (0, "dst".to_string())]
    );
    assert!(h.store.dbs[0].peek(b"s").is_none());
    assert_eq!(member_deadline(&h, 0, "dst", "a"), Some(t));
    assert_eq!(
        h.store.dbs[0].peek(b"dst").and_then(|e| e.expire_at()),
        Some(ttl)
    );
    // The member index follows the new name: the member expires there.
    h.advance(10_000);
    h.sweep();
    assert_eq!(set_members(&h, 0, "dst"), vec!["b", "c"]);
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    assert_eq!(h.store.dbs[0].stats().expires, 1);
}

#[test]
fn rename_errors_and_nx() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["RENAME", "nope", "x"]), err("ERR no such key"));
    assert_eq!(h.run(&["RENAMENX", "nope", "x"]), err("ERR no such key"));
    assert_eq!(h.run(&["RENAME", "nope", "nope"]), err("ERR no such key"));
    h.run(&["SET", "a", "1"]);
    h.run(&["SET", "b", "2"]);
    assert_eq!(h.run(&["RENAME", "a", "a"]), Reply::Ok);
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["RENAMENX", "a", "a"]), Reply::Int(0));
    assert_eq!(h.run(&["RENAMENX", "a", "b"]), Reply::Int(0));
    assert_eq!(h.run(&["GET", "b"]), bulk("2"));
    assert_eq!(h.run(&["RENAMENX", "a", "c"]), Reply::Int(1));
    assert_eq!(h.run(&["GET", "c"]), bulk("1"));
    assert_eq!(h.run(&["EXISTS", "a"]), Reply::Int(0));
    // An expired destination does not block RENAMENX.
    h.store.dbs[0].set_expire(b"b", Some(h.now));
    assert_eq!(h.run(&["RENAMENX", "c", "b"]), Reply::Int(1));
    assert_eq!(h.run(&["GET", "b"]), bulk("1"));
}

#[test]
fn rename_of_list_wakes_blocked_clients() {
    let mut h = Harness::new();
    put_list(&mut h, "l", &["x"]);
    h.run(&["RENAME", "l", "m"]);
    assert_eq!(h.fx.ready, vec![(0, b("m"))]);
    h.run(&["SET", "s", "v"]);
    h.run(&["RENAME", "s", "t"]);
    assert!(h.fx.ready.is_empty());
}

#[test]
fn copy_clones_value_ttl_and_member_deadlines() {
    let mut h = Harness::new();
    put_zset(&mut h, "z", &[(1.0, "a"), (2.0, "b")]);
    let t = h.now + 1_000;
    set_member_deadline(&mut h, 0, "z", "b", t);
    let ttl = h.now + 9_000;
    h.store.dbs[0].set_expire(b"z", Some(ttl));
    assert_eq!(h.run(&["COPY", "z", "z2"]), Reply::Int(1));
    assert_eq!(events(&h), vec![ev('g', "copy_to", 0, "z2")]);
    assert_eq!(h.fx.ready, vec![(0, b("z2"))]);
    assert_eq!(member_deadline(&h, 0, "z2", "b"), Some(t));
    assert_eq!(member_deadline(&h, 0, "z", "b"), Some(t));
    assert_eq!(
        h.store.dbs[0].peek(b"z2").and_then(|e| e.expire_at()),
        Some(ttl)
    );
    // Into another database.
    assert_eq!(h.run(&["COPY", "z", "z", "DB", "3"]), Reply::Int(1));
    assert_eq!(events(&h), vec![ev('g', "copy_to", 3, "z")]);
    assert_eq!(touched(&h), vec![(3, "z".to_string())]);
    assert_eq!(member_deadline(&h, 3, "z", "b"), Some(t));
    assert_eq!(h.store.dbs[3].stats().member_expiry_keys, 1);
    // The copies are independent: removing from one leaves the other.
    if let Some(e) = h.store.dbs[0].peek_mut(b"z2") {
        if let Value::ZSet(z) = &mut e.value {
            z.remove(b"a");
        }
    }
    assert!(
        matches!(&h.store.dbs[0].peek(b"z").map(|e| &e.value), Some(Value::ZSet(z)) if z.len() == 2)
    );
    // Member deadlines fire in every copy.
    h.advance(1_000);
    h.sweep();
    for (db, key) in [(0, "z"), (0, "z2"), (3, "z")] {
        let e = h.store.dbs[db].peek(key.as_bytes());
        let left = match e.map(|e| &e.value) {
            Some(Value::ZSet(z)) => z.len(),
            _ => 0,
        };
        assert_eq!(left, if key == "z2" { 0 } else { 1 }, "{db} {key}");
    }
}

#[test]
fn copy_options_and_errors() {
    let mut h = Harness::new();
    h.run(&["SET", "a", "1"]);
    h.run(&["SET", "b", "2"]);
    let same = err("ERR source and destination objects are the same");
    assert_eq!(h.run(&["COPY", "a", "a"]), same);
    assert_eq!(h.run(&["COPY", "a", "a", "DB", "0"]), same);
    assert_eq!(h.run(&["COPY", "a", "b", "DB"]), err("ERR syntax error"));
    assert_eq!(h.run(&["COPY", "a", "b", "FOO"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["COPY", "a", "b", "DB", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["COPY", "a", "b", "DB", "16"]),
        err("ERR DB index is out of range")
    );
    assert_eq!(
        h.run(&["COPY", "a", "b", "DB", "-1"]),
        err("ERR DB index is out of range")
    );
    assert_eq!(
        h.run(&["COPY", "a", "b", "DB", "99999999999"]),
        err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(
        h.run(&["COPY", "nope", "b", "DB", "99"]),
        err("ERR DB index is out of range")
    );
    assert_eq!(h.run(&["COPY", "nope", "c"]), Reply::Int(0));
    assert_eq!(h.run(&["COPY", "a", "b"]), Reply::Int(0));
    assert_eq!(h.run(&["GET", "b"]), bulk("2"));
    let ttl = h.now + 500;
    h.store.dbs[0].set_expire(b"b", Some(ttl));
    assert_eq!(h.run(&["COPY", "a", "b", "replace"]), Reply::Int(1));
    assert_eq!(h.run(&["GET", "b"]), bulk("1"));
    // REPLACE drops the destination's old TTL: the source had none.
    assert_eq!(h.store.dbs[0].peek(b"b").and_then(|e| e.expire_at()), None);
    assert_eq!(
        h.run(&["COPY", "a", "b", "REPLACE", "DB", "1", "REPLACE"]),
        Reply::Int(1)
    );
    h.db = 1;
    assert_eq!(h.run(&["GET", "b"]), bulk("1"));
}

#[test]
fn move_keeps_ttl_and_member_deadlines() {
    let mut h = Harness::new();
    put_hash(&mut h, "h", &[("f", "1"), ("g", "2")]);
    let t = h.now + 700;
    set_member_deadline(&mut h, 0, "h", "g", t);
    let ttl = h.now + 5_000;
    h.store.dbs[0].set_expire(b"h", Some(ttl));
    assert_eq!(h.run(&["MOVE", "h", "2"]), Reply::Int(1));
    assert_eq!(
        events(&h),
        vec![ev('g', "move_from", 0, "h"), ev('g', "move_to", 2, "h")]
    );
    assert_eq!(
        touched(&h),
        vec![(0, "h".to_string()), (2, "h".to_string())]
    );
    assert!(h.store.dbs[0].peek(b"h").is_none());
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    assert_eq!(h.store.dbs[0].stats().expires, 0);
    assert_eq!(member_deadline(&h, 2, "h", "g"), Some(t));
    assert_eq!(
        h.store.dbs[2].peek(b"h").and_then(|e| e.expire_at()),
        Some(ttl)
    );
    assert_eq!(h.store.dbs[2].stats().member_expiry_keys, 1);
    assert_eq!(h.store.dbs[2].stats().expires, 1);
    h.advance(700);
    assert_eq!(h.sweep(), 1);
    assert_eq!(h.fx.events[0].db, 2);
}

#[test]
fn move_errors_and_conflicts() {
    let mut h = Harness::new();
    h.run(&["SET", "a", "1"]);
    let same = err("ERR source and destination objects are the same");
    assert_eq!(h.run(&["MOVE", "a", "0"]), same);
    assert_eq!(h.run(&["MOVE", "nope", "0"]), same);
    assert_eq!(
        h.run(&["MOVE", "a", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        h.run(&["MOVE", "a", "16"]),
        err("ERR DB index is out of range")
    );
    assert_eq!(h.run(&["MOVE", "nope", "1"]), Reply::Int(0));
    h.db = 1;
    h.run(&["SET", "a", "other"]);
    h.db = 0;
    assert_eq!(h.run(&["MOVE", "a", "1"]), Reply::Int(0));
    assert_eq!(h.run(&["GET", "a"]), bulk("1"));
    // An expired key in the target does not count.
    h.store.dbs[1].set_expire(b"a", Some(h.now));
    assert_eq!(h.run(&["MOVE", "a", "1"]), Reply::Int(1));
    h.db = 1;
    assert_eq!(h.run(&["GET", "a"]), bulk("1"));
}

#[test]
fn randomkey_skips_expired() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["RANDOMKEY"]), Reply::Nil);
    h.run(&["SET", "a", "1"]);
    assert_eq!(h.run(&["RANDOMKEY"]), bulk("a"));
    h.run(&["SET", "b", "1"]);
    h.store.dbs[0].set_expire(b"b", Some(h.now));
    for _ in 0..10 {
        assert_eq!(h.run(&["RANDOMKEY"]), bulk("a"));
    }
    h.store.dbs[0].set_expire(b"a", Some(h.now));
    assert_eq!(h.run(&["RANDOMKEY"]), Reply::Nil);
    assert_eq!(h.store.dbs[0].len(), 0);
}

#[test]
fn keys_matches_and_skips_expired() {
    let mut h = Harness::new();
    for k in ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", ""] {
        h.run(&["SET", k, "1"]);
    }
    assert_eq!(
        sorted(h.run(&["KEYS", "h?llo"])),
        bulks(&["h*llo", "hallo", "hello", "hxllo"])
    );
    assert_eq!(
        sorted(h.run(&["KEYS", "h*llo"])),
        bulks(&["h*llo", "hallo", "heeeello", "hello", "hllo", "hxllo"])
    );
    assert_eq!(
        sorted(h.run(&["KEYS", "h[ae]llo"])),
        bulks(&["hallo", "hello"])
    );
    assert_eq!(
        sorted(h.run(&["KEYS", "h[^e]llo"])),
        bulks(&["h*llo", "hallo", "hxllo"])
    );
    assert_eq!(sorted(h.run(&["KEYS", "h[a-b]llo"])), bulks(&["hallo"]));
    assert_eq!(sorted(h.run(&["KEYS", "h\\*llo"])), bulks(&["h*llo"]));
    // `*` is "everything", including the empty key; `**` is not.
    assert!(LenOnly(7) == h.run(&["KEYS", "*"]));
    assert!(LenOnly(6) == h.run(&["KEYS", "**"]));
    h.store.dbs[0].set_expire(b"hello", Some(h.now));
    assert_eq!(sorted(h.run(&["KEYS", "h[ae]llo"])), bulks(&["hallo"]));
    // Left out, not deleted: no event, and the key is still in the table.
    assert_eq!(events(&h), vec![]);
    assert!(h.store.dbs[0].peek(b"hello").is_some());
}

/// Matches an array reply by its length only.
struct LenOnly(usize);

impl PartialEq<Reply> for LenOnly {
    fn eq(&self, r: &Reply) -> bool {
        matches!(r, Reply::Array(v) if v.len() == self.0)
    }
}

#[test]
fn keys_star_counts() {
    let mut h = Harness::new();
    for k in ["a", "b", ""] {
        h.run(&["SET", k, "1"]);
    }
    assert!(LenOnly(3) == h.run(&["KEYS", "*"]));
    assert!(LenOnly(2) == h.run(&["KEYS", "**"]));
}

#[test]
fn cursor_parsing_follows_strtoul() {
    assert_eq!(parse_cursor(b"0"), Ok(0));
    assert_eq!(parse_cursor(b""), Ok(0));
    assert_eq!(parse_cursor(b"1\0junk"), Ok(1));
    assert_eq!(parse_cursor(b"\0junk"), Ok(0));
    assert_eq!(parse_cursor(b"+7"), Ok(7));
    assert_eq!(parse_cursor(b"007"), Ok(7));
    assert_eq!(parse_cursor(b"-1"), Ok(u64::MAX));
    assert_eq!(parse_cursor(b"18446744073709551615"), Ok(u64::MAX));
    assert!(parse_cursor(b"18446744073709551616").is_err());
    assert!(parse_cursor(b" 0").is_err());
    assert!(parse_cursor(b"0 ").is_err());
    assert!(parse_cursor(b"1x").is_err());
    assert!(parse_cursor(b"-").is_err());
}

fn scan_step(h: &mut Harness, args: &[&str]) -> (String, Vec<String>) {
    match h.run(args) {
        Reply::Array(v) => {
            let cursor = match &v[0] {
                Reply::Bulk(c) => String::from_utf8_lossy(c).into_owned(),
                other => panic!("cursor {other:?}"),
            };
            let keys = match &v[1] {
                Reply::Array(ks) => ks
                    .iter()
                    .map(|k| match k {
                        Reply::Bulk(k) => String::from_utf8_lossy(k).into_owned(),
                        other => panic!("key {other:?}"),
                    })
                    .collect(),
                other => panic!("keys {other:?}"),
            };
            (cursor, keys)
        }
        other => panic!("scan reply {other:?}"),
    }
}

fn full_scan(h: &mut Harness, extra: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut all = Vec::new();
    let mut steps = 0;
    loop {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend_from_slice(extra);
        let (next, keys) = scan_step(h, &args);
        all.extend(keys);
        steps += 1;
        assert!(steps < 10_000);
        if next == "0" {
            break;
        }
        cursor = next;
    }
    all.sort();
    all
}

#[test]
fn scan_returns_every_key_once() {
    let mut h = Harness::new();
    let mut want = Vec::new();
    for i in 0..100 {
        let k = format!("key:{i}");
        h.run(&["SET", &k, "v"]);
        want.push(k);
    }
    want.sort();
    assert_eq!(full_scan(&mut h, &[]), want);
    assert_eq!(full_scan(&mut h, &["COUNT", "7"]), want);
    assert_eq!(full_scan(&mut h, &["COUNT", "1000"]), want);
    let (c, keys) = scan_step(&mut h, &["SCAN", "0", "COUNT", "1000"]);
    assert_eq!((c.as_str(), keys.len()), ("0", 100));
    // The cursor counts down from the top of the table.
    let (c, keys) = scan_step(&mut h, &["SCAN", "0"]);
    assert_eq!((c.as_str(), keys.len()), ("90", 10));
    let (c, keys) = scan_step(&mut h, &["SCAN", "101"]);
    assert_eq!((c.as_str(), keys.len()), ("90", 10));
    let (c, keys) = scan_step(&mut h, &["SCAN", "1"]);
    assert_eq!((c.as_str(), keys.len()), ("0", 1));
    assert_eq!(
        scan_step(&mut h, &["SCAN", "-1"]),
        ("0".to_string(), vec![])
    );
    let ones: Vec<String> = want.iter().filter(|k| k.ends_with('1')).cloned().collect();
    assert_eq!(full_scan(&mut h, &["MATCH", "*1", "COUNT", "9"]), ones);
}

/// Redis's guarantee: a key present from the start to the end of an
/// iteration is returned, whatever is added or removed between calls.
#[test]
fn scan_never_misses_a_key_that_stays() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for round in 0..40 {
        let mut h = Harness::new();
        let n = rng.gen_range(1..300);
        for i in 0..n {
            h.run(&["SET", &format!("k{i}"), "v"]);
        }
        let mut present: std::collections::HashSet<String> =
            (0..n).map(|i| format!("k{i}")).collect();
        let mut stayed = present.clone();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = "0".to_string();
        let mut fresh = n;
        let count = rng.gen_range(1..20).to_string();
        loop {
            let (next, keys) = scan_step(&mut h, &["SCAN", &cursor, "COUNT", &count]);
            seen.extend(keys);
            if next == "0" {
                break;
            }
            cursor = next;
            for _ in 0..rng.gen_range(0..6) {
                if rng.gen_bool(0.5) && !present.is_empty() {
                    let k = present.iter().nth(rng.gen_range(0..present.len())).cloned();
                    if let Some(k) = k {
                        h.run(&["DEL", &k]);
                        present.remove(&k);
                        stayed.remove(&k);
                    }
                } else {
                    let k = format!("k{fresh}");
                    fresh += 1;
                    h.run(&["SET", &k, "v"]);
                    present.insert(k);
                }
            }
        }
        let missed: Vec<&String> = stayed.difference(&seen).collect();
        assert!(missed.is_empty(), "round {round}: missed {missed:?}");
    }
}

#[test]
fn scan_type_filter_and_expiry() {
    let mut h = Harness::new();
    h.run(&["SET", "s1", "v"]);
    h.run(&["SET", "s2", "v"]);
    put_list(&mut h, "l", &["a"]);
    put_set(&mut h, "set", &["a"]);
    assert_eq!(full_scan(&mut h, &["TYPE", "string"]), vec!["s1", "s2"]);
    assert_eq!(full_scan(&mut h, &["TYPE", "LIST"]), vec!["l"]);
    assert_eq!(full_scan(&mut h, &["TYPE", "nosuch"]), Vec::<String>::new());
    assert_eq!(
        full_scan(&mut h, &["MATCH", "s*", "TYPE", "set"]),
        vec!["set"]
    );
    let t = h.now + 1;
    set_member_deadline(&mut h, 0, "set", "a", t);
    h.store.dbs[0].set_expire(b"s1", Some(h.now + 1));
    h.advance(1);
    assert_eq!(full_scan(&mut h, &["COUNT", "1"]), vec!["l", "s2"]);
    assert_eq!(h.store.dbs[0].len(), 2);
}

#[test]
fn scan_accounts_for_keys_it_expires() {
    let mut h = Harness::new();
    let mut want = Vec::new();
    for i in 0..50 {
        let k = format!("k{i}");
        h.run(&["SET", &k, "v"]);
        if i % 3 == 0 {
            h.store.dbs[0].set_expire(k.as_bytes(), Some(h.now + 1));
        } else {
            want.push(k);
        }
    }
    want.sort();
    h.advance(1);
    assert_eq!(full_scan(&mut h, &["COUNT", "4"]), want);
}

#[test]
fn scan_errors() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SCAN", "x"]), err("ERR invalid cursor"));
    assert_eq!(h.run(&["SCAN", " 1"]), err("ERR invalid cursor"));
    assert_eq!(h.run(&["SCAN", "0", "COUNT", "0"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["SCAN", "0", "COUNT", "-1"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["SCAN", "0", "COUNT", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(h.run(&["SCAN", "0", "MATCH"]), err("ERR syntax error"));
    assert_eq!(h.run(&["SCAN", "0", "TYPE"]), err("ERR syntax error"));
    assert_eq!(h.run(&["SCAN", "0", "foo", "bar"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["SCAN"]),
        err("ERR wrong number of arguments for 'scan' command")
    );
    // The empty cursor reads as 0.
    assert_eq!(scan_step(&mut h, &["SCAN", ""]), ("0".to_string(), vec![]));
}

#[test]
fn dbsize_flushdb_flushall() {
    let mut h = Harness::new();
    h.run(&["SET", "a", "1"]);
    h.run(&["SET", "b", "1"]);
    h.store.dbs[0].set_expire(b"b", Some(h.now + 1));
    h.db = 4;
    h.run(&["SET", "c", "1"]);
    h.db = 0;
    assert_eq!(h.run(&["DBSIZE"]), Reply::Int(2));
    assert_eq!(h.run(&["FLUSHDB", "now"]), err("ERR syntax error"));
    assert_eq!(h.run(&["FLUSHDB", "sync", "x"]), err("ERR syntax error"));
    assert_eq!(h.run(&["FLUSHDB", "ASYNC"]), Reply::Ok);
    assert_eq!(h.fx.touched_dbs, vec![0]);
    assert_eq!(h.fx.dirty, 3);
    assert_eq!(h.run(&["DBSIZE"]), Reply::Int(0));
    assert_eq!(h.store.dbs[0].stats().expires, 0);
    h.db = 4;
    assert_eq!(h.run(&["DBSIZE"]), Reply::Int(1));
    assert_eq!(h.run(&["FLUSHALL", "foo"]), err("ERR syntax error"));
    assert_eq!(h.run(&["FLUSHALL"]), Reply::Ok);
    assert_eq!(h.fx.touched_dbs, (0..16).collect::<Vec<_>>());
    assert_eq!(h.run(&["DBSIZE"]), Reply::Int(0));
    assert_eq!(h.run(&["FLUSHALL", "sync"]), Reply::Ok);
    assert_eq!(h.fx.dirty, 1);
}

#[test]
fn swapdb_swaps_everything() {
    let mut h = Harness::new();
    put_set(&mut h, "s", &["a", "b"]);
    let t = h.now + 100;
    set_member_deadline(&mut h, 0, "s", "a", t);
    h.store.dbs[0].set_expire(b"s", Some(h.now + 1_000));
    h.db = 1;
    h.run(&["SET", "x", "1"]);
    assert_eq!(h.run(&["SWAPDB", "0", "1"]), Reply::Ok);
    assert_eq!(h.fx.touched_dbs, vec![0, 1]);
    assert_eq!(h.run(&["TYPE", "s"]), Reply::simple("set"));
    assert_eq!(h.run(&["EXISTS", "x"]), Reply::Int(0));
    assert_eq!(member_deadline(&h, 1, "s", "a"), Some(t));
    assert_eq!(h.store.dbs[1].stats().member_expiry_keys, 1);
    h.advance(100);
    h.sweep();
    assert_eq!(set_members(&h, 1, "s"), vec!["b"]);
    assert_eq!(h.fx.events[0].db, 1);
    assert_eq!(h.run(&["SWAPDB", "3", "3"]), Reply::Ok);
    assert!(h.fx.touched_dbs.is_empty());
}

#[test]
fn swapdb_errors() {
    let mut h = Harness::new();
    assert_eq!(
        h.run(&["SWAPDB", "a", "1"]),
        err("ERR invalid first DB index")
    );
    assert_eq!(
        h.run(&["SWAPDB", "1", "a"]),
        err("ERR invalid second DB index")
    );
    assert_eq!(
        h.run(&["SWAPDB", "99999999999", "1"]),
        err("ERR invalid first DB index")
    );
    assert_eq!(
        h.run(&["SWAPDB", "1", "16"]),
        err("ERR DB index is out of range")
    );
    assert_eq!(
        h.run(&["SWAPDB", "-1", "0"]),
        err("ERR DB index is out of range")
    );
}

#[test]
fn ttl_type_and_exists_do_not_count_as_access() {
    let mut h = Harness::new();
    h.run(&["SET", "foo", "bar"]);
    h.advance(3000);
    for cmd in [
        &["TTL", "foo"][..],
        &["PTTL", "foo"],
        &["EXPIRETIME", "foo"],
        &["PEXPIRETIME", "foo"],
        &["TYPE", "foo"],
        &["EXISTS", "foo"],
    ] {
        h.run(cmd);
    }
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "foo"]), Reply::Int(3));
    h.run(&["GET", "foo"]);
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "foo"]), Reply::Int(0));
    h.advance(3000);
    h.run(&["TOUCH", "foo"]);
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "foo"]), Reply::Int(0));
}

#[test]
fn copy_is_a_new_object_for_lru_and_lfu() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "v"]);
    h.advance(10_000);
    assert_eq!(h.run(&["COPY", "k", "c"]), Reply::Int(1));
    assert_eq!(h.run(&["OBJECT", "IDLETIME", "c"]), Reply::Int(0));
    h.store.cfg.lfu = crate::lfu::Lfu {
        on: true,
        log_factor: 0,
        decay_minutes: 1,
    };
    // With a log factor of 0 every access raises the counter.
    for _ in 0..20 {
        h.run(&["GET", "k"]);
    }
    let Reply::Int(src) = h.run(&["OBJECT", "FREQ", "k"]) else {
        panic!("no counter")
    };
    assert!(src > 5, "{src}");
    assert_eq!(h.run(&["COPY", "k", "d"]), Reply::Int(1));
    assert_eq!(h.run(&["OBJECT", "FREQ", "d"]), Reply::Int(5));
}
