//! Tests of the bitmap commands against Redis 7.0's replies and errors.

use crate::value::ListValue;
use bytes::Bytes;

use crate::reply::Reply;
use crate::testing::{bulk, err, Harness};
use crate::value::Value;

const SYNTAX: &str = "ERR syntax error";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const BAD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

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

fn setup() -> Harness {
    let mut h = Harness::new();
    h.run(&["SET", "s", "foobar"]);
    h.run(&["SET", "e", ""]);
    let mut l = ListValue::new();
    l.push_back(Bytes::from_static(b"a"));
    h.store.dbs[0].set(Bytes::from_static(b"l"), Value::from(l));
    h.run_bytes(&[
        Bytes::from_static(b"SET"),
        Bytes::from_static(b"ones"),
        Bytes::from_static(b"\xff\xff\xff"),
    ]);
    h
}

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

fn ints(v: &[i64]) -> Reply {
    Reply::Array(v.iter().map(|&n| Reply::Int(n)).collect())
}

#[test]
fn setbit_getbit() {
    let mut h = setup();
    assert_eq!(h.run(&["SETBIT", "k", "7", "1"]), int(0));
    assert_eq!(events(&h), ["$:setbit:k"]);
    assert_eq!(h.run(&["GET", "k"]), bulk("\x01"));
    // Unchanged bit in a string that did not grow: no event.
    assert_eq!(h.run(&["SETBIT", "k", "7", "1"]), int(1));
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["SETBIT", "k", "7", "0"]), int(1));
    assert_eq!(events(&h), ["$:setbit:k"]);
    // Growing counts as a change even when writing 0.
    assert_eq!(h.run(&["SETBIT", "k", "100", "0"]), int(0));
    assert_eq!(events(&h), ["$:setbit:k"]);
    assert_eq!(h.run(&["STRLEN", "k"]), int(13));
    assert_eq!(h.run(&["GETBIT", "s", "1"]), int(1));
    assert_eq!(h.run(&["GETBIT", "s", "0"]), int(0));
    assert_eq!(h.run(&["GETBIT", "s", "100000"]), int(0));
    assert_eq!(h.run(&["GETBIT", "nokey", "0"]), int(0));

    for (off, bit, want) in [
        ("-1", "1", BAD_OFFSET),
        ("a", "1", BAD_OFFSET),
        ("4294967296", "1", BAD_OFFSET),
        ("0", "2", "ERR bit is not an integer or out of range"),
        ("0", "-1", "ERR bit is not an integer or out of range"),
        ("0", "a", "ERR bit is not an integer or out of range"),
    ] {
        assert_eq!(h.run(&["SETBIT", "k", off, bit]), err(want));
        // Argument errors come before the type check.
        assert_eq!(h.run(&["SETBIT", "l", off, bit]), err(want));
    }
    assert_eq!(h.run(&["SETBIT", "l", "0", "1"]), err(WRONGTYPE));
    assert_eq!(h.run(&["GETBIT", "l", "0"]), err(WRONGTYPE));
    assert_eq!(h.run(&["GETBIT", "l", "a"]), err(BAD_OFFSET));
    assert_eq!(h.run(&["GETBIT", "k", "4294967296"]), err(BAD_OFFSET));
    h.store.cfg.proto_max_bulk_len = 4;
    assert_eq!(h.run(&["GETBIT", "k", "31"]), int(0));
    assert_eq!(h.run(&["GETBIT", "k", "32"]), err(BAD_OFFSET));
}

#[test]
fn setbit_keeps_ttl() {
    let mut h = setup();
    h.run(&["SET", "t", "a", "EX", "100"]);
    let at = h.store.dbs[0].raw_get(b"t").and_then(|e| e.expire_at());
    h.run(&["SETBIT", "t", "100", "1"]);
    assert_eq!(h.store.dbs[0].raw_get(b"t").and_then(|e| e.expire_at()), at);
}

