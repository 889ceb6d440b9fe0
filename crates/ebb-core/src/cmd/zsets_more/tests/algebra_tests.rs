//! ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD.

use super::*;
use crate::testing::{bulks, err};

const INF: f64 = f64::INFINITY;

/// A command and the scores it should reply with.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, f64)]);

fn inputs(h: &mut Harness) {
    zset(h, "z1", &[(1.0, "a"), (2.0, "b"), (3.0, "c")]);
    zset(h, "z2", &[(10.0, "b"), (20.0, "c"), (30.0, "d")]);
    set(h, "s", &["a", "b", "x"]);
    h.run(&["SET", "str", "x"]);
}

#[test]
fn zunion_replies_by_score_with_scores_in_both_shapes() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(
        h.run(&["ZUNION", "2", "z1", "z2"]),
        bulks(&["a", "b", "c", "d"])
    );
    let want = [("a", 1.0), ("b", 12.0), ("c", 23.0), ("d", 30.0)];
    assert_eq!(
        h.run(&["ZUNION", "2", "z1", "z2", "WITHSCORES"]),
        flat(&want)
    );
    // WITHSCORES may be repeated.
    assert_eq!(
        h.run(&["ZUNION", "2", "z1", "z2", "withscores", "withscores"]),
        flat(&want)
    );
    h.resp3 = true;
    assert_eq!(
        h.run(&["ZUNION", "2", "z1", "z2", "WITHSCORES"]),
        pairs(&want)
    );
    assert!(h.fx.is_empty());
}

#[test]
fn sets_count_with_score_one() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(
        h.run(&["ZUNION", "3", "z1", "z2", "s", "WITHSCORES"]),
        flat(&[
            ("x", 1.0),
            ("a", 2.0),
            ("b", 13.0),
            ("c", 23.0),
            ("d", 30.0)
        ])
    );
    assert_eq!(
        h.run(&["ZINTER", "3", "z1", "z2", "s", "WITHSCORES"]),
        flat(&[("b", 13.0)])
    );
    assert_eq!(
        h.run(&["ZINTER", "2", "z1", "s", "WITHSCORES"]),
        flat(&[("a", 2.0), ("b", 3.0)])
    );
    assert_eq!(
        h.run(&["ZDIFF", "2", "z1", "s", "WITHSCORES"]),
        flat(&[("c", 3.0)])
    );
    assert_eq!(
        h.run(&["ZDIFF", "1", "s", "WITHSCORES"]),
        flat(&[("a", 1.0), ("b", 1.0), ("x", 1.0)])
    );
}

#[test]
fn weights_and_aggregates() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(
        h.run(&[
            "ZUNION",
            "2",
            "z1",
            "z2",
            "WEIGHTS",
            "1",
            "-1",
            "AGGREGATE",
            "MIN",
            "WITHSCORES"
        ]),
        flat(&[("d", -30.0), ("c", -20.0), ("b", -10.0), ("a", 1.0)])
    );
    // The last WEIGHTS wins; weights are read as strtod reads them.
    assert_eq!(
        h.run(&[
            "ZUNION",
            "2",
            "z1",
            "z2",
            "WEIGHTS",
            "1",
            "2",
            "WEIGHTS",
            "3",
            "0x4",
            "WITHSCORES"
        ]),
        flat(&[("a", 3.0), ("b", 46.0), ("c", 89.0), ("d", 120.0)])
    );
    assert_eq!(
        h.run(&["ZINTER", "2", "z1", "z2", "AGGREGATE", "max", "WITHSCORES"]),
        flat(&[("b", 10.0), ("c", 20.0)])
    );
    assert_eq!(
        h.run(&[
            "ZINTER",
            "2",
            "z1",
            "z2",
            "AGGREGATE",
            "MIN",
            "AGGREGATE",
            "sum",
            "WITHSCORES"
        ]),
        flat(&[("b", 12.0), ("c", 23.0)])
    );
}

