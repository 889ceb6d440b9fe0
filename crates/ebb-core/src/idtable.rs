//! An open-addressing hash table of `u32` ids whose layout is known, so
//! that where a lookup will read can be computed from the hash alone.
//!
//! The key table and large collections keep ids in hash indexes and
//! compare through their own storage. With a general hash table, starting
//! to load what a lookup of a pipelined request will read means probing
//! the table first: two dependent cache misses before the node's address
//! is known, taken one request at a time. Here a hash names its home
//! group directly ([`IdTable::prefetch`]), so a batch of requests can load
//! every probe position at once, then every node.
//!
//! Layout: groups of [`SLOTS`] ids and their control bytes in one 64-byte
//! cache line, so a probe reads one line (a SwissTable reads a control
//! group and, elsewhere, the slot). A control byte is [`EMPTY`],
//! [`DELETED`] or seven bits of the id's hash (never [`PAD`], which fills
//! the four bytes past the twelfth). A hash names a home group (its low
//! 32 bits scaled to the number of groups, which may be any number); an
//! id sits in the first group from its home on (wrapping) with a free
//! slot, so a search stops at the first group holding an empty slot. A
//! removal leaves a tombstone in a group that was ever full (a later id
//! may have probed past it), an empty slot otherwise; tombstones go when
//! the table is rebuilt. At most 80% of the slots are used, and a full
//! table grows by half: 5⅓ bytes a slot, 6⅔ to 10 bytes an id (a
//! SwissTable of `u32`, which doubles: 5 bytes a slot, 5.7 to 11.4 bytes
//! an id).

/// Ids in a group (a cache line: 16 control bytes and 12 ids).
pub(crate) const SLOTS: usize = 12;
/// Control byte of a slot never used since the last rebuild.
const EMPTY: u8 = 0xFF;
/// Control byte of a slot whose id was removed.
const DELETED: u8 = 0x80;
/// Control byte of the four bytes past the last slot: not free, not
/// empty, never a hash's.
const PAD: u8 = 0x7F;
/// One cache line: control bytes and ids.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Group {
    ctrl: [u8; 16],
    ids: [u32; SLOTS],
}

/// One bit per control byte of a group (bit `k` for slot `k`).
type Mask = u32;

impl Group {
    const EMPTY: Group = Group {
        ctrl: [
            EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY, EMPTY,
            PAD, PAD, PAD, PAD,
        ],
        ids: [0; SLOTS],
    };

    /// The slots whose control byte is `b`.
    fn matching(&self, b: u8) -> Mask {
        bytes_equal(&self.ctrl, b)
    }

    /// The empty slots.
    fn empties(&self) -> Mask {
        bytes_equal(&self.ctrl, EMPTY)
    }

    /// The slots an id may go to (empty or a tombstone: the high bit set).
    fn free(&self) -> Mask {
        high_bits(&self.ctrl)
    }
}

/// The bytes of `c` equal to `b`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn bytes_equal(c: &[u8; 16], b: u8) -> Mask {
    use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: this is compiled only where SSE2 is enabled (every x86_64
    // target with floating point), so the instructions exist wherever it
    // runs; the load reads exactly the 16 bytes of `c`, a live reference.
    let m = unsafe {
        let v = _mm_loadu_si128(c.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)))
    };
    m as Mask
}

/// The bytes of `c` whose high bit is set.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn high_bits(c: &[u8; 16]) -> Mask {
    use core::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8};
    // SAFETY: as in `bytes_equal`.
    let m = unsafe { _mm_movemask_epi8(_mm_loadu_si128(c.as_ptr().cast())) };
    m as Mask
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use {bytes_equal_bytewise as bytes_equal, high_bits_bytewise as high_bits};

/// The bytes of `c` equal to `b`, one at a time (where there is no SSE2;
/// the tests hold the two versions in agreement).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn bytes_equal_bytewise(c: &[u8; 16], b: u8) -> Mask {
    c.iter()
        .enumerate()
        .fold(0, |m, (k, &x)| m | Mask::from(x == b) << k)
}

/// The bytes of `c` whose high bit is set, one at a time.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn high_bits_bytewise(c: &[u8; 16]) -> Mask {
    c.iter()
        .enumerate()
        .fold(0, |m, (k, &x)| m | Mask::from(x >> 7) << k)
}

