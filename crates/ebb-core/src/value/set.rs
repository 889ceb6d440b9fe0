//! Sets whose members may carry deadlines.

use bytes::Bytes;
use indexmap::IndexSet;

use crate::expiry::MemberDeadlines;

/// A set. Members are kept in an index-addressable hash set so that random
/// members (SPOP, SRANDMEMBER) cost O(1).
#[derive(Debug, Default, Clone)]
pub struct SetValue {
    members: IndexSet<Bytes, ahash::RandomState>,
    deadlines: MemberDeadlines,
}

impl SetValue {
    /// An empty set.
    pub fn new() -> SetValue {
        SetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        self.members.contains(m)
    }

    /// Adds `m`; returns true if it was new. An existing member keeps its deadline.
    pub fn insert(&mut self, m: Bytes) -> bool {
        self.members.insert(m)
    }

    /// Removes `m` and its deadline; returns true if it was present.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        if self.members.swap_remove(m) {
            self.deadlines.clear(m);
            true
        } else {
            false
        }
    }

    /// The member at position `i` (0..len), for random picks.
    pub fn get_index(&self, i: usize) -> Option<&Bytes> {
        self.members.get_index(i)
    }

    /// Iterates over the members.
    pub fn iter(&self) -> impl Iterator<Item = &Bytes> {
        self.members.iter()
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> &MemberDeadlines {
        &self.deadlines
    }

    /// Sets the deadline of an existing member; false if it is not a member.
    pub fn set_deadline(&mut self, m: &[u8], at: u64) -> bool {
        match self.members.get(m) {
            Some(k) => {
                self.deadlines.set(k.clone(), at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `m`; returns the one it had.
    pub fn clear_deadline(&mut self, m: &[u8]) -> Option<u64> {
        self.deadlines.clear(m)
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let m = self.deadlines.pop_due(now)?;
        self.members.swap_remove(&m);
        Some(m)
    }
}
