//! Tests of the string family against Redis 7.0's replies, errors, TTL
//! handling, keyspace events and logged forms.

use crate::value::ListValue;
use bytes::Bytes;

use crate::reply::Reply;
use crate::testing::{bulk, err, Harness};
use crate::value::Value;

const SYNTAX: &str = "ERR syntax error";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const NOT_FLOAT: &str = "ERR value is not a valid float";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Events of the last command as `class:name:key`.
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

/// The logged form of the last command, if rewritten.
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

fn expire_at(h: &Harness, key: &str) -> Option<u64> {
    h.store.dbs[0]
        .raw_get(key.as_bytes())
        .and_then(|e| e.expire_at())
}

fn with_list(h: &mut Harness, key: &str) {
    let mut l = ListValue::new();
    l.push_back(Bytes::from_static(b"a"));
    h.store.dbs[0].set(Bytes::copy_from_slice(key.as_bytes()), Value::from(l));
}

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

#[test]
fn get_and_plain_set() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    assert_eq!(h.run(&["SET", "k", "v"]), Reply::Ok);
    assert_eq!(events(&h), ["$:set:k"]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(h.run(&["GET", "k"]), bulk("v"));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["GET", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["SET", "l", "x"]), Reply::Ok);
    assert_eq!(h.run(&["GET", "l"]), bulk("x"));
}

#[test]
fn set_option_conflicts_are_syntax_errors() {
    let mut h = Harness::new();
    for bad in [
        &["SET", "k", "v", "EX", "10", "PX", "10"][..],
        &["SET", "k", "v", "NX", "XX"],
        &["SET", "k", "v", "KEEPTTL", "EX", "1"],
        &["SET", "k", "v", "EX", "10", "KEEPTTL"],
        &["SET", "k", "v", "EX"],
        &["SET", "k", "v", "PERSIST"],
        &["SET", "k", "v", "foo"],
        &["SET", "k", "v", "EXAT", "1", "PXAT", "1"],
        // Syntax is checked before the expire value.
        &["SET", "k", "v", "EX", "abc", "NX", "XX"],
    ] {
        assert_eq!(h.run(bad), err(SYNTAX), "{bad:?}");
    }
    assert!(h.fx.events.is_empty());
    // Repeating an option is fine; the last expire value wins.
    assert_eq!(h.run(&["SET", "k", "v", "EX", "10", "EX", "20"]), Reply::Ok);
    assert_eq!(expire_at(&h, "k"), Some(h.now + 20_000));
    assert_eq!(h.run(&["SET", "k", "v", "NX", "NX"]), Reply::Nil);
    assert_eq!(h.run(&["set", "k", "v", "get", "GET"]), bulk("v"));
}

#[test]
fn set_expire_validation() {
    let mut h = Harness::new();
    let invalid = err("ERR invalid expire time in 'set' command");
    assert_eq!(h.run(&["SET", "k", "v", "EX", "0"]), invalid);
    assert_eq!(h.run(&["SET", "k", "v", "EX", "-1"]), invalid);
    assert_eq!(h.run(&["SET", "k", "v", "PXAT", "0"]), invalid);
    assert_eq!(h.run(&["SET", "k", "v", "EX", "abc"]), err(NOT_INT));
    // Seconds overflow once converted, or once made absolute.
    assert_eq!(h.run(&["SET", "k", "v", "EX", "9223372036854776"]), invalid);
    assert_eq!(h.run(&["SET", "k", "v", "EX", "9223372036854775"]), invalid);
    assert_eq!(
        h.run(&["SET", "k", "v", "PX", "9223372036854775807"]),
        invalid
    );
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    // Absolute deadlines are not offset by the clock.
    assert_eq!(
        h.run(&["SET", "k", "v", "PXAT", "9223372036854775807"]),
        Reply::Ok
    );
    assert_eq!(expire_at(&h, "k"), Some(i64::MAX as u64));
    assert_eq!(
        h.run(&["SET", "k", "v", "EXAT", "9223372036854775"]),
        Reply::Ok
    );
    assert_eq!(expire_at(&h, "k"), Some(9_223_372_036_854_775_000));
    // The expire value is validated before GET looks at the type.
    with_list(&mut h, "l");
    assert_eq!(h.run(&["SET", "l", "v", "EX", "0", "GET"]), invalid);
}

