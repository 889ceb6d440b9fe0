//! Small hashes packed into one byte buffer, as Redis keeps a listpack.
//!
//! While a hash has at most [`MAX_LEN`] fields and no field or value longer
//! than [`MAX_ITEM`] bytes, it is one buffer of entries in insertion order
//! (a removal shifts the rest down, an update keeps the field's place):
//!
//! ```text
//! [field length] [field] [value length] [value] [deadline]
//! ```
//!
//! Lengths are one byte (at most 64); the deadline is a varint, 0 for none,
//! otherwise the deadline plus one. Every operation walks the buffer: O(n)
//! over at most 128 entries of a few dozen bytes.

use bytes::Bytes;

use super::member::Member;
use super::table::MemberTable;
use super::zpack::PackDeadlines;
use crate::expiry::NO_DEADLINE;

/// Most fields a packed hash holds (Redis's `hash-max-listpack-entries`).
pub(crate) const MAX_LEN: usize = 128;
/// Longest field or value a packed hash holds (`hash-max-listpack-value`).
pub(crate) const MAX_ITEM: usize = 64;
/// Spare bytes a buffer may keep after a removal before it shrinks.
const SLACK: usize = 32;

/// One entry, decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HEntry<'a> {
    pub(crate) field: &'a [u8],
    pub(crate) value: &'a [u8],
    /// [`NO_DEADLINE`] when it has none.
    pub(crate) deadline: u64,
    /// Offset of the next entry.
    pub(crate) next: usize,
    /// Offset of the deadline varint.
    at_deadline: usize,
}

/// A small hash as one buffer (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct HPack {
    buf: Vec<u8>,
    len: u16,
    /// How many entries have a deadline.
    timed: u16,
    /// The earliest deadline ([`NO_DEADLINE`] when none).
    first_due: u64,
}

