//! The key table of one database: keys and their entries in a dense
//! vector, found through a hash index of `u32` positions.
//!
//! Each slot is the key (a 24-byte compact string) beside its entry; the
//! index holds only positions (12 to a 64-byte line, with their control
//! bytes; see [`IdTable`](crate::idtable::IdTable)) and
//! hashes through the slots, so a key is stored once and no hash is kept
//! per slot. Removing a key moves the last slot into the hole, so
//! positions stay dense (SCAN and RANDOMKEY walk them) and callers that
//! track positions follow the one slot that moved.
//! The index grows a segment at a time ([`SegIndex`]).

use crate::room::growth_room;
use crate::segindex::SegIndex;
use crate::value::member::Member;
use crate::value::table::hash_of;

/// Keys and their values, addressed by position.
#[derive(Debug, Clone)]
pub(crate) struct KeyTable<V> {
    slots: Vec<(Member, V)>,
    index: SegIndex,
}

impl<V> Default for KeyTable<V> {
    fn default() -> Self {
        KeyTable {
            slots: Vec::new(),
            index: SegIndex::default(),
        }
    }
}

/// Slot capacity below which a table is never shrunk.
const MIN_SHRINK: usize = 64;

/// Slots a full table grows by at least.
const MIN_GROWTH: usize = 16;

/// A position as the index stores it. The table holds at most 2^32 keys
/// (at about 70 bytes a key, far more memory than a server has).
fn pos(i: usize) -> u32 {
    u32::try_from(i).expect("a key table holds at most 2^32 keys")
}

