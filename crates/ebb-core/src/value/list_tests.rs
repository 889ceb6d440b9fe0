//! Tests of [`ListValue`](super::ListValue) in both its forms.

use super::*;
use proptest::prelude::*;

fn list(items: &[&str]) -> ListValue {
    items
        .iter()
        .map(|s| Bytes::copy_from_slice(s.as_bytes()))
        .collect()
}

fn strs(l: &ListValue) -> Vec<String> {
    l.iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

#[test]
fn indexes_and_ranges() {
    assert_eq!(resolve_index(3, 0), Some(0));
    assert_eq!(resolve_index(3, -1), Some(2));
    assert_eq!(resolve_index(3, 3), None);
    assert_eq!(resolve_index(3, -4), None);
    assert_eq!(resolve_index(3, i64::MIN), None);
    assert_eq!(resolve_index(0, 0), None);
    assert_eq!(resolve_range(5, 0, -1), Some((0, 4)));
    assert_eq!(resolve_range(5, -100, 100), Some((0, 4)));
    assert_eq!(resolve_range(5, 3, 1), None);
    assert_eq!(resolve_range(5, 5, 10), None);
    assert_eq!(resolve_range(5, 0, -6), None);
    assert_eq!(resolve_range(5, i64::MIN, i64::MAX), Some((0, 4)));
}

#[test]
fn pops_many_in_pop_order() {
    let mut l = list(&["a", "b", "c", "d"]);
    assert_eq!(
        l.pop_many(End::Right, 3),
        vec![Bytes::from("d"), Bytes::from("c"), Bytes::from("b")]
    );
    assert_eq!(l.pop_many(End::Left, 10), vec![Bytes::from("a")]);
    assert!(l.is_empty());
}

#[test]
fn removes_from_either_end() {
    let mut l = list(&["a", "x", "a", "y", "a"]);
    assert_eq!(l.remove_matching(b"a", -2), 2);
    assert_eq!(strs(&l), ["a", "x", "y"]);
    let mut l = list(&["a", "x", "a", "y", "a"]);
    assert_eq!(l.remove_matching(b"a", 1), 1);
    assert_eq!(strs(&l), ["x", "a", "y", "a"]);
    let mut l = list(&["a", "x", "a"]);
    assert_eq!(l.remove_matching(b"a", i64::MIN), 2);
    assert_eq!(strs(&l), ["x"]);
}

#[test]
fn positions_follow_lpos() {
    let l = list(&["a", "b", "a", "c", "a", "d", "a"]);
    let q = |rank, count, maxlen| PosQuery {
        rank,
        count,
        maxlen,
    };
    assert_eq!(l.positions(b"a", q(1, None, 0)), vec![0]);
    assert_eq!(l.positions(b"a", q(-2, Some(2), 0)), vec![4, 2]);
    assert_eq!(l.positions(b"a", q(2, Some(0), 5)), vec![2, 4]);
    assert_eq!(l.positions(b"a", q(1, Some(0), 1)), vec![0]);
    assert_eq!(l.positions(b"a", q(i64::MIN, Some(1), 0)), vec![6, 4, 2, 0]);
    assert_eq!(
        l.positions(b"a", q(-i64::MAX, Some(1), 0)),
        Vec::<usize>::new()
    );
    assert_eq!(l.positions(b"zz", q(1, None, 0)), Vec::<usize>::new());
}

#[derive(Debug, Clone)]
enum Op {
    Push(bool, u8),
    Pop(bool, usize),
    Insert(u8, u8, bool),
    Remove(u8, i64),
    Trim(i64, i64),
    Set(i64, u8),
    PopOne(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<bool>(), 0u8..4).prop_map(|(l, v)| Op::Push(l, v)),
        (any::<bool>(), 0usize..4).prop_map(|(l, n)| Op::Pop(l, n)),
        (0u8..4, 0u8..4, any::<bool>()).prop_map(|(p, v, a)| Op::Insert(p, v, a)),
        (0u8..4, -3i64..4).prop_map(|(v, c)| Op::Remove(v, c)),
        (-8i64..8, -8i64..8).prop_map(|(s, e)| Op::Trim(s, e)),
        (-6i64..6, 0u8..4).prop_map(|(i, v)| Op::Set(i, v)),
        any::<bool>().prop_map(Op::PopOne),
    ]
}

