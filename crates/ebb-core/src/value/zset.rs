//! Sorted sets whose members may carry deadlines.
//!
//! A [`MemberTable`] (each member stored once with its score; O(1) score
//! lookups and random picks) plus an [`IdOrder`] of the member ids by
//! (score, member), which answers ranks, rank ranges and score/lex
//! boundaries in O(log n).

use bytes::Bytes;
use std::cmp::Ordering;
use std::ops::Bound;

use super::order::IdOrder;
use super::table::{MemberTable, Node};
use crate::expiry::MemberDeadlines;

/// A score with a total order (scores are never NaN; -0 equals 0).
#[derive(Debug, Clone, Copy)]
pub struct Score(pub f64);

impl PartialEq for Score {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Score {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.partial_cmp(&o.0).unwrap_or(Ordering::Equal)
    }
}

/// A score interval as ZRANGEBYSCORE takes it (`(` makes an end exclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreRange {
    /// Lower end.
    pub min: f64,
    /// Whether `min` itself is excluded.
    pub min_exclusive: bool,
    /// Upper end.
    pub max: f64,
    /// Whether `max` itself is excluded.
    pub max_exclusive: bool,
}

impl ScoreRange {
    /// The inclusive range `[min, max]`.
    pub fn inclusive(min: f64, max: f64) -> ScoreRange {
        ScoreRange {
            min,
            min_exclusive: false,
            max,
            max_exclusive: false,
        }
    }

    /// Whether `s` is at or above the lower end.
    pub fn above_min(&self, s: f64) -> bool {
        if self.min_exclusive {
            s > self.min
        } else {
            s >= self.min
        }
    }

    /// Whether `s` is at or below the upper end.
    pub fn below_max(&self, s: f64) -> bool {
        if self.max_exclusive {
            s < self.max
        } else {
            s <= self.max
        }
    }

    /// Whether no score can be in the range.
    pub fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.min_exclusive || self.max_exclusive))
    }
}

/// One end of a lexicographic range (`-`, `+`, `[member`, `(member`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: below every member.
    Min,
    /// `+`: above every member.
    Max,
    /// `[member`: the member itself is in the range.
    Inclusive(Bytes),
    /// `(member`: the member itself is not.
    Exclusive(Bytes),
}

impl LexBound {
    /// Orders two bounds as Redis does: `-` below and `+` above any string,
    /// equal to themselves.
    fn cmp_bound(&self, o: &LexBound) -> Ordering {
        use LexBound::*;
        match (self, o) {
            (Min, Min) | (Max, Max) => Ordering::Equal,
            (Min, _) | (_, Max) => Ordering::Less,
            (Max, _) | (_, Min) => Ordering::Greater,
            (Inclusive(a) | Exclusive(a), Inclusive(b) | Exclusive(b)) => a.cmp(b),
        }
    }

    fn exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }
}

/// A lexicographic member interval as ZRANGEBYLEX takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexRange {
    /// Lower end.
    pub min: LexBound,
    /// Upper end.
    pub max: LexBound,
}

impl LexRange {
    /// Whether `m` is at or above the lower end.
    pub fn above_min(&self, m: &[u8]) -> bool {
        match &self.min {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(b) => m >= &b[..],
            LexBound::Exclusive(b) => m > &b[..],
        }
    }

    /// Whether `m` is at or below the upper end.
    pub fn below_max(&self, m: &[u8]) -> bool {
        match &self.max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(b) => m <= &b[..],
            LexBound::Exclusive(b) => m < &b[..],
        }
    }

    /// Whether no member can be in the range.
    pub fn is_empty(&self) -> bool {
        match self.min.cmp_bound(&self.max) {
            Ordering::Greater => true,
            Ordering::Equal => self.min.exclusive() || self.max.exclusive(),
            Ordering::Less => false,
        }
    }
}

/// Up to this many members, lexicographic walks scan linearly as Redis's
/// listpack encoding does, which gives the same answers as Redis even when
/// scores differ (where ZRANGEBYLEX is otherwise unspecified).
const LINEAR_LEX: usize = 128;

