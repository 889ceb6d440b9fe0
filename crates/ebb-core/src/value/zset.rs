//! Sorted sets whose members may carry deadlines.
//!
//! Up to 128 members of at most 64 bytes, one packed buffer (a [`ZPack`]:
//! every operation a walk of a few cache lines). Beyond, a [`MemberTable`]
//! (each member stored once with its score; O(1) score lookups and random
//! picks) plus an order of (score, id) pairs by (score, member), which
//! answers ranks, rank ranges and score/lex boundaries in O(log n).

use bytes::Bytes;
use std::cmp::Ordering;
use std::ops::Bound;

use super::order::{Chunked, RankIter};
use super::table::{Lookahead, MemberTable, Node};
use super::zpack::{packable_deadline, PackIter, ZPack};
use crate::expiry::NO_DEADLINE;

#[path = "zset_deadlines.rs"]
mod deadlines;
#[path = "zset_ranges.rs"]
mod ranges;
pub use ranges::{LexBound, LexRange, Score, ScoreRange};

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
///
/// The value is 16 bytes: a packed sorted set is its buffer alone, a
/// large one a box.
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

/// The large form: a member table and the order of its members, and the
/// earliest member deadline the keyspace's member index recorded
/// ([`NO_DEADLINE`] for none; a packed sorted set keeps it in its buffer).
#[derive(Debug, Clone)]
struct Large {
    table: MemberTable<f64>,
    order: Chunked<Ranked>,
    indexed_due: u64,
}

/// A member's place in the order: its score (a copy of the node's) and
/// its id. With the score at hand a search reads a node only to break a
/// tie, instead of at every step (12 bytes a member instead of 4, for
/// about half the cache misses of an insertion or a rank lookup).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, packed(4))]
struct Ranked {
    score: f64,
    id: u32,
}

impl Ranked {
    fn id(self) -> u32 {
        self.id
    }

    fn score(self) -> f64 {
        self.score
    }
}

/// Orders (score, id) pairs by (score, member), reading a node only when
/// two scores tie.
fn score_cmp(nodes: &[Node<f64>]) -> impl Fn(Ranked, Ranked) -> Ordering + '_ {
    move |a, b| {
        Score(a.score()).cmp(&Score(b.score())).then_with(|| {
            if a.id() == b.id() {
                Ordering::Equal
            } else {
                nodes[a.id() as usize]
                    .member
                    .cmp(&nodes[b.id() as usize].member)
            }
        })
    }
}

/// Members of a rank range, in either form.
#[derive(Debug, Clone)]
pub struct ZIter<'a>(IterRepr<'a>);

#[derive(Debug, Clone)]
enum IterRepr<'a> {
    Packed(PackIter<'a, true>),
    Large(&'a [Node<f64>], RankIter<'a, Ranked>),
}

/// A node as (member, score).
fn pair_of(n: &Node<f64>) -> (&[u8], f64) {
    (&n.member[..], n.value)
}

impl<'a> Iterator for ZIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Packed(it) => it.next(),
            IterRepr::Large(nodes, it) => Some(pair_of(&nodes[it.next()?.id() as usize])),
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
            IterRepr::Large(nodes, it) => Some(pair_of(&nodes[it.next_back()?.id() as usize])),
        }
    }
}

impl ExactSizeIterator for ZIter<'_> {}