#[test]
fn bitcount() {
    let mut h = setup();
    for (args, want) in [
        (&["BITCOUNT", "s"][..], 26),
        (&["BITCOUNT", "s", "1", "1"], 6),
        (&["BITCOUNT", "s", "0", "-1", "bit"], 26),
        (&["BITCOUNT", "s", "5", "30", "BIT"], 17),
        (&["BITCOUNT", "s", "-5", "-1", "BIT"], 2),
        (&["BITCOUNT", "s", "100", "200"], 0),
        (&["BITCOUNT", "s", "-100", "-50"], 4),
        (&["BITCOUNT", "s", "0", "9223372036854775807", "BIT"], 26),
        (&["BITCOUNT", "s", "-9223372036854775808", "-1", "BIT"], 26),
        (&["BITCOUNT", "e"], 0),
        (&["BITCOUNT", "e", "0", "-1"], 0),
        (&["BITCOUNT", "nokey", "0"], 0),
        (&["BITCOUNT", "nokey", "0", "1", "FOO"], 0),
        // Both negative and inverted: 0 before the unit is even read.
        (&["BITCOUNT", "s", "-1", "-2", "FOO"], 0),
    ] {
        assert_eq!(h.run(args), int(want), "{args:?}");
    }
    assert_eq!(h.run(&["BITCOUNT", "s", "0"]), err(SYNTAX));
    assert_eq!(h.run(&["BITCOUNT", "s", "0", "1", "2"]), err(SYNTAX));
    assert_eq!(h.run(&["BITCOUNT", "s", "1", "0", "FOO"]), err(SYNTAX));
    assert_eq!(h.run(&["BITCOUNT", "s", "0", "b"]), err(NOT_INT));
    assert_eq!(h.run(&["BITCOUNT", "l", "a"]), err(WRONGTYPE));
}

#[test]
fn bitpos() {
    let mut h = setup();
    h.run_bytes(&[
        Bytes::from_static(b"SET"),
        Bytes::from_static(b"zeros"),
        Bytes::from_static(b"\0\0\0"),
    ]);
    for (args, want) in [
        (&["BITPOS", "nokey", "1"][..], -1),
        (&["BITPOS", "nokey", "0"], 0),
        // A missing key answers before the range is parsed.
        (&["BITPOS", "nokey", "1", "a", "b", "c", "d", "e"], -1),
        (&["BITPOS", "e", "0"], -1),
        (&["BITPOS", "e", "1"], -1),
        (&["BITPOS", "s", "0"], 0),
        (&["BITPOS", "s", "1"], 1),
        (&["BITPOS", "s", "1", "2"], 17),
        (&["BITPOS", "s", "1", "2", "-1", "BIT"], 2),
        (&["BITPOS", "s", "1", "7", "7", "BIT"], -1),
        (&["BITPOS", "s", "0", "7", "7", "BIT"], 7),
        (&["BITPOS", "s", "0", "3", "4", "BIT"], 3),
        (&["BITPOS", "s", "0", "2", "1"], -1),
        (&["BITPOS", "ones", "0"], 24),
        (&["BITPOS", "ones", "0", "1"], 24),
        (&["BITPOS", "ones", "0", "5", "-1", "BIT"], -1),
        (&["BITPOS", "ones", "0", "0", "-1"], -1),
        (&["BITPOS", "ones", "0", "5", "20", "BIT"], -1),
        (&["BITPOS", "zeros", "1"], -1),
        (&["BITPOS", "zeros", "0", "3", "-1", "BIT"], 3),
    ] {
        assert_eq!(h.run(args), int(want), "{args:?}");
    }
    assert_eq!(
        h.run(&["BITPOS", "nokey", "2"]),
        err("ERR The bit argument must be 1 or 0.")
    );
    assert_eq!(h.run(&["BITPOS", "nokey", "a"]), err(NOT_INT));
    assert_eq!(h.run(&["BITPOS", "l", "1", "a"]), err(WRONGTYPE));
    assert_eq!(h.run(&["BITPOS", "s", "1", "a"]), err(NOT_INT));
    // The unit is checked before `end` is parsed.
    assert_eq!(h.run(&["BITPOS", "s", "1", "0", "a", "FOO"]), err(SYNTAX));
    assert_eq!(h.run(&["BITPOS", "s", "1", "0", "a", "BIT"]), err(NOT_INT));
    assert_eq!(
        h.run(&["BITPOS", "s", "1", "0", "-1", "BIT", "x"]),
        err(SYNTAX)
    );
    assert_eq!(h.run(&["BITPOS", "ones", "0", "5", "BIT"]), err(NOT_INT));
}

