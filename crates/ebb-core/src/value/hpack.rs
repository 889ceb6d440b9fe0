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
//!
//! The buffer is the whole hash, exactly sized: a 4-byte header (field
//! count, fields with a deadline, and the most fields and longest item the
//! hash ever held, which OBJECT ENCODING reports from), the entries, and
//! only while a field has a deadline (or the keyspace still records one) a
//! 16-byte trailer with the earliest deadline and the recorded one. The
//! trailer sits after the entries, so adding or dropping it never moves an
//! entry.

use bytes::Bytes;

use super::exact;
use super::member::Member;
use super::table::MemberTable;
use super::zpack::PackDeadlines;
use crate::expiry::NO_DEADLINE;

/// Most fields a packed hash holds (Redis's `hash-max-listpack-entries`).
pub(crate) const MAX_LEN: usize = 128;
/// Longest field or value a packed hash holds (`hash-max-listpack-value`).
pub(crate) const MAX_ITEM: usize = 64;

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
#[derive(Debug, Clone, Default)]
pub(crate) struct HPack {
    buf: Box<[u8]>,
}

/// Header bytes before the entries.
const HEADER: usize = 4;
/// Header byte positions.
const H_LEN: usize = 0;
const H_TIMED: usize = 1;
const H_PEAK_LEN: usize = 2;
const H_PEAK_ITEM: usize = 3;
/// Set in the peak-item byte when the buffer ends with the deadline
/// trailer.
const HAS_DUES: u8 = 0x80;
/// The trailer: earliest deadline, then the one the keyspace recorded.
const DUES: usize = 16;

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
    fn header(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    fn has_dues(&self) -> bool {
        self.header(H_PEAK_ITEM) & HAS_DUES != 0
    }

    /// Where the entries end (the trailer follows).
    fn entries_end(&self) -> usize {
        self.buf.len() - if self.has_dues() { DUES } else { 0 }
    }

    /// (earliest deadline, deadline the keyspace recorded), both
    /// [`NO_DEADLINE`] without a trailer.
    fn dues(&self) -> (u64, u64) {
        if !self.has_dues() {
            return (NO_DEADLINE, NO_DEADLINE);
        }
        let t = self.buf.len() - DUES;
        (exact::word(&self.buf, t), exact::word(&self.buf, t + 8))
    }

    fn edit<R>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        exact::edit(&mut self.buf, HEADER, f)
    }

    /// Stores both deadlines, adding or dropping the trailer as needed.
    fn set_dues(&mut self, first: u64, recorded: u64) {
        let want = first != NO_DEADLINE || recorded != NO_DEADLINE;
        if !want && !self.has_dues() {
            return;
        }
        let words = want.then_some([first, recorded]);
        self.edit(|v| {
            exact::set_trailer(v, H_PEAK_ITEM, HAS_DUES, words.as_ref().map(|w| &w[..]), 2)
        });
    }

    /// Number of fields.
    pub(crate) fn len(&self) -> usize {
        self.header(H_LEN) as usize
    }

    fn timed_count(&self) -> usize {
        self.header(H_TIMED) as usize
    }

    fn first_due(&self) -> u64 {
        self.dues().0
    }

    /// The earliest deadline the keyspace's member index recorded for
    /// this hash ([`NO_DEADLINE`] for none).
    pub(crate) fn indexed_due(&self) -> u64 {
        self.dues().1
    }

    /// Records what the keyspace's member index holds for this hash.
    pub(crate) fn set_indexed_due(&mut self, t: u64) {
        self.set_dues(self.first_due(), t);
    }

    /// Most fields the hash ever held and longest field or value it ever
    /// stored (both bounded by the packed form's limits).
    pub(crate) fn peaks(&self) -> (u32, u32) {
        (
            u32::from(self.header(H_PEAK_LEN)),
            u32::from(self.header(H_PEAK_ITEM) & !HAS_DUES),
        )
    }

    /// Raises the peaks to the current field count and to `item` (a field
    /// or value length that fits the packed form).
    pub(crate) fn note_peaks(&mut self, item: usize) {
        let (len, peak) = self.peaks();
        let (new_len, new_item) = (len.max(self.len() as u32), peak.max(item as u32));
        if (new_len, new_item) != (len, peak) {
            self.edit(|v| {
                v[H_PEAK_LEN] = new_len as u8;
                v[H_PEAK_ITEM] = (v[H_PEAK_ITEM] & HAS_DUES) | new_item as u8;
            });
        }
    }

    /// The packed hash HSET of `pairs` (field, value, …) makes from nothing,
    /// built in one buffer: a field given again keeps its first place and
    /// takes the later value, as one write after another would leave it.
    /// Returns it and how many fields it has; None when it would not pack
    /// (too many fields, or a field or value too long).
    pub(crate) fn from_pairs(pairs: &[&[u8]]) -> Option<(HPack, usize)> {
        let mut at: Vec<(usize, usize)> = Vec::with_capacity(pairs.len() / 2);
        let mut peak_item = 0;
        for (i, p) in pairs.chunks_exact(2).enumerate() {
            let (field, value) = (p[0], p[1]);
            if !Self::fits(field, value) {
                return None;
            }
            peak_item = peak_item.max(field.len().max(value.len()));
            match at.iter().position(|&(f, _)| pairs[f] == field) {
                Some(k) => at[k].1 = 2 * i + 1,
                None if at.len() < MAX_LEN => at.push((2 * i, 2 * i + 1)),
                None => return None,
            }
        }
        let size: usize = at
            .iter()
            .map(|&(f, v)| 3 + pairs[f].len() + pairs[v].len())
            .sum();
        let mut buf = Vec::with_capacity(HEADER + size);
        buf.extend_from_slice(&[at.len() as u8, 0, at.len() as u8, peak_item as u8]);
        for &(f, v) in &at {
            buf.push(pairs[f].len() as u8);
            buf.extend_from_slice(pairs[f]);
            buf.push(pairs[v].len() as u8);
            buf.extend_from_slice(pairs[v]);
            put_varint(&mut buf, deadline_code(NO_DEADLINE));
        }
        let n = at.len();
        Some((
            HPack {
                buf: buf.into_boxed_slice(),
            },
            n,
        ))
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
        self.buf.len()
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

    /// Entries in order, with their offsets.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, HEntry<'_>)> + '_ {
        let end = if self.buf.is_empty() {
            0
        } else {
            self.entries_end()
        };
        let mut o = HEADER.min(end);
        std::iter::from_fn(move || {
            if o >= end {
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
        let mut e = Vec::with_capacity(field.len() + value.len() + 12);
        e.push(field.len() as u8);
        e.extend_from_slice(field);
        e.push(value.len() as u8);
        e.extend_from_slice(value);
        put_varint(&mut e, deadline_code(deadline));
        let at = if self.buf.is_empty() {
            HEADER
        } else {
            self.entries_end()
        };
        let timed = deadline != NO_DEADLINE;
        self.edit(|v| {
            exact::replace(v, at..at, &e);
            v[H_LEN] += 1;
            v[H_TIMED] += u8::from(timed);
        });
        if timed && deadline < self.first_due() {
            self.set_dues(deadline, self.indexed_due());
        }
    }

    /// Replaces the bytes `start..end` of the buffer with `with`.
    fn splice(&mut self, start: usize, end: usize, with: &[u8]) {
        self.edit(|v| exact::replace(v, start..end, with));
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
    /// `o`; returns the one it had. The entry does not move.
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
        let timed =
            self.timed_count() + usize::from(old == NO_DEADLINE) - usize::from(at == NO_DEADLINE);
        self.edit(|v| v[H_TIMED] = timed as u8);
        self.refresh_first_due(old, at);
        (old != NO_DEADLINE).then_some(old)
    }

    /// Keeps the earliest deadline right after one went from `old` to
    /// `new`.
    fn refresh_first_due(&mut self, old: u64, new: u64) {
        let first = self.first_due();
        let now_first = if new < first {
            new
        } else if old == first {
            self.entries()
                .map(|(_, e)| e.deadline)
                .min()
                .unwrap_or(NO_DEADLINE)
        } else {
            return;
        };
        self.set_dues(now_first, self.indexed_due());
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
        let timed = out.2 != NO_DEADLINE;
        self.edit(|v| {
            v.drain(o..end);
            v[H_LEN] -= 1;
            v[H_TIMED] -= u8::from(timed);
        });
        if timed {
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
        let first = self.first_due();
        if first > now {
            return None;
        }
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

    /// Checks the header and trailer against the entries (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let all: Vec<_> = self.entries().collect();
        assert_eq!(all.len(), self.len());
        let timed = all
            .iter()
            .filter(|(_, e)| e.deadline != NO_DEADLINE)
            .count();
        assert_eq!(timed, self.timed_count());
        let first = all
            .iter()
            .map(|(_, e)| e.deadline)
            .min()
            .unwrap_or(NO_DEADLINE);
        assert_eq!(first, self.first_due());
        let end = all.last().map_or(HEADER, |(_, e)| e.next);
        if !self.buf.is_empty() {
            assert_eq!(end, self.entries_end());
        }
        let (peak_len, peak_item) = self.peaks();
        assert!(peak_len as usize <= MAX_LEN && peak_item as usize <= MAX_ITEM);
    }
}

impl PackDeadlines for HPack {
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadline_at(self.find(m)?)
    }

    fn first_due(&self) -> Option<u64> {
        let t = HPack::first_due(self);
        (t != NO_DEADLINE).then_some(t)
    }

    fn latest(&self) -> Option<u64> {
        self.entries()
            .map(|(_, e)| e.deadline)
            .filter(|&d| d != NO_DEADLINE)
            .max()
    }

    fn timed(&self) -> usize {
        self.timed_count()
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
        assert_eq!(p.first_due(), 1_700_000_000_000);
        let o = p.find(b"bb").unwrap();
        assert_eq!(p.set_deadline_at(o, NO_DEADLINE), Some(1_700_000_000_000));
        p.check();
        assert_eq!(p.first_due(), u64::MAX - 1);
        let o = p.find(b"").unwrap();
        assert_eq!(p.remove_at(o).2, u64::MAX - 1);
        p.check();
        let fields: Vec<&[u8]> = p.entries().map(|(_, e)| e.field).collect();
        assert_eq!(fields, vec![&b"a"[..], &b"bb"[..]]);
        let t = p.to_table();
        assert_eq!(t.len(), 2);
    }

    /// The buffer is the header, the entries and, while there is a
    /// deadline to keep, the 16-byte trailer: nothing else.
    #[test]
    fn one_exact_buffer_with_a_trailer_only_for_deadlines() {
        let mut p = HPack::default();
        assert_eq!(p.heap_bytes(), 0);
        p.push(b"name", b"ebb", NO_DEADLINE);
        p.note_peaks(4);
        // header 4 + (1 + 4 + 1 + 3 + 1)
        assert_eq!(p.heap_bytes(), 14);
        assert_eq!(p.peaks(), (1, 4));
        p.push(b"otp", b"123456", 1_700_000_000_000);
        p.check();
        assert_eq!(p.heap_bytes(), 14 + 1 + 3 + 1 + 6 + 6 + DUES);
        p.set_indexed_due(1_700_000_000_000);
        assert_eq!(p.indexed_due(), 1_700_000_000_000);
        // The deadline goes; the recorded one keeps the trailer until the
        // keyspace records "none".
        p.set_deadline_at(p.find(b"otp").unwrap(), NO_DEADLINE);
        p.check();
        assert_eq!(p.heap_bytes(), 14 + 1 + 3 + 1 + 6 + 1 + DUES);
        p.set_indexed_due(NO_DEADLINE);
        assert_eq!(p.heap_bytes(), 14 + 1 + 3 + 1 + 6 + 1);
        assert_eq!(p.entry(p.find(b"otp").unwrap()).value, b"123456");
        // Peaks stay when fields go, and survive the trailer coming and going.
        p.note_peaks(6);
        p.remove_at(p.find(b"name").unwrap());
        p.check();
        assert_eq!(p.peaks(), (2, 6));
        assert_eq!(p.len(), 1);
    }
}