impl Default for HPack {
    fn default() -> Self {
        HPack {
            buf: Vec::new(),
            len: 0,
            timed: 0,
            first_due: NO_DEADLINE,
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(buf: &[u8], o: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    while let Some(&b) = buf.get(*o) {
        *o += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

fn deadline_code(at: u64) -> u64 {
    if at == NO_DEADLINE {
        0
    } else {
        at.saturating_add(1)
    }
}

impl HPack {
    /// Number of fields.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether `field` and `value` may go into a packed hash.
    pub(crate) fn fits(field: &[u8], value: &[u8]) -> bool {
        field.len() <= MAX_ITEM && value.len() <= MAX_ITEM
    }

    /// Whether one more field fits.
    pub(crate) fn has_room(&self) -> bool {
        self.len() < MAX_LEN
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// The entry at offset `o`.
    pub(crate) fn entry(&self, o: usize) -> HEntry<'_> {
        let b = &self.buf;
        let flen = b[o] as usize;
        let field = &b[o + 1..o + 1 + flen];
        let v = o + 1 + flen;
        let vlen = b[v] as usize;
        let value = &b[v + 1..v + 1 + vlen];
        let at_deadline = v + 1 + vlen;
        let mut next = at_deadline;
        let code = get_varint(b, &mut next);
        HEntry {
            field,
            value,
            deadline: if code == 0 { NO_DEADLINE } else { code - 1 },
            next,
            at_deadline,
        }
    }

    /// Entries in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, HEntry<'_>)> + '_ {
        let mut o = 0;
        std::iter::from_fn(move || {
            if o >= self.buf.len() {
                return None;
            }
            let e = self.entry(o);
            let at = o;
            o = e.next;
            Some((at, e))
        })
    }

    /// The offset of `field`'s entry.
    pub(crate) fn find(&self, field: &[u8]) -> Option<usize> {
        self.entries()
            .find(|(_, e)| e.field == field)
            .map(|(o, _)| o)
    }

    /// The offset of the `i`-th entry.
    pub(crate) fn nth(&self, i: usize) -> Option<usize> {
        self.entries().nth(i).map(|(o, _)| o)
    }

    /// Appends a field (not present yet) with its value and deadline.
    pub(crate) fn push(&mut self, field: &[u8], value: &[u8], deadline: u64) {
        // Exact growth, as a listpack grows: small hashes are many, and a
        // doubling buffer would leave a third of each one unused.
        self.buf.reserve_exact(
            field.len() + value.len() + 2 + if deadline == NO_DEADLINE { 1 } else { 7 },
        );
        self.buf.push(field.len() as u8);
        self.buf.extend_from_slice(field);
        self.buf.push(value.len() as u8);
        self.buf.extend_from_slice(value);
        put_varint(&mut self.buf, deadline_code(deadline));
        self.len += 1;
        if deadline != NO_DEADLINE {
            self.timed += 1;
            self.first_due = self.first_due.min(deadline);
        }
    }

    /// Replaces the bytes `start..end` of the buffer with `with`.
    fn splice(&mut self, start: usize, end: usize, with: &[u8]) {
        self.buf.splice(start..end, with.iter().copied());
        self.shrink();
    }

    fn shrink(&mut self) {
        if self.buf.capacity() > self.buf.len() + SLACK.max(self.buf.len() / 4) {
            self.buf.shrink_to(self.buf.len() + SLACK / 2);
        }
    }

    /// Sets the value of the entry at `o`.
    pub(crate) fn set_value_at(&mut self, o: usize, value: &[u8]) {
        let e = self.entry(o);
        if e.value == value {
            return;
        }
        let v = o + 1 + e.field.len();
        let end = e.at_deadline;
        let mut with = Vec::with_capacity(value.len() + 1);
        with.push(value.len() as u8);
        with.extend_from_slice(value);
        self.splice(v, end, &with);
    }

    /// Sets (or with [`NO_DEADLINE`] clears) the deadline of the entry at
    /// `o`; returns the one it had.
    pub(crate) fn set_deadline_at(&mut self, o: usize, at: u64) -> Option<u64> {
        let e = self.entry(o);
        let old = e.deadline;
        if old == at {
            return (old != NO_DEADLINE).then_some(old);
        }
        let (start, end) = (e.at_deadline, e.next);
        let mut with = Vec::with_capacity(10);
        put_varint(&mut with, deadline_code(at));
        self.splice(start, end, &with);
        match (old == NO_DEADLINE, at == NO_DEADLINE) {
            (true, false) => self.timed += 1,
            (false, true) => self.timed -= 1,
            _ => {}
        }
        self.refresh_first_due(old, at);
        (old != NO_DEADLINE).then_some(old)
    }

    /// Keeps [`HPack::first_due`] right after a deadline went from `old`
    /// to `new`.
    fn refresh_first_due(&mut self, old: u64, new: u64) {
        if new < self.first_due {
            self.first_due = new;
        } else if old == self.first_due {
            self.first_due = self
                .entries()
                .map(|(_, e)| e.deadline)
                .min()
                .unwrap_or(NO_DEADLINE);
        }
    }

    /// Removes the entry at `o`: (field, value, deadline).
    pub(crate) fn remove_at(&mut self, o: usize) -> (Bytes, Bytes, u64) {
        let e = self.entry(o);
        let out = (
            Bytes::copy_from_slice(e.field),
            Bytes::copy_from_slice(e.value),
            e.deadline,
        );
        let end = e.next;
        self.buf.drain(o..end);
        self.shrink();
        self.len -= 1;
        if out.2 != NO_DEADLINE {
            self.timed -= 1;
            self.refresh_first_due(out.2, NO_DEADLINE);
        }
        out
    }

    /// The deadline of the entry at `o`, if it has one.
    pub(crate) fn deadline_at(&self, o: usize) -> Option<u64> {
        let d = self.entry(o).deadline;
        (d != NO_DEADLINE).then_some(d)
    }

    /// The offset of the first entry (in buffer order) among those with
    /// the earliest deadline, if that deadline is `<= now`.
    pub(crate) fn first_due_by(&self, now: u64) -> Option<usize> {
        if self.first_due > now {
            return None;
        }
        let first = self.first_due;
        self.entries()
            .find(|(_, e)| e.deadline == first)
            .map(|(o, _)| o)
    }

    /// The same fields in a member table (for a hash outgrowing the pack).
    pub(crate) fn to_table(&self) -> MemberTable<Member> {
        let mut t = MemberTable::default();
        for (_, e) in self.entries() {
            let id = t.push(e.field, Member::new(e.value));
            if e.deadline != NO_DEADLINE {
                t.set_deadline(id, e.deadline);
            }
        }
        t
    }

    /// Checks the counters against the buffer (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let all: Vec<_> = self.entries().collect();
        assert_eq!(all.len(), self.len());
        let timed = all
            .iter()
            .filter(|(_, e)| e.deadline != NO_DEADLINE)
            .count();
        assert_eq!(timed, self.timed as usize);
        let first = all
            .iter()
            .map(|(_, e)| e.deadline)
            .min()
            .unwrap_or(NO_DEADLINE);
        assert_eq!(first, self.first_due);
        assert_eq!(all.last().map_or(0, |(_, e)| e.next), self.buf.len());
    }
}

impl PackDeadlines for HPack {
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadline_at(self.find(m)?)
    }

    fn first_due(&self) -> Option<u64> {
        (self.first_due != NO_DEADLINE).then_some(self.first_due)
    }

    fn latest(&self) -> Option<u64> {
        self.entries()
            .map(|(_, e)| e.deadline)
            .filter(|&d| d != NO_DEADLINE)
            .max()
    }

    fn timed(&self) -> usize {
        self.timed as usize
    }

    fn by_deadline(&self) -> Vec<(u64, usize)> {
        let mut v: Vec<(u64, usize)> = self
            .entries()
            .filter(|(_, e)| e.deadline != NO_DEADLINE)
            .map(|(o, e)| (e.deadline, o))
            .collect();
        v.sort_unstable();
        v
    }

    fn member_at(&self, o: usize) -> &[u8] {
        self.entry(o).field
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_update_and_remove_in_place() {
        let mut p = HPack::default();
        p.push(b"a", b"1", NO_DEADLINE);
        p.push(b"bb", b"", 1_700_000_000_000);
        p.push(b"", b"3", u64::MAX - 1);
        p.check();
        let o = p.find(b"a").unwrap();
        p.set_value_at(o, &[b'x'; 64]);
        p.check();
        assert_eq!(p.entry(p.find(b"a").unwrap()).value, &[b'x'; 64][..]);
        assert_eq!(p.first_due, 1_700_000_000_000);
        let o = p.find(b"bb").unwrap();
        assert_eq!(p.set_deadline_at(o, NO_DEADLINE), Some(1_700_000_000_000));
        p.check();
        assert_eq!(p.first_due, u64::MAX - 1);
        let o = p.find(b"").unwrap();
        assert_eq!(p.remove_at(o).2, u64::MAX - 1);
        p.check();
        let fields: Vec<&[u8]> = p.entries().map(|(_, e)| e.field).collect();
        assert_eq!(fields, vec![&b"a"[..], &b"bb"[..]]);
        let t = p.to_table();
        assert_eq!(t.len(), 2);
    }
}