/// A member of a [`ZSetValue`] found by [`ZSetValue::lookup`]: valid
/// until the next removal from that sorted set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberRef(u32);

/// A sorted set: its members (with scores) stored once in a
/// [`MemberTable`], plus the ids in (score, member) order.
#[derive(Debug, Default, Clone)]
pub struct ZSetValue {
    table: MemberTable<f64>,
    order: IdOrder,
}

/// Orders ids by (score, member), reading both through the nodes.
fn score_cmp(nodes: &[Node<f64>]) -> impl Fn(u32, u32) -> Ordering + '_ {
    move |a, b| {
        let (x, y) = (&nodes[a as usize], &nodes[b as usize]);
        Score(x.value)
            .cmp(&Score(y.value))
            .then_with(|| x.member.cmp(&y.member))
    }
}

impl ZSetValue {
    /// An empty sorted set.
    pub fn new() -> ZSetValue {
        ZSetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the sorted set is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The node of id `id` as (member, score).
    fn pair(&self, id: u32) -> Option<(&[u8], f64)> {
        self.table.node(id).map(|n| (&n.member[..], n.value))
    }

    /// The score of `m`.
    pub fn score(&self, m: &[u8]) -> Option<f64> {
        self.pair(self.table.find(m)?).map(|(_, s)| s)
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        self.table.find(m).is_some()
    }

    /// Inserts `m` with `score` or updates its score (keeping its deadline);
    /// returns true if it is new. A score of -0 is stored as 0, as Redis's
    /// compact encoding does.
    pub fn insert(&mut self, m: impl AsRef<[u8]>, score: f64) -> bool {
        let m = m.as_ref();
        match self.lookup(m) {
            Some((r, _)) => {
                self.set_score_at(r, score);
                false
            }
            None => {
                self.insert_new(m, score);
                true
            }
        }
    }

    /// Finds `m`: a handle for the `*_at` methods (valid until the next
    /// removal from this sorted set) and its score. One hash lookup serves
    /// a whole read-modify-write of the member.
    pub fn lookup(&self, m: &[u8]) -> Option<(MemberRef, f64)> {
        let id = self.table.find(m)?;
        self.pair(id).map(|(_, s)| (MemberRef(id), s))
    }

    /// Changes the score of the member at `r` (keeping its deadline).
    pub fn set_score_at(&mut self, r: MemberRef, score: f64) {
        let score = if score == 0.0 { 0.0 } else { score };
        let id = r.0;
        let Some(old) = self.pair(id).map(|(_, s)| s) else {
            return;
        };
        if old != score {
            self.order.remove(id, &score_cmp(self.table.nodes()));
            if let Some(s) = self.table.value_mut(id) {
                *s = score;
            }
            self.order.insert(id, &score_cmp(self.table.nodes()));
        }
    }

    /// Adds `m`, which must not be a member, with `score`.
    pub fn insert_new(&mut self, m: &[u8], score: f64) -> MemberRef {
        let score = if score == 0.0 { 0.0 } else { score };
        let id = self.table.push(m, score);
        self.order.insert(id, &score_cmp(self.table.nodes()));
        MemberRef(id)
    }

    /// The deadline of the member at `r`, if it has one.
    pub fn deadline_at(&self, r: MemberRef) -> Option<u64> {
        self.table.deadline(r.0)
    }

    /// Gives the member at `r` the deadline `at`.
    pub fn set_deadline_at(&mut self, r: MemberRef, at: u64) {
        self.table.set_deadline(r.0, at);
    }

    /// Removes node `id` from the order and the table, keeping the order's
    /// id of the node that moves into its place right.
    fn remove_id(&mut self, id: u32) -> Option<(Bytes, f64)> {
        let last = self.table.len().checked_sub(1)? as u32;
        let moved = {
            let cmp = score_cmp(self.table.nodes());
            self.order.remove(id, &cmp);
            if id != last {
                self.order.slot_of(last, &cmp)
            } else {
                None
            }
        };
        let node = self.table.swap_remove(id)?;
        if let Some(slot) = moved {
            self.order.set_slot(slot, id);
        }
        Some((node.member.into_bytes(), node.value))
    }

    /// Removes `m` and its deadline; returns its score.
    pub fn remove(&mut self, m: &[u8]) -> Option<f64> {
        let id = self.table.find(m)?;
        self.remove_id(id).map(|(_, s)| s)
    }

    /// 0-based rank of `m` in ascending order (descending with `rev`).
    pub fn rank(&self, m: &[u8], rev: bool) -> Option<usize> {
        let id = self.table.find(m)?;
        let cmp = score_cmp(self.table.nodes());
        let below = self.order.count_while(|e| cmp(e, id) == Ordering::Less);
        Some(if rev { self.len() - 1 - below } else { below })
    }

    /// The member at ascending rank `r`.
    pub fn by_rank(&self, r: usize) -> Option<(&[u8], f64)> {
        self.pair(self.order.get(r)?)
    }

    /// Members with ascending rank in `start..end` (reversible).
    pub fn range_by_rank(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + ExactSizeIterator + Clone {
        let nodes = self.table.nodes();
        self.order.range(start, end).map(move |id| {
            let n = &nodes[id as usize];
            (&n.member[..], n.value)
        })
    }

    /// Members in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + ExactSizeIterator {
        self.range_by_rank(0, self.len())
    }

    /// Members with score in the given bounds, ascending.
    pub fn range_by_score(
        &self,
        min: Bound<f64>,
        max: Bound<f64>,
    ) -> impl DoubleEndedIterator<Item = (&[u8], f64)> {
        let (lo, hi) = self.score_span(&bounds_to_range(min, max));
        self.range_by_rank(lo, hi)
    }

    /// The score of node `id` (for order walks).
    fn score_of(&self, id: u32) -> f64 {
        self.table.nodes()[id as usize].value
    }

    /// The member of node `id` (for order walks).
    fn member_of(&self, id: u32) -> &[u8] {
        &self.table.nodes()[id as usize].member
    }

    /// The ascending rank span `lo..hi` of the members whose score is in `r`.
    pub fn score_span(&self, r: &ScoreRange) -> (usize, usize) {
        if r.is_empty() {
            return (0, 0);
        }
        let lo = self.order.count_while(|e| !r.above_min(self.score_of(e)));
        let hi = self.order.count_while(|e| r.below_max(self.score_of(e)));
        (lo, hi.max(lo))
    }

    /// How many members have a score in `r`.
    pub fn count_in_score_range(&self, r: &ScoreRange) -> usize {
        let (lo, hi) = self.score_span(r);
        hi - lo
    }

    /// Rank of the lowest member in `r` (Redis's first-in-range).
    pub fn score_first(&self, r: &ScoreRange) -> Option<usize> {
        let (lo, hi) = self.score_span(r);
        (lo < hi).then_some(lo)
    }

    /// Rank of the highest member in `r` (Redis's last-in-range).
    pub fn score_last(&self, r: &ScoreRange) -> Option<usize> {
        let (lo, hi) = self.score_span(r);
        (lo < hi).then(|| hi - 1)
    }

    /// Whether the lex range can match at all: not empty, the last member
    /// is at or above `min` and the first at or below `max`.
    fn lex_reachable(&self, r: &LexRange) -> bool {
        if r.is_empty() {
            return false;
        }
        match (self.order.first(), self.order.last()) {
            (Some(first), Some(last)) => {
                r.above_min(self.member_of(last)) && r.below_max(self.member_of(first))
            }
            _ => false,
        }
    }

    /// Rank where a forward lexicographic walk over `r` starts.
    pub fn lex_first(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_reachable(r) {
            return None;
        }
        let i = if self.len() <= LINEAR_LEX {
            self.order
                .iter()
                .position(|e| r.above_min(self.member_of(e)))?
        } else {
            self.order.count_while(|e| !r.above_min(self.member_of(e)))
        };
        let (m, _) = self.by_rank(i)?;
        r.below_max(m).then_some(i)
    }

    /// Rank where a backward lexicographic walk over `r` starts.
    pub fn lex_last(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_reachable(r) {
            return None;
        }
        let i = if self.len() <= LINEAR_LEX {
            self.order
                .iter()
                .rposition(|e| r.below_max(self.member_of(e)))?
        } else {
            self.order
                .count_while(|e| r.below_max(self.member_of(e)))
                .checked_sub(1)?
        };
        let (m, _) = self.by_rank(i)?;
        r.above_min(m).then_some(i)
    }

    /// How many members a forward lexicographic walk over `r` meets.
    pub fn count_in_lex_range(&self, r: &LexRange) -> usize {
        let Some(first) = self.lex_first(r) else {
            return 0;
        };
        if self.len() <= LINEAR_LEX {
            self.order
                .range(first, self.len())
                .take_while(|&e| r.below_max(self.member_of(e)))
                .count()
        } else {
            self.order
                .count_while(|e| r.below_max(self.member_of(e)))
                .saturating_sub(first)
        }
    }

    /// Removes the members with ascending rank in `start..end`; returns them
    /// with their scores, ascending.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> Vec<(Bytes, f64)> {
        let gone: Vec<(Bytes, f64)> = self
            .range_by_rank(start, end)
            .map(|(m, s)| (Bytes::copy_from_slice(m), s))
            .collect();
        for (m, _) in &gone {
            self.remove(m);
        }
        gone
    }

