//! Hashes whose fields may carry deadlines.

use bytes::Bytes;

use super::member::Member;
use super::table::MemberTable;
use crate::expiry::MemberDeadlines;

/// A field and its value, as stored.
pub type FieldValue<'a> = (&'a [u8], &'a [u8]);

/// Up to this many fields, removals keep the order of the other fields
/// (Redis's default `hash-max-listpack-entries`).
const ORDERED_REMOVAL_MAX: usize = 128;

/// A hash. Fields live once in a dense [`MemberTable`] so that random picks
/// (HRANDFIELD) cost O(1) and HSCAN can walk positions. Small hashes keep
/// insertion order across removals, as Redis's listpack does; larger ones
/// move the last field into the hole instead (O(1)).
#[derive(Debug, Default, Clone)]
pub struct HashValue {
    fields: MemberTable<Member>,
    /// Most fields the hash ever held, and longest field or value ever
    /// stored: Redis converts a listpack to a hash table past its limits
    /// and never back, and HSCAN/OBJECT ENCODING follow that encoding.
    peak_len: u32,
    peak_item: u32,
}

impl HashValue {
    /// An empty hash.
    pub fn new() -> HashValue {
        HashValue::default()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the hash has no field.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.get_entry(field).map(|(_, v)| v)
    }

    /// Whether `field` exists.
    pub fn contains(&self, field: &[u8]) -> bool {
        self.fields.find(field).is_some()
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

    /// Sets `field` to `value` with one lookup, dropping its deadline when
    /// `clear`; returns true if the field is new.
    fn write(&mut self, field: &[u8], value: &[u8], clear: bool) -> bool {
        let item = field.len().max(value.len()).min(u32::MAX as usize) as u32;
        self.peak_item = self.peak_item.max(item);
        let new = match self.fields.find(field) {
            Some(id) => {
                if clear {
                    self.fields.clear_deadline(id);
                }
                if let Some(v) = self.fields.value_mut(id) {
                    *v = Member::new(value);
                }
                false
            }
            None => {
                self.fields.push(field, Member::new(value));
                true
            }
        };
        self.peak_len = self
            .peak_len
            .max(self.fields.len().min(u32::MAX as usize) as u32);
        new
    }

    /// Removes `field` and its deadline; returns its value.
    pub fn remove(&mut self, field: &[u8]) -> Option<Bytes> {
        let id = self.fields.find(field)?;
        self.take(id).map(|(_, v)| v)
    }

    /// The field/value pair at position `i`, for random picks.
    pub fn get_index(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.fields
            .nodes()
            .get(i)
            .map(|n| (&n.member[..], &n.value[..]))
    }

    /// Iterates over field/value pairs.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], &[u8])> + DoubleEndedIterator {
        self.fields
            .nodes()
            .iter()
            .map(|n| (&n.member[..], &n.value[..]))
    }

    /// The field deadlines.
    pub fn deadlines(&self) -> MemberDeadlines<'_> {
        self.fields.deadlines()
    }

    /// Sets the deadline of an existing field; false if there is no such field.
    pub fn set_deadline(&mut self, field: &[u8], at: u64) -> bool {
        match self.fields.find(field) {
            Some(id) => {
                self.fields.set_deadline(id, at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `field`; returns the one it had.
    pub fn clear_deadline(&mut self, field: &[u8]) -> Option<u64> {
        let id = self.fields.find(field)?;
        self.fields.clear_deadline(id)
    }

    /// The stored field and value of `field` (cloning the stored field is
    /// cheaper than copying the caller's bytes).
    pub fn get_entry(&self, field: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = self.fields.node(self.fields.find(field)?)?;
        Some((&n.member[..], &n.value[..]))
    }

    /// The deadline of `field`, if it has one.
    pub fn deadline(&self, field: &[u8]) -> Option<u64> {
        self.fields.deadline(self.fields.find(field)?)
    }

    /// Whether Redis would still hold this hash as a listpack: it never
    /// held more than `max_entries` fields nor a field or value longer than
    /// `max_value` bytes (`hash-max-listpack-*`).
    pub fn is_compact(&self, max_entries: usize, max_value: usize) -> bool {
        self.peak_len as usize <= max_entries && self.peak_item as usize <= max_value
    }

    /// Removes field `id` and its deadline: keeping the order of the
    /// others while the hash is as small as a default listpack, swapping
    /// the last field into its place beyond. Returns (field, value).
    fn take(&mut self, id: u32) -> Option<(Bytes, Bytes)> {
        let n = if self.fields.len() <= ORDERED_REMOVAL_MAX {
            self.fields.shift_remove(id)
        } else {
            self.fields.swap_remove(id)
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
        let len = self.fields.len();
        let from = if cursor == 0 {
            len
        } else {
            (cursor.min(len as u64)) as usize
        };
        let to = from.saturating_sub(count.max(1));
        let items = (to..from).rev().filter_map(|i| self.get_index(i)).collect();
        (to as u64, items)
    }

    /// Removes the earliest field whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let id = self.fields.first_due(now)?;
        self.take(id).map(|(f, _)| f)
    }

    /// Heap bytes held by the structure (not the fields' own bytes).
    pub fn heap_bytes(&self) -> usize {
        self.fields.heap_bytes()
    }
}
