//! An open-addressing hash table of `u32` ids whose layout is known, so
//! that where a lookup will read can be computed from the hash alone.
//!
//! The key table and large collections keep ids in hash indexes and
//! compare through their own storage. With a general hash table, starting
//! to load what a lookup of a pipelined request will read means probing
//! the table first: two dependent cache misses before the node's address
//! is known, taken one request at a time. Here a hash names its control
//! byte and id slot directly ([`IdTable::prefetch`]), so a batch of
//! requests can load every probe position at once, then every node.
//!
//! Layout: `buckets` (a power of two, at least [`GROUP`]) id slots and as
//! many control bytes, each [`EMPTY`], [`DELETED`] or the top seven bits
//! of the id's hash, followed by a copy of the first [`GROUP`] control
//! bytes so that eight can always be read as one word. Probing is linear,
//! eight control bytes at a time; an id sits at the first free slot at or
//! after its hash's bucket, and no empty slot lies between the two, so a
//! search stops at the first empty one. A removal leaves a tombstone
//! unless the next slot is empty (then it and the tombstones just before
//! it become empty); tombstones go when the table is rebuilt. Memory is
//! that of a SwissTable of `u32`: five bytes a bucket, at most 80% full.

/// Control bytes read at once.
pub(crate) const GROUP: usize = 8;
/// Control byte of a slot never used since the last rebuild.
const EMPTY: u8 = 0xFF;
/// Control byte of a slot whose id was removed.
const DELETED: u8 = 0x80;
/// The high bit of every byte of a word.
const HI: u64 = 0x8080_8080_8080_8080;
/// The low bit of every byte of a word.
const LO: u64 = 0x0101_0101_0101_0101;

/// The control byte of a hash (its top seven bits: the bucket comes from
/// the low bits, a segment of [`SegIndex`](crate::segindex::SegIndex)
/// from bits 40 and up).
fn tag(hash: u64) -> u8 {
    (hash >> 57) as u8
}

/// Bytes of `w` that may equal `tag` (their high bits set): exact for the
/// lowest, possibly spurious above a true match (each is checked anyway).
fn matching(w: u64, tag: u8) -> u64 {
    let x = w ^ LO.wrapping_mul(u64::from(tag));
    x.wrapping_sub(LO) & !x & HI
}

/// Bytes of `w` that are [`EMPTY`] (high bits set).
fn empties(w: u64) -> u64 {
    w & (w << 1) & HI
}

/// Keeps the bits of `m` below the lowest set bit of `stop` (all of `m`
/// when `stop` is 0).
fn before(m: u64, stop: u64) -> u64 {
    if stop == 0 {
        m
    } else {
        m & (stop & stop.wrapping_neg()).wrapping_sub(1)
    }
}

/// Most ids a table of `buckets` holds (80%).
fn capacity_of(buckets: usize) -> usize {
    buckets - buckets / 5
}

/// Buckets for `n` ids.
fn buckets_for(n: usize) -> usize {
    let mut b = GROUP;
    while capacity_of(b) < n {
        b *= 2;
    }
    b
}

/// Ids by hash (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct IdTable {
    /// `buckets + GROUP` control bytes (none while nothing was inserted).
    ctrl: Box<[u8]>,
    /// `buckets` ids.
    ids: Box<[u32]>,
    items: usize,
    /// Empty slots that may still be filled before a rebuild.
    growth_left: usize,
}

impl IdTable {
    /// A table with room for `n` ids.
    pub fn with_capacity(n: usize) -> IdTable {
        let mut t = IdTable::default();
        if n > 0 {
            t.alloc(buckets_for(n));
        }
        t
    }

    fn alloc(&mut self, buckets: usize) {
        self.ctrl = vec![EMPTY; buckets + GROUP].into_boxed_slice();
        self.ids = vec![0; buckets].into_boxed_slice();
        self.growth_left = capacity_of(buckets);
        self.items = 0;
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.items
    }

    /// Whether there is no id.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Slots allocated.
    pub fn buckets(&self) -> usize {
        self.ids.len()
    }

    /// Bytes allocated.
    pub fn allocation_size(&self) -> usize {
        self.ctrl.len() + self.ids.len() * size_of::<u32>()
    }

    fn mask(&self) -> usize {
        self.ids.len().wrapping_sub(1)
    }

    /// The eight control bytes from slot `pos` (`pos` < buckets).
    fn word(&self, pos: usize) -> u64 {
        let mut b = [0u8; GROUP];
        b.copy_from_slice(&self.ctrl[pos..pos + GROUP]);
        u64::from_le_bytes(b)
    }

    fn set_ctrl(&mut self, i: usize, c: u8) {
        self.ctrl[i] = c;
        if i < GROUP {
            let n = self.ids.len();
            self.ctrl[n + i] = c;
        }
    }

