//! Tests of HSETEX (both grammars), HGETEX and HGETDEL, with the fake clock.

use super::tests_basic::{deadline, ev, events, int, logged, map};
use crate::reply::Reply;
use crate::testing::{bulk, bulks, err, Harness};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const ARITY: &str = "ERR wrong number of arguments for 'hsetex' command";
const ONE_EXPIRY: &str = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
const ONE_COND: &str = "ERR Only one of FXX or FNX arguments can be specified";

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn hsetex_redis_input_validation() {
    let mut h = Harness::new();
    for bad in [
        vec!["hsetex", "k", "fields", "1", "a"],
        vec!["hsetex", "k", "fields", "2", "a", "b"],
        vec!["hsetex", "k", "fields", "2", "a", "b", "c"],
        vec!["hsetex", "k", "fields", "2", "a", "b", "c", "d", "e"],
        vec!["hsetex", "k", "fields", "3", "a", "b", "c", "d"],
        vec!["hsetex", "k", "fields", "1", "a", "b", "unknown"],
    ] {
        assert_eq!(h.run(&bad), err(ARITY), "{bad:?}");
    }
    assert_eq!(h.run(&["hsetex", "k", "fields"]), err(ARITY));
    assert_eq!(
        h.run(&["hsetex", "k", "nx", "fields", "1", "a", "b"]),
        err("ERR unknown argument: nx")
    );
    assert_eq!(
        h.run(&["hsetex", "k", "bogus", "fields", "1", "a", "b"]),
        err("ERR unknown argument: bogus")
    );
    for c in [
        ["fxx", "fxx"],
        ["fxx", "fnx"],
        ["fnx", "fxx"],
        ["fnx", "fnx"],
    ] {
        assert_eq!(
            h.run(&["hsetex", "k", c[0], c[1], "EX", "100", "fields", "1", "a", "b"]),
            err(ONE_COND)
        );
    }
    for e in [
        vec!["EX", "100", "PX", "1000"],
        vec!["EXAT", "100", "EX", "1000"],
        vec!["PXAT", "100", "EXAT", "100"],
        vec!["EX", "100", "KEEPTTL"],
        vec!["KEEPTTL", "EX", "100"],
        vec!["KEEPTTL", "KEEPTTL"],
    ] {
        let mut cmd = vec!["hsetex", "k"];
        cmd.extend(e);
        cmd.extend(["fields", "1", "a", "b"]);
        assert_eq!(h.run(&cmd), err(ONE_EXPIRY), "{cmd:?}");
    }
    for unit in ["ex", "px", "exat", "pxat"] {
        assert_eq!(
            h.run(&["hsetex", "k", unit, "fields", "1", "a", "b"]),
            err("ERR value is not an integer or out of range")
        );
    }
    assert_eq!(
        h.run(&["hsetex", "k", "EXAT", "-1", "fields", "1", "a", "b"]),
        err("ERR invalid expire time, must be >= 0")
    );
    assert_eq!(
        h.run(&["hsetex", "k", "PX", "-1", "fields", "1", "a", "b"]),
        err("ERR invalid expire time, must be >= 0")
    );
    let huge = (1u64 << 48).to_string();
    for unit in ["EX", "PX", "EXAT", "PXAT"] {
        assert_eq!(
            h.run(&["hsetex", "k", unit, &huge, "fields", "1", "a", "b"]),
            err("ERR invalid expire time in 'hsetex' command")
        );
    }
    // Just within and just past the largest deadline (2^46 - 1 ms).
    let max = ((1u64 << 46) - 1).to_string();
    assert_eq!(
        h.run(&["hsetex", "k", "PXAT", &max, "fields", "1", "a", "b"]),
        int(1)
    );
    let past_max = (1u64 << 46).to_string();
    assert_eq!(
        h.run(&["hsetex", "k", "PXAT", &past_max, "fields", "1", "a", "b"]),
        err("ERR invalid expire time in 'hsetex' command")
    );
    for n in ["x", "9223372036854775808", "0", "-1", "2147483648"] {
        assert_eq!(
            h.run(&["hsetex", "k", "fields", n, "a", "b"]),
            err("ERR invalid number of fields"),
            "{n}"
        );
    }
    assert_eq!(h.run(&["hsetex", "k", "PX", "100"]), err(ARITY));
    h.run(&["SET", "s", "v"]);
    assert_eq!(
        h.run(&["hsetex", "s", "fields", "1", "a", "b"]),
        err(WRONGTYPE)
    );
    // Parse errors come before the type check.
    assert_eq!(
        h.run(&["hsetex", "s", "fields", "0", "a", "b"]),
        err("ERR invalid number of fields")
    );
}

