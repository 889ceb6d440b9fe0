//! ZPOPMIN, ZPOPMAX, BZPOPMIN, BZPOPMAX, ZMPOP, BZMPOP.

use super::*;
use crate::cmd::zsets_more::pop;
use crate::error::Error;
use crate::testing::err;

fn abc(h: &mut Harness) {
    zset(h, "z", &[(1.0, "a"), (2.0, "b"), (3.0, "c")]);
}

#[test]
fn zpopmin_without_count_is_flat_in_both_protocols() {
    let mut h = Harness::new();
    abc(&mut h);
    assert_eq!(h.run(&["ZPOPMIN", "z"]), flat(&[("a", 1.0)]));
    assert_eq!(events(&h), ["z:zpopmin:z"]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(rewrite(&h), None);
    h.resp3 = true;
    assert_eq!(h.run(&["zpopmax", "z"]), flat(&[("c", 3.0)]));
    assert_eq!(events(&h), ["z:zpopmax:z"]);
    assert_eq!(members(&h, "z"), [("b".to_string(), 2.0)]);
}

#[test]
fn zpop_with_count_is_flat_in_resp2_and_pairs_in_resp3() {
    let mut h = Harness::new();
    abc(&mut h);
    assert_eq!(
        h.run(&["ZPOPMIN", "z", "2"]),
        flat(&[("a", 1.0), ("b", 2.0)])
    );
    assert_eq!(h.fx.dirty, 2);
    abc(&mut h);
    h.resp3 = true;
    assert_eq!(
        h.run(&["ZPOPMAX", "z", "2"]),
        pairs(&[("c", 3.0), ("b", 2.0)])
    );
    assert_eq!(h.run(&["ZPOPMAX", "z", "1"]), pairs(&[("a", 1.0)]));
    assert!(!exists(&h, "z"));
}

#[test]
fn zpop_draining_deletes_the_key_after_the_pop_event() {
    let mut h = Harness::new();
    abc(&mut h);
    assert_eq!(
        h.run(&["ZPOPMIN", "z", "10"]),
        flat(&[("a", 1.0), ("b", 2.0), ("c", 3.0)])
    );
    assert_eq!(events(&h), ["z:zpopmin:z", "g:del:z"]);
    assert!(!exists(&h, "z"));
    assert_eq!(h.fx.dirty, 3);
}

#[test]
fn zpop_empty_cases() {
    let mut h = Harness::new();
    abc(&mut h);
    assert_eq!(h.run(&["ZPOPMIN", "z", "0"]), arr(vec![]));
    assert!(h.fx.events.is_empty());
    assert_eq!(members(&h, "z").len(), 3);
    assert_eq!(h.run(&["ZPOPMIN", "nokey"]), arr(vec![]));
    assert_eq!(h.run(&["ZPOPMIN", "nokey", "0"]), arr(vec![]));
    assert_eq!(h.run(&["ZPOPMAX", "nokey", "5"]), arr(vec![]));
    assert!(h.fx.is_empty());
}

#[test]
fn zpop_errors() {
    let mut h = Harness::new();
    abc(&mut h);
    h.run(&["SET", "str", "x"]);
    let positive = err("ERR value is out of range, must be positive");
    assert_eq!(h.run(&["ZPOPMIN", "z", "-1"]), positive);
    assert_eq!(h.run(&["ZPOPMIN", "z", "abc"]), positive);
    assert_eq!(h.run(&["ZPOPMIN", "z", "9223372036854775808"]), positive);
    // The count is read before the key's type is checked.
    assert_eq!(h.run(&["ZPOPMIN", "str", "abc"]), positive);
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["ZPOPMIN", "str"]), wrongtype);
    assert_eq!(h.run(&["ZPOPMAX", "str", "0"]), wrongtype);
    assert_eq!(h.run(&["ZPOPMIN", "z", "1", "2"]), err("ERR syntax error"));
    assert_eq!(
        h.run(&["ZPOPMIN"]),
        err("ERR wrong number of arguments for 'zpopmin' command")
    );
}

#[test]
fn zpop_ignores_members_past_their_deadline() {
    let mut h = Harness::new();
    let now = h.now;
    zset_with_deadlines(
        &mut h,
        "z",
        &[(1.0, "a"), (2.0, "b"), (3.0, "c")],
        &[("a", now + 100)],
    );
    h.advance(100);
    assert_eq!(h.run(&["ZPOPMIN", "z"]), flat(&[("b", 2.0)]));
    zset_with_deadlines(&mut h, "y", &[(1.0, "a")], &[("a", now + 150)]);
    h.advance(50);
    assert_eq!(h.run(&["ZPOPMIN", "y"]), arr(vec![]));
    assert!(!exists(&h, "y"));
}

