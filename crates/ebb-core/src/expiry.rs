//! Member deadlines: which members of one collection carry an absolute
//! deadline (Unix milliseconds), ordered so the earliest is found in
//! O(log n).
//!
//! A collection's members live once, in its
//! [`MemberTable`](crate::value::table::MemberTable), under dense `u32` ids.
//! The deadlines of a table are a [`DeadlineIndex`]: one `u64` per member,
//! parallel to the table's nodes, plus (deadline, id) pairs of the members
//! that have one, in order. Members due at the same millisecond are thus
//! ordered by id, an order of no meaning to clients: the order is never
//! compared through the members, so keeping it reads no node. A collection
//! without any deadline keeps no index and pays one null pointer; a member
//! with one pays 8 bytes plus about 13 for its place in the order (none
//! while the table is small enough to be scanned).

use std::cmp::Ordering;

use crate::value::order::Chunked;
use crate::value::zpack::PackDeadlines;

/// A member's place in the deadline order: its deadline, then its id.
/// Packed to 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
pub(crate) struct Due {
    pub(crate) at: u64,
    pub(crate) id: u32,
}

impl Due {
    /// The comparison the deadline order keeps.
    pub(crate) fn cmp(a: Due, b: Due) -> Ordering {
        let (x, y) = ((a.at, a.id), (b.at, b.id));
        x.cmp(&y)
    }
}

/// The (deadline, id) order of a large table's members, boxed and built
/// only while it holds something: a small table, whose deadlines are
/// scanned, pays one null pointer for it instead of an empty sequence.
#[derive(Debug, Default, Clone)]
pub(crate) struct DueOrder(Option<Box<Chunked<Due>>>);

/// What an absent order reads as.
static NO_ORDER: Chunked<Due> = Chunked::new();

impl DueOrder {
    fn get(&self) -> &Chunked<Due> {
        self.0.as_deref().unwrap_or(&NO_ORDER)
    }

    pub(crate) fn len(&self) -> usize {
        self.get().len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn first(&self) -> Option<Due> {
        self.get().first()
    }

    pub(crate) fn last(&self) -> Option<Due> {
        self.get().last()
    }

    pub(crate) fn iter(&self) -> crate::value::order::RankIter<'_, Due> {
        self.get().iter()
    }

    pub(crate) fn insert(&mut self, e: Due) -> bool {
        self.0
            .get_or_insert_with(Default::default)
            .insert(e, &Due::cmp)
    }

    pub(crate) fn remove(&mut self, e: Due) -> bool {
        self.shrink_with(|c| c.remove(e, &Due::cmp))
    }

    /// Applies a removal to the order, if any, and drops it once empty.
    fn shrink_with<R: Default>(&mut self, f: impl FnOnce(&mut Chunked<Due>) -> R) -> R {
        let Some(c) = &mut self.0 else {
            return R::default();
        };
        let r = f(c);
        if c.is_empty() {
            self.0 = None;
        }
        r
    }

    pub(crate) fn chunk_count(&self) -> usize {
        self.0.as_ref().map_or(0, |c| c.chunk_count())
    }

    /// Keeps only the pairs of chunk `ci` that `keep` accepts.
    pub(crate) fn retain_chunk(&mut self, ci: usize, keep: impl Fn(Due) -> bool) {
        self.shrink_with(|c| {
            c.retain_chunk(ci, keep);
        });
    }

    /// Keeps only the pairs `keep` accepts.
    pub(crate) fn retain(&mut self, keep: impl Fn(Due) -> bool) {
        self.shrink_with(|c| c.retain(keep));
    }

    pub(crate) fn renumber(&mut self, f: impl Fn(Due) -> Due) {
        if let Some(c) = &mut self.0 {
            c.renumber(f);
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |c| std::mem::size_of::<Chunked<Due>>() + c.heap_bytes())
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.get().check(&Due::cmp);
    }
}

/// The stored deadline of a member without one.
pub(crate) const NO_DEADLINE: u64 = u64::MAX;

