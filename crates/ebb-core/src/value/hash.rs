//! Hashes whose fields may carry deadlines.

use bytes::Bytes;

use super::hpack::HPack;
use super::member::Member;
use super::table::{Lookahead, MemberTable, Node};
use crate::expiry::{MemberDeadlines, NO_DEADLINE};

/// A field and its value, as stored.
pub type FieldValue<'a> = (&'a [u8], &'a [u8]);

/// Up to this many fields, removals keep the order of the other fields
/// (Redis's default `hash-max-listpack-entries`).
const ORDERED_REMOVAL_MAX: usize = 512;

/// A hash. Up to 128 fields of at most 64 bytes (and values as short) it
/// is one packed buffer in insertion order ([`HPack`], as Redis keeps a
/// listpack); past that, fields live once in a dense [`MemberTable`] so
/// that random picks (HRANDFIELD) cost O(1) and HSCAN can walk positions.
/// The table keeps insertion order across removals while it is as small as
/// a default listpack, and moves the last field into the hole beyond (O(1)).
///
/// The value is 16 bytes: a packed hash is its buffer alone (which also
/// carries the counts below), a large one a box with the table.
#[derive(Debug, Clone, Default)]
pub struct HashValue {
    repr: Repr,
}

/// The large form's box.
#[derive(Debug, Clone)]
struct Table {
    fields: MemberTable<Member>,
    /// Most fields the hash ever held, and longest field or value ever
    /// stored: Redis converts a listpack to a hash table past its limits
    /// and never back, and HSCAN/OBJECT ENCODING follow that encoding.
    peak_len: u32,
    peak_item: u32,
    /// The earliest member deadline as the keyspace's member index last
    /// recorded it ([`NO_DEADLINE`] for none).
    indexed_due: u64,
}

#[derive(Debug, Clone)]
enum Repr {
    Packed(HPack),
    Table(Box<Table>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Packed(HPack::default())
    }
}

/// Field/value pairs in order, from either form.
pub enum HashIter<'a> {
    /// A packed hash's pairs, decoded.
    Packed(std::vec::IntoIter<FieldValue<'a>>),
    /// A table's nodes.
    Table(std::slice::Iter<'a, Node<Member>>),
}

impl<'a> Iterator for HashIter<'a> {
    type Item = FieldValue<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            HashIter::Packed(it) => it.next(),
            HashIter::Table(it) => it.next().map(|n| (&n.member[..], &n.value[..])),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            HashIter::Packed(it) => it.size_hint(),
            HashIter::Table(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for HashIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            HashIter::Packed(it) => it.next_back(),
            HashIter::Table(it) => it.next_back().map(|n| (&n.member[..], &n.value[..])),
        }
    }
}

impl ExactSizeIterator for HashIter<'_> {}