#[test]
fn hsetex_redis_basic_and_logging() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["HSETEX", "k", "FIELDS", "1", "f1", "v1"]), int(1));
    assert_eq!(events(&h), vec![ev('h', "hset", &["f1"])]);
    assert_eq!(logged(&h), Some(s(&["HSETEX k FIELDS 1 f1 v1"])));
    assert_eq!(
        h.run(&["HSETEX", "k", "FIELDS", "2", "f1", "x", "f2", "y"]),
        int(1)
    );
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("f1", "x"), ("f2", "y")]));
    assert_eq!(h.fx.dirty, 0);
    h.run(&[
        "HSETEX", "k", "EX", "10", "FIELDS", "2", "f1", "a", "f2", "b",
    ]);
    let at = h.now + 10_000;
    assert_eq!(deadline(&h, "k", "f1"), Some(at));
    assert_eq!(deadline(&h, "k", "f2"), Some(at));
    assert_eq!(
        events(&h),
        vec![
            ev('h', "hset", &["f1", "f2"]),
            ev('h', "hexpire", &["f1", "f2"])
        ]
    );
    assert_eq!(
        logged(&h),
        Some(vec![format!("HSETEX k PXAT {at} FIELDS 2 f1 a f2 b")])
    );
    assert_eq!(h.fx.dirty, 2);
    // Without an expiry option the fields lose their deadlines, as with HSET.
    h.run(&["HSETEX", "k", "FIELDS", "1", "f1", "c"]);
    assert_eq!(deadline(&h, "k", "f1"), None);
    assert_eq!(deadline(&h, "k", "f2"), Some(at));
    // KEEPTTL keeps the deadline of existing fields; new fields get none.
    h.run(&[
        "HSETEX", "k", "KEEPTTL", "FIELDS", "2", "f2", "d", "f3", "e",
    ]);
    assert_eq!(
        logged(&h),
        Some(s(&["HSETEX k KEEPTTL FIELDS 2 f2 d f3 e"]))
    );
    assert_eq!(deadline(&h, "k", "f2"), Some(at));
    assert_eq!(deadline(&h, "k", "f3"), None);
    assert_eq!(h.run(&["HGET", "k", "f2"]), bulk("d"));
}

#[test]
fn hsetex_redis_units() {
    let mut h = Harness::new();
    let now = h.now;
    h.run(&["HSETEX", "k", "PX", "1500", "FIELDS", "1", "a", "1"]);
    assert_eq!(deadline(&h, "k", "a"), Some(now + 1500));
    h.run(&[
        "HSETEX",
        "k",
        "EXAT",
        &(now / 1000 + 100).to_string(),
        "FIELDS",
        "1",
        "a",
        "1",
    ]);
    assert_eq!(deadline(&h, "k", "a"), Some((now / 1000 + 100) * 1000));
    let pxat = (now + 777).to_string();
    h.run(&["HSETEX", "k", "pxat", &pxat, "FIELDS", "1", "a", "1"]);
    assert_eq!(deadline(&h, "k", "a"), Some(now + 777));
    assert_eq!(
        logged(&h),
        Some(vec![format!("HSETEX k PXAT {pxat} FIELDS 1 a 1")])
    );
    h.advance(776);
    assert_eq!(h.run(&["HGET", "k", "a"]), bulk("1"));
    h.advance(1);
    assert_eq!(h.run(&["HGET", "k", "a"]), Reply::Nil);
}

