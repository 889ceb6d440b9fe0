//! Core tests for member expiration: every reply code, error and rule of
//! SPEC §2 and §3, with a fake clock.

use super::*;
use crate::testing::{err, Harness};
use crate::value::Value;

pub(crate) fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Runs a command written as space-separated words.
pub(crate) fn run(h: &mut Harness, cmd: &str) -> Reply {
    let words: Vec<&str> = cmd.split(' ').collect();
    h.run(&words)
}

pub(crate) fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|i| Reply::Int(*i)).collect())
}

pub(crate) fn make_set(h: &mut Harness, key: &str, members: &[&str]) {
    let mut s = SetValue::new();
    for m in members {
        s.insert(b(m));
    }
    h.store.dbs[0].set(b(key), Value::from(s));
}

pub(crate) fn make_hash(h: &mut Harness, key: &str, fields: &[&str]) {
    let mut v = HashValue::new();
    for f in fields {
        v.insert(b(f), b("v"));
    }
    h.store.dbs[0].set(b(key), Value::from(v));
}

pub(crate) fn make_zset(h: &mut Harness, key: &str, members: &[&str]) {
    let mut z = ZSetValue::new();
    for (i, m) in members.iter().enumerate() {
        z.insert(b(m), i as f64);
    }
    h.store.dbs[0].set(b(key), Value::from(z));
}

/// Events of the last command as (class, name, key, members).
fn events(h: &Harness) -> Vec<(char, String, String, Vec<String>)> {
    let s = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
    h.fx.events
        .iter()
        .map(|e| {
            (
                e.class as char,
                e.name.to_string(),
                s(&e.key),
                e.members.iter().map(s).collect(),
            )
        })
        .collect()
}

fn ev(class: char, name: &str, key: &str, members: &[&str]) -> (char, String, String, Vec<String>) {
    (
        class,
        name.into(),
        key.into(),
        members.iter().map(|m| m.to_string()).collect(),
    )
}

/// The rewrite of the last command as space-joined strings.
fn rewrite(h: &Harness) -> Option<Vec<String>> {
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

fn propagated(h: &Harness) -> Vec<String> {
    h.fx.propagate
        .iter()
        .map(|(db, c)| {
            assert_eq!(*db, 0);
            c.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

const NOW: u64 = 1_000_000_000_000;

#[test]
fn hexpire_sets_deadlines_and_reports_codes() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a", "b"]);
    assert_eq!(
        run(&mut h, "HEXPIRE h 10 FIELDS 3 a b nope"),
        ints(&[1, 1, -2])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("HPEXPIREAT h {} FIELDS 2 a b", NOW + 10_000)])
    );
    assert_eq!(events(&h), vec![ev('h', "hexpire", "h", &["a", "b"])]);
    assert_eq!(h.fx.touched.len(), 1);
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(run(&mut h, "HTTL h FIELDS 3 a b nope"), ints(&[10, 10, -2]));
    assert_eq!(run(&mut h, "HPTTL h FIELDS 1 a"), ints(&[10_000]));
    assert_eq!(
        run(&mut h, "HEXPIRETIME h FIELDS 1 a"),
        ints(&[(NOW / 1000 + 10) as i64])
    );
    assert_eq!(
        run(&mut h, "HPEXPIRETIME h FIELDS 1 a"),
        ints(&[(NOW + 10_000) as i64])
    );
    assert!(h.fx.is_empty(), "reads change nothing");
}

#[test]
fn relative_and_absolute_forms_agree() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a", "b", "c", "d"]);
    assert_eq!(run(&mut h, "HPEXPIRE h 1500 FIELDS 1 a"), ints(&[1]));
    let at_s = (NOW / 1000 + 7).to_string();
    assert_eq!(
        h.run(&["HEXPIREAT", "h", &at_s, "FIELDS", "1", "b"]),
        ints(&[1])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("HPEXPIREAT h {} FIELDS 1 b", NOW + 7000)])
    );
    let at_ms = (NOW + 2500).to_string();
    assert_eq!(
        h.run(&["hpexpireat", "h", &at_ms, "fields", "1", "c"]),
        ints(&[1])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("HPEXPIREAT h {} FIELDS 1 c", NOW + 2500)])
    );
    assert_eq!(
        run(&mut h, "HPTTL h FIELDS 4 a b c d"),
        ints(&[1500, 7000, 2500, -1])
    );
    // Seconds round up, like HTTL in Redis 7.4.
    assert_eq!(run(&mut h, "HTTL h FIELDS 4 a b c d"), ints(&[2, 7, 3, -1]));
    h.advance(1499);
    assert_eq!(run(&mut h, "HTTL h FIELDS 1 a"), ints(&[1]));
    assert_eq!(run(&mut h, "HPTTL h FIELDS 1 a"), ints(&[1]));
    h.advance(1);
    assert_eq!(run(&mut h, "HTTL h FIELDS 1 a"), ints(&[-2]));
}