/// A score as the packed form stores it: -0 becomes 0, as in Redis's
/// listpack (the large form keeps -0, as Redis's skiplist does).
pub(crate) fn stored_score(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

impl Large {
    /// The form `p` converts to.
    fn from_packed(p: &ZPack) -> Large {
        let table = p.to_table(|score| score);
        let mut order = Chunked::default();
        for (id, n) in table.nodes().iter().enumerate() {
            let e = Ranked {
                score: n.value,
                id: id as u32,
            };
            order.insert(e, &score_cmp(table.nodes()));
        }
        Large {
            table,
            order,
            indexed_due: p.indexed_due(),
        }
    }

    fn pair(&self, id: u32) -> Option<(&[u8], f64)> {
        self.table.node(id).map(pair_of)
    }

    fn set_score_at(&mut self, id: u32, score: f64) {
        let Some(old) = self.pair(id).map(|(_, s)| s) else {
            return;
        };
        if old != score {
            self.order
                .remove(Ranked { score: old, id }, &score_cmp(self.table.nodes()));
            if let Some(s) = self.table.value_mut(id) {
                *s = score;
            }
            self.order
                .insert(Ranked { score, id }, &score_cmp(self.table.nodes()));
        }
    }

    fn insert_new(&mut self, m: &[u8], score: f64) -> u32 {
        let id = self.table.push(m, score);
        self.order
            .insert(Ranked { score, id }, &score_cmp(self.table.nodes()));
        id
    }

    /// Removes node `id` from the order and the table, keeping the order's
    /// id of the node that moves into its place right.
    fn remove_id(&mut self, id: u32) -> Option<(Bytes, f64)> {
        let last = self.table.len().checked_sub(1)? as u32;
        let moved = {
            let cmp = score_cmp(self.table.nodes());
            self.order.remove(self.ranked(id), &cmp);
            if id != last {
                let e = self.ranked(last);
                self.order.slot_of(e, &cmp).map(|slot| (slot, e.score()))
            } else {
                None
            }
        };
        let node = self.table.swap_remove(id)?;
        if let Some((slot, score)) = moved {
            self.order.set_slot(slot, Ranked { score, id });
        }
        Some((node.member.into_bytes(), node.value))
    }

    fn rank_of(&self, id: u32) -> usize {
        let cmp = score_cmp(self.table.nodes());
        let me = self.ranked(id);
        self.order.count_while(|e| cmp(e, me) == Ordering::Less)
    }

    /// Node `id`'s place in the order.
    fn ranked(&self, id: u32) -> Ranked {
        Ranked {
            score: self.score_of(id),
            id,
        }
    }

    fn score_of(&self, id: u32) -> f64 {
        self.table.nodes()[id as usize].value
    }

    fn member_of(&self, id: u32) -> &[u8] {
        &self.table.nodes()[id as usize].member
    }
}

impl ZSetValue {
    /// The most members the packed form holds.
    pub const PACKED_MAX_LEN: usize = super::zpack::MAX_LEN;
    /// The longest member the packed form holds.
    pub const PACKED_MAX_MEMBER: usize = super::zpack::MAX_MEMBER;

    /// The member table of the large form, for the look-ahead over a
    /// pipeline (the packed form needs none).
    pub(crate) fn lookahead(&self) -> Option<&dyn Lookahead> {
        match &self.repr {
            Repr::Large(l) => Some(&l.table),
            Repr::Packed(_) => None,
        }
    }

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

    /// Whether Redis would still hold this sorted set as a listpack under
    /// `zset-max-listpack-entries` / `-value`: it fits them, and it never
    /// outgrew the packed form while those limits are no larger than the
    /// packed form's (Redis's defaults), since Redis converts to a skiplist
    /// past them and never back.
    pub fn is_compact(&self, max_entries: usize, max_value: usize) -> bool {
        if !self.is_packed()
            && max_entries <= super::zpack::MAX_LEN
            && max_value <= super::zpack::MAX_MEMBER
        {
            return false;
        }
        self.len() <= max_entries && self.iter().all(|(m, _)| m.len() <= max_value)
    }

    /// The earliest member deadline the keyspace's member index recorded.
    pub(crate) fn indexed_due(&self) -> u64 {
        match &self.repr {
            Repr::Packed(p) => p.indexed_due(),
            Repr::Large(l) => l.indexed_due,
        }
    }

    /// Records what the keyspace's member index holds for this sorted set.
    pub(crate) fn set_indexed_due(&mut self, at: u64) {
        match &mut self.repr {
            Repr::Packed(p) => p.set_indexed_due(at),
            Repr::Large(l) => l.indexed_due = at,
        }
    }

    /// A plain ZADD of `pairs` (repeats allowed) into a new (empty)
    /// sorted set that packs: built at once, without a search and a
    /// reallocation per member. Returns how many members were added; None
    /// (nothing done) when the set is not empty or they would not pack.
    pub fn fill_packed(&mut self, pairs: &[(f64, &[u8])]) -> Option<usize> {
        if !self.is_empty() || !matches!(self.repr, Repr::Packed(_)) {
            return None;
        }
        let (p, n) = ZPack::zset_from_pairs(pairs)?;
        self.repr = Repr::Packed(p);
        Some(n)
    }

    /// Before up to `n` members are added to a new (empty) sorted set:
    /// more than the packed form holds take the large form at once,
    /// instead of filling the packed form first. Returns whether it did;
    /// the write then ends with [`Self::settle`].
    pub fn expect(&mut self, n: usize) -> bool {
        let early = n > super::zpack::MAX_LEN && self.is_empty();
        if early {
            self.large();
        }
        early
    }

    /// After a write [`Self::expect`] put in the large form: if what it
    /// added (repeated members counted once) fits the packed form, the
    /// set goes back to it, as filling it one member at a time would have
    /// left it (and OBJECT ENCODING says `listpack`, as Redis does).
    pub fn settle(&mut self) {
        if let Repr::Large(l) = &self.repr {
            if let Some(p) = ZPack::from_table(&l.table, |s| *s) {
                self.repr = Repr::Packed(p);
            }
        }
    }

    /// `score` as this set would store it now (its packed form stores -0
    /// as 0).
    pub(crate) fn as_stored(&self, score: f64) -> f64 {
        if self.is_packed() {
            stored_score(score)
        } else {
            score
        }
    }

    /// Whether `n` distinct members of the given lengths fit the packed
    /// form.
    pub fn would_pack(n: usize, mut lens: impl Iterator<Item = usize>) -> bool {
        n <= Self::PACKED_MAX_LEN && lens.all(|l| l <= Self::PACKED_MAX_MEMBER)
    }

    /// Converts a packed set to the large form (for good: as Redis's
    /// conversion to a skiplist, it is never packed again).
    pub fn unpack(&mut self) {
        self.large();
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
    /// returns true if it is new. The packed form stores a score of -0 as
    /// 0, as Redis's listpack does; the large form keeps it.
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
        match &mut self.repr {
            Repr::Packed(p) => MemberRef(p.set_score_at(r.0 as usize, stored_score(score)) as u32),
            Repr::Large(l) => {
                l.set_score_at(r.0, score);
                r
            }
        }
    }

    /// Adds `m`, which must not be a member, with `score`.
    pub fn insert_new(&mut self, m: &[u8], score: f64) -> MemberRef {
        if let Repr::Packed(p) = &mut self.repr {
            if p.can_add(m) {
                return MemberRef(p.insert(m, stored_score(score), NO_DEADLINE) as u32);
            }
        }
        MemberRef(self.large().insert_new(m, score))
    }

    /// The deadline of the member at `r`, if it has one.
    pub fn deadline_at(&self, r: MemberRef) -> Option<u64> {
        match &self.repr {
            Repr::Packed(p) => p.deadline_at(r.0 as usize),
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
            Repr::Large(l) => l.pair(l.order.get(r)?.id()),
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
                l.order.count_while(|e| !r.above_min(e.score())),
                l.order.count_while(|e| r.below_max(e.score())),
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
            Some(l) => l.order.count_while(|e| !r.above_min(l.member_of(e.id()))),
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
                .count_while(|e| r.below_max(l.member_of(e.id())))
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
                .count_while(|e| r.below_max(l.member_of(e.id())))
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
            Repr::Packed(p) => (p.len() > 0).then(|| MemberRef(p.offset_of_rank(0) as u32)),
            Repr::Large(l) if max => l.order.last().map(|e| MemberRef(e.id())),
            Repr::Large(l) => l.order.first().map(|e| MemberRef(e.id())),
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
        // Each pair's score is its node's.
        assert!(l
            .order
            .iter()
            .all(|e| e.score().to_bits() == l.score_of(e.id()).to_bits()));
        let mut ids: Vec<u32> = l.order.iter().map(Ranked::id).collect();
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
#[path = "zset_tests.rs"]
mod tests;
