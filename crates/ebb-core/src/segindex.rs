//! A hash index of `u32` ids that grows a piece at a time.
//!
//! The key table and large collections find keys and members through an
//! index of ids, hashing and comparing through their own storage. One hash
//! table doubling rehashes every id at once: at seven million keys that
//! stalled the server for most of a second, at two million members of one
//! set for a fifth of one. Past [`SPLIT_AT`] ids the index is [`SEGMENTS`]
//! tables chosen by hash, each growing on its own, so a growth rehashes one
//! segment's ids (Redis rehashes incrementally for the same reason).

use crate::idtable::IdTable;

/// Segments of a large index (a power of two).
const SEGMENTS: usize = 1024;
/// Ids from which the index is segmented.
const SPLIT_AT: usize = 4096;

/// Ids by hash, in one table or [`SEGMENTS`] of them.
#[derive(Debug, Clone, Default)]
pub(crate) struct SegIndex {
    tables: Vec<IdTable>,
}

impl SegIndex {
    /// An index with room for `n` ids in one table.
    pub fn with_capacity(n: usize) -> SegIndex {
        SegIndex {
            tables: vec![IdTable::with_capacity(n)],
        }
    }

    /// Makes room for `n` ids in an empty index, so that filling it
    /// rehashes nothing (a load that knows how many keys come). Under a
    /// `maxmemory` limit nothing is reserved: the index grows as usual.
    pub fn reserve(&mut self, n: usize) {
        if !self.is_empty() || n == 0 || crate::room::growth_room() != u64::MAX {
            return;
        }
        self.tables = if n < SPLIT_AT {
            vec![IdTable::with_capacity(n)]
        } else {
            let per = n / SEGMENTS + 1;
            (0..SEGMENTS)
                .map(|_| IdTable::with_capacity(per + per / 4))
                .collect()
        };
    }

    /// The segment of a hash. Its bits are apart from the ones a table
    /// uses for the bucket (low) and the control byte (top seven), so each
    /// segment's ids still spread over its buckets.
    fn segment(&self, hash: u64) -> usize {
        if self.tables.len() == SEGMENTS {
            (hash >> 40) as usize & (SEGMENTS - 1)
        } else {
            0
        }
    }

    /// The id with hash `hash` for which `eq` holds.
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        self.tables.get(self.segment(hash))?.find(hash, &mut eq)
    }

    /// The first id stored under a hash that may be `hash` (the control
    /// byte matches), without comparing anything: what a prefetch of the
    /// id's storage should load.
    pub fn first_candidate(&self, hash: u64) -> Option<u32> {
        self.tables.get(self.segment(hash))?.first_candidate(hash)
    }

    /// Starts loading where a lookup of `hash` reads first (a hint).
    pub fn prefetch(&self, hash: u64) {
        if let Some(t) = self.tables.get(self.segment(hash)) {
            t.prefetch(hash);
        }
    }

    /// Mutable access to id `id` stored under `hash`.
    pub fn find_mut(&mut self, hash: u64, id: u32) -> Option<&mut u32> {
        let seg = self.segment(hash);
        self.tables.get_mut(seg)?.find_mut(hash, id)
    }

    /// Removes id `id` stored under `hash`; whether it was there.
    pub fn remove(&mut self, hash: u64, id: u32) -> bool {
        let seg = self.segment(hash);
        self.tables.get_mut(seg).is_some_and(|t| t.remove(hash, id))
    }

    /// Adds `id` (not present) under `hash`; `rehash` gives the hash of
    /// any id already in the index.
    pub fn insert(&mut self, hash: u64, id: u32, rehash: impl Fn(u32) -> u64) {
        match self.tables.len() {
            0 => self.tables.push(IdTable::default()),
            1 if self.tables[0].len() >= SPLIT_AT && self.may_split() => self.split(&rehash),
            _ => {}
        }
        let seg = self.segment(hash);
        self.tables[seg].insert_unique(hash, id, &rehash);
    }

    /// Whether splitting fits in the room under `maxmemory`: the
    /// segments' first tables take about as much as a single table of
    /// 100,000 ids. Until it fits, the single table goes on growing by
    /// half, as Redis puts off a dictionary expansion over the limit.
    fn may_split(&self) -> bool {
        let room = crate::room::growth_room();
        room == u64::MAX || {
            let per = self.tables[0].len() / SEGMENTS + 1;
            let one = std::mem::size_of::<IdTable>()
                + IdTable::with_capacity(per + per / 4).allocation_size();
            room >= (SEGMENTS * one) as u64
        }
    }

    /// Moves the ids of the single table into [`SEGMENTS`] tables.
    fn split(&mut self, rehash: &impl Fn(u32) -> u64) {
        let Some(old) = self.tables.pop() else {
            return;
        };
        let per = old.len() / SEGMENTS + 1;
        self.tables = (0..SEGMENTS)
            .map(|_| IdTable::with_capacity(per + per / 4))
            .collect();
        for id in old.iter() {
            let h = rehash(id);
            let seg = self.segment(h);
            self.tables[seg].insert_unique(h, id, rehash);
        }
    }

    /// Number of ids (tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.tables.iter().map(IdTable::len).sum()
    }

    /// Whether the index holds no id.
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(IdTable::is_empty)
    }

    /// Every id, to renumber.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.tables.iter_mut().flat_map(|t| t.iter_mut())
    }

    /// Slots allocated (used or not).
    pub fn buckets(&self) -> usize {
        self.tables.iter().map(IdTable::buckets).sum()
    }

    /// Bytes allocated.
    pub fn allocation_size(&self) -> usize {
        self.tables.capacity() * std::mem::size_of::<IdTable>()
            + self
                .tables
                .iter()
                .map(IdTable::allocation_size)
                .sum::<usize>()
    }

    /// Gives memory back after removals (each table down to its ids).
    pub fn shrink(&mut self, rehash: impl Fn(u32) -> u64) {
        for t in &mut self.tables {
            t.shrink(&rehash);
        }
    }

    /// Removes every id.
    pub fn clear(&mut self) {
        self.tables = Vec::new();
    }

    /// Whether the index is in segments (tests).
    #[cfg(test)]
    pub fn segmented(&self) -> bool {
        self.tables.len() == SEGMENTS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(id: u32) -> u64 {
        // Spread ids over the hash bits, as a real hash does.
        u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Ids stay found through the split, removals and renumbering.
    #[test]
    fn ids_stay_found_across_the_split() {
        let mut ix = SegIndex::default();
        let n = (SPLIT_AT * 5) as u32;
        for id in 0..n {
            ix.insert(h(id), id, h);
        }
        assert!(ix.segmented());
        assert_eq!(ix.len(), n as usize);
        for id in (0..n).step_by(2) {
            assert!(ix.remove(h(id), id));
            assert!(!ix.remove(h(id), id));
        }
        for id in 0..n {
            assert_eq!(ix.find(h(id), |x| x == id).is_some(), id % 2 == 1);
        }
        *ix.find_mut(h(1), 1).expect("present") = 1;
        ix.shrink(h);
        assert_eq!(ix.len(), n as usize / 2);
        assert!(ix.buckets() >= ix.len());
        ix.clear();
        assert!(ix.is_empty());
        assert!(ix.find(h(1), |x| x == 1).is_none());
    }
}
