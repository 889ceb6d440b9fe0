//! Sorted sets whose members may carry deadlines.
//!
//! Up to 128 members of at most 64 bytes, one packed buffer (a [`ZPack`]:
//! every operation a walk of a few cache lines). Beyond, a [`MemberTable`]
//! (each member stored once with its score; O(1) score lookups and random
//! picks) plus an [`IdOrder`] of the member ids by (score, member), which
//! answers ranks, rank ranges and score/lex boundaries in O(log n).

use bytes::Bytes;
use std::cmp::Ordering;
use std::ops::Bound;

use super::order::{IdOrder, RankIter};
use super::table::{MemberTable, Node};
use super::zpack::{packable_deadline, PackIter, ZPack};
use crate::expiry::{MemberDeadlines, NO_DEADLINE};

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
/// until the next change to that sorted set (in the packed form a member is
/// a byte offset, which any insertion, removal, score or deadline change
/// before it moves), except for the handle a change returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberRef(u32);

/// A sorted set: packed into one buffer while it is small (a [`ZPack`]),
/// then its members (with scores) stored once in a [`MemberTable`] plus the
/// ids in (score, member) order. Like Redis, a set that outgrew the packed
/// form keeps the large one.
#[derive(Debug, Clone)]
pub struct ZSetValue {
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    Packed(ZPack),
    Large(Box<Large>),
}

impl Default for ZSetValue {
    fn default() -> Self {
        ZSetValue {
            repr: Repr::Packed(ZPack::default()),
        }
    }
}

/// The large form: a member table and the order of its ids.
#[derive(Debug, Default, Clone)]
struct Large {
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

/// Members of a rank range, in either form.
#[derive(Debug, Clone)]
pub struct ZIter<'a>(IterRepr<'a>);

#[derive(Debug, Clone)]
enum IterRepr<'a> {
    Packed(PackIter<'a, true>),
    Large(&'a [Node<f64>], RankIter<'a, u32>),
}

impl<'a> Iterator for ZIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Packed(it) => it.next(),
            IterRepr::Large(nodes, it) => {
                let n = &nodes[it.next()? as usize];
                Some((&n.member[..], n.value))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterRepr::Packed(it) => it.size_hint(),
            IterRepr::Large(_, it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for ZIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Packed(it) => it.next_back(),
            IterRepr::Large(nodes, it) => {
                let n = &nodes[it.next_back()? as usize];
                Some((&n.member[..], n.value))
            }
        }
    }
}

impl ExactSizeIterator for ZIter<'_> {}

