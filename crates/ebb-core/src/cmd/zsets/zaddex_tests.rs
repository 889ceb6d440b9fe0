//! Harness tests of ZADDEX.

use bytes::Bytes;

use super::tests::{dbl, event_names, flat, int, run};
use crate::reply::Reply;
use crate::testing::{bulks, err, Harness};

/// The commands the last command is logged as, as strings.
fn logged(h: &Harness) -> Option<Vec<String>> {
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

fn members_of(h: &Harness, event: &str) -> Vec<Bytes> {
    h.fx.events
        .iter()
        .find(|e| e.name == event)
        .map(|e| e.members.clone())
        .unwrap_or_default()
}

fn deadline(h: &Harness, key: &str, m: &str) -> Option<u64> {
    match h.store.dbs[0].raw_get(key.as_bytes()).map(|e| &e.value) {
        Some(crate::value::Value::ZSet(z)) => z.deadline(m.as_bytes()),
        _ => None,
    }
}

#[test]
fn adds_with_a_ttl_and_logs_absolute_deadlines() {
    let mut h = Harness::new();
    let at = h.now + 10_000;
    assert_eq!(run(&mut h, "ZADDEX z EX 10 1 a 2.5 b"), int(2));
    assert_eq!(event_names(&h), ["zadd", "zexpire"]);
    assert_eq!(
        members_of(&h, "zexpire"),
        vec![Bytes::from("a"), Bytes::from("b")]
    );
    assert_eq!(h.fx.ready.len(), 1);
    assert_eq!(
        logged(&h),
        Some(vec![
            "ZADD z 1 a 2.5 b".to_string(),
            format!("ZPEXPIREAT z {at} MEMBERS 2 a b")
        ])
    );
    assert_eq!(deadline(&h, "z", "a"), Some(at));
    h.advance(9_999);
    assert_eq!(run(&mut h, "ZCARD z"), int(2));
    h.advance(1);
    assert_eq!(run(&mut h, "ZCARD z"), int(0));
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
}

#[test]
fn every_ttl_unit() {
    let mut h = Harness::new();
    let now = h.now;
    assert_eq!(run(&mut h, "ZADDEX z PX 1500 1 a"), int(1));
    assert_eq!(deadline(&h, "z", "a"), Some(now + 1500));
    let exat = now / 1000 + 100;
    assert_eq!(
        h.run(&["ZADDEX", "z", "EXAT", &exat.to_string(), "1", "b"]),
        int(1)
    );
    assert_eq!(deadline(&h, "z", "b"), Some(exat * 1000));
    assert_eq!(
        h.run(&["zaddex", "z", "pxat", &(now + 7).to_string(), "1", "c"]),
        int(1)
    );
    assert_eq!(deadline(&h, "z", "c"), Some(now + 7));
    assert_eq!(run(&mut h, "ZADDEX z ex 3 1 d"), int(1));
    assert_eq!(deadline(&h, "z", "d"), Some(now + 3000));
    // The largest deadline the member TTL commands take.
    assert_eq!(run(&mut h, "ZADDEX z PXAT 70368744177663 1 e"), int(1));
    assert_eq!(deadline(&h, "z", "e"), Some((1 << 46) - 1));
}

#[test]
fn updates_refresh_the_ttl_and_keepttl_keeps_it() {
    let mut h = Harness::new();
    let now = h.now;
    assert_eq!(run(&mut h, "ZADD z 1 plain"), int(1));
    assert_eq!(run(&mut h, "ZADDEX z PX 100 1 a"), int(1));
    // An update, even to the same score, is a write: it gets the new TTL.
    assert_eq!(run(&mut h, "ZADDEX z PX 500 1 a 2 plain"), int(0));
    assert_eq!(event_names(&h), ["zadd", "zexpire"]);
    assert_eq!(deadline(&h, "z", "a"), Some(now + 500));
    assert_eq!(deadline(&h, "z", "plain"), Some(now + 500));
    assert_eq!(run(&mut h, "ZADD z 3 kept"), int(1));
    // KEEPTTL: existing members keep theirs (or none), new ones get the TTL.
    assert_eq!(
        run(&mut h, "ZADDEX z KEEPTTL CH PX 900 5 a 5 kept 5 new"),
        int(3)
    );
    assert_eq!(members_of(&h, "zexpire"), vec![Bytes::from("new")]);
    assert_eq!(
        logged(&h).map(|l| l[1].clone()),
        Some(format!("ZPEXPIREAT z {} MEMBERS 1 new", now + 900))
    );
    assert_eq!(deadline(&h, "z", "a"), Some(now + 500));
    assert_eq!(deadline(&h, "z", "kept"), None);
    assert_eq!(deadline(&h, "z", "new"), Some(now + 900));
    assert_eq!(run(&mut h, "ZSCORE z a"), dbl(5.0));
    // A repeated member is written twice but logged once, with its last score.
    assert_eq!(run(&mut h, "ZADDEX z PX 50 1 r 2 r"), int(1));
    assert_eq!(
        logged(&h).map(|l| l[0].clone()),
        Some("ZADD z 2 r".to_string())
    );
}

#[test]
fn conditions_skip_members_without_touching_their_ttl() {
    let mut h = Harness::new();
    let now = h.now;
    assert_eq!(run(&mut h, "ZADDEX z PX 100 5 a"), int(1));
    assert_eq!(run(&mut h, "ZADDEX z NX PX 900 1 a 1 b"), int(1));
    assert_eq!(deadline(&h, "z", "a"), Some(now + 100));
    assert_eq!(run(&mut h, "ZADDEX z XX PX 900 1 c"), int(0));
    assert_eq!(run(&mut h, "ZSCORE z c"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADDEX z GT CH PX 900 4 a"), int(0));
    assert_eq!(deadline(&h, "z", "a"), Some(now + 100));
    assert!(h.fx.events.is_empty());
    assert_eq!(logged(&h), Some(vec![]));
    assert_eq!(run(&mut h, "ZADDEX z LT CH PX 900 4 a"), int(1));
    assert_eq!(deadline(&h, "z", "a"), Some(now + 900));
    // XX on a missing key: nothing, and nothing logged.
    assert_eq!(run(&mut h, "ZADDEX nokey XX PX 10 1 a"), int(0));
    assert!(h.store.dbs[0].raw_get(b"nokey").is_none());
    assert_eq!(logged(&h), Some(vec![]));
}

#[test]
fn incr_replies_like_zadd_incr() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADDEX z INCR EX 60 1 bucket"), dbl(1.0));
    assert_eq!(event_names(&h), ["zincr", "zexpire"]);
    assert_eq!(
        run(&mut h, "ZADDEX z INCR KEEPTTL EX 120 1 bucket"),
        dbl(2.0)
    );
    assert_eq!(event_names(&h), ["zincr"]);
    assert_eq!(logged(&h), Some(vec!["ZADD z 2 bucket".to_string()]));
    assert_eq!(run(&mut h, "ZADDEX z INCR NX EX 60 1 bucket"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADDEX z INCR XX EX 60 1 other"), Reply::Nil);
    assert_eq!(run(&mut h, "ZADDEX z EX 60 +inf i"), int(1));
    assert_eq!(
        run(&mut h, "ZADDEX z INCR EX 60 -inf i"),
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(run(&mut h, "ZSCORE z i"), dbl(f64::INFINITY));
    // KEEPTTL kept the bucket's first deadline.
    h.advance(59_999);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["bucket", "i"]));
    h.advance(1);
    assert_eq!(run(&mut h, "ZCARD z"), int(0));
}

#[test]
fn cap_keeps_the_highest_scored_members() {
    let mut h = Harness::new();
    for (t, page) in [(1, "p1"), (2, "p2"), (3, "p3")] {
        assert_eq!(
            h.run(&[
                "ZADDEX",
                "recent",
                "CAP",
                "3",
                "EX",
                "100",
                &t.to_string(),
                page
            ]),
            int(1)
        );
    }
    assert_eq!(run(&mut h, "ZADDEX recent CAP 3 EX 100 4 p4 5 p5"), int(2));
    assert_eq!(event_names(&h), ["zadd", "zexpire", "zremrangebyrank"]);
    let log = logged(&h).unwrap_or_default();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2], "ZREM recent p1 p2");
    assert_eq!(
        run(&mut h, "ZRANGE recent 0 -1 REV"),
        bulks(&["p5", "p4", "p3"])
    );
    // Re-viewing a page moves it up; nothing is trimmed.
    assert_eq!(run(&mut h, "ZADDEX recent CAP 3 EX 100 6 p3"), int(0));
    assert_eq!(event_names(&h), ["zadd", "zexpire"]);
    assert_eq!(
        run(&mut h, "ZRANGE recent 0 -1 REV"),
        bulks(&["p3", "p5", "p4"])
    );
    // The member just added may itself be trimmed.
    assert_eq!(run(&mut h, "ZADDEX recent CAP 3 EX 100 0 old"), int(1));
    assert_eq!(
        run(&mut h, "ZRANGE recent 0 -1"),
        bulks(&["p4", "p5", "p3"])
    );
    // CAP 0 empties the key, and a new key is never created.
    assert_eq!(run(&mut h, "ZADDEX recent CAP 0 EX 100 1 x"), int(1));
    assert!(h.store.dbs[0].raw_get(b"recent").is_none());
    assert_eq!(
        event_names(&h),
        ["zadd", "zexpire", "zremrangebyrank", "del"]
    );
    assert_eq!(run(&mut h, "ZADDEX fresh CAP 0 EX 100 1 x"), int(1));
    assert!(h.store.dbs[0].raw_get(b"fresh").is_none());
    assert!(!event_names(&h).contains(&"del".to_string()));
}

#[test]
fn limit_is_all_or_nothing() {
    let mut h = Harness::new();
    let now = h.now;
    assert_eq!(run(&mut h, "ZADDEX otp LIMIT 3 EX 300 1 c1 2 c2"), int(2));
    assert_eq!(
        run(&mut h, "ZADDEX otp LIMIT 3 EX 600 9 c1 3 c3 4 c4"),
        int(-1)
    );
    assert!(h.fx.events.is_empty() && h.fx.touched.is_empty() && h.fx.ready.is_empty());
    assert_eq!(logged(&h), Some(vec![]));
    // Nothing changed: scores and deadlines are as before.
    assert_eq!(
        run(&mut h, "ZRANGE otp 0 -1 WITHSCORES"),
        flat(&[("c1", 1.0), ("c2", 2.0)])
    );
    assert_eq!(deadline(&h, "otp", "c1"), Some(now + 300_000));
    assert_eq!(run(&mut h, "ZADDEX otp LIMIT 3 EX 600 9 c1 3 c3"), int(1));
    assert_eq!(deadline(&h, "otp", "c1"), Some(now + 600_000));
    // Updating members of a full key is fine; growing it is not.
    assert_eq!(run(&mut h, "ZADDEX otp LIMIT 3 CH EX 600 8 c1"), int(1));
    assert_eq!(run(&mut h, "ZADDEX otp LIMIT 3 INCR EX 600 1 c9"), int(-1));
    // Expired members do not count.
    h.advance(300_000);
    assert_eq!(run(&mut h, "ZADDEX otp LIMIT 3 EX 600 4 c4"), int(1));
    assert_eq!(run(&mut h, "ZCARD otp"), int(3));
    // A new key refused by LIMIT is not created.
    assert_eq!(run(&mut h, "ZADDEX n LIMIT 1 EX 10 1 a 2 b"), int(-1));
    assert!(h.store.dbs[0].raw_get(b"n").is_none());
    assert!(h.fx.events.is_empty());
    assert_eq!(run(&mut h, "ZADDEX n LIMIT 0 EX 10 1 a"), int(-1));
    // A key already above the limit refuses even a pure update.
    assert_eq!(run(&mut h, "ZADD big 1 a 2 b 3 c"), int(3));
    assert_eq!(run(&mut h, "ZADDEX big LIMIT 2 EX 10 5 a"), int(-1));
    assert_eq!(run(&mut h, "ZSCORE big a"), dbl(1.0));
    assert_eq!(deadline(&h, "big", "a"), None);
}

#[test]
fn a_deadline_in_the_past_expires_at_once() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "ZADD z 1 keep 2 old"), int(2));
    assert_eq!(run(&mut h, "ZADDEX z PXAT 1 5 old 6 new"), int(1));
    assert_eq!(event_names(&h), ["zadd", "zexpire", "zexpired"]);
    assert_eq!(members_of(&h, "zexpired").len(), 2);
    assert_eq!(run(&mut h, "ZRANGE z 0 -1"), bulks(&["keep"]));
    assert_eq!(run(&mut h, "ZADDEX y EXAT 1 5 a"), int(1));
    assert!(h.store.dbs[0].raw_get(b"y").is_none());
}