#[test]
fn conditions_treat_no_deadline_as_infinite() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a", "b"]);
    // No deadline: NX and LT apply, XX and GT do not.
    assert_eq!(run(&mut h, "HEXPIRE h 100 XX FIELDS 1 a"), ints(&[0]));
    assert_eq!(rewrite(&h), Some(vec![]));
    assert_eq!(h.fx.dirty, 0);
    assert!(h.fx.events.is_empty());
    assert_eq!(run(&mut h, "HEXPIRE h 100 GT FIELDS 1 a"), ints(&[0]));
    assert_eq!(run(&mut h, "HEXPIRE h 100 LT FIELDS 1 a"), ints(&[1]));
    assert_eq!(run(&mut h, "HEXPIRE h 100 nx FIELDS 2 a b"), ints(&[0, 1]));
    // With a deadline of 100 s.
    assert_eq!(run(&mut h, "HEXPIRE h 50 GT FIELDS 1 a"), ints(&[0]));
    assert_eq!(run(&mut h, "HEXPIRE h 100 GT FIELDS 1 a"), ints(&[0]));
    assert_eq!(run(&mut h, "HEXPIRE h 200 GT FIELDS 1 a"), ints(&[1]));
    assert_eq!(run(&mut h, "HEXPIRE h 200 LT FIELDS 1 a"), ints(&[0]));
    assert_eq!(run(&mut h, "HEXPIRE h 150 Lt FIELDS 1 a"), ints(&[1]));
    assert_eq!(run(&mut h, "HEXPIRE h 300 XX FIELDS 1 a"), ints(&[1]));
    assert_eq!(run(&mut h, "HTTL h FIELDS 2 a b"), ints(&[300, 100]));
    // A condition that fails wins over a time in the past.
    assert_eq!(run(&mut h, "HEXPIRE h 0 NX FIELDS 1 a"), ints(&[0]));
    assert_eq!(run(&mut h, "HEXPIRE h 0 GT FIELDS 1 a"), ints(&[0]));
}

#[test]
fn past_time_deletes_members_and_empties_the_key() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a", "b", "c"]);
    assert_eq!(run(&mut h, "HEXPIRE h 0 FIELDS 1 a"), ints(&[2]));
    assert_eq!(rewrite(&h), Some(vec!["HDEL h a".to_string()]));
    assert_eq!(events(&h), vec![ev('h', "hdel", "h", &["a"])]);
    // Mixed: one deleted by a past absolute time after one is set.
    assert_eq!(run(&mut h, "HPEXPIRE h 5000 FIELDS 1 b"), ints(&[1]));
    assert_eq!(
        run(&mut h, "HPEXPIREAT h 1 FIELDS 3 b c b"),
        ints(&[2, 2, -2])
    );
    assert_eq!(rewrite(&h), Some(vec!["HDEL h b c".to_string()]));
    assert_eq!(
        events(&h),
        vec![ev('h', "hdel", "h", &["b", "c"]), ev('g', "del", "h", &[])],
        "the last field going deletes the key"
    );
    assert!(h.store.dbs[0].raw_get(b"h").is_none());
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    assert_eq!(run(&mut h, "HEXPIRE h 10 FIELDS 1 a"), ints(&[-2]));
}

