//! An ordered set of (deadline, key position) pairs, kept in sorted blocks.
//!
//! The keyspace indexes every key with a TTL and every key with member
//! deadlines by deadline. Deadlines mostly arrive in increasing order (a
//! TTL added now ends after the ones added before it) and leave from the
//! front (the earliest expires first). A B-tree splits its nodes in the
//! middle and stays about half full under such appends: about 33 bytes per
//! 16-byte pair. Here a pair is 12 bytes (the deadline as two 32-bit words,
//! then the position) and lives in a sorted block of up to [`BLOCK`] pairs;
//! an append to the last block fills it before a new one starts, so
//! increasing deadlines cost 12 bytes a pair and random ones about 16.
//!
//! Blocks are found by binary search on their last pair; an insert or a
//! removal moves at most one block's pairs. A block holds at most [`BLOCK`]
//! pairs and grows to that as a vector does.

use std::collections::VecDeque;

/// Most pairs in one block.
const BLOCK: usize = 128;
/// A block shorter than this after a removal is merged into a neighbour
/// that has room.
const MERGE_BELOW: usize = BLOCK / 4;

/// A pair as stored: the deadline's high and low 32 bits, then the
/// position. Arrays compare lexicographically, so this orders as the
/// (deadline, position) pair does, with no padding.
type Pair = [u32; 3];

fn pack(t: u64, i: u32) -> Pair {
    [(t >> 32) as u32, t as u32, i]
}

fn unpack(p: &Pair) -> (u64, u32) {
    ((u64::from(p[0]) << 32) | u64::from(p[1]), p[2])
}

/// The set (see the module documentation).
#[derive(Debug, Default, Clone)]
pub(crate) struct DueSet {
    /// Sorted blocks, none empty, each sorted and all before the next.
    blocks: VecDeque<Vec<Pair>>,
    len: usize,
}

impl DueSet {
    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The block that holds `p` or where it belongs: the first whose last
    /// pair is not below it, or the last block.
    fn block_of(&self, p: &Pair) -> usize {
        let b = self.blocks.partition_point(|blk| blk[blk.len() - 1] < *p);
        b.min(self.blocks.len().saturating_sub(1))
    }

    /// Adds the pair; false when it was already there.
    pub(crate) fn insert(&mut self, t: u64, i: u32) -> bool {
        let p = pack(t, i);
        if self.blocks.is_empty() {
            self.blocks.push_back(vec![p]);
            self.len = 1;
            return true;
        }
        let b = self.block_of(&p);
        let last = b + 1 == self.blocks.len();
        let blk = &mut self.blocks[b];
        let at = match blk.binary_search(&p) {
            Ok(_) => return false,
            Err(at) => at,
        };
        self.len += 1;
        if blk.len() < BLOCK {
            blk.insert(at, p);
            return true;
        }
        // Full: split. An append past the end of the last block starts a
        // new block and leaves this one full; elsewhere it splits in half.
        // Blocks grow as vectors do (to exactly BLOCK, a power of two), so
        // a small set stays small.
        let mut right = Vec::new();
        if last && at == BLOCK {
            right.push(p);
        } else {
            right.extend_from_slice(&blk[BLOCK / 2..]);
            blk.truncate(BLOCK / 2);
            if at <= BLOCK / 2 {
                blk.insert(at, p);
            } else {
                right.insert(at - BLOCK / 2, p);
            }
        }
        self.blocks.insert(b + 1, right);
        true
    }