#[test]
fn set_with_ttl_logs_absolute_deadline() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SET", "k", "v", "EX", "100"]), Reply::Ok);
    let at = h.now + 100_000;
    assert_eq!(expire_at(&h, "k"), Some(at));
    assert_eq!(events(&h), ["$:set:k", "g:expire:k"]);
    assert_eq!(logged(&h), Some(vec![format!("SET k v PXAT {at}")]));
    assert_eq!(h.run(&["SET", "k", "v", "px", "1500", "NX"]), Reply::Nil);
    assert!(h.fx.events.is_empty() && h.fx.rewrite.is_none());
    assert_eq!(
        h.run(&["SET", "k", "w", "PXAT", "2000000000000", "XX"]),
        Reply::Ok
    );
    assert_eq!(
        logged(&h),
        Some(vec!["SET k w PXAT 2000000000000".to_string()])
    );
    assert_eq!(h.run(&["SET", "k", "v", "EXAT", "2000000000"]), Reply::Ok);
    assert_eq!(expire_at(&h, "k"), Some(2_000_000_000_000));
}

#[test]
fn set_clears_ttl_unless_keepttl() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "v", "EX", "100"]);
    let at = h.now + 100_000;
    assert_eq!(h.run(&["SET", "k", "v2", "KEEPTTL"]), Reply::Ok);
    assert_eq!(expire_at(&h, "k"), Some(at));
    assert_eq!(events(&h), ["$:set:k"]);
    assert_eq!(h.run(&["SET", "k", "v3"]), Reply::Ok);
    assert_eq!(expire_at(&h, "k"), None);
    assert_eq!(h.run(&["SET", "new", "v", "KEEPTTL"]), Reply::Ok);
    assert_eq!(expire_at(&h, "new"), None);
}

#[test]
fn set_with_past_deadline_expires_on_next_access() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SET", "k", "v", "EXAT", "1"]), Reply::Ok);
    assert_eq!(events(&h), ["$:set:k", "g:expire:k"]);
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    assert_eq!(events(&h), ["x:expired:k"]);
}

#[test]
fn set_nx_xx_get() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SET", "k", "v", "XX"]), Reply::Nil);
    assert_eq!(h.run(&["SET", "k", "v", "XX", "GET"]), Reply::Nil);
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    assert_eq!(h.run(&["SET", "k", "v", "NX"]), Reply::Ok);
    assert_eq!(h.run(&["SET", "k", "w", "NX"]), Reply::Nil);
    assert_eq!(h.run(&["SET", "k", "w", "NX", "GET"]), bulk("v"));
    assert_eq!(h.run(&["GET", "k"]), bulk("v"));
    assert_eq!(h.run(&["SET", "k", "w", "XX", "GET"]), bulk("v"));
    assert_eq!(logged(&h), Some(vec!["SET k w XX".to_string()]));
    assert_eq!(h.run(&["SET", "k", "x", "GET", "EX", "10"]), bulk("w"));
    assert!(logged(&h).is_some_and(|l| l[0].starts_with("SET k x PXAT ")));
    assert_eq!(h.run(&["SET", "n", "x", "GET"]), Reply::Nil);
    assert_eq!(h.run(&["GET", "n"]), bulk("x"));
    with_list(&mut h, "l");
    for opts in [&["GET"][..], &["NX", "GET"], &["XX", "GET"]] {
        let mut args = vec!["SET", "l", "v"];
        args.extend_from_slice(opts);
        assert_eq!(h.run(&args), err(WRONGTYPE));
    }
}