/// A score of -0 is stored as 0, as Redis's compact encoding does.
fn stored(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

impl Large {
    /// The form `p` converts to.
    fn from_packed(p: &ZPack) -> Large {
        let mut l = Large::default();
        for o in p.offsets() {
            let e = p.entry(o);
            let id = l.insert_new(e.member, e.score);
            if e.deadline != NO_DEADLINE {
                l.table.set_deadline(id, e.deadline);
            }
        }
        l
    }

    fn pair(&self, id: u32) -> Option<(&[u8], f64)> {
        self.table.node(id).map(|n| (&n.member[..], n.value))
    }

    fn set_score_at(&mut self, id: u32, score: f64) {
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

    fn insert_new(&mut self, m: &[u8], score: f64) -> u32 {
        let id = self.table.push(m, score);
        self.order.insert(id, &score_cmp(self.table.nodes()));
        id
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

    fn rank_of(&self, id: u32) -> usize {
        let cmp = score_cmp(self.table.nodes());
        self.order.count_while(|e| cmp(e, id) == Ordering::Less)
    }

    fn score_of(&self, id: u32) -> f64 {
        self.table.nodes()[id as usize].value
    }

    fn member_of(&self, id: u32) -> &[u8] {
        &self.table.nodes()[id as usize].member
    }
}

impl ZSetValue {
    /// An empty sorted set.
    pub fn new() -> ZSetValue {
        ZSetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.len(),
            Repr::Large(l) => l.table.len(),
        }
    }

    /// Whether the sorted set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the set is in its packed form.
    pub fn is_packed(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    /// The large form, converting a packed set to it first.
    fn large(&mut self) -> &mut Large {
        if let Repr::Packed(p) = &self.repr {
            self.repr = Repr::Large(Box::new(Large::from_packed(p)));
        }
        match &mut self.repr {
            Repr::Large(l) => l,
            Repr::Packed(_) => unreachable!("converted above"),
        }
    }

    /// The score of `m`.
    pub fn score(&self, m: &[u8]) -> Option<f64> {
        self.lookup(m).map(|(_, s)| s)
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.repr {
            Repr::Packed(p) => p.find(m).is_some(),
            Repr::Large(l) => l.table.find(m).is_some(),
        }
    }

    /// Inserts `m` with `score` or updates its score (keeping its deadline);
    /// returns true if it is new. A score of -0 is stored as 0, as Redis's
    /// compact encoding does.
    pub fn insert(&mut self, m: impl AsRef<[u8]>, score: f64) -> bool {
        let m = m.as_ref();
        match self.lookup(m) {
            Some((r, _)) => {
                let _ = self.set_score_at(r, score);
                false
            }
            None => {
                self.insert_new(m, score);
                true
            }
        }
    }

    /// Finds `m`: a handle for the `*_at` methods and its score. One search
    /// serves a whole read-modify-write of the member.
    pub fn lookup(&self, m: &[u8]) -> Option<(MemberRef, f64)> {
        match &self.repr {
            Repr::Packed(p) => {
                let (o, _) = p.find(m)?;
                Some((MemberRef(o as u32), p.entry(o).score))
            }
            Repr::Large(l) => {
                let id = l.table.find(m)?;
                l.pair(id).map(|(_, s)| (MemberRef(id), s))
            }
        }
    }

    /// Changes the score of the member at `r` (keeping its deadline);
    /// returns its handle from now on.
    #[must_use]
    pub fn set_score_at(&mut self, r: MemberRef, score: f64) -> MemberRef {
        let score = stored(score);
        match &mut self.repr {
            Repr::Packed(p) => MemberRef(p.set_score_at(r.0 as usize, score) as u32),
            Repr::Large(l) => {
                l.set_score_at(r.0, score);
                r
            }
        }
    }

    /// Adds `m`, which must not be a member, with `score`.
    pub fn insert_new(&mut self, m: &[u8], score: f64) -> MemberRef {
        let score = stored(score);
        if let Repr::Packed(p) = &mut self.repr {
            if p.can_add(m) {
                return MemberRef(p.insert(m, score, NO_DEADLINE) as u32);
            }
        }
        MemberRef(self.large().insert_new(m, score))
    }

    /// The deadline of the member at `r`, if it has one.
    pub fn deadline_at(&self, r: MemberRef) -> Option<u64> {
        match &self.repr {
            Repr::Packed(p) => {
                let t = p.entry(r.0 as usize).deadline;
                (t != NO_DEADLINE).then_some(t)
            }
            Repr::Large(l) => l.table.deadline(r.0),
        }
    }

    /// Gives the member at `r` the deadline `at`.
    pub fn set_deadline_at(&mut self, r: MemberRef, at: u64) {
        match &mut self.repr {
            Repr::Packed(p) if packable_deadline(at) => p.set_deadline_at(r.0 as usize, at),
            Repr::Packed(p) => {
                let m = Bytes::copy_from_slice(p.entry(r.0 as usize).member);
                let l = self.large();
                if let Some(id) = l.table.find(&m) {
                    l.table.set_deadline(id, at);
                }
            }
            Repr::Large(l) => l.table.set_deadline(r.0, at),
        }
    }

    /// Removes the member at `r` with its deadline; returns it and its score.
    fn remove_at(&mut self, r: MemberRef) -> Option<(Bytes, f64)> {
        match &mut self.repr {
            Repr::Packed(p) => {
                let (m, s, _) = p.remove_at(r.0 as usize);
                Some((m, s))
            }
            Repr::Large(l) => l.remove_id(r.0),
        }
    }

    /// Removes `m` and its deadline; returns its score.
    pub fn remove(&mut self, m: &[u8]) -> Option<f64> {
        let (r, _) = self.lookup(m)?;
        self.remove_at(r).map(|(_, s)| s)
    }

    /// 0-based rank of `m` in ascending order (descending with `rev`).
    pub fn rank(&self, m: &[u8], rev: bool) -> Option<usize> {
        let below = match &self.repr {
            Repr::Packed(p) => p.find(m)?.1,
            Repr::Large(l) => l.rank_of(l.table.find(m)?),
        };
        Some(if rev { self.len() - 1 - below } else { below })
    }

    /// The member at ascending rank `r`.
    pub fn by_rank(&self, r: usize) -> Option<(&[u8], f64)> {
        match &self.repr {
            Repr::Packed(_) => self.range_by_rank(r, r + 1).next(),
            Repr::Large(l) => l.pair(l.order.get(r)?),
        }
    }

    /// Members with ascending rank in `start..end` (reversible).
    pub fn range_by_rank(&self, start: usize, end: usize) -> ZIter<'_> {
        ZIter(match &self.repr {
            Repr::Packed(p) => IterRepr::Packed(p.range(start, end)),
            Repr::Large(l) => IterRepr::Large(l.table.nodes(), l.order.range(start, end)),
        })
    }

    /// Members in ascending order.
    pub fn iter(&self) -> ZIter<'_> {
        self.range_by_rank(0, self.len())
    }

    /// Members with score in the given bounds, ascending.
    pub fn range_by_score(&self, min: Bound<f64>, max: Bound<f64>) -> ZIter<'_> {
        let (lo, hi) = self.score_span(&bounds_to_range(min, max));
        self.range_by_rank(lo, hi)
    }

    /// The ascending rank span `lo..hi` of the members whose score is in `r`.
    pub fn score_span(&self, r: &ScoreRange) -> (usize, usize) {
        if r.is_empty() {
            return (0, 0);
        }
        let (lo, hi) = match &self.repr {
            Repr::Packed(_) => {
                let (mut lo, mut hi) = (0, 0);
                for (_, s) in self.iter() {
                    if !r.below_max(s) {
                        break;
                    }
                    hi += 1;
                    lo += usize::from(!r.above_min(s));
                }
                (lo, hi)
            }
            Repr::Large(l) => (
                l.order.count_while(|e| !r.above_min(l.score_of(e))),
                l.order.count_while(|e| r.below_max(l.score_of(e))),
            ),
        };
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
        match (self.first(false), self.first(true)) {
            (Some((first, _)), Some((last, _))) => r.above_min(last) && r.below_max(first),
            _ => false,
        }
    }

    /// The large form, when lexicographic walks use its binary searches.
    fn lex_searchable(&self) -> Option<&Large> {
        match &self.repr {
            Repr::Large(l) if self.len() > LINEAR_LEX => Some(l),
            _ => None,
        }
    }

    /// Rank where a forward lexicographic walk over `r` starts.
    pub fn lex_first(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_reachable(r) {
            return None;
        }
        let i = match self.lex_searchable() {
            Some(l) => l.order.count_while(|e| !r.above_min(l.member_of(e))),
            None => self.iter().position(|(m, _)| r.above_min(m))?,
        };
        let (m, _) = self.by_rank(i)?;
        r.below_max(m).then_some(i)
    }

    /// Rank where a backward lexicographic walk over `r` starts.
    pub fn lex_last(&self, r: &LexRange) -> Option<usize> {
        if !self.lex_reachable(r) {
            return None;
        }
        let i = match self.lex_searchable() {
            Some(l) => l
                .order
                .count_while(|e| r.below_max(l.member_of(e)))
                .checked_sub(1)?,
            None => self.iter().rposition(|(m, _)| r.below_max(m))?,
        };
        let (m, _) = self.by_rank(i)?;
        r.above_min(m).then_some(i)
    }

    /// How many members a forward lexicographic walk over `r` meets.
    pub fn count_in_lex_range(&self, r: &LexRange) -> usize {
        let Some(first) = self.lex_first(r) else {
            return 0;
        };
        match self.lex_searchable() {
            Some(l) => l
                .order
                .count_while(|e| r.below_max(l.member_of(e)))
                .saturating_sub(first),
            None => self
                .range_by_rank(first, self.len())
                .take_while(|(m, _)| r.below_max(m))
                .count(),
        }
    }

    /// Removes the members with ascending rank in `start..end`; returns them
    /// with their scores, ascending.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> Vec<(Bytes, f64)> {
        if let Repr::Packed(p) = &mut self.repr {
            return p.remove_range(start, end);
        }
        let gone: Vec<(Bytes, f64)> = self
            .range_by_rank(start, end)
            .map(|(m, s)| (Bytes::copy_from_slice(m), s))
            .collect();
        for (m, _) in &gone {
            self.remove(m);
        }
        gone
    }

    /// The member at position `i` of the storage, for random picks.
    pub fn get_index(&self, i: usize) -> Option<(&[u8], f64)> {
        match &self.repr {
            Repr::Packed(_) => self.by_rank(i),
            Repr::Large(l) => l.pair(u32::try_from(i).ok()?),
        }
    }

    /// The handle of the lowest (or with `max`, highest) member.
    fn first_ref(&self, max: bool) -> Option<MemberRef> {
        match &self.repr {
            Repr::Packed(p) if max => p.last_offset().map(|o| MemberRef(o as u32)),
            Repr::Packed(p) => (p.len() > 0).then_some(MemberRef(0)),
            Repr::Large(l) if max => l.order.last().map(MemberRef),
            Repr::Large(l) => l.order.first().map(MemberRef),
        }
    }

    /// The lowest (or with `max`, highest) member.
    pub fn first(&self, max: bool) -> Option<(&[u8], f64)> {
        let r = self.first_ref(max)?;
        match &self.repr {
            Repr::Packed(p) => {
                let e = p.entry(r.0 as usize);
                Some((e.member, e.score))
            }
            Repr::Large(l) => l.pair(r.0),
        }
    }

    /// Removes and returns the lowest (or highest) member.
    pub fn pop(&mut self, max: bool) -> Option<(Bytes, f64)> {
        let r = self.first_ref(max)?;
        self.remove_at(r)
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        match &self.repr {
            Repr::Packed(p) => MemberDeadlines::packed(p),
            Repr::Large(l) => l.table.deadlines(),
        }
    }

    /// The deadline of `m`, if it has one.
    pub fn deadline(&self, m: &[u8]) -> Option<u64> {
        let (r, _) = self.lookup(m)?;
        self.deadline_at(r)
    }

    /// Sets the deadline of an existing member; false if it is not a member.
    pub fn set_deadline(&mut self, m: &[u8], at: u64) -> bool {
        match self.lookup(m) {
            Some((r, _)) => {
                self.set_deadline_at(r, at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `m`; returns the one it had.
    pub fn clear_deadline(&mut self, m: &[u8]) -> Option<u64> {
        let (r, _) = self.lookup(m)?;
        match &mut self.repr {
            Repr::Packed(p) => {
                let had = p.entry(r.0 as usize).deadline;
                p.set_deadline_at(r.0 as usize, NO_DEADLINE);
                (had != NO_DEADLINE).then_some(had)
            }
            Repr::Large(l) => l.table.clear_deadline(r.0),
        }
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let r = match &self.repr {
            Repr::Packed(p) => {
                if p.first_due()? > now {
                    return None;
                }
                MemberRef(p.earliest()?.1 as u32)
            }
            Repr::Large(l) => MemberRef(l.table.first_due(now)?),
        };
        self.remove_at(r).map(|(m, _)| m)
    }

    /// How many members have a deadline `<= now` (present but not live).
    pub fn due_count(&self, now: u64) -> usize {
        match &self.repr {
            Repr::Packed(p) if p.first_due().is_none_or(|t| t > now) => 0,
            Repr::Packed(p) => p.offsets().filter(|&o| p.entry(o).deadline <= now).count(),
            Repr::Large(_) => self
                .deadlines()
                .iter()
                .take_while(|(_, t)| *t <= now)
                .count(),
        }
    }

    /// Heap bytes held by the structure (not the members' own bytes, except
    /// in the packed form, where they are the structure).
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.heap_bytes(),
            Repr::Large(l) => {
                std::mem::size_of::<Large>() + l.table.heap_bytes() + l.order.heap_bytes()
            }
        }
    }

    /// Checks that the table, the order and the deadlines agree (tests).
    #[cfg(test)]
    pub fn check(&self) {
        let l = match &self.repr {
            Repr::Packed(p) => return p.check(),
            Repr::Large(l) => l,
        };
        l.table.check();
        l.order.check(&score_cmp(l.table.nodes()));
        assert_eq!(l.order.len(), l.table.len());
        let mut ids: Vec<u32> = l.order.iter().collect();
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
}
