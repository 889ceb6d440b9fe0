//! The look-ahead's prefetch is only a hint: whatever it is given —
//! present or absent keys and members, values of any type, collections
//! too small to be worth it — it changes nothing, and it says whether
//! anything was large enough to load.

use crate::testing::{bulk, Harness};
use crate::Reply;

/// Adds `n` members (`m:0` …) to `key` through `cmd`, 1,000 at a time.
fn fill(h: &mut Harness, cmd: &[&str], key: &str, n: usize, value: Option<&str>) {
    for start in (0..n).step_by(1000) {
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        args.insert(1, key.to_string());
        for i in start..(start + 1000).min(n) {
            if let Some(v) = value {
                if cmd[0] == "ZADD" || cmd[0] == "ZADDEX" {
                    args.push(v.to_string());
                    args.push(format!("m:{i}"));
                } else {
                    args.push(format!("m:{i}"));
                    args.push(v.to_string());
                }
            } else {
                args.push(format!("m:{i}"));
            }
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(!matches!(h.run(&refs), Reply::Error(_)));
    }
}

#[test]
fn prefetching_changes_nothing() {
    let mut h = Harness::new();
    fill(
        &mut h,
        &["ZADDEX", "PX", "60000"],
        "z",
        120_000,
        Some("1.5"),
    );
    fill(&mut h, &["SADDEX", "60"], "s", 120_000, None);
    fill(&mut h, &["HSET"], "h", 120_000, Some("v"));
    h.run(&["SADD", "small", "a", "b"]);
    h.run(&["SET", "str", "x"]);
    let probe = |h: &mut Harness| {
        (
            h.run(&["ZSCORE", "z", "m:7"]),
            h.run(&["PTTL", "z", "m:7"]),
            h.run(&["SISMEMBER", "s", "m:119999"]),
            h.run(&["HGET", "h", "m:5"]),
            h.run(&["ZCARD", "z"]),
            h.run(&["SCARD", "s"]),
            h.run(&["HLEN", "h"]),
            h.run(&["DBSIZE"]),
        )
    };
    let before = probe(&mut h);
    assert_eq!(before.0, Reply::Double(1.5));
    assert_eq!(before.3, bulk("v"));
    let store = &h.store;
    // Five keys: the key table is far too small to be worth loading, and
    // so are a packed set and a string; the large collections are worth it.
    assert!(!store.prefetch(0, &[b"z", b"absent", b"str"], &[]));
    assert!(!store.prefetch(
        0,
        &[],
        &[(b"small", b"a"), (b"str", b"x"), (b"absent", b"y")]
    ));
    let members: [(&[u8], &[u8]); 7] = [
        (b"z", b"m:7"),
        (b"z", b"nope"),
        (b"s", b"m:5"),
        (b"s", b"m:5"),
        (b"h", b"m:5"),
        (b"h", b""),
        (b"str", b"m:5"),
    ];
    assert!(store.prefetch(0, &[b"z", b"s"], &members));
    for one in [&members[0], &members[2], &members[4]] {
        assert!(store.prefetch(0, &[], std::slice::from_ref(one)), "{one:?}");
    }
    assert!(!store.prefetch(1, &[], &members), "another database");
    assert!(!store.prefetch(99, &[b"z"], &members), "no such database");
    assert_eq!(probe(&mut h), before);
}
