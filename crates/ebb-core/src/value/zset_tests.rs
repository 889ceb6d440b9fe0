//! Tests of [`ZSetValue`](super::ZSetValue) in both its forms.

use super::*;

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn members<'a>(it: impl Iterator<Item = (&'a [u8], f64)>) -> Vec<Bytes> {
    it.map(|(m, _)| Bytes::copy_from_slice(m)).collect()
}

#[test]
fn order_rank_and_ranges() {
    let mut z = ZSetValue::new();
    assert!(z.insert(b("b"), 2.0));
    assert!(z.insert(b("a"), 1.0));
    assert!(z.insert(b("c"), 2.0));
    assert!(!z.insert(b("a"), 3.0));
    assert_eq!(members(z.iter()), vec![b("b"), b("c"), b("a")]);
    assert_eq!(z.rank(b"a", false), Some(2));
    assert_eq!(z.rank(b"a", true), Some(0));
    assert_eq!(z.rank(b"x", true), None);
    let r = members(z.range_by_score(Bound::Excluded(2.0), Bound::Unbounded));
    assert_eq!(r, vec![b("a")]);
    z.set_deadline(b"c", 5);
    assert_eq!(z.due_count(5), 1);
    assert_eq!(z.pop_due(5), Some(b("c")));
    assert_eq!(z.len(), 2);
    z.check();
}

#[test]
fn negative_zero_is_stored_as_zero() {
    let mut z = ZSetValue::new();
    z.insert(b("a"), -0.0);
    assert!(z
        .score(b"a")
        .is_some_and(|s| s == 0.0 && s.is_sign_positive()));
}

#[test]
fn score_spans_and_counts() {
    let mut z = ZSetValue::new();
    for (i, m) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        z.insert(b(m), (i + 1) as f64);
    }
    let r = ScoreRange {
        min: 2.0,
        min_exclusive: true,
        max: 4.0,
        max_exclusive: false,
    };
    assert_eq!(z.score_span(&r), (2, 4));
    assert_eq!(z.count_in_score_range(&r), 2);
    assert_eq!(z.score_first(&r), Some(2));
    assert_eq!(z.score_last(&r), Some(3));
    let empty = ScoreRange {
        min: 3.0,
        min_exclusive: true,
        max: 3.0,
        max_exclusive: false,
    };
    assert!(empty.is_empty());
    assert_eq!(z.score_first(&empty), None);
    assert_eq!(z.count_in_score_range(&ScoreRange::inclusive(4.0, 2.0)), 0);
    let all = ScoreRange::inclusive(f64::NEG_INFINITY, f64::INFINITY);
    assert_eq!(z.count_in_score_range(&all), 5);
    assert_eq!(members(z.range_by_rank(1, 3).rev()), vec![b("c"), b("b")]);
    assert_eq!(
        z.remove_rank_range(0, 2),
        vec![(b("a"), 1.0), (b("b"), 2.0)]
    );
    assert_eq!(z.pop(true), Some((b("e"), 5.0)));
    assert_eq!(z.pop(false), Some((b("c"), 3.0)));
    z.check();
}

#[test]
fn lex_walks_match_redis_on_small_and_large_sets() {
    for n in [26usize, 500] {
        let mut z = ZSetValue::new();
        for i in 0..n {
            z.insert(Bytes::from(format!("m{i:04}")), 0.0);
        }
        let r = LexRange {
            min: LexBound::Inclusive(b("m0003")),
            max: LexBound::Exclusive(b("m0010")),
        };
        assert_eq!(z.lex_first(&r), Some(3));
        assert_eq!(z.lex_last(&r), Some(9));
        assert_eq!(z.count_in_lex_range(&r), 7);
        let all = LexRange {
            min: LexBound::Min,
            max: LexBound::Max,
        };
        assert_eq!(z.count_in_lex_range(&all), n);
        let none = LexRange {
            min: LexBound::Max,
            max: LexBound::Max,
        };
        assert!(none.is_empty());
        assert_eq!(z.lex_first(&none), None);
        let above = LexRange {
            min: LexBound::Exclusive(b("z")),
            max: LexBound::Max,
        };
        assert_eq!(z.lex_first(&above), None);
        assert_eq!(z.lex_last(&above), None);
    }
}

