//! CL.THROTTLE: redis-cell's documented examples and test table, errors,
//! stored state, and a reference model under a fake clock.

use proptest::prelude::*;

use super::*;
use crate::testing::{bulk, err, Harness};

fn run(h: &mut Harness, cmd: &str) -> Reply {
    let words: Vec<&str> = cmd.split(' ').collect();
    h.run(&words)
}

fn reply(v: [i64; 5]) -> Reply {
    Reply::Array(v.iter().map(|i| Reply::Int(*i)).collect())
}

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

const NOW_MS: u64 = 1_000_000_000_000;
const NOW_NS: i128 = NOW_MS as i128 * 1_000_000;

#[test]
fn readme_example() {
    let mut h = Harness::new();
    assert_eq!(
        run(&mut h, "CL.THROTTLE user123 15 30 60"),
        reply([0, 16, 15, -1, 2])
    );
    assert_eq!(
        run(&mut h, "cl.throttle user123 15 30 60 1"),
        reply([0, 16, 14, -1, 4])
    );
}

#[test]
fn end_to_end_example_of_redis_cell() {
    // One token every 2 seconds, no burst.
    let mut h = Harness::new();
    assert_eq!(
        run(&mut h, "CL.THROTTLE user123 0 1 2 1"),
        reply([0, 1, 0, -1, 2])
    );
    assert_eq!(
        run(&mut h, "CL.THROTTLE user123 0 1 2 1"),
        reply([1, 1, 0, 2, 2])
    );
    h.advance(2000);
    assert_eq!(
        run(&mut h, "CL.THROTTLE user123 0 1 2 1"),
        reply([0, 1, 0, -1, 2])
    );
}

#[test]
fn rate_limit_table_of_redis_cell() {
    // Limit 5 (max_burst 4), one per second:
    // (ms after start, quantity, remaining, reset_after s, retry_after s, limited)
    let cases: [(u64, i64, i64, i64, i64, bool); 15] = [
        (0, 6, 5, 0, -1, true),
        (0, 1, 4, 1, -1, false),
        (0, 1, 3, 2, -1, false),
        (0, 1, 2, 3, -1, false),
        (0, 1, 1, 4, -1, false),
        (0, 1, 0, 5, -1, false),
        (0, 1, 0, 5, 1, true),
        (3000, 1, 2, 3, -1, false),
        (3100, 1, 1, 4, -1, false), // 3.9 s rounds up
        (4000, 1, 1, 4, -1, false),
        (8000, 1, 4, 1, -1, false),
        (9500, 1, 4, 1, -1, false),
        (9500, 0, 4, 1, -1, false),
        (9500, 2, 2, 3, -1, false),
        (9500, 5, 2, 3, 3, true),
    ];
    let mut h = Harness::new();
    for (i, (at, qty, remaining, reset, retry, limited)) in cases.into_iter().enumerate() {
        h.now = NOW_MS + at;
        let got = h.run(&["CL.THROTTLE", "foo", "4", "1", "1", &qty.to_string()]);
        assert_eq!(
            got,
            reply([i64::from(limited), 5, remaining, retry, reset]),
            "case {i}"
        );
    }
}

#[test]
fn decide_matches_redis_cell_in_nanoseconds() {
    let q = Quota::new(4, 1, 1);
    assert_eq!(
        q,
        Quota {
            emission: 1_000_000_000,
            dvt: 5_000_000_000,
            limit: 5
        }
    );
    let d = decide(
        &q,
        Some((NOW_NS + 3_000_000_000) as i64),
        NOW_NS + 100_000_000,
        1,
    )
    .unwrap();
    assert!(!d.limited);
    assert_eq!(d.reset_after, 3_900_000_000);
    assert_eq!(d.remaining, 1);
    assert_eq!(reply_secs(d.reset_after), 4);
    assert_eq!(reply_secs(-1_000_000_000), -1);
    assert_eq!(reply_secs(1_000_999), 1);
    assert_eq!(
        reply_secs(999_999),
        0,
        "below a millisecond does not round up"
    );
    assert_eq!(Quota::new(15, 30, 60).emission, 2_000_000_000);
    assert_eq!(Quota::new(0, 3, 1).emission, 333_333_333);
}

