//! A sorted set's member deadlines: reading, setting and clearing them,
//! and removing the members whose time has come.

use bytes::Bytes;

use super::{MemberRef, Repr, ZSetValue};
use crate::expiry::MemberDeadlines;

impl ZSetValue {
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
            Repr::Packed(p) => p.clear_deadline_at(r.0 as usize),
            Repr::Large(l) => l.table.clear_deadline(r.0),
        }
    }

    /// Removes the earliest member whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let r = match &self.repr {
            Repr::Packed(p) => MemberRef(p.first_due_by(now)? as u32),
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
}
