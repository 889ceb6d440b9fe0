//! Property test: random ZADD / ZADDEX / ZINCRBY / ZREM / ZREMRANGEBYRANK
//! commands and clock jumps against a plain `BTreeMap` model of a sorted
//! set with member deadlines. Replies, contents, order, deadlines and the
//! internal invariants of `ZSetValue` must agree after every step.

use bytes::Bytes;
use proptest::prelude::*;
use std::collections::BTreeMap;

use crate::reply::{format_double, Reply};
use crate::testing::Harness;
use crate::value::Value;

const MEMBERS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
const SCORES: [f64; 8] = [-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.0, f64::INFINITY];

#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

impl Flags {
    fn from_bits(b: u8) -> Flags {
        // Low probability for each flag so most commands are valid.
        Flags {
            nx: b & 0b111 == 1,
            xx: b & 0b111 == 2,
            gt: (b >> 3) & 0b11 == 1,
            lt: (b >> 3) & 0b11 == 2,
            ch: (b >> 5) & 1 == 1,
            incr: (b >> 6) & 0b11 == 3,
        }
    }

    fn words(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (on, w) in [
            (self.nx, "NX"),
            (self.xx, "XX"),
            (self.gt, "GT"),
            (self.lt, "LT"),
            (self.ch, "CH"),
            (self.incr, "INCR"),
        ] {
            if on {
                v.push(w.to_string());
            }
        }
        v
    }
}

#[derive(Debug, Clone)]
enum Op {
    Zadd {
        flags: u8,
        pairs: Vec<(usize, usize)>,
    },
    Zaddex {
        flags: u8,
        keep: bool,
        bound: Option<(bool, usize)>,
        ttl: (u8, i64),
        pairs: Vec<(usize, usize)>,
    },
    Zincrby(usize, usize),
    Zrem(Vec<usize>),
    RemRank(i64, i64),
    Advance(u64),
}

fn pairs() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0..SCORES.len(), 0..MEMBERS.len()), 1..4)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u8>(), pairs()).prop_map(|(flags, pairs)| Op::Zadd { flags, pairs }),
        4 => (any::<u8>(), any::<bool>(), prop::option::weighted(0.4, (any::<bool>(), 0usize..5)), (0u8..4, -30i64..1500), pairs())
            .prop_map(|(flags, keep, bound, ttl, pairs)| Op::Zaddex { flags, keep, bound, ttl, pairs }),
        1 => (0..SCORES.len(), 0..MEMBERS.len()).prop_map(|(s, m)| Op::Zincrby(s, m)),
        2 => prop::collection::vec(0..MEMBERS.len(), 1..3).prop_map(Op::Zrem),
        1 => (-4i64..4, -4i64..4).prop_map(|(a, b)| Op::RemRank(a, b)),
        3 => (0u64..1200).prop_map(Op::Advance),
    ]
}

/// The model: member → (score, deadline).
#[derive(Clone, Default)]
struct Model {
    m: BTreeMap<&'static str, (f64, Option<u64>)>,
}

enum Outcome {
    Added,
    Updated,
    Unchanged,
    Skipped,
}

impl Model {
    fn purge(&mut self, now: u64) {
        self.m.retain(|_, (_, d)| d.is_none_or(|t| t > now));
    }

    fn ordered(&self) -> Vec<(&'static str, f64)> {
        let mut v: Vec<_> = self.m.iter().map(|(k, (s, _))| (*k, *s)).collect();
        v.sort_by(|a, b| {
            a.1.partial_cmp(&b.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(b.0))
        });
        v
    }

    // Written the way Redis states the rule, on purpose.
    #[allow(clippy::nonminimal_bool)]
    fn validate(f: &Flags, n: usize) -> Option<Reply> {
        let e = |t: &str| Some(Reply::Error(t.to_string().into()));
        if f.nx && f.xx {
            return e("ERR XX and NX options at the same time are not compatible");
        }
        if (f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt) {
            return e("ERR GT, LT, and/or NX options at the same time are not compatible");
        }
        if f.incr && n > 1 {
            return e("ERR INCR option supports a single increment-element pair");
        }
        None
    }

    /// One member; `ttl` is (deadline, keepttl). Err on NaN.
    fn add(
        &mut self,
        f: &Flags,
        s: f64,
        m: &'static str,
        ttl: Option<(u64, bool)>,
    ) -> Result<(Outcome, f64), ()> {
        match self.m.get(m).copied() {
            Some((cur, dl)) => {
                if f.nx {
                    return Ok((Outcome::Skipped, cur));
                }
                let new = if f.incr { cur + s } else { s };
                if new.is_nan() {
                    return Err(());
                }
                if (f.lt && new >= cur) || (f.gt && new <= cur) {
                    return Ok((Outcome::Skipped, cur));
                }
                let dl = match ttl {
                    Some((t, false)) => Some(t),
                    _ => dl,
                };
                self.m.insert(m, (new, dl));
                Ok((
                    if new != cur {
                        Outcome::Updated
                    } else {
                        Outcome::Unchanged
                    },
                    new,
                ))
            }
            None => {
                if f.xx {
                    return Ok((Outcome::Skipped, s));
                }
                self.m.insert(m, (s, ttl.map(|t| t.0)));
                Ok((Outcome::Added, s))
            }
        }
    }

