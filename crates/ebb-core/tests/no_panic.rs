//! Every core command, fed random argument lists (keywords, numbers at the
//! edges, garbage, colliding keys of every type) with random clock jumps and
//! sweeps, must reply (possibly with an error) and never panic; the keyspace
//! must stay consistent (no empty collection is ever left stored).

use bytes::Bytes;
use ebb_core::table::{all, Exec};
use ebb_core::testing::Harness;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

const WORDS: &[&str] = &[
    "k1",
    "k2",
    "str",
    "list",
    "hash",
    "set",
    "zset",
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "KEEPTTL",
    "CAP",
    "LIMIT",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "FIELDS",
    "MEMBERS",
    "WITHSCORES",
    "BYSCORE",
    "BYLEX",
    "REV",
    "COUNT",
    "MATCH",
    "TYPE",
    "STORE",
    "BY",
    "GET",
    "ALPHA",
    "ASC",
    "DESC",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
    "MAXLEN",
    "ENCODING",
    "FREQ",
    "SAMPLES",
    "PERSIST",
    "FNX",
    "FXX",
    "REPLACE",
    "DB",
    "IDX",
    "LEN",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "BYTE",
    "BIT",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "SET",
    "INCRBY",
    "u8",
    "i64",
    "#0",
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-2",
    "10",
    "100",
    "1000000",
    "-1000000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "1.5",
    "-0",
    "0.0",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "(1",
    "(inf",
    "[a",
    "(a",
    "-",
    "+",
    "[",
    "(",
    "0x10",
    "1e400",
    "1e-400",
    "",
    " ",
    "*",
    "?",
    "[a-",
    "\\",
    "a*b",
    "x",
    "f1",
    "m1",
    "m2",
    "AND",
    "OR",
    "XOR",
    "NOT",
];

fn setup(h: &mut Harness) {
    for cmd in [
        &["SET", "str", "12"][..],
        &["RPUSH", "list", "a", "b", "c"],
        &["HSET", "hash", "f1", "1", "f2", "x"],
        &["SADD", "set", "m1", "m2", "3"],
        &["ZADD", "zset", "1", "m1", "2", "m2", "inf", "m3"],
        &["SPEXPIRE", "set", "50", "MEMBERS", "1", "m1"],
        &["ZPEXPIRE", "zset", "30", "MEMBERS", "1", "m2"],
        &["HPEXPIRE", "hash", "40", "FIELDS", "1", "f2"],
    ] {
        h.run(cmd);
    }
}

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::sample::select(WORDS).prop_map(|w| w.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..12),
        1 => any::<i64>().prop_map(|n| n.to_string().into_bytes()),
    ]
}

fn check_consistent(h: &Harness) {
    for db in &h.store.dbs {
        for (k, e) in db.raw_iter() {
            assert!(
                !e.value.is_empty_collection(),
                "empty collection left under {k:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn no_command_panics(steps in prop::collection::vec(
        (any::<prop::sample::Index>(), prop::collection::vec(arg(), 0..8), 0u64..60, any::<bool>()), 1..30)
    ) {
        let specs: Vec<_> = all().iter().filter(|s| matches!(s.exec, Exec::Core(_))).collect();
        let mut h = Harness::new();
        setup(&mut h);
        for (pick, args, jump, sweep) in steps {
            let spec = pick.get(&specs);
            let mut argv = vec![Bytes::from(spec.name.to_ascii_uppercase())];
            argv.extend(args.into_iter().map(Bytes::from));
            if spec.name == "debug" {
                continue;
            }
            let r = catch_unwind(AssertUnwindSafe(|| h.run_bytes(&argv)));
            prop_assert!(r.is_ok(), "panic on {:?}", argv);
            h.advance(jump);
            if sweep {
                let r = catch_unwind(AssertUnwindSafe(|| h.sweep()));
                prop_assert!(r.is_ok(), "panic in sweep after {:?}", argv);
            }
            check_consistent(&h);
        }
    }
}