/// Deadlines of one table's members.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeadlineIndex {
    /// Deadline of each node by id, [`NO_DEADLINE`] when it has none.
    pub(crate) at: Vec<u64>,
    /// The nodes with a deadline, by (deadline, id), once the table is
    /// large (has a hash index); empty while it is small, when a scan of
    /// `at` is as quick.
    ///
    /// A node whose deadline changes gets a new pair; its old one stays
    /// where it is, stale, instead of being searched for and shifted out
    /// (moving a deadline is the commonest write: every ZADDEX or SADDEX
    /// of an existing member). A pair `(t, id)` is live when node `id`'s
    /// deadline is `t`; each live node has exactly one, and the order is a
    /// set, so a node whose deadline returns to `t` revives its pair
    /// rather than duplicating it. [`DeadlineIndex::settle`] keeps both
    /// ends live and, once stale pairs outnumber live ones, clears a few
    /// chunks of them per change, so the order holds about twice the live
    /// pairs at most.
    pub(crate) order: DueOrder,
    /// How many nodes have a deadline.
    pub(crate) count: usize,
    /// The next chunk of `order` to clear of stale pairs.
    pub(crate) sweep: usize,
}

/// Whether `d` is the current pair of its node, given the nodes'
/// deadlines `at`.
fn is_live(at: &[u64], d: Due) -> bool {
    let t = d.at;
    at.get(d.id as usize).copied() == Some(t)
}

/// Chunks cleared of stale pairs per change while they are too many.
const COMPACT_CHUNKS: usize = 2;

/// Stale pairs tolerated before a compaction, at least.
const STALE_MIN: usize = 64;

impl DeadlineIndex {
    /// Whether `order` holds the nodes with a deadline (large tables): it
    /// holds a pair for each, so it is empty only for a small table.
    fn ordered(&self) -> bool {
        !self.order.is_empty() || self.count == 0
    }

    /// Whether `d` is a node's current pair (not a stale one).
    pub(crate) fn live(&self, d: Due) -> bool {
        is_live(&self.at, d)
    }

    /// Restores the order's invariants after a change: its first and last
    /// pairs are live (so the earliest and latest deadlines read in O(1)),
    /// and stale pairs never outnumber live ones by much (past that, each
    /// change clears a few chunks of them, in turn).
    pub(crate) fn settle(&mut self) {
        let stale = self.order.len().saturating_sub(self.count);
        if stale == 0 {
            return;
        }
        if stale > self.count.max(STALE_MIN) {
            // A few chunks per change, never the whole order at once (a
            // million-member key would stall every client for a pass
            // over two million pairs): each change adds at most one stale
            // pair, each call here clears up to 2 * 2 * LOAD.
            for _ in 0..COMPACT_CHUNKS {
                if self.sweep >= self.order.chunk_count() {
                    self.sweep = 0;
                }
                let at = &self.at;
                self.order.retain_chunk(self.sweep, |d| is_live(at, d));
                self.sweep += 1;
            }
        }
        while let Some(d) = self.order.first().filter(|&d| !self.live(d)) {
            self.order.remove(d);
        }
        while let Some(d) = self.order.last().filter(|&d| !self.live(d)) {
            self.order.remove(d);
        }
    }

    /// Drops every stale pair (before ids are renumbered, which could
    /// make a stale pair equal to a live one).
    pub(crate) fn compact(&mut self) {
        if self.order.len() > self.count {
            let at = &self.at;
            self.order.retain(|d| is_live(at, d));
        }
    }

    /// Ids of the nodes with a deadline, by id.
    fn with_deadline(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.at.len() as u32).filter(|&i| self.at[i as usize] != NO_DEADLINE)
    }

    /// The id with the earliest (deadline, id).
    pub(crate) fn earliest_id(&self) -> Option<u32> {
        if self.ordered() {
            return self.order.first().map(|d| d.id);
        }
        self.with_deadline()
            .min_by_key(|&i| (self.at[i as usize], i))
    }

    /// The earliest deadline.
    fn earliest(&self) -> Option<u64> {
        if self.ordered() {
            return self.order.first().map(|d| d.at);
        }
        self.with_deadline().map(|i| self.at[i as usize]).min()
    }

    /// The latest deadline.
    fn latest(&self) -> Option<u64> {
        if self.ordered() {
            return self.order.last().map(|d| d.at);
        }
        self.with_deadline().map(|i| self.at[i as usize]).max()
    }
}