    fn add_all(
        &mut self,
        f: &Flags,
        pairs: &[(usize, usize)],
        ttl: Option<(u64, bool)>,
    ) -> Result<Reply, Reply> {
        let (mut added, mut updated, mut processed, mut last) = (0, 0, 0, 0.0);
        for &(si, mi) in pairs {
            match self.add(f, SCORES[si], MEMBERS[mi], ttl) {
                Err(()) => {
                    return Err(Reply::Error(
                        "ERR resulting score is not a number (NaN)".into(),
                    ))
                }
                Ok((o, s)) => {
                    match o {
                        Outcome::Added => added += 1,
                        Outcome::Updated => updated += 1,
                        _ => {}
                    }
                    if !matches!(o, Outcome::Skipped) {
                        processed += 1;
                    }
                    last = s;
                }
            }
        }
        Ok(if f.incr {
            if processed > 0 {
                Reply::Double(last)
            } else {
                Reply::Nil
            }
        } else {
            Reply::Int(if f.ch { added + updated } else { added })
        })
    }
}

fn score_arg(s: f64) -> String {
    format_double(s)
}

fn pair_args(pairs: &[(usize, usize)]) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|&(s, m)| [score_arg(SCORES[s]), MEMBERS[m].to_string()])
        .collect()
}

/// Runs `op` on both sides; returns (real reply, model reply).
/// What the server would append to its log, with the time of each entry:
/// expiry deletions, then the command itself or what it asked to be
/// logged as instead.
#[derive(Default)]
struct Log(Vec<(u64, Vec<Bytes>)>);

impl Log {
    fn run(&mut self, h: &mut Harness, args: &[&str]) -> Reply {
        let reply = h.run(args);
        for (_, cmd) in h.fx.propagate.drain(..) {
            self.0.push((h.now, cmd));
        }
        let is_write = crate::table::lookup(args[0].as_bytes()).is_some_and(|s| s.is_write());
        match h.fx.rewrite.take() {
            Some(cmds) => self.0.extend(cmds.into_iter().map(|c| (h.now, c))),
            None if is_write && !reply.is_error() => self.0.push((
                h.now,
                args.iter()
                    .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                    .collect(),
            )),
            None => {}
        }
        reply
    }
}