#[test]
fn state_is_a_string_tat_with_a_key_ttl() {
    let mut h = Harness::new();
    assert_eq!(run(&mut h, "CL.THROTTLE k 4 1 1"), reply([0, 5, 4, -1, 1]));
    let tat = (NOW_NS + 1_000_000_000).to_string();
    assert_eq!(h.run(&["GET", "k"]), bulk(&tat));
    assert_eq!(run(&mut h, "PTTL k"), Reply::Int(1000));
    assert_eq!(rewrite(&h), None, "PTTL logs nothing special");
    assert_eq!(
        run(&mut h, "CL.THROTTLE k 4 1 1 2"),
        reply([0, 5, 2, -1, 3])
    );
    let tat = (NOW_NS + 3_000_000_000).to_string();
    assert_eq!(
        rewrite(&h),
        Some(vec![format!("SET k {tat} PXAT {}", NOW_MS + 3000)]),
        "logged with an absolute deadline"
    );
    assert_eq!(h.fx.touched.len(), 1);
    assert!(
        h.fx.events.is_empty(),
        "module writes send no keyspace events"
    );
    // Refused: nothing written, nothing logged.
    assert_eq!(run(&mut h, "CL.THROTTLE k 4 1 1 3"), reply([1, 5, 2, 1, 3]));
    assert_eq!(rewrite(&h), Some(vec![]));
    assert!(h.fx.touched.is_empty());
    // Peeking at a fresh key creates nothing.
    assert_eq!(
        run(&mut h, "CL.THROTTLE fresh 4 1 1 0"),
        reply([0, 5, 5, -1, 0])
    );
    assert_eq!(h.run(&["GET", "fresh"]), Reply::Nil);
    // The key expires once the limiter is full again.
    h.advance(3000);
    assert_eq!(h.run(&["GET", "k"]), Reply::Nil);
    assert_eq!(
        run(&mut h, "CL.THROTTLE k 4 1 1 0"),
        reply([0, 5, 5, -1, 0])
    );
}