    /// The member at dictionary position `i`, for random picks.
    pub fn get_index(&self, i: usize) -> Option<(&[u8], f64)> {
        self.pair(u32::try_from(i).ok()?)
    }

    /// The lowest (or with `max`, highest) member.
    pub fn first(&self, max: bool) -> Option<(&[u8], f64)> {
        let e = if max {
            self.order.last()
        } else {
            self.order.first()
        };
        self.pair(e?)
    }

    /// Removes and returns the lowest (or highest) member.
    pub fn pop(&mut self, max: bool) -> Option<(Bytes, f64)> {
        let id = if max {
            self.order.last()
        } else {
            self.order.first()
        };
        self.remove_id(id?)
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        self.table.deadlines()
    }

    /// The deadline of `m`, if it has one.
    pub fn deadline(&self, m: &[u8]) -> Option<u64> {
        self.table.deadline(self.table.find(m)?)
    }

    /// Sets the deadline of an existing member; false if it is not a member.
    pub fn set_deadline(&mut self, m: &[u8], at: u64) -> bool {
        match self.table.find(m) {
            Some(id) => {
                self.table.set_deadline(id, at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `m`; returns the one it had.
    pub fn clear_deadline(&mut self, m: &[u8]) -> Option<u64> {
        let id = self.table.find(m)?;
        self.table.clear_deadline(id)
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let id = self.table.first_due(now)?;
        self.remove_id(id).map(|(m, _)| m)
    }

    /// How many members have a deadline `<= now` (present but not live).
    pub fn due_count(&self, now: u64) -> usize {
        self.deadlines()
            .iter()
            .take_while(|(_, t)| *t <= now)
            .count()
    }

    /// Heap bytes held by the structure (not the members' own bytes).
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes() + self.order.heap_bytes()
    }

    /// Checks that the table, the order and the deadlines agree (tests).
    #[cfg(test)]
    pub fn check(&self) {
        self.table.check();
        self.order.check(&score_cmp(self.table.nodes()));
        assert_eq!(self.order.len(), self.table.len());
        let mut ids: Vec<u32> = self.order.iter().collect();
        ids.sort_unstable();
        assert!(ids.iter().enumerate().all(|(i, &id)| id == i as u32));
    }
}

fn bounds_to_range(min: Bound<f64>, max: Bound<f64>) -> ScoreRange {
    let (min, min_exclusive) = match min {
        Bound::Included(v) => (v, false),
        Bound::Excluded(v) => (v, true),
        Bound::Unbounded => (f64::NEG_INFINITY, false),
    };
    let (max, max_exclusive) = match max {
        Bound::Included(v) => (v, false),
        Bound::Excluded(v) => (v, true),
        Bound::Unbounded => (f64::INFINITY, false),
    };
    ScoreRange {
        min,
        min_exclusive,
        max,
        max_exclusive,
    }
}

#[cfg(test)]
mod tests {
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
}