fn step(h: &mut Harness, log: &mut Log, model: &mut Model, op: &Op) -> (Reply, Reply) {
    let now = h.now;
    model.purge(now);
    let mut args: Vec<String>;
    let expect = match op {
        Op::Advance(ms) => {
            h.advance(*ms);
            return (Reply::Ok, Reply::Ok);
        }
        Op::Zadd { flags, pairs } => {
            let f = Flags::from_bits(*flags);
            args = vec!["ZADD".into(), "z".into()];
            args.extend(f.words());
            args.extend(pair_args(pairs));
            match Model::validate(&f, pairs.len()) {
                Some(e) => e,
                None if f.xx && model.m.is_empty() => {
                    model.add_all(&f, &[], None).unwrap_or(Reply::Nil)
                }
                None => model.add_all(&f, pairs, None).unwrap_or_else(|e| e),
            }
        }
        Op::Zincrby(s, m) => {
            args = vec![
                "ZINCRBY".into(),
                "z".into(),
                score_arg(SCORES[*s]),
                MEMBERS[*m].into(),
            ];
            let f = Flags {
                incr: true,
                ..Flags::default()
            };
            model.add_all(&f, &[(*s, *m)], None).unwrap_or_else(|e| e)
        }
        Op::Zrem(ms) => {
            args = vec!["ZREM".into(), "z".into()];
            let mut n = 0;
            for &mi in ms {
                args.push(MEMBERS[mi].into());
                n += i64::from(model.m.remove(MEMBERS[mi]).is_some());
            }
            Reply::Int(n)
        }
        Op::RemRank(a, b) => {
            args = vec![
                "ZREMRANGEBYRANK".into(),
                "z".into(),
                a.to_string(),
                b.to_string(),
            ];
            let order = model.ordered();
            let n = order.len() as i64;
            let start = if *a < 0 { (n + a).max(0) } else { *a };
            let end = if *b < 0 { n + b } else { (*b).min(n - 1) };
            let mut gone = 0;
            if start <= end && start < n {
                for (m, _) in &order[start as usize..=end as usize] {
                    model.m.remove(m);
                    gone += 1;
                }
            }
            Reply::Int(gone)
        }
        Op::Zaddex {
            flags,
            keep,
            bound,
            ttl,
            pairs,
        } => {
            let f = Flags::from_bits(*flags);
            args = vec!["ZADDEX".into(), "z".into()];
            args.extend(f.words());
            if *keep {
                args.push("KEEPTTL".into());
            }
            if let Some((cap, n)) = bound {
                args.push(if *cap { "CAP" } else { "LIMIT" }.into());
                args.push(n.to_string());
            }
            let (unit, v) = *ttl;
            let (word, value, deadline) = match unit {
                0 => ("PX", v.max(1), now + v.max(1) as u64),
                1 => (
                    "EX",
                    v.rem_euclid(3) + 1,
                    now + (v.rem_euclid(3) + 1) as u64 * 1000,
                ),
                _ => ("PXAT", now as i64 + v, (now as i64 + v) as u64),
            };
            args.push(word.into());
            args.push(value.to_string());
            args.extend(pair_args(pairs));
            match Model::validate(&f, pairs.len()) {
                Some(e) => e,
                None if f.xx && model.m.is_empty() => {
                    model.add_all(&f, &[], None).unwrap_or(Reply::Nil)
                }
                None => {
                    let before = model.clone();
                    match model.add_all(&f, pairs, Some((deadline, *keep))) {
                        Err(e) => e,
                        Ok(reply) => {
                            let live = model
                                .m
                                .values()
                                .filter(|(_, d)| d.is_none_or(|t| t > now))
                                .count();
                            match bound {
                                Some((false, max)) if live > *max => {
                                    *model = before;
                                    Reply::Int(-1)
                                }
                                _ => {
                                    model.purge(now);
                                    if let Some((true, cap)) = bound {
                                        let order = model.ordered();
                                        let excess = order.len().saturating_sub(*cap);
                                        for (m, _) in &order[..excess] {
                                            model.m.remove(m);
                                        }
                                    }
                                    reply
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    (log.run(h, &refs), expect)
}

/// Compares everything observable about key `z` with the model.
fn compare(h: &mut Harness, log: &mut Log, model: &mut Model) -> Result<(), TestCaseError> {
    model.purge(h.now);
    let got = log.run(h, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
    let mut want = Vec::new();
    for (m, s) in model.ordered() {
        want.push(Reply::Bulk(Bytes::from(m)));
        want.push(Reply::Double(s));
    }
    prop_assert_eq!(got, Reply::Array(want));
    prop_assert_eq!(
        log.run(h, &["ZCARD", "z"]),
        Reply::Int(model.m.len() as i64)
    );
    match h.store.dbs[0].raw_get(b"z").map(|e| &e.value) {
        None => prop_assert!(model.m.is_empty()),
        Some(Value::ZSet(z)) => {
            z.check();
            for (i, (m, _)) in model.ordered().iter().enumerate() {
                prop_assert_eq!(z.deadline(m.as_bytes()), model.m[m].1);
                prop_assert_eq!(z.rank(m.as_bytes(), false), Some(i));
            }
        }
        Some(_) => prop_assert!(false, "z is not a sorted set"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10000))]

    #[test]
    fn zset_matches_model(ops in prop::collection::vec(op(), 1..14)) {
        let mut h = Harness::new();
        let mut log = Log::default();
        let mut model = Model::default();
        for op in &ops {
            let (got, want) = step(&mut h, &mut log, &mut model, op);
            prop_assert_eq!(got, want, "op {:?}", op);
            compare(&mut h, &mut log, &mut model)?;
        }
        // Replaying the log, each entry at its time, rebuilds the same set.
        let mut replay = Harness::new();
        for (at, cmd) in &log.0 {
            replay.now = *at;
            let r = replay.run_bytes(cmd);
            prop_assert!(!r.is_error(), "replaying {:?}: {:?}", cmd, r);
        }
        replay.now = h.now;
        prop_assert_eq!(
            replay.run(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
            h.run(&["ZRANGE", "z", "0", "-1", "WITHSCORES"])
        );
        // Members due at the same millisecond come in id order, which
        // replay need not reproduce: compare the sorted pairs.
        let deadlines = |h: &Harness| match h.store.dbs[0].raw_get(b"z").map(|e| &e.value) {
            Some(Value::ZSet(z)) => {
                let mut v: Vec<_> = z.deadlines().iter().map(|(m, t)| (m.to_vec(), t)).collect();
                v.sort();
                v
            }
            _ => Vec::new(),
        };
        prop_assert_eq!(deadlines(&replay), deadlines(&h));
    }
}