    /// Slots whose control byte is `hash`'s, in probe order, up to the
    /// first empty slot; `stop` ends the walk with its slot.
    fn probe(&self, hash: u64, mut stop: impl FnMut(usize) -> bool) -> Option<usize> {
        if self.items == 0 {
            return None;
        }
        let mask = self.mask();
        let t = tag(hash);
        let mut pos = hash as usize & mask;
        for _ in 0..=self.ids.len() / GROUP {
            let w = self.word(pos);
            let e = empties(w);
            let mut m = before(matching(w, t), e);
            while m != 0 {
                let i = (pos + m.trailing_zeros() as usize / 8) & mask;
                if stop(i) {
                    return Some(i);
                }
                m &= m - 1;
            }
            if e != 0 {
                return None;
            }
            pos = (pos + GROUP) & mask;
        }
        None
    }

    /// The id with hash `hash` for which `eq` holds.
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        self.probe(hash, |i| self.ctrl[i] == tag(hash) && eq(self.ids[i]))
            .map(|i| self.ids[i])
    }

    /// The first id stored under a control byte that matches `hash`'s,
    /// compared with nothing: what a prefetch of its storage should load.
    pub fn first_candidate(&self, hash: u64) -> Option<u32> {
        self.probe(hash, |i| self.ctrl[i] == tag(hash))
            .map(|i| self.ids[i])
    }

    /// Starts loading the control bytes and id slots a lookup of `hash`
    /// reads first (only a hint; reads nothing).
    pub fn prefetch(&self, hash: u64) {
        if self.ids.is_empty() {
            return;
        }
        let pos = hash as usize & self.mask();
        crate::prefetch::prefetch_value(&self.ctrl[pos]);
        crate::prefetch::prefetch_value(&self.ids[pos]);
    }

    /// The slot of id `id` stored under `hash`.
    fn slot_of(&self, hash: u64, id: u32) -> Option<usize> {
        self.probe(hash, |i| self.ctrl[i] == tag(hash) && self.ids[i] == id)
    }

    /// Mutable access to id `id` stored under `hash`.
    pub fn find_mut(&mut self, hash: u64, id: u32) -> Option<&mut u32> {
        let i = self.slot_of(hash, id)?;
        self.ids.get_mut(i)
    }

    /// Removes id `id` stored under `hash`; whether it was there.
    pub fn remove(&mut self, hash: u64, id: u32) -> bool {
        let Some(i) = self.slot_of(hash, id) else {
            return false;
        };
        self.items -= 1;
        let mask = self.mask();
        if self.ctrl[(i + 1) & mask] != EMPTY {
            // A later id may have probed past this slot.
            self.set_ctrl(i, DELETED);
            return true;
        }
        // Nothing probed past this slot, nor past the tombstones that
        // end at it: all of them can be empty again.
        let mut j = i;
        loop {
            self.set_ctrl(j, EMPTY);
            self.growth_left += 1;
            j = j.wrapping_sub(1) & mask;
            if j == i || self.ctrl[j] != DELETED {
                break;
            }
        }
        true
    }

    /// Adds `id` (not present) under `hash`; `rehash` gives the hash of
    /// any id already in the table.
    pub fn insert_unique(&mut self, hash: u64, id: u32, rehash: impl Fn(u32) -> u64) {
        if self.growth_left == 0 {
            // Full of ids and tombstones: rebuild, twice as large unless
            // tombstones were most of it.
            let want = if self.items < capacity_of(self.ids.len()) / 2 {
                self.ids.len().max(GROUP)
            } else {
                buckets_for(self.items + 1).max(self.ids.len() * 2)
            };
            self.rebuild(want, &rehash);
        }
        self.put(hash, id);
    }

    /// Places `id` at the first free slot of its probe (room is known).
    fn put(&mut self, hash: u64, id: u32) {
        let mask = self.mask();
        let mut pos = hash as usize & mask;
        loop {
            let free = self.word(pos) & HI;
            if free != 0 {
                let i = (pos + free.trailing_zeros() as usize / 8) & mask;
                if self.ctrl[i] == EMPTY {
                    self.growth_left -= 1;
                }
                self.set_ctrl(i, tag(hash));
                self.ids[i] = id;
                self.items += 1;
                return;
            }
            pos = (pos + GROUP) & mask;
        }
    }

    /// Moves every id into a fresh table of `buckets` slots.
    fn rebuild(&mut self, buckets: usize, rehash: &impl Fn(u32) -> u64) {
        let old = std::mem::take(self);
        self.alloc(buckets);
        for id in old.iter() {
            self.put(rehash(id), id);
        }
    }

    /// Every id.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ctrl
            .iter()
            .zip(self.ids.iter())
            .filter(|(c, _)| **c & 0x80 == 0)
            .map(|(_, &id)| id)
    }

    /// Every id, to renumber.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.ctrl
            .iter()
            .zip(self.ids.iter_mut())
            .filter(|(c, _)| **c & 0x80 == 0)
            .map(|(_, id)| id)
    }

    /// Gives memory back after removals: down to the buckets `len` ids
    /// need (tombstones go as well).
    pub fn shrink(&mut self, rehash: impl Fn(u32) -> u64) {
        if self.items == 0 {
            *self = IdTable::default();
            return;
        }
        let want = buckets_for(self.items);
        if want < self.ids.len() {
            self.rebuild(want, &rehash);
        }
    }

    /// Checks the layout's invariants (tests).
    #[cfg(test)]
    pub fn check(&self, rehash: impl Fn(u32) -> u64) {
        let n = self.ids.len();
        if n == 0 {
            assert_eq!(self.items, 0);
            return;
        }
        assert!(n.is_power_of_two() && n >= GROUP);
        assert_eq!(self.ctrl[n..], self.ctrl[..GROUP]);
        let full = self.ctrl[..n].iter().filter(|&&c| c & 0x80 == 0).count();
        let empty = self.ctrl[..n].iter().filter(|&&c| c == EMPTY).count();
        assert_eq!(full, self.items);
        assert!(empty > 0, "a search must end");
        assert_eq!(n - capacity_of(n) + self.growth_left, empty);
        for (i, &c) in self.ctrl[..n].iter().enumerate() {
            if c & 0x80 != 0 {
                continue;
            }
            let h = rehash(self.ids[i]);
            assert_eq!(c, tag(h));
            let mut j = h as usize & (n - 1);
            while j != i {
                assert_ne!(self.ctrl[j], EMPTY, "an empty slot before an id");
                j = (j + 1) & (n - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashSet;

    /// A poor hash on purpose (ids cluster in buckets and share control
    /// bytes), so probing, tombstones and wrap-around get exercised.
    fn weak(id: u32) -> u64 {
        let x = u64::from(id % 97).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^ (u64::from(id) << 57)
    }

    fn strong(id: u32) -> u64 {
        u64::from(id)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17)
            ^ 0x5bd1_e995
    }

    #[test]
    fn words_find_their_bytes() {
        let w = u64::from_le_bytes([1, EMPTY, 5, DELETED, 5, 7, EMPTY, 0]);
        assert_eq!(empties(w), 0x80 << 8 | 0x80 << 48);
        let m = before(matching(w, 5), empties(w));
        assert_eq!(m, 0, "byte 2 is after the first empty slot");
        assert_eq!(matching(w, 1) & 0x80, 0x80);
        assert_eq!(before(u64::MAX, 0), u64::MAX);
    }

    /// Random inserts and removals against a model, with both hashes.
    #[test]
    fn behaves_as_a_set_of_ids() {
        for hash in [weak as fn(u32) -> u64, strong] {
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut t = IdTable::default();
            let mut model = HashSet::new();
            for step in 0..40_000u32 {
                let id = rng.gen_range(0..3_000u32);
                if model.contains(&id) {
                    if rng.gen_bool(0.6) {
                        assert!(t.remove(hash(id), id));
                        model.remove(&id);
                    }
                } else {
                    assert_eq!(t.find(hash(id), |x| x == id), None);
                    t.insert_unique(hash(id), id, hash);
                    model.insert(id);
                }
                if step % 4_000 == 0 {
                    t.check(hash);
                    if step % 8_000 == 0 {
                        t.shrink(hash);
                        t.check(hash);
                    }
                }
                assert_eq!(t.len(), model.len());
            }
            t.check(hash);
            for id in 0..3_000 {
                assert_eq!(t.find(hash(id), |x| x == id).is_some(), model.contains(&id));
                if model.contains(&id) {
                    assert!(t.first_candidate(hash(id)).is_some());
                    t.prefetch(hash(id));
                }
            }
            let mut ids: Vec<u32> = t.iter().collect();
            ids.sort_unstable();
            let mut want: Vec<u32> = model.iter().copied().collect();
            want.sort_unstable();
            assert_eq!(ids, want);
        }
    }

    /// Many removals then inserts never let tombstones fill the table.
    #[test]
    fn tombstones_are_reclaimed() {
        let mut t = IdTable::with_capacity(100);
        let b = t.buckets();
        for round in 0..200u32 {
            for id in 0..60 {
                t.insert_unique(weak(round * 1000 + id), round * 1000 + id, weak);
            }
            for id in 0..60 {
                assert!(t.remove(weak(round * 1000 + id), round * 1000 + id));
            }
            t.check(weak);
        }
        assert!(t.buckets() <= b * 2, "churn alone does not grow the table");
        assert!(t.is_empty());
        t.shrink(weak);
        assert_eq!(t.buckets(), 0);
    }

    #[test]
    fn renumbering_and_capacity() {
        let mut t = IdTable::with_capacity(10);
        assert_eq!(t.buckets(), 16);
        for id in 0..10 {
            t.insert_unique(strong(id), id, strong);
        }
        assert_eq!(t.buckets(), 16, "room for ten was made up front");
        assert_eq!(t.iter_mut().count(), 10);
        let id = t.find_mut(strong(3), 3).expect("present");
        assert_eq!(*id, 3);
        assert!(t.find_mut(strong(3), 4).is_none());
        assert_eq!(t.allocation_size(), 16 + GROUP + 16 * 4);
        assert_eq!(IdTable::default().find(1, |_| true), None);
    }
}
