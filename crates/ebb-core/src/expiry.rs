//! Member deadlines: the per-collection record of which members carry an
//! absolute deadline (Unix milliseconds), ordered so the earliest is found
//! in O(log n). Collections without any deadline keep this empty and pay
//! only its empty size.

use bytes::Bytes;
use std::collections::BTreeSet;
use std::collections::HashMap;

/// Deadlines of the members of one collection. A collection without any
/// deadline pays one null pointer.
#[derive(Debug, Default, Clone)]
pub struct MemberDeadlines {
    inner: Option<Box<Indexes>>,
}

#[derive(Debug, Default, Clone)]
struct Indexes {
    by_member: HashMap<Bytes, u64, ahash::RandomState>,
    by_time: BTreeSet<(u64, Bytes)>,
}

impl MemberDeadlines {
    /// The deadline of `member`, if it has one.
    pub fn get(&self, member: &[u8]) -> Option<u64> {
        self.inner.as_ref()?.by_member.get(member).copied()
    }

    /// Gives `member` the deadline `at`, replacing any previous one.
    pub fn set(&mut self, member: Bytes, at: u64) {
        let d = self.inner.get_or_insert_with(Default::default);
        if let Some(old) = d.by_member.insert(member.clone(), at) {
            d.by_time.remove(&(old, member.clone()));
        }
        d.by_time.insert((at, member));
    }

    /// Removes the deadline of `member`; returns the one it had.
    pub fn clear(&mut self, member: &[u8]) -> Option<u64> {
        let d = self.inner.as_mut()?;
        let (k, old) = d.by_member.remove_entry(member)?;
        d.by_time.remove(&(old, k));
        if d.by_member.is_empty() {
            self.inner = None;
        }
        Some(old)
    }

    /// The earliest deadline of any member.
    pub fn earliest(&self) -> Option<u64> {
        self.inner.as_ref()?.by_time.first().map(|(t, _)| *t)
    }

    /// The latest deadline of any member.
    pub fn latest(&self) -> Option<u64> {
        self.inner.as_ref()?.by_time.last().map(|(t, _)| *t)
    }

    /// Removes and returns the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let d = self.inner.as_mut()?;
        let (t, _) = d.by_time.first()?;
        if *t > now {
            return None;
        }
        let (_, m) = d.by_time.pop_first()?;
        d.by_member.remove(&m);
        if d.by_member.is_empty() {
            self.inner = None;
        }
        Some(m)
    }

    /// How many members carry a deadline.
    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, |d| d.by_member.len())
    }

    /// Whether no member carries a deadline.
    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    /// Forgets every deadline.
    pub fn clear_all(&mut self) {
        self.inner = None;
    }

    /// Iterates over `(member, deadline)` pairs in deadline order.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, u64)> {
        self.inner
            .iter()
            .flat_map(|d| d.by_time.iter().map(|(t, m)| (m, *t)))
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