#[test]
fn infinities_follow_redis_nan_rules() {
    let mut h = Harness::new();
    zset(&mut h, "a", &[(1.0, "x"), (INF, "y")]);
    zset(&mut h, "b", &[(-INF, "y"), (2.0, "x")]);
    zset(&mut h, "c", &[(5.0, "x"), (6.0, "y"), (7.0, "z")]);
    let cases: &[Case] = &[
        (&["ZUNION", "2", "a", "b"], &[("y", 0.0), ("x", 3.0)]),
        (
            &["ZINTER", "2", "a", "b", "WEIGHTS", "0", "1"],
            &[("y", -INF), ("x", 2.0)],
        ),
        (
            &["ZINTER", "2", "b", "a", "WEIGHTS", "1", "0"],
            &[("y", 0.0), ("x", 2.0)],
        ),
        (
            &[
                "ZINTER",
                "2",
                "a",
                "b",
                "WEIGHTS",
                "0",
                "1",
                "AGGREGATE",
                "MIN",
            ],
            &[("y", -INF), ("x", 0.0)],
        ),
        (
            &[
                "ZINTER",
                "2",
                "b",
                "a",
                "WEIGHTS",
                "1",
                "0",
                "AGGREGATE",
                "MAX",
            ],
            &[("y", -INF), ("x", 2.0)],
        ),
        (
            &[
                "ZUNION",
                "2",
                "a",
                "b",
                "WEIGHTS",
                "0",
                "1",
                "AGGREGATE",
                "MAX",
            ],
            &[("y", 0.0), ("x", 2.0)],
        ),
        (&["ZINTER", "3", "c", "a", "b"], &[("y", 6.0), ("x", 8.0)]),
        (
            &["ZUNION", "3", "c", "a", "b", "WEIGHTS", "1", "-1", "1"],
            &[("y", -INF), ("x", 6.0), ("z", 7.0)],
        ),
        (&["ZINTER", "2", "a", "a"], &[("x", 2.0), ("y", INF)]),
        (
            &["ZUNION", "1", "a", "WEIGHTS", "0"],
            &[("x", 0.0), ("y", 0.0)],
        ),
    ];
    for (args, want) in cases {
        let mut argv = args.to_vec();
        argv.push("WITHSCORES");
        assert_eq!(h.run(&argv), flat(want), "{args:?}");
    }
}

#[test]
fn zdiff_keeps_first_input_scores() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(
        h.run(&["ZDIFF", "2", "z1", "z2", "WITHSCORES"]),
        flat(&[("a", 1.0)])
    );
    assert_eq!(h.run(&["ZDIFF", "3", "z2", "z1", "nokey"]), bulks(&["d"]));
    assert_eq!(h.run(&["ZDIFF", "2", "z1", "z1"]), bulks(&[]));
    assert_eq!(h.run(&["ZDIFF", "2", "nokey", "z1"]), bulks(&[]));
}

#[test]
fn missing_inputs() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(h.run(&["ZINTER", "2", "z1", "nokey"]), bulks(&[]));
    assert_eq!(
        h.run(&["ZUNION", "2", "nokey", "z1"]),
        bulks(&["a", "b", "c"])
    );
    assert_eq!(h.run(&["ZINTERCARD", "2", "nokey", "z1"]), Reply::Int(0));
}

#[test]
fn members_past_their_deadline_take_no_part() {
    let mut h = Harness::new();
    let now = h.now;
    zset_with_deadlines(&mut h, "t", &[(1.0, "a"), (2.0, "b")], &[("a", now + 10)]);
    zset(&mut h, "u", &[(5.0, "a"), (6.0, "b")]);
    assert_eq!(
        h.run(&["ZINTER", "2", "t", "u", "WITHSCORES"]),
        flat(&[("a", 6.0), ("b", 8.0)])
    );
    h.advance(10);
    assert_eq!(
        h.run(&["ZINTER", "2", "t", "u", "WITHSCORES"]),
        flat(&[("b", 8.0)])
    );
    assert_eq!(h.run(&["ZDIFF", "2", "u", "t"]), bulks(&["a"]));
    assert_eq!(h.run(&["ZINTERCARD", "2", "t", "u"]), Reply::Int(1));
}