#[test]
fn bitop() {
    let mut h = setup();
    assert_eq!(h.run(&["BITOP", "foo", "d", "s"]), err(SYNTAX));
    assert_eq!(h.run(&["BITOP", "foo", "d", "l"]), err(SYNTAX));
    assert_eq!(
        h.run(&["BITOP", "NOT", "d", "s", "e"]),
        err("ERR BITOP NOT must be called with a single source key.")
    );
    assert_eq!(h.run(&["BITOP", "OR", "d", "s", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["BITOP", "not", "d", "ones"]), int(3));
    assert_eq!(events(&h), ["$:set:d"]);
    assert_eq!(h.run(&["GET", "d"]), bulk("\0\0\0"));
    assert_eq!(h.run(&["BITOP", "AND", "d", "s", "e"]), int(6));
    assert_eq!(h.run(&["GET", "d"]), bulk("\0\0\0\0\0\0"));
    assert_eq!(h.run(&["BITOP", "and", "d", "s", "s"]), int(6));
    assert_eq!(h.run(&["GET", "d"]), bulk("foobar"));
    assert_eq!(h.run(&["BITOP", "XOR", "d", "s", "ones"]), int(6));
    assert_eq!(
        h.run(&["GET", "d"]),
        Reply::Bulk(Bytes::from(vec![
            b'f' ^ 0xff,
            b'o' ^ 0xff,
            b'o' ^ 0xff,
            b'b',
            b'a',
            b'r'
        ]))
    );
    assert_eq!(h.run(&["BITOP", "OR", "d", "e", "ones"]), int(3));
    let ones = h.run(&["GET", "ones"]);
    assert_eq!(h.run(&["GET", "d"]), ones);
    // An empty result deletes the destination.
    assert_eq!(h.run(&["BITOP", "XOR", "d", "nokey", "e"]), int(0));
    assert_eq!(events(&h), ["g:del:d"]);
    assert_eq!(h.run(&["GET", "d"]), Reply::Nil);
    assert_eq!(h.run(&["BITOP", "XOR", "d", "nokey", "e"]), int(0));
    assert!(h.fx.events.is_empty());
    // The destination is overwritten whatever it held, TTL included.
    h.run(&["SET", "t", "x", "EX", "100"]);
    assert_eq!(h.run(&["BITOP", "OR", "t", "s"]), int(6));
    assert_eq!(
        h.store.dbs[0].raw_get(b"t").and_then(|e| e.expire_at()),
        None
    );
    assert_eq!(h.run(&["BITOP", "OR", "d", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["BITOP", "OR", "l", "s", "s"]), int(6));
    assert_eq!(h.run(&["GET", "l"]), bulk("foobar"));
}

#[test]
fn bitfield_reads() {
    let mut h = setup();
    assert_eq!(
        h.run(&[
            "BITFIELD", "s", "GET", "u8", "0", "get", "i8", "0", "GET", "u4", "4", "GET", "i4", "4"
        ]),
        ints(&[102, 102, 6, 6])
    );
    assert_eq!(
        h.run(&["BITFIELD", "s", "GET", "i64", "0"]),
        ints(&[7381240782615871488])
    );
    assert_eq!(
        h.run(&["BITFIELD", "s", "GET", "u63", "0"]),
        ints(&[3690620391307935744])
    );
    assert_eq!(h.run(&["BITFIELD", "s", "GET", "u8", "#1"]), ints(&[111]));
    assert_eq!(
        h.run(&["BITFIELD", "s", "GET", "u8", "4294967295"]),
        ints(&[0])
    );
    assert_eq!(
        h.run(&["BITFIELD", "s", "GET", "u8", "#536870911"]),
        ints(&[0])
    );
    assert_eq!(
        h.run(&["BITFIELD", "nokey", "GET", "u8", "100"]),
        ints(&[0])
    );
    assert_eq!(h.run(&["BITFIELD", "nokey"]), ints(&[]));
    assert_eq!(h.run(&["GET", "nokey"]), Reply::Nil);
    assert_eq!(h.run(&["BITFIELD", "l"]), err(WRONGTYPE));
    assert_eq!(h.run(&["BITFIELD", "l", "foo"]), err(SYNTAX));
    for t in ["U8", "I8", "u64", "i0", "u", "i65", "x8"] {
        assert_eq!(
            h.run(&["BITFIELD", "s", "GET", t, "0"]),
            err(BAD_TYPE),
            "{t}"
        );
    }
    for off in ["-1", "#", "a", "4294967296", "#536870912"] {
        assert_eq!(
            h.run(&["BITFIELD", "s", "GET", "u8", off]),
            err(BAD_OFFSET),
            "{off}"
        );
    }
    for args in [
        &["GET"][..],
        &["GET", "u8"],
        &["SET", "u8", "0"],
        &["OVERFLOW"],
        &["foo", "u8", "0"],
    ] {
        let mut argv = vec!["BITFIELD", "s"];
        argv.extend_from_slice(args);
        assert_eq!(h.run(&argv), err(SYNTAX), "{args:?}");
    }
    assert_eq!(
        h.run(&["BITFIELD", "s", "SET", "u8", "0", "a"]),
        err(NOT_INT)
    );
    assert_eq!(
        h.run(&["BITFIELD", "s", "INCRBY", "u8", "0", "a"]),
        err(NOT_INT)
    );
    let bad_overflow = err("ERR Invalid OVERFLOW type specified");
    assert_eq!(
        h.run(&["BITFIELD", "s", "OVERFLOW", "foo", "GET", "u8", "a"]),
        bad_overflow
    );
    assert_eq!(
        h.run(&["BITFIELD", "s", "GET", "u8", "a", "OVERFLOW", "foo"]),
        err(BAD_OFFSET)
    );
    assert_eq!(h.run(&["BITFIELD", "s", "OVERFLOW", "SAT"]), ints(&[]));
}

#[test]
fn bitfield_ro() {
    let mut h = setup();
    let ro = err("ERR BITFIELD_RO only supports the GET subcommand");
    assert_eq!(
        h.run(&["BITFIELD_RO", "s", "GET", "u8", "0", "SET", "u8", "0", "1"]),
        ro
    );
    assert_eq!(h.run(&["BITFIELD_RO", "s", "INCRBY", "u8", "0", "1"]), ro);
    // The whole command is parsed first.
    assert_eq!(
        h.run(&["BITFIELD_RO", "s", "GET", "u8", "0", "SET", "u8", "0", "a"]),
        err(NOT_INT)
    );
    assert_eq!(
        h.run(&["BITFIELD_RO", "s", "OVERFLOW", "FAIL", "GET", "u8", "0"]),
        ints(&[102])
    );
    assert_eq!(
        h.run(&["BITFIELD_RO", "l", "GET", "u8", "0"]),
        err(WRONGTYPE)
    );
    assert_eq!(
        h.run(&["BITFIELD_RO", "nokey", "GET", "u8", "0"]),
        ints(&[0])
    );
    assert_eq!(h.run(&["BITFIELD_RO", "s"]), ints(&[]));
}

#[test]
fn bitfield_writes_and_overflow() {
    let mut h = setup();
    let cases: &[(&[&str], Reply)] = &[
        (&["SET", "u8", "0", "-1", "GET", "u8", "0"], ints(&[0, 255])),
        (
            &["OVERFLOW", "SAT", "SET", "u8", "0", "-5", "GET", "u8", "0"],
            ints(&[255, 255]),
        ),
        (
            &[
                "OVERFLOW", "WRAP", "SET", "u8", "0", "300", "GET", "u8", "0",
            ],
            ints(&[255, 44]),
        ),
        (
            &[
                "OVERFLOW", "FAIL", "SET", "u8", "0", "300", "GET", "u8", "0",
            ],
            Reply::Array(vec![Reply::Nil, int(44)]),
        ),
        (
            &["SET", "i8", "0", "200", "GET", "i8", "0"],
            ints(&[44, -56]),
        ),
        (
            &["OVERFLOW", "SAT", "SET", "i8", "0", "200", "GET", "i8", "0"],
            ints(&[-56, 127]),
        ),
        (
            &[
                "OVERFLOW", "SAT", "SET", "i8", "0", "-200", "GET", "i8", "0",
            ],
            ints(&[127, -128]),
        ),
        (
            &[
                "OVERFLOW", "WRAP", "INCRBY", "i8", "0", "100", "INCRBY", "i8", "0", "100",
            ],
            ints(&[-28, 72]),
        ),
        (
            &[
                "OVERFLOW", "SAT", "INCRBY", "i8", "0", "100", "INCRBY", "i8", "0", "-300",
                "INCRBY", "u8", "0", "-1",
            ],
            ints(&[127, -128, 127]),
        ),
        (
            &[
                "SET",
                "i64",
                "0",
                "-9223372036854775808",
                "INCRBY",
                "i64",
                "0",
                "-1",
            ],
            ints(&[9151314442816847872, 9223372036854775807]),
        ),
        (
            &[
                "OVERFLOW", "FAIL", "INCRBY", "i64", "0", "1", "GET", "i64", "0",
            ],
            Reply::Array(vec![Reply::Nil, int(9223372036854775807)]),
        ),
        (
            &[
                "SET",
                "u63",
                "0",
                "9223372036854775807",
                "INCRBY",
                "u63",
                "0",
                "1",
            ],
            ints(&[4611686018427387903, 0]),
        ),
        (
            &[
                "SET", "i1", "0", "1", "GET", "i1", "0", "SET", "i1", "0", "-1", "GET", "u1", "0",
            ],
            ints(&[0, -1, -1, 1]),
        ),
    ];
    for (ops, want) in cases {
        let mut argv = vec!["BITFIELD", "k"];
        argv.extend_from_slice(ops);
        assert_eq!(&h.run(&argv), want, "{ops:?}");
    }
}

/// Redis 7.0 checks a signed SET's range with a 64-bit subtraction that
/// wraps for values far below the minimum: SAT then stores the maximum.
/// -2^63 + 128 still saturates to i8's minimum, -2^63 + 127 to its
/// maximum (as redis-server 7.0.15 answers).
#[test]
fn bitfield_sat_set_of_values_far_below_the_minimum() {
    let mut h = Harness::new();
    let ops = "OVERFLOW SAT SET i8 0 -9223372036854775680 GET i8 0 \
               SET i8 0 -9223372036854775681 GET i8 0 \
               SET i16 8 -9223372036854775808 GET i16 8";
    let mut argv = vec!["BITFIELD", "b"];
    argv.extend(ops.split_whitespace());
    assert_eq!(h.run(&argv), ints(&[0, -128, -128, 127, 0, 32767]));
}

#[test]
fn bitfield_creates_and_notifies() {
    let mut h = setup();
    assert_eq!(
        h.run(&["BITFIELD", "k", "SET", "u3", "13", "5", "GET", "u3", "13", "GET", "u8", "8"]),
        ints(&[0, 5, 5])
    );
    assert_eq!(events(&h), ["$:setbit:k"]);
    assert_eq!(h.run(&["STRLEN", "k"]), int(2));
    // A refused write still creates the key (zero-filled) but is no change.
    assert_eq!(
        h.run(&[
            "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "80", "300", "GET", "u8", "0"
        ]),
        Reply::Array(vec![Reply::Nil, int(0)])
    );
    assert!(h.fx.events.is_empty());
    assert_eq!(h.run(&["STRLEN", "f"]), int(11));
    assert_eq!(
        h.run(&["BITFIELD", "l", "SET", "u8", "0", "1"]),
        err(WRONGTYPE)
    );
    h.run(&["SET", "t", "x", "EX", "100"]);
    let at = h.store.dbs[0].raw_get(b"t").and_then(|e| e.expire_at());
    assert_eq!(
        h.run(&["BITFIELD", "t", "SET", "u8", "0", "65"]),
        ints(&[120])
    );
    assert_eq!(h.run(&["GET", "t"]), bulk("A"));
    assert_eq!(h.store.dbs[0].raw_get(b"t").and_then(|e| e.expire_at()), at);
}

#[test]
fn bitfield_counts_changes_only_when_a_value_changed() {
    let mut h = Harness::new();
    let dirty = |h: &mut Harness, args: &[&str]| {
        h.run(args);
        (h.fx.dirty, h.fx.events.len(), h.fx.touched.len())
    };
    // Creating the key always counts.
    assert_eq!(
        dirty(&mut h, &["BITFIELD", "f", "SET", "i5", "0", "0"]),
        (1, 1, 1)
    );
    // Same value again: no change, no event, nothing touched.
    assert_eq!(
        dirty(&mut h, &["BITFIELD", "f", "SET", "i5", "0", "0"]),
        (0, 0, 0)
    );
    assert_eq!(
        dirty(&mut h, &["BITFIELD", "f", "INCRBY", "i5", "0", "0"]),
        (0, 0, 0)
    );
    // One real change: every write of the call counts, as in Redis.
    assert_eq!(
        dirty(
            &mut h,
            &[
                "BITFIELD", "f", "SET", "i5", "0", "1", "SET", "i5", "0", "1", "SET", "i5", "5",
                "3"
            ]
        ),
        (3, 1, 1)
    );
    // Growing the string counts even when the written value is zero.
    assert_eq!(
        dirty(
            &mut h,
            &["BITFIELD", "f", "SET", "i5", "0", "1", "SET", "i5", "100", "0"]
        ),
        (2, 1, 1)
    );
    // A failed overflow writes nothing.
    assert_eq!(
        dirty(
            &mut h,
            &["BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "i5", "0", "100"]
        ),
        (0, 0, 0)
    );
}
