//! Sets whose members may carry deadlines.

use bytes::Bytes;

use super::table::MemberTable;
use crate::expiry::MemberDeadlines;

/// A set. Members are stored once in a dense [`MemberTable`], so random
/// members (SPOP, SRANDMEMBER) cost O(1); removal moves the last member
/// into the hole, as an index set's `swap_remove` does.
#[derive(Debug, Default, Clone)]
pub struct SetValue {
    table: MemberTable<()>,
}

impl SetValue {
    /// An empty set.
    pub fn new() -> SetValue {
        SetValue::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        self.table.find(m).is_some()
    }

    /// Adds `m`; returns true if it was new. An existing member keeps its deadline.
    pub fn insert(&mut self, m: impl AsRef<[u8]>) -> bool {
        let m = m.as_ref();
        if self.table.find(m).is_some() {
            return false;
        }
        self.table.push(m, ());
        true
    }

    /// Removes `m` and its deadline; returns true if it was present.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self.table.find(m) {
            Some(id) => self.table.swap_remove(id).is_some(),
            None => false,
        }
    }

    /// The member at position `i` (0..len), for random picks.
    pub fn get_index(&self, i: usize) -> Option<&[u8]> {
        self.table.nodes().get(i).map(|n| &n.member[..])
    }

    /// Iterates over the members.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + DoubleEndedIterator {
        self.table.nodes().iter().map(|n| &n.member[..])
    }

    /// The deadline of `m`, if it is a member with one.
    pub fn deadline(&self, m: &[u8]) -> Option<u64> {
        self.table.deadline(self.table.find(m)?)
    }

    /// Whether every member is a canonical 64-bit integer, the shape Redis
    /// 7.0 keeps in its compact `intset` encoding.
    pub fn all_integers(&self) -> bool {
        self.iter().all(|m| crate::args::parse_i64(m).is_some())
    }

    /// The member deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        self.table.deadlines()
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

    /// Adds `m` with the deadline `at`, replacing any deadline it had;
    /// returns true if it was new.
    #[cfg(test)]
    pub fn insert_with_deadline(&mut self, m: impl AsRef<[u8]>, at: u64) -> bool {
        self.upsert_deadline(m.as_ref(), at, false) == Some(true)
    }

    /// SADDEX's write of one member, with one lookup: adds `m` with the
    /// deadline `at` (`Some(true)`), or gives an existing member that
    /// deadline (`Some(false)`) unless `keep` is set, in which case it keeps
    /// its own (`None`).
    pub fn upsert_deadline(&mut self, m: &[u8], at: u64, keep: bool) -> Option<bool> {
        let (id, new) = match self.table.find(m) {
            Some(_) if keep => return None,
            Some(id) => (id, false),
            None => (self.table.push(m, ()), true),
        };
        self.table.set_deadline(id, at);
        Some(new)
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let id = self.table.first_due(now)?;
        self.table.swap_remove(id).map(|n| n.member.into_bytes())
    }

    /// Heap bytes held by the structure (not the members' own bytes).
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}

impl<B: AsRef<[u8]>> FromIterator<B> for SetValue {
    /// A set of the given members, none with a deadline.
    fn from_iter<I: IntoIterator<Item = B>>(iter: I) -> SetValue {
        let mut s = SetValue::new();
        for m in iter {
            s.insert(m);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn insert_keeps_deadline_and_remove_forgets_it() {
        let mut s = SetValue::new();
        assert!(s.insert_with_deadline(b("a"), 50));
        assert!(!s.insert(b("a")));
        assert_eq!(s.deadline(b"a"), Some(50));
        assert!(s.remove(b"a"));
        assert!(s.insert(b("a")));
        assert_eq!(s.deadline(b"a"), None);
        assert!(s.deadlines().is_empty());
    }

    #[test]
    fn insert_with_deadline_replaces_deadline() {
        let mut s = SetValue::new();
        s.insert(b("a"));
        assert!(!s.insert_with_deadline(b("a"), 10));
        assert!(!s.insert_with_deadline(b("a"), 20));
        assert_eq!(s.deadline(b"a"), Some(20));
        assert_eq!(s.deadlines().len(), 1);
    }

    #[test]
    fn pop_due_in_deadline_order() {
        let mut s = SetValue::new();
        s.insert_with_deadline(b("late"), 30);
        s.insert_with_deadline(b("early"), 10);
        s.insert(b("forever"));
        assert_eq!(s.pop_due(9), None);
        assert_eq!(s.pop_due(100).as_deref(), Some(&b"early"[..]));
        assert_eq!(s.pop_due(100).as_deref(), Some(&b"late"[..]));
        assert_eq!(s.pop_due(100), None);
        assert_eq!(s.len(), 1);
        assert!(s.contains(b"forever"));
    }

    #[test]
    fn integers_and_collect() {
        let s: SetValue = [b("1"), b("-20")].into_iter().collect();
        assert!(s.all_integers());
        let t: SetValue = [b("1"), b("01")].into_iter().collect();
        assert!(!t.all_integers());
        assert!(t.deadlines().is_empty());
    }
}