#[test]
fn store_overwrites_the_destination_without_deadlines() {
    let mut h = Harness::new();
    let now = h.now;
    inputs(&mut h);
    zset_with_deadlines(&mut h, "t", &[(1.0, "a"), (2.0, "b")], &[("b", now + 1000)]);
    h.run(&["SET", "dst", "old"]);
    h.store.dbs[0].set_expire(b"dst", Some(now + 5000));
    assert_eq!(
        h.run(&["ZUNIONSTORE", "dst", "2", "z1", "t"]),
        Reply::Int(3)
    );
    assert_eq!(events(&h), ["z:zunionstore:dst"]);
    assert_eq!(h.fx.dirty, 1);
    assert_eq!(h.fx.ready, [(0, b("dst"))]);
    assert_eq!(
        members(&h, "dst"),
        [("a".into(), 2.0), ("c".into(), 3.0), ("b".into(), 4.0)]
    );
    let e = h.store.dbs[0].peek(b"dst").expect("stored");
    assert_eq!(e.expire_at(), None);
    match &e.value {
        Value::ZSet(z) => assert!(z.deadlines().is_empty()),
        _ => panic!("not a zset"),
    }
    assert_eq!(
        h.run(&["ZINTERSTORE", "str", "2", "z1", "z2", "AGGREGATE", "MAX"]),
        Reply::Int(2)
    );
    assert_eq!(events(&h), ["z:zinterstore:str"]);
    assert_eq!(members(&h, "str"), [("b".into(), 10.0), ("c".into(), 20.0)]);
    assert_eq!(h.run(&["ZDIFFSTORE", "z1", "2", "z1", "z2"]), Reply::Int(1));
    assert_eq!(events(&h), ["z:zdiffstore:z1"]);
    assert_eq!(members(&h, "z1"), [("a".into(), 1.0)]);
}

#[test]
fn empty_store_result_deletes_the_destination() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(
        h.run(&["ZINTERSTORE", "z2", "2", "z2", "nokey"]),
        Reply::Int(0)
    );
    assert_eq!(events(&h), ["g:del:z2"]);
    assert_eq!(h.fx.dirty, 1);
    assert!(!exists(&h, "z2"));
    assert_eq!(h.run(&["ZDIFFSTORE", "none", "1", "nokey"]), Reply::Int(0));
    assert!(h.fx.is_empty());
}

#[test]
fn zintercard_counts_up_to_the_limit() {
    let mut h = Harness::new();
    inputs(&mut h);
    assert_eq!(h.run(&["ZINTERCARD", "2", "z1", "z2"]), Reply::Int(2));
    assert_eq!(
        h.run(&["ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"]),
        Reply::Int(1)
    );
    assert_eq!(
        h.run(&["ZINTERCARD", "2", "z1", "z2", "limit", "0"]),
        Reply::Int(2)
    );
    assert_eq!(h.run(&["ZINTERCARD", "2", "z1", "s"]), Reply::Int(2));
    assert_eq!(
        h.run(&["ZINTERCARD", "1", "z1", "LIMIT", "10"]),
        Reply::Int(3)
    );
}

#[test]
fn numkeys_errors_name_the_command() {
    let mut h = Harness::new();
    inputs(&mut h);
    for (cmd, store) in [
        ("zunion", false),
        ("zinter", false),
        ("zdiff", false),
        ("zintercard", false),
        ("zunionstore", true),
        ("zinterstore", true),
        ("zdiffstore", true),
    ] {
        let mut argv = vec![cmd];
        if store {
            argv.push("dst");
        }
        let at = argv.len();
        for n in ["0", "-1"] {
            argv.truncate(at);
            argv.extend([n, "z1"]);
            let want = format!("ERR at least 1 input key is needed for '{cmd}' command");
            assert_eq!(h.run(&argv), err(&want), "{argv:?}");
        }
        argv.truncate(at);
        argv.extend(["abc", "z1"]);
        assert_eq!(
            h.run(&argv),
            err("ERR value is not an integer or out of range")
        );
        argv.truncate(at);
        argv.extend(["2", "z1"]);
        assert_eq!(h.run(&argv), err("ERR syntax error"));
    }
}

