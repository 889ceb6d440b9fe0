//! Lists: a double-ended queue of byte strings, plus the index arithmetic
//! and scans the list commands share ([`ListOps`]).

use bytes::Bytes;
use std::collections::VecDeque;

/// A list value.
pub type ListValue = VecDeque<Bytes>;

/// Which end of a list an operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The head (`LEFT`, index 0).
    Left,
    /// The tail (`RIGHT`, index -1).
    Right,
}

impl End {
    /// Parses `LEFT`/`RIGHT`, ASCII case-insensitively.
    pub fn parse(arg: &[u8]) -> Option<End> {
        if arg.eq_ignore_ascii_case(b"left") {
            Some(End::Left)
        } else if arg.eq_ignore_ascii_case(b"right") {
            Some(End::Right)
        } else {
            None
        }
    }

    /// The keyword as Redis writes it when it logs a command (`LEFT`/`RIGHT`).
    pub fn keyword(self) -> &'static str {
        match self {
            End::Left => "LEFT",
            End::Right => "RIGHT",
        }
    }

    /// The pop command and event name for this end (`lpop`/`rpop`).
    pub fn pop_name(self) -> &'static str {
        match self {
            End::Left => "lpop",
            End::Right => "rpop",
        }
    }

    /// The push event name for this end (`lpush`/`rpush`).
    pub fn push_name(self) -> &'static str {
        match self {
            End::Left => "lpush",
            End::Right => "rpush",
        }
    }
}

/// Resolves a possibly negative Redis index (`-1` is the last element)
/// against a length; `None` when it falls outside the list.
pub fn resolve_index(len: usize, index: i64) -> Option<usize> {
    let len = len as i64;
    let i = if index < 0 { len + index } else { index };
    if (0..len).contains(&i) {
        Some(i as usize)
    } else {
        None
    }
}

/// Resolves an inclusive `start..=stop` range with negative indexes as
/// LRANGE and LTRIM do; `None` when the range is empty.
pub fn resolve_range(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 { len + start } else { start };
    let mut stop = if stop < 0 { len + stop } else { stop };
    if start < 0 {
        start = 0;
    }
    if start > stop || start >= len {
        return None;
    }
    if stop >= len {
        stop = len - 1;
    }
    Some((start as usize, stop as usize))
}

/// Options of an LPOS scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PosQuery {
    /// Which match to start from: 1 the first from the head, -1 the first
    /// from the tail; never 0.
    pub rank: i64,
    /// How many matches to report (`Some(0)` = all); `None` for a single one.
    pub count: Option<i64>,
    /// How many elements to scan at most (0 = all).
    pub maxlen: i64,
}

/// List operations shared by the list commands, on top of `VecDeque`.
pub trait ListOps {
    /// Pushes one element at `end`.
    fn push_at(&mut self, end: End, v: Bytes);
    /// Pops one element from `end`.
    fn pop_at(&mut self, end: End) -> Option<Bytes>;
    /// Pops up to `n` elements from `end`, in pop order.
    fn pop_many(&mut self, end: End, n: usize) -> Vec<Bytes>;
    /// Inserts `v` before (or after) the first element equal to `pivot`
    /// from the head; false when there is no such element.
    fn insert_at_pivot(&mut self, pivot: &[u8], v: Bytes, after: bool) -> bool;
    /// LREM: removes elements equal to `v`: the first `count` from the head
    /// if positive, from the tail if negative, all if 0. Returns how many.
    fn remove_matching(&mut self, v: &[u8], count: i64) -> usize;
    /// LTRIM: keeps only `start..=stop`; returns how many were removed.
    fn trim_to(&mut self, start: i64, stop: i64) -> usize;
    /// LPOS: indexes of the elements equal to `v`, per the query.
    fn positions(&self, v: &[u8], q: PosQuery) -> Vec<usize>;
}

impl ListOps for ListValue {
    fn push_at(&mut self, end: End, v: Bytes) {
        match end {
            End::Left => self.push_front(v),
            End::Right => self.push_back(v),
        }
    }

    fn pop_at(&mut self, end: End) -> Option<Bytes> {
        match end {
            End::Left => self.pop_front(),
            End::Right => self.pop_back(),
        }
    }

    fn pop_many(&mut self, end: End, n: usize) -> Vec<Bytes> {
        let n = n.min(self.len());
        match end {
            End::Left => self.drain(..n).collect(),
            End::Right => {
                let at = self.len() - n;
                let mut out: Vec<Bytes> = self.drain(at..).collect();
                out.reverse();
                out
            }
        }
    }