impl HashValue {
    /// An empty hash.
    pub fn new() -> HashValue {
        HashValue::default()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.len(),
            Repr::Table(t) => t.fields.len(),
        }
    }

    /// Whether the hash has no field.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the hash is in its packed form.
    pub fn is_packed(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.get_entry(field).map(|(_, v)| v)
    }

    /// The field table of a large hash, for the look-ahead over a
    /// pipeline (small packed forms need none).
    pub(crate) fn lookahead(&self) -> Option<&dyn Lookahead> {
        match &self.repr {
            Repr::Table(t) => Some(&t.fields),
            _ => None,
        }
    }

    /// Whether `field` exists.
    pub fn contains(&self, field: &[u8]) -> bool {
        match &self.repr {
            Repr::Packed(p) => p.find(field).is_some(),
            Repr::Table(t) => t.fields.find(field).is_some(),
        }
    }

    /// HSET of `pairs` (field, value, …) into a new (empty) hash that
    /// packs: built at once, without a search per field. Returns how many
    /// fields were created; None (nothing done) when the hash is not
    /// empty or would not pack.
    pub fn fill_packed(&mut self, pairs: &[&[u8]]) -> Option<usize> {
        if !self.is_empty() || !self.is_packed() {
            return None;
        }
        let (p, n) = HPack::from_pairs(pairs)?;
        self.repr = Repr::Packed(p);
        Some(n)
    }

    /// Sets `field` to `value`, clearing its deadline (HSET rule); returns
    /// true if the field is new.
    pub fn insert(&mut self, field: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> bool {
        self.write(field.as_ref(), value.as_ref(), true)
    }

    /// Sets `field` to `value` keeping any deadline it has (HINCRBY rule);
    /// returns true if the field is new.
    pub fn insert_keep_deadline(
        &mut self,
        field: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> bool {
        self.write(field.as_ref(), value.as_ref(), false)
    }

    /// Before up to `n` fields are written into a new (empty) hash: more
    /// than the packed form holds take the table form at once, instead of
    /// filling the packed form first. (An HSET that packs never gets here:
    /// [`Self::fill_packed`] builds it.)
    pub fn expect(&mut self, n: usize) {
        if n > super::hpack::MAX_LEN && self.is_empty() {
            self.table();
        }
    }

    /// The table form, converting a packed hash (for good: as Redis never
    /// converts a hash table back to a listpack).
    fn table(&mut self) -> &mut MemberTable<Member> {
        if let Repr::Packed(p) = &self.repr {
            let (peak_len, peak_item) = p.peaks();
            self.repr = Repr::Table(Box::new(Table {
                fields: p.to_table(),
                peak_len,
                peak_item,
                indexed_due: p.indexed_due(),
            }));
        }
        match &mut self.repr {
            Repr::Table(t) => &mut t.fields,
            Repr::Packed(_) => unreachable!("converted above"),
        }
    }

    /// Raises the peak field count and item length after a write of a
    /// field or value `item` bytes long.
    fn note_peaks(&mut self, item: usize) {
        let len = self.len();
        match &mut self.repr {
            Repr::Packed(p) => p.note_peaks(item),
            Repr::Table(t) => {
                let clamp = |n: usize| n.min(u32::MAX as usize) as u32;
                t.peak_len = t.peak_len.max(clamp(len));
                t.peak_item = t.peak_item.max(clamp(item));
            }
        }
    }

    /// The earliest deadline the keyspace's member index recorded.
    pub(crate) fn indexed_due(&self) -> u64 {
        match &self.repr {
            Repr::Packed(p) => p.indexed_due(),
            Repr::Table(t) => t.indexed_due,
        }
    }

    /// Records what the keyspace's member index holds for this hash.
    pub(crate) fn set_indexed_due(&mut self, at: u64) {
        match &mut self.repr {
            Repr::Packed(p) => p.set_indexed_due(at),
            Repr::Table(t) => t.indexed_due = at,
        }
    }

    /// Sets `field` to `value` with one lookup, dropping its deadline when
    /// `clear`; returns true if the field is new.
    fn write(&mut self, field: &[u8], value: &[u8], clear: bool) -> bool {
        let mut new = None;
        if let Repr::Packed(p) = &mut self.repr {
            if HPack::fits(field, value) {
                match p.find(field) {
                    Some(o) => {
                        // Neither edit moves the entry's start.
                        if clear {
                            p.set_deadline_at(o, NO_DEADLINE);
                        }
                        p.set_value_at(o, value);
                        new = Some(false);
                    }
                    None if p.has_room() => {
                        p.push(field, value, NO_DEADLINE);
                        new = Some(true);
                    }
                    None => {}
                }
            }
        }
        let new = match new {
            Some(n) => n,
            None => {
                let fields = self.table();
                match fields.find(field) {
                    Some(id) => {
                        if clear {
                            fields.clear_deadline(id);
                        }
                        if let Some(v) = fields.value_mut(id) {
                            *v = Member::new(value);
                        }
                        false
                    }
                    None => {
                        fields.push(field, Member::new(value));
                        true
                    }
                }
            }
        };
        self.note_peaks(field.len().max(value.len()));
        new
    }

    /// Removes `field` and its deadline; returns its value.
    pub fn remove(&mut self, field: &[u8]) -> Option<Bytes> {
        match &mut self.repr {
            Repr::Packed(p) => {
                let o = p.find(field)?;
                Some(p.remove_at(o).1)
            }
            Repr::Table(t) => {
                let id = t.fields.find(field)?;
                self.take(id).map(|(_, v)| v)
            }
        }
    }

    /// The field/value pair at position `i`, for random picks (a walk of
    /// the buffer for a packed hash).
    pub fn get_index(&self, i: usize) -> Option<(&[u8], &[u8])> {
        match &self.repr {
            Repr::Packed(p) => {
                let e = p.entry(p.nth(i)?);
                Some((e.field, e.value))
            }
            Repr::Table(t) => t
                .fields
                .nodes()
                .get(i)
                .map(|n| (&n.member[..], &n.value[..])),
        }
    }

    /// Iterates over field/value pairs.
    pub fn iter(&self) -> HashIter<'_> {
        match &self.repr {
            Repr::Packed(p) => HashIter::Packed(
                p.entries()
                    .map(|(_, e)| (e.field, e.value))
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
            Repr::Table(t) => HashIter::Table(t.fields.nodes().iter()),
        }
    }

    /// The field deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        match &self.repr {
            Repr::Packed(p) => MemberDeadlines::packed(p),
            Repr::Table(t) => t.fields.deadlines(),
        }
    }

    /// Sets the deadline of an existing field; false if there is no such field.
    pub fn set_deadline(&mut self, field: &[u8], at: u64) -> bool {
        match &mut self.repr {
            Repr::Packed(p) => match p.find(field) {
                Some(o) => {
                    p.set_deadline_at(o, at);
                    true
                }
                None => false,
            },
            Repr::Table(t) => match t.fields.find(field) {
                Some(id) => {
                    t.fields.set_deadline(id, at);
                    true
                }
                None => false,
            },
        }
    }

    /// Clears the deadline of `field`; returns the one it had.
    pub fn clear_deadline(&mut self, field: &[u8]) -> Option<u64> {
        match &mut self.repr {
            Repr::Packed(p) => {
                let o = p.find(field)?;
                p.set_deadline_at(o, NO_DEADLINE)
            }
            Repr::Table(t) => {
                let id = t.fields.find(field)?;
                t.fields.clear_deadline(id)
            }
        }
    }

    /// The stored field and value of `field`.
    pub fn get_entry(&self, field: &[u8]) -> Option<(&[u8], &[u8])> {
        match &self.repr {
            Repr::Packed(p) => {
                let e = p.entry(p.find(field)?);
                Some((e.field, e.value))
            }
            Repr::Table(t) => {
                let n = t.fields.node(t.fields.find(field)?)?;
                Some((&n.member[..], &n.value[..]))
            }
        }
    }

    /// The deadline of `field`, if it has one.
    pub fn deadline(&self, field: &[u8]) -> Option<u64> {
        match &self.repr {
            Repr::Packed(p) => p.deadline_at(p.find(field)?),
            Repr::Table(t) => t.fields.deadline(t.fields.find(field)?),
        }
    }

    /// Whether Redis would still hold this hash as a listpack: it never
    /// held more than `max_entries` fields nor a field or value longer than
    /// `max_value` bytes (`hash-max-listpack-*`).
    pub fn is_compact(&self, max_entries: usize, max_value: usize) -> bool {
        let (len, item) = match &self.repr {
            Repr::Packed(p) => p.peaks(),
            Repr::Table(t) => (t.peak_len, t.peak_item),
        };
        len as usize <= max_entries && item as usize <= max_value
    }

    /// Removes table field `id` and its deadline: keeping the order of the
    /// others while the hash is as small as a default listpack, swapping
    /// the last field into its place beyond. Returns (field, value).
    fn take(&mut self, id: u32) -> Option<(Bytes, Bytes)> {
        let Repr::Table(t) = &mut self.repr else {
            return None;
        };
        let fields = &mut t.fields;
        let n = if fields.len() <= ORDERED_REMOVAL_MAX {
            fields.shift_remove(id)
        } else {
            fields.swap_remove(id)
        }?;
        Some((n.member.into_bytes(), n.value.into_bytes()))
    }

    /// One step of a cursor walk. Cursor 0 starts a walk; a returned cursor
    /// of 0 ends it. Positions are visited from the last one down. A removal
    /// either moves the last field into the hole or shifts the fields above
    /// it down by one; both only ever move a field to a lower position or a
    /// visited field into the unvisited part, never an unvisited field into
    /// the visited part: every field present for the whole walk is returned
    /// at least once (some possibly twice), and fields added during it (at
    /// the end) may be missed.
    /// Returns the next cursor and up to `count` field/value pairs.
    pub fn scan(&self, cursor: u64, count: usize) -> (u64, Vec<FieldValue<'_>>) {
        let len = self.len();
        let from = if cursor == 0 {
            len
        } else {
            (cursor.min(len as u64)) as usize
        };
        let to = from.saturating_sub(count.max(1));
        let items = match &self.repr {
            Repr::Packed(_) => {
                let all: Vec<FieldValue<'_>> = self.iter().collect();
                all[to..from].iter().rev().copied().collect()
            }
            Repr::Table(_) => (to..from).rev().filter_map(|i| self.get_index(i)).collect(),
        };
        (to as u64, items)
    }

    /// Removes the earliest field whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        match &mut self.repr {
            Repr::Packed(p) => {
                let o = p.first_due_by(now)?;
                Some(p.remove_at(o).0)
            }
            Repr::Table(t) => {
                let id = t.fields.first_due(now)?;
                self.take(id).map(|(f, _)| f)
            }
        }
    }

    /// Heap bytes held by the structure (not the fields' own bytes, which
    /// a packed hash holds in its buffer).
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Packed(p) => p.heap_bytes(),
            Repr::Table(t) => std::mem::size_of::<Table>() + t.fields.heap_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Set(u8, u8, bool),
        Remove(u8),
        Deadline(u8, u64),
        Clear(u8),
        PopDue(u64),
    }

    fn field(i: u8) -> Vec<u8> {
        // A few long fields push the hash out of its packed form.
        if i % 61 == 60 {
            vec![b'f'; 70]
        } else {
            format!("f{i}").into_bytes()
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u8>(), any::<u8>(), any::<bool>()).prop_map(|(f, v, c)| Op::Set(f, v, c)),
            2 => any::<u8>().prop_map(Op::Remove),
            2 => (any::<u8>(), 1u64..50).prop_map(|(f, t)| Op::Deadline(f, t)),
            1 => any::<u8>().prop_map(Op::Clear),
            1 => (0u64..50).prop_map(Op::PopDue),
        ]
    }

    proptest! {
        /// The hash against a model (fields in insertion order, values,
        /// deadlines), across the change from packed to table form.
        #[test]
        fn matches_a_model(ops in proptest::collection::vec(op(), 1..400)) {
            let mut h = HashValue::new();
            let mut model: Vec<(Vec<u8>, Vec<u8>, Option<u64>)> = Vec::new();
            for op in ops {
                match op {
                    Op::Set(f, v, clear) => {
                        let (f, v) = (field(f), vec![b'v'; v as usize % 80]);
                        let new = if clear { h.insert(&f, &v) } else { h.insert_keep_deadline(&f, &v) };
                        match model.iter_mut().find(|e| e.0 == f) {
                            Some(e) => {
                                prop_assert!(!new);
                                e.1 = v;
                                if clear { e.2 = None; }
                            }
                            None => {
                                prop_assert!(new);
                                model.push((f, v, None));
                            }
                        }
                    }
                    Op::Remove(f) => {
                        let f = field(f);
                        let got = h.remove(&f);
                        let pos = model.iter().position(|e| e.0 == f);
                        prop_assert_eq!(got.map(|b| b.to_vec()), pos.map(|i| model.remove(i).1));
                    }
                    Op::Deadline(f, t) => {
                        let f = field(f);
                        let found = h.set_deadline(&f, t);
                        let e = model.iter_mut().find(|e| e.0 == f);
                        prop_assert_eq!(found, e.is_some());
                        if let Some(e) = e { e.2 = Some(t); }
                    }
                    Op::Clear(f) => {
                        let f = field(f);
                        let had = h.clear_deadline(&f);
                        let e = model.iter_mut().find(|e| e.0 == f);
                        prop_assert_eq!(had, e.as_ref().and_then(|e| e.2));
                        if let Some(e) = e { e.2 = None; }
                    }
                    Op::PopDue(now) => {
                        let got = h.pop_due(now);
                        let min = model.iter().filter_map(|e| e.2).filter(|&t| t <= now).min();
                        match min {
                            None => prop_assert!(got.is_none()),
                            Some(t) => {
                                let got = got.expect("a due field");
                                let i = model.iter().position(|e| e.0 == got.as_ref()).expect("in model");
                                prop_assert_eq!(model[i].2, Some(t));
                                model.remove(i);
                            }
                        }
                    }
                }
                if let Repr::Packed(p) = &h.repr {
                    p.check();
                }
                prop_assert_eq!(h.len(), model.len());
                let d = h.deadlines();
                prop_assert_eq!(d.len(), model.iter().filter(|e| e.2.is_some()).count());
                prop_assert_eq!(d.earliest(), model.iter().filter_map(|e| e.2).min());
                prop_assert_eq!(d.latest(), model.iter().filter_map(|e| e.2).max());
                for (f, v, t) in &model {
                    prop_assert_eq!(h.get(f), Some(&v[..]));
                    prop_assert_eq!(h.deadline(f), *t);
                    prop_assert_eq!(d.get(f), *t);
                }
                if h.is_packed() || h.len() <= ORDERED_REMOVAL_MAX {
                    let order: Vec<&[u8]> = h.iter().map(|(f, _)| f).collect();
                    let want: Vec<&[u8]> = model.iter().map(|e| &e.0[..]).collect();
                    if h.is_packed() {
                        prop_assert_eq!(order, want);
                    }
                }
                let mut seen: Vec<Vec<u8>> = Vec::new();
                let mut cursor = 0;
                loop {
                    let (next, items) = h.scan(cursor, 7);
                    seen.extend(items.iter().map(|(f, _)| f.to_vec()));
                    if next == 0 { break; }
                    cursor = next;
                }
                seen.sort();
                let mut all: Vec<Vec<u8>> = model.iter().map(|e| e.0.clone()).collect();
                all.sort();
                prop_assert_eq!(seen, all);
            }
        }

        /// A new hash filled at once is the hash the same writes one by
        /// one make, byte for byte; when it would not pack, nothing is done.
        #[test]
        fn filled_at_once_as_one_by_one(
            pairs in proptest::collection::vec((0u8..140, 0usize..70), 1..160)
        ) {
            let owned: Vec<Vec<u8>> = pairs
                .iter()
                .flat_map(|&(f, v)| [field(f), vec![b'v'; v]])
                .collect();
            let args: Vec<&[u8]> = owned.iter().map(|a| &a[..]).collect();
            let mut one = HashValue::new();
            let mut created = 0;
            for p in args.chunks_exact(2) {
                created += usize::from(one.insert(p[0], p[1]));
            }
            let mut all = HashValue::new();
            match all.fill_packed(&args) {
                Some(n) => {
                    prop_assert!(one.is_packed());
                    prop_assert_eq!(n, created);
                    prop_assert_eq!(format!("{all:?}"), format!("{one:?}"));
                    // Only a new hash is filled.
                    prop_assert!(all.fill_packed(&args).is_none());
                }
                None => {
                    prop_assert!(!one.is_packed());
                    prop_assert!(all.is_empty() && all.is_packed());
                }
            }
        }
    }
}