#[test]
fn bzpop_serves_the_first_non_empty_key_and_logs_a_plain_pop() {
    let mut h = Harness::new();
    abc(&mut h);
    zset(&mut h, "y", &[(5.0, "e")]);
    assert_eq!(
        h.run(&["BZPOPMIN", "nokey", "z", "y", "0"]),
        arr(vec![bulk("z"), bulk("a"), dbl(1.0)])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec!["ZPOPMIN".to_string(), "z".to_string()])
    );
    assert_eq!(events(&h), ["z:zpopmin:z"]);
    h.resp3 = true;
    assert_eq!(
        h.run(&["BZPOPMAX", "y", "z", "1.5"]),
        arr(vec![bulk("y"), bulk("e"), dbl(5.0)])
    );
    assert_eq!(
        rewrite(&h),
        Some(vec!["ZPOPMAX".to_string(), "y".to_string()])
    );
    assert_eq!(events(&h), ["z:zpopmax:y", "g:del:y"]);
}

#[test]
fn bzpop_blocks_or_times_out_when_everything_is_empty() {
    let mut h = Harness::new();
    // Without permission to block (MULTI, scripts): the timeout reply.
    assert_eq!(h.run(&["BZPOPMIN", "a", "b", "0"]), Reply::NilArray);
    // Logged as nothing: a blocking pop is never logged as itself.
    assert_eq!(h.fx.rewrite, Some(Vec::new()));
    let r = run_blocking(&mut h, pop::bzpopmin, &["BZPOPMIN", "a", "b", "a", "0.25"]);
    assert_eq!(
        r,
        Err(Error::WouldBlock {
            keys: vec![b("a"), b("b")],
            timeout_ms: 250
        })
    );
    let r = run_blocking(&mut h, pop::bzpopmax, &["BZPOPMAX", "a", "0"]);
    assert_eq!(
        r,
        Err(Error::WouldBlock {
            keys: vec![b("a")],
            timeout_ms: 0
        })
    );
    abc(&mut h);
    let r = run_blocking(&mut h, pop::bzpopmax, &["BZPOPMAX", "a", "z", "0"]);
    assert_eq!(r, Ok(arr(vec![bulk("z"), bulk("c"), dbl(3.0)])));
}

#[test]
fn bzpop_errors() {
    let mut h = Harness::new();
    abc(&mut h);
    h.run(&["SET", "str", "x"]);
    assert_eq!(
        h.run(&["BZPOPMIN", "z", "abc"]),
        err("ERR timeout is not a float or out of range")
    );
    assert_eq!(
        h.run(&["BZPOPMIN", "z", "-1"]),
        err("ERR timeout is negative")
    );
    assert_eq!(
        h.run(&["BZPOPMIN", "z", "inf"]),
        err("ERR timeout is negative")
    );
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["BZPOPMIN", "str", "0"]), wrongtype);
    assert_eq!(h.run(&["BZPOPMIN", "nokey", "str", "z", "0"]), wrongtype);
    // Keys after the first non-empty one are not looked at.
    assert_eq!(
        h.run(&["BZPOPMIN", "z", "str", "0"]),
        arr(vec![bulk("z"), bulk("a"), dbl(1.0)])
    );
    assert_eq!(
        h.run(&["BZPOPMIN", "z"]),
        err("ERR wrong number of arguments for 'bzpopmin' command")
    );
    // Hex timeouts are accepted, as strtold reads them.
    assert_eq!(
        h.run(&["BZPOPMIN", "z", "0x10"]),
        arr(vec![bulk("z"), bulk("b"), dbl(2.0)])
    );
}

#[test]
fn zmpop_replies_key_and_pairs_in_both_protocols() {
    let mut h = Harness::new();
    abc(&mut h);
    zset(&mut h, "y", &[(5.0, "e")]);
    let expect = arr(vec![bulk("z"), pairs(&[("a", 1.0)])]);
    assert_eq!(h.run(&["ZMPOP", "3", "nokey", "z", "y", "MIN"]), expect);
    assert_eq!(
        rewrite(&h),
        Some(vec!["ZPOPMIN".into(), "z".into(), "1".into()])
    );
    h.resp3 = true;
    let expect = arr(vec![bulk("z"), pairs(&[("c", 3.0), ("b", 2.0)])]);
    assert_eq!(
        h.run(&["zmpop", "2", "z", "y", "max", "count", "10"]),
        expect
    );
    // Logged with the number actually popped.
    assert_eq!(
        rewrite(&h),
        Some(vec!["ZPOPMAX".into(), "z".into(), "2".into()])
    );
    assert_eq!(events(&h), ["z:zpopmax:z", "g:del:z"]);
    assert_eq!(h.fx.dirty, 2);
    assert_eq!(h.run(&["ZMPOP", "2", "nokey", "z", "MIN"]), Reply::NilArray);
    assert_eq!(rewrite(&h), None);
}