#[test]
fn setnx_setex_psetex() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SETNX", "k", "v"]), int(1));
    assert_eq!(events(&h), ["$:set:k"]);
    assert_eq!(h.run(&["SETNX", "k", "w"]), int(0));
    assert!(h.fx.events.is_empty());
    with_list(&mut h, "l");
    assert_eq!(h.run(&["SETNX", "l", "w"]), int(0));

    assert_eq!(h.run(&["SETEX", "k", "10", "v"]), Reply::Ok);
    let at = h.now + 10_000;
    assert_eq!(expire_at(&h, "k"), Some(at));
    assert_eq!(events(&h), ["$:set:k", "g:expire:k"]);
    assert_eq!(logged(&h), Some(vec![format!("SET k v PXAT {at}")]));
    assert_eq!(h.run(&["PSETEX", "k", "1500", "v"]), Reply::Ok);
    assert_eq!(expire_at(&h, "k"), Some(h.now + 1500));
    assert_eq!(h.run(&["SETEX", "l", "10", "v"]), Reply::Ok);
    assert_eq!(h.run(&["GET", "l"]), bulk("v"));

    assert_eq!(
        h.run(&["SETEX", "k", "0", "v"]),
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(
        h.run(&["SETEX", "k", "-1", "v"]),
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(h.run(&["SETEX", "k", "a", "v"]), err(NOT_INT));
    assert_eq!(
        h.run(&["SETEX", "k", "9223372036854775", "v"]),
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(
        h.run(&["PSETEX", "k", "0", "v"]),
        err("ERR invalid expire time in 'psetex' command")
    );
    assert_eq!(
        h.run(&["PSETEX", "k", "9223372036854775807", "v"]),
        err("ERR invalid expire time in 'psetex' command")
    );
    assert_eq!(
        h.run(&["SETEX", "k", "1"]),
        err("ERR wrong number of arguments for 'setex' command")
    );
}

#[test]
fn getset_and_getdel() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["GETSET", "k", "v"]), Reply::Nil);
    assert_eq!(events(&h), ["$:set:k"]);
    h.run(&["SET", "k", "v", "EX", "100"]);
    assert_eq!(h.run(&["GETSET", "k", "w"]), bulk("v"));
    assert_eq!(expire_at(&h, "k"), None);
    assert_eq!(logged(&h), Some(vec!["SET k w".to_string()]));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["GETSET", "l", "w"]), err(WRONGTYPE));

    assert_eq!(h.run(&["GETDEL", "k"]), bulk("w"));
    assert_eq!(events(&h), ["g:del:k"]);
    assert_eq!(logged(&h), Some(vec!["DEL k".to_string()]));
    assert_eq!(h.run(&["GETDEL", "k"]), Reply::Nil);
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["GETDEL", "l"]), err(WRONGTYPE));
}

