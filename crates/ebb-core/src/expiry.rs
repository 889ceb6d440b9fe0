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
    pub(crate) order: Chunked<Due>,
    /// How many nodes have a deadline.
    pub(crate) count: usize,
}

impl DeadlineIndex {
    /// Whether `order` holds every node with a deadline (large tables).
    fn ordered(&self) -> bool {
        self.order.len() == self.count
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

/// Ids in (deadline, id) order: walked from the order, or sorted on
/// demand for a small table.
enum DeadlineIds<'a> {
    Order(crate::value::order::RankIter<'a, Due>),
    Sorted(std::vec::IntoIter<u32>),
}

impl Iterator for DeadlineIds<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            DeadlineIds::Order(it) => it.next().map(|d| d.id),
            DeadlineIds::Sorted(it) => it.next(),
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
pub struct MemberDeadlines<'a> {
    names: &'a dyn MemberNames,
    index: Option<&'a DeadlineIndex>,
}

impl std::fmt::Debug for MemberDeadlines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> MemberDeadlines<'a> {
    pub(crate) fn new(names: &'a dyn MemberNames, index: Option<&'a DeadlineIndex>) -> Self {
        MemberDeadlines { names, index }
    }

    /// The deadline of `member`, if it has one.
    pub fn get(&self, member: &[u8]) -> Option<u64> {
        let d = self.index?;
        let id = self.names.find(member)?;
        let t = *d.at.get(id as usize)?;
        (t != NO_DEADLINE).then_some(t)
    }

    /// The earliest deadline of any member.
    pub fn earliest(&self) -> Option<u64> {
        self.index?.earliest()
    }

    /// The latest deadline of any member.
    pub fn latest(&self) -> Option<u64> {
        self.index?.latest()
    }

    /// How many members carry a deadline.
    pub fn len(&self) -> usize {
        self.index.map_or(0, |d| d.count)
    }

    /// Whether no member carries a deadline.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(member, deadline)` pairs in deadline order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], u64)> + 'a {
        let names = self.names;
        let ids = match self.index {
            None => DeadlineIds::Sorted(Vec::new().into_iter()),
            Some(d) if d.ordered() => DeadlineIds::Order(d.order.iter()),
            Some(d) => {
                let mut ids: Vec<u32> = d.with_deadline().collect();
                ids.sort_by_key(|&i| (d.at[i as usize], i));
                DeadlineIds::Sorted(ids.into_iter())
            }
        };
        let at: &'a [u64] = self.index.map_or(&[], |d| &d.at[..]);
        ids.map(move |id| (names.member(id), at[id as usize]))
    }

    /// Whether `member` is expired at `now` (has a deadline `<= now`).
    pub fn is_due(&self, member: &[u8], now: u64) -> bool {
        matches!(self.get(member), Some(t) if t <= now)
    }
}
