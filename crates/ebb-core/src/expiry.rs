//! Member deadlines: the per-collection record of which members carry an
//! absolute deadline (Unix milliseconds), ordered so the earliest is found
//! in O(log n). Collections without any deadline keep this empty and pay
//! only its empty size.

use bytes::Bytes;
use std::collections::BTreeSet;
use std::collections::HashMap;

/// Deadlines of the members of one collection.
#[derive(Debug, Default, Clone)]
pub struct MemberDeadlines {
    by_member: HashMap<Bytes, u64, ahash::RandomState>,
    by_time: BTreeSet<(u64, Bytes)>,
}

impl MemberDeadlines {
    /// The deadline of `member`, if it has one.
    pub fn get(&self, member: &[u8]) -> Option<u64> {
        if self.by_member.is_empty() {
            return None;
        }
        self.by_member.get(member).copied()
    }

    /// Gives `member` the deadline `at`, replacing any previous one.
    pub fn set(&mut self, member: Bytes, at: u64) {
        if let Some(old) = self.by_member.insert(member.clone(), at) {
            self.by_time.remove(&(old, member.clone()));
        }
        self.by_time.insert((at, member));
    }

    /// Removes the deadline of `member`; returns the one it had.
    pub fn clear(&mut self, member: &[u8]) -> Option<u64> {
        if self.by_member.is_empty() {
            return None;
        }
        let (k, old) = self.by_member.remove_entry(member)?;
        self.by_time.remove(&(old, k));
        Some(old)
    }

    /// The earliest deadline of any member.
    pub fn earliest(&self) -> Option<u64> {
        self.by_time.first().map(|(t, _)| *t)
    }

    /// The latest deadline of any member.
    pub fn latest(&self) -> Option<u64> {
        self.by_time.last().map(|(t, _)| *t)
    }

    /// Removes and returns the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let (t, _) = self.by_time.first()?;
        if *t > now {
            return None;
        }
        let (_, m) = self.by_time.pop_first()?;
        self.by_member.remove(&m);
        Some(m)
    }

    /// How many members carry a deadline.
    pub fn len(&self) -> usize {
        self.by_member.len()
    }

    /// Whether no member carries a deadline.
    pub fn is_empty(&self) -> bool {
        self.by_member.is_empty()
    }

    /// Forgets every deadline.
    pub fn clear_all(&mut self) {
        self.by_member.clear();
        self.by_time.clear();
    }

    /// Iterates over `(member, deadline)` pairs in deadline order.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, u64)> {
        self.by_time.iter().map(|(t, m)| (m, *t))
    }

    /// Whether `member` is expired at `now` (has a deadline `<= now`).
    pub fn is_due(&self, member: &[u8], now: u64) -> bool {
        matches!(self.get(member), Some(t) if t <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replace_clear_pop() {
        let mut d = MemberDeadlines::default();
        d.set(Bytes::from_static(b"a"), 10);
        d.set(Bytes::from_static(b"b"), 5);
        d.set(Bytes::from_static(b"a"), 3);
        assert_eq!(d.earliest(), Some(3));
        assert_eq!(d.len(), 2);
        assert_eq!(d.pop_due(2), None);
        assert_eq!(d.pop_due(3).as_deref(), Some(&b"a"[..]));
        assert_eq!(d.clear(b"b"), Some(5));
        assert!(d.is_empty());
        assert_eq!(d.earliest(), None);
    }
}