#[test]
fn hsetex_redis_conditions() {
    let mut h = Harness::new();
    assert_eq!(
        h.run(&["HSETEX", "k", "FXX", "FIELDS", "2", "a", "1", "b", "2"]),
        int(0)
    );
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
    assert_eq!(logged(&h), Some(vec![]));
    assert!(h.fx.events.is_empty());
    assert_eq!(
        h.run(&["HSETEX", "k", "FNX", "EX", "100", "FIELDS", "2", "a", "1", "b", "2"]),
        int(1)
    );
    assert_eq!(
        h.run(&["HSETEX", "k", "FNX", "FIELDS", "2", "c", "1", "b", "9"]),
        int(0)
    );
    assert_eq!(h.run(&["HGET", "k", "b"]), bulk("2"));
    assert_eq!(
        h.run(&["HSETEX", "k", "FXX", "FIELDS", "2", "a", "x", "c", "9"]),
        int(0)
    );
    assert_eq!(h.run(&["HLEN", "k"]), int(2));
    assert_eq!(
        h.run(&["HSETEX", "k", "FXX", "KEEPTTL", "FIELDS", "2", "a", "x", "b", "y"]),
        int(1)
    );
    assert!(deadline(&h, "k", "a").is_some());
    assert_eq!(logged(&h), Some(s(&["HSETEX k KEEPTTL FIELDS 2 a x b y"])));
    // Expired fields count as missing for FNX/FXX.
    h.advance(100_000);
    assert_eq!(
        h.run(&["HSETEX", "k", "FNX", "FIELDS", "1", "a", "new"]),
        int(1)
    );
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("a", "new")]));
}

#[test]
fn hsetex_redis_past_time_deletes() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1", "b", "2"]);
    assert_eq!(
        h.run(&["HSETEX", "k", "PXAT", "1", "FIELDS", "1", "a", "x"]),
        int(1)
    );
    assert_eq!(
        events(&h),
        vec![ev('h', "hset", &["a"]), ev('h', "hdel", &["a"])]
    );
    assert_eq!(logged(&h), Some(s(&["HDEL k a"])));
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("b", "2")]));
    assert_eq!(
        h.run(&["HSETEX", "k", "EX", "0", "FIELDS", "1", "b", "x"]),
        int(1)
    );
    assert_eq!(
        events(&h),
        vec![
            ev('h', "hset", &["b"]),
            ev('h', "hdel", &["b"]),
            ev('g', "del", &[])
        ]
    );
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
    // On a missing key the key is never left behind.
    assert_eq!(
        h.run(&["HSETEX", "new", "PXAT", "0", "FIELDS", "1", "a", "x"]),
        int(1)
    );
    assert_eq!(
        events(&h),
        vec![
            ev('h', "hset", &["a"]),
            ev('h', "hdel", &["a"]),
            ev('g', "del", &[])
        ]
    );
    assert!(h.store.dbs[0].raw_get(b"new").is_none());
}

