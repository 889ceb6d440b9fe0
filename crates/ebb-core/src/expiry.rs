//! Member deadlines: which members of one collection carry an absolute
//! deadline (Unix milliseconds), ordered so the earliest is found in
//! O(log n).
//!
//! A collection's members live once, in its
//! [`MemberTable`](crate::value::table::MemberTable), under dense `u32` ids.
//! The deadlines of a table are a [`DeadlineIndex`]: one `u64` per member,
//! parallel to the table's nodes, plus the ids of the members that have a
//! deadline ordered by (deadline, member). A collection without any
//! deadline keeps no index and pays one null pointer; a member with one
//! pays 8 bytes plus about 6 for its place in the order.

use crate::value::order::IdOrder;

/// The stored deadline of a member without one.
pub(crate) const NO_DEADLINE: u64 = u64::MAX;

/// Deadlines of one table's members.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeadlineIndex {
    /// Deadline of each node by id, [`NO_DEADLINE`] when it has none.
    pub(crate) at: Vec<u64>,
    /// Ids of the nodes with a deadline, by (deadline, member).
    pub(crate) order: IdOrder,
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
        let d = self.index?;
        d.at.get(d.order.first()? as usize).copied()
    }

    /// The latest deadline of any member.
    pub fn latest(&self) -> Option<u64> {
        let d = self.index?;
        d.at.get(d.order.last()? as usize).copied()
    }

    /// How many members carry a deadline.
    pub fn len(&self) -> usize {
        self.index.map_or(0, |d| d.order.len())
    }

    /// Whether no member carries a deadline.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(member, deadline)` pairs in deadline order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], u64)> + 'a {
        let names = self.names;
        self.index.into_iter().flat_map(move |d| {
            d.order
                .iter()
                .map(move |id| (names.member(id), d.at[id as usize]))
        })
    }

    /// Whether `member` is expired at `now` (has a deadline `<= now`).
    pub fn is_due(&self, member: &[u8], now: u64) -> bool {
        matches!(self.get(member), Some(t) if t <= now)
    }
}