    /// Removes the pair; false when it was not there.
    pub(crate) fn remove(&mut self, t: u64, i: u32) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        let p = pack(t, i);
        let b = self.block_of(&p);
        let blk = &mut self.blocks[b];
        let Ok(at) = blk.binary_search(&p) else {
            return false;
        };
        blk.remove(at);
        self.len -= 1;
        let n = blk.len();
        if n == 0 {
            self.blocks.remove(b);
        } else if n < MERGE_BELOW {
            self.merge(b);
        }
        true
    }

    /// Moves the short block `b` into its next (or else previous)
    /// neighbour when that one has room for it.
    fn merge(&mut self, b: usize) {
        let n = self.blocks[b].len();
        let into = if b + 1 < self.blocks.len() && self.blocks[b + 1].len() + n <= BLOCK {
            b + 1
        } else if b > 0 && self.blocks[b - 1].len() + n <= BLOCK {
            b - 1
        } else {
            return;
        };
        let Some(moved) = self.blocks.remove(b) else {
            return;
        };
        // The neighbour keeps its place in the order: the moved pairs go
        // before the next block's or after the previous block's.
        let dst = &mut self.blocks[if into > b { b } else { into }];
        if dst.capacity() < dst.len() + moved.len() {
            dst.reserve_exact(BLOCK - dst.len());
        }
        if into > b {
            dst.splice(0..0, moved);
        } else {
            dst.extend_from_slice(&moved);
        }
    }

    /// The earliest pair.
    pub(crate) fn first(&self) -> Option<(u64, u32)> {
        self.blocks.front().and_then(|b| b.first()).map(unpack)
    }

    /// Removes every pair.
    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
    }

    /// The pairs in order.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.blocks.iter().flatten().map(unpack)
    }

    /// Bytes allocated: each block at its capacity and the block list.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<Pair>()
            + self.blocks.capacity() * std::mem::size_of::<Vec<Pair>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn check(s: &DueSet, m: &BTreeSet<(u64, u32)>) {
        assert_eq!(s.len(), m.len());
        assert!(s
            .blocks
            .iter()
            .all(|b| !b.is_empty() && b.capacity() <= BLOCK));
        let got: Vec<_> = s.iter().collect();
        let want: Vec<_> = m.iter().copied().collect();
        assert_eq!(got, want);
        assert_eq!(s.first(), m.first().copied());
    }

    #[test]
    fn increasing_deadlines_fill_whole_blocks() {
        let mut s = DueSet::default();
        for i in 0..10 * BLOCK as u32 {
            assert!(s.insert(1_700_000_000_000 + u64::from(i / 3), i));
        }
        assert_eq!(s.blocks.len(), 10);
        assert!(s
            .blocks
            .iter()
            .all(|b| b.len() == BLOCK && b.capacity() == BLOCK));
        assert!(s.heap_bytes() < 10 * BLOCK * 12 + 1024);
        assert!(!s.insert(1_700_000_000_000, 0));
        // Draining from the front frees whole blocks.
        for i in 0..5 * BLOCK as u32 {
            let (t, p) = s.first().expect("not empty");
            assert_eq!(p, i);
            assert!(s.remove(t, p));
        }
        assert_eq!(s.blocks.len(), 5);
        assert!(!s.remove(1, 1));
    }

    #[test]
    fn deadlines_past_32_bits_order_by_the_whole_value() {
        let mut s = DueSet::default();
        s.insert(1 << 33, 0);
        s.insert((1 << 32) + 5, 9);
        s.insert(u64::MAX - 1, 1);
        s.insert(7, u32::MAX);
        let got: Vec<_> = s.iter().collect();
        assert_eq!(
            got,
            [
                (7, u32::MAX),
                ((1 << 32) + 5, 9),
                (1 << 33, 0),
                (u64::MAX - 1, 1)
            ]
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, u32),
        Remove(u64, u32),
        PopFirst,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct values, so removals hit and blocks split and merge.
        prop_oneof![
            3 => (0u64..600, 0u32..4).prop_map(|(t, i)| Op::Insert(t << 20, i)),
            2 => (0u64..600, 0u32..4).prop_map(|(t, i)| Op::Remove(t << 20, i)),
            1 => Just(Op::PopFirst),
        ]
    }

    proptest! {
        #[test]
        fn matches_a_btreeset(ops in proptest::collection::vec(op(), 0..3000)) {
            let mut s = DueSet::default();
            let mut m = BTreeSet::new();
            for o in &ops {
                match *o {
                    Op::Insert(t, i) => prop_assert_eq!(s.insert(t, i), m.insert((t, i))),
                    Op::Remove(t, i) => prop_assert_eq!(s.remove(t, i), m.remove(&(t, i))),
                    Op::PopFirst => {
                        let f = s.first();
                        prop_assert_eq!(f, m.first().copied());
                        if let Some((t, i)) = f {
                            prop_assert!(s.remove(t, i));
                            m.remove(&(t, i));
                        }
                    }
                }
            }
            check(&s, &m);
        }
    }
}