#[test]
fn hsetex_dragonfly_form() {
    let mut h = Harness::new();
    let at = h.now + 5000;
    assert_eq!(h.run(&["HSETEX", "k", "5", "a", "1", "b", "2"]), int(2));
    assert_eq!(deadline(&h, "k", "a"), Some(at));
    assert_eq!(
        events(&h),
        vec![
            ev('h', "hset", &["a", "b"]),
            ev('h', "hexpire", &["a", "b"])
        ]
    );
    assert_eq!(
        logged(&h),
        Some(vec![format!("HSETEX k PXAT {at} FIELDS 2 a 1 b 2")])
    );
    h.advance(1000);
    // Overwrites value and deadline of existing fields.
    assert_eq!(h.run(&["HSETEX", "k", "10", "a", "x", "c", "3"]), int(1));
    assert_eq!(deadline(&h, "k", "a"), Some(h.now + 10_000));
    // NX skips existing fields.
    assert_eq!(
        h.run(&["HSETEX", "k", "NX", "100", "a", "y", "d", "4"]),
        int(1)
    );
    assert_eq!(h.run(&["HGET", "k", "a"]), bulk("x"));
    assert_eq!(deadline(&h, "k", "d"), Some(h.now + 100_000));
    assert_eq!(h.run(&["HSETEX", "k", "NX", "100", "a", "y"]), int(0));
    assert_eq!(logged(&h), Some(vec![]));
    assert!(h.fx.events.is_empty());
    // KEEPTTL: existing fields keep their deadline (or its absence).
    h.run(&["HSET", "k", "plain", "p"]);
    let d_a = deadline(&h, "k", "a");
    let at = h.now + 7000;
    assert_eq!(
        h.run(&["HSETEX", "k", "KEEPTTL", "7", "a", "z", "plain", "q", "e", "5", "b", "w"]),
        int(1)
    );
    assert_eq!(deadline(&h, "k", "a"), d_a);
    assert_eq!(deadline(&h, "k", "plain"), None);
    assert_eq!(deadline(&h, "k", "e"), Some(at));
    assert_eq!(
        events(&h),
        vec![
            ev('h', "hset", &["a", "plain", "e", "b"]),
            ev('h', "hexpire", &["e"])
        ]
    );
    assert_eq!(
        logged(&h),
        Some(vec![
            "HSETEX k KEEPTTL FIELDS 2 a z plain q".to_string(),
            format!("HSETEX k PXAT {at} FIELDS 1 e 5"),
            "HSETEX k KEEPTTL FIELDS 1 b w".to_string(),
        ])
    );
    assert_eq!(
        h.run(&["HMGET", "k", "a", "plain", "e"]),
        bulks(&["z", "q", "5"])
    );

    // Both flags, in either order.
    assert_eq!(
        h.run(&["HSETEX", "k", "KEEPTTL", "NX", "7", "a", "1", "g", "1"]),
        int(1)
    );
    assert_eq!(h.run(&["HGET", "k", "a"]), bulk("z"));
}

#[test]
fn hsetex_dragonfly_errors() {
    let mut h = Harness::new();
    let not_int = err("ERR value is not an integer or out of range");
    assert_eq!(h.run(&["HSETEX", "k", "0", "a", "1"]), not_int);
    assert_eq!(h.run(&["HSETEX", "k", "-5", "a", "1"]), not_int);
    assert_eq!(h.run(&["HSETEX", "k", "67108865", "a", "1"]), not_int);
    assert_eq!(h.run(&["HSETEX", "k", "67108864", "a", "1"]), int(1));
    assert_eq!(h.run(&["HSETEX", "k", "5", "a", "1", "b"]), err(ARITY));
    assert_eq!(
        h.run(&["HSETEX", "k", "NX", "NX", "5", "a", "1"]),
        err(ARITY)
    );
    assert_eq!(
        h.run(&["HSETEX", "k", "KEEPTTL", "KEEPTTL", "5", "a", "1"]),
        err(ARITY)
    );
    assert_eq!(h.run(&["HSETEX", "k", "5", "a"]), err(ARITY));
    h.run(&["SET", "s", "v"]);
    assert_eq!(h.run(&["HSETEX", "s", "5", "a", "1"]), err(WRONGTYPE));
}