/// The control byte of a hash: its top seven bits (the home group comes
/// from the low bits, a segment of [`SegIndex`](crate::segindex::SegIndex)
/// from bits 40 and up), [`PAD`] folded onto its neighbour.
fn tag(hash: u64) -> u8 {
    ((hash >> 57) as u8).min(PAD - 1)
}

/// The slot of the lowest bit of `m`.
fn first(m: Mask) -> usize {
    m.trailing_zeros() as usize
}

/// Most ids `groups` groups hold (80%).
fn capacity_of(groups: usize) -> usize {
    let slots = groups * SLOTS;
    slots - slots / 5
}

/// The fewest groups that hold `n` ids.
fn groups_for(n: usize) -> usize {
    // A group holds at most 10 (9.6 on average): start below, step up.
    let mut g = n.div_ceil(10).max(1);
    while capacity_of(g) < n {
        g += 1;
    }
    g
}

/// Ids by hash (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct IdTable {
    /// The groups (none while nothing was inserted).
    groups: Box<[Group]>,
    items: usize,
    /// Empty slots that may still be filled before a rebuild.
    growth_left: usize,
}

impl IdTable {
    /// A table with room for `n` ids.
    pub fn with_capacity(n: usize) -> IdTable {
        let mut t = IdTable::default();
        if n > 0 {
            t.alloc(groups_for(n));
        }
        t
    }

    fn alloc(&mut self, groups: usize) {
        self.groups = vec![Group::EMPTY; groups].into_boxed_slice();
        self.growth_left = capacity_of(groups);
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
        self.groups.len() * SLOTS
    }

    /// Bytes allocated.
    pub fn allocation_size(&self) -> usize {
        self.groups.len() * size_of::<Group>()
    }

    /// The home group of a hash: its low 32 bits scaled to the number of
    /// groups (any number: a table grows by half, not by doubling).
    fn home(&self, hash: u64) -> usize {
        ((u64::from(hash as u32) * self.groups.len() as u64) >> 32) as usize
    }

    /// The group after `g` in probe order (the next one, wrapping).
    fn next(&self, g: usize) -> usize {
        if g + 1 == self.groups.len() {
            0
        } else {
            g + 1
        }
    }

    /// The first slot (group, offset), in probe order, whose control byte
    /// is `hash`'s and for which `stop` holds; the search ends with the
    /// first group that holds an empty slot.
    fn probe(
        &self,
        hash: u64,
        mut stop: impl FnMut(&Group, usize) -> bool,
    ) -> Option<(usize, usize)> {
        if self.items == 0 {
            return None;
        }
        let t = tag(hash);
        let mut g = self.home(hash);
        // A table always keeps empty slots; the bound only guards a loop.
        for _ in 0..self.groups.len() {
            let group = &self.groups[g];
            let mut m = group.matching(t);
            while m != 0 {
                let k = first(m);
                if stop(group, k) {
                    return Some((g, k));
                }
                m &= m - 1;
            }
            if group.empties() != 0 {
                return None;
            }
            g = self.next(g);
        }
        debug_assert!(false, "a table without an empty slot");
        None
    }