/// Members with their deadlines in deadline order: walked from the order,
/// or sorted on demand for a small table or a packed set.
enum DeadlineIter<'a> {
    Order(
        &'a dyn MemberNames,
        &'a [u64],
        crate::value::order::RankIter<'a, Due>,
    ),
    Sorted(&'a dyn MemberNames, &'a [u64], std::vec::IntoIter<u32>),
    Packed(&'a dyn PackDeadlines, std::vec::IntoIter<(u64, usize)>),
    Empty,
}

impl<'a> Iterator for DeadlineIter<'a> {
    type Item = (&'a [u8], u64);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            DeadlineIter::Order(names, at, it) => it
                .find(|&d| is_live(at, d))
                .map(|d| (names.member(d.id), d.at)),
            DeadlineIter::Sorted(names, at, it) => {
                it.next().map(|id| (names.member(id), at[id as usize]))
            }
            DeadlineIter::Packed(p, it) => it.next().map(|(t, o)| (p.member_at(o), t)),
            DeadlineIter::Empty => None,
        }
    }
}

/// What a deadline view needs from the table holding the members.
pub(crate) trait MemberNames {
    /// The member with id `id` (an id the index holds).
    fn member(&self, id: u32) -> &[u8];
    /// The id of `member`, if present.
    fn find(&self, member: &[u8]) -> Option<u32>;
}

/// A read-only view of the deadlines of one collection's members.
#[derive(Clone, Copy)]
pub struct MemberDeadlines<'a>(Source<'a>);

#[derive(Clone, Copy)]
enum Source<'a> {
    /// A member table and its deadline index.
    Table {
        names: &'a dyn MemberNames,
        index: Option<&'a DeadlineIndex>,
    },
    /// A packed collection, whose entries hold their deadlines.
    Packed(&'a dyn PackDeadlines),
}

impl std::fmt::Debug for MemberDeadlines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> MemberDeadlines<'a> {
    pub(crate) fn new(names: &'a dyn MemberNames, index: Option<&'a DeadlineIndex>) -> Self {
        MemberDeadlines(Source::Table { names, index })
    }

    pub(crate) fn packed(p: &'a dyn PackDeadlines) -> Self {
        MemberDeadlines(Source::Packed(p))
    }

    /// The deadline of `member`, if it has one.
    pub fn get(&self, member: &[u8]) -> Option<u64> {
        let t = match self.0 {
            Source::Table { names, index } => {
                let id = names.find(member)?;
                *index?.at.get(id as usize)?
            }
            Source::Packed(p) => p.deadline_of(member)?,
        };
        (t != NO_DEADLINE).then_some(t)
    }

    /// The earliest deadline of any member.
    pub fn earliest(&self) -> Option<u64> {
        match self.0 {
            Source::Table { index, .. } => index?.earliest(),
            Source::Packed(p) => p.first_due(),
        }
    }

    /// The latest deadline of any member.
    pub fn latest(&self) -> Option<u64> {
        match self.0 {
            Source::Table { index, .. } => index?.latest(),
            Source::Packed(p) => p.latest(),
        }
    }

    /// How many members carry a deadline.
    pub fn len(&self) -> usize {
        match self.0 {
            Source::Table { index, .. } => index.map_or(0, |d| d.count),
            Source::Packed(p) => p.timed(),
        }
    }

    /// Whether no member carries a deadline.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(member, deadline)` pairs in deadline order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], u64)> + 'a {
        match self.0 {
            Source::Packed(p) => DeadlineIter::Packed(p, p.by_deadline().into_iter()),
            Source::Table { index: None, .. } => DeadlineIter::Empty,
            Source::Table {
                names,
                index: Some(d),
            } => {
                if d.ordered() {
                    DeadlineIter::Order(names, &d.at, d.order.iter())
                } else {
                    let mut ids: Vec<u32> = d.with_deadline().collect();
                    ids.sort_by_key(|&i| (d.at[i as usize], i));
                    DeadlineIter::Sorted(names, &d.at, ids.into_iter())
                }
            }
        }
    }

    /// Whether `member` is expired at `now` (has a deadline `<= now`).
    pub fn is_due(&self, member: &[u8], now: u64) -> bool {
        matches!(self.get(member), Some(t) if t <= now)
    }
}