#[test]
fn option_errors() {
    let mut h = Harness::new();
    inputs(&mut h);
    let syntax = err("ERR syntax error");
    let weight = err("ERR weight value is not a float");
    let cases: &[(&[&str], &Reply)] = &[
        (&["ZUNION", "2", "z1", "z2", "WEIGHTS", "1"], &syntax),
        (&["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "x"], &weight),
        (&["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "nan"], &weight),
        (&["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", " 2"], &weight),
        (
            &["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "1e400"],
            &weight,
        ),
        (&["ZUNION", "2", "z1", "z2", "AGGREGATE", "foo"], &syntax),
        (&["ZUNION", "2", "z1", "z2", "AGGREGATE"], &syntax),
        (
            &["ZUNIONSTORE", "d", "2", "z1", "z2", "WITHSCORES"],
            &syntax,
        ),
        (&["ZDIFF", "2", "z1", "z2", "WEIGHTS", "1", "1"], &syntax),
        (&["ZDIFF", "2", "z1", "z2", "AGGREGATE", "SUM"], &syntax),
        (&["ZINTERCARD", "1", "z1", "WITHSCORES"], &syntax),
        (&["ZINTERCARD", "1", "z1", "WEIGHTS", "1"], &syntax),
        (&["ZINTERCARD", "1", "z1", "LIMIT"], &syntax),
        (&["ZINTER", "1", "z1", "LIMIT", "1"], &syntax),
        (&["ZINTER", "1", "z1", "foo"], &syntax),
    ];
    for (args, want) in cases {
        assert_eq!(&h.run(args), *want, "{args:?}");
    }
    let limit = err("ERR LIMIT can't be negative");
    assert_eq!(h.run(&["ZINTERCARD", "1", "z1", "LIMIT", "-1"]), limit);
    assert_eq!(h.run(&["ZINTERCARD", "1", "z1", "LIMIT", "abc"]), limit);
    // Input types are checked before options are read.
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(h.run(&["ZUNION", "2", "z1", "str", "foo"]), wrongtype);
    assert_eq!(h.run(&["ZINTERSTORE", "d", "2", "nokey", "str"]), wrongtype);
    assert_eq!(
        h.run(&["ZUNION", "1"]),
        err("ERR wrong number of arguments for 'zunion' command")
    );
    assert_eq!(
        h.run(&["ZUNIONSTORE", "d", "1"]),
        err("ERR wrong number of arguments for 'zunionstore' command")
    );
}

#[test]
fn algebra_key_positions() {
    let spec = |n: &str| crate::table::lookup(n.as_bytes()).expect("registered");
    let argv = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<&[u8]>>();
    assert_eq!(
        spec("zunion").key_positions(&argv(&["ZUNION", "2", "a", "b", "WITHSCORES"])),
        [2, 3]
    );
    assert_eq!(
        spec("zintercard").key_positions(&argv(&["ZINTERCARD", "1", "a", "LIMIT", "1"])),
        [2]
    );
    assert_eq!(
        spec("zinterstore").key_positions(&argv(&[
            "ZINTERSTORE",
            "d",
            "2",
            "a",
            "b",
            "WEIGHTS",
            "1",
            "2"
        ])),
        [1, 3, 4]
    );
    assert_eq!(
        spec("zdiffstore").key_positions(&argv(&["ZDIFFSTORE", "d", "x", "a"])),
        [1]
    );
    assert_eq!(
        spec("zdiff").key_positions(&argv(&["ZDIFF", "-3", "a"])),
        Vec::<usize>::new()
    );
}

#[test]
fn negative_zero_survives_replies_but_not_small_stored_sets() {
    let mut h = Harness::new();
    zset(&mut h, "q", &[(0.0, "x")]);
    assert_eq!(
        h.run(&["ZUNION", "1", "q", "WEIGHTS", "-1", "WITHSCORES"]),
        flat(&[("x", -0.0)])
    );
    match h.run(&["ZUNION", "1", "q", "WEIGHTS", "-1", "WITHSCORES"]) {
        Reply::Array(v) => assert!(matches!(v[1], Reply::Double(d) if d.is_sign_negative())),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.run(&["ZUNIONSTORE", "d", "1", "q", "WEIGHTS", "-1"]),
        Reply::Int(1)
    );
    let stored = members(&h, "d");
    assert!(stored[0].1 == 0.0 && stored[0].1.is_sign_positive());
}