#[test]
fn mixed_set_and_delete_logs_both() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b", "c"]);
    assert_eq!(run(&mut h, "SEXPIRE s 10 MEMBERS 1 a"), ints(&[1]));
    // a has 10 s; LT with a past time deletes a, sets nothing else.
    assert_eq!(
        run(&mut h, "SPEXPIREAT s 0 LT MEMBERS 2 a b"),
        ints(&[2, 2])
    );
    assert_eq!(events(&h), vec![ev('s', "srem", "s", &["a", "b"])]);
    assert_eq!(run(&mut h, "SEXPIRE s 5 MEMBERS 1 c"), ints(&[1]));
    make_set(&mut h, "t", &["x", "y"]);
    assert_eq!(run(&mut h, "SPEXPIRE t 0 MEMBERS 1 x"), ints(&[2]));
    make_set(&mut h, "t", &["x", "y"]);
    let at = (NOW + 100).to_string();
    assert_eq!(
        h.run(&["SPEXPIREAT", "t", &at, "MEMBERS", "2", "x", "y"]),
        ints(&[1, 1])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("SPEXPIREAT t {} MEMBERS 2 x y", NOW + 100)])
    );
    h.advance(100);
    assert_eq!(run(&mut h, "SPEXPIRE t 1 MEMBERS 1 x"), ints(&[-2]));
}

#[test]
fn missing_key_replies_minus_two_per_member() {
    let mut h = Harness::new();
    assert_eq!(
        run(&mut h, "HEXPIRE nokey 10 FIELDS 2 a b"),
        ints(&[-2, -2])
    );
    assert_eq!(rewrite(&h), Some(vec![]));
    assert_eq!(run(&mut h, "HTTL nokey FIELDS 1 a"), ints(&[-2]));
    assert_eq!(run(&mut h, "HPERSIST nokey FIELDS 1 a"), ints(&[-2]));
    assert_eq!(run(&mut h, "ZEXPIRE nokey 10 MEMBERS 1 a"), ints(&[-2]));
    assert_eq!(run(&mut h, "SPTTL nokey MEMBERS 1 a"), ints(&[-2]));
    assert!(h.store.dbs[0].is_empty(), "nothing is created");
}

#[test]
fn wrong_type_comes_before_argument_errors() {
    let mut h = Harness::new();
    h.run(&["SET", "str", "v"]);
    make_set(&mut h, "s", &["a"]);
    let wt = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(run(&mut h, "HEXPIRE str notanumber FIELDS 1 a"), wt);
    assert_eq!(run(&mut h, "HTTL s FIELDS 0 a"), wt);
    assert_eq!(run(&mut h, "ZPERSIST s MEMBERS 1 a"), wt);
    assert_eq!(run(&mut h, "SEXPIRE str 1 MEMBERS 1 a"), wt);
}