#[test]
fn getex_options() {
    let mut h = Harness::new();
    // A missing key answers nil before the expire value is looked at.
    assert_eq!(h.run(&["GETEX", "k", "EX", "abc"]), Reply::Nil);
    assert_eq!(h.run(&["GETEX", "k", "foo"]), err(SYNTAX));
    h.run(&["SET", "k", "v"]);
    for bad in [
        &["GETEX", "k", "EX", "10", "PX", "10"][..],
        &["GETEX", "k", "PERSIST", "EX", "10"],
        &["GETEX", "k", "EX", "10", "PERSIST"],
        &["GETEX", "k", "NX"],
        &["GETEX", "k", "KEEPTTL"],
        &["GETEX", "k", "GET"],
        &["GETEX", "k", "EX"],
    ] {
        assert_eq!(h.run(bad), err(SYNTAX), "{bad:?}");
    }
    let invalid = err("ERR invalid expire time in 'getex' command");
    assert_eq!(h.run(&["GETEX", "k", "EX", "0"]), invalid);
    assert_eq!(h.run(&["GETEX", "k", "PX", "9223372036854775807"]), invalid);
    assert_eq!(h.run(&["GETEX", "k", "EX", "abc"]), err(NOT_INT));

    assert_eq!(h.run(&["GETEX", "k"]), bulk("v"));
    assert!(h.fx.events.is_empty() && h.fx.rewrite.is_none());
    assert_eq!(h.run(&["GETEX", "k", "EX", "100"]), bulk("v"));
    let at = h.now + 100_000;
    assert_eq!(expire_at(&h, "k"), Some(at));
    assert_eq!(events(&h), ["g:expire:k"]);
    assert_eq!(logged(&h), Some(vec![format!("PEXPIREAT k {at}")]));
    assert_eq!(h.run(&["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(expire_at(&h, "k"), None);
    assert_eq!(events(&h), ["g:persist:k"]);
    assert_eq!(logged(&h), Some(vec!["PERSIST k".to_string()]));
    assert_eq!(h.run(&["GETEX", "k", "PERSIST", "PERSIST"]), bulk("v"));
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["GETEX", "k", "EX", "10", "EX", "20"]), bulk("v"));
    assert_eq!(expire_at(&h, "k"), Some(h.now + 20_000));
    assert_eq!(
        h.run(&["GETEX", "k", "PXAT", "9223372036854775807"]),
        bulk("v")
    );
    assert_eq!(expire_at(&h, "k"), Some(i64::MAX as u64));
    // A deadline in the past deletes the key (after replying).
    assert_eq!(h.run(&["GETEX", "k", "EXAT", "1"]), bulk("v"));
    assert_eq!(events(&h), ["g:del:k"]);
    assert_eq!(logged(&h), Some(vec!["DEL k".to_string()]));
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);

    with_list(&mut h, "l");
    assert_eq!(h.run(&["GETEX", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["GETEX", "l", "EX", "0"]), err(WRONGTYPE));
}

#[test]
fn mget_mset_msetnx() {
    let mut h = Harness::new();
    with_list(&mut h, "l");
    assert_eq!(h.run(&["MSET", "a", "1", "b", "2"]), Reply::Ok);
    assert_eq!(events(&h), ["$:set:a", "$:set:b"]);
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(
        h.run(&["MGET", "a", "nokey", "l", "b"]),
        Reply::Array(vec![bulk("1"), Reply::Nil, Reply::Nil, bulk("2")])
    );
    assert_eq!(
        h.run(&["MSET", "a"]),
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        h.run(&["MSET", "a", "b", "c"]),
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        h.run(&["MSETNX", "a", "b", "c"]),
        err("ERR wrong number of arguments for 'msetnx' command")
    );
    h.run(&["SET", "t", "x", "EX", "10"]);
    h.run(&["MSET", "t", "y", "l", "z"]);
    assert_eq!(expire_at(&h, "t"), None);
    assert_eq!(h.run(&["GET", "l"]), bulk("z"));

    with_list(&mut h, "l");
    assert_eq!(h.run(&["MSETNX", "l", "1", "c", "2"]), int(0));
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["GET", "c"]), Reply::Nil);
    assert_eq!(h.run(&["MSETNX", "c", "1", "c", "2"]), int(1));
    assert_eq!(h.run(&["GET", "c"]), bulk("2"));
}

#[test]
fn append_and_strlen() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["APPEND", "k", ""]), int(0));
    assert_eq!(events(&h), ["$:append:k"]);
    assert_eq!(h.run(&["GET", "k"]), bulk(""));
    assert_eq!(h.run(&["APPEND", "k", "abc"]), int(3));
    h.run(&["SET", "t", "1", "EX", "10"]);
    let at = expire_at(&h, "t");
    assert_eq!(h.run(&["APPEND", "t", "23"]), int(3));
    assert_eq!(expire_at(&h, "t"), at);
    assert_eq!(h.run(&["GET", "t"]), bulk("123"));
    assert_eq!(h.run(&["STRLEN", "t"]), int(3));
    assert_eq!(h.run(&["STRLEN", "nokey"]), int(0));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["APPEND", "l", "x"]), err(WRONGTYPE));
    assert_eq!(h.run(&["STRLEN", "l"]), err(WRONGTYPE));
    // Many small appends keep growing the same value.
    for _ in 0..1000 {
        h.run(&["APPEND", "big", "0123456789"]);
    }
    assert_eq!(h.run(&["STRLEN", "big"]), int(10_000));

    h.store.cfg.proto_max_bulk_len = 5;
    assert_eq!(h.run(&["APPEND", "t", "45"]), int(5));
    assert_eq!(
        h.run(&["APPEND", "t", "6"]),
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
}