#[test]
fn hgetex_input_validation() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "a", "1"]);
    let fields_missing =
        err("ERR Mandatory argument FIELDS is missing or not at the right position");
    assert_eq!(
        h.run(&["HGETEX", "k", "FIELDS", "1"]),
        err("ERR wrong number of arguments for 'hgetex' command")
    );
    assert_eq!(h.run(&["HGETEX", "k", "XFIELDX", "1", "a"]), fields_missing);
    assert_eq!(h.run(&["HGETEX", "k", "PXAT", "1", "1"]), fields_missing);
    assert_eq!(
        h.run(&["HGETEX", "k", "PERSIST", "1", "FIELDS", "1", "a"]),
        fields_missing
    );
    assert_eq!(
        h.run(&["HGETEX", "k", "EX", "10", "FIELDS"]),
        err("ERR wrong number of arguments for 'hgetex' command")
    );
    assert_eq!(
        h.run(&["HGETEX", "k", "FIELDS", "2", "a"]),
        err("ERR The `numfields` parameter must match the number of arguments")
    );
    for n in ["0", "-1", "9223372036854775808", "x"] {
        assert_eq!(
            h.run(&["HGETEX", "k", "FIELDS", n, "a"]),
            err("ERR Number of fields must be a positive integer")
        );
    }
    let not_int = err("ERR value is not an integer or out of range");
    assert_eq!(
        h.run(&["HGETEX", "k", "EX", "bla", "FIELDS", "1", "a"]),
        not_int
    );
    assert_eq!(
        h.run(&[
            "HGETEX",
            "k",
            "EXAT",
            "9223372036854775808",
            "FIELDS",
            "1",
            "a"
        ]),
        not_int
    );
    assert_eq!(
        h.run(&["HGETEX", "k", "PX", "-1", "FIELDS", "1", "a"]),
        err("ERR invalid expire time, must be >= 0")
    );
    assert_eq!(
        h.run(&[
            "HGETEX",
            "k",
            "EX",
            &(1u64 << 48).to_string(),
            "FIELDS",
            "1",
            "a"
        ]),
        err("ERR invalid expire time in 'hgetex' command")
    );
    assert_eq!(
        h.run(&[
            "HGETEX",
            "k",
            "PXAT",
            &((1u64 << 46) + 100).to_string(),
            "FIELDS",
            "1",
            "a"
        ]),
        err("ERR invalid expire time in 'hgetex' command")
    );
    h.run(&["SET", "s", "v"]);
    // The type is checked before the arguments.
    assert_eq!(h.run(&["HGETEX", "s", "XFIELDX", "1", "a"]), err(WRONGTYPE));
}

#[test]
fn hgetex_gets_and_sets_deadlines() {
    let mut h = Harness::new();
    assert_eq!(
        h.run(&["HGETEX", "no", "EX", "10", "FIELDS", "2", "a", "b"]),
        Reply::Array(vec![Reply::Nil, Reply::Nil])
    );
    assert_eq!(logged(&h), Some(vec![]));
    h.run(&["HSET", "k", "a", "1", "b", "2", "c", "strval"]);
    assert_eq!(
        h.run(&["HGETEX", "k", "FIELDS", "3", "a", "b", "zz"]),
        Reply::Array(vec![bulk("1"), bulk("2"), Reply::Nil])
    );
    assert!(h.fx.events.is_empty());
    assert_eq!(logged(&h), Some(vec![]));
    let at = h.now + 10_000;
    assert_eq!(
        h.run(&["HGETEX", "k", "EX", "10", "FIELDS", "2", "a", "zz"]),
        Reply::Array(vec![bulk("1"), Reply::Nil])
    );
    assert_eq!(deadline(&h, "k", "a"), Some(at));
    assert_eq!(events(&h), vec![ev('h', "hexpire", &["a"])]);
    assert_eq!(
        logged(&h),
        Some(vec![format!("HPEXPIREAT k {at} FIELDS 1 a")])
    );
    h.run(&["HGETEX", "k", "PX", "500", "FIELDS", "1", "b"]);
    assert_eq!(deadline(&h, "k", "b"), Some(h.now + 500));
    let exat = h.now / 1000 + 50;
    h.run(&["HGETEX", "k", "EXAT", &exat.to_string(), "FIELDS", "1", "c"]);
    assert_eq!(deadline(&h, "k", "c"), Some(exat * 1000));
    h.run(&[
        "HGETEX",
        "k",
        "PXAT",
        &(h.now + 9).to_string(),
        "FIELDS",
        "1",
        "c",
    ]);
    assert_eq!(deadline(&h, "k", "c"), Some(h.now + 9));
    // PERSIST removes deadlines; fields without one are not reported.
    h.run(&["HSET", "k", "d", "4"]);
    assert_eq!(
        h.run(&["HGETEX", "k", "PERSIST", "FIELDS", "2", "a", "d"]),
        bulks(&["1", "4"])
    );
    assert_eq!(deadline(&h, "k", "a"), None);
    assert_eq!(events(&h), vec![ev('h', "hpersist", &["a"])]);
    assert_eq!(logged(&h), Some(s(&["HPERSIST k FIELDS 1 a"])));
    assert_eq!(
        h.run(&["HGETEX", "k", "PERSIST", "FIELDS", "1", "a"]),
        bulks(&["1"])
    );
    assert!(h.fx.events.is_empty());
    assert_eq!(logged(&h), Some(vec![]));
}

