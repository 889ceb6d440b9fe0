//! Small sorted sets and sets packed into one byte buffer.
//!
//! While a sorted set or set has at most [`MAX_LEN`] members of at most
//! [`MAX_MEMBER`] bytes, it is one buffer of entries, as Redis keeps its
//! listpack: no allocation, index slot or pointer per member. A sorted
//! set's entries are in (score, member) order; a set's, which have no score
//! field, in ascending numeric order while every member is an integer (as
//! Redis's `intset` keeps them), otherwise in the order they were added.
//! An entry is
//!
//! ```text
//! [size] [member length] [member bytes] [score] [deadline] [size]
//! ```
//!
//! - `size`: the entry's length in bytes, at both ends, so the buffer is
//!   walked forwards and backwards;
//! - `score`: a varint `1 + zigzag(score - base)` when the score is an
//!   integer of at most 2^53 in magnitude (`base`: the first such score the
//!   set held; the scores of one set are usually close, as timestamps or
//!   counters are); otherwise a 0 byte and the score's 8 bytes;
//! - `deadline`: a varint, 0 for none, otherwise `1 + zigzag(deadline -
//!   base)` against a deadline base of the set.
//!
//! Every operation walks the buffer: O(n) over at most 128 entries of a few
//! dozen bytes each.

use bytes::Bytes;
use std::cmp::Ordering;

use super::exact::{self, word};
use super::table::MemberTable;
use super::zset::Score;
use crate::args::parse_i64;
use crate::expiry::NO_DEADLINE;

/// Most members a packed sorted set holds.
pub(crate) const MAX_LEN: usize = 128;
/// Longest member a packed sorted set holds.
pub(crate) const MAX_MEMBER: usize = 64;
/// Deadlines from this one on are not packed (their difference from the
/// base would not fit the encoding).
const DEADLINE_LIMIT: u64 = 1 << 62;
/// Integer scores up to this magnitude are stored as integers.
const INT_LIMIT: f64 = 9_007_199_254_740_992.0;
/// Longest entry: two size bytes, the member length, the member and two
/// fields of at most 10 bytes.
const ENTRY_MAX: usize = 3 + MAX_MEMBER + 10 + 10;

/// Whether a deadline can be packed.
pub(crate) fn packable_deadline(at: u64) -> bool {
    at == NO_DEADLINE || at < DEADLINE_LIMIT
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// One entry, decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZEntry<'a> {
    pub(crate) member: &'a [u8],
    pub(crate) score: f64,
    /// [`NO_DEADLINE`] when it has none.
    pub(crate) deadline: u64,
}

/// An entry being encoded.
struct Encoded {
    bytes: [u8; ENTRY_MAX],
    len: usize,
}