    /// The id with hash `hash` for which `eq` holds.
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        self.id_at(self.probe(hash, |group, k| group.ids.get(k).is_some_and(|&id| eq(id)))?)
    }

    /// The id in slot (group, offset).
    fn id_at(&self, (g, k): (usize, usize)) -> Option<u32> {
        self.groups.get(g)?.ids.get(k).copied()
    }

    /// The first id stored under the control byte of `hash`, compared with
    /// nothing: what a prefetch of its storage should load.
    pub fn first_candidate(&self, hash: u64) -> Option<u32> {
        self.id_at(self.probe(hash, |_, _| true)?)
    }

    /// Starts loading the group a lookup of `hash` reads first (only a
    /// hint; reads nothing).
    pub fn prefetch(&self, hash: u64) {
        if let Some(group) = self.groups.get(self.home(hash)) {
            crate::prefetch::prefetch_value(group);
        }
    }

    /// The slot of id `id` stored under `hash`.
    fn slot_of(&self, hash: u64, id: u32) -> Option<(usize, usize)> {
        self.probe(hash, |group, k| group.ids.get(k) == Some(&id))
    }

    /// Mutable access to id `id` stored under `hash`.
    pub fn find_mut(&mut self, hash: u64, id: u32) -> Option<&mut u32> {
        let (g, k) = self.slot_of(hash, id)?;
        self.groups[g].ids.get_mut(k)
    }

    /// Removes id `id` stored under `hash`; whether it was there.
    pub fn remove(&mut self, hash: u64, id: u32) -> bool {
        let Some((g, k)) = self.slot_of(hash, id) else {
            return false;
        };
        self.items -= 1;
        let group = &mut self.groups[g];
        // A group with an empty slot was never full since the last
        // rebuild, so no search went on past it: the slot can be empty.
        group.ctrl[k] = if group.empties() != 0 {
            self.growth_left += 1;
            EMPTY
        } else {
            DELETED
        };
        true
    }

    /// Adds `id` (not present) under `hash`; `rehash` gives the hash of
    /// any id already in the table.
    pub fn insert_unique(&mut self, hash: u64, id: u32, rehash: impl Fn(u32) -> u64) {
        if self.growth_left == 0 {
            // Full of ids and tombstones: rebuild, half as large again
            // unless tombstones were most of it.
            let groups = self.groups.len();
            let want = if self.items < capacity_of(groups) / 2 {
                groups.max(1)
            } else {
                groups_for(self.items + 1).max(groups + groups / 2 + 1)
            };
            self.rebuild(want, &rehash);
        }
        self.put(hash, id);
    }

    /// Places `id` at the first free slot of its probe (room is known).
    fn put(&mut self, hash: u64, id: u32) {
        let mut g = self.home(hash);
        for _ in 0..self.groups.len() {
            let group = &mut self.groups[g];
            let free = group.free();
            if free != 0 {
                let k = first(free);
                if group.ctrl[k] == EMPTY {
                    self.growth_left -= 1;
                }
                group.ctrl[k] = tag(hash);
                group.ids[k] = id;
                self.items += 1;
                return;
            }
            g = self.next(g);
        }
        debug_assert!(false, "no free slot although room was counted");
    }

    /// Moves every id into a fresh table of `groups` groups.
    fn rebuild(&mut self, groups: usize, rehash: &impl Fn(u32) -> u64) {
        let old = std::mem::take(self);
        self.alloc(groups);
        for id in old.iter() {
            self.put(rehash(id), id);
        }
    }

    /// Every id.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.iter().flat_map(|g| {
            g.ctrl
                .iter()
                .zip(g.ids.iter())
                .filter(|(c, _)| **c & 0x80 == 0)
                .map(|(_, &id)| id)
        })
    }

    /// Every id, to renumber.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.groups.iter_mut().flat_map(|g| {
            g.ctrl
                .iter()
                .zip(g.ids.iter_mut())
                .filter(|(c, _)| **c & 0x80 == 0)
                .map(|(_, id)| id)
        })
    }

    /// Gives memory back after removals: down to the groups `len` ids
    /// need (tombstones go as well).
    pub fn shrink(&mut self, rehash: impl Fn(u32) -> u64) {
        if self.items == 0 {
            *self = IdTable::default();
            return;
        }
        // Only for a real gain: a third of the groups or more.
        let want = groups_for(self.items);
        if want + want / 2 < self.groups.len() {
            self.rebuild(want, &rehash);
        }
    }

    /// Checks the layout's invariants (tests).
    #[cfg(test)]
    pub fn check(&self, rehash: impl Fn(u32) -> u64) {
        let n = self.groups.len();
        if n == 0 {
            assert_eq!(self.items, 0);
            return;
        }
        let ctrl = || self.groups.iter().flat_map(|g| g.ctrl[..SLOTS].iter());
        assert!(self.groups.iter().all(|g| g.ctrl[SLOTS..] == [PAD; 4]));
        let full = ctrl().filter(|&&c| c & 0x80 == 0).count();
        let empty = ctrl().filter(|&&c| c == EMPTY).count();
        assert_eq!(full, self.items);
        assert!(empty > 0, "a search must end");
        assert_eq!(n * SLOTS - capacity_of(n) + self.growth_left, empty);
        for (gi, group) in self.groups.iter().enumerate() {
            for k in 0..SLOTS {
                let c = group.ctrl[k];
                if c & 0x80 != 0 {
                    continue;
                }
                let h = rehash(group.ids[k]);
                assert_eq!(c, tag(h));
                let mut g = self.home(h);
                while g != gi {
                    let e = self.groups[g].empties();
                    assert_eq!(e, 0, "a group with an empty slot before an id");
                    g = self.next(g);
                }
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
    fn groups_find_their_bytes() {
        let mut g = Group::EMPTY;
        g.ctrl[..12].copy_from_slice(&[1, EMPTY, 5, DELETED, 5, 7, EMPTY, 0, 0x7e, 9, 9, 9]);
        assert_eq!(g.empties(), 1 << 1 | 1 << 6);
        assert_eq!(g.matching(5), 1 << 2 | 1 << 4);
        assert_eq!(first(g.matching(5)), 2);
        assert_eq!(g.matching(1), 1);
        assert_eq!(g.matching(0), 1 << 7);
        assert_eq!(g.matching(0x7e), 1 << 8);
        assert_eq!(
            g.matching(PAD - 1),
            1 << 8,
            "the padding never matches a hash"
        );
        assert_eq!(g.free(), 1 << 1 | 1 << 3 | 1 << 6);
        assert_eq!(first(g.free()), 1, "the first free slot");
        assert_eq!(tag(u64::MAX), PAD - 1, "no hash takes the padding's byte");
        assert_eq!(size_of::<Group>(), 64);
    }

    /// The masks agree with a byte-by-byte reading on random groups.
    #[test]
    fn masks_agree_with_bytes() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..2_000 {
            let mut g = Group::EMPTY;
            for c in &mut g.ctrl {
                *c = [EMPTY, DELETED, PAD, rng.gen_range(0..4u8), rng.gen()][rng.gen_range(0..5)];
            }
            let b = g.ctrl[rng.gen_range(0..16)];
            let by = |f: &dyn Fn(u8) -> bool| {
                (0..16).filter(|&k| f(g.ctrl[k])).fold(0, |m, k| m | 1 << k)
            };
            assert_eq!(g.matching(b), by(&|c| c == b));
            assert_eq!(g.empties(), by(&|c| c == EMPTY));
            assert_eq!(g.free(), by(&|c| c >= 0x80));
            assert_eq!(bytes_equal_bytewise(&g.ctrl, b), g.matching(b));
            assert_eq!(high_bits_bytewise(&g.ctrl), g.free());
        }
    }

    /// Random inserts and removals against a model, with both hashes.
    #[test]
    fn behaves_as_a_set_of_ids() {
        // One hash for every id: one home group, one control byte, so
        // every lookup compares ids across groups.
        fn same(_: u32) -> u64 {
            0x0123_4567_89ab_cdef
        }
        for hash in [weak as fn(u32) -> u64, strong, same] {
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
        assert_eq!(t.buckets(), SLOTS);
        for id in 0..10 {
            t.insert_unique(strong(id), id, strong);
        }
        assert_eq!(t.buckets(), SLOTS, "room for ten was made up front");
        t.insert_unique(strong(10), 10, strong);
        assert_eq!(t.buckets(), 2 * SLOTS);
        t.check(strong);
        assert_eq!(t.iter_mut().count(), 11);
        // Renumbering rewrites ids in place: each is found under its hash.
        for id in t.iter_mut() {
            *id += 1000;
        }
        for id in 0..11 {
            assert_eq!(t.find(strong(id), |x| x == id + 1000), Some(id + 1000));
            assert_eq!(t.find(strong(id), |x| x == id), None);
        }
        for id in t.iter_mut() {
            *id -= 1000;
        }
        let id = t.find_mut(strong(3), 3).expect("present");
        assert_eq!(*id, 3);
        assert!(t.find_mut(strong(3), 4).is_none());
        assert_eq!(t.allocation_size(), 2 * 64);
        assert_eq!(IdTable::default().find(1, |_| true), None);
    }
}