    fn insert_at_pivot(&mut self, pivot: &[u8], v: Bytes, after: bool) -> bool {
        match self.iter().position(|e| &e[..] == pivot) {
            Some(i) => {
                self.insert(if after { i + 1 } else { i }, v);
                true
            }
            None => false,
        }
    }

    fn remove_matching(&mut self, v: &[u8], count: i64) -> usize {
        // i64::MIN has no positive counterpart; Redis then removes them all.
        let limit = match count.unsigned_abs() {
            0 => u64::MAX,
            n => n,
        };
        let before = self.len();
        let mut removed: u64 = 0;
        if count >= 0 {
            self.retain(|e| {
                if removed < limit && &e[..] == v {
                    removed += 1;
                    false
                } else {
                    true
                }
            });
        } else {
            // Mark from the tail, then compact in one pass.
            let mut drop = vec![false; self.len()];
            for (i, e) in self.iter().enumerate().rev() {
                if removed == limit {
                    break;
                }
                if &e[..] == v {
                    drop[i] = true;
                    removed += 1;
                }
            }
            if removed > 0 {
                let mut i = 0;
                self.retain(|_| {
                    let keep = !drop[i];
                    i += 1;
                    keep
                });
            }
        }
        before - self.len()
    }

    fn trim_to(&mut self, start: i64, stop: i64) -> usize {
        let before = self.len();
        match resolve_range(before, start, stop) {
            None => self.clear(),
            Some((s, e)) => {
                self.truncate(e + 1);
                self.drain(..s);
            }
        }
        before - self.len()
    }

    fn positions(&self, v: &[u8], q: PosQuery) -> Vec<usize> {
        let from_tail = q.rank < 0;
        // Redis negates with wrapping: RANK i64::MIN stays negative and then
        // accepts every match, with no COUNT stop.
        let rank = if from_tail {
            q.rank.wrapping_neg()
        } else {
            q.rank
        };
        let len = self.len();
        let mut out = Vec::new();
        let mut matches: i64 = 0;
        let mut scanned: i64 = 0;
        let mut check = |idx: usize, e: &Bytes, out: &mut Vec<usize>| -> bool {
            if q.maxlen != 0 && scanned >= q.maxlen {
                return false;
            }
            scanned += 1;
            if &e[..] != v {
                return true;
            }
            matches += 1;
            if matches < rank {
                return true;
            }
            out.push(idx);
            match q.count {
                None => false,
                Some(c) => c == 0 || matches.wrapping_sub(rank).wrapping_add(1) < c,
            }
        };
        if from_tail {
            for (i, e) in self.iter().enumerate().rev() {
                if !check(i, e, &mut out) {
                    break;
                }
            }
        } else {
            for (i, e) in self.iter().enumerate() {
                if !check(i, e, &mut out) {
                    break;
                }
            }
        }
        debug_assert!(out.iter().all(|&i| i < len));
        out
    }
}

#[cfg(test)]
mod tests {
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
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<bool>(), 0u8..4).prop_map(|(l, v)| Op::Push(l, v)),
            (any::<bool>(), 0usize..4).prop_map(|(l, n)| Op::Pop(l, n)),
            (0u8..4, 0u8..4, any::<bool>()).prop_map(|(p, v, a)| Op::Insert(p, v, a)),
            (0u8..4, -3i64..4).prop_map(|(v, c)| Op::Remove(v, c)),
            (-8i64..8, -8i64..8).prop_map(|(s, e)| Op::Trim(s, e)),
        ]
    }

    fn b(v: u8) -> Bytes {
        Bytes::from(vec![b'a' + v])
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
        }
    }

    proptest! {
        #[test]
        fn list_ops_match_model(ops in proptest::collection::vec(op(), 0..60)) {
            let mut l = ListValue::new();
            let mut m: Vec<Bytes> = Vec::new();
            for o in &ops {
                let got = apply(&mut l, o);
                let want = model_apply(&mut m, o);
                prop_assert_eq!(got, want, "{:?}", o);
                prop_assert_eq!(l.iter().cloned().collect::<Vec<_>>(), m.clone());
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
            let hits: Vec<usize> = order[..scan].iter().copied().filter(|&i| l[i] == b(0)).collect();
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
}