impl Encoded {
    fn push(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.push(v as u8);
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A small sorted set (`SCORED`) or set as one buffer (see the module
/// documentation). A set's entries have no score field; they are in
/// ascending numeric order while every member is an integer, otherwise in
/// the order they were added.
///
/// The buffer is the whole collection, exactly sized: a header (member
/// count, members with a deadline, flags, and a sorted set's score base),
/// the entries, and only while a member has a deadline (or the keyspace
/// still records one) a trailer of three words: the deadline base, the
/// earliest deadline and the one the keyspace recorded. The last word is
/// left out while the recorded deadline is the earliest one (as it is
/// between commands). The trailer sits after the entries, so adding or
/// dropping it never moves an entry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pack<const SCORED: bool> {
    buf: Box<[u8]>,
}

/// Header byte positions.
const H_LEN: usize = 0;
const H_TIMED: usize = 1;
const H_FLAGS: usize = 2;
/// A sorted set's score base (8 bytes) follows the flags.
const H_SCORE_BASE: usize = 3;
/// Flag: a set holds (or held since it was last empty) a member that is
/// not an integer. Unset in a new set: Redis's `intset` shape.
const NOT_INTS: u8 = 1;
/// Flag: the buffer ends with the deadline trailer.
const HAS_DUES: u8 = 2;
/// Flag: the trailer has no recorded-deadline word, the keyspace recorded
/// the earliest deadline.
const RECORDED_FIRST: u8 = 4;
/// The trailer's size and its words' positions from its start.
const DUES: usize = 24;
/// The trailer's size without the recorded-deadline word.
const SHORT_DUES: usize = 16;
const T_DEADLINE_BASE: usize = 0;
const T_FIRST_DUE: usize = 8;
const T_INDEXED_DUE: usize = 16;

/// A packed sorted set.
pub(crate) type ZPack = Pack<true>;
/// A packed set.
pub(crate) type SPack = Pack<false>;

impl<const SCORED: bool> Pack<SCORED> {
    /// Header size: a sorted set's carries the score base.
    const HEADER: usize = if SCORED { 11 } else { 3 };

    fn header(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    fn has_dues(&self) -> bool {
        self.header(H_FLAGS) & HAS_DUES != 0
    }

    /// Where the entries start.
    fn start(&self) -> usize {
        Self::HEADER.min(self.buf.len())
    }

    /// The trailer's size in bytes.
    fn dues_len(&self) -> usize {
        match self.header(H_FLAGS) & (HAS_DUES | RECORDED_FIRST) {
            0 => 0,
            HAS_DUES => DUES,
            _ => SHORT_DUES,
        }
    }

    /// Where the entries end (the trailer follows).
    fn end(&self) -> usize {
        self.buf.len() - self.dues_len()
    }

    /// A trailer word, [`NO_DEADLINE`] without a trailer (the base: 0).
    fn due_word(&self, at: usize) -> u64 {
        if !self.has_dues() {
            return if at == T_DEADLINE_BASE {
                0
            } else {
                NO_DEADLINE
            };
        }
        let at = if at == T_INDEXED_DUE && self.header(H_FLAGS) & RECORDED_FIRST != 0 {
            T_FIRST_DUE
        } else {
            at
        };
        word(&self.buf, self.buf.len() - self.dues_len() + at)
    }

    fn score_base(&self) -> i64 {
        if SCORED && !self.buf.is_empty() {
            word(&self.buf, H_SCORE_BASE) as i64
        } else {
            0
        }
    }

    fn deadline_base(&self) -> u64 {
        self.due_word(T_DEADLINE_BASE)
    }

    fn first_due_raw(&self) -> u64 {
        self.due_word(T_FIRST_DUE)
    }

    fn edit<R>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        exact::edit(&mut self.buf, Self::HEADER, f)
    }

    /// Stores the trailer's words, adding or dropping it: it stays while a
    /// member has a deadline or the keyspace records one.
    fn set_dues(&mut self, base: u64, first: u64, recorded: u64) {
        let want = self.timed() > 0 || first != NO_DEADLINE || recorded != NO_DEADLINE;
        let had = self.has_dues();
        if !want && !had {
            return;
        }
        if want
            && had
            && (base, first, recorded)
                == (
                    self.deadline_base(),
                    self.first_due_raw(),
                    self.indexed_due(),
                )
        {
            return;
        }
        let all = [base, first, recorded];
        let words = match (want, first == recorded) {
            (false, _) => None,
            (true, true) => Some(&all[..2]),
            (true, false) => Some(&all[..]),
        };
        let old_words = self.dues_len() / 8;
        self.edit(|v| {
            exact::set_trailer(v, H_FLAGS, HAS_DUES, words, old_words);
            if words.is_some_and(|w| w.len() == 2) {
                v[H_FLAGS] |= RECORDED_FIRST;
            } else {
                v[H_FLAGS] &= !RECORDED_FIRST;
            }
        });
    }

    fn set_first_due(&mut self, t: u64) {
        if t != self.first_due_raw() {
            self.set_dues(self.deadline_base(), t, self.indexed_due());
        }
    }

    /// The earliest deadline the keyspace's member index recorded for this
    /// collection ([`NO_DEADLINE`] for none).
    pub(crate) fn indexed_due(&self) -> u64 {
        self.due_word(T_INDEXED_DUE)
    }

    /// Records what the keyspace's member index holds for it.
    pub(crate) fn set_indexed_due(&mut self, t: u64) {
        if t != self.indexed_due() {
            self.set_dues(self.deadline_base(), self.first_due_raw(), t);
        }
    }

    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.header(H_LEN) as usize
    }

    /// How many members carry a deadline.
    pub(crate) fn timed(&self) -> usize {
        self.header(H_TIMED) as usize
    }

    /// A set's: whether it has the shape of Redis's `intset` (every member
    /// an integer, ever since it was last empty).
    pub(crate) fn ints(&self) -> bool {
        self.header(H_FLAGS) & NOT_INTS == 0
    }

    /// Whether one more member, `m`, can be packed.
    pub(crate) fn can_add(&self, m: &[u8]) -> bool {
        self.len() < MAX_LEN && m.len() <= MAX_MEMBER
    }

    /// Bytes held by the buffer.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.len()
    }