#[test]
fn expire_argument_errors() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a"]);
    let cases = [
        (
            "HEXPIRE h abc FIELDS 1 a",
            "ERR value is not an integer or out of range",
        ),
        (
            "HEXPIRE h 1.5 FIELDS 1 a",
            "ERR value is not an integer or out of range",
        ),
        (
            "HEXPIRE h -1 FIELDS 1 a",
            "ERR invalid expire time, must be >= 0",
        ),
        (
            "HPEXPIREAT h -5 FIELDS 1 a",
            "ERR invalid expire time, must be >= 0",
        ),
        (
            "HEXPIRE h 70368744177 FIELDS 1 a",
            "ERR invalid expire time in 'hexpire' command",
        ),
        (
            "HEXPIREAT h 70368744178 FIELDS 1 a",
            "ERR invalid expire time in 'hexpireat' command",
        ),
        (
            "HPEXPIRE h 70368744177663 FIELDS 1 a",
            "ERR invalid expire time in 'hpexpire' command",
        ),
        (
            "HEXPIRE h 10 FIELD 1 a",
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ),
        (
            "HEXPIRE h 10 NX XX FIELDS 1 a",
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ),
        (
            "HEXPIRE h 10 FIELDS 0 a",
            "ERR Parameter `numFields` should be greater than 0",
        ),
        (
            "HEXPIRE h 10 FIELDS -1 a",
            "ERR Parameter `numFields` should be greater than 0",
        ),
        (
            "HEXPIRE h 10 FIELDS x a",
            "ERR Parameter `numFields` should be greater than 0",
        ),
        (
            "HEXPIRE h 10 FIELDS 2 a",
            "ERR The `numfields` parameter must match the number of arguments",
        ),
        (
            "HEXPIRE h 10 NX FIELDS 1 a b",
            "ERR The `numfields` parameter must match the number of arguments",
        ),
        (
            "HEXPIRE h 10 FIELDS 1",
            "ERR wrong number of arguments for 'hexpire' command",
        ),
        (
            "HTTL h FIELDS 0 a",
            "ERR Number of fields must be a positive integer",
        ),
        (
            "HTTL h FIELDS 2 a",
            "ERR The `numfields` parameter must match the number of arguments",
        ),
        (
            "HTTL h MEMBERS 1 a",
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ),
        (
            "HPERSIST h FIELDS abc a",
            "ERR Number of fields must be a positive integer",
        ),
        (
            "HTTL h FIELDS 1",
            "ERR wrong number of arguments for 'httl' command",
        ),
        (
            "ZEXPIRE h 10 FIELDS 1 a",
            "ERR Mandatory argument MEMBERS is missing or not at the right position",
        ),
        (
            "SEXPIRE h 10 MEMBERS 0 a",
            "ERR Parameter `numMembers` should be greater than 0",
        ),
        (
            "ZTTL h MEMBERS 0 a",
            "ERR Number of members must be a positive integer",
        ),
        (
            "SPERSIST h MEMBERS 3 a",
            "ERR The `nummembers` parameter must match the number of arguments",
        ),
    ];
    let other_type = |c: &str| c.starts_with('Z') || c.starts_with('S');
    for (cmd, e) in cases.iter().filter(|(c, _)| !other_type(c)) {
        assert_eq!(run(&mut h, cmd), err(e), "{cmd}");
    }
    // Type checks come first: use keys of the right type for the others.
    make_zset(&mut h, "z", &["a"]);
    make_set(&mut h, "s", &["a"]);
    for (cmd, e) in cases.iter().filter(|(c, _)| other_type(c)) {
        let cmd = cmd.replace(" h ", if cmd.starts_with('Z') { " z " } else { " s " });
        assert_eq!(run(&mut h, &cmd), err(e), "{cmd}");
    }
    // The largest valid deadline is accepted.
    assert_eq!(
        run(&mut h, "HPEXPIREAT h 70368744177663 FIELDS 1 a"),
        ints(&[1])
    );
    assert_eq!(
        run(&mut h, "HEXPIREAT h 70368744177 FIELDS 1 a"),
        ints(&[1])
    );
}

#[test]
fn persist_codes_events_and_log() {
    let mut h = Harness::new();
    make_zset(&mut h, "z", &["a", "b"]);
    assert_eq!(run(&mut h, "ZPEXPIRE z 1000 MEMBERS 1 a"), ints(&[1]));
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("ZPEXPIREAT z {} MEMBERS 1 a", NOW + 1000)])
    );
    assert_eq!(events(&h), vec![ev('z', "zexpire", "z", &["a"])]);
    assert_eq!(
        run(&mut h, "ZPERSIST z MEMBERS 3 a b c"),
        ints(&[1, -1, -2])
    );
    assert_eq!(events(&h), vec![ev('z', "zpersist", "z", &["a"])]);
    assert_eq!(h.fx.rewrite, None, "logged as sent");
    assert_eq!(h.fx.touched.len(), 1);
    assert_eq!(run(&mut h, "ZPERSIST z MEMBERS 1 a"), ints(&[-1]));
    assert!(h.fx.events.is_empty());
    assert_eq!(rewrite(&h), Some(vec![]));
    assert_eq!(run(&mut h, "ZTTL z MEMBERS 1 a"), ints(&[-1]));
    h.advance(5000);
    assert_eq!(
        run(&mut h, "ZTTL z MEMBERS 1 a"),
        ints(&[-1]),
        "persisted member stays"
    );
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
}

#[test]
fn lazy_expiry_hides_members_and_logs_deletions() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b"]);
    assert_eq!(run(&mut h, "SPEXPIRE s 100 MEMBERS 1 a"), ints(&[1]));
    h.advance(100);
    assert_eq!(run(&mut h, "STTL s MEMBERS 2 a b"), ints(&[-2, -1]));
    assert_eq!(propagated(&h), vec!["SREM s a".to_string()]);
    assert_eq!(events(&h), vec![ev('s', "sexpired", "s", &["a"])]);
    assert_eq!(run(&mut h, "SPERSIST s MEMBERS 1 a"), ints(&[-2]));
    assert_eq!(run(&mut h, "SEXPIRE s 10 MEMBERS 1 a"), ints(&[-2]));
}