#[test]
fn errors_follow_redis_cell() {
    let mut h = Harness::new();
    let usage = "Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]";
    assert_eq!(run(&mut h, "CL.THROTTLE"), err(usage));
    assert_eq!(run(&mut h, "CL.THROTTLE k 1 2"), err(usage));
    assert_eq!(run(&mut h, "CL.THROTTLE k 1 2 3 4 5"), err(usage));
    assert_eq!(
        run(&mut h, "CL.THROTTLE k x 2 3"),
        err("Cell error: Store error: Couldn't parse as integer: x")
    );
    assert_eq!(
        run(&mut h, "CL.THROTTLE k 1 2 3 1.5"),
        err("Cell error: Store error: Couldn't parse as integer: 1.5")
    );
    assert_eq!(
        run(&mut h, "CL.THROTTLE k 1 0 3"),
        err("Cell error: Store error: Zero rates are not supported")
    );
    assert_eq!(
        run(&mut h, "CL.THROTTLE k 1 5 0"),
        err("Cell error: Store error: Zero rates are not supported")
    );
    // Rust integer syntax, as redis-cell parses it.
    assert_eq!(
        run(&mut h, "CL.THROTTLE k +1 05 60"),
        reply([0, 2, 1, -1, 12])
    );
    h.run(&["SET", "bad", "abc"]);
    assert_eq!(
        run(&mut h, "CL.THROTTLE bad 1 1 1"),
        err("Cell error: invalid digit found in string")
    );
    h.run(&["SET", "empty", ""]);
    assert_eq!(
        run(&mut h, "CL.THROTTLE empty 1 1 1"),
        err("Cell error: cannot parse integer from empty string")
    );
    crate::cmd::member_ttl::tests::make_set(&mut h, "set", &["a"]);
    assert_eq!(
        run(&mut h, "CL.THROTTLE set 1 1 1"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn extreme_arguments_do_not_panic() {
    let mut h = Harness::new();
    for cmd in [
        "CL.THROTTLE k 9223372036854775807 1 1",
        "CL.THROTTLE k -9223372036854775808 1 1",
        "CL.THROTTLE k 1 -1 1",
        "CL.THROTTLE k 1 1 -1",
        "CL.THROTTLE k 1 1 9223372036854775807",
        "CL.THROTTLE k 1 9223372036854775807 1",
        "CL.THROTTLE k 1 1 1 -5",
        "CL.THROTTLE k 1 1 1 9223372036854775807",
        "CL.THROTTLE k 5 1 1 -9223372036854775808",
    ] {
        let r = run(&mut h, cmd);
        assert!(
            matches!(r, Reply::Array(_) | Reply::Error(_)),
            "{cmd}: {r:?}"
        );
    }
}

/// A limiter described as a backlog of work (ns) that drains in real time:
/// a request of `q` adds `q * emission` if the backlog stays within the
/// tolerance. Independent of `decide`'s TAT formulation.
#[derive(Debug, Default)]
struct Model {
    /// (TAT in ns, key deadline in ms) while the key exists.
    state: Option<(i128, u64)>,
}

impl Model {
    fn step(&mut self, now_ms: u64, burst: i64, count: i64, period: i64, q: i64) -> [i64; 5] {
        if matches!(self.state, Some((_, exp)) if exp <= now_ms) {
            self.state = None;
        }
        let now = now_ms as i128 * 1_000_000;
        let em = period as i128 * 1_000_000_000 / count as i128;
        let dvt = em * (burst as i128 + 1);
        let cost = em * q as i128;
        let backlog = self.state.map_or(0, |(tat, _)| (tat - now).max(0));
        let secs =
            |ns: i128| (ns / 1_000_000_000 + i128::from(ns % 1_000_000_000 >= 1_000_000)) as i64;
        let remaining = |left: i128| if left > -em { (left / em) as i64 } else { 0 };
        if backlog + cost > dvt {
            let retry = if cost <= dvt {
                secs(backlog + cost - dvt)
            } else {
                -1
            };
            return [1, burst + 1, remaining(dvt - backlog), retry, secs(backlog)];
        }
        let after = backlog + cost;
        let ttl_ms = (after / 1_000_000) as u64;
        self.state = (ttl_ms > 0).then_some((now + after, now_ms + ttl_ms));
        [0, burst + 1, remaining(dvt - after), -1, secs(after)]
    }
}

/// Counts per period that divide 10^6, so the emission interval is a whole
/// number of microseconds and the model can use integer arithmetic.
const COUNTS: [i64; 12] = [1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 100];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn throttle_matches_the_backlog_model(
        burst in 0i64..20,
        count in prop::sample::select(&COUNTS[..]),
        period in 1i64..120,
        steps in prop::collection::vec(
            (prop_oneof![Just(0u64), 1u64..50, 50u64..5000, 5000u64..200_000], 0i64..25),
            1..25,
        ),
    ) {
        let mut h = Harness::new();
        let mut model = Model::default();
        let (b, c, p) = (burst.to_string(), count.to_string(), period.to_string());
        for (advance, q) in steps {
            h.advance(advance);
            let expect = model.step(h.now, burst, count, period, q);
            let got = h.run(&["CL.THROTTLE", "lim", &b, &c, &p, &q.to_string()]);
            prop_assert_eq!(got, reply(expect));
            let pttl = match model.state {
                None => -2,
                Some((_, exp)) => (exp - h.now) as i64,
            };
            prop_assert_eq!(h.run(&["PTTL", "lim"]), Reply::Int(pttl));
            let stored = match model.state {
                None => Reply::Nil,
                Some((tat, _)) => bulk(&tat.to_string()),
            };
            prop_assert_eq!(h.run(&["GET", "lim"]), stored);
        }
    }
}