#[test]
fn lex_with_mixed_scores_walks_like_a_listpack() {
    // Order: b(1) a(2) c(3). A forward walk from the head stops at the
    // first member >= "[a", which is "b" (not "a").
    let mut z = ZSetValue::new();
    z.insert(b("b"), 1.0);
    z.insert(b("a"), 2.0);
    z.insert(b("c"), 3.0);
    let r = LexRange {
        min: LexBound::Inclusive(b("a")),
        max: LexBound::Inclusive(b("b")),
    };
    assert_eq!(z.lex_first(&r), Some(0));
    assert_eq!(z.count_in_lex_range(&r), 2);
    // The last member "c" is above "[b", so a backward walk starts at "a".
    assert_eq!(z.lex_last(&r), Some(1));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Random writes to a small set (packed, sometimes growing past the
    /// packed limits) against a model of scores and deadlines; every
    /// read the commands use must agree with it.
    #[test]
    fn packed_sets_match_a_model(
        ops in proptest::collection::vec(
            (0u8..140, -3i64..40, 0u8..7, proptest::option::of(0u64..50)),
            1..400,
        ),
        long in proptest::bool::weighted(0.1),
    ) {
        let mut z = ZSetValue::new();
        let mut model: std::collections::BTreeMap<Bytes, (f64, Option<u64>)> = Default::default();
        for (m, s, op, t) in ops {
            let m = if long && m == 7 { Bytes::from(vec![b'x'; 70]) } else { Bytes::from(format!("m{m}")) };
            let score = if s % 5 == 0 { s as f64 + 0.25 } else { s as f64 * 1e12 };
            match op {
                0 | 1 => {
                    proptest::prop_assert_eq!(z.insert(m.clone(), score), !model.contains_key(&m));
                    let t0 = model.get(&m).and_then(|e| e.1);
                    model.insert(m, (score, t0));
                }
                2 => {
                    proptest::prop_assert_eq!(z.remove(&m), model.remove(&m).map(|e| e.0));
                }
                3 => {
                    let at = t.map_or(u64::MAX - 1, |t| t + 1_700_000_000_000);
                    proptest::prop_assert_eq!(z.set_deadline(&m, at), model.contains_key(&m));
                    if let Some(e) = model.get_mut(&m) {
                        e.1 = Some(at);
                    }
                }
                4 => {
                    let had = model.get_mut(&m).and_then(|e| e.1.take());
                    proptest::prop_assert_eq!(z.clear_deadline(&m), had);
                }
                6 => {
                    let mut sorted: Vec<(Bytes, f64)> = model.iter().map(|(m, e)| (m.clone(), e.0)).collect();
                    sorted.sort_by(|a, b| Score(a.1).cmp(&Score(b.1)).then(a.0.cmp(&b.0)));
                    let start = m.len() % 4;
                    let end = start + s.rem_euclid(3) as usize;
                    let want: Vec<(Bytes, f64)> = sorted.iter().skip(start).take(end.saturating_sub(start)).cloned().collect();
                    proptest::prop_assert_eq!(z.remove_rank_range(start, end), want.clone());
                    for (gone, _) in want {
                        model.remove(&gone);
                    }
                }
                _ => {
                    let now = t.unwrap_or(0) + 1_700_000_000_000;
                    while let Some(gone) = z.pop_due(now) {
                        let e = model.remove(&gone);
                        proptest::prop_assert!(e.is_some_and(|e| e.1.is_some_and(|t| t <= now)));
                    }
                    proptest::prop_assert!(model.values().all(|e| e.1.is_none_or(|t| t > now)));
                }
            }
        }
        z.check();
        let mut want: Vec<(Bytes, f64)> = model.iter().map(|(m, e)| (m.clone(), e.0)).collect();
        want.sort_by(|a, b| Score(a.1).cmp(&Score(b.1)).then(a.0.cmp(&b.0)));
        let got: Vec<(Bytes, f64)> = z.iter().map(|(m, s)| (Bytes::copy_from_slice(m), s)).collect();
        proptest::prop_assert_eq!(&got, &want);
        let back: Vec<(Bytes, f64)> = z.iter().rev().map(|(m, s)| (Bytes::copy_from_slice(m), s)).collect();
        proptest::prop_assert_eq!(back.len(), want.len());
        proptest::prop_assert!(back.iter().rev().eq(want.iter()));
        for (i, (m, s)) in want.iter().enumerate() {
            proptest::prop_assert_eq!(z.rank(m, false), Some(i));
            proptest::prop_assert_eq!(z.rank(m, true), Some(want.len() - 1 - i));
            proptest::prop_assert_eq!(z.by_rank(i), Some((&m[..], *s)));
            proptest::prop_assert_eq!(z.deadline(m), model[m].1);
        }
        let timed: Vec<u64> = model.values().filter_map(|e| e.1).collect();
        let d = z.deadlines();
        proptest::prop_assert_eq!(d.len(), timed.len());
        proptest::prop_assert_eq!(d.earliest(), timed.iter().min().copied());
        proptest::prop_assert_eq!(d.latest(), timed.iter().max().copied());
        let walked: Vec<u64> = d.iter().map(|(m, t)| { assert_eq!(model[m].1, Some(t)); t }).collect();
        proptest::prop_assert!(walked.windows(2).all(|w| w[0] <= w[1]));
        proptest::prop_assert_eq!(walked.len(), timed.len());
        let r = ScoreRange { min: 0.0, min_exclusive: true, max: 2e13, max_exclusive: false };
        let n = want.iter().filter(|(_, s)| r.above_min(*s) && r.below_max(*s)).count();
        proptest::prop_assert_eq!(z.count_in_score_range(&r), n);
        proptest::prop_assert_eq!(z.first(false), want.first().map(|(m, s)| (&m[..], *s)));
        proptest::prop_assert_eq!(z.first(true), want.last().map(|(m, s)| (&m[..], *s)));
        if z.is_packed() {
            proptest::prop_assert!(want.len() <= 128 && want.iter().all(|(m, _)| m.len() <= 64));
            proptest::prop_assert!(timed.iter().all(|&t| t < u64::MAX - 1));
        }
    }

    /// Many inserts and removals (enough to split and merge chunks)
    /// against a BTreeMap; ranks, rank access and spans must agree.
    #[test]
    fn large_random_sets_match_a_btreemap(
        ops in proptest::collection::vec((0u16..900, 0u8..40, proptest::bool::weighted(0.6)), 1..3000)
    ) {
        let mut z = ZSetValue::new();
        let mut model: std::collections::BTreeMap<Bytes, f64> = Default::default();
        for (m, s, add) in ops {
            let m = Bytes::from(format!("m{m}"));
            if add {
                proptest::prop_assert_eq!(z.insert(m.clone(), s as f64), !model.contains_key(&m));
                model.insert(m, s as f64);
            } else {
                proptest::prop_assert_eq!(z.remove(&m), model.remove(&m));
            }
        }
        z.check();
        let mut want: Vec<(Bytes, f64)> = model.into_iter().collect();
        want.sort_by(|a, b| Score(a.1).cmp(&Score(b.1)).then(a.0.cmp(&b.0)));
        let got: Vec<(Bytes, f64)> = z.iter().map(|(m, s)| (Bytes::copy_from_slice(m), s)).collect();
        proptest::prop_assert_eq!(&got, &want);
        for (i, (m, _)) in want.iter().enumerate().step_by(7) {
            proptest::prop_assert_eq!(z.rank(m, false), Some(i));
            proptest::prop_assert_eq!(z.by_rank(i).map(|(k, _)| k), Some(&m[..]));
        }
        let r = ScoreRange { min: 10.0, min_exclusive: true, max: 30.0, max_exclusive: false };
        let n = want.iter().filter(|(_, s)| r.above_min(*s) && r.below_max(*s)).count();
        proptest::prop_assert_eq!(z.count_in_score_range(&r), n);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// A new sorted set filled at once by a plain ZADD is the set the same
    /// pairs added one by one make (a repeat with another score updates
    /// it), byte for byte; when it would not pack, nothing is done.
    #[test]
    fn filled_at_once_as_one_by_one(
        picks in proptest::collection::vec((0u8..5, 0i64..200, 0u8..8), 2..140),
        first_again in proptest::bool::weighted(0.3),
    ) {
        let owned: Vec<(f64, Vec<u8>)> = picks
            .iter()
            .map(|&(kind, v, s)| {
                let m = match kind {
                    0 | 1 => v.to_string().into_bytes(),
                    2 => format!("-{}", v % 9).into_bytes(),
                    _ if v % 60 == 7 => vec![b'x'; 70],
                    _ => format!("m{}", v % 23).into_bytes(),
                };
                let score = match s {
                    0 => -0.0,
                    1 => 0.0,
                    2 => v as f64 + 0.5,
                    3 => -(v as f64) * 3.0,
                    4 => 1e300,
                    5 => f64::NEG_INFINITY,
                    6 => 9_007_199_254_740_993.0 + v as f64,
                    _ => (v % 5) as f64,
                };
                (score, m)
            })
            .collect();
        let mut owned = owned;
        if first_again {
            // The only member so far gets a new score.
            owned[1].1 = owned[0].1.clone();
        }
        let pairs: Vec<(f64, &[u8])> = owned.iter().map(|(s, m)| (*s, &m[..])).collect();
        let mut one = ZSetValue::new();
        let mut added = 0;
        for &(score, m) in &pairs {
            match one.lookup(m) {
                Some((r, cur)) if cur != score => {
                    let _ = one.set_score_at(r, score);
                }
                Some(_) => {}
                None => {
                    one.insert_new(m, score);
                    added += 1;
                }
            }
        }
        let mut all = ZSetValue::new();
        match all.fill_packed(&pairs) {
            Some(n) => {
                proptest::prop_assert!(one.is_packed());
                proptest::prop_assert_eq!(n, added);
                proptest::prop_assert_eq!(format!("{all:?}"), format!("{one:?}"));
                proptest::prop_assert!(all.fill_packed(&pairs).is_none());
            }
            None => proptest::prop_assert!(!one.is_packed()),
        }
    }
}