#[test]
fn last_member_expiring_deletes_the_key() {
    let mut h = Harness::new();
    make_zset(&mut h, "z", &["a"]);
    assert_eq!(run(&mut h, "ZPEXPIRE z 10 MEMBERS 1 a"), ints(&[1]));
    h.advance(10);
    assert_eq!(run(&mut h, "ZPTTL z MEMBERS 1 a"), ints(&[-2]));
    assert_eq!(
        events(&h),
        vec![ev('z', "zexpired", "z", &["a"]), ev('g', "del", "z", &[])]
    );
    assert_eq!(propagated(&h), vec!["ZREM z a".to_string()]);
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
}

#[test]
fn sweeper_reclaims_members_without_any_command() {
    let mut h = Harness::new();
    make_hash(&mut h, "h", &["a", "b", "c"]);
    make_set(&mut h, "s", &["x"]);
    run(&mut h, "HPEXPIRE h 10 FIELDS 2 a b");
    run(&mut h, "SPEXPIRE s 20 MEMBERS 1 x");
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 2);
    h.advance(10);
    assert_eq!(h.sweep(), 2);
    assert_eq!(events(&h), vec![ev('h', "hexpired", "h", &["a", "b"])]);
    assert_eq!(propagated(&h), vec!["HDEL h a b".to_string()]);
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 1);
    match &h.store.dbs[0].raw_get(b"h").map(|e| &e.value) {
        Some(Value::Hash(v)) => assert_eq!(v.len(), 1),
        other => panic!("unexpected {other:?}"),
    }
    h.advance(10);
    assert_eq!(h.sweep(), 1);
    assert_eq!(
        events(&h),
        vec![ev('s', "sexpired", "s", &["x"]), ev('g', "del", "s", &[])]
    );
    assert_eq!(propagated(&h), vec!["SREM s x".to_string()]);
    assert!(h.store.dbs[0].raw_get(b"s").is_none());
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    assert!(!h.store.has_due(h.now));
}

#[test]
fn removal_forgets_the_deadline_and_readding_starts_fresh() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b"]);
    make_zset(&mut h, "z", &["a", "b"]);
    make_hash(&mut h, "h", &["a", "b"]);
    run(&mut h, "SEXPIRE s 10 MEMBERS 1 a");
    run(&mut h, "ZEXPIRE z 10 MEMBERS 1 a");
    run(&mut h, "HEXPIRE h 10 FIELDS 1 a");
    let db = &mut h.store.dbs[0];
    for key in ["s", "z", "h"] {
        let e = db.peek_mut(key.as_bytes()).map(|e| &mut e.value);
        match e {
            Some(Value::Set(v)) => {
                assert!(v.remove(b"a"));
                assert!(v.deadlines().is_empty());
                v.insert(b("a"));
            }
            Some(Value::ZSet(v)) => {
                assert!(v.remove(b"a").is_some());
                assert!(v.deadlines().is_empty());
                v.insert(b("a"), 3.0);
            }
            Some(Value::Hash(v)) => {
                assert!(v.remove(b"a").is_some());
                assert!(v.deadlines().is_empty());
                v.insert(b("a"), b("w"));
            }
            other => panic!("unexpected {other:?}"),
        }
        db.refresh_member_index(key.as_bytes());
    }
    assert_eq!(run(&mut h, "STTL s MEMBERS 1 a"), ints(&[-1]));
    assert_eq!(run(&mut h, "ZTTL z MEMBERS 1 a"), ints(&[-1]));
    assert_eq!(run(&mut h, "HTTL h FIELDS 1 a"), ints(&[-1]));
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    h.advance(20_000);
    assert_eq!(run(&mut h, "SPTTL s MEMBERS 2 a b"), ints(&[-1, -1]));
}

#[test]
fn hset_rule_clears_and_existing_member_insert_keeps() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a"]);
    make_hash(&mut h, "h", &["a"]);
    run(&mut h, "SEXPIRE s 10 MEMBERS 1 a");
    run(&mut h, "HEXPIRE h 10 FIELDS 1 a");
    if let Some(Value::Set(v)) = h.store.dbs[0].peek_mut(b"s").map(|e| &mut e.value) {
        assert!(!v.insert(b("a")));
    }
    if let Some(Value::Hash(v)) = h.store.dbs[0].peek_mut(b"h").map(|e| &mut e.value) {
        assert!(!v.insert(b("a"), b("new")));
    }
    h.store.dbs[0].refresh_member_index(b"h");
    assert_eq!(run(&mut h, "STTL s MEMBERS 1 a"), ints(&[10]));
    assert_eq!(run(&mut h, "HTTL h FIELDS 1 a"), ints(&[-1]));
}