#[test]
fn hgetex_past_time_deletes_and_lazy_expiry() {
    let mut h = Harness::new();
    h.run(&["HSET", "k", "f1", "v1", "f2", "v2", "f3", "v3"]);
    assert_eq!(
        h.run(&["HGETEX", "k", "PXAT", "1", "FIELDS", "2", "f1", "f1"]),
        Reply::Array(vec![bulk("v1"), Reply::Nil])
    );
    assert_eq!(events(&h), vec![ev('h', "hdel", &["f1"])]);
    assert_eq!(logged(&h), Some(s(&["HDEL k f1"])));
    assert_eq!(
        h.run(&["HGETEX", "k", "EX", "0", "FIELDS", "2", "f2", "f3"]),
        bulks(&["v2", "v3"])
    );
    assert_eq!(
        events(&h),
        vec![ev('h', "hdel", &["f2", "f3"]), ev('g', "del", &[])]
    );
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
    // Fields that expired are nil, reported as hexpired, and the key goes.
    h.run(&[
        "HSETEX", "k", "PX", "1", "FIELDS", "2", "f1", "v1", "f2", "v2",
    ]);
    h.advance(5);
    assert_eq!(
        h.run(&["HGETEX", "k", "FIELDS", "2", "f1", "f2"]),
        Reply::Array(vec![Reply::Nil, Reply::Nil])
    );
    assert_eq!(events(&h)[0], ev('h', "hexpired", &["f1", "f2"]));
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
}

#[test]
fn hgetdel() {
    let mut h = Harness::new();
    let fields_missing =
        err("ERR Mandatory argument FIELDS is missing or not at the right position");
    assert_eq!(
        h.run(&["HGETDEL", "k", "XFIELDS", "1", "a"]),
        fields_missing
    );
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "0", "a"]),
        err("ERR Number of fields must be a positive integer")
    );
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "2", "a"]),
        err("ERR The `numfields` parameter must match the number of arguments")
    );
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "1"]),
        err("ERR wrong number of arguments for 'hgetdel' command")
    );
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "1", "a"]),
        Reply::Array(vec![Reply::Nil])
    );
    h.run(&["SET", "s", "v"]);
    assert_eq!(
        h.run(&["HGETDEL", "s", "XFIELDS", "1", "a"]),
        err(WRONGTYPE)
    );
    h.run(&["HSETEX", "k", "PX", "1000", "FIELDS", "1", "a", "1"]);
    h.run(&["HSET", "k", "b", "2", "c", "3"]);
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "3", "a", "zz", "a"]),
        Reply::Array(vec![bulk("1"), Reply::Nil, Reply::Nil])
    );
    assert_eq!(events(&h), vec![ev('h', "hdel", &["a"])]);
    assert_eq!(logged(&h), Some(s(&["HDEL k a"])));
    assert_eq!(h.store.dbs[0].stats().member_expiry_keys, 0);
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "1", "zz"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(logged(&h), Some(vec![]));
    assert_eq!(
        h.run(&["HGETDEL", "k", "FIELDS", "2", "b", "c"]),
        bulks(&["2", "3"])
    );
    assert_eq!(
        events(&h),
        vec![ev('h', "hdel", &["b", "c"]), ev('g', "del", &[])]
    );
    assert!(h.store.dbs[0].raw_get(b"k").is_none());
}

#[test]
fn active_expiry_of_fields_set_by_hsetex() {
    let mut h = Harness::new();
    h.run(&[
        "HSETEX", "k", "PX", "100", "FIELDS", "2", "a", "1", "b", "2",
    ]);
    h.run(&["HSET", "k", "c", "3"]);
    h.advance(100);
    assert_eq!(h.sweep(), 2);
    assert_eq!(events(&h), vec![ev('h', "hexpired", &["a", "b"])]);
    assert_eq!(h.run(&["HGETALL", "k"]), map(&[("c", "3")]));
}