    fn varint_at(&self, o: &mut usize) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.buf[*o];
            *o += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }

    /// Size of the entry at offset `o`.
    fn size(&self, o: usize) -> usize {
        self.buf[o] as usize
    }

    /// The score field at `p`, which it steps over.
    fn score_at(&self, p: &mut usize) -> f64 {
        match self.varint_at(p) {
            0 => {
                let mut raw = [0u8; 8];
                raw.copy_from_slice(&self.buf[*p..*p + 8]);
                *p += 8;
                f64::from_le_bytes(raw)
            }
            v => (self.score_base() + unzigzag(v - 1)) as f64,
        }
    }

    /// The entry at offset `o`.
    pub(crate) fn entry(&self, o: usize) -> ZEntry<'_> {
        let ml = self.buf[o + 1] as usize;
        let member = &self.buf[o + 2..o + 2 + ml];
        let mut p = o + 2 + ml;
        let score = if SCORED { self.score_at(&mut p) } else { 0.0 };
        let deadline = match self.varint_at(&mut p) {
            0 => NO_DEADLINE,
            v => (self.deadline_base() as i64).wrapping_add(unzigzag(v - 1)) as u64,
        };
        ZEntry {
            member,
            score,
            deadline,
        }
    }

    fn member_at(&self, o: usize) -> &[u8] {
        let ml = self.buf[o + 1] as usize;
        &self.buf[o + 2..o + 2 + ml]
    }

    /// Offsets of the entries, in order.
    pub(crate) fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let mut o = self.start();
        let end = self.end();
        std::iter::from_fn(move || {
            (o < end).then(|| {
                let at = o;
                o += self.size(at);
                at
            })
        })
    }

    /// Offset and rank of `m`.
    pub(crate) fn find(&self, m: &[u8]) -> Option<(usize, usize)> {
        self.offsets()
            .enumerate()
            .find(|&(_, o)| self.member_at(o) == m)
            .map(|(r, o)| (o, r))
    }

    /// Offset of the entry at rank `r` (the entries' end for `len`).
    pub(crate) fn offset_of_rank(&self, r: usize) -> usize {
        self.offsets()
            .nth(r)
            .unwrap_or_else(|| self.end().max(Self::HEADER))
    }

    /// Offset of the last entry.
    pub(crate) fn last_offset(&self) -> Option<usize> {
        let end = self.end();
        (self.len() > 0).then(|| end - self.buf[end - 1] as usize)
    }

    fn encode(&self, m: &[u8], score: f64, deadline: u64) -> Encoded {
        let mut e = Encoded {
            bytes: [0; ENTRY_MAX],
            len: 1,
        };
        e.push(m.len() as u8);
        e.bytes[e.len..e.len + m.len()].copy_from_slice(m);
        e.len += m.len();
        if !SCORED {
            // A set's entry has no score field.
        } else if score.fract() == 0.0 && score.abs() <= INT_LIMIT {
            e.varint(zigzag(score as i64 - self.score_base()) + 1);
        } else {
            e.push(0);
            e.bytes[e.len..e.len + 8].copy_from_slice(&score.to_le_bytes());
            e.len += 8;
        }
        if deadline == NO_DEADLINE {
            e.push(0);
        } else {
            e.varint(zigzag(deadline as i64 - self.deadline_base() as i64) + 1);
        }
        e.len += 1;
        e.bytes[0] = e.len as u8;
        e.bytes[e.len - 1] = e.len as u8;
        e
    }

    /// Where (score, m) goes: the offset of the first entry above it (a
    /// set: the end, or its numeric place while every member is an
    /// integer).
    fn position(&self, score: f64, m: &[u8]) -> usize {
        let end = self.end().max(Self::HEADER);
        if !SCORED {
            let Some(v) = parse_i64(m).filter(|_| self.ints()) else {
                return end;
            };
            return self
                .offsets()
                .find(|&o| parse_i64(self.member_at(o)).is_some_and(|x| x > v))
                .unwrap_or(end);
        }
        let key = (Score(score), m);
        self.offsets()
            .find(|&o| {
                let e = self.entry(o);
                (Score(e.score), e.member).cmp(&key) == Ordering::Greater
            })
            .unwrap_or(end)
    }

    /// Adds `m`, which must be absent and fit ([`Self::can_add`], a
    /// [`packable_deadline`]); returns its offset.
    pub(crate) fn insert(&mut self, m: &[u8], score: f64, deadline: u64) -> usize {
        let empty = self.len() == 0;
        let ints = (self.ints() || empty) && parse_i64(m).is_some();
        let base = (SCORED && empty && score.fract() == 0.0 && score.abs() <= INT_LIMIT)
            .then_some(score as i64);
        // The header changes only when the shape or the score base does.
        if ints != self.ints() || base.is_some() || self.buf.is_empty() {
            self.edit(|v| {
                if ints {
                    v[H_FLAGS] &= !NOT_INTS;
                } else {
                    v[H_FLAGS] |= NOT_INTS;
                }
                if let Some(b) = base {
                    v[H_SCORE_BASE..H_SCORE_BASE + 8].copy_from_slice(&b.to_le_bytes());
                }
            });
        }
        if deadline != NO_DEADLINE {
            // The first deadline becomes the base the others are stored
            // against.
            let base = if self.timed() == 0 {
                deadline
            } else {
                self.deadline_base()
            };
            let first = self.first_due_raw().min(deadline);
            self.edit(|v| v[H_TIMED] += 1);
            self.set_dues(base, first, self.indexed_due());
        }
        let o = self.position(score, m);
        let e = self.encode(m, score, deadline);
        self.edit(|v| {
            let len = v.len();
            v.reserve_exact(e.len);
            v.resize(len + e.len, 0);
            v.copy_within(o..len, o + e.len);
            v[o..o + e.len].copy_from_slice(e.as_slice());
            v[H_LEN] += 1;
        });
        o
    }

    /// Drops the entry at `o` (and its count) without giving memory back
    /// or looking for a new earliest deadline.
    fn cut(&mut self, o: usize) {
        let timed = self.entry(o).deadline != NO_DEADLINE;
        let n = self.size(o);
        self.edit(|v| {
            v.drain(o..o + n);
            v[H_LEN] -= 1;
            v[H_TIMED] -= u8::from(timed);
        });
    }

    /// A copy of the member at `o` on the stack (it fits: packed members
    /// are short), for rewriting its entry.
    fn member_copy(&self, o: usize) -> ([u8; MAX_MEMBER], usize) {
        let m = self.member_at(o);
        let mut copy = [0u8; MAX_MEMBER];
        copy[..m.len()].copy_from_slice(m);
        (copy, m.len())
    }

    /// Removes the entry at `o`; returns its member, score and deadline.
    pub(crate) fn remove_at(&mut self, o: usize) -> (Bytes, f64, u64) {
        let e = self.entry(o);
        let out = (Bytes::copy_from_slice(e.member), e.score, e.deadline);
        self.cut(o);
        if out.2 != NO_DEADLINE && out.2 == self.first_due_raw() {
            self.set_first_due(self.scan_first_due());
        }
        out
    }

    /// Removes the entries with rank in `start..end` (one move of the
    /// bytes after them); returns their members and scores, in order.
    pub(crate) fn remove_range(&mut self, start: usize, end: usize) -> Vec<(Bytes, f64)> {
        let end = end.min(self.len());
        let start = start.min(end);
        let from = self.offset_of_rank(start);
        let mut to = from;
        let mut gone = Vec::with_capacity(end - start);
        let mut rescan = false;
        let mut timed = 0u8;
        let first = self.first_due_raw();
        for _ in start..end {
            let e = self.entry(to);
            gone.push((Bytes::copy_from_slice(e.member), e.score));
            let deadline = e.deadline;
            if deadline != NO_DEADLINE {
                timed += 1;
                rescan |= deadline == first;
            }
            to += self.size(to);
        }
        if gone.is_empty() {
            return gone;
        }
        let n = gone.len() as u8;
        self.edit(|v| {
            v.drain(from..to);
            v[H_LEN] -= n;
            v[H_TIMED] -= timed;
        });
        if rescan {
            self.set_first_due(self.scan_first_due());
        }
        gone
    }

    /// Gives the entry at `o` the score `score` (keeping its deadline, so
    /// the earliest deadline stays as it is); returns its new offset.
    pub(crate) fn set_score_at(&mut self, o: usize, score: f64) -> usize {
        let deadline = self.entry(o).deadline;
        let (m, ml) = self.member_copy(o);
        self.cut(o);
        self.insert(&m[..ml], score, deadline)
    }

    /// Gives the entry at `o` the deadline `at` (a [`packable_deadline`];
    /// [`NO_DEADLINE`] clears it). Its offset does not change.
    pub(crate) fn set_deadline_at(&mut self, o: usize, at: u64) {
        let e = self.entry(o);
        let (had, score) = (e.deadline, e.score);
        if had == at {
            return;
        }
        let (member, ml) = self.member_copy(o);
        let first = self.first_due_raw();
        match (had == NO_DEADLINE, at == NO_DEADLINE) {
            (true, false) => {
                let base = if self.timed() == 0 {
                    at
                } else {
                    self.deadline_base()
                };
                self.edit(|v| v[H_TIMED] += 1);
                self.set_dues(base, first, self.indexed_due());
            }
            (false, true) => self.edit(|v| v[H_TIMED] -= 1),
            _ => {}
        }
        let n = self.size(o);
        let e = self.encode(&member[..ml], score, at);
        self.edit(|v| {
            if e.len > n {
                v.reserve_exact(e.len - n);
            }
            exact::replace(v, o..o + n, e.as_slice());
        });
        if at < first {
            self.set_first_due(at);
        } else if had == first {
            self.set_first_due(self.scan_first_due());
        }
    }

    /// Entries with rank in `start..end`.
    pub(crate) fn range(&self, start: usize, end: usize) -> PackIter<'_, SCORED> {
        let end = end.min(self.len());
        let start = start.min(end);
        let front = self.offset_of_rank(start);
        let back = if start < end && end == self.len() {
            // Up to the last entry: the entries end where the trailer starts.
            self.end()
        } else {
            let mut back = front;
            for _ in start..end {
                back += self.size(back);
            }
            back
        };
        PackIter {
            pack: self,
            front,
            back,
            remaining: end - start,
        }
    }

    /// Offsets and deadlines of the entries that have one, by (deadline,
    /// rank).
    pub(crate) fn by_deadline(&self) -> Vec<(u64, usize)> {
        let mut v: Vec<(u64, usize)> = self
            .offsets()
            .map(|o| (self.entry(o).deadline, o))
            .filter(|&(t, _)| t != NO_DEADLINE)
            .collect();
        v.sort_unstable();
        v
    }

    /// The earliest deadline, by a walk.
    fn scan_first_due(&self) -> u64 {
        if self.timed() == 0 {
            return NO_DEADLINE;
        }
        self.offsets()
            .map(|o| self.entry(o).deadline)
            .min()
            .unwrap_or(NO_DEADLINE)
    }

    /// The earliest deadline.
    pub(crate) fn first_due(&self) -> Option<u64> {
        let t = self.first_due_raw();
        (t != NO_DEADLINE).then_some(t)
    }

    /// The deadline of the entry at `o`, if it has one.
    pub(crate) fn deadline_at(&self, o: usize) -> Option<u64> {
        let t = self.entry(o).deadline;
        (t != NO_DEADLINE).then_some(t)
    }

    /// Clears the deadline of the entry at `o`; returns the one it had.
    pub(crate) fn clear_deadline_at(&mut self, o: usize) -> Option<u64> {
        let had = self.deadline_at(o)?;
        self.set_deadline_at(o, NO_DEADLINE);
        Some(had)
    }

    /// The offset of the earliest entry due at `now`, if any is.
    pub(crate) fn first_due_by(&self, now: u64) -> Option<usize> {
        if self.first_due()? > now {
            return None;
        }
        self.earliest().map(|(_, o)| o)
    }

    /// The same members (with their values and deadlines) in a member
    /// table, in this order: the large form a packed collection converts
    /// to.
    pub(crate) fn to_table<V>(&self, value: impl Fn(f64) -> V) -> MemberTable<V> {
        let mut t = MemberTable::default();
        for o in self.offsets() {
            let e = self.entry(o);
            let id = t.push(e.member, value(e.score));
            if e.deadline != NO_DEADLINE {
                t.set_deadline(id, e.deadline);
            }
        }
        t
    }

    /// The earliest (deadline, offset): the first entry due then.
    pub(crate) fn earliest(&self) -> Option<(u64, usize)> {
        let t = self.first_due()?;
        self.offsets()
            .find(|&o| self.entry(o).deadline == t)
            .map(|o| (t, o))
    }

    /// The latest deadline.
    pub(crate) fn latest(&self) -> Option<u64> {
        if self.timed() == 0 {
            return None;
        }
        self.offsets()
            .map(|o| self.entry(o).deadline)
            .filter(|&t| t != NO_DEADLINE)
            .max()
    }
}