impl<V> KeyTable<V> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the table holds no key.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Makes room for `n` keys in an empty table (see
    /// [`SegIndex::reserve`]).
    pub fn reserve(&mut self, n: usize) {
        if self.is_empty()
            && crate::room::growth_room() == u64::MAX
            && self.slots.try_reserve_exact(n).is_ok()
        {
            self.index.reserve(n);
        }
    }

    /// Slots allocated (used or not).
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Buckets of the hash index (used or not).
    pub fn index_buckets(&self) -> usize {
        self.index.buckets()
    }

    /// Bytes the hash index allocated.
    pub fn index_bytes(&self) -> usize {
        self.index.allocation_size()
    }

    /// The position of `key`.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let slots = &self.slots;
        self.index
            .find(hash_of(key), |i| slots[i as usize].0[..] == *key)
            .map(|i| i as usize)
    }

    /// Starts loading the index position a lookup of a key hashing to
    /// `hash` (see [`hash_of`]) reads first, computed from the hash alone:
    /// the first of the two steps of a look-ahead over a pipeline.
    pub fn prefetch_probe(&self, hash: u64) {
        self.index.prefetch(hash);
    }

    /// Starts loading the slot the index holds under `hash` (the index is
    /// read; its position should be loading already): the second step.
    /// With keys spread over a large table the slot's cache miss was most
    /// of a lookup's time.
    pub fn prefetch_slot(&self, hash: u64) {
        if let Some(slot) = self
            .index
            .first_candidate(hash)
            .and_then(|i| self.slots.get(i as usize))
        {
            crate::prefetch::prefetch_value(slot);
        }
    }

    /// Whether the table's slots are too many to stay in the cache, so
    /// that prefetching them pays.
    pub fn worth_prefetching(&self) -> bool {
        crate::prefetch::worth::<(Member, V)>(self.slots.len())
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.find(key).map(|i| &self.slots[i].1)
    }

    /// The value of `key`, to change.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let i = self.find(key)?;
        Some(&mut self.slots[i].1)
    }

    /// The stored key equal to `key`, and its value.
    pub fn get_key_value(&self, key: &[u8]) -> Option<(&Member, &V)> {
        self.find(key).map(|i| (&self.slots[i].0, &self.slots[i].1))
    }

    /// Position, stored key and value of `key`, the value to change.
    pub fn get_full_mut(&mut self, key: &[u8]) -> Option<(usize, &Member, &mut V)> {
        let i = self.find(key)?;
        let (k, v) = &mut self.slots[i];
        Some((i, k, v))
    }

    /// The key and value at position `i`.
    pub fn get_index(&self, i: usize) -> Option<(&Member, &V)> {
        self.slots.get(i).map(|(k, v)| (k, v))
    }

    /// The value at position `i`, to change.
    pub fn get_index_mut(&mut self, i: usize) -> Option<&mut V> {
        self.slots.get_mut(i).map(|(_, v)| v)
    }

    /// Appends `key`, which must be absent; returns its position.
    pub fn push(&mut self, key: &[u8], value: V) -> usize {
        let i = self.slots.len();
        if i == self.slots.capacity() {
            let room = growth_room();
            if room != u64::MAX {
                let slot = std::mem::size_of::<(Member, V)>().max(1);
                let affordable = usize::try_from(room).unwrap_or(usize::MAX) / slot;
                if affordable < i.max(MIN_GROWTH) {
                    self.slots.reserve_exact(MIN_GROWTH);
                }
            }
        }
        self.slots.push((Member::new(key), value));
        let slots = &self.slots;
        self.index
            .insert(hash_of(key), pos(i), |j| hash_of(&slots[j as usize].0));
        i
    }

    /// Removes the key at position `i`, moving the last key into its
    /// place; returns the removed key and value.
    pub fn swap_remove_index(&mut self, i: usize) -> Option<(Member, V)> {
        let last = self.slots.len().checked_sub(1)?;
        if i > last {
            return None;
        }
        let at = pos(i);
        self.index.remove(hash_of(&self.slots[i].0), at);
        if i != last {
            if let Some(j) = self.index.find_mut(hash_of(&self.slots[last].0), pos(last)) {
                *j = at;
            }
        }
        let out = self.slots.swap_remove(i);
        // Give memory back once three quarters of the slots are free (to
        // half, so that refilling does not grow it again at once): after
        // many deletions or evictions the table does not hold their room.
        let cap = self.slots.capacity();
        if cap > MIN_SHRINK && self.slots.len() <= cap / 4 {
            self.slots.shrink_to(cap / 2);
        }
        Some(out)
    }

    /// Lets go of free slots past [`MIN_GROWTH`] of them, when there are
    /// more than twice that many.
    pub fn trim_spare(&mut self) {
        if self.slots.capacity() - self.slots.len() > 2 * MIN_GROWTH {
            self.slots.shrink_to(self.slots.len() + MIN_GROWTH);
        }
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
    }

    /// Every key and value, by position.
    pub fn iter(&self) -> impl Iterator<Item = (&Member, &V)> {
        self.slots.iter().map(|(k, v)| (k, v))
    }

    /// Every key, by position.
    pub fn keys(&self) -> impl Iterator<Item = &Member> {
        self.slots.iter().map(|(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    /// Removing most keys gives the slots' room back (to half, once three
    /// quarters are free), and the keys left are all still found.
    #[test]
    fn removals_give_room_back() {
        let mut t: KeyTable<u64> = KeyTable::default();
        for i in 0..4096u64 {
            t.push(format!("k{i}").as_bytes(), i);
        }
        let full = t.capacity();
        assert!(full >= 4096);
        for i in 0..3900u64 {
            let at = t.find(format!("k{i}").as_bytes()).expect("present");
            t.swap_remove_index(at);
        }
        assert!(t.capacity() <= full / 4, "{} of {full}", t.capacity());
        for i in 3900..4096u64 {
            let at = t.find(format!("k{i}").as_bytes()).expect("present");
            assert_eq!(t.iter().nth(at).map(|(_, v)| *v), Some(i));
        }
        // Small tables keep their room.
        let mut small: KeyTable<u64> = KeyTable::default();
        for i in 0..60u64 {
            small.push(format!("s{i}").as_bytes(), i);
        }
        let cap = small.capacity();
        for i in 0..59u64 {
            let at = small.find(format!("s{i}").as_bytes()).expect("present");
            small.swap_remove_index(at);
        }
        assert_eq!(small.capacity(), cap);
    }

    /// Random inserts, replacements and removals against a map: every
    /// key is found at a position holding it, and positions are dense.
    #[test]
    fn agrees_with_a_map() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut t: KeyTable<u64> = KeyTable::default();
        let mut model: HashMap<Vec<u8>, u64> = HashMap::new();
        for step in 0..40_000u64 {
            let n = rng.gen_range(0..3000u32);
            // Short keys live inline, long ones on the heap: use both.
            let key = if n % 3 == 0 {
                format!("a-long-key-that-does-not-fit-inline:{n}").into_bytes()
            } else {
                format!("k{n}").into_bytes()
            };
            match rng.gen_range(0..10) {
                0..=5 => match t.get_mut(&key) {
                    Some(v) => *v = step,
                    None => {
                        t.push(&key, step);
                    }
                },
                6..=8 => {
                    if let Some(i) = t.find(&key) {
                        let (k, v) = t.swap_remove_index(i).expect("present");
                        assert_eq!(&k[..], &key[..]);
                        assert_eq!(model.remove(&key), Some(v));
                        continue;
                    }
                }
                _ => {
                    if rng.gen_range(0..2000) == 0 {
                        t.clear();
                        model.clear();
                        continue;
                    }
                }
            }
            if t.find(&key).is_some() {
                model.insert(key.clone(), *t.get(&key).expect("present"));
            }
        }
        assert_eq!(t.len(), model.len());
        for (i, (k, v)) in t.iter().enumerate() {
            assert_eq!(t.find(k), Some(i));
            assert_eq!(model.get(&k[..]), Some(v));
        }
        for (k, v) in &model {
            assert_eq!(t.get(k), Some(v));
        }
        assert!(t.swap_remove_index(t.len()).is_none());
    }

    /// A prefetch is only a hint: absent keys, an empty table and keys
    /// in both index forms leave the table as it was.
    #[test]
    fn prefetch_changes_nothing() {
        let mut t: KeyTable<usize> = KeyTable::default();
        let both = |t: &KeyTable<usize>, k: &[u8]| {
            t.prefetch_probe(hash_of(k));
            t.prefetch_slot(hash_of(k));
        };
        both(&t, b"none");
        assert!(!t.worth_prefetching());
        let n = (8 << 20) / std::mem::size_of::<(Member, usize)>();
        for i in 0..n {
            t.push(format!("key:{i}").as_bytes(), i);
            both(&t, format!("key:{}", i / 2).as_bytes());
            both(&t, b"absent");
        }
        assert!(t.worth_prefetching());
        assert_eq!(t.len(), n);
        assert_eq!(t.get(format!("key:{}", n - 1).as_bytes()), Some(&(n - 1)));
    }

    /// Past a few thousand keys the index is segmented: every key stays
    /// found through the split, removals that move the last key, and
    /// growth of single segments.
    #[test]
    fn keys_stay_found_across_the_split() {
        let mut t: KeyTable<usize> = KeyTable::default();
        let n = 25_000;
        for i in 0..n {
            assert_eq!(t.push(format!("key:{i}").as_bytes(), i), i);
        }
        assert!(t.index.segmented());
        // Remove every third key (the last key moves into each hole).
        for i in (0..n).step_by(3) {
            let at = t.find(format!("key:{i}").as_bytes()).expect("present");
            assert_eq!(t.swap_remove_index(at).map(|(_, v)| v), Some(i));
        }
        for i in 0..n {
            match t.find(format!("key:{i}").as_bytes()) {
                Some(at) => {
                    assert!(i % 3 != 0);
                    assert_eq!(t.get_index(at).map(|(_, v)| *v), Some(i));
                }
                None => assert_eq!(i % 3, 0),
            }
        }
        assert_eq!(t.len(), n - n.div_ceil(3));
        t.clear();
        assert!(t.find(b"key:1").is_none());
        t.push(b"again", 1);
        assert!(!t.index.segmented());
        assert_eq!(t.get(b"again"), Some(&1));
    }
}