#[test]
fn getrange_and_substr() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["GETRANGE", "nokey", "0", "-1"]), bulk(""));
    assert_eq!(h.run(&["GETRANGE", "nokey", "a", "1"]), err(NOT_INT));
    h.run(&["SET", "s", "This is a string"]);
    for (start, end, want) in [
        ("0", "3", "This"),
        ("-3", "-1", "ing"),
        ("0", "-1", "This is a string"),
        ("10", "100", "string"),
        ("-1", "-5", ""),
        ("5", "3", ""),
        ("-100", "-50", "T"),
        ("-100", "2", "Thi"),
        ("9223372036854775807", "-9223372036854775808", ""),
    ] {
        assert_eq!(
            h.run(&["GETRANGE", "s", start, end]),
            bulk(want),
            "{start} {end}"
        );
    }
    assert_eq!(h.run(&["SUBSTR", "s", "0", "3"]), bulk("This"));
    h.run(&["SET", "e", ""]);
    assert_eq!(h.run(&["GETRANGE", "e", "0", "-1"]), bulk(""));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["GETRANGE", "l", "0", "1"]), err(WRONGTYPE));
    assert_eq!(h.run(&["GETRANGE", "l", "a", "1"]), err(NOT_INT));
}

#[test]
fn setrange() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["SETRANGE", "k", "5", ""]), int(0));
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["SETRANGE", "k", "3", "abc"]), int(6));
    assert_eq!(events(&h), ["$:setrange:k"]);
    assert_eq!(h.run(&["GET", "k"]), bulk("\0\0\0abc"));
    assert_eq!(h.run(&["SETRANGE", "k", "0", "XY"]), int(6));
    assert_eq!(h.run(&["GET", "k"]), bulk("XY\0abc"));
    assert_eq!(h.run(&["SETRANGE", "k", "100", ""]), int(6));
    assert!(h.fx.events.is_empty());
    assert_eq!(
        h.run(&["SETRANGE", "k", "-1", "x"]),
        err("ERR offset is out of range")
    );
    assert_eq!(h.run(&["SETRANGE", "k", "a", "x"]), err(NOT_INT));
    h.run(&["SET", "t", "hello", "EX", "10"]);
    let at = expire_at(&h, "t");
    assert_eq!(h.run(&["SETRANGE", "t", "0", "J"]), int(5));
    assert_eq!(expire_at(&h, "t"), at);
    assert_eq!(h.run(&["GET", "t"]), bulk("Jello"));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["SETRANGE", "l", "0", ""]), err(WRONGTYPE));
    assert_eq!(
        h.run(&["SETRANGE", "l", "-1", ""]),
        err("ERR offset is out of range")
    );

    let too_long = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    h.store.cfg.proto_max_bulk_len = 10;
    assert_eq!(h.run(&["SETRANGE", "n", "9", "a"]), int(10));
    assert_eq!(h.run(&["SETRANGE", "n", "10", "a"]), too_long);
    assert_eq!(
        h.run(&["SETRANGE", "n", "9223372036854775807", "a"]),
        too_long
    );
    assert_eq!(
        h.run(&["SETRANGE", "n", "9223372036854775807", ""]),
        int(10)
    );
}