/// Entries of a rank range of a [`Pack`], both ways.
#[derive(Debug, Clone)]
pub(crate) struct PackIter<'a, const SCORED: bool> {
    pack: &'a Pack<SCORED>,
    /// Offset of the next entry from the front.
    front: usize,
    /// Offset one past the next entry from the back.
    back: usize,
    remaining: usize,
}

impl<'a, const SCORED: bool> Iterator for PackIter<'a, SCORED> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let e = self.pack.entry(self.front);
        self.front += self.pack.size(self.front);
        Some((e.member, e.score))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<const SCORED: bool> DoubleEndedIterator for PackIter<'_, SCORED> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        self.back -= self.pack.buf[self.back - 1] as usize;
        let e = self.pack.entry(self.back);
        Some((e.member, e.score))
    }
}

impl<const SCORED: bool> ExactSizeIterator for PackIter<'_, SCORED> {}

/// What a deadline view reads from a packed collection of either kind.
pub(crate) trait PackDeadlines {
    /// The deadline of `m`, if it is a member with one.
    fn deadline_of(&self, m: &[u8]) -> Option<u64>;
    /// The earliest deadline.
    fn first_due(&self) -> Option<u64>;
    /// The latest deadline.
    fn latest(&self) -> Option<u64>;
    /// How many members have a deadline.
    fn timed(&self) -> usize;
    /// (deadline, offset) of the members with one, in order.
    fn by_deadline(&self) -> Vec<(u64, usize)>;
    /// The member of the entry at offset `o`.
    fn member_at(&self, o: usize) -> &[u8];
}

impl<const SCORED: bool> PackDeadlines for Pack<SCORED> {
    fn deadline_of(&self, m: &[u8]) -> Option<u64> {
        self.deadline_at(self.find(m)?.0)
    }

    fn first_due(&self) -> Option<u64> {
        Pack::first_due(self)
    }

    fn latest(&self) -> Option<u64> {
        Pack::latest(self)
    }

    fn timed(&self) -> usize {
        Pack::timed(self)
    }

    fn by_deadline(&self) -> Vec<(u64, usize)> {
        Pack::by_deadline(self)
    }

    fn member_at(&self, o: usize) -> &[u8] {
        Pack::member_at(self, o)
    }
}

mod build;
#[cfg(test)]
mod tests;