/// One-byte elements, but `d` is longer than a packed list holds: a
/// list that ever held it is a queue from then on.
fn b(v: u8) -> Bytes {
    let n = if v == 3 { 70 } else { 1 };
    Bytes::from(vec![b'a' + v; n])
}

/// A plain Vec model with the index rules written out directly.
fn model_apply(m: &mut Vec<Bytes>, o: &Op) -> usize {
    match *o {
        Op::Push(left, v) => {
            if left {
                m.insert(0, b(v))
            } else {
                m.push(b(v))
            }
            0
        }
        Op::Pop(left, n) => {
            let n = n.min(m.len());
            if left {
                m.drain(..n);
            } else {
                m.truncate(m.len() - n);
            }
            n
        }
        Op::Insert(p, v, after) => match m.iter().position(|e| *e == b(p)) {
            Some(i) => {
                m.insert(if after { i + 1 } else { i }, b(v));
                1
            }
            None => 0,
        },
        Op::Remove(v, c) => {
            let idx: Vec<usize> = if c >= 0 {
                let all = m
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| **e == b(v))
                    .map(|(i, _)| i);
                if c == 0 {
                    all.collect()
                } else {
                    all.take(c as usize).collect()
                }
            } else {
                let all = m
                    .iter()
                    .enumerate()
                    .rev()
                    .filter(|(_, e)| **e == b(v))
                    .map(|(i, _)| i);
                all.take((-c) as usize).collect()
            };
            let n = idx.len();
            let mut i = 0;
            m.retain(|_| {
                let keep = !idx.contains(&i);
                i += 1;
                keep
            });
            n
        }
        Op::Trim(s, e) => {
            let len = m.len() as i64;
            let norm = |x: i64| if x < 0 { (len + x).max(-1) } else { x };
            let (s, e) = (norm(s).max(0), norm(e).min(len - 1));
            let before = m.len();
            if s > e {
                m.clear();
            } else {
                *m = m[s as usize..=e as usize].to_vec();
            }
            before - m.len()
        }
        Op::Set(i, v) => {
            let len = m.len() as i64;
            let i = if i < 0 { len + i } else { i };
            if (0..len).contains(&i) {
                m[i as usize] = b(v);
                1
            } else {
                0
            }
        }
        Op::PopOne(left) => match (left, m.is_empty()) {
            (_, true) => 0,
            (true, false) => {
                m.remove(0);
                1
            }
            (false, false) => {
                m.pop();
                1
            }
        },
    }
}

fn apply(l: &mut ListValue, o: &Op) -> usize {
    match *o {
        Op::Push(left, v) => {
            l.push_at(if left { End::Left } else { End::Right }, b(v));
            0
        }
        Op::Pop(left, n) => l
            .pop_many(if left { End::Left } else { End::Right }, n)
            .len(),
        Op::Insert(p, v, after) => l.insert_at_pivot(&b(p), b(v), after) as usize,
        Op::Remove(v, c) => l.remove_matching(&b(v), c),
        Op::Trim(s, e) => l.trim_to(s, e),
        Op::Set(i, v) => match resolve_index(l.len(), i) {
            Some(i) => {
                l.set(i, b(v));
                1
            }
            None => 0,
        },
        Op::PopOne(left) => l
            .pop_at(if left { End::Left } else { End::Right })
            .map_or(0, |_| 1),
    }
}