#[test]
fn integer_counters() {
    let mut h = Harness::new();
    assert_eq!(h.run(&["INCR", "n"]), int(1));
    assert_eq!(events(&h), ["$:incrby:n"]);
    assert_eq!(h.run(&["DECR", "n"]), int(0));
    assert_eq!(h.run(&["INCRBY", "n", "5"]), int(5));
    assert_eq!(h.run(&["DECRBY", "n", "7"]), int(-2));
    assert_eq!(h.run(&["GET", "n"]), bulk("-2"));
    assert_eq!(h.run(&["INCRBY", "n", "a"]), err(NOT_INT));
    let overflow = err("ERR increment or decrement would overflow");
    h.run(&["SET", "n", "9223372036854775807"]);
    assert_eq!(h.run(&["INCR", "n"]), overflow);
    assert_eq!(h.run(&["DECRBY", "n", "-1"]), overflow);
    h.run(&["SET", "n", "-9223372036854775808"]);
    assert_eq!(h.run(&["DECR", "n"]), overflow);
    assert_eq!(h.run(&["INCRBY", "n", "-1"]), overflow);
    assert_eq!(
        h.run(&["DECRBY", "n", "-9223372036854775808"]),
        err("ERR decrement would overflow")
    );
    assert_eq!(
        h.run(&["DECRBY", "x", "9223372036854775807"]),
        int(-9223372036854775807)
    );
    for bad in [" 1", "+1", "01", "1.0", "", "abc"] {
        h.run(&["SET", "b", bad]);
        assert_eq!(h.run(&["INCR", "b"]), err(NOT_INT), "{bad:?}");
    }
    with_list(&mut h, "l");
    assert_eq!(h.run(&["INCR", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["INCRBY", "l", "a"]), err(NOT_INT));
    h.run(&["SET", "t", "1", "EX", "100"]);
    let at = expire_at(&h, "t");
    assert_eq!(h.run(&["INCR", "t"]), int(2));
    assert_eq!(expire_at(&h, "t"), at);
}

#[test]
fn incrbyfloat_matches_redis() {
    let mut h = Harness::new();
    h.run(&["SET", "f", "10.50"]);
    assert_eq!(h.run(&["INCRBYFLOAT", "f", "0.1"]), bulk("10.6"));
    assert_eq!(events(&h), ["$:incrbyfloat:f"]);
    assert_eq!(logged(&h), Some(vec!["SET f 10.6 KEEPTTL".to_string()]));
    assert_eq!(h.run(&["INCRBYFLOAT", "f", "-5"]), bulk("5.6"));
    h.run(&["SET", "f", "5.0e3"]);
    assert_eq!(h.run(&["INCRBYFLOAT", "f", "2.0e2"]), bulk("5200"));
    assert_eq!(h.run(&["INCRBYFLOAT", "n", "0.1"]), bulk("0.1"));
    assert_eq!(h.run(&["INCRBYFLOAT", "n", "0.2"]), bulk("0.3"));
    assert_eq!(h.run(&["GET", "n"]), bulk("0.3"));
    assert_eq!(h.run(&["INCRBYFLOAT", "n", "0x10"]), bulk("16.3"));
    assert_eq!(
        h.run(&["INCRBYFLOAT", "m", "1.23456789012345678901234"]),
        bulk("1.23456789012345679")
    );
    assert_eq!(
        h.run(&["INCRBYFLOAT", "m", "1e17"]),
        bulk("100000000000000001.234375")
    );
    assert_eq!(
        h.run(&["INCRBYFLOAT", "z", "-0.000000000000000001"]),
        bulk("0")
    );
    let nan_inf = err("ERR increment would produce NaN or Infinity");
    assert_eq!(h.run(&["INCRBYFLOAT", "n", "inf"]), nan_inf);
    h.run(&["SET", "big", "1e4932"]);
    assert_eq!(h.run(&["INCRBYFLOAT", "big", "1e4932"]), nan_inf);
    for bad in ["nan", "abc", " 1", "1 ", "1e5000", "1e-5000", ""] {
        assert_eq!(h.run(&["INCRBYFLOAT", "n", bad]), err(NOT_FLOAT), "{bad:?}");
    }
    h.run(&["SET", "s", "foo"]);
    assert_eq!(h.run(&["INCRBYFLOAT", "s", "1"]), err(NOT_FLOAT));
    with_list(&mut h, "l");
    assert_eq!(h.run(&["INCRBYFLOAT", "l", "a"]), err(WRONGTYPE));
    h.run(&["SET", "t", "1", "EX", "100"]);
    let at = expire_at(&h, "t");
    assert_eq!(h.run(&["INCRBYFLOAT", "t", "1"]), bulk("2"));
    assert_eq!(expire_at(&h, "t"), at);
}

#[test]
fn expired_keys_are_absent_for_every_command() {
    let mut h = Harness::new();
    h.run(&["SET", "k", "41", "PX", "100"]);
    h.advance(100);
    assert_eq!(h.run(&["INCR", "k"]), int(1));
    assert_eq!(events(&h), ["x:expired:k", "$:incrby:k"]);
    assert_eq!(expire_at(&h, "k"), None);
    h.run(&["SET", "k", "v", "PX", "100"]);
    h.advance(100);
    assert_eq!(h.run(&["SET", "k", "w", "NX"]), Reply::Ok);
    h.run(&["SET", "k", "v", "PX", "100"]);
    h.advance(100);
    assert_eq!(h.run(&["APPEND", "k", "x"]), int(1));
    assert_eq!(
        h.run(&["MGET", "k", "k"]),
        Reply::Array(vec![bulk("x"), bulk("x")])
    );
}

#[test]
fn lcs() {
    let mut h = Harness::new();
    h.run(&["MSET", "key1", "ohmytext", "key2", "mynewtext"]);
    assert_eq!(h.run(&["LCS", "key1", "key2"]), bulk("mytext"));
    assert_eq!(h.run(&["LCS", "key1", "key2", "LEN"]), int(6));
    let pair = |a: i64, b: i64| Reply::Array(vec![int(a), int(b)]);
    let idx = |matches: Vec<Reply>, len: i64| {
        Reply::Map(vec![
            (bulk("matches"), Reply::Array(matches)),
            (bulk("len"), int(len)),
        ])
    };
    assert_eq!(
        h.run(&["LCS", "key1", "key2", "IDX"]),
        idx(
            vec![
                Reply::Array(vec![pair(4, 7), pair(5, 8)]),
                Reply::Array(vec![pair(2, 3), pair(0, 1)]),
            ],
            6
        )
    );
    assert_eq!(
        h.run(&[
            "LCS",
            "key1",
            "key2",
            "IDX",
            "MINMATCHLEN",
            "4",
            "WITHMATCHLEN"
        ]),
        idx(vec![Reply::Array(vec![pair(4, 7), pair(5, 8), int(4)])], 6)
    );
    assert_eq!(
        h.run(&[
            "LCS",
            "key1",
            "key2",
            "idx",
            "minmatchlen",
            "-4",
            "withmatchlen"
        ]),
        idx(
            vec![
                Reply::Array(vec![pair(4, 7), pair(5, 8), int(4)]),
                Reply::Array(vec![pair(2, 3), pair(0, 1), int(2)]),
            ],
            6
        )
    );
    let both = err("ERR If you want both the length and indexes, please just use IDX.");
    assert_eq!(h.run(&["LCS", "key1", "key2", "IDX", "LEN"]), both);
    assert_eq!(h.run(&["LCS", "key1", "key2", "MINMATCHLEN"]), err(SYNTAX));
    assert_eq!(
        h.run(&["LCS", "key1", "key2", "MINMATCHLEN", "a"]),
        err(NOT_INT)
    );
    assert_eq!(h.run(&["LCS", "key1", "key2", "foo"]), err(SYNTAX));
    assert_eq!(h.run(&["LCS", "nokey", "key1"]), bulk(""));
    assert_eq!(h.run(&["LCS", "nokey", "key1", "IDX"]), idx(vec![], 0));
    with_list(&mut h, "l");
    assert_eq!(
        h.run(&["LCS", "l", "key1", "foo"]),
        err("ERR The specified keys must contain string values")
    );
    h.store.cfg.proto_max_bulk_len = 1024 * 1024;
    let a = "x".repeat(600);
    let b = "y".repeat(600);
    h.run(&["MSET", "a", &a, "b", &b]);
    assert_eq!(
        h.run(&["LCS", "a", "b"]),
        err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    );
}

#[test]
fn arity_errors() {
    let mut h = Harness::new();
    for (cmd, args) in [
        ("get", &["GET"][..]),
        ("set", &["SET", "k"]),
        ("getex", &["GETEX"]),
        ("mget", &["MGET"]),
        ("incrbyfloat", &["INCRBYFLOAT", "k"]),
        ("getrange", &["GETRANGE", "k", "0"]),
        ("lcs", &["LCS", "a"]),
    ] {
        assert_eq!(
            h.run(args),
            err(&format!(
                "ERR wrong number of arguments for '{cmd}' command"
            ))
        );
    }
}

#[test]
fn incrbyfloat_refuses_a_value_with_an_embedded_nul() {
    let mut h = Harness::new();
    h.run(&["SET", "f", "1"]);
    h.run(&["SETRANGE", "f", "2", "2"]);
    assert_eq!(
        h.run(&["INCRBYFLOAT", "f", "1"]),
        err("ERR value is not a valid float")
    );
    assert_eq!(h.run(&["GET", "f"]), bulk("1\x002"));
    assert_eq!(
        h.run(&["INCRBYFLOAT", "f", "1\0"]),
        err("ERR value is not a valid float")
    );
}