#[test]
fn zmpop_errors() {
    let mut h = Harness::new();
    abc(&mut h);
    h.run(&["SET", "str", "x"]);
    let numkeys = err("ERR numkeys should be greater than 0");
    let count = err("ERR count should be greater than 0");
    let syntax = err("ERR syntax error");
    for (args, want) in [
        (&["ZMPOP", "0", "z", "MIN"][..], &numkeys),
        (&["ZMPOP", "-1", "z", "MIN"], &numkeys),
        (&["ZMPOP", "abc", "z", "MIN"], &numkeys),
        (&["ZMPOP", "2", "z", "MIN"], &syntax),
        (&["ZMPOP", "9223372036854775807", "z", "MIN"], &syntax),
        (&["ZMPOP", "1", "z", "MIX"], &syntax),
        (&["ZMPOP", "1", "z", "MIN", "COUNT", "0"], &count),
        (&["ZMPOP", "1", "z", "MIN", "COUNT", "-1"], &count),
        (&["ZMPOP", "1", "z", "MIN", "COUNT", "abc"], &count),
        (
            &["ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"],
            &syntax,
        ),
        (&["ZMPOP", "1", "z", "MIN", "COUNT"], &syntax),
        (&["ZMPOP", "1", "z", "MIN", "foo"], &syntax),
    ] {
        assert_eq!(&h.run(args), want, "{args:?}");
    }
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["ZMPOP", "2", "nokey", "str", "MIN"]), wrongtype);
    assert_eq!(
        h.run(&["ZMPOP", "2", "z", "str", "MIN"]),
        arr(vec![bulk("z"), pairs(&[("a", 1.0)])])
    );
    assert_eq!(
        h.run(&["ZMPOP", "1", "z"]),
        err("ERR wrong number of arguments for 'zmpop' command")
    );
}

#[test]
fn bzmpop_pops_blocks_and_checks_in_redis_order() {
    let mut h = Harness::new();
    abc(&mut h);
    let expect = arr(vec![bulk("z"), pairs(&[("c", 3.0), ("b", 2.0)])]);
    assert_eq!(
        h.run(&["BZMPOP", "0", "2", "nokey", "z", "MAX", "COUNT", "2"]),
        expect
    );
    assert_eq!(
        rewrite(&h),
        Some(vec!["ZPOPMAX".into(), "z".into(), "2".into()])
    );
    assert_eq!(
        h.run(&["BZMPOP", "0", "1", "nokey", "MIN"]),
        Reply::NilArray
    );
    let r = run_blocking(
        &mut h,
        pop::bzmpop,
        &["BZMPOP", "2", "2", "k1", "k2", "MIN"],
    );
    assert_eq!(
        r,
        Err(Error::WouldBlock {
            keys: vec![b("k1"), b("k2")],
            timeout_ms: 2000
        })
    );
    // numkeys, then MIN|MAX and COUNT, then the timeout.
    assert_eq!(
        h.run(&["BZMPOP", "abc", "abc", "z", "MIN"]),
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        h.run(&["BZMPOP", "0", "0", "z", "MIN"]),
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        h.run(&["BZMPOP", "abc", "1", "z", "MIX"]),
        err("ERR syntax error")
    );
    assert_eq!(
        h.run(&["BZMPOP", "abc", "1", "z", "MIN"]),
        err("ERR timeout is not a float or out of range")
    );
    assert_eq!(
        h.run(&["BZMPOP", "-1", "1", "z", "MIN"]),
        err("ERR timeout is negative")
    );
    assert_eq!(
        h.run(&["BZMPOP", "0", "1", "z"]),
        err("ERR wrong number of arguments for 'bzmpop' command")
    );
}

#[test]
fn pop_key_positions() {
    let spec = |n: &str| crate::table::lookup(n.as_bytes()).expect("registered");
    let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
    assert_eq!(
        spec("zmpop").key_positions(&argv(&["ZMPOP", "2", "a", "b", "MIN"])),
        [2, 3]
    );
    assert_eq!(
        spec("bzmpop").key_positions(&argv(&["BZMPOP", "0", "2", "a", "b", "MIN"])),
        [3, 4]
    );
    assert_eq!(
        spec("bzmpop").key_positions(&argv(&["BZMPOP", "0", "x", "a", "MIN"])),
        Vec::<usize>::new()
    );
    assert_eq!(
        spec("zmpop").key_positions(&argv(&["ZMPOP", "9", "a", "MIN"])),
        [2, 3]
    );
    assert_eq!(
        spec("bzpopmin").key_positions(&argv(&["BZPOPMIN", "a", "b", "0"])),
        [1, 2]
    );
}