/// Elements of the given lengths, each of one letter.
fn elements(lens: &[usize]) -> Vec<Vec<u8>> {
    lens.iter()
        .enumerate()
        .map(|(i, &n)| vec![b'a' + (i % 26) as u8; n])
        .collect()
}

/// The list `items` pushed one at a time at `end` of an empty list make.
fn pushed_one_by_one(items: &[&[u8]], end: End) -> ListValue {
    let mut one = ListValue::new();
    for v in items {
        one.push_slice(end, v);
    }
    one
}

proptest! {
    /// A new list built in one go is the list the pushes one by one
    /// make, byte for byte, at either end; when it would not pack,
    /// nothing is built.
    #[test]
    fn packed_from_as_pushed_one_by_one(
        lens in proptest::collection::vec(0usize..70, 0..140),
        left in any::<bool>(),
    ) {
        let owned = elements(&lens);
        let items: Vec<&[u8]> = owned.iter().map(|v| &v[..]).collect();
        let end = if left { End::Left } else { End::Right };
        let one = pushed_one_by_one(&items, end);
        match ListValue::packed_from(&items, end) {
            Some(all) => {
                prop_assert!(one.is_packed());
                prop_assert_eq!(format!("{all:?}"), format!("{one:?}"));
            }
            None => prop_assert!(items.is_empty() || !one.is_packed()),
        }
    }

    /// Any new list built in one go, packed or in nodes, is the list
    /// the pushes one by one make, node for node.
    #[test]
    fn from_pushes_as_pushed_one_by_one(
        lens in proptest::collection::vec(0usize..90, 0..700),
        short in any::<bool>(),
        left in any::<bool>(),
    ) {
        let lens: Vec<usize> = lens.iter().map(|&n| if short { n % 20 } else { n }).collect();
        let owned = elements(&lens);
        let items: Vec<&[u8]> = owned.iter().map(|v| &v[..]).collect();
        let end = if left { End::Left } else { End::Right };
        let one = pushed_one_by_one(&items, end);
        let all = ListValue::from_pushes(&items, end);
        prop_assert_eq!(all.is_packed(), one.is_packed());
        prop_assert_eq!(format!("{all:?}"), format!("{one:?}"));
    }

    #[test]
    fn list_ops_match_model(ops in proptest::collection::vec(op(), 0..60)) {
        let mut l = ListValue::new();
        let mut m: Vec<Bytes> = Vec::new();
        let mut spilled = false;
        for o in &ops {
            let got = apply(&mut l, o);
            let want = model_apply(&mut m, o);
            prop_assert_eq!(got, want, "{:?}", o);
            prop_assert_eq!(l.iter_bytes().collect::<Vec<_>>(), m.clone());
            spilled |= m.iter().any(|e| e.len() > 1);
            prop_assert_eq!(l.is_packed(), !spilled);
        }
    }

    #[test]
    fn positions_match_model(items in proptest::collection::vec(0u8..3, 0..20),
                             rank in prop_oneof![1i64..4, -4i64..0],
                             count in proptest::option::of(0i64..4),
                             maxlen in 0i64..10) {
        let l: ListValue = items.iter().map(|&v| b(v)).collect();
        let n = l.len();
        let order: Vec<usize> = if rank > 0 { (0..n).collect() } else { (0..n).rev().collect() };
        let scan = if maxlen == 0 { n } else { (maxlen as usize).min(n) };
        let hits: Vec<usize> = order[..scan].iter().copied().filter(|&i| l.get(i) == Some(b(0))).collect();
        let skip = (rank.unsigned_abs() - 1) as usize;
        let rest: Vec<usize> = hits.into_iter().skip(skip).collect();
        let want: Vec<usize> = match count {
            None => rest.into_iter().take(1).collect(),
            Some(0) => rest,
            Some(c) => rest.into_iter().take(c as usize).collect(),
        };
        prop_assert_eq!(l.positions(&b(0), PosQuery { rank, count, maxlen }), want);
    }
}