#[test]
fn option_errors() {
    let mut h = Harness::new();
    let cases = [
        (
            "ZADDEX z NX XX EX 1 1 a",
            "ERR XX and NX options at the same time are not compatible",
        ),
        (
            "ZADDEX z GT LT EX 1 1 a",
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ),
        (
            "ZADDEX z NX LT EX 1 1 a",
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ),
        (
            "ZADDEX z INCR EX 1 1 a 2 b",
            "ERR INCR option supports a single increment-element pair",
        ),
        ("ZADDEX z EX 1 1 a 2", "ERR syntax error"),
        ("ZADDEX z NX CH KEEPTTL CAP", "ERR syntax error"),
        (
            "ZADDEX z CAP 1 LIMIT 2 EX 1 1 a",
            "ERR CAP and LIMIT options at the same time are not compatible",
        ),
        (
            "ZADDEX z NX 1 a 2 b",
            "ERR syntax error, ZADDEX requires one of EX, PX, EXAT or PXAT",
        ),
        (
            "ZADDEX z KEEPTTL 1 a 2 b",
            "ERR syntax error, ZADDEX requires one of EX, PX, EXAT or PXAT",
        ),
        ("ZADDEX z EX 1 PX 1 1 a", "ERR syntax error"),
        ("ZADDEX z EX 1 EX 1 1 a", "ERR syntax error"),
        (
            "ZADDEX z EX 0 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z PX -5 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z EX 9223372036854775807 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z PX 9223372036854775807 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z EXAT 0 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        // Past the largest member deadline (2^46 - 1 ms), as ZPEXPIREAT.
        (
            "ZADDEX z PXAT 70368744177664 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z EX 100000000000 1 a",
            "ERR invalid expire time in 'zaddex' command",
        ),
        (
            "ZADDEX z EX 1.5 1 a",
            "ERR value is not an integer or out of range",
        ),
        (
            "ZADDEX z CAP x EX 1 1 a",
            "ERR value is not an integer or out of range",
        ),
        (
            "ZADDEX z CAP -1 EX 1 1 a",
            "ERR value is out of range, must be positive",
        ),
        (
            "ZADDEX z LIMIT -1 EX 1 1 a",
            "ERR value is out of range, must be positive",
        ),
        ("ZADDEX z EX 1 x a", "ERR value is not a valid float"),
        ("ZADDEX z EX 1 nan a", "ERR value is not a valid float"),
        (
            "ZADDEX z EX 1 1",
            "ERR wrong number of arguments for 'zaddex' command",
        ),
    ];
    for (cmd, text) in cases {
        assert_eq!(run(&mut h, cmd), err(text), "{cmd}");
    }
    assert!(h.store.dbs[0].raw_get(b"z").is_none());
    assert_eq!(run(&mut h, "SET s x"), Reply::Ok);
    assert_eq!(
        run(&mut h, "ZADDEX s EX 1 1 a"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(
        run(&mut h, "ZADDEX s EX 1 x a"),
        err("ERR value is not a valid float")
    );
}
