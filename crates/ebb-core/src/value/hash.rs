//! Hashes whose fields may carry deadlines.

use bytes::Bytes;
use indexmap::IndexMap;

use crate::expiry::MemberDeadlines;

/// A hash.
#[derive(Debug, Default, Clone)]
pub struct HashValue {
    fields: IndexMap<Bytes, Bytes, ahash::RandomState>,
    deadlines: MemberDeadlines,
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
    pub fn get(&self, field: &[u8]) -> Option<&Bytes> {
        self.fields.get(field)
    }

    /// Whether `field` exists.
    pub fn contains(&self, field: &[u8]) -> bool {
        self.fields.contains_key(field)
    }

    /// Sets `field` to `value`, clearing its deadline (HSET rule); returns
    /// true if the field is new.
    pub fn insert(&mut self, field: Bytes, value: Bytes) -> bool {
        self.deadlines.clear(&field);
        self.fields.insert(field, value).is_none()
    }

    /// Sets `field` to `value` keeping any deadline it has (HINCRBY rule);
    /// returns true if the field is new.
    pub fn insert_keep_deadline(&mut self, field: Bytes, value: Bytes) -> bool {
        self.fields.insert(field, value).is_none()
    }

    /// Removes `field` and its deadline; returns its value.
    pub fn remove(&mut self, field: &[u8]) -> Option<Bytes> {
        let v = self.fields.swap_remove(field)?;
        self.deadlines.clear(field);
        Some(v)
    }

    /// The field/value pair at position `i`, for random picks.
    pub fn get_index(&self, i: usize) -> Option<(&Bytes, &Bytes)> {
        self.fields.get_index(i)
    }

    /// Iterates over field/value pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, &Bytes)> {
        self.fields.iter()
    }

    /// The field deadlines.
    pub fn deadlines(&self) -> &MemberDeadlines {
        &self.deadlines
    }

    /// Sets the deadline of an existing field; false if there is no such field.
    pub fn set_deadline(&mut self, field: &[u8], at: u64) -> bool {
        match self.fields.get_key_value(field) {
            Some((k, _)) => {
                self.deadlines.set(k.clone(), at);
                true
            }
            None => false,
        }
    }

    /// Clears the deadline of `field`; returns the one it had.
    pub fn clear_deadline(&mut self, field: &[u8]) -> Option<u64> {
        self.deadlines.clear(field)
    }

    /// Removes the earliest field whose deadline is `<= now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Bytes> {
        let f = self.deadlines.pop_due(now)?;
        self.fields.swap_remove(&f);
        Some(f)
    }
}