#[test]
fn duplicates_and_binary_members() {
    let mut h = Harness::new();
    let mut s = SetValue::new();
    s.insert(Bytes::from_static(b"\x00\xff m"));
    h.store.dbs[0].set(b("s"), Value::from(s));
    let argv: Vec<Bytes> = ["SEXPIRE", "s", "10", "MEMBERS", "2"]
        .iter()
        .map(|a| b(a))
        .chain([
            Bytes::from_static(b"\x00\xff m"),
            Bytes::from_static(b"\x00\xff m"),
        ])
        .collect();
    assert_eq!(h.run_bytes(&argv), ints(&[1, 1]));
    let ttl: Vec<Bytes> = ["STTL", "s", "MEMBERS", "1"]
        .iter()
        .map(|a| b(a))
        .chain([Bytes::from_static(b"\x00\xff m")])
        .collect();
    assert_eq!(h.run_bytes(&ttl), ints(&[10]));
}

#[test]
fn deadlines_are_indexed_for_the_sweeper() {
    let mut h = Harness::new();
    make_set(&mut h, "s", &["a", "b"]);
    run(&mut h, "SPEXPIRE s 50 MEMBERS 1 a");
    run(&mut h, "SPEXPIRE s 30 MEMBERS 1 b");
    assert_eq!(h.store.dbs[0].next_due_members(NOW + 29), None);
    assert_eq!(h.store.dbs[0].next_due_members(NOW + 30), Some(b("s")));
    run(&mut h, "SPERSIST s MEMBERS 1 b");
    assert_eq!(h.store.dbs[0].next_due_members(NOW + 30), None);
    assert_eq!(h.store.dbs[0].next_due_members(NOW + 50), Some(b("s")));
}

/// While a log loads, a member deadline that has passed is set, not
/// applied: the member stays for the commands after it (which were
/// written while it was live), so the key and its TTL survive a restart
/// after the deadline; it goes once loading is over.
#[test]
fn while_loading_a_past_member_deadline_is_set() {
    let mut h = Harness::new();
    let past = (h.now - 1000).to_string();
    let later = (h.now + 60_000).to_string();
    h.store.loading = true;
    for (add, expire, read) in [
        ("SADD s a", "SPEXPIREAT s {t} MEMBERS 1 a", "SCARD s"),
        ("ZADD z 1 a", "ZPEXPIREAT z {t} MEMBERS 1 a", "ZCARD z"),
        ("HSET h a 1", "HPEXPIREAT h {t} FIELDS 1 a", "HLEN h"),
    ] {
        run(&mut h, add);
        let key = &add[5..6];
        assert_eq!(
            run(&mut h, &expire.replace("{t}", &past)),
            ints(&[1]),
            "{expire}"
        );
        assert_eq!(
            run(&mut h, &format!("PEXPIREAT {key} {later}")),
            Reply::Int(1)
        );
        assert_eq!(run(&mut h, read), Reply::Int(1), "{read}");
    }
    run(&mut h, &format!("ZADDEX x PXAT {past} 1 a"));
    run(&mut h, &format!("HSETEX y PXAT {past} FIELDS 1 a 1"));
    assert_eq!(run(&mut h, "ZCARD x"), Reply::Int(1));
    assert_eq!(run(&mut h, "HLEN y"), Reply::Int(1));
    run(&mut h, "SADD s b");
    h.store.loading = false;
    assert_eq!(
        run(&mut h, "SMEMBERS s"),
        Reply::Set(vec![Reply::Bulk(b("b"))])
    );
    assert_eq!(
        run(&mut h, "PEXPIRETIME s"),
        Reply::Int(h.now as i64 + 60_000)
    );
    for key in ["z", "h", "x", "y"] {
        assert_eq!(
            run(&mut h, &format!("EXISTS {key}")),
            Reply::Int(0),
            "{key}"
        );
    }
}
